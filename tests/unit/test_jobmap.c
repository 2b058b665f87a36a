// SPDX-License-Identifier: MIT
/*
 * The job-mapping directory (src/core/jobmap.c) as dcgm-exporter lays it
 * out and as a hostile writer might: real files, links, a FIFO, a
 * directory, oversized and malformed ones, built in a temporary directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "jobmap.h"

static char dir[64];

static void put(const char *name, const char *text, size_t len)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	fclose(f);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/rw-jobmap-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) ? -1 : 0;
}

/* Which problem names file, or NULL. */
static const struct jobmap_problem *problem_of(const struct jobmap *jm, const char *file)
{
	for (size_t i = 0; i < jm->n_problems; i++)
		if (!strcmp(jm->problems[i].file, file))
			return &jm->problems[i];
	return NULL;
}

static void dcgm_layout(void **state)
{
	struct jobmap jm;

	(void)state;
	/* as the prolog leaves it: GPUs 0-1 run job 1234, GPU 1 also 5678, GPU 2 idle (-init) */
	put("0", "1234\n", 5);
	put("1", "5678\r\n1234\n\n", 12);
	put("2", "", 0);
	put("GPU-0b1c2d3e-aaaa-bbbb-cccc-0123456789ab", "  9001_7  \n", 11);
	put(".0.tmp", "garbage here\n", 13); /* a writer's file before its rename */
	assert_int_equal(jobmap_read(dir, &jm), 0);
	assert_int_equal(jm.n_jobs, 3);
	assert_string_equal(jm.jobs[0], "1234");
	assert_string_equal(jm.jobs[1], "5678");
	assert_string_equal(jm.jobs[2], "9001_7");
	assert_int_equal(jm.n_files, 4);
	assert_int_equal(jm.n_bad, 0);
	assert_int_equal(jm.n_problems, 0);
}

static void hostile_entries(void **state)
{
	char path[256], big[5000], many[4200];
	const struct jobmap_problem *p;
	struct jobmap jm;

	(void)state;
	put("0", "1234\n", 5);
	snprintf(path, sizeof(path), "%s/1", dir);
	assert_int_equal(symlink("/etc/passwd", path), 0);
	snprintf(path, sizeof(path), "%s/2", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	snprintf(path, sizeof(path), "%s/3", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	memset(big, '7', sizeof(big));
	put("4", big, sizeof(big));
	put("5", "ok1\njob with space\nok2\n", 23);
	memset(many, 'x', 200);
	many[200] = '\n';
	put("6", many, 201);
	put("7",
	    "a\x01"
	    "b\n",
	    4);
	put("README", "not a GPU\n", 10);
	assert_int_equal(jobmap_read(dir, &jm), 0);
	/* what could be read still is: the good file and the good lines */
	assert_int_equal(jm.n_jobs, 3);
	assert_string_equal(jm.jobs[0], "1234");
	assert_string_equal(jm.jobs[1], "ok1");
	assert_string_equal(jm.jobs[2], "ok2");
	assert_int_equal(jm.n_bad, 8);
	assert_non_null(p = problem_of(&jm, "1"));
	assert_non_null(strstr(p->reason, "symbolic link"));
	assert_non_null(p = problem_of(&jm, "2"));
	assert_string_equal(p->reason, "not a regular file: refused");
	assert_non_null(p = problem_of(&jm, "3"));
	assert_string_equal(p->reason, "not a regular file: refused");
	assert_non_null(p = problem_of(&jm, "4"));
	assert_string_equal(p->reason, "5000 bytes, larger than 4096: refused");
	assert_non_null(p = problem_of(&jm, "5"));
	assert_non_null(strstr(p->reason, "line 2: byte 4 is 0x20"));
	assert_non_null(p = problem_of(&jm, "6"));
	assert_string_equal(p->reason, "line 1: a job id of 200 bytes (at most 128): refused");
	assert_non_null(p = problem_of(&jm, "7"));
	assert_non_null(strstr(p->reason, "byte 2 is 0x01"));
	assert_non_null(p = problem_of(&jm, "README"));
	assert_non_null(strstr(p->reason, "not named by a GPU index or UUID"));
}

static void bounds(void **state)
{
	char name[16], id[16];
	struct jobmap jm;

	(void)state;
	for (int i = 0; i < JOBMAP_JOBS_MAX + 3; i++) {
		snprintf(name, sizeof(name), "%d", i);
		snprintf(id, sizeof(id), "j%03d\n", i);
		put(name, id, strlen(id));
	}
	assert_int_equal(jobmap_read(dir, &jm), 0);
	assert_int_equal(jm.n_jobs, JOBMAP_JOBS_MAX);
	assert_int_equal(jm.n_bad, 3);
	assert_non_null(strstr(jm.problems[0].reason, "more than 64 jobs"));
}

static void not_a_directory(void **state)
{
	struct jobmap jm;
	char path[128];

	(void)state;
	snprintf(path, sizeof(path), "%s/none", dir);
	assert_int_equal(jobmap_read(path, &jm), -ENOENT);
	assert_int_equal(jm.n_jobs, 0);
	put("f", "1\n", 2);
	snprintf(path, sizeof(path), "%s/f", dir);
	assert_int_equal(jobmap_read(path, &jm), -ENOTDIR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(dcgm_layout, setup, teardown),
		cmocka_unit_test_setup_teardown(hostile_entries, setup, teardown),
		cmocka_unit_test_setup_teardown(bounds, setup, teardown),
		cmocka_unit_test_setup_teardown(not_a_directory, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
