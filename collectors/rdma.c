// SPDX-License-Identifier: MIT
/*
 * rdma: RDMA devices and ports — state, physical state, rate, link layer,
 * netdev binding, node GUID, firmware —, the hw counters `rdma statistic`
 * shows, the classic IB port counters, and the GID table with its types.
 *
 * Sources, on the live machine (--sysfs-root is /sys):
 *   - RDMA netlink (rdma_nl.c): the devices, their ports and the hw
 *     counters, one RDMA_NLDEV_CMD_STAT_GET per port per fast poll;
 *   - sysfs (rdma_sysfs.c, rdma_gid.c) for what netlink does not carry:
 *     rate, link_layer, the classic counters/ (MAD PortCounters) and the
 *     GID table (gids/, gid_attrs/).
 * When RDMA netlink is missing (no RDMA stack: EPROTONOSUPPORT) or refuses,
 * and always when --sysfs-root points at another tree (a fixture), sysfs
 * alone is read: ports/P/{state,phys_state,rate,link_layer}, hw_counters/.
 *
 * Values are kept raw: port_xmit_data/port_rcv_data count 4-byte words (the
 * exporter scales them), mlx5 queue counters are 32 bits wide and wrap —
 * deltas are the rules engine's job, which handles wraps and resets.
 *
 * This file: the collector, one slow poll (find the ports, fill their
 * facts) and one fast poll (their counters).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rdma.h"
#include "util.h"

int rdma_cset_put(struct counter_set *cs, int *slot, const char *name, uint64_t v)
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

static void rdma_obj_free(void *cpriv)
{
	struct port_priv *pp = cpriv;

	rdma_cdir_close(&pp->hw);
	rdma_cdir_close(&pp->pc);
	rdma_cdir_close(&pp->pe);
	rdma_cdir_close(&pp->dh);
	free(pp);
}

static void set_str_or_absent(struct object *o, enum field_id id, int r, const char *v)
{
	if (r)
		field_absent_errno(o, id, r);
	else
		field_set_str(o, id, v);
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

/* state, physical state, rate and link layer (into ll, for the GID table) */
static void fill_port_link(struct rdma_priv *rp, struct object *o, const struct found_port *fp,
			   char *ll, size_t ll_len)
{
	char buf[RW_STR_MAX], rel[64];
	int64_t mbps;
	int r;

	if (fp->nl && fp->np.has_state) {
		field_set_str(o, F_PORT_STATE, rdma_port_state_name(fp->np.state));
	} else {
		snprintf(rel, sizeof(rel), "ports/%u/state", fp->port);
		r = rdma_ib_read(rp, fp->dev, rel, buf, sizeof(buf));
		if (!r)
			r = rdma_parse_state(buf, buf, sizeof(buf));
		set_str_or_absent(o, F_PORT_STATE, r, buf);
	}
	if (fp->nl && fp->np.has_phys_state) {
		field_set_str(o, F_PORT_PHYS_STATE, rdma_phys_state_name(fp->np.phys_state));
	} else {
		snprintf(rel, sizeof(rel), "ports/%u/phys_state", fp->port);
		r = rdma_ib_read(rp, fp->dev, rel, buf, sizeof(buf));
		if (!r)
			r = rdma_parse_state(buf, buf, sizeof(buf));
		set_str_or_absent(o, F_PORT_PHYS_STATE, r, buf);
	}

	/* rate and link layer are sysfs-only */
	snprintf(rel, sizeof(rel), "ports/%u/rate", fp->port);
	r = rdma_ib_read(rp, fp->dev, rel, buf, sizeof(buf));
	if (!r)
		r = rdma_parse_rate(buf, &mbps);
	if (r)
		field_absent_errno(o, F_PORT_RATE, r);
	else
		field_set_int(o, F_PORT_RATE, mbps);
	snprintf(rel, sizeof(rel), "ports/%u/link_layer", fp->port);
	r = rdma_ib_read(rp, fp->dev, rel, ll, ll_len);
	set_str_or_absent(o, F_PORT_LINK_LAYER, r, ll);
	if (r)
		ll[0] = '\0';
}

static void fill_port_device(struct rdma_priv *rp, struct object *o, const struct found_port *fp)
{
	char buf[RW_STR_MAX];
	int r;

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
		r = rdma_ib_read(rp, fp->dev, "node_guid", buf, sizeof(buf));
		set_str_or_absent(o, F_PORT_NODE_GUID, r, buf);
		r = rdma_ib_read(rp, fp->dev, "fw_ver", buf, sizeof(buf));
		if (!r && !buf[0])
			field_absent(o, F_PORT_FW, ABS_UNSUPPORTED, 0);
		else
			set_str_or_absent(o, F_PORT_FW, r, buf);
	}

	/* board and HCA type: sysfs only (RDMA netlink has no attribute for them) */
	r = rdma_ib_read(rp, fp->dev, "board_id", buf, sizeof(buf));
	set_str_or_absent(o, F_PORT_BOARD_ID, !r && !buf[0] ? -ENOENT : r, buf);
	r = rdma_ib_read(rp, fp->dev, "hca_type", buf, sizeof(buf));
	set_str_or_absent(o, F_PORT_HCA_TYPE, !r && !buf[0] ? -ENOENT : r, buf);

	/* the driver, by the device's driver link: udev renames devices, not drivers */
	r = rdma_sysfs_driver(rp, fp->dev, buf, sizeof(buf));
	set_str_or_absent(o, F_PORT_DRIVER, r, buf);
}

static void fill_port_netdev(struct rdma_priv *rp, struct object *o, const struct found_port *fp)
{
	char nd[RW_NAME_MAX];
	int r;

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
		r = rdma_sysfs_netdev(rp, fp->dev, fp->port, nd, sizeof(nd));
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
}

/* GID table and the derived NCCL_IB_GID_INDEX */
static void fill_port_gids(struct rdma_priv *rp, struct node_model *m, struct object *o,
			   const struct found_port *fp, const char *ll)
{
	int r;

	r = rdma_read_gids(rp, fp->dev, fp->port, ll, &o->gids);
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
}

/* counter files, kept open until the next slow poll finds a change */
static void open_port_counters(struct rdma_priv *rp, struct port_priv *pp,
			       const struct found_port *fp)
{
	char path[PATH_MAX];

	/*
	 * After ENODEV the kept descriptors belong to an unregistered
	 * device; one re-registered under the same name (a reset) has new
	 * files even though their names are the same.
	 */
	if (pp->gone) {
		rdma_cdir_close(&pp->hw);
		rdma_cdir_close(&pp->pc);
		rdma_cdir_close(&pp->pe);
		rdma_cdir_close(&pp->dh);
	}
	pp->gone = false;
	pp->dev_index = fp->dev_index;
	pp->hw_nl = fp->nl;
	if (pp->hw_nl) {
		rdma_cdir_close(&pp->hw);
	} else {
		snprintf(path, sizeof(path), "%s/%s/ports/%u/hw_counters", rp->ib, fp->dev,
			 fp->port);
		rdma_cdir_scan(&pp->hw, path, "hw_counters");
	}
	snprintf(path, sizeof(path), "%s/%s/ports/%u/counters", rp->ib, fp->dev, fp->port);
	rdma_cdir_scan(&pp->pc, path, "counters");
	snprintf(path, sizeof(path), "%s/%s/ports/%u/counters_ext", rp->ib, fp->dev, fp->port);
	rdma_cdir_scan(&pp->pe, path, "counters_ext");
	/* device-wide counters (mana's sent_cnps): once, on port 1, not on every port */
	if (fp->port == 1) {
		snprintf(path, sizeof(path), "%s/%s/hw_counters", rp->ib, fp->dev);
		rdma_cdir_scan(&pp->dh, path, "device hw_counters");
	}
}

/* optional counters: only RDMA netlink tells them (no sysfs file says enabled) */
static void fill_port_optional(struct rdma_priv *rp, struct object *o, const struct found_port *fp)
{
	int r;

	if (fp->nl && rp->nl.nl) {
		struct rdma_optional opt;
		char err[160] = "";

		r = rdma_nl_optional(rp, o, fp->dev_index, &opt, err, sizeof(err));
		if (r == -EINVAL) /* a kernel without STAT_GET_STATUS, or a port without stats */
			r = -EOPNOTSUPP;
		/* before 5.16 the command does not exist: EOPNOTSUPP, absent "unsupported" */
		if (r && absent_from_errno(r) != ABS_UNSUPPORTED)
			rw_log_once(LOG_LVL_INFO, "rdma:optional",
				    "rdma: %s/%u: optional counters: %s", o->name, o->port,
				    err[0] ? err : rw_strerror(-r));
		rdma_fill_optional(o, &opt, r);
	} else {
		rdma_fill_optional(o, NULL, -EOPNOTSUPP);
	}
}

static void fill_port(struct collector_ctx *cc, struct rdma_priv *rp, struct node_model *m,
		      struct object *o, const struct found_port *fp)
{
	char ll[32] = "";

	fill_port_link(rp, o, fp, ll, sizeof(ll));
	fill_port_device(rp, o, fp);
	fill_port_netdev(rp, o, fp);
	fill_port_gids(rp, m, o, fp, ll);
	open_port_counters(rp, o->cpriv[cc->idx], fp);
	fill_port_optional(rp, o, fp);
}

/* What the port is, whatever it is called now: "guid:...", "pci:..." or "name:...". */
static void port_ident(struct rdma_priv *rp, const struct object *o, char *buf, size_t len)
{
	const struct field_val *g = &o->f[F_PORT_NODE_GUID];
	char path[PATH_MAX], link[PATH_MAX];
	const char *base;
	ssize_t n;

	if (g->state == ABS_NONE && strspn(g->v.s, "0:") != strlen(g->v.s)) {
		snprintf(buf, len, "guid:%.64s", g->v.s);
		return;
	}
	snprintf(path, sizeof(path), "%s/%s/device", rp->ib, o->name);
	n = readlink(path, link, sizeof(link) - 1);
	if (n > 0) {
		link[n] = '\0';
		base = strrchr(link, '/');
		snprintf(buf, len, "pci:%.64s", base ? base + 1 : link);
		return;
	}
	snprintf(buf, len, "name:%.64s", o->name);
}

/*
 * Count the ports that came back after a slow poll that did not find them
 * (roce_rdma_port_reappeared_total), and say once when a new device took an
 * old one's name: the rules engine then starts its history afresh.
 */
static void note_seen(struct rdma_priv *rp, struct object *o)
{
	char ident[sizeof(rp->seen[0].ident)];
	struct seen_port *sp = NULL;

	port_ident(rp, o, ident, sizeof(ident));
	for (size_t i = 0; i < rp->n_seen && !sp; i++)
		if (rp->seen[i].port == o->port && !strcmp(rp->seen[i].ident, ident))
			sp = &rp->seen[i];
	if (!sp) {
		for (size_t i = 0; i < rp->n_seen; i++) {
			struct seen_port *old = &rp->seen[i];

			if (old->port == o->port && !strcmp(old->name, o->name) && !old->present) {
				log_info("rdma: %s/%u is another device now (%s, was %s): its "
					 "counter history starts afresh",
					 o->name, o->port, ident, old->ident);
				strlcpy0(old->name, "", sizeof(old->name)); /* said once */
			}
		}
		if (rp->n_seen == SEEN_PORTS_MAX) {
			/* bounded: forget one that is away (a long-gone device) */
			size_t k = 0;

			while (k < rp->n_seen && (rp->seen[k].present || rp->seen[k].was_present))
				k++;
			if (k == rp->n_seen)
				goto set;
			rp->seen[k] = rp->seen[--rp->n_seen];
		} else if (rp->n_seen == rp->cap_seen) {
			size_t cap = rp->cap_seen ? 2 * rp->cap_seen : 16;
			struct seen_port *n = realloc(rp->seen, cap * sizeof(*rp->seen));

			if (!n)
				goto set;
			rp->seen = n;
			rp->cap_seen = cap;
		}
		sp = &rp->seen[rp->n_seen++];
		memset(sp, 0, sizeof(*sp));
		strlcpy0(sp->ident, ident, sizeof(sp->ident));
		sp->port = o->port;
		sp->was_present = true; /* new: not a return */
	}
	if (!sp->was_present && !sp->present) {
		sp->reappeared++;
		log_info(
		    "rdma: %s/%u (%s) is back after a config poll that did not find it (%" PRIu64
		    " times)",
		    o->name, o->port, ident, sp->reappeared);
	}
	sp->present = true;
	strlcpy0(sp->name, o->name, sizeof(sp->name));
set:
	field_set_int(o, F_PORT_REAPPEARED, sp ? (int64_t)sp->reappeared : 0);
	{
		const struct field_val *st = &o->f[F_PORT_STATE];
		bool active = st->state == ABS_NONE && !strcmp(st->v.s, "ACTIVE");

		if (sp)
			sp->seen_active |= active;
		field_set_bool(o, F_PORT_SEEN_ACTIVE, sp ? sp->seen_active : active);
	}
}

static int collect_slow(struct collector_ctx *cc, struct rdma_priv *rp, struct node_model *m)
{
	struct found f = { 0 };
	char err[160] = "";
	int r = -EPROTONOSUPPORT;

	if (rp->nl.nl) {
		r = rdma_nl_enumerate(rp, &f, err, sizeof(err));
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
		r = rdma_sysfs_enumerate(rp, &f);
		if (r) {
			snprintf(cc->detail, sizeof(cc->detail), "%.100s: %s", rp->ib,
				 rw_strerror(-r));
			goto free_found;
		}
	}

	for (size_t i = 0; i < rp->n_seen; i++) {
		rp->seen[i].was_present = rp->seen[i].present;
		rp->seen[i].present = false;
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
		note_seen(rp, o);
	}
	model_sweep(m, OBJ_RDMA_PORT);
	field_set_int(&m->node, F_NODE_RDMA_DEVICES, (int64_t)f.nd);
	r = 0;
free_found:
	free(f.p);
	free(f.d);
	return r;
}

/* A port's counters failed as a restricted PF's do: at most once a minute, then an hour. */
#define BACKOFF_MIN_NS (60LL * 1000000000LL)
#define BACKOFF_MAX_NS (3600LL * 1000000000LL)

/* Retrying a backed-off port: open its counter files again, the failed ones included. */
static void reopen_counters(struct rdma_priv *rp, struct object *o, struct port_priv *pp)
{
	char path[PATH_MAX];

	rdma_cdir_close(&pp->hw);
	rdma_cdir_close(&pp->pc);
	rdma_cdir_close(&pp->pe);
	if (!pp->hw_nl) {
		snprintf(path, sizeof(path), "%s/%s/ports/%u/hw_counters", rp->ib, o->name,
			 o->port);
		rdma_cdir_scan(&pp->hw, path, "hw_counters");
	}
	snprintf(path, sizeof(path), "%s/%s/ports/%u/counters", rp->ib, o->name, o->port);
	rdma_cdir_scan(&pp->pc, path, "counters");
	snprintf(path, sizeof(path), "%s/%s/ports/%u/counters_ext", rp->ib, o->name, o->port);
	rdma_cdir_scan(&pp->pe, path, "counters_ext");
}

/* After a read: back off (and say so once) or recover. */
static void judge_reads(struct object *o, struct port_priv *pp, int64_t now)
{
	int err = pp->hw.restricted_err	  ? pp->hw.restricted_err
		  : pp->pc.restricted_err ? pp->pc.restricted_err
					  : pp->pe.restricted_err;
	char key[96];

	if (!err && !pp->backoff_ns) {
		/* the steady state, every port every poll: nothing was said, nothing to unsay */
		field_set_bool(o, F_PORT_COUNTERS_BACKED_OFF, false);
		return;
	}
	snprintf(key, sizeof(key), "rdma:backoff:%s/%u", o->name, o->port);
	if (!err) {
		log_info("rdma: %s/%u: counter reads work again", o->name, o->port);
		rw_log_once_reset(key);
		pp->backoff_ns = pp->retry_ns = 0;
		field_set_bool(o, F_PORT_COUNTERS_BACKED_OFF, false);
		return;
	}
	pp->backoff_ns = pp->backoff_ns ? pp->backoff_ns * 2 : BACKOFF_MIN_NS;
	if (pp->backoff_ns > BACKOFF_MAX_NS)
		pp->backoff_ns = BACKOFF_MAX_NS;
	pp->retry_ns = now + pp->backoff_ns;
	rw_log_once(LOG_LVL_WARN, key,
		    "rdma: %s/%u: counter reads fail (%s), as on a firmware-restricted function: "
		    "backed off, retried after 1 min and then at most hourly; "
		    "--rdma-device-exclude '%s' stops touching it",
		    o->name, o->port, rw_strerror(err), o->name);
	field_set_bool(o, F_PORT_COUNTERS_BACKED_OFF, true);
}

static void collect_fast(struct collector_ctx *cc, struct rdma_priv *rp, struct node_model *m)
{
	int64_t now = ts_ns(&m->mono);

	struct object **ports;
	size_t n = model_objects(m, OBJ_RDMA_PORT, &ports);

	for (size_t i = 0; i < n; i++) {
		struct object *o = ports[i];
		struct port_priv *pp = o->cpriv[cc->idx];
		int r = 0;

		cset_clear(&o->cs[CSET_HW]);
		cset_clear(&o->cs[CSET_PORT]);
		if (!pp || pp->gone) {
			vendor_fill_port(o, pp ? &pp->vc : NULL, false); /* absent, not stale */
			continue;
		}
		if (pp->retry_ns) {
			if (now < pp->retry_ns) {
				/* backed off: absent, not stale, and not a file of it is read */
				vendor_fill_port(o, &pp->vc, false);
				continue;
			}
			reopen_counters(rp, o, pp);
		}
		if (pp->hw_nl && rp->nl.nl) {
			char err[192];

			r = rdma_nl_hw_counters(rp, o, pp->dev_index, err, sizeof(err));
			if (r) {
				char key[96], path[PATH_MAX];

				/* No hw stats on this device, or it went away: sysfs decides. */
				snprintf(key, sizeof(key), "rdma:stat:%s/%u", o->name, o->port);
				rw_log_once(LOG_LVL_INFO, key,
					    "rdma: %s/%u: RDMA_NLDEV_CMD_STAT_GET: %s; reading "
					    "hw_counters/ from sysfs",
					    o->name, o->port, err);
				cset_clear(&o->cs[CSET_HW]);
				pp->hw_nl = false;
				snprintf(path, sizeof(path), "%s/%s/ports/%u/hw_counters", rp->ib,
					 o->name, o->port);
				rdma_cdir_scan(&pp->hw, path, "hw_counters");
				r = 0;
			}
		}
		if (!pp->hw_nl)
			r = rdma_cdir_read(&pp->hw, &o->cs[CSET_HW], o->name, o->port,
					   "hw_counters");
		if (!r)
			r = rdma_cdir_read(&pp->pc, &o->cs[CSET_PORT], o->name, o->port,
					   "counters");
		if (!r)
			r = rdma_cdir_read(&pp->pe, &o->cs[CSET_PORT], o->name, o->port,
					   "counters_ext");
		if (!r)
			r = rdma_cdir_read(&pp->dh, &o->cs[CSET_HW], o->name, o->port,
					   "device hw_counters");
		if (r == -ENODEV) {
			/* Unregistered since the last slow poll: no counters until it is swept. */
			pp->gone = true;
			cset_clear(&o->cs[CSET_HW]);
			cset_clear(&o->cs[CSET_PORT]);
		} else if (!r) {
			judge_reads(o, pp, now);
		}
		vendor_fill_port(o, &pp->vc, false);
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
	rp->cfg = cc->cfg;
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
	r = rdma_nl_open(rp);
	/* EPROTONOSUPPORT: the kernel has no RDMA stack; sysfs will say "no devices". */
	if (r)
		log_debug("rdma: no RDMA netlink (%s); reading sysfs", rw_strerror(-r));
	return 0;
}

static void rdma_fini(struct collector_ctx *cc)
{
	struct rdma_priv *rp = cc->priv;

	if (!rp)
		return;
	rw_nl_close(&rp->nl);
	free(rp->seen);
	free(rp);
	cc->priv = NULL;
}

const struct collector rdma_collector = {
	.name = "rdma",
	.source = SRC_RDMA,
	.help = "RDMA ports: state, rate, netdev, hw and port counters, GID table (RDMA netlink, "
		"sysfs)",
	.default_enabled = true,
	.init = rdma_init,
	.collect = rdma_collect,
	.fini = rdma_fini,
	.obj_free = rdma_obj_free,
};
