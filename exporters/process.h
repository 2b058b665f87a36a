/* SPDX-License-Identifier: MIT */
/*
 * The process_* metrics every Prometheus client library exports about its own
 * process (client_golang's process collector), read from /proc/self.
 */
#ifndef ROCEWATCH_PROCESS_H
#define ROCEWATCH_PROCESS_H

#include <stdbool.h>
#include <stdint.h>

#include "strbuf.h"

struct process_stats {
	double cpu_seconds;	    /* utime + stime */
	double start_time_seconds;  /* Unix time */
	uint64_t resident_bytes;    /* RSS */
	uint64_t virtual_bytes;	    /* vsize */
	double virtual_max_bytes;   /* RLIMIT_AS soft; 2^64 when unlimited, as client_golang */
	uint64_t open_fds, max_fds; /* entries of fd/, RLIMIT_NOFILE soft */
	bool has_max_fds, has_vmax;
};

/*
 * Parse what /proc/PID/stat, /proc/stat (btime) and /proc/PID/limits say.
 * clk_tck and page_size as sysconf() gives them.  0, or -EINVAL naming nothing:
 * the caller skips the section.
 */
int process_parse(struct process_stats *ps, const char *stat, const char *proc_stat,
		  const char *limits, long clk_tck, long page_size);
/* Read this process's: 0 or -errno. */
int process_read_self(struct process_stats *ps);
/* The process_* families. */
void process_render(struct strbuf *sb, const struct process_stats *ps);

#endif
