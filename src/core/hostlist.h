/* SPDX-License-Identifier: MIT */
/*
 * Slurm hostlist expressions, expanded the way Slurm expands them
 * (src/common/hostlist.c): "gpu[001-064,070]", "rack[0-63]_blade[0-41]",
 * "a[1-2]b[3-4]", "n1,n2", "n1 n2".  A bracket holds comma-separated numbers and
 * ranges lo-hi; the width of lo sets the zero padding ("[008-010]" gives
 * 008 009 010, "[8-10]" gives 8 9 10); several brackets multiply, the
 * leftmost varying slowest.  A bracket with a ':' in it is an IPv6 literal
 * ("[::1]:9479") and is kept as it is.
 */
#ifndef ROCEWATCH_HOSTLIST_H
#define ROCEWATCH_HOSTLIST_H

#include <stddef.h>

/* Slurm refuses larger ranges too (MAX_RANGE). */
#define HOSTLIST_MAX 65536

struct hostlist {
	char **names;
	size_t n, cap;
};

/*
 * Append the names of expr to hl, in order, duplicates kept (Slurm keeps
 * them too).  0; -EINVAL with err naming the expression and the place;
 * -E2BIG when hl would hold more than HOSTLIST_MAX names; -ENOMEM.
 */
int hostlist_expand(struct hostlist *hl, const char *expr, char *err, size_t errlen);
void hostlist_free(struct hostlist *hl);
/*
 * A node name as host:port for a URL: "host" -> "host:PORT"; "host:1" and
 * "[::1]:1" are kept; "[::1]" -> "[::1]:PORT".
 */
void hostlist_with_port(const char *name, int port, char *out, size_t len);
/*
 * The nodes a command is given (a hostlist expression): fn(arg, name,
 * host:port) for each, in order.  A bad expression, or fn's -ENOMEM, is
 * said as "rocewatch CMD: ..." on stderr; returns 0, the expansion's error,
 * or the first nonzero fn returned.
 */
int hostlist_each(const char *cmd, const char *expr, int port,
		  int (*fn)(void *arg, const char *name, const char *hostport), void *arg);

#endif
