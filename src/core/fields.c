// SPDX-License-Identifier: MIT
/*
 * The field table.  Fields that share a metric name form one metric family
 * and must be adjacent (the exporter writes HELP/TYPE once per run of rows).
 * Counter values are those of the last background poll (--interval).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fields.h"

#define NODE(...)                            \
	{                                    \
		.obj = OBJ_NODE, __VA_ARGS__ \
	}
#define NETDEV(...)                            \
	{                                      \
		.obj = OBJ_NETDEV, __VA_ARGS__ \
	}
#define PORT(...)                                 \
	{                                         \
		.obj = OBJ_RDMA_PORT, __VA_ARGS__ \
	}

const struct field_desc fields[F__COUNT] = {
	/* node: host facts */
	[F_NODE_KERNEL] =
	    NODE(.src = SRC_HOST, .path = "kernel", .type = VT_STR, .config = true,
		 .mtype = MT_INFO, .metric = "roce_host_kernel_info", .label = "release",
		 .help = "Running kernel release (uname -r); value is always 1."),
	[F_NODE_MEMLOCK] =
	    NODE(.src = SRC_HOST, .path = "memlock", .type = VT_INT, .config = true,
		 .mtype = MT_GAUGE, .metric = "roce_host_memlock_limit_bytes",
		 .help = "RLIMIT_MEMLOCK soft limit RDMA jobs get, in bytes: slurmd's when it "
			 "runs, else rocewatch's own (roce_host_memlock_source_info says which); "
			 "absent when unlimited (see roce_host_memlock_unlimited)."),
	[F_NODE_MEMLOCK_UNLIMITED] =
	    NODE(.src = SRC_HOST, .path = "memlock_unlimited", .type = VT_BOOL, .config = true,
		 .mtype = MT_GAUGE, .metric = "roce_host_memlock_unlimited",
		 .help = "1 if that RLIMIT_MEMLOCK is unlimited, 0 otherwise."),
	[F_NODE_MEMLOCK_SOURCE] =
	    NODE(.src = SRC_HOST, .path = "memlock_source", .type = VT_STR, .config = true,
		 .mtype = MT_INFO, .metric = "roce_host_memlock_source_info", .label = "source",
		 .help = "Whose RLIMIT_MEMLOCK roce_host_memlock_* report: slurmd (the limit "
			 "Slurm jobs inherit) or self (rocewatch's own); value is always 1."),
	[F_NODE_CAP_IPC_LOCK] =
	    NODE(.src = SRC_HOST, .path = "cap_ipc_lock", .type = VT_BOOL, .config = true,
		 .mtype = MT_GAUGE, .metric = "roce_host_cap_ipc_lock",
		 .help = "1 if rocewatch's own process has CAP_IPC_LOCK in its effective set "
			 "(in a pod: what the pod's containers were given)."),
	[F_NODE_UVERBS_DEVICES] =
	    NODE(.src = SRC_HOST, .path = "uverbs_devices", .type = VT_INT, .config = true,
		 .mtype = MT_GAUGE, .metric = "roce_host_uverbs_devices",
		 .help = "Verbs device nodes (/dev/infiniband/uverbsN) visible to rocewatch; "
			 "libibverbs opens one per RDMA device."),
	[F_NODE_PEERMEM] =
	    NODE(.src = SRC_HOST, .path = "gpudirect.peermem", .type = VT_BOOL, .config = true,
		 .mtype = MT_GAUGE, .metric = "roce_host_nvidia_peermem_loaded",
		 .help = "1 if the nvidia_peermem (or nv_peer_mem) module is loaded."),
	[F_NODE_DMABUF] =
	    NODE(.src = SRC_HOST, .path = "gpudirect.dmabuf", .type = VT_BOOL, .config = true,
		 .mtype = MT_GAUGE, .metric = "roce_host_dmabuf_supported",
		 .help = "1 if the kernel supports DMA-BUF for RDMA (GPUDirect without peermem)."),
	[F_NODE_GPUS] = NODE(.src = SRC_HOST, .path = "gpus", .type = VT_INT, .config = true,
			     .mtype = MT_GAUGE, .metric = "roce_host_gpus",
			     .help = "Number of NVIDIA GPUs found in the PCI tree."),
	[F_NODE_GPUS_WITHOUT_NEAR_NIC] =
	    NODE(.src = SRC_HOST, .path = "gpus_without_near_nic", .type = VT_INT, .config = true,
		 .mtype = MT_GAUGE, .metric = "roce_host_gpus_without_near_nic",
		 .help = "GPUs with no RDMA NIC at PXB distance or closer."),
	[F_NODE_GPU_NIC_PATHS] =
	    NODE(.src = SRC_HOST, .path = "gpu_nic_paths", .type = VT_PCI_PAIRS, .config = true,
		 .mtype = MT_GAUGE, .metric = "roce_host_gpu_nic_pci_distance",
		 .help = "PCIe distance between a GPU and an RDMA NIC as NCCL "
			 "classifies it: 1 PIX, 2 PXB, 3 PHB, 4 SYS."),
	[F_NODE_PCIE_ACS_REDIRECT_GPUS] =
	    NODE(.src = SRC_HOST, .path = "pcie.acs_redirect_gpus", .type = VT_INT, .config = true,
		 .mtype = MT_GAUGE, .metric = "roce_host_pcie_acs_redirect_gpus",
		 .help = "GPUs whose peer-to-peer path to their nearest RDMA NIC (same PCIe "
			 "switch) crosses a bridge with ACS P2P Request Redirect enabled; "
			 "absent when the bridges' extended config space is unreadable "
			 "(needs root)."),
	[F_NODE_PCIE_ACS_REDIRECT_BRIDGE] =
	    NODE(.src = SRC_HOST, .path = "pcie.acs_redirect_bridge", .type = VT_STR,
		 .config = true, .mtype = MT_INFO, .metric = "roce_host_pcie_acs_redirect_info",
		 .label = "bridge",
		 .help = "The first PCIe bridge (PCI address) found redirecting GPU-NIC "
			 "peer-to-peer requests; value is always 1, absent when none does."),
	[F_NODE_GPUS_PCIE_LINK_DEGRADED] =
	    NODE(.src = SRC_HOST, .path = "pcie.gpus_link_degraded", .type = VT_INT, .config = true,
		 .mtype = MT_GAUGE, .metric = "roce_host_gpus_pcie_link_degraded",
		 .help = "GPUs whose PCIe link trained narrower than the link allows "
			 "(current_link_width < max_link_width)."),
	[F_NODE_IOMMU_CMDLINE] =
	    NODE(.src = SRC_HOST, .path = "iommu.cmdline", .type = VT_STR, .config = true,
		 .mtype = MT_INFO, .metric = "roce_host_iommu_cmdline_info", .label = "cmdline",
		 .help = "The IOMMU options of the kernel command line (intel_iommu=, amd_iommu=, "
			 "iommu=, iommu.passthrough=, iommu.strict=), space separated, empty "
			 "when none; value is always 1."),
	[F_NODE_IOMMU_TRANSLATED_DEVICES] =
	    NODE(.src = SRC_HOST, .path = "iommu.translated_devices", .type = VT_INT,
		 .config = true, .mtype = MT_GAUGE, .metric = "roce_host_iommu_translated_devices",
		 .help = "GPUs and RDMA NICs whose IOMMU group translates DMA (type DMA or "
			 "DMA-FQ) rather than passing it through (identity)."),
	[F_NODE_RDMA_DEVICES] =
	    NODE(.src = SRC_RDMA, .path = "rdma_devices", .type = VT_INT, .config = true,
		 .mtype = MT_GAUGE, .metric = "roce_host_rdma_devices",
		 .help = "Number of RDMA devices on the node."),

	/*
	 * node: the job's NCCL settings (check --nccl / --nccl-env) judged against this
	 * node by nccl.c; a check-time view of one job, so not exported as metrics.
	 * A *_problem field is "" when the setting is sound, else what is wrong.
	 */
	[F_JOB_NCCL] = NODE(.src = SRC_JOB, .path = "job.nccl", .type = VT_BOOL, .config = true),
	[F_JOB_IB_HCA] = NODE(.src = SRC_JOB, .path = "job.ib_hca", .type = VT_STR, .config = true),
	[F_JOB_IB_HCA_PROBLEM] =
	    NODE(.src = SRC_JOB, .path = "job.ib_hca_problem", .type = VT_STR, .config = true),
	/* the devices NCCL uses on this node (fused NICs count once): NCCL's device indexes */
	[F_JOB_HCA_COUNT] =
	    NODE(.src = SRC_JOB, .path = "job.hca_count", .type = VT_INT, .config = true),
	[F_JOB_SOCKET_IFNAME] =
	    NODE(.src = SRC_JOB, .path = "job.socket_ifname", .type = VT_STR, .config = true),
	[F_JOB_SOCKET_IFNAME_PROBLEM] = NODE(.src = SRC_JOB, .path = "job.socket_ifname_problem",
					     .type = VT_STR, .config = true),
	[F_JOB_SOCKET_IFNAME_VIRTUAL] = NODE(.src = SRC_JOB, .path = "job.socket_ifname_virtual",
					     .type = VT_STR, .config = true),
	[F_JOB_IB_GID_INDEX] =
	    NODE(.src = SRC_JOB, .path = "job.ib_gid_index", .type = VT_INT, .config = true),
	[F_JOB_IB_GID_INDEX_PROBLEM] = NODE(.src = SRC_JOB, .path = "job.ib_gid_index_problem",
					    .type = VT_STR, .config = true),
	[F_JOB_IB_TC] = NODE(.src = SRC_JOB, .path = "job.ib_tc", .type = VT_INT, .config = true),
	[F_JOB_IB_TC_DSCP] =
	    NODE(.src = SRC_JOB, .path = "job.ib_tc_dscp", .type = VT_INT, .config = true),
	[F_JOB_IB_TC_ECN] =
	    NODE(.src = SRC_JOB, .path = "job.ib_tc_ecn", .type = VT_INT, .config = true),
	[F_JOB_IB_DISABLE] =
	    NODE(.src = SRC_JOB, .path = "job.ib_disable", .type = VT_BOOL, .config = true),
	/* the net NCCL_NET / NCCL_NET_PLUGIN pick: "IB" (NCCL's own), "Socket", "plugin", "none" */
	[F_JOB_NET] = NODE(.src = SRC_JOB, .path = "job.net", .type = VT_STR, .config = true),
	[F_JOB_NET_GDR_LEVEL] =
	    NODE(.src = SRC_JOB, .path = "job.net_gdr_level", .type = VT_STR, .config = true),
	[F_JOB_NET_GDR_PROBLEM] =
	    NODE(.src = SRC_JOB, .path = "job.net_gdr_problem", .type = VT_STR, .config = true),
	[F_JOB_CROSS_NIC] =
	    NODE(.src = SRC_JOB, .path = "job.cross_nic", .type = VT_INT, .config = true),
	/* the priority this node's DSCP map gives the DSCP of the TC NCCL sends */
	[F_JOB_IB_TC_PRIORITY] =
	    NODE(.src = SRC_JOB, .path = "job.ib_tc_priority", .type = VT_INT, .config = true),
	/* "" or the first value NCCL reads differently from how it looks */
	[F_JOB_READING] =
	    NODE(.src = SRC_JOB, .path = "job.reading", .type = VT_STR, .config = true),
	[F_JOB_DEBUG_TUNING] =
	    NODE(.src = SRC_JOB, .path = "job.debug_tuning", .type = VT_STR, .config = true),

	/* netdev: link */
	[F_NETDEV_IFINDEX] =
	    NETDEV(.src = SRC_LINK, .path = "ifindex", .type = VT_INT, .config = true),
	[F_NETDEV_MTU] =
	    NETDEV(.src = SRC_LINK, .path = "mtu", .type = VT_INT, .config = true,
		   .mtype = MT_GAUGE, .metric = "roce_netdev_mtu_bytes",
		   .help = "Network device MTU in bytes (RoCE active_mtu 4096 needs >= 4200)."),
	[F_NETDEV_OPERSTATE] =
	    NETDEV(.src = SRC_LINK, .path = "operstate", .type = VT_STR, .config = true,
		   .mtype = MT_INFO, .metric = "roce_netdev_operstate_info", .label = "operstate",
		   .help = "RFC 2863 operational state of the network device; value is always 1."),
	[F_NETDEV_CARRIER] =
	    NETDEV(.src = SRC_LINK, .path = "carrier", .type = VT_BOOL, .config = true,
		   .mtype = MT_GAUGE, .metric = "roce_netdev_carrier",
		   .help = "1 if the network device has carrier."),
	[F_NETDEV_KIND] =
	    NETDEV(.src = SRC_LINK, .path = "kind", .type = VT_STR, .config = true,
		   .mtype = MT_INFO, .metric = "roce_netdev_link_info", .label = "kind",
		   .help = "Link kind, master and lower devices of the network "
			   "device; value is always 1."),
	[F_NETDEV_MASTER] =
	    NETDEV(.src = SRC_LINK, .path = "master", .type = VT_STR, .config = true,
		   .mtype = MT_INFO, .metric = "roce_netdev_link_info", .label = "master"),
	[F_NETDEV_LOWER] =
	    NETDEV(.src = SRC_LINK, .path = "lower", .type = VT_STR, .config = true,
		   .mtype = MT_INFO, .metric = "roce_netdev_link_info", .label = "lower"),
	[F_NETDEV_IPV4] = NETDEV(.src = SRC_LINK, .path = "ipv4", .type = VT_STR, .config = true),
	[F_NETDEV_RDMA] = NETDEV(.src = SRC_NONE, .path = "rdma", .type = VT_BOOL, .config = true,
				 .mtype = MT_GAUGE, .metric = "roce_netdev_rdma",
				 .help = "1 if an RDMA port is bound to this network device."),

	/* netdev: ethtool */
	[F_NETDEV_DRIVER] = NETDEV(
		.src =
		    SRC_ETHTOOL,
		.path = "driver", .type = VT_STR, .config = true, .mtype = MT_INFO,
		.metric = "roce_netdev_info", .label = "driver",
		.help =
		    "Driver, firmware and bus address of the network device; value is always 1."),
	[F_NETDEV_FIRMWARE] =
	    NETDEV(.src = SRC_ETHTOOL, .path = "firmware", .type = VT_STR, .config = true,
		   .mtype = MT_INFO, .metric = "roce_netdev_info", .label = "firmware"),
	[F_NETDEV_BUS] = NETDEV(.src = SRC_ETHTOOL, .path = "bus", .type = VT_STR, .config = true,
				.mtype = MT_INFO, .metric = "roce_netdev_info", .label = "bus"),
	[F_NETDEV_SPEED] =
	    NETDEV(.src = SRC_ETHTOOL, .path = "speed", .type = VT_INT, .config = true,
		   .mtype = MT_GAUGE, .metric = "roce_netdev_speed_bytes", .scale = 125000.0,
		   .help = "Link speed in bytes per second (the field itself is in Mb/s)."),
	[F_NETDEV_PAUSE_AUTONEG] =
	    NETDEV(.src = SRC_ETHTOOL, .path = "pause.autoneg", .type = VT_BOOL, .config = true,
		   .mtype = MT_GAUGE, .metric = "roce_pause_autoneg",
		   .help = "1 if 802.3x global pause is autonegotiated."),
	[F_NETDEV_PAUSE_RX] =
	    NETDEV(.src = SRC_ETHTOOL, .path = "pause.rx", .type = VT_BOOL, .config = true,
		   .mtype = MT_GAUGE, .metric = "roce_pause_enabled", .labels = "direction=\"rx\"",
		   .help = "1 if 802.3x global pause is enabled in this direction (should be 0 "
			   "with PFC)."),
	[F_NETDEV_PAUSE_TX] =
	    NETDEV(.src = SRC_ETHTOOL, .path = "pause.tx", .type = VT_BOOL, .config = true,
		   .mtype = MT_GAUGE, .metric = "roce_pause_enabled", .labels = "direction=\"tx\""),
	[F_NETDEV_PAUSE_RX_FRAMES] =
	    NETDEV(.src = SRC_ETHTOOL, .rep = { RCAT_PAUSE, "rx", "global pause frames", "frames" },
		   .path = "pause.rx_frames", .type = VT_INT, .mtype = MT_COUNTER,
		   .metric = "roce_pause_frames_total", .labels = "direction=\"rx\"",
		   .help =
		       "802.3x global pause frames (ethtool pause stats), as of the last poll."),
	[F_NETDEV_PAUSE_TX_FRAMES] =
	    NETDEV(.src = SRC_ETHTOOL, .rep = { RCAT_PAUSE, "tx", "global pause frames", "frames" },
		   .path = "pause.tx_frames", .type = VT_INT, .mtype = MT_COUNTER,
		   .metric = "roce_pause_frames_total", .labels = "direction=\"tx\""),
	[F_NETDEV_PFC_PREVENTION_TOUT] =
	    NETDEV(.src = SRC_ETHTOOL, .path = "pfc.prevention_timeout_ms", .type = VT_INT,
		   .config = true, .mtype = MT_GAUGE,
		   .metric = "roce_pfc_stall_prevention_timeout_seconds", .scale = 0.001,
		   .help = "PFC storm prevention timeout (ethtool tunable pfc-prevention-tout) "
			   "in seconds; 0 means off, 65.535 (0xffff ms) means auto "
			   "where a driver reports it that way (mlx5 reports 0.1 for auto)."),
	[F_NETDEV_PFC_RX_PAUSE] =
	    NETDEV(.src = SRC_ETHTOOL, .rep = { RCAT_PAUSE, "rx", "PFC pause frames", "frames" },
		   .path = "pfc.rx_pause", .type = VT_PRIO_ARRAY, .mtype = MT_COUNTER,
		   .metric = "roce_pfc_pause_frames_total", .labels = "direction=\"rx\"",
		   .label = "priority",
		   .help = "PFC pause frames per priority, as of the last poll: the driver's "
			   "ethtool names (mlx5, bnxt_en, ice XON+XOFF, hns3, mana per traffic "
			   "class), else dcbnl requests/indications (roce_pfc_pause_source_info)."),
	[F_NETDEV_PFC_TX_PAUSE] =
	    NETDEV(.src = SRC_ETHTOOL, .rep = { RCAT_PAUSE, "tx", "PFC pause frames", "frames" },
		   .path = "pfc.tx_pause", .type = VT_PRIO_ARRAY, .mtype = MT_COUNTER,
		   .metric = "roce_pfc_pause_frames_total", .labels = "direction=\"tx\"",
		   .label = "priority"),
	[F_NETDEV_PFC_RX_PAUSE_DURATION] =
	    NETDEV(.src = SRC_ETHTOOL, .rep = { RCAT_PAUSE_TIME, "rx", "time paused", "s" },
		   .path = "pfc.rx_pause_duration_us", .type = VT_PRIO_ARRAY, .mtype = MT_COUNTER,
		   .metric = "roce_pfc_pause_duration_seconds_total", .labels = "direction=\"rx\"",
		   .label = "priority", .scale = 1e-6,
		   .help = "Time spent paused by PFC per priority in seconds (mlx5, bnxt_en "
			   "and ionic report microseconds)."),
	[F_NETDEV_PFC_TX_PAUSE_DURATION] =
	    NETDEV(.src = SRC_ETHTOOL, .rep = { RCAT_PAUSE_TIME, "tx", "time paused", "s" },
		   .path = "pfc.tx_pause_duration_us", .type = VT_PRIO_ARRAY, .mtype = MT_COUNTER,
		   .metric = "roce_pfc_pause_duration_seconds_total", .labels = "direction=\"tx\"",
		   .label = "priority", .scale = 1e-6),
	[F_NETDEV_PFC_RX_PAUSE_TRANSITION] =
	    NETDEV(.src = SRC_ETHTOOL, .path = "pfc.rx_pause_transitions", .type = VT_PRIO_ARRAY,
		   .mtype = MT_COUNTER, .metric = "roce_pfc_pause_transitions_total",
		   .labels = "direction=\"rx\"", .label = "priority",
		   .help = "PFC XOFF to XON transitions per priority."),
	[F_NETDEV_PRIO_RX_BYTES] =
	    NETDEV(.src = SRC_ETHTOOL, .path = "prio.rx_bytes", .type = VT_PRIO_ARRAY,
		   .mtype = MT_COUNTER, .metric = "roce_prio_bytes_total",
		   .labels = "direction=\"rx\"", .label = "priority",
		   .help = "Bytes per priority."),
	[F_NETDEV_PRIO_TX_BYTES] =
	    NETDEV(.src = SRC_ETHTOOL, .path = "prio.tx_bytes", .type = VT_PRIO_ARRAY,
		   .mtype = MT_COUNTER, .metric = "roce_prio_bytes_total",
		   .labels = "direction=\"tx\"", .label = "priority"),
	[F_NETDEV_PRIO_RX_PACKETS] =
	    NETDEV(.src = SRC_ETHTOOL, .path = "prio.rx_packets", .type = VT_PRIO_ARRAY,
		   .mtype = MT_COUNTER, .metric = "roce_prio_packets_total",
		   .labels = "direction=\"rx\"", .label = "priority",
		   .help = "Packets per priority."),
	[F_NETDEV_PRIO_TX_PACKETS] =
	    NETDEV(.src = SRC_ETHTOOL, .path = "prio.tx_packets", .type = VT_PRIO_ARRAY,
		   .mtype = MT_COUNTER, .metric = "roce_prio_packets_total",
		   .labels = "direction=\"tx\"", .label = "priority"),
	[F_NETDEV_PRIO_RX_DISCARDS] =
	    NETDEV(.src = SRC_ETHTOOL, .rep = { RCAT_DISCARD, "rx", "discards", "packets" },
		   .path = "prio.rx_discards", .type = VT_PRIO_ARRAY, .mtype = MT_COUNTER,
		   .metric = "roce_prio_discards_total",
		   .labels = "direction=\"rx\",reason=\"discard\"", .label = "priority",
		   .help =
		       "Packets discarded per priority, by reason (discard, buffer, congestion)."),
	[F_NETDEV_PRIO_RX_BUF_DISCARDS] =
	    NETDEV(.src = SRC_ETHTOOL, .rep = { RCAT_DISCARD, "rx", "buffer discards", "packets" },
		   .path = "prio.rx_buf_discards", .type = VT_PRIO_ARRAY, .mtype = MT_COUNTER,
		   .metric = "roce_prio_discards_total",
		   .labels = "direction=\"rx\",reason=\"buffer\"", .label = "priority"),
	[F_NETDEV_PRIO_RX_CONG_DISCARDS] =
	    NETDEV(.src = SRC_ETHTOOL,
		   .rep = { RCAT_DISCARD, "rx", "congestion discards", "packets" },
		   .path = "prio.rx_cong_discards", .type = VT_PRIO_ARRAY, .mtype = MT_COUNTER,
		   .metric = "roce_prio_discards_total",
		   .labels = "direction=\"rx\",reason=\"congestion\"", .label = "priority"),
	[F_NETDEV_PRIO_RX_MARKED] =
	    NETDEV(.src = SRC_ETHTOOL, .rep = { RCAT_CNP, "rx", "ECN CE marked", "packets" },
		   .path = "prio.rx_ecn_marked", .type = VT_PRIO_ARRAY, .mtype = MT_COUNTER,
		   .metric = "roce_prio_ecn_marked_packets_total", .labels = "direction=\"rx\"",
		   .label = "priority", .help = "Received packets carrying ECN CE per priority."),
	[F_NETDEV_PAUSE_STORM_WARNING] =
	    NETDEV(.src = SRC_ETHTOOL,
		   .rep = { RCAT_STORM, NULL, "pause storm warnings", "events" },
		   .path = "pause_storm.warning_events", .type = VT_INT, .mtype = MT_COUNTER,
		   .metric = "roce_pfc_pause_storm_events_total", .labels = "level=\"warning\"",
		   .help = "Pause storm events (warning: storm detected; error: the NIC "
			   "stopped sending pause and drops follow)."),
	[F_NETDEV_PAUSE_STORM_ERROR] =
	    NETDEV(.src = SRC_ETHTOOL,
		   .rep = { RCAT_STORM, NULL, "pause storm errors (NIC stopped pausing)",
			    "events" },
		   .path = "pause_storm.error_events", .type = VT_INT, .mtype = MT_COUNTER,
		   .metric = "roce_pfc_pause_storm_events_total", .labels = "level=\"error\""),
	[F_NETDEV_RX_DISCARDS_PHY] =
	    NETDEV(.src = SRC_ETHTOOL, .rep = { RCAT_DISCARD, "rx", "port discards", "packets" },
		   .path = "port.rx_discards", .type = VT_INT, .mtype = MT_COUNTER,
		   .metric = "roce_port_discards_total", .labels = "direction=\"rx\"",
		   .help = "Packets the port discarded for lack of buffer (mlx5 *_discards_phy, "
			   "bnxt_en *_stat_discard, ice rx_dropped.nic, ionic frames_rx_dropped, "
			   "mana hc_*_pkt_drop_phy)."),
	[F_NETDEV_TX_DISCARDS_PHY] =
	    NETDEV(.src = SRC_ETHTOOL, .rep = { RCAT_DISCARD, "tx", "port discards", "packets" },
		   .path = "port.tx_discards", .type = VT_INT, .mtype = MT_COUNTER,
		   .metric = "roce_port_discards_total", .labels = "direction=\"tx\""),
	[F_NETDEV_RX_OUT_OF_BUFFER] =
	    NETDEV(.src = SRC_ETHTOOL, .rep = { RCAT_DISCARD, "rx", "out of buffer", "packets" },
		   .path = "port.rx_out_of_buffer", .type = VT_INT, .mtype = MT_COUNTER,
		   .metric = "roce_netdev_rx_out_of_buffer_total",
		   .help = "Packets dropped for lack of a software receive buffer."),
	[F_NETDEV_LINK_DOWN_EVENTS] =
	    NETDEV(.src = SRC_ETHTOOL, .rep = { RCAT_LINK, NULL, "link down events", "events" },
		   .path = "port.link_down_events", .type = VT_INT, .mtype = MT_COUNTER,
		   .metric = "roce_netdev_link_down_events_total",
		   .help = "Physical link down events (link flaps)."),
	[F_NETDEV_RX_CRC_ERRORS] =
	    NETDEV(.src = SRC_ETHTOOL, .rep = { RCAT_DISCARD, "rx", "CRC errors", "frames" },
		   .path = "port.rx_crc_errors", .type = VT_INT, .mtype = MT_COUNTER,
		   .metric = "roce_netdev_rx_crc_errors_total",
		   .help = "Frames received with a bad CRC."),

	/* netdev: dcb */
	[F_NETDEV_PFC_ENABLED] =
	    NETDEV(.src = SRC_DCB, .path = "pfc.enabled", .type = VT_PRIOSET, .config = true,
		   .mtype = MT_GAUGE, .metric = "roce_pfc_enabled", .label = "priority",
		   .help = "1 if IEEE PFC is enabled on the priority (dcbnl pfc_en).",
		   .compact = { "roce_pfc_enabled_info", "priorities",
				"roce_pfc_enabled as one series: character p of priorities is 1 "
				"if PFC is enabled on priority p (\"00010000\": priority 3 "
				"only); value is always 1." }),
	[F_NETDEV_PFC_CAP] =
	    NETDEV(.src = SRC_DCB, .path = "pfc.cap", .type = VT_INT, .config = true,
		   .mtype = MT_GAUGE, .metric = "roce_pfc_capable_priorities",
		   .help = "Number of priorities the device can enable PFC on (pfc_cap)."),
	[F_NETDEV_PFC_DELAY] =
	    NETDEV(.src = SRC_DCB, .path = "pfc.delay", .type = VT_INT, .config = true,
		   .mtype = MT_GAUGE, .metric = "roce_pfc_delay_allowance",
		   .help = "dcbnl ieee_pfc.delay: the PFC delay allowance, in bit times per "
			   "802.1Qbb; mlx5 keeps the cable length in meters here."),
	[F_NETDEV_PFC_REQUESTS] =
	    NETDEV(.src = SRC_DCB, .rep = { RCAT_PAUSE, "tx", "PFC requests (dcbnl)", "frames" },
		   .path = "pfc.requests", .type = VT_PRIO_ARRAY, .mtype = MT_COUNTER,
		   .metric = "roce_pfc_requests_total", .label = "priority",
		   .help =
		       "PFC pause frames sent per priority (dcbnl requests), as of the last poll."),
	[F_NETDEV_PFC_INDICATIONS] =
	    NETDEV(.src = SRC_DCB, .rep = { RCAT_PAUSE, "rx", "PFC indications (dcbnl)", "frames" },
		   .path = "pfc.indications", .type = VT_PRIO_ARRAY, .mtype = MT_COUNTER,
		   .metric = "roce_pfc_indications_total", .label = "priority",
		   .help = "PFC pause frames received per priority (dcbnl indications)."),
	[F_NETDEV_ETS_PRIO_TC] =
	    NETDEV(.src = SRC_DCB, .path = "ets.prio_tc", .type = VT_PRIO_ARRAY, .config = true,
		   .mtype = MT_GAUGE, .metric = "roce_ets_priority_tc", .label = "priority",
		   .help = "Traffic class the priority is mapped to (IEEE ETS prio_tc)."),
	[F_NETDEV_ETS_TC_TSA] =
	    NETDEV(.src = SRC_DCB, .path = "ets.tc_tsa", .type = VT_PRIO_ARRAY, .config = true,
		   .mtype = MT_GAUGE, .metric = "roce_ets_tc_tsa", .label = "tc",
		   .help = "Transmission selection algorithm of the TC: 0 strict, 1 CBS, 2 ETS, "
			   "255 vendor."),
	[F_NETDEV_ETS_TC_BW] =
	    NETDEV(.src = SRC_DCB, .path = "ets.tc_bw", .type = VT_PRIO_ARRAY, .config = true,
		   .mtype = MT_GAUGE, .metric = "roce_ets_tc_bandwidth_percent", .label = "tc",
		   .help = "ETS bandwidth share of the TC in percent."),
	/*
	 * dcbnl's unit is kbit/s (mlx5 and mlx4 getmaxrate); iproute2's dcb before
	 * 6.18 wrongly took it for bytes/s, both ways.  Exported in bytes/s, as
	 * roce_netdev_speed_bytes, so the two can be divided.
	 */
	[F_NETDEV_ETS_TC_MAXRATE] =
	    NETDEV(.src = SRC_DCB, .path = "ets.tc_maxrate_kbps", .type = VT_PRIO_ARRAY,
		   .config = true, .mtype = MT_GAUGE, .metric = "roce_ets_tc_max_rate_bytes",
		   .label = "tc", .scale = 125.0,
		   .help = "Transmit rate limit of the TC in bytes per second (IEEE 802.1Qaz "
			   "maxrate, dcbnl tc_maxrate); 0 means no limit."),
	[F_NETDEV_DSCP_MAP] =
	    NETDEV(.src = SRC_DCB, .path = "dscp2prio", .type = VT_DSCP_MAP, .config = true,
		   .mtype = MT_GAUGE, .metric = "roce_dscp_priority", .label = "dscp",
		   .help = "Priority a DSCP value is mapped to (dcbnl APP table or qos/dscp2prio).",
		   .compact = { "roce_dscp_map_info", "map",
				"roce_dscp_priority as one series: character d of map is the "
				"priority DSCP d is mapped to, - if unmapped; value is always "
				"1." }),
	[F_NETDEV_TRUST] =
	    NETDEV(.src = SRC_DCB, .path = "trust", .type = VT_STR, .config = true,
		   .mtype = MT_INFO, .metric = "roce_qos_trust_info", .label = "trust",
		   .help = "QoS trust mode (pcp or dscp); value is always 1."),
	[F_NETDEV_DCBX_MODE] =
	    NETDEV(.src = SRC_DCB, .path = "dcbx.mode", .type = VT_STR, .config = true,
		   .mtype = MT_INFO, .metric = "roce_dcbx_mode_info", .label = "mode",
		   .help = "DCBX mode flags (host, lld, ieee, cee, static); value is always 1."),
	[F_NETDEV_DCBX_HOST] =
	    NETDEV(.src = SRC_DCB, .path = "dcbx.host", .type = VT_BOOL, .config = true,
		   .mtype = MT_GAUGE, .metric = "roce_dcbx_host_managed",
		   .help = "1 if DCB is managed by the host (DCB_CAP_DCBX_HOST), not firmware."),
	[F_NETDEV_PRIO_BUFFER] =
	    NETDEV(.src = SRC_DCB, .path = "buffer.prio_buffer", .type = VT_PRIO_ARRAY,
		   .config = true, .mtype = MT_GAUGE, .metric = "roce_dcb_priority_buffer",
		   .label = "priority", .help = "Receive buffer the priority is mapped to."),
	[F_NETDEV_BUFFER_SIZE] =
	    NETDEV(.src = SRC_DCB, .path = "buffer.size", .type = VT_PRIO_ARRAY, .config = true,
		   .mtype = MT_GAUGE, .metric = "roce_dcb_buffer_size_bytes", .label = "buffer",
		   .help = "Size of each receive buffer in bytes."),
	[F_NETDEV_BUFFER_TOTAL] =
	    NETDEV(.src = SRC_DCB, .path = "buffer.total", .type = VT_INT, .config = true,
		   .mtype = MT_GAUGE, .metric = "roce_dcb_buffer_total_bytes",
		   .help = "Total receive buffer of the port in bytes."),

	/* netdev: qos_sysfs */
	[F_NETDEV_ECN_NP] = NETDEV(.src = SRC_QOS_SYSFS, .path = "ecn.np", .type = VT_PRIOSET,
				   .config = true, .mtype = MT_GAUGE, .metric = "roce_ecn_enabled",
				   .labels = "role=\"np\"", .label = "priority",
				   .help = "1 if ECN/DCQCN is enabled on the priority for the role "
					   "(np: notification point, rp: reaction point)."),
	[F_NETDEV_ECN_RP] = NETDEV(.src = SRC_QOS_SYSFS, .path = "ecn.rp", .type = VT_PRIOSET,
				   .config = true, .mtype = MT_GAUGE, .metric = "roce_ecn_enabled",
				   .labels = "role=\"rp\"", .label = "priority"),
	[F_NETDEV_CNP_DSCP] = NETDEV(.src = SRC_QOS_SYSFS, .path = "cnp.dscp", .type = VT_INT,
				     .config = true, .mtype = MT_GAUGE, .metric = "roce_cnp_dscp",
				     .help = "DSCP the NIC puts on the CNPs it sends."),
	[F_NETDEV_CNP_PRIO] =
	    NETDEV(.src = SRC_QOS_SYSFS, .path = "cnp.priority", .type = VT_INT, .config = true,
		   .mtype = MT_GAUGE, .metric = "roce_cnp_priority",
		   .help = "802.1p priority the NIC puts on the CNPs it sends."),

	/*
	 * netdev: wire (BPF).  These cover recent traffic (collectors/wire_fields.h);
	 * the cumulative per-codepoint counters are rendered from obj->wire.
	 */
	[F_NETDEV_WIRE_DATA_PACKETS] =
	    NETDEV(.src = SRC_WIRE, .path = "wire.data_packets", .type = VT_INT),
	[F_NETDEV_WIRE_DATA_DSCP] =
	    NETDEV(.src = SRC_WIRE, .path = "wire.data_dscp", .type = VT_DSCPSET),
	[F_NETDEV_WIRE_CNP_PACKETS] =
	    NETDEV(.src = SRC_WIRE, .rep = { RCAT_CNP, NULL, "CNPs on the wire", "packets" },
		   .path = "wire.cnp_packets", .type = VT_INT),
	[F_NETDEV_WIRE_CNP_DSCP] =
	    NETDEV(.src = SRC_WIRE, .path = "wire.cnp_dscp", .type = VT_DSCPSET),
	[F_NETDEV_WIRE_DATA_NOT_ECT] =
	    NETDEV(.src = SRC_WIRE, .path = "wire.data_not_ect_packets", .type = VT_INT),
	[F_NETDEV_WIRE_CE_RATIO] =
	    NETDEV(.src = SRC_WIRE, .path = "wire.ce_ratio", .type = VT_FLOAT, .mtype = MT_GAUGE,
		   .metric = "roce_wire_ce_ratio",
		   .help = "Share of the RoCE data packets the wire collector saw "
			   "with ECN CE over the last 5 to 10 minutes."),

	/* netdev: the choice between two sources of one meaning (vendors.c) */
	[F_NETDEV_PFC_SOURCE] =
	    NETDEV(.src = SRC_ETHTOOL, .path = "pfc.counter_source", .type = VT_STR, .config = true,
		   .fast = true, /* follows the counter names, which the fast loop reads */
		   .mtype = MT_INFO, .metric = "roce_pfc_pause_source_info", .label = "source",
		   .help = "Where roce_pfc_pause_frames_total comes from: the driver's ethtool "
			   "names (ethtool) or, without them, dcbnl requests/indications (dcb); "
			   "value is always 1."),

	/* rdma_port */
	[F_PORT_NETDEV] =
	    PORT(.src = SRC_RDMA, .path = "netdev_name", .type = VT_STR, .config = true),
	[F_PORT_STATE] =
	    PORT(.src = SRC_RDMA, .path = "state", .type = VT_STR, .config = true, .mtype = MT_INFO,
		 .metric = "roce_rdma_port_state_info", .label = "state",
		 .help = "RDMA port state (DOWN, INIT, ARMED, ACTIVE); value is always 1."),
	[F_PORT_PHYS_STATE] =
	    PORT(.src = SRC_RDMA, .path = "phys_state", .type = VT_STR, .config = true,
		 .mtype = MT_INFO, .metric = "roce_rdma_port_phys_state_info",
		 .label = "phys_state",
		 .help = "RDMA port physical state (LinkUp, Disabled, Polling, ...); value is "
			 "always 1."),
	[F_PORT_RATE] =
	    PORT(.src = SRC_RDMA, .path = "rate", .type = VT_INT, .config = true, .mtype = MT_GAUGE,
		 .metric = "roce_rdma_port_rate_bytes", .scale = 125000.0,
		 .help = "RDMA port rate in bytes per second (the field itself is in Mb/s)."),
	[F_PORT_LINK_LAYER] =
	    PORT(.src = SRC_RDMA, .path = "link_layer", .type = VT_STR, .config = true,
		 .mtype = MT_INFO, .metric = "roce_rdma_port_info", .label = "link_layer",
		 .help = "RDMA port link layer, node GUID, firmware, board ID (PSID) and HCA type; "
			 "value is always 1."),
	[F_PORT_NODE_GUID] =
	    PORT(.src = SRC_RDMA, .path = "node_guid", .type = VT_STR, .config = true,
		 .mtype = MT_INFO, .metric = "roce_rdma_port_info", .label = "node_guid"),
	[F_PORT_FW] = PORT(.src = SRC_RDMA, .path = "fw", .type = VT_STR, .config = true,
			   .mtype = MT_INFO, .metric = "roce_rdma_port_info", .label = "firmware"),
	/* the card model: board_id is the PSID firmware images are matched to */
	[F_PORT_BOARD_ID] =
	    PORT(.src = SRC_RDMA, .path = "board_id", .type = VT_STR, .config = true,
		 .mtype = MT_INFO, .metric = "roce_rdma_port_info", .label = "board_id"),
	[F_PORT_HCA_TYPE] =
	    PORT(.src = SRC_RDMA, .path = "hca_type", .type = VT_STR, .config = true,
		 .mtype = MT_INFO, .metric = "roce_rdma_port_info", .label = "hca_type"),
	/* what vendors.c reads the hw counters by; udev renames devices, drivers stay */
	[F_PORT_DRIVER] =
	    PORT(.src = SRC_RDMA, .path = "driver", .type = VT_STR, .config = true,
		 .mtype = MT_INFO, .metric = "roce_rdma_port_info", .label = "driver"),
	[F_PORT_ACTIVE_MTU] =
	    PORT(.src = SRC_VERBS, .path = "active_mtu", .type = VT_INT, .config = true,
		 .mtype = MT_GAUGE, .metric = "roce_rdma_active_mtu_bytes",
		 .help = "RoCE active MTU in bytes (ibv_query_port active_mtu)."),
	[F_PORT_MAX_MTU] =
	    PORT(.src = SRC_VERBS, .path = "max_mtu", .type = VT_INT, .config = true,
		 .mtype = MT_GAUGE, .metric = "roce_rdma_max_mtu_bytes",
		 .help = "Largest MTU the RDMA port supports in bytes (ibv_query_port max_mtu)."),
	[F_PORT_GIDS] =
	    PORT(.src = SRC_RDMA, .path = "gids", .type = VT_GIDS, .config = true, .mtype = MT_INFO,
		 .metric = "roce_rdma_gid_info",
		 .help = "One series per populated GID table entry; value is always 1."),
	[F_PORT_ROCEV2_IPV4_GID_INDEX] =
	    PORT(.src = SRC_RDMA, .path = "gid.rocev2_ipv4_index", .type = VT_INT, .config = true,
		 .mtype = MT_GAUGE, .metric = "roce_rdma_rocev2_ipv4_gid_index",
		 .help = "Index of the IPv4-mapped RoCE v2 GID of the port's netdev "
			 "(what NCCL_IB_GID_INDEX must be)."),
	[F_PORT_ROCE_TOS] =
	    PORT(.src = SRC_QOS_SYSFS, .path = "rdma_cm.default_roce_tos", .type = VT_INT,
		 .config = true, .mtype = MT_GAUGE, .metric = "roce_rdma_cm_default_tos",
		 .help = "rdma_cm default ToS byte for RoCE connections (DSCP << 2 | ECN)."),
	[F_PORT_ROCE_MODE] =
	    PORT(.src = SRC_QOS_SYSFS, .path = "rdma_cm.default_roce_mode", .type = VT_STR,
		 .config = true, .mtype = MT_INFO, .metric = "roce_rdma_cm_default_mode_info",
		 .label = "mode", .help = "rdma_cm default RoCE mode; value is always 1."),
	[F_PORT_TRAFFIC_CLASS] =
	    PORT(.src = SRC_QOS_SYSFS, .path = "traffic_class", .type = VT_INT, .config = true,
		 .mtype = MT_GAUGE, .metric = "roce_rdma_default_traffic_class",
		 .help = "Default verbs traffic class (tc/1/traffic_class, MLNX_OFED)."),
	/*
	 * The port as the job's NCCL uses it (check --nccl, fleet check --nccl-env):
	 * the index of the NCCL device it is (part of), -1 where NCCL does not use
	 * it; its rail key (job_port_rail()); the GID index NCCL uses on it, the
	 * job's NCCL_IB_GID_INDEX or the one NCCL picks.  Not exported.
	 */
	[F_PORT_JOB_HCA_INDEX] =
	    PORT(.src = SRC_JOB, .path = "job.hca_index", .type = VT_INT, .config = true),
	[F_PORT_JOB_RAIL] =
	    PORT(.src = SRC_JOB, .path = "job.rail", .type = VT_STR, .config = true),
	[F_PORT_JOB_GID_INDEX] =
	    PORT(.src = SRC_JOB, .path = "job.gid_index", .type = VT_INT, .config = true),
	[F_PORT_PCIE_LINK_SPEED] =
	    PORT(.src = SRC_HOST, .path = "pcie.link_speed", .type = VT_FLOAT, .config = true,
		 .mtype = MT_GAUGE, .metric = "roce_rdma_pcie_link_speed_transfers_per_second",
		 .scale = 1e9,
		 .help = "PCIe link speed the RDMA device's PCI function trained at, in "
			 "transfers per second per lane (the field itself is in GT/s)."),
	[F_PORT_PCIE_MAX_LINK_SPEED] =
	    PORT(.src = SRC_HOST, .path = "pcie.max_link_speed", .type = VT_FLOAT, .config = true,
		 .mtype = MT_GAUGE, .metric = "roce_rdma_pcie_max_link_speed_transfers_per_second",
		 .scale = 1e9,
		 .help = "Fastest PCIe link speed the RDMA device's PCI function supports, in "
			 "transfers per second per lane (the field itself is in GT/s)."),
	[F_PORT_PCIE_LINK_WIDTH] =
	    PORT(.src = SRC_HOST, .path = "pcie.link_width", .type = VT_INT, .config = true,
		 .mtype = MT_GAUGE, .metric = "roce_rdma_pcie_link_width_lanes",
		 .help = "PCIe lanes the RDMA device's link trained at (current_link_width)."),
	[F_PORT_PCIE_MAX_LINK_WIDTH] =
	    PORT(.src = SRC_HOST, .path = "pcie.max_link_width", .type = VT_INT, .config = true,
		 .mtype = MT_GAUGE, .metric = "roce_rdma_pcie_max_link_width_lanes",
		 .help = "PCIe lanes the RDMA device supports (max_link_width)."),
	[F_PORT_IOMMU_TYPE] =
	    PORT(.src = SRC_HOST, .path = "iommu.type", .type = VT_STR, .config = true,
		 .mtype = MT_INFO, .metric = "roce_rdma_iommu_group_info", .label = "type",
		 .help = "Type of the RDMA device's IOMMU group (identity: pass-through; DMA, "
			 "DMA-FQ: translated; none: no IOMMU); value is always 1."),

	/*
	 * rdma_port: one family per meaning, whatever the driver names it
	 * (vendors.c, one row per meaning x driver x kernel); a driver without
	 * the counter has no series.  The driver's own name stays on the raw
	 * roce_rdma_hw_* families.  Not on the report (.rep): the raw
	 * counters already are, under their own names.
	 */
	[F_PORT_RDMA_ACK_TIMEOUTS] =
	    PORT(.src = SRC_RDMA, .path = "rdma.ack_timeouts", .type = VT_INT, .mtype = MT_COUNTER,
		 .metric = "roce_rdma_ack_timeouts_total",
		 .help = "Requests whose ACK timer expired and were retransmitted (mlx5 "
			 "local_ack_timeout_err, bnxt_re to_retransmits, mana requester_timeout, "
			 "...), as of the last poll."),
	[F_PORT_RDMA_RETRIES_EXCEEDED] =
	    PORT(.src = SRC_RDMA, .path = "rdma.retries_exceeded", .type = VT_INT,
		 .mtype = MT_COUNTER, .metric = "roce_rdma_retries_exceeded_total",
		 .help = "Requests that exhausted their transport retries (IBV_WC_RETRY_EXC_ERR)."),
	[F_PORT_RDMA_RNR_RETRIES_EXCEEDED] =
	    PORT(.src = SRC_RDMA, .path = "rdma.rnr_retries_exceeded", .type = VT_INT,
		 .mtype = MT_COUNTER, .metric = "roce_rdma_rnr_retries_exceeded_total",
		 .help = "Requests that exhausted their RNR retries (IBV_WC_RNR_RETRY_EXC_ERR)."),
	[F_PORT_RDMA_SEQUENCE_NAKS_RECEIVED] =
	    PORT(.src = SRC_RDMA, .path = "rdma.sequence_naks_received", .type = VT_INT,
		 .mtype = MT_COUNTER, .metric = "roce_rdma_sequence_naks_received_total",
		 .help = "PSN sequence-error NAKs received by the requester: the peer saw a gap."),
	[F_PORT_RDMA_IMPLIED_NAKS] =
	    PORT(.src = SRC_RDMA, .path = "rdma.implied_naks", .type = VT_INT, .mtype = MT_COUNTER,
		 .metric = "roce_rdma_implied_naks_total",
		 .help = "Implied NAKs: a response that skipped PSNs, read by the requester as a "
			 "sequence error."),
	[F_PORT_RDMA_OUT_OF_SEQUENCE] =
	    PORT(.src = SRC_RDMA, .path = "rdma.out_of_sequence", .type = VT_INT,
		 .mtype = MT_COUNTER, .metric = "roce_rdma_out_of_sequence_total",
		 .help = "Packets the responder received out of sequence: loss (or reordering) on "
			 "the fabric."),
	[F_PORT_RDMA_RNR_NAKS_RECEIVED] =
	    PORT(.src = SRC_RDMA, .path = "rdma.rnr_naks_received", .type = VT_INT,
		 .mtype = MT_COUNTER, .metric = "roce_rdma_rnr_naks_received_total",
		 .help = "RNR NAKs received (the responder had no receive buffer posted)."),
	[F_PORT_RDMA_DUPLICATE_REQUESTS] =
	    PORT(.src = SRC_RDMA, .path = "rdma.duplicate_requests", .type = VT_INT,
		 .mtype = MT_COUNTER, .metric = "roce_rdma_duplicate_requests_total",
		 .help = "Duplicate requests received (retransmissions seen by the responder)."),
	[F_PORT_RDMA_CNP_SENT] = PORT(.src = SRC_RDMA, .path = "rdma.cnp_sent", .type = VT_INT,
				      .mtype = MT_COUNTER, .metric = "roce_rdma_cnp_sent_total",
				      .help = "CNPs sent as DCQCN notification point (mana: "
					      "counted per device, on its first port)."),
	[F_PORT_RDMA_CNP_HANDLED] =
	    PORT(.src = SRC_RDMA, .path = "rdma.cnp_handled", .type = VT_INT, .mtype = MT_COUNTER,
		 .metric = "roce_rdma_cnp_handled_total",
		 .help = "CNPs received and handled as DCQCN reaction point."),
	[F_PORT_RDMA_ECN_MARKED_PACKETS] =
	    PORT(.src = SRC_RDMA, .path = "rdma.ecn_marked_packets", .type = VT_INT,
		 .mtype = MT_COUNTER, .metric = "roce_rdma_ecn_marked_packets_total",
		 .help = "RoCE packets received with ECN CE (notification point; mana: per device, "
			 "on its first port)."),
	[F_PORT_RDMA_OUT_OF_BUFFER] =
	    PORT(.src = SRC_RDMA, .path = "rdma.out_of_buffer", .type = VT_INT, .mtype = MT_COUNTER,
		 .metric = "roce_rdma_out_of_buffer_total",
		 .help = "Packets dropped for lack of a posted receive WQE."),

	/*
	 * link health (issue 25).  Carrier counts are the kernel's own
	 * (IFLA_CARRIER_*, 32-bit, never reset while the netdev lives); the
	 * transitions the daemon saw itself come from the link collector's
	 * polls and RTNLGRP_LINK notifications, with the time of the last one.
	 */
	[F_NETDEV_CARRIER_CHANGES] =
	    NETDEV(.src = SRC_LINK, .rep = { RCAT_LINK, NULL, "carrier changes", "changes" },
		   .path = "carrier.changes", .type = VT_INT, .mtype = MT_COUNTER,
		   .metric = "roce_netdev_carrier_changes_total",
		   .help = "Carrier changes of the network device (rtnetlink IFLA_CARRIER_CHANGES: "
			   "link flaps count two)."),
	[F_NETDEV_CARRIER_UP_COUNT] =
	    NETDEV(.src = SRC_LINK, .path = "carrier.up_count", .type = VT_INT, .mtype = MT_COUNTER,
		   .metric = "roce_netdev_carrier_transitions_total", .labels = "to=\"up\"",
		   .help = "Carrier transitions by direction (rtnetlink IFLA_CARRIER_UP_COUNT, "
			   "IFLA_CARRIER_DOWN_COUNT; kernel >= 4.16)."),
	[F_NETDEV_CARRIER_DOWN_COUNT] =
	    NETDEV(.src = SRC_LINK, .rep = { RCAT_LINK, NULL, "carrier lost", "events" },
		   .path = "carrier.down_count", .type = VT_INT, .mtype = MT_COUNTER,
		   .metric = "roce_netdev_carrier_transitions_total", .labels = "to=\"down\""),
	[F_NETDEV_CARRIER_SEEN] =
	    NETDEV(.src = SRC_LINK, .path = "carrier.transitions_seen", .type = VT_INT,
		   .mtype = MT_COUNTER, .metric = "roce_netdev_carrier_transitions_seen_total",
		   .help = "Carrier transitions rocewatch itself saw (notifications and polls) "
			   "since it started; a flap faster than one notification shows in "
			   "roce_netdev_carrier_changes_total only."),
	[F_NETDEV_CARRIER_LAST_CHANGE] =
	    NETDEV(.src = SRC_LINK, .path = "carrier.last_change", .type = VT_INT,
		   .mtype = MT_GAUGE, .metric = "roce_netdev_carrier_last_change_timestamp_seconds",
		   .help = "Unix time of the last carrier transition rocewatch saw; absent "
			   "until it sees one."),
	[F_NETDEV_FEC_ACTIVE] =
	    NETDEV(.src = SRC_ETHTOOL, .path = "fec.active", .type = VT_STR, .config = true,
		   .fast = true, /* FEC_GET, with the block counts */
		   .mtype = MT_INFO, .metric = "roce_netdev_fec_info", .label = "mode",
		   .help = "Active FEC mode (ethtool netlink FEC_GET: rs, baser, llrs, off); "
			   "value is always 1."),
	[F_NETDEV_FEC_CORRECTED] =
	    NETDEV(.src = SRC_ETHTOOL, .path = "fec.corrected_blocks", .type = VT_INT,
		   .mtype = MT_COUNTER, .metric = "roce_netdev_fec_blocks_total",
		   .labels = "outcome=\"corrected\"",
		   .help = "FEC codewords received, corrected or uncorrectable (ethtool netlink "
			   "FEC statistics, any driver)."),
	[F_NETDEV_FEC_UNCORRECTABLE] =
	    NETDEV(.src = SRC_ETHTOOL,
		   .rep = { RCAT_DISCARD, "rx", "uncorrectable FEC blocks", "blocks" },
		   .path = "fec.uncorrectable_blocks", .type = VT_INT, .mtype = MT_COUNTER,
		   .metric = "roce_netdev_fec_blocks_total", .labels = "outcome=\"uncorrectable\""),
	[F_NETDEV_FEC_CORRECTED_BITS] =
	    NETDEV(.src = SRC_ETHTOOL, .path = "fec.corrected_bits", .type = VT_INT,
		   .mtype = MT_COUNTER, .metric = "roce_netdev_fec_corrected_bits_total",
		   .help = "Bits the FEC corrected (ethtool netlink FEC statistics)."),
	[F_NETDEV_FEC_LANE_CORRECTED] =
	    NETDEV(.src = SRC_ETHTOOL, .path = "fec.lane_corrected_blocks", .type = VT_PRIO_ARRAY,
		   .mtype = MT_COUNTER, .metric = "roce_netdev_fec_lane_blocks_total",
		   .labels = "outcome=\"corrected\"", .label = "lane",
		   .help = "FEC codewords per lane, where the driver counts per lane."),
	[F_NETDEV_FEC_LANE_UNCORRECTABLE] =
	    NETDEV(.src = SRC_ETHTOOL, .path = "fec.lane_uncorrectable_blocks",
		   .type = VT_PRIO_ARRAY, .mtype = MT_COUNTER,
		   .metric = "roce_netdev_fec_lane_blocks_total",
		   .labels = "outcome=\"uncorrectable\"", .label = "lane"),
	[F_NETDEV_FEC_LANE_CORRECTED_BITS] =
	    NETDEV(.src = SRC_ETHTOOL, .path = "fec.lane_corrected_bits", .type = VT_PRIO_ARRAY,
		   .mtype = MT_COUNTER, .metric = "roce_netdev_fec_lane_corrected_bits_total",
		   .label = "lane", .help = "Bits the FEC corrected per lane."),
	[F_NETDEV_PHY_CORRECTED_BITS] =
	    NETDEV(.src = SRC_ETHTOOL, .path = "phy.corrected_bits", .type = VT_INT,
		   .mtype = MT_COUNTER, .metric = "roce_netdev_phy_corrected_bits_total",
		   .help = "Bits corrected by the PHY (mlx5 rx_corrected_bits_phy)."),
	[F_NETDEV_PHY_SYMBOL_ERRORS] =
	    NETDEV(.src = SRC_ETHTOOL, .rep = { RCAT_LINK, "rx", "PCS symbol errors", "errors" },
		   .path = "phy.symbol_errors", .type = VT_INT, .mtype = MT_COUNTER,
		   .metric = "roce_netdev_phy_symbol_errors_total",
		   .help = "Symbol errors the PCS could not correct (mlx5 rx_pcs_symbol_err_phy)."),
	[F_NETDEV_PHY_LANE_ERRORS] =
	    NETDEV(.src = SRC_ETHTOOL, .path = "phy.lane_errors", .type = VT_PRIO_ARRAY,
		   .mtype = MT_COUNTER, .metric = "roce_netdev_phy_lane_errors_total",
		   .label = "lane", .help = "Errors per physical lane (mlx5 rx_err_lane_N_phy)."),
	[F_NETDEV_PRE_FEC_BER] =
	    NETDEV(.src = SRC_ETHTOOL, .path = "ber.pre_fec", .type = VT_FLOAT, .mtype = MT_GAUGE,
		   .metric = "roce_netdev_pre_fec_bit_error_ratio",
		   .help = "Pre-FEC bit error ratio: bits the FEC corrected over the bits the link "
			   "carried at its speed, over the last 10 to 20 seconds; absent (with the "
			   "reason) without a corrected-bits counter or a link speed."),
	[F_NETDEV_PCI_STALLED_RD] =
	    NETDEV(.src = SRC_ETHTOOL, .path = "pcie.outbound_stalled_rd", .type = VT_INT,
		   .mtype = MT_GAUGE, .metric = "roce_netdev_pcie_outbound_stalled_ratio",
		   .labels = "op=\"read\"", .scale = 0.01,
		   .help = "Share of the last second the NIC had outbound PCIe requests it could "
			   "not issue for lack of credits (mlx5 outbound_pci_stalled_rd/_wr, a "
			   "percentage in the field)."),
	[F_NETDEV_PCI_STALLED_WR] =
	    NETDEV(.src = SRC_ETHTOOL, .path = "pcie.outbound_stalled_wr", .type = VT_INT,
		   .mtype = MT_GAUGE, .metric = "roce_netdev_pcie_outbound_stalled_ratio",
		   .labels = "op=\"write\"", .scale = 0.01),
	[F_NETDEV_PCI_STALLED_RD_EVENTS] =
	    NETDEV(.src = SRC_ETHTOOL, .rep = { RCAT_PAUSE_TIME, NULL, "PCIe read stall", "s" },
		   .path = "pcie.outbound_stalled_rd_events", .type = VT_INT, .mtype = MT_COUNTER,
		   .metric = "roce_netdev_pcie_outbound_stalled_seconds_total",
		   .labels = "op=\"read\"",
		   .help = "Seconds in which the outbound PCIe stall was above 30 % (mlx5 "
			   "outbound_pci_stalled_rd_events/_wr_events)."),
	[F_NETDEV_PCI_STALLED_WR_EVENTS] =
	    NETDEV(.src = SRC_ETHTOOL, .rep = { RCAT_PAUSE_TIME, NULL, "PCIe write stall", "s" },
		   .path = "pcie.outbound_stalled_wr_events", .type = VT_INT, .mtype = MT_COUNTER,
		   .metric = "roce_netdev_pcie_outbound_stalled_seconds_total",
		   .labels = "op=\"write\""),
	/* RDMA_NLDEV_CMD_STAT_GET_STATUS (kernel >= 5.16); off again after each driver load */
	[F_PORT_OPTIONAL_COUNTERS] = PORT(.src = SRC_RDMA, .path = "optional_counters.enabled",
					  .type = VT_STR, .config = true),
	[F_PORT_OPTIONAL_CC_DISABLED] =
	    PORT(.src = SRC_RDMA, .path = "optional_counters.cc_disabled", .type = VT_INT,
		 .config = true, .mtype = MT_GAUGE,
		 .metric = "roce_rdma_optional_cc_counters_disabled",
		 .help = "Congestion optional counters (cc_*) the port supports but has not "
			 "enabled (rdma statistic set link DEV/PORT optional-counters ...)."),
	[F_PORT_OPTIONAL_CC_DISABLED_NAMES] =
	    PORT(.src = SRC_RDMA, .path = "optional_counters.cc_disabled_names", .type = VT_STR,
		 .config = true),
	[F_PORT_COUNTERS_BACKED_OFF] =
	    PORT(.src = SRC_RDMA, .path = "counters_backed_off", .type = VT_BOOL, .mtype = MT_GAUGE,
		 .metric = "rocewatch_rdma_counters_backed_off",
		 .help = "1 while rocewatch does not read the port's counters because reads failed "
			 "with EIO, EPERM or EOPNOTSUPP (firmware-restricted functions); retried "
			 "after a minute, then at most hourly."),
	[F_PORT_REAPPEARED] =
	    PORT(.src = SRC_RDMA, .path = "reappeared", .type = VT_INT, .config = true,
		 .mtype = MT_COUNTER, .metric = "roce_rdma_port_reappeared_total",
		 .help = "Times the port (its node GUID, else its PCI address) came back after a "
			 "config poll that did not find it: a device that fell off the bus, a "
			 "driver reload or firmware reset. Every QP on it broke."),

	/*
	 * netdev: the LLDP neighbour.  IDs are written as lldpd writes them (MAC
	 * aa:bb:..., network address as an IP, names as text, other subtypes in
	 * hex), so both sources give the same text; longer values are cut at 63.
	 */
	[F_NETDEV_LLDP_SYSTEM_NAME] =
	    NETDEV(.src = SRC_LLDP, .path = "lldp.system_name", .type = VT_STR, .config = true,
		   .fast = true, /* each poll drains the frames and ages the neighbour */
		   .mtype = MT_INFO, .metric = "roce_netdev_lldp_neighbor_info",
		   .label = "system_name",
		   .help =
		       "The LLDP neighbour of the network device (the switch port it is cabled "
		       "to): system name, chassis ID, port ID and port description as received, "
		       "and the source (frames or lldpd); value is always 1, absent when no "
		       "neighbour is known."),
	[F_NETDEV_LLDP_CHASSIS_ID] =
	    NETDEV(.src = SRC_LLDP, .path = "lldp.chassis_id", .type = VT_STR, .config = true,
		   .fast = true, /* each poll drains the frames and ages the neighbour */
		   .mtype = MT_INFO, .metric = "roce_netdev_lldp_neighbor_info",
		   .label = "chassis_id"),
	[F_NETDEV_LLDP_PORT_ID] =
	    NETDEV(.src = SRC_LLDP, .path = "lldp.port_id", .type = VT_STR, .config = true,
		   .fast = true, /* each poll drains the frames and ages the neighbour */
		   .mtype = MT_INFO, .metric = "roce_netdev_lldp_neighbor_info",
		   .label = "port_id"),
	[F_NETDEV_LLDP_PORT_DESCRIPTION] =
	    NETDEV(.src = SRC_LLDP, .path = "lldp.port_description", .type = VT_STR, .config = true,
		   .fast = true, /* each poll drains the frames and ages the neighbour */
		   .mtype = MT_INFO, .metric = "roce_netdev_lldp_neighbor_info",
		   .label = "port_description"),
	[F_NETDEV_LLDP_SOURCE] =
	    NETDEV(.src = SRC_LLDP, .path = "lldp.source", .type = VT_STR, .config = true,
		   .fast = true, /* each poll drains the frames and ages the neighbour */
		   .mtype = MT_INFO, .metric = "roce_netdev_lldp_neighbor_info", .label = "source"),
	/* seconds, as sent: how long the neighbour's word holds without a new frame */
	[F_NETDEV_LLDP_TTL] = NETDEV(.src = SRC_LLDP, .path = "lldp.ttl", .type = VT_INT,
				     .config = true, .fast = true),

	/* the fabric: derived by fabric.c from the facts above and the site's rail map and roles */
	[F_NETDEV_DEFAULT_ROUTE] =
	    NETDEV(.src = SRC_LINK, .path = "default_route", .type = VT_BOOL, .config = true,
		   .mtype = MT_GAUGE, .metric = "roce_netdev_default_route",
		   .help = "1 if the netdev carries an IPv4 default route of the main table "
			   "(/proc/net/route): the node's management interface."),
	[F_PORT_SEEN_ACTIVE] =
	    PORT(.src = SRC_RDMA, .path = "seen_active", .type = VT_BOOL, .config = true,
		 .mtype = MT_GAUGE, .metric = "roce_rdma_port_seen_active",
		 .help = "1 if the port (its node GUID, else its PCI address) was ACTIVE at a "
			 "poll since rocewatch started: a port down by design never was."),
	[F_PORT_ROLE] =
	    PORT(.src = SRC_FABRIC, .path = "role", .type = VT_STR, .config = true,
		 .mtype = MT_INFO, .metric = "roce_rdma_port_role_info", .label = "role",
		 .help = "What the port is for (compute, storage, management, unused) and where "
			 "that came from (map, default_route, peer, no_gid, default); value is "
			 "always 1."),
	[F_PORT_ROLE_SOURCE] =
	    PORT(.src = SRC_FABRIC, .path = "role_source", .type = VT_STR, .config = true,
		 .mtype = MT_INFO, .metric = "roce_rdma_port_role_info", .label = "role_source"),
	[F_PORT_ROLE_REASON] =
	    PORT(.src = SRC_FABRIC, .path = "role_reason", .type = VT_STR, .config = true),
	[F_PORT_RAIL] =
	    PORT(.src = SRC_FABRIC, .path = "rail", .type = VT_STR, .config = true,
		 .mtype = MT_INFO, .metric = "roce_rdma_port_rail_info", .label = "rail",
		 .help = "The rail of a compute or storage port, where it came from (map, lldp, "
			 "subnet, order: order is a guess), and the switch port LLDP shows "
			 "(leaf, leaf_port); value is always 1."),
	[F_PORT_RAIL_SOURCE] =
	    PORT(.src = SRC_FABRIC, .path = "rail_source", .type = VT_STR, .config = true,
		 .mtype = MT_INFO, .metric = "roce_rdma_port_rail_info", .label = "rail_source"),
	[F_PORT_LEAF] =
	    PORT(.src = SRC_FABRIC, .path = "leaf", .type = VT_STR, .config = true,
		 .mtype = MT_INFO, .metric = "roce_rdma_port_rail_info", .label = "leaf"),
	[F_PORT_LEAF_PORT] =
	    PORT(.src = SRC_FABRIC, .path = "leaf_port", .type = VT_STR, .config = true,
		 .mtype = MT_INFO, .metric = "roce_rdma_port_rail_info", .label = "leaf_port"),
	[F_PORT_RAIL_PORTS] =
	    PORT(.src = SRC_FABRIC, .path = "rail_ports", .type = VT_INT, .config = true,
		 .mtype = MT_GAUGE, .metric = "roce_rdma_port_rail_ports",
		 .help = "Compute ports of this node on the port's rail: 1, or more where a port "
			 "is cabled to another rail's leaf."),
	[F_PORT_GPU_DISTANCE] =
	    PORT(.src = SRC_FABRIC, .path = "gpu_distance", .type = VT_INT, .config = true,
		 .mtype = MT_GAUGE, .metric = "roce_rdma_port_gpu_distance",
		 .help = "PCIe distance from the port's device to its nearest GPU as NCCL "
			 "classifies it: 1 PIX, 2 PXB, 3 PHB, 4 SYS."),
	[F_PORT_GPU] =
	    PORT(.src = SRC_FABRIC, .path = "gpu", .type = VT_STR, .config = true, .mtype = MT_INFO,
		 .metric = "roce_rdma_port_gpu_info", .label = "gpu",
		 .help = "The port's nearest GPU (PCI address) and the GPUs (by index in "
			 "PCI order) whose nearest compute NIC it is; value is always 1."),
	[F_PORT_NEAR_GPUS] =
	    PORT(.src = SRC_FABRIC, .path = "near_gpus", .type = VT_STR, .config = true,
		 .mtype = MT_INFO, .metric = "roce_rdma_port_gpu_info", .label = "near_gpus"),
	[F_NODE_COMPUTE_PORTS] =
	    NODE(.src = SRC_FABRIC, .path = "compute_ports", .type = VT_INT, .config = true,
		 .mtype = MT_GAUGE, .metric = "roce_host_compute_ports",
		 .help = "RDMA ports whose role is compute."),
	[F_NODE_RAILS_GUESSED] =
	    NODE(.src = SRC_FABRIC, .path = "rails_guessed", .type = VT_BOOL, .config = true,
		 .mtype = MT_GAUGE, .metric = "roce_host_rails_guessed",
		 .help = "1 if every compute port's rail is only its position (no rail map, LLDP "
			 "neighbour or GID subnet): the rail rules ran on a guess."),
};

int field_lookup(enum obj_kind kind, const char *path)
{
	for (int i = 0; i < F__COUNT; i++)
		if (fields[i].obj == kind && fields[i].path && !strcmp(fields[i].path, path))
			return i;
	return -1;
}

const char *value_type_name(enum value_type t)
{
	static const char *const names[] = {
		[VT_INT] = "integer",
		[VT_BOOL] = "bool",
		[VT_FLOAT] = "number",
		[VT_STR] = "string",
		[VT_PRIOSET] = "priority set",
		[VT_DSCPSET] = "dscp set",
		[VT_PRIO_ARRAY] = "per-priority array",
		[VT_DSCP_MAP] = "dscp map",
		[VT_GIDS] = "gid table",
		[VT_PCI_PAIRS] = "pci paths",
	};
	return names[t];
}

/*
 * mlx5: drivers/infiniband/hw/mlx5/counters.c; rxe: drivers/infiniband/sw/rxe/rxe_hw_counters.c.
 * A row without .metric keeps the raw name (roce_rdma_hw_<name>_total): its
 * meaning has a driver-independent family (vendors.c), and the raw series
 * stays for the driver's own name; the row still gives the report its words.
 */
const struct counter_desc hw_counter_descs[] = {
	{ .name = "out_of_sequence",
	  .rep = { RCAT_OOS, NULL, "out-of-sequence packets", "packets" },
	  .help = "Packets received out of sequence (mlx5): a sign of loss on the fabric." },
	{ .name = "packet_seq_err",
	  .rep = { RCAT_OOS, NULL, "sequence error NAKs", "packets" },
	  .help = "NAK sequence errors received (mlx5): the peer saw a gap." },
	{ .name = "local_ack_timeout_err",
	  .rep = { RCAT_RETRY, NULL, "local ACK timeouts", "events" },
	  .help = "Requests whose ACK timer expired (mlx5): packets or ACKs lost, retransmitted." },
	{ .name = "duplicate_request",
	  .rep = { RCAT_RETRY, NULL, "duplicate requests", "packets" },
	  .help = "Duplicate requests received (retransmissions seen by the responder)." },
	{ .name = "rnr_nak_retry_err",
	  .rep = { RCAT_RETRY, NULL, "RNR NAKs", "packets" },
	  .help = "RNR NAKs received (responder had no receive buffer posted)." },
	{ .name = "implied_nak_seq_err",
	  .rep = { RCAT_OOS, NULL, "implied NAK sequence errors", "events" },
	  .help = "Implied NAK sequence errors (mlx5)." },
	{ .name = "out_of_buffer",
	  .rep = { RCAT_DISCARD, "rx", "out of receive WQEs", "packets" },
	  .help = "Packets dropped for lack of a posted receive WQE (mlx5)." },
	{ .name = "req_transport_retries_exceeded",
	  .rep = { RCAT_RETRY, NULL, "transport retries exceeded", "errors" },
	  .help = "Requests that exhausted their transport retries (IBV_WC_RETRY_EXC_ERR)." },
	{ .name = "req_rnr_retries_exceeded",
	  .rep = { RCAT_RETRY, NULL, "RNR retries exceeded", "errors" },
	  .help = "Requests that exhausted their RNR retries." },
	{ .name = "np_cnp_sent",
	  .rep = { RCAT_CNP, "tx", "CNPs sent", "packets" },
	  .help = "CNPs sent by this port as DCQCN notification point." },
	{ .name = "rp_cnp_handled",
	  .rep = { RCAT_CNP, "rx", "CNPs handled", "packets" },
	  .help = "CNPs handled by this port as DCQCN reaction point (rate reduced)." },
	{ .name = "rp_cnp_ignored",
	  .rep = { RCAT_CNP, "rx", "CNPs ignored", "packets" },
	  .metric = "roce_rdma_rp_cnp_ignored_total",
	  .help = "CNPs received and ignored by the reaction point." },
	{ .name = "np_ecn_marked_roce_packets",
	  .rep = { RCAT_CNP, "rx", "ECN marked RoCE packets", "packets" },
	  .help = "RoCE packets received with ECN CE (notification point)." },
	{ .name = "roce_adp_retrans",
	  .rep = { RCAT_RETRY, NULL, "adaptive retransmissions", "packets" },
	  .metric = "roce_rdma_adaptive_retransmissions_total",
	  .help = "Adaptive retransmissions (mlx5)." },
	{ .name = "roce_adp_retrans_to",
	  .rep = { RCAT_RETRY, NULL, "adaptive retransmission timeouts", "events" },
	  .metric = "roce_rdma_adaptive_retransmission_timeouts_total",
	  .help = "Adaptive retransmission timeouts (mlx5)." },
	{ .name = "roce_slow_restart",
	  .metric = "roce_rdma_slow_restarts_total",
	  .help = "Slow restarts (mlx5)." },
	{ .name = "roce_slow_restart_cnps",
	  .metric = "roce_rdma_slow_restart_cnps_total",
	  .help = "CNPs generated by slow restart (mlx5)." },
	{ .name = "roce_slow_restart_trans",
	  .metric = "roce_rdma_slow_restart_transitions_total",
	  .help = "Transitions into slow restart (mlx5)." },
	/* soft-RoCE (rxe) */
	{ .name = "sent_pkts",
	  .metric = "roce_rdma_sent_packets_total",
	  .help = "Packets sent (rxe)." },
	{ .name = "rcvd_pkts",
	  .metric = "roce_rdma_received_packets_total",
	  .help = "Packets received (rxe)." },
	{ .name = "out_of_seq_request",
	  .rep = { RCAT_OOS, NULL, "out-of-sequence requests", "packets" },
	  .help = "Requests received out of sequence (rxe)." },
	{ .name = "rcvd_seq_err",
	  .rep = { RCAT_OOS, NULL, "sequence error NAKs received", "packets" },
	  .help = "Sequence-error NAKs received (rxe)." },
	{ .name = "retry_exceeded_err",
	  .rep = { RCAT_RETRY, NULL, "retries exceeded", "errors" },
	  .help = "Requests that exhausted their retries (rxe)." },
	{ .name = "retry_rnr_exceeded_err",
	  .rep = { RCAT_RETRY, NULL, "RNR retries exceeded", "errors" },
	  .help = "Requests that exhausted their RNR retries (rxe)." },
	{ .name = "completer_retry_err",
	  .rep = { RCAT_RETRY, NULL, "completer retries", "events" },
	  .help = "Retransmissions started by the completer after a timeout (rxe)." },
	/* mlx5 error and request counters (mlx5 counters.c extended_err_cnts, basic_q_cnts) */
	{ .name = "req_cqe_error",
	  .metric = "roce_rdma_requester_cqe_errors_total",
	  .help = "Requester work completions with an error (mlx5)." },
	{ .name = "req_cqe_flush_error",
	  .metric = "roce_rdma_requester_cqe_flush_errors_total",
	  .help = "Requester work completions flushed in error (mlx5)." },
	{ .name = "resp_cqe_error",
	  .metric = "roce_rdma_responder_cqe_errors_total",
	  .help = "Responder work completions with an error (mlx5)." },
	{ .name = "resp_cqe_flush_error",
	  .metric = "roce_rdma_responder_cqe_flush_errors_total",
	  .help = "Responder work completions flushed in error (mlx5)." },
	{ .name = "req_remote_access_errors",
	  .metric = "roce_rdma_requester_remote_access_errors_total",
	  .help = "Remote access errors the requester received (bad rkey or permission) (mlx5)." },
	{ .name = "resp_remote_access_errors",
	  .metric = "roce_rdma_responder_remote_access_errors_total",
	  .help = "Remote access errors the responder detected (mlx5)." },
	{ .name = "req_remote_invalid_request",
	  .metric = "roce_rdma_requester_remote_invalid_requests_total",
	  .help = "Remote invalid request errors the requester received (mlx5)." },
	{ .name = "resp_local_length_error",
	  .metric = "roce_rdma_responder_local_length_errors_total",
	  .help = "Receives longer than the posted buffer (mlx5)." },
	{ .name = "rx_write_requests",
	  .metric = "roce_rdma_received_write_requests_total",
	  .help = "RDMA WRITE requests received (mlx5)." },
	{ .name = "rx_read_requests",
	  .metric = "roce_rdma_received_read_requests_total",
	  .help = "RDMA READ requests received (mlx5)." },
	{ .name = "rx_atomic_requests",
	  .metric = "roce_rdma_received_atomic_requests_total",
	  .help = "Atomic requests received (mlx5)." },
	{ .name = "rx_icrc_encapsulated",
	  .metric = "roce_rdma_received_icrc_errors_total",
	  .help = "RoCE packets received with an ICRC error (mlx5 rx_icrc_encapsulated)." },
	/* mlx5 optional counters: RDMA netlink only, once enabled (`rdma statistic set`) */
	{ .name = "cc_rx_ce_pkts",
	  .rep = { RCAT_CNP, "rx", "ECN CE packets (optional counter)", "packets" },
	  .metric = "roce_rdma_cc_rx_ce_packets_total",
	  .help = "Packets received with ECN CE (mlx5 optional counter cc_rx_ce_pkts)." },
	{ .name = "cc_rx_cnp_pkts",
	  .rep = { RCAT_CNP, "rx", "CNPs received (optional counter)", "packets" },
	  .metric = "roce_rdma_cc_rx_cnp_packets_total",
	  .help = "CNPs received (mlx5 optional counter cc_rx_cnp_pkts)." },
	{ .name = "cc_tx_cnp_pkts",
	  .rep = { RCAT_CNP, "tx", "CNPs sent (optional counter)", "packets" },
	  .metric = "roce_rdma_cc_tx_cnp_packets_total",
	  .help = "CNPs sent (mlx5 optional counter cc_tx_cnp_pkts)." },
};
const size_t n_hw_counter_descs = sizeof(hw_counter_descs) / sizeof(hw_counter_descs[0]);

/* Classic IB port counters (counters/): data counters count 4-byte words. */
const struct counter_desc port_counter_descs[] = {
	{ .name = "port_xmit_data",
	  .metric = "roce_rdma_port_transmit_bytes_total",
	  .help = "Bytes transmitted by the RDMA port (port_xmit_data x 4).",
	  .scale = 4 },
	{ .name = "port_rcv_data",
	  .metric = "roce_rdma_port_receive_bytes_total",
	  .help = "Bytes received by the RDMA port (port_rcv_data x 4).",
	  .scale = 4 },
	{ .name = "port_xmit_packets",
	  .metric = "roce_rdma_port_transmit_packets_total",
	  .help = "Packets transmitted by the RDMA port." },
	{ .name = "port_rcv_packets",
	  .metric = "roce_rdma_port_receive_packets_total",
	  .help = "Packets received by the RDMA port." },
	{ .name = "port_xmit_discards",
	  .rep = { RCAT_DISCARD, "tx", "port transmit discards", "packets" },
	  .metric = "roce_rdma_port_transmit_discards_total",
	  .help = "Packets the RDMA port discarded on transmit." },
	{ .name = "port_rcv_discards",
	  .rep = { RCAT_DISCARD, "rx", "port receive discards", "packets" },
	  .metric = "roce_rdma_port_receive_discards_total",
	  .help = "Packets the RDMA port discarded on receive." },
	{ .name = "port_rcv_errors",
	  .rep = { RCAT_DISCARD, "rx", "port receive errors", "packets" },
	  .metric = "roce_rdma_port_receive_errors_total",
	  .help = "Packets received with errors." },
	{ .name = "port_xmit_wait",
	  .metric = "roce_rdma_port_transmit_wait_total",
	  .help = "Ticks the port had data to send but could not (flow control)." },
	{ .name = "link_downed",
	  .rep = { RCAT_LINK, NULL, "link downed", "events" },
	  .metric = "roce_rdma_port_link_downed_total",
	  .help = "Times the link went down (link flaps)." },
	{ .name = "link_error_recovery",
	  .rep = { RCAT_LINK, NULL, "link error recoveries", "events" },
	  .metric = "roce_rdma_port_link_error_recovery_total",
	  .help = "Successful link error recoveries." },
	{ .name = "symbol_error",
	  .rep = { RCAT_LINK, NULL, "symbol errors", "errors" },
	  .metric = "roce_rdma_port_symbol_errors_total",
	  .help = "Symbol errors on the link." },
	{ .name = "local_link_integrity_errors",
	  .rep = { RCAT_LINK, NULL, "local link integrity errors", "errors" },
	  .metric = "roce_rdma_port_local_link_integrity_errors_total",
	  .help = "Times the local physical errors exceeded the port's threshold (IBTA)." },
	{ .name = "excessive_buffer_overrun_errors",
	  .rep = { RCAT_LINK, NULL, "excessive buffer overruns", "errors" },
	  .metric = "roce_rdma_port_excessive_buffer_overrun_errors_total",
	  .help = "Times consecutive receive buffer overruns passed the port's threshold (IBTA)." },
	{ .name = "port_rcv_constraint_errors",
	  .metric = "roce_rdma_port_receive_constraint_errors_total",
	  .help = "Packets received and discarded for partition or raw-packet constraints." },
	{ .name = "port_xmit_constraint_errors",
	  .metric = "roce_rdma_port_transmit_constraint_errors_total",
	  .help = "Packets not transmitted for partition or raw-packet constraints." },
	{ .name = "port_rcv_remote_physical_errors",
	  .metric = "roce_rdma_port_receive_remote_physical_errors_total",
	  .help = "Packets received marked with the EBP delimiter (a physical error upstream)." },
	{ .name = "port_rcv_switch_relay_errors",
	  .metric = "roce_rdma_port_receive_switch_relay_errors_total",
	  .help = "Packets received that could not be forwarded." },
	{ .name = "unicast_rcv_packets",
	  .metric = "roce_rdma_port_unicast_receive_packets_total",
	  .help = "Unicast packets received by the RDMA port." },
	{ .name = "unicast_xmit_packets",
	  .metric = "roce_rdma_port_unicast_transmit_packets_total",
	  .help = "Unicast packets transmitted by the RDMA port." },
	{ .name = "multicast_rcv_packets",
	  .metric = "roce_rdma_port_multicast_receive_packets_total",
	  .help = "Multicast packets received by the RDMA port." },
	{ .name = "multicast_xmit_packets",
	  .metric = "roce_rdma_port_multicast_transmit_packets_total",
	  .help = "Multicast packets transmitted by the RDMA port." },
};
const size_t n_port_counter_descs = sizeof(port_counter_descs) / sizeof(port_counter_descs[0]);

const struct counter_desc *counter_desc_find(const struct counter_desc *t, size_t n,
					     const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(t[i].name, name))
			return &t[i];
	return NULL;
}

void metric_sanitize(struct strbuf *sb, const char *name)
{
	for (const char *p = name; *p; p++)
		sb_putc(sb, isalnum((unsigned char)*p) ? (char)tolower((unsigned char)*p) : '_');
}

int cset_metric(struct strbuf *sb, enum cset_id c, const char *name, struct cset_metric *m)
{
	static const struct {
		const struct counter_desc *descs;
		const size_t *n;
		const char *prefix, *type, *origin;
	} sets[CSET__COUNT] = {
		[CSET_HW] = { hw_counter_descs, &n_hw_counter_descs, "roce_rdma_hw_", "counter",
			      "RDMA" },
		[CSET_PORT] = { port_counter_descs, &n_port_counter_descs, "roce_rdma_port_",
				"counter", "RDMA" },
		[CSET_ETHTOOL] = { NULL, NULL, "roce_ethtool_", "untyped", "Driver (ethtool -S)" },
	};

	if ((unsigned)c >= CSET__COUNT || !sets[c].prefix)
		return -EINVAL;
	m->cd = sets[c].descs ? counter_desc_find(sets[c].descs, *sets[c].n, name) : NULL;
	m->type = sets[c].type;
	if (m->cd && m->cd->metric) {
		sb_puts(sb, m->cd->metric);
		m->help = m->cd->help;
		m->scale = m->cd->scale;
		return 0;
	}
	sb_puts(sb, sets[c].prefix);
	metric_sanitize(sb, name);
	if (!strcmp(m->type, "counter"))
		sb_puts(sb, "_total");
	if (m->cd && m->cd->help)
		snprintf(m->help_buf, sizeof(m->help_buf),
			 "%s counter %s as the driver names it: %s", sets[c].origin, name,
			 m->cd->help);
	else
		snprintf(m->help_buf, sizeof(m->help_buf), "%s counter %s, as of the last poll.",
			 sets[c].origin, name);
	m->help = m->help_buf;
	m->scale = 0;
	return 0;
}
