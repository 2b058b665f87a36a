/* SPDX-License-Identifier: MIT */
/*
 * serve --job-mapping-dir DIR: the jobs running on this node, as the
 * scheduler's prolog writes them into a job-mapping directory
 * (dcgm-exporter's layout, src/core/jobmap.h), exported as one series
 * roce_job_info{job_id="..."} per job and no job label anywhere else, so
 * that a job's nodes are selected by joining on instance
 * (`metric * on(instance) group_left() roce_job_info{job_id="J"}`) without
 * multiplying any other series.  The directory is read again on every slow
 * poll and on any fast poll that finds it changed (its mtime: a prolog that
 * writes a file or renames one into place changes it); a file it refuses is
 * logged once, naming it, and counted in rocewatch_job_mapping_bad_files.
 */
#ifndef ROCEWATCH_JOB_SERVE_H
#define ROCEWATCH_JOB_SERVE_H

#include <stdbool.h>
#include <stdint.h>

#include "cli.h"
#include "daemon.h"
#include "jobmap.h"

struct job_serve {
	const char *dir;	 /* --job-mapping-dir, NULL: off */
	struct jobmap cur, said; /* the last read, and the problems the log has told */
	int err;		 /* the directory's own -errno at the last read (0: read) */
	int said_err;		 /* the last directory error logged */
	bool read_once;
	int64_t mtime_ns;
};

/* --job-mapping-dir; base: struct job_serve (cli.h). */
extern const struct cli_opt job_serve_opts[];
/* With a directory: read it once; *hook, the daemon hook that reads it again: 1, else 0. */
int job_serve_start(struct job_serve *js, struct daemon_hook *hook);
/* The directory read into js (the hook's work, for the tests). */
void job_serve_read(struct job_serve *js);
/* roce_job_info and rocewatch_job_mapping_* (the hook's render, for the tests). */
void job_serve_render(struct strbuf *sb, void *arg);

#endif
