/* SPDX-License-Identifier: MIT */
/*
 * The snapshot filter's contract, checked on one document (the unit test
 * on every fixture and on broken ones, the fuzz harness on anything):
 *   - it keeps the document or says it is not sure (-EAGAIN), nothing else;
 *   - jansson reads what it keeps if and only if it reads the original,
 *     and then it is the original less every object's "counters" and the
 *     fields/absent members it does not keep;
 *   - snapshot_read_last_kept() answers exactly as snapshot_read_last()
 *     (return value, message), and its model has the same kept fields;
 *   - the filtered document alone is accepted if and only if the original is;
 *   - snapshot_read_direct() reads a document only if the full reader
 *     accepts it, into the same kept fields.
 */
#ifndef ROCEWATCH_TEST_SNAPFILTER_CHECK_H
#define ROCEWATCH_TEST_SNAPFILTER_CHECK_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "snapshot.h"
#include "snapshot_filter.h"

static inline int sfc_fail(char *why, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static inline int sfc_fail(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -1;
}

/* Drop from a node, netdev or port object what the filter drops, by jansson. */
static inline void sfc_strip_object(json_t *o, enum obj_kind kind, const struct snapshot_keep *k)
{
	static const char *const parts[] = { "fields", "absent" };

	if (!json_is_object(o))
		return;
	json_object_del(o, "counters");
	for (size_t p = 0; p < 2; p++) {
		json_t *f = json_object_get(o, parts[p]), *v;
		const char *key;
		void *tmp;

		if (!json_is_object(f))
			continue;
		json_object_foreach_safe(f, tmp, key, v)
		{
			int id = field_lookup(kind, key);

			if (id >= 0 && !snapshot_keep_has(k, id))
				json_object_del(f, key);
		}
	}
}

static inline void sfc_strip_snapshot(json_t *s, const struct snapshot_keep *k)
{
	static const char *const lists[] = { "netdevs", "rdma_ports" };

	if (!json_is_object(s))
		return;
	sfc_strip_object(json_object_get(s, "node"), OBJ_NODE, k);
	for (size_t l = 0; l < 2; l++) {
		json_t *a = json_object_get(s, lists[l]), *o;
		size_t i;

		if (!json_is_array(a))
			continue;
		json_array_foreach(a, i, o) sfc_strip_object(o, l ? OBJ_RDMA_PORT : OBJ_NETDEV, k);
	}
}

/* Are a and b alike in everything the keep set keeps? */
static inline int sfc_models_equal(const struct node_model *a, const struct node_model *b,
				   const struct snapshot_keep *k, char *why, size_t len)
{
	if (strcmp(a->host, b->host) || a->time.tv_sec != b->time.tv_sec ||
	    a->time.tv_nsec != b->time.tv_nsec)
		return sfc_fail(why, len, "host or time differ");
	if (memcmp(a->coll, b->coll, sizeof(a->coll)))
		return sfc_fail(why, len, "collector outcomes differ");
	if (a->n_netdevs != b->n_netdevs || a->n_ports != b->n_ports)
		return sfc_fail(why, len, "object counts differ");
	for (size_t i = 0; i < 1 + a->n_netdevs + a->n_ports; i++) {
		const struct object *x = !i		     ? &a->node
					 : i <= a->n_netdevs ? a->netdevs[i - 1]
							     : a->ports[i - 1 - a->n_netdevs];
		const struct object *y = !i		     ? &b->node
					 : i <= b->n_netdevs ? b->netdevs[i - 1]
							     : b->ports[i - 1 - b->n_netdevs];

		if (strcmp(x->name, y->name) || x->port != y->port || x->ifindex != y->ifindex ||
		    strcmp(x->rdma_dev, y->rdma_dev) || !x->netdev != !y->netdev ||
		    (x->netdev && strcmp(x->netdev->name, y->netdev->name)))
			return sfc_fail(why, len, "object %zu (%s) differs in name or links", i,
					x->name);
		for (int c = 0; c < CSET__COUNT; c++)
			if (x->cs[c].n != y->cs[c].n)
				return sfc_fail(why, len, "%s: counter set %d differs", x->name, c);
		if (!x->wire != !y->wire || (x->wire && memcmp(x->wire, y->wire, sizeof(*x->wire))))
			return sfc_fail(why, len, "%s: wire view differs", x->name);
		for (int id = 0; id < F__COUNT; id++) {
			const struct field_val *f = &x->f[id], *g = &y->f[id];
			struct strbuf s = { 0 }, t = { 0 };
			int same;

			/* the netdev's "rdma" is derived from the ports, kept or not */
			if (fields[id].obj != x->kind ||
			    (!snapshot_keep_has(k, id) && id != F_NETDEV_RDMA))
				continue;
			if (f->state != g->state || f->err != g->err)
				return sfc_fail(why, len, "%s: %s: state %d/%d, errno %d/%d",
						x->name, fields[id].path, f->state, g->state,
						f->err, g->err);
			if (f->state != ABS_NONE)
				continue;
			snapshot_value_text(&s, &fields[id], f);
			snapshot_value_text(&t, &fields[id], g);
			same = s.len == t.len && !memcmp(s.buf, t.buf, s.len);
			if (!same)
				sfc_fail(why, len, "%s: %s: %.*s vs %.*s", x->name, fields[id].path,
					 (int)s.len, s.buf, (int)t.len, t.buf);
			sb_free(&s);
			sb_free(&t);
			if (!same)
				return -1;
		}
	}
	return 0;
}

/*
 * The contract on buf: -1 (why says what broke), else SFC_FILTERED when the
 * filter kept the document, SFC_DIRECT when the direct reader read it.
 */
#define SFC_FILTERED 1
#define SFC_DIRECT   2

static inline int sfc_check(const char *buf, size_t len, const struct snapshot_keep *k, char *why,
			    size_t whylen)
{
	struct strbuf out = { 0 };
	struct node_model full, kept, direct;
	char e1[512] = "", e2[512] = "", e3[512] = "";
	int r = snapshot_filter(k, buf, len, &out), r1, r2, r3, ret = r ? 0 : 1;

	if (r && r != -EAGAIN) {
		sb_free(&out);
		return sfc_fail(why, whylen, "filter returned %d", r);
	}
	model_init(&full);
	model_init(&kept);
	model_init(&direct);
	r1 = snapshot_read_last("doc.json", buf, len, SNAPSHOT_NO_COUNTERS, &full, e1, sizeof(e1));
	r2 = snapshot_read_last_kept("doc.json", buf, len, k, &kept, e2, sizeof(e2));
	if (r1 != r2 || strcmp(e1, e2))
		ret = sfc_fail(why, whylen, "full reader %d '%s', kept reader %d '%s'", r1, e1, r2,
			       e2);
	else if (!r1 && sfc_models_equal(&full, &kept, k, why, whylen))
		ret = -1;
	if (ret == 1) {
		json_error_t je;
		json_t *orig = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je), *filt;

		filt = json_loadb(out.buf, out.len, JSON_REJECT_DUPLICATES, &je);
		/*
		 * What it keeps it checks only for syntax: a duplicate key there is
		 * jansson's to find, in both documents alike.
		 */
		if (!orig != !filt) {
			ret = sfc_fail(why, whylen, "jansson %s the original, %s the filtered one",
				       orig ? "reads" : "refuses", filt ? "reads" : "refuses");
		} else if (orig) {
			if (json_is_array(orig)) {
				size_t i;
				json_t *s;

				json_array_foreach(orig, i, s) sfc_strip_snapshot(s, k);
			} else {
				sfc_strip_snapshot(orig, k);
			}
			if (!json_equal(orig, filt))
				ret = sfc_fail(why, whylen, "kept members differ: %.*s",
					       (int)(out.len < 300 ? out.len : 300), out.buf);
		}
		json_decref(orig);
		json_decref(filt);
	}
	if (ret == 1) {
		r3 = snapshot_read_last("doc.json", out.buf, out.len, SNAPSHOT_NO_COUNTERS, &direct,
					e3, sizeof(e3));
		if (!r3 != !r1)
			ret = sfc_fail(why, whylen, "original %s ('%s'), filtered %s ('%s')",
				       r1 ? "refused" : "accepted", e1, r3 ? "refused" : "accepted",
				       e3);
		else if (!r1 && sfc_models_equal(&full, &direct, k, why, whylen))
			ret = -1;
	}
	model_free(&direct);
	model_init(&direct);
	if (ret >= 0) {
		r3 = snapshot_read_direct(k, buf, len, &direct);
		if (r3 && r3 != -EAGAIN)
			ret = sfc_fail(why, whylen, "direct reader returned %d", r3);
		else if (!r3 && r1)
			ret = sfc_fail(why, whylen,
				       "direct reader took what the full one refuses: %s", e1);
		else if (!r3 && sfc_models_equal(&full, &direct, k, why, whylen))
			ret = -1;
		else if (!r3)
			ret |= SFC_DIRECT;
	}
	model_free(&full);
	model_free(&kept);
	model_free(&direct);
	sb_free(&out);
	return ret;
}

#endif
