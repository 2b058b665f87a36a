// SPDX-License-Identifier: MIT
/*
 * qos_sysfs: the RoCE QoS facts that only files expose.  Slow loop only.
 *
 * Per netdev, under SYSFS/class/net/IF/ (MLNX_OFED mlx5_core en_sysfs.c, en_ecn.c):
 *   qos/trust                 "dscp" / "pcp"; replaces the trust dcb derived
 *   qos/dscp2prio             a header line, then "<dscp> <prio>" lines (the
 *                             format mlnx-tools' mlnx_qos reads back); replaces
 *                             the dcb APP-table map
 *   ecn/roce_{np,rp}/enable/N "0" / "1" per priority; an empty read means the
 *                             firmware query failed (the show() returns 0 bytes)
 *   ecn/roce_np/cnp_dscp, cnp_802p_prio, and the other roce_np / roce_rp
 *                             DCQCN parameters
 * Upstream mlx5 has none of those; its DCQCN parameters are in debugfs,
 * DEBUGFS/mlx5/<pci>/cc_params/ (drivers/infiniband/hw/mlx5/cong.c, "%d\n",
 * mode 0600: root only), found through the netdev's `device` link.
 *
 * Per RDMA port:
 *   CONFIGFS/rdma_cm/DEV/ports/P/default_roce_tos, default_roce_mode
 *       (drivers/infiniband/core/cma_configfs.c; exists only after someone
 *       made the DEV directory, e.g. cma_roce_tos)
 *   SYSFS/class/infiniband/DEV/tc/P/traffic_class
 *       (MLNX_OFED mlx5_ib: "Global tclass=N" when set, then per-destination
 *       rules; empty when no global class is set)
 *
 * rdma_port objects are made by the RDMA collectors, so this collector runs
 * after them in the table; a port that appears later is filled on the next
 * slow poll.  dcb runs before it, so the OFED trust and map win.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "netdev.h"
#include "util.h"

/* ---- text parsers ---- */

static const char *skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\r')
		s++;
	return s;
}

/* Base-10 on purpose: the map prints "dscp:07,08,09", which strtol(.., 0) reads as octal. */
static int parse_dec(const char **sp, unsigned int max, unsigned int *v)
{
	const char *s = *sp;
	unsigned long r = 0;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	while (*s >= '0' && *s <= '9') {
		r = r * 10 + (unsigned long)(*s++ - '0');
		if (r > max)
			return -ERANGE;
	}
	*v = (unsigned int)r;
	*sp = s;
	return 0;
}

static bool rest_blank(const char *s)
{
	return !*skip_ws(s);
}

int qos_parse_trust(const char *text, char *out, size_t len)
{
	const char *colon = strrchr(text, ':');
	const char *s = skip_ws(colon ? colon + 1 : text);
	size_t n = strcspn(s, " \t\r\n");

	/* some MLNX_OFED builds print "Priority trust state: dscp" */
	if (!rest_blank(s + n))
		return -EINVAL;
	if ((n == 3 && !strncmp(s, "pcp", 3)) || (n == 4 && !strncmp(s, "dscp", 4))) {
		snprintf(out, len, "%.*s", (int)n, s);
		return 0;
	}
	return -EINVAL;
}

/* "prio:P dscp:a,b,c," (as mlnx_qos prints the map, and some OFED-like drivers store it) */
static int parse_prio_line(const char *s, int8_t map[64], unsigned int *n)
{
	unsigned int prio, d;

	s += 5; /* "prio:" */
	if (parse_dec(&s, 7, &prio))
		return -ERANGE;
	s = skip_ws(s);
	if (strncmp(s, "dscp:", 5))
		return -EINVAL;
	s += 5;
	while (*(s = skip_ws(s))) {
		int r = parse_dec(&s, 63, &d);

		if (r)
			return r;
		map[d] = (int8_t)prio;
		(*n)++;
		s = skip_ws(s);
		if (*s == ',')
			s++;
		else if (*s)
			return -EINVAL;
	}
	return 0;
}

/* "<dscp> <prio>": what mlnx_qos's print_dscp2prio_sysfs() splits each line into */
static int parse_pair_line(const char *s, int8_t map[64], unsigned int *n)
{
	unsigned int d, prio;
	int r = parse_dec(&s, 63, &d);

	if (r)
		return r;
	s += strspn(s, " \t:,=");
	r = parse_dec(&s, 7, &prio);
	if (r)
		return r;
	if (!rest_blank(s))
		return -EINVAL;
	map[d] = (int8_t)prio;
	(*n)++;
	return 0;
}

int qos_parse_dscp2prio(const char *text, int8_t map[64])
{
	unsigned int n = 0;
	bool first = true;
	const char *line = text;

	memset(map, -1, 64);
	while (*line) {
		size_t len = strcspn(line, "\n");
		char buf[512];
		const char *s;
		int r = 0;

		if (len >= sizeof(buf))
			return -EINVAL;
		memcpy(buf, line, len);
		buf[len] = '\0';
		line += len + (line[len] == '\n');
		s = skip_ws(buf);
		if (!*s)
			continue;
		if (!strncmp(s, "prio:", 5))
			r = parse_prio_line(s, map, &n);
		else if (*s >= '0' && *s <= '9')
			r = parse_pair_line(s, map, &n);
		else if (!first)
			r = -EINVAL; /* only the first line may be a header */
		if (r)
			return r;
		first = false;
	}
	return n ? 0 : -ENODATA;
}

int qos_parse_tclass(const char *text, int64_t *tclass)
{
	static const char global[] = "Global tclass=";
	const char *line = text, *s;
	unsigned int v;

	while (*line) {
		size_t len = strcspn(line, "\n");
		char buf[256];

		if (len < sizeof(buf)) {
			memcpy(buf, line, len);
			buf[len] = '\0';
			s = skip_ws(buf);
			if (!strncmp(s, global, sizeof(global) - 1)) {
				s += sizeof(global) - 1;
				if (parse_dec(&s, 255, &v) || !rest_blank(s))
					return -EINVAL;
				*tclass = v;
				return 0;
			}
		}
		line += len + (line[len] == '\n');
	}
	/* older MLNX_OFED: the bare number */
	s = skip_ws(text);
	if (*s >= '0' && *s <= '9') {
		if (parse_dec(&s, 255, &v))
			return -EINVAL;
		s = skip_ws(s);
		if (*s && *s != '\n')
			return -EINVAL;
		*tclass = v;
		return 0;
	}
	/* empty, or only per-destination rules: no default class is set */
	return -ENODATA;
}

/* ---- file access ---- */

static int path_fmt(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int path_fmt(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/*
 * A small attribute file as text.  Empty is -ENODATA (an mlx5 show() that
 * failed returns 0 bytes); "N/A" is -EOPNOTSUPP.
 */
static int read_text(const char *path, char *buf, size_t len)
{
	int r = read_file_str(path, buf, len);

	if (r)
		return r;
	if (!buf[0])
		return -ENODATA;
	if (!strncmp(buf, "N/A", 3))
		return -EOPNOTSUPP;
	return 0;
}

static int read_int(const char *path, int64_t *v)
{
	char buf[64];
	const char *s;
	unsigned int u;
	int r = read_text(path, buf, sizeof(buf));

	if (r)
		return r;
	s = skip_ws(buf);
	r = parse_dec(&s, INT_MAX, &u);
	if (r || !rest_blank(s))
		return -EINVAL;
	*v = u;
	return 0;
}

/* ENOENT is "this node has no such file" and is never logged; the rest once per cause. */
static void note_err(const char *obj, const char *file, int err)
{
	char key[PATH_MAX + 64];

	if (err < 0)
		err = -err;
	if (err == ENOENT || err == EOPNOTSUPP)
		return;
	snprintf(key, sizeof(key), "qos_sysfs:%s:%s:%d", obj, file, err);
	rw_log_once(err == EACCES || err == EPERM ? LOG_LVL_INFO : LOG_LVL_WARN, key,
		    "qos_sysfs: %s: %s: %s", obj, file, rw_strerror(err));
}

static void absent(struct object *o, enum field_id id, int err, const char *file)
{
	field_absent_errno(o, id, err);
	note_err(o->name, file, err);
}

/* ---- netdev ---- */

static void read_trust(struct object *o, const char *base)
{
	char path[PATH_MAX], buf[128], trust[8];
	int r;

	if (path_fmt(path, sizeof(path), "%s/qos/trust", base))
		return;
	r = read_text(path, buf, sizeof(buf));
	if (r == -ENOENT)
		return; /* upstream: dcb's APP-table rule stands */
	if (!r)
		r = qos_parse_trust(buf, trust, sizeof(trust));
	if (r)
		absent(o, F_NETDEV_TRUST, r, "qos/trust");
	else
		field_set_str(o, F_NETDEV_TRUST, trust);
}

static void read_dscp2prio(struct object *o, const char *base)
{
	char path[PATH_MAX], buf[8192];
	int8_t map[64];
	int r;

	if (path_fmt(path, sizeof(path), "%s/qos/dscp2prio", base))
		return;
	r = read_text(path, buf, sizeof(buf));
	if (r == -ENOENT)
		return;
	if (!r)
		r = qos_parse_dscp2prio(buf, map);
	if (r)
		absent(o, F_NETDEV_DSCP_MAP, r, "qos/dscp2prio");
	else
		field_set_dscp_map(o, F_NETDEV_DSCP_MAP, map);
}

static void read_ecn_enable(struct object *o, const char *base, const char *role, enum field_id id)
{
	char path[PATH_MAX], rel[64];
	uint8_t set = 0;

	for (int p = 0; p < RW_PRIO_COUNT; p++) {
		int64_t v;
		int r;

		snprintf(rel, sizeof(rel), "ecn/roce_%s/enable/%d", role, p);
		r = path_fmt(path, sizeof(path), "%s/%s", base, rel);
		if (!r)
			r = read_int(path, &v);
		if (!r && v != 0 && v != 1)
			r = -EINVAL;
		if (r) {
			/* one unreadable priority makes the whole set unknown */
			absent(o, id, r, rel);
			return;
		}
		set |= (uint8_t)(v << p);
	}
	field_set_set(o, id, set);
}

/* Every regular file in dir holding an integer goes into the cc counter set as prefix+name. */
static int read_param_dir(struct object *o, const char *dir, const char *prefix, const char *rel)
{
	struct counter_set *cs = &o->cs[CSET_CC];
	char path[PATH_MAX], name[RW_CNAME_MAX], relf[PATH_MAX];
	struct dirent *de;
	DIR *dp = opendir(dir);

	if (!dp)
		return -errno;
	while ((de = readdir(dp))) {
		int64_t v;
		int r;

		if (de->d_name[0] == '.' || !strcmp(de->d_name, "enable"))
			continue;
		if (path_fmt(path, sizeof(path), "%s/%s", dir, de->d_name))
			continue;
		r = read_int(path, &v);
		if (r == -EISDIR)
			continue;
		if (r) {
			snprintf(relf, sizeof(relf), "%s/%s", rel, de->d_name);
			note_err(o->name, relf, r);
			continue;
		}
		if (strlen(prefix) + strlen(de->d_name) >= sizeof(name))
			continue; /* no mlx5 parameter name is anywhere near this long */
		memcpy(name, prefix, strlen(prefix));
		strcpy(name + strlen(prefix), de->d_name);
		cset_set(cs, name, (uint64_t)v);
	}
	closedir(dp);
	return 0;
}

/* The PCI address of the netdev's parent device: basename of the `device` link. */
static int netdev_pci(const char *base, char *pci, size_t len)
{
	char path[PATH_MAX], target[PATH_MAX];
	const char *slash;
	ssize_t n;

	if (path_fmt(path, sizeof(path), "%s/device", base))
		return -ENAMETOOLONG;
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return -errno; /* virtual devices (veth, bridge) have none */
	target[n] = '\0';
	slash = strrchr(target, '/');
	slash = slash ? slash + 1 : target;
	if (strlen(slash) >= len)
		return -ENAMETOOLONG;
	memcpy(pci, slash, strlen(slash) + 1);
	return 0;
}

/*
 * Upstream debugfs directories of congestion-control parameters, one per
 * driver, under DEBUGFS/<driver>/<pci>/, and the files that hold the CNP
 * DSCP and priority (NULL: the driver shows none).  Only directories the
 * driver creates for the PCI function exist, so the first found is its own.
 */
static const struct cc_dir {
	const char *fmt;
	const char *cnp_dscp, *cnp_prio;
} cc_dirs[] = {
	/* mlx5: drivers/infiniband/hw/mlx5/cong.c:44-67, 456 */
	{ "%s/mlx5/%s/cc_params", "np_cnp_dscp", "np_cnp_prio" },
	/*
	 * bnxt_re (7.2): debugfs.c:34-48, 493-512, "%d\n".  "alt" is Broadcom's
	 * word for the CNP: alt_vlan_dscp reads alt_tos_dscp (debugfs.c:176-181),
	 * which Broadcom's own out-of-tree configfs shows as cnp_dscp; alt_vlan_pcp
	 * its 802.1p priority.  enable_cc, tos_ecn, cc_mode go to roce_dcqcn_param.
	 */
	{ "%s/bnxt_re/%s/cc_config", "alt_vlan_dscp", "alt_vlan_pcp" },
	/* hns_roce (7.2): hns_roce_debugfs.c:136-184, 301-340: DCQCN rates, no CNP marking */
	{ "%s/hns_roce/%s/dcqcn_cc_param", NULL, NULL },
};

static void read_cnp(struct object *o, const char *base, const char *ccdir, int ccerr,
		     const struct cc_dir *cd)
{
	struct {
		enum field_id id;
		const char *ofed, *upstream;
	} cnp[] = {
		{ F_NETDEV_CNP_DSCP, "ecn/roce_np/cnp_dscp", cd ? cd->cnp_dscp : "np_cnp_dscp" },
		{ F_NETDEV_CNP_PRIO, "ecn/roce_np/cnp_802p_prio",
		  cd ? cd->cnp_prio : "np_cnp_prio" },
	};
	char path[PATH_MAX];

	for (size_t i = 0; i < ARRAY_SIZE(cnp); i++) {
		int64_t v;
		int r = path_fmt(path, sizeof(path), "%s/%s", base, cnp[i].ofed);

		if (!r)
			r = read_int(path, &v);
		if (r == -ENOENT) {
			/* upstream: the debugfs parameter, if that directory could be read */
			r = ccerr ? ccerr : cnp[i].upstream ? 0 : -ENOENT;
			if (!r && !path_fmt(path, sizeof(path), "%s/%s", ccdir, cnp[i].upstream))
				r = read_int(path, &v);
			if (r) {
				absent(o, cnp[i].id, r,
				       cnp[i].upstream ? cnp[i].upstream : "cnp (none in debugfs)");
				continue;
			}
		} else if (r) {
			absent(o, cnp[i].id, r, cnp[i].ofed);
			continue;
		}
		field_set_int(o, cnp[i].id, v);
	}
}

static void netdev_qos(const struct rw_config *cfg, struct object *o)
{
	char base[PATH_MAX], dir[PATH_MAX], ccdir[PATH_MAX] = "", pci[128];
	const struct cc_dir *cd = NULL;
	int r, ccerr;

	if (path_fmt(base, sizeof(base), "%s/class/net/%s", cfg->sysfs_root, o->name)) {
		/* nothing of this device can be read: none of its qos_sysfs facts stands */
		field_absent_source_errno(o, SRC_QOS_SYSFS, FIELDS_ALL, -ENAMETOOLONG);
		note_err(o->name, "sysfs path", ENAMETOOLONG);
		return;
	}
	read_trust(o, base);
	read_dscp2prio(o, base);
	read_ecn_enable(o, base, "np", F_NETDEV_ECN_NP);
	read_ecn_enable(o, base, "rp", F_NETDEV_ECN_RP);

	/* DCQCN parameters: MLNX_OFED sysfs, else upstream debugfs; names follow upstream's */
	cset_clear(&o->cs[CSET_CC]);
	if (!path_fmt(dir, sizeof(dir), "%s/ecn/roce_np", base))
		read_param_dir(o, dir, "np_", "ecn/roce_np");
	if (!path_fmt(dir, sizeof(dir), "%s/ecn/roce_rp", base))
		read_param_dir(o, dir, "rp_", "ecn/roce_rp");
	ccerr = netdev_pci(base, pci, sizeof(pci));
	for (size_t i = 0; !ccerr && i < ARRAY_SIZE(cc_dirs); i++) {
		const char *rel = strrchr(cc_dirs[i].fmt, '/') + 1;

		r = path_fmt(ccdir, sizeof(ccdir), cc_dirs[i].fmt, cfg->debugfs_root, pci);
		if (!r)
			r = read_param_dir(o, ccdir, "", rel);
		if (!r) {
			cd = &cc_dirs[i];
			break;
		}
		/* ENOENT: not this driver's; anything else (EACCES: not root) is the answer */
		if (r != -ENOENT || i + 1 == ARRAY_SIZE(cc_dirs))
			ccerr = r;
	}
	read_cnp(o, base, ccdir, ccerr, cd);
}

/* ---- rdma port ---- */

static void port_qos(const struct rw_config *cfg, struct object *o)
{
	char path[PATH_MAX], buf[4096], rel[128];
	int64_t v;
	int r;

	snprintf(rel, sizeof(rel), "rdma_cm/%s/ports/%u/default_roce_tos", o->name, o->port);
	r = path_fmt(path, sizeof(path), "%s/%s", cfg->configfs_root, rel);
	if (!r)
		r = read_int(path, &v);
	if (!r && v > 255)
		r = -ERANGE;
	if (r)
		absent(o, F_PORT_ROCE_TOS, r, rel);
	else
		field_set_int(o, F_PORT_ROCE_TOS, v);

	snprintf(rel, sizeof(rel), "rdma_cm/%s/ports/%u/default_roce_mode", o->name, o->port);
	r = path_fmt(path, sizeof(path), "%s/%s", cfg->configfs_root, rel);
	if (!r)
		r = read_text(path, buf, sizeof(buf));
	if (r)
		absent(o, F_PORT_ROCE_MODE, r, rel);
	else
		field_set_str(o, F_PORT_ROCE_MODE, buf); /* "RoCE v2", "IB/RoCE v1" */

	snprintf(rel, sizeof(rel), "class/infiniband/%s/tc/%u/traffic_class", o->name, o->port);
	r = path_fmt(path, sizeof(path), "%s/%s", cfg->sysfs_root, rel);
	if (!r)
		r = read_file_str(path, buf, sizeof(buf));
	if (!r)
		r = qos_parse_tclass(buf, &v);
	if (r == -ENODATA)
		/* the file is there but no global class is set: not a value, not an error */
		field_absent(o, F_PORT_TRAFFIC_CLASS, ABS_UNSUPPORTED, ENODATA);
	else if (r)
		absent(o, F_PORT_TRAFFIC_CLASS, r, rel);
	else
		field_set_int(o, F_PORT_TRAFFIC_CLASS, v);
}

static int qos_collect(struct collector_ctx *cc, struct node_model *m, unsigned int what)
{
	if (!(what & COLLECT_SLOW))
		return 0; /* configuration only: nothing here on the fast path */
	for (size_t i = 0; i < m->n_netdevs; i++)
		netdev_qos(cc->cfg, m->netdevs[i]);
	for (size_t i = 0; i < m->n_ports; i++)
		port_qos(cc->cfg, m->ports[i]);
	return 0;
}

const struct collector qos_sysfs_collector = {
	.name = "qos_sysfs",
	.source = SRC_QOS_SYSFS,
	.help = "MLNX_OFED qos/trust, dscp2prio, ECN enable and CNP settings; upstream debugfs "
		"cc_params; rdma_cm configfs ToS/mode; tc/N/traffic_class",
	.default_enabled = true,
	.collect = qos_collect,
};
