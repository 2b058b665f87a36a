// SPDX-License-Identifier: MIT
/*
 * wire: the BPF wire view as a collector.  Settings say how RoCE traffic
 * should be marked; this counts how it is marked, per (direction, DSCP, ECN
 * codepoint, class), with the tc programs of collectors/wire/.
 *
 * Which netdevs: those in the model (so --netdev-include/--netdev-exclude
 * apply) that carry an RDMA port; and when --netdev-include is given, every
 * netdev it matches, RDMA or not, so that a veth, a bond or a mirror port
 * can be watched on purpose.  Attach and detach follow the slow loop; an
 * object the model drops (the device went away) is detached by obj_free,
 * and everything left is detached by fini, which `serve` reaches on SIGTERM.
 *
 * Counters are read cumulatively every fast poll (the map is never
 * cleared), so a poll that fails loses nothing.
 *
 * Off by default: loading needs CAP_BPF and CAP_NET_ADMIN, and tc only sees
 * what crosses the kernel's network stack (see README, "Wire view").
 */
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collector.h"
#include "wire_libbpf.h"
#include "wire_fields.h"
#include "wire_loader.h"
#include "util.h"

/* include/uapi/linux/capability.h: CAP_BPF came with Linux 5.8. */
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

struct wire_col {
	struct wire *w;
	const struct rw_config *cfg;
	int idx;
	bool said_nothing_to_watch;
};

/* obj->cpriv[idx] of a netdev we watch or tried to. */
struct wire_nd {
	struct wire_col *wc; /* obj_free gets nothing else */
	int ifindex;	     /* attached; 0 when not */
	int failed_ifindex;  /* the last attach that failed, and how */
	int failed_err;
	/*
	 * The map's counters for ifindex from before we attached: counters
	 * are never deleted, and a new device may get the ifindex of an old
	 * one we watched.  NULL when there were none.
	 */
	struct wire_counts *base;
	struct wire_window win;
};

/* wire_key.class -> the model's class (the two enums are in different orders). */
static const enum wire_class wire_model_class[WIRE_CLASS_MAX] = {
	[WIRE_CLASS_DATA] = WIRE_DATA,
	[WIRE_CLASS_CNP] = WIRE_CNP,
	[WIRE_CLASS_ACK] = WIRE_ACK,
};

/*
 * The loader's messages, and libbpf's through it.  Its failures name the
 * device, so "once per message" is once per cause per device: the slow loop
 * retrying an attach does not repeat them.
 */
static void wire_col_log(int level, const char *msg)
{
	enum log_level lvl = LOG_LVL_DEBUG;

	if (level == WIRE_LOG_ERROR)
		lvl = LOG_LVL_ERROR;
	else if (level == WIRE_LOG_WARN)
		lvl = LOG_LVL_WARN;
	else if (level == WIRE_LOG_INFO)
		lvl = LOG_LVL_INFO;
	if (lvl <= LOG_LVL_WARN && !strncmp(msg, "wire: ", 6))
		rw_log_once(lvl, msg, "%s", msg);
	else
		rw_log(lvl, "%s", msg);
}

/*
 * Say what is missing before the kernel says EPERM with libbpf's long
 * explanation.  kernel/bpf/syscall.c: loading needs bpf_capable() (CAP_BPF
 * or CAP_SYS_ADMIN), a tc program also bpf_net_capable() (CAP_NET_ADMIN or
 * CAP_SYS_ADMIN), and attaching to a device CAP_NET_ADMIN.  Inside a user
 * namespace these can look present and still not count: then the load
 * fails with EPERM and wire_init() says so.
 */
static int wire_check_caps(struct collector_ctx *cc)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { 0 };
	const char *lacks = "both";
	bool sys, bpf, net;

	/* If the kernel will not tell, let the load itself decide. */
	if (syscall(SYS_capget, &hdr, data))
		return 0;
#define WIRE_HAS(cap) (data[CAP_TO_INDEX(cap)].effective & CAP_TO_MASK(cap))
	sys = WIRE_HAS(CAP_SYS_ADMIN);
	bpf = sys || WIRE_HAS(CAP_BPF);
	net = sys || WIRE_HAS(CAP_NET_ADMIN);
#undef WIRE_HAS
	if (bpf && net)
		return 0;
	if (bpf)
		lacks = "CAP_NET_ADMIN";
	else if (net)
		lacks = "CAP_BPF";
	snprintf(cc->detail, sizeof(cc->detail),
		 "needs CAP_BPF and CAP_NET_ADMIN to load and attach its BPF program; this "
		 "process lacks %s (run as root or grant both)",
		 lacks);
	return -EPERM;
}

static int wire_init(struct collector_ctx *cc)
{
	struct wire_col *wc;
	int r;

	r = wire_check_caps(cc);
	if (r)
		return r;
	r = wire_libbpf_open(cc->detail, sizeof(cc->detail));
	if (r)
		return r;
	wc = calloc(1, sizeof(*wc));
	if (!wc)
		return -ENOMEM;
	wc->cfg = cc->cfg;
	wc->idx = cc->idx;
	cc->priv = wc;
	r = wire_open(&wc->w, cc->cfg->wire_port, wire_col_log);
	if (r == -EPERM)
		snprintf(cc->detail, sizeof(cc->detail),
			 "the kernel refused to load the BPF program (EPERM): needs CAP_BPF and "
			 "CAP_NET_ADMIN of the initial user namespace");
	else if (r == -ENOSYS)
		snprintf(cc->detail, sizeof(cc->detail),
			 "this kernel has no BPF system call (CONFIG_BPF_SYSCALL)");
	else if (r)
		snprintf(cc->detail, sizeof(cc->detail),
			 "cannot load the BPF program: %s (the log above says why)", strerror(-r));
	return r;
}

static void wire_fini(struct collector_ctx *cc)
{
	struct wire_col *wc = cc->priv;

	if (!wc)
		return;
	/* The model's objects were freed first and detached theirs; this catches the rest. */
	wire_close(wc->w);
	free(wc);
	cc->priv = NULL;
}

/* Where a map key goes in struct wire_counts; false for a key we cannot place. */
static bool wire_slot(const struct wire_key *k, int *cls)
{
	if (k->dir >= 2 || k->dscp >= RW_DSCP_COUNT || k->ecn >= 4 || k->class >= WIRE_CLASS_MAX)
		return false;
	*cls = wire_model_class[k->class];
	return true;
}

struct wire_base_ctx {
	int ifindex;
	struct wire_counts *base;
};

static int wire_base_cb(const struct wire_key *k, uint64_t packets, uint64_t bytes, void *arg)
{
	struct wire_base_ctx *bc = arg;
	int cls;

	if ((int)k->ifindex != bc->ifindex || !wire_slot(k, &cls))
		return 0;
	if (!bc->base && !(bc->base = calloc(1, sizeof(*bc->base))))
		return -ENOMEM;
	bc->base->packets[k->dir][k->dscp][k->ecn][cls] = packets;
	bc->base->bytes[k->dir][k->dscp][k->ecn][cls] = bytes;
	return 0;
}

static void wire_unwatch(struct wire_nd *nd)
{
	if (nd->ifindex)
		wire_detach(nd->wc->w, nd->ifindex);
	nd->ifindex = 0;
	free(nd->base);
	nd->base = NULL;
}

static void wire_obj_free(void *cpriv)
{
	struct wire_nd *nd = cpriv;

	wire_unwatch(nd);
	free(nd);
}

/* o is no longer one to watch (its RDMA port went away). */
static void wire_drop(struct wire_col *wc, struct object *o)
{
	struct wire_nd *nd = o->cpriv[wc->idx];

	if (!nd)
		return;
	wire_obj_free(nd);
	o->cpriv[wc->idx] = NULL;
	free(o->wire);
	o->wire = NULL;
	wire_fields_absent(o, ABS_NOT_COLLECTED, 0);
}

static void wire_watch(struct wire_col *wc, struct object *o, int64_t now_ns)
{
	struct wire_nd *nd = o->cpriv[wc->idx];
	struct wire_base_ctx bc = { .ifindex = o->ifindex };
	int r;

	if (!nd) {
		nd = calloc(1, sizeof(*nd));
		if (!nd) {
			wire_fields_absent(o, ABS_ERROR, ENOMEM);
			return;
		}
		nd->wc = wc;
		o->cpriv[wc->idx] = nd;
	}
	if (nd->ifindex == o->ifindex)
		return;
	/* Same name, new device: its counters start from zero. */
	wire_unwatch(nd);
	free(o->wire);
	o->wire = NULL;
	/* No Ethernet header: it stays so until the device is replaced. */
	if (nd->failed_ifindex == o->ifindex && nd->failed_err == -EOPNOTSUPP)
		return;

	/* Before attaching: nothing can count on this ifindex in between. */
	r = wire_read(wc->w, wire_base_cb, &bc);
	if (!r && !(o->wire = calloc(1, sizeof(*o->wire))))
		r = -ENOMEM;
	if (!r)
		r = wire_attach(wc->w, o->ifindex);
	if (r) {
		free(bc.base);
		free(o->wire);
		o->wire = NULL;
		nd->failed_ifindex = o->ifindex;
		nd->failed_err = r;
		wire_fields_absent(o, absent_from_errno(r), r);
		return;
	}
	nd->ifindex = o->ifindex;
	nd->failed_ifindex = 0;
	nd->base = bc.base;
	wire_window_reset(&nd->win, now_ns);
}

static bool wire_wanted(const struct rw_config *cfg, const struct object *o)
{
	if (o->ifindex <= 0)
		return false;
	if (cfg->has_netdev_include)
		return true;
	return field_present(o, F_NETDEV_RDMA) && o->f[F_NETDEV_RDMA].v.i;
}

static void wire_slow(struct wire_col *wc, struct node_model *m, int64_t now_ns)
{
	size_t watched = 0;

	/* F_NETDEV_RDMA is settled after the poll; this poll's ports are known now. */
	model_link_ports(m);
	for (size_t i = 0; i < m->n_netdevs; i++) {
		struct object *o = m->netdevs[i];

		if (!wire_wanted(wc->cfg, o)) {
			wire_drop(wc, o);
			continue;
		}
		wire_watch(wc, o, now_ns);
		watched++;
	}
	if (!watched && !wc->said_nothing_to_watch)
		log_info("wire: no netdev to watch: none carries an RDMA port (choose some with "
			 "--netdev-include)");
	wc->said_nothing_to_watch = !watched;
}

struct wire_read_ctx {
	struct node_model *m;
	int idx;
};

static int wire_read_cb(const struct wire_key *k, uint64_t packets, uint64_t bytes, void *arg)
{
	struct wire_read_ctx *rc = arg;
	struct object *o = model_netdev_by_ifindex(rc->m, (int)k->ifindex);
	struct wire_nd *nd;
	uint64_t bp = 0, bb = 0;
	int cls;

	/* Keys of devices that went away, or that we stopped watching, stay in the map. */
	if (!o || !(nd = o->cpriv[rc->idx]) || nd->ifindex != (int)k->ifindex || !o->wire ||
	    !wire_slot(k, &cls))
		return 0;
	if (nd->base) {
		bp = nd->base->packets[k->dir][k->dscp][k->ecn][cls];
		bb = nd->base->bytes[k->dir][k->dscp][k->ecn][cls];
	}
	o->wire->packets[k->dir][k->dscp][k->ecn][cls] = packets >= bp ? packets - bp : 0;
	o->wire->bytes[k->dir][k->dscp][k->ecn][cls] = bytes >= bb ? bytes - bb : 0;
	return 0;
}

static int wire_fast(struct collector_ctx *cc, struct wire_col *wc, struct node_model *m,
		     int64_t now_ns)
{
	struct wire_read_ctx rc = { .m = m, .idx = wc->idx };
	int r;

	for (size_t i = 0; i < m->n_netdevs; i++) {
		struct object *o = m->netdevs[i];
		struct wire_nd *nd = o->cpriv[wc->idx];

		if (nd && nd->ifindex && o->wire)
			memset(o->wire, 0, sizeof(*o->wire));
	}
	r = wire_read(wc->w, wire_read_cb, &rc);
	if (r) {
		snprintf(cc->detail, sizeof(cc->detail), "reading the counters: %s", strerror(-r));
		return r;
	}
	for (size_t i = 0; i < m->n_netdevs; i++) {
		struct object *o = m->netdevs[i];
		struct wire_nd *nd = o->cpriv[wc->idx];

		if (nd && nd->ifindex && o->wire)
			wire_fields_derive(o, &nd->win, now_ns);
	}
	return 0;
}

static int wire_collect(struct collector_ctx *cc, struct node_model *m, unsigned what)
{
	struct wire_col *wc = cc->priv;
	int64_t now_ns = ts_ns(&m->mono);

	if (what & COLLECT_SLOW)
		wire_slow(wc, m, now_ns);
	if (what & COLLECT_FAST)
		return wire_fast(cc, wc, m, now_ns);
	return 0;
}

const struct collector wire_collector = {
	.name = "wire",
	.source = SRC_WIRE,
	.help = "RoCE v2 packets seen at tc by DSCP, ECN and class (BPF; needs CAP_BPF, "
		"CAP_NET_ADMIN)",
	.default_enabled = false,
	.init = wire_init,
	.collect = wire_collect,
	.fini = wire_fini,
	.obj_free = wire_obj_free,
};
