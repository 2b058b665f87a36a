// SPDX-License-Identifier: MIT
/*
 * ethtool driver statistics (`ethtool -S`) over SIOCETHTOOL: the string set
 * read into a name map once, one GSTATS per fast poll into a buffer kept
 * between polls, and the per-priority pause, byte and discard counters the
 * map picks out of them.
 *
 * Driver stats arrive over the ioctl even on kernels with ethtool netlink:
 * ETHTOOL_MSG_STATS_GET carries only the standard groups, not the
 * driver-private names (Documentation/networking/ethtool-netlink.rst).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/ethtool.h>

#include "netdev.h"
#include "util.h"

/* Spare room in the stats buffer: a set that grows a little is read without a remap. */
#define STATS_HEADROOM 64
/* No driver has anywhere near this many stats; a larger count is a bug, not a NIC. */
#define STATS_MAX (1u << 16)

/* ---- the stat-name map ---- */

/* mlx5 names: Documentation/networking/device_drivers/ethernet/mellanox/mlx5/counters.rst */
static const struct {
	const char *suffix; /* after "rx_prioN_" / "tx_prioN_" */
	int16_t rx, tx;
} prio_stats[] = {
	{ "pause", F_NETDEV_PFC_RX_PAUSE, F_NETDEV_PFC_TX_PAUSE },
	/* microseconds; the field table scales to seconds */
	{ "pause_duration", F_NETDEV_PFC_RX_PAUSE_DURATION, F_NETDEV_PFC_TX_PAUSE_DURATION },
	{ "pause_transition", F_NETDEV_PFC_RX_PAUSE_TRANSITION, -1 },
	{ "bytes", F_NETDEV_PRIO_RX_BYTES, F_NETDEV_PRIO_TX_BYTES },
	{ "packets", F_NETDEV_PRIO_RX_PACKETS, F_NETDEV_PRIO_TX_PACKETS },
	{ "discards", F_NETDEV_PRIO_RX_DISCARDS, -1 },
	{ "buf_discard", F_NETDEV_PRIO_RX_BUF_DISCARDS, -1 },
	{ "cong_discard", F_NETDEV_PRIO_RX_CONG_DISCARDS, -1 },
	{ "marked", F_NETDEV_PRIO_RX_MARKED, -1 },
};

static const struct {
	const char *name;
	int16_t field;
} port_stats[] = {
	{ "tx_pause_storm_warning_events", F_NETDEV_PAUSE_STORM_WARNING },
	{ "tx_pause_storm_error_events", F_NETDEV_PAUSE_STORM_ERROR },
	{ "rx_discards_phy", F_NETDEV_RX_DISCARDS_PHY },
	{ "tx_discards_phy", F_NETDEV_TX_DISCARDS_PHY },
	{ "rx_out_of_buffer", F_NETDEV_RX_OUT_OF_BUFFER },
	{ "link_down_events_phy", F_NETDEV_LINK_DOWN_EVENTS },
	/* bnxt_en: bnxt_port_stats_ext_arr, BNXT_RX_STATS_EXT_ENTRY(link_down_events) */
	{ "link_down_events", F_NETDEV_LINK_DOWN_EVENTS },
	{ "rx_crc_errors_phy", F_NETDEV_RX_CRC_ERRORS },
	/* PHY and PCIe health (mlx5 counters.rst: Physical Port Counters, PCIe counters) */
	{ "rx_corrected_bits_phy", F_NETDEV_PHY_CORRECTED_BITS },
	{ "rx_pcs_symbol_err_phy", F_NETDEV_PHY_SYMBOL_ERRORS },
	{ "outbound_pci_stalled_rd", F_NETDEV_PCI_STALLED_RD },
	{ "outbound_pci_stalled_wr", F_NETDEV_PCI_STALLED_WR },
	{ "outbound_pci_stalled_rd_events", F_NETDEV_PCI_STALLED_RD_EVENTS },
	{ "outbound_pci_stalled_wr_events", F_NETDEV_PCI_STALLED_WR_EVENTS },
};

/*
 * The other drivers' names for the same meanings (shared/reference/vendors.md
 * has the lines; Debian 7.2.13 unless said).  Names differ between drivers,
 * so no driver test is needed: a name belongs to one driver only.
 */
static const struct {
	const char *name;
	int16_t field;
} vendor_port_stats[] = {
	/* bnxt_en: bnxt_ethtool.c:405,443 (port rx/tx_stat_discard) */
	{ "rx_stat_discard", F_NETDEV_RX_DISCARDS_PHY },
	{ "tx_stat_discard", F_NETDEV_TX_DISCARDS_PHY },
	/* ice: ice_ethtool.c:134, PRTRPB_RDPC, the receive packet buffer's drops */
	{ "rx_dropped.nic", F_NETDEV_RX_DISCARDS_PHY },
	/* ionic: ionic_stats.c:58 */
	{ "frames_rx_dropped", F_NETDEV_RX_DISCARDS_PHY },
	/* mana: mana_ethtool.c:84-85 (after 6.12) */
	{ "hc_rx_pkt_drop_phy", F_NETDEV_RX_DISCARDS_PHY },
	{ "hc_tx_pkt_drop_phy", F_NETDEV_TX_DISCARDS_PHY },
};

/*
 * Per-priority names with the priority as one digit where the %d is.
 * Units: bnxt's *_duration_us and ionic's *_1us_count are microseconds by
 * their names, as mlx5's are by its documentation (the row scales to
 * seconds).  Not mapped, and why: hns3's mac_*_pfc_pri%d_xoff_time (no
 * unit in the source), bnxt's *_cos%d discards (per CoS queue, no
 * priority), ionic's frames_*_pri_%d (data or pause frames: not said).
 */
static const struct {
	const char *pattern;
	int16_t field;
	bool add;
} vendor_prio_stats[] = {
	/* bnxt_en: bnxt_ethtool.c:391-398, 430-437; 241-246 (ext stats, P5/P7) */
	{ "rx_pfc_ena_frames_pri%d", F_NETDEV_PFC_RX_PAUSE },
	{ "tx_pfc_ena_frames_pri%d", F_NETDEV_PFC_TX_PAUSE },
	{ "pfc_pri%d_rx_duration_us", F_NETDEV_PFC_RX_PAUSE_DURATION },
	{ "pfc_pri%d_tx_duration_us", F_NETDEV_PFC_TX_PAUSE_DURATION },
	{ "pfc_pri%d_rx_transitions", F_NETDEV_PFC_RX_PAUSE_TRANSITION },
	/* ice: ice_ethtool.c:1487-1492, XON and XOFF frames counted apart: both are PFC frames */
	{ "rx_priority_%d_xoff.nic", F_NETDEV_PFC_RX_PAUSE, true },
	{ "rx_priority_%d_xon.nic", F_NETDEV_PFC_RX_PAUSE, true },
	{ "tx_priority_%d_xoff.nic", F_NETDEV_PFC_TX_PAUSE, true },
	{ "tx_priority_%d_xon.nic", F_NETDEV_PFC_TX_PAUSE, true },
	/* hns3: hclge_main.c:109-124, 143-158 */
	{ "mac_rx_pfc_pri%d_pkt_num", F_NETDEV_PFC_RX_PAUSE },
	{ "mac_tx_pfc_pri%d_pkt_num", F_NETDEV_PFC_TX_PAUSE },
	/*
	 * mana: mana_ethtool.c:118-133, per traffic class (include/net/mana/mana.h:476
	 * "Per TC pause Counters"); MANA has no dcbnl to tell the priority-to-TC
	 * map, so TC n is reported as priority n.
	 */
	{ "hc_tc%d_rx_pause_phy", F_NETDEV_PFC_RX_PAUSE },
	{ "hc_tc%d_tx_pause_phy", F_NETDEV_PFC_TX_PAUSE },
	/* ionic: ionic_stats.c:110-125 (time only: its PFC frame counts are totals) */
	{ "rx_pripause_%d_1us_count", F_NETDEV_PFC_RX_PAUSE_DURATION },
	{ "tx_pripause_%d_1us_count", F_NETDEV_PFC_TX_PAUSE_DURATION },
};

/* name matches pattern with one priority digit 0..7 in place of its %d: the digit, else -1 */
static int match_prio(const char *pattern, const char *name)
{
	const char *pct = strstr(pattern, "%d");
	size_t pre = (size_t)(pct - pattern);

	if (strncmp(name, pattern, pre) || name[pre] < '0' || name[pre] > '7' ||
	    strcmp(name + pre + 1, pct + 2))
		return -1;
	return name[pre] - '0';
}

bool ethtool_map_stat(const char *name, struct ethtool_stat_target *t)
{
	bool rx;

	t->field = -1;
	t->prio = -1;
	t->add = false;
	for (size_t i = 0; i < ARRAY_SIZE(port_stats); i++) {
		if (!strcmp(name, port_stats[i].name)) {
			t->field = port_stats[i].field;
			return true;
		}
	}
	for (size_t i = 0; i < ARRAY_SIZE(vendor_port_stats); i++) {
		if (!strcmp(name, vendor_port_stats[i].name)) {
			t->field = vendor_port_stats[i].field;
			return true;
		}
	}
	for (size_t i = 0; i < ARRAY_SIZE(vendor_prio_stats); i++) {
		int p = match_prio(vendor_prio_stats[i].pattern, name);

		if (p >= 0) {
			t->field = vendor_prio_stats[i].field;
			t->prio = (int8_t)p;
			t->add = vendor_prio_stats[i].add;
			return true;
		}
	}
	/* mlx5 rx_err_lane_N_phy: errors per physical lane (up to 8 on a 400G/800G port) */
	if (!strncmp(name, "rx_err_lane_", 12) && name[12] >= '0' && name[12] <= '7' &&
	    !strcmp(name + 13, "_phy")) {
		t->field = F_NETDEV_PHY_LANE_ERRORS;
		t->prio = (int8_t)(name[12] - '0');
		return true;
	}
	rx = !strncmp(name, "rx_prio", 7);
	if (!rx && strncmp(name, "tx_prio", 7))
		return false;
	if (name[7] < '0' || name[7] > '7' || name[8] != '_')
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(prio_stats); i++) {
		int16_t f = rx ? prio_stats[i].rx : prio_stats[i].tx;

		if (f < 0 || strcmp(name + 9, prio_stats[i].suffix))
			continue;
		t->field = f;
		t->prio = (int8_t)(name[7] - '0');
		return true;
	}
	return false;
}

/*
 * Every field the map can fill, from the map itself: a name added to a
 * table above is blanked with the others when the stats fail.
 */
static void stat_fields_absent(struct object *o, int err)
{
	field_absent_errno(o, F_NETDEV_PFC_SOURCE, err);
	for (size_t i = 0; i < ARRAY_SIZE(port_stats); i++)
		field_absent_errno(o, (enum field_id)port_stats[i].field, err);
	for (size_t i = 0; i < ARRAY_SIZE(prio_stats); i++) {
		if (prio_stats[i].rx >= 0)
			field_absent_errno(o, (enum field_id)prio_stats[i].rx, err);
		if (prio_stats[i].tx >= 0)
			field_absent_errno(o, (enum field_id)prio_stats[i].tx, err);
	}
	field_absent_errno(o, F_NETDEV_PHY_LANE_ERRORS, err);
}

/* ---- guarded buffers ---- */

void *guarded_alloc(size_t size, size_t *maplen)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t body = (size + page - 1) / page * page;
	char *p;

	if (!body)
		body = page;
	p = mmap(NULL, body + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (mprotect(p + body, page, PROT_NONE)) {
		munmap(p, body + page);
		return NULL;
	}
	*maplen = body + page;
	return p;
}

void guarded_free(void *p, size_t maplen)
{
	if (p)
		munmap(p, maplen);
}

/* ---- the string set and the values ---- */

static int ensure_stats_buffer(struct ethtool_dev *d, uint32_t n)
{
	size_t maplen, body;
	void *buf;

	if (d->stats && d->cap >= n)
		return 0;
	buf =
	    guarded_alloc(sizeof(struct ethtool_stats) + (size_t)(n + STATS_HEADROOM) * 8, &maplen);
	if (!buf)
		return -ENOMEM;
	guarded_free(d->stats, d->stats_maplen);
	d->stats = buf;
	d->stats_maplen = maplen;
	/* Use all of the mapping: the guard page starts right after the last value. */
	body = maplen - (size_t)sysconf(_SC_PAGESIZE);
	d->cap = (uint32_t)((body - sizeof(struct ethtool_stats)) / 8);
	return 0;
}

static int sset_count(struct ethtool_priv *p, const char *ifname, uint32_t *n)
{
	/* struct ethtool_sset_info is followed by one u32 per bit left set in sset_mask */
	uint64_t raw[4] = { 0 };
	struct ethtool_sset_info *si = (struct ethtool_sset_info *)raw;
	uint32_t v;
	int r;

	si->cmd = ETHTOOL_GSSET_INFO;
	si->sset_mask = 1ULL << ETH_SS_STATS;
	r = ethtool_call(p, ifname, si);
	if (r)
		return r;
	if (!(si->sset_mask & (1ULL << ETH_SS_STATS))) {
		*n = 0;
		return 0;
	}
	memcpy(&v, (char *)raw + sizeof(*si), sizeof(v));
	*n = v;
	return 0;
}

/*
 * Read the stats string set and rebuild the name map and the counter-set
 * names.  The count can change under us (mlx5 adds per-channel stats when
 * channels are added, per-priority pause stats when PFC is enabled), so the
 * strings are read into a guarded buffer and the count is checked again.
 */
int ethtool_read_strings(struct ethtool_priv *p, struct object *o, struct ethtool_dev *d)
{
	struct counter_set *cs = &o->cs[CSET_ETHTOOL];
	struct ethtool_gstrings *gs = NULL;
	size_t maplen = 0;
	uint32_t n = 0;
	int r = 0, tries;

	d->probed = true;
	for (tries = 0; tries < 3; tries++) {
		r = sset_count(p, o->name, &n);
		if (r)
			goto fail;
		if (!n) {
			r = -EOPNOTSUPP;
			goto fail;
		}
		if (n > STATS_MAX) {
			r = -E2BIG;
			goto fail;
		}
		gs = guarded_alloc(sizeof(*gs) + (size_t)n * ETH_GSTRING_LEN, &maplen);
		if (!gs) {
			r = -ENOMEM;
			goto fail;
		}
		gs->cmd = ETHTOOL_GSTRINGS;
		gs->string_set = ETH_SS_STATS;
		gs->len = n; /* as for GSTATS: recent kernels answer a stale count with len 0 */
		r = ethtool_call(p, o->name, gs);
		if (!r && gs->len == n)
			break;
		guarded_free(gs, maplen);
		gs = NULL;
		/* EFAULT: the set grew past the buffer between the two calls; try again */
		if (r && r != -EFAULT)
			goto fail;
	}
	if (!gs) {
		r = -EAGAIN;
		goto fail;
	}
	r = ensure_stats_buffer(d, n);
	if (!r) {
		struct ethtool_stat_target *map = realloc(d->map, n * sizeof(*map));

		r = map ? cset_reserve(cs, n) : -ENOMEM;
		if (map)
			d->map = map;
	}
	if (r)
		goto free_strings;
	for (uint32_t i = 0; i < n; i++) {
		char name[ETH_GSTRING_LEN + 1];

		/* ETH_GSTRING_LEN bytes, NUL-padded, not terminated when all 32 are used */
		memcpy(name, gs->data + (size_t)i * ETH_GSTRING_LEN, ETH_GSTRING_LEN);
		name[ETH_GSTRING_LEN] = '\0';
		ethtool_map_stat(name, &d->map[i]);
		strlcpy0(cs->names[i], name, RW_CNAME_MAX);
		cs->present[i] = 0;
	}
	cs->n = n;
	d->n_stats = n;
	d->stats_err = 0;
	guarded_free(gs, maplen);
	return 0;

free_strings:
	guarded_free(gs, maplen);
fail:
	d->n_stats = 0;
	d->stats_err = r < 0 ? -r : r;
	cset_clear(cs);
	return r;
}

static int read_stats(struct ethtool_priv *p, const char *ifname, struct ethtool_dev *d)
{
	int r;

	d->stats->cmd = ETHTOOL_GSTATS;
	/*
	 * Ask for the count we have names for.  Recent kernels (seen on 6.18)
	 * answer a count that no longer matches with n_stats 0 and no values;
	 * older ones ignore it and write the current count, which is what the
	 * guard page after the buffer is for.  Either way a mismatch means the
	 * set changed and the names must be read again.
	 */
	d->stats->n_stats = d->n_stats;
	r = ethtool_call(p, ifname, d->stats);
	if (r == -EFAULT)
		return -ESTALE; /* the set outgrew the buffer: the guard page stopped the kernel */
	if (r)
		return r;
	return d->stats->n_stats == d->n_stats ? 0 : -ESTALE;
}

static void fill_stats(struct object *o, const struct ethtool_dev *d)
{
	struct counter_set *cs = &o->cs[CSET_ETHTOOL];
	const __u64 *v = d->stats->data;

	/* absent ("unsupported") unless the driver names it */
	stat_fields_absent(o, -EOPNOTSUPP);
	for (uint32_t i = 0; i < d->n_stats; i++) {
		const struct ethtool_stat_target *t = &d->map[i];

		cs->vals[i] = v[i];
		cs->present[i] = 1;
		if (t->field < 0)
			continue;
		if (t->prio < 0)
			field_set_int(o, (enum field_id)t->field, (int64_t)v[i]);
		else if (t->add && o->f[t->field].state == ABS_NONE &&
			 (o->f[t->field].mask & (1u << t->prio)))
			o->f[t->field].v.arr[t->prio] += v[i];
		else
			field_set_prio(o, (enum field_id)t->field, t->prio, v[i]);
	}
	/* the driver's own per-priority pause names win over dcbnl's (vendors.c) */
	if (field_present(o, F_NETDEV_PFC_RX_PAUSE) || field_present(o, F_NETDEV_PFC_TX_PAUSE))
		field_set_str(o, F_NETDEV_PFC_SOURCE, "ethtool");
}

void ethtool_stats_absent(struct object *o, int err)
{
	stat_fields_absent(o, err);
	cset_clear(&o->cs[CSET_ETHTOOL]);
}

void ethtool_collect_stats(struct ethtool_priv *p, struct object *o, struct ethtool_dev *d)
{
	int r;

	if (!d->probed)
		ethtool_read_strings(p, o, d);
	if (d->stats_err) {
		ethtool_stats_absent(o, d->stats_err);
		return;
	}
	r = read_stats(p, o->name, d);
	if (r == -ESTALE) {
		/* Rare: the driver changed its set.  Re-read names, then the values once more. */
		r = ethtool_read_strings(p, o, d);
		if (!r)
			r = read_stats(p, o->name, d);
	}
	if (r) {
		ethtool_note_err(o->name, "GSTATS", r, NULL);
		ethtool_stats_absent(o, r);
		return;
	}
	fill_stats(o, d);
}
