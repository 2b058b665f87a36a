// SPDX-License-Identifier: MIT
/*
 * verbs: what only libibverbs knows.  active_mtu is not in sysfs; it and
 * max_mtu come from ibv_query_port() (exported in bytes).  Port state and
 * link layer are filled here only when the rdma collector could not, and
 * GID types only for table entries sysfs left untyped (kernels before
 * gid_attrs), through ibv_query_gid_ex().
 *
 * Each device is opened once and its context kept, keyed by device name.
 * A context is closed and reopened after IBV_EVENT_DEVICE_FATAL (a device
 * reset) or when ibv_query_port() fails with ENODEV/EIO, and closed when
 * the device disappears from ibv_get_device_list().  Slow loop only.
 *
 * Software devices (rxe, siw: no PCI function behind them) are the
 * exception: their drivers cannot disassociate a user context, so the
 * kernel's ib_uverbs_remove_one() waits for every open context to close
 * before `rdma link delete` completes.  Their contexts are closed at the
 * end of each poll instead of holding a delete up for a whole interval.
 *
 * Port events (IBV_EVENT_PORT_ACTIVE, PORT_ERR, ...) arrive on each kept
 * context's async fd; one epoll fd over them all is the collector's
 * notification fd, so a port that goes down has its state re-read (by the
 * rdma collector, which fills it) and its rules run before the next poll.
 * A software device's context is not kept, so its events are not seen:
 * the next configuration poll reads its state.
 *
 * verbs talks to the live machine's devices and nothing else: it runs only
 * when --sysfs-root is this machine's /sys.  With a fixture tree (or a
 * --from replay) its fields stay "not_collected" rather than mixing the
 * real host's devices into a fixture's ports.
 *
 * libibverbs is opened when the collector starts on the live machine
 * (src/core/verbs_lazy.c says why), so without it the collector cannot
 * start, with the library named as the reason; over a fixture tree it
 * starts without it.  collect() and the event callbacks reach verbs only
 * through contexts, which only a started live collector opens.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "collector.h"
#include "rdma.h"
#include "util.h"
#include "verbs_lazy.h"

struct vdev {
	char name[RW_NAME_MAX];
	struct ibv_context *ctx;
	int open_err; /* errno of the last failed ibv_open_device() */
	bool reopen;
	bool seen;
	bool transient; /* software device: closed after each poll */
};

struct verbs_priv {
	struct vdev *d;
	size_t n, cap;
	bool live;
	const struct rw_config *cfg;
	int ep; /* epoll over the contexts' async fds; -1: none */
};

/* enum ibv_mtu: IBV_MTU_256 = 1 ... IBV_MTU_4096 = 5; 0 for anything else. */
static int64_t mtu_bytes(enum ibv_mtu mtu)
{
	return mtu >= IBV_MTU_256 && mtu <= IBV_MTU_4096 ? 128LL << mtu : 0;
}

static void vdev_close(struct verbs_priv *vp, struct vdev *v)
{
	if (v->ctx) {
		if (vp->ep >= 0)
			epoll_ctl(vp->ep, EPOLL_CTL_DEL, v->ctx->async_fd, NULL);
		ibv_close_device(v->ctx);
	}
	v->ctx = NULL;
}

static void vdev_open(struct verbs_priv *vp, struct vdev *v, struct ibv_device *dev)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int fl;

	v->ctx = ibv_open_device(dev);
	v->reopen = false;
	if (!v->ctx) {
		char key[96];

		v->open_err = errno ? errno : EIO;
		snprintf(key, sizeof(key), "verbs:open:%s", v->name);
		rw_log_once(LOG_LVL_WARN, key, "verbs: %s: ibv_open_device: %s", v->name,
			    strerror(v->open_err));
		return;
	}
	v->open_err = 0;
	/* Events are drained each slow poll; reading must not block. */
	fl = fcntl(v->ctx->async_fd, F_GETFL);
	if (fl >= 0)
		fcntl(v->ctx->async_fd, F_SETFL, fl | O_NONBLOCK);
	/* a software device's context is closed after the poll: nothing to wait on */
	if (vp->ep >= 0 && !v->transient && epoll_ctl(vp->ep, EPOLL_CTL_ADD, v->ctx->async_fd, &ev))
		log_debug("verbs: %s: no port events (epoll: %s)", v->name, strerror(errno));
}

/* Events that say a port's state or addresses changed: re-read it now. */
static bool port_event(enum ibv_event_type t)
{
	switch (t) {
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_LID_CHANGE:
	case IBV_EVENT_PKEY_CHANGE:
	case IBV_EVENT_GID_CHANGE:
	case IBV_EVENT_SM_CHANGE:
	case IBV_EVENT_CLIENT_REREGISTER:
	case IBV_EVENT_DEVICE_FATAL:
		return true;
	default:
		return false;
	}
}

/* Drain a context's events: how many were port events. */
static int drain_events(struct vdev *v)
{
	struct ibv_async_event ev;
	int n = 0;

	if (!v->ctx)
		return 0;
	while (!ibv_get_async_event(v->ctx, &ev)) {
		if (ev.event_type == IBV_EVENT_DEVICE_FATAL) {
			log_warn("verbs: %s: device fatal event (reset); reopening", v->name);
			v->reopen = true;
		}
		n += port_event(ev.event_type);
		ibv_ack_async_event(&ev);
	}
	return n;
}

static struct vdev *vdev_find(struct verbs_priv *vp, const char *name)
{
	for (size_t i = 0; i < vp->n; i++)
		if (!strcmp(vp->d[i].name, name))
			return &vp->d[i];
	return NULL;
}

static struct vdev *vdev_add(struct verbs_priv *vp, const char *name)
{
	if (vp->n == vp->cap) {
		size_t nc = vp->cap ? vp->cap * 2 : 8;
		struct vdev *t = realloc(vp->d, nc * sizeof(*t));

		if (!t)
			return NULL;
		vp->d = t;
		vp->cap = nc;
	}
	memset(&vp->d[vp->n], 0, sizeof(vp->d[vp->n]));
	strlcpy0(vp->d[vp->n].name, name, RW_NAME_MAX);
	return &vp->d[vp->n++];
}

/* Does the device sit on a bus (a PCI function), or is it a software one? */
static bool has_parent(struct ibv_device *dev)
{
	char path[sizeof(dev->ibdev_path) + 16];

	snprintf(path, sizeof(path), "%s/device", dev->ibdev_path);
	return !access(path, F_OK);
}

/* Open what is new, reopen what was reset, close what went away. */
static int refresh_devices(struct verbs_priv *vp)
{
	struct ibv_device **list;
	int num = 0, r = 0;
	size_t keep = 0;

	for (size_t i = 0; i < vp->n; i++) {
		drain_events(&vp->d[i]);
		vp->d[i].seen = false;
	}
	list = ibv_get_device_list(&num);
	/* NULL with ENOSYS: no uverbs in this kernel, which means no devices. */
	if (!list) {
		if (errno != ENOSYS && errno != ENOENT)
			rw_log_once(LOG_LVL_WARN, "verbs:list", "verbs: ibv_get_device_list: %s",
				    strerror(errno));
		num = 0;
	}
	for (int i = 0; i < num; i++) {
		const char *name = ibv_get_device_name(list[i]);
		struct vdev *v;

		if (!name || strlen(name) >= RW_NAME_MAX)
			continue;
		/* libibverbs listed it (sysfs attributes only); an excluded device is never opened
		 */
		if (!config_rdma_wanted(vp->cfg, name))
			continue;
		v = vdev_find(vp, name);
		if (!v)
			v = vdev_add(vp, name);
		if (!v) {
			r = -ENOMEM;
			break;
		}
		v->seen = true;
		v->transient = !has_parent(list[i]);
		if (v->ctx && v->reopen)
			vdev_close(vp, v);
		if (!v->ctx)
			vdev_open(vp, v, list[i]);
	}
	/* Contexts hold their own reference to the device; the list can go. */
	if (list)
		ibv_free_device_list(list);
	for (size_t i = 0; i < vp->n; i++) {
		if (!vp->d[i].seen) {
			vdev_close(vp, &vp->d[i]);
			continue;
		}
		vp->d[keep++] = vp->d[i];
	}
	vp->n = keep;
	return r;
}

static void fill_gid_types(struct vdev *v, struct object *o)
{
	static const char *const types[] = {
		[IBV_GID_TYPE_IB] = "IB",
		[IBV_GID_TYPE_ROCE_V1] = "RoCE v1",
		[IBV_GID_TYPE_ROCE_V2] = "RoCE v2",
	};

	if (!field_present(o, F_PORT_GIDS))
		return;
	for (size_t i = 0; i < o->gids.n; i++) {
		struct gid_entry *g = &o->gids.e[i];
		struct ibv_gid_entry e;

		if (g->type[0])
			continue;
		if (ibv_query_gid_ex(v->ctx, o->port, g->index, &e, 0))
			continue;
		if (e.gid_type < ARRAY_SIZE(types) && types[e.gid_type])
			strlcpy0(g->type, types[e.gid_type], sizeof(g->type));
	}
}

static void fill_port(struct vdev *v, struct object *o)
{
	struct ibv_port_attr pa;
	int r;

	if (!v) {
		/* The kernel has the port but user space cannot open it (no uverbs). */
		field_absent_source(o, SRC_VERBS, FIELDS_ALL, ABS_UNSUPPORTED, ENODEV);
		return;
	}
	if (!v->ctx) {
		field_absent_source_errno(o, SRC_VERBS, FIELDS_ALL, v->open_err);
		return;
	}
	if (o->port > UINT8_MAX) {
		field_absent_source(o, SRC_VERBS, FIELDS_ALL, ABS_UNSUPPORTED, ERANGE);
		return;
	}
	memset(&pa, 0, sizeof(pa));
	r = ibv_query_port(v->ctx, (uint8_t)o->port, &pa);
	if (r) {
		char key[96];

		/* ENODEV/EIO: the device behind the context was reset or removed. */
		if (r == ENODEV || r == EIO)
			v->reopen = true;
		snprintf(key, sizeof(key), "verbs:query:%s/%u", o->name, o->port);
		rw_log_once(LOG_LVL_WARN, key, "verbs: %s/%u: ibv_query_port: %s", o->name, o->port,
			    strerror(r));
		field_absent_source_errno(o, SRC_VERBS, FIELDS_ALL, r);
		return;
	}
	if (mtu_bytes(pa.active_mtu))
		field_set_int(o, F_PORT_ACTIVE_MTU, mtu_bytes(pa.active_mtu));
	else
		field_absent(o, F_PORT_ACTIVE_MTU, ABS_ERROR, ERANGE);
	if (mtu_bytes(pa.max_mtu))
		field_set_int(o, F_PORT_MAX_MTU, mtu_bytes(pa.max_mtu));
	else
		field_absent(o, F_PORT_MAX_MTU, ABS_ERROR, ERANGE);
	if (!field_present(o, F_PORT_STATE))
		field_set_str(o, F_PORT_STATE, rdma_port_state_name(pa.state));
	/* ibv_devinfo shows an unspecified link layer as InfiniBand. */
	if (!field_present(o, F_PORT_LINK_LAYER))
		field_set_str(o, F_PORT_LINK_LAYER,
			      pa.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand");
	fill_gid_types(v, o);
}

static int verbs_collect(struct collector_ctx *cc, struct node_model *m, unsigned what)
{
	struct verbs_priv *vp = cc->priv;
	struct object **ports;
	size_t n;
	int r;

	if (!(what & COLLECT_SLOW) || !vp->live)
		return 0;
	r = refresh_devices(vp);
	if (r)
		return r;
	/* Only the ports the rdma collector found: it owns their lifetime. */
	n = model_objects(m, OBJ_RDMA_PORT, &ports);
	for (size_t i = 0; i < n; i++)
		fill_port(vdev_find(vp, ports[i]->name), ports[i]);
	for (size_t i = 0; i < vp->n; i++)
		if (vp->d[i].transient)
			vdev_close(vp, &vp->d[i]);
	return 0;
}

static int verbs_init(struct collector_ctx *cc)
{
	struct verbs_priv *vp;
	char real[PATH_MAX];
	bool live = realpath(cc->cfg->sysfs_root, real) && !strcmp(real, "/sys");
	int r;

	/* Only the live machine needs libibverbs: a fixture tree starts without it. */
	if (live) {
		r = verbs_lazy_open(cc->detail, sizeof(cc->detail));
		if (r)
			return r;
	}
	vp = calloc(1, sizeof(*vp));
	if (!vp)
		return -ENOMEM;
	cc->priv = vp;
	vp->cfg = cc->cfg;
	vp->live = live;
	/* without it ports are re-read at the configuration poll only */
	vp->ep = vp->live ? epoll_create1(EPOLL_CLOEXEC) : -1;
	return 0;
}

static void verbs_fini(struct collector_ctx *cc)
{
	struct verbs_priv *vp = cc->priv;

	if (!vp)
		return;
	for (size_t i = 0; i < vp->n; i++)
		vdev_close(vp, &vp->d[i]);
	if (vp->ep >= 0)
		close(vp->ep);
	free(vp->d);
	free(vp);
	cc->priv = NULL;
}

static int verbs_event_fd(struct collector_ctx *cc)
{
	struct verbs_priv *vp = cc->priv;

	return vp ? vp->ep : -1;
}

static int verbs_event(struct collector_ctx *cc)
{
	struct verbs_priv *vp = cc->priv;
	int n = 0;

	for (size_t i = 0; i < vp->n; i++)
		n += drain_events(&vp->d[i]);
	return n;
}

const struct collector verbs_collector = {
	.name = "verbs",
	.source = SRC_VERBS,
	.help = "RDMA ports: active_mtu, max_mtu (libibverbs; live machine only)",
	.default_enabled = true,
	.init = verbs_init,
	.collect = verbs_collect,
	.fini = verbs_fini,
	.event_fd = verbs_event_fd,
	.event = verbs_event,
	/* the port's state is the rdma collector's (nldev), verbs' only where it has none */
	.event_sources = 1u << SRC_RDMA | 1u << SRC_VERBS,
};
