// SPDX-License-Identifier: MIT
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"
#include "util.h"

struct hl_ctx {
	struct hostlist *hl;
	const char *expr; /* the whole expression, for messages */
	char *err;
	size_t errlen;
};

static int bad(struct hl_ctx *c, const char *fmt, const char *piece)
{
	char msg[256];

	snprintf(msg, sizeof(msg), fmt, piece);
	snprintf(c->err, c->errlen, "hostlist '%s': %s", c->expr, msg);
	return -EINVAL;
}

static int push(struct hl_ctx *c, const char *name, size_t len)
{
	struct hostlist *hl = c->hl;
	char *s;

	if (hl->n >= HOSTLIST_MAX) {
		snprintf(c->err, c->errlen, "hostlist '%s': more than %d names", c->expr,
			 HOSTLIST_MAX);
		return -E2BIG;
	}
	if (array_grow(&hl->names, &hl->cap, hl->n, sizeof(*hl->names), 16))
		return -ENOMEM;
	s = strndup(name, len);
	if (!s)
		return -ENOMEM;
	hl->names[hl->n++] = s;
	return 0;
}

/* The first '[' that opens a numeric range (IPv6 literals are skipped), or NULL. */
static const char *range_open(const char *s, const char *end)
{
	for (const char *p = s; p < end; p++) {
		const char *q;

		if (*p != '[')
			continue;
		q = memchr(p, ']', (size_t)(end - p));
		if (q && memchr(p, ':', (size_t)(q - p)))
			p = q; /* [::1] or [fe80::1]: an address, not a range */
		else
			return p;
	}
	return NULL;
}

/* One host range (no top-level comma): s[0..len) */
static int expand_one(struct hl_ctx *c, const char *s, size_t len)
{
	const char *end = s + len, *lb = range_open(s, end), *rb, *p;
	char piece[128]; /* messages quote at most this much */
	int r;

	if (!lb)
		return push(c, s, len);
	rb = memchr(lb, ']', (size_t)(end - lb));
	snprintf(piece, sizeof(piece), "%.*s", (int)len, s);
	if (!rb)
		return bad(c, "'[' in '%s' is never closed", piece);
	if (memchr(lb + 1, '[', (size_t)(rb - lb - 1)))
		return bad(c, "brackets do not nest ('%s')", piece);
	if (rb == lb + 1)
		return bad(c, "empty brackets in '%s'", piece);
	for (p = lb + 1; p < rb;) {
		const char *q = p, *dash = NULL;
		unsigned long lo, hi;
		int width;

		while (q < rb && *q != ',') {
			if (*q == '-' && !dash)
				dash = q;
			else if (!isdigit((unsigned char)*q))
				return bad(c, "a range is digits or two numbers lo-hi ('%s')",
					   piece);
			q++;
		}
		if (q == p || dash == p || (dash && dash + 1 == q))
			return bad(c, "a range is digits or two numbers lo-hi ('%s')", piece);
		width = (int)((dash ? dash : q) - p);
		lo = strtoul(p, NULL, 10);
		hi = dash ? strtoul(dash + 1, NULL, 10) : lo;
		if (width > 18 || (dash && q - dash - 1 > 18))
			return bad(c, "number too long in '%s'", piece);
		if (hi < lo)
			return bad(c, "range runs backwards in '%s'", piece);
		if (hi - lo >= HOSTLIST_MAX) {
			snprintf(c->err, c->errlen, "hostlist '%s': more than %d names", c->expr,
				 HOSTLIST_MAX);
			return -E2BIG;
		}
		for (unsigned long v = lo; v <= hi; v++) {
			char name[512];
			int n = snprintf(name, sizeof(name), "%.*s%0*lu%.*s", (int)(lb - s), s,
					 width, v, (int)(end - rb - 1), rb + 1);

			if (n < 0 || (size_t)n >= sizeof(name))
				return bad(c, "name too long in '%s'", piece);
			/* the suffix may hold more brackets: a[1-2]b[3-4] */
			r = expand_one(c, name, (size_t)n);
			if (r)
				return r;
		}
		p = q < rb ? q + 1 : q;
		if (q < rb && p == rb)
			return bad(c, "a range is digits or two numbers lo-hi ('%s')", piece);
	}
	return 0;
}

int hostlist_expand(struct hostlist *hl, const char *expr, char *err, size_t errlen)
{
	struct hl_ctx c = { hl, expr, err, errlen };
	const char *p = expr;
	bool need = true; /* at the start, and after a comma, a name must follow */
	size_t had = hl->n;

	for (;;) {
		const char *q;
		int depth = 0, r;

		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		if (*p == ',') {
			snprintf(err, errlen, "hostlist '%s': empty name before a comma", expr);
			return -EINVAL;
		}
		/* names are separated by commas or whitespace outside brackets (as Slurm reads
		 * them) */
		for (q = p; *q && (depth || (*q != ',' && !isspace((unsigned char)*q))); q++)
			depth += *q == '[' ? 1 : *q == ']' ? -1 : 0;
		r = expand_one(&c, p, (size_t)(q - p));
		if (r)
			return r;
		need = false;
		while (isspace((unsigned char)*q))
			q++;
		if (*q == ',') {
			q++;
			need = true;
		}
		p = q;
	}
	if (need) {
		snprintf(err, errlen, "hostlist '%s': %s", expr,
			 hl->n > had ? "empty name after the last comma" : "empty");
		return -EINVAL;
	}
	return 0;
}

void hostlist_free(struct hostlist *hl)
{
	for (size_t i = 0; i < hl->n; i++)
		free(hl->names[i]);
	free(hl->names);
	memset(hl, 0, sizeof(*hl));
}

void hostlist_with_port(const char *name, int port, char *out, size_t len)
{
	const char *rb = strrchr(name, ']'), *colon = strrchr(name, ':');

	if (colon && (!rb || colon > rb))
		snprintf(out, len, "%s", name);
	else
		snprintf(out, len, "%s:%d", name, port);
}

int hostlist_each(const char *cmd, const char *expr, int port,
		  int (*fn)(void *arg, const char *name, const char *hostport), void *arg)
{
	struct hostlist hl = { 0 };
	char err[512];
	int r = hostlist_expand(&hl, expr, err, sizeof(err));

	for (size_t i = 0; !r && i < hl.n; i++) {
		char hp[512];

		hostlist_with_port(hl.names[i], port, hp, sizeof(hp));
		r = fn(arg, hl.names[i], hp);
		if (r == -ENOMEM)
			snprintf(err, sizeof(err), "out of memory");
		else if (r)
			err[0] = '\0'; /* fn said why */
	}
	if (r == -ENOMEM)
		snprintf(err, sizeof(err), "out of memory");
	if (r && err[0])
		fprintf(stderr, "rocewatch %s: %s\n", cmd, err);
	hostlist_free(&hl);
	return r;
}
