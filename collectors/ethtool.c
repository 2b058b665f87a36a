// SPDX-License-Identifier: MIT
/*
 * ethtool: driver statistics (`ethtool -S`), the per-priority pause, byte and
 * discard counters parsed out of them, global 802.3x pause (setting and
 * frame counters), the pfc-prevention-tout tunable, link speed, driver and
 * firmware.
 *
 * Slow loop, per device: GDRVINFO, GLINKSETTINGS (GSET on old kernels),
 * GTUNABLE, PAUSE_GET over ethtool genetlink (GPAUSEPARAM when the family is
 * missing; ethtool_genl.c), GSSET_INFO + GSTRINGS (ethtool_stats.c).
 * Fast loop, per device: one GSTATS into a buffer allocated once; the names
 * are read again only when the count it returns has changed.  The string set
 * is turned into an index map when it is read, so the fast loop does no
 * string work at all.
 *
 * This file: the collector, the SIOCETHTOOL plumbing and the slow-loop
 * settings.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/ethtool.h>
#include <linux/sockios.h>

#include "netdev.h"
#include "util.h"

/* ---- ioctl ---- */

static int real_ioctl(void *arg, const char *ifname, void *cmd)
{
	struct ethtool_priv *p = arg;
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	if (strlen(ifname) >= sizeof(ifr.ifr_name))
		return -ENAMETOOLONG;
	memcpy(ifr.ifr_name, ifname, strlen(ifname));
	ifr.ifr_data = cmd;
	return ioctl(p->fd, SIOCETHTOOL, &ifr) < 0 ? -errno : 0;
}

int ethtool_call(struct ethtool_priv *p, const char *ifname, void *cmd)
{
	return p->ioctl(p->ioctl_arg, ifname, cmd);
}

int ethtool_get(struct ethtool_priv *p, const char *ifname, void *cmd, size_t len, uint32_t id,
		const char *what)
{
	int r;

	memset(cmd, 0, len);
	memcpy(cmd, &id, sizeof(id));
	r = ethtool_call(p, ifname, cmd);
	if (r)
		ethtool_note_err(ifname, what, r, NULL);
	return r;
}

void ethtool_set_ioctl(struct collector_ctx *cc, ethtool_ioctl_fn fn, void *arg)
{
	struct ethtool_priv *p = cc->priv;

	p->ioctl = fn ? fn : real_ioctl;
	p->ioctl_arg = fn ? arg : p;
}

/* "Not here" causes are quiet; anything else is said once per device and cause. */
void ethtool_note_err(const char *dev, const char *what, int err, const char *detail)
{
	char key[128];

	if (err < 0)
		err = -err;
	if (absent_from_errno(err) == ABS_UNSUPPORTED)
		return;
	snprintf(key, sizeof(key), "ethtool:%s:%s:%d", dev, what, err);
	rw_log_once(LOG_LVL_WARN, key, "ethtool: %s: %s: %s%s%s", dev, what, strerror(err),
		    detail && *detail ? ": " : "", detail ? detail : "");
}

/* ---- slow loop ---- */

static void set_str_or_absent(struct object *o, enum field_id id, const char *s, size_t max,
			      int err)
{
	char buf[64];
	/* the kernel's fixed-size fields are not terminated when full */
	size_t n = strnlen(s, max);

	if (err) {
		field_absent_errno(o, id, err);
		return;
	}
	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (buf[0])
		field_set_str(o, id, buf);
	else
		field_absent(o, id, ABS_UNSUPPORTED, EOPNOTSUPP); /* the driver reports none */
}

static int collect_drvinfo(struct ethtool_priv *p, struct object *o)
{
	struct ethtool_drvinfo di;
	int r;

	r = ethtool_get(p, o->name, &di, sizeof(di), ETHTOOL_GDRVINFO, "GDRVINFO");
	set_str_or_absent(o, F_NETDEV_DRIVER, di.driver, sizeof(di.driver), r);
	set_str_or_absent(o, F_NETDEV_FIRMWARE, di.fw_version, sizeof(di.fw_version), r);
	set_str_or_absent(o, F_NETDEV_BUS, di.bus_info, sizeof(di.bus_info), r);
	return r;
}

static void collect_speed(struct ethtool_priv *p, struct object *o)
{
	/* header + 3 masks (supported, advertising, lp_advertising) of up to 127 words */
	size_t len = sizeof(struct ethtool_link_settings) + 3 * 127 * sizeof(uint32_t);
	struct ethtool_link_settings *ls = calloc(1, len);
	uint32_t speed;
	int r;

	if (!ls) {
		field_absent_errno(o, F_NETDEV_SPEED, -ENOMEM);
		return;
	}
	/* Handshake: nwords 0 asks the kernel how many mask words it uses (sent back negated). */
	ls->cmd = ETHTOOL_GLINKSETTINGS;
	r = ethtool_call(p, o->name, ls);
	if (!r && ls->link_mode_masks_nwords < 0) {
		int8_t nwords = (int8_t)-ls->link_mode_masks_nwords;

		memset(ls, 0, len);
		ls->cmd = ETHTOOL_GLINKSETTINGS;
		ls->link_mode_masks_nwords = nwords;
		r = ethtool_call(p, o->name, ls);
	}
	if (!r) {
		speed = ls->speed;
	} else {
		/* Kernels before 4.6 know only the legacy command. */
		struct ethtool_cmd ec;

		memset(&ec, 0, sizeof(ec));
		ec.cmd = ETHTOOL_GSET;
		r = ethtool_call(p, o->name, &ec);
		speed = ethtool_cmd_speed(&ec);
	}
	free(ls);
	if (r) {
		field_absent_errno(o, F_NETDEV_SPEED, r);
		ethtool_note_err(o->name, "GLINKSETTINGS", r, NULL);
	} else if (speed == (uint32_t)SPEED_UNKNOWN || speed == 0) {
		/* Link down or not negotiated: there is no speed to report, and it is not 0. */
		field_absent(o, F_NETDEV_SPEED, ABS_UNSUPPORTED, ENOLINK);
	} else {
		field_set_int(o, F_NETDEV_SPEED, speed);
	}
}

static void collect_tunable(struct ethtool_priv *p, struct object *o)
{
	union {
		struct ethtool_tunable t;
		uint8_t raw[sizeof(struct ethtool_tunable) + 8];
	} u;
	uint16_t v;
	int r;

	memset(&u, 0, sizeof(u));
	u.t.cmd = ETHTOOL_GTUNABLE;
	u.t.id = ETHTOOL_PFC_PREVENTION_TOUT;
	u.t.type_id = ETHTOOL_TUNABLE_U16;
	u.t.len = sizeof(v);
	r = ethtool_call(p, o->name, &u);
	if (r) {
		field_absent_errno(o, F_NETDEV_PFC_PREVENTION_TOUT, r);
		ethtool_note_err(o->name, "pfc-prevention-tout", r, NULL);
		return;
	}
	/* the value follows the header; milliseconds, 0 = off, 0xffff = auto (uapi ethtool.h) */
	memcpy(&v, u.raw + sizeof(u.t), sizeof(v));
	field_set_int(o, F_NETDEV_PFC_PREVENTION_TOUT, v);
}

static void collect_slow(struct ethtool_priv *p, struct object *o, struct ethtool_dev *d)
{
	int r;

	r = collect_drvinfo(p, o);
	if (r == -ENODEV || r == -ENXIO) {
		/* Gone since the listing: say so on every field; link drops it next poll. */
		field_absent_source_errno(o, SRC_ETHTOOL, FIELDS_ALL, r);
		d->probed = true;
		d->stats_err = -r;
		d->n_stats = 0;
		cset_clear(&o->cs[CSET_ETHTOOL]);
		return;
	}
	collect_speed(p, o);
	collect_tunable(p, o);
	ethtool_collect_pause(p, o);
	/*
	 * The names are read again on every slow poll, not only when the count
	 * moves: mlx5 lists pause counters only for PFC-enabled priorities, so
	 * moving PFC from 3 to 4 renames entries at the same count.  A DCB
	 * change raises RTNLGRP_DCB, which brings this slow poll at once.
	 */
	ethtool_read_strings(p, o, d);
}

/* ---- the collector ---- */

static void dev_free(void *cpriv)
{
	struct ethtool_dev *d = cpriv;

	guarded_free(d->stats, d->stats_maplen);
	free(d->map);
	free(d);
}

static int ethtool_init(struct collector_ctx *cc)
{
	struct ethtool_priv *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	cc->priv = p;
	p->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (p->fd < 0)
		/* a kernel without IPv4 still has AF_UNIX, and SIOCETHTOOL works on either */
		p->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (p->fd < 0) {
		snprintf(cc->detail, sizeof(cc->detail), "ioctl socket: %s", strerror(errno));
		return -errno;
	}
	ethtool_set_ioctl(cc, NULL, NULL);
	return 0;
}

static void ethtool_fini(struct collector_ctx *cc)
{
	struct ethtool_priv *p = cc->priv;

	if (!p)
		return;
	if (p->fd >= 0)
		close(p->fd);
	rw_nl_close(&p->genl);
	free(p);
	cc->priv = NULL;
}

static int ethtool_collect(struct collector_ctx *cc, struct node_model *m, unsigned int what)
{
	struct ethtool_priv *p = cc->priv;

	for (size_t i = 0; i < m->n_netdevs; i++) {
		struct object *o = m->netdevs[i];
		struct ethtool_dev *d = o->cpriv[cc->idx];

		if (!d) {
			d = calloc(1, sizeof(*d));
			if (!d) {
				field_absent_source_errno(o, SRC_ETHTOOL, FIELDS_ALL, -ENOMEM);
				cset_clear(&o->cs[CSET_ETHTOOL]);
				continue;
			}
			o->cpriv[cc->idx] = d;
		}
		if (what & COLLECT_SLOW)
			collect_slow(p, o, d);
		if (what & COLLECT_FAST) {
			ethtool_collect_stats(p, o, d);
			if (!p->family_tried)
				ethtool_resolve_family(p);
			ethtool_collect_fec(p, o, d);
			ethtool_ber_update(&d->ber, o, ts_ns(&m->mono));
		}
	}
	return 0;
}

const struct collector ethtool_collector = {
	.name = "ethtool",
	.source = SRC_ETHTOOL,
	.help = "driver stats, per-priority pause/bytes/discards, global pause, link speed, "
		"pfc-prevention-tout, driver/firmware (SIOCETHTOOL + ethtool genetlink)",
	.default_enabled = true,
	.init = ethtool_init,
	.collect = ethtool_collect,
	.fini = ethtool_fini,
	.obj_free = dev_free,
};
