/* SPDX-License-Identifier: MIT */
/* A recording as OpenMetrics text, named and labelled as /metrics is (`rocewatch export`). */
#ifndef ROCEWATCH_EXPORT_H
#define ROCEWATCH_EXPORT_H

#include <stdint.h>
#include <stdio.h>

struct rules_engine;

struct export_opts {
	const char *db;	  /* recording directory or capture file */
	int64_t since_ms; /* the window (INT64_MIN / INT64_MAX: all) */
	int64_t until_ms;
	/*
	 * instance and job labels on every sample, as a scrape adds them: two
	 * nodes' exports stay apart and the dashboards find them (NULL: the
	 * recording's host, "rocewatch")
	 */
	const char *instance, *job;
	/* rules run over the recording as replay runs them: their results and alerts (NULL: none)
	 */
	struct rules_engine *e;
};

struct xport;

/* Open the recording and load the window: 0, or -errno with err set (free *out either way). */
int export_open(struct xport **out, const struct export_opts *o, char *err, size_t errlen);
/* Write the window to f, ending with "# EOF": 0, or -errno with err set. */
int export_write(struct xport *x, FILE *f, char *err, size_t errlen);
void export_free(struct xport *x);

#endif
