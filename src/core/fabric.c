// SPDX-License-Identifier: MIT
/*
 * Rails and roles (fabric.h).  Everything here reads facts already in the
 * model and writes only the SRC_FABRIC fields, so a snapshot, a recording or
 * Prometheus series rebuilt into a model derive the same rails and roles as
 * the live node did.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric.h"
#include "util.h"

static const char *const role_names[ROLE__COUNT] = {
	[ROLE_NONE] = "",	    [ROLE_COMPUTE] = "compute",
	[ROLE_STORAGE] = "storage", [ROLE_MANAGEMENT] = "management",
	[ROLE_UNUSED] = "unused",
};

static const char *const rail_src_names[RAIL_SRC__COUNT] = {
	[RAIL_SRC_MAP] = "map",
	[RAIL_SRC_LLDP] = "lldp",
	[RAIL_SRC_SUBNET] = "subnet",
	[RAIL_SRC_ORDER] = "order",
};

const char *fabric_role_name(enum port_role r)
{
	return (unsigned)r < ROLE__COUNT ? role_names[r] : "";
}

enum port_role fabric_role_parse(const char *s)
{
	for (int r = ROLE_COMPUTE; r < ROLE__COUNT; r++)
		if (!strcmp(s, role_names[r]))
			return (enum port_role)r;
	return ROLE_NONE;
}

const char *fabric_rail_src_name(enum rail_src s)
{
	return (unsigned)s < RAIL_SRC__COUNT ? rail_src_names[s] : "";
}

void fabric_config_init(struct fabric_config *fc)
{
	memset(fc, 0, sizeof(*fc));
	for (int i = 0; i < RAIL_SRC__COUNT; i++)
		fc->order[i] = (enum rail_src)i;
	fc->n_order = RAIL_SRC__COUNT;
	fc->subnet_prefix = 24;
	fc->peer_evidence = true;
}

void fabric_config_free(struct fabric_config *fc)
{
	if (!fc)
		return;
	for (size_t i = 0; i < fc->n_roles; i++) {
		regfree(&fc->roles[i].re);
		free(fc->roles[i].pattern);
		free(fc->roles[i].origin);
	}
	free(fc->roles);
	for (size_t i = 0; i < fc->n_map; i++) {
		free(fc->map[i].key);
		free(fc->map[i].rail);
	}
	free(fc->map);
	free(fc->map_file);
	fabric_config_init(fc);
}

int fabric_config_rail_sources(struct fabric_config *fc, const char *list, char *err, size_t errlen)
{
	enum rail_src order[RAIL_SRC__COUNT];
	int n = 0;
	const char *p = list;

	while (*p) {
		size_t len = strcspn(p, ", ");
		int s = -1;

		for (int i = 0; len && i < RAIL_SRC__COUNT; i++)
			if (strlen(rail_src_names[i]) == len && !strncmp(p, rail_src_names[i], len))
				s = i;
		if (len && s < 0) {
			snprintf(
			    err, errlen,
			    "rail_source: '%.*s' is not a rail source (map, lldp, subnet, order)",
			    (int)(len > 32 ? 32 : len), p);
			return -EINVAL;
		}
		for (int i = 0; s >= 0 && i < n; i++)
			if (order[i] == (enum rail_src)s) {
				snprintf(err, errlen, "rail_source: '%s' is named twice",
					 rail_src_names[s]);
				return -EINVAL;
			}
		if (s >= 0)
			order[n++] = (enum rail_src)s;
		p += len;
		p += strspn(p, ", ");
	}
	if (!n) {
		snprintf(err, errlen,
			 "rail_source: empty (name one or more of map, lldp, subnet, "
			 "order)");
		return -EINVAL;
	}
	memcpy(fc->order, order, sizeof(order));
	fc->n_order = n;
	return 0;
}

int fabric_config_add_role(struct fabric_config *fc, const char *pattern, enum port_role role,
			   const char *origin, char *err, size_t errlen)
{
	struct fabric_role_rule *n = realloc(fc->roles, (fc->n_roles + 1) * sizeof(*n));
	char anchored[512];
	int rc;

	if (!n)
		return -ENOMEM;
	fc->roles = n;
	if ((size_t)snprintf(anchored, sizeof(anchored), "^(%s)$", pattern) >= sizeof(anchored)) {
		snprintf(err, errlen, "roles: pattern '%.40s...' is too long", pattern);
		return -EINVAL;
	}
	rc = regcomp(&n[fc->n_roles].re, anchored, REG_EXTENDED | REG_NOSUB);
	if (rc) {
		char why[128];

		regerror(rc, &n[fc->n_roles].re, why, sizeof(why));
		snprintf(err, errlen, "roles: '%s': %s", pattern, why);
		return -EINVAL;
	}
	n[fc->n_roles].pattern = strdup(pattern);
	n[fc->n_roles].origin = strdup(origin ? origin : "");
	n[fc->n_roles].role = role;
	if (!n[fc->n_roles].pattern || !n[fc->n_roles].origin) {
		regfree(&n[fc->n_roles].re);
		free(n[fc->n_roles].pattern);
		free(n[fc->n_roles].origin);
		return -ENOMEM;
	}
	fc->n_roles++;
	return 0;
}

int fabric_config_add_rail(struct fabric_config *fc, const char *key, const char *rail)
{
	struct fabric_rail_entry *n;

	for (size_t i = 0; i < fc->n_map; i++)
		if (!strcmp(fc->map[i].key, key))
			return -EEXIST;
	n = realloc(fc->map, (fc->n_map + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	fc->map = n;
	n[fc->n_map].key = strdup(key);
	n[fc->n_map].rail = strdup(rail);
	if (!n[fc->n_map].key || !n[fc->n_map].rail) {
		free(n[fc->n_map].key);
		free(n[fc->n_map].rail);
		return -ENOMEM;
	}
	fc->n_map++;
	return 0;
}

/* ---- reading the facts ---- */

static const char *str_of(const struct object *o, int id)
{
	return o && id >= 0 && o->f[id].state == ABS_NONE ? o->f[id].v.s : NULL;
}

static bool bool_of(const struct object *o, int id, bool *known)
{
	*known = o && id >= 0 && o->f[id].state == ABS_NONE;
	return *known && o->f[id].v.i;
}

/* What one port is, as far as the derivation needs it. */
struct pinfo {
	struct object *o;
	const char *netdev, *pci, *model;
	char card[RW_NAME_MAX];
	unsigned index; /* which port of its card: PCI function, then port number */
	bool active, seen_active, gid, gid_known;
	enum port_role role;
	const char *role_source;
	char reason[2 * RW_STR_MAX];
	bool mapped; /* the role came from a roles: pattern */
};

static void read_port(struct pinfo *p, struct object *o)
{
	const char *state = str_of(o, F_PORT_STATE), *dot;
	bool known;

	memset(p, 0, sizeof(*p));
	p->o = o;
	p->netdev = o->netdev ? o->netdev->name : str_of(o, F_PORT_NETDEV);
	if (p->netdev && !*p->netdev)
		p->netdev = NULL;
	p->pci = str_of(o->netdev, F_NETDEV_BUS);
	if (p->pci && (!*p->pci || !strchr(p->pci, ':')))
		p->pci = NULL;
	p->model = str_of(o, F_PORT_HCA_TYPE);
	if (!p->model || !*p->model)
		p->model = str_of(o, F_PORT_BOARD_ID);
	if (!p->model || !*p->model)
		p->model = str_of(o, F_PORT_DRIVER);
	dot = p->pci ? strrchr(p->pci, '.') : NULL;
	if (dot) {
		size_t n = (size_t)(dot - p->pci);

		if (n >= sizeof(p->card))
			n = sizeof(p->card) - 1;
		memcpy(p->card, p->pci, n);
		p->card[n] = '\0';
		p->index = (unsigned)strtoul(dot + 1, NULL, 16) * 256 + o->port;
	} else {
		strlcpy0(p->card, o->name, sizeof(p->card));
		p->index = o->port;
	}
	p->active = state && !strcmp(state, "ACTIVE");
	p->seen_active = bool_of(o, F_PORT_SEEN_ACTIVE, &known) || p->active;
	p->gid_known = o->f[F_PORT_ROCEV2_IPV4_GID_INDEX].state == ABS_NONE ||
		       o->f[F_PORT_ROCEV2_IPV4_GID_INDEX].state == ABS_UNSUPPORTED;
	p->gid = o->f[F_PORT_ROCEV2_IPV4_GID_INDEX].state == ABS_NONE &&
		 o->f[F_PORT_ROCEV2_IPV4_GID_INDEX].v.i >= 0;
}

static bool role_match(const struct fabric_role_rule *r, const struct pinfo *p)
{
	return (p->netdev && !regexec(&r->re, p->netdev, 0, NULL, 0)) ||
	       !regexec(&r->re, p->o->name, 0, NULL, 0) ||
	       (p->pci && !regexec(&r->re, p->pci, 0, NULL, 0));
}

/* Roles before peer evidence: the site's patterns, the default route, and the port itself. */
static void first_role(struct pinfo *p, const struct fabric_config *fc)
{
	bool known;

	for (size_t i = 0; i < fc->n_roles; i++)
		if (role_match(&fc->roles[i], p)) {
			p->role = fc->roles[i].role;
			p->role_source = "map";
			p->mapped = true;
			snprintf(p->reason, sizeof(p->reason), "roles: '%.30s' (%.20s)",
				 fc->roles[i].pattern, fc->roles[i].origin);
			return;
		}
	if (bool_of(p->o->netdev, F_NETDEV_DEFAULT_ROUTE, &known)) {
		p->role = ROLE_MANAGEMENT;
		p->role_source = "default_route";
		snprintf(p->reason, sizeof(p->reason), "%.30s carries the default route",
			 p->netdev ? p->netdev : "its netdev");
		return;
	}
	if (p->gid_known && !p->gid && !p->seen_active) {
		p->role = ROLE_UNUSED;
		p->role_source = "no_gid";
		snprintf(p->reason, sizeof(p->reason), "no IPv4 RoCE v2 GID, never ACTIVE");
		return;
	}
	p->role = ROLE_COMPUTE;
	p->role_source = "default";
	snprintf(p->reason, sizeof(p->reason), "%s",
		 p->gid ? "has an IPv4 RoCE v2 GID" : "was ACTIVE");
}

static bool sibling(const struct pinfo *a, const struct pinfo *b)
{
	return a->model && b->model && !strcmp(a->model, b->model) && a->index == b->index &&
	       (a->role == ROLE_COMPUTE || a->role == ROLE_UNUSED || a->role == ROLE_STORAGE) &&
	       (b->role == ROLE_COMPUTE || b->role == ROLE_UNUSED || b->role == ROLE_STORAGE);
}

/*
 * Peer evidence (NVSentinel PR #1462 reasons alike): the same port of every
 * card of one model tells what this card's port is for.  A port the
 * siblings use is expected up even without a GID; a port down on every
 * sibling, never ACTIVE and without a GID, is down by design.
 */
static void peer_evidence(struct pinfo *ps, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct pinfo *p = &ps[i];
		size_t cards = 0, used = 0;

		if (p->role != ROLE_COMPUTE && p->role != ROLE_UNUSED)
			continue;
		if (p->gid || p->seen_active || !p->gid_known)
			continue; /* it speaks for itself */
		for (size_t j = 0; j < n; j++) {
			if (!sibling(p, &ps[j]))
				continue;
			cards++;
			used += ps[j].gid || ps[j].seen_active;
		}
		if (cards < 2)
			continue; /* no sibling: the port alone decides */
		if (used) {
			p->role = ROLE_COMPUTE;
			p->role_source = "peer";
			snprintf(p->reason, sizeof(p->reason), "%zu of %zu sibling cards use it",
				 used, cards);
		} else if (p->role == ROLE_COMPUTE || !p->mapped) {
			p->role = ROLE_UNUSED;
			p->role_source = "peer";
			snprintf(p->reason, sizeof(p->reason),
				 "down, no GID on all %zu cards of this model", cards);
		}
	}
}

/* ---- rails ---- */

static const char *map_rail(const struct fabric_config *fc, const struct pinfo *p)
{
	for (size_t i = 0; i < fc->n_map; i++) {
		const char *k = fc->map[i].key;

		if ((p->pci && !strcmp(k, p->pci)) || (p->netdev && !strcmp(k, p->netdev)) ||
		    !strcmp(k, p->o->name))
			return fc->map[i].rail;
	}
	return NULL;
}

/* The IPv4 address of an IPv4-mapped GID ("...:ffff:0a00:0305"), or -1. */
static int64_t gid_ipv4(const char *gid)
{
	uint8_t b[16];
	int n = 0;

	for (const char *s = gid; *s && n < 32; s++) {
		int v = rw_hex_digit(*s);

		if (*s == ':')
			continue;
		if (v < 0)
			return -1;
		if (n % 2 == 0)
			b[n / 2] = (uint8_t)(v << 4);
		else
			b[n / 2] |= (uint8_t)v;
		n++;
	}
	if (n != 32)
		return -1;
	for (int i = 0; i < 10; i++)
		if (b[i])
			return -1;
	if (b[10] != 0xff || b[11] != 0xff)
		return -1;
	return (int64_t)b[12] << 24 | (int64_t)b[13] << 16 | (int64_t)b[14] << 8 | b[15];
}

static bool subnet_rail(const struct object *o, int prefix, char *buf, size_t len)
{
	const struct field_val *ix = &o->f[F_PORT_ROCEV2_IPV4_GID_INDEX];
	uint32_t mask, a;
	int64_t ip = -1;

	if (ix->state != ABS_NONE || ix->v.i < 0)
		return false;
	for (size_t i = 0; i < o->gids.n && ip < 0; i++)
		if (o->gids.e[i].index == (uint32_t)ix->v.i)
			ip = gid_ipv4(o->gids.e[i].gid);
	if (ip < 0)
		return false;
	mask = prefix >= 32 ? 0xffffffffu : ~(0xffffffffu >> prefix);
	a = (uint32_t)ip & mask;
	snprintf(buf, len, "%u.%u.%u.%u/%d", a >> 24, (a >> 16) & 0xff, (a >> 8) & 0xff, a & 0xff,
		 prefix);
	return true;
}

/* The LLDP facts by path, looked up once: the collector that fills them may not be built in. */
static int lldp_field(const char *path)
{
	static int name_id = -2, port_id = -2;
	int *slot = !strcmp(path, "lldp.system_name") ? &name_id : &port_id;

	if (*slot == -2)
		__atomic_store_n(slot, field_lookup(OBJ_NETDEV, path), __ATOMIC_RELAXED);
	return __atomic_load_n(slot, __ATOMIC_RELAXED);
}

static void set_rail(struct object *o, const struct fabric_config *fc, size_t position)
{
	const int lldp_name = lldp_field("lldp.system_name"),
		  lldp_port = lldp_field("lldp.port_id");
	const char *leaf = str_of(o->netdev, lldp_name), *leaf_port = str_of(o->netdev, lldp_port);
	char buf[RW_STR_MAX];
	struct pinfo p;

	read_port(&p, o);
	if (leaf && *leaf)
		field_set_str(o, F_PORT_LEAF, leaf);
	else
		field_absent(o, F_PORT_LEAF, ABS_UNSUPPORTED, 0);
	if (leaf_port && *leaf_port)
		field_set_str(o, F_PORT_LEAF_PORT, leaf_port);
	else
		field_absent(o, F_PORT_LEAF_PORT, ABS_UNSUPPORTED, 0);
	for (int i = 0; i < fc->n_order; i++) {
		const char *rail = NULL;

		switch (fc->order[i]) {
		case RAIL_SRC_MAP:
			rail = map_rail(fc, &p);
			break;
		case RAIL_SRC_LLDP:
			rail = leaf && *leaf ? leaf : NULL;
			break;
		case RAIL_SRC_SUBNET:
			if (subnet_rail(o, fc->subnet_prefix, buf, sizeof(buf)))
				rail = buf;
			break;
		case RAIL_SRC_ORDER:
			snprintf(buf, sizeof(buf), "%zu", position);
			rail = buf;
			break;
		default:
			break;
		}
		if (rail) {
			field_set_str(o, F_PORT_RAIL, rail);
			field_set_str(o, F_PORT_RAIL_SOURCE, fabric_rail_src_name(fc->order[i]));
			return;
		}
	}
	field_absent(o, F_PORT_RAIL, ABS_UNSUPPORTED, 0);
	field_absent(o, F_PORT_RAIL_SOURCE, ABS_UNSUPPORTED, 0);
}

static bool carries_rail(const struct object *o)
{
	const char *role = str_of(o, F_PORT_ROLE);

	return role && (!strcmp(role, "compute") || !strcmp(role, "storage"));
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Add GPU index g to a port's near_gpus list ("0", "0,1"): the GPUs it is nearest to. */
static void add_near_gpu(struct object *o, size_t g)
{
	char buf[2 * RW_STR_MAX];
	const char *cur = o->f[F_PORT_NEAR_GPUS].v.s;
	int n = snprintf(buf, sizeof(buf), "%s%s%zu", cur, *cur ? "," : "", g);

	if (n > 0 && (size_t)n < RW_STR_MAX) /* 64 GPUs would not fit: the first ones do */
		field_set_str(o, F_PORT_NEAR_GPUS, buf);
}

/* GPU i (in PCI order) is nearest to which compute ports; each port's nearest GPU. */
static void gpu_affinity(struct node_model *m)
{
	const struct field_val *fp = &m->node.f[F_NODE_GPU_NIC_PATHS];
	const struct pci_pairs *pp = fp->state == ABS_NONE ? fp->v.pairs : NULL;
	const char *gpus[64];
	size_t ng = 0;

	for (size_t i = 0; i < m->n_ports; i++) {
		field_absent(m->ports[i], F_PORT_GPU, ABS_UNSUPPORTED, 0);
		field_absent(m->ports[i], F_PORT_GPU_DISTANCE, ABS_UNSUPPORTED, 0);
		if (carries_rail(m->ports[i]) && pp)
			field_set_str(m->ports[i], F_PORT_NEAR_GPUS, "");
		else
			field_absent(m->ports[i], F_PORT_NEAR_GPUS,
				     pp ? ABS_UNSUPPORTED : ABS_NOT_COLLECTED, 0);
	}
	if (!pp)
		return;
	for (size_t i = 0; i < pp->n; i++) {
		bool dup = false;

		for (size_t j = 0; j < ng && !dup; j++)
			dup = !strcmp(gpus[j], pp->e[i].gpu);
		if (!dup && ng < 64)
			gpus[ng++] = pp->e[i].gpu;
	}
	qsort(gpus, ng, sizeof(*gpus), cmp_str);
	for (size_t g = 0; g < ng; g++) {
		int best = 0;

		for (size_t i = 0; i < pp->n; i++) {
			struct object *o = NULL;

			if (strcmp(pp->e[i].gpu, gpus[g]))
				continue;
			for (size_t k = 0; k < m->n_ports && !o; k++)
				if (!strcmp(m->ports[k]->name, pp->e[i].nic) &&
				    carries_rail(m->ports[k]))
					o = m->ports[k];
			if (o && (!best || (int)pp->e[i].path < best))
				best = (int)pp->e[i].path;
		}
		for (size_t i = 0; best && i < pp->n; i++) {
			if (strcmp(pp->e[i].gpu, gpus[g]) || (int)pp->e[i].path != best)
				continue;
			for (size_t k = 0; k < m->n_ports; k++)
				if (!strcmp(m->ports[k]->name, pp->e[i].nic) &&
				    carries_rail(m->ports[k]))
					add_near_gpu(m->ports[k], g);
		}
	}
	/* each port's own nearest GPU, and how near; a port nearest to none has no near_gpus */
	for (size_t k = 0; k < m->n_ports; k++) {
		struct object *o = m->ports[k];
		const struct pci_pair *near = NULL;

		if (o->f[F_PORT_NEAR_GPUS].state == ABS_NONE && !o->f[F_PORT_NEAR_GPUS].v.s[0])
			field_set_str(o, F_PORT_NEAR_GPUS, "none");
		for (size_t i = 0; i < pp->n; i++)
			if (!strcmp(pp->e[i].nic, o->name) && (!near || pp->e[i].path < near->path))
				near = &pp->e[i];
		if (near) {
			field_set_str(o, F_PORT_GPU, near->gpu);
			field_set_int(o, F_PORT_GPU_DISTANCE, (int64_t)near->path);
		}
	}
}

void fabric_derive(struct node_model *m, const struct fabric_config *fc)
{
	struct pinfo *ps = m->n_ports ? calloc(m->n_ports, sizeof(*ps)) : NULL;
	size_t compute = 0, guessed = 0, position = 0;

	if (m->n_ports && !ps) {
		for (size_t i = 0; i < m->n_ports; i++)
			field_absent_source_errno(m->ports[i], SRC_FABRIC, FIELDS_ALL, -ENOMEM);
		field_absent_source_errno(&m->node, SRC_FABRIC, FIELDS_ALL, -ENOMEM);
		return;
	}
	for (size_t i = 0; i < m->n_ports; i++) {
		read_port(&ps[i], m->ports[i]);
		first_role(&ps[i], fc);
	}
	if (fc->peer_evidence)
		peer_evidence(ps, m->n_ports);
	for (size_t i = 0; i < m->n_ports; i++) {
		struct object *o = ps[i].o;

		field_set_str(o, F_PORT_ROLE, fabric_role_name(ps[i].role));
		field_set_str(o, F_PORT_ROLE_SOURCE, ps[i].role_source);
		field_set_str(o, F_PORT_ROLE_REASON, ps[i].reason);
	}
	for (size_t i = 0; i < m->n_ports; i++) {
		struct object *o = m->ports[i];
		const char *src;

		if (!carries_rail(o)) {
			field_absent(o, F_PORT_RAIL, ABS_UNSUPPORTED, 0);
			field_absent(o, F_PORT_RAIL_SOURCE, ABS_UNSUPPORTED, 0);
			field_absent(o, F_PORT_LEAF, ABS_UNSUPPORTED, 0);
			field_absent(o, F_PORT_LEAF_PORT, ABS_UNSUPPORTED, 0);
			field_absent(o, F_PORT_RAIL_PORTS, ABS_UNSUPPORTED, 0);
			continue;
		}
		set_rail(o, fc, position++);
		compute += ps[i].role == ROLE_COMPUTE;
		src = str_of(o, F_PORT_RAIL_SOURCE);
		guessed += src && !strcmp(src, "order");
	}
	for (size_t i = 0; i < m->n_ports; i++) {
		const char *rail = str_of(m->ports[i], F_PORT_RAIL);
		int64_t same = 0;

		if (!rail || !carries_rail(m->ports[i]))
			continue;
		for (size_t j = 0; j < m->n_ports; j++) {
			const char *r2 = str_of(m->ports[j], F_PORT_RAIL);

			same += r2 && carries_rail(m->ports[j]) && !strcmp(rail, r2);
		}
		field_set_int(m->ports[i], F_PORT_RAIL_PORTS, same);
	}
	gpu_affinity(m);
	field_set_int(&m->node, F_NODE_COMPUTE_PORTS, (int64_t)compute);
	if (position)
		field_set_bool(&m->node, F_NODE_RAILS_GUESSED, guessed == position);
	else
		field_absent(&m->node, F_NODE_RAILS_GUESSED, ABS_UNSUPPORTED, 0);
	free(ps);
}
