// SPDX-License-Identifier: MIT
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "config.h"
#include "bounded.h"
#include "snapshot.h"
#include "snapshot_int.h"
#include "util.h"
#include "vendors.h"

/* The format's words, for the writer and the reader (snapshot_int.h). */
const char *const snapshot_cset_names[CSET__COUNT] = {
	[CSET_ETHTOOL] = "ethtool",
	[CSET_HW] = "hw",
	[CSET_PORT] = "port",
	[CSET_CC] = "cc",
};
const char *const snapshot_wire_class_names[WIRE__CLASSES] = { "data", "ack", "cnp" };
const char *const snapshot_pci_path_names[SNAPSHOT_PCI_PATHS] = { "", "PIX", "PXB", "PHB", "SYS" };

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

			json_array_append_new(j, json_pack("{s:s,s:s,s:s}", "gpu", p->gpu, "nic",
							   p->nic, "path",
							   snapshot_pci_path_names[p->path]));
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
		json_object_set_new(cj, snapshot_cset_names[c], s);
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
							"ecn", e, "class",
							snapshot_wire_class_names[c], "packets",
							(json_int_t)p, "bytes",
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
