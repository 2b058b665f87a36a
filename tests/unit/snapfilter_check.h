/* SPDX-License-Identifier: MIT */
/*
 * The snapshot reader's contract, checked on one document (the unit test
 * on every fixture and on broken ones, the fuzz harness on anything):
 *   - read for a keep set (snapshot_read_last_kept()) it answers exactly as
 *     read whole (snapshot_read_last(), return value and message), and
 *     opened (snapshot_open_buffer()) alike; its model has the same kept
 *     fields;
 *   - it takes exactly the JSON that jansson takes (JSON_REJECT_DUPLICATES),
 *     and where jansson refuses the JSON, the message is jansson's;
 *   - every refusal names the document.
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
 * The contract on buf: -1 (why says what broke), else SFC_READ when the
 * reader took the document, 0 when it refused it.
 */
#define SFC_READ 1

static inline int sfc_check(const char *buf, size_t len, const struct snapshot_keep *k, char *why,
			    size_t whylen)
{
	struct node_model full, kept;
	struct snapshot_file *sf = NULL;
	char e1[512] = "", e2[512] = "", e3[512] = "";
	int r1, r2, r3, ret;
	json_error_t je;
	json_t *j;

	model_init(&full);
	model_init(&kept);
	r1 = snapshot_read_last("doc.json", buf, len, SNAPSHOT_NO_COUNTERS, &full, e1, sizeof(e1));
	r2 = snapshot_read_last_kept("doc.json", buf, len, k, &kept, e2, sizeof(e2));
	r3 = snapshot_open_buffer("doc.json", buf, len, &sf, e3, sizeof(e3));
	snapshot_close(sf);
	j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
	ret = r1 ? 0 : SFC_READ;
	if (r1 != r2 || strcmp(e1, e2))
		ret = sfc_fail(why, whylen, "full reader %d '%s', kept reader %d '%s'", r1, e1, r2,
			       e2);
	else if (!r1 != !r3 || strcmp(e1, e3))
		ret = sfc_fail(why, whylen, "read %d '%s', opened %d '%s'", r1, e1, r3, e3);
	else if (r1 && strncmp(e1, "doc.json", 8))
		ret = sfc_fail(why, whylen, "a refusal that names no file: %s", e1);
	else if (!r1 && !j)
		ret = sfc_fail(why, whylen, "read what jansson refuses: %s", je.text);
	else if (j && strstr(e1, "not JSON as rocewatch reads it"))
		ret = sfc_fail(why, whylen, "refused JSON that jansson takes: %s", e1);
	else if (!j && !strstr(e1, je.text))
		ret = sfc_fail(why, whylen, "not JSON, but not jansson's words: %s (%s)", e1,
			       je.text);
	else if (!r1 && sfc_models_equal(&full, &kept, k, why, whylen))
		ret = -1;
	json_decref(j);
	model_free(&full);
	model_free(&kept);
	return ret;
}

#endif
