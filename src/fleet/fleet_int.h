/* SPDX-License-Identifier: MIT */
/*
 * The fleet room's own helpers, shared by its files:
 *   fleet_prom.c   node models from a Prometheus-API engine's series (and these helpers)
 *   fleet_count.c  fleet rules counted on the engine (fleet check --job)
 */
#ifndef ROCEWATCH_FLEET_INT_H
#define ROCEWATCH_FLEET_INT_H

#include <stddef.h>

#include "strbuf.h"

/* s as application/x-www-form-urlencoded into sb. */
void fleet_url_encode(struct strbuf *sb, const char *s);
/* One character of a PromQL double-quoted string, escaped as its lexer reads escapes. */
void fleet_promql_char(struct strbuf *sb, unsigned char c);
/* What an engine sent, for a message: printable ASCII, the rest '?', cut at n - 1. */
const char *fleet_printable(const char *t, char *buf, size_t n);
/* `group by (instance) (roce_job_info{job_id="JOB"})`: the job's nodes, one series each. */
void fleet_job_join(struct strbuf *sb, const char *job);

#endif
