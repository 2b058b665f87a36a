// SPDX-License-Identifier: GPL-2.0
/*
 * rwnic: a test-only Ethernet device for rocewatch's VM tier.
 *
 * Pairs of netdevs (rwnic0 <-> rwnic1, ...) that hand every frame to their
 * peer, like veth, so that soft-RoCE (rdma_rxe) can sit on top, and that
 * answer the kernel's own ethtool and dcbnl (IEEE) code paths the way a RoCE
 * NIC's driver does.  Whatever a real NIC would measure (ethtool -S, pause
 * and FEC counters, PFC requests/indications, carrier, speed) is set by the
 * test through debugfs, /sys/kernel/debug/rwnic/<ifname>/; the contract is in
 * README.md next to this file.
 *
 * Never built by default, never installed: tests/vm/rwnic/build.sh builds it
 * against the guest kernel's headers for the scenarios that load it.
 *
 * Locking: every piece of state below is read and written under the RTNL.
 * The ethtool ioctl and netlink paths and dcbnl already hold it when they
 * call us; the debugfs handlers take it.  That also keeps get_sset_count and
 * get_strings consistent when a test replaces the string set.
 */
#include <linux/debugfs.h>
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <net/dcbnl.h>

#define RWNIC_MAX_PAIRS	  8
#define RWNIC_MAX_STATS	  8192
#define RWNIC_STATS_BYTES (1 << 20) /* one open's worth of `name value` lines */
#define RWNIC_SMALL_BYTES 4096	    /* the other files: one write() each */
#define RWNIC_MAX_APPS	  128
#define RWNIC_BUF_TOTAL	  (1 << 20)
#define RWNIC_TOUT_MAX	  8000 /* ms; 0xffff (auto) is accepted too, as mlx5 does */

static int pairs = 1;
module_param(pairs, int, 0444);
MODULE_PARM_DESC(pairs, "number of rwnic pairs (rwnic0+rwnic1, ...), 1-8");

struct rwnic_stats {
	u32 n;
	char (*names)[ETH_GSTRING_LEN];
	u64 *vals;
};

struct rwnic_priv {
	struct net_device *dev;
	struct net_device *peer;
	int index; /* N of rwnicN */
	struct dentry *dir;

	atomic64_t tx_packets, tx_bytes, tx_dropped, rx_packets, rx_bytes;

	/* debugfs-set facts */
	bool carrier;
	u32 speed; /* Mb/s */
	struct rwnic_stats stats;
	u64 fec_corrected, fec_uncorrectable, fec_corrected_bits;
	u64 fec_lane[ETHTOOL_MAX_LANES];
	int fec_lanes; /* lanes reported: 0..fec_lanes-1 */
	u64 pause_rx_frames, pause_tx_frames;
	u64 pfc_requests[IEEE_8021QAZ_MAX_TCS], pfc_indications[IEEE_8021QAZ_MAX_TCS];

	/* settings the kernel's tools set */
	struct ethtool_pauseparam pause;
	u32 fec_configured, fec_active;
	u16 pfc_tout;
	struct ieee_ets ets;
	struct ieee_pfc pfc;
	struct ieee_maxrate maxrate;
	struct dcbnl_buffer buffer;
	u8 dcbx;
	/* APP entries this device added, so that unloading leaves none behind */
	struct dcb_app apps[RWNIC_MAX_APPS];
	int n_apps;
};

static struct net_device *rwnic_devs[2 * RWNIC_MAX_PAIRS];
static int rwnic_ndevs;
static struct dentry *rwnic_root;

/* ---- data path ---- */

static netdev_tx_t rwnic_xmit(struct sk_buff *skb, struct net_device *dev)
{
	struct rwnic_priv *p = netdev_priv(dev);
	struct net_device *peer = p->peer;
	unsigned int len = skb->len;

	if (!netif_carrier_ok(dev) || !netif_running(peer) || !netif_carrier_ok(peer)) {
		atomic64_inc(&p->tx_dropped);
		dev_kfree_skb_any(skb);
		return NETDEV_TX_OK;
	}
	/* dev_forward_skb() scrubs the skb, sets its protocol and frees it on failure. */
	if (dev_forward_skb(peer, skb) == NET_RX_SUCCESS) {
		struct rwnic_priv *pp = netdev_priv(peer);

		atomic64_inc(&p->tx_packets);
		atomic64_add(len, &p->tx_bytes);
		atomic64_inc(&pp->rx_packets);
		atomic64_add(len, &pp->rx_bytes);
	} else {
		atomic64_inc(&p->tx_dropped);
	}
	return NETDEV_TX_OK;
}

static void rwnic_get_stats64(struct net_device *dev, struct rtnl_link_stats64 *s)
{
	struct rwnic_priv *p = netdev_priv(dev);

	s->tx_packets = atomic64_read(&p->tx_packets);
	s->tx_bytes = atomic64_read(&p->tx_bytes);
	s->tx_dropped = atomic64_read(&p->tx_dropped);
	s->rx_packets = atomic64_read(&p->rx_packets);
	s->rx_bytes = atomic64_read(&p->rx_bytes);
}

/* Carrier is the debugfs setting while the device is up, off while it is down. */
static void rwnic_apply_carrier(struct net_device *dev)
{
	struct rwnic_priv *p = netdev_priv(dev);

	if (p->carrier && netif_running(dev))
		netif_carrier_on(dev);
	else
		netif_carrier_off(dev);
}

static int rwnic_open(struct net_device *dev)
{
	rwnic_apply_carrier(dev);
	return 0;
}

static int rwnic_stop(struct net_device *dev)
{
	netif_carrier_off(dev);
	return 0;
}

static const struct net_device_ops rwnic_netdev_ops = {
	.ndo_open = rwnic_open,
	.ndo_stop = rwnic_stop,
	.ndo_start_xmit = rwnic_xmit,
	.ndo_get_stats64 = rwnic_get_stats64,
	.ndo_set_mac_address = eth_mac_addr,
	.ndo_validate_addr = eth_validate_addr,
};

/* ---- ethtool ---- */

static void rwnic_get_drvinfo(struct net_device *dev, struct ethtool_drvinfo *info)
{
	struct rwnic_priv *p = netdev_priv(dev);

	strscpy(info->driver, "rwnic", sizeof(info->driver));
	strscpy(info->fw_version, "rwnic-test", sizeof(info->fw_version));
	/* A bus address of its own kind, "rwnic:PAIR.END", so that tools have one to show. */
	snprintf(info->bus_info, sizeof(info->bus_info), "rwnic:%d.%d", p->index / 2, p->index % 2);
}

static int rwnic_get_sset_count(struct net_device *dev, int sset)
{
	struct rwnic_priv *p = netdev_priv(dev);

	return sset == ETH_SS_STATS ? p->stats.n : -EOPNOTSUPP;
}

static void rwnic_get_strings(struct net_device *dev, u32 sset, u8 *data)
{
	struct rwnic_priv *p = netdev_priv(dev);

	if (sset == ETH_SS_STATS && p->stats.n)
		memcpy(data, p->stats.names, (size_t)p->stats.n * ETH_GSTRING_LEN);
}

static void rwnic_get_ethtool_stats(struct net_device *dev, struct ethtool_stats *st, u64 *data)
{
	struct rwnic_priv *p = netdev_priv(dev);

	/* The core sized data from get_sset_count under the same RTNL hold. */
	memcpy(data, p->stats.vals, (size_t)p->stats.n * sizeof(u64));
}

static int rwnic_get_link_ksettings(struct net_device *dev, struct ethtool_link_ksettings *ks)
{
	struct rwnic_priv *p = netdev_priv(dev);

	ethtool_link_ksettings_zero_link_mode(ks, supported);
	ethtool_link_ksettings_zero_link_mode(ks, advertising);
	ethtool_link_ksettings_add_link_mode(ks, supported, FIBRE);
	ethtool_link_ksettings_add_link_mode(ks, supported, Pause);
	ks->base.speed = p->speed;
	ks->base.duplex = DUPLEX_FULL;
	ks->base.port = PORT_DA;
	ks->base.autoneg = AUTONEG_DISABLE;
	return 0;
}

static void rwnic_get_pauseparam(struct net_device *dev, struct ethtool_pauseparam *pp)
{
	struct rwnic_priv *p = netdev_priv(dev);

	pp->autoneg = p->pause.autoneg;
	pp->rx_pause = p->pause.rx_pause;
	pp->tx_pause = p->pause.tx_pause;
}

static int rwnic_set_pauseparam(struct net_device *dev, struct ethtool_pauseparam *pp)
{
	struct rwnic_priv *p = netdev_priv(dev);

	p->pause.autoneg = !!pp->autoneg;
	p->pause.rx_pause = !!pp->rx_pause;
	p->pause.tx_pause = !!pp->tx_pause;
	return 0;
}

static void rwnic_get_pause_stats(struct net_device *dev, struct ethtool_pause_stats *ps)
{
	struct rwnic_priv *p = netdev_priv(dev);

	ps->rx_pause_frames = p->pause_rx_frames;
	ps->tx_pause_frames = p->pause_tx_frames;
}

#define RWNIC_FEC_MODES \
	(ETHTOOL_FEC_AUTO | ETHTOOL_FEC_OFF | ETHTOOL_FEC_RS | ETHTOOL_FEC_BASER | ETHTOOL_FEC_LLRS)

static int rwnic_get_fecparam(struct net_device *dev, struct ethtool_fecparam *fp)
{
	struct rwnic_priv *p = netdev_priv(dev);

	fp->fec = p->fec_configured;
	fp->active_fec = p->fec_active;
	return 0;
}

static int rwnic_set_fecparam(struct net_device *dev, struct ethtool_fecparam *fp)
{
	struct rwnic_priv *p = netdev_priv(dev);
	u32 m = fp->fec;

	if (!m || (m & ~RWNIC_FEC_MODES))
		return -EINVAL;
	p->fec_configured = m;
	/* The mode a link would train to, preferring RS as 100G+ links do. */
	if (m & (ETHTOOL_FEC_RS | ETHTOOL_FEC_AUTO))
		p->fec_active = ETHTOOL_FEC_RS;
	else if (m & ETHTOOL_FEC_LLRS)
		p->fec_active = ETHTOOL_FEC_LLRS;
	else if (m & ETHTOOL_FEC_BASER)
		p->fec_active = ETHTOOL_FEC_BASER;
	else
		p->fec_active = ETHTOOL_FEC_OFF;
	return 0;
}

static void rwnic_get_fec_stats(struct net_device *dev, struct ethtool_fec_stats *fs)
{
	struct rwnic_priv *p = netdev_priv(dev);
	int i;

	/* The core preset everything to ETHTOOL_STAT_NOT_SET; lanes we leave so are not sent. */
	fs->corrected_blocks.total = p->fec_corrected;
	fs->uncorrectable_blocks.total = p->fec_uncorrectable;
	fs->corrected_bits.total = p->fec_corrected_bits;
	for (i = 0; i < p->fec_lanes; i++)
		fs->corrected_blocks.lanes[i] = p->fec_lane[i];
}

static int rwnic_get_tunable(struct net_device *dev, const struct ethtool_tunable *t, void *data)
{
	struct rwnic_priv *p = netdev_priv(dev);

	if (t->id != ETHTOOL_PFC_PREVENTION_TOUT)
		return -EOPNOTSUPP;
	*(u16 *)data = p->pfc_tout;
	return 0;
}

static int rwnic_set_tunable(struct net_device *dev, const struct ethtool_tunable *t,
			     const void *data)
{
	struct rwnic_priv *p = netdev_priv(dev);
	u16 v;

	if (t->id != ETHTOOL_PFC_PREVENTION_TOUT)
		return -EOPNOTSUPP;
	v = *(const u16 *)data;
	if (v > RWNIC_TOUT_MAX && v != PFC_STORM_PREVENTION_AUTO)
		return -EINVAL;
	p->pfc_tout = v;
	return 0;
}

static const struct ethtool_ops rwnic_ethtool_ops = {
	.get_drvinfo = rwnic_get_drvinfo,
	.get_link = ethtool_op_get_link,
	.get_link_ksettings = rwnic_get_link_ksettings,
	.get_sset_count = rwnic_get_sset_count,
	.get_strings = rwnic_get_strings,
	.get_ethtool_stats = rwnic_get_ethtool_stats,
	.get_pauseparam = rwnic_get_pauseparam,
	.set_pauseparam = rwnic_set_pauseparam,
	.get_pause_stats = rwnic_get_pause_stats,
	.get_fecparam = rwnic_get_fecparam,
	.set_fecparam = rwnic_set_fecparam,
	.get_fec_stats = rwnic_get_fec_stats,
	.get_tunable = rwnic_get_tunable,
	.set_tunable = rwnic_set_tunable,
};

/* ---- dcbnl (IEEE) ---- */

static int rwnic_ieee_getets(struct net_device *dev, struct ieee_ets *ets)
{
	struct rwnic_priv *p = netdev_priv(dev);

	*ets = p->ets;
	return 0;
}

static int rwnic_ieee_setets(struct net_device *dev, struct ieee_ets *ets)
{
	struct rwnic_priv *p = netdev_priv(dev);
	unsigned int bw = 0, i;
	bool any_ets = false;

	for (i = 0; i < IEEE_8021QAZ_MAX_TCS; i++) {
		if (ets->prio_tc[i] >= IEEE_8021QAZ_MAX_TCS)
			return -EINVAL;
		switch (ets->tc_tsa[i]) {
		case IEEE_8021QAZ_TSA_ETS:
			any_ets = true;
			bw += ets->tc_tx_bw[i];
			break;
		case IEEE_8021QAZ_TSA_STRICT:
		case IEEE_8021QAZ_TSA_CB_SHAPER:
		case IEEE_8021QAZ_TSA_VENDOR:
			break;
		default:
			return -EINVAL;
		}
	}
	/* As NICs with ETS do: the ETS classes share all of the bandwidth. */
	if (any_ets && bw != 100)
		return -EINVAL;
	p->ets.willing = ets->willing;
	p->ets.cbs = ets->cbs;
	memcpy(p->ets.tc_tx_bw, ets->tc_tx_bw, sizeof(p->ets.tc_tx_bw));
	memcpy(p->ets.tc_rx_bw, ets->tc_rx_bw, sizeof(p->ets.tc_rx_bw));
	memcpy(p->ets.tc_tsa, ets->tc_tsa, sizeof(p->ets.tc_tsa));
	memcpy(p->ets.prio_tc, ets->prio_tc, sizeof(p->ets.prio_tc));
	memcpy(p->ets.tc_reco_bw, ets->tc_reco_bw, sizeof(p->ets.tc_reco_bw));
	memcpy(p->ets.tc_reco_tsa, ets->tc_reco_tsa, sizeof(p->ets.tc_reco_tsa));
	memcpy(p->ets.reco_prio_tc, ets->reco_prio_tc, sizeof(p->ets.reco_prio_tc));
	return 0;
}

static int rwnic_ieee_getmaxrate(struct net_device *dev, struct ieee_maxrate *mr)
{
	struct rwnic_priv *p = netdev_priv(dev);

	*mr = p->maxrate;
	return 0;
}

static int rwnic_ieee_setmaxrate(struct net_device *dev, struct ieee_maxrate *mr)
{
	struct rwnic_priv *p = netdev_priv(dev);

	p->maxrate = *mr;
	return 0;
}

static int rwnic_ieee_getpfc(struct net_device *dev, struct ieee_pfc *pfc)
{
	struct rwnic_priv *p = netdev_priv(dev);

	*pfc = p->pfc;
	memcpy(pfc->requests, p->pfc_requests, sizeof(pfc->requests));
	memcpy(pfc->indications, p->pfc_indications, sizeof(pfc->indications));
	return 0;
}

static int rwnic_ieee_setpfc(struct net_device *dev, struct ieee_pfc *pfc)
{
	struct rwnic_priv *p = netdev_priv(dev);

	/* pfc_cap is what the device can do, the counters what it counted: neither is set. */
	p->pfc.pfc_en = pfc->pfc_en;
	p->pfc.mbc = pfc->mbc;
	p->pfc.delay = pfc->delay;
	return 0;
}

static bool rwnic_app_valid(const struct dcb_app *app)
{
	if (app->priority >= IEEE_8021QAZ_MAX_TCS)
		return false;
	switch (app->selector) {
	case IEEE_8021QAZ_APP_SEL_ETHERTYPE:
	case IEEE_8021QAZ_APP_SEL_STREAM:
	case IEEE_8021QAZ_APP_SEL_DGRAM:
	case IEEE_8021QAZ_APP_SEL_ANY:
		return true;
	case IEEE_8021QAZ_APP_SEL_DSCP:
		return app->protocol < 64;
	default:
		return false;
	}
}

static int rwnic_ieee_getapp(struct net_device *dev, struct dcb_app *app)
{
	u8 mask = dcb_ieee_getapp_mask(dev, app);

	if (!mask)
		return -ENOENT;
	app->priority = __ffs(mask);
	return 0;
}

static int rwnic_ieee_setapp(struct net_device *dev, struct dcb_app *app)
{
	struct rwnic_priv *p = netdev_priv(dev);
	int i, err;

	if (!rwnic_app_valid(app))
		return -EINVAL;
	for (i = 0; i < p->n_apps; i++)
		if (!memcmp(&p->apps[i], app, sizeof(*app)))
			return 0;
	if (p->n_apps == RWNIC_MAX_APPS)
		return -ENOSPC;
	err = dcb_ieee_setapp(dev, app);
	if (err)
		return err;
	p->apps[p->n_apps++] = *app;
	return 0;
}

static int rwnic_ieee_delapp(struct net_device *dev, struct dcb_app *app)
{
	struct rwnic_priv *p = netdev_priv(dev);
	int i, err;

	err = dcb_ieee_delapp(dev, app);
	if (err)
		return err;
	for (i = 0; i < p->n_apps; i++) {
		if (!memcmp(&p->apps[i], app, sizeof(*app))) {
			p->apps[i] = p->apps[--p->n_apps];
			break;
		}
	}
	return 0;
}

static u8 rwnic_getdcbx(struct net_device *dev)
{
	struct rwnic_priv *p = netdev_priv(dev);

	return p->dcbx;
}

static u8 rwnic_setdcbx(struct net_device *dev, u8 mode)
{
	struct rwnic_priv *p = netdev_priv(dev);
	const u8 known = DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_LLD_MANAGED | DCB_CAP_DCBX_VER_CEE |
			 DCB_CAP_DCBX_VER_IEEE | DCB_CAP_DCBX_STATIC;

	/* Nonzero is failure here.  Host and firmware (LLD) management exclude each other. */
	if ((mode & ~known) || !(mode & (DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_LLD_MANAGED)) ||
	    ((mode & DCB_CAP_DCBX_HOST) && (mode & DCB_CAP_DCBX_LLD_MANAGED)))
		return 1;
	p->dcbx = mode;
	/* dcbnl does not announce a DCBX change itself; a driver whose mode moved does. */
	dcbnl_ieee_notify(dev, RTM_SETDCB, DCB_CMD_SDCBX, 0, 0);
	return 0;
}

static int rwnic_getbuffer(struct net_device *dev, struct dcbnl_buffer *b)
{
	struct rwnic_priv *p = netdev_priv(dev);

	*b = p->buffer;
	return 0;
}

static int rwnic_setbuffer(struct net_device *dev, struct dcbnl_buffer *b)
{
	struct rwnic_priv *p = netdev_priv(dev);
	u64 sum = 0;
	int i;

	for (i = 0; i < IEEE_8021QAZ_MAX_TCS; i++)
		if (b->prio2buffer[i] >= DCBX_MAX_BUFFERS)
			return -EINVAL;
	for (i = 0; i < DCBX_MAX_BUFFERS; i++)
		sum += b->buffer_size[i];
	if (sum > p->buffer.total_size)
		return -EINVAL;
	memcpy(p->buffer.prio2buffer, b->prio2buffer, sizeof(p->buffer.prio2buffer));
	memcpy(p->buffer.buffer_size, b->buffer_size, sizeof(p->buffer.buffer_size));
	return 0;
}

static const struct dcbnl_rtnl_ops rwnic_dcbnl_ops = {
	.ieee_getets = rwnic_ieee_getets,
	.ieee_setets = rwnic_ieee_setets,
	.ieee_getmaxrate = rwnic_ieee_getmaxrate,
	.ieee_setmaxrate = rwnic_ieee_setmaxrate,
	.ieee_getpfc = rwnic_ieee_getpfc,
	.ieee_setpfc = rwnic_ieee_setpfc,
	.ieee_getapp = rwnic_ieee_getapp,
	.ieee_setapp = rwnic_ieee_setapp,
	.ieee_delapp = rwnic_ieee_delapp,
	.getdcbx = rwnic_getdcbx,
	.setdcbx = rwnic_setdcbx,
	.dcbnl_getbuffer = rwnic_getbuffer,
	.dcbnl_setbuffer = rwnic_setbuffer,
};

/* ---- debugfs ---- */

/*
 * next_line: cut the next line out of *s (NUL-terminated, modified in place),
 * without its newline and surrounding blanks.  NULL at the end.
 */
static char *next_line(char **s)
{
	char *line;

	while (*s && **s) {
		line = strsep(s, "\n");
		line = strim(line);
		if (*line)
			return line;
	}
	return NULL;
}

/* parse_kv: "key value" with value a decimal u64; key is NUL-terminated in place. */
static int parse_kv(char *line, char **key, u64 *val)
{
	char *v = line;

	*key = strsep(&v, " \t");
	if (!v)
		return -EINVAL;
	v = skip_spaces(v);
	if (!*v || strpbrk(v, " \t"))
		return -EINVAL;
	return kstrtou64(v, 10, val);
}

/* parse_prios: exactly eight decimal u64 after the key. */
static int parse_prios(char *rest, u64 out[IEEE_8021QAZ_MAX_TCS])
{
	char *tok;
	int i = 0, err;

	while ((tok = strsep(&rest, " \t"))) {
		if (!*tok)
			continue;
		if (i == IEEE_8021QAZ_MAX_TCS)
			return -EINVAL;
		err = kstrtou64(tok, 10, &out[i++]);
		if (err)
			return err;
	}
	return i == IEEE_8021QAZ_MAX_TCS ? 0 : -EINVAL;
}

/* The device a debugfs file belongs to; it outlives the file (removed first at unload). */
static struct net_device *file_dev(struct file *f)
{
	struct seq_file *m = f->private_data;

	return m->private;
}

static char *small_write_buf(const char __user *ubuf, size_t len)
{
	if (len == 0 || len > RWNIC_SMALL_BYTES)
		return ERR_PTR(-EINVAL);
	return memdup_user_nul(ubuf, len);
}

/* carrier */
static int carrier_show(struct seq_file *m, void *v)
{
	struct rwnic_priv *p = netdev_priv(m->private);

	rtnl_lock();
	seq_printf(m, "%d\n", p->carrier);
	rtnl_unlock();
	return 0;
}

static ssize_t carrier_write(struct file *f, const char __user *ubuf, size_t len, loff_t *pos)
{
	struct net_device *dev = file_dev(f);
	struct rwnic_priv *p = netdev_priv(dev);
	char *buf = small_write_buf(ubuf, len), *s, *line;
	bool on;

	if (IS_ERR(buf))
		return PTR_ERR(buf);
	s = buf;
	line = next_line(&s);
	if (!line || next_line(&s) || (strcmp(line, "0") && strcmp(line, "1"))) {
		kfree(buf);
		return -EINVAL;
	}
	on = line[0] == '1';
	kfree(buf);
	rtnl_lock();
	p->carrier = on;
	rwnic_apply_carrier(dev);
	rtnl_unlock();
	return len;
}

/* speed */
static int speed_show(struct seq_file *m, void *v)
{
	struct rwnic_priv *p = netdev_priv(m->private);

	rtnl_lock();
	seq_printf(m, "%u\n", p->speed);
	rtnl_unlock();
	return 0;
}

static ssize_t speed_write(struct file *f, const char __user *ubuf, size_t len, loff_t *pos)
{
	struct rwnic_priv *p = netdev_priv(file_dev(f));
	char *buf = small_write_buf(ubuf, len), *s, *line;
	u32 v;
	int err;

	if (IS_ERR(buf))
		return PTR_ERR(buf);
	s = buf;
	line = next_line(&s);
	/* SPEED_UNKNOWN (-1) is not something a test sets; 0 is not a link speed. */
	err = line && !next_line(&s) ? kstrtou32(line, 10, &v) : -EINVAL;
	if (!err && (v == 0 || v > INT_MAX))
		err = -EINVAL;
	kfree(buf);
	if (err)
		return -EINVAL;
	rtnl_lock();
	p->speed = v;
	rtnl_unlock();
	return len;
}

/* pause */
static int pause_show(struct seq_file *m, void *v)
{
	struct rwnic_priv *p = netdev_priv(m->private);

	rtnl_lock();
	seq_printf(m, "rx_frames %llu\ntx_frames %llu\n", p->pause_rx_frames, p->pause_tx_frames);
	rtnl_unlock();
	return 0;
}

static ssize_t pause_write(struct file *f, const char __user *ubuf, size_t len, loff_t *pos)
{
	struct rwnic_priv *p = netdev_priv(file_dev(f));
	char *buf = small_write_buf(ubuf, len), *s, *line, *key;
	u64 rx = 0, tx = 0, val;
	bool set_rx = false, set_tx = false;
	int err = 0;

	if (IS_ERR(buf))
		return PTR_ERR(buf);
	s = buf;
	while (!err && (line = next_line(&s))) {
		err = parse_kv(line, &key, &val);
		if (err)
			break;
		if (!strcmp(key, "rx_frames")) {
			rx = val;
			set_rx = true;
		} else if (!strcmp(key, "tx_frames")) {
			tx = val;
			set_tx = true;
		} else {
			err = -EINVAL;
		}
	}
	kfree(buf);
	if (err || !(set_rx || set_tx))
		return -EINVAL;
	rtnl_lock();
	if (set_rx)
		p->pause_rx_frames = rx;
	if (set_tx)
		p->pause_tx_frames = tx;
	rtnl_unlock();
	return len;
}

/* fec */
static int fec_show(struct seq_file *m, void *v)
{
	struct rwnic_priv *p = netdev_priv(m->private);
	int i;

	rtnl_lock();
	seq_printf(m, "corrected %llu\nuncorrectable %llu\ncorrected_bits %llu\n", p->fec_corrected,
		   p->fec_uncorrectable, p->fec_corrected_bits);
	for (i = 0; i < p->fec_lanes; i++)
		seq_printf(m, "lane%d_corrected %llu\n", i, p->fec_lane[i]);
	rtnl_unlock();
	return 0;
}

static ssize_t fec_write(struct file *f, const char __user *ubuf, size_t len, loff_t *pos)
{
	struct rwnic_priv *p = netdev_priv(file_dev(f));
	char *buf = small_write_buf(ubuf, len), *s, *line, *key;
	/* 0 corrected, 1 uncorrectable, 2 corrected_bits, 3.. lanes */
	u64 vals[3 + ETHTOOL_MAX_LANES];
	unsigned long set = 0;
	u64 val;
	int err = 0, i, lane;

	if (IS_ERR(buf))
		return PTR_ERR(buf);
	s = buf;
	while (!err && (line = next_line(&s))) {
		err = parse_kv(line, &key, &val);
		if (err)
			break;
		if (!strcmp(key, "corrected")) {
			i = 0;
		} else if (!strcmp(key, "uncorrectable")) {
			i = 1;
		} else if (!strcmp(key, "corrected_bits")) {
			i = 2;
		} else if (sscanf(key, "lane%d_corrected", &lane) == 1 && lane >= 0 &&
			   lane < ETHTOOL_MAX_LANES) {
			char canon[24];

			/* only the canonical spelling: no "lane03_corrected", no trailing junk */
			snprintf(canon, sizeof(canon), "lane%d_corrected", lane);
			if (strcmp(canon, key)) {
				err = -EINVAL;
				break;
			}
			i = 3 + lane;
		} else {
			err = -EINVAL;
			break;
		}
		vals[i] = val;
		set |= BIT(i);
	}
	kfree(buf);
	if (err || !set)
		return -EINVAL;
	rtnl_lock();
	if (set & BIT(0))
		p->fec_corrected = vals[0];
	if (set & BIT(1))
		p->fec_uncorrectable = vals[1];
	if (set & BIT(2))
		p->fec_corrected_bits = vals[2];
	for (i = 0; i < ETHTOOL_MAX_LANES; i++) {
		if (!(set & BIT(3 + i)))
			continue;
		/* lanes below a newly reported one start at 0 */
		while (p->fec_lanes <= i)
			p->fec_lane[p->fec_lanes++] = 0;
		p->fec_lane[i] = vals[3 + i];
	}
	rtnl_unlock();
	return len;
}

/* pfc */
static int pfc_show(struct seq_file *m, void *v)
{
	struct rwnic_priv *p = netdev_priv(m->private);
	int i;

	rtnl_lock();
	seq_puts(m, "requests");
	for (i = 0; i < IEEE_8021QAZ_MAX_TCS; i++)
		seq_printf(m, " %llu", p->pfc_requests[i]);
	seq_puts(m, "\nindications");
	for (i = 0; i < IEEE_8021QAZ_MAX_TCS; i++)
		seq_printf(m, " %llu", p->pfc_indications[i]);
	seq_putc(m, '\n');
	rtnl_unlock();
	return 0;
}

static ssize_t pfc_write(struct file *f, const char __user *ubuf, size_t len, loff_t *pos)
{
	struct rwnic_priv *p = netdev_priv(file_dev(f));
	char *buf = small_write_buf(ubuf, len), *s, *line, *key;
	u64 req[IEEE_8021QAZ_MAX_TCS], ind[IEEE_8021QAZ_MAX_TCS];
	bool set_req = false, set_ind = false;
	int err = 0;

	if (IS_ERR(buf))
		return PTR_ERR(buf);
	s = buf;
	while (!err && (line = next_line(&s))) {
		key = strsep(&line, " \t");
		if (!line) {
			err = -EINVAL;
		} else if (!strcmp(key, "requests")) {
			err = parse_prios(line, req);
			set_req = true;
		} else if (!strcmp(key, "indications")) {
			err = parse_prios(line, ind);
			set_ind = true;
		} else {
			err = -EINVAL;
		}
	}
	kfree(buf);
	if (err || !(set_req || set_ind))
		return -EINVAL;
	rtnl_lock();
	if (set_req)
		memcpy(p->pfc_requests, req, sizeof(req));
	if (set_ind)
		memcpy(p->pfc_indications, ind, sizeof(ind));
	rtnl_unlock();
	return len;
}

/* stats: the ethtool -S table */
struct stats_open {
	struct net_device *dev;
	char *buf; /* what this open wrote so far */
	size_t len;
	bool failed;
};

static int stats_show(struct seq_file *m, void *v)
{
	struct stats_open *so = m->private;
	struct rwnic_priv *p = netdev_priv(so->dev);
	u32 i;

	rtnl_lock();
	for (i = 0; i < p->stats.n; i++)
		seq_printf(m, "%s %llu\n", p->stats.names[i], p->stats.vals[i]);
	rtnl_unlock();
	return 0;
}

static void stats_free(struct rwnic_stats *st)
{
	kvfree(st->names);
	kvfree(st->vals);
	st->names = NULL;
	st->vals = NULL;
	st->n = 0;
}

/* Parse text (modified) into a new table; all of it or nothing. */
static int stats_parse(char *text, struct rwnic_stats *out)
{
	struct rwnic_stats st = {};
	char *s = text, *line, *key;
	u32 n = 0, cap = 0, i;
	u64 val;
	int err = 0;

	/* count lines first so the arrays are allocated once */
	for (line = text; *line; line++)
		cap += *line == '\n';
	cap++;
	if (cap > RWNIC_MAX_STATS)
		cap = RWNIC_MAX_STATS + 1;
	st.names = kvcalloc(cap, ETH_GSTRING_LEN, GFP_KERNEL);
	st.vals = kvcalloc(cap, sizeof(u64), GFP_KERNEL);
	if (!st.names || !st.vals) {
		stats_free(&st);
		return -ENOMEM;
	}
	while ((line = next_line(&s))) {
		err = parse_kv(line, &key, &val);
		if (err || strlen(key) >= ETH_GSTRING_LEN || n == RWNIC_MAX_STATS) {
			err = -EINVAL;
			break;
		}
		/* a name twice would make `ethtool -S` ambiguous */
		for (i = 0; i < n; i++)
			if (!strcmp(st.names[i], key))
				break;
		if (i < n) {
			err = -EINVAL;
			break;
		}
		strscpy(st.names[n], key, ETH_GSTRING_LEN);
		st.vals[n++] = val;
	}
	if (err || n == 0) {
		stats_free(&st);
		return -EINVAL;
	}
	st.n = n;
	*out = st;
	return 0;
}

/* Replace the device's table with what this open wrote up to its last complete line. */
static int stats_commit(struct stats_open *so, bool final)
{
	struct rwnic_priv *p = netdev_priv(so->dev);
	struct rwnic_stats st, old;
	size_t upto = so->len;
	char *copy;
	int err;

	if (!final) {
		while (upto && so->buf[upto - 1] != '\n')
			upto--;
		if (!upto)
			return 0;
	}
	copy = kvmalloc(upto + 1, GFP_KERNEL);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, so->buf, upto);
	copy[upto] = '\0';
	err = stats_parse(copy, &st);
	kvfree(copy);
	if (err)
		return err;
	rtnl_lock();
	old = p->stats;
	p->stats = st;
	rtnl_unlock();
	stats_free(&old);
	return 0;
}

static int stats_open_fn(struct inode *inode, struct file *f)
{
	struct stats_open *so = kzalloc(sizeof(*so), GFP_KERNEL);
	int err;

	if (!so)
		return -ENOMEM;
	so->dev = inode->i_private;
	err = single_open(f, stats_show, so);
	if (err)
		kfree(so);
	return err;
}

static ssize_t stats_write(struct file *f, const char __user *ubuf, size_t len, loff_t *pos)
{
	struct seq_file *m = f->private_data;
	struct stats_open *so = m->private;
	char *nbuf;
	int err;

	if (so->failed)
		return -EINVAL;
	if (len == 0)
		return 0;
	if (len > RWNIC_STATS_BYTES - so->len) {
		so->failed = true;
		return -EINVAL;
	}
	nbuf = kvrealloc(so->buf, so->len, so->len + len, GFP_KERNEL);
	if (!nbuf)
		return -ENOMEM;
	so->buf = nbuf;
	if (copy_from_user(so->buf + so->len, ubuf, len))
		return -EFAULT;
	so->len += len;
	err = stats_commit(so, false);
	if (err) {
		so->failed = true;
		return err;
	}
	return len;
}

static int stats_release(struct inode *inode, struct file *f)
{
	struct seq_file *m = f->private_data;
	struct stats_open *so = m->private;

	/* A last line without its newline still counts; an error here can only be logged. */
	if (!so->failed && so->len && so->buf[so->len - 1] != '\n' && stats_commit(so, true))
		netdev_warn(so->dev, "rwnic: stats: last line rejected, table unchanged\n");
	kvfree(so->buf);
	kfree(so);
	return single_release(inode, f);
}

static const struct file_operations stats_fops = {
	.owner = THIS_MODULE,
	.open = stats_open_fn,
	.read = seq_read,
	.llseek = seq_lseek,
	.write = stats_write,
	.release = stats_release,
};

#define RWNIC_FOPS(name)                                              \
	static int name##_open(struct inode *inode, struct file *f)   \
	{                                                             \
		return single_open(f, name##_show, inode->i_private); \
	}                                                             \
	static const struct file_operations name##_fops = {           \
		.owner = THIS_MODULE,                                 \
		.open = name##_open,                                  \
		.read = seq_read,                                     \
		.llseek = seq_lseek,                                  \
		.write = name##_write,                                \
		.release = single_release,                            \
	}

RWNIC_FOPS(carrier);
RWNIC_FOPS(speed);
RWNIC_FOPS(pause);
RWNIC_FOPS(fec);
RWNIC_FOPS(pfc);

static void rwnic_debugfs_add(struct net_device *dev)
{
	struct rwnic_priv *p = netdev_priv(dev);

	p->dir = debugfs_create_dir(netdev_name(dev), rwnic_root);
	debugfs_create_file("stats", 0600, p->dir, dev, &stats_fops);
	debugfs_create_file("carrier", 0600, p->dir, dev, &carrier_fops);
	debugfs_create_file("fec", 0600, p->dir, dev, &fec_fops);
	debugfs_create_file("pause", 0600, p->dir, dev, &pause_fops);
	debugfs_create_file("pfc", 0600, p->dir, dev, &pfc_fops);
	debugfs_create_file("speed", 0600, p->dir, dev, &speed_fops);
}

/* ---- devices ---- */

static void rwnic_setup(struct net_device *dev)
{
	struct rwnic_priv *p = netdev_priv(dev);
	int i;

	ether_setup(dev);
	dev->netdev_ops = &rwnic_netdev_ops;
	dev->ethtool_ops = &rwnic_ethtool_ops;
	dev->dcbnl_ops = &rwnic_dcbnl_ops;
	dev->priv_flags |= IFF_NO_QUEUE;
	dev->features |= NETIF_F_LLTX;
	dev->min_mtu = ETH_MIN_MTU;
	dev->max_mtu = 9216;
	eth_hw_addr_random(dev);

	p->dev = dev;
	p->carrier = true;
	p->speed = 100000;
	p->fec_configured = ETHTOOL_FEC_RS;
	p->fec_active = ETHTOOL_FEC_RS;
	p->ets.ets_cap = IEEE_8021QAZ_MAX_TCS;
	for (i = 0; i < IEEE_8021QAZ_MAX_TCS; i++)
		p->ets.tc_tsa[i] = IEEE_8021QAZ_TSA_STRICT;
	p->pfc.pfc_cap = IEEE_8021QAZ_MAX_TCS;
	p->buffer.total_size = RWNIC_BUF_TOTAL;
	p->dcbx = DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE;
}

static void rwnic_destroy_all(void)
{
	int i, j;

	/* Files first: once they are gone no handler can run or wait on the RTNL. */
	debugfs_remove_recursive(rwnic_root);
	rtnl_lock();
	for (i = 0; i < rwnic_ndevs; i++) {
		struct rwnic_priv *p = netdev_priv(rwnic_devs[i]);

		for (j = 0; j < p->n_apps; j++)
			dcb_ieee_delapp(rwnic_devs[i], &p->apps[j]);
		p->n_apps = 0;
		if (rwnic_devs[i]->reg_state == NETREG_REGISTERED)
			unregister_netdevice(rwnic_devs[i]);
	}
	rtnl_unlock();
	for (i = 0; i < rwnic_ndevs; i++) {
		struct rwnic_priv *p = netdev_priv(rwnic_devs[i]);

		stats_free(&p->stats);
		free_netdev(rwnic_devs[i]);
	}
	rwnic_ndevs = 0;
}

static int __init rwnic_init(void)
{
	int i, err;

	if (pairs < 1 || pairs > RWNIC_MAX_PAIRS) {
		pr_err("rwnic: pairs=%d out of range 1-%d\n", pairs, RWNIC_MAX_PAIRS);
		return -EINVAL;
	}
	rwnic_root = debugfs_create_dir("rwnic", NULL);
	for (i = 0; i < 2 * pairs; i++) {
		char name[IFNAMSIZ];
		struct net_device *dev;

		snprintf(name, sizeof(name), "rwnic%d", i);
		dev = alloc_netdev(sizeof(struct rwnic_priv), name, NET_NAME_USER, rwnic_setup);
		if (!dev) {
			err = -ENOMEM;
			goto fail;
		}
		rwnic_devs[rwnic_ndevs++] = dev;
	}
	for (i = 0; i < rwnic_ndevs; i++) {
		struct rwnic_priv *p = netdev_priv(rwnic_devs[i]);

		p->peer = rwnic_devs[i ^ 1];
		p->index = i;
	}
	for (i = 0; i < rwnic_ndevs; i++) {
		err = register_netdev(rwnic_devs[i]);
		if (err) {
			pr_err("rwnic: registering %s: %d\n", netdev_name(rwnic_devs[i]), err);
			goto fail;
		}
		netif_carrier_off(rwnic_devs[i]);
		rwnic_debugfs_add(rwnic_devs[i]);
	}
	return 0;
fail:
	rwnic_destroy_all();
	return err;
}

static void __exit rwnic_exit(void)
{
	rwnic_destroy_all();
}

module_init(rwnic_init);
module_exit(rwnic_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("rwnic: test-only paired Ethernet device with ethtool and DCB surfaces");
