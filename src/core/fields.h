/* SPDX-License-Identifier: MIT */
/*
 * The field table: one row per fact rocewatch knows.  Collectors fill fields
 * by id, the exporter renders metrics from the row, rules resolve dotted
 * paths through it, the snapshot serialises by path.  Adding a fact is one
 * enum entry, one row in fields.c, and the collector line that fills it.
 */
#ifndef ROCEWATCH_FIELDS_H
#define ROCEWATCH_FIELDS_H

#include <stdbool.h>
#include <stddef.h>

#include "strbuf.h"

enum obj_kind {
	OBJ_NODE,
	OBJ_NETDEV,
	OBJ_RDMA_PORT,
	OBJ__COUNT,
};

enum value_type {
	VT_INT,
	VT_BOOL,
	VT_FLOAT,
	VT_STR,
	VT_PRIOSET,    /* bitmask of the 8 priorities */
	VT_DSCPSET,    /* bitmask of the 64 DSCP values */
	VT_PRIO_ARRAY, /* 8 x u64, one per priority (or TC / buffer) */
	VT_DSCP_MAP,   /* 64 -> priority, -1 = unmapped */
	VT_GIDS,       /* GID table */
	VT_PCI_PAIRS,  /* GPU <-> NIC PCIe paths */
};

enum metric_type {
	MT_NONE, /* not exported as a metric */
	MT_GAUGE,
	MT_COUNTER,
	MT_INFO, /* string: rendered as NAME{label="value"} 1 */
};

enum field_id {
	/* node */
	F_NODE_KERNEL,
	F_NODE_MEMLOCK,
	F_NODE_MEMLOCK_UNLIMITED,
	F_NODE_MEMLOCK_SOURCE,
	F_NODE_CAP_IPC_LOCK,
	F_NODE_UVERBS_DEVICES,
	F_NODE_PEERMEM,
	F_NODE_DMABUF,
	F_NODE_GPUS,
	F_NODE_GPUS_WITHOUT_NEAR_NIC,
	F_NODE_GPU_NIC_PATHS,
	F_NODE_PCIE_ACS_REDIRECT_GPUS,
	F_NODE_PCIE_ACS_REDIRECT_BRIDGE,
	F_NODE_GPUS_PCIE_LINK_DEGRADED,
	F_NODE_IOMMU_CMDLINE,
	F_NODE_IOMMU_TRANSLATED_DEVICES,
	F_NODE_RDMA_DEVICES,

	/* node: the job's NCCL settings against this node (nccl.c; check --nccl) */
	F_JOB_NCCL,
	F_JOB_IB_HCA,
	F_JOB_IB_HCA_PROBLEM,
	F_JOB_HCA_COUNT,
	F_JOB_SOCKET_IFNAME,
	F_JOB_SOCKET_IFNAME_PROBLEM,
	F_JOB_SOCKET_IFNAME_VIRTUAL,
	F_JOB_IB_GID_INDEX,
	F_JOB_IB_GID_INDEX_PROBLEM,
	F_JOB_IB_TC,
	F_JOB_IB_TC_DSCP,
	F_JOB_IB_TC_ECN,
	F_JOB_IB_DISABLE,
	F_JOB_NET,
	F_JOB_NET_GDR_LEVEL,
	F_JOB_NET_GDR_PROBLEM,
	F_JOB_CROSS_NIC,
	F_JOB_IB_TC_PRIORITY,
	F_JOB_READING,
	F_JOB_DEBUG_TUNING,

	/* netdev: link (rtnetlink) */
	F_NETDEV_IFINDEX,
	F_NETDEV_MTU,
	F_NETDEV_OPERSTATE,
	F_NETDEV_CARRIER,
	F_NETDEV_KIND,
	F_NETDEV_MASTER,
	F_NETDEV_LOWER,
	F_NETDEV_IPV4,
	F_NETDEV_RDMA, /* carries an RDMA port (set by the model) */

	/* netdev: ethtool */
	F_NETDEV_DRIVER,
	F_NETDEV_FIRMWARE,
	F_NETDEV_BUS,
	F_NETDEV_SPEED,
	F_NETDEV_PAUSE_AUTONEG,
	F_NETDEV_PAUSE_RX,
	F_NETDEV_PAUSE_TX,
	F_NETDEV_PAUSE_RX_FRAMES,
	F_NETDEV_PAUSE_TX_FRAMES,
	F_NETDEV_PFC_PREVENTION_TOUT,
	F_NETDEV_PFC_RX_PAUSE,
	F_NETDEV_PFC_TX_PAUSE,
	F_NETDEV_PFC_RX_PAUSE_DURATION,
	F_NETDEV_PFC_TX_PAUSE_DURATION,
	F_NETDEV_PFC_RX_PAUSE_TRANSITION,
	F_NETDEV_PRIO_RX_BYTES,
	F_NETDEV_PRIO_TX_BYTES,
	F_NETDEV_PRIO_RX_PACKETS,
	F_NETDEV_PRIO_TX_PACKETS,
	F_NETDEV_PRIO_RX_DISCARDS,
	F_NETDEV_PRIO_RX_BUF_DISCARDS,
	F_NETDEV_PRIO_RX_CONG_DISCARDS,
	F_NETDEV_PRIO_RX_MARKED,
	F_NETDEV_PAUSE_STORM_WARNING,
	F_NETDEV_PAUSE_STORM_ERROR,
	F_NETDEV_RX_DISCARDS_PHY,
	F_NETDEV_TX_DISCARDS_PHY,
	F_NETDEV_RX_OUT_OF_BUFFER,
	F_NETDEV_LINK_DOWN_EVENTS,
	F_NETDEV_RX_CRC_ERRORS,

	/* netdev: dcb */
	F_NETDEV_PFC_ENABLED,
	F_NETDEV_PFC_CAP,
	F_NETDEV_PFC_DELAY,
	F_NETDEV_PFC_REQUESTS,
	F_NETDEV_PFC_INDICATIONS,
	F_NETDEV_ETS_PRIO_TC,
	F_NETDEV_ETS_TC_TSA,
	F_NETDEV_ETS_TC_BW,
	F_NETDEV_ETS_TC_MAXRATE,
	F_NETDEV_DSCP_MAP,
	F_NETDEV_TRUST,
	F_NETDEV_DCBX_MODE,
	F_NETDEV_DCBX_HOST,
	F_NETDEV_PRIO_BUFFER,
	F_NETDEV_BUFFER_SIZE,
	F_NETDEV_BUFFER_TOTAL,

	/* netdev: qos_sysfs */
	F_NETDEV_ECN_NP,
	F_NETDEV_ECN_RP,
	F_NETDEV_CNP_DSCP,
	F_NETDEV_CNP_PRIO,

	/* netdev: wire (BPF) */
	F_NETDEV_WIRE_DATA_PACKETS,
	F_NETDEV_WIRE_DATA_DSCP,
	F_NETDEV_WIRE_CNP_PACKETS,
	F_NETDEV_WIRE_CNP_DSCP,
	F_NETDEV_WIRE_DATA_NOT_ECT,
	F_NETDEV_WIRE_CE_RATIO,

	/* netdev: which source the per-priority pause counters came from (vendors.c) */
	F_NETDEV_PFC_SOURCE,

	/* rdma_port */
	F_PORT_NETDEV,
	F_PORT_STATE,
	F_PORT_PHYS_STATE,
	F_PORT_RATE,
	F_PORT_LINK_LAYER,
	F_PORT_NODE_GUID,
	F_PORT_FW,
	F_PORT_BOARD_ID,
	F_PORT_HCA_TYPE,
	F_PORT_DRIVER, /* the kernel driver of the device (its sysfs device/driver link) */
	F_PORT_ACTIVE_MTU,
	F_PORT_MAX_MTU,
	F_PORT_GIDS,
	F_PORT_ROCEV2_IPV4_GID_INDEX,
	F_PORT_ROCE_TOS,
	F_PORT_ROCE_MODE,
	F_PORT_TRAFFIC_CLASS,
	/* rdma_port: the job's NCCL settings on this port (nccl.c, with the node's job.*) */
	F_PORT_JOB_HCA_INDEX,
	F_PORT_JOB_RAIL,
	F_PORT_JOB_GID_INDEX,

	/* rdma_port: host (the PCI function behind the RDMA device) */
	F_PORT_PCIE_LINK_SPEED,
	F_PORT_PCIE_MAX_LINK_SPEED,
	F_PORT_PCIE_LINK_WIDTH,
	F_PORT_PCIE_MAX_LINK_WIDTH,
	F_PORT_IOMMU_TYPE,

	/*
	 * rdma_port: transport and congestion counters by meaning, whatever the
	 * driver calls them (vendors.c maps each driver's hw_counters names)
	 */
	F_PORT_RDMA_ACK_TIMEOUTS,
	F_PORT_RDMA_RETRIES_EXCEEDED,
	F_PORT_RDMA_RNR_RETRIES_EXCEEDED,
	F_PORT_RDMA_SEQUENCE_NAKS_RECEIVED,
	F_PORT_RDMA_IMPLIED_NAKS,
	F_PORT_RDMA_OUT_OF_SEQUENCE,
	F_PORT_RDMA_RNR_NAKS_RECEIVED,
	F_PORT_RDMA_DUPLICATE_REQUESTS,
	F_PORT_RDMA_CNP_SENT,
	F_PORT_RDMA_CNP_HANDLED,
	F_PORT_RDMA_ECN_MARKED_PACKETS,
	F_PORT_RDMA_OUT_OF_BUFFER,
	/* link health (issue 25): flaps, FEC and bit errors, PCIe stalls, optional counters */
	F_NETDEV_CARRIER_CHANGES,
	F_NETDEV_CARRIER_UP_COUNT,
	F_NETDEV_CARRIER_DOWN_COUNT,
	F_NETDEV_CARRIER_SEEN,
	F_NETDEV_CARRIER_LAST_CHANGE,
	F_NETDEV_FEC_ACTIVE,
	F_NETDEV_FEC_CORRECTED,
	F_NETDEV_FEC_UNCORRECTABLE,
	F_NETDEV_FEC_CORRECTED_BITS,
	F_NETDEV_FEC_LANE_CORRECTED,
	F_NETDEV_FEC_LANE_UNCORRECTABLE,
	F_NETDEV_FEC_LANE_CORRECTED_BITS,
	F_NETDEV_PHY_CORRECTED_BITS,
	F_NETDEV_PHY_SYMBOL_ERRORS,
	F_NETDEV_PHY_LANE_ERRORS,
	F_NETDEV_PRE_FEC_BER,
	F_NETDEV_PCI_STALLED_RD,
	F_NETDEV_PCI_STALLED_WR,
	F_NETDEV_PCI_STALLED_RD_EVENTS,
	F_NETDEV_PCI_STALLED_WR_EVENTS,
	F_PORT_OPTIONAL_COUNTERS,
	F_PORT_OPTIONAL_CC_DISABLED,
	F_PORT_OPTIONAL_CC_DISABLED_NAMES,
	F_PORT_COUNTERS_BACKED_OFF,
	F_PORT_REAPPEARED,
	/* netdev: its LLDP neighbour, the switch port at the other end (lldp.c; issue 36) */
	F_NETDEV_LLDP_SYSTEM_NAME,
	F_NETDEV_LLDP_CHASSIS_ID,
	F_NETDEV_LLDP_PORT_ID,
	F_NETDEV_LLDP_PORT_DESCRIPTION,
	F_NETDEV_LLDP_SOURCE,
	F_NETDEV_LLDP_TTL,

	/* the fabric (issue 36): where a port is cabled and what it is for (fabric.c) */
	F_NETDEV_DEFAULT_ROUTE,
	F_PORT_SEEN_ACTIVE,
	F_PORT_ROLE, /* roce_rdma_port_role_info: role, role_source */
	F_PORT_ROLE_SOURCE,
	F_PORT_ROLE_REASON,
	F_PORT_RAIL, /* roce_rdma_port_rail_info: rail, rail_source, leaf, leaf_port */
	F_PORT_RAIL_SOURCE,
	F_PORT_LEAF,
	F_PORT_LEAF_PORT,
	F_PORT_RAIL_PORTS,
	F_PORT_GPU_DISTANCE,
	F_PORT_GPU, /* roce_rdma_port_gpu_info: gpu, near_gpus */
	F_PORT_NEAR_GPUS,
	F_NODE_COMPUTE_PORTS,
	F_NODE_RAILS_GUESSED,

	F__COUNT,
};

/*
 * Which collector fills a field.  A collector that fails for an object
 * blanks exactly the fields it owns (field_absent_source() in model.h walks
 * the table for them, so no collector keeps a list of its own).
 * A field two sources can fill (MLNX_OFED's qos/trust replaces what dcb
 * derived) belongs to the one that fills it everywhere.
 */
enum field_source {
	SRC_NONE, /* derived by the model itself (F_NETDEV_RDMA) */
	SRC_LINK,
	SRC_ETHTOOL,
	SRC_DCB,
	SRC_QOS_SYSFS,
	SRC_RDMA,
	SRC_VERBS,
	SRC_HOST,
	SRC_WIRE,
	SRC_JOB,    /* no collector: a job's settings judged by nccl.c (check --nccl) */
	SRC_FABRIC, /* no collector: rails and roles derived from the model by fabric.c */
	SRC_LLDP,
	SRC__COUNT,
};

/* How a post-mortem (`report`) groups a counter: what kind of trouble it shows. */
enum report_cat {
	RCAT_NONE,	 /* not on the report */
	RCAT_PAUSE,	 /* pause frames (PFC per priority, global 802.3x) */
	RCAT_PAUSE_TIME, /* time spent paused (mlx5 pause duration) */
	RCAT_STORM,	 /* pause storm events */
	RCAT_RETRY,	 /* transport retries, timeouts, retries exceeded */
	RCAT_OOS,	 /* out-of-sequence and sequence-error NAKs */
	RCAT_CNP,	 /* congestion notification (CNPs, ECN marks) */
	RCAT_DISCARD,	 /* discards and receive errors */
	RCAT_LINK,	 /* link flaps and link error recovery */
	RCAT__COUNT,
};

/*
 * A report's lines that start at the same poll on one object go by category,
 * then in the order of the rows (fields[], then hw_counter_descs[], then
 * port_counter_descs[]).
 */
struct report_desc {
	enum report_cat cat;
	const char *dir;  /* "rx", "tx" or NULL */
	const char *what; /* human name */
	const char *unit; /* of the total, after scale */
};

/*
 * A priority set or DSCP map also exported whole, as one info series whose
 * label holds every element ("00010000", "0000…3…"): Prometheus selects one
 * series per netdev instead of 8 or 64, which is what `fleet check
 * --prometheus` pays for at thousands of nodes.  See field_compact_text().
 */
struct compact_desc {
	const char *metric;
	const char *label;
	const char *help;
};

struct field_desc {
	const char *path; /* dotted path inside the object: "pfc.enabled" */
	enum obj_kind obj;
	enum value_type type;
	bool config; /* configuration (slow loop) vs counter (fast loop) */
	/*
	 * A configuration fact the fast loop writes too, read with the counters
	 * of the same request (FEC_GET's active mode beside its block counts):
	 * a fast poll may change it, so rules that read it run then.
	 */
	bool fast;
	enum metric_type mtype;
	const char *metric; /* Prometheus name; fields sharing one are one family */
	const char *labels; /* constant labels, e.g. "direction=\"rx\"" */
	const char *label;  /* label carrying priority/dscp/tc or the info value */
	double scale;	    /* exported value = raw * scale (0 means 1) */
	const char *help;
	enum field_source src;	     /* the collector that fills it */
	struct report_desc rep;	     /* counters a post-mortem looks at */
	struct compact_desc compact; /* VT_PRIOSET, VT_DSCP_MAP: the whole value as one label */
};

extern const struct field_desc fields[F__COUNT];

/* Can a fast poll (counters) write the field?  Counters, and config rows marked .fast. */
static inline bool field_fast(enum field_id f)
{
	return !fields[f].config || fields[f].fast;
}

/* Resolve a path within an object kind; -1 when unknown (rules, snapshot). */
int field_lookup(enum obj_kind kind, const char *path);
const char *value_type_name(enum value_type t);

/* Named counters no table row names: ethtool -S, hw_counters, ... */
enum cset_id {
	CSET_ETHTOOL, /* netdev: driver-private ethtool stats */
	CSET_HW,      /* rdma_port: hw_counters / rdma statistic */
	CSET_PORT,    /* rdma_port: classic IB port counters/ */
	CSET_CC,      /* netdev: DCQCN congestion-control parameters */
	CSET__COUNT,
};

/*
 * Curated names for counters that live in counter sets (RDMA hw_counters,
 * classic port counters).  Counters not listed are still exported, under a
 * sanitised form of their own name.
 */
struct counter_desc {
	const char *name; /* as the kernel names it */
	const char *metric;
	const char *help;
	double scale; /* 0 means 1 */
	struct report_desc rep;
};

extern const struct counter_desc hw_counter_descs[];
extern const size_t n_hw_counter_descs;
extern const struct counter_desc port_counter_descs[];
extern const size_t n_port_counter_descs;
const struct counter_desc *counter_desc_find(const struct counter_desc *t, size_t n,
					     const char *name);

/*
 * What /metrics calls counter `name` of set c, and so what `export` calls
 * its recorded series: the curated counter_desc's metric, else a prefix and
 * the counter's own name sanitised (roce_rdma_<name>_total,
 * roce_rdma_port_<name>_total, roce_ethtool_<name>: driver stats are
 * untyped, their meaning is the driver's).
 */
struct cset_metric {
	const struct counter_desc *cd; /* the curated row, or NULL */
	const char *type;	       /* "counter" or "untyped" */
	const char *help;	       /* the row's, or help_buf */
	double scale;		       /* exported = raw * scale; 0: the raw integer */
	char help_buf[256];
};

/* Append the name to sb and fill *m: 0, or -EINVAL for CSET_CC (one family, a label each). */
int cset_metric(struct strbuf *sb, enum cset_id c, const char *name, struct cset_metric *m);
/* A name as a metric name fragment: [a-z0-9], anything else '_'. */
void metric_sanitize(struct strbuf *sb, const char *name);

#endif
