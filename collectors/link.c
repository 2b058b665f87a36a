// SPDX-License-Identifier: MIT
/*
 * link: the netdev list and its basic attributes from rtnetlink: one
 * RTM_GETLINK dump and one RTM_GETADDR dump per configuration poll, over
 * libmnl and src/core/nl.h's checked parsers like every other netlink
 * collector.  A second socket subscribed to RTNLGRP_LINK and
 * RTNLGRP_IPV4_IFADDR tells the daemon to re-read configuration at once, so
 * an MTU change shows within one fast interval.
 *
 * (libnl-route-3 did this once.  Its library constructors register every
 * link, qdisc and classifier type it knows at load, in every process:
 * about 0.6 MiB of resident memory with libnl-3, for a dump that takes a
 * hundred lines here.)
 *
 * With --sysfs-root at another tree (a fixture, another machine's copy)
 * the netdevs are that tree's class/net: this host's other netdevs would
 * mix with the tree's RDMA ports.  One this host has too (a test's veth
 * named as the tree's NIC) is read live, the others from the tree's sysfs;
 * and this host's netdevs that --netdev-include names are read too (asked
 * for by name: a netns test's veth beside the tree).
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/socket.h>

#include <linux/if.h> /* IF_OPER_*; after net/if.h, as linux/libc-compat.h asks */
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include "collector.h"
#include "netdev.h"
#include "nl.h"
#include "util.h"

/* One RTM_NEWLINK of a dump is ~2 KiB with its stats; the kernel fills what the buffer holds. */
#define LINK_RXBUF (64 * 1024)
/* Notifications: one RTM_NEWLINK, or an address, per message. */
#define LINK_EVBUF (16 * 1024)

struct link_priv {
	struct rw_nl nl;       /* the dumps */
	struct mnl_socket *ev; /* notifications, NULL without */
	char *evbuf;
	struct link_msg *links; /* the last RTM_GETLINK dump, in the kernel's order */
	size_t n_links, cap_links;
	bool live;	      /* --sysfs-root is this machine's /sys */
	char net[PATH_MAX];   /* not live: ROOT/class/net */
	char route[PATH_MAX]; /* PROCFS/net/route: which netdev has the default route */
};

/* Per netdev, on obj->cpriv: the carrier rocewatch saw last, for the transitions it saw. */
struct link_dev {
	bool have;
	bool carrier;
	uint64_t seen;
	int64_t last_change; /* unix seconds, 0: none seen */
};

static const struct rw_nl_policy linkinfo_pol[IFLA_INFO_KIND + 1] = {
	RW_NL_STR(IFLA_INFO_KIND, 32),
};
static const struct rw_nl_set linkinfo_set = RW_NL_SET("IFLA_INFO", linkinfo_pol);

static const struct rw_nl_policy link_pol[IFLA_CARRIER_DOWN_COUNT + 1] = {
	RW_NL_STR(IFLA_IFNAME, IFNAMSIZ),
	RW_NL_U32(IFLA_MTU),
	RW_NL_U32(IFLA_LINK),
	RW_NL_U32(IFLA_MASTER),
	RW_NL_U8(IFLA_OPERSTATE),
	RW_NL_NEST(IFLA_LINKINFO),
	RW_NL_U8(IFLA_CARRIER),
	RW_NL_U32(IFLA_CARRIER_CHANGES),
	RW_NL_U32(IFLA_CARRIER_UP_COUNT),
	RW_NL_U32(IFLA_CARRIER_DOWN_COUNT),
};
static const struct rw_nl_set link_set = RW_NL_SET("IFLA", link_pol);

int link_parse(const struct nlmsghdr *nlh, struct link_msg *l, char *err, size_t errlen)
{
	const struct nlattr *tb[IFLA_CARRIER_DOWN_COUNT + 1];
	const struct ifinfomsg *ifi;
	int r;

	memset(l, 0, sizeof(*l));
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
	l->ifindex = ifi->ifi_index;
	l->flags = ifi->ifi_flags;
	r = rw_nl_parse_msg(&link_set, nlh, sizeof(*ifi), tb, NULL, err, errlen);
	if (r)
		return r;
	if (tb[IFLA_IFNAME])
		strlcpy0(l->name, mnl_attr_get_str(tb[IFLA_IFNAME]), sizeof(l->name));
	if (tb[IFLA_MTU]) {
		l->have_mtu = true;
		l->mtu = mnl_attr_get_u32(tb[IFLA_MTU]);
	}
	if (tb[IFLA_OPERSTATE]) {
		l->have_operstate = true;
		l->operstate = mnl_attr_get_u8(tb[IFLA_OPERSTATE]);
	}
	l->carrier = tb[IFLA_CARRIER] && mnl_attr_get_u8(tb[IFLA_CARRIER]);
	if (tb[IFLA_MASTER])
		l->master = (int)mnl_attr_get_u32(tb[IFLA_MASTER]);
	if (tb[IFLA_LINK])
		l->link = (int)mnl_attr_get_u32(tb[IFLA_LINK]);
	if (tb[IFLA_LINKINFO]) {
		const struct nlattr *li[IFLA_INFO_KIND + 1];

		r = rw_nl_parse_nested(&linkinfo_set, tb[IFLA_LINKINFO], li, NULL, err, errlen);
		if (r)
			return r;
		if (li[IFLA_INFO_KIND])
			strlcpy0(l->kind, mnl_attr_get_str(li[IFLA_INFO_KIND]), sizeof(l->kind));
	}
	/* IFLA_CARRIER_CHANGES since 3.15, the up/down counts since 4.16 */
	if (tb[IFLA_CARRIER_CHANGES]) {
		l->have_changes = true;
		l->changes = mnl_attr_get_u32(tb[IFLA_CARRIER_CHANGES]);
	}
	if (tb[IFLA_CARRIER_UP_COUNT] && tb[IFLA_CARRIER_DOWN_COUNT]) {
		l->have_updown = true;
		l->up = mnl_attr_get_u32(tb[IFLA_CARRIER_UP_COUNT]);
		l->down = mnl_attr_get_u32(tb[IFLA_CARRIER_DOWN_COUNT]);
	}
	return 0;
}

void link_operstate_name(uint8_t operstate, char *buf, size_t len)
{
	/* RFC 2863 operStatus as the kernel's operstates[] (net/core/net-sysfs.c) spells it */
	static const char *const names[] = {
		[IF_OPER_UNKNOWN] = "unknown", [IF_OPER_NOTPRESENT] = "notpresent",
		[IF_OPER_DOWN] = "down",       [IF_OPER_LOWERLAYERDOWN] = "lowerlayerdown",
		[IF_OPER_TESTING] = "testing", [IF_OPER_DORMANT] = "dormant",
		[IF_OPER_UP] = "up",
	};

	if (operstate < ARRAY_SIZE(names) && names[operstate])
		strlcpy0(buf, names[operstate], len);
	else
		snprintf(buf, len, "0x%x", operstate);
}

void link_fill_carrier(struct object *o, const struct link_msg *c)
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
	struct link_priv *lp = arg;
	int r;

	if (lp->n_links == lp->cap_links) {
		size_t cap = lp->cap_links ? 2 * lp->cap_links : 16;
		struct link_msg *nl = realloc(lp->links, cap * sizeof(*nl));

		if (!nl)
			return -ENOMEM;
		lp->links = nl;
		lp->cap_links = cap;
	}
	r = link_parse(nlh, &lp->links[lp->n_links], err, errlen);
	if (r)
		return r;
	lp->n_links++;
	return 0;
}

/* This host's netdevs, into lp->links: 0 or -errno with detail saying why. */
static int dump_links(struct link_priv *lp, char *detail, size_t len)
{
	char req[MNL_NLMSG_HDRLEN + 32], err[192] = "";
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(req);
	struct ifinfomsg *ifi;
	int r;

	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_DUMP;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	lp->n_links = 0;
	r = rw_nl_exchange(&lp->nl, nlh, RTM_NEWLINK, on_link, lp, err, sizeof(err));
	if (r) {
		lp->n_links = 0;
		snprintf(detail, len, "link dump: %s%s%s", rw_strerror(-r), err[0] ? ": " : "",
			 err);
	}
	return r;
}

static const struct link_msg *link_by_index(const struct link_priv *lp, int ifindex)
{
	for (size_t i = 0; i < lp->n_links; i++)
		if (lp->links[i].ifindex == ifindex)
			return &lp->links[i];
	return NULL;
}

static const struct link_msg *link_by_name(const struct link_priv *lp, const char *name)
{
	for (size_t i = 0; i < lp->n_links; i++)
		if (!strcmp(lp->links[i].name, name))
			return &lp->links[i];
	return NULL;
}

/* The kernel's carrier counts for every netdev of m, from the dump just taken. */
static void collect_carrier_counts(struct link_priv *lp, struct node_model *m)
{
	for (size_t i = 0; i < lp->n_links; i++) {
		struct object *o = model_netdev_by_ifindex(m, lp->links[i].ifindex);

		if (o)
			link_fill_carrier(o, &lp->links[i]);
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

static int link_init(struct collector_ctx *cc)
{
	struct link_priv *lp = calloc(1, sizeof(*lp));
	char real[PATH_MAX];
	unsigned int groups = (1u << (RTNLGRP_LINK - 1)) | (1u << (RTNLGRP_IPV4_IFADDR - 1));
	int r;

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
	r = rw_nl_open(&lp->nl, NETLINK_ROUTE, LINK_RXBUF, 2000);
	if (r) {
		snprintf(cc->detail, sizeof(cc->detail), "rtnetlink: %s", rw_strerror(-r));
		return r;
	}
	lp->ev = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC | SOCK_NONBLOCK);
	lp->evbuf = lp->ev ? malloc(LINK_EVBUF) : NULL;
	if (!lp->ev || !lp->evbuf || mnl_socket_bind(lp->ev, groups, MNL_SOCKET_AUTOPID) < 0) {
		/* Without notifications the slow loop still catches changes. */
		log_warn("link: no rtnetlink notifications: %s",
			 rw_strerror(lp->evbuf ? errno : ENOMEM));
		if (lp->ev)
			mnl_socket_close(lp->ev);
		lp->ev = NULL;
		free(lp->evbuf);
		lp->evbuf = NULL;
	}
	return 0;
}

static void link_fini(struct collector_ctx *cc)
{
	struct link_priv *lp = cc->priv;

	if (!lp)
		return;
	if (lp->ev)
		mnl_socket_close(lp->ev);
	free(lp->evbuf);
	free(lp->links);
	rw_nl_close(&lp->nl);
	free(lp);
	cc->priv = NULL;
}

static int link_event_fd(struct collector_ctx *cc)
{
	struct link_priv *lp = cc->priv;

	return lp && lp->ev ? mnl_socket_get_fd(lp->ev) : -1;
}

/* 1 when a link or address notification arrived (or some were lost): re-read. */
static int link_event(struct collector_ctx *cc)
{
	struct link_priv *lp = cc->priv;

	return rw_nl_drain(mnl_socket_get_fd(lp->ev), lp->evbuf, LINK_EVBUF, RTM_BASE, UINT16_MAX) >
	       0;
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

static void fill_link(const struct link_msg *l, struct fill_ctx *fc)
{
	const struct link_msg *up;
	char buf[RW_STR_MAX], lower[RW_STR_MAX] = "";
	struct object *o;

	if (!l->name[0] || (l->flags & IFF_LOOPBACK))
		return;
	if (!config_netdev_wanted(fc->cfg, l->name))
		return;
	o = model_add_netdev(fc->m, l->name);
	if (!o)
		return;
	o->seen = true;
	o->ifindex = l->ifindex;
	field_set_int(o, F_NETDEV_IFINDEX, o->ifindex);
	if (l->have_mtu)
		field_set_int(o, F_NETDEV_MTU, l->mtu);
	else
		field_absent(o, F_NETDEV_MTU, ABS_UNSUPPORTED, EOPNOTSUPP);
	link_operstate_name(l->have_operstate ? l->operstate : IF_OPER_UNKNOWN, buf, sizeof(buf));
	field_set_str(o, F_NETDEV_OPERSTATE, buf);
	field_set_bool(o, F_NETDEV_CARRIER, l->carrier);
	if (!o->cpriv[fc->idx])
		o->cpriv[fc->idx] = calloc(1, sizeof(struct link_dev));
	if (o->cpriv[fc->idx])
		note_carrier(o, o->cpriv[fc->idx], l->carrier);
	else
		field_absent_errno(o, F_NETDEV_CARRIER_SEEN, -ENOMEM);
	field_set_str(o, F_NETDEV_KIND, l->kind[0] ? l->kind : "device");

	up = l->master > 0 ? link_by_index(fc->lp, l->master) : NULL;
	field_set_str(o, F_NETDEV_MASTER, up ? up->name : "");

	/* Lower devices: IFLA_LINK of a vlan/macvlan/ipvlan (not a veth's peer) ... */
	up = l->link > 0 && l->link != l->ifindex && strcmp(l->kind, "veth")
		 ? link_by_index(fc->lp, l->link)
		 : NULL;
	if (up)
		append_name(lower, sizeof(lower), up->name);
	/* ... and the ports enslaved to a bond, team or bridge. */
	for (size_t i = 0; i < fc->lp->n_links; i++)
		if (fc->lp->links[i].master == l->ifindex && fc->lp->links[i].name[0])
			append_name(lower, sizeof(lower), fc->lp->links[i].name);
	field_set_str(o, F_NETDEV_LOWER, lower);
	field_set_str(o, F_NETDEV_IPV4, "");
}

static const struct rw_nl_policy addr_pol[IFA_LOCAL + 1] = {
	RW_NL_STRUCT(IFA_ADDRESS, struct in_addr),
	RW_NL_STRUCT(IFA_LOCAL, struct in_addr),
};
static const struct rw_nl_set addr_set = RW_NL_SET("IFA", addr_pol);

/*
 * One IPv4 address of a netdev the model has: appended to its ipv4 list.
 * The local address (IFA_LOCAL), or IFA_ADDRESS where there is none, as
 * `ip -4 addr` shows it.
 */
static int on_addr(const struct nlmsghdr *nlh, void *arg, char *err, size_t errlen)
{
	struct fill_ctx *fc = arg;
	const struct nlattr *tb[IFA_LOCAL + 1];
	const struct ifaddrmsg *ifa;
	const struct nlattr *a;
	struct object *o;
	char buf[INET_ADDRSTRLEN];
	int r;

	if (nlh->nlmsg_len < MNL_NLMSG_HDRLEN + sizeof(*ifa)) {
		snprintf(err, errlen, "RTM_NEWADDR: %u bytes, shorter than its ifaddrmsg",
			 nlh->nlmsg_len);
		return -EBADMSG;
	}
	ifa = mnl_nlmsg_get_payload(nlh);
	if (ifa->ifa_family != AF_INET)
		return 0;
	r = rw_nl_parse_msg(&addr_set, nlh, sizeof(*ifa), tb, NULL, err, errlen);
	if (r)
		return r;
	a = tb[IFA_LOCAL] ? tb[IFA_LOCAL] : tb[IFA_ADDRESS];
	o = model_netdev_by_ifindex(fc->m, (int)ifa->ifa_index);
	if (!o || !a || !inet_ntop(AF_INET, mnl_attr_get_payload(a), buf, sizeof(buf)))
		return 0;
	if (!o->f[F_NETDEV_IPV4].v.s[0])
		field_set_str(o, F_NETDEV_IPV4, buf);
	else {
		char list[RW_STR_MAX];

		strlcpy0(list, o->f[F_NETDEV_IPV4].v.s, sizeof(list));
		append_name(list, sizeof(list), buf);
		field_set_str(o, F_NETDEV_IPV4, list);
	}
	return 0;
}

/* The IPv4 addresses of m's netdevs; "addresses are a nicety": a failed dump is said once. */
static void collect_addrs(struct link_priv *lp, struct fill_ctx *fc)
{
	char req[MNL_NLMSG_HDRLEN + 32], err[192] = "";
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(req);
	struct ifaddrmsg *ifa;
	int r;

	nlh->nlmsg_type = RTM_GETADDR;
	nlh->nlmsg_flags = NLM_F_DUMP;
	ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	ifa->ifa_family = AF_INET;
	r = rw_nl_exchange(&lp->nl, nlh, RTM_NEWADDR, on_addr, fc, err, sizeof(err));
	if (r)
		rw_log_once(LOG_LVL_WARN, "link:addr", "link: address dump: %s%s%s",
			    rw_strerror(-r), err[0] ? ": " : "", err);
	else
		rw_log_once_reset("link:addr");
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
		{
			const struct link_msg *l = link_by_name(lp, de->d_name);

			if (l) {
				fill_link(l, fc);
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
	if (cc->cfg->has_netdev_include) {
		for (size_t i = 0; i < lp->n_links; i++) {
			const char *name = lp->links[i].name;
			struct object *o = name[0] ? model_netdev(m, name) : NULL;

			/* not already read from the tree this round */
			if (name[0] && (!o || !o->seen))
				fill_link(&lp->links[i], fc);
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
	r = dump_links(lp, cc->detail, sizeof(cc->detail));
	if (!lp->live) {
		/* this host's links only help a tree (its names, --netdev-include) */
		if (r)
			cc->detail[0] = '\0';
		r = collect_tree(cc, lp, m, &fc);
		if (!r)
			collect_addrs(lp, &fc);
		/* another tree's routes only from its own procfs: this host's would be wrong */
		if (!r && strcmp(cc->cfg->procfs_root, "/proc"))
			collect_default_route(lp, m);
		else if (!r)
			for (size_t i = 0; i < m->n_netdevs; i++)
				field_absent(m->netdevs[i], F_NETDEV_DEFAULT_ROUTE,
					     ABS_NOT_COLLECTED, 0);
		return r;
	}
	if (r)
		return r;
	model_begin(m, OBJ_NETDEV);
	for (size_t i = 0; i < lp->n_links; i++)
		fill_link(&lp->links[i], &fc);
	model_sweep(m, OBJ_NETDEV);
	collect_carrier_counts(lp, m);
	collect_addrs(lp, &fc);
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
