// SPDX-License-Identifier: MIT
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "process.h"
#include "prom.h"
#include "util.h"

/* "Max open files  1024  4096  files": the soft limit, or unlimited. */
static int limits_soft(const char *limits, const char *name, double *v, bool *unlimited)
{
	const char *p = strstr(limits, name);
	char val[32];

	if (!p || sscanf(p + strlen(name), "%31s", val) != 1)
		return -ENOENT;
	*unlimited = !strcmp(val, "unlimited");
	if (*unlimited)
		return 0;
	*v = strtod(val, NULL);
	return 0;
}

int process_parse(struct process_stats *ps, const char *stat, const char *proc_stat,
		  const char *limits, long clk_tck, long page_size)
{
	/* comm (field 2) may hold spaces and ')': the fields start after the last ')' */
	const char *p = strrchr(stat, ')'), *bt;
	unsigned long long utime, stime, start, vsize, btime;
	long long rss;
	double v;
	bool unl;

	memset(ps, 0, sizeof(*ps));
	if (!p || clk_tck <= 0 || page_size <= 0)
		return -EINVAL;
	/* state(3) ... utime(14) stime(15) ... starttime(22) vsize(23) rss(24) */
	if (sscanf(p + 1,
		   " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %*d %*d"
		   " %llu %llu %lld",
		   &utime, &stime, &start, &vsize, &rss) != 5)
		return -EINVAL;
	bt = strstr(proc_stat, "\nbtime ");
	if (!bt || sscanf(bt + 7, "%llu", &btime) != 1)
		return -EINVAL;
	ps->cpu_seconds = (double)(utime + stime) / (double)clk_tck;
	ps->start_time_seconds = (double)btime + (double)start / (double)clk_tck;
	ps->virtual_bytes = vsize;
	ps->resident_bytes = rss > 0 ? (uint64_t)rss * (uint64_t)page_size : 0;
	if (limits && !limits_soft(limits, "Max open files", &v, &unl)) {
		ps->has_max_fds = !unl;
		ps->max_fds = (uint64_t)v;
	}
	if (limits && !limits_soft(limits, "Max address space", &v, &unl)) {
		ps->has_vmax = true;
		ps->virtual_max_bytes = unl ? 18446744073709551616.0 : v;
	}
	return 0;
}

/*
 * /proc/stat, for btime only: it never changes, and /proc/stat grows with the
 * CPU count (a line per CPU, formatted by the kernel at every read), so it is
 * read once.  "\nbtime N\n", as process_parse() looks for it.
 */
static int boot_time_line(char *out, size_t len)
{
	static char line[48];
	char *pstat = NULL;
	const char *bt;
	int r;

	if (!line[0]) {
		r = read_kfile_all("/proc/stat", &pstat, NULL);
		if (r)
			return r;
		bt = strstr(pstat, "\nbtime ");
		if (bt)
			snprintf(line, sizeof(line), "\n%.*s\n", (int)strcspn(bt + 1, "\n"),
				 bt + 1);
		free(pstat);
		if (!bt)
			return -EINVAL;
	}
	strlcpy0(out, line, len);
	return 0;
}

int process_read_self(struct process_stats *ps)
{
	char *stat = NULL, pstat[48];
	struct rlimit rl;
	struct dirent *de;
	DIR *dir;
	int r;

	r = read_kfile_all("/proc/self/stat", &stat, NULL);
	if (!r)
		r = boot_time_line(pstat, sizeof(pstat));
	if (!r)
		r = process_parse(ps, stat, pstat, NULL, sysconf(_SC_CLK_TCK),
				  sysconf(_SC_PAGESIZE));
	free(stat);
	if (r)
		return r;
	/* what /proc/self/limits says, without formatting and parsing it */
	if (!getrlimit(RLIMIT_NOFILE, &rl)) {
		ps->has_max_fds = rl.rlim_cur != RLIM_INFINITY;
		ps->max_fds = (uint64_t)rl.rlim_cur;
	}
	if (!getrlimit(RLIMIT_AS, &rl)) {
		ps->has_vmax = true;
		ps->virtual_max_bytes =
		    rl.rlim_cur == RLIM_INFINITY ? 18446744073709551616.0 : (double)rl.rlim_cur;
	}
	dir = opendir("/proc/self/fd");
	if (!dir)
		return -errno;
	while ((de = readdir(dir)))
		if (de->d_name[0] != '.')
			ps->open_fds++;
	closedir(dir);
	ps->open_fds--; /* the descriptor opendir() itself holds */
	return 0;
}

static void one(struct strbuf *sb, const char *name, const char *type, const char *help, double v)
{
	prom_family(sb, name, type, help);
	prom_sample_begin(sb, name);
	prom_sample_end_double(sb, 1, v);
}

void process_render(struct strbuf *sb, const struct process_stats *ps)
{
	one(sb, "process_cpu_seconds_total", "counter",
	    "Total user and system CPU time spent in seconds.", ps->cpu_seconds);
	if (ps->has_max_fds)
		one(sb, "process_max_fds", "gauge", "Maximum number of open file descriptors.",
		    (double)ps->max_fds);
	one(sb, "process_open_fds", "gauge", "Number of open file descriptors.",
	    (double)ps->open_fds);
	one(sb, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
	    (double)ps->resident_bytes);
	one(sb, "process_start_time_seconds", "gauge",
	    "Start time of the process since unix epoch in seconds.", ps->start_time_seconds);
	one(sb, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.",
	    (double)ps->virtual_bytes);
	if (ps->has_vmax)
		one(sb, "process_virtual_memory_max_bytes", "gauge",
		    "Maximum amount of virtual memory available in bytes.", ps->virtual_max_bytes);
}
