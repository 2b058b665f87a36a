// SPDX-License-Identifier: MIT
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "config.h"
#include "bounded.h"
#include "snapshot.h"
#include "util.h"
#include "vendors.h"

static const char *const cset_names[CSET__COUNT] = {
	[CSET_ETHTOOL] = "ethtool",
	[CSET_HW] = "hw",
	[CSET_PORT] = "port",
	[CSET_CC] = "cc",
};

static const char *const wire_class_names[WIRE__CLASSES] = { "data", "ack", "cnp" };

static const char *const pci_path_names[] = { "", "PIX", "PXB", "PHB", "SYS" };

/* ---- writing ---- */

static json_t *set_to_json(uint64_t bits, int n)
{
	json_t *a = json_array();

	for (int i = 0; i < n; i++)
		if (bits & (1ULL << i))
			json_array_append_new(a, json_integer(i));
	return a;
}

/*
 * A u64 counter as JSON.  jansson's integers are signed 64-bit: a value above
 * INT64_MAX (a driver's all-ones "not available", which `ethtool -S` and dcbnl
 * pass on as they are) came out negative, and this file's own reader refused
 * it.  Such a value is written as a real: its magnitude survives, its low bits
 * (a double has 53) do not, and all-ones comes back as all-ones.
 */
static json_t *u64_json(uint64_t v)
{
	return v <= INT64_MAX ? json_integer((json_int_t)v) : json_real((double)v);
}

/* The reverse: a non-negative integer, or a real of at least 2^63 as u64_json() writes it. */
static bool json_u64(const json_t *v, uint64_t *out)
{
	double d;

	if (json_is_integer(v)) {
		if (json_integer_value(v) < 0)
			return false;
		*out = (uint64_t)json_integer_value(v);
		return true;
	}
	if (!json_is_real(v))
		return false;
	d = json_real_value(v);
	if (!(d >= 0x1p63)) /* also refuses NaN */
		return false;
	*out = d >= 0x1p64 ? UINT64_MAX : (uint64_t)d;
	return true;
}

static json_t *value_to_json(const struct field_desc *d, const struct field_val *f)
{
	json_t *j;

	switch (d->type) {
	case VT_INT:
		return json_integer(f->v.i);
	case VT_BOOL:
		return json_boolean(f->v.i);
	case VT_FLOAT:
		return json_real(f->v.d);
	case VT_STR:
		return json_string(f->v.s);
	case VT_PRIOSET:
		return set_to_json(f->v.set, RW_PRIO_COUNT);
	case VT_DSCPSET:
		return set_to_json(f->v.dset, RW_DSCP_COUNT);
	case VT_PRIO_ARRAY:
		j = json_array();
		for (int p = 0; p < RW_PRIO_COUNT; p++)
			json_array_append_new(j, (f->mask & (1u << p)) ? u64_json(f->v.arr[p])
								       : json_null());
		return j;
	case VT_DSCP_MAP:
		j = json_object();
		for (int i = 0; i < RW_DSCP_COUNT; i++) {
			char k[4];

			if (f->v.dscp[i] < 0)
				continue;
			snprintf(k, sizeof(k), "%d", i);
			json_object_set_new(j, k, json_integer(f->v.dscp[i]));
		}
		return j;
	case VT_GIDS:
		j = json_array();
		for (size_t i = 0; f->v.gids && i < f->v.gids->n; i++) {
			const struct gid_entry *g = &f->v.gids->e[i];

			json_array_append_new(j, json_pack("{s:i,s:s,s:s,s:s}", "index",
							   (int)g->index, "gid", g->gid, "type",
							   g->type, "netdev", g->netdev));
		}
		return j;
	case VT_PCI_PAIRS:
		j = json_array();
		for (size_t i = 0; f->v.pairs && i < f->v.pairs->n; i++) {
			const struct pci_pair *p = &f->v.pairs->e[i];

			json_array_append_new(j,
					      json_pack("{s:s,s:s,s:s}", "gpu", p->gpu, "nic",
							p->nic, "path", pci_path_names[p->path]));
		}
		return j;
	}
	return json_null();
}

static json_t *object_to_json(const struct object *o)
{
	json_t *j = json_object(), *fj = json_object(), *aj = json_object(), *cj = json_object();

	if (o->kind == OBJ_NETDEV) {
		json_object_set_new(j, "name", json_string(o->name));
	} else if (o->kind == OBJ_RDMA_PORT) {
		json_object_set_new(j, "device", json_string(o->name));
		json_object_set_new(j, "port", json_integer(o->port));
		if (o->netdev)
			json_object_set_new(j, "netdev", json_string(o->netdev->name));
	}
	if (o->kind != OBJ_NODE)
		json_object_set_new(j, "ifindex", json_integer(o->ifindex));
	for (int i = 0; i < F__COUNT; i++) {
		const struct field_desc *d = &fields[i];
		const struct field_val *f = &o->f[i];

		if (d->obj != o->kind)
			continue;
		if (f->state == ABS_NONE) {
			json_object_set_new(fj, d->path, value_to_json(d, f));
		} else {
			json_t *a = json_pack("{s:s}", "reason", absent_reason_name(f->state));

			if (f->err) {
				json_object_set_new(a, "errno", json_integer(f->err));
				json_object_set_new(a, "error", json_string(rw_strerror(f->err)));
			}
			json_object_set_new(aj, d->path, a);
		}
	}
	json_object_set_new(j, "fields", fj);
	json_object_set_new(j, "absent", aj);
	for (int c = 0; c < CSET__COUNT; c++) {
		const struct counter_set *cs = &o->cs[c];
		json_t *s;

		if (!cs->n)
			continue;
		s = json_object();
		for (uint32_t i = 0; i < cs->n; i++)
			if (cs->present[i])
				json_object_set_new(s, cs->names[i], u64_json(cs->vals[i]));
		json_object_set_new(cj, cset_names[c], s);
	}
	json_object_set_new(j, "counters", cj);
	if (o->wire) {
		json_t *w = json_array();

		for (int dir = 0; dir < 2; dir++)
			for (int d = 0; d < RW_DSCP_COUNT; d++)
				for (int e = 0; e < 4; e++)
					for (int c = 0; c < WIRE__CLASSES; c++) {
						uint64_t p = o->wire->packets[dir][d][e][c];

						if (!p)
							continue;
						json_array_append_new(
						    w,
						    json_pack(
							"{s:s,s:i,s:i,s:s,s:I,s:I}", "direction",
							dir ? "egress" : "ingress", "dscp", d,
							"ecn", e, "class", wire_class_names[c],
							"packets", (json_int_t)p, "bytes",
							(json_int_t)o->wire->bytes[dir][d][e][c]));
					}
		json_object_set_new(j, "wire", w);
	}
	return j;
}

static json_t *model_to_json(const struct node_model *m)
{
	json_t *root = json_object(), *colls = json_object(), *nd = json_array(),
	       *pt = json_array();
	int64_t ns = ts_ns(&m->time);
	char ts[40];

	format_rfc3339(ns, ts, sizeof(ts));
	json_object_set_new(root, "schema", json_string(SNAPSHOT_SCHEMA));
	json_object_set_new(root, "schema_version", json_integer(SNAPSHOT_VERSION));
	json_object_set_new(root, "rocewatch_version", json_string(ROCEWATCH_VERSION));
	json_object_set_new(root, "host", json_string(m->host));
	json_object_set_new(root, "time", json_string(ts));
	json_object_set_new(root, "time_unix_ns", json_integer(ns));
	for (int i = 0; i < RW_MAX_COLLECTORS; i++) {
		const struct collector_status *cs = &m->coll[i];
		json_t *c;

		if (!cs->name[0])
			continue;
		c = json_pack("{s:b,s:b,s:f}", "enabled", cs->enabled, "success",
			      cs->enabled && cs->ran && !cs->err, "duration_seconds", cs->duration);
		if (cs->err || cs->detail[0])
			json_object_set_new(
			    c, "error",
			    json_string(cs->detail[0] ? cs->detail : rw_strerror(-cs->err)));
		json_object_set_new(colls, cs->name, c);
	}
	json_object_set_new(root, "collectors", colls);
	json_object_set_new(root, "node", object_to_json(&m->node));
	for (size_t i = 0; i < m->n_netdevs; i++)
		json_array_append_new(nd, object_to_json(m->netdevs[i]));
	for (size_t i = 0; i < m->n_ports; i++)
		json_array_append_new(pt, object_to_json(m->ports[i]));
	json_object_set_new(root, "netdevs", nd);
	json_object_set_new(root, "rdma_ports", pt);
	return root;
}

static int dump_cb(const char *buf, size_t size, void *data)
{
	struct strbuf *sb = data;

	sb_add(sb, buf, size);
	return sb->oom ? -1 : 0;
}

int json_write_sb(struct strbuf *out, struct json_t *root, bool pretty)
{
	int r = json_dump_callback(
	    root, dump_cb, out, (pretty ? JSON_INDENT(2) : JSON_COMPACT) | JSON_REAL_PRECISION(17));

	if (!r && pretty)
		sb_putc(out, '\n');
	return r || out->oom ? -ENOMEM : 0;
}

int snapshot_write(struct strbuf *out, const struct node_model *m, int pretty)
{
	return snapshot_write_with(out, m, pretty, NULL, NULL);
}

int snapshot_write_with(struct strbuf *out, const struct node_model *m, int pretty, const char *key,
			json_t *extra)
{
	json_t *root = model_to_json(m);
	int r;

	if (!root) {
		json_decref(extra);
		return -ENOMEM;
	}
	if (key && extra)
		json_object_set_new(root, key, extra);
	else
		json_decref(extra);
	r = json_write_sb(out, root, pretty);
	json_decref(root);
	return r;
}

int snapshot_write_members(struct strbuf *out, const struct node_model *m, int pretty,
			   json_t *members)
{
	json_t *root = model_to_json(m);
	int r;

	if (!root) {
		json_decref(members);
		return -ENOMEM;
	}
	if (members)
		json_object_update(root, members);
	json_decref(members);
	r = json_write_sb(out, root, pretty);
	json_decref(root);
	return r;
}

int snapshot_write_file(const char *path, const struct node_model *m)
{
	struct strbuf sb = { 0 };
	FILE *f;
	int r = snapshot_write(&sb, m, 1);

	if (r)
		goto free_sb;
	f = strcmp(path, "-") ? fopen(path, "w") : stdout;
	if (!f) {
		r = -errno;
		goto free_sb;
	}
	if (fwrite(sb.buf, 1, sb.len, f) != sb.len)
		r = -EIO;
	if (f != stdout) {
		if (fclose(f))
			r = r ? r : -errno;
	} else if (fflush(f)) {
		r = -errno;
	}
free_sb:
	sb_free(&sb);
	return r;
}

/* ---- reading ---- */

struct snapshot_file {
	char *path;
	json_t *root; /* object or array */
	size_t n;
};

struct perr {
	char *buf;
	size_t len;
	const char *file;
	bool no_counters; /* validate counter sets, do not keep them */
};

static int fail(struct perr *pe, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct perr *pe, const char *where, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(pe->buf, pe->len, "%s: %s: %s", pe->file, where, msg);
	return -EINVAL;
}

static int get_set(json_t *v, int n, uint64_t *out, struct perr *pe, const char *where)
{
	size_t i;
	json_t *e;

	if (!json_is_array(v))
		return fail(pe, where, "expected an array of integers 0..%d", n - 1);
	*out = 0;
	json_array_foreach(v, i, e)
	{
		if (!json_is_integer(e) || json_integer_value(e) < 0 || json_integer_value(e) >= n)
			return fail(pe, where, "element %zu: expected an integer 0..%d", i, n - 1);
		*out |= 1ULL << json_integer_value(e);
	}
	return 0;
}

/* 8 entries, null where the driver has none */
static int prio_array_from_json(struct object *o, int id, json_t *v, struct perr *pe,
				const char *where)
{
	uint64_t u;
	size_t i;
	json_t *e;

	if (!json_is_array(v) || json_array_size(v) != RW_PRIO_COUNT)
		return fail(pe, where, "expected an array of 8 integers or nulls");
	json_array_foreach(v, i, e)
	{
		if (json_is_null(e))
			continue;
		if (!json_u64(e, &u))
			return fail(pe, where,
				    "element %zu: expected a non-negative integer or null", i);
		field_set_prio(o, id, (int)i, u);
	}
	if (o->f[id].state != ABS_NONE) { /* all null: present but empty */
		o->f[id].state = ABS_NONE;
		o->f[id].mask = 0;
	}
	return 0;
}

static int dscp_map_from_json(struct object *o, int id, json_t *v, struct perr *pe,
			      const char *where)
{
	int8_t map[RW_DSCP_COUNT];
	const char *k;
	json_t *e;

	if (!json_is_object(v))
		return fail(pe, where, "expected an object mapping DSCP to priority");
	memset(map, -1, sizeof(map));
	json_object_foreach(v, k, e)
	{
		int64_t dscp;

		if (parse_i64(k, &dscp) || dscp < 0 || dscp >= RW_DSCP_COUNT)
			return fail(pe, where, "key '%s': expected a DSCP 0..63", k);
		if (!json_is_integer(e) || json_integer_value(e) < 0 ||
		    json_integer_value(e) >= RW_PRIO_COUNT)
			return fail(pe, where, "DSCP %s: expected a priority 0..7", k);
		map[dscp] = (int8_t)json_integer_value(e);
	}
	field_set_dscp_map(o, id, map);
	return 0;
}

static int gids_from_json(struct object *o, int id, json_t *v, struct perr *pe, const char *where)
{
	struct gid_table *t = &o->gids;
	size_t i;
	json_t *e;

	if (!json_is_array(v))
		return fail(pe, where, "expected an array of GID entries");
	t->n = 0;
	json_array_foreach(v, i, e)
	{
		json_int_t idx;
		const char *gid, *type, *nd = "";
		json_error_t je;

		if (json_unpack_ex(e, &je, JSON_STRICT, "{s:I,s:s,s:s,s?s}", "index", &idx, "gid",
				   &gid, "type", &type, "netdev", &nd))
			return fail(pe, where, "entry %zu: %s", i, je.text);
		if (array_grow(&t->e, &t->cap, t->n, sizeof(*t->e), 8))
			return -ENOMEM;
		t->e[t->n].index = (uint32_t)idx;
		strlcpy0(t->e[t->n].gid, gid, sizeof(t->e[t->n].gid));
		strlcpy0(t->e[t->n].type, type, sizeof(t->e[t->n].type));
		strlcpy0(t->e[t->n].netdev, nd, sizeof(t->e[t->n].netdev));
		t->n++;
	}
	o->f[id].state = ABS_NONE;
	o->f[id].v.gids = t;
	return 0;
}

static int pci_pairs_from_json(struct object *o, int id, json_t *v, struct perr *pe,
			       const char *where)
{
	struct pci_pairs *t = &o->pairs;
	size_t i;
	json_t *e;

	if (!json_is_array(v))
		return fail(pe, where, "expected an array of GPU/NIC paths");
	t->n = 0;
	json_array_foreach(v, i, e)
	{
		const char *gpu, *nic, *path;
		json_error_t je;
		size_t p;

		if (json_unpack_ex(e, &je, JSON_STRICT, "{s:s,s:s,s:s}", "gpu", &gpu, "nic", &nic,
				   "path", &path))
			return fail(pe, where, "entry %zu: %s", i, je.text);
		for (p = 1; p < ARRAY_SIZE(pci_path_names); p++)
			if (!strcmp(pci_path_names[p], path))
				break;
		if (p == ARRAY_SIZE(pci_path_names))
			return fail(pe, where, "entry %zu: unknown path '%s' (PIX, PXB, PHB, SYS)",
				    i, path);
		if (array_grow(&t->e, &t->cap, t->n, sizeof(*t->e), 8))
			return -ENOMEM;
		strlcpy0(t->e[t->n].gpu, gpu, sizeof(t->e[t->n].gpu));
		strlcpy0(t->e[t->n].nic, nic, sizeof(t->e[t->n].nic));
		t->e[t->n].path = (enum pci_path)p;
		t->n++;
	}
	o->f[id].state = ABS_NONE;
	o->f[id].v.pairs = t;
	return 0;
}

static int json_to_value(struct object *o, int id, json_t *v, struct perr *pe, const char *where)
{
	const struct field_desc *d = &fields[id];
	uint64_t bits;

	switch (d->type) {
	case VT_INT:
		if (!json_is_integer(v))
			return fail(pe, where, "expected an integer");
		field_set_int(o, id, json_integer_value(v));
		return 0;
	case VT_BOOL:
		if (!json_is_boolean(v))
			return fail(pe, where, "expected true or false");
		field_set_bool(o, id, json_is_true(v));
		return 0;
	case VT_FLOAT:
		if (!json_is_number(v))
			return fail(pe, where, "expected a number");
		field_set_float(o, id, json_number_value(v));
		return 0;
	case VT_STR:
		if (!json_is_string(v))
			return fail(pe, where, "expected a string");
		if (json_string_length(v) >= RW_STR_MAX)
			return fail(pe, where, "string longer than %d bytes", RW_STR_MAX - 1);
		field_set_str(o, id, json_string_value(v));
		return 0;
	case VT_PRIOSET:
		if (get_set(v, RW_PRIO_COUNT, &bits, pe, where))
			return -EINVAL;
		field_set_set(o, id, (uint8_t)bits);
		return 0;
	case VT_DSCPSET:
		if (get_set(v, RW_DSCP_COUNT, &bits, pe, where))
			return -EINVAL;
		field_set_dset(o, id, bits);
		return 0;
	case VT_PRIO_ARRAY:
		return prio_array_from_json(o, id, v, pe, where);
	case VT_DSCP_MAP:
		return dscp_map_from_json(o, id, v, pe, where);
	case VT_GIDS:
		return gids_from_json(o, id, v, pe, where);
	case VT_PCI_PAIRS:
		return pci_pairs_from_json(o, id, v, pe, where);
	}
	return fail(pe, where, "unsupported type");
}

static int object_from_json(struct object *o, json_t *j, struct perr *pe, const char *where)
{
	json_t *fj = json_object_get(j, "fields"), *aj = json_object_get(j, "absent"),
	       *cj = json_object_get(j, "counters"), *wj = json_object_get(j, "wire"), *v;
	char w[256];
	const char *k;
	uint64_t u;
	int r;

	if ((fj && !json_is_object(fj)) || (aj && !json_is_object(aj)) ||
	    (cj && !json_is_object(cj)))
		return fail(pe, where, "fields, absent and counters must be objects");
	/* A reload replaces the object's facts; nothing from the last file lingers. */
	for (int i = 0; i < F__COUNT; i++)
		if (fields[i].obj == o->kind)
			field_absent(o, i, ABS_NOT_COLLECTED, 0);
	for (int c = 0; c < CSET__COUNT; c++)
		cset_clear(&o->cs[c]);
	json_object_foreach(fj, k, v)
	{
		int id = field_lookup(o->kind, k);

		snprintf(w, sizeof(w), "%s.fields.%s", where, k);
		if (id < 0)
			return fail(pe, w, "unknown %s field", obj_kind_name(o->kind));
		r = json_to_value(o, id, v, pe, w);
		if (r)
			return r;
	}
	json_object_foreach(aj, k, v)
	{
		int id = field_lookup(o->kind, k), reason;
		json_t *rs = json_object_get(v, "reason"), *en = json_object_get(v, "errno");

		snprintf(w, sizeof(w), "%s.absent.%s", where, k);
		if (id < 0)
			return fail(pe, w, "unknown %s field", obj_kind_name(o->kind));
		if (json_object_get(fj, k))
			return fail(pe, w, "field is both present and absent");
		if (!json_is_object(v) || !json_is_string(rs) ||
		    (reason = absent_reason_parse(json_string_value(rs))) <= 0)
			return fail(pe, w,
				    "expected {\"reason\": "
				    "\"unsupported|permission|error|not_collected|no_data\"}");
		if (en && !json_is_integer(en))
			return fail(pe, w, "errno must be an integer");
		field_absent(o, id, (enum absent_reason)reason,
			     en ? (int)json_integer_value(en) : 0);
	}
	json_object_foreach(cj, k, v)
	{
		int c;
		const char *cn;
		json_t *cv;
		bool fresh;

		for (c = 0; c < CSET__COUNT; c++)
			if (!strcmp(cset_names[c], k))
				break;
		snprintf(w, sizeof(w), "%s.counters.%s", where, k);
		if (c == CSET__COUNT)
			return fail(pe, w, "unknown counter set (ethtool, hw, port, cc)");
		if (!json_is_object(v))
			return fail(pe, w, "expected an object of counters");
		/*
		 * Into a set that had no names (a fresh model), the keys of one
		 * JSON object are unique (the file is read with
		 * JSON_REJECT_DUPLICATES): append them, instead of searching
		 * hundreds of names for each (quadratic for an mlx5 netdev).
		 */
		fresh = !o->cs[c].n;
		if (pe->no_counters)
			cset_free(&o->cs[c]);
		json_object_foreach(v, cn, cv)
		{
			if (!json_u64(cv, &u))
				return fail(pe, w, "counter '%s': expected a non-negative integer",
					    cn);
			if (strlen(cn) >= RW_CNAME_MAX)
				return fail(pe, w, "counter name '%s' too long", cn);
			if (pe->no_counters)
				continue;
			if ((fresh ? cset_append(&o->cs[c], cn, u) : cset_set(&o->cs[c], cn, u)) <
			    0)
				return -ENOMEM;
		}
	}
	if (wj) {
		size_t i;

		snprintf(w, sizeof(w), "%s.wire", where);
		if (!json_is_array(wj))
			return fail(pe, w, "expected an array");
		if (!o->wire && !(o->wire = calloc(1, sizeof(*o->wire))))
			return -ENOMEM;
		memset(o->wire, 0, sizeof(*o->wire));
		json_array_foreach(wj, i, v)
		{
			const char *dir, *cls;
			int dscp, ecn, c;
			json_int_t pk, by;
			json_error_t je;

			if (json_unpack_ex(v, &je, JSON_STRICT, "{s:s,s:i,s:i,s:s,s:I,s:I}",
					   "direction", &dir, "dscp", &dscp, "ecn", &ecn, "class",
					   &cls, "packets", &pk, "bytes", &by))
				return fail(pe, w, "entry %zu: %s", i, je.text);
			for (c = 0; c < WIRE__CLASSES; c++)
				if (!strcmp(wire_class_names[c], cls))
					break;
			if (c == WIRE__CLASSES || dscp < 0 || dscp > 63 || ecn < 0 || ecn > 3 ||
			    (strcmp(dir, "ingress") && strcmp(dir, "egress")) || pk < 0 || by < 0)
				return fail(pe, w, "entry %zu: value out of range", i);
			o->wire->packets[!strcmp(dir, "egress")][dscp][ecn][c] = (uint64_t)pk;
			o->wire->bytes[!strcmp(dir, "egress")][dscp][ecn][c] = (uint64_t)by;
		}
	}
	return 0;
}

/* A netdev or port just added (NULL: no memory) filled from its JSON object v. */
static int object_in(struct object *o, json_t *v, json_t *ifindex, struct perr *pe,
		     const char *where)
{
	if (!o)
		return -ENOMEM;
	o->seen = true;
	o->ifindex = json_is_integer(ifindex) ? (int)json_integer_value(ifindex) : 0;
	return object_from_json(o, v, pe, where);
}

static int apply_one(json_t *s, struct node_model *m, struct perr *pe, const char *where)
{
	json_t *v, *node, *nds, *pts, *colls;
	char w[160];
	size_t i;
	const char *k;
	int r;

	if (!json_is_object(s))
		return fail(pe, where, "expected a snapshot object");
	v = json_object_get(s, "schema");
	if (!json_is_string(v) || strcmp(json_string_value(v), SNAPSHOT_SCHEMA))
		return fail(pe, where, "not a rocewatch snapshot (schema must be \"%s\")",
			    SNAPSHOT_SCHEMA);
	v = json_object_get(s, "schema_version");
	if (!json_is_integer(v) || json_integer_value(v) < SNAPSHOT_VERSION_MIN ||
	    json_integer_value(v) > SNAPSHOT_VERSION)
		return fail(pe, where, "unsupported schema_version (this rocewatch reads %d to %d)",
			    SNAPSHOT_VERSION_MIN, SNAPSHOT_VERSION);
	v = json_object_get(s, "host");
	if (!json_is_string(v))
		return fail(pe, where, "host: expected a string");
	strlcpy0(m->host, json_string_value(v), sizeof(m->host));
	v = json_object_get(s, "time_unix_ns");
	if (v && !json_is_integer(v))
		return fail(pe, where, "time_unix_ns: expected an integer");
	if (v) {
		int64_t ns = json_integer_value(v);

		if (ns < 0)
			return fail(pe, where, "time_unix_ns: %" PRId64 " is before 1970", ns);
		m->time = ns_ts(ns);
	} else if ((v = json_object_get(s, "time"))) {
		int64_t ns;
		int tr;

		if (!json_is_string(v))
			return fail(pe, where, "time: expected an RFC 3339 UTC time");
		tr = parse_rfc3339(json_string_value(v), &ns);
		if (tr == -ERANGE)
			return fail(pe, where,
				    "time: '%s' is outside 1970 to 2262 (nanoseconds since the "
				    "epoch in 64 bits)",
				    json_string_value(v));
		if (tr)
			return fail(pe, where, "time: '%s' is not an RFC 3339 UTC time",
				    json_string_value(v));
		m->time = ns_ts(ns);
	}

	colls = json_object_get(s, "collectors");
	if (colls && !json_is_object(colls))
		return fail(pe, where, "collectors: expected an object");
	i = 0;
	memset(m->coll, 0, sizeof(m->coll));
	json_object_foreach(colls, k, v)
	{
		struct collector_status *cs;
		json_t *e;

		if (i >= RW_MAX_COLLECTORS)
			break;
		cs = &m->coll[i++];
		strlcpy0(cs->name, k, sizeof(cs->name));
		cs->enabled = json_is_true(json_object_get(v, "enabled"));
		cs->ran = cs->enabled;
		cs->err = json_is_false(json_object_get(v, "success")) && cs->enabled ? -EIO : 0;
		e = json_object_get(v, "duration_seconds");
		cs->duration = json_is_number(e) ? json_number_value(e) : 0;
		e = json_object_get(v, "error");
		if (json_is_string(e))
			strlcpy0(cs->detail, json_string_value(e), sizeof(cs->detail));
	}

	node = json_object_get(s, "node");
	if (!json_is_object(node))
		return fail(pe, where, "node: expected an object");
	snprintf(w, sizeof(w), "%s.node", where);
	r = object_from_json(&m->node, node, pe, w);
	if (r)
		return r;

	nds = json_object_get(s, "netdevs");
	pts = json_object_get(s, "rdma_ports");
	if (!json_is_array(nds) || (pts && !json_is_array(pts)))
		return fail(pe, where, "netdevs and rdma_ports must be arrays");
	model_begin(m, OBJ_NETDEV);
	json_array_foreach(nds, i, v)
	{
		json_t *n = json_object_get(v, "name"), *ix = json_object_get(v, "ifindex");

		snprintf(w, sizeof(w), "%s.netdevs[%zu]", where, i);
		if (!json_is_string(n) || !json_string_length(n) ||
		    json_string_length(n) >= RW_NAME_MAX)
			return fail(pe, w, "name: expected a non-empty string");
		if (model_netdev(m, json_string_value(n)) &&
		    model_netdev(m, json_string_value(n))->seen)
			return fail(pe, w, "duplicate netdev '%s'", json_string_value(n));
		r = object_in(model_add_netdev(m, json_string_value(n)), v, ix, pe, w);
		if (r)
			return r;
	}
	model_sweep(m, OBJ_NETDEV);
	model_begin(m, OBJ_RDMA_PORT);
	json_array_foreach(pts, i, v)
	{
		json_t *d = json_object_get(v, "device"), *p = json_object_get(v, "port"),
		       *ix = json_object_get(v, "ifindex");
		struct object *o;

		snprintf(w, sizeof(w), "%s.rdma_ports[%zu]", where, i);
		if (!json_is_string(d) || !json_string_length(d) ||
		    json_string_length(d) >= RW_NAME_MAX || !json_is_integer(p) ||
		    json_integer_value(p) < 0)
			return fail(pe, w, "expected a device name and a port number");
		o = model_port(m, json_string_value(d), (uint32_t)json_integer_value(p));
		if (o && o->seen)
			return fail(pe, w, "duplicate port %s/%d", json_string_value(d),
				    (int)json_integer_value(p));
		r = object_in(
		    model_add_port(m, json_string_value(d), (uint32_t)json_integer_value(p)), v, ix,
		    pe, w);
		if (r)
			return r;
	}
	model_sweep(m, OBJ_RDMA_PORT);
	model_link_ports(m);
	/* a snapshot from before the driver-independent counters: derive them */
	vendor_fill_model(m, true);
	return 0;
}

static void json_err(const json_error_t *je, const char *name, char *err, size_t errlen)
{
	if (je->line < 0 || !strncmp(je->text, "unable to open", 14))
		snprintf(err, errlen, "%s: %s", name, je->text);
	else
		snprintf(err, errlen, "%s:%d:%d: %s", name, je->line, je->column, je->text);
}

/* Take root (a reference) as the file name: validate every snapshot in it. */
static int open_root(json_t *root, const char *name, struct snapshot_file **out, char *err,
		     size_t errlen)
{
	struct perr pe = { err, errlen, name };
	struct snapshot_file *sf = calloc(1, sizeof(*sf));

	if (!sf || !(sf->path = strdup(name))) {
		free(sf);
		json_decref(root);
		snprintf(err, errlen, "%s: out of memory", name);
		return -ENOMEM;
	}
	sf->root = root;
	sf->n = json_is_array(root) ? json_array_size(root) : 1;
	if (json_is_array(root) && !sf->n) {
		snapshot_close(sf);
		fail(&pe, "$", "empty snapshot sequence");
		return -EINVAL;
	}
	/* Validate everything up front: a bad sample must not surface mid-replay. */
	for (size_t i = 0; i < sf->n; i++) {
		struct node_model tmp;
		int r;

		model_init(&tmp);
		r = snapshot_apply(sf, i, &tmp, err, errlen);
		model_free(&tmp);
		if (r) {
			snapshot_close(sf);
			return r;
		}
	}
	*out = sf;
	return 0;
}

int snapshot_read_last(const char *name, const char *buf, size_t len, unsigned flags,
		       struct node_model *m, char *err, size_t errlen)
{
	struct perr pe = { err, errlen, name, flags & SNAPSHOT_NO_COUNTERS };
	json_error_t je;
	json_t *root;
	size_t n;
	int r = 0;

	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		json_err(&je, name, err, errlen);
		return -EINVAL;
	}
	n = json_is_array(root) ? json_array_size(root) : 1;
	if (!n)
		r = fail(&pe, "$", "empty snapshot sequence");
	/* the earlier samples are validated too (into a scratch model), the last one fills m */
	for (size_t i = 0; i + 1 < n && !r; i++) {
		struct node_model tmp;
		char where[32];

		snprintf(where, sizeof(where), "$[%zu]", i);
		model_init(&tmp);
		r = apply_one(json_array_get(root, i), &tmp, &pe, where);
		model_free(&tmp);
	}
	if (!r && n) {
		char where[32] = "$";

		if (json_is_array(root))
			snprintf(where, sizeof(where), "$[%zu]", n - 1);
		r = apply_one(json_is_array(root) ? json_array_get(root, n - 1) : root, m, &pe,
			      where);
	}
	json_decref(root);
	return r;
}

int snapshot_open(const char *path, struct snapshot_file **out, char *err, size_t errlen)
{
	/*
	 * Read it ourselves: jansson's own message repeats the path ("x.json:
	 * unable to open x.json: ...") and reads a directory as an empty file,
	 * and a cap read as it reads keeps /dev/zero or a 200 MB file from
	 * taking the memory of the host it checks.
	 */
	char *buf = NULL, why[160];
	size_t len = 0;
	int r = read_file_max(path, RW_MAX_SNAPSHOT_BYTES, &buf, &len);

	if (r == -EISDIR) {
		snprintf(err, errlen,
			 "%s: is a directory, not a snapshot file (rocewatch snapshot -o FILE "
			 "writes one)",
			 path);
		return r;
	}
	if (r) {
		snprintf(
		    err, errlen, "%s: %s", path,
		    read_error_text(r, RW_MAX_SNAPSHOT_BYTES, "a snapshot file", why, sizeof(why)));
		return r;
	}
	r = snapshot_open_buffer(path, buf, len, out, err, errlen);
	free(buf);
	return r;
}

int snapshot_open_buffer(const char *name, const char *buf, size_t len, struct snapshot_file **out,
			 char *err, size_t errlen)
{
	json_error_t je;
	json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);

	if (!root) {
		json_err(&je, name, err, errlen);
		return -EINVAL;
	}
	return open_root(root, name, out, err, errlen);
}

size_t snapshot_count(const struct snapshot_file *sf)
{
	return sf->n;
}

int snapshot_apply(const struct snapshot_file *sf, size_t i, struct node_model *m, char *err,
		   size_t errlen)
{
	struct perr pe = { err, errlen, sf->path };
	char where[32];

	if (json_is_array(sf->root)) {
		snprintf(where, sizeof(where), "$[%zu]", i);
		return apply_one(json_array_get(sf->root, i), m, &pe, where);
	}
	return apply_one(sf->root, m, &pe, "$");
}

void snapshot_close(struct snapshot_file *sf)
{
	if (!sf)
		return;
	json_decref(sf->root);
	free(sf->path);
	free(sf);
}

/* ---- one field at a time (the recorder's configuration history) ---- */

int snapshot_value_text(struct strbuf *out, const struct field_desc *d, const struct field_val *f)
{
	json_t *j = value_to_json(d, f);
	int r;

	if (!j)
		return -ENOMEM;
	/* JSON_ENCODE_ANY: a bare integer or string is a valid value here. */
	r = json_dump_callback(j, dump_cb, out,
			       JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
	json_decref(j);
	return r || out->oom ? -ENOMEM : 0;
}

int snapshot_value_parse(struct object *o, int id, const char *text, char *err, size_t errlen)
{
	struct perr pe = { err, errlen, "value" };
	json_error_t je;
	json_t *v = json_loads(text, JSON_DECODE_ANY, &je);
	int r;

	if (!v) {
		snprintf(err, errlen, "%s: %s", fields[id].path, je.text);
		return -EINVAL;
	}
	r = json_to_value(o, id, v, &pe, fields[id].path);
	json_decref(v);
	return r;
}
