// SPDX-License-Identifier: MIT
/*
 * The field table.  Fields that share a metric name form one metric family
 * and must be adjacent (the exporter writes HELP/TYPE once per run of rows).
 * Counter values are those of the last background poll (--interval).
 */
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
	[F_NODE_KERNEL] = NODE(.path = "kernel", .type = VT_STR, .config = true, .mtype = MT_INFO,
			       .metric = "roce_host_kernel_info", .label = "release",
			       .help = "Running kernel release (uname -r); value is always 1."),
	[F_NODE_MEMLOCK] =
	    NODE(.path = "memlock", .type = VT_INT, .config = true, .mtype = MT_GAUGE,
		 .metric = "roce_host_memlock_limit_bytes",
		 .help = "RLIMIT_MEMLOCK soft limit of the rocewatch process in bytes; "
			 "absent when unlimited (see roce_host_memlock_unlimited)."),
	[F_NODE_MEMLOCK_UNLIMITED] =
	    NODE(.path = "memlock_unlimited", .type = VT_BOOL, .config = true, .mtype = MT_GAUGE,
		 .metric = "roce_host_memlock_unlimited",
		 .help = "1 if RLIMIT_MEMLOCK is unlimited, 0 otherwise."),
	[F_NODE_PEERMEM] =
	    NODE(.path = "gpudirect.peermem", .type = VT_BOOL, .config = true, .mtype = MT_GAUGE,
		 .metric = "roce_host_nvidia_peermem_loaded",
		 .help = "1 if the nvidia_peermem (or nv_peer_mem) module is loaded."),
	[F_NODE_DMABUF] =
	    NODE(.path = "gpudirect.dmabuf", .type = VT_BOOL, .config = true, .mtype = MT_GAUGE,
		 .metric = "roce_host_dmabuf_supported",
		 .help = "1 if the kernel supports DMA-BUF for RDMA (GPUDirect without peermem)."),
	[F_NODE_GPUS] = NODE(.path = "gpus", .type = VT_INT, .config = true, .mtype = MT_GAUGE,
			     .metric = "roce_host_gpus",
			     .help = "Number of NVIDIA GPUs found in the PCI tree."),
	[F_NODE_GPUS_WITHOUT_NEAR_NIC] =
	    NODE(.path = "gpus_without_near_nic", .type = VT_INT, .config = true, .mtype = MT_GAUGE,
		 .metric = "roce_host_gpus_without_near_nic",
		 .help = "GPUs with no RDMA NIC at PXB distance or closer."),
	[F_NODE_GPU_NIC_PATHS] = NODE(.path = "gpu_nic_paths", .type = VT_PCI_PAIRS, .config = true,
				      .mtype = MT_GAUGE, .metric = "roce_host_gpu_nic_pci_distance",
				      .help = "PCIe distance between a GPU and an RDMA NIC as NCCL "
					      "classifies it: 1 PIX, 2 PXB, 3 PHB, 4 SYS."),
	[F_NODE_RDMA_DEVICES] =
	    NODE(.path = "rdma_devices", .type = VT_INT, .config = true, .mtype = MT_GAUGE,
		 .metric = "roce_host_rdma_devices", .help = "Number of RDMA devices on the node."),

	/* netdev: link */
	[F_NETDEV_IFINDEX] = NETDEV(.path = "ifindex", .type = VT_INT, .config = true),
	[F_NETDEV_MTU] =
	    NETDEV(.path = "mtu", .type = VT_INT, .config = true, .mtype = MT_GAUGE,
		   .metric = "roce_netdev_mtu_bytes",
		   .help = "Network device MTU in bytes (RoCE active_mtu 4096 needs >= 4200)."),
	[F_NETDEV_OPERSTATE] =
	    NETDEV(.path = "operstate", .type = VT_STR, .config = true, .mtype = MT_INFO,
		   .metric = "roce_netdev_operstate_info", .label = "operstate",
		   .help = "RFC 2863 operational state of the network device; value is always 1."),
	[F_NETDEV_CARRIER] =
	    NETDEV(.path = "carrier", .type = VT_BOOL, .config = true, .mtype = MT_GAUGE,
		   .metric = "roce_netdev_carrier", .help = "1 if the network device has carrier."),
	[F_NETDEV_KIND] = NETDEV(.path = "kind", .type = VT_STR, .config = true, .mtype = MT_INFO,
				 .metric = "roce_netdev_link_info", .label = "kind",
				 .help = "Link kind, master and lower devices of the network "
					 "device; value is always 1."),
	[F_NETDEV_MASTER] =
	    NETDEV(.path = "master", .type = VT_STR, .config = true, .mtype = MT_INFO,
		   .metric = "roce_netdev_link_info", .label = "master"),
	[F_NETDEV_LOWER] = NETDEV(.path = "lower", .type = VT_STR, .config = true, .mtype = MT_INFO,
				  .metric = "roce_netdev_link_info", .label = "lower"),
	[F_NETDEV_IPV4] = NETDEV(.path = "ipv4", .type = VT_STR, .config = true),
	[F_NETDEV_RDMA] = NETDEV(.path = "rdma", .type = VT_BOOL, .config = true, .mtype = MT_GAUGE,
				 .metric = "roce_netdev_rdma",
				 .help = "1 if an RDMA port is bound to this network device."),

	/* netdev: ethtool */
	[F_NETDEV_DRIVER] = NETDEV(
		.path = "driver", .type = VT_STR, .config = true, .mtype = MT_INFO,
		.metric = "roce_netdev_info", .label = "driver",
		.help =
		    "Driver, firmware and bus address of the network device; value is always 1."),
	[F_NETDEV_FIRMWARE] =
	    NETDEV(.path = "firmware", .type = VT_STR, .config = true, .mtype = MT_INFO,
		   .metric = "roce_netdev_info", .label = "firmware"),
	[F_NETDEV_BUS] = NETDEV(.path = "bus", .type = VT_STR, .config = true, .mtype = MT_INFO,
				.metric = "roce_netdev_info", .label = "bus"),
	[F_NETDEV_SPEED] =
	    NETDEV(.path = "speed", .type = VT_INT, .config = true, .mtype = MT_GAUGE,
		   .metric = "roce_netdev_speed_bytes", .scale = 125000.0,
		   .help = "Link speed in bytes per second (the field itself is in Mb/s)."),
	[F_NETDEV_PAUSE_AUTONEG] = NETDEV(.path = "pause.autoneg", .type = VT_BOOL, .config = true,
					  .mtype = MT_GAUGE, .metric = "roce_pause_autoneg",
					  .help = "1 if 802.3x global pause is autonegotiated."),
	[F_NETDEV_PAUSE_RX] =
	    NETDEV(.path = "pause.rx", .type = VT_BOOL, .config = true, .mtype = MT_GAUGE,
		   .metric = "roce_pause_enabled", .labels = "direction=\"rx\"",
		   .help = "1 if 802.3x global pause is enabled in this direction (should be 0 "
			   "with PFC)."),
	[F_NETDEV_PAUSE_TX] =
	    NETDEV(.path = "pause.tx", .type = VT_BOOL, .config = true, .mtype = MT_GAUGE,
		   .metric = "roce_pause_enabled", .labels = "direction=\"tx\""),
	[F_NETDEV_PAUSE_RX_FRAMES] =
	    NETDEV(.path = "pause.rx_frames", .type = VT_INT, .mtype = MT_COUNTER,
		   .metric = "roce_pause_frames_total", .labels = "direction=\"rx\"",
		   .help =
		       "802.3x global pause frames (ethtool pause stats), as of the last poll."),
	[F_NETDEV_PAUSE_TX_FRAMES] =
	    NETDEV(.path = "pause.tx_frames", .type = VT_INT, .mtype = MT_COUNTER,
		   .metric = "roce_pause_frames_total", .labels = "direction=\"tx\""),
	[F_NETDEV_PFC_PREVENTION_TOUT] =
	    NETDEV(.path = "pfc.prevention_timeout_ms", .type = VT_INT, .config = true,
		   .mtype = MT_GAUGE, .metric = "roce_pfc_stall_prevention_timeout_seconds",
		   .scale = 0.001,
		   .help = "PFC storm prevention timeout (ethtool tunable pfc-prevention-tout) "
			   "in seconds; 0 means off, 65.535 (0xffff ms) means auto "
			   "where a driver reports it that way (mlx5 reports 0.1 for auto)."),
	[F_NETDEV_PFC_RX_PAUSE] =
	    NETDEV(.path = "pfc.rx_pause", .type = VT_PRIO_ARRAY, .mtype = MT_COUNTER,
		   .metric = "roce_pfc_pause_frames_total", .labels = "direction=\"rx\"",
		   .label = "priority",
		   .help = "PFC pause frames per priority (ethtool rx/tx_prioN_pause), as of the "
			   "last poll."),
	[F_NETDEV_PFC_TX_PAUSE] =
	    NETDEV(.path = "pfc.tx_pause", .type = VT_PRIO_ARRAY, .mtype = MT_COUNTER,
		   .metric = "roce_pfc_pause_frames_total", .labels = "direction=\"tx\"",
		   .label = "priority"),
	[F_NETDEV_PFC_RX_PAUSE_DURATION] =
	    NETDEV(.path = "pfc.rx_pause_duration_us", .type = VT_PRIO_ARRAY, .mtype = MT_COUNTER,
		   .metric = "roce_pfc_pause_duration_seconds_total", .labels = "direction=\"rx\"",
		   .label = "priority", .scale = 1e-6,
		   .help = "Time spent paused by PFC per priority in seconds "
			   "(mlx5 reports microseconds)."),
	[F_NETDEV_PFC_TX_PAUSE_DURATION] =
	    NETDEV(.path = "pfc.tx_pause_duration_us", .type = VT_PRIO_ARRAY, .mtype = MT_COUNTER,
		   .metric = "roce_pfc_pause_duration_seconds_total", .labels = "direction=\"tx\"",
		   .label = "priority", .scale = 1e-6),
	[F_NETDEV_PFC_RX_PAUSE_TRANSITION] =
	    NETDEV(.path = "pfc.rx_pause_transitions", .type = VT_PRIO_ARRAY, .mtype = MT_COUNTER,
		   .metric = "roce_pfc_pause_transitions_total", .labels = "direction=\"rx\"",
		   .label = "priority", .help = "PFC XOFF to XON transitions per priority."),
	[F_NETDEV_PRIO_RX_BYTES] =
	    NETDEV(.path = "prio.rx_bytes", .type = VT_PRIO_ARRAY, .mtype = MT_COUNTER,
		   .metric = "roce_prio_bytes_total", .labels = "direction=\"rx\"",
		   .label = "priority", .help = "Bytes per priority."),
	[F_NETDEV_PRIO_TX_BYTES] = NETDEV(.path = "prio.tx_bytes", .type = VT_PRIO_ARRAY,
					  .mtype = MT_COUNTER, .metric = "roce_prio_bytes_total",
					  .labels = "direction=\"tx\"", .label = "priority"),
	[F_NETDEV_PRIO_RX_PACKETS] =
	    NETDEV(.path = "prio.rx_packets", .type = VT_PRIO_ARRAY, .mtype = MT_COUNTER,
		   .metric = "roce_prio_packets_total", .labels = "direction=\"rx\"",
		   .label = "priority", .help = "Packets per priority."),
	[F_NETDEV_PRIO_TX_PACKETS] =
	    NETDEV(.path = "prio.tx_packets", .type = VT_PRIO_ARRAY, .mtype = MT_COUNTER,
		   .metric = "roce_prio_packets_total", .labels = "direction=\"tx\"",
		   .label = "priority"),
	[F_NETDEV_PRIO_RX_DISCARDS] =
	    NETDEV(.path = "prio.rx_discards", .type = VT_PRIO_ARRAY, .mtype = MT_COUNTER,
		   .metric = "roce_prio_discards_total",
		   .labels = "direction=\"rx\",reason=\"discard\"", .label = "priority",
		   .help =
		       "Packets discarded per priority, by reason (discard, buffer, congestion)."),
	[F_NETDEV_PRIO_RX_BUF_DISCARDS] =
	    NETDEV(.path = "prio.rx_buf_discards", .type = VT_PRIO_ARRAY, .mtype = MT_COUNTER,
		   .metric = "roce_prio_discards_total",
		   .labels = "direction=\"rx\",reason=\"buffer\"", .label = "priority"),
	[F_NETDEV_PRIO_RX_CONG_DISCARDS] =
	    NETDEV(.path = "prio.rx_cong_discards", .type = VT_PRIO_ARRAY, .mtype = MT_COUNTER,
		   .metric = "roce_prio_discards_total",
		   .labels = "direction=\"rx\",reason=\"congestion\"", .label = "priority"),
	[F_NETDEV_PRIO_RX_MARKED] =
	    NETDEV(.path = "prio.rx_ecn_marked", .type = VT_PRIO_ARRAY, .mtype = MT_COUNTER,
		   .metric = "roce_prio_ecn_marked_packets_total", .labels = "direction=\"rx\"",
		   .label = "priority", .help = "Received packets carrying ECN CE per priority."),
	[F_NETDEV_PAUSE_STORM_WARNING] =
	    NETDEV(.path = "pause_storm.warning_events", .type = VT_INT, .mtype = MT_COUNTER,
		   .metric = "roce_pfc_pause_storm_events_total", .labels = "level=\"warning\"",
		   .help = "Pause storm events (warning: storm detected; error: the NIC "
			   "stopped sending pause and drops follow)."),
	[F_NETDEV_PAUSE_STORM_ERROR] =
	    NETDEV(.path = "pause_storm.error_events", .type = VT_INT, .mtype = MT_COUNTER,
		   .metric = "roce_pfc_pause_storm_events_total", .labels = "level=\"error\""),
	[F_NETDEV_RX_DISCARDS_PHY] =
	    NETDEV(.path = "port.rx_discards", .type = VT_INT, .mtype = MT_COUNTER,
		   .metric = "roce_port_discards_total", .labels = "direction=\"rx\"",
		   .help = "Packets the port discarded for lack of buffer (rx/tx_discards_phy)."),
	[F_NETDEV_TX_DISCARDS_PHY] =
	    NETDEV(.path = "port.tx_discards", .type = VT_INT, .mtype = MT_COUNTER,
		   .metric = "roce_port_discards_total", .labels = "direction=\"tx\""),
	[F_NETDEV_RX_OUT_OF_BUFFER] =
	    NETDEV(.path = "port.rx_out_of_buffer", .type = VT_INT, .mtype = MT_COUNTER,
		   .metric = "roce_netdev_rx_out_of_buffer_total",
		   .help = "Packets dropped for lack of a software receive buffer."),
	[F_NETDEV_LINK_DOWN_EVENTS] =
	    NETDEV(.path = "port.link_down_events", .type = VT_INT, .mtype = MT_COUNTER,
		   .metric = "roce_netdev_link_down_events_total",
		   .help = "Physical link down events (link flaps)."),
	[F_NETDEV_RX_CRC_ERRORS] =
	    NETDEV(.path = "port.rx_crc_errors", .type = VT_INT, .mtype = MT_COUNTER,
		   .metric = "roce_netdev_rx_crc_errors_total",
		   .help = "Frames received with a bad CRC."),

	/* netdev: dcb */
	[F_NETDEV_PFC_ENABLED] =
	    NETDEV(.path = "pfc.enabled", .type = VT_PRIOSET, .config = true, .mtype = MT_GAUGE,
		   .metric = "roce_pfc_enabled", .label = "priority",
		   .help = "1 if IEEE PFC is enabled on the priority (dcbnl pfc_en)."),
	[F_NETDEV_PFC_CAP] =
	    NETDEV(.path = "pfc.cap", .type = VT_INT, .config = true, .mtype = MT_GAUGE,
		   .metric = "roce_pfc_capable_priorities",
		   .help = "Number of priorities the device can enable PFC on (pfc_cap)."),
	[F_NETDEV_PFC_DELAY] =
	    NETDEV(.path = "pfc.delay", .type = VT_INT, .config = true, .mtype = MT_GAUGE,
		   .metric = "roce_pfc_delay_allowance",
		   .help = "dcbnl ieee_pfc.delay: the PFC delay allowance, in bit times per "
			   "802.1Qbb; mlx5 keeps the cable length in meters here."),
	[F_NETDEV_PFC_REQUESTS] =
	    NETDEV(.path = "pfc.requests", .type = VT_PRIO_ARRAY, .mtype = MT_COUNTER,
		   .metric = "roce_pfc_requests_total", .label = "priority",
		   .help =
		       "PFC pause frames sent per priority (dcbnl requests), as of the last poll."),
	[F_NETDEV_PFC_INDICATIONS] =
	    NETDEV(.path = "pfc.indications", .type = VT_PRIO_ARRAY, .mtype = MT_COUNTER,
		   .metric = "roce_pfc_indications_total", .label = "priority",
		   .help = "PFC pause frames received per priority (dcbnl indications)."),
	[F_NETDEV_ETS_PRIO_TC] =
	    NETDEV(.path = "ets.prio_tc", .type = VT_PRIO_ARRAY, .config = true, .mtype = MT_GAUGE,
		   .metric = "roce_ets_priority_tc", .label = "priority",
		   .help = "Traffic class the priority is mapped to (IEEE ETS prio_tc)."),
	[F_NETDEV_ETS_TC_TSA] =
	    NETDEV(.path = "ets.tc_tsa", .type = VT_PRIO_ARRAY, .config = true, .mtype = MT_GAUGE,
		   .metric = "roce_ets_tc_tsa", .label = "tc",
		   .help = "Transmission selection algorithm of the TC: 0 strict, 1 CBS, 2 ETS, "
			   "255 vendor."),
	[F_NETDEV_ETS_TC_BW] =
	    NETDEV(.path = "ets.tc_bw", .type = VT_PRIO_ARRAY, .config = true, .mtype = MT_GAUGE,
		   .metric = "roce_ets_tc_bandwidth_percent", .label = "tc",
		   .help = "ETS bandwidth share of the TC in percent."),
	[F_NETDEV_DSCP_MAP] =
	    NETDEV(.path = "dscp2prio", .type = VT_DSCP_MAP, .config = true, .mtype = MT_GAUGE,
		   .metric = "roce_dscp_priority", .label = "dscp",
		   .help =
		       "Priority a DSCP value is mapped to (dcbnl APP table or qos/dscp2prio)."),
	[F_NETDEV_TRUST] = NETDEV(.path = "trust", .type = VT_STR, .config = true, .mtype = MT_INFO,
				  .metric = "roce_qos_trust_info", .label = "trust",
				  .help = "QoS trust mode (pcp or dscp); value is always 1."),
	[F_NETDEV_DCBX_MODE] =
	    NETDEV(.path = "dcbx.mode", .type = VT_STR, .config = true, .mtype = MT_INFO,
		   .metric = "roce_dcbx_mode_info", .label = "mode",
		   .help = "DCBX mode flags (host, lld, ieee, cee, static); value is always 1."),
	[F_NETDEV_DCBX_HOST] =
	    NETDEV(.path = "dcbx.host", .type = VT_BOOL, .config = true, .mtype = MT_GAUGE,
		   .metric = "roce_dcbx_host_managed",
		   .help = "1 if DCB is managed by the host (DCB_CAP_DCBX_HOST), not firmware."),
	[F_NETDEV_PRIO_BUFFER] =
	    NETDEV(.path = "buffer.prio_buffer", .type = VT_PRIO_ARRAY, .config = true,
		   .mtype = MT_GAUGE, .metric = "roce_dcb_priority_buffer", .label = "priority",
		   .help = "Receive buffer the priority is mapped to."),
	[F_NETDEV_BUFFER_SIZE] =
	    NETDEV(.path = "buffer.size", .type = VT_PRIO_ARRAY, .config = true, .mtype = MT_GAUGE,
		   .metric = "roce_dcb_buffer_size_bytes", .label = "buffer",
		   .help = "Size of each receive buffer in bytes."),
	[F_NETDEV_BUFFER_TOTAL] = NETDEV(.path = "buffer.total", .type = VT_INT, .config = true,
					 .mtype = MT_GAUGE, .metric = "roce_dcb_buffer_total_bytes",
					 .help = "Total receive buffer of the port in bytes."),

	/* netdev: qos_sysfs */
	[F_NETDEV_ECN_NP] =
	    NETDEV(.path = "ecn.np", .type = VT_PRIOSET, .config = true, .mtype = MT_GAUGE,
		   .metric = "roce_ecn_enabled", .labels = "role=\"np\"", .label = "priority",
		   .help = "1 if ECN/DCQCN is enabled on the priority for the role "
			   "(np: notification point, rp: reaction point)."),
	[F_NETDEV_ECN_RP] =
	    NETDEV(.path = "ecn.rp", .type = VT_PRIOSET, .config = true, .mtype = MT_GAUGE,
		   .metric = "roce_ecn_enabled", .labels = "role=\"rp\"", .label = "priority"),
	[F_NETDEV_CNP_DSCP] =
	    NETDEV(.path = "cnp.dscp", .type = VT_INT, .config = true, .mtype = MT_GAUGE,
		   .metric = "roce_cnp_dscp", .help = "DSCP the NIC puts on the CNPs it sends."),
	[F_NETDEV_CNP_PRIO] = NETDEV(.path = "cnp.priority", .type = VT_INT, .config = true,
				     .mtype = MT_GAUGE, .metric = "roce_cnp_priority",
				     .help = "802.1p priority the NIC puts on the CNPs it sends."),

	/*
	 * netdev: wire (BPF).  These cover recent traffic (collectors/wire_fields.h);
	 * the cumulative per-codepoint counters are rendered from obj->wire.
	 */
	[F_NETDEV_WIRE_DATA_PACKETS] = NETDEV(.path = "wire.data_packets", .type = VT_INT),
	[F_NETDEV_WIRE_DATA_DSCP] = NETDEV(.path = "wire.data_dscp", .type = VT_DSCPSET),
	[F_NETDEV_WIRE_CNP_PACKETS] = NETDEV(.path = "wire.cnp_packets", .type = VT_INT),
	[F_NETDEV_WIRE_CNP_DSCP] = NETDEV(.path = "wire.cnp_dscp", .type = VT_DSCPSET),
	[F_NETDEV_WIRE_DATA_NOT_ECT] = NETDEV(.path = "wire.data_not_ect_packets", .type = VT_INT),
	[F_NETDEV_WIRE_CE_RATIO] =
	    NETDEV(.path = "wire.ce_ratio", .type = VT_FLOAT, .mtype = MT_GAUGE,
		   .metric = "roce_wire_ce_ratio",
		   .help = "Share of the RoCE data packets the wire collector saw "
			   "with ECN CE over the last 5 to 10 minutes."),

	/* rdma_port */
	[F_PORT_NETDEV] = PORT(.path = "netdev_name", .type = VT_STR, .config = true),
	[F_PORT_STATE] =
	    PORT(.path = "state", .type = VT_STR, .config = true, .mtype = MT_INFO,
		 .metric = "roce_rdma_port_state_info", .label = "state",
		 .help = "RDMA port state (DOWN, INIT, ARMED, ACTIVE); value is always 1."),
	[F_PORT_PHYS_STATE] =
	    PORT(.path = "phys_state", .type = VT_STR, .config = true, .mtype = MT_INFO,
		 .metric = "roce_rdma_port_phys_state_info", .label = "phys_state",
		 .help = "RDMA port physical state (LinkUp, Disabled, Polling, ...); value is "
			 "always 1."),
	[F_PORT_RATE] =
	    PORT(.path = "rate", .type = VT_INT, .config = true, .mtype = MT_GAUGE,
		 .metric = "roce_rdma_port_rate_bytes", .scale = 125000.0,
		 .help = "RDMA port rate in bytes per second (the field itself is in Mb/s)."),
	[F_PORT_LINK_LAYER] =
	    PORT(.path = "link_layer", .type = VT_STR, .config = true, .mtype = MT_INFO,
		 .metric = "roce_rdma_port_info", .label = "link_layer",
		 .help = "RDMA port link layer, node GUID and firmware; value is always 1."),
	[F_PORT_NODE_GUID] =
	    PORT(.path = "node_guid", .type = VT_STR, .config = true, .mtype = MT_INFO,
		 .metric = "roce_rdma_port_info", .label = "node_guid"),
	[F_PORT_FW] = PORT(.path = "fw", .type = VT_STR, .config = true, .mtype = MT_INFO,
			   .metric = "roce_rdma_port_info", .label = "firmware"),
	[F_PORT_ACTIVE_MTU] = PORT(.path = "active_mtu", .type = VT_INT, .config = true,
				   .mtype = MT_GAUGE, .metric = "roce_rdma_active_mtu_bytes",
				   .help = "RoCE active MTU in bytes (ibv_query_port active_mtu)."),
	[F_PORT_MAX_MTU] =
	    PORT(.path = "max_mtu", .type = VT_INT, .config = true, .mtype = MT_GAUGE,
		 .metric = "roce_rdma_max_mtu_bytes",
		 .help = "Largest MTU the RDMA port supports in bytes (ibv_query_port max_mtu)."),
	[F_PORT_GIDS] =
	    PORT(.path = "gids", .type = VT_GIDS, .config = true, .mtype = MT_INFO,
		 .metric = "roce_rdma_gid_info",
		 .help = "One series per populated GID table entry; value is always 1."),
	[F_PORT_ROCEV2_IPV4_GID_INDEX] =
	    PORT(.path = "gid.rocev2_ipv4_index", .type = VT_INT, .config = true, .mtype = MT_GAUGE,
		 .metric = "roce_rdma_rocev2_ipv4_gid_index",
		 .help = "Index of the IPv4-mapped RoCE v2 GID of the port's netdev "
			 "(what NCCL_IB_GID_INDEX must be)."),
	[F_PORT_ROCE_TOS] =
	    PORT(.path = "rdma_cm.default_roce_tos", .type = VT_INT, .config = true,
		 .mtype = MT_GAUGE, .metric = "roce_rdma_cm_default_tos",
		 .help = "rdma_cm default ToS byte for RoCE connections (DSCP << 2 | ECN)."),
	[F_PORT_ROCE_MODE] =
	    PORT(.path = "rdma_cm.default_roce_mode", .type = VT_STR, .config = true,
		 .mtype = MT_INFO, .metric = "roce_rdma_cm_default_mode_info", .label = "mode",
		 .help = "rdma_cm default RoCE mode; value is always 1."),
	[F_PORT_TRAFFIC_CLASS] =
	    PORT(.path = "traffic_class", .type = VT_INT, .config = true, .mtype = MT_GAUGE,
		 .metric = "roce_rdma_default_traffic_class",
		 .help = "Default verbs traffic class (tc/1/traffic_class, MLNX_OFED)."),
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

/* mlx5: drivers/infiniband/hw/mlx5/counters.c; rxe: drivers/infiniband/sw/rxe/rxe_hw_counters.c */
const struct counter_desc hw_counter_descs[] = {
	{ "out_of_sequence", "roce_rdma_out_of_sequence_total",
	  "Packets received out of sequence (mlx5): a sign of loss on the fabric." },
	{ "packet_seq_err", "roce_rdma_packet_seq_errors_total",
	  "NAK sequence errors received (mlx5): the peer saw a gap." },
	{ "local_ack_timeout_err", "roce_rdma_local_ack_timeout_errors_total",
	  "Requests whose ACK timer expired (mlx5): packets or ACKs lost, retransmitted." },
	{ "duplicate_request", "roce_rdma_duplicate_requests_total",
	  "Duplicate requests received (retransmissions seen by the responder)." },
	{ "rnr_nak_retry_err", "roce_rdma_rnr_nak_retry_errors_total",
	  "RNR NAKs received (responder had no receive buffer posted)." },
	{ "implied_nak_seq_err", "roce_rdma_implied_nak_seq_errors_total",
	  "Implied NAK sequence errors (mlx5)." },
	{ "out_of_buffer", "roce_rdma_out_of_buffer_total",
	  "Packets dropped for lack of a posted receive WQE (mlx5)." },
	{ "req_transport_retries_exceeded", "roce_rdma_transport_retries_exceeded_total",
	  "Requests that exhausted their transport retries (IBV_WC_RETRY_EXC_ERR)." },
	{ "req_rnr_retries_exceeded", "roce_rdma_rnr_retries_exceeded_total",
	  "Requests that exhausted their RNR retries." },
	{ "np_cnp_sent", "roce_rdma_np_cnp_sent_total",
	  "CNPs sent by this port as DCQCN notification point." },
	{ "np_ecn_marked_roce_packets", "roce_rdma_np_ecn_marked_packets_total",
	  "RoCE packets received with ECN CE (notification point)." },
	{ "rp_cnp_handled", "roce_rdma_rp_cnp_handled_total",
	  "CNPs handled by this port as DCQCN reaction point (rate reduced)." },
	{ "rp_cnp_ignored", "roce_rdma_rp_cnp_ignored_total",
	  "CNPs received and ignored by the reaction point." },
	{ "roce_adp_retrans", "roce_rdma_adaptive_retransmissions_total",
	  "Adaptive retransmissions (mlx5)." },
	{ "roce_adp_retrans_to", "roce_rdma_adaptive_retransmission_timeouts_total",
	  "Adaptive retransmission timeouts (mlx5)." },
	{ "roce_slow_restart", "roce_rdma_slow_restarts_total", "Slow restarts (mlx5)." },
	{ "roce_slow_restart_cnps", "roce_rdma_slow_restart_cnps_total",
	  "CNPs generated by slow restart (mlx5)." },
	{ "roce_slow_restart_trans", "roce_rdma_slow_restart_transitions_total",
	  "Transitions into slow restart (mlx5)." },
	/* soft-RoCE (rxe) */
	{ "sent_pkts", "roce_rdma_sent_packets_total", "Packets sent (rxe)." },
	{ "rcvd_pkts", "roce_rdma_received_packets_total", "Packets received (rxe)." },
	{ "out_of_seq_request", "roce_rdma_out_of_sequence_requests_total",
	  "Requests received out of sequence (rxe)." },
	{ "rcvd_seq_err", "roce_rdma_received_sequence_errors_total",
	  "Sequence-error NAKs received (rxe)." },
	{ "retry_exceeded_err", "roce_rdma_retry_exceeded_errors_total",
	  "Requests that exhausted their retries (rxe)." },
	{ "retry_rnr_exceeded_err", "roce_rdma_rnr_retry_exceeded_errors_total",
	  "Requests that exhausted their RNR retries (rxe)." },
	{ "completer_retry_err", "roce_rdma_completer_retries_total",
	  "Retransmissions started by the completer after a timeout (rxe)." },
	/* mlx5 error and request counters (mlx5 counters.c extended_err_cnts, basic_q_cnts) */
	{ "req_cqe_error", "roce_rdma_requester_cqe_errors_total",
	  "Requester work completions with an error (mlx5)." },
	{ "req_cqe_flush_error", "roce_rdma_requester_cqe_flush_errors_total",
	  "Requester work completions flushed in error (mlx5)." },
	{ "resp_cqe_error", "roce_rdma_responder_cqe_errors_total",
	  "Responder work completions with an error (mlx5)." },
	{ "resp_cqe_flush_error", "roce_rdma_responder_cqe_flush_errors_total",
	  "Responder work completions flushed in error (mlx5)." },
	{ "req_remote_access_errors", "roce_rdma_requester_remote_access_errors_total",
	  "Remote access errors the requester received (bad rkey or permission) (mlx5)." },
	{ "resp_remote_access_errors", "roce_rdma_responder_remote_access_errors_total",
	  "Remote access errors the responder detected (mlx5)." },
	{ "req_remote_invalid_request", "roce_rdma_requester_remote_invalid_requests_total",
	  "Remote invalid request errors the requester received (mlx5)." },
	{ "resp_local_length_error", "roce_rdma_responder_local_length_errors_total",
	  "Receives longer than the posted buffer (mlx5)." },
	{ "rx_write_requests", "roce_rdma_received_write_requests_total",
	  "RDMA WRITE requests received (mlx5)." },
	{ "rx_read_requests", "roce_rdma_received_read_requests_total",
	  "RDMA READ requests received (mlx5)." },
	{ "rx_atomic_requests", "roce_rdma_received_atomic_requests_total",
	  "Atomic requests received (mlx5)." },
	{ "rx_icrc_encapsulated", "roce_rdma_received_icrc_errors_total",
	  "RoCE packets received with an ICRC error (mlx5 rx_icrc_encapsulated)." },
};
const size_t n_hw_counter_descs = sizeof(hw_counter_descs) / sizeof(hw_counter_descs[0]);

/* Classic IB port counters (counters/): data counters count 4-byte words. */
const struct counter_desc port_counter_descs[] = {
	{ "port_xmit_data", "roce_rdma_port_transmit_bytes_total",
	  "Bytes transmitted by the RDMA port (port_xmit_data x 4).", 4 },
	{ "port_rcv_data", "roce_rdma_port_receive_bytes_total",
	  "Bytes received by the RDMA port (port_rcv_data x 4).", 4 },
	{ "port_xmit_packets", "roce_rdma_port_transmit_packets_total",
	  "Packets transmitted by the RDMA port." },
	{ "port_rcv_packets", "roce_rdma_port_receive_packets_total",
	  "Packets received by the RDMA port." },
	{ "port_xmit_discards", "roce_rdma_port_transmit_discards_total",
	  "Packets the RDMA port discarded on transmit." },
	{ "port_rcv_errors", "roce_rdma_port_receive_errors_total",
	  "Packets received with errors." },
	{ "port_xmit_wait", "roce_rdma_port_transmit_wait_total",
	  "Ticks the port had data to send but could not (flow control)." },
	{ "symbol_error", "roce_rdma_port_symbol_errors_total", "Symbol errors on the link." },
	{ "link_downed", "roce_rdma_port_link_downed_total",
	  "Times the link went down (link flaps)." },
	{ "link_error_recovery", "roce_rdma_port_link_error_recovery_total",
	  "Successful link error recoveries." },
	{ "port_rcv_constraint_errors", "roce_rdma_port_receive_constraint_errors_total",
	  "Packets received and discarded for partition or raw-packet constraints." },
	{ "port_xmit_constraint_errors", "roce_rdma_port_transmit_constraint_errors_total",
	  "Packets not transmitted for partition or raw-packet constraints." },
	{ "port_rcv_remote_physical_errors", "roce_rdma_port_receive_remote_physical_errors_total",
	  "Packets received marked with the EBP delimiter (a physical error upstream)." },
	{ "port_rcv_switch_relay_errors", "roce_rdma_port_receive_switch_relay_errors_total",
	  "Packets received that could not be forwarded." },
	{ "unicast_rcv_packets", "roce_rdma_port_unicast_receive_packets_total",
	  "Unicast packets received by the RDMA port." },
	{ "unicast_xmit_packets", "roce_rdma_port_unicast_transmit_packets_total",
	  "Unicast packets transmitted by the RDMA port." },
	{ "multicast_rcv_packets", "roce_rdma_port_multicast_receive_packets_total",
	  "Multicast packets received by the RDMA port." },
	{ "multicast_xmit_packets", "roce_rdma_port_multicast_transmit_packets_total",
	  "Multicast packets transmitted by the RDMA port." },
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
