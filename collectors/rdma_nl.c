// SPDX-License-Identifier: MIT
/*
 * RDMA netlink (NETLINK_RDMA, client RDMA_NL_NLDEV) through the core's
 * netlink layer: RDMA_NLDEV_CMD_GET dump (devices), RDMA_NLDEV_CMD_PORT_GET
 * dump per device (state, NDEV_INDEX/NDEV_NAME), and RDMA_NLDEV_CMD_STAT_GET,
 * one request per port per fast poll, for the hw counters
 * (drivers/infiniband/core/nldev.c: stat_get_doit_default_counter).
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <rdma/rdma_netlink.h>

#include "rdma.h"
#include "util.h"

/* Dump skbs reach 32 KiB (netlink_dump's max_recvmsg_len); twice that is safe. */
#define RDMA_NL_RXBUF (64 * 1024)
/* A reply never takes a second; never hang a poll on one. */
#define RDMA_NL_TIMEOUT_MS 1000

/*
 * The attributes rocewatch reads, typed as nldev.c's nldev_policy types
 * them; nldev has one attribute space for every level of nesting.
 * Everything else (CAP_FLAGS, DEV_PROTOCOL, PAD, attributes newer than
 * these headers) is skipped without a look.
 */
static const struct rw_nl_policy nldev_pol[RDMA_NLDEV_ATTR_MAX] = {
	RW_NL_U32(RDMA_NLDEV_ATTR_DEV_INDEX),
	RW_NL_STR(RDMA_NLDEV_ATTR_DEV_NAME, 64), /* IB_DEVICE_NAME_MAX */
	RW_NL_U32(RDMA_NLDEV_ATTR_PORT_INDEX),
	RW_NL_STR(RDMA_NLDEV_ATTR_FW_VERSION, 64), /* IB_FW_VERSION_NAME_MAX */
	RW_NL_U64(RDMA_NLDEV_ATTR_NODE_GUID),
	RW_NL_U8(RDMA_NLDEV_ATTR_PORT_STATE),
	RW_NL_U8(RDMA_NLDEV_ATTR_PORT_PHYS_STATE),
	RW_NL_U32(RDMA_NLDEV_ATTR_NDEV_INDEX),
	RW_NL_STR(RDMA_NLDEV_ATTR_NDEV_NAME, IFNAMSIZ),
	RW_NL_NEST(RDMA_NLDEV_ATTR_STAT_HWCOUNTERS),
	RW_NL_NEST(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY),
	RW_NL_STR(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, 256),
	RW_NL_U64(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE),
	RW_NL_U32(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_INDEX),
	RW_NL_U8(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_DYNAMIC),
};
static const struct rw_nl_set nldev_set = RW_NL_SET("RDMA_NLDEV_ATTR", nldev_pol);

typedef const struct nlattr *nldev_tb[RDMA_NLDEV_ATTR_MAX];

static int need(const nldev_tb tb, const char *what, int type, char *err, size_t errlen)
{
	if (tb[type])
		return 0;
	snprintf(err, errlen, "%s without %s", what, nldev_pol[type].name);
	return -EBADMSG;
}

static void copy_str(char *dst, size_t size, const struct nlattr *a)
{
	strlcpy0(dst, mnl_attr_get_str(a), size);
}

int rdma_nl_parse_dev(const struct nlmsghdr *nlh, struct rdma_nl_dev *d, char *err, size_t errlen)
{
	static const char what[] = "RDMA_NLDEV_CMD_GET reply";
	nldev_tb tb;
	int r = rw_nl_parse_msg(&nldev_set, nlh, 0, tb, NULL, err, errlen);

	memset(d, 0, sizeof(*d));
	if (!r)
		r = need(tb, what, RDMA_NLDEV_ATTR_DEV_INDEX, err, errlen);
	if (!r)
		r = need(tb, what, RDMA_NLDEV_ATTR_DEV_NAME, err, errlen);
	if (r)
		return r;
	d->index = mnl_attr_get_u32(tb[RDMA_NLDEV_ATTR_DEV_INDEX]);
	copy_str(d->name, sizeof(d->name), tb[RDMA_NLDEV_ATTR_DEV_NAME]);
	if (tb[RDMA_NLDEV_ATTR_PORT_INDEX])
		d->last_port = mnl_attr_get_u32(tb[RDMA_NLDEV_ATTR_PORT_INDEX]);
	if (tb[RDMA_NLDEV_ATTR_NODE_GUID]) {
		d->node_guid = mnl_attr_get_u64(tb[RDMA_NLDEV_ATTR_NODE_GUID]);
		d->has_guid = true;
	}
	/* nldev omits FW_VERSION for devices without firmware (rxe, siw). */
	if (tb[RDMA_NLDEV_ATTR_FW_VERSION]) {
		copy_str(d->fw, sizeof(d->fw), tb[RDMA_NLDEV_ATTR_FW_VERSION]);
		d->has_fw = d->fw[0] != '\0';
	}
	return 0;
}

int rdma_nl_parse_port(const struct nlmsghdr *nlh, struct rdma_nl_port *p, char *err, size_t errlen)
{
	static const char what[] = "RDMA_NLDEV_CMD_PORT_GET reply";
	nldev_tb tb;
	int r = rw_nl_parse_msg(&nldev_set, nlh, 0, tb, NULL, err, errlen);

	memset(p, 0, sizeof(*p));
	if (!r)
		r = need(tb, what, RDMA_NLDEV_ATTR_DEV_INDEX, err, errlen);
	if (!r)
		r = need(tb, what, RDMA_NLDEV_ATTR_DEV_NAME, err, errlen);
	if (!r)
		r = need(tb, what, RDMA_NLDEV_ATTR_PORT_INDEX, err, errlen);
	if (r)
		return r;
	p->dev_index = mnl_attr_get_u32(tb[RDMA_NLDEV_ATTR_DEV_INDEX]);
	copy_str(p->dev_name, sizeof(p->dev_name), tb[RDMA_NLDEV_ATTR_DEV_NAME]);
	p->port = mnl_attr_get_u32(tb[RDMA_NLDEV_ATTR_PORT_INDEX]);
	if (tb[RDMA_NLDEV_ATTR_PORT_STATE]) {
		p->state = mnl_attr_get_u8(tb[RDMA_NLDEV_ATTR_PORT_STATE]);
		p->has_state = true;
	}
	if (tb[RDMA_NLDEV_ATTR_PORT_PHYS_STATE]) {
		p->phys_state = mnl_attr_get_u8(tb[RDMA_NLDEV_ATTR_PORT_PHYS_STATE]);
		p->has_phys_state = true;
	}
	/*
	 * fill_port_info() sends NDEV_INDEX/NDEV_NAME only when the port has a
	 * netdev and that netdev is in the requester's network namespace.
	 */
	if (tb[RDMA_NLDEV_ATTR_NDEV_INDEX] && tb[RDMA_NLDEV_ATTR_NDEV_NAME]) {
		p->ndev_index = mnl_attr_get_u32(tb[RDMA_NLDEV_ATTR_NDEV_INDEX]);
		copy_str(p->ndev_name, sizeof(p->ndev_name), tb[RDMA_NLDEV_ATTR_NDEV_NAME]);
		p->has_ndev = p->ndev_name[0] != '\0';
	}
	return 0;
}

struct stat_walk {
	struct rdma_nl_stat *s;
	rdma_hw_cb cb;
	void *arg;
};

struct entry_walk {
	const struct nlattr *name, *value;
};

static int entry_attr(const struct nlattr *a, unsigned int type, void *data, char *err,
		      size_t errlen)
{
	struct entry_walk *ew = data;

	(void)err;
	(void)errlen;
	/* the last of a duplicate wins, as in a table */
	if (type == RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME)
		ew->name = a;
	else if (type == RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE)
		ew->value = a;
	return 0;
}

/*
 * One HWCOUNTER_ENTRY { NAME, VALUE } of the table.  Walked (and checked
 * against the policy) attribute by attribute into two pointers rather than
 * parsed into a table of every RDMA_NLDEV attribute: a port has 40-odd
 * entries each fast poll, and clearing that table was most of the parse.
 */
static int stat_entry(const struct nlattr *e, unsigned int type, void *data, char *err,
		      size_t errlen)
{
	static const char what[] = "RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY";
	struct stat_walk *sw = data;
	struct entry_walk ew = { 0 };
	int r;

	if (type != RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY)
		return 0;
	r = rw_nl_walk_nested(&nldev_set, e, entry_attr, &ew, err, errlen);
	if (r)
		return r;
	if (!ew.name || !ew.value) {
		snprintf(err, errlen, "%s without %s", what,
			 nldev_pol[ew.name ? RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE
					   : RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME]
			     .name);
		return -EBADMSG;
	}
	sw->s->counters++;
	if (!sw->cb)
		return 0;
	r = sw->cb(sw->arg, mnl_attr_get_str(ew.name), mnl_attr_get_u64(ew.value));
	if (r < 0)
		snprintf(err, errlen, "%s: %s", what, strerror(-r));
	return r < 0 ? r : 0;
}

int rdma_nl_parse_stat(const struct nlmsghdr *nlh, struct rdma_nl_stat *s, rdma_hw_cb cb, void *arg,
		       char *err, size_t errlen)
{
	static const char what[] = "RDMA_NLDEV_CMD_STAT_GET reply";
	struct stat_walk sw = { .s = s, .cb = cb, .arg = arg };
	nldev_tb tb;
	int r = rw_nl_parse_msg(&nldev_set, nlh, 0, tb, NULL, err, errlen);

	memset(s, 0, sizeof(*s));
	if (!r)
		r = need(tb, what, RDMA_NLDEV_ATTR_DEV_INDEX, err, errlen);
	if (!r)
		r = need(tb, what, RDMA_NLDEV_ATTR_PORT_INDEX, err, errlen);
	if (!r)
		r = need(tb, what, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS, err, errlen);
	if (r)
		return r;
	s->dev_index = mnl_attr_get_u32(tb[RDMA_NLDEV_ATTR_DEV_INDEX]);
	s->port = mnl_attr_get_u32(tb[RDMA_NLDEV_ATTR_PORT_INDEX]);
	if (tb[RDMA_NLDEV_ATTR_DEV_NAME])
		copy_str(s->dev_name, sizeof(s->dev_name), tb[RDMA_NLDEV_ATTR_DEV_NAME]);
	/* The table repeats HWCOUNTER_ENTRY nests; each holds a NAME and a VALUE. */
	return rw_nl_walk_nested(&nldev_set, tb[RDMA_NLDEV_ATTR_STAT_HWCOUNTERS], stat_entry, &sw,
				 err, errlen);
}

int rdma_nl_open(struct rdma_priv *rp)
{
	return rw_nl_open(&rp->nl, NETLINK_RDMA, RDMA_NL_RXBUF, RDMA_NL_TIMEOUT_MS);
}

/* Send one NLDEV request and feed the replies to msg() until complete. */
static int nldev_request(struct rdma_priv *rp, uint8_t cmd, uint16_t flags, uint32_t dev_index,
			 uint32_t port, int (*msg)(const struct nlmsghdr *, void *, char *, size_t),
			 void *arg, char *err, size_t errlen)
{
	char req[MNL_NLMSG_HDRLEN + 64];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(req);
	int r;

	nlh->nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd);
	nlh->nlmsg_flags = flags;
	if (dev_index != UINT32_MAX)
		mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, dev_index);
	if (port)
		mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_PORT_INDEX, port);
	r = rw_nl_exchange(&rp->nl, nlh, nlh->nlmsg_type, msg, arg, err, errlen);
	if (r && err && !err[0])
		snprintf(err, errlen, "%s", strerror(-r));
	return r;
}

static int on_dev(const struct nlmsghdr *nlh, void *arg, char *err, size_t errlen)
{
	struct found *f = arg;
	int r;

	if (array_grow(&f->d, &f->capd, f->nd, sizeof(*f->d), 8))
		return -ENOMEM;
	r = rdma_nl_parse_dev(nlh, &f->d[f->nd], err, errlen);
	if (r)
		return r;
	f->nd++;
	return 0;
}

static int on_port(const struct nlmsghdr *nlh, void *arg, char *err, size_t errlen)
{
	struct found *f = arg;
	struct found_port *fp;
	int r;

	if (array_grow(&f->p, &f->cap, f->n, sizeof(*f->p), 8))
		return -ENOMEM;
	fp = &f->p[f->n];
	memset(fp, 0, sizeof(*fp));
	r = rdma_nl_parse_port(nlh, &fp->np, err, errlen);
	if (r)
		return r;
	strlcpy0(fp->dev, fp->np.dev_name, sizeof(fp->dev));
	fp->port = fp->np.port;
	fp->dev_index = fp->np.dev_index;
	fp->nl = true;
	f->n++;
	return 0;
}

int rdma_nl_enumerate(struct rdma_priv *rp, struct found *f, char *err, size_t errlen)
{
	int r = nldev_request(rp, RDMA_NLDEV_CMD_GET, NLM_F_DUMP, UINT32_MAX, 0, on_dev, f, err,
			      errlen);

	if (r)
		return r;
	/* an excluded device (a firmware-restricted PF) is not asked about its ports */
	{
		size_t k = 0;

		for (size_t i = 0; i < f->nd; i++)
			if (config_rdma_wanted(rp->cfg, f->d[i].name))
				f->d[k++] = f->d[i];
		f->nd = k;
	}
	for (size_t i = 0; i < f->nd; i++) {
		size_t first = f->n;

		/* nldev_port_get_dumpit() needs DEV_INDEX: one port dump per device. */
		r = nldev_request(rp, RDMA_NLDEV_CMD_PORT_GET, NLM_F_DUMP, f->d[i].index, 0,
				  on_port, f, err, errlen);
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

struct stat_arg {
	struct object *o;
	int slot; /* where the next counter was at the last poll */
};

static int stat_counter(void *arg, const char *name, uint64_t v)
{
	struct stat_arg *sa = arg;

	if (strlen(name) >= RW_CNAME_MAX)
		return 0;
	if (rdma_cset_put(&sa->o->cs[CSET_HW], &sa->slot, name, v) < 0)
		return -ENOMEM;
	sa->slot++;
	return 0;
}

static int on_stat(const struct nlmsghdr *nlh, void *arg, char *err, size_t errlen)
{
	struct stat_arg *sa = arg;
	struct rdma_nl_stat s;
	int r = rdma_nl_parse_stat(nlh, &s, stat_counter, sa, err, errlen);

	if (r)
		return r;
	/* An index reused by another device after a hot-unplug: not our counters. */
	if (s.port != sa->o->port || (s.dev_name[0] && strcmp(s.dev_name, sa->o->name))) {
		cset_clear(&sa->o->cs[CSET_HW]);
		snprintf(err, errlen, "the reply is for %s/%u", s.dev_name, s.port);
		return -ENODEV;
	}
	return 0;
}

int rdma_nl_hw_counters(struct rdma_priv *rp, struct object *o, uint32_t dev_index, char *err,
			size_t errlen)
{
	struct stat_arg sa = { .o = o };

	return nldev_request(rp, RDMA_NLDEV_CMD_STAT_GET, 0, dev_index, o->port, on_stat, &sa, err,
			     errlen);
}

/* ---- optional counters (RDMA_NLDEV_CMD_STAT_GET_STATUS, kernel >= 5.16) ---- */

struct opt_entry {
	const struct nlattr *name, *dynamic;
};

static int opt_attr(const struct nlattr *a, unsigned int type, void *data, char *err, size_t errlen)
{
	struct opt_entry *oe = data;

	(void)err;
	(void)errlen;
	if (type == RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME)
		oe->name = a;
	else if (type == RDMA_NLDEV_ATTR_STAT_HWCOUNTER_DYNAMIC)
		oe->dynamic = a;
	return 0;
}

struct opt_walk {
	rdma_opt_cb cb;
	void *arg;
};

static int opt_entry(const struct nlattr *e, unsigned int type, void *data, char *err,
		     size_t errlen)
{
	struct opt_walk *ow = data;
	struct opt_entry oe = { 0 };
	int r;

	if (type != RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY)
		return 0;
	r = rw_nl_walk_nested(&nldev_set, e, opt_attr, &oe, err, errlen);
	if (r)
		return r;
	if (!oe.name) {
		snprintf(err, errlen, "RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY without its NAME");
		return -EBADMSG;
	}
	/* Only the optional counters carry DYNAMIC (its value: enabled); the rest always count. */
	if (!oe.dynamic)
		return 0;
	return ow->cb(ow->arg, mnl_attr_get_str(oe.name), mnl_attr_get_u8(oe.dynamic) != 0);
}

int rdma_nl_parse_optional(const struct nlmsghdr *nlh, rdma_opt_cb cb, void *arg, char *err,
			   size_t errlen)
{
	static const char what[] = "RDMA_NLDEV_CMD_STAT_GET_STATUS reply";
	struct opt_walk ow = { .cb = cb, .arg = arg };
	nldev_tb tb;
	int r = rw_nl_parse_msg(&nldev_set, nlh, 0, tb, NULL, err, errlen);

	if (!r)
		r = need(tb, what, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS, err, errlen);
	if (r)
		return r;
	return rw_nl_walk_nested(&nldev_set, tb[RDMA_NLDEV_ATTR_STAT_HWCOUNTERS], opt_entry, &ow,
				 err, errlen);
}

static int on_optional(const struct nlmsghdr *nlh, void *arg, char *err, size_t errlen)
{
	return rdma_nl_parse_optional(nlh, rdma_optional_add, arg, err, errlen);
}

int rdma_nl_optional(struct rdma_priv *rp, struct object *o, uint32_t dev_index,
		     struct rdma_optional *opt, char *err, size_t errlen)
{
	memset(opt, 0, sizeof(*opt));
	return nldev_request(rp, RDMA_NLDEV_CMD_STAT_GET_STATUS, 0, dev_index, o->port, on_optional,
			     opt, err, errlen);
}

static void list_add(char *buf, size_t size, const char *name)
{
	size_t len = strlen(buf);

	if (len + (len ? 1 : 0) + strlen(name) >= size)
		return; /* the count stays right; the list is for people */
	snprintf(buf + len, size - len, "%s%s", len ? "," : "", name);
}

int rdma_optional_add(void *arg, const char *name, bool enabled)
{
	struct rdma_optional *opt = arg;

	opt->supported++;
	if (enabled) {
		list_add(opt->enabled, sizeof(opt->enabled), name);
		return 0;
	}
	/* the congestion counters (mlx5 cc_rx_ce_pkts, cc_rx_cnp_pkts, cc_tx_cnp_pkts) */
	if (!strncmp(name, "cc_", 3)) {
		opt->cc_disabled++;
		list_add(opt->cc_disabled_names, sizeof(opt->cc_disabled_names), name);
	}
	return 0;
}

void rdma_fill_optional(struct object *o, const struct rdma_optional *opt, int err)
{
	if (err) {
		field_absent_errno(o, F_PORT_OPTIONAL_COUNTERS, err);
		field_absent_errno(o, F_PORT_OPTIONAL_CC_DISABLED, err);
		field_absent_errno(o, F_PORT_OPTIONAL_CC_DISABLED_NAMES, err);
		return;
	}
	field_set_str(o, F_PORT_OPTIONAL_COUNTERS, opt->enabled);
	field_set_int(o, F_PORT_OPTIONAL_CC_DISABLED, opt->cc_disabled);
	field_set_str(o, F_PORT_OPTIONAL_CC_DISABLED_NAMES, opt->cc_disabled_names);
}
