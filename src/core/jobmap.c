// SPDX-License-Identifier: MIT
/* The job-mapping directory, dcgm-exporter's layout (jobmap.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jobmap.h"
#include "util.h"

static void problem(struct jobmap *jm, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void problem(struct jobmap *jm, const char *name, const char *fmt, ...)
{
	struct jobmap_problem *p;
	size_t i, n = strlen(name);
	va_list ap;

	jm->n_bad++;
	if (jm->n_problems >= JOBMAP_PROBLEMS_MAX)
		return;
	p = &jm->problems[jm->n_problems++];
	/* a name is any bytes but '/' and NUL: it reaches a log line printable */
	for (i = 0; i < n && i + 4 < sizeof(p->file); i++)
		p->file[i] = name[i] >= 0x20 && name[i] < 0x7f ? name[i] : '?';
	if (i < n)
		memcpy(p->file + i, "...", 4);
	else
		p->file[i] = '\0';
	va_start(ap, fmt);
	vsnprintf(p->reason, sizeof(p->reason), fmt, ap);
	va_end(ap);
}

/*
 * dcgm-exporter takes a file whose name is a GPU index (strconv.Atoi) and
 * skips any other; writers that name them by UUID ("GPU-<uuid>",
 * "MIG-<uuid>") are taken too.
 */
static bool gpu_name(const char *s)
{
	size_t n = strlen(s);

	if (n && n <= 10 && strspn(s, "0123456789") == n)
		return true;
	if (strncmp(s, "GPU-", 4) && strncmp(s, "MIG-", 4))
		return false;
	return n > 4 && strspn(s + 4, "0123456789abcdefABCDEF-") == n - 4;
}

static int id_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

static void add_job(struct jobmap *jm, const char *file, const char *id, size_t len)
{
	for (size_t i = 0; i < jm->n_jobs; i++)
		if (strlen(jm->jobs[i]) == len && !memcmp(jm->jobs[i], id, len))
			return;
	if (jm->n_jobs >= JOBMAP_JOBS_MAX) {
		problem(jm, file, "more than %d jobs on this node: job %.*s and later not exported",
			JOBMAP_JOBS_MAX, (int)(len > 40 ? 40 : len), id);
		return;
	}
	memcpy(jm->jobs[jm->n_jobs], id, len);
	jm->jobs[jm->n_jobs++][len] = '\0';
}

/* One line's job id, spaces around it taken off: false (and a problem) when it is not one. */
static bool take_line(struct jobmap *jm, const char *file, unsigned line, const char *s, size_t len)
{
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r'))
		len--;
	while (len && (*s == ' ' || *s == '\t')) {
		s++;
		len--;
	}
	if (!len)
		return true; /* a blank line */
	if (len > JOBMAP_ID_MAX) {
		problem(jm, file, "line %u: a job id of %zu bytes (at most %d): refused", line, len,
			JOBMAP_ID_MAX);
		return false;
	}
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e) {
			problem(jm, file,
				"line %u: byte %zu is 0x%02x: a job id is printable ASCII without "
				"spaces: refused",
				line, i + 1, (unsigned char)s[i]);
			return false;
		}
	add_job(jm, file, s, len);
	return true;
}

static void read_one(struct jobmap *jm, int dfd, const char *name)
{
	char buf[JOBMAP_FILE_MAX + 1];
	struct stat st;
	unsigned line = 1;
	size_t len = 0;
	ssize_t n;
	/* O_NOFOLLOW: a link planted in the directory is never followed (to a secret, a FIFO) */
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);

	if (fd < 0) {
		problem(jm, name, "%s",
			errno == ELOOP ? "a symbolic link: refused (regular files only)"
				       : strerror(errno));
		return;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		problem(jm, name, "not a regular file: refused");
		goto out;
	}
	if (st.st_size > JOBMAP_FILE_MAX) {
		problem(jm, name, "%lld bytes, larger than %d: refused", (long long)st.st_size,
			JOBMAP_FILE_MAX);
		goto out;
	}
	/* a file that grows while it is read is cut at one byte past the bound, and refused */
	while (len < sizeof(buf) && (n = read(fd, buf + len, sizeof(buf) - len)) > 0)
		len += (size_t)n;
	if (len > JOBMAP_FILE_MAX) {
		problem(jm, name, "larger than %d bytes: refused", JOBMAP_FILE_MAX);
		goto out;
	}
	jm->n_files++;
	for (size_t at = 0; at < len; line++) {
		const char *nl = memchr(buf + at, '\n', len - at);
		size_t end = nl ? (size_t)(nl - buf) : len;

		/* one refused line is said; the others are still the node's jobs */
		take_line(jm, name, line, buf + at, end - at);
		at = end + 1;
	}
out:
	close(fd);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int jobmap_read(const char *dir, struct jobmap *out)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char *names[JOBMAP_FILES_MAX];
	size_t n = 0, more = 0;
	struct dirent *de;
	DIR *d;
	int r = 0;

	memset(out, 0, sizeof(*out));
	if (dfd < 0)
		return -errno;
	d = fdopendir(dfd);
	if (!d) {
		r = -errno;
		close(dfd);
		return r;
	}
	/* in name order, so that what is said (and kept past a bound) is the same every time */
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (n == JOBMAP_FILES_MAX) {
			more++;
			continue;
		}
		names[n] = strdup(de->d_name);
		if (!names[n]) {
			r = -ENOMEM;
			break;
		}
		n++;
	}
	if (n > 1)
		qsort(names, n, sizeof(*names), name_cmp);
	for (size_t i = 0; !r && i < n; i++) {
		if (!gpu_name(names[i]))
			problem(out, names[i],
				"not named by a GPU index or UUID (dcgm-exporter's layout: one "
				"file per GPU): skipped");
		else
			read_one(out, dirfd(d), names[i]);
	}
	if (!r && more)
		problem(out, "", "more than %d entries: %zu not read", JOBMAP_FILES_MAX, more);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	closedir(d);
	if (!r && out->n_jobs > 1)
		qsort(out->jobs, out->n_jobs, sizeof(out->jobs[0]), id_cmp);
	return r;
}
