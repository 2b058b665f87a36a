// SPDX-License-Identifier: MIT
/*
 * Node models from a Prometheus: for a fleet too large to fan out to, read
 * the facts rocewatch already exports.  The instances Prometheus knows are
 * listed once (/api/v1/label/instance/values); then one instant query per
 * metric the rules need, of exactly the instances that belong to the nodes
 * (`instance=~"a:9479|b:9479"`, literal alternatives Prometheus looks up in
 * its index, sent as a form POST so a long list fits), and each series turned
 * back into a field through its field-table row: the metric name and
 * constant labels say which field, the object labels (device, port, netdev)
 * which object, and the value is divided by the row's scale.  What has no
 * series stays absent (not_collected), never 0.
 *
 * A DSCP map is 64 series per netdev and a priority set 8: at 8 000 nodes
 * 4.6 of 5.3 million series, and selecting them was most of Prometheus's
 * CPU before any arithmetic.  serve exports each also whole, as one series
 * (fields[].compact, field_compact_text()), and that is what is asked for
 * (enum enc ENC_COMPACT).  A node without those series (an older rocewatch)
 * is asked again for the per-element series, folded by Prometheus into a few
 * numbers that decode back to exactly what the series said (dscp_query(),
 * prioset_query()).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bounded.h"
#include "fleet_digest.h"
#include "fleet_prom.h"
#include "fleet_int.h"
#include "strbuf.h"
#include "strmap.h"
#include "util.h"

void fleet_url_encode(struct strbuf *sb, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
			sb_putc(sb, (char)c);
		} else {
			sb_putc(sb, '%');
			sb_putc(sb, hex[c >> 4]);
			sb_putc(sb, hex[c & 15]);
		}
	}
}

/* One character of a PromQL double-quoted string, escaped as its lexer reads escapes. */
void fleet_promql_char(struct strbuf *sb, unsigned char c)
{
	if (c == '\\' || c == '"') {
		sb_putc(sb, '\\');
		sb_putc(sb, (char)c);
	} else if (c < 0x20 || c == 0x7f) {
		sb_printf(sb, "\\x%02x", c);
	} else {
		sb_putc(sb, (char)c);
	}
}

/*
 * s matched literally by RE2, inside a PromQL string: RE2's metacharacters
 * get a backslash, and then every character (that backslash too) is escaped
 * for the string.
 */
static void regex_quote(struct strbuf *sb, const char *s)
{
	for (; *s; s++) {
		if (strchr(".[]{}()\\*+?|^$", *s))
			fleet_promql_char(sb, '\\');
		fleet_promql_char(sb, (unsigned char)*s);
	}
}

/* What Prometheus sent, for a message: printable ASCII, the rest '?', cut at n - 1. */
const char *fleet_printable(const char *t, char *buf, size_t n)
{
	size_t i;

	for (i = 0; t && t[i] && i + 1 < n; i++)
		buf[i] = t[i] >= 0x20 && t[i] < 0x7f ? t[i] : '?';
	buf[i] = '\0';
	return buf;
}

/* The node an instance label belongs to: exactly, or as host with :PORT stripped. */
static ssize_t node_of(const struct strmap *byname, const char *inst)
{
	char host[160];
	const char *colon = strrchr(inst, ':');
	int64_t i = strmap_get(byname, inst);

	if (i >= 0)
		return (ssize_t)i;
	if (!colon || !colon[1] || strspn(colon + 1, "0123456789") != strlen(colon + 1))
		return -1;
	/* an unbracketed IPv6 address has colons but no port */
	if (strchr(inst, ':') != colon && inst[0] != '[')
		return -1;
	/* every series of a node named without its port comes here: no printf */
	if ((size_t)(colon - inst) >= sizeof(host))
		return -1;
	memcpy(host, inst, (size_t)(colon - inst));
	host[colon - inst] = '\0';
	i = strmap_get(byname, host);
	return i >= 0 ? (ssize_t)i : -1;
}

/*
 * How a query asks for its metric: its series as they are, or folded by
 * Prometheus into a few exact numbers per object.
 */
enum enc {
	ENC_SERIES,
	ENC_DSCP,    /* VT_DSCP_MAP rows: base-9 digits, 16 DSCPs a number */
	ENC_PRIOSET, /* VT_PRIOSET rows: a bitmask of the 8 priorities */
	ENC_COMPACT, /* a row's compact metric: the whole value in one label */
};

#define DSCP_DIGITS 16 /* DSCPs folded into one number */
#define DSCP_GROUPS (RW_DSCP_COUNT / DSCP_DIGITS)
#define DSCP_BASE   9 /* a digit: 0 no mapping, else 1 + the priority */
/* the label the encoded DSCP answer names its group of 16 by (a name no exporter uses) */
#define DSCP_GROUP_LABEL "rocewatch_dscp_group"

/*
 * The DSCP map of each object as DSCP_GROUPS numbers, one per group g of 16
 * DSCPs: the sum over the DSCPs d of the group that have a series of
 * (priority + 1) * 9^(d mod 16).  Why this is exact:
 * - each term is an integer: rocewatch exports a priority as an integer
 *   0..7 (exporters/prom.c), times a power of 9 below 9^16;
 * - every partial sum, in whatever order Prometheus adds, is an integer at
 *   most 8 * (9^0 + ... + 9^15) = 9^16 - 1 < 2^53, so float64 holds each
 *   one exactly and no rounding happens anywhere;
 * - the digits are 1..8, below the base, so no term carries into another:
 *   base-9 digit j of the sum is DSCP 16g + j's priority + 1, or 0 when it
 *   has no series.  Absent stays apart from priority 0.
 * - Prometheus writes a sample with strconv 'f', -1 (the shortest text that
 *   reads back as the same float64) and strtod reads it back exactly.
 * The weights are a constant vector built in the query (label_replace on
 * vector(), one series per DSCP, labelled with its group), matched on the
 * DSCP label.  Each group is its own query (a dscp=~ matcher of its 16
 * values): Prometheus evaluates a query on one core, and selecting the DSCP
 * series is most of its work, so four queries in parallel finish sooner.
 * `sum without` drops only the DSCP label, so each object's labels (device,
 * port, netdev, constant labels, job) stay as the series had them.
 * Values outside [0, 8) are left out, as the series decoder skipped them,
 * by comparisons (cheap: they keep the series' labels).  A value that is not
 * an integer (no rocewatch exports one) makes the sum not an integer, which
 * is refused; only fractions that add up to whole numbers could pass, and
 * floor() to rule that out too cost Prometheus 0.5 s of CPU per 128 000
 * series on 2.42 (each operation that drops the metric name copies every
 * series' labels), 13 s of an 8 000-node check.
 */
static void dscp_query(struct strbuf *q, const char *metric, const char *label,
		       const struct strbuf *match, int g)
{
	uint64_t w = 1;

	/* match ends in '}': the group's DSCPs go inside it */
	sb_printf(q, "sum without (%s) (((%s", label, metric);
	if (match->len)
		sb_add(q, match->buf, match->len - 1);
	sb_printf(q, ",%s=~\"", label);
	for (int j = 0; j < DSCP_DIGITS; j++)
		sb_printf(q, "%s%d", j ? "|" : "", g * DSCP_DIGITS + j);
	sb_printf(q,
		  "\"} >= 0 < %d) + 1) * on (%s) group_left (" DSCP_GROUP_LABEL ") label_replace(",
		  RW_PRIO_COUNT, label);
	for (int j = 0; j < DSCP_DIGITS; j++, w *= DSCP_BASE)
		sb_printf(q, "%slabel_replace(vector(%llu), \"%s\", \"%d\", \"\", \"\")",
			  j ? " or " : "", (unsigned long long)w, label, g * DSCP_DIGITS + j);
	sb_printf(q, ", \"" DSCP_GROUP_LABEL "\", \"%d\", \"\", \"\"))", g);
}

/*
 * A priority set as one number per object: the sum over the priorities p
 * with a non-zero series of 2^p.  Exact: at most 255, integers all along.
 * `!= bool 0` is the series decoder's test (a value that is not 0 sets the
 * bit; rocewatch exports 0 and 1), and the non-finite values it skipped are
 * left out first.
 */
static void prioset_query(struct strbuf *q, const char *metric, const char *label,
			  const struct strbuf *match)
{
	sb_printf(q, "sum without (%s) ((%s", label, metric);
	sb_add(q, match->buf, match->len);
	sb_printf(q, " > -Inf < +Inf != bool 0) * on (%s) group_left () (", label);
	for (int p = 0; p < RW_PRIO_COUNT; p++)
		sb_printf(q, "%slabel_replace(vector(%u), \"%s\", \"%d\", \"\", \"\")",
			  p ? " or " : "", 1u << p, label, p);
	sb_puts(q, "))");
}

/*
 * One series of an answer, decoded by hand: {"metric": {labels}, "value":
 * [time, "v"]}.  jansson built and freed a document for each of millions
 * of series, about 25 000 instructions a series; this reads the bytes once.
 *
 * What one series may make rocewatch hold is bounded, so that an answer of
 * any size costs a few of them (docs/fleet.md, "Limits"): a label's name or
 * value is at most LABEL_MAX bytes decoded (rocewatch's own are host,
 * device, netdev and firmware names of at most 64 bytes, a compact DSCP map
 * 64 characters, an instance a host name and a port), a series SERIES_MAX
 * bytes as sent, its labels SERIES_LABELS and SERIES_TEXT bytes decoded.
 */
#define SERIES_LABELS 64
#define LABEL_MAX     4096
#define SERIES_TEXT   (64u << 10)
#define SERIES_MAX    (256u << 10)
struct series {
	size_t n;
	const char *k[SERIES_LABELS], *v[SERIES_LABELS];
	double value;
	bool have_value;
	/*
	 * why it was not read: a name or value past LABEL_MAX (long_key: the
	 * label whose value it was), too many labels, too much text
	 */
	bool too_long, too_many, text_full;
	const char *long_key;
	/* the sample is not a number as Prometheus writes one: what it was, cut */
	bool bad_value;
	char sample[48];
	const char *value_text; /* the sample as sent, in text */
	size_t used;
	char text[SERIES_TEXT]; /* the decoded names and values */
};

static const char *label(const struct series *labels, const char *k)
{
	for (size_t i = 0; i < labels->n; i++)
		if (!strcmp(labels->k[i], k))
			return labels->v[i];
	return NULL;
}

/* Do the series' labels carry the row's constant labels (`direction="rx",role="np"`)? */
static bool const_labels_match(const struct series *labels, const char *want)
{
	char buf[160], *save = NULL, *tok;

	if (!want || !*want)
		return true;
	snprintf(buf, sizeof(buf), "%s", want);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '='), *v;
		size_t vl;
		const char *have;

		if (!eq)
			return false;
		*eq = '\0';
		v = eq + 1;
		vl = strlen(v);
		if (vl >= 2 && v[0] == '"' && v[vl - 1] == '"') {
			v[vl - 1] = '\0';
			v++;
		}
		have = label(labels, tok);
		if (!have || strcmp(have, v))
			return false;
	}
	return true;
}

static struct object *object_for(struct node_model *m, enum obj_kind k, const struct series *labels)
{
	const char *dev = label(labels, "device"), *port = label(labels, "port"),
		   *nd = label(labels, "netdev");
	struct object *o;
	uint64_t pn;

	switch (k) {
	case OBJ_NODE:
		return &m->node;
	case OBJ_NETDEV:
		if (!dev || !*dev || strlen(dev) >= RW_NAME_MAX)
			return NULL;
		o = model_add_netdev(m, dev);
		if (o)
			o->seen = true;
		return o;
	default:
		if (!dev || !*dev || strlen(dev) >= RW_NAME_MAX || !port || parse_u64(port, &pn) ||
		    pn > UINT32_MAX)
			return NULL;
		o = model_add_port(m, dev, (uint32_t)pn);
		if (o && nd && *nd && strlen(nd) < RW_STR_MAX)
			field_set_str(o, F_PORT_NETDEV, nd);
		if (o)
			o->seen = true;
		return o;
	}
}

/* An element label (priority, dscp, tc, buffer) as an index below max, or -1. */
static int index_label(const struct series *labels, const char *k, int max)
{
	const char *s = label(labels, k);
	uint64_t v;

	if (!s || parse_u64(s, &v) || v >= (uint64_t)max)
		return -1;
	return (int)v;
}

/* enum pci_path as rocewatch exports it (the path label) */
static const char *const pci_path_names[] = { "", "PIX", "PXB", "PHB", "SYS" };

/* One series into the fields of row id. */
static void apply_series(struct object *o, int id, const struct series *labels, double v)
{
	const struct field_desc *d = &fields[id];
	double raw = d->scale ? v / d->scale : v;
	struct field_val *f = &o->f[id];
	int ix;

	switch (d->type) {
	case VT_INT:
		field_set_int(o, id, rw_llround(raw));
		break;
	case VT_BOOL:
		field_set_bool(o, id, v != 0);
		break;
	case VT_FLOAT:
		field_set_float(o, id, raw);
		break;
	case VT_STR: {
		/* an info series: the row's label holds the text (Prometheus drops empty labels) */
		const char *s = label(labels, d->label);

		field_set_str(o, id, s ? s : "");
		break;
	}
	case VT_PRIOSET:
		ix = index_label(labels, d->label, RW_PRIO_COUNT);
		if (ix >= 0)
			field_set_set(o, id,
				      (uint8_t)((f->state == ABS_NONE ? f->v.set : 0) |
						(v != 0 ? 1u << ix : 0)));
		break;
	case VT_PRIO_ARRAY:
		ix = index_label(labels, d->label, RW_PRIO_COUNT);
		if (ix >= 0 && raw >= 0)
			field_set_prio(o, id, ix, (uint64_t)rw_llround(raw));
		break;
	case VT_DSCP_MAP: {
		int8_t map[RW_DSCP_COUNT];

		ix = index_label(labels, d->label, RW_DSCP_COUNT);
		if (ix < 0 || v < 0 || v >= RW_PRIO_COUNT)
			break;
		if (f->state == ABS_NONE)
			memcpy(map, f->v.dscp, sizeof(map));
		else
			memset(map, -1, sizeof(map));
		map[ix] = (int8_t)v;
		field_set_dscp_map(o, id, map);
		break;
	}
	case VT_GIDS: {
		const char *gid = label(labels, "gid"), *type = label(labels, "type"),
			   *gnd = label(labels, "gid_netdev");
		struct gid_table *t = &o->gids;
		int gi = index_label(labels, "index", 1 << 16);

		if (!gid || gi < 0)
			break;
		if (f->state != ABS_NONE)
			t->n = 0;
		if (array_grow(&t->e, &t->cap, t->n, sizeof(*t->e), 8))
			break;
		t->e[t->n].index = (uint32_t)gi;
		strlcpy0(t->e[t->n].gid, gid, sizeof(t->e[t->n].gid));
		strlcpy0(t->e[t->n].type, type ? type : "", sizeof(t->e[t->n].type));
		strlcpy0(t->e[t->n].netdev, gnd ? gnd : "", sizeof(t->e[t->n].netdev));
		t->n++;
		f->state = ABS_NONE;
		f->v.gids = t;
		break;
	}
	case VT_PCI_PAIRS: {
		const char *gpu = label(labels, "gpu"), *nic = label(labels, "nic"),
			   *path = label(labels, "path");
		struct pci_pairs *t = &o->pairs;
		size_t p;

		if (!gpu || !nic || !path)
			break;
		for (p = 1; p < ARRAY_SIZE(pci_path_names) && strcmp(pci_path_names[p], path); p++)
			;
		if (p == ARRAY_SIZE(pci_path_names))
			break;
		if (f->state != ABS_NONE)
			t->n = 0;
		if (array_grow(&t->e, &t->cap, t->n, sizeof(*t->e), 8))
			break;
		strlcpy0(t->e[t->n].gpu, gpu, sizeof(t->e[t->n].gpu));
		strlcpy0(t->e[t->n].nic, nic, sizeof(t->e[t->n].nic));
		t->e[t->n].path = (enum pci_path)p;
		t->n++;
		f->state = ABS_NONE;
		f->v.pairs = t;
		break;
	}
	case VT_DSCPSET:
		break; /* not exported */
	}
}

/*
 * One number of an encoded answer into row id (see dscp_query() and
 * prioset_query()): 0, or -ERANGE when it is not what the query can give
 * (not an integer, out of range, no group): never a map guessed at.
 */
static int apply_encoded(struct object *o, int id, enum enc enc, const struct series *labels,
			 double v)
{
	struct field_val *f = &o->f[id];

	if (enc == ENC_PRIOSET) {
		if (!(v >= 0 && v < 1 << RW_PRIO_COUNT && v == floor(v)))
			return -ERANGE;
		field_set_set(o, id,
			      (uint8_t)((f->state == ABS_NONE ? f->v.set : 0) | (unsigned)v));
		return 0;
	} else {
		/* 9^16: a group's sum is below it, and at least 1 (one DSCP, priority 0) */
		const double limit = 1853020188851841.0;
		int g = index_label(labels, DSCP_GROUP_LABEL, DSCP_GROUPS);
		int8_t map[RW_DSCP_COUNT];
		uint64_t u;

		if (g < 0 || !(v >= 1 && v < limit && v == floor(v)))
			return -ERANGE;
		if (f->state == ABS_NONE)
			memcpy(map, f->v.dscp, sizeof(map));
		else
			memset(map, -1, sizeof(map));
		u = (uint64_t)v;
		for (int j = 0; j < DSCP_DIGITS; j++, u /= DSCP_BASE)
			if (u % DSCP_BASE)
				map[g * DSCP_DIGITS + j] = (int8_t)(u % DSCP_BASE - 1);
		field_set_dscp_map(o, id, map);
		return 0;
	}
}

/*
 * queries at most: one per metric and up, a DSCP map's in DSCP_GROUPS parts,
 * and each compact metric's again, encoded, for the nodes that lack it
 */
#define NQ_MAX (F__COUNT * (DSCP_GROUPS + 1) + 1)

/*
 * What the series of one answer filled, to tell a series that repeats
 * another: the same row of the same object (and the same element of it: a
 * priority, a DSCP, a GID index, a GPU-NIC pair) of one node.  Prometheus
 * gives one series per label set, so two such series differ in a label
 * rocewatch does not read: two scrape jobs of one target, or two HA
 * replicas behind one URL that nothing deduplicates.  Each is the fact as
 * one scrape saw it; where they agree it is taken once (and said, once, by
 * fleet check), where they disagree nobody can say which is the node's:
 * the node is UNKNOWN with both values (dup_check()).
 */
struct dup_ent {
	const struct object *o; /* NULL: a free slot */
	int id, elem;
	double v;	  /* the first series' value */
	uint64_t content; /* and the labels that carry one, hashed */
	uint64_t ident;	  /* every label but the replica labels, hashed in any order */
};

struct dup_set {
	struct dup_ent *e;
	size_t n, cap; /* cap: a power of two, at most half full */
};

static uint64_t mix64(uint64_t x)
{
	/* splitmix64's finaliser */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t hash_str(uint64_t h, const char *s)
{
	/* FNV-1a; a NULL label hashes apart from an empty one */
	if (!s)
		return mix64(h ^ 0x6e756c6cu);
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return mix64(h ^ 0xff);
}

/* Is k one of the labels that tell HA replicas apart (--prometheus.replica-label)? */
static bool replica_label(const struct fleet_prom_opts *po, const char *k)
{
	static const char *const dflt[] = { "replica", "prometheus_replica" };

	if (!po) {
		for (size_t i = 0; i < ARRAY_SIZE(dflt); i++)
			if (!strcmp(k, dflt[i]))
				return true;
		return false;
	}
	for (size_t i = 0; i < po->n_replica; i++)
		if (!strcmp(k, po->replica[i]))
			return true;
	return false;
}

/*
 * A series' identity without its replica labels: two series of one target
 * scraped by an HA pair differ only there.  A sum of per-label hashes, so
 * the order the engine lists labels in does not matter.
 */
static uint64_t series_ident(const struct fleet_prom_opts *po, const struct series *s)
{
	uint64_t h = 0;

	for (size_t i = 0; i < s->n; i++)
		if (!replica_label(po, s->k[i]) && strcmp(s->k[i], "__name__"))
			h += mix64(hash_str(hash_str(0, s->k[i]), s->v[i]));
	return h;
}

static size_t dup_slot(const struct dup_set *d, const struct object *o, int id, int elem)
{
	size_t i =
	    (size_t)mix64((uint64_t)(uintptr_t)o ^ (uint64_t)id << 40 ^ (uint64_t)(uint32_t)elem) &
	    (d->cap - 1);

	while (d->e[i].o && (d->e[i].o != o || d->e[i].id != id || d->e[i].elem != elem))
		i = (i + 1) & (d->cap - 1);
	return i;
}

/*
 * The entry of (o, id, elem): an earlier series' (*fresh false), or a new
 * one (*fresh true, to be filled).  NULL when out of memory.
 */
static struct dup_ent *dup_get(struct dup_set *d, const struct object *o, int id, int elem,
			       bool *fresh)
{
	size_t i;

	if (2 * (d->n + 1) > d->cap) {
		struct dup_set g = { .cap = d->cap ? 2 * d->cap : 256 };

		g.e = calloc(g.cap, sizeof(*g.e));
		if (!g.e)
			return NULL;
		for (size_t j = 0; j < d->cap; j++)
			if (d->e[j].o)
				g.e[dup_slot(&g, d->e[j].o, d->e[j].id, d->e[j].elem)] = d->e[j];
		g.n = d->n;
		free(d->e);
		*d = g;
	}
	i = dup_slot(d, o, id, elem);
	*fresh = !d->e[i].o;
	if (*fresh) {
		d->e[i].o = o;
		d->e[i].id = id;
		d->e[i].elem = elem;
		d->n++;
	}
	return &d->e[i];
}

/* Where the reading of an answer is (see advance()). */
enum qr_at {
	QR_HEAD,  /* before the result array's '[' */
	QR_FIRST, /* after it: a series or ']' */
	QR_NEXT,  /* after a series: ',' or ']' */
	QR_ELEM,  /* after a ',': a series */
	QR_TAIL,  /* after the ']' */
	QR_SKIP,  /* in a string skipped, to its closing quote (the instance list's) */
};

/* One query's answer as it arrives. */
struct qread {
	enum qr_at at;
	size_t base; /* where the bytes not read yet start in the answer */
	/*
	 * A series (or the envelope) not all there is tried again when this
	 * many of its bytes are in, twice as many as at the last try: the
	 * reading stays linear in the answer however small its pieces.
	 */
	size_t retry_at;
	struct strbuf win;  /* those bytes, when the answer comes in pieces */
	struct strbuf env;  /* the envelope kept */
	struct dup_set dup; /* what its series filled */
};

static void qread_free(struct qread *q)
{
	sb_free(&q->win);
	sb_free(&q->env);
	free(q->dup.e);
	memset(q, 0, sizeof(*q));
}

struct pstate {
	struct fleet_prom_node *nodes;
	struct strmap byname;
	double *up; /* per node: NAN none, else the up value */
	/* while the answers come in */
	const char *const *metrics;
	const char *qmetric[NQ_MAX]; /* fleet_prom_gather's metrics */
	int qpart[NQ_MAX];	     /* a DSCP map's group */
	char *posts[NQ_MAX];
	uint32_t *seen;	       /* per node: the compact rows (compact_bit()) it had a series of */
	uint32_t cbit[NQ_MAX]; /* per compact query: its row's compact_bit(), found once */
	/* per query k, the rows its metric fills: ids[first[k] .. first[k + 1]) */
	int ids[NQ_MAX];
	size_t first[NQ_MAX + 1];
	enum enc enc[NQ_MAX]; /* per query */
	size_t n_up;	      /* the index of the up query: read last */
	struct series s;      /* the series being read */
	struct qread *q;      /* per query: its answer as it arrives */
	size_t max_body;      /* for messages */
	struct client_req *reqs;
	int err;
	char *errbuf;
	size_t errlen;
	const char *base_url;
	const struct fleet_prom_opts *po;
	size_t n_nodes;
	/* --job: `group by (instance) (roce_job_info{job_id="ID"})`, what the queries join on */
	const char *join;
	/*
	 * Per query: which nodes had a series in its answer (a bit each), and
	 * whether the engine said the answer may be incomplete ("warnings",
	 * "isPartial"); the first warning's text.  A node without a series in a
	 * partial answer is UNKNOWN with it, never "no series".
	 */
	uint8_t *hit[NQ_MAX];
	bool partial[NQ_MAX];
	uint32_t reask[NQ_MAX]; /* a query asked again for the nodes without this compact row */
	char warning[256];
};

static int apply_series_of(struct pstate *ps, size_t k, const struct series *s);

/*
 * Reading an answer.  The result vector of 1000 nodes' DSCP maps is half a
 * million series: as one jansson document that is hundreds of megabytes, so
 * the envelope is scanned without building it and the series are decoded
 * one at a time (JSON_DISABLE_EOF_CHECK stops after one value), applied and
 * dropped.  A body that is not a success vector is decoded whole: it is an
 * error message, small.
 */
static size_t ws(const char *b, size_t len, size_t i)
{
	while (i < len && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r'))
		i++;
	return i;
}

/* Past the string at b[i] ('"'), or 0 when it does not end. */
static size_t skip_string(const char *b, size_t len, size_t i)
{
	size_t start = ++i;

	while (i < len) {
		const char *qp = memchr(b + i, '"', len - i);
		size_t q, k;

		if (!qp)
			return 0;
		/* escaped when an odd run of backslashes stands before it */
		q = k = (size_t)(qp - b);
		while (k > start && b[k - 1] == '\\')
			k--;
		if (!((q - k) & 1))
			return q + 1;
		i = q + 1;
	}
	return 0;
}

/* Past the value at b[i], or 0 when it is cut short (its content is checked when decoded). */
static size_t skip_value(const char *b, size_t len, size_t i)
{
	size_t depth = 0;

	i = ws(b, len, i);
	if (i >= len)
		return 0;
	if (b[i] == '"')
		return skip_string(b, len, i);
	if (b[i] != '{' && b[i] != '[') {
		while (i < len && !strchr(",}] \t\r\n", b[i]))
			i++;
		return i;
	}
	for (; i < len; i++) {
		if (b[i] == '"') {
			i = skip_string(b, len, i);
			if (!i)
				return 0;
			i--;
		} else if (b[i] == '{' || b[i] == '[') {
			depth++;
		} else if ((b[i] == '}' || b[i] == ']') && --depth == 0) {
			return i + 1;
		}
	}
	return 0;
}

/* Is the key at b[i] (a string) exactly k?  *end: past it. */
static bool key_is(const char *b, size_t len, size_t i, const char *k, size_t *end)
{
	size_t kl = strlen(k);

	*end = skip_string(b, len, i);
	return *end && *end - i == kl + 2 && !memcmp(b + i + 1, k, kl);
}

/* n bytes into s->text; false when there is no room. */
static bool put_bytes(struct series *s, const char *p, size_t n)
{
	if (s->used + n >= sizeof(s->text)) {
		s->text_full = true;
		return false;
	}
	memcpy(s->text + s->used, p, n);
	s->used += n;
	return true;
}

/* c as UTF-8 into s->text; false when there is no room. */
static bool put_utf8(struct series *s, uint32_t c)
{
	char u[4];
	size_t n;

	if (c < 0x80) {
		u[0] = (char)c;
		n = 1;
	} else if (c < 0x800) {
		u[0] = (char)(0xc0 | c >> 6);
		u[1] = (char)(0x80 | (c & 0x3f));
		n = 2;
	} else if (c < 0x10000) {
		u[0] = (char)(0xe0 | c >> 12);
		u[1] = (char)(0x80 | (c >> 6 & 0x3f));
		u[2] = (char)(0x80 | (c & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | c >> 18);
		u[1] = (char)(0x80 | (c >> 12 & 0x3f));
		u[2] = (char)(0x80 | (c >> 6 & 0x3f));
		u[3] = (char)(0x80 | (c & 0x3f));
		n = 4;
	}
	return put_bytes(s, u, n);
}

/* Four hex digits at b[i]: the value, or -1. */
static long hex4(const char *b, size_t len, size_t i)
{
	long v = 0;

	if (i + 4 > len)
		return -1;
	for (size_t j = i; j < i + 4; j++) {
		int c = b[j], d = c >= '0' && c <= '9'	 ? c - '0'
				  : c >= 'a' && c <= 'f' ? c - 'a' + 10
				  : c >= 'A' && c <= 'F' ? c - 'A' + 10
							 : -1;

		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

/*
 * The string at b[i] ('"') decoded into s->text (escapes, \uXXXX with
 * surrogate pairs); *out points at it.  Past the string, or 0: malformed,
 * a control byte or NUL in it, longer than LABEL_MAX decoded (s->too_long)
 * or no room (s->text_full).
 */
static size_t read_string(const char *b, size_t len, size_t i, struct series *s, const char **out)
{
	static const char esc_in[] = "\"\\/bfnrt", esc_out[] = "\"\\/\b\f\n\r\t";
	size_t start = s->used;

	if (i >= len || b[i] != '"')
		return 0;
	*out = s->text + s->used;
	for (i++; i < len; i++) {
		unsigned char c = (unsigned char)b[i];
		uint32_t u;
		long h, lo;
		const char *e;

		if (s->used - start > LABEL_MAX) {
			s->too_long = true;
			return 0;
		}
		if (c == '"') {
			if (s->used >= sizeof(s->text)) {
				s->text_full = true;
				return 0;
			}
			s->text[s->used++] = '\0';
			return i + 1;
		}
		if (c < 0x20)
			return 0;
		if (c != '\\') {
			size_t j = i + 1;

			/* a run of plain bytes at once; UTF-8 passes as it is */
			while (j < len && b[j] != '"' && b[j] != '\\' &&
			       (unsigned char)b[j] >= 0x20)
				j++;
			if (s->used - start + (j - i) > LABEL_MAX) {
				s->too_long = true;
				return 0;
			}
			if (!put_bytes(s, b + i, j - i))
				return 0;
			i = j - 1;
			continue;
		}
		if (++i >= len)
			return 0;
		if (b[i] != 'u') {
			e = strchr(esc_in, b[i]);
			if (!e || !*e || !put_utf8(s, (unsigned char)esc_out[e - esc_in]))
				return 0;
			continue;
		}
		h = hex4(b, len, i + 1);
		i += 4;
		if (h < 0)
			return 0;
		u = (uint32_t)h;
		if (u >= 0xd800 && u < 0xdc00) {
			if (i + 2 >= len || b[i + 1] != '\\' || b[i + 2] != 'u')
				return 0;
			lo = hex4(b, len, i + 3);
			if (lo < 0xdc00 || lo >= 0xe000)
				return 0;
			u = 0x10000 + ((u - 0xd800) << 10) + ((uint32_t)lo - 0xdc00);
			i += 6;
		} else if (u >= 0xdc00 && u < 0xe000) {
			return 0;
		}
		if (!u || !put_utf8(s, u))
			return 0;
	}
	return 0;
}

/*
 * For each member of the object at b[i]: fn(b, len, key, value, arg), key
 * and value the positions of the member's key (its '"') and value; fn
 * returns the position past the value, or 0 to stop.  Past the object, or 0
 * when it is malformed or fn stopped.
 */
typedef size_t member_fn(const char *b, size_t len, size_t key, size_t value, void *arg);

static size_t each_member(const char *b, size_t len, size_t i, member_fn *fn, void *arg)
{
	i = ws(b, len, i);
	if (i >= len || b[i] != '{')
		return 0;
	i = ws(b, len, i + 1);
	if (i < len && b[i] == '}')
		return i + 1;
	for (;;) {
		size_t key = i;

		if (i >= len || b[i] != '"' || !(i = skip_string(b, len, i)))
			return 0;
		i = ws(b, len, i);
		if (i >= len || b[i] != ':')
			return 0;
		i = fn(b, len, key, ws(b, len, i + 1), arg);
		if (!i)
			return 0;
		i = ws(b, len, i);
		if (i < len && b[i] == '}')
			return i + 1;
		if (i >= len || b[i] != ',')
			return 0;
		i = ws(b, len, i + 1);
	}
}

/*
 * For each element of the array at b[i] ('['): fn(b, len, at, arg) returns
 * the position past it, or 0 to stop.  Past the array, or 0 when it is
 * malformed or fn stopped.
 */
typedef size_t element_fn(const char *b, size_t len, size_t i, void *arg);

static size_t each_element(const char *b, size_t len, size_t i, element_fn *fn, void *arg)
{
	i = ws(b, len, i + 1);
	if (i < len && b[i] == ']')
		return i + 1;
	for (;;) {
		if (!(i = fn(b, len, i, arg)))
			return 0;
		i = ws(b, len, i);
		if (i < len && b[i] == ']')
			return i + 1;
		if (i >= len || b[i] != ',')
			return 0;
		i = ws(b, len, i + 1);
	}
}

/* A label: its name and value, strings. */
static size_t read_label(const char *b, size_t len, size_t key, size_t i, void *arg)
{
	struct series *s = arg;

	if (s->n >= SERIES_LABELS) {
		s->too_many = true;
		return 0;
	}
	if (!read_string(b, len, key, s, &s->k[s->n]))
		return 0;
	i = read_string(b, len, i, s, &s->v[s->n]);
	if (i)
		s->n++;
	else if (s->too_long)
		s->long_key = s->k[s->n];
	return i;
}

/*
 * A sample value as Prometheus writes it: 1 a finite number (*v), 0 one of
 * +Inf, -Inf and NaN (no number to use: the series is skipped, as the
 * collectors leave such a value absent), -EINVAL anything else.
 * Prometheus writes a value with Go's strconv.AppendFloat(v, 'f', -1, 64),
 * 'e' where |v| < 1e-6 or >= 1e21 (util/jsonutil/marshal.go, MarshalValue;
 * 'f' alone before 2.40), and strconv spells the special values "+Inf",
 * "-Inf" and "NaN" (strconv/ftoa.go, genericFtoa).  So: an optional '-',
 * 0 or digits without a leading 0, an optional fraction, an optional
 * exponent e+dd or e-ddd.  strtod takes much more that Prometheus never
 * sends, and reads some of it as another number: "0x10" (16), "inf",
 * "nan", "infinity", " 1", "+1", "1e5", "1.", ".5".
 */
static int prom_number(const char *t, double *v)
{
	const char *p = t;

	if (!strcmp(t, "+Inf") || !strcmp(t, "-Inf") || !strcmp(t, "NaN"))
		return 0;
	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (*p >= '1' && *p <= '9')
		p += strspn(p, "0123456789");
	else
		return -EINVAL;
	if (*p == '.') {
		size_t n = strspn(p + 1, "0123456789");

		if (!n)
			return -EINVAL;
		p += 1 + n;
	}
	if (*p == 'e') {
		size_t n;

		if (p[1] != '+' && p[1] != '-')
			return -EINVAL;
		n = strspn(p + 2, "0123456789");
		if (n < 2 || n > 3)
			return -EINVAL;
		p += 2 + n;
	}
	if (*p)
		return -EINVAL;
	*v = strtod(t, NULL);
	/* past the double range ("1e+999"): Prometheus would have written +Inf */
	return isfinite(*v) ? 1 : -EINVAL;
}

/* [time, "value"]: the value, when it is a finite number; bad_value when it is not one at all. */
static size_t read_sample(const char *b, size_t len, size_t i, struct series *s)
{
	const char *txt;
	int r;

	if (i >= len || b[i] != '[')
		return 0;
	i = skip_value(b, len, i + 1); /* the time */
	if (!i || (i = ws(b, len, i)) >= len || b[i] != ',')
		return 0;
	i = read_string(b, len, ws(b, len, i + 1), s, &txt);
	if (!i || (i = ws(b, len, i)) >= len || b[i] != ']')
		return 0;
	s->value_text = txt;
	r = prom_number(txt, &s->value);
	s->have_value = r == 1;
	if (r < 0) {
		s->bad_value = true;
		strlcpy0(s->sample, txt, sizeof(s->sample));
	}
	return i + 1;
}

static size_t series_member(const char *b, size_t len, size_t key, size_t i, void *arg)
{
	size_t end;

	if (key_is(b, len, key, "metric", &end))
		return each_member(b, len, i, read_label, arg);
	if (key_is(b, len, key, "value", &end))
		return read_sample(b, len, i, arg);
	return skip_value(b, len, i);
}

/* The series at b[i] into s: past it, or 0 when it is not one. */
static size_t read_series(const char *b, size_t len, size_t i, struct series *s)
{
	s->n = s->used = 0;
	s->have_value = s->too_long = s->too_many = s->text_full = s->bad_value = false;
	s->long_key = NULL;
	return each_member(b, len, i, series_member, s);
}

/*
 * A member of an answer's envelope that says the answer may lack series:
 * "warnings": [...] (Prometheus, Thanos and Mimir when a store or querier
 * did not answer: a partial response) and "isPartial": true
 * (VictoriaMetrics cluster, a vmstorage node down).  *partial is set and the
 * first warning kept, printable and cut, in warn (n bytes).
 */
static void envelope_warning(const char *b, size_t len, size_t key, size_t v, size_t vend,
			     bool *partial, char *warn, size_t n)
{
	size_t end, i = 0, o = 0;

	if (key_is(b, len, key, "isPartial", &end)) {
		if (vend - v == 4 && !memcmp(b + v, "true", 4)) {
			*partial = true;
			if (!warn[0])
				snprintf(warn, n,
					 "isPartial: true (a storage node did not answer)");
		}
		return;
	}
	if (!key_is(b, len, key, "warnings", &end) || b[v] != '[')
		return;
	i = ws(b, len, v + 1);
	if (i >= len || b[i] == ']')
		return; /* "warnings": [] says nothing */
	*partial = true;
	if (warn[0])
		return;
	/* the first one, its bytes as sent (escapes too), printable: it is only a reason */
	if (b[i] == '"')
		for (i++; i < vend && b[i] != '"' && o + 1 < n; i++)
			warn[o++] = b[i] >= 0x20 && b[i] < 0x7f && b[i] != '\\' ? b[i] : '?';
	if (!o)
		snprintf(warn, n, "a warning that is not a string");
	else
		warn[o] = '\0';
}

/* What the envelope says: {"status": "success", "data": {"result": [...]}}. */
struct env {
	int level; /* 0: the answer's members, 1: its data's */
	bool success, result;
	bool find;	   /* only find where the result array starts: result_at */
	size_t result_at;  /* its '[' (0: not there, or not yet) */
	struct pstate *ps; /* the result's series go into its nodes as they are read */
	size_t k;	   /* for query k */
	int err;	   /* a series refused (ps->errbuf says why) */
	bool cut;	   /* the result array ends early */
	/* the engine says the answer may be incomplete: the first warning, printable */
	bool partial;
	char warning[256];
};

static size_t read_result(const char *b, size_t len, size_t i, struct env *ev);

/*
 * The answer's members (level 0) and its data's (level 1), for struct env.
 * The data object is walked, not skipped first: each pass over an answer of
 * millions of series costs.
 */
static size_t answer_member(const char *b, size_t len, size_t key, size_t v, void *arg)
{
	struct env *ev = arg;
	size_t end, vend;

	if (ev->level == 0 && key_is(b, len, key, "data", &end) && v < len && b[v] == '{') {
		ev->level = 1;
		vend = each_member(b, len, v, answer_member, ev);
		ev->level = 0;
		return vend;
	}
	if (ev->level == 1 && key_is(b, len, key, "result", &end) && v < len && b[v] == '[') {
		if (!ev->find)
			return read_result(b, len, v, ev);
		ev->result_at = v;
		return 0;
	}
	vend = skip_value(b, len, v);
	if (vend && ev->level == 0 && key_is(b, len, key, "status", &end))
		ev->success = vend - v == 9 && !memcmp(b + v, "\"success\"", 9);
	if (vend && ev->level == 0 && !ev->find)
		envelope_warning(b, len, key, v, vend, &ev->partial, ev->warning,
				 sizeof(ev->warning));
	return vend;
}

/* The body decoded, for its error message (at most an envelope's worth: jansson builds a tree). */
static void describe_failure(const char *b, size_t len, const char *metric, char *err,
			     size_t errlen)
{
	json_error_t je;
	json_t *root = json_loadb(b, len, 0, &je), *e;

	if (!root) {
		snprintf(err, errlen, "Prometheus: query %s: invalid JSON: %s", metric, je.text);
		return;
	}
	e = json_object_get(root, "error");
	snprintf(err, errlen, "Prometheus: query %s: %s", metric,
		 json_is_string(e) ? json_string_value(e) : "not a success vector");
	json_decref(root);
}

/*
 * Why the series at byte at of query k's answer was refused (s as far as it
 * was decoded; partial: only its first SERIES_MAX bytes were there, and it
 * goes on): -EINVAL, ps->errbuf saying so.
 */
static int series_refused(struct pstate *ps, size_t k, const struct series *s, size_t at,
			  bool partial)
{
	const char *metric = ps->metrics[k], *inst = label(s, "instance");
	char who[160] = "", pk[64], pi[128], lim[32];

	if (inst)
		snprintf(who, sizeof(who), " (instance %s)", fleet_printable(inst, pi, sizeof(pi)));
	if (s->too_long && s->long_key)
		snprintf(ps->errbuf, ps->errlen,
			 "Prometheus: query %s: a series at byte %zu%s: label %s is longer than "
			 "%s (no label rocewatch reads is): refused",
			 metric, at, who, fleet_printable(s->long_key, pk, sizeof(pk)),
			 rw_size_text(LABEL_MAX, lim, sizeof(lim)));
	else if (s->too_long)
		snprintf(ps->errbuf, ps->errlen,
			 "Prometheus: query %s: a series at byte %zu%s: a label name or value is "
			 "longer than %s: refused",
			 metric, at, who, rw_size_text(LABEL_MAX, lim, sizeof(lim)));
	else if (s->too_many)
		snprintf(ps->errbuf, ps->errlen,
			 "Prometheus: query %s: a series at byte %zu%s has more than %d labels: "
			 "refused",
			 metric, at, who, SERIES_LABELS);
	else if (s->text_full)
		snprintf(ps->errbuf, ps->errlen,
			 "Prometheus: query %s: a series at byte %zu%s has more than %s of labels: "
			 "refused",
			 metric, at, who, rw_size_text(SERIES_TEXT, lim, sizeof(lim)));
	else if (partial)
		snprintf(ps->errbuf, ps->errlen,
			 "Prometheus: query %s: a series at byte %zu%s is longer than %s: refused",
			 metric, at, who, rw_size_text(SERIES_MAX, lim, sizeof(lim)));
	else
		snprintf(ps->errbuf, ps->errlen,
			 "Prometheus: query %s: invalid JSON: a series at byte %zu is not "
			 "{\"metric\": {...}, \"value\": [time, \"value\"]}",
			 metric, at);
	return -EINVAL;
}

/*
 * The series at b[i] (its bytes end at len or before; b[0] is byte base of
 * the answer) decoded and put into its node: 0 with *end past it, or
 * -EINVAL / -ERANGE with ps->errbuf naming the query and what is wrong.
 */
static int series_in(struct pstate *ps, size_t k, const char *b, size_t len, size_t i, size_t base,
		     size_t *end)
{
	struct series *s = &ps->s;

	*end = read_series(b, len, i, s);
	if (!*end)
		return series_refused(ps, k, s, base + i, false);
	return apply_series_of(ps, k, s);
}

/*
 * An answer, or what is left of it to read at the end (the envelope, its
 * result array read already): 0, or -errno with ps->errbuf saying why.
 */
static int read_whole(struct pstate *ps, size_t k, const char *b, size_t len)
{
	const char *metric = ps->metrics[k];
	struct env ev = { .ps = ps, .k = k };
	size_t i = each_member(b, len, 0, answer_member, &ev);

	if (ev.err)
		return ev.err;
	if (ev.cut) {
		snprintf(ps->errbuf, ps->errlen,
			 "Prometheus: query %s: invalid JSON: result is cut short", metric);
		return -EINVAL;
	}
	if (!i || ws(b, len, i) != len || !ev.success || !ev.result) {
		describe_failure(b, len, metric, ps->errbuf, ps->errlen);
		return -EINVAL;
	}
	if (ev.partial) {
		ps->partial[k] = true;
		if (!ps->warning[0])
			snprintf(ps->warning, sizeof(ps->warning), "%s", ev.warning);
	}
	return 0;
}

/*
 * The result array at b[i], series by series into the nodes as it is read
 * (the envelope is walked once): past it, or 0 (ev->err or ev->cut says why).
 */
static size_t result_element(const char *b, size_t len, size_t i, void *arg)
{
	struct env *ev = arg;
	size_t end;

	ev->err = series_in(ev->ps, ev->k, b, len, i, 0, &end);
	return ev->err ? 0 : end;
}

static size_t read_result(const char *b, size_t len, size_t i, struct env *ev)
{
	size_t end;

	ev->result = true;
	end = each_element(b, len, i, result_element, ev);
	/* the series were all read, but no ',' or ']' after one */
	if (!end && !ev->err)
		ev->cut = true;
	return end;
}

/*
 * An answer as it arrives (query k's struct qread): the envelope up to the
 * result array's '[' is kept, then each series is decoded, put into its
 * node and dropped as soon as its last byte is in, then what follows the
 * array is kept; at the end what was kept (the envelope, its result now
 * "[]") is read whole.  So an answer costs its longest series and its
 * envelope, whatever its size: the dozen queries in flight no longer hold a
 * dozen bodies of up to --max-body each.  Both parts of the envelope are
 * bounded (Prometheus writes about 60 bytes before the series and 3 after,
 * or a few warnings).
 */
#define ENVELOPE_MAX (64u << 10)

/*
 * What can be read of b[0..len), the bytes of query k's answer from q->base
 * on: 0 with *used the bytes done with (the rest is wanted again, with more
 * after it), or -errno with ps->errbuf saying why.
 */
static int advance(struct pstate *ps, size_t k, const char *b, size_t len, size_t *used)
{
	struct qread *q = &ps->q[k];
	const char *metric = ps->metrics[k];
	char lim[32];
	size_t i = 0, end;
	int r;

	*used = 0;
	for (;;) {
		if (q->at == QR_HEAD) {
			struct env ev = { .ps = ps, .k = k, .find = true };

			if (len < q->retry_at)
				return 0;
			each_member(b, len, 0, answer_member, &ev);
			/*
			 * More to come, or an error read whole at the end; the same
			 * bound whether the answer came whole or in pieces.
			 */
			if (!ev.result_at && len <= ENVELOPE_MAX) {
				q->retry_at = 2 * len + 64;
				return 0;
			}
			if (!ev.result_at || ev.result_at > ENVELOPE_MAX) {
				snprintf(ps->errbuf, ps->errlen,
					 "Prometheus: query %s: not a result vector: no \"result\" "
					 "array in the first %s of the answer",
					 metric, rw_size_text(ENVELOPE_MAX, lim, sizeof(lim)));
				return -EINVAL;
			}
			i = ev.result_at + 1;
			sb_add(&q->env, b, i);
			if (q->env.oom)
				goto oom;
			q->at = QR_FIRST;
		}
		if (q->at == QR_TAIL) {
			sb_add(&q->env, b + i, len - i);
			*used = len;
			if (q->env.oom)
				goto oom;
			if (q->env.len <= 2 * ENVELOPE_MAX)
				return 0;
			snprintf(ps->errbuf, ps->errlen,
				 "Prometheus: query %s: not a result vector: more than %s after "
				 "its result array",
				 metric, rw_size_text(ENVELOPE_MAX, lim, sizeof(lim)));
			return -EINVAL;
		}
		i = ws(b, len, i);
		*used = i;
		if (i == len)
			return 0;
		if (q->at != QR_ELEM && b[i] == ']') {
			sb_putc(&q->env, ']');
			if (q->env.oom)
				goto oom;
			q->at = QR_TAIL;
			i++;
			continue;
		}
		if (q->at == QR_NEXT) {
			if (b[i] != ',') {
				snprintf(
				    ps->errbuf, ps->errlen,
				    "Prometheus: query %s: invalid JSON: byte %zu of the answer "
				    "is neither ',' nor ']' after a series",
				    metric, q->base + i);
				return -EINVAL;
			}
			q->at = QR_ELEM;
			i++;
			continue;
		}
		/*
		 * A series, read as soon as its last byte is in: decoded first (one
		 * pass over the bytes of most), and only when that fails is it
		 * told whether it is all there yet.  Refused when it goes on past
		 * SERIES_MAX.
		 */
		if (len - i < q->retry_at)
			return 0;
		end = read_series(b, len, i, &ps->s);
		if (!end) {
			const struct series *s = &ps->s;

			if (b[i] != '{' || s->too_long || s->too_many || s->text_full ||
			    skip_value(b, len, i))
				return series_refused(ps, k, s, q->base + i, false);
			if (len - i > SERIES_MAX)
				return series_refused(ps, k, s, q->base + i, true);
			q->retry_at = 2 * (len - i) + 64;
			return 0;
		}
		q->retry_at = 0;
		r = apply_series_of(ps, k, &ps->s);
		if (r)
			return r;
		i = end;
		q->at = QR_NEXT;
	}
oom:
	snprintf(ps->errbuf, ps->errlen, "Prometheus: query %s: out of memory", metric);
	return -ENOMEM;
}

/* More of query k's answer, n bytes at p: 0 or -errno with ps->errbuf saying why. */
static int feed(struct pstate *ps, size_t k, const char *p, size_t n)
{
	struct qread *q = &ps->q[k];
	size_t used;
	int r;

	sb_add(&q->win, p, n);
	if (q->win.oom) {
		snprintf(ps->errbuf, ps->errlen, "Prometheus: query %s: out of memory",
			 ps->metrics[k]);
		return -ENOMEM;
	}
	r = advance(ps, k, q->win.buf, q->win.len, &used);
	if (used) {
		memmove(q->win.buf, q->win.buf + used, q->win.len - used);
		q->win.len -= used;
		q->base += used;
	}
	return r;
}

/* The answer has ended; b[0..len) what advance() left of it: 0 or -errno, ps->errbuf says why. */
static int finish(struct pstate *ps, size_t k, const char *b, size_t len)
{
	struct qread *q = &ps->q[k];
	size_t used;
	int r;

	/* what waited for more bytes: there are no more */
	q->retry_at = 0;
	b = b ? b : "";
	if (q->at != QR_TAIL && (r = advance(ps, k, b, len, &used)))
		return r;
	switch (q->at) {
	case QR_HEAD:
		return read_whole(ps, k, b, len);
	case QR_TAIL:
		return read_whole(ps, k, q->env.buf, q->env.len);
	default:
		snprintf(ps->errbuf, ps->errlen,
			 "Prometheus: query %s: invalid JSON: result is cut short", ps->metrics[k]);
		return -EINVAL;
	}
}

/* An answer kept whole (up's, read last; a test's): 0 or -errno, ps->errbuf says why. */
static int read_kept(struct pstate *ps, size_t k, const char *b, size_t len)
{
	return finish(ps, k, b, len);
}

/*
 * The compact rows by their place among the table's compact rows, for
 * pstate.seen; 0 past 32 of them (their nodes are then asked again, encoded:
 * slower, never wrong).
 */
static uint32_t compact_bit(int id)
{
	int n = 0;

	for (int i = 0; i < id; i++)
		n += fields[i].compact.metric != NULL;
	return n < 32 ? 1u << n : 0;
}

/* A compact series into row id: 0, or -ERANGE (ps->errbuf says why). */
static int apply_compact(struct pstate *ps, struct object *o, int id, const struct series *labels,
			 const char *inst)
{
	const struct compact_desc *c = &fields[id].compact;
	const char *t = label(labels, c->label), *dev = label(labels, "device");
	char shown[72], pi[128], pd[64];

	if (t && !field_compact_parse(o, id, t))
		return 0;
	fleet_printable(inst, pi, sizeof(pi));
	fleet_printable(dev, pd, sizeof(pd));
	if (!t) {
		snprintf(ps->errbuf, ps->errlen,
			 "Prometheus: query %s: %s%s%s: no %s label: not decoded", c->metric, pi,
			 dev ? " device " : "", pd, c->label);
		return -ERANGE;
	}
	fleet_printable(t, shown, sizeof(shown));
	snprintf(ps->errbuf, ps->errlen,
		 "Prometheus: query %s: %s%s%s: %s=\"%s\"%s is not %d characters %s: not decoded",
		 c->metric, pi, dev ? " device " : "", pd, c->label, shown,
		 strlen(t) >= sizeof(shown) ? "..." : "",
		 fields[id].type == VT_PRIOSET ? RW_PRIO_COUNT : RW_DSCP_COUNT,
		 fields[id].type == VT_PRIOSET ? "0 or 1" : "0-7 or -");
	return -ERANGE;
}

/*
 * A sample that is not a number as Prometheus writes one (prom_number()):
 * not an answer of Prometheus's, whoever's series it is, so the answer is
 * refused rather than the series skipped (or "0x2328" read as 9000).
 */
static int value_refused(struct pstate *ps, size_t k, const struct series *labels)
{
	const char *inst = label(labels, "instance"), *dev = label(labels, "device");
	char pi[128], pd[64], pv[sizeof(labels->sample)];

	snprintf(ps->errbuf, ps->errlen,
		 "Prometheus: query %s: %s%s%s: the value \"%s\"%s is not a number as Prometheus "
		 "writes one: refused",
		 ps->metrics[k],
		 inst ? fleet_printable(inst, pi, sizeof(pi)) : "a series without instance",
		 dev ? " device " : "", dev ? fleet_printable(dev, pd, sizeof(pd)) : "",
		 fleet_printable(labels->sample, pv, sizeof(pv)),
		 strlen(labels->sample) + 1 >= sizeof(labels->sample) ? "..." : "");
	return -EINVAL;
}

/* Where a GPU-NIC pair's series goes in o's table: its place, or the next free one. */
static int pair_index(const struct object *o, int id, const struct series *labels)
{
	const char *gpu = label(labels, "gpu"), *nic = label(labels, "nic");
	const struct pci_pairs *t = &o->pairs;

	if (!gpu || !nic)
		return -1;
	if (o->f[id].state != ABS_NONE)
		return 0;
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->e[i].gpu, gpu) && !strcmp(t->e[i].nic, nic))
			return (int)i;
	return (int)t->n;
}

/* A sample value as text for a message: the shortest "%g" that reads back as v. */
static const char *number_text(double v, char *buf, size_t n)
{
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, n, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	return buf;
}

/*
 * The value the first of two series gave row id of o (at elem), as the
 * model holds it, for the message: shown as that series' value was sent
 * (lk: the label that carries it).
 */
static void first_value(const struct object *o, int id, enum enc enc, const char *lk, int elem,
			const struct dup_ent *e, char *buf, size_t n)
{
	const struct field_desc *d = &fields[id];
	const struct field_val *f = &o->f[id];
	char t[RW_DSCP_COUNT + 1] = "", v[48], num[32];

	if (!lk) {
		fleet_printable(number_text(e->v, num, sizeof(num)), buf, n);
		return;
	}
	if (enc == ENC_COMPACT)
		field_compact_text(f, d->type, t, sizeof(t));
	else if (d->type == VT_STR)
		strlcpy0(t, f->v.s, sizeof(t));
	else if (d->type == VT_GIDS)
		for (size_t i = 0; i < o->gids.n; i++)
			if (o->gids.e[i].index == (uint32_t)elem)
				strlcpy0(t, o->gids.e[i].gid, sizeof(t));
	if (d->type == VT_PCI_PAIRS && (size_t)elem < o->pairs.n)
		strlcpy0(t, pci_path_names[o->pairs.e[elem].path], sizeof(t));
	snprintf(buf, n, "%.12s=\"%s\"", lk, fleet_printable(t, v, sizeof(v)));
}

/*
 * Has an earlier series of query k filled row id of o, at the same element
 * (struct dup_set)?  0: no, and now it has; 1: yes, and this one is not
 * applied: it holds the same value (pn->repeats counts it, pn->note names
 * the first), or another (pn->err names both: the node is UNKNOWN, its
 * facts being two scrapes' that disagree); -ENOMEM.  Nothing is written
 * unless it is a repeat: this runs for every series of every answer.
 */
static int dup_check(struct pstate *ps, size_t k, struct fleet_prom_node *pn, struct object *o,
		     int id, const struct series *labels)
{
	const struct field_desc *d = &fields[id];
	const char *ek = NULL, *lk = NULL, *inst, *dev, *port;
	char first[64], shown[64], lv[48], pi[128], pd[64], pp[16], where[320];
	struct dup_ent *e;
	uint64_t h;
	int elem = 0;
	bool fresh, replica;

	if (ps->enc[k] == ENC_COMPACT) {
		lk = d->compact.label;
	} else if (ps->enc[k] == ENC_DSCP) {
		ek = DSCP_GROUP_LABEL;
		elem = index_label(labels, ek, DSCP_GROUPS);
	} else if (ps->enc[k] == ENC_SERIES) {
		switch (d->type) {
		case VT_STR:
			lk = d->label;
			break;
		case VT_PRIOSET:
		case VT_PRIO_ARRAY:
			ek = d->label;
			elem = index_label(labels, ek, RW_PRIO_COUNT);
			break;
		case VT_DSCP_MAP:
			ek = d->label;
			elem = index_label(labels, ek, RW_DSCP_COUNT);
			break;
		case VT_GIDS:
			ek = "index";
			elem = index_label(labels, ek, 1 << 16);
			lk = "gid";
			break;
		case VT_PCI_PAIRS:
			ek = "gpu";
			elem = pair_index(o, id, labels);
			lk = "path";
			break;
		default:
			break;
		}
	}
	if (elem < 0)
		return 0; /* not applied: nothing to repeat */
	h = lk ? hash_str(0, label(labels, lk)) : 0;
	if (d->type == VT_GIDS && ps->enc[k] == ENC_SERIES)
		h = hash_str(hash_str(h, label(labels, "type")), label(labels, "gid_netdev"));
	if (d->type == VT_PCI_PAIRS && ps->enc[k] == ENC_SERIES)
		h = hash_str(h, label(labels, "nic"));
	e = dup_get(&ps->q[k].dup, o, id, elem, &fresh);
	if (!e)
		return -ENOMEM;
	if (fresh) {
		e->v = labels->value;
		e->content = h;
		e->ident = series_ident(ps->po, labels);
		return 0;
	}
	replica = e->ident == series_ident(ps->po, labels);
	if (replica && e->content == h && e->v == labels->value) {
		/* an HA pair: the one fact it is, counted once, nothing to say */
		pn->replicas++;
		return 1;
	}
	inst = label(labels, "instance");
	dev = label(labels, "device");
	port = label(labels, "port");
	snprintf(where, sizeof(where), "query %s: %s%s%s%s%s%s%s%s", ps->metrics[k],
		 fleet_printable(inst, pi, sizeof(pi)), dev ? " device " : "",
		 dev ? fleet_printable(dev, pd, sizeof(pd)) : "", port ? " port " : "",
		 port ? fleet_printable(port, pp, sizeof(pp)) : "", ek ? " " : "", ek ? ek : "",
		 ek ? " " : "");
	if (ek)
		fleet_printable(label(labels, ek), where + strlen(where),
				sizeof(where) - strlen(where));
	if (lk)
		snprintf(
		    shown, sizeof(shown), "%.12s=\"%s\"", lk,
		    fleet_printable(label(labels, lk) ? label(labels, lk) : "", lv, sizeof(lv)));
	else
		fleet_printable(labels->value_text, shown, sizeof(shown));
	if (e->content == h && e->v == labels->value) {
		if (!pn->repeats++)
			snprintf(pn->note, sizeof(pn->note), "%s: %s in two series", where, shown);
		return 1;
	}
	first_value(o, id, ps->enc[k], lk, elem, e, first, sizeof(first));
	if (!pn->err[0] && replica)
		snprintf(pn->err, sizeof(pn->err),
			 "Prometheus: %s: its HA replicas disagree, %s and %s (series that differ "
			 "only by a replica label): which is this node's cannot be told",
			 where, first, shown);
	else if (!pn->err[0])
		snprintf(pn->err, sizeof(pn->err),
			 "Prometheus: %s: two series disagree, %s and %s (two scrape jobs or "
			 "HA replicas of one target?): which is this node's cannot be told",
			 where, first, shown);
	return 1;
}

/*
 * One series of the answer to the query for metric, into its node's model:
 * 0, or -ERANGE (ps->errbuf says why) when an encoded value cannot be
 * decoded, -EINVAL when the value is not a number (value_refused()),
 * -ENOMEM.
 */
static int apply_series_of(struct pstate *ps, size_t k, const struct series *labels)
{
	const char *metric = ps->metrics[k];
	const char *inst = label(labels, "instance");
	struct fleet_prom_node *pn;
	double v = labels->value;
	ssize_t ni;
	int r;

	if (labels->bad_value)
		return value_refused(ps, k, labels);
	if (!inst || !labels->have_value || (ni = node_of(&ps->byname, inst)) < 0)
		return 0;
	if (ps->hit[k])
		ps->hit[k][ni / 8] |= (uint8_t)(1u << (ni % 8));
	pn = &ps->nodes[ni];
	if (!strcmp(metric, "up")) {
		/* another exporter on the same host is not this node's rocewatch */
		if (pn->instance[0] && strcmp(pn->instance, inst))
			return 0;
		if (isnan(ps->up[ni]) || v == 0)
			ps->up[ni] = v;
		return 0;
	}
	if (pn->instance[0] && strcmp(pn->instance, inst)) {
		/* two rocewatch targets answer to one name: which one is the node? */
		if (!pn->err[0])
			snprintf(pn->err, sizeof(pn->err),
				 "matches several Prometheus instances (%s, %s): name it "
				 "as host:port",
				 pn->instance, inst);
		return 0;
	}
	strlcpy0(pn->instance, inst, sizeof(pn->instance));
	pn->found = true;
	for (size_t j = ps->first[k]; j < ps->first[k + 1]; j++) {
		int id = ps->ids[j];
		struct object *o;

		if (!const_labels_match(labels, fields[id].labels))
			continue;
		o = object_for(pn->m, fields[id].obj, labels);
		if (!o)
			continue;
		r = dup_check(ps, k, pn, o, id, labels);
		if (r < 0) {
			snprintf(ps->errbuf, ps->errlen, "Prometheus: query %s: out of memory",
				 metric);
			return r;
		}
		if (r)
			continue;
		if (ps->enc[k] == ENC_SERIES) {
			apply_series(o, id, labels, v);
		} else if (ps->enc[k] == ENC_COMPACT) {
			if (apply_compact(ps, o, id, labels, inst))
				return -ERANGE;
			ps->seen[ni] |= ps->cbit[k];
		} else if (apply_encoded(o, id, ps->enc[k], labels, v)) {
			const char *dev = label(labels, "device"),
				   *g = label(labels, DSCP_GROUP_LABEL);
			char pi[128], pd[64], pg[16];

			inst = fleet_printable(inst, pi, sizeof(pi));
			dev = dev ? fleet_printable(dev, pd, sizeof(pd)) : NULL;
			g = g ? fleet_printable(g, pg, sizeof(pg)) : NULL;
			snprintf(ps->errbuf, ps->errlen,
				 "Prometheus: query %s (%s, encoded): %s%s%s%s%s: %.17g is not a "
				 "value the query gives (%s): not decoded",
				 metric, ps->enc[k] == ENC_DSCP ? "DSCP map" : "priority set", inst,
				 dev ? " device " : "", dev ? dev : "",
				 ps->enc[k] == ENC_DSCP ? " group " : "",
				 ps->enc[k] == ENC_DSCP ? (g ? g : "(none)") : "", v,
				 ps->enc[k] == ENC_DSCP
				     ? "an integer in [1, 9^16) with a " DSCP_GROUP_LABEL " 0..3"
				     : "an integer in [0, 255]");
			return -ERANGE;
		}
	}
	return 0;
}

/* A piece of an answer as it arrives (every query's but up's): false stops its transfer. */
static bool prom_sink(struct client_req *r, const char *p, size_t n, void *arg)
{
	struct pstate *ps = arg;

	/* another answer failed the whole gather: reading on is of no use */
	if (!ps->err)
		ps->err = feed(ps, (size_t)(r - ps->reqs), p, n);
	return !ps->err;
}

/* An answer has ended: its last bytes read, but up's, kept and read last. */
static void prom_done(struct client_req *r, void *arg)
{
	struct pstate *ps = arg;
	size_t k = (size_t)(r - ps->reqs);
	struct qread *q = &ps->q[k];
	char sz[32];

	if (ps->err)
		goto out;
	if (k == ps->n_up && ps->n_up != SIZE_MAX) {
		/* every other answer first: a node's own instance is known by then */
		return;
	}
	if (r->err == -EFBIG) {
		snprintf(ps->errbuf, ps->errlen,
			 "Prometheus %s: query %s: the answer is larger than %s (--max-body)",
			 ps->base_url, ps->metrics[k], rw_size_text(ps->max_body, sz, sizeof(sz)));
		ps->err = -EIO;
	} else if (r->err == -EPROTO && r->sink && q->at == QR_HEAD && q->win.len) {
		/* an error status with the engine's own words ("too long query", a limit hit) */
		char why[384];

		describe_failure(q->win.buf, q->win.len, ps->metrics[k], why, sizeof(why));
		snprintf(ps->errbuf, ps->errlen, "%s (HTTP %ld from %s)", why, r->http_code,
			 ps->base_url);
		ps->err = -EIO;
	} else if (r->err) {
		snprintf(ps->errbuf, ps->errlen, "Prometheus %s: query %s: %s", ps->base_url,
			 ps->metrics[k], r->errmsg);
		ps->err = -EIO;
	} else if (r->sink) {
		ps->err = finish(ps, k, q->win.buf, q->win.len);
	} else {
		ps->err = read_kept(ps, k, r->body, r->len);
	}
out:
	qread_free(q);
	client_req_free(r);
}

/* How query k asks: encoded when every row its metric fills is of one encoded kind. */
static enum enc query_enc(const struct pstate *ps, size_t k)
{
	enum enc e = ENC_SERIES;

	for (size_t j = ps->first[k]; j < ps->first[k + 1]; j++) {
		const struct field_desc *d = &fields[ps->ids[j]];
		enum enc this = d->type == VT_DSCP_MAP	? ENC_DSCP
				: d->type == VT_PRIOSET ? ENC_PRIOSET
							: ENC_SERIES;

		if (this == ENC_SERIES || !d->label ||
		    (j > ps->first[k] &&
		     (this != e || strcmp(d->label, fields[ps->ids[j - 1]].label))))
			return ENC_SERIES;
		e = this;
	}
	return e;
}

/*
 * Query k reads metric: the rows it fills from ids[j] on, found once rather
 * than for each of millions of series, and how it is asked.  The next free
 * position in ids.
 */
static size_t rows_of(struct pstate *ps, size_t k, const char *metric, size_t j)
{
	bool compact = false;

	ps->first[k] = j;
	for (int id = 0; id < F__COUNT; id++)
		if (fields[id].compact.metric && !strcmp(fields[id].compact.metric, metric)) {
			ps->ids[j++] = id;
			compact = true;
		}
	for (int id = 0; id < F__COUNT && !compact; id++)
		if (fields[id].metric && fields[id].mtype != MT_NONE &&
		    !strcmp(fields[id].metric, metric))
			ps->ids[j++] = id;
	ps->first[k + 1] = j;
	ps->enc[k] = compact ? ENC_COMPACT : query_enc(ps, k);
	/* a compact metric is one row's (fields[].compact): its bit, not looked up per series */
	ps->cbit[k] = compact ? compact_bit(ps->ids[ps->first[k]]) : 0;
	return j;
}

/* The nodes by name, and no up value yet: 0 or -ENOMEM. */
static int index_nodes(struct pstate *ps, size_t n)
{
	ps->up = malloc((n ? n : 1) * sizeof(*ps->up));
	ps->seen = calloc(n ? n : 1, sizeof(*ps->seen));
	if (!ps->up || !ps->seen)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		ps->up[i] = NAN;
		if (strmap_put(&ps->byname, ps->nodes[i].name, (int64_t)i))
			return -ENOMEM;
	}
	return 0;
}

/*
 * The queries for metric from query nq on (a DSCP map's in DSCP_GROUPS
 * parts, each filling the same rows): the next free query.
 */
static size_t plan(struct pstate *ps, size_t nq, size_t *j, const char *metric)
{
	size_t j0 = *j, n_ids, parts;

	*j = rows_of(ps, nq, metric, *j);
	n_ids = *j - j0;
	parts = ps->enc[nq] == ENC_DSCP ? DSCP_GROUPS : 1;
	for (size_t g = 0; g < parts; g++, nq++) {
		if (g) {
			ps->first[nq] = *j;
			memcpy(&ps->ids[*j], &ps->ids[j0], n_ids * sizeof(ps->ids[0]));
			*j += n_ids;
			ps->first[nq + 1] = *j;
			ps->enc[nq] = ps->enc[nq - 1];
		}
		ps->qmetric[nq] = metric;
		ps->qpart[nq] = (int)g;
	}
	return nq;
}

/*
 * Query k's PromQL into q: of the instances in match, or with match NULL of
 * the nodes of ps->join (the job's, `(...) and on (instance) JOIN`: the
 * series as they are, of the instances the join names).
 */
static void query_text(const struct pstate *ps, size_t k, const struct strbuf *match,
		       struct strbuf *q)
{
	static const struct strbuf any = { .buf = (char *)"{instance=~\".+\"}", .len = 16 };
	const char *metric = ps->metrics[k];
	const struct strbuf *m = match ? match : &any;

	if (!match)
		sb_puts(q, "(");
	if (ps->enc[k] == ENC_DSCP) {
		dscp_query(q, metric, fields[ps->ids[ps->first[k]]].label, m, ps->qpart[k]);
	} else if (ps->enc[k] == ENC_PRIOSET) {
		prioset_query(q, metric, fields[ps->ids[ps->first[k]]].label, m);
	} else {
		sb_puts(q, metric);
		if (match)
			sb_add(q, match->buf, match->len);
	}
	if (!match)
		sb_printf(q, ") and on (instance) %s", ps->join);
}

/* Query k as a form body (ps->posts[k]): 0, -ENOMEM, or -E2BIG (ps->errbuf says so). */
static int query_body(struct pstate *ps, size_t k, const struct strbuf *match)
{
	struct strbuf q = { 0 }, body = { 0 };
	const char *metric = ps->metrics[k];
	char lim[32];

	query_text(ps, k, match, &q);
	if (!q.oom && ps->po && q.len > ps->po->max_query) {
		/* never sent: an engine with a bound refuses it whole (VictoriaMetrics: 400) */
		snprintf(ps->errbuf, ps->errlen,
			 "Prometheus %s: query %s would be %zu bytes, over --prometheus.max-query "
			 "(%s)",
			 ps->base_url, metric, q.len,
			 rw_size_text(ps->po->max_query, lim, sizeof(lim)));
		sb_free(&q);
		return -E2BIG;
	}
	sb_puts(&body, "query=");
	if (q.buf)
		fleet_url_encode(&body, q.buf);
	sb_free(&q);
	if (body.oom || q.oom) {
		sb_free(&body);
		return -ENOMEM;
	}
	ps->posts[k] = body.buf;
	return 0;
}

/*
 * Queries k0 .. k1 - 1 at once, each answer read as it comes and up's last:
 * 0, or -errno with ps->errbuf saying why.
 */
static int run_batch(struct pstate *ps, size_t k0, size_t k1, const struct strbuf *match,
		     const char *url, const struct client_http_opts *o)
{
	int r = 0;

	for (size_t k = k0; k < k1 && !r; k++) {
		r = query_body(ps, k, match);
		if (!r && !(ps->hit[k] = calloc(ps->n_nodes / 8 + 1, 1)))
			r = -ENOMEM;
		ps->reqs[k].url = url;
		ps->reqs[k].post = ps->posts[k];
		/* up's answer is kept, to be read when every other one has been */
		ps->reqs[k].sink = k == ps->n_up ? NULL : prom_sink;
		ps->reqs[k].sink_arg = ps;
	}
	if (r == -E2BIG)
		return r;
	if (!r && k1 > k0)
		r = client_http_run(&ps->reqs[k0], k1 - k0, o, prom_done, ps);
	if (r) {
		snprintf(ps->errbuf, ps->errlen, "Prometheus %s: %s", ps->base_url, strerror(-r));
		return r;
	}
	if (ps->n_up >= k0 && ps->n_up < k1) {
		size_t u = ps->n_up;

		ps->n_up = SIZE_MAX;
		prom_done(&ps->reqs[u], ps);
	}
	return ps->err;
}

/* A node's name as an alternative of instance=~"...", with any port; w: those before it. */
static void name_pattern(struct strbuf *sb, const char *name, size_t w)
{
	if (w)
		sb_putc(sb, '|');
	regex_quote(sb, name);
	/* "[::1]:9479" and "gpu1:9479" carry a port; "gpu1" and "10.0.0.1" do not */
	if (!strchr(name, ':') || name[strlen(name) - 1] == ']')
		sb_puts(sb, "(:[0-9]+)?");
}

/*
 * instance=~"..." for the nodes: when the instances Prometheus knows were
 * listed, exactly those of them that belong to a node ("a:9479|b:9479", a
 * set Prometheus looks up in its index); else each node's name with an
 * optional port, a pattern it must try on every instance it has.  The
 * number of alternatives (0: no node has any series).
 */
static size_t instance_matcher(struct strbuf *sb, const struct pstate *ps, size_t n,
			       const struct fleet_prom_instances *known)
{
	size_t w = 0;

	sb_puts(sb, "{instance=~\"");
	for (size_t i = 0; known && i < known->n; i++)
		if (node_of(&ps->byname, known->v[i]) >= 0) {
			if (w++)
				sb_putc(sb, '|');
			regex_quote(sb, known->v[i]);
		}
	for (size_t i = 0; !known && i < n; i++)
		name_pattern(sb, ps->nodes[i].name, w++);
	sb_puts(sb, "\"}");
	return w;
}

/*
 * Scraped and up, but no series of any query so far: a rocewatch from before
 * the compact metrics, when the rules read only compact rows.
 */
static bool only_up(const struct pstate *ps, size_t i)
{
	return !ps->nodes[i].found && !ps->nodes[i].err[0] && ps->up[i] == 1;
}

/*
 * The nodes without a series of compact query k (a rocewatch from before
 * the compact metrics, or one whose netdevs have no such value): that row
 * asked for again the way it was before, encoded, of those nodes alone; by
 * the instance each answered as, or, for a node that answered nothing but
 * up, by its instances as the first queries named them.  Queries from *nq on.
 */
static int ask_without_compact(struct pstate *ps, size_t k, size_t n,
			       const struct fleet_prom_instances *known, size_t *nq, size_t *j,
			       const char *url, const struct client_http_opts *o)
{
	uint32_t bit = ps->cbit[k];
	struct strbuf match = { 0 };
	size_t w = 0, k0 = *nq;
	int r;

	sb_puts(&match, "{instance=~\"");
	for (size_t i = 0; i < n; i++) {
		const struct fleet_prom_node *pn = &ps->nodes[i];

		if (!pn->found || pn->err[0] || (ps->seen[i] & bit))
			continue;
		if (w++)
			sb_putc(&match, '|');
		regex_quote(&match, pn->instance);
	}
	for (size_t v = 0; known && v < known->n; v++) {
		ssize_t i = node_of(&ps->byname, known->v[v]);

		if (i < 0 || !only_up(ps, (size_t)i))
			continue;
		if (w++)
			sb_putc(&match, '|');
		regex_quote(&match, known->v[v]);
	}
	for (size_t i = 0; !known && i < n; i++)
		if (only_up(ps, i))
			name_pattern(&match, ps->nodes[i].name, w++);
	sb_puts(&match, "\"}");
	if (!w || match.oom) {
		sb_free(&match);
		return w ? -ENOMEM : 0;
	}
	*nq = plan(ps, *nq, j, fields[ps->ids[ps->first[k]]].metric);
	for (size_t q = k0; q < *nq; q++)
		ps->reask[q] = bit;
	r = run_batch(ps, k0, *nq, &match, url, o);
	sb_free(&match);
	return r;
}

/*
 * Nodes that a partial answer (query k) may have left out: those with no
 * series in it (of a query asked again for some nodes, those of them),
 * UNKNOWN with the engine's warning, never "no series".
 */
static void partial_verdicts(struct pstate *ps, size_t k, size_t n)
{
	char pw[160];

	snprintf(pw, sizeof(pw), "%.150s", ps->warning[0] ? ps->warning : "partial response");
	for (size_t i = 0; i < n; i++) {
		struct fleet_prom_node *pn = &ps->nodes[i];

		if (pn->err[0] || (ps->hit[k] && (ps->hit[k][i / 8] & (1u << (i % 8)))))
			continue;
		if (ps->reask[k] && (!pn->found || (ps->seen[i] & ps->reask[k])))
			continue; /* not one of those asked again */
		if (!pn->found)
			snprintf(
			    pn->err, sizeof(pn->err),
			    "Prometheus answered partially (%s): no series for this instance in "
			    "what it could read",
			    pw);
		else
			snprintf(pn->err, sizeof(pn->err),
				 "Prometheus answered query %s partially (%s): this node's series "
				 "of it may be missing",
				 ps->metrics[k], pw);
	}
}

void fleet_prom_opts_defaults(struct fleet_prom_opts *po)
{
	memset(po, 0, sizeof(*po));
	/* Thanos' and Prometheus Operator's HA labels (thanos query --query.replica-label) */
	po->replica[po->n_replica++] = "replica";
	po->replica[po->n_replica++] = "prometheus_replica";
	po->max_query = 16u << 10;
}

/* The selector of the job's nodes (one series per instance, whatever the replicas). */
void fleet_job_join(struct strbuf *sb, const char *job)
{
	sb_puts(sb, "group by (instance) (roce_job_info{job_id=\"");
	for (const char *p = job; *p; p++)
		fleet_promql_char(sb, (unsigned char)*p);
	sb_puts(sb, "\"})");
}

/* The metrics the fields in used[] are read from, up last: their number. */
static size_t metrics_of(const bool used[F__COUNT], const char *metrics[F__COUNT + 1])
{
	size_t nm = 0;

	for (int id = 0; id < F__COUNT; id++) {
		/* a priority set or DSCP map: its one series per object, not its 8 or 64 */
		const char *name =
		    fields[id].compact.metric ? fields[id].compact.metric : fields[id].metric;
		bool dup = false;

		if (!used[id] || !fields[id].metric || fields[id].mtype == MT_NONE)
			continue;
		for (size_t k = 0; k < nm && !dup; k++)
			dup = !strcmp(metrics[k], name);
		if (!dup)
			metrics[nm++] = name;
	}
	/* last, so a node's own instance is known when its up series is read */
	metrics[nm++] = "up";
	return nm;
}

size_t fleet_prom_overhead(const bool used[F__COUNT], const char *job)
{
	struct pstate *ps = calloc(1, sizeof(*ps));
	const char *metrics[F__COUNT + 1];
	struct strbuf empty = { 0 }, join = { 0 }, q = { 0 };
	size_t nm, nq = 0, j = 0, most = 0;

	if (!ps)
		return SIZE_MAX;
	nm = metrics_of(used, metrics);
	for (size_t u = 0; u < nm; u++)
		nq = plan(ps, nq, &j, metrics[u]);
	/* and each compact row's encoded form, asked again of the nodes without it */
	for (size_t k = 0, n1 = nq; k < n1; k++)
		if (ps->enc[k] == ENC_COMPACT)
			nq = plan(ps, nq, &j, fields[ps->ids[ps->first[k]]].metric);
	ps->metrics = ps->qmetric;
	sb_puts(&empty, "{instance=~\"\"}");
	if (job) {
		fleet_job_join(&join, job);
		ps->join = join.buf;
	}
	for (size_t k = 0; k < nq; k++) {
		sb_reset(&q);
		/* with --job the main queries join; the ones asked again name instances */
		query_text(ps, k,
			   ps->join && ps->enc[k] != ENC_DSCP && ps->enc[k] != ENC_PRIOSET ? NULL
											   : &empty,
			   &q);
		if (q.len > most)
			most = q.len;
	}
	if (empty.oom || join.oom || q.oom)
		most = SIZE_MAX;
	sb_free(&empty);
	sb_free(&join);
	sb_free(&q);
	free(ps);
	return most;
}

int fleet_prom_costs(const struct fleet_prom_instances *known, const char *const *names, size_t n,
		     size_t *cost)
{
	struct strmap byname = { 0 };
	struct strbuf sb = { 0 };
	int r = 0;

	for (size_t i = 0; i < n && !r; i++) {
		cost[i] = 0;
		r = strmap_put(&byname, names[i], (int64_t)i);
	}
	for (size_t v = 0; known && !r && v < known->n; v++) {
		ssize_t i = node_of(&byname, known->v[v]);

		if (i < 0)
			continue;
		sb_reset(&sb);
		regex_quote(&sb, known->v[v]);
		cost[i] += sb.len + 1;
	}
	for (size_t i = 0; !known && !r && i < n; i++) {
		sb_reset(&sb);
		name_pattern(&sb, names[i], 1);
		cost[i] = sb.len;
	}
	if (sb.oom)
		r = -ENOMEM;
	sb_free(&sb);
	strmap_free(&byname);
	return r;
}

int fleet_prom_gather(const char *base_url, const struct client_http_opts *o,
		      const struct fleet_prom_opts *po, const struct fleet_prom_instances *known,
		      const bool used[F__COUNT], struct fleet_prom_node *nodes, size_t n, char *err,
		      size_t errlen)
{
	struct pstate *ps = calloc(1, sizeof(*ps));
	const char *metrics[F__COUNT + 1];
	struct strbuf match = { 0 }, url = { 0 }, join = { 0 };
	size_t nm, nq = 0, nq1, j = 0, alts;
	int ret = 0;

	err[0] = '\0';
	if (!ps)
		return -ENOMEM;
	ps->nodes = nodes;
	ps->po = po;
	ps->n_nodes = n;
	nm = metrics_of(used, metrics);
	for (size_t u = 0; u < nm; u++)
		nq = plan(ps, nq, &j, metrics[u]);
	nq1 = nq;
	ps->metrics = ps->qmetric;
	ps->n_up = nq - 1;
	ps->reqs = calloc(NQ_MAX, sizeof(*ps->reqs));
	ps->q = calloc(NQ_MAX, sizeof(*ps->q));
	ps->max_body = o->max_body;
	ps->errbuf = err;
	ps->errlen = errlen;
	ps->base_url = base_url;
	if (!ps->reqs || !ps->q || index_nodes(ps, n)) {
		ret = -ENOMEM;
		goto out;
	}
	sb_puts(&url, base_url);
	while (url.len && url.buf[url.len - 1] == '/')
		url.buf[--url.len] = '\0';
	sb_puts(&url, "/api/v1/query");
	/* --job: every query joins on the job's instances; else it names them */
	if (po && po->job) {
		fleet_job_join(&join, po->job);
		ps->join = join.buf;
		alts = n;
	} else {
		alts = instance_matcher(&match, ps, n, known);
	}
	if (url.oom || match.oom || join.oom) {
		ret = -ENOMEM;
		goto out;
	}
	/* no instance Prometheus knows is one of these nodes': nothing to ask */
	if (!alts)
		goto verdicts;
	ret = run_batch(ps, 0, nq1, ps->join ? NULL : &match, url.buf, o);
	for (size_t k = 0; k < nq1 && !ret; k++)
		if (ps->enc[k] == ENC_COMPACT)
			ret = ask_without_compact(ps, k, n, known, &nq, &j, url.buf, o);
	if (ret)
		goto out;
	for (size_t k = 0; k < nq; k++)
		if (ps->partial[k])
			partial_verdicts(ps, k, n);
verdicts:
	for (size_t i = 0; i < n; i++) {
		struct fleet_prom_node *pn = &nodes[i];

		if (pn->err[0]) {
			pn->found = false;
			continue;
		}
		if (pn->found && !isnan(ps->up[i]) && ps->up[i] == 0) {
			/* the series left are the last scrape's: fail closed */
			pn->found = false;
			snprintf(pn->err, sizeof(pn->err),
				 "Prometheus: target %s is down (up == 0)", pn->instance);
		} else if (!pn->found && known && known->warning[0]) {
			/* the listing itself was partial: not having it is no verdict */
			snprintf(pn->err, sizeof(pn->err),
				 "Prometheus listed its instances partially (%.160s): this one not "
				 "among them",
				 known->warning);
		} else if (!pn->found) {
			pn->scraped = ps->up[i] == 1;
			snprintf(pn->err, sizeof(pn->err), "%s",
				 isnan(ps->up[i]) ? "Prometheus has no series for this instance "
						    "(not scraped, or gone for longer than the "
						    "lookback)"
				 : ps->up[i] == 0
				     ? "Prometheus: the target is down (up == 0)"
				     : "Prometheus scrapes it but has no rocewatch series "
				       "for it (not a rocewatch serve?)");
		} else {
			strlcpy0(pn->m->host, pn->instance, sizeof(pn->m->host));
			model_link_ports(pn->m);
		}
	}
out:
	for (size_t k = 0; ps->reqs && k < nq; k++) {
		client_req_free(&ps->reqs[k]);
		free(ps->posts[k]);
		free(ps->hit[k]);
		if (ps->q)
			qread_free(&ps->q[k]);
	}
	sb_free(&join);
	if (ret)
		for (size_t i = 0; i < n; i++)
			nodes[i].found = false;
	free(ps->reqs);
	free(ps->q);
	free(ps->up);
	free(ps->seen);
	sb_free(&match);
	sb_free(&url);
	strmap_free(&ps->byname);
	free(ps);
	return ret;
}

/*
 * /api/v1/label/instance/values: {"status": "success", "data": ["a:9479", ...]},
 * every instance Prometheus knows, read as it arrives like a query's
 * answer.  Kept are only the values that belong to one of the nodes (all
 * when no names are given), in one block of text: the list costs what the
 * check's own instances do, not what Prometheus holds.  A value longer than
 * LABEL_MAX is no node's instance (another target's, say a probed URL): it
 * is skipped as it goes by, never held.
 */
struct lv_state {
	struct qread q;	      /* where the reading is: its window and envelope */
	bool esc;	      /* in a value skipped (q.at QR_SKIP): the last byte a backslash */
	bool success, data;   /* what the envelope said */
	bool filter;	      /* keep only the values of names */
	struct strmap byname; /* the names */
	struct strbuf text;   /* the values kept, each ending in a NUL */
	size_t *off, n, cap;  /* where each starts in text */
	struct series s;      /* each value decoded in its text */
	int err;	      /* why the transfer was stopped */
	bool partial;	      /* the engine says the list may be incomplete */
	char warning[256];
};

/* In the answer's members: where its data array starts (lv_find) or what its status says. */
struct lv_env {
	struct lv_state *st;
	bool find;
	size_t data_at; /* the data array's '[' (0: not there, or not yet) */
};

static size_t lv_member(const char *b, size_t len, size_t key, size_t v, void *arg)
{
	struct lv_env *ev = arg;
	size_t end, vend;

	if (key_is(b, len, key, "data", &end) && v < len && b[v] == '[') {
		if (ev->find) {
			ev->data_at = v;
			return 0;
		}
		/* read already: what is kept of the envelope has it as [] */
		ev->st->data = true;
		return skip_value(b, len, v);
	}
	vend = skip_value(b, len, v);
	if (vend && key_is(b, len, key, "status", &end))
		ev->st->success = vend - v == 9 && !memcmp(b + v, "\"success\"", 9);
	if (vend && !ev->find)
		envelope_warning(b, len, key, v, vend, &ev->st->partial, ev->st->warning,
				 sizeof(ev->st->warning));
	return vend;
}

/* A value of the list, decoded at s: kept when it is one of the nodes' instances. */
static int lv_keep(struct lv_state *st, const char *v)
{
	if (st->filter && node_of(&st->byname, v) < 0)
		return 0;
	if (array_grow(&st->off, &st->cap, st->n, sizeof(*st->off), 256))
		return -ENOMEM;
	st->off[st->n++] = st->text.len;
	sb_add(&st->text, v, strlen(v) + 1);
	return st->text.oom ? -ENOMEM : 0;
}

/*
 * What can be read of b[0..len), the list's bytes from st->q.base on (see
 * advance()): 0 with *used the bytes done with, -EINVAL (not a list of
 * strings) or -ENOMEM.
 */
static int lv_advance(struct lv_state *st, const char *b, size_t len, size_t *used)
{
	struct qread *q = &st->q;
	size_t i = 0, end;
	const char *v;
	int r;

	*used = 0;
	for (;;) {
		if (q->at == QR_HEAD) {
			struct lv_env ev = { .st = st, .find = true };

			if (len < q->retry_at)
				return 0;
			each_member(b, len, 0, lv_member, &ev);
			if (!ev.data_at && len <= ENVELOPE_MAX) {
				q->retry_at = 2 * len + 64;
				return 0;
			}
			if (!ev.data_at || ev.data_at > ENVELOPE_MAX)
				return -EINVAL;
			i = ev.data_at + 1;
			sb_add(&q->env, b, i);
			q->at = QR_FIRST;
		}
		if (q->at == QR_SKIP) {
			for (; i < len; i++) {
				if (st->esc)
					st->esc = false;
				else if (b[i] == '\\')
					st->esc = true;
				else if (b[i] == '"')
					break;
			}
			*used = i;
			if (i == len)
				return 0;
			q->at = QR_NEXT;
			i++;
			continue;
		}
		if (q->at == QR_TAIL) {
			sb_add(&q->env, b + i, len - i);
			*used = len;
			return q->env.oom ? -ENOMEM : q->env.len <= 2 * ENVELOPE_MAX ? 0 : -EINVAL;
		}
		if (q->env.oom)
			return -ENOMEM;
		i = ws(b, len, i);
		*used = i;
		if (i == len)
			return 0;
		if (q->at != QR_ELEM && b[i] == ']') {
			sb_putc(&q->env, ']');
			q->at = QR_TAIL;
			i++;
			continue;
		}
		if (q->at == QR_NEXT) {
			if (b[i] != ',')
				return -EINVAL;
			q->at = QR_ELEM;
			i++;
			continue;
		}
		if (b[i] != '"')
			return -EINVAL;
		if (len - i < q->retry_at)
			return 0;
		st->s.used = 0;
		st->s.too_long = st->s.text_full = false;
		end = read_string(b, len, i, &st->s, &v);
		if (!end && st->s.too_long) {
			/* no node's: skipped from here to its end, wherever that is */
			q->at = QR_SKIP;
			st->esc = false;
			i++;
			continue;
		}
		if (!end) {
			if (skip_string(b, len, i))
				return -EINVAL;
			/* not all there yet: at most 6 x LABEL_MAX bytes (escapes) */
			q->retry_at = 2 * (len - i) + 64;
			return 0;
		}
		q->retry_at = 0;
		r = lv_keep(st, v);
		if (r)
			return r;
		i = end;
		q->at = QR_NEXT;
	}
}

static void lv_free(struct lv_state *st)
{
	qread_free(&st->q);
	strmap_free(&st->byname);
	sb_free(&st->text);
	free(st->off);
	free(st);
}

/* A list of the nodes' names (NULL: keep every value), in pieces as they come. */
static struct lv_state *lv_new(const char *const *names, size_t n_names)
{
	struct lv_state *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	st->filter = names != NULL;
	for (size_t i = 0; names && i < n_names; i++)
		if (strmap_put(&st->byname, names[i], (int64_t)i)) {
			lv_free(st);
			return NULL;
		}
	return st;
}

/* More of the list: 0, -EINVAL or -ENOMEM. */
static int lv_feed(struct lv_state *st, const char *p, size_t n)
{
	struct qread *q = &st->q;
	size_t used;
	int r;

	sb_add(&q->win, p, n);
	if (q->win.oom)
		return -ENOMEM;
	r = lv_advance(st, q->win.buf, q->win.len, &used);
	if (used) {
		memmove(q->win.buf, q->win.buf + used, q->win.len - used);
		q->win.len -= used;
		q->base += used;
	}
	return r;
}

/* The list has ended: 0 with *out the values kept, -EINVAL or -ENOMEM. */
static int lv_finish(struct lv_state *st, struct fleet_prom_instances **out)
{
	struct lv_env ev = { .st = st };
	struct fleet_prom_instances *in;
	size_t i;
	int r;

	/* what waited for more bytes: there are no more */
	st->q.retry_at = 0;
	if (st->q.at != QR_TAIL &&
	    (r = lv_advance(st, st->q.win.buf ? st->q.win.buf : "", st->q.win.len, &i)))
		return r;
	if (st->q.at != QR_TAIL)
		return -EINVAL; /* no data array, or one cut short */
	i = each_member(st->q.env.buf, st->q.env.len, 0, lv_member, &ev);
	if (!i || ws(st->q.env.buf, st->q.env.len, i) != st->q.env.len || !st->success || !st->data)
		return -EINVAL;
	in = calloc(1, sizeof(*in));
	if (!in || !(in->v = calloc(st->n ? st->n : 1, sizeof(*in->v)))) {
		free(in);
		return -ENOMEM;
	}
	in->n = st->n;
	if (st->partial)
		snprintf(in->warning, sizeof(in->warning), "%s",
			 st->warning[0] ? st->warning : "partial response");
	in->text = st->text.buf;
	st->text.buf = NULL;
	for (i = 0; i < st->n; i++)
		in->v[i] = in->text + st->off[i];
	*out = in;
	return 0;
}

int fleet_prom_instances_parse(const char *body, size_t len, size_t piece, const char *const *names,
			       size_t n_names, struct fleet_prom_instances **out)
{
	struct lv_state *st = lv_new(names, n_names);
	int r = 0;

	*out = NULL;
	if (!st)
		return -ENOMEM;
	if (!piece)
		piece = len ? len : 1;
	for (size_t at = 0; at < len && !r; at += piece)
		r = lv_feed(st, body + at, len - at < piece ? len - at : piece);
	if (!r)
		r = lv_finish(st, out);
	lv_free(st);
	return r;
}

/* A piece of the list as it arrives: false stops the transfer (st->err says why). */
static bool lv_sink(struct client_req *r, const char *p, size_t n, void *arg)
{
	struct lv_state *st = arg;

	(void)r;
	st->err = lv_feed(st, p, n);
	return !st->err;
}

int fleet_prom_instances_get(const char *base_url, const struct client_http_opts *o,
			     const char *const *names, size_t n_names,
			     struct fleet_prom_instances **out, char *err, size_t errlen)
{
	static const char what[] = "GET /api/v1/label/instance/values";
	struct lv_state *st = lv_new(names, n_names);
	struct client_req r = { 0 };
	struct strbuf url = { 0 };
	char sz[32];
	int ret;

	*out = NULL;
	err[0] = '\0';
	sb_puts(&url, base_url);
	while (url.len && url.buf[url.len - 1] == '/')
		url.buf[--url.len] = '\0';
	sb_puts(&url, "/api/v1/label/instance/values");
	if (url.oom || !st) {
		ret = -ENOMEM;
		goto out;
	}
	r.url = url.buf;
	r.sink = lv_sink;
	r.sink_arg = st;
	ret = client_http_run(&r, 1, o, NULL, NULL);
	if (ret) {
		snprintf(err, errlen, "Prometheus %s: %s", base_url, strerror(-ret));
		/* not Prometheus's doing: the queries are asked by pattern */
		ret = ret == -ENOMEM ? ret : -EPROTO;
	} else if (r.err == -EFBIG) {
		/*
		 * Not a list to do without: asked by pattern, Prometheus would try
		 * every one of those instances against each node's name
		 */
		snprintf(
		    err, errlen,
		    "Prometheus %s: %s: the label values answer is larger than %s (--max-body)",
		    base_url, what, rw_size_text(o->max_body, sz, sizeof(sz)));
		ret = -EIO;
	} else if (r.err == -ETIMEDOUT && r.http_code) {
		/* an answer that does not end: the queries would wait as long again */
		snprintf(err, errlen,
			 "Prometheus %s: %s: the label values answer did not end within %g s "
			 "(--timeout)",
			 base_url, what, (double)o->timeout_ms / 1000);
		ret = -EIO;
	} else if (r.err && !r.http_code) {
		/* no answer at all: the queries would wait for none as long again */
		snprintf(err, errlen, "Prometheus %s: %s: %s", base_url, what, r.errmsg);
		ret = -EIO;
	} else if (r.err && r.err != -ECANCELED) {
		/* an error status, or an answer cut short: asked by pattern instead */
		snprintf(err, errlen, "Prometheus %s: %s: %s", base_url, what, r.errmsg);
		ret = -EPROTO;
	} else {
		ret = r.err ? st->err : lv_finish(st, out);
		if (ret)
			snprintf(err, errlen, "Prometheus %s: %s: %s", base_url, what,
				 ret == -ENOMEM ? "out of memory" : "not a list of values");
	}
out:
	client_req_free(&r);
	sb_free(&url);
	if (st)
		lv_free(st);
	return ret;
}

/* A JSON string of the answer, printable and cut, for a message. */
static void json_text(const json_t *j, char *buf, size_t n)
{
	fleet_printable(json_is_string(j) ? json_string_value(j) : "", buf, n);
}

/*
 * One instant query's answer: 0 with *root (to json_decref) and *res its
 * result array; -EIO with err saying why (no answer, an error, not a success
 * vector: what names the question), -ENOMEM.
 */
static int query_result(const char *base_url, const struct client_http_opts *o, const char *query,
			const char *what, json_t **root, json_t **res, char *err, size_t errlen)
{
	struct strbuf url = { 0 }, body = { 0 };
	struct client_req r = { 0 };
	json_error_t je;
	int ret;

	*root = *res = NULL;
	sb_puts(&url, base_url);
	while (url.len && url.buf[url.len - 1] == '/')
		url.buf[--url.len] = '\0';
	sb_puts(&url, "/api/v1/query");
	sb_puts(&body, "query=");
	fleet_url_encode(&body, query);
	if (url.oom || body.oom) {
		ret = -ENOMEM;
		goto out;
	}
	r.url = url.buf;
	r.post = body.buf;
	ret = client_http_run(&r, 1, o, NULL, NULL);
	if (ret || r.err) {
		snprintf(err, errlen, "Prometheus %s: %s (%s): %s", base_url, what, query,
			 ret ? strerror(-ret) : r.errmsg);
		ret = ret == -ENOMEM ? ret : -EIO;
		goto out;
	}
	*root = json_loadb(r.body, r.len, 0, &je);
	*res = json_object_get(json_object_get(*root, "data"), "result");
	if (!*root || !json_is_array(*res) || !json_is_string(json_object_get(*root, "status")) ||
	    strcmp(json_string_value(json_object_get(*root, "status")), "success")) {
		snprintf(err, errlen, "Prometheus %s: %s: %s", base_url, what,
			 !*root ? je.text : "not a success vector");
		json_decref(*root);
		*root = *res = NULL;
		ret = -EIO;
	}
out:
	client_req_free(&r);
	sb_free(&url);
	sb_free(&body);
	return ret;
}

/* The engine's first warning, or isPartial, printable into buf ("" when whole). */
static void answer_warning(json_t *root, char *buf, size_t n)
{
	json_t *w = json_object_get(root, "warnings");

	buf[0] = '\0';
	if (json_is_array(w) && json_array_size(w))
		json_text(json_array_get(w, 0), buf, n);
	else if (json_is_true(json_object_get(root, "isPartial")))
		snprintf(buf, n, "isPartial: true (a storage node did not answer)");
	if (json_is_array(w) && json_array_size(w) && !buf[0])
		snprintf(buf, n, "a warning");
}

int fleet_prom_job_nodes(const char *base_url, const struct client_http_opts *o, const char *job,
			 bool down, struct fleet_prom_instances **out, char *err, size_t errlen)
{
	struct strbuf q = { 0 };
	const char **v = NULL;
	json_t *root = NULL, *res;
	size_t n = 0;
	char pj[80], what[128];
	int ret;

	*out = NULL;
	err[0] = '\0';
	if (down)
		sb_puts(&q, "up == 0 and on (instance) ");
	fleet_job_join(&q, job);
	if (q.oom) {
		ret = -ENOMEM;
		goto out;
	}
	fleet_printable(job, pj, sizeof(pj));
	snprintf(what, sizeof(what), "the nodes of job %s", pj);
	ret = query_result(base_url, o, q.buf, what, &root, &res, err, errlen);
	if (ret)
		goto out;
	v = calloc(json_array_size(res) ? json_array_size(res) : 1, sizeof(*v));
	if (!v) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < json_array_size(res); i++) {
		const char *inst = json_string_value(
		    json_object_get(json_object_get(json_array_get(res, i), "metric"), "instance"));

		if (inst && *inst && strlen(inst) < LABEL_MAX)
			v[n++] = inst;
	}
	ret = fleet_prom_instances_from(v, n, out);
	if (ret)
		goto out;
	/* a shard down: the job may have more nodes than the answer names */
	answer_warning(root, (*out)->warning, sizeof((*out)->warning));
	if (!n && !down)
		snprintf(err, errlen,
			 "Prometheus %s: no node runs job %s: no roce_job_info{job_id=\"%s\"} "
			 "series (its nodes' serve without --job-mapping-dir, the prolog did not "
			 "write the mapping, or not scraped yet)",
			 base_url, pj, pj);
out:
	json_decref(root);
	free(v);
	sb_free(&q);
	return ret;
}

int fleet_prom_digests(const char *base_url, const struct client_http_opts *o, const char *job,
		       struct fleet_prom_digest **out, size_t *n_out, char *err, size_t errlen)
{
	struct strbuf q = { 0 };
	json_t *root = NULL, *res;
	struct fleet_prom_digest *d = NULL;
	char warn[256];
	size_t n = 0;
	int ret;

	*out = NULL;
	*n_out = 0;
	err[0] = '\0';
	/* each node's digest once (HA replicas, two scrape jobs), of the job's nodes but the down
	 */
	sb_printf(&q, "group by (instance, digest) (%s{schema=\"%s\"} and on (instance) ",
		  FLEET_DIGEST_METRIC, fleet_digest_schema());
	fleet_job_join(&q, job);
	sb_puts(&q, " unless on (instance) (up == 0))");
	if (q.oom) {
		ret = -ENOMEM;
		goto out;
	}
	ret =
	    query_result(base_url, o, q.buf, "the nodes' fleet digests", &root, &res, err, errlen);
	if (ret)
		goto out;
	answer_warning(root, warn, sizeof(warn));
	if (warn[0]) {
		/* a node behind a shard that is down is not told from one without a digest */
		snprintf(err, errlen,
			 "Prometheus %s: the nodes' fleet digests: a partial answer (%s)", base_url,
			 warn);
		ret = -EIO;
		goto out;
	}
	d = calloc(json_array_size(res) ? json_array_size(res) : 1, sizeof(*d));
	if (!d) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < json_array_size(res); i++) {
		json_t *m = json_object_get(json_array_get(res, i), "metric");
		const char *inst = json_string_value(json_object_get(m, "instance")),
			   *dg = json_string_value(json_object_get(m, "digest"));

		if (!inst || !*inst || strlen(inst) >= sizeof(d[n].instance) || !dg ||
		    strlen(dg) != FLEET_DIGEST_HEX)
			continue; /* no node of ours: its series stay the client's to fetch */
		strlcpy0(d[n].instance, inst, sizeof(d[n].instance));
		strlcpy0(d[n].digest, dg, sizeof(d[n].digest));
		n++;
	}
	*out = d;
	*n_out = n;
	d = NULL;
out:
	free(d);
	json_decref(root);
	sb_free(&q);
	return ret;
}

int fleet_prom_instances_from(const char *const *v, size_t n, struct fleet_prom_instances **out)
{
	struct fleet_prom_instances *in = calloc(1, sizeof(*in));
	size_t len = 0, at = 0;

	*out = NULL;
	for (size_t i = 0; i < n; i++)
		len += strlen(v[i]) + 1;
	if (!in || !(in->v = calloc(n ? n : 1, sizeof(*in->v))) ||
	    !(in->text = malloc(len ? len : 1))) {
		fleet_prom_instances_free(in);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(v[i]) + 1;

		memcpy(in->text + at, v[i], l);
		in->v[i] = in->text + at;
		at += l;
	}
	in->n = n;
	*out = in;
	return 0;
}

void fleet_prom_instances_free(struct fleet_prom_instances *in)
{
	if (in) {
		free(in->text);
		free(in->v);
	}
	free(in);
}

int fleet_prom_read(const char *metric, const char *body, size_t len, size_t piece,
		    struct fleet_prom_node *nodes, size_t n, char *err, size_t errlen)
{
	const char *metrics[] = { metric, "up" };
	struct pstate *ps = calloc(1, sizeof(*ps)); /* its series buffer is 64 KiB */
	struct qread q = { 0 };
	int ret = -ENOMEM;

	err[0] = '\0';
	if (!ps)
		return -ENOMEM;
	ps->nodes = nodes;
	ps->metrics = metrics;
	ps->q = &q;
	if (index_nodes(ps, n))
		goto out;
	/* as fleet_prom_gather() asks: DSCP maps and priority sets encoded */
	ps->first[2] = rows_of(ps, 0, metric, 0);
	ps->errbuf = err;
	ps->errlen = errlen;
	if (!piece)
		piece = len ? len : 1;
	ret = 0;
	for (size_t at = 0; at < len && !ret; at += piece)
		ret = feed(ps, 0, body + at, len - at < piece ? len - at : piece);
	if (!ret)
		ret = finish(ps, 0, q.win.buf, q.win.len);
	qread_free(&q);
out:
	free(ps->up);
	free(ps->seen);
	strmap_free(&ps->byname);
	free(ps);
	return ret;
}
