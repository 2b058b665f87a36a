// SPDX-License-Identifier: MIT
/*
 * link: the netdev list and its basic attributes from rtnetlink, through
 * libnl-route-3.  A second socket subscribed to RTNLGRP_LINK and
 * RTNLGRP_IPV4_IFADDR tells the daemon to re-read configuration at once, so
 * an MTU change shows within one fast interval.
 *
 * With --sysfs-root at another tree (a fixture, another machine's copy)
 * the netdevs are that tree's class/net: this host's other netdevs would
 * mix with the tree's RDMA ports.  One this host has too (a test's veth
 * named as the tree's NIC) is read live, the others from the tree's sysfs;
 * and this host's netdevs that --netdev-include names are read too (asked
 * for by name: a netns test's veth beside the tree).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include "collector.h"
#include "netdev.h"
#include "nl.h"
#include "util.h"

/* One RTM_NEWLINK of a dump is ~2 KiB with its stats; the kernel fills what the buffer holds. */
#define LINK_RXBUF (64 * 1024)

struct link_priv {
	struct nl_sock *sk; /* requests */
	struct nl_sock *ev; /* notifications */
	struct nl_cache *links;
	struct nl_cache *addrs;
	int events;
	bool live;	      /* --sysfs-root is this machine's /sys */
	char net[PATH_MAX];   /* not live: ROOT/class/net */
	struct rw_nl raw;     /* RTM_GETLINK over libmnl: the carrier counts libnl does not parse */
	char route[PATH_MAX]; /* PROCFS/net/route: which netdev has the default route */
};

/* Per netdev, on obj->cpriv: the carrier rocewatch saw last, for the transitions it saw. */
struct link_dev {
	bool have;
	bool carrier;
	uint64_t seen;
	int64_t last_change; /* unix seconds, 0: none seen */
};

static const struct rw_nl_policy carrier_pol[IFLA_CARRIER_DOWN_COUNT + 1] = {
	RW_NL_U32(IFLA_CARRIER_CHANGES),
	RW_NL_U32(IFLA_CARRIER_UP_COUNT),
	RW_NL_U32(IFLA_CARRIER_DOWN_COUNT),
};
static const struct rw_nl_set carrier_set = RW_NL_SET("IFLA", carrier_pol);

int link_parse_carrier(const struct nlmsghdr *nlh, struct link_carrier *c, char *err, size_t errlen)
{
	const struct nlattr *tb[IFLA_CARRIER_DOWN_COUNT + 1];
	const struct ifinfomsg *ifi;
	int r;

	memset(c, 0, sizeof(*c));
	if (nlh->nlmsg_type != RTM_NEWLINK) {
		snprintf(err, errlen, "not an RTM_NEWLINK (type %u)", nlh->nlmsg_type);
		return -EBADMSG;
	}
	if (nlh->nlmsg_len < MNL_NLMSG_HDRLEN + sizeof(*ifi)) {
		snprintf(err, errlen, "RTM_NEWLINK: %u bytes, shorter than its ifinfomsg",
			 nlh->nlmsg_len);
		return -EBADMSG;
	}
	ifi = mnl_nlmsg_get_payload(nlh);
	c->ifindex = ifi->ifi_index;
	r = rw_nl_parse_msg(&carrier_set, nlh, sizeof(*ifi), tb, NULL, err, errlen);
	if (r)
		return r;
	/* IFLA_CARRIER_CHANGES since 3.15, the up/down counts since 4.16 */
	if (tb[IFLA_CARRIER_CHANGES]) {
		c->have_changes = true;
		c->changes = mnl_attr_get_u32(tb[IFLA_CARRIER_CHANGES]);
	}
	if (tb[IFLA_CARRIER_UP_COUNT] && tb[IFLA_CARRIER_DOWN_COUNT]) {
		c->have_updown = true;
		c->up = mnl_attr_get_u32(tb[IFLA_CARRIER_UP_COUNT]);
		c->down = mnl_attr_get_u32(tb[IFLA_CARRIER_DOWN_COUNT]);
	}
	return 0;
}

void link_fill_carrier(struct object *o, const struct link_carrier *c)
{
	if (c->have_changes)
		field_set_int(o, F_NETDEV_CARRIER_CHANGES, c->changes);
	else
		field_absent(o, F_NETDEV_CARRIER_CHANGES, ABS_UNSUPPORTED, EOPNOTSUPP);
	if (c->have_updown) {
		field_set_int(o, F_NETDEV_CARRIER_UP_COUNT, c->up);
		field_set_int(o, F_NETDEV_CARRIER_DOWN_COUNT, c->down);
	} else {
		field_absent(o, F_NETDEV_CARRIER_UP_COUNT, ABS_UNSUPPORTED, EOPNOTSUPP);
		field_absent(o, F_NETDEV_CARRIER_DOWN_COUNT, ABS_UNSUPPORTED, EOPNOTSUPP);
	}
}

static int on_link(const struct nlmsghdr *nlh, void *arg, char *err, size_t errlen)
{
	struct node_model *m = arg;
	struct link_carrier c;
	struct object *o;
	int r;

	r = link_parse_carrier(nlh, &c, err, errlen);
	if (r)
		return r;
	o = model_netdev_by_ifindex(m, c.ifindex);
	if (o)
		link_fill_carrier(o, &c);
	return 0;
}

/* The kernel's carrier counts for every netdev of m; absent with why when the dump fails. */
static void collect_carrier_counts(struct link_priv *lp, struct node_model *m)
{
	char req[MNL_NLMSG_HDRLEN + 32], err[192] = "";
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(req);
	struct ifinfomsg *ifi;
	int r = lp->raw.nl ? 0 : -ENOTCONN;

	if (!r) {
		nlh->nlmsg_type = RTM_GETLINK;
		nlh->nlmsg_flags = NLM_F_DUMP;
		ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
		ifi->ifi_family = AF_UNSPEC;
		r = rw_nl_exchange(&lp->raw, nlh, RTM_NEWLINK, on_link, m, err, sizeof(err));
	}
	if (!r)
		return;
	rw_log_once(LOG_LVL_WARN, "link:carrier", "link: carrier counts: %s%s%s", rw_strerror(-r),
		    err[0] ? ": " : "", err);
	for (size_t i = 0; i < m->n_netdevs; i++) {
		field_absent_errno(m->netdevs[i], F_NETDEV_CARRIER_CHANGES, r);
		field_absent_errno(m->netdevs[i], F_NETDEV_CARRIER_UP_COUNT, r);
		field_absent_errno(m->netdevs[i], F_NETDEV_CARRIER_DOWN_COUNT, r);
	}
}

/* A carrier transition rocewatch saw itself (poll to poll, or brought by a notification). */
static void note_carrier(struct object *o, struct link_dev *ld, bool carrier)
{
	struct timespec now;

	if (ld->have && ld->carrier != carrier) {
		clock_gettime(CLOCK_REALTIME, &now);
		ld->seen++;
		ld->last_change = now.tv_sec;
	}
	ld->have = true;
	ld->carrier = carrier;
	field_set_int(o, F_NETDEV_CARRIER_SEEN, (int64_t)ld->seen);
	if (ld->last_change)
		field_set_int(o, F_NETDEV_CARRIER_LAST_CHANGE, ld->last_change);
	else
		field_absent(o, F_NETDEV_CARRIER_LAST_CHANGE, ABS_NO_DATA, 0);
}

static int nl2errno(int nlerr)
{
	switch (-nlerr) {
	case NLE_PERM:
		return -EPERM;
	case NLE_NOMEM:
		return -ENOMEM;
	case NLE_OPNOTSUPP:
		return -EOPNOTSUPP;
	case NLE_OBJ_NOTFOUND:
		return -ENOENT;
	default:
		return -EIO;
	}
}

static int count_event(struct nl_msg *msg, void *arg)
{
	struct link_priv *lp = arg;

	(void)msg;
	lp->events++;
	return NL_OK;
}

static int link_init(struct collector_ctx *cc)
{
	struct link_priv *lp = calloc(1, sizeof(*lp));
	int r;

	char real[PATH_MAX];

	if (!lp)
		return -ENOMEM;
	cc->priv = lp;
	lp->live = realpath(cc->cfg->sysfs_root, real) && !strcmp(real, "/sys");
	if (!lp->live && (size_t)snprintf(lp->net, sizeof(lp->net), "%s/class/net",
					  cc->cfg->sysfs_root) >= sizeof(lp->net))
		return -ENAMETOOLONG;
	if ((size_t)snprintf(lp->route, sizeof(lp->route), "%s/net/route", cc->cfg->procfs_root) >=
	    sizeof(lp->route))
		return -ENAMETOOLONG;
	lp->sk = nl_socket_alloc();
	lp->ev = nl_socket_alloc();
	if (!lp->sk || !lp->ev)
		return -ENOMEM;
	r = nl_connect(lp->sk, NETLINK_ROUTE);
	if (r < 0) {
		snprintf(cc->detail, sizeof(cc->detail), "rtnetlink: %s", nl_geterror(r));
		return nl2errno(r);
	}
	r = rtnl_link_alloc_cache(lp->sk, AF_UNSPEC, &lp->links);
	if (r < 0) {
		snprintf(cc->detail, sizeof(cc->detail), "link cache: %s", nl_geterror(r));
		return nl2errno(r);
	}
	r = rw_nl_open(&lp->raw, NETLINK_ROUTE, LINK_RXBUF, 2000);
	if (r) /* the counts are absent then, with this reason */
		log_warn("link: no rtnetlink socket for carrier counts: %s", rw_strerror(-r));
	r = rtnl_addr_alloc_cache(lp->sk, &lp->addrs);
	if (r < 0)
		lp->addrs = NULL; /* addresses are a nicety; links are not */

	nl_socket_disable_seq_check(lp->ev);
	nl_socket_modify_cb(lp->ev, NL_CB_VALID, NL_CB_CUSTOM, count_event, lp);
	r = nl_connect(lp->ev, NETLINK_ROUTE);
	if (!r)
		r = nl_socket_add_memberships(lp->ev, RTNLGRP_LINK, RTNLGRP_IPV4_IFADDR, 0);
	if (!r)
		r = nl_socket_set_nonblocking(lp->ev);
	if (r < 0) {
		/* Without notifications the slow loop still catches changes. */
		log_warn("link: no rtnetlink notifications: %s", nl_geterror(r));
		nl_socket_free(lp->ev);
		lp->ev = NULL;
	}
	return 0;
}

static void link_fini(struct collector_ctx *cc)
{
	struct link_priv *lp = cc->priv;

	if (!lp)
		return;
	if (lp->links)
		nl_cache_free(lp->links);
	if (lp->addrs)
		nl_cache_free(lp->addrs);
	if (lp->sk)
		nl_socket_free(lp->sk);
	if (lp->ev)
		nl_socket_free(lp->ev);
	rw_nl_close(&lp->raw);
	free(lp);
	cc->priv = NULL;
}

static int link_event_fd(struct collector_ctx *cc)
{
	struct link_priv *lp = cc->priv;

	return lp && lp->ev ? nl_socket_get_fd(lp->ev) : -1;
}

static int link_event(struct collector_ctx *cc)
{
	struct link_priv *lp = cc->priv;
	int r;

	lp->events = 0;
	do {
		r = nl_recvmsgs_default(lp->ev);
	} while (r >= 0);
	/* -NLE_AGAIN ends the drain; an overrun (ENOBUFS) lost events: re-read anyway. */
	if (r != -NLE_AGAIN)
		return 1;
	return lp->events > 0;
}

struct fill_ctx {
	struct node_model *m;
	const struct rw_config *cfg;
	struct link_priv *lp;
	int idx;
};

static void append_name(char *buf, size_t size, const char *name)
{
	size_t len = strlen(buf);

	if (len && len + 1 < size) {
		buf[len++] = ',';
		buf[len] = '\0';
	}
	if (len < size)
		strlcpy0(buf + len, name, size - len);
}

static bool is_kind(struct rtnl_link *l, const char *kind)
{
	const char *t = rtnl_link_get_type(l);

	return t && !strcmp(t, kind);
}

static void fill_link(struct nl_object *obj, void *arg)
{
	struct fill_ctx *fc = arg;
	struct rtnl_link *l = (struct rtnl_link *)obj;
	const char *name = rtnl_link_get_name(l);
	char buf[RW_STR_MAX], lower[RW_STR_MAX] = "";
	struct object *o;
	int master, link;

	if (!name || (rtnl_link_get_flags(l) & IFF_LOOPBACK))
		return;
	if (!config_netdev_wanted(fc->cfg, name))
		return;
	o = model_add_netdev(fc->m, name);
	if (!o)
		return;
	o->seen = true;
	o->ifindex = rtnl_link_get_ifindex(l);
	field_set_int(o, F_NETDEV_IFINDEX, o->ifindex);
	field_set_int(o, F_NETDEV_MTU, rtnl_link_get_mtu(l));
	rtnl_link_operstate2str(rtnl_link_get_operstate(l), buf, sizeof(buf));
	field_set_str(o, F_NETDEV_OPERSTATE, buf);
	field_set_bool(o, F_NETDEV_CARRIER, rtnl_link_get_carrier(l) > 0);
	if (!o->cpriv[fc->idx])
		o->cpriv[fc->idx] = calloc(1, sizeof(struct link_dev));
	if (o->cpriv[fc->idx])
		note_carrier(o, o->cpriv[fc->idx], rtnl_link_get_carrier(l) > 0);
	else
		field_absent_errno(o, F_NETDEV_CARRIER_SEEN, -ENOMEM);
	field_set_str(o, F_NETDEV_KIND, rtnl_link_get_type(l) ? rtnl_link_get_type(l) : "device");

	master = rtnl_link_get_master(l);
	if (master > 0 && rtnl_link_i2name(fc->lp->links, master, buf, sizeof(buf)))
		field_set_str(o, F_NETDEV_MASTER, buf);
	else
		field_set_str(o, F_NETDEV_MASTER, "");

	/* Lower devices: IFLA_LINK of a vlan/macvlan/ipvlan (not a veth's peer) ... */
	link = rtnl_link_get_link(l);
	if (link > 0 && link != o->ifindex && !is_kind(l, "veth") &&
	    rtnl_link_i2name(fc->lp->links, link, buf, sizeof(buf)))
		append_name(lower, sizeof(lower), buf);
	/* ... and the ports enslaved to a bond, team or bridge. */
	for (struct nl_object *it = nl_cache_get_first(fc->lp->links); it;
	     it = nl_cache_get_next(it)) {
		struct rtnl_link *s = (struct rtnl_link *)it;

		if (rtnl_link_get_master(s) == o->ifindex && rtnl_link_get_name(s))
			append_name(lower, sizeof(lower), rtnl_link_get_name(s));
	}
	field_set_str(o, F_NETDEV_LOWER, lower);
	field_set_str(o, F_NETDEV_IPV4, "");
}

static void fill_addr(struct nl_object *obj, void *arg)
{
	struct fill_ctx *fc = arg;
	struct rtnl_addr *a = (struct rtnl_addr *)obj;
	struct object *o = model_netdev_by_ifindex(fc->m, rtnl_addr_get_ifindex(a));
	char buf[64], *slash;

	if (!o || rtnl_addr_get_family(a) != AF_INET || !rtnl_addr_get_local(a))
		return;
	nl_addr2str(rtnl_addr_get_local(a), buf, sizeof(buf));
	slash = strchr(buf, '/');
	if (slash)
		*slash = '\0';
	if (!o->f[F_NETDEV_IPV4].v.s[0])
		field_set_str(o, F_NETDEV_IPV4, buf);
	else {
		char list[RW_STR_MAX];

		strlcpy0(list, o->f[F_NETDEV_IPV4].v.s, sizeof(list));
		append_name(list, sizeof(list), buf);
		field_set_str(o, F_NETDEV_IPV4, list);
	}
}

/* One attribute file of a tree's netdev, without its newline; -errno. */
static int sysfs_attr(const char *dir, const char *name, char *buf, size_t len)
{
	char path[PATH_MAX];
	ssize_t got;
	size_t n;
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return -ENAMETOOLONG;
	fd = open_kfile_at(AT_FDCWD, path);
	if (fd < 0)
		return fd;
	got = read(fd, buf, len - 1);
	close(fd);
	if (got < 0)
		return -errno;
	n = (size_t)got;
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	buf[n] = '\0';
	return 0;
}

static void sysfs_int(struct object *o, enum field_id id, const char *dir, const char *name)
{
	char buf[64], *end;
	long long v;
	int r = sysfs_attr(dir, name, buf, sizeof(buf));

	if (r) {
		field_absent(o, id, absent_from_errno(r), -r);
		return;
	}
	v = strtoll(buf, &end, 0);
	if (end == buf || *end)
		field_absent(o, id, ABS_ERROR, EINVAL);
	else
		field_set_int(o, id, v);
}

/* The netdevs of another tree (--sysfs-root): class/net, as sysfs lays it out. */
static int collect_tree(struct collector_ctx *cc, struct link_priv *lp, struct node_model *m,
			struct fill_ctx *fc)
{
	DIR *dir = opendir(lp->net);
	struct dirent *de;
	char path[PATH_MAX], buf[64];

	if (!dir) {
		int err = errno;

		/* the end of the path says which tree */
		snprintf(cc->detail, sizeof(cc->detail), "%.100s: %s",
			 strlen(lp->net) > 100 ? lp->net + strlen(lp->net) - 100 : lp->net,
			 rw_strerror(err));
		return -err;
	}
	model_begin(m, OBJ_NETDEV);
	while ((de = readdir(dir))) {
		struct object *o;

		if (de->d_name[0] == '.' || !strcmp(de->d_name, "lo") ||
		    !config_netdev_wanted(cc->cfg, de->d_name) ||
		    (size_t)snprintf(path, sizeof(path), "%s/%s", lp->net, de->d_name) >=
			sizeof(path))
			continue;
		/* this host has it too: read it live, as without --sysfs-root */
		if (lp->links) {
			struct rtnl_link *l = rtnl_link_get_by_name(lp->links, de->d_name);

			if (l) {
				fill_link((struct nl_object *)l, fc);
				rtnl_link_put(l);
				continue;
			}
		}
		o = model_add_netdev(m, de->d_name);
		if (!o)
			break;
		o->seen = true;
		if (!sysfs_attr(path, "ifindex", buf, sizeof(buf)))
			o->ifindex = (int)strtol(buf, NULL, 10);
		sysfs_int(o, F_NETDEV_IFINDEX, path, "ifindex");
		sysfs_int(o, F_NETDEV_MTU, path, "mtu");
		if (!sysfs_attr(path, "operstate", buf, sizeof(buf)))
			field_set_str(o, F_NETDEV_OPERSTATE, buf);
		else
			field_absent(o, F_NETDEV_OPERSTATE, ABS_UNSUPPORTED, ENOENT);
		if (!sysfs_attr(path, "carrier", buf, sizeof(buf)))
			field_set_bool(o, F_NETDEV_CARRIER, !strcmp(buf, "1"));
		else
			field_absent(o, F_NETDEV_CARRIER, ABS_UNSUPPORTED, ENOENT);
		field_set_str(o, F_NETDEV_KIND, "device");
		field_set_str(o, F_NETDEV_MASTER, "");
		field_set_str(o, F_NETDEV_LOWER, "");
		/* addresses are not in sysfs: not collected, never "none" */
		field_absent(o, F_NETDEV_IPV4, ABS_NOT_COLLECTED, 0);
	}
	closedir(dir);
	/* this host's netdevs the operator named with --netdev-include (and not in the tree) */
	if (lp->links && cc->cfg->has_netdev_include) {
		for (struct nl_object *it = nl_cache_get_first(lp->links); it;
		     it = nl_cache_get_next(it)) {
			const char *name = rtnl_link_get_name((struct rtnl_link *)it);
			struct object *o = name ? model_netdev(m, name) : NULL;

			/* not already read from the tree this round */
			if (name && (!o || !o->seen))
				fill_link(it, fc);
		}
	}
	model_sweep(m, OBJ_NETDEV);
	return 0;
}

/*
 * The netdevs with an IPv4 default route in the main table, from
 * /proc/net/route (as the tree under --procfs-root lays it out too): the
 * management interface of a GPU node, whose RDMA device is not a rail.
 * Lines: Iface Destination Gateway Flags RefCnt Use Metric Mask ..., hex.
 */
static void collect_default_route(struct link_priv *lp, struct node_model *m)
{
	char *text = NULL, *line, *save = NULL;
	size_t len;
	int r = read_kfile_all(lp->route, &text, &len);

	for (size_t i = 0; i < m->n_netdevs; i++) {
		if (r)
			field_absent_errno(m->netdevs[i], F_NETDEV_DEFAULT_ROUTE, r);
		else
			field_set_bool(m->netdevs[i], F_NETDEV_DEFAULT_ROUTE, false);
	}
	if (r)
		return;
	line = strtok_r(text, "\n", &save);
	for (line = line ? strtok_r(NULL, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		char ifname[IFNAMSIZ + 1];
		unsigned long dst, gw, flags, mask;
		struct object *o;

		if (sscanf(line, "%16s %lx %lx %lx %*s %*s %*s %lx", ifname, &dst, &gw, &flags,
			   &mask) != 5)
			continue;
		/* RTF_UP; destination and mask 0: the default route */
		if (!(flags & 0x1) || dst || mask)
			continue;
		o = model_netdev(m, ifname);
		if (o)
			field_set_bool(o, F_NETDEV_DEFAULT_ROUTE, true);
	}
	free(text);
}

static int link_collect(struct collector_ctx *cc, struct node_model *m, unsigned what)
{
	struct link_priv *lp = cc->priv;
	struct fill_ctx fc = { .m = m, .cfg = cc->cfg, .lp = lp, .idx = cc->idx };
	int r;

	if (!(what & COLLECT_SLOW))
		return 0;
	r = nl_cache_refill(lp->sk, lp->links);
	if (!lp->live) {
		r = collect_tree(cc, lp, m, &fc);
		if (!r && lp->addrs && nl_cache_refill(lp->sk, lp->addrs) >= 0)
			nl_cache_foreach(lp->addrs, fill_addr, &fc);
		/* another tree's routes only from its own procfs: this host's would be wrong */
		if (!r && strcmp(cc->cfg->procfs_root, "/proc"))
			collect_default_route(lp, m);
		else if (!r)
			for (size_t i = 0; i < m->n_netdevs; i++)
				field_absent(m->netdevs[i], F_NETDEV_DEFAULT_ROUTE,
					     ABS_NOT_COLLECTED, 0);
		return r;
	}
	if (r < 0) {
		snprintf(cc->detail, sizeof(cc->detail), "link dump: %s", nl_geterror(r));
		return nl2errno(r);
	}
	model_begin(m, OBJ_NETDEV);
	nl_cache_foreach(lp->links, fill_link, &fc);
	model_sweep(m, OBJ_NETDEV);
	collect_carrier_counts(lp, m);
	if (lp->addrs && nl_cache_refill(lp->sk, lp->addrs) >= 0)
		nl_cache_foreach(lp->addrs, fill_addr, &fc);
	collect_default_route(lp, m);
	return 0;
}

const struct collector link_collector = {
	.name = "link",
	.source = SRC_LINK,
	.help = "netdevs: MTU, operstate, carrier, master/lower links (rtnetlink)",
	.default_enabled = true,
	.init = link_init,
	.collect = link_collect,
	.fini = link_fini,
	.event_fd = link_event_fd,
	.event = link_event,
	.obj_free = free,
};
