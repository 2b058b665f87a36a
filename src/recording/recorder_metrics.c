// SPDX-License-Identifier: MIT
/* The flight recorder's own metrics (rocewatch_recorder_*), read without stopping it. */
#include <stdint.h>

#include "prom.h"
#include "recorder_int.h"

void recorder_get_counters(struct recorder *r, struct recorder_counters *c)
{
	c->polls = CNT_GET(r, polls);
	c->dropped = CNT_GET(r, dropped);
	c->samples = CNT_GET(r, samples);
	c->config_rows = CNT_GET(r, config_rows);
	c->write_errors = CNT_GET(r, write_errors);
	c->deleted_polls = CNT_GET(r, deleted_polls);
	c->captures = CNT_GET(r, captures);
	c->capture_errors = CNT_GET(r, capture_errors);
	c->captures_deleted = CNT_GET(r, captures_deleted);
	c->last_seq = CNT_GET(r, last_seq);
	c->last_t_ms = CNT_GET(r, last_t_ms);
	c->series = CNT_GET(r, series);
	c->db_bytes = CNT_GET(r, db_bytes);
	c->last_commit_seconds = (double)__atomic_load_n(&r->commit_ns, __ATOMIC_RELAXED) / 1e9;
}

static void counter1(struct strbuf *sb, const char *name, const char *type, const char *help,
		     uint64_t v)
{
	prom_family(sb, name, type, help);
	prom_sample1_u64(sb, name, NULL, NULL, v);
}

void recorder_render(struct strbuf *sb, void *arg)
{
	struct recorder *r = arg;
	struct recorder_counters c;
	size_t qlen;

	recorder_get_counters(r, &c);
	pthread_mutex_lock(&r->mu);
	qlen = ring_len(&r->q);
	pthread_mutex_unlock(&r->mu);
	counter1(sb, "rocewatch_recorder_polls_total", "counter",
		 "Polls committed to the flight recorder database.", c.polls);
	counter1(sb, "rocewatch_recorder_dropped_polls_total", "counter",
		 "Polls not recorded: the writer queue was full or the write failed "
		 "(the next poll is written in full).",
		 c.dropped);
	prom_family(sb, "rocewatch_recorder_rows_total", "counter",
		    "Rows written to the flight recorder, by table.");
	prom_sample1_u64(sb, "rocewatch_recorder_rows_total", "table", "samples", c.samples);
	prom_sample1_u64(sb, "rocewatch_recorder_rows_total", "table", "config", c.config_rows);
	counter1(sb, "rocewatch_recorder_write_errors_total", "counter",
		 "Failed flight recorder transactions.", c.write_errors);
	counter1(sb, "rocewatch_recorder_deleted_polls_total", "counter",
		 "Polls deleted by retention (age or size).", c.deleted_polls);
	prom_family(sb, "rocewatch_recorder_captures_total", "counter",
		    "Incident capture files written, by result.");
	prom_sample1_u64(sb, "rocewatch_recorder_captures_total", "result", "ok", c.captures);
	prom_sample1_u64(sb, "rocewatch_recorder_captures_total", "result", "error",
			 c.capture_errors);
	counter1(sb, "rocewatch_recorder_captures_deleted_total", "counter",
		 "Capture files deleted by capture retention (age or size).", c.captures_deleted);
	counter1(sb, "rocewatch_recorder_last_committed_poll", "gauge",
		 "Sequence number of the last poll committed (polls.seq).", (uint64_t)c.last_seq);
	counter1(sb, "rocewatch_recorder_series", "gauge", "Series known to the flight recorder.",
		 c.series);
	counter1(sb, "rocewatch_recorder_queue_length", "gauge",
		 "Polls waiting for the flight recorder's writer.", qlen);
	counter1(sb, "rocewatch_recorder_database_bytes", "gauge",
		 "Size of the flight recorder database and its WAL in bytes.", c.db_bytes);
	prom_family(sb, "rocewatch_recorder_commit_duration_seconds", "gauge",
		    "Duration of the last flight recorder transaction in seconds.");
	prom_sample1_double(sb, "rocewatch_recorder_commit_duration_seconds", NULL, NULL,
			    c.last_commit_seconds);
}
