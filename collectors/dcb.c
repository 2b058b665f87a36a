// SPDX-License-Identifier: MIT
/*
 * dcb: IEEE 802.1Qaz/802.1Qbb state over rtnetlink RTM_GETDCB (net/dcb/dcbnl.c),
 * with libmnl.  One DCB_CMD_IEEE_GET per device per poll: its reply carries
 * ETS, the TC max rates, PFC (with the per-priority requests/indications counters), the
 * receive buffers, the APP table and, since dcbnl_ieee_fill() adds it after
 * the nest, the DCBX mode.  DCB_CMD_GDCBX is asked only when that is missing.
 *
 * Fast loop: the PFC counters.  Slow loop, and at once on an RTNLGRP_DCB
 * notification: the configuration.  Devices without dcbnl_ops (veth, virtio,
 * bridges) answer EOPNOTSUPP: their fields are absent "unsupported" and the
 * fast loop leaves them alone until the next slow poll.
 *
 * Trust: upstream mlx5 has no trust attribute in the 6.1 uapi; it trusts DSCP
 * exactly when the APP table holds a DSCP entry (mlx5 en_dcbnl.c, and the
 * same rule in mlnx_qos).  qos_sysfs runs later and replaces this with
 * MLNX_OFED's qos/trust where that file exists.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/rtnetlink.h>

#include "netdev.h"
#include "nl.h"
#include "util.h"

#define EV_BUFLEN 16384
/* Largest reply expected: an mlx5 IEEE_GET with a full DSCP APP table is ~1.5 KiB. */
#define NL_RXBUF (32 * 1024)

struct dcb_priv {
	struct rw_nl rq;
	struct mnl_socket *ev; /* RTNLGRP_DCB listener, NULL without */
	char *evbuf;
	char req[256];
};

/* Per device (obj->cpriv): why the last slow poll found no DCB here. */
struct dcb_dev {
	int err; /* positive errno, 0 = DCB answered */
};

/* ---- parsing ---- */

/* DCB_ATTR_IFNAME is not read: the request named the device. */
static const struct rw_nl_policy top_pol[DCB_ATTR_MAX + 1] = {
	RW_NL_NEST(DCB_ATTR_IEEE),
	RW_NL_U8(DCB_ATTR_DCBX),
};
static const struct rw_nl_set top_set = RW_NL_SET("DCB_ATTR", top_pol);

/* The struct payloads are copied whole, so their sizes must match exactly. */
static const struct rw_nl_policy ieee_pol[DCB_ATTR_IEEE_MAX + 1] = {
	RW_NL_STRUCT(DCB_ATTR_IEEE_ETS, struct ieee_ets),
	RW_NL_STRUCT(DCB_ATTR_IEEE_MAXRATE, struct ieee_maxrate),
	RW_NL_STRUCT(DCB_ATTR_IEEE_PFC, struct ieee_pfc),
	RW_NL_NEST(DCB_ATTR_IEEE_APP_TABLE),
	RW_NL_STRUCT(DCB_ATTR_DCB_BUFFER, struct dcbnl_buffer),
};
static const struct rw_nl_set ieee_set = RW_NL_SET("DCB_ATTR_IEEE", ieee_pol);

/*
 * Kernels from 6.3 also put DCB_ATTR_DCB_APP (non-IEEE selectors) in the
 * table; it is not in the 6.1 uapi and is skipped like any unknown type.
 */
static const struct rw_nl_policy app_pol[DCB_ATTR_IEEE_APP_MAX + 1] = {
	RW_NL_STRUCT(DCB_ATTR_IEEE_APP, struct dcb_app),
};
static const struct rw_nl_set app_set = RW_NL_SET("DCB_ATTR_IEEE_APP_TABLE", app_pol);

static int app_entry(const struct nlattr *a, unsigned int type, void *data, char *err,
		     size_t errlen)
{
	struct dcb_ieee *d = data;
	struct dcb_app app;

	(void)type;
	memcpy(&app, mnl_attr_get_payload(a), sizeof(app));
	if (app.selector != IEEE_8021QAZ_APP_SEL_DSCP)
		return 0;
	if (app.protocol >= 64 || app.priority >= 8) {
		snprintf(err, errlen, "DCB_ATTR_IEEE_APP: DSCP %u -> priority %u out of range",
			 app.protocol, app.priority);
		return -EBADMSG;
	}
	d->n_dscp++;
	/* A driver may keep two priorities for one DSCP; the first listed is the one shown. */
	if (d->dscp[app.protocol] < 0)
		d->dscp[app.protocol] = (int8_t)app.priority;
	return 0;
}

static int check_dcb_msg(const void *buf, size_t len, const struct dcbmsg **dm, char *err,
			 size_t errlen)
{
	const struct nlmsghdr *nlh = buf;
	int r = rw_nl_check_msg(buf, len, sizeof(**dm), err, errlen);

	if (r)
		return r;
	if (nlh->nlmsg_type != RTM_GETDCB && nlh->nlmsg_type != RTM_SETDCB) {
		snprintf(err, errlen, "not a DCB message (type %u)", nlh->nlmsg_type);
		return -EBADMSG;
	}
	*dm = mnl_nlmsg_get_payload(nlh);
	return 0;
}

/* The first error of a reply is the one the log shows. */
static void first_err(char *err, size_t errlen, const char *msg, bool *any)
{
	if (!*any)
		snprintf(err, errlen, "%s", msg);
	*any = true;
}

/* The IEEE nest: each attribute that breaks its row blanks its own part only. */
static void parse_ieee_nest(const struct nlattr *nest, struct dcb_ieee *d, char *err, size_t errlen,
			    bool *any)
{
	const struct nlattr *it[DCB_ATTR_IEEE_MAX + 1];
	uint8_t bad[DCB_ATTR_IEEE_MAX + 1];
	char e[160] = "";

	if (rw_nl_parse_nested(&ieee_set, nest, it, bad, e, sizeof(e))) {
		/* the nest itself is cut: nothing in it can be trusted */
		d->ets_err = d->maxrate_err = d->pfc_err = d->buffer_err = d->app_err = -EBADMSG;
		first_err(err, errlen, e, any);
		return;
	}
	if (e[0])
		first_err(err, errlen, e, any);
	if (bad[DCB_ATTR_IEEE_ETS])
		d->ets_err = -EBADMSG;
	if (bad[DCB_ATTR_IEEE_MAXRATE])
		d->maxrate_err = -EBADMSG;
	if (bad[DCB_ATTR_IEEE_PFC])
		d->pfc_err = -EBADMSG;
	if (bad[DCB_ATTR_DCB_BUFFER])
		d->buffer_err = -EBADMSG;
	if (bad[DCB_ATTR_IEEE_APP_TABLE])
		d->app_err = -EBADMSG;
	if (it[DCB_ATTR_IEEE_ETS]) {
		d->have_ets = true;
		memcpy(&d->ets, mnl_attr_get_payload(it[DCB_ATTR_IEEE_ETS]), sizeof(d->ets));
	}
	if (it[DCB_ATTR_IEEE_MAXRATE]) {
		d->have_maxrate = true;
		memcpy(&d->maxrate, mnl_attr_get_payload(it[DCB_ATTR_IEEE_MAXRATE]),
		       sizeof(d->maxrate));
	}
	if (it[DCB_ATTR_IEEE_PFC]) {
		d->have_pfc = true;
		memcpy(&d->pfc, mnl_attr_get_payload(it[DCB_ATTR_IEEE_PFC]), sizeof(d->pfc));
	}
	if (it[DCB_ATTR_DCB_BUFFER]) {
		d->have_buffer = true;
		memcpy(&d->buffer, mnl_attr_get_payload(it[DCB_ATTR_DCB_BUFFER]),
		       sizeof(d->buffer));
	}
	if (it[DCB_ATTR_IEEE_APP_TABLE] &&
	    rw_nl_walk_nested(&app_set, it[DCB_ATTR_IEEE_APP_TABLE], app_entry, d, e, sizeof(e))) {
		/* a half-read table would show a wrong trust and map: none of it */
		d->app_err = -EBADMSG;
		d->n_dscp = 0;
		memset(d->dscp, -1, sizeof(d->dscp));
		first_err(err, errlen, e, any);
	}
}

int dcb_parse_ieee(const void *buf, size_t len, struct dcb_ieee *d, char *err, size_t errlen)
{
	const struct nlattr *tb[DCB_ATTR_MAX + 1];
	uint8_t bad[DCB_ATTR_MAX + 1];
	const struct dcbmsg *dm;
	bool any = false;
	char e[160] = "";
	int r;

	memset(d, 0, sizeof(*d));
	memset(d->dscp, -1, sizeof(d->dscp));
	if (errlen)
		err[0] = '\0';
	r = check_dcb_msg(buf, len, &dm, err, errlen);
	if (r)
		return r;
	/* notifications (dcbnl_ieee_notify) carry the same fill under the set/del command */
	if (dm->cmd != DCB_CMD_IEEE_GET && dm->cmd != DCB_CMD_IEEE_SET &&
	    dm->cmd != DCB_CMD_IEEE_DEL) {
		snprintf(err, errlen, "not an IEEE DCB message (cmd %u)", dm->cmd);
		return -EBADMSG;
	}
	r = rw_nl_parse_msg(&top_set, buf, sizeof(*dm), tb, bad, e, sizeof(e));
	if (r) {
		snprintf(err, errlen, "%s", e);
		return r;
	}
	if (e[0])
		first_err(err, errlen, e, &any);
	if (bad[DCB_ATTR_DCBX]) {
		d->dcbx_err = -EBADMSG;
	} else if (tb[DCB_ATTR_DCBX]) {
		d->have_dcbx = true;
		d->dcbx = mnl_attr_get_u8(tb[DCB_ATTR_DCBX]);
	}
	if (bad[DCB_ATTR_IEEE]) {
		d->ets_err = d->maxrate_err = d->pfc_err = d->buffer_err = d->app_err = -EBADMSG;
	} else if (!tb[DCB_ATTR_IEEE]) {
		snprintf(err, errlen, "no DCB_ATTR_IEEE nest");
		return -EBADMSG;
	} else {
		parse_ieee_nest(tb[DCB_ATTR_IEEE], d, err, errlen, &any);
	}
	if (!any)
		return 0;
	/* what d says is still true; the parts marked _err are what was wrong */
	d->partial = true;
	return -EBADMSG;
}

int dcb_parse_dcbx(const void *buf, size_t len, uint8_t *dcbx, char *err, size_t errlen)
{
	const struct nlattr *tb[DCB_ATTR_MAX + 1];
	const struct dcbmsg *dm;
	int r;

	r = check_dcb_msg(buf, len, &dm, err, errlen);
	if (r)
		return r;
	if (dm->cmd != DCB_CMD_GDCBX) {
		snprintf(err, errlen, "not a DCB_CMD_GDCBX reply (cmd %u)", dm->cmd);
		return -EBADMSG;
	}
	r = rw_nl_parse_msg(&top_set, buf, sizeof(*dm), tb, NULL, err, errlen);
	if (r)
		return r;
	if (!tb[DCB_ATTR_DCBX]) {
		snprintf(err, errlen, "DCB_CMD_GDCBX reply without DCB_ATTR_DCBX");
		return -EBADMSG;
	}
	*dcbx = mnl_attr_get_u8(tb[DCB_ATTR_DCBX]);
	return 0;
}

void dcb_dcbx_str(uint8_t dcbx, char *buf, size_t len)
{
	static const struct {
		uint8_t bit;
		const char *name;
	} flags[] = {
		{ DCB_CAP_DCBX_HOST, "host" },	   { DCB_CAP_DCBX_LLD_MANAGED, "lld" },
		{ DCB_CAP_DCBX_VER_CEE, "cee" },   { DCB_CAP_DCBX_VER_IEEE, "ieee" },
		{ DCB_CAP_DCBX_STATIC, "static" },
	};
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(flags); i++) {
		if (!(dcbx & flags[i].bit))
			continue;
		off += (size_t)snprintf(buf + off, off < len ? len - off : 0, "%s%s",
					off ? "," : "", flags[i].name);
	}
	if (!buf[0])
		snprintf(buf, len, "none");
}

static void set_dcbx(struct object *o, uint8_t dcbx)
{
	char mode[RW_STR_MAX];

	dcb_dcbx_str(dcbx, mode, sizeof(mode));
	field_set_str(o, F_NETDEV_DCBX_MODE, mode);
	field_set_bool(o, F_NETDEV_DCBX_HOST, dcbx & DCB_CAP_DCBX_HOST);
}

static void set_array8(struct object *o, enum field_id id, const uint8_t *v)
{
	for (int i = 0; i < RW_PRIO_COUNT; i++)
		field_set_prio(o, id, i, v[i]);
}

/* Why a part is absent: broken in this reply (error), or not sent (unsupported). */
static int part_err(int err)
{
	return err ? err : -EOPNOTSUPP;
}

void dcb_fill(struct object *o, const struct dcb_ieee *d, bool config)
{
	if (d->have_pfc) {
		for (int p = 0; p < RW_PRIO_COUNT; p++) {
			field_set_prio(o, F_NETDEV_PFC_REQUESTS, p, d->pfc.requests[p]);
			field_set_prio(o, F_NETDEV_PFC_INDICATIONS, p, d->pfc.indications[p]);
		}
	} else {
		field_absent_errno(o, F_NETDEV_PFC_REQUESTS, part_err(d->pfc_err));
		field_absent_errno(o, F_NETDEV_PFC_INDICATIONS, part_err(d->pfc_err));
	}
	if (!config)
		return;
	if (d->have_pfc) {
		field_set_set(o, F_NETDEV_PFC_ENABLED, d->pfc.pfc_en);
		field_set_int(o, F_NETDEV_PFC_CAP, d->pfc.pfc_cap);
		field_set_int(o, F_NETDEV_PFC_DELAY, d->pfc.delay);
	} else {
		field_absent_errno(o, F_NETDEV_PFC_ENABLED, part_err(d->pfc_err));
		field_absent_errno(o, F_NETDEV_PFC_CAP, part_err(d->pfc_err));
		field_absent_errno(o, F_NETDEV_PFC_DELAY, part_err(d->pfc_err));
	}
	if (d->have_ets) {
		set_array8(o, F_NETDEV_ETS_PRIO_TC, d->ets.prio_tc);
		set_array8(o, F_NETDEV_ETS_TC_TSA, d->ets.tc_tsa);
		set_array8(o, F_NETDEV_ETS_TC_BW, d->ets.tc_tx_bw);
	} else {
		field_absent_errno(o, F_NETDEV_ETS_PRIO_TC, part_err(d->ets_err));
		field_absent_errno(o, F_NETDEV_ETS_TC_TSA, part_err(d->ets_err));
		field_absent_errno(o, F_NETDEV_ETS_TC_BW, part_err(d->ets_err));
	}
	/* Only drivers with ieee_getmaxrate send it (mlx5, mlx4, ...); 0 is "no limit". */
	if (d->have_maxrate) {
		for (int tc = 0; tc < RW_PRIO_COUNT; tc++)
			field_set_prio(o, F_NETDEV_ETS_TC_MAXRATE, tc, d->maxrate.tc_maxrate[tc]);
	} else {
		field_absent_errno(o, F_NETDEV_ETS_TC_MAXRATE, part_err(d->maxrate_err));
	}
	if (d->have_buffer) {
		set_array8(o, F_NETDEV_PRIO_BUFFER, d->buffer.prio2buffer);
		for (int b = 0; b < RW_PRIO_COUNT; b++)
			field_set_prio(o, F_NETDEV_BUFFER_SIZE, b, d->buffer.buffer_size[b]);
		field_set_int(o, F_NETDEV_BUFFER_TOTAL, d->buffer.total_size);
	} else {
		field_absent_errno(o, F_NETDEV_PRIO_BUFFER, part_err(d->buffer_err));
		field_absent_errno(o, F_NETDEV_BUFFER_SIZE, part_err(d->buffer_err));
		field_absent_errno(o, F_NETDEV_BUFFER_TOTAL, part_err(d->buffer_err));
	}
	if (d->app_err) {
		field_absent_errno(o, F_NETDEV_DSCP_MAP, d->app_err);
		field_absent_errno(o, F_NETDEV_TRUST, d->app_err);
	} else {
		/* The map is present (maybe empty: trust pcp) whenever the device has DCB. */
		field_set_dscp_map(o, F_NETDEV_DSCP_MAP, d->dscp);
		field_set_str(o, F_NETDEV_TRUST, d->n_dscp ? "dscp" : "pcp");
	}
	if (d->have_dcbx) {
		set_dcbx(o, d->dcbx);
	} else if (d->dcbx_err) {
		field_absent_errno(o, F_NETDEV_DCBX_MODE, d->dcbx_err);
		field_absent_errno(o, F_NETDEV_DCBX_HOST, d->dcbx_err);
	}
}

/* ---- notifications ---- */

int dcb_drain_events(int fd, void *buf, size_t len)
{
	return rw_nl_drain(fd, buf, len, RTM_GETDCB, RTM_SETDCB);
}

/* ---- the collector ---- */

/*
 * "Not here" causes are quiet; anything else is said once per device and
 * cause.  A malformed reply is said with what was wrong in it:
 * "dcb: eth2: DCB_ATTR_IEEE_PFC: payload 12 bytes, want 136".
 */
static void note_err(const char *dev, const char *what, int err, const char *detail)
{
	char key[128];

	if (err < 0)
		err = -err;
	if (absent_from_errno(err) == ABS_UNSUPPORTED)
		return;
	snprintf(key, sizeof(key), "dcb:%s:%s:%d", dev, what, err);
	if (err == EBADMSG && detail && *detail)
		rw_log_once(LOG_LVL_WARN, key, "dcb: %s: %s", dev, detail);
	else
		rw_log_once(LOG_LVL_WARN, key, "dcb: %s: %s: %s%s%s", dev, what, strerror(err),
			    detail && *detail ? ": " : "", detail ? detail : "");
}

/* The whole request failed: every dcb field of the device (counters only on a fast poll). */
static void absent_all(struct object *o, int err, bool config)
{
	field_absent_source_errno(o, SRC_DCB, config ? FIELDS_ALL : FIELDS_COUNTERS, err);
}

static struct nlmsghdr *dcb_msg(struct dcb_priv *p, uint8_t cmd, const char *ifname)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(p->req);
	struct dcbmsg *dm;

	nlh->nlmsg_type = RTM_GETDCB;
	dm = mnl_nlmsg_put_extra_header(nlh, sizeof(*dm));
	dm->dcb_family = AF_UNSPEC;
	dm->cmd = cmd;
	mnl_attr_put_strz(nlh, DCB_ATTR_IFNAME, ifname);
	return nlh;
}

static void collect_dcbx(struct dcb_priv *p, struct object *o)
{
	const struct nlmsghdr *reply;
	char err[160];
	uint8_t dcbx;
	int r;

	r = rw_nl_request(&p->rq, dcb_msg(p, DCB_CMD_GDCBX, o->name), &reply, err, sizeof(err));
	if (!r)
		r = dcb_parse_dcbx(reply, reply->nlmsg_len, &dcbx, err, sizeof(err));
	if (r) {
		field_absent_errno(o, F_NETDEV_DCBX_MODE, r);
		field_absent_errno(o, F_NETDEV_DCBX_HOST, r);
		note_err(o->name, "DCB_CMD_GDCBX", r, err);
		return;
	}
	set_dcbx(o, dcbx);
}

static int dcb_collect(struct collector_ctx *cc, struct node_model *m, unsigned int what)
{
	struct dcb_priv *p = cc->priv;
	bool config = what & COLLECT_SLOW;

	for (size_t i = 0; i < m->n_netdevs; i++) {
		struct object *o = m->netdevs[i];
		struct dcb_dev *dd = o->cpriv[cc->idx];
		const struct nlmsghdr *reply;
		struct dcb_ieee d = { .partial = false };
		char err[160];
		int r;

		if (!dd) {
			dd = calloc(1, sizeof(*dd));
			if (!dd) {
				absent_all(o, -ENOMEM, config);
				continue;
			}
			o->cpriv[cc->idx] = dd;
		} else if (!config && dd->err) {
			continue; /* no DCB here: asked again on the next slow poll */
		}
		r = rw_nl_request(&p->rq, dcb_msg(p, DCB_CMD_IEEE_GET, o->name), &reply, err,
				  sizeof(err));
		if (!r)
			r = dcb_parse_ieee(reply, reply->nlmsg_len, &d, err, sizeof(err));
		if (r && d.partial) {
			/* a bad attribute blanks what it carries; the rest of the reply stands */
			note_err(o->name, "DCB_CMD_IEEE_GET", r, err);
			r = 0;
		} else if (r) {
			absent_all(o, r, config);
			if (config && absent_from_errno(r) == ABS_UNSUPPORTED)
				dd->err = -r;
			note_err(o->name, "DCB_CMD_IEEE_GET", r, err);
			continue;
		}
		dd->err = 0;
		dcb_fill(o, &d, config);
		if (config && !d.have_dcbx)
			collect_dcbx(p, o);
	}
	return 0;
}

static int dcb_init(struct collector_ctx *cc)
{
	struct dcb_priv *p = calloc(1, sizeof(*p));
	int r, fd;

	if (!p)
		return -ENOMEM;
	cc->priv = p;
	r = rw_nl_open(&p->rq, NETLINK_ROUTE, NL_RXBUF, 2000);
	if (r) {
		snprintf(cc->detail, sizeof(cc->detail), "rtnetlink: %s", strerror(-r));
		return r;
	}
	p->evbuf = malloc(EV_BUFLEN);
	p->ev = mnl_socket_open(NETLINK_ROUTE);
	if (!p->evbuf || !p->ev ||
	    mnl_socket_bind(p->ev, 1u << (RTNLGRP_DCB - 1), MNL_SOCKET_AUTOPID) < 0) {
		/* Without notifications the slow loop still catches changes. */
		log_warn("dcb: no RTNLGRP_DCB notifications: %s", strerror(errno));
		if (p->ev)
			mnl_socket_close(p->ev);
		p->ev = NULL;
		return 0;
	}
	fd = mnl_socket_get_fd(p->ev);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	return 0;
}

static void dcb_fini(struct collector_ctx *cc)
{
	struct dcb_priv *p = cc->priv;

	if (!p)
		return;
	rw_nl_close(&p->rq);
	if (p->ev)
		mnl_socket_close(p->ev);
	free(p->evbuf);
	free(p);
	cc->priv = NULL;
}

static int dcb_event_fd(struct collector_ctx *cc)
{
	struct dcb_priv *p = cc->priv;

	return p && p->ev ? mnl_socket_get_fd(p->ev) : -1;
}

static int dcb_event(struct collector_ctx *cc)
{
	struct dcb_priv *p = cc->priv;

	return dcb_drain_events(mnl_socket_get_fd(p->ev), p->evbuf, EV_BUFLEN);
}

const struct collector dcb_collector = {
	.name = "dcb",
	.source = SRC_DCB,
	.help = "IEEE DCB: PFC (enabled set, delay, requests/indications), ETS, TC max rates, "
		"APP table (DSCP -> priority, trust), DCBX mode, buffers (rtnetlink RTM_GETDCB)",
	.default_enabled = true,
	.init = dcb_init,
	.collect = dcb_collect,
	.fini = dcb_fini,
	.event_fd = dcb_event_fd,
	.event = dcb_event,
	.obj_free = free,
};
