// SPDX-License-Identifier: MIT
/*
 * FEC over ethtool netlink (net/ethtool/fec.c, kernel >= 5.13 for the
 * statistics): the active FEC mode and, with ETHTOOL_FLAG_STATS, corrected
 * and uncorrectable codewords and corrected bits, any driver that fills
 * get_fec_stats.  Each statistic is an array of u64: the total first, then
 * one per lane when the driver counts per lane (fec_stats_recalc()); an
 * empty array is a statistic the driver does not keep.
 *
 * And the pre-FEC bit error ratio derived from the corrected bits (FEC's,
 * else mlx5's rx_corrected_bits_phy) over the bits the link carried at its
 * speed in the same time.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>

#include "netdev.h"
#include "util.h"

/* total + ETHTOOL_MAX_LANES (8) */
#define FEC_ARRAY_MAX (9 * sizeof(uint64_t))

static const struct rw_nl_policy fec_pol[ETHTOOL_A_FEC_MAX + 1] = {
	RW_NL_U32(ETHTOOL_A_FEC_ACTIVE),
	RW_NL_NEST(ETHTOOL_A_FEC_STATS),
};
static const struct rw_nl_set fec_set = RW_NL_SET("ETHTOOL_A_FEC", fec_pol);

#define FEC_ARRAY(a) [a] = { .type = MNL_TYPE_BINARY, .max = FEC_ARRAY_MAX, .name = #a }
/* _PAD is skipped: nla_put_64bit() adds it only where the arrays need aligning. */
static const struct rw_nl_policy fec_stat_pol[ETHTOOL_A_FEC_STAT_CORR_BITS + 1] = {
	FEC_ARRAY(ETHTOOL_A_FEC_STAT_CORRECTED),
	FEC_ARRAY(ETHTOOL_A_FEC_STAT_UNCORR),
	FEC_ARRAY(ETHTOOL_A_FEC_STAT_CORR_BITS),
};
static const struct rw_nl_set fec_stat_set = RW_NL_SET("ETHTOOL_A_FEC_STAT", fec_stat_pol);

const char *ethtool_fec_mode_name(uint32_t link_mode_bit)
{
	switch (link_mode_bit) {
	case ETHTOOL_LINK_MODE_FEC_NONE_BIT:
		return "off";
	case ETHTOOL_LINK_MODE_FEC_RS_BIT:
		return "rs";
	case ETHTOOL_LINK_MODE_FEC_BASER_BIT:
		return "baser";
	case ETHTOOL_LINK_MODE_FEC_LLRS_BIT:
		return "llrs";
	default:
		return NULL;
	}
}

static int fec_array(const struct nlattr *a, const char *name, struct ethtool_fec_stat *s,
		     char *err, size_t errlen)
{
	size_t len = mnl_attr_get_payload_len(a);

	if (len % sizeof(uint64_t)) {
		snprintf(err, errlen, "%s: payload %zu bytes, not a whole number of u64", name,
			 len);
		return -EBADMSG;
	}
	s->n = (uint8_t)(len / sizeof(uint64_t));
	/* the payload is 8-aligned only where the kernel padded it: copy, never cast */
	memcpy(s->v, mnl_attr_get_payload(a), len);
	return 0;
}

int ethtool_parse_fec(const void *buf, size_t len, uint16_t family, struct ethtool_fec *f,
		      char *err, size_t errlen)
{
	static const uint16_t types[3] = { ETHTOOL_A_FEC_STAT_CORRECTED, ETHTOOL_A_FEC_STAT_UNCORR,
					   ETHTOOL_A_FEC_STAT_CORR_BITS };
	struct ethtool_fec_stat *dst[3];
	const struct nlattr *tb[ETHTOOL_A_FEC_MAX + 1];
	const struct nlattr *st[ETHTOOL_A_FEC_STAT_CORR_BITS + 1];
	int r;

	memset(f, 0, sizeof(*f));
	dst[0] = &f->corrected;
	dst[1] = &f->uncorrectable;
	dst[2] = &f->corrected_bits;
	r = ethtool_parse_reply(buf, len, family, ETHTOOL_MSG_FEC_GET_REPLY,
				"ETHTOOL_MSG_FEC_GET_REPLY", &fec_set, tb, err, errlen);
	if (r)
		return r;
	/* left out when the driver reports no active mode (fec_fill_reply()) */
	if (tb[ETHTOOL_A_FEC_ACTIVE]) {
		f->have_active = true;
		f->active = mnl_attr_get_u32(tb[ETHTOOL_A_FEC_ACTIVE]);
	}
	if (!tb[ETHTOOL_A_FEC_STATS])
		return 0;
	r = rw_nl_parse_nested(&fec_stat_set, tb[ETHTOOL_A_FEC_STATS], st, NULL, err, errlen);
	if (r)
		return r;
	for (int i = 0; i < 3; i++) {
		if (!st[types[i]])
			continue;
		r = fec_array(st[types[i]], fec_stat_pol[types[i]].name, dst[i], err, errlen);
		if (r)
			return r;
	}
	return 0;
}

static void fill_stat(struct object *o, enum field_id total, enum field_id lanes,
		      const struct ethtool_fec_stat *s, int err)
{
	if (err) {
		field_absent_errno(o, total, err);
		field_absent_errno(o, lanes, err);
		return;
	}
	if (!s->n)
		field_absent(o, total, ABS_UNSUPPORTED, EOPNOTSUPP);
	else
		field_set_int(o, total, (int64_t)s->v[0]);
	if (s->n < 2) {
		field_absent(o, lanes, ABS_UNSUPPORTED, EOPNOTSUPP);
		return;
	}
	for (int l = 1; l < s->n && l <= RW_PRIO_COUNT; l++)
		field_set_prio(o, lanes, l - 1, s->v[l]);
}

void ethtool_fill_fec(struct object *o, const struct ethtool_fec *f, int err)
{
	const char *mode = f && f->have_active ? ethtool_fec_mode_name(f->active) : NULL;

	if (err)
		field_absent_errno(o, F_NETDEV_FEC_ACTIVE, err);
	else if (mode)
		field_set_str(o, F_NETDEV_FEC_ACTIVE, mode);
	else
		field_absent(o, F_NETDEV_FEC_ACTIVE, ABS_UNSUPPORTED, EOPNOTSUPP);
	fill_stat(o, F_NETDEV_FEC_CORRECTED, F_NETDEV_FEC_LANE_CORRECTED, &f->corrected, err);
	fill_stat(o, F_NETDEV_FEC_UNCORRECTABLE, F_NETDEV_FEC_LANE_UNCORRECTABLE, &f->uncorrectable,
		  err);
	fill_stat(o, F_NETDEV_FEC_CORRECTED_BITS, F_NETDEV_FEC_LANE_CORRECTED_BITS,
		  &f->corrected_bits, err);
}

void ethtool_collect_fec(struct ethtool_priv *p, struct object *o, struct ethtool_dev *d)
{
	const struct nlmsghdr *reply;
	struct ethtool_fec f;
	char err[160] = "";
	int r;

	memset(&f, 0, sizeof(f));
	if (!p->family) {
		/* no ethtool netlink: FEC statistics have no ioctl */
		ethtool_fill_fec(o, &f, -EOPNOTSUPP);
		return;
	}
	if (d->fec_err) {
		/* veth, virtio: get_fecparam is not there; asking each poll would only repeat it */
		ethtool_fill_fec(o, &f, -d->fec_err);
		return;
	}
	r = rw_nl_request(&p->genl,
			  ethtool_stats_request(p, ETHTOOL_MSG_FEC_GET, ETHTOOL_A_FEC_HEADER, o),
			  &reply, err, sizeof(err));
	if (!r)
		r = ethtool_parse_fec(reply, reply->nlmsg_len, p->family, &f, err, sizeof(err));
	if (r) {
		ethtool_note_err(o->name, "FEC_GET", r, err);
		if (absent_from_errno(r) == ABS_UNSUPPORTED)
			d->fec_err = -r;
	}
	ethtool_fill_fec(o, &f, r);
}

/* ---- pre-FEC BER ---- */

/*
 * The ratio is taken over at least BER_MIN_NS and at most twice that: a
 * one-second ratio at 100 Gb/s cannot tell 1e-12 from 0, and a ratio over
 * hours would hide the minute a cable went bad.
 */
#define BER_MIN_NS (10LL * 1000000000LL)

void ethtool_ber_update(struct ber_state *b, struct object *o, int64_t now_ns)
{
	enum field_id src = F_NETDEV_FEC_CORRECTED_BITS;
	uint64_t bits;
	int64_t span;
	double carried;

	if (!field_present(o, src))
		src = F_NETDEV_PHY_CORRECTED_BITS;
	if (!field_present(o, src)) {
		/* the reason of the better source: FEC statistics are the driver-neutral one */
		const struct field_val *f = &o->f[F_NETDEV_FEC_CORRECTED_BITS];

		field_absent(o, F_NETDEV_PRE_FEC_BER, f->state ? f->state : ABS_UNSUPPORTED,
			     f->err ? f->err : EOPNOTSUPP);
		b->n = 0;
		return;
	}
	if (!field_present(o, F_NETDEV_SPEED)) {
		/* link down or not negotiated: no bits were carried at a known rate */
		field_absent(o, F_NETDEV_PRE_FEC_BER, ABS_UNSUPPORTED, ENOLINK);
		b->n = 0;
		return;
	}
	bits = (uint64_t)o->f[src].v.i;
	if (b->n && (b->src != (int)src || b->speed != o->f[F_NETDEV_SPEED].v.i ||
		     bits < b->bits[b->n - 1])) {
		/* a counter reset (driver reload), another source or a new speed: start over */
		b->n = 0;
	}
	b->src = (int)src;
	b->speed = o->f[F_NETDEV_SPEED].v.i;
	if (!b->n) {
		b->bits[0] = bits;
		b->t[0] = now_ns;
		b->n = 1;
	} else if (b->n == 1 && now_ns - b->t[0] >= BER_MIN_NS) {
		b->bits[1] = bits;
		b->t[1] = now_ns;
		b->n = 2;
	} else if (b->n == 2 && now_ns - b->t[1] >= BER_MIN_NS) {
		b->bits[0] = b->bits[1];
		b->t[0] = b->t[1];
		b->bits[1] = bits;
		b->t[1] = now_ns;
	}
	span = now_ns - b->t[0];
	if (span < BER_MIN_NS) {
		field_absent(o, F_NETDEV_PRE_FEC_BER, ABS_NO_DATA, 0);
		return;
	}
	/* speed is in Mb/s */
	carried = (double)b->speed * 1e6 * ((double)span / 1e9);
	field_set_float(o, F_NETDEV_PRE_FEC_BER, (double)(bits - b->bits[0]) / carried);
}
