// SPDX-License-Identifier: MIT
/*
 * Prometheus exposition.  Families come out in field-table order, samples
 * in object order (sorted by name), so two renders of the same model are
 * byte-identical.  Absent fields produce no sample, never a 0.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build_info.h"
#include "fleet_digest.h"
#include "process.h"
#include "prom.h"
#include "config.h"
#include "util.h"

static const char *const mtype_names[] = {
	[MT_NONE] = "untyped",
	[MT_GAUGE] = "gauge",
	[MT_COUNTER] = "counter",
	[MT_INFO] = "gauge",
};

void prom_family(struct strbuf *sb, const char *name, const char *type, const char *help)
{
	sb_puts(sb, "# HELP ");
	sb_puts(sb, name);
	sb_putc(sb, ' ');
	/* HELP escapes only backslash and newline. */
	for (const char *p = help ? help : ""; *p; p++) {
		if (*p == '\\')
			sb_puts(sb, "\\\\");
		else if (*p == '\n')
			sb_puts(sb, "\\n");
		else
			sb_putc(sb, *p);
	}
	sb_puts(sb, "\n# TYPE ");
	sb_puts(sb, name);
	sb_putc(sb, ' ');
	sb_puts(sb, type);
	sb_putc(sb, '\n');
}

void prom_sample_begin(struct strbuf *sb, const char *name)
{
	sb_puts(sb, name);
}

void prom_label(struct strbuf *sb, int *first, const char *k, const char *v)
{
	sb_putc(sb, *first ? '{' : ',');
	*first = 0;
	sb_puts(sb, k);
	sb_puts(sb, "=\"");
	sb_label_escape(sb, v);
	sb_putc(sb, '"');
}

static void close_labels(struct strbuf *sb, int first)
{
	if (!first)
		sb_putc(sb, '}');
	sb_putc(sb, ' ');
}

void prom_sample_end_u64(struct strbuf *sb, int first, uint64_t v)
{
	close_labels(sb, first);
	sb_u64(sb, v);
	sb_putc(sb, '\n');
}

void prom_sample_end_double(struct strbuf *sb, int first, double v)
{
	close_labels(sb, first);
	sb_double(sb, v);
	sb_putc(sb, '\n');
}

static void object_labels(struct strbuf *sb, int *first, const struct object *o)
{
	const char *netdev = "";
	char port[12];

	switch (o->kind) {
	case OBJ_NETDEV:
		prom_label(sb, first, "device", o->name);
		/* both names on every family where both exist: joins need no label_replace */
		if (o->rdma_dev[0])
			prom_label(sb, first, "rdma_device", o->rdma_dev);
		break;
	case OBJ_RDMA_PORT:
		snprintf(port, sizeof(port), "%u", o->port);
		prom_label(sb, first, "device", o->name);
		prom_label(sb, first, "port", port);
		/* A netdev left out by --netdev-exclude (or a fixture's) still has its name. */
		if (o->netdev)
			netdev = o->netdev->name;
		else if (field_present(o, F_PORT_NETDEV))
			netdev = o->f[F_PORT_NETDEV].v.s;
		prom_label(sb, first, "netdev", netdev);
		prom_label(sb, first, "rdma_device", o->name);
		break;
	default:
		break;
	}
}

/* Constant labels come pre-formatted ("direction=\"rx\""). */
static void const_labels(struct strbuf *sb, int *first, const char *labels)
{
	if (!labels || !*labels)
		return;
	sb_putc(sb, *first ? '{' : ',');
	*first = 0;
	sb_puts(sb, labels);
}

static size_t objects_of(const struct node_model *m, enum obj_kind k,
			 const struct object *const **out)
{
	static const struct object *node_only[1];

	if (k == OBJ_NODE) {
		node_only[0] = &m->node;
		*out = node_only;
		return 1;
	}
	return model_objects((struct node_model *)m, k, (struct object ***)out);
}

static double scaled(const struct field_desc *d, double v)
{
	return d->scale ? v * d->scale : v;
}

/*
 * A sample of row d: its name, the object's labels, the row's constant ones
 * and, for an element, label="index".  Returns `first` for the sample's end.
 */
static int row_sample(struct strbuf *sb, const struct field_desc *d, const struct object *o,
		      const char *label, int index)
{
	int first = 1;

	prom_sample_begin(sb, d->metric);
	object_labels(sb, &first, o);
	const_labels(sb, &first, d->labels);
	if (label) {
		char lv[12];

		snprintf(lv, sizeof(lv), "%d", index);
		prom_label(sb, &first, label, lv);
	}
	return first;
}

static void emit_value(struct strbuf *sb, const struct field_desc *d, const struct object *o,
		       const struct field_val *f)
{
	char lv[12];
	int first;

	switch (d->type) {
	case VT_INT:
	case VT_BOOL:
		first = row_sample(sb, d, o, NULL, 0);
		if (d->scale)
			prom_sample_end_double(sb, first, scaled(d, (double)f->v.i));
		else if (f->v.i < 0)
			prom_sample_end_double(sb, first, (double)f->v.i);
		else
			prom_sample_end_u64(sb, first, (uint64_t)f->v.i);
		break;
	case VT_FLOAT:
		prom_sample_end_double(sb, row_sample(sb, d, o, NULL, 0), scaled(d, f->v.d));
		break;
	case VT_PRIOSET:
		for (int p = 0; p < RW_PRIO_COUNT; p++)
			prom_sample_end_u64(sb, row_sample(sb, d, o, d->label, p),
					    (f->v.set >> p) & 1);
		break;
	case VT_PRIO_ARRAY:
		for (int p = 0; p < RW_PRIO_COUNT; p++) {
			if (!(f->mask & (1u << p)))
				continue;
			first = row_sample(sb, d, o, d->label, p);
			if (d->scale)
				prom_sample_end_double(sb, first, scaled(d, (double)f->v.arr[p]));
			else
				prom_sample_end_u64(sb, first, f->v.arr[p]);
		}
		break;
	case VT_DSCP_MAP:
		for (int i = 0; i < RW_DSCP_COUNT; i++)
			if (f->v.dscp[i] >= 0)
				prom_sample_end_u64(sb, row_sample(sb, d, o, d->label, i),
						    (uint64_t)f->v.dscp[i]);
		break;
	case VT_GIDS:
		for (size_t i = 0; f->v.gids && i < f->v.gids->n; i++) {
			const struct gid_entry *g = &f->v.gids->e[i];

			first = 1;
			snprintf(lv, sizeof(lv), "%u", g->index);
			prom_sample_begin(sb, d->metric);
			object_labels(sb, &first, o);
			prom_label(sb, &first, "index", lv);
			prom_label(sb, &first, "gid", g->gid);
			prom_label(sb, &first, "type", g->type);
			prom_label(sb, &first, "gid_netdev", g->netdev);
			prom_sample_end_u64(sb, first, 1);
		}
		break;
	case VT_PCI_PAIRS: {
		static const char *const pn[] = { "", "PIX", "PXB", "PHB", "SYS" };

		for (size_t i = 0; f->v.pairs && i < f->v.pairs->n; i++) {
			const struct pci_pair *pp = &f->v.pairs->e[i];

			first = 1;
			prom_sample_begin(sb, d->metric);
			prom_label(sb, &first, "gpu", pp->gpu);
			prom_label(sb, &first, "nic", pp->nic);
			prom_label(sb, &first, "path", pn[pp->path]);
			prom_sample_end_u64(sb, first, pp->path);
		}
		break;
	}
	case VT_STR:
	case VT_DSCPSET:
		break; /* strings are info groups; DSCP sets are rule-only facts */
	}
}

/* The whole value as one label of an info series (field_desc.compact). */
static void emit_compact(struct strbuf *sb, const struct field_desc *d, const struct object *o,
			 const struct field_val *f)
{
	char text[RW_DSCP_COUNT + 1];
	int first = 1;

	if (field_compact_text(f, d->type, text, sizeof(text)))
		return;
	prom_sample_begin(sb, d->compact.metric);
	object_labels(sb, &first, o);
	const_labels(sb, &first, d->labels);
	prom_label(sb, &first, d->compact.label, text);
	prom_sample_end_u64(sb, first, 1);
}

/* An info family: consecutive string rows of one metric become one series per object. */
static int emit_info_group(struct strbuf *sb, const struct node_model *m, int start)
{
	const struct field_desc *d0 = &fields[start];
	const struct object *const *objs;
	size_t n = objects_of(m, d0->obj, &objs);
	int end = start;

	while (end + 1 < F__COUNT && fields[end + 1].metric &&
	       !strcmp(fields[end + 1].metric, d0->metric))
		end++;
	for (size_t i = 0; i < n; i++) {
		const struct object *o = objs[i];
		int first = 1, any = 0;

		for (int f = start; f <= end; f++)
			any |= o->f[f].state == ABS_NONE;
		if (!any)
			continue;
		prom_sample_begin(sb, d0->metric);
		object_labels(sb, &first, o);
		/* an absent fact has no label (not label=""): absent is never a value */
		for (int f = start; f <= end; f++)
			if (o->f[f].state == ABS_NONE)
				prom_label(sb, &first, fields[f].label, o->f[f].v.s);
		prom_sample_end_u64(sb, first, 1);
	}
	return end;
}

/* Drop a family header that got no samples (a field nobody has). */
static void drop_empty_family(struct strbuf *sb, size_t mark, size_t hdr_end)
{
	if (sb->len == hdr_end) {
		sb->len = mark;
		if (sb->buf)
			sb->buf[mark] = '\0';
	}
}

static void render_fields(struct strbuf *sb, const struct node_model *m)
{
	const char *prev = NULL;
	size_t mark = 0, hdr_end = 0;

	for (int i = 0; i < F__COUNT; i++) {
		const struct field_desc *d = &fields[i];
		const struct object *const *objs;
		size_t n;

		if (d->mtype == MT_NONE || !d->metric)
			continue;
		if (!prev || strcmp(prev, d->metric)) {
			if (prev)
				drop_empty_family(sb, mark, hdr_end);
			mark = sb->len;
			prom_family(sb, d->metric, mtype_names[d->mtype], d->help);
			hdr_end = sb->len;
			prev = d->metric;
		}
		if (d->mtype == MT_INFO && d->type == VT_STR) {
			i = emit_info_group(sb, m, i);
			continue;
		}
		n = objects_of(m, d->obj, &objs);
		for (size_t k = 0; k < n; k++)
			if (objs[k]->f[i].state == ABS_NONE)
				emit_value(sb, d, objs[k], &objs[k]->f[i]);
		if (d->compact.metric) {
			/* its own family, right after the per-element one */
			drop_empty_family(sb, mark, hdr_end);
			mark = sb->len;
			prom_family(sb, d->compact.metric, "gauge", d->compact.help);
			hdr_end = sb->len;
			prev = d->compact.metric;
			for (size_t k = 0; k < n; k++)
				if (objs[k]->f[i].state == ABS_NONE)
					emit_compact(sb, d, objs[k], &objs[k]->f[i]);
		}
	}
	if (prev)
		drop_empty_family(sb, mark, hdr_end);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Union of the counter names of one set over the objects of one kind, sorted. */
static int collect_names(struct prom_renderer *pr, const struct node_model *m, enum obj_kind k,
			 enum cset_id c, const regex_t *filter)
{
	const struct object *const *objs;
	size_t n = objects_of(m, k, &objs);

	pr->n_names = 0;
	for (size_t i = 0; i < n; i++) {
		const struct counter_set *cs = &objs[i]->cs[c];

		for (uint32_t j = 0; j < cs->n; j++) {
			if (!cs->present[j])
				continue;
			if (filter && regexec(filter, cs->names[j], 0, NULL, 0))
				continue;
			if (array_grow(&pr->names, &pr->cap_names, pr->n_names, sizeof(*pr->names),
				       256))
				return -1;
			pr->names[pr->n_names++] = cs->names[j];
		}
	}
	if (pr->n_names > 1)
		qsort(pr->names, pr->n_names, sizeof(*pr->names), cmp_str);
	/* dedupe */
	size_t w = 0;
	for (size_t i = 0; i < pr->n_names; i++)
		if (!w || strcmp(pr->names[w - 1], pr->names[i]))
			pr->names[w++] = pr->names[i];
	pr->n_names = w;
	return 0;
}

static int cmp_key_name(const void *key, const void *elem)
{
	return strcmp((const char *)key, *(const char *const *)elem);
}

/*
 * Where each (sorted) counter name sits in each object's set: one bsearch
 * per counter instead of a linear search per (name, object) pair, which was
 * the renderer's largest cost with 60 counters on 8 ports.
 */
static int map_slots(struct prom_renderer *pr, const struct object *const *objs, size_t n,
		     enum cset_id c)
{
	size_t need = pr->n_names * n;

	if (need > pr->cap_slot) {
		if (array_resize(&pr->slot, need, sizeof(*pr->slot)))
			return -1;
		pr->cap_slot = need;
	}
	for (size_t i = 0; i < need; i++)
		pr->slot[i] = -1;
	for (size_t o = 0; o < n; o++) {
		const struct counter_set *cs = &objs[o]->cs[c];

		for (uint32_t j = 0; j < cs->n; j++) {
			const char **hit;

			if (!cs->present[j])
				continue;
			hit = bsearch(cs->names[j], pr->names, pr->n_names, sizeof(*pr->names),
				      cmp_key_name);
			if (hit)
				pr->slot[(size_t)(hit - pr->names) * n + o] = (int)j;
		}
	}
	return 0;
}

/*
 * Each object's labels, escaped and closed ("{device=\"mlx5_0\",...} "), once
 * per render instead of once per counter: pr->labels holds them one after the
 * other, pr->label_off[o] where object o's start (one more: the end).
 */
static int prerender_labels(struct prom_renderer *pr, const struct object *const *objs, size_t n)
{
	if (n + 1 > pr->cap_label_off) {
		if (array_resize(&pr->label_off, n + 1, sizeof(*pr->label_off)))
			return -1;
		pr->cap_label_off = n + 1;
	}
	sb_reset(&pr->labels);
	for (size_t o = 0; o < n; o++) {
		int first = 1;

		pr->label_off[o] = pr->labels.len;
		object_labels(&pr->labels, &first, objs[o]);
		close_labels(&pr->labels, first);
	}
	pr->label_off[n] = pr->labels.len;
	return pr->labels.oom ? -1 : 0;
}

/* Only [a-z0-9_] passes metric_sanitize() unchanged. */
static bool needs_sanitizing(const char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return true;
	return false;
}

static bool same_sanitized(const char *a, const char *b)
{
	for (; *a && *b; a++, b++) {
		char x = isalnum((unsigned char)*a) ? (char)tolower((unsigned char)*a) : '_';
		char y = isalnum((unsigned char)*b) ? (char)tolower((unsigned char)*b) : '_';

		if (x != y)
			return false;
	}
	return !*a && !*b;
}

/*
 * Two driver names that sanitise alike ("RNR received", "rnr_received") would
 * make one family twice, which no scraper accepts: the name that needed
 * sanitising gives way (to the first, between two such).  Only names with
 * characters outside [a-z0-9_] are checked, so a mlx5 set costs nothing.
 */
static bool shadowed(const struct prom_renderer *pr, size_t i)
{
	if (!needs_sanitizing(pr->names[i]))
		return false;
	for (size_t j = 0; j < pr->n_names; j++) {
		if (j == i || !same_sanitized(pr->names[i], pr->names[j]))
			continue;
		if (!needs_sanitizing(pr->names[j]) || j < i) {
			rw_log_once(LOG_LVL_WARN, pr->names[i],
				    "metrics: counter '%s' has the metric name of '%s'; only the "
				    "latter is exported (both are in the snapshot)",
				    pr->names[i], pr->names[j]);
			return true;
		}
	}
	return false;
}

static void render_cset(struct prom_renderer *pr, struct strbuf *sb, const struct node_model *m,
			enum obj_kind k, enum cset_id c, const regex_t *filter)
{
	const struct object *const *objs;
	size_t n = objects_of(m, k, &objs);
	struct strbuf name = pr->name;
	struct cset_metric cm;

	if (collect_names(pr, m, k, c, filter) || map_slots(pr, objs, n, c) ||
	    prerender_labels(pr, objs, n))
		return;
	for (size_t i = 0; i < pr->n_names; i++) {
		sb_reset(&name);
		if (shadowed(pr, i))
			continue;
		if (cset_metric(&name, c, pr->names[i], &cm) || name.oom)
			break;
		prom_family(sb, name.buf, cm.type, cm.help);
		for (size_t o = 0; o < n; o++) {
			int idx = pr->slot[i * n + o];

			if (idx < 0)
				continue;
			sb_add(sb, name.buf, name.len);
			sb_add(sb, pr->labels.buf + pr->label_off[o],
			       pr->label_off[o + 1] - pr->label_off[o]);
			if (cm.scale)
				sb_double(sb, (double)objs[o]->cs[c].vals[idx] * cm.scale);
			else
				sb_u64(sb, objs[o]->cs[c].vals[idx]);
			sb_putc(sb, '\n');
		}
	}
	pr->name = name; /* kept for the next poll */
}

static void render_cc(struct prom_renderer *pr, struct strbuf *sb, const struct node_model *m)
{
	const struct object *const *objs;
	size_t n = objects_of(m, OBJ_NETDEV, &objs);

	if (collect_names(pr, m, OBJ_NETDEV, CSET_CC, NULL) || !pr->n_names)
		return;
	prom_family(
	    sb, "roce_dcqcn_param", "gauge",
	    "DCQCN congestion-control parameter of the device (debugfs cc_params), raw value.");
	for (size_t o = 0; o < n; o++) {
		const struct counter_set *cs = &objs[o]->cs[CSET_CC];

		for (size_t i = 0; i < pr->n_names; i++) {
			int idx = cset_find(cs, pr->names[i]), first = 1;

			if (idx < 0 || !cs->present[idx])
				continue;
			prom_sample_begin(sb, "roce_dcqcn_param");
			object_labels(sb, &first, objs[o]);
			prom_label(sb, &first, "param", pr->names[i]);
			prom_sample_end_u64(sb, first, cs->vals[idx]);
		}
	}
}

static void render_wire(struct strbuf *sb, const struct node_model *m)
{
	static const char *const cls[] = { "data", "ack", "cnp" };
	static const char *const dirs[] = { "ingress", "egress" };
	const struct object *const *objs;
	size_t n = objects_of(m, OBJ_NETDEV, &objs), any = 0;

	for (size_t o = 0; o < n; o++)
		any += objs[o]->wire != NULL;
	if (!any)
		return;
	for (int b = 0; b < 2; b++) {
		const char *metric = b ? "roce_wire_bytes_total" : "roce_wire_packets_total";

		/* direction: the device's tc hook (ingress/egress), not the fabric's rx/tx */
		prom_family(
		    sb, metric, "counter",
		    b ? "Bytes of RoCE v2 packets seen at tc by the wire collector (BPF) since it "
			"attached, by direction at the device, DSCP, ECN codepoint (0 not-ECT, "
			"1 ECT(1), 2 ECT(0), 3 CE) and class (data, ack, cnp); frame length "
			"without "
			"FCS, as of the last poll."
		      : "RoCE v2 packets seen at tc by the wire collector (BPF) since it attached, "
			"by direction at the device, DSCP, ECN codepoint (0 not-ECT, 1 ECT(1), "
			"2 ECT(0), 3 CE) and class (data, ack, cnp), as of the last poll.");
		for (size_t o = 0; o < n; o++) {
			const struct wire_counts *w = objs[o]->wire;

			if (!w)
				continue;
			for (int dir = 0; dir < 2; dir++)
				for (int d = 0; d < RW_DSCP_COUNT; d++)
					for (int e = 0; e < 4; e++)
						for (int c = 0; c < WIRE__CLASSES; c++) {
							uint64_t v = b ? w->bytes[dir][d][e][c]
								       : w->packets[dir][d][e][c];
							char ds[4], es[2];
							int first = 1;

							if (!w->packets[dir][d][e][c])
								continue;
							snprintf(ds, sizeof(ds), "%d", d);
							snprintf(es, sizeof(es), "%d", e);
							prom_sample_begin(sb, metric);
							object_labels(sb, &first, objs[o]);
							prom_label(sb, &first, "direction",
								   dirs[dir]);
							prom_label(sb, &first, "dscp", ds);
							prom_label(sb, &first, "ecn", es);
							prom_label(sb, &first, "class", cls[c]);
							prom_sample_end_u64(sb, first, v);
						}
		}
	}
}

static int sample1_begin(struct strbuf *sb, const char *name, const char *label, const char *value)
{
	int first = 1;

	prom_sample_begin(sb, name);
	if (label)
		prom_label(sb, &first, label, value);
	return first;
}

void prom_sample1_u64(struct strbuf *sb, const char *name, const char *label, const char *value,
		      uint64_t v)
{
	prom_sample_end_u64(sb, sample1_begin(sb, name, label, value), v);
}

void prom_sample1_double(struct strbuf *sb, const char *name, const char *label, const char *value,
			 double v)
{
	prom_sample_end_double(sb, sample1_begin(sb, name, label, value), v);
}

/* The collectors' self metrics, one gauge family each, in this order. */
static const struct {
	const char *name, *help;
} coll_families[] = {
	{ "rocewatch_collector_success",
	  "1 if the collector's last run succeeded, 0 if it failed; only enabled collectors "
	  "have a series." },
	{ "rocewatch_collector_duration_seconds",
	  "How long the collector's last run took, in seconds." },
	{ "rocewatch_collector_consecutive_failures",
	  "Consecutive failed runs of the collector; it is backed off while > 0." },
};

static void render_self(struct strbuf *sb, const struct prom_input *in)
{
	const struct node_model *m = in->m;
	const struct poll_stats *st = in->stats;
	int first = 1;

	prom_family(sb, "rocewatch_build_info", "gauge",
		    "rocewatch build information; value is always 1.");
	prom_sample_begin(sb, "rocewatch_build_info");
	prom_label(sb, &first, "version", ROCEWATCH_VERSION);
	prom_label(sb, &first, "revision", in->revision ? in->revision : rw_build_revision);
	prom_label(sb, &first, "compiler", in->compiler ? in->compiler : rw_build_compiler);
	prom_sample_end_u64(sb, first, 1);

	/*
	 * Enabled collectors only, as node_exporter does: a disabled collector
	 * is not a failing one, and a 0 for it would fire every
	 * `rocewatch_collector_success == 0` alert on a default install.
	 */
	for (size_t f = 0; f < ARRAY_SIZE(coll_families); f++) {
		const char *name = coll_families[f].name;

		prom_family(sb, name, "gauge", coll_families[f].help);
		for (int i = 0; i < RW_MAX_COLLECTORS; i++) {
			const struct collector_status *c = &m->coll[i];

			if (!c->name[0] || !c->enabled)
				continue;
			if (f == 1)
				prom_sample1_double(sb, name, "collector", c->name, c->duration);
			else
				prom_sample1_u64(sb, name, "collector", c->name,
						 f == 0 ? (uint64_t)(c->ran && !c->err)
							: c->failures);
		}
	}
	prom_render_partial(sb, m);
	if (!st)
		return;
	prom_family(sb, "rocewatch_polls_total", "counter",
		    "Polls run, by loop (fast: counters, slow: configuration).");
	prom_sample1_double(sb, "rocewatch_polls_total", "loop", "fast", (double)st->fast_polls);
	prom_sample1_double(sb, "rocewatch_polls_total", "loop", "slow", (double)st->slow_polls);
	prom_family(sb, "rocewatch_event_passes_total", "counter",
		    "Kernel notifications acted on between polls: the facts they may have changed "
		    "re-read and the rules that read them evaluated, no counter read.");
	prom_sample1_double(sb, "rocewatch_event_passes_total", NULL, NULL,
			    (double)st->event_passes);
	prom_family(sb, "rocewatch_poll_overruns_total", "counter",
		    "Fast polls that started late because the previous one overran the interval.");
	prom_sample1_double(sb, "rocewatch_poll_overruns_total", NULL, NULL, (double)st->overruns);
	prom_family(sb, "rocewatch_poll_lag_seconds", "gauge",
		    "How late the last fast poll started relative to its schedule, in seconds.");
	prom_sample1_double(sb, "rocewatch_poll_lag_seconds", NULL, NULL, st->lag_seconds);
	prom_family(sb, "rocewatch_poll_duration_seconds", "gauge",
		    "Duration of the last poll of each loop, in seconds.");
	prom_sample1_double(sb, "rocewatch_poll_duration_seconds", "loop", "fast",
			    st->last_fast_seconds);
	prom_sample1_double(sb, "rocewatch_poll_duration_seconds", "loop", "slow",
			    st->last_slow_seconds);
	prom_family(sb, "rocewatch_last_poll_timestamp_seconds", "gauge",
		    "Unix time of the last poll; the values on this page are from it.");
	prom_sample1_double(sb, "rocewatch_last_poll_timestamp_seconds", NULL, NULL,
			    (double)st->last_poll_ns / 1e9);
	prom_family(sb, "rocewatch_start_time_seconds", "gauge", "Unix time rocewatch started.");
	prom_sample1_double(sb, "rocewatch_start_time_seconds", NULL, NULL,
			    (double)st->start_ns / 1e9);
}

/*
 * The node's fleet digest (fleet_digest.h): one series, for fleet check to
 * find the nodes alike on the engine without selecting all their series.
 */
static void render_digest(struct strbuf *sb, const struct node_model *m)
{
	char digest[FLEET_DIGEST_HEX + 1];
	int first = 1;

	if (fleet_digest(m, digest)) {
		sb->oom = true;
		return;
	}
	prom_family(sb, FLEET_DIGEST_METRIC, "gauge",
		    "Digest of the configuration facts fleet rules compare (schema: which facts); "
		    "value is always 1.");
	prom_sample_begin(sb, FLEET_DIGEST_METRIC);
	prom_label(sb, &first, "schema", fleet_digest_schema());
	prom_label(sb, &first, "digest", digest);
	prom_sample_end_u64(sb, first, 1);
}

int prom_render(struct prom_renderer *pr, struct strbuf *out, const struct prom_input *in)
{
	sb_reset(out);
	render_fields(out, in->m);
	render_digest(out, in->m);
	render_cset(pr, out, in->m, OBJ_RDMA_PORT, CSET_HW, NULL);
	render_cset(pr, out, in->m, OBJ_RDMA_PORT, CSET_PORT, NULL);
	if (in->ethtool_include)
		render_cset(pr, out, in->m, OBJ_NETDEV, CSET_ETHTOOL, in->ethtool_include);
	render_cc(pr, out, in->m);
	render_wire(out, in->m);
	if (in->extra)
		in->extra(out, in->extra_arg);
	render_self(out, in);
	if (in->proc)
		process_render(out, in->proc);
	return out->oom ? -1 : 0;
}

void prom_renderer_free(struct prom_renderer *pr)
{
	free(pr->names);
	free(pr->slot);
	free(pr->label_off);
	sb_free(&pr->name);
	sb_free(&pr->labels);
	memset(pr, 0, sizeof(*pr));
}

void prom_object_labels(struct strbuf *sb, int *first, const struct object *o)
{
	object_labels(sb, first, o);
}
