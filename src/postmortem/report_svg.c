// SPDX-License-Identifier: MIT
/*
 * rocewatch report --format svg: one panel per netdev whose pause counters
 * moved (frames per second, one line per priority and direction) and one
 * per RDMA port whose retry or out-of-sequence counters moved.  Plain SVG
 * 1.1, no script, no external fonts: it opens in any browser and renders
 * with rsvg-convert.  Each point is the peak rate within its time bucket so
 * a short storm stays visible on a long window.
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
#define MAX_PANELS 32
#define MAX_LINES  24

/* Okabe-Ito-like, distinguishable; priority 3 (RoCE) gets the red. */
static const char *const prio_colors[8] = {
	"#0072b2", "#e69f00", "#009e73", "#d55e00", "#cc79a7", "#56b4e9", "#8c564b", "#555555",
};
static const char *const line_colors[] = {
	"#d55e00", "#0072b2", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#8c564b", "#555555",
};

struct panel {
	const struct rec_series *obj; /* any series of the object */
	bool ports;		      /* a retry/out-of-sequence panel */
	const struct track *lines[MAX_LINES];
	int n;
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
	double p = pow(10, floor(log10(raw))), m = raw / p;

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

static int collect_panels(const struct report *rp, struct panel *p)
{
	int n = 0;

	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < rp->n_tracks; i++) {
			const struct track *t = &rp->tracks[i];
			bool want = pass == 0
					? t->rep->cat == RCAT_PAUSE
					: (t->rep->cat == RCAT_RETRY || t->rep->cat == RCAT_OOS);
			int k;

			if (!want || !t->n_ep || !t->bucket)
				continue;
			for (k = 0; k < n; k++)
				if (p[k].ports == (pass == 1) && same_object(p[k].obj, t->s))
					break;
			if (k == n) {
				if (n == MAX_PANELS)
					continue;
				p[n] = (struct panel){ .obj = t->s, .ports = pass == 1 };
				n++;
			}
			if (p[k].n < MAX_LINES)
				p[k].lines[p[k].n++] = t;
		}
	}
	return n;
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

static void draw_panel(FILE *f, const struct report *rp, const struct panel *p, int top)
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
	ymax = ceil(max / step) * step;
	if (span <= 0)
		span = 1;

	rep_object_name(p->obj, obj, sizeof(obj));
	fprintf(f, "<g>\n<text x=\"%d\" y=\"%d\" class=\"pt\">", x0, top + 24);
	esc(f, obj);
	if (p->ports && p->obj->netdev[0]) {
		fputs(" (", f);
		esc(f, p->obj->netdev);
		fputs(")", f);
	}
	fputs(p->ports ? ": transport retries and out-of-sequence per second"
		       : ": pause frames per second, by priority",
	      f);
	fputs("</text>\n", f);
	/* grid and y axis */
	for (double v = 0; v <= ymax + step / 2; v += step) {
		double y = y1 - v * (y1 - y0) / ymax;

		si(buf, sizeof(buf), v);
		fprintf(f,
			"<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" class=\"grid\"/>"
			"<text x=\"%d\" y=\"%.1f\" class=\"yl\">%s</text>\n",
			x0, y, x1, y, x0 - 8, y + 4, buf);
	}
	fprintf(f, "<text transform=\"translate(%d,%d) rotate(-90)\" class=\"at\">%s</text>\n",
		x0 - 58, (y0 + y1) / 2, p->ports ? "events / s" : "frames / s");
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"axis\"/>\n", x0, y1, x1,
		y1);
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"axis\"/>\n", x0, y0, x0,
		y1);
	time_axis(f, rp, x0, x1, y1);
	fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"at\">time (UTC)</text>\n", (x0 + x1) / 2,
		y1 + 36);
	/* lines */
	for (int l = 0; l < p->n; l++) {
		const struct track *t = p->lines[l];
		const char *color = p->ports	      ? line_colors[l % ARRAY_SIZE(line_colors)]
				    : t->s->prio >= 0 ? prio_colors[t->s->prio & 7]
						      : "#000000";
		bool dashed = t->rep->dir && !strcmp(t->rep->dir, "tx") && !p->ports;
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
		if (p->ports)
			snprintf(lab, sizeof(lab), "%s", t->s->name);
		else
			rep_track_label(t, lab, sizeof(lab));
		fprintf(f,
			"<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
			"stroke-width=\"2\"%s/>"
			"<text x=\"%d\" y=\"%d\" class=\"lg\">",
			x1 + 14, ly, x1 + 40, ly, color, dashed ? " stroke-dasharray=\"6,3\"" : "",
			x1 + 46, ly + 4);
		esc(f, lab);
		if (!p->ports && strcmp(t->s->name, "pfc.rx_pause") &&
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
	int n, h;
	char a[40], b[40];

	if (!p)
		return -ENOMEM;
	n = collect_panels(rp, p);
	h = TITLE_H + (n ? n : 1) * PANEL_H;
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
	    "</style>\n"
	    "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n",
	    W, h, W, h);
	fputs("<text x=\"20\" y=\"22\" class=\"t\">rocewatch report: ", f);
	esc(f, rp->rd.host[0] ? rp->rd.host : "?");
	fputs("</text>\n<text x=\"20\" y=\"38\" class=\"st\">", f);
	fprintf(f, "%s .. %s (UTC), %zu polls every %" PRId64 " ms; rx solid, tx dashed%s</text>\n",
		a, b, rp->n_window_polls, rp->rd.interval_ms,
		rp->nb < (int)rp->n_window_polls ? "; each point is the peak of its interval" : "");
	for (int i = 0; i < n; i++)
		draw_panel(f, rp, &p[i], TITLE_H + i * PANEL_H);
	if (!n)
		fprintf(
		    f,
		    "<text x=\"%d\" y=\"%d\" class=\"pt\" text-anchor=\"middle\">no pause frames, "
		    "retries or out-of-sequence in this window</text>\n",
		    W / 2, TITLE_H + PANEL_H / 2);
	fputs("</svg>\n", f);
	free(p);
	return ferror(f) ? -EIO : 0;
}
