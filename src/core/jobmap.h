/* SPDX-License-Identifier: MIT */
/*
 * The jobs running on this node, from a job-mapping directory in
 * dcgm-exporter's layout (DCGM_HPC_JOB_MAPPING_DIR,
 * internal/pkg/transformation/hpc.go): one file per GPU, named by the GPU's
 * index ("0", "1", ...; newer writers also name it by the GPU's or MIG
 * instance's UUID, "GPU-..."/"MIG-..."), each holding the ids of the jobs on
 * that GPU, one per line, written by the scheduler's prolog and removed by its
 * epilog.  serve exports the union as one roce_job_info{job_id} series per job.
 *
 * The directory is read as untrusted input: regular files only (a symlink, a
 * FIFO or a device is refused unopened), at most JOBMAP_FILES_MAX entries,
 * JOBMAP_FILE_MAX bytes a file, JOBMAP_ID_MAX bytes and printable ASCII a job
 * id, JOBMAP_JOBS_MAX jobs.  What is refused is a problem naming the file
 * (and the line); the rest is still read.  Names starting with '.' (a
 * writer's temporary file before its rename) are skipped without a word.
 */
#ifndef ROCEWATCH_JOBMAP_H
#define ROCEWATCH_JOBMAP_H

#include <stddef.h>

#define JOBMAP_FILES_MAX    512
#define JOBMAP_FILE_MAX	    4096
#define JOBMAP_ID_MAX	    128
#define JOBMAP_JOBS_MAX	    64
#define JOBMAP_PROBLEMS_MAX 16

struct jobmap_problem {
	char file[256];	  /* the entry's name, printable (cut with "...") */
	char reason[160]; /* "not a regular file", "line 3: a job id of 200 bytes (at most 128)" */
};

struct jobmap {
	size_t n_jobs;
	char jobs[JOBMAP_JOBS_MAX][JOBMAP_ID_MAX + 1]; /* sorted, each once */
	size_t n_files;				       /* mapping files read */
	size_t n_bad;				       /* entries refused (all of them) */
	size_t n_problems;			       /* the first JOBMAP_PROBLEMS_MAX of them */
	struct jobmap_problem problems[JOBMAP_PROBLEMS_MAX];
};

/*
 * Read dir into *out: 0 (problems with single files are in out->problems),
 * or -errno when the directory itself cannot be read (-ENOENT: not there,
 * which a node without a job yet may well be; -ENOTDIR).
 */
int jobmap_read(const char *dir, struct jobmap *out);

#endif
