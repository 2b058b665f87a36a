// SPDX-License-Identifier: MIT
/* The digest of the facts fleet rules compare (fleet_digest.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fields.h"
#include "fleet_digest.h"
#include "snapshot.h"
#include "strbuf.h"
#include "util.h"

/*
 * What rules/profiles/fleet.yaml reads, the port's netdev and link layer
 * beside them (tests/unit/test_fleet_digest.c checks the profile against
 * it).  A new fleet rule on another fact: add the fact here, or the engine
 * path leaves every node to the client (fleet check says so).
 */
static const int covered[] = {
	F_NODE_RDMA_DEVICES,
	F_NODE_COMPUTE_PORTS,
	F_NODE_RAILS_GUESSED,
	F_NETDEV_RDMA,
	F_NETDEV_MTU,
	F_NETDEV_PFC_ENABLED,
	F_NETDEV_TRUST,
	F_NETDEV_DSCP_MAP,
	F_NETDEV_CNP_PRIO,
	F_NETDEV_CNP_DSCP,
	F_PORT_NETDEV,
	F_PORT_LINK_LAYER,
	F_PORT_ACTIVE_MTU,
	F_PORT_RATE,
	F_PORT_FW,
	F_PORT_ROCEV2_IPV4_GID_INDEX,
	F_PORT_ROLE,
	F_PORT_ROLE_SOURCE,
	F_PORT_RAIL,
	F_PORT_RAIL_SOURCE,
	F_PORT_RAIL_PORTS,
	F_PORT_NEAR_GPUS,
};

bool fleet_digest_field(int id)
{
	for (size_t i = 0; i < sizeof(covered) / sizeof(covered[0]); i++)
		if (covered[i] == id)
			return true;
	return false;
}

bool fleet_digest_object(const struct object *o)
{
	if (o->kind != OBJ_NETDEV)
		return true;
	return field_present(o, F_NETDEV_RDMA) && o->f[F_NETDEV_RDMA].v.i;
}

static void hex64(uint64_t h, char out[FLEET_DIGEST_HEX + 1])
{
	snprintf(out, FLEET_DIGEST_HEX + 1, "%016llx", (unsigned long long)h);
}

const char *fleet_digest_schema(void)
{
	static char schema[FLEET_DIGEST_HEX + 1];

	if (!schema[0]) {
		uint64_t h = FNV1A_INIT;

		/* the paths and kinds, not the ids: the same list in another build is the same */
		for (size_t i = 0; i < sizeof(covered) / sizeof(covered[0]); i++) {
			const struct field_desc *d = &fields[covered[i]];

			h = fnv1a(obj_kind_name(d->obj), strlen(obj_kind_name(d->obj)), h);
			h = fnv1a(".", 1, h);
			h = fnv1a(d->path, strlen(d->path) + 1, h);
		}
		hex64(h, schema);
	}
	return schema;
}

struct keyed {
	char key[RW_NAME_MAX + 16];
	const struct object *o;
};

static int keyed_cmp(const void *a, const void *b)
{
	return strcmp(((const struct keyed *)a)->key, ((const struct keyed *)b)->key);
}

/* One object's covered facts, "kind key\npath=value\n...", or nothing when it has none. */
static void object_text(struct strbuf *sb, const struct keyed *k)
{
	size_t mark = sb->len;
	bool any = false;

	sb_printf(sb, "%s %s\n", obj_kind_name(k->o->kind), k->key);
	for (size_t i = 0; i < sizeof(covered) / sizeof(covered[0]); i++) {
		int id = covered[i];

		if (fields[id].obj != k->o->kind || !field_present(k->o, id))
			continue;
		sb_printf(sb, "%s=", fields[id].path);
		snapshot_value_text(sb, &fields[id], &k->o->f[id]);
		sb_putc(sb, '\n');
		any = true;
	}
	if (!any && !sb->oom) {
		sb->len = mark;
		sb->buf[mark] = '\0';
	}
}

int fleet_digest(const struct node_model *m, char out[FLEET_DIGEST_HEX + 1])
{
	struct node_model *mm = (struct node_model *)m;
	struct strbuf sb = { 0 };
	struct keyed *ks;
	size_t n = 1, k = 0;
	int r = 0;

	for (int kind = OBJ_NETDEV; kind <= OBJ_RDMA_PORT; kind++) {
		struct object **objs;

		n += model_objects(mm, (enum obj_kind)kind, &objs);
	}
	ks = calloc(n, sizeof(*ks));
	if (!ks)
		return -ENOMEM;
	ks[k++].o = &m->node; /* key "": its host name differs on every node */
	for (int kind = OBJ_NETDEV; kind <= OBJ_RDMA_PORT; kind++) {
		struct object **objs;
		size_t no = model_objects(mm, (enum obj_kind)kind, &objs);

		for (size_t i = 0; i < no; i++)
			if (fleet_digest_object(objs[i])) {
				ks[k].o = objs[i];
				object_unit_name(objs[i], ks[k].key, sizeof(ks[k].key));
				k++;
			}
	}
	/* kinds apart (the node first), then by name: the order a model was built in does not count
	 */
	qsort(ks + 1, k - 1, sizeof(*ks), keyed_cmp);
	for (size_t i = 0; i < k; i++)
		object_text(&sb, &ks[i]);
	if (sb.oom)
		r = -ENOMEM;
	else
		hex64(fnv1a(sb.buf ? sb.buf : "", sb.len, FNV1A_INIT), out);
	sb_free(&sb);
	free(ks);
	return r;
}
