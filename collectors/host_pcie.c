// SPDX-License-Identifier: MIT
/*
 * host, PCIe side: what the PCI tree does to GPUDirect RDMA (NVIDIA's
 * GPUDirect RDMA and NCCL troubleshooting guides list each as a cause of
 * slow or hanging peer-to-peer traffic).
 *
 *   ACS          PCIe Access Control Services extended capability (ID 0x000D,
 *                PCIe base spec 7.7.11) of every bridge between a GPU and its
 *                nearest RDMA NIC when both hang below one switch (NCCL's PIX
 *                or PXB).  With P2P Request Redirect (ACS Control bit 2) set
 *                on a downstream port, the switch sends the GPU<->NIC requests
 *                up to the root complex instead of across: GPUDirect RDMA
 *                crawls or hangs.  Read from the bridge's sysfs `config`.
 *                Without CAP_SYS_ADMIN the kernel returns only the first 64
 *                bytes of it (drivers/pci/pci-sysfs.c pci_read_config), so the
 *                extended capabilities at 0x100 and up need root: the fact is
 *                then absent with reason "permission".  A config space of
 *                exactly 256 bytes is a conventional PCI device: no extended
 *                capabilities, no ACS.
 *   link         current_link_speed / current_link_width against
 *                max_link_speed / max_link_width of each RDMA NIC's PCI
 *                function, and the width of each GPU's.  Only the GPU's width
 *                is judged: GPUs lower their link speed when idle (PCIe power
 *                management), so a GPU at 2.5 GT/s is normal; a narrower link
 *                is not.
 *   IOMMU        the type of each GPU's and NIC's IOMMU group
 *                (<dev>/iommu_group/type, kernel >= 5.11): identity passes DMA
 *                through, DMA and DMA-FQ translate every peer-to-peer and
 *                host access through the IOMMU; no iommu_group link: no IOMMU
 *                ("none").  And the IOMMU options of <procfs>/cmdline.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host_int.h"
#include "util.h"

#define PCI_CFG_CONVENTIONAL 256
#define PCI_CFG_EXTENDED     4096
#define PCI_EXT_CAP_ID_ACS   0x000d
#define PCI_ACS_CTRL	     6	    /* ACS Control register, from the capability header */
#define PCI_ACS_RR	     0x0004 /* P2P Request Redirect */

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* ACS P2P Request Redirect of the function at dir: 1, 0, or -errno (-EPERM: needs root). */
static int acs_redirect(const char *dir)
{
	unsigned char cfg[PCI_CFG_EXTENDED];
	char path[PATH_MAX + 16];
	size_t len = 0;
	unsigned off = 0x100;
	int fd;

	snprintf(path, sizeof(path), "%s/config", dir);
	fd = open_kfile_at(AT_FDCWD, path);
	if (fd < 0)
		return fd;
	while (len < sizeof(cfg)) {
		ssize_t r = pread(fd, cfg + len, sizeof(cfg) - len, (off_t)len);

		if (r < 0) {
			int e = -errno;

			close(fd);
			return e;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	if (len < PCI_CFG_CONVENTIONAL)
		return -EPERM; /* 64 bytes: an unprivileged read */
	if (len < PCI_CFG_EXTENDED)
		return 0;
	/* The extended capability list; a bound on hops guards against a loop. */
	for (int hops = 0; off >= 0x100 && off + 8 <= len && hops < 1024; hops++) {
		uint32_t hdr = le32(cfg + off);

		if (hdr == 0 || hdr == 0xffffffffu)
			break;
		if ((hdr & 0xffff) == PCI_EXT_CAP_ID_ACS)
			return ((cfg[off + PCI_ACS_CTRL] | cfg[off + PCI_ACS_CTRL + 1] << 8) &
				PCI_ACS_RR) != 0;
		off = (hdr >> 20) & 0xffc;
	}
	return 0;
}

static bool is_bdf_name(const char *s, size_t n)
{
	static const char pat[] = "xxxx:xx:xx.x";

	if (n != sizeof(pat) - 1)
		return false;
	for (size_t i = 0; i < n; i++) {
		bool hex = (s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') ||
			   (s[i] >= 'A' && s[i] <= 'F');

		if (pat[i] == 'x' ? !hex : s[i] != pat[i])
			return false;
	}
	return true;
}

/*
 * The bridges a request from a to b crosses inside their common switch:
 * every PCI function on either path below their lowest common ancestor,
 * the endpoints excluded.  Returns 1 and the first redirecting bridge's
 * address in at, 0, or -errno.
 */
static int path_redirects(const char *a, const char *b, char *at, size_t atlen)
{
	size_t common = 0, i = 0;
	const char *paths[2] = { a, b };
	int err = 0;

	/* the common prefix, cut back to a component boundary */
	while (a[i] && a[i] == b[i]) {
		if (a[i] == '/')
			common = i;
		i++;
	}
	if ((!a[i] && b[i] == '/') || (!b[i] && a[i] == '/'))
		common = i;
	for (int s = 0; s < 2; s++) {
		const char *p = paths[s];
		size_t pos = common;

		while (p[pos] == '/') {
			const char *c = p + pos + 1, *e = strchr(c, '/');
			char dir[PATH_MAX];
			int r;

			if (!e)
				break; /* the endpoint itself */
			pos = (size_t)(e - p);
			if (!is_bdf_name(c, (size_t)(e - c)) || pos >= sizeof(dir))
				continue;
			memcpy(dir, p, pos);
			dir[pos] = '\0';
			r = acs_redirect(dir);
			if (r == 1) {
				snprintf(at, atlen, "%.*s", (int)(e - c), c);
				return 1;
			}
			if (r < 0 && !err)
				err = r;
		}
	}
	return err;
}

static void fill_acs(const struct pcie_input *in, struct object *node)
{
	char at[16] = "";
	int64_t n = 0;
	int err = 0;

	/* no GPU: no GPU-NIC path to judge, which is not "none redirects" */
	if (!in->n_gpus) {
		field_absent(node, F_NODE_PCIE_ACS_REDIRECT_GPUS, ABS_UNSUPPORTED, 0);
		field_absent(node, F_NODE_PCIE_ACS_REDIRECT_BRIDGE, ABS_UNSUPPORTED, 0);
		return;
	}
	for (size_t g = 0; g < in->n_gpus && in->n_nics; g++) {
		const struct pci_pair *row = &in->pairs->e[g * in->n_nics];
		enum pci_path best = PCI_PATH_SYS;
		bool hit = false;

		for (size_t k = 0; k < in->n_nics; k++)
			if (row[k].path < best)
				best = row[k].path;
		/* across the host bridge the traffic meets the root complex anyway */
		if (best > PCI_PATH_PXB)
			continue;
		for (size_t k = 0; k < in->n_nics && !hit; k++) {
			char here[16];
			int r;

			if (row[k].path != best)
				continue;
			r = path_redirects(in->gpus[g].path, in->nics[k].path, here, sizeof(here));
			if (r == 1) {
				hit = true;
				if (!at[0])
					strlcpy0(at, here, sizeof(at));
			} else if (r < 0 && !err) {
				err = r;
			}
		}
		n += hit;
	}
	if (err) {
		log_debug("host: PCIe ACS: bridge config space: %s", rw_strerror(-err));
		field_absent_errno(node, F_NODE_PCIE_ACS_REDIRECT_GPUS, err);
		field_absent_errno(node, F_NODE_PCIE_ACS_REDIRECT_BRIDGE, err);
		return;
	}
	field_set_int(node, F_NODE_PCIE_ACS_REDIRECT_GPUS, n);
	if (at[0])
		field_set_str(node, F_NODE_PCIE_ACS_REDIRECT_BRIDGE, at);
	else
		field_absent(node, F_NODE_PCIE_ACS_REDIRECT_BRIDGE, ABS_UNSUPPORTED, 0);
}

/* "16.0 GT/s PCIe", "8 GT/s", "Unknown" (no link): GT/s, or -errno. */
static int read_speed(const char *dir, const char *file, double *gts)
{
	char path[PATH_MAX + 32], buf[64], *end;
	int r;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	r = read_file_str(path, buf, sizeof(buf));
	if (r)
		return r;
	*gts = strtod(buf, &end);
	if (end == buf || *gts <= 0)
		return -EOPNOTSUPP;
	return 0;
}

static int read_width(const char *dir, const char *file, int64_t *w)
{
	char path[PATH_MAX + 32], buf[32];
	int r;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	r = read_file_str(path, buf, sizeof(buf));
	if (r)
		return r;
	return parse_i64(buf, w) ? -EINVAL : 0;
}

/* The IOMMU group type of the function at dir ("none" without a group), or -errno. */
static int iommu_type(const char *dir, char *out, size_t size)
{
	char path[PATH_MAX + 32];
	struct stat st;

	snprintf(path, sizeof(path), "%s/iommu_group", dir);
	if (lstat(path, &st))
		return errno == ENOENT ? (strlcpy0(out, "none", size), 0) : -errno;
	snprintf(path, sizeof(path), "%s/iommu_group/type", dir);
	return read_file_str(path, out, size);
}

static bool translates(const char *type)
{
	return !strcmp(type, "DMA") || !strcmp(type, "DMA-FQ");
}

static void fill_iommu_count(const struct pcie_input *in, struct object *node)
{
	const struct pci_chain *sets[2] = { in->gpus, in->nics };
	size_t ns[2] = { in->n_gpus, in->n_nics };
	int64_t n = 0;

	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < ns[s]; i++) {
			char type[32];
			int r = iommu_type(sets[s][i].path, type, sizeof(type));

			if (r) {
				log_debug("host: %s: IOMMU group type: %s", sets[s][i].name,
					  rw_strerror(-r));
				field_absent_errno(node, F_NODE_IOMMU_TRANSLATED_DEVICES, r);
				return;
			}
			n += translates(type);
		}
	field_set_int(node, F_NODE_IOMMU_TRANSLATED_DEVICES, n);
}

/* The IOMMU options of the kernel command line, in their order. */
static void fill_cmdline(const struct pcie_input *in, struct object *node)
{
	static const char *const keys[] = { "intel_iommu=", "amd_iommu=", "iommu=",
					    "iommu.passthrough=", "iommu.strict=" };
	char path[PATH_MAX + 16], *buf, *tok, *save = NULL;
	char out[RW_STR_MAX] = "";
	size_t len = 0;
	int r;

	snprintf(path, sizeof(path), "%s/cmdline", in->proc);
	r = read_kfile_all(path, &buf, NULL);
	if (r) {
		field_absent_errno(node, F_NODE_IOMMU_CMDLINE, r);
		return;
	}
	for (tok = strtok_r(buf, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save))
		for (size_t k = 0; k < ARRAY_SIZE(keys); k++) {
			size_t n = strlen(tok);

			if (strncmp(tok, keys[k], strlen(keys[k])))
				continue;
			/* what does not fit is cut at a whole option */
			if (len + !!len + n < sizeof(out))
				len += (size_t)snprintf(out + len, sizeof(out) - len, "%s%s",
							len ? " " : "", tok);
			break;
		}
	free(buf);
	field_set_str(node, F_NODE_IOMMU_CMDLINE, out);
}

static void fill_gpu_links(const struct pcie_input *in, struct object *node)
{
	int64_t n = 0;

	if (!in->n_gpus) {
		field_absent(node, F_NODE_GPUS_PCIE_LINK_DEGRADED, ABS_UNSUPPORTED, 0);
		return;
	}

	for (size_t g = 0; g < in->n_gpus; g++) {
		int64_t cur, max;
		int r = read_width(in->gpus[g].path, "current_link_width", &cur);

		if (!r)
			r = read_width(in->gpus[g].path, "max_link_width", &max);
		if (r) {
			field_absent_errno(node, F_NODE_GPUS_PCIE_LINK_DEGRADED, r);
			return;
		}
		n += cur < max;
	}
	field_set_int(node, F_NODE_GPUS_PCIE_LINK_DEGRADED, n);
}

static void fill_port(const struct pci_chain *nic, struct object *p)
{
	char type[32];
	double gts;
	int64_t w;
	int r;

	if (!nic) {
		/* a software device (rxe, siw): no PCI function, no link, no IOMMU group */
		for (int id = F_PORT_PCIE_LINK_SPEED; id <= F_PORT_IOMMU_TYPE; id++)
			field_absent(p, (enum field_id)id, ABS_UNSUPPORTED, 0);
		return;
	}
	r = read_speed(nic->path, "current_link_speed", &gts);
	if (r)
		field_absent_errno(p, F_PORT_PCIE_LINK_SPEED, r);
	else
		field_set_float(p, F_PORT_PCIE_LINK_SPEED, gts);
	r = read_speed(nic->path, "max_link_speed", &gts);
	if (r)
		field_absent_errno(p, F_PORT_PCIE_MAX_LINK_SPEED, r);
	else
		field_set_float(p, F_PORT_PCIE_MAX_LINK_SPEED, gts);
	r = read_width(nic->path, "current_link_width", &w);
	if (r)
		field_absent_errno(p, F_PORT_PCIE_LINK_WIDTH, r);
	else
		field_set_int(p, F_PORT_PCIE_LINK_WIDTH, w);
	r = read_width(nic->path, "max_link_width", &w);
	if (r)
		field_absent_errno(p, F_PORT_PCIE_MAX_LINK_WIDTH, r);
	else
		field_set_int(p, F_PORT_PCIE_MAX_LINK_WIDTH, w);
	r = iommu_type(nic->path, type, sizeof(type));
	if (r)
		field_absent_errno(p, F_PORT_IOMMU_TYPE, r);
	else
		field_set_str(p, F_PORT_IOMMU_TYPE, type);
}

static void fill_ports(const struct pcie_input *in, struct node_model *m)
{
	struct object **ports;
	size_t n = model_objects(m, OBJ_RDMA_PORT, &ports);

	for (size_t i = 0; i < n; i++) {
		const struct pci_chain *nic = NULL;

		for (size_t k = 0; k < in->n_nics && !nic; k++)
			if (!strcmp(in->nics[k].name, ports[i]->name))
				nic = &in->nics[k];
		fill_port(nic, ports[i]);
	}
}

void pcie_fill(const struct pcie_input *in, struct node_model *m)
{
	fill_acs(in, &m->node);
	fill_gpu_links(in, &m->node);
	fill_iommu_count(in, &m->node);
	fill_cmdline(in, &m->node);
	fill_ports(in, m);
}

void pcie_absent(const struct pcie_input *in, struct node_model *m, int err)
{
	static const enum field_id node_ids[] = {
		F_NODE_PCIE_ACS_REDIRECT_GPUS,
		F_NODE_PCIE_ACS_REDIRECT_BRIDGE,
		F_NODE_GPUS_PCIE_LINK_DEGRADED,
		F_NODE_IOMMU_TRANSLATED_DEVICES,
	};
	struct object **ports;
	size_t n = model_objects(m, OBJ_RDMA_PORT, &ports);

	for (size_t i = 0; i < ARRAY_SIZE(node_ids); i++)
		field_absent_errno(&m->node, node_ids[i], err);
	for (size_t i = 0; i < n; i++)
		for (int id = F_PORT_PCIE_LINK_SPEED; id <= F_PORT_IOMMU_TYPE; id++)
			field_absent_errno(ports[i], (enum field_id)id, err);
	fill_cmdline(in, &m->node);
}
