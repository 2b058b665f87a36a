// SPDX-License-Identifier: MIT
/*
 * A job's NCCL settings against the node model (nccl.h).
 *
 * List syntax, as NCCL's Environment Variables documentation gives it for
 * NCCL_IB_HCA and NCCL_SOCKET_IFNAME, and as NCCL applies it (a leading '^'
 * is taken off first, then a leading '='; entries split at ','; an entry
 * "name:port" names one port):
 *   mlx5              every port of every device whose name starts with mlx5
 *                     (so mlx5_1 selects mlx5_1 and mlx5_10..mlx5_19 too)
 *   =mlx5_0:1,mlx5_1:1  port 1 of exactly mlx5_0 and mlx5_1
 *   ^=mlx5_1,mlx5_4   everything but mlx5_1 and mlx5_4
 *   ^docker           interfaces not starting with docker
 *
 * Judged here, each into one job.* fact the profile's rules read:
 *   NCCL_IB_HCA        every entry of an include list names a port that
 *                      exists; what it selects is ACTIVE and RoCE (link
 *                      layer Ethernet); it selects something at all
 *   NCCL_SOCKET_IFNAME some selected interface is up with an address;
 *                      selected loopback/container/virtual interfaces
 *   NCCL_IB_GID_INDEX  the GID at that index of every selected active port
 *                      is a RoCE v2 IPv4-mapped one
 *   NCCL_IB_TC         the traffic class split into DSCP (TC >> 2) and ECN
 *                      (TC & 3) for the profile to compare
 *   NCCL_NET_GDR_LEVEL against each GPU's distance to its nearest NIC
 *   NCCL_IB_DISABLE, NCCL_CROSS_NIC, NCCL_DEBUG, NCCL_ALGO, NCCL_PROTO as set
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bounded.h"
#include "nccl.h"
#include "util.h"

int nccl_list_parse(const char *s, struct nccl_list *l)
{
	memset(l, 0, sizeof(*l));
	if (*s == '^') {
		l->exclude = true;
		s++;
	}
	if (*s == '=') {
		l->exact = true;
		s++;
	}
	while (*s) {
		const char *end = strchr(s, ','), *colon;
		size_t len = end ? (size_t)(end - s) : strlen(s), nlen;

		colon = memchr(s, ':', len);
		nlen = colon ? (size_t)(colon - s) : len;
		if (!nlen || nlen >= RW_NAME_MAX || l->n == NCCL_LIST_MAX)
			return -EINVAL;
		memcpy(l->e[l->n].name, s, nlen);
		l->e[l->n].name[nlen] = '\0';
		l->e[l->n].port = -1;
		if (colon) {
			char num[12];
			int64_t p;
			size_t plen = len - nlen - 1;

			if (!plen || plen >= sizeof(num))
				return -EINVAL;
			memcpy(num, colon + 1, plen);
			num[plen] = '\0';
			if (parse_i64(num, &p) || p < 0 || p > 255)
				return -EINVAL;
			l->e[l->n].port = (int)p;
		}
		l->n++;
		if (!end)
			break;
		s = end + 1;
		if (!*s)
			return -EINVAL; /* a trailing comma: an empty entry */
	}
	return 0;
}

static bool entry_matches(const struct nccl_list *l, size_t i, const char *name, int port)
{
	bool name_ok = l->exact ? !strcmp(name, l->e[i].name)
				: !strncmp(name, l->e[i].name, strlen(l->e[i].name));

	return name_ok && (l->e[i].port < 0 || port < 0 || l->e[i].port == port);
}

bool nccl_list_selects(const struct nccl_list *l, const char *name, int port)
{
	bool any = false;

	for (size_t i = 0; i < l->n && !any; i++)
		any = entry_matches(l, i, name, port);
	return any != l->exclude;
}

static const char *const var_names[NCCL__VARS] = {
	[NCCL_IB_HCA] = "NCCL_IB_HCA",
	[NCCL_SOCKET_IFNAME] = "NCCL_SOCKET_IFNAME",
	[NCCL_IB_GID_INDEX] = "NCCL_IB_GID_INDEX",
	[NCCL_IB_TC] = "NCCL_IB_TC",
	[NCCL_IB_DISABLE] = "NCCL_IB_DISABLE",
	[NCCL_NET_GDR_LEVEL] = "NCCL_NET_GDR_LEVEL",
	[NCCL_CROSS_NIC] = "NCCL_CROSS_NIC",
	[NCCL_DEBUG] = "NCCL_DEBUG",
	[NCCL_ALGO] = "NCCL_ALGO",
	[NCCL_PROTO] = "NCCL_PROTO",
};

const char *nccl_var_name(enum nccl_var v)
{
	return v < NCCL__VARS ? var_names[v] : "?";
}

void nccl_env_put(struct nccl_env *env, const char *key, const char *val)
{
	for (int v = 0; v < NCCL__VARS; v++)
		if (!strcmp(key, var_names[v])) {
			env->set[v] = true;
			strlcpy0(env->val[v], val, sizeof(env->val[v]));
		}
}

void nccl_env_from_environ(struct nccl_env *env, char **envp)
{
	env->given = true;
	for (char **p = envp; p && *p; p++) {
		const char *eq = strchr(*p, '=');
		char key[64];

		if (!eq || strncmp(*p, "NCCL_", 5) || (size_t)(eq - *p) >= sizeof(key))
			continue;
		memcpy(key, *p, (size_t)(eq - *p));
		key[eq - *p] = '\0';
		nccl_env_put(env, key, eq + 1);
	}
}

static bool is_key(const char *s, size_t n)
{
	if (!n || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9')))
			return false;
	return true;
}

int nccl_env_read_file(struct nccl_env *env, const char *path, char *err, size_t errlen)
{
	char *buf, *line, *next, why[160];
	size_t len = 0;
	int r = read_file_max(path, RW_MAX_NCCL_ENV_BYTES, &buf, &len), lineno = 0;
	const char *nul;

	if (r) {
		snprintf(err, errlen, "%s: %s", path,
			 read_error_text(r, RW_MAX_NCCL_ENV_BYTES, "an --nccl-env file", why,
					 sizeof(why)));
		return r;
	}
	/* a NUL would end the text early and silently hide every line after it */
	nul = memchr(buf, '\0', len);
	if (nul) {
		const char *bol = buf;

		for (const char *p = buf; p < nul; p++)
			if (*p == '\n')
				lineno++, bol = p + 1;
		snprintf(err, errlen, "%s:%d:%d: a NUL byte: not a text file of KEY=VALUE lines",
			 path, lineno + 1, (int)(nul - bol) + 1);
		free(buf);
		return -EINVAL;
	}
	env->given = true;
	for (line = buf; line; line = next) {
		char *eq, *val, *end;
		size_t vlen;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		line += strspn(line, " \t");
		end = line + strlen(line);
		while (end > line && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
			*--end = '\0';
		if (!*line || *line == '#')
			continue;
		if (!strncmp(line, "export", 6) && (line[6] == ' ' || line[6] == '\t'))
			line += 6 + strspn(line + 6, " \t");
		eq = strchr(line, '=');
		if (!eq || !is_key(line, (size_t)(eq - line))) {
			char shown[256];

			/* the line goes to the terminal: control bytes escaped */
			snprintf(err, errlen, "%s:%d: expected KEY=VALUE, got '%.60s'", path,
				 lineno, text_escape_ctl(line, shown, sizeof(shown)));
			r = -EINVAL;
			break;
		}
		*eq = '\0';
		val = eq + 1;
		vlen = strlen(val);
		/* a shell-quoted value, as `env` or a job script writes it */
		if (vlen >= 2 && (val[0] == '"' || val[0] == '\'') && val[vlen - 1] == val[0]) {
			val[vlen - 1] = '\0';
			val++;
		} else if (vlen && (val[0] == '"' || val[0] == '\'')) {
			snprintf(err, errlen, "%s:%d: %s: unterminated quote", path, lineno, line);
			r = -EINVAL;
			break;
		}
		nccl_env_put(env, line, val);
	}
	free(buf);
	return r;
}

/* ---- judging ---- */

static void set_problem(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_problem(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	if (buf[0])
		return; /* the first problem found is the one reported */
	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
}

static const char *str_or(const struct object *o, enum field_id id, const char *dflt)
{
	return field_present(o, id) ? o->f[id].v.s : dflt;
}

/* Which ports NCCL_IB_HCA selects (all when unset); the problem, if any, in prob. */
static void judge_ib_hca(const struct nccl_env *env, struct node_model *m, bool *sel, char *prob,
			 size_t size)
{
	struct nccl_list l;
	size_t nsel = 0;

	for (size_t i = 0; i < m->n_ports; i++)
		sel[i] = true;
	if (!env->set[NCCL_IB_HCA] || !env->val[NCCL_IB_HCA][0])
		return;
	if (nccl_list_parse(env->val[NCCL_IB_HCA], &l)) {
		set_problem(prob, size, "not a list of <hca>[:<port>]");
		for (size_t i = 0; i < m->n_ports; i++)
			sel[i] = false;
		return;
	}
	for (size_t i = 0; i < m->n_ports; i++)
		sel[i] = nccl_list_selects(&l, m->ports[i]->name, (int)m->ports[i]->port);
	/* an include list naming what is not there is a typo or a missing device */
	for (size_t k = 0; !l.exclude && k < l.n; k++) {
		bool found = false;

		for (size_t i = 0; i < m->n_ports && !found; i++) {
			struct nccl_list one = l;

			one.n = 1;
			one.e[0] = l.e[k];
			found = nccl_list_selects(&one, m->ports[i]->name, (int)m->ports[i]->port);
		}
		if (!found && l.e[k].port >= 0)
			set_problem(prob, size, "%s:%d: no such RDMA port", l.e[k].name,
				    l.e[k].port);
		else if (!found)
			set_problem(prob, size, "%s: no such RDMA device", l.e[k].name);
	}
	for (size_t i = 0; i < m->n_ports; i++) {
		const struct object *p = m->ports[i];
		const char *state = str_or(p, F_PORT_STATE, "unknown");
		const char *ll = str_or(p, F_PORT_LINK_LAYER, "unknown");

		if (!sel[i])
			continue;
		nsel++;
		if (strcmp(state, "ACTIVE"))
			set_problem(prob, size, "%s:%u is %s", p->name, p->port, state);
		else if (strcmp(ll, "Ethernet"))
			set_problem(prob, size, "%s:%u is %s, not RoCE", p->name, p->port, ll);
	}
	if (!nsel)
		set_problem(prob, size, "selects no RDMA port of this node");
}

/* Names a job should not bootstrap over: loopback, containers' bridges, virtual links. */
static bool virtual_name(const char *name)
{
	static const char *const prefixes[] = { "lo",  "docker",  "virbr", "veth", "br-",
						"cni", "flannel", "cali",  "vxlan" };

	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

static bool virtual_kind(const char *kind)
{
	static const char *const kinds[] = { "veth", "bridge", "vxlan", "dummy", "tun", "macvtap" };

	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
		if (!strcmp(kind, kinds[i]))
			return true;
	return false;
}

static void judge_socket_ifname(const struct nccl_env *env, struct node_model *m,
				struct object *node)
{
	char prob[RW_STR_MAX] = "", virt[RW_STR_MAX] = "";
	const char *v = env->set[NCCL_SOCKET_IFNAME] ? env->val[NCCL_SOCKET_IFNAME] : "";
	bool usable = false;
	struct nccl_list l;
	size_t len = 0;

	field_set_str(node, F_JOB_SOCKET_IFNAME, v);
	if (!v[0]) {
		/* unset: NCCL picks an interface itself (not docker*, not lo) */
		field_set_str(node, F_JOB_SOCKET_IFNAME_PROBLEM, "");
		field_set_str(node, F_JOB_SOCKET_IFNAME_VIRTUAL, "");
		return;
	}
	if (nccl_list_parse(v, &l)) {
		field_set_str(node, F_JOB_SOCKET_IFNAME_PROBLEM, "not a list of interface names");
		field_set_str(node, F_JOB_SOCKET_IFNAME_VIRTUAL, "");
		return;
	}
	for (size_t i = 0; i < m->n_netdevs; i++) {
		const struct object *nd = m->netdevs[i];
		const char *kind = str_or(nd, F_NETDEV_KIND, "");

		if (!nccl_list_selects(&l, nd->name, -1))
			continue;
		usable |= !strcmp(str_or(nd, F_NETDEV_OPERSTATE, ""), "up") &&
			  str_or(nd, F_NETDEV_IPV4, "")[0];
		if ((virtual_name(nd->name) || virtual_kind(kind)) &&
		    len + strlen(nd->name) + 2 < sizeof(virt))
			len += (size_t)snprintf(virt + len, sizeof(virt) - len, "%s%s",
						len ? " " : "", nd->name);
	}
	/* lo and docker0 are seldom among the netdevs watched: judge the names asked for */
	for (size_t k = 0; !l.exclude && k < l.n; k++)
		if (virtual_name(l.e[k].name) && !strstr(virt, l.e[k].name) &&
		    len + strlen(l.e[k].name) + 2 < sizeof(virt))
			len += (size_t)snprintf(virt + len, sizeof(virt) - len, "%s%s",
						len ? " " : "", l.e[k].name);
	if (!usable)
		snprintf(prob, sizeof(prob), "selects no interface that is up with an address");
	field_set_str(node, F_JOB_SOCKET_IFNAME_PROBLEM, prob);
	field_set_str(node, F_JOB_SOCKET_IFNAME_VIRTUAL, virt);
}

/* "0000:0000:0000:0000:0000:ffff:c0a8:0a0a", as the GID table holds it */
static bool ipv4_mapped(const char *gid)
{
	return !strncasecmp(gid, "0000:0000:0000:0000:0000:ffff:", 30);
}

static void judge_gid_index(const struct nccl_env *env, struct node_model *m, const bool *sel,
			    struct object *node)
{
	char prob[RW_STR_MAX] = "";
	int64_t idx;

	if (!env->set[NCCL_IB_GID_INDEX]) {
		field_absent(node, F_JOB_IB_GID_INDEX, ABS_UNSUPPORTED, 0);
		field_absent(node, F_JOB_IB_GID_INDEX_PROBLEM, ABS_UNSUPPORTED, 0);
		return;
	}
	if (parse_i64(env->val[NCCL_IB_GID_INDEX], &idx) || idx < -1 || idx > 65535) {
		field_absent(node, F_JOB_IB_GID_INDEX, ABS_ERROR, EINVAL);
		field_absent(node, F_JOB_IB_GID_INDEX_PROBLEM, ABS_ERROR, EINVAL);
		return;
	}
	field_set_int(node, F_JOB_IB_GID_INDEX, idx);
	/* -1: NCCL >= 2.21 picks the GID itself, as when the variable is unset */
	for (size_t i = 0; idx >= 0 && i < m->n_ports; i++) {
		const struct object *p = m->ports[i];
		const struct gid_table *t =
		    field_present(p, F_PORT_GIDS) ? p->f[F_PORT_GIDS].v.gids : NULL;
		const struct gid_entry *g = NULL;

		if (!sel[i] || strcmp(str_or(p, F_PORT_STATE, ""), "ACTIVE") ||
		    strcmp(str_or(p, F_PORT_LINK_LAYER, ""), "Ethernet"))
			continue;
		if (!t) {
			/* the GID table is unknown: the rule must say unknown, not pass */
			field_absent(node, F_JOB_IB_GID_INDEX_PROBLEM,
				     (enum absent_reason)p->f[F_PORT_GIDS].state,
				     p->f[F_PORT_GIDS].err);
			return;
		}
		for (size_t k = 0; k < t->n && !g; k++)
			if (t->e[k].index == (uint32_t)idx)
				g = &t->e[k];
		if (!g)
			set_problem(prob, sizeof(prob), "%s:%u has no GID %lld", p->name, p->port,
				    (long long)idx);
		else if (strcmp(g->type, "RoCE v2"))
			set_problem(prob, sizeof(prob), "%s:%u GID %lld is %s, not RoCE v2",
				    p->name, p->port, (long long)idx, g->type);
		else if (!ipv4_mapped(g->gid))
			set_problem(prob, sizeof(prob), "%s:%u GID %lld is not IPv4", p->name,
				    p->port, (long long)idx);
	}
	field_set_str(node, F_JOB_IB_GID_INDEX_PROBLEM, prob);
}

static void judge_tc(const struct nccl_env *env, struct object *node)
{
	int64_t tc;

	if (!env->set[NCCL_IB_TC]) {
		for (int id = F_JOB_IB_TC; id <= F_JOB_IB_TC_ECN; id++)
			field_absent(node, (enum field_id)id, ABS_UNSUPPORTED, 0);
		return;
	}
	if (parse_i64(env->val[NCCL_IB_TC], &tc) || tc < 0 || tc > 255) {
		for (int id = F_JOB_IB_TC; id <= F_JOB_IB_TC_ECN; id++)
			field_absent(node, (enum field_id)id, ABS_ERROR, EINVAL);
		return;
	}
	field_set_int(node, F_JOB_IB_TC, tc);
	field_set_int(node, F_JOB_IB_TC_DSCP, tc >> 2);
	field_set_int(node, F_JOB_IB_TC_ECN, tc & 3);
}

/* NCCL's path types, LOC below PIX; a level name or its number (older NCCL). */
static int gdr_level(const char *s)
{
	static const char *const names[] = { "LOC", "PIX", "PXB", "PHB", "SYS" };
	int64_t v;

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcasecmp(s, names[i]))
			return (int)i;
	if (!parse_i64(s, &v) && v >= 0 && v <= 5)
		return v > 4 ? 4 : (int)v;
	return -1;
}

static void judge_gdr(const struct nccl_env *env, struct object *node)
{
	static const char *const names[] = { "LOC", "PIX", "PXB", "PHB", "SYS" };
	const struct field_val *fp = &node->f[F_NODE_GPU_NIC_PATHS];
	const struct pci_pairs *pp = fp->v.pairs;
	char prob[RW_STR_MAX] = "";
	int lvl;

	if (!env->set[NCCL_NET_GDR_LEVEL]) {
		field_absent(node, F_JOB_NET_GDR_LEVEL, ABS_UNSUPPORTED, 0);
		field_absent(node, F_JOB_NET_GDR_PROBLEM, ABS_UNSUPPORTED, 0);
		return;
	}
	lvl = gdr_level(env->val[NCCL_NET_GDR_LEVEL]);
	if (lvl < 0) {
		field_absent(node, F_JOB_NET_GDR_LEVEL, ABS_ERROR, EINVAL);
		field_absent(node, F_JOB_NET_GDR_PROBLEM, ABS_ERROR, EINVAL);
		return;
	}
	field_set_str(node, F_JOB_NET_GDR_LEVEL, names[lvl]);
	if (fp->state != ABS_NONE) {
		field_absent(node, F_JOB_NET_GDR_PROBLEM, (enum absent_reason)fp->state, fp->err);
		return;
	}
	/* each GPU against its nearest NIC: pairs are sorted by GPU */
	for (size_t i = 0; pp && i < pp->n;) {
		size_t j = i;
		int best = PCI_PATH_SYS;

		for (; j < pp->n && !strcmp(pp->e[j].gpu, pp->e[i].gpu); j++)
			if ((int)pp->e[j].path < best)
				best = (int)pp->e[j].path;
		if (lvl == 0)
			set_problem(prob, sizeof(prob), "LOC turns GPUDirect RDMA off");
		else if (best <= PCI_PATH_PXB && lvl < best)
			set_problem(prob, sizeof(prob), "%s forbids GPUDirect for GPU %s at %s",
				    names[lvl], pp->e[i].gpu, names[best]);
		else if (best > PCI_PATH_PXB && lvl >= best)
			set_problem(prob, sizeof(prob), "%s allows GPUDirect for GPU %s at %s",
				    names[lvl], pp->e[i].gpu, names[best]);
		i = j;
	}
	field_set_str(node, F_JOB_NET_GDR_PROBLEM, prob);
}

static void judge_debug(const struct nccl_env *env, struct object *node)
{
	static const enum nccl_var vars[] = { NCCL_DEBUG, NCCL_ALGO, NCCL_PROTO };
	char out[RW_STR_MAX] = "";
	size_t len = 0;

	for (size_t i = 0; i < ARRAY_SIZE(vars); i++) {
		const char *v = env->val[vars[i]];
		char item[RW_STR_MAX];
		int n;

		if (!env->set[vars[i]] || !v[0])
			continue;
		/* NCCL_DEBUG=WARN (and VERSION) are what production runs with */
		if (vars[i] == NCCL_DEBUG && strcasecmp(v, "INFO") && strcasecmp(v, "TRACE"))
			continue;
		n = snprintf(item, sizeof(item), "%s%s=%.16s", len ? " " : "", var_names[vars[i]],
			     v);
		if (n > 0 && len + (size_t)n < sizeof(out)) {
			memcpy(out + len, item, (size_t)n + 1);
			len += (size_t)n;
		}
	}
	field_set_str(node, F_JOB_DEBUG_TUNING, out);
}

void nccl_apply(const struct nccl_env *env, struct node_model *m)
{
	struct object *node = &m->node;
	char prob[RW_STR_MAX] = "";
	bool *sel;
	int64_t v;

	if (!env->given) {
		for (int id = F_JOB_NCCL; id <= F_JOB_DEBUG_TUNING; id++)
			field_absent(node, (enum field_id)id, ABS_NOT_COLLECTED, 0);
		return;
	}
	sel = calloc(m->n_ports ? m->n_ports : 1, sizeof(*sel));
	if (!sel) {
		for (int id = F_JOB_NCCL; id <= F_JOB_DEBUG_TUNING; id++)
			field_absent(node, (enum field_id)id, ABS_ERROR, ENOMEM);
		return;
	}
	field_set_bool(node, F_JOB_NCCL, true);
	field_set_str(node, F_JOB_IB_HCA, env->set[NCCL_IB_HCA] ? env->val[NCCL_IB_HCA] : "");
	judge_ib_hca(env, m, sel, prob, sizeof(prob));
	field_set_str(node, F_JOB_IB_HCA_PROBLEM, prob);
	judge_socket_ifname(env, m, node);
	judge_gid_index(env, m, sel, node);
	judge_tc(env, node);
	/* NCCL reads these as integers: NCCL_IB_DISABLE=1 falls back to sockets */
	if (!env->set[NCCL_IB_DISABLE])
		field_set_bool(node, F_JOB_IB_DISABLE, false);
	else if (parse_i64(env->val[NCCL_IB_DISABLE], &v))
		field_absent(node, F_JOB_IB_DISABLE, ABS_ERROR, EINVAL);
	else
		field_set_bool(node, F_JOB_IB_DISABLE, v != 0);
	judge_gdr(env, node);
	if (!env->set[NCCL_CROSS_NIC])
		field_set_int(node, F_JOB_CROSS_NIC, 2); /* NCCL's default */
	else if (parse_i64(env->val[NCCL_CROSS_NIC], &v) || v < 0 || v > 2)
		field_absent(node, F_JOB_CROSS_NIC, ABS_ERROR, EINVAL);
	else
		field_set_int(node, F_JOB_CROSS_NIC, v);
	judge_debug(env, node);
	free(sel);
}
