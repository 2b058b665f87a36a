/* SPDX-License-Identifier: MIT */
/*
 * What host.c (GPU and NIC discovery, NCCL's GPU-NIC distance) hands to
 * host_pcie.c (ACS, PCIe link training, IOMMU): the PCI devices it found,
 * with the sysfs paths both walk.
 */
#ifndef ROCEWATCH_HOST_INT_H
#define ROCEWATCH_HOST_INT_H

#include <limits.h>
#include <stdint.h>

#include "model.h"

#define PCI_MAX_DEPTH 16

struct pci_sw {
	char bdf[16];
	uint64_t id; /* vendor << 48 | device << 32 | subsystem vendor << 16 | subsystem device */
};

struct pci_chain {
	char name[RW_NAME_MAX]; /* GPU: its BDF; NIC: the RDMA device */
	char path[PATH_MAX];	/* the device's resolved sysfs directory */
	struct pci_sw sw[PCI_MAX_DEPTH];
	int n;
	int numa;
};

struct pcie_input {
	const char *sys, *proc;	      /* --sysfs-root, --procfs-root */
	const struct pci_chain *gpus; /* sorted by name */
	size_t n_gpus;
	const struct pci_chain *nics; /* sorted by name */
	size_t n_nics;
	const struct pci_pairs *pairs; /* gpus x nics, in that order */
};

/* Fill the node's pcie.* / iommu.* facts and the ports' pcie.* / iommu.type. */
void pcie_fill(const struct pcie_input *in, struct node_model *m);
/* The PCI tree could not be listed (err: -errno): all absent but the command line's. */
void pcie_absent(const struct pcie_input *in, struct node_model *m, int err);

#endif
