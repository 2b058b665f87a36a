// SPDX-License-Identifier: MIT
/*
 * The host collector over fixture roots: tests/fixtures/sysfs/pci-topo (two
 * sockets; GPU0 and mlx5_0 under one PCIe switch, GPU1 two switches below
 * mlx5_1's, mlx5_2 on its own root port, an NVSwitch and a BMC VGA that are
 * not GPUs, and rxe0 without a PCI function) and tests/fixtures/procfs/
 * gpu-node.  The expected matrix is NCCL's classification of that tree.
 *
 * argv[1]: tests/fixtures
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collector.h"
#include "helpers.h"

extern const struct collector host_collector;

static const char *fixtures;

struct run {
	struct rw_config cfg;
	struct collector_ctx cc;
	struct node_model m;
};

static const char *devroot; /* --devfs-root of the next run_once(); NULL: the default */

static void run_once(struct run *r, const char *sysroot, const char *procroot)
{
	config_defaults(&r->cfg);
	r->cfg.sysfs_root = sysroot;
	r->cfg.procfs_root = procroot;
	if (devroot)
		r->cfg.devfs_root = devroot;
	memset(&r->cc, 0, sizeof(r->cc));
	r->cc.cfg = &r->cfg;
	r->cc.idx = collector_index("host");
	model_init(&r->m);
	assert_int_equal(host_collector.init(&r->cc), 0);
	assert_int_equal(host_collector.collect(&r->cc, &r->m, COLLECT_SLOW | COLLECT_FAST), 0);
}

/* As run_once(), with the RDMA ports the rdma collector would have made first. */
static void run_with_ports(struct run *r, const char *sysroot, const char *procroot)
{
	config_defaults(&r->cfg);
	r->cfg.sysfs_root = sysroot;
	r->cfg.procfs_root = procroot;
	memset(&r->cc, 0, sizeof(r->cc));
	r->cc.cfg = &r->cfg;
	r->cc.idx = collector_index("host");
	model_init(&r->m);
	assert_non_null(model_add_port(&r->m, "mlx5_0", 1));
	assert_non_null(model_add_port(&r->m, "mlx5_1", 1));
	assert_non_null(model_add_port(&r->m, "rxe0", 1));
	assert_int_equal(host_collector.init(&r->cc), 0);
	assert_int_equal(host_collector.collect(&r->cc, &r->m, COLLECT_SLOW | COLLECT_FAST), 0);
}

static void run_done(struct run *r)
{
	host_collector.fini(&r->cc);
	model_free(&r->m);
}

static const char *path_of(struct node_model *m, const char *gpu, const char *nic)
{
	static const char *const names[] = { "?", "PIX", "PXB", "PHB", "SYS" };
	const struct pci_pairs *pp = m->node.f[F_NODE_GPU_NIC_PATHS].v.pairs;

	for (size_t i = 0; i < pp->n; i++)
		if (!strcmp(pp->e[i].gpu, gpu) && !strcmp(pp->e[i].nic, nic))
			return names[pp->e[i].path];
	return "missing";
}

static void copy_tree(const char *rel, char *out, size_t size)
{
	char tmpl[] = "/tmp/rocewatch-host.XXXXXX", cmd[PATH_MAX * 2 + 32];

	assert_non_null(mkdtemp(tmpl));
	snprintf(out, size, "%s/t", tmpl);
	snprintf(cmd, sizeof(cmd), "cp -a '%s/%s' '%s'", fixtures, rel, out);
	assert_int_equal(system(cmd), 0);
}

static void remove_tree(const char *path)
{
	char cmd[PATH_MAX + 64];

	snprintf(cmd, sizeof(cmd), "rm -rf \"$(dirname '%s')\"", path);
	assert_int_equal(system(cmd), 0);
}

static void rewrite(const char *root, const char *rel, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void topology_matrix(void **state)
{
	char sys[PATH_MAX], proc[PATH_MAX];
	struct run r;
	struct object *n = &r.m.node;

	(void)state;
	snprintf(sys, sizeof(sys), "%s/sysfs/pci-topo", fixtures);
	snprintf(proc, sizeof(proc), "%s/procfs/gpu-node", fixtures);
	run_once(&r, sys, proc);

	/* the NVSwitch (class 0x0680) and the BMC's VGA (vendor 0x1a03) are not GPUs */
	assert_int_equal(n->f[F_NODE_GPUS].v.i, 2);
	assert_true(field_present(n, F_NODE_GPU_NIC_PATHS));
	/* 2 GPUs x 3 PCI NICs; rxe0 has no PCI function and is not in the matrix */
	assert_int_equal(n->pairs.n, 6);
	/*            mlx5_0  mlx5_1  mlx5_2
	 *   GPU0     PIX     SYS     PHB
	 *   GPU1     SYS     PXB     SYS      */
	assert_string_equal(path_of(&r.m, "0000:03:00.0", "mlx5_0"), "PIX");
	assert_string_equal(path_of(&r.m, "0000:03:00.0", "mlx5_1"), "SYS");
	assert_string_equal(path_of(&r.m, "0000:03:00.0", "mlx5_2"), "PHB");
	assert_string_equal(path_of(&r.m, "0000:85:00.0", "mlx5_0"), "SYS");
	assert_string_equal(path_of(&r.m, "0000:85:00.0", "mlx5_1"), "PXB");
	assert_string_equal(path_of(&r.m, "0000:85:00.0", "mlx5_2"), "SYS");
	assert_string_equal(path_of(&r.m, "0000:03:00.0", "rxe0"), "missing");
	/* sorted: GPU by address, NIC by name */
	assert_string_equal(n->pairs.e[0].gpu, "0000:03:00.0");
	assert_string_equal(n->pairs.e[0].nic, "mlx5_0");
	assert_string_equal(n->pairs.e[5].gpu, "0000:85:00.0");
	assert_string_equal(n->pairs.e[5].nic, "mlx5_2");
	assert_int_equal(n->f[F_NODE_GPUS_WITHOUT_NEAR_NIC].v.i, 0);

	/* procfs facts */
	assert_string_equal(n->f[F_NODE_KERNEL].v.s, "6.1.0-27-amd64");
	assert_true(field_present(n, F_NODE_MEMLOCK_UNLIMITED));
	assert_true(n->f[F_NODE_MEMLOCK_UNLIMITED].v.i);
	assert_int_equal(n->f[F_NODE_MEMLOCK].state, ABS_UNSUPPORTED);
	assert_true(n->f[F_NODE_PEERMEM].v.i);
	assert_true(n->f[F_NODE_DMABUF].v.i);
	run_done(&r);
}

static void far_gpu_and_sockets(void **state)
{
	char sys[PATH_MAX], proc[PATH_MAX], path[PATH_MAX * 2];
	struct run r;

	(void)state;
	snprintf(proc, sizeof(proc), "%s/procfs/gpu-node", fixtures);
	copy_tree("sysfs/pci-topo", sys, sizeof(sys));
	/* without mlx5_1, GPU1's nearest NIC is across the socket link */
	snprintf(path, sizeof(path), "%s/class/infiniband/mlx5_1", sys);
	assert_int_equal(unlink(path), 0);
	run_once(&r, sys, proc);
	assert_int_equal(r.m.node.pairs.n, 4);
	assert_int_equal(r.m.node.f[F_NODE_GPUS_WITHOUT_NEAR_NIC].v.i, 1);
	run_done(&r);

	/* numa_node -1 everywhere (NUMA off): NCCL counts it as node 0, so SYS becomes PHB */
	{
		char cmd[PATH_MAX * 2];

		snprintf(
		    cmd, sizeof(cmd),
		    "find '%s/devices' -name numa_node -exec sh -c 'echo -1 > \"$1\"' _ {} \\;",
		    sys);
		assert_int_equal(system(cmd), 0);
	}
	run_once(&r, sys, proc);
	assert_string_equal(path_of(&r.m, "0000:03:00.0", "mlx5_2"), "PHB");
	assert_string_equal(path_of(&r.m, "0000:85:00.0", "mlx5_0"), "PHB");
	assert_string_equal(path_of(&r.m, "0000:03:00.0", "mlx5_0"), "PIX");
	run_done(&r);
	remove_tree(sys);
}

/* Broadcom PEX switches that show as two levels are one switch to NCCL. */
static void broadcom_switch_flattened(void **state)
{
	char sys[PATH_MAX], proc[PATH_MAX];
	static const char *const a = "devices/pci0000:80/0000:80:01.0/0000:81:00.0";
	static const char *const b =
	    "devices/pci0000:80/0000:80:01.0/0000:81:00.0/0000:82:00.0/0000:83:00.0";
	char rel[PATH_MAX];
	struct run r;

	(void)state;
	snprintf(proc, sizeof(proc), "%s/procfs/gpu-node", fixtures);
	copy_tree("sysfs/pci-topo", sys, sizeof(sys));
	/* Gen5 PEX89xxx: 1000:c030, subsystem 1000:0xxx on the top level, 1000:1xxx below */
	for (int lvl = 0; lvl < 2; lvl++) {
		const char *sw = lvl ? b : a;

		snprintf(rel, sizeof(rel), "%s/vendor", sw);
		rewrite(sys, rel, "0x1000\n");
		snprintf(rel, sizeof(rel), "%s/device", sw);
		rewrite(sys, rel, "0xc030\n");
		snprintf(rel, sizeof(rel), "%s/subsystem_vendor", sw);
		rewrite(sys, rel, "0x1000\n");
		snprintf(rel, sizeof(rel), "%s/subsystem_device", sw);
		rewrite(sys, rel, lvl ? "0x1100\n" : "0x0100\n");
	}
	run_once(&r, sys, proc);
	assert_string_equal(path_of(&r.m, "0000:85:00.0", "mlx5_1"), "PIX");
	run_done(&r);

	/* a Gen5 switch under a different device (not its lower level) stays a switch */
	snprintf(rel, sizeof(rel), "%s/subsystem_device", b);
	rewrite(sys, rel, "0x0100\n");
	run_once(&r, sys, proc);
	assert_string_equal(path_of(&r.m, "0000:85:00.0", "mlx5_1"), "PXB");
	run_done(&r);
	remove_tree(sys);
}

static void procfs_variants(void **state)
{
	char sys[PATH_MAX], proc[PATH_MAX], path[PATH_MAX * 2];
	struct run r;

	(void)state;
	snprintf(sys, sizeof(sys), "%s/sysfs/pci-topo", fixtures);
	copy_tree("procfs/gpu-node", proc, sizeof(proc));

	/* a finite memlock limit: the number, and unlimited = 0 */
	rewrite(proc, "self/limits",
		"Limit                     Soft Limit           Hard Limit           Units     \n"
		"Max stack size            8388608              unlimited            bytes     \n"
		"Max locked memory         67108864             67108864             bytes     \n");
	/* nv_peer_mem gone, and kallsyms without the dma-buf import */
	rewrite(proc, "modules", "mlx5_ib 483328 0 - Live 0x0000000000000000\n");
	rewrite(proc, "kallsyms",
		"0000000000000000 T startup_64\n"
		"0000000000000000 T ib_umem_dmabuf_get_pinned_with_dma_device\t[x]\n");
	snprintf(path, sizeof(path), "%s/../sysfs-copy", proc);
	{
		char cmd[PATH_MAX * 6];

		/* and no module directory for it in sysfs either */
		snprintf(cmd, sizeof(cmd), "cp -a '%s' '%s' && rm -r '%s/module/nvidia_peermem'",
			 sys, path, path);
		assert_int_equal(system(cmd), 0);
	}
	run_once(&r, path, proc);
	assert_false(r.m.node.f[F_NODE_MEMLOCK_UNLIMITED].v.i);
	assert_int_equal(r.m.node.f[F_NODE_MEMLOCK].v.i, 67108864);
	assert_true(field_present(&r.m.node, F_NODE_PEERMEM));
	assert_false(r.m.node.f[F_NODE_PEERMEM].v.i);
	assert_true(field_present(&r.m.node, F_NODE_DMABUF));
	assert_false(r.m.node.f[F_NODE_DMABUF].v.i);
	run_done(&r);

	/* unreadable sources give reasons, not zeros */
	snprintf(path, sizeof(path), "%s/kallsyms", proc);
	assert_int_equal(unlink(path), 0);
	snprintf(path, sizeof(path), "%s/self/limits", proc);
	assert_int_equal(unlink(path), 0);
	snprintf(path, sizeof(path), "%s/sys/kernel/osrelease", proc);
	assert_int_equal(unlink(path), 0);
	run_once(&r, sys, proc);
	assert_int_equal(r.m.node.f[F_NODE_DMABUF].state, ABS_UNSUPPORTED);
	assert_int_equal(r.m.node.f[F_NODE_MEMLOCK].state, ABS_UNSUPPORTED);
	assert_int_equal(r.m.node.f[F_NODE_KERNEL].state, ABS_UNSUPPORTED);
	run_done(&r);
	remove_tree(proc);
}

/*
 * procfs/slurm-node: rocewatch runs with a 64 KiB limit and no capabilities (a
 * hardened unit), slurmd (PID 4242) with an unlimited one: the memlock facts are
 * slurmd's, the limit Slurm jobs inherit.  devfs/pod: two uverbs nodes (and the
 * rdma_cm and issm nodes, which are not verbs devices).
 */
static void jobs_memlock_and_pod_facts(void **state)
{
	char sys[PATH_MAX], proc[PATH_MAX], dev[PATH_MAX], path[PATH_MAX * 2];
	struct run r;
	struct object *n = &r.m.node;

	(void)state;
	snprintf(sys, sizeof(sys), "%s/sysfs/pci-topo", fixtures);
	snprintf(dev, sizeof(dev), "%s/devfs/pod", fixtures);
	copy_tree("procfs/slurm-node", proc, sizeof(proc));
	devroot = dev;
	run_once(&r, sys, proc);
	assert_string_equal(n->f[F_NODE_MEMLOCK_SOURCE].v.s, "slurmd");
	assert_true(n->f[F_NODE_MEMLOCK_UNLIMITED].v.i);
	assert_int_equal(n->f[F_NODE_MEMLOCK].state, ABS_UNSUPPORTED);
	assert_true(field_present(n, F_NODE_CAP_IPC_LOCK));
	assert_false(n->f[F_NODE_CAP_IPC_LOCK].v.i);
	assert_int_equal(n->f[F_NODE_UVERBS_DEVICES].v.i, 2);
	/*
	 * Out of descriptors: whose limit it is cannot be read, so it is unknown,
	 * not this process's 64 KiB in slurmd's place (a false memlock alert)
	 */
	{
		struct fds_held held;

		assert_true(fds_exhaust(&held, 0) > 0);
		assert_int_equal(host_collector.collect(&r.cc, &r.m, COLLECT_SLOW), 0);
		fds_restore(&held);
		assert_int_equal(n->f[F_NODE_MEMLOCK_UNLIMITED].state, ABS_ERROR);
		assert_int_equal(n->f[F_NODE_MEMLOCK_UNLIMITED].err, EMFILE);
		assert_int_equal(n->f[F_NODE_MEMLOCK].state, ABS_ERROR);
		assert_int_equal(host_collector.collect(&r.cc, &r.m, COLLECT_SLOW), 0);
		assert_string_equal(n->f[F_NODE_MEMLOCK_SOURCE].v.s, "slurmd");
		assert_true(n->f[F_NODE_MEMLOCK_UNLIMITED].v.i);
	}
	run_done(&r);
	/*
	 * The same on this machine's /proc, where our own limit needs no
	 * descriptor (getrlimit): a /proc that cannot be listed is no "no slurmd"
	 */
	{
		struct fds_held held;

		run_once(&r, sys, "/proc");
		assert_true(fds_exhaust(&held, 0) > 0);
		assert_int_equal(host_collector.collect(&r.cc, &r.m, COLLECT_SLOW), 0);
		fds_restore(&held);
		assert_int_equal(n->f[F_NODE_MEMLOCK_UNLIMITED].state, ABS_ERROR);
		assert_int_equal(n->f[F_NODE_MEMLOCK].state, ABS_ERROR);
		run_done(&r);
	}

	/* slurmd gone: the process's own 64 KiB */
	snprintf(path, sizeof(path), "rm -r '%s/4242'", proc);
	assert_int_equal(system(path), 0);
	run_once(&r, sys, proc);
	assert_string_equal(n->f[F_NODE_MEMLOCK_SOURCE].v.s, "self");
	assert_false(n->f[F_NODE_MEMLOCK_UNLIMITED].v.i);
	assert_int_equal(n->f[F_NODE_MEMLOCK].v.i, 65536);
	run_done(&r);

	/* no status file: a reason, not "no capability"; no /dev/infiniband: 0 nodes */
	snprintf(path, sizeof(path), "%s/self/status", proc);
	assert_int_equal(unlink(path), 0);
	devroot = proc; /* a directory without infiniband/ */
	run_once(&r, sys, proc);
	assert_int_equal(n->f[F_NODE_CAP_IPC_LOCK].state, ABS_UNSUPPORTED);
	assert_int_equal(n->f[F_NODE_UVERBS_DEVICES].v.i, 0);
	assert_true(field_present(n, F_NODE_UVERBS_DEVICES));
	run_done(&r);
	devroot = NULL;
	remove_tree(proc);

	/* gpu-node: a container given IPC_LOCK on top of the runtime's default set */
	snprintf(proc, sizeof(proc), "%s/procfs/gpu-node", fixtures);
	run_once(&r, sys, proc);
	assert_true(n->f[F_NODE_CAP_IPC_LOCK].v.i);
	run_done(&r);
}

/*
 * tests/fixtures/sysfs/pcie-* (gen-pcie.py): an H100 and a ConnectX-6 Dx below one PLX
 * switch, the root port above it redirecting (as Linux sets it with an IOMMU on).
 */
static void pcie_healthy(void **state)
{
	char sys[PATH_MAX], proc[PATH_MAX];
	struct run r;
	struct object *n = &r.m.node, *p;

	(void)state;
	snprintf(sys, sizeof(sys), "%s/sysfs/pcie-healthy", fixtures);
	snprintf(proc, sizeof(proc), "%s/procfs/gpu-node", fixtures);
	run_with_ports(&r, sys, proc);
	assert_int_equal(n->f[F_NODE_GPUS].v.i, 1);
	assert_string_equal(path_of(&r.m, "0000:19:00.0", "mlx5_0"), "PIX");
	/* the root port's redirect is above the switch: P2P never reaches it */
	assert_true(field_present(n, F_NODE_PCIE_ACS_REDIRECT_GPUS));
	assert_int_equal(n->f[F_NODE_PCIE_ACS_REDIRECT_GPUS].v.i, 0);
	assert_int_equal(n->f[F_NODE_PCIE_ACS_REDIRECT_BRIDGE].state, ABS_UNSUPPORTED);
	/* the GPU idles at 2.5 GT/s of 32 at full width: not degraded */
	assert_int_equal(n->f[F_NODE_GPUS_PCIE_LINK_DEGRADED].v.i, 0);
	assert_int_equal(n->f[F_NODE_IOMMU_TRANSLATED_DEVICES].v.i, 0);
	assert_string_equal(n->f[F_NODE_IOMMU_CMDLINE].v.s, "intel_iommu=on iommu=pt");
	p = model_port(&r.m, "mlx5_0", 1);
	assert_true(p->f[F_PORT_PCIE_LINK_SPEED].v.d == 16.0);
	assert_true(p->f[F_PORT_PCIE_MAX_LINK_SPEED].v.d == 16.0);
	assert_int_equal(p->f[F_PORT_PCIE_LINK_WIDTH].v.i, 16);
	assert_int_equal(p->f[F_PORT_PCIE_MAX_LINK_WIDTH].v.i, 16);
	assert_string_equal(p->f[F_PORT_IOMMU_TYPE].v.s, "identity");
	/* rxe0 is not in this tree; a port without a PCI function has no link to judge */
	p = model_port(&r.m, "rxe0", 1);
	assert_int_equal(p->f[F_PORT_PCIE_LINK_WIDTH].state, ABS_UNSUPPORTED);
	assert_int_equal(p->f[F_PORT_IOMMU_TYPE].state, ABS_UNSUPPORTED);
	run_done(&r);
}

static void pcie_faults(void **state)
{
	char sys[PATH_MAX], proc[PATH_MAX], path[PATH_MAX * 2];
	struct run r;
	struct object *n = &r.m.node, *p;

	(void)state;
	snprintf(proc, sizeof(proc), "%s/procfs/gpu-node", fixtures);
	/* ACS P2P Request Redirect on the NIC's downstream port */
	snprintf(sys, sizeof(sys), "%s/sysfs/pcie-acs", fixtures);
	run_with_ports(&r, sys, proc);
	assert_int_equal(n->f[F_NODE_PCIE_ACS_REDIRECT_GPUS].v.i, 1);
	assert_string_equal(n->f[F_NODE_PCIE_ACS_REDIRECT_BRIDGE].v.s, "0000:18:01.0");
	assert_int_equal(n->f[F_NODE_IOMMU_TRANSLATED_DEVICES].v.i, 0);
	run_done(&r);

	/* IOMMU groups translating (DMA-FQ), the command line without iommu=pt */
	snprintf(sys, sizeof(sys), "%s/sysfs/pcie-iommu-dma", fixtures);
	snprintf(proc, sizeof(proc), "%s/procfs/gpu-node-iommu-dma", fixtures);
	run_with_ports(&r, sys, proc);
	assert_int_equal(n->f[F_NODE_IOMMU_TRANSLATED_DEVICES].v.i, 3);
	assert_string_equal(n->f[F_NODE_IOMMU_CMDLINE].v.s, "intel_iommu=on");
	assert_string_equal(model_port(&r.m, "mlx5_1", 1)->f[F_PORT_IOMMU_TYPE].v.s, "DMA-FQ");
	assert_int_equal(n->f[F_NODE_PCIE_ACS_REDIRECT_GPUS].v.i, 0);
	run_done(&r);

	/* the NIC trained at x8 of x16 */
	snprintf(sys, sizeof(sys), "%s/sysfs/pcie-nic-x8", fixtures);
	snprintf(proc, sizeof(proc), "%s/procfs/gpu-node", fixtures);
	run_with_ports(&r, sys, proc);
	p = model_port(&r.m, "mlx5_0", 1);
	assert_int_equal(p->f[F_PORT_PCIE_LINK_WIDTH].v.i, 8);
	assert_int_equal(p->f[F_PORT_PCIE_MAX_LINK_WIDTH].v.i, 16);
	assert_int_equal(n->f[F_NODE_GPUS_PCIE_LINK_DEGRADED].v.i, 0);
	run_done(&r);

	/* unprivileged: the kernel gives 64 bytes of config space, the ACS fact needs root */
	copy_tree("sysfs/pcie-healthy", sys, sizeof(sys));
	snprintf(path, sizeof(path),
		 "%s/devices/pci0000:16/0000:16:02.0/0000:17:00.0/0000:18:01.0/config", sys);
	assert_int_equal(truncate(path, 64), 0);
	/* the GPU at x8 of x16, a NIC link the kernel cannot name, no IOMMU group at all */
	rewrite(sys,
		"devices/pci0000:16/0000:16:02.0/0000:17:00.0/0000:18:00.0/0000:19:00.0/"
		"current_link_width",
		"8\n");
	rewrite(sys,
		"devices/pci0000:16/0000:16:02.0/0000:17:00.0/0000:18:01.0/0000:1a:00.0/"
		"current_link_speed",
		"Unknown\n");
	snprintf(path, sizeof(path),
		 "%s/devices/pci0000:16/0000:16:02.0/0000:17:00.0/0000:18:01.0/0000:1a:00.1/"
		 "iommu_group",
		 sys);
	assert_int_equal(unlink(path), 0);
	run_with_ports(&r, sys, proc);
	assert_int_equal(n->f[F_NODE_PCIE_ACS_REDIRECT_GPUS].state, ABS_PERMISSION);
	assert_int_equal(n->f[F_NODE_PCIE_ACS_REDIRECT_GPUS].err, EPERM);
	assert_int_equal(n->f[F_NODE_GPUS_PCIE_LINK_DEGRADED].v.i, 1);
	p = model_port(&r.m, "mlx5_0", 1);
	assert_int_equal(p->f[F_PORT_PCIE_LINK_SPEED].state, ABS_UNSUPPORTED);
	assert_true(field_present(p, F_PORT_PCIE_MAX_LINK_SPEED));
	assert_string_equal(model_port(&r.m, "mlx5_1", 1)->f[F_PORT_IOMMU_TYPE].v.s, "none");
	run_done(&r);

	/* a conventional (256-byte) config space has no extended capabilities: no ACS */
	snprintf(path, sizeof(path),
		 "%s/devices/pci0000:16/0000:16:02.0/0000:17:00.0/0000:18:01.0/config", sys);
	assert_int_equal(truncate(path, 256), 0);
	run_with_ports(&r, sys, proc);
	assert_int_equal(n->f[F_NODE_PCIE_ACS_REDIRECT_GPUS].v.i, 0);
	run_done(&r);

	remove_tree(sys);

	/* no cmdline in procfs: a reason, not an empty option list */
	snprintf(sys, sizeof(sys), "%s/sysfs/pcie-healthy", fixtures);
	copy_tree("procfs/gpu-node", proc, sizeof(proc));
	snprintf(path, sizeof(path), "%s/cmdline", proc);
	assert_int_equal(unlink(path), 0);
	run_with_ports(&r, sys, proc);
	assert_int_equal(n->f[F_NODE_IOMMU_CMDLINE].state, ABS_UNSUPPORTED);
	assert_int_equal(n->f[F_NODE_IOMMU_TRANSLATED_DEVICES].v.i, 0);
	run_done(&r);
	remove_tree(proc);

	/* mlx5-roce has NICs and no GPU: nothing to judge, absent rather than 0 */
	snprintf(sys, sizeof(sys), "%s/sysfs/mlx5-roce", fixtures);
	snprintf(proc, sizeof(proc), "%s/procfs/gpu-node", fixtures);
	run_with_ports(&r, sys, proc);
	assert_int_equal(n->f[F_NODE_GPUS].v.i, 0);
	assert_int_equal(n->f[F_NODE_PCIE_ACS_REDIRECT_GPUS].state, ABS_UNSUPPORTED);
	assert_int_equal(n->f[F_NODE_GPUS_PCIE_LINK_DEGRADED].state, ABS_UNSUPPORTED);
	/* no iommu_group links in that tree: no IOMMU, so nothing translates */
	assert_int_equal(n->f[F_NODE_IOMMU_TRANSLATED_DEVICES].v.i, 0);
	assert_string_equal(model_port(&r.m, "mlx5_0", 1)->f[F_PORT_IOMMU_TYPE].v.s, "none");
	run_done(&r);
}

/* This machine: whatever it has, the collector succeeds and says where values came from. */
static void live_machine(void **state)
{
	struct run r;

	(void)state;
	run_once(&r, "/sys", "/proc");
	assert_true(field_present(&r.m.node, F_NODE_KERNEL));
	assert_true(field_present(&r.m.node, F_NODE_MEMLOCK_UNLIMITED));
	assert_true(field_present(&r.m.node, F_NODE_GPUS));
	assert_true(field_present(&r.m.node, F_NODE_GPU_NIC_PATHS));
	run_done(&r);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(topology_matrix),
		cmocka_unit_test(far_gpu_and_sockets),
		cmocka_unit_test(broadcom_switch_flattened),
		cmocka_unit_test(procfs_variants),
		cmocka_unit_test(jobs_memlock_and_pod_facts),
		cmocka_unit_test(pcie_healthy),
		cmocka_unit_test(pcie_faults),
		cmocka_unit_test(live_machine),
	};

	if (argc < 2) {
		fprintf(stderr, "usage: %s FIXTURES\n", argv[0]);
		return 2;
	}
	fixtures = argv[1];
	log_set_level(LOG_LVL_ERROR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
