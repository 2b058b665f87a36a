// SPDX-License-Identifier: MIT
/* serve --job-mapping-dir: roce_job_info from the job-mapping directory (job_serve.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "job_serve.h"
#include "prom.h"
#include "util.h"

const struct cli_opt job_serve_opts[] = {
	{ .name = "job-mapping-dir",
	  CLI_STRING_AT(struct job_serve, dir),
	  .metavar = "DIR",
	  .help = "the jobs on this node, from DIR as dcgm-exporter's\n"
		  "DCGM_HPC_JOB_MAPPING_DIR lays it out (one file per\n"
		  "GPU holding its job ids, one a line; written by the\n"
		  "Slurm prolog or a pod's init container): one series\n"
		  "roce_job_info{job_id} per job" },
	{ 0 },
};

static bool said_before(const struct jobmap *said, const struct jobmap_problem *p)
{
	for (size_t i = 0; i < said->n_problems; i++)
		if (!strcmp(said->problems[i].file, p->file) &&
		    !strcmp(said->problems[i].reason, p->reason))
			return true;
	return false;
}

/* What is new since the last read is logged, once: a bad file every poll would drown the log. */
static void tell(struct job_serve *js)
{
	if (js->err && js->err != js->said_err)
		log_warn("--job-mapping-dir %s: %s: no job exported", js->dir,
			 js->err == -ENOENT ? "no such directory (yet)" : strerror(-js->err));
	else if (!js->err && js->said_err)
		log_info("--job-mapping-dir %s: readable again", js->dir);
	js->said_err = js->err;
	for (size_t i = 0; i < js->cur.n_problems; i++) {
		const struct jobmap_problem *p = &js->cur.problems[i];

		if (!said_before(&js->said, p))
			log_warn("--job-mapping-dir %s%s%s: %s", js->dir, p->file[0] ? "/" : "",
				 p->file, p->reason);
	}
	if (js->cur.n_bad > js->cur.n_problems && js->said.n_bad <= js->said.n_problems)
		log_warn("--job-mapping-dir %s: %zu more entries refused (not each said)", js->dir,
			 js->cur.n_bad - js->cur.n_problems);
	js->said.n_problems = js->cur.n_problems;
	js->said.n_bad = js->cur.n_bad;
	memcpy(js->said.problems, js->cur.problems,
	       js->cur.n_problems * sizeof(js->cur.problems[0]));
}

void job_serve_read(struct job_serve *js)
{
	struct stat st;

	js->mtime_ns = stat(js->dir, &st)
			   ? -1
			   : (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
	js->err = jobmap_read(js->dir, &js->cur);
	js->read_once = true;
	tell(js);
}

static void job_after_poll(void *arg, struct node_model *m, unsigned what)
{
	struct job_serve *js = arg;
	struct stat st;
	int64_t t;

	(void)m;
	if (!(what & COLLECT_SLOW)) {
		/* a fast poll: only when the directory changed (a prolog wrote or renamed) */
		t = stat(js->dir, &st)
			? -1
			: (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
		if (js->read_once && t == js->mtime_ns)
			return;
	}
	job_serve_read(js);
}

void job_serve_render(struct strbuf *sb, void *arg)
{
	const struct job_serve *js = arg;

	if (!js->read_once)
		return;
	if (js->cur.n_jobs) {
		prom_family(sb, "roce_job_info", "gauge",
			    "A job running on this node, from the job-mapping directory "
			    "(--job-mapping-dir: the scheduler's prolog writes it, one file per "
			    "GPU as dcgm-exporter reads it); 1. No other series carries a job "
			    "label: select a job's nodes with * on(instance) group_left() "
			    "roce_job_info{job_id=\"...\"}.");
		for (size_t i = 0; i < js->cur.n_jobs; i++)
			prom_sample1_u64(sb, "roce_job_info", "job_id", js->cur.jobs[i], 1);
	}
	prom_family(sb, "rocewatch_job_mapping_read_success", "gauge",
		    "1 when the job-mapping directory could be read at the last read, 0 when "
		    "not (missing, not a directory, no permission: the log says which).");
	sb_printf(sb, "rocewatch_job_mapping_read_success %d\n", js->err ? 0 : 1);
	prom_family(sb, "rocewatch_job_mapping_bad_files", "gauge",
		    "Entries of the job-mapping directory refused at the last read (not a "
		    "regular file, too large, a malformed job id, not named by a GPU); the "
		    "log names each once.");
	sb_printf(sb, "rocewatch_job_mapping_bad_files %zu\n", js->cur.n_bad);
}

int job_serve_start(struct job_serve *js, struct daemon_hook *hook)
{
	if (!js->dir)
		return 0;
	job_serve_read(js);
	*hook = (struct daemon_hook){
		.name = "jobs", .after_poll = job_after_poll, .render = job_serve_render, .arg = js
	};
	return 1;
}
