// SPDX-License-Identifier: MIT
/*
 * rocewatch report --format svg: one panel per object and kind of trouble
 * that moved (pause frames, time paused, pause storms, retries,
 * out-of-sequence, CNPs, discards, link flaps), each on its own scale so 3
 * ACK timeouts a second are not a flat line under 20 000 pause frames.  The
 * configuration changes (a port going DOWN, PFC changed) and the alerts
 * (firing, resolved) of the window are numbered in a list under the title
 * and marked at their times in every panel.  Plain SVG 1.1, no script, no
 * external fonts: it opens in any browser and renders with rsvg-convert.
 * Each point is the peak rate within its time bucket so a short storm stays
 * visible on a long window.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "util.h"

#define W	   980
#define PANEL_H	   250
#define M_LEFT	   80
#define M_RIGHT	   210 /* legend */
#define M_TOP	   40
#define M_BOTTOM   45
#define TITLE_H	   46
#define MAX_PANELS 48
#define MAX_LINES  24
#define MAX_MARKS  24 /* marks listed; more are counted */
#define MARK_H	   16 /* a line of the marks list */

/* Okabe-Ito-like, distinguishable; priority 3 (RoCE) gets the red. */
static const char *const prio_colors[8] = {
	"#0072b2", "#e69f00", "#009e73", "#d55e00", "#cc79a7", "#56b4e9", "#8c564b", "#555555",
};
static const char *const line_colors[] = {
	"#d55e00", "#0072b2", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#8c564b", "#555555",
};

struct panel {
	const struct rec_series *obj; /* any series of the object */
	enum report_cat cat;
	const struct track *lines[MAX_LINES];
	int n;
};

/* A configuration change or an alert event, marked at its time in every panel. */
struct mark {
	int64_t t;
	bool alert;  /* an alert event (else a configuration change) */
	bool firing; /* an alert that fired (else resolved, or a change) */
	char text[480];
};

static const char *const cat_titles[RCAT__COUNT] = {
	[RCAT_PAUSE] = "pause frames per second, by priority",
	[RCAT_PAUSE_TIME] = "share of the time paused, by priority",
	[RCAT_STORM] = "pause storm events per second",
	[RCAT_RETRY] = "transport retries and ACK timeouts per second",
	[RCAT_OOS] = "out-of-sequence per second",
	[RCAT_CNP] = "congestion notifications (CNP, ECN) per second",
	[RCAT_DISCARD] = "discards and receive errors per second",
	[RCAT_LINK] = "link flaps per second",
};

static void esc(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '&')
			fputs("&amp;", f);
		else if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else if (*s == '"')
			fputs("&quot;", f);
		else
			fputc(*s, f);
	}
}

static double nice_step(double raw)
{
	double p = 1, m;

	if (!isfinite(raw) || raw <= 0)
		return raw > 0 ? raw : 1;
	/* the power of ten at or below raw, from 1 by tens */
	while (p * 10 <= raw)
		p *= 10;
	while (p > raw)
		p /= 10;
	m = raw / p;

	return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

static void si(char *buf, size_t len, double v)
{
	static const char *const suf[] = { "", "k", "M", "G", "T" };
	int i = 0;

	while (fabs(v) >= 1000 && i < 4) {
		v /= 1000;
		i++;
	}
	if (v == floor(v))
		snprintf(buf, len, "%.0f%s", v, suf[i]);
	else
		snprintf(buf, len, "%.3g%s", v, suf[i]);
}

static bool same_object(const struct rec_series *a, const struct rec_series *b)
{
	return a->kind == b->kind && a->port == b->port && !strcmp(a->device, b->device);
}

/* Panels by object (in the order the tracks name them), by kind of trouble within one. */
static int collect_panels(const struct report *rp, struct panel *p)
{
	int n = 0;

	for (size_t i = 0; i < rp->n_tracks; i++) {
		const struct rec_series *o = rp->tracks[i].s;
		bool seen = false;

		for (size_t j = 0; j < i && !seen; j++)
			seen = same_object(rp->tracks[j].s, o);
		if (seen)
			continue;
		for (int cat = RCAT_NONE + 1; cat < RCAT__COUNT; cat++) {
			int k = -1;

			for (size_t j = i; j < rp->n_tracks; j++) {
				const struct track *t = &rp->tracks[j];

				if ((int)t->rep->cat != cat || !t->n_ep || !t->bucket ||
				    !same_object(t->s, o))
					continue;
				if (k < 0) {
					if (n == MAX_PANELS)
						return n;
					k = n++;
					p[k] = (struct panel){ .obj = t->s, .cat = t->rep->cat };
				}
				if (p[k].n < MAX_LINES)
					p[k].lines[p[k].n++] = t;
			}
		}
	}
	return n;
}

/* The window's configuration changes and alert events, in time order (both lists are). */
static int collect_marks(const struct report *rp, struct mark *mk, size_t *more)
{
	size_t c = 0, e = 0;
	int n = 0;
	char obj[160], a[40];

	*more = 0;
	while (c < rp->n_changes || e < rp->n_events) {
		bool take_change =
		    c < rp->n_changes && (e >= rp->n_events || rp->changes[c].t <= rp->events[e].t);
		struct mark m = { 0 };

		if (take_change) {
			const struct rep_change *ch = &rp->changes[c++];

			rep_object_name(ch->s, obj, sizeof(obj));
			rep_time(ch->t, false, a, sizeof(a));
			m.t = ch->t;
			snprintf(m.text, sizeof(m.text), "%s  %s %s: %s -> %s", a, obj, ch->s->name,
				 ch->old, ch->new);
		} else {
			const struct rep_event *ev = &rp->events[e++];

			if (strcmp(ev->kind, "alert"))
				continue; /* captures, restarts: the text report lists them */
			rep_time(ev->t, false, a, sizeof(a));
			m.t = ev->t;
			m.alert = true;
			m.firing = !strncmp(ev->detail, "firing", 6);
			snprintf(m.text, sizeof(m.text), "%s  alert %s%s%s: %.60s", a, ev->name,
				 ev->device[0] ? " on " : "", ev->device, ev->detail);
		}
		if (m.t < rp->win_first || m.t > rp->win_last)
			continue;
		if (n == MAX_MARKS) {
			(*more)++;
			continue;
		}
		mk[n++] = m;
	}
	return n;
}

static double x_of(const struct report *rp, int x0, int x1, int64_t t)
{
	int64_t span = rp->win_last - rp->win_first;

	if (span <= 0)
		span = 1;
	return x0 + (double)(t - rp->win_first) * (x1 - x0) / (double)span;
}

static void time_axis(FILE *f, const struct report *rp, int x0, int x1, int y)
{
	static const int64_t steps[] = { 100,	   200,	     500,     1000,    2000,	5000,
					 10000,	   15000,    30000,   60000,   120000,	300000,
					 600000,   900000,   1800000, 3600000, 7200000, 10800000,
					 21600000, 43200000, 86400000 };
	int64_t span = rp->win_last - rp->win_first, step = steps[ARRAY_SIZE(steps) - 1];

	if (span <= 0)
		span = 1;
	for (size_t i = 0; i < ARRAY_SIZE(steps); i++)
		if (span / steps[i] <= 8) {
			step = steps[i];
			break;
		}
	for (int64_t t = (rp->win_first + step - 1) / step * step; t <= rp->win_last; t += step) {
		double x = x0 + (double)(t - rp->win_first) * (x1 - x0) / (double)span;
		char buf[40], lab[40];

		rep_time(t, false, buf, sizeof(buf));
		/* "HH:MM:SS.mmm": drop the milliseconds unless the step needs them */
		snprintf(lab, sizeof(lab), "%.*s", step % 1000 ? 12 : 8, buf);
		fprintf(f,
			"<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" class=\"tick\"/>"
			"<text x=\"%.1f\" y=\"%d\" class=\"tl\">%s</text>\n",
			x, y, x, y + 5, x, y + 18, lab);
	}
}

static void draw_panel(FILE *f, const struct report *rp, const struct panel *p, int top,
		       const struct mark *mk, int n_marks)
{
	int x0 = M_LEFT, x1 = W - M_RIGHT, y0 = top + M_TOP, y1 = top + PANEL_H - M_BOTTOM;
	double max = 0, step, ymax;
	int64_t span = rp->win_last - rp->win_first;
	char obj[160], buf[64];

	for (int l = 0; l < p->n; l++)
		for (int b = 0; b < rp->nb; b++)
			if (p->lines[l]->bucket[b] > max)
				max = p->lines[l]->bucket[b];
	if (max <= 0)
		max = 1;
	step = nice_step(max / 5);
	ymax = rw_ceil(max / step) * step;
	if (span <= 0)
		span = 1;

	rep_object_name(p->obj, obj, sizeof(obj));
	fprintf(f, "<g>\n<text x=\"%d\" y=\"%d\" class=\"pt\">", x0, top + 24);
	esc(f, obj);
	if (p->obj->kind == OBJ_RDMA_PORT && p->obj->netdev[0]) {
		fputs(" (", f);
		esc(f, p->obj->netdev);
		fputs(")", f);
	}
	fprintf(f, ": %s</text>\n", cat_titles[p->cat]);
	/* grid and y axis */
	for (double v = 0; v <= ymax + step / 2; v += step) {
		double y = y1 - v * (y1 - y0) / ymax;

		si(buf, sizeof(buf), v);
		fprintf(f,
			"<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" class=\"grid\"/>"
			"<text x=\"%d\" y=\"%.1f\" class=\"yl\">%s</text>\n",
			x0, y, x1, y, x0 - 8, y + 4, buf);
	}
	fprintf(f, "<text transform=\"translate(%d,%d) rotate(-90)\" class=\"at\">", x0 - 58,
		(y0 + y1) / 2);
	esc(f, p->lines[0]->rep->unit);
	fputs(" / s</text>\n", f);
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"axis\"/>\n", x0, y1, x1,
		y1);
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"axis\"/>\n", x0, y0, x0,
		y1);
	time_axis(f, rp, x0, x1, y1);
	fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"at\">time (UTC)</text>\n", (x0 + x1) / 2,
		y1 + 36);
	/* the changes and alerts of the window, numbered as in the list under the title */
	for (int i = 0; i < n_marks; i++) {
		double x = x_of(rp, x0, x1, mk[i].t);
		bool labelled = false;

		fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" class=\"%s\"/>\n", x,
			y0 - 4, x, y1,
			!mk[i].alert   ? "mc"
			: mk[i].firing ? "ma"
				       : "mr");
		/* marks a few pixels apart share one label: "2,3" */
		for (int j = 0; j < i && !labelled; j++)
			labelled = fabs(x_of(rp, x0, x1, mk[j].t) - x) < 12;
		if (labelled)
			continue;
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" class=\"mn\">%d", x, y0 - 6, i + 1);
		for (int j = i + 1; j < n_marks; j++)
			if (fabs(x_of(rp, x0, x1, mk[j].t) - x) < 12)
				fprintf(f, ",%d", j + 1);
		fputs("</text>\n", f);
	}
	/* lines */
	for (int l = 0; l < p->n; l++) {
		const struct track *t = p->lines[l];
		bool by_prio = p->cat == RCAT_PAUSE || p->cat == RCAT_PAUSE_TIME;
		const char *color = !by_prio	      ? line_colors[l % ARRAY_SIZE(line_colors)]
				    : t->s->prio >= 0 ? prio_colors[t->s->prio & 7]
						      : "#000000";
		bool dashed = t->rep->dir && !strcmp(t->rep->dir, "tx");
		char lab[64];
		int ly = y0 + 4 + l * 18;

		fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"",
			color, dashed ? " stroke-dasharray=\"6,3\"" : "");
		for (int b = 0; b < rp->nb; b++) {
			if (!rp->polled[b])
				continue; /* no poll fell in it: join its neighbours, do not drop to
					     0 */
			/* the bucket's middle, on the same time scale as the axis */
			double tb = ((double)b + 0.5) * (double)(span + 1) / rp->nb;
			double x = x0 + (tb > span ? span : tb) * (x1 - x0) / (double)span;
			double y = y1 - t->bucket[b] * (y1 - y0) / ymax;

			fprintf(f, "%.1f,%.1f ", x, y);
		}
		fputs("\"/>\n", f);
		/* legend */
		if (!by_prio)
			snprintf(lab, sizeof(lab), "%s", t->rep->what);
		else
			rep_track_label(t, lab, sizeof(lab));
		fprintf(f,
			"<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
			"stroke-width=\"2\"%s/>"
			"<text x=\"%d\" y=\"%d\" class=\"lg\">",
			x1 + 14, ly, x1 + 40, ly, color, dashed ? " stroke-dasharray=\"6,3\"" : "",
			x1 + 46, ly + 4);
		esc(f, lab);
		if (by_prio && strcmp(t->s->name, "pfc.rx_pause") &&
		    strcmp(t->s->name, "pfc.tx_pause")) {
			fputs(" (", f);
			esc(f, t->rep->what);
			fputs(")", f);
		}
		fputs("</text>\n", f);
	}
	fputs("</g>\n", f);
}

int report_svg(const struct report *rp, FILE *f)
{
	struct panel *p = calloc(MAX_PANELS, sizeof(*p));
	struct mark *mk = calloc(MAX_MARKS, sizeof(*mk));
	int n, h, nm, top;
	size_t more;
	char a[40], b[40];

	if (!p || !mk) {
		free(p);
		free(mk);
		return -ENOMEM;
	}
	n = collect_panels(rp, p);
	nm = collect_marks(rp, mk, &more);
	top = TITLE_H + (nm ? (nm + (more ? 1 : 0)) * MARK_H + 8 : 0);
	h = top + (n ? n : 1) * PANEL_H;
	rep_time(rp->win_first, true, a, sizeof(a));
	rep_time(rp->win_last, true, b, sizeof(b));
	fprintf(
	    f,
	    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	    "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%d\" "
	    "viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n"
	    "<style>\n"
	    ".t{font-size:16px;font-weight:bold}.st{font-size:12px;fill:#444}"
	    ".pt{font-size:14px;font-weight:bold}\n"
	    ".tl{font-size:11px;text-anchor:middle;fill:#333}.yl{font-size:11px;text-anchor:end;"
	    "fill:#333}\n"
	    ".at{font-size:12px;text-anchor:middle;fill:#333}.lg{font-size:12px;fill:#222}\n"
	    ".grid{stroke:#e4e4e4;stroke-width:1}.axis{stroke:#333;stroke-width:1}"
	    ".tick{stroke:#333;stroke-width:1}\n"
	    ".ml{font-size:12px;fill:#222}.mn{font-size:10px;text-anchor:middle;fill:#222}\n"
	    ".mc{stroke:#0072b2;stroke-width:1;stroke-dasharray:4,3}"
	    ".ma{stroke:#7a1fa2;stroke-width:1.5}.mr{stroke:#009e73;stroke-width:1.5;"
	    "stroke-dasharray:2,2}\n"
	    "</style>\n"
	    "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n",
	    W, h, W, h);
	fputs("<text x=\"20\" y=\"22\" class=\"t\">rocewatch report: ", f);
	esc(f, rp->rd.host[0] ? rp->rd.host : "?");
	fputs("</text>\n<text x=\"20\" y=\"38\" class=\"st\">", f);
	fprintf(f, "%s .. %s (UTC), %zu polls every %" PRId64 " ms; rx solid, tx dashed%s</text>\n",
		a, b, rp->n_window_polls, rp->rd.interval_ms,
		rp->nb < (int)rp->n_window_polls ? "; each point is the peak of its interval" : "");
	/* the marks: configuration changes (blue), alerts firing (purple) and resolved (green) */
	for (int i = 0; i < nm; i++) {
		fprintf(f, "<text x=\"20\" y=\"%d\" class=\"ml\" data-mark=\"%s\">%d  ",
			TITLE_H + 4 + (i + 1) * MARK_H - 4,
			!mk[i].alert   ? "change"
			: mk[i].firing ? "firing"
				       : "resolved",
			i + 1);
		esc(f, mk[i].text);
		fputs("</text>\n", f);
	}
	if (more)
		fprintf(f,
			"<text x=\"20\" y=\"%d\" class=\"ml\">and %zu more (the text report "
			"lists them)</text>\n",
			TITLE_H + 4 + (nm + 1) * MARK_H - 4, more);
	for (int i = 0; i < n; i++)
		draw_panel(f, rp, &p[i], top + i * PANEL_H, mk, nm);
	if (!n)
		fprintf(f,
			"<text x=\"%d\" y=\"%d\" class=\"pt\" text-anchor=\"middle\">no counter "
			"moved in this window</text>\n",
			W / 2, top + PANEL_H / 2);
	fputs("</svg>\n", f);
	free(p);
	free(mk);
	return ferror(f) ? -EIO : 0;
}
