/* SPDX-License-Identifier: MIT */
/* The snapshot format's words, shared by its writer (snapshot.c) and reader (snapshot_read.c). */
#ifndef ROCEWATCH_SNAPSHOT_INT_H
#define ROCEWATCH_SNAPSHOT_INT_H

#include "model.h"

#define SNAPSHOT_PCI_PATHS (PCI_PATH_SYS + 1)

extern const char *const snapshot_cset_names[CSET__COUNT];
extern const char *const snapshot_wire_class_names[WIRE__CLASSES];
/* a GPU-NIC PCI path as nvidia-smi topo -m words it; [0] "" (unknown) */
extern const char *const snapshot_pci_path_names[SNAPSHOT_PCI_PATHS];

#endif
