// SPDX-License-Identifier: MIT
/*
 * rdma: RDMA devices and ports — state, physical state, rate, link layer,
 * netdev binding, node GUID, firmware —, the hw counters `rdma statistic`
 * shows, the classic IB port counters, and the GID table with its types.
 *
 * Sources, on the live machine (--sysfs-root is /sys):
 *   - RDMA netlink (NETLINK_RDMA, client RDMA_NL_NLDEV) through libmnl:
 *     RDMA_NLDEV_CMD_GET dump (devices), RDMA_NLDEV_CMD_PORT_GET dump per
 *     device (state, NDEV_INDEX/NDEV_NAME), and RDMA_NLDEV_CMD_STAT_GET,
 *     one request per port per fast poll, for the hw counters
 *     (drivers/infiniband/core/nldev.c: stat_get_doit_default_counter).
 *   - sysfs for what netlink does not carry: rate, link_layer, the classic
 *     counters/ (MAD PortCounters) and the GID table (gids/, gid_attrs/).
 * When RDMA netlink is missing (no RDMA stack: EPROTONOSUPPORT) or refuses,
 * and always when --sysfs-root points at another tree (a fixture), sysfs
 * alone is read: ports/P/{state,phys_state,rate,link_layer}, hw_counters/.
 *
 * Counter files stay open between polls and are re-read with pread() at
 * offset 0, as sysfs regenerates the text on every read.  Values are kept
 * raw: port_xmit_data/port_rcv_data count 4-byte words (the exporter scales
 * them), mlx5 queue counters are 32 bits wide and wrap — deltas are the
 * rules engine's job, which handles wraps and resets.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <rdma/rdma_netlink.h>

#include "collector.h"
#include "rdma.h"
#include "util.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

/* ---- netlink parsing ---- */

struct nla_rule {
	uint8_t known;
	uint8_t type;	  /* enum mnl_attr_data_type */
	uint16_t max_len; /* strings: longest payload accepted, NUL included */
};

/*
 * The attributes rocewatch reads, typed as nldev.c's nldev_policy types
 * them.  Everything else (CAP_FLAGS, DEV_PROTOCOL, PAD, attributes newer
 * than these headers) is skipped without a look.
 */
static const struct nla_rule nldev_rules[RDMA_NLDEV_ATTR_MAX] = {
	[RDMA_NLDEV_ATTR_DEV_INDEX] = { 1, MNL_TYPE_U32, 0 },
	[RDMA_NLDEV_ATTR_DEV_NAME] = { 1, MNL_TYPE_NUL_STRING, 64 }, /* IB_DEVICE_NAME_MAX */
	[RDMA_NLDEV_ATTR_PORT_INDEX] = { 1, MNL_TYPE_U32, 0 },
	[RDMA_NLDEV_ATTR_FW_VERSION] = { 1, MNL_TYPE_NUL_STRING, 64 }, /* IB_FW_VERSION_NAME_MAX */
	[RDMA_NLDEV_ATTR_NODE_GUID] = { 1, MNL_TYPE_U64, 0 },
	[RDMA_NLDEV_ATTR_PORT_STATE] = { 1, MNL_TYPE_U8, 0 },
	[RDMA_NLDEV_ATTR_PORT_PHYS_STATE] = { 1, MNL_TYPE_U8, 0 },
	[RDMA_NLDEV_ATTR_NDEV_INDEX] = { 1, MNL_TYPE_U32, 0 },
	[RDMA_NLDEV_ATTR_NDEV_NAME] = { 1, MNL_TYPE_NUL_STRING, IFNAMSIZ },
	[RDMA_NLDEV_ATTR_STAT_HWCOUNTERS] = { 1, MNL_TYPE_NESTED, 0 },
	[RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY] = { 1, MNL_TYPE_NESTED, 0 },
	[RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME] = { 1, MNL_TYPE_NUL_STRING, 256 },
	[RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE] = { 1, MNL_TYPE_U64, 0 },
};

struct attr_tb {
	const struct nlattr *a[RDMA_NLDEV_ATTR_MAX];
	const char *why;
};

static int check_attr(const struct nlattr *attr, struct attr_tb *tb)
{
	uint16_t type = mnl_attr_get_type(attr); /* masks NLA_F_NESTED */
	const struct nla_rule *r;

	if (type >= RDMA_NLDEV_ATTR_MAX || !nldev_rules[type].known)
		return 0;
	r = &nldev_rules[type];
	if (mnl_attr_validate(attr, (enum mnl_attr_data_type)r->type) < 0) {
		tb->why = "attribute of the wrong type or length";
		return -EBADMSG;
	}
	if (r->max_len && mnl_attr_get_payload_len(attr) > r->max_len) {
		tb->why = "string attribute too long";
		return -EBADMSG;
	}
	tb->a[type] = attr;
	return 0;
}

/*
 * Walk attributes in [start, start+len).  libmnl's mnl_attr_parse() stops
 * quietly at a truncated attribute; here bytes left over that do not form
 * a whole attribute reject the message.
 */
static int parse_attrs(const void *start, size_t len, struct attr_tb *tb)
{
	const struct nlattr *a = start;
	int rem = (int)len;

	memset(tb->a, 0, sizeof(tb->a));
	while (mnl_attr_ok(a, rem)) {
		int r = check_attr(a, tb);

		if (r)
			return r;
		rem -= MNL_ALIGN(a->nla_len);
		a = mnl_attr_next(a);
	}
	/* The last attribute may lack its alignment padding; anything more is a cut. */
	if (rem > 0) {
		tb->why = "truncated attribute";
		return -EBADMSG;
	}
	return 0;
}

static int parse_msg(const struct nlmsghdr *nlh, struct attr_tb *tb)
{
	if (nlh->nlmsg_len < MNL_NLMSG_HDRLEN) {
		tb->why = "message shorter than its header";
		return -EBADMSG;
	}
	return parse_attrs(mnl_nlmsg_get_payload(nlh), mnl_nlmsg_get_payload_len(nlh), tb);
}

static void copy_str(char *dst, size_t size, const struct nlattr *a)
{
	strlcpy0(dst, mnl_attr_get_str(a), size);
}

static int need(struct attr_tb *tb, int type, const char *why)
{
	if (tb->a[type])
		return 0;
	tb->why = why;
	return -EBADMSG;
}

int rdma_nl_parse_dev(const struct nlmsghdr *nlh, struct rdma_nl_dev *d, const char **why)
{
	struct attr_tb tb = { .why = NULL };
	int r = parse_msg(nlh, &tb);

	memset(d, 0, sizeof(*d));
	if (!r)
		r = need(&tb, RDMA_NLDEV_ATTR_DEV_INDEX, "device message without DEV_INDEX");
	if (!r)
		r = need(&tb, RDMA_NLDEV_ATTR_DEV_NAME, "device message without DEV_NAME");
	if (r) {
		*why = tb.why;
		return r;
	}
	d->index = mnl_attr_get_u32(tb.a[RDMA_NLDEV_ATTR_DEV_INDEX]);
	copy_str(d->name, sizeof(d->name), tb.a[RDMA_NLDEV_ATTR_DEV_NAME]);
	if (tb.a[RDMA_NLDEV_ATTR_PORT_INDEX])
		d->last_port = mnl_attr_get_u32(tb.a[RDMA_NLDEV_ATTR_PORT_INDEX]);
	if (tb.a[RDMA_NLDEV_ATTR_NODE_GUID]) {
		d->node_guid = mnl_attr_get_u64(tb.a[RDMA_NLDEV_ATTR_NODE_GUID]);
		d->has_guid = true;
	}
	/* nldev omits FW_VERSION for devices without firmware (rxe, siw). */
	if (tb.a[RDMA_NLDEV_ATTR_FW_VERSION]) {
		copy_str(d->fw, sizeof(d->fw), tb.a[RDMA_NLDEV_ATTR_FW_VERSION]);
		d->has_fw = d->fw[0] != '\0';
	}
	return 0;
}

int rdma_nl_parse_port(const struct nlmsghdr *nlh, struct rdma_nl_port *p, const char **why)
{
	struct attr_tb tb = { .why = NULL };
	int r = parse_msg(nlh, &tb);

	memset(p, 0, sizeof(*p));
	if (!r)
		r = need(&tb, RDMA_NLDEV_ATTR_DEV_INDEX, "port message without DEV_INDEX");
	if (!r)
		r = need(&tb, RDMA_NLDEV_ATTR_DEV_NAME, "port message without DEV_NAME");
	if (!r)
		r = need(&tb, RDMA_NLDEV_ATTR_PORT_INDEX, "port message without PORT_INDEX");
	if (r) {
		*why = tb.why;
		return r;
	}
	p->dev_index = mnl_attr_get_u32(tb.a[RDMA_NLDEV_ATTR_DEV_INDEX]);
	copy_str(p->dev_name, sizeof(p->dev_name), tb.a[RDMA_NLDEV_ATTR_DEV_NAME]);
	p->port = mnl_attr_get_u32(tb.a[RDMA_NLDEV_ATTR_PORT_INDEX]);
	if (tb.a[RDMA_NLDEV_ATTR_PORT_STATE]) {
		p->state = mnl_attr_get_u8(tb.a[RDMA_NLDEV_ATTR_PORT_STATE]);
		p->has_state = true;
	}
	if (tb.a[RDMA_NLDEV_ATTR_PORT_PHYS_STATE]) {
		p->phys_state = mnl_attr_get_u8(tb.a[RDMA_NLDEV_ATTR_PORT_PHYS_STATE]);
		p->has_phys_state = true;
	}
	/*
	 * fill_port_info() sends NDEV_INDEX/NDEV_NAME only when the port has a
	 * netdev and that netdev is in the requester's network namespace.
	 */
	if (tb.a[RDMA_NLDEV_ATTR_NDEV_INDEX] && tb.a[RDMA_NLDEV_ATTR_NDEV_NAME]) {
		p->ndev_index = mnl_attr_get_u32(tb.a[RDMA_NLDEV_ATTR_NDEV_INDEX]);
		copy_str(p->ndev_name, sizeof(p->ndev_name), tb.a[RDMA_NLDEV_ATTR_NDEV_NAME]);
		p->has_ndev = p->ndev_name[0] != '\0';
	}
	return 0;
}

int rdma_nl_parse_stat(const struct nlmsghdr *nlh, struct rdma_nl_stat *s, rdma_hw_cb cb, void *arg,
		       const char **why)
{
	struct attr_tb tb = { .why = NULL }, etb;
	const struct nlattr *table, *e;
	int r = parse_msg(nlh, &tb), rem;

	memset(s, 0, sizeof(*s));
	if (!r)
		r = need(&tb, RDMA_NLDEV_ATTR_DEV_INDEX, "statistic message without DEV_INDEX");
	if (!r)
		r = need(&tb, RDMA_NLDEV_ATTR_PORT_INDEX, "statistic message without PORT_INDEX");
	if (!r)
		r = need(&tb, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS,
			 "statistic message without HWCOUNTERS");
	if (r) {
		*why = tb.why;
		return r;
	}
	s->dev_index = mnl_attr_get_u32(tb.a[RDMA_NLDEV_ATTR_DEV_INDEX]);
	s->port = mnl_attr_get_u32(tb.a[RDMA_NLDEV_ATTR_PORT_INDEX]);
	if (tb.a[RDMA_NLDEV_ATTR_DEV_NAME])
		copy_str(s->dev_name, sizeof(s->dev_name), tb.a[RDMA_NLDEV_ATTR_DEV_NAME]);

	/* The table repeats HWCOUNTER_ENTRY nests; each holds a NAME and a VALUE. */
	table = tb.a[RDMA_NLDEV_ATTR_STAT_HWCOUNTERS];
	e = mnl_attr_get_payload(table);
	rem = (int)mnl_attr_get_payload_len(table);
	while (mnl_attr_ok(e, rem)) {
		if (mnl_attr_get_type(e) == RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY) {
			etb.why = NULL;
			if (mnl_attr_validate(e, MNL_TYPE_NESTED) < 0) {
				*why = "counter entry is not a nest";
				return -EBADMSG;
			}
			r = parse_attrs(mnl_attr_get_payload(e), mnl_attr_get_payload_len(e), &etb);
			if (!r)
				r = need(&etb, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME,
					 "counter entry without a name");
			if (!r)
				r = need(&etb, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE,
					 "counter entry without a value");
			if (r) {
				*why = etb.why;
				return r;
			}
			s->counters++;
			if (cb) {
				r = cb(arg,
				       mnl_attr_get_str(
					   etb.a[RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME]),
				       mnl_attr_get_u64(
					   etb.a[RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE]));
				if (r < 0) {
					*why = "counter callback failed";
					return r;
				}
			}
		}
		rem -= MNL_ALIGN(e->nla_len);
		e = mnl_attr_next(e);
	}
	if (rem > 0) {
		*why = "truncated counter table";
		return -EBADMSG;
	}
	return 0;
}

/* NLMSGERR_ATTR_MSG of an extended ACK, when the kernel sent one. */
static void ext_ack_msg(const struct nlmsghdr *nlh, char *out, size_t size)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	size_t plen = mnl_nlmsg_get_payload_len(nlh), off = sizeof(*e);
	const struct nlattr *a;
	int rem;

	out[0] = '\0';
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	/* Without NLM_F_CAPPED the request's payload is echoed before the TLVs. */
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED)) {
		if (e->msg.nlmsg_len < sizeof(struct nlmsghdr))
			return;
		off += NLMSG_ALIGN(e->msg.nlmsg_len - sizeof(struct nlmsghdr));
	}
	if (off >= plen)
		return;
	a = (const struct nlattr *)((const char *)e + off);
	rem = (int)(plen - off);
	for (; mnl_attr_ok(a, rem); rem -= MNL_ALIGN(a->nla_len), a = mnl_attr_next(a)) {
		if (mnl_attr_get_type(a) == NLMSGERR_ATTR_MSG &&
		    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0) {
			strlcpy0(out, mnl_attr_get_str(a), size);
			rstrip(out);
			return;
		}
	}
}

int rdma_nl_walk(struct rdma_nl_walk *w, const void *buf, size_t len)
{
	const struct nlmsghdr *nlh = buf;
	int rem = (int)len, r;

	w->why = NULL;
	while (mnl_nlmsg_ok(nlh, rem)) {
		if (nlh->nlmsg_seq != w->seq ||
		    (w->portid && nlh->nlmsg_pid && nlh->nlmsg_pid != w->portid))
			goto next; /* a late answer to an earlier, abandoned request */
		switch (nlh->nlmsg_type) {
		case NLMSG_NOOP:
			break;
		case NLMSG_OVERRUN:
			return -ENOBUFS;
		case NLMSG_ERROR: {
			const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);

			if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*e)) {
				w->why = "truncated NLMSG_ERROR";
				return -EBADMSG;
			}
			if (!e->error)
				return 1; /* ACK */
			ext_ack_msg(nlh, w->ext_ack, sizeof(w->ext_ack));
			return e->error < 0 ? e->error : -e->error;
		}
		case NLMSG_DONE:
			/* netlink_dump() puts the dump's own error, if any, after the header. */
			if (mnl_nlmsg_get_payload_len(nlh) >= sizeof(int)) {
				int err;

				memcpy(&err, mnl_nlmsg_get_payload(nlh), sizeof(err));
				if (err < 0)
					return err;
			}
			return 1;
		default:
			if (nlh->nlmsg_type != w->type) {
				w->why = "unexpected message type";
				return -EBADMSG;
			}
			r = w->msg(nlh, w->arg);
			if (r < 0)
				return r;
			if (!(nlh->nlmsg_flags & NLM_F_MULTI))
				return 1;
		}
	next:
		nlh = mnl_nlmsg_next(nlh, &rem);
	}
	if (rem > 0) {
		w->why = "truncated message";
		return -EBADMSG;
	}
	return 0;
}

/* ---- sysfs texts ---- */

/* drivers/infiniband/core/sysfs.c: state_show() and phys_state_to_str(). */
const char *rdma_port_state_name(unsigned int state)
{
	static const char *const names[] = { "NOP",   "DOWN",	"INIT",
					     "ARMED", "ACTIVE", "ACTIVE_DEFER" };

	return state < ARRAY_SIZE(names) ? names[state] : "UNKNOWN";
}

const char *rdma_phys_state_name(unsigned int state)
{
	static const char *const names[] = { "<unknown>",
					     "Sleep",
					     "Polling",
					     "Disabled",
					     "PortConfigurationTraining",
					     "LinkUp",
					     "LinkErrorRecovery",
					     "Phy Test" };

	return state < ARRAY_SIZE(names) ? names[state] : "<unknown>";
}

int rdma_parse_state(const char *text, char *out, size_t size)
{
	const char *colon = strchr(text, ':');
	size_t len;
	char *end;

	if (!colon)
		return -EINVAL;
	strtoul(text, &end, 10);
	if (end == text || end != colon)
		return -EINVAL;
	colon++;
	while (*colon == ' ')
		colon++;
	if (!*colon || !size)
		return -EINVAL;
	/* out may be text itself: move, not copy. */
	len = strlen(colon);
	if (len >= size)
		len = size - 1;
	memmove(out, colon, len);
	out[len] = '\0';
	rstrip(out);
	return 0;
}

/*
 * rate_show() prints "%d%s Gb/sec (%dX%s)" with ".5" as the only fraction
 * (2.5 Gb/s SDR lanes); any decimal is accepted here.
 */
int rdma_parse_rate(const char *text, int64_t *mbps)
{
	char *end;
	double gbps;

	errno = 0;
	gbps = strtod(text, &end);
	if (errno || end == text || gbps < 0 || gbps > 1e6 || strncmp(end, " Gb/sec", 7))
		return -EINVAL;
	*mbps = (int64_t)(gbps * 1000.0 + 0.5);
	return 0;
}

void rdma_format_guid(uint64_t guid, char *out, size_t size)
{
	snprintf(out, size, "%04x:%04x:%04x:%04x", (unsigned)(guid >> 48) & 0xffff,
		 (unsigned)(guid >> 32) & 0xffff, (unsigned)(guid >> 16) & 0xffff,
		 (unsigned)guid & 0xffff);
}

bool rdma_gid_ipv4(const char *gid, uint32_t *v4)
{
	struct in6_addr a;

	/* sysfs prints GIDs as eight 4-digit groups, which inet_pton accepts. */
	if (inet_pton(AF_INET6, gid, &a) != 1 || !IN6_IS_ADDR_V4MAPPED(&a))
		return false;
	if (v4)
		memcpy(v4, &a.s6_addr[12], 4);
	return true;
}

bool rdma_gid_is_zero(const char *gid)
{
	struct in6_addr a;

	return inet_pton(AF_INET6, gid, &a) == 1 && IN6_IS_ADDR_UNSPECIFIED(&a);
}

/*
 * drivers/infiniband/core/cache.c prints "IB/RoCE v1" for both IB and RoCE
 * v1 GIDs (user-space compatibility); the link layer tells them apart.
 */
void rdma_gid_type_name(const char *sysfs_type, const char *link_layer, char *out, size_t size)
{
	if (!strcmp(sysfs_type, "IB/RoCE v1"))
		strlcpy0(out, link_layer && !strcmp(link_layer, "InfiniBand") ? "IB" : "RoCE v1",
			 size);
	else
		strlcpy0(out, sysfs_type, size);
}

int rdma_rocev2_ipv4_index(const struct gid_table *t, const char *netdev, const char *addrs)
{
	int best = -ENOENT;
	char list[RW_STR_MAX], *save = NULL, *tok;

	for (size_t i = 0; i < t->n; i++) {
		const struct gid_entry *g = &t->e[i];

		if (strcmp(g->type, "RoCE v2") || strcmp(g->netdev, netdev) ||
		    !rdma_gid_ipv4(g->gid, NULL))
			continue;
		if (best < 0 || g->index < (uint32_t)best)
			best = (int)g->index;
	}
	if (best < 0 || !addrs || !*addrs)
		return best;
	/* Several addresses: NCCL picks by address family and subnet; prefer the first address. */
	strlcpy0(list, addrs, sizeof(list));
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		struct in_addr want;

		if (inet_pton(AF_INET, tok, &want) != 1)
			continue;
		for (size_t i = 0; i < t->n; i++) {
			const struct gid_entry *g = &t->e[i];
			uint32_t v4;

			if (!strcmp(g->type, "RoCE v2") && !strcmp(g->netdev, netdev) &&
			    rdma_gid_ipv4(g->gid, &v4) && v4 == want.s_addr)
				return (int)g->index;
		}
	}
	return best;
}

/* ---- collector state ---- */

struct cfile {
	int fd;
	int slot; /* its index in the counter set at the last read, -1 before */
	bool bad; /* unreadable or not a number ("N/A (no PMA)"): skipped until rescanned */
	char name[RW_CNAME_MAX];
};

/*
 * Set a counter, trying the slot it had at the last poll first: the kernel
 * lists counters in the same order every time, so the name search of
 * cset_set() is skipped on the fast path.
 */
static int cset_put(struct counter_set *cs, int *slot, const char *name, uint64_t v)
{
	int i = *slot;

	if (i < 0 || (uint32_t)i >= cs->n || strcmp(cs->names[i], name)) {
		i = cset_set(cs, name, v);
		if (i < 0)
			return i;
		*slot = i;
		return 0;
	}
	cs->vals[i] = v;
	cs->present[i] = 1;
	return 0;
}

struct cdir {
	struct cfile *f;
	uint32_t n;
	dev_t dev; /* the directory the files were opened in */
	ino_t ino;
};

/* Per port, on obj->cpriv[idx]; freed by rdma_obj_free. */
struct port_priv {
	uint32_t dev_index; /* RDMA netlink device index */
	bool hw_nl;	    /* hw counters over RDMA_NLDEV_CMD_STAT_GET */
	bool gone;	    /* a counter read said ENODEV: the device went away */
	struct cdir hw;	    /* hw_counters/, when not over netlink */
	struct cdir pc;	    /* counters/ */
	struct cdir pe;	    /* counters_ext/ (mlx4), preferred over counters/ */
};

struct rdma_priv {
	struct mnl_socket *nl; /* NULL: sysfs only */
	uint32_t portid, seq;
	bool live; /* sysfs_root is this machine's /sys */
	char *buf; /* receive buffer */
	size_t buflen;
	/* Roots leave room for a device, a port and a file in a PATH_MAX path. */
	char ib[PATH_MAX - 1024];  /* <sysfs>/class/infiniband */
	char net[PATH_MAX - 1024]; /* <sysfs>/class/net */
};

static void cdir_close(struct cdir *d)
{
	for (uint32_t i = 0; i < d->n; i++)
		if (d->f[i].fd >= 0)
			close(d->f[i].fd);
	free(d->f);
	d->f = NULL;
	d->n = 0;
	d->dev = 0;
	d->ino = 0;
}

static void rdma_obj_free(void *cpriv)
{
	struct port_priv *pp = cpriv;

	cdir_close(&pp->hw);
	cdir_close(&pp->pc);
	cdir_close(&pp->pe);
	free(pp);
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct cfile *)a)->name, ((const struct cfile *)b)->name);
}

/*
 * List a counter directory and keep its files open.  The open set is kept
 * when the names did not change, so a slow poll costs one readdir.  The
 * sysfs hw_counters/ directory also holds "lifespan", the kernel's cache
 * time of the values in milliseconds (core/sysfs.c), not a counter: skipped
 * so that the set equals what `rdma statistic` shows.
 */
static int cdir_scan(struct cdir *d, const char *path, const char *what)
{
	struct cfile *nf = NULL;
	uint32_t n = 0, cap = 0;
	struct dirent *de;
	DIR *dir = opendir(path);
	struct stat st;
	bool same;
	int dfd;

	if (!dir) {
		int e = -errno;

		cdir_close(d);
		return e == -ENOENT ? 0 : e;
	}
	dfd = dirfd(dir);
	if (fstat(dfd, &st))
		memset(&st, 0, sizeof(st));
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.' || !strcmp(de->d_name, "lifespan"))
			continue;
		if (strlen(de->d_name) >= RW_CNAME_MAX) {
			rw_log_once(LOG_LVL_WARN, de->d_name,
				    "rdma: %s/%s: counter name too long; skipped", path,
				    de->d_name);
			continue;
		}
		if (n == cap) {
			uint32_t nc = cap ? cap * 2 : 64;
			struct cfile *t = realloc(nf, nc * sizeof(*t));

			if (!t) {
				free(nf);
				closedir(dir);
				return -ENOMEM;
			}
			nf = t;
			cap = nc;
		}
		strlcpy0(nf[n].name, de->d_name, sizeof(nf[n].name));
		nf[n].fd = -1;
		nf[n].slot = -1;
		nf[n].bad = false;
		n++;
	}
	if (n > 1)
		qsort(nf, n, sizeof(*nf), cmp_name);
	/*
	 * A device unregistered and registered again under the same name (a
	 * reset) has new files with the old names: a new directory inode.
	 */
	same = n == d->n && st.st_dev == d->dev && st.st_ino == d->ino;
	for (uint32_t i = 0; same && i < n; i++)
		same = !strcmp(nf[i].name, d->f[i].name);
	if (same) {
		/* Same files: keep the descriptors, forget past read failures. */
		for (uint32_t i = 0; i < n; i++)
			d->f[i].bad = d->f[i].fd < 0;
		free(nf);
		closedir(dir);
		return 0;
	}
	cdir_close(d);
	for (uint32_t i = 0; i < n; i++) {
		nf[i].fd = openat(dfd, nf[i].name, O_RDONLY | O_CLOEXEC);
		if (nf[i].fd < 0) {
			nf[i].bad = true;
			rw_log_once(LOG_LVL_INFO, path,
				    "rdma: %s/%s: %s; that %s counter is dropped", path, nf[i].name,
				    strerror(errno), what);
		}
	}
	closedir(dir);
	d->f = nf;
	d->n = n;
	d->dev = st.st_dev;
	d->ino = st.st_ino;
	return 0;
}

/*
 * mlx4 (older kernels, MLNX_OFED) has the 64-bit PortCountersExtended in
 * counters_ext/ beside the 32-bit counters/, which saturate at 2^32-1 on a
 * busy port.  Read after counters/, each replaces the counter it extends.
 */
static const char *ext_counter_name(const char *file)
{
	static const char *const map[][2] = {
		{ "port_xmit_data_64", "port_xmit_data" },
		{ "port_rcv_data_64", "port_rcv_data" },
		{ "port_xmit_packets_64", "port_xmit_packets" },
		{ "port_rcv_packets_64", "port_rcv_packets" },
		{ "port_unicast_xmit_packets", "unicast_xmit_packets" },
		{ "port_unicast_rcv_packets", "unicast_rcv_packets" },
		{ "port_multicast_xmit_packets", "multicast_xmit_packets" },
		{ "port_multicast_rcv_packets", "multicast_rcv_packets" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(map); i++)
		if (!strcmp(file, map[i][0]))
			return map[i][1];
	return file;
}

/* Re-read every kept file; a file that fails drops only its own counter. */
static int cdir_read(struct cdir *d, struct counter_set *cs, const char *dev, uint32_t port,
		     const char *what)
{
	bool ext = !strcmp(what, "counters_ext");

	for (uint32_t i = 0; i < d->n; i++) {
		struct cfile *f = &d->f[i];
		uint64_t v;
		int r;

		if (f->bad)
			continue;
		r = pread_u64(f->fd, &v);
		if (!r) {
			if (cset_put(cs, &f->slot, ext ? ext_counter_name(f->name) : f->name, v) <
			    0)
				return -ENOMEM;
			continue;
		}
		if (r == -ENODEV)
			return r; /* the device was unregistered under us */
		f->bad = true;
		{
			char key[160];

			snprintf(key, sizeof(key), "rdma:%s/%u/%s/%s", dev, port, what, f->name);
			rw_log_once(
			    LOG_LVL_INFO, key, "rdma: %s/%u: %s/%s: %s; that counter is dropped",
			    dev, port, what, f->name,
			    r == -EINVAL ? "not a number (N/A, no PMA) or EINVAL" : strerror(-r));
		}
	}
	return 0;
}

/* ---- netlink I/O ---- */

static void nl_close(struct rdma_priv *rp)
{
	if (rp->nl)
		mnl_socket_close(rp->nl);
	rp->nl = NULL;
}

static int nl_open(struct rdma_priv *rp)
{
	struct timeval tv = { .tv_sec = 1 };
	int one = 1, fd;

	rp->nl = mnl_socket_open2(NETLINK_RDMA, SOCK_CLOEXEC);
	if (!rp->nl)
		return -errno;
	fd = mnl_socket_get_fd(rp->nl);
	/* The kernel's own error text (extended ACK) reaches the log. */
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	/* A reply never takes a second; never hang a poll on one. */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (mnl_socket_bind(rp->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		int e = -errno;

		nl_close(rp);
		return e;
	}
	rp->portid = mnl_socket_get_portid(rp->nl);
	return 0;
}

/* Send one NLDEV request and feed the replies to msg() until complete. */
static int nl_request(struct rdma_priv *rp, uint8_t cmd, uint16_t flags, uint32_t dev_index,
		      uint32_t port, int (*msg)(const struct nlmsghdr *, void *), void *arg,
		      char *err, size_t errlen)
{
	char req[MNL_NLMSG_HDRLEN + 64];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(req);
	struct rdma_nl_walk w = { .portid = rp->portid, .msg = msg, .arg = arg };
	int r;

	nlh->nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd);
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = w.seq = ++rp->seq;
	w.type = nlh->nlmsg_type;
	if (dev_index != UINT32_MAX)
		mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, dev_index);
	if (port)
		mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_PORT_INDEX, port);
	if (mnl_socket_sendto(rp->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(rp->nl, rp->buf, rp->buflen);

		if (n < 0) {
			r = errno == EAGAIN || errno == EWOULDBLOCK ? -ETIMEDOUT : -errno;
			break;
		}
		r = rdma_nl_walk(&w, rp->buf, (size_t)n);
		if (r)
			break;
	}
	if (r < 0 && err)
		snprintf(err, errlen, "%s",
			 w.ext_ack[0] ? w.ext_ack
			 : w.why      ? w.why
				      : strerror(-r));
	return r < 0 ? r : 0;
}

/* ---- one collection ---- */

struct found_port {
	char dev[RW_NAME_MAX];
	uint32_t port;
	uint32_t dev_index;
	bool nl;
	/* from netlink */
	struct rdma_nl_port np;
	uint64_t guid;
	bool has_guid;
	char fw[RW_STR_MAX];
	bool has_fw;
};

struct found {
	struct found_port *p;
	size_t n, cap;
	struct rdma_nl_dev *d;
	size_t nd, capd;
	const char *why;
};

static int grow(void **arr, size_t *cap, size_t n, size_t elem)
{
	void *t;
	size_t nc;

	if (n < *cap)
		return 0;
	nc = *cap ? *cap * 2 : 8;
	t = realloc(*arr, nc * elem);
	if (!t)
		return -ENOMEM;
	*arr = t;
	*cap = nc;
	return 0;
}

static int on_dev(const struct nlmsghdr *nlh, void *arg)
{
	struct found *f = arg;
	int r;

	if (grow((void **)&f->d, &f->capd, f->nd, sizeof(*f->d)))
		return -ENOMEM;
	r = rdma_nl_parse_dev(nlh, &f->d[f->nd], &f->why);
	if (r)
		return r;
	f->nd++;
	return 0;
}

static int on_port(const struct nlmsghdr *nlh, void *arg)
{
	struct found *f = arg;
	struct found_port *fp;
	int r;

	if (grow((void **)&f->p, &f->cap, f->n, sizeof(*f->p)))
		return -ENOMEM;
	fp = &f->p[f->n];
	memset(fp, 0, sizeof(*fp));
	r = rdma_nl_parse_port(nlh, &fp->np, &f->why);
	if (r)
		return r;
	strlcpy0(fp->dev, fp->np.dev_name, sizeof(fp->dev));
	fp->port = fp->np.port;
	fp->dev_index = fp->np.dev_index;
	fp->nl = true;
	f->n++;
	return 0;
}

static int nl_enumerate(struct rdma_priv *rp, struct found *f, char *err, size_t errlen)
{
	int r =
	    nl_request(rp, RDMA_NLDEV_CMD_GET, NLM_F_DUMP, UINT32_MAX, 0, on_dev, f, err, errlen);

	if (r)
		return r;
	for (size_t i = 0; i < f->nd; i++) {
		size_t first = f->n;

		/* nldev_port_get_dumpit() needs DEV_INDEX: one port dump per device. */
		r = nl_request(rp, RDMA_NLDEV_CMD_PORT_GET, NLM_F_DUMP, f->d[i].index, 0, on_port,
			       f, err, errlen);
		if (r == -EINVAL || r == -ENODEV) {
			/* The device went away between the two dumps. */
			f->n = first;
			continue;
		}
		if (r)
			return r;
		for (size_t k = first; k < f->n; k++) {
			f->p[k].guid = f->d[i].node_guid;
			f->p[k].has_guid = f->d[i].has_guid;
			strlcpy0(f->p[k].fw, f->d[i].fw, sizeof(f->p[k].fw));
			f->p[k].has_fw = f->d[i].has_fw;
		}
	}
	return 0;
}

static bool is_number(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

static int sysfs_enumerate(struct rdma_priv *rp, struct found *f)
{
	DIR *dir = opendir(rp->ib), *pd;
	struct dirent *de, *pe;
	char path[PATH_MAX];

	if (!dir)
		return errno == ENOENT ? 0 : -errno; /* no RDMA stack: no devices */
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.' || strlen(de->d_name) >= RW_NAME_MAX)
			continue;
		if (grow((void **)&f->d, &f->capd, f->nd, sizeof(*f->d))) {
			closedir(dir);
			return -ENOMEM;
		}
		memset(&f->d[f->nd], 0, sizeof(f->d[f->nd]));
		strlcpy0(f->d[f->nd].name, de->d_name, sizeof(f->d[f->nd].name));
		f->nd++;
		snprintf(path, sizeof(path), "%s/%s/ports", rp->ib, de->d_name);
		pd = opendir(path);
		if (!pd)
			continue;
		while ((pe = readdir(pd))) {
			uint64_t port;

			if (!is_number(pe->d_name) || parse_u64(pe->d_name, &port) || !port ||
			    port > UINT32_MAX)
				continue;
			if (grow((void **)&f->p, &f->cap, f->n, sizeof(*f->p))) {
				closedir(pd);
				closedir(dir);
				return -ENOMEM;
			}
			memset(&f->p[f->n], 0, sizeof(f->p[f->n]));
			strlcpy0(f->p[f->n].dev, de->d_name, sizeof(f->p[f->n].dev));
			f->p[f->n].port = (uint32_t)port;
			f->n++;
		}
		closedir(pd);
	}
	closedir(dir);
	return 0;
}

/* Read <ib>/<dev>/<rel> into buf; -errno. */
static int ib_read(struct rdma_priv *rp, const char *dev, const char *rel, char *buf, size_t size)
{
	char path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s/%s", rp->ib, dev, rel) >= sizeof(path))
		return -ENAMETOOLONG;
	return read_file_str(path, buf, size);
}

static void set_str_or_absent(struct object *o, enum field_id id, int r, const char *v)
{
	if (r)
		field_absent_errno(o, id, r);
	else
		field_set_str(o, id, v);
}

/*
 * The port's netdev from sysfs: the netdev of GID 0 (the default GID every
 * RoCE port holds for its netdev), else the "parent" attribute of software
 * devices (rxe, siw), else the only netdev of the PCI function.
 */
static int sysfs_netdev(struct rdma_priv *rp, const char *dev, uint32_t port, char *name,
			size_t size)
{
	char rel[96], path[PATH_MAX];
	struct dirent *de;
	DIR *dir;
	int n = 0;

	snprintf(rel, sizeof(rel), "ports/%u/gid_attrs/ndevs/0", port);
	if (!ib_read(rp, dev, rel, name, size) && name[0])
		return 0;
	if (!ib_read(rp, dev, "parent", name, size) && name[0])
		return 0;
	snprintf(path, sizeof(path), "%s/%s/device/net", rp->ib, dev);
	dir = opendir(path);
	if (!dir)
		return -ENOENT;
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		strlcpy0(name, de->d_name, size);
		n++;
	}
	closedir(dir);
	return n == 1 ? 0 : -ENOENT;
}

/* read_file_str() relative to a directory: a 1024-entry GID table is 3000 reads. */
static int read_at(int dfd, const char *name, char *buf, size_t size)
{
	int fd = dfd >= 0 ? openat(dfd, name, O_RDONLY | O_CLOEXEC) : -1;
	ssize_t n;

	if (fd < 0)
		return dfd >= 0 ? -errno : -ENOENT;
	n = read(fd, buf, size - 1);
	if (n < 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	close(fd);
	buf[n] = '\0';
	rstrip(buf);
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int read_gids(struct rdma_priv *rp, const char *dev, uint32_t port, const char *ll,
		     struct gid_table *t)
{
	char path[PATH_MAX], name[16], gid[64], type[32];
	uint32_t *idx = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	int r = 0, gfd, tfd, nfd;
	DIR *dir;

	t->n = 0;
	snprintf(path, sizeof(path), "%s/%s/ports/%u/gids", rp->ib, dev, port);
	dir = opendir(path);
	if (!dir)
		return -errno;
	gfd = dirfd(dir);
	snprintf(path, sizeof(path), "%s/%s/ports/%u/gid_attrs/types", rp->ib, dev, port);
	tfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	snprintf(path, sizeof(path), "%s/%s/ports/%u/gid_attrs/ndevs", rp->ib, dev, port);
	nfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	while ((de = readdir(dir))) {
		uint64_t v;

		if (!is_number(de->d_name) || parse_u64(de->d_name, &v) || v > UINT32_MAX)
			continue;
		if (grow((void **)&idx, &cap, n, sizeof(*idx))) {
			r = -ENOMEM;
			goto close_dirs;
		}
		idx[n++] = (uint32_t)v;
	}
	/* readdir order is the filesystem's; GID tables are listed by index. */
	if (n > 1)
		qsort(idx, n, sizeof(*idx), cmp_u32);
	for (size_t i = 0; i < n; i++) {
		struct gid_entry *g;
		int tr;

		snprintf(name, sizeof(name), "%u", idx[i]);
		if (read_at(gfd, name, gid, sizeof(gid)) || rdma_gid_is_zero(gid) ||
		    strlen(gid) >= RW_GID_STR_MAX)
			continue;
		/* An unpopulated entry's type reads EINVAL (core/sysfs.c print_gid_type()). */
		tr = read_at(tfd, name, type, sizeof(type));
		if (tr == -EINVAL)
			continue;
		if (t->n == t->cap) {
			size_t nc = t->cap ? t->cap * 2 : 16;
			struct gid_entry *ne = realloc(t->e, nc * sizeof(*ne));

			if (!ne) {
				r = -ENOMEM;
				goto close_dirs;
			}
			t->e = ne;
			t->cap = nc;
		}
		g = &t->e[t->n++];
		memset(g, 0, sizeof(*g));
		g->index = idx[i];
		strlcpy0(g->gid, gid, sizeof(g->gid));
		/* Kernels before gid_attrs (4.8) have no types: the type stays unknown (""). */
		if (!tr)
			rdma_gid_type_name(type, ll, g->type, sizeof(g->type));
		if (read_at(nfd, name, g->netdev, sizeof(g->netdev)))
			g->netdev[0] = '\0';
	}
close_dirs:
	if (nfd >= 0)
		close(nfd);
	if (tfd >= 0)
		close(tfd);
	closedir(dir);
	free(idx);
	return r;
}

static struct port_priv *port_priv(struct collector_ctx *cc, struct object *o)
{
	if (!o->cpriv[cc->idx]) {
		struct port_priv *pp = calloc(1, sizeof(*pp));

		if (!pp)
			return NULL;
		o->cpriv[cc->idx] = pp;
	}
	return o->cpriv[cc->idx];
}

static void fill_port(struct collector_ctx *cc, struct rdma_priv *rp, struct node_model *m,
		      struct object *o, const struct found_port *fp)
{
	struct port_priv *pp = o->cpriv[cc->idx];
	char buf[RW_STR_MAX], rel[64], ll[32] = "", nd[RW_NAME_MAX];
	int64_t mbps;
	int r;

	/* state, physical state */
	if (fp->nl && fp->np.has_state) {
		field_set_str(o, F_PORT_STATE, rdma_port_state_name(fp->np.state));
	} else {
		snprintf(rel, sizeof(rel), "ports/%u/state", fp->port);
		r = ib_read(rp, fp->dev, rel, buf, sizeof(buf));
		if (!r)
			r = rdma_parse_state(buf, buf, sizeof(buf));
		set_str_or_absent(o, F_PORT_STATE, r, buf);
	}
	if (fp->nl && fp->np.has_phys_state) {
		field_set_str(o, F_PORT_PHYS_STATE, rdma_phys_state_name(fp->np.phys_state));
	} else {
		snprintf(rel, sizeof(rel), "ports/%u/phys_state", fp->port);
		r = ib_read(rp, fp->dev, rel, buf, sizeof(buf));
		if (!r)
			r = rdma_parse_state(buf, buf, sizeof(buf));
		set_str_or_absent(o, F_PORT_PHYS_STATE, r, buf);
	}

	/* rate and link layer are sysfs-only */
	snprintf(rel, sizeof(rel), "ports/%u/rate", fp->port);
	r = ib_read(rp, fp->dev, rel, buf, sizeof(buf));
	if (!r)
		r = rdma_parse_rate(buf, &mbps);
	if (r)
		field_absent_errno(o, F_PORT_RATE, r);
	else
		field_set_int(o, F_PORT_RATE, mbps);
	snprintf(rel, sizeof(rel), "ports/%u/link_layer", fp->port);
	r = ib_read(rp, fp->dev, rel, ll, sizeof(ll));
	set_str_or_absent(o, F_PORT_LINK_LAYER, r, ll);
	if (r)
		ll[0] = '\0';

	/* device: node GUID, firmware (an empty fw_ver means a device without firmware) */
	if (fp->nl) {
		if (fp->has_guid) {
			rdma_format_guid(fp->guid, buf, sizeof(buf));
			field_set_str(o, F_PORT_NODE_GUID, buf);
		} else {
			field_absent(o, F_PORT_NODE_GUID, ABS_UNSUPPORTED, 0);
		}
		if (fp->has_fw)
			field_set_str(o, F_PORT_FW, fp->fw);
		else
			field_absent(o, F_PORT_FW, ABS_UNSUPPORTED, 0);
	} else {
		r = ib_read(rp, fp->dev, "node_guid", buf, sizeof(buf));
		set_str_or_absent(o, F_PORT_NODE_GUID, r, buf);
		r = ib_read(rp, fp->dev, "fw_ver", buf, sizeof(buf));
		if (!r && !buf[0])
			field_absent(o, F_PORT_FW, ABS_UNSUPPORTED, 0);
		else
			set_str_or_absent(o, F_PORT_FW, r, buf);
	}

	/* board and HCA type: sysfs only (RDMA netlink has no attribute for them) */
	r = ib_read(rp, fp->dev, "board_id", buf, sizeof(buf));
	set_str_or_absent(o, F_PORT_BOARD_ID, !r && !buf[0] ? -ENOENT : r, buf);
	r = ib_read(rp, fp->dev, "hca_type", buf, sizeof(buf));
	set_str_or_absent(o, F_PORT_HCA_TYPE, !r && !buf[0] ? -ENOENT : r, buf);

	/* netdev binding */
	o->ifindex = 0;
	if (fp->nl) {
		if (fp->np.has_ndev) {
			field_set_str(o, F_PORT_NETDEV, fp->np.ndev_name);
			o->ifindex = (int)fp->np.ndev_index;
		} else {
			/* no netdev, or one in another network namespace */
			field_absent(o, F_PORT_NETDEV, ABS_UNSUPPORTED, ENODEV);
		}
	} else {
		r = sysfs_netdev(rp, fp->dev, fp->port, nd, sizeof(nd));
		if (!r) {
			char path[PATH_MAX];
			struct stat st;

			/* A name absent from class/net is a netdev of another namespace. */
			snprintf(path, sizeof(path), "%s/%s", rp->net, nd);
			if (stat(path, &st))
				r = -ENODEV;
		}
		if (r) {
			field_absent(o, F_PORT_NETDEV, ABS_UNSUPPORTED, ENODEV);
		} else {
			field_set_str(o, F_PORT_NETDEV, nd);
			/* A fixture's ifindex would name an unrelated netdev of this host. */
			if (rp->live) {
				char path[PATH_MAX];
				uint64_t ix;

				snprintf(path, sizeof(path), "%s/%s/ifindex", rp->net, nd);
				if (!read_file_u64(path, &ix) && ix <= INT32_MAX)
					o->ifindex = (int)ix;
			}
		}
	}

	/* GID table and the derived NCCL_IB_GID_INDEX */
	r = read_gids(rp, fp->dev, fp->port, ll, &o->gids);
	if (r) {
		o->gids.n = 0;
		field_absent_errno(o, F_PORT_GIDS, r);
		field_absent_errno(o, F_PORT_ROCEV2_IPV4_GID_INDEX, r);
	} else {
		o->f[F_PORT_GIDS].state = ABS_NONE;
		o->f[F_PORT_GIDS].err = 0;
		o->f[F_PORT_GIDS].v.gids = &o->gids;
		if (!field_present(o, F_PORT_NETDEV)) {
			field_absent(o, F_PORT_ROCEV2_IPV4_GID_INDEX, ABS_UNSUPPORTED, ENODEV);
		} else {
			const char *ndn = o->f[F_PORT_NETDEV].v.s;
			struct object *ndo = model_netdev(m, ndn);
			const char *addrs = ndo && field_present(ndo, F_NETDEV_IPV4)
						? ndo->f[F_NETDEV_IPV4].v.s
						: NULL;
			int ix = rdma_rocev2_ipv4_index(&o->gids, ndn, addrs);

			if (ix < 0)
				field_absent(o, F_PORT_ROCEV2_IPV4_GID_INDEX, ABS_UNSUPPORTED,
					     ENOENT);
			else
				field_set_int(o, F_PORT_ROCEV2_IPV4_GID_INDEX, ix);
		}
	}

	/* counter files, kept open until the next slow poll finds a change */
	{
		char path[PATH_MAX];

		/*
		 * After ENODEV the kept descriptors belong to an unregistered
		 * device; one re-registered under the same name (a reset) has new
		 * files even though their names are the same.
		 */
		if (pp->gone) {
			cdir_close(&pp->hw);
			cdir_close(&pp->pc);
			cdir_close(&pp->pe);
		}
		pp->gone = false;
		pp->dev_index = fp->dev_index;
		pp->hw_nl = fp->nl;
		if (pp->hw_nl) {
			cdir_close(&pp->hw);
		} else {
			snprintf(path, sizeof(path), "%s/%s/ports/%u/hw_counters", rp->ib, fp->dev,
				 fp->port);
			cdir_scan(&pp->hw, path, "hw_counters");
		}
		snprintf(path, sizeof(path), "%s/%s/ports/%u/counters", rp->ib, fp->dev, fp->port);
		cdir_scan(&pp->pc, path, "counters");
		snprintf(path, sizeof(path), "%s/%s/ports/%u/counters_ext", rp->ib, fp->dev,
			 fp->port);
		cdir_scan(&pp->pe, path, "counters_ext");
	}
}

static int collect_slow(struct collector_ctx *cc, struct rdma_priv *rp, struct node_model *m)
{
	struct found f = { 0 };
	char err[160] = "";
	int r = -EPROTONOSUPPORT;

	if (rp->nl) {
		r = nl_enumerate(rp, &f, err, sizeof(err));
		if (r) {
			/* Refused (a container, an old kernel): sysfs has the same devices. */
			rw_log_once(LOG_LVL_INFO, "rdma:nl-refused",
				    "rdma: RDMA netlink: %s; reading sysfs instead", err);
			f.n = f.nd = 0;
		} else {
			rw_log_once_reset("rdma:nl-refused");
		}
	}
	if (r) {
		r = sysfs_enumerate(rp, &f);
		if (r) {
			snprintf(cc->detail, sizeof(cc->detail), "%.100s: %s", rp->ib,
				 strerror(-r));
			goto free_found;
		}
	}

	model_begin(m, OBJ_RDMA_PORT);
	for (size_t i = 0; i < f.n; i++) {
		struct object *o = model_add_port(m, f.p[i].dev, f.p[i].port);

		if (!o || !port_priv(cc, o)) {
			r = -ENOMEM;
			goto free_found;
		}
		o->seen = true;
		fill_port(cc, rp, m, o, &f.p[i]);
	}
	model_sweep(m, OBJ_RDMA_PORT);
	field_set_int(&m->node, F_NODE_RDMA_DEVICES, (int64_t)f.nd);
	r = 0;
free_found:
	free(f.p);
	free(f.d);
	return r;
}

struct stat_arg {
	struct object *o;
	int slot; /* where the next counter was at the last poll */
	const char *why;
};

static int stat_counter(void *arg, const char *name, uint64_t v)
{
	struct stat_arg *sa = arg;

	if (strlen(name) >= RW_CNAME_MAX)
		return 0;
	if (cset_put(&sa->o->cs[CSET_HW], &sa->slot, name, v) < 0)
		return -ENOMEM;
	sa->slot++;
	return 0;
}

static int on_stat(const struct nlmsghdr *nlh, void *arg)
{
	struct stat_arg *sa = arg;
	struct rdma_nl_stat s;
	int r = rdma_nl_parse_stat(nlh, &s, stat_counter, sa, &sa->why);

	if (r)
		return r;
	/* An index reused by another device after a hot-unplug: not our counters. */
	if (s.port != sa->o->port || (s.dev_name[0] && strcmp(s.dev_name, sa->o->name))) {
		cset_clear(&sa->o->cs[CSET_HW]);
		return -ENODEV;
	}
	return 0;
}

static void collect_fast(struct collector_ctx *cc, struct rdma_priv *rp, struct node_model *m)
{
	struct object **ports;
	size_t n = model_objects(m, OBJ_RDMA_PORT, &ports);

	for (size_t i = 0; i < n; i++) {
		struct object *o = ports[i];
		struct port_priv *pp = o->cpriv[cc->idx];
		int r = 0;

		cset_clear(&o->cs[CSET_HW]);
		cset_clear(&o->cs[CSET_PORT]);
		if (!pp || pp->gone)
			continue;
		if (pp->hw_nl && rp->nl) {
			struct stat_arg sa = { .o = o };
			char err[160];

			r = nl_request(rp, RDMA_NLDEV_CMD_STAT_GET, 0, pp->dev_index, o->port,
				       on_stat, &sa, err, sizeof(err));
			if (r) {
				char key[96], path[PATH_MAX];

				/* No hw stats on this device, or it went away: sysfs decides. */
				snprintf(key, sizeof(key), "rdma:stat:%s/%u", o->name, o->port);
				rw_log_once(LOG_LVL_INFO, key,
					    "rdma: %s/%u: RDMA_NLDEV_CMD_STAT_GET: %s; reading "
					    "hw_counters/ from sysfs",
					    o->name, o->port, sa.why ? sa.why : err);
				cset_clear(&o->cs[CSET_HW]);
				pp->hw_nl = false;
				snprintf(path, sizeof(path), "%s/%s/ports/%u/hw_counters", rp->ib,
					 o->name, o->port);
				cdir_scan(&pp->hw, path, "hw_counters");
				r = 0;
			}
		}
		if (!pp->hw_nl)
			r = cdir_read(&pp->hw, &o->cs[CSET_HW], o->name, o->port, "hw_counters");
		if (!r)
			r = cdir_read(&pp->pc, &o->cs[CSET_PORT], o->name, o->port, "counters");
		if (!r)
			r = cdir_read(&pp->pe, &o->cs[CSET_PORT], o->name, o->port, "counters_ext");
		if (r == -ENODEV) {
			/* Unregistered since the last slow poll: no counters until it is swept. */
			pp->gone = true;
			cset_clear(&o->cs[CSET_HW]);
			cset_clear(&o->cs[CSET_PORT]);
		}
	}
}

static int rdma_collect(struct collector_ctx *cc, struct node_model *m, unsigned what)
{
	struct rdma_priv *rp = cc->priv;
	int r = 0;

	if (what & COLLECT_SLOW)
		r = collect_slow(cc, rp, m);
	if (!r && (what & COLLECT_FAST))
		collect_fast(cc, rp, m);
	return r;
}

/* Is root this machine's /sys (not a fixture tree standing in for it)? */
static bool live_sysfs(const char *root)
{
	char real[PATH_MAX];

	return realpath(root, real) && !strcmp(real, "/sys");
}

static int rdma_init(struct collector_ctx *cc)
{
	struct rdma_priv *rp = calloc(1, sizeof(*rp));
	int r;

	if (!rp)
		return -ENOMEM;
	cc->priv = rp;
	if ((size_t)snprintf(rp->ib, sizeof(rp->ib), "%s/class/infiniband", cc->cfg->sysfs_root) >=
		sizeof(rp->ib) ||
	    (size_t)snprintf(rp->net, sizeof(rp->net), "%s/class/net", cc->cfg->sysfs_root) >=
		sizeof(rp->net)) {
		snprintf(cc->detail, sizeof(cc->detail), "--sysfs-root too long");
		return -ENAMETOOLONG;
	}
	rp->live = live_sysfs(cc->cfg->sysfs_root);
	if (!rp->live)
		return 0;
	/* Dump skbs reach 32 KiB (netlink_dump's max_recvmsg_len); twice that is safe. */
	rp->buflen = 65536;
	rp->buf = malloc(rp->buflen);
	if (!rp->buf)
		return -ENOMEM;
	r = nl_open(rp);
	/* EPROTONOSUPPORT: the kernel has no RDMA stack; sysfs will say "no devices". */
	if (r)
		log_debug("rdma: no RDMA netlink (%s); reading sysfs", strerror(-r));
	return 0;
}

static void rdma_fini(struct collector_ctx *cc)
{
	struct rdma_priv *rp = cc->priv;

	if (!rp)
		return;
	nl_close(rp);
	free(rp->buf);
	free(rp);
	cc->priv = NULL;
}

const struct collector rdma_collector = {
	.name = "rdma",
	.help = "RDMA ports: state, rate, netdev, hw and port counters, GID table (RDMA netlink, "
		"sysfs)",
	.default_enabled = true,
	.init = rdma_init,
	.collect = rdma_collect,
	.fini = rdma_fini,
	.obj_free = rdma_obj_free,
};
