// SPDX-License-Identifier: MIT
/*
 * host: facts of the node that break RDMA jobs without touching the fabric.
 *
 *   kernel       uname -r, or <procfs>/sys/kernel/osrelease with --procfs-root
 *   memlock      RLIMIT_MEMLOCK (soft) that RDMA jobs get.  ibv_reg_mr() pins
 *                pages against it (kernel umem.c).  On a Slurm node that is
 *                slurmd's: job steps are forked from it and keep its limit
 *                (with PropagateResourceLimitsExcept=MEMLOCK, which the memlock
 *                rule asks for), so the "Max locked memory" line of
 *                <procfs>/PID/limits of the process whose comm is slurmd is
 *                read (the file is world-readable).  Without slurmd it is
 *                this process's own: getrlimit(), or <procfs>/self/limits with
 *                --procfs-root — what a job gets when rocewatch check runs in
 *                its context (a prolog, an init container of its pod).
 *                memlock_source says which.  So the exporter's unit needs no
 *                LimitMEMLOCK= of its own that would hide the jobs' real one.
 *                Unlimited: memlock_unlimited = 1 and memlock absent
 *                ("unsupported": no finite limit to report), so a rule reads
 *                `memlock_unlimited || memlock >= X`.
 *   cap_ipc_lock CAP_IPC_LOCK (bit 14) in CapEff of <procfs>/self/status: lets
 *                a process pin memory beyond RLIMIT_MEMLOCK; a pod's
 *                containers get it from securityContext.capabilities.
 *   uverbs       entries uverbsN of <devfs>/infiniband: the device nodes
 *                libibverbs opens (a container sees them only when they are
 *                mounted in: the RDMA device plugin or a hostPath).
 *   peermem      nvidia_peermem (or the older nv_peer_mem) loaded: a line of
 *                <procfs>/modules, or <sysfs>/module/NAME.
 *   dmabuf       RDMA can import GPU memory as a DMA-BUF (GPUDirect without
 *                peermem): the RDMA core's dma-buf MR import,
 *                ib_umem_dmabuf_get (kernel >= 5.12, and distribution
 *                backports), is a symbol of the running kernel in
 *                <procfs>/kallsyms.  Checked by symbol rather than by version
 *                so backports count and kernels without the RDMA core do not.
 *                Reading kallsyms costs tens of milliseconds (the kernel
 *                formats 100k+ lines), so it is read only when an RDMA
 *                device exists — without one nothing can import a buffer:
 *                0 — and again only when <procfs>/modules changes.
 *   GPUs, NICs   NVIDIA (vendor 0x10de) display/3D controllers (class 0x0300xx,
 *                0x0302xx) under <sysfs>/bus/pci/devices, and the PCI
 *                functions behind <sysfs>/class/infiniband/DEV/device.
 *
 * GPU <-> NIC distance is classified as NCCL classifies it
 * (NVIDIA/nccl src/graph/topo.h, xml.cc, paths.cc):
 *   - NCCL climbs the sysfs PCI path two directories at a time ("Rewind two
 *     '/' and follow the upper PCI switch"), so a switch — upstream port and
 *     downstream port — is one node named by its upstream port, and stops at
 *     the root complex (a component that is not a BDF), where the node hangs
 *     off the CPU of its numa_node (-1 read as 0, as NCCL does);
 *   - Broadcom Gen4/Gen5 PEX switches that show as two levels are flattened
 *     into one (ncclTopoFlattenBcmSwitches);
 *   - PIX: both devices hang off the same switch node (at most one bridge);
 *     PXB: a common switch, reached through more than one (a PCI-PCI hop);
 *     PHB: no common switch, same CPU/NUMA node (through the host bridge);
 *     SYS: different NUMA nodes (across the inter-socket link).
 * nvidia-smi's NODE (host bridges of one NUMA node) is PHB for NCCL.
 *
 * PCIe ACS, link training and IOMMU of the same GPUs and NICs: host_pcie.c.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <fcntl.h>
#include <unistd.h>

#include "collector.h"
#include "host_int.h"
#include "util.h"

struct host_priv {
	bool proc_live; /* procfs_root is this machine's /proc */
	char proc[PATH_MAX], sys[PATH_MAX], dev[PATH_MAX];
	char slurmd_pid[24]; /* last seen slurmd, checked first at the next poll */
	const struct rw_config *cfg;
	/* kallsyms verdict, valid while /proc/modules hashes the same */
	bool dmabuf_cached;
	uint64_t modules_hash;
	int dmabuf; /* 1, 0, or -errno */
};

static void fill_kernel(struct host_priv *hp, struct object *node)
{
	char path[PATH_MAX + 32], rel[RW_STR_MAX];
	struct utsname u;
	int r;

	if (hp->proc_live) {
		if (uname(&u))
			field_absent_errno(node, F_NODE_KERNEL, errno);
		else
			field_set_str(node, F_NODE_KERNEL, u.release);
		return;
	}
	snprintf(path, sizeof(path), "%s/sys/kernel/osrelease", hp->proc);
	r = read_file_str(path, rel, sizeof(rel));
	if (r || !rel[0])
		field_absent_errno(node, F_NODE_KERNEL, r ? r : -EINVAL);
	else
		field_set_str(node, F_NODE_KERNEL, rel);
}

/* "Max locked memory         8388608              8388608              bytes" */
static int limits_memlock(const char *path, uint64_t *soft, bool *unlimited)
{
	char *buf, *line, *save = NULL;
	int r = read_kfile_all(path, &buf, NULL);

	if (r)
		return r;
	r = -ENOENT;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char val[32];

		if (strncmp(line, "Max locked memory", 17))
			continue;
		if (sscanf(line + 17, "%31s", val) != 1) {
			r = -EINVAL;
			break;
		}
		*unlimited = !strcmp(val, "unlimited");
		r = *unlimited ? 0 : parse_u64(val, soft);
		break;
	}
	free(buf);
	return r;
}

/* Is <proc>/PID/comm "slurmd"?  1 yes, 0 no (or no such process), -errno: could not look. */
static int is_slurmd(const struct host_priv *hp, const char *pid)
{
	char path[PATH_MAX + 48], comm[32];
	int r;

	snprintf(path, sizeof(path), "%s/%s/comm", hp->proc, pid);
	r = read_file_str(path, comm, sizeof(comm));
	if (r == -EMFILE || r == -ENFILE || r == -ENOMEM)
		return r;
	return !r && !strcmp(comm, "slurmd");
}

/*
 * The slurmd process, if one runs: its PID in hp->slurmd_pid ("" if none).
 * 0, or -errno where /proc could not be read (out of descriptors): then
 * whether one runs is not known, and its PID stays what it was.  Reading our
 * own limit instead would judge another process's memlock (a false alert on
 * a node whose slurmd is right).
 */
static int find_slurmd(struct host_priv *hp)
{
	struct dirent *de;
	DIR *d;
	int r;

	if (hp->slurmd_pid[0]) {
		r = is_slurmd(hp, hp->slurmd_pid);
		if (r)
			return r < 0 ? r : 0;
	}
	d = opendir(hp->proc);
	if (!d) {
		if (errno != ENOENT)
			return -errno;
		hp->slurmd_pid[0] = '\0';
		return 0;
	}
	hp->slurmd_pid[0] = '\0';
	while ((de = readdir(d))) {
		if (strspn(de->d_name, "0123456789") != strlen(de->d_name) ||
		    strlen(de->d_name) >= sizeof(hp->slurmd_pid))
			continue;
		r = is_slurmd(hp, de->d_name);
		if (r < 0) {
			closedir(d);
			return r;
		}
		if (r) {
			strlcpy0(hp->slurmd_pid, de->d_name, sizeof(hp->slurmd_pid));
			break;
		}
	}
	closedir(d);
	return 0;
}

static void fill_memlock(struct host_priv *hp, struct object *node)
{
	char path[PATH_MAX + 48];
	uint64_t soft = 0;
	bool unlimited = false;
	int r = find_slurmd(hp);

	if (r) {
		/* whose limit it is, not known: unknown, not ours in its place */
		rw_log_once(LOG_LVL_WARN, "host:slurmd",
			    "host: %s: %s; RLIMIT_MEMLOCK unknown until it can be read", hp->proc,
			    rw_strerror(-r));
		field_absent_errno(node, F_NODE_MEMLOCK, r);
		field_absent_errno(node, F_NODE_MEMLOCK_UNLIMITED, r);
		return;
	}
	rw_log_once_reset("host:slurmd");
	if (hp->slurmd_pid[0]) {
		snprintf(path, sizeof(path), "%s/%s/limits", hp->proc, hp->slurmd_pid);
		r = limits_memlock(path, &soft, &unlimited);
		field_set_str(node, F_NODE_MEMLOCK_SOURCE, "slurmd");
	} else if (hp->proc_live) {
		struct rlimit rl;

		field_set_str(node, F_NODE_MEMLOCK_SOURCE, "self");
		if (getrlimit(RLIMIT_MEMLOCK, &rl)) {
			r = -errno;
		} else {
			unlimited = rl.rlim_cur == RLIM_INFINITY;
			soft = rl.rlim_cur;
		}
	} else {
		field_set_str(node, F_NODE_MEMLOCK_SOURCE, "self");
		snprintf(path, sizeof(path), "%s/self/limits", hp->proc);
		r = limits_memlock(path, &soft, &unlimited);
	}
	if (r) {
		field_absent_errno(node, F_NODE_MEMLOCK, r);
		field_absent_errno(node, F_NODE_MEMLOCK_UNLIMITED, r);
		return;
	}
	field_set_bool(node, F_NODE_MEMLOCK_UNLIMITED, unlimited);
	if (unlimited)
		field_absent(node, F_NODE_MEMLOCK, ABS_UNSUPPORTED, 0);
	else
		field_set_int(node, F_NODE_MEMLOCK, soft > INT64_MAX ? INT64_MAX : (int64_t)soft);
}

#define CAP_IPC_LOCK_BIT 14 /* linux/capability.h */

/* "CapEff:\t00000000a80425fb" of <procfs>/self/status. */
static void fill_cap_ipc_lock(struct host_priv *hp, struct object *node)
{
	char path[PATH_MAX + 32], *buf, *p;
	unsigned long long eff;
	int r;

	snprintf(path, sizeof(path), "%s/self/status", hp->proc);
	r = read_kfile_all(path, &buf, NULL);
	if (r) {
		field_absent_errno(node, F_NODE_CAP_IPC_LOCK, r);
		return;
	}
	p = strstr(buf, "\nCapEff:");
	if (p && sscanf(p + 8, "%llx", &eff) == 1)
		field_set_bool(node, F_NODE_CAP_IPC_LOCK, (eff >> CAP_IPC_LOCK_BIT) & 1);
	else
		field_absent_errno(node, F_NODE_CAP_IPC_LOCK, -EINVAL);
	free(buf);
}

static void fill_uverbs(struct host_priv *hp, struct object *node)
{
	char path[PATH_MAX + 16];
	struct dirent *de;
	int64_t n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/infiniband", hp->dev);
	d = opendir(path);
	if (!d) {
		/* no /dev/infiniband at all: no device node, a fact (0), not an error */
		if (errno == ENOENT)
			field_set_int(node, F_NODE_UVERBS_DEVICES, 0);
		else
			field_absent_errno(node, F_NODE_UVERBS_DEVICES, -errno);
		return;
	}
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, "uverbs", 6) && de->d_name[6] >= '0' &&
		    de->d_name[6] <= '9')
			n++;
	closedir(d);
	field_set_int(node, F_NODE_UVERBS_DEVICES, n);
}

static bool has_module_line(const char *modules, const char *name)
{
	size_t len = strlen(name);

	for (const char *p = modules; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, name, len) && p[len] == ' ')
			return true;
	return false;
}

static void fill_peermem(struct host_priv *hp, struct object *node, const char *modules,
			 int modules_err)
{
	static const char *const names[] = { "nvidia_peermem", "nv_peer_mem" };
	char path[PATH_MAX + 64];
	struct stat st;
	bool any_source = false, loaded = false;
	int err = modules_err;

	/* No /proc/modules: a kernel without module support, where nothing is loaded. */
	if (modules || modules_err == -ENOENT) {
		any_source = true;
		for (size_t i = 0; modules && i < ARRAY_SIZE(names); i++)
			loaded |= has_module_line(modules, names[i]);
	}
	/* <sysfs>/module lists loaded modules (and built-ins with parameters). */
	snprintf(path, sizeof(path), "%s/module", hp->sys);
	if (!stat(path, &st)) {
		any_source = true;
		for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
			snprintf(path, sizeof(path), "%s/module/%s", hp->sys, names[i]);
			loaded |= !stat(path, &st);
		}
	} else if (!err) {
		err = -errno;
	}
	if (any_source)
		field_set_bool(node, F_NODE_PEERMEM, loaded);
	else
		field_absent_errno(node, F_NODE_PEERMEM, err);
}

/* 1 when kallsyms names ib_umem_dmabuf_get, 0 when not, -errno. */
static int scan_kallsyms(const char *path)
{
	static const char sym[] = " ib_umem_dmabuf_get";
	char line[512];
	int found = 0, fd = open_kfile_at(AT_FDCWD, path);
	FILE *f;

	if (fd < 0)
		return fd;
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	while (!found && fgets(line, sizeof(line), f)) {
		char *p = strstr(line, sym);

		if (p) {
			char c = p[sizeof(sym) - 1];

			found = c == '\n' || c == '\t' || c == ' ' || c == '\0';
		}
	}
	if (ferror(f) && !found) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	return found;
}

/* Does <sysfs>/class/infiniband hold any device? */
static bool rdma_present(struct host_priv *hp)
{
	char path[PATH_MAX + 32];
	struct dirent *de;
	bool any = false;
	DIR *d;

	snprintf(path, sizeof(path), "%s/class/infiniband", hp->sys);
	d = opendir(path);
	if (!d)
		return false;
	while (!any && (de = readdir(d)))
		any = de->d_name[0] != '.';
	closedir(d);
	return any;
}

static void fill_dmabuf(struct host_priv *hp, struct object *node, const char *modules,
			size_t modules_len)
{
	char path[PATH_MAX + 32];
	uint64_t h = modules ? fnv1a(modules, modules_len, FNV1A_INIT) : 0;

	if (!rdma_present(hp)) {
		hp->dmabuf_cached = false;
		field_set_bool(node, F_NODE_DMABUF, false);
		return;
	}
	if (!hp->dmabuf_cached || h != hp->modules_hash) {
		snprintf(path, sizeof(path), "%s/kallsyms", hp->proc);
		hp->dmabuf = scan_kallsyms(path);
		hp->modules_hash = h;
		hp->dmabuf_cached = true;
	}
	if (hp->dmabuf < 0)
		field_absent_errno(node, F_NODE_DMABUF, hp->dmabuf);
	else
		field_set_bool(node, F_NODE_DMABUF, hp->dmabuf);
}

/* ---- PCI topology ---- */

/* "DDDD:BB:DD.F", hex digits, as NCCL's checkBDFFormat() requires. */
static bool is_bdf(const char *s)
{
	static const char pat[] = "xxxx:xx:xx.x";

	if (strlen(s) != sizeof(pat) - 1)
		return false;
	for (size_t i = 0; i < sizeof(pat) - 1; i++) {
		bool hex = (s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') ||
			   (s[i] >= 'A' && s[i] <= 'F');

		if (pat[i] == 'x' ? !hex : s[i] != pat[i])
			return false;
	}
	return true;
}

static uint64_t read_hex(const char *dir, const char *file)
{
	char path[PATH_MAX + 32];
	uint64_t v;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return read_file_hex(path, &v) ? 0 : v;
}

static int read_numa(const char *dir)
{
	char path[PATH_MAX + 16], buf[16];
	int64_t v;

	snprintf(path, sizeof(path), "%s/numa_node", dir);
	/* NCCL: "Workaround kernel bug for now" — numa_node -1 counts as node 0. */
	if (read_file_str(path, buf, sizeof(buf)) || parse_i64(buf, &v) || v < 0 || v > INT32_MAX)
		return 0;
	return (int)v;
}

/* ncclTopoFlattenBcmSwitches()'s getBcmGen(). */
static int bcm_gen(uint64_t id, int level)
{
	if ((id & 0xfffffffffffff000ULL) == 0x1000c0101000a000ULL)
		return 4;
	if ((id & 0xfffffffffffff000ULL) == (0x1000c03010000000ULL | (uint64_t)level * 0x1000))
		return 5;
	return 0;
}

/* Switch nodes from the device up to the CPU, as NCCL builds them. */
static int pci_chain(const char *devpath, struct pci_chain *c)
{
	char path[PATH_MAX];

	c->n = 0;
	if (strlen(devpath) >= sizeof(path))
		return -ENAMETOOLONG;
	strlcpy0(path, devpath, sizeof(path));
	for (;;) {
		int numa =
		    read_numa(path); /* of the current node: the CPU's, if next is the root */
		char *s = strrchr(path, '/');

		if (!s)
			return -EINVAL;
		*s = '\0'; /* the parent: a downstream port, or the root complex */
		s = strrchr(path, '/');
		if (!s || !is_bdf(s + 1)) {
			c->numa = numa;
			break;
		}
		*s = '\0'; /* the grandparent: the switch's upstream port, or the root complex */
		s = strrchr(path, '/');
		if (!s || !is_bdf(s + 1)) {
			c->numa = numa;
			break;
		}
		if (c->n == PCI_MAX_DEPTH)
			return -ELOOP;
		strlcpy0(c->sw[c->n].bdf, s + 1, sizeof(c->sw[c->n].bdf));
		c->sw[c->n].id = read_hex(path, "vendor") << 48 | read_hex(path, "device") << 32 |
				 read_hex(path, "subsystem_vendor") << 16 |
				 read_hex(path, "subsystem_device");
		c->n++;
	}
	/* A Broadcom switch that shows as two levels is one switch to NCCL. */
	for (int i = c->n - 2; i >= 0; i--) {
		int gen = bcm_gen(c->sw[i + 1].id, 0);

		if (gen && bcm_gen(c->sw[i].id, 1) == gen) {
			memmove(&c->sw[i], &c->sw[i + 1],
				(size_t)(c->n - i - 1) * sizeof(c->sw[0]));
			c->n--;
		}
	}
	return 0;
}

/* Two nodes are one when only the PCI function differs (NCCL masks it). */
static bool same_node(const char *a, const char *b)
{
	return !strncmp(a, b, 11);
}

static enum pci_path classify(const struct pci_chain *g, const struct pci_chain *n)
{
	for (int i = 0; i < g->n; i++)
		for (int k = 0; k < n->n; k++)
			if (same_node(g->sw[i].bdf, n->sw[k].bdf))
				/* one switch between them, or a PCI-PCI hop on the way */
				return i == 0 && k == 0 ? PCI_PATH_PIX : PCI_PATH_PXB;
	return g->numa == n->numa ? PCI_PATH_PHB : PCI_PATH_SYS;
}

struct chains {
	struct pci_chain *c;
	size_t n, cap;
};

static struct pci_chain *chains_add(struct chains *cs)
{
	if (cs->n == cs->cap) {
		size_t nc = cs->cap ? cs->cap * 2 : 8;
		struct pci_chain *t = realloc(cs->c, nc * sizeof(*t));

		if (!t)
			return NULL;
		cs->c = t;
		cs->cap = nc;
	}
	memset(&cs->c[cs->n], 0, sizeof(cs->c[0]));
	return &cs->c[cs->n++];
}

static int cmp_chain(const void *a, const void *b)
{
	return strcmp(((const struct pci_chain *)a)->name, ((const struct pci_chain *)b)->name);
}

static int list_gpus(struct host_priv *hp, struct chains *gpus)
{
	char dir[PATH_MAX + 32], path[PATH_MAX * 2], real[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int r = 0;

	snprintf(dir, sizeof(dir), "%s/bus/pci/devices", hp->sys);
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		uint64_t vendor, cls;
		struct pci_chain *c;

		if (!is_bdf(de->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (!realpath(path, real))
			continue;
		vendor = read_hex(real, "vendor");
		cls = read_hex(real, "class") >> 8;
		if (vendor != 0x10de || (cls != 0x0300 && cls != 0x0302))
			continue;
		c = chains_add(gpus);
		if (!c) {
			r = -ENOMEM;
			break;
		}
		strlcpy0(c->name, de->d_name, sizeof(c->name));
		strlcpy0(c->path, real, sizeof(c->path));
		if (pci_chain(real, c)) {
			log_debug("host: %s: PCI path %s not understood; skipped", de->d_name,
				  real);
			gpus->n--;
		}
	}
	closedir(d);
	return r;
}

static int list_nics(struct host_priv *hp, struct chains *nics)
{
	char dir[PATH_MAX + 32], path[PATH_MAX * 2], real[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int r = 0;

	snprintf(dir, sizeof(dir), "%s/class/infiniband", hp->sys);
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		struct pci_chain *c;
		const char *base;

		if (de->d_name[0] == '.' || strlen(de->d_name) >= RW_NAME_MAX)
			continue;
		if (!config_rdma_wanted(hp->cfg, de->d_name))
			continue; /* excluded: nothing of it is read */
		/* Software devices (rxe, siw) have no PCI function behind them. */
		snprintf(path, sizeof(path), "%s/%s/device", dir, de->d_name);
		if (!realpath(path, real))
			continue;
		base = strrchr(real, '/');
		if (!base || !is_bdf(base + 1))
			continue;
		c = chains_add(nics);
		if (!c) {
			r = -ENOMEM;
			break;
		}
		strlcpy0(c->name, de->d_name, sizeof(c->name));
		strlcpy0(c->path, real, sizeof(c->path));
		if (pci_chain(real, c))
			nics->n--;
	}
	closedir(d);
	return r;
}

static void fill_pci(struct host_priv *hp, struct node_model *m)
{
	struct object *node = &m->node;
	struct chains gpus = { 0 }, nics = { 0 };
	struct pci_pairs *pp = &node->pairs;
	struct pcie_input in = { .sys = hp->sys, .proc = hp->proc, .pairs = pp };
	int64_t far = 0;
	int r = list_gpus(hp, &gpus);

	if (!r)
		r = list_nics(hp, &nics);
	if (r) {
		field_absent_errno(node, F_NODE_GPUS, r);
		field_absent_errno(node, F_NODE_GPUS_WITHOUT_NEAR_NIC, r);
		pp->n = 0;
		field_absent_errno(node, F_NODE_GPU_NIC_PATHS, r);
		pcie_absent(&in, m, r);
		goto free_chains;
	}
	if (gpus.n > 1)
		qsort(gpus.c, gpus.n, sizeof(*gpus.c), cmp_chain);
	if (nics.n > 1)
		qsort(nics.c, nics.n, sizeof(*nics.c), cmp_chain);
	pp->n = 0;
	if (gpus.n * nics.n > pp->cap) {
		struct pci_pair *t = realloc(pp->e, gpus.n * nics.n * sizeof(*t));

		if (!t) {
			field_absent_errno(node, F_NODE_GPU_NIC_PATHS, -ENOMEM);
			pcie_absent(&in, m, -ENOMEM);
			goto free_chains;
		}
		pp->e = t;
		pp->cap = gpus.n * nics.n;
	}
	for (size_t g = 0; g < gpus.n; g++) {
		bool near = false;

		for (size_t k = 0; k < nics.n; k++) {
			struct pci_pair *e = &pp->e[pp->n++];

			strlcpy0(e->gpu, gpus.c[g].name, sizeof(e->gpu));
			strlcpy0(e->nic, nics.c[k].name, sizeof(e->nic));
			e->path = classify(&gpus.c[g], &nics.c[k]);
			near |= e->path <= PCI_PATH_PXB;
		}
		far += !near;
	}
	field_set_int(node, F_NODE_GPUS, (int64_t)gpus.n);
	field_set_int(node, F_NODE_GPUS_WITHOUT_NEAR_NIC, far);
	node->f[F_NODE_GPU_NIC_PATHS].state = ABS_NONE;
	node->f[F_NODE_GPU_NIC_PATHS].err = 0;
	node->f[F_NODE_GPU_NIC_PATHS].v.pairs = pp;
	in.gpus = gpus.c;
	in.n_gpus = gpus.n;
	in.nics = nics.c;
	in.n_nics = nics.n;
	pcie_fill(&in, m);
free_chains:
	free(gpus.c);
	free(nics.c);
}

static int host_collect(struct collector_ctx *cc, struct node_model *m, unsigned what)
{
	struct host_priv *hp = cc->priv;
	char path[PATH_MAX + 16], *modules = NULL;
	size_t modules_len = 0;
	int merr;

	if (!(what & COLLECT_SLOW))
		return 0;
	fill_kernel(hp, &m->node);
	fill_memlock(hp, &m->node);
	fill_cap_ipc_lock(hp, &m->node);
	fill_uverbs(hp, &m->node);
	snprintf(path, sizeof(path), "%s/modules", hp->proc);
	/* ENOENT: a kernel built without module support; nothing can be loaded. */
	merr = read_kfile_all(path, &modules, &modules_len);
	fill_peermem(hp, &m->node, merr ? NULL : modules, merr);
	fill_dmabuf(hp, &m->node, merr ? NULL : modules, modules_len);
	free(modules);
	fill_pci(hp, m);
	return 0;
}

static int host_init(struct collector_ctx *cc)
{
	struct host_priv *hp = calloc(1, sizeof(*hp));
	char real[PATH_MAX];

	if (!hp)
		return -ENOMEM;
	cc->priv = hp;
	hp->cfg = cc->cfg;
	if (strlen(cc->cfg->procfs_root) >= sizeof(hp->proc) ||
	    strlen(cc->cfg->sysfs_root) >= sizeof(hp->sys) ||
	    strlen(cc->cfg->devfs_root) >= sizeof(hp->dev)) {
		snprintf(cc->detail, sizeof(cc->detail),
			 "--procfs-root, --sysfs-root or --devfs-root too long");
		return -ENAMETOOLONG;
	}
	strlcpy0(hp->dev, cc->cfg->devfs_root, sizeof(hp->dev));
	strlcpy0(hp->proc, cc->cfg->procfs_root, sizeof(hp->proc));
	strlcpy0(hp->sys, cc->cfg->sysfs_root, sizeof(hp->sys));
	hp->proc_live = realpath(hp->proc, real) && !strcmp(real, "/proc");
	return 0;
}

static void host_fini(struct collector_ctx *cc)
{
	free(cc->priv);
	cc->priv = NULL;
}

const struct collector host_collector = {
	.name = "host",
	.source = SRC_HOST,
	.help = "host: kernel, memlock limit, CAP_IPC_LOCK, verbs device nodes, "
		"nvidia_peermem / DMA-BUF, GPU-NIC PCIe distance, PCIe ACS and link "
		"training, IOMMU",
	.default_enabled = true,
	.init = host_init,
	.collect = host_collect,
	.fini = host_fini,
};
