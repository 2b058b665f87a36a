// SPDX-License-Identifier: MIT
/*
 * The driver-independent counters.  Sources (Debian's linux-source 6.1.192,
 * 6.12.118, 7.2.13; shared/reference/vendors.md has every line):
 *   mlx5_core  drivers/infiniband/hw/mlx5/counters.c:39-107
 *   bnxt_en    drivers/infiniband/hw/bnxt_re/hw_counters.c (bnxt_re): 7.2 54-125,
 *              6.12 89-148 (the names 7.2 renamed); 6.1 as 6.12 without CNP/ECN
 *   ice        drivers/infiniband/hw/irdma/verbs.c:4658-4723 (irdma): gen2 (E810)
 *              has cnp/ECN counters only; gen3 names (7.2) contain spaces
 *   ionic      drivers/infiniband/hw/ionic/ionic_hw_stats.c:9-36: names come from
 *              the firmware at run time; these are the ones AMD's firmware and
 *              tools use (third-party, unverified on a Pollara device)
 *   hns3       drivers/infiniband/hw/hns/hns_roce_main.c:616-639 (hns_roce; 6.12+)
 *   mana       drivers/infiniband/hw/mana/counters.c:8-52 (mana_ib; 7.2): port
 *              counters 8-43, device counters 45-52 (read as "device:<name>")
 *   rdma_rxe   drivers/infiniband/sw/rxe/rxe_hw_counters.c:10-26
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util.h"
#include "vendors.h"

#define ROW(f, d, k, n)                                                        \
	{                                                                      \
		.field = F_PORT_RDMA_##f, .driver = d, .kernels = k, .name = n \
	}

/*
 * One row per meaning x driver x kernel names.  A driver's rows for one
 * meaning are tried in order and the first name the port has wins (two
 * kernels of one driver never have both).
 */
const struct vendor_hw_row vendor_hw_rows[] = {
	/* the requester's ACK timer expired: a retransmission */
	ROW(ACK_TIMEOUTS, "mlx5_core", "6.1 6.12 7.2", "local_ack_timeout_err"),
	ROW(ACK_TIMEOUTS, "bnxt_en", "7.2", "local_ack_timeout_err"),
	ROW(ACK_TIMEOUTS, "bnxt_en", "6.1 6.12", "to_retransmits"),
	ROW(ACK_TIMEOUTS, "ice", "7.2 (gen3)", "RTO"),
	ROW(ACK_TIMEOUTS, "ionic", "firmware", "tx_rdma_ack_timeout"),
	ROW(ACK_TIMEOUTS, "mana", "7.2", "requester_timeout"),
	/* rxe counts the retries it starts after a timeout (rxe_comp.c:787) */
	ROW(ACK_TIMEOUTS, "rdma_rxe", "6.1 6.12 7.2", "completer_retry_err"),

	ROW(RETRIES_EXCEEDED, "mlx5_core", "6.1 6.12 7.2", "req_transport_retries_exceeded"),
	ROW(RETRIES_EXCEEDED, "bnxt_en", "6.1 6.12 7.2", "max_retry_exceeded"),
	ROW(RETRIES_EXCEEDED, "ionic", "firmware", "req_tx_retry_excd_err"),
	ROW(RETRIES_EXCEEDED, "mana", "7.2", "requester_retries_exceeded"),
	ROW(RETRIES_EXCEEDED, "rdma_rxe", "6.1 6.12 7.2", "retry_exceeded_err"),

	ROW(RNR_RETRIES_EXCEEDED, "mlx5_core", "6.1 6.12 7.2", "req_rnr_retries_exceeded"),
	ROW(RNR_RETRIES_EXCEEDED, "mana", "7.2", "requester_rnr_nak_retries_exceeded"),
	ROW(RNR_RETRIES_EXCEEDED, "rdma_rxe", "6.1 6.12 7.2", "retry_rnr_exceeded_err"),

	ROW(SEQUENCE_NAKS_RECEIVED, "mlx5_core", "6.1 6.12 7.2", "packet_seq_err"),
	ROW(SEQUENCE_NAKS_RECEIVED, "bnxt_en", "7.2", "packet_seq_err"),
	ROW(SEQUENCE_NAKS_RECEIVED, "bnxt_en", "6.1 6.12", "seq_err_naks_rcvd"),
	ROW(SEQUENCE_NAKS_RECEIVED, "ice", "7.2 (gen3)", "Nak Sequence Error"),
	ROW(SEQUENCE_NAKS_RECEIVED, "ionic", "firmware", "req_rx_pkt_seq_err"),
	ROW(SEQUENCE_NAKS_RECEIVED, "mana", "7.2", "requester_oos_nak"),
	ROW(SEQUENCE_NAKS_RECEIVED, "rdma_rxe", "6.1 6.12 7.2", "rcvd_seq_err"),

	ROW(IMPLIED_NAKS, "mlx5_core", "6.1 6.12 7.2", "implied_nak_seq_err"),
	ROW(IMPLIED_NAKS, "bnxt_en", "7.2", "implied_nak_seq_err"),
	ROW(IMPLIED_NAKS, "bnxt_en", "6.1 6.12", "missing_resp"),
	ROW(IMPLIED_NAKS, "ice", "7.2 (gen3)", "Nak Sequence Error Implied"),
	ROW(IMPLIED_NAKS, "ionic", "firmware", "req_rx_impl_nak_seq_err"),
	ROW(IMPLIED_NAKS, "mana", "7.2", "requester_implicit_nak"),

	ROW(OUT_OF_SEQUENCE, "mlx5_core", "6.1 6.12 7.2", "out_of_sequence"),
	ROW(OUT_OF_SEQUENCE, "bnxt_en", "7.2", "out_of_sequence"),
	ROW(OUT_OF_SEQUENCE, "bnxt_en", "6.1 6.12", "oos_drop_count"),
	ROW(OUT_OF_SEQUENCE, "ice", "7.2 (gen3)", "Rcvd Out of order packets"),
	ROW(OUT_OF_SEQUENCE, "ionic", "firmware", "resp_rx_outouf_seq"), /* sic */
	ROW(OUT_OF_SEQUENCE, "mana", "7.2", "responder_oos"),
	ROW(OUT_OF_SEQUENCE, "rdma_rxe", "6.1 6.12 7.2", "out_of_seq_request"),

	ROW(RNR_NAKS_RECEIVED, "mlx5_core", "6.1 6.12 7.2", "rnr_nak_retry_err"),
	ROW(RNR_NAKS_RECEIVED, "bnxt_en", "7.2", "rnr_nak_retry_err"),
	ROW(RNR_NAKS_RECEIVED, "bnxt_en", "6.1 6.12", "rnr_naks_rcvd"),
	ROW(RNR_NAKS_RECEIVED, "ice", "7.2 (gen3)", "RNR received"),
	ROW(RNR_NAKS_RECEIVED, "ionic", "firmware", "req_rx_rnr_retry_err"),
	ROW(RNR_NAKS_RECEIVED, "mana", "7.2", "requester_rnr_nak"),
	ROW(RNR_NAKS_RECEIVED, "rdma_rxe", "6.1 6.12 7.2", "rcvd_rnr_err"),

	ROW(DUPLICATE_REQUESTS, "mlx5_core", "6.1 6.12 7.2", "duplicate_request"),
	ROW(DUPLICATE_REQUESTS, "bnxt_en", "7.2", "duplicate_request"),
	ROW(DUPLICATE_REQUESTS, "bnxt_en", "6.1 6.12", "dup_req"),
	ROW(DUPLICATE_REQUESTS, "ionic", "firmware", "resp_rx_dup_request"),
	ROW(DUPLICATE_REQUESTS, "mana", "7.2", "responder_dup_request"),
	ROW(DUPLICATE_REQUESTS, "rdma_rxe", "6.1 6.12 7.2", "duplicate_request"),

	ROW(CNP_SENT, "mlx5_core", "6.1 6.12 7.2", "np_cnp_sent"),
	ROW(CNP_SENT, "bnxt_en", "7.2", "np_cnp_pkts"),
	ROW(CNP_SENT, "bnxt_en", "Broadcom out-of-tree", "np_cnp_sent"),
	ROW(CNP_SENT, "bnxt_en", "6.12", "tx_cnp_pkts"),
	ROW(CNP_SENT, "ice", "6.1 6.12 7.2", "cnpSent"),
	ROW(CNP_SENT, "ionic", "firmware", "tx_rdma_cnp_pkts"),
	ROW(CNP_SENT, "hns3", "6.12 7.2", "tx_cnp_pkt"),
	ROW(CNP_SENT, "mana", "7.2", "device:sent_cnps"),

	ROW(CNP_HANDLED, "mlx5_core", "6.1 6.12 7.2", "rp_cnp_handled"),
	ROW(CNP_HANDLED, "bnxt_en", "7.2", "rp_cnp_handled"),
	ROW(CNP_HANDLED, "bnxt_en", "6.12", "rx_cnp_pkts"),
	ROW(CNP_HANDLED, "ice", "6.1 6.12 7.2", "cnpHandled"),
	ROW(CNP_HANDLED, "ionic", "firmware", "rx_rdma_cnp_pkts"),
	ROW(CNP_HANDLED, "hns3", "6.12 7.2", "rx_cnp_pkt"),
	ROW(CNP_HANDLED, "mana", "7.2", "received_cnps"),

	ROW(ECN_MARKED_PACKETS, "mlx5_core", "6.1 6.12 7.2", "np_ecn_marked_roce_packets"),
	ROW(ECN_MARKED_PACKETS, "bnxt_en", "7.2", "np_ecn_marked_roce_packets"),
	ROW(ECN_MARKED_PACKETS, "bnxt_en", "6.12", "rx_ecn_marked_pkts"),
	ROW(ECN_MARKED_PACKETS, "ice", "6.1 6.12 7.2", "RxECNMrkd"),
	ROW(ECN_MARKED_PACKETS, "ionic", "firmware", "rx_rdma_ecn_pkts"),
	ROW(ECN_MARKED_PACKETS, "mana", "7.2", "device:received_ecns"),

	ROW(OUT_OF_BUFFER, "mlx5_core", "6.1 6.12 7.2", "out_of_buffer"),
	ROW(OUT_OF_BUFFER, "bnxt_en", "7.2", "out_of_buffer"),
	ROW(OUT_OF_BUFFER, "bnxt_en", "6.1 6.12", "rx_out_of_buffer"),
	ROW(OUT_OF_BUFFER, "ionic", "firmware", "resp_rx_outof_buf"),
};
const size_t n_vendor_hw_rows = sizeof(vendor_hw_rows) / sizeof(vendor_hw_rows[0]);

bool vendor_known_driver(const char *driver)
{
	if (!driver)
		return false;
	for (size_t i = 0; i < n_vendor_hw_rows; i++)
		if (!strcmp(vendor_hw_rows[i].driver, driver))
			return true;
	return false;
}

/*
 * A driver the table does not know (or a port whose driver could not be
 * read: an old snapshot) is read by mlx5's names, which Broadcom's
 * out-of-tree bnxt_re uses too, then rxe's: what rocewatch read before it
 * knew drivers.
 */
static bool row_applies(const struct vendor_hw_row *r, const char *driver, bool known)
{
	if (known)
		return !strcmp(r->driver, driver);
	return !strcmp(r->driver, "mlx5_core") || !strcmp(r->driver, "rdma_rxe");
}

static void find_slots(const struct object *o, const char *driver, struct vendor_cache *c)
{
	const struct counter_set *cs = &o->cs[CSET_HW];
	/* no counters (fleet check reads none): nothing to find, by any name */
	bool known = cs->n && vendor_known_driver(driver);

	for (int k = 0; k < VENDOR_N_MEANINGS; k++) {
		c->slot[k] = -1;
		c->name[k] = NULL;
	}
	for (size_t i = 0; cs->n && i < n_vendor_hw_rows; i++) {
		const struct vendor_hw_row *r = &vendor_hw_rows[i];
		int k = (int)(r->field - F_PORT_RDMA_ACK_TIMEOUTS), j;

		if (c->slot[k] >= 0 || !row_applies(r, driver, known))
			continue;
		j = cset_find(cs, r->name);
		if (j < 0 && strncmp(r->name, "device:", 7)) {
			/* mlx5 in switchdev mode counts per device (counters.c:1233) */
			char dn[RW_CNAME_MAX + 8];

			snprintf(dn, sizeof(dn), "device:%s", r->name);
			j = cset_find(cs, dn);
		}
		if (j >= 0) {
			c->slot[k] = (int16_t)j;
			c->name[k] = r->name;
		}
	}
	c->gen = cs->names_gen;
	c->valid = true;
	strlcpy0(c->drv, driver ? driver : "", sizeof(c->drv));
}

void vendor_fill_port(struct object *o, struct vendor_cache *cache, bool only_missing)
{
	const struct counter_set *cs = &o->cs[CSET_HW];
	const char *driver = field_present(o, F_PORT_DRIVER) ? o->f[F_PORT_DRIVER].v.s : NULL;
	struct vendor_cache local;
	struct vendor_cache *c = cache ? cache : &local;

	if (!cache || !c->valid || c->gen != cs->names_gen || strcmp(c->drv, driver ? driver : ""))
		find_slots(o, driver, c);
	for (int k = 0; k < VENDOR_N_MEANINGS; k++) {
		enum field_id f = (enum field_id)(F_PORT_RDMA_ACK_TIMEOUTS + k);
		int j = c->slot[k];

		if (only_missing && field_present(o, f))
			continue;
		if (j >= 0 && (uint32_t)j < cs->n && cs->present[j])
			field_set_int(o, f, (int64_t)cs->vals[j]);
		else
			/* no such counter on this driver (or none read): no series, never 0 */
			field_absent(o, f, ABS_UNSUPPORTED, ENOENT);
	}
}

void vendor_fill_netdev(struct object *o)
{
	bool own = field_present(o, F_NETDEV_PFC_SOURCE) &&
		   !strcmp(o->f[F_NETDEV_PFC_SOURCE].v.s, "ethtool");
	static const struct {
		enum field_id to, from;
	} dcb[] = {
		{ F_NETDEV_PFC_RX_PAUSE, F_NETDEV_PFC_INDICATIONS },
		{ F_NETDEV_PFC_TX_PAUSE, F_NETDEV_PFC_REQUESTS },
	};
	bool any = false;

	if (own)
		return;
	/* no per-priority names of the driver's own: dcbnl's count, where the driver has it */
	for (size_t i = 0; i < sizeof(dcb) / sizeof(dcb[0]); i++) {
		if (field_present(o, dcb[i].from)) {
			o->f[dcb[i].to] = o->f[dcb[i].from];
			any = true;
		} else {
			o->f[dcb[i].to] = o->f[dcb[i].from]; /* absent, with dcb's reason */
		}
	}
	if (any) {
		field_set_str(o, F_NETDEV_PFC_SOURCE, "dcb");
	} else {
		/* no source: for the reason dcbnl gave (unsupported, not collected, ...) */
		o->f[F_NETDEV_PFC_SOURCE].state = o->f[F_NETDEV_PFC_INDICATIONS].state;
		o->f[F_NETDEV_PFC_SOURCE].err = o->f[F_NETDEV_PFC_INDICATIONS].err;
	}
}

void vendor_fill_netdevs(struct node_model *m)
{
	for (size_t i = 0; i < m->n_netdevs; i++)
		vendor_fill_netdev(m->netdevs[i]);
}

void vendor_fill_model(struct node_model *m, bool only_missing)
{
	for (size_t i = 0; i < m->n_ports; i++)
		vendor_fill_port(m->ports[i], NULL, only_missing);
	for (size_t i = 0; i < m->n_netdevs; i++) {
		struct object *o = m->netdevs[i];

		/* a snapshot's own choice stands */
		if (only_missing && (field_present(o, F_NETDEV_PFC_RX_PAUSE) ||
				     field_present(o, F_NETDEV_PFC_TX_PAUSE))) {
			if (!field_present(o, F_NETDEV_PFC_SOURCE))
				field_set_str(o, F_NETDEV_PFC_SOURCE, "ethtool");
			continue;
		}
		vendor_fill_netdev(o);
	}
}
