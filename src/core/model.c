// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "util.h"

static void object_init(struct object *o, enum obj_kind kind, const char *name)
{
	memset(o, 0, sizeof(*o));
	o->kind = kind;
	strlcpy0(o->name, name, sizeof(o->name));
	o->ifindex = 0;
	for (int i = 0; i < F__COUNT; i++)
		o->f[i].state = ABS_NOT_COLLECTED;
	o->f[F_PORT_GIDS].v.gids = &o->gids;
	o->f[F_NODE_GPU_NIC_PATHS].v.pairs = &o->pairs;
}

static void object_free(struct node_model *m, struct object *o)
{
	for (int i = 0; i < RW_MAX_COLLECTORS; i++)
		if (o->cpriv[i] && m->obj_free_cb[i])
			m->obj_free_cb[i](o->cpriv[i]);
	for (int i = 0; i < CSET__COUNT; i++)
		cset_free(&o->cs[i]);
	free(o->gids.e);
	free(o->pairs.e);
	free(o->wire);
}

void model_init(struct node_model *m)
{
	memset(m, 0, sizeof(*m));
	object_init(&m->node, OBJ_NODE, "node");
}

void model_free(struct node_model *m)
{
	object_free(m, &m->node);
	for (size_t i = 0; i < m->n_netdevs; i++) {
		object_free(m, m->netdevs[i]);
		free(m->netdevs[i]);
	}
	for (size_t i = 0; i < m->n_ports; i++) {
		object_free(m, m->ports[i]);
		free(m->ports[i]);
	}
	free(m->netdevs);
	free(m->ports);
	memset(m, 0, sizeof(*m));
}

struct object *model_netdev(struct node_model *m, const char *name)
{
	for (size_t i = 0; i < m->n_netdevs; i++)
		if (!strcmp(m->netdevs[i]->name, name))
			return m->netdevs[i];
	return NULL;
}

struct object *model_netdev_by_ifindex(struct node_model *m, int ifindex)
{
	for (size_t i = 0; i < m->n_netdevs; i++)
		if (m->netdevs[i]->ifindex == ifindex)
			return m->netdevs[i];
	return NULL;
}

struct object *model_port(struct node_model *m, const char *dev, uint32_t port)
{
	for (size_t i = 0; i < m->n_ports; i++)
		if (m->ports[i]->port == port && !strcmp(m->ports[i]->name, dev))
			return m->ports[i];
	return NULL;
}

static int obj_cmp(const struct object *a, const struct object *b)
{
	int r = strcmp(a->name, b->name);

	if (r)
		return r;
	return a->port < b->port ? -1 : a->port > b->port;
}

/* Insert keeping the array sorted, so every output has a stable order. */
static struct object *insert_sorted(struct object ***arr, size_t *n, size_t *cap, struct object *o)
{
	size_t pos;

	if (array_grow(arr, cap, *n, sizeof(**arr), 8)) {
		free(o);
		return NULL;
	}
	for (pos = 0; pos < *n && obj_cmp((*arr)[pos], o) < 0; pos++)
		;
	memmove(&(*arr)[pos + 1], &(*arr)[pos], (*n - pos) * sizeof(**arr));
	(*arr)[pos] = o;
	(*n)++;
	return o;
}

struct object *model_add_netdev(struct node_model *m, const char *name)
{
	struct object *o = model_netdev(m, name);

	if (o)
		return o;
	o = malloc(sizeof(*o));
	if (!o)
		return NULL;
	object_init(o, OBJ_NETDEV, name);
	return insert_sorted(&m->netdevs, &m->n_netdevs, &m->cap_netdevs, o);
}

struct object *model_add_port(struct node_model *m, const char *dev, uint32_t port)
{
	struct object *o = model_port(m, dev, port);

	if (o)
		return o;
	o = malloc(sizeof(*o));
	if (!o)
		return NULL;
	object_init(o, OBJ_RDMA_PORT, dev);
	o->port = port;
	return insert_sorted(&m->ports, &m->n_ports, &m->cap_ports, o);
}

size_t model_objects(struct node_model *m, enum obj_kind kind, struct object ***out)
{
	switch (kind) {
	case OBJ_NETDEV:
		*out = m->netdevs;
		return m->n_netdevs;
	case OBJ_RDMA_PORT:
		*out = m->ports;
		return m->n_ports;
	default:
		break;
	}
	*out = NULL;
	return 0;
}

void model_begin(struct node_model *m, enum obj_kind kind)
{
	struct object **objs;
	size_t n = model_objects(m, kind, &objs);

	for (size_t i = 0; i < n; i++)
		objs[i]->seen = false;
}

void model_sweep(struct node_model *m, enum obj_kind kind)
{
	struct object **objs;
	size_t n = model_objects(m, kind, &objs), keep = 0;

	for (size_t i = 0; i < n; i++) {
		if (objs[i]->seen) {
			objs[keep++] = objs[i];
			continue;
		}
		object_free(m, objs[i]);
		free(objs[i]);
	}
	if (kind == OBJ_NETDEV)
		m->n_netdevs = keep;
	else if (kind == OBJ_RDMA_PORT)
		m->n_ports = keep;
	if (kind == OBJ_NETDEV || kind == OBJ_RDMA_PORT)
		model_link_ports(m); /* netdev pointers, or a netdev's RDMA device, may have gone */
}

void model_link_ports(struct node_model *m)
{
	for (size_t i = 0; i < m->n_netdevs; i++) {
		field_set_bool(m->netdevs[i], F_NETDEV_RDMA, false);
		m->netdevs[i]->rdma_dev[0] = '\0';
	}
	for (size_t i = 0; i < m->n_ports; i++) {
		struct object *p = m->ports[i], *nd = NULL;

		if (p->ifindex > 0)
			nd = model_netdev_by_ifindex(m, p->ifindex);
		if (!nd && field_present(p, F_PORT_NETDEV))
			nd = model_netdev(m, p->f[F_PORT_NETDEV].v.s);
		p->netdev = nd;
		if (nd)
			field_set_bool(nd, F_NETDEV_RDMA, true);
		/* ports are sorted: the first bound device names the netdev's, every poll alike */
		if (nd && !nd->rdma_dev[0])
			snprintf(nd->rdma_dev, sizeof(nd->rdma_dev), "%s", p->name);
	}
}

static struct field_val *fv(struct object *o, enum field_id id)
{
	struct field_val *f = &o->f[id];

	f->state = ABS_NONE;
	f->err = 0;
	return f;
}

void field_set_int(struct object *o, enum field_id id, int64_t v)
{
	fv(o, id)->v.i = v;
}

void field_set_bool(struct object *o, enum field_id id, bool v)
{
	fv(o, id)->v.i = v;
}

void field_set_float(struct object *o, enum field_id id, double v)
{
	fv(o, id)->v.d = v;
}

void field_set_str(struct object *o, enum field_id id, const char *s)
{
	strlcpy0(fv(o, id)->v.s, s, RW_STR_MAX);
}

void field_set_set(struct object *o, enum field_id id, uint8_t set)
{
	fv(o, id)->v.set = set;
}

void field_set_dset(struct object *o, enum field_id id, uint64_t set)
{
	fv(o, id)->v.dset = set;
}

void field_set_prio(struct object *o, enum field_id id, int prio, uint64_t v)
{
	struct field_val *f = &o->f[id];

	if (prio < 0 || prio >= RW_PRIO_COUNT)
		return;
	if (f->state != ABS_NONE) {
		memset(&f->v, 0, sizeof(f->v));
		f->mask = 0;
	}
	f->state = ABS_NONE;
	f->err = 0;
	f->v.arr[prio] = v;
	f->mask |= 1u << prio;
}

void field_set_dscp_map(struct object *o, enum field_id id, const int8_t map[RW_DSCP_COUNT])
{
	memcpy(fv(o, id)->v.dscp, map, RW_DSCP_COUNT);
}

int field_compact_text(const struct field_val *f, enum value_type t, char *buf, size_t len)
{
	int n = t == VT_PRIOSET ? RW_PRIO_COUNT : t == VT_DSCP_MAP ? RW_DSCP_COUNT : 0;

	if (!n || len <= (size_t)n)
		return -EINVAL;
	for (int i = 0; i < n; i++) {
		if (t == VT_PRIOSET)
			buf[i] = (char)('0' + ((f->v.set >> i) & 1));
		else /* every source keeps a priority in 0..7 or -1 (snapshot.c, dcb.c) */
			buf[i] = f->v.dscp[i] >= 0 && f->v.dscp[i] < RW_PRIO_COUNT
				     ? (char)('0' + f->v.dscp[i])
				     : '-';
	}
	buf[n] = '\0';
	return 0;
}

int field_compact_parse(struct object *o, enum field_id id, const char *text)
{
	enum value_type t = fields[id].type;
	size_t n = t == VT_PRIOSET ? RW_PRIO_COUNT : t == VT_DSCP_MAP ? RW_DSCP_COUNT : 0;
	int8_t map[RW_DSCP_COUNT];
	uint8_t set = 0;

	if (!n || strlen(text) != n)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		char c = text[i];

		if (t == VT_PRIOSET && (c == '0' || c == '1'))
			set |= (uint8_t)((c - '0') << i);
		else if (t == VT_DSCP_MAP && c >= '0' && c < '0' + RW_PRIO_COUNT)
			map[i] = (int8_t)(c - '0');
		else if (t == VT_DSCP_MAP && c == '-')
			map[i] = -1;
		else
			return -EINVAL;
	}
	if (t == VT_PRIOSET)
		field_set_set(o, id, set);
	else
		field_set_dscp_map(o, id, map);
	return 0;
}

enum absent_reason absent_from_errno(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case EOPNOTSUPP:
	case ENOENT:
	case ENODEV:
	case ENOTTY:
	case ENOSYS:
	case EPROTONOSUPPORT:
	case EAFNOSUPPORT:
		return ABS_UNSUPPORTED;
	case EPERM:
	case EACCES:
		return ABS_PERMISSION;
	default:
		return ABS_ERROR;
	}
}

void field_absent(struct object *o, enum field_id id, enum absent_reason why, int err)
{
	struct field_val *f = &o->f[id];

	f->state = why == ABS_NONE ? ABS_ERROR : why;
	f->err = err < 0 ? -err : err;
	f->mask = 0;
	if (fields[id].type != VT_GIDS && fields[id].type != VT_PCI_PAIRS)
		memset(&f->v, 0, sizeof(f->v));
}

void field_absent_errno(struct object *o, enum field_id id, int err)
{
	field_absent(o, id, absent_from_errno(err), err);
}

int field_absent_source(struct object *o, enum field_source src, unsigned int part,
			enum absent_reason why, int err)
{
	int n = 0;

	for (int id = 0; id < F__COUNT; id++) {
		const struct field_desc *d = &fields[id];

		if (d->src != src || d->obj != o->kind ||
		    !(part & (d->config ? FIELDS_CONFIG : FIELDS_COUNTERS)))
			continue;
		field_absent(o, (enum field_id)id, why, err);
		n++;
	}
	return n;
}

int field_absent_source_errno(struct object *o, enum field_source src, unsigned int part, int err)
{
	return field_absent_source(o, src, part, absent_from_errno(err), err);
}

static const char *const reason_names[ABS__COUNT] = {
	[ABS_NONE] = "present",
	[ABS_NOT_COLLECTED] = "not_collected",
	[ABS_UNSUPPORTED] = "unsupported",
	[ABS_PERMISSION] = "permission",
	[ABS_ERROR] = "error",
	[ABS_NO_DATA] = "no_data",
};

const char *absent_reason_name(enum absent_reason r)
{
	return r < ABS__COUNT ? reason_names[r] : "error";
}

int absent_reason_parse(const char *s)
{
	for (int i = 0; i < ABS__COUNT; i++)
		if (!strcmp(reason_names[i], s))
			return i;
	return -1;
}

const char *obj_kind_name(enum obj_kind k)
{
	static const char *const names[] = { "node", "netdev", "rdma_port" };

	return k < OBJ__COUNT ? names[k] : "?";
}

int obj_kind_parse(const char *s)
{
	for (int k = 0; k < OBJ__COUNT; k++)
		if (s && !strcmp(obj_kind_name(k), s))
			return k;
	return -1;
}

void cset_clear(struct counter_set *cs)
{
	cs->hint = 0;
	if (cs->n)
		memset(cs->present, 0, cs->n);
}

int cset_reserve(struct counter_set *cs, uint32_t n)
{
	if (n <= cs->cap)
		return 0;
	if (array_resize(&cs->names, n, sizeof(*cs->names)) ||
	    array_resize(&cs->vals, n, sizeof(*cs->vals)) ||
	    array_resize(&cs->present, n, sizeof(*cs->present)))
		return -ENOMEM;
	cs->cap = n;
	return 0;
}

int cset_find(const struct counter_set *cs, const char *name)
{
	for (uint32_t i = 0; i < cs->n; i++)
		if (!strcmp(cs->names[i], name))
			return (int)i;
	return -1;
}

static uint32_t next_names_gen(void)
{
	static uint32_t seq;
	uint32_t g;

	do
		g = __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED);
	while (!g); /* 0 is a freed set's */
	return g;
}

int cset_set(struct counter_set *cs, const char *name, uint64_t v)
{
	/*
	 * Sources list their counters in the same order every time, so the
	 * slot after the last one set is nearly always right: filling a set
	 * stays linear instead of quadratic.
	 */
	int i = cs->hint < cs->n && !strcmp(cs->names[cs->hint], name) ? (int)cs->hint
								       : cset_find(cs, name);

	if (i < 0) {
		if (cs->n == cs->cap && cset_reserve(cs, cs->cap ? cs->cap * 2 : 32))
			return -ENOMEM;
		i = (int)cs->n++;
		strlcpy0(cs->names[i], name, RW_CNAME_MAX);
		cs->names_gen = next_names_gen();
	}
	cs->vals[i] = v;
	cs->present[i] = 1;
	cs->hint = (uint32_t)i + 1;
	return i;
}

int cset_append(struct counter_set *cs, const char *name, uint64_t v)
{
	uint32_t i = cs->n;

	if (cs->n == cs->cap && cset_reserve(cs, cs->cap ? cs->cap * 2 : 32))
		return -ENOMEM;
	cs->n++;
	strlcpy0(cs->names[i], name, RW_CNAME_MAX);
	cs->names_gen = next_names_gen();
	cs->vals[i] = v;
	cs->present[i] = 1;
	cs->hint = i + 1;
	return (int)i;
}

void cset_free(struct counter_set *cs)
{
	free(cs->names);
	free(cs->vals);
	free(cs->present);
	memset(cs, 0, sizeof(*cs));
}

void object_unit_name(const struct object *o, char *buf, size_t len)
{
	if (o->kind == OBJ_RDMA_PORT)
		snprintf(buf, len, "%s/%u", o->name, o->port);
	else if (o->kind == OBJ_NETDEV)
		snprintf(buf, len, "%s", o->name);
	else
		buf[0] = '\0';
}
