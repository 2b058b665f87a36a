/* SPDX-License-Identifier: MIT */
/*
 * The analysis behind `rocewatch report`: what moved in a recording, as
 * episodes per track (report.c, which also writes text and JSON), and the
 * same drawn over time (report_svg.c, on top of report.c).
 */
#ifndef ROCEWATCH_REPORT_H
#define ROCEWATCH_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "recording.h"

struct episode {
	int64_t start;	  /* the poll before the first increase: it began after this */
	int64_t first;	  /* the first poll that saw an increase */
	int64_t end;	  /* the last poll that saw an increase */
	int64_t peak_t;	  /* the poll with the highest rate */
	double total;	  /* in rep->unit */
	double peak_rate; /* unit per second */
};

#define REP_BUCKETS_MAX 600

/*
 * One counter series the report follows.  What it is (category, direction,
 * name, unit) is its row's: fields[].rep for a field, the counter_desc's
 * for a counter set (src/core/fields.c); scale turns the raw count into unit.
 */
struct track {
	const struct rec_series *s;
	const struct report_desc *rep;
	double scale; /* raw -> rep->unit (0: 1) */
	int row;      /* the row's index in its table: ties on a timeline go in table order */
	bool have;
	uint64_t last;
	struct episode *ep;
	size_t n_ep, cap_ep;
	int64_t last_inc_t;
	bool open;
	double *bucket; /* peak rate per time bucket, for the SVG (pause, retries) */
};

struct rep_change {
	int64_t t;
	const struct rec_series *s;
	char *old, *new;
};

struct rep_event {
	int64_t t;
	char kind[32], device[RW_NAME_MAX], name[128], detail[256];
};

struct report {
	struct rec_reader rd;
	const char *device; /* --device */
	int width;	    /* of the text report */
	struct track *tracks;
	size_t n_tracks;
	struct track **by_series;
	char **cfg_last;
	struct rep_change *changes;
	size_t n_changes, cap_changes;
	struct rep_event *events;
	size_t n_events, cap_events;
	int64_t prev_t, prev_run;
	bool have_prev;
	int64_t cur_dt; /* ms since the previous poll of the same run; 0: no rate */
	size_t n_window_polls;
	int64_t win_first, win_last;
	int64_t dropped;
	int nb;		 /* SVG buckets */
	uint8_t *polled; /* bucket b holds a poll of the window */
	bool progress, progress_shown;
	int64_t progress_t0, last_progress_ns;
	bool oom;
};

const char *rep_cat_name(enum report_cat c);
/* The SVG time bucket of t, or -1 outside the window. */
int rep_bucket(const struct report *rp, int64_t t);
/* "rx prio 3", "tx", "" ... for a track; buf is returned. */
const char *rep_track_label(const struct track *t, char *buf, size_t len);
/* netdev name, or "mlx5_0/1" for a port; buf is returned. */
const char *rep_object_name(const struct rec_series *s, char *buf, size_t len);
/* HH:MM:SS.mmm UTC (or a full RFC 3339 time when long is set). */
void rep_time(int64_t t_ms, bool full, char *buf, size_t len);

struct report_opts {
	const char *db;	    /* recording directory or capture file */
	int64_t since_ms;   /* INT64_MIN: from the start */
	int64_t until_ms;   /* INT64_MAX: to the end */
	int64_t now_ms;	    /* what an empty window is named after */
	const char *device; /* NULL: every device */
	bool progress;	    /* a progress line on stderr for a long scan */
	int width;	    /* text: columns to fit (0: PM_DEFAULT_WIDTH) */
};

/* Read the recording and build the report: 0, or -errno with err set. */
int report_build(struct report *rp, const struct report_opts *o, char *err, size_t errlen);
/* The report as text or JSON: 0 or -errno. */
int report_write(const struct report *rp, bool json, FILE *f);
/* Every counter kind that moved, a panel per object and kind, changes and alerts marked. */
int report_svg(const struct report *rp, FILE *f);
void report_free(struct report *rp);

#endif
