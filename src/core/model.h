/* SPDX-License-Identifier: MIT */
/*
 * The node model: one struct per node, holding every fact the collectors
 * found, typed and indexed by the field table (fields.c).  Collectors fill
 * it, the rules engine and the exporters read it.  Nothing here knows where
 * a value came from.
 */
#ifndef ROCEWATCH_MODEL_H
#define ROCEWATCH_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "fields.h"

#define RW_NAME_MAX    64
#define RW_STR_MAX     64
#define RW_CNAME_MAX   48
#define RW_PRIO_COUNT  8
#define RW_DSCP_COUNT  64
#define RW_GID_STR_MAX 40

/* Why a field has no value.  Absent is never rendered as 0. */
enum absent_reason {
	ABS_NONE = 0,	   /* present */
	ABS_NOT_COLLECTED, /* no collector filled it (yet) */
	ABS_UNSUPPORTED,   /* EOPNOTSUPP / ENOENT / not applicable on this device */
	ABS_PERMISSION,	   /* EPERM / EACCES */
	ABS_ERROR,	   /* anything else; detail says what */
	ABS_NO_DATA,	   /* measured, but nothing to measure yet (no traffic seen) */
	ABS__COUNT,
};

struct gid_entry {
	uint32_t index;
	char gid[RW_GID_STR_MAX]; /* "fe80:0000:...", as sysfs prints it */
	char type[16];		  /* "RoCE v2", "RoCE v1", "IB" */
	char netdev[RW_NAME_MAX];
};

struct gid_table {
	size_t n, cap;
	struct gid_entry *e;
};

/*
 * GPU <-> RDMA NIC PCIe distance, classified as NCCL does: PIX (same
 * switch), PXB (across switches, same root), PHB (through the host bridge),
 * SYS (across the inter-socket link).
 */
enum pci_path {
	PCI_PATH_PIX = 1,
	PCI_PATH_PXB,
	PCI_PATH_PHB,
	PCI_PATH_SYS,
};

struct pci_pair {
	char gpu[RW_NAME_MAX]; /* PCI address */
	char nic[RW_NAME_MAX]; /* RDMA device name */
	enum pci_path path;
};

struct pci_pairs {
	size_t n, cap;
	struct pci_pair *e;
};

struct field_val {
	uint8_t state; /* enum absent_reason */
	uint8_t mask;  /* VT_PRIO_ARRAY: which priorities are present */
	int16_t err;   /* errno behind ABS_ERROR/ABS_PERMISSION, positive */
	union {
		int64_t i;		     /* VT_INT, VT_BOOL */
		double d;		     /* VT_FLOAT */
		char s[RW_STR_MAX];	     /* VT_STR */
		uint8_t set;		     /* VT_PRIOSET: bit p = priority p */
		uint64_t dset;		     /* VT_DSCPSET: bit d = DSCP d */
		uint64_t arr[RW_PRIO_COUNT]; /* VT_PRIO_ARRAY */
		int8_t dscp[RW_DSCP_COUNT];  /* VT_DSCP_MAP: priority, -1 unmapped */
		struct gid_table *gids;	     /* VT_GIDS: owned by the object */
		struct pci_pairs *pairs;     /* VT_PCI_PAIRS: owned by the object */
	} v;
};

struct counter_set {
	uint32_t n, cap;
	uint32_t hint; /* where the next cset_set() is likely to land */
	/*
	 * Changes, to a number no set had before, whenever a name is added
	 * (names are never removed but by cset_free, which makes it 0): who
	 * caches where a name is, or that it is not there, keys the cache by it.
	 */
	uint32_t names_gen;
	char (*names)[RW_CNAME_MAX];
	uint64_t *vals;
	uint8_t *present;
};

/* Wire view: RoCE v2 packets per (direction, dscp, ecn, class). */
enum wire_class {
	WIRE_DATA,
	WIRE_ACK,
	WIRE_CNP,
	WIRE__CLASSES
};
struct wire_counts {
	uint64_t packets[2][RW_DSCP_COUNT][4][WIRE__CLASSES];
	uint64_t bytes[2][RW_DSCP_COUNT][4][WIRE__CLASSES];
};

struct object {
	enum obj_kind kind;
	char name[RW_NAME_MAX];	    /* netdev name, RDMA device name, host name */
	uint32_t port;		    /* rdma_port: port number */
	int ifindex;		    /* netdev: its ifindex; rdma_port: bound netdev's */
	bool seen;		    /* touched by the current collection */
	struct object *netdev;	    /* rdma_port -> its netdev object, or NULL */
	char rdma_dev[RW_NAME_MAX]; /* netdev: the RDMA device bound to it, "" when none */
	struct field_val f[F__COUNT];
	struct counter_set cs[CSET__COUNT];
	struct wire_counts *wire; /* netdev, only with the wire collector */
	struct gid_table gids;
	struct pci_pairs pairs;
	void *cpriv[16]; /* per-collector per-object state */
};

struct collector_status {
	char name[24];
	bool enabled;
	bool ran;
	int err;	   /* last collect() result, 0 or -errno */
	char detail[160];  /* human text for the last error */
	double duration;   /* seconds, last collection */
	uint64_t failures; /* consecutive failures */
};

#define RW_MAX_COLLECTORS 16

/* What a poll reads: the words of collectors, model sources and the daemon alike. */
enum collect_what {
	COLLECT_FAST = 1 << 0, /* counters */
	COLLECT_SLOW = 1 << 1, /* configuration (implies nothing about counters) */
};

struct node_model {
	char host[RW_NAME_MAX];
	struct timespec time; /* CLOCK_REALTIME of the collection */
	struct timespec mono; /* CLOCK_MONOTONIC of the collection */
	struct object node;
	size_t n_netdevs, cap_netdevs;
	struct object **netdevs; /* sorted by name */
	size_t n_ports, cap_ports;
	struct object **ports; /* sorted by device, port */
	struct collector_status coll[RW_MAX_COLLECTORS];
	void (*obj_free_cb[RW_MAX_COLLECTORS])(void *cpriv);
};

/* Lifetime */
void model_init(struct node_model *m);
void model_free(struct node_model *m);

/* Objects */
struct object *model_netdev(struct node_model *m, const char *name); /* find or NULL */
struct object *model_netdev_by_ifindex(struct node_model *m, int ifindex);
struct object *model_port(struct node_model *m, const char *dev, uint32_t port);
struct object *model_add_netdev(struct node_model *m, const char *name);
struct object *model_add_port(struct node_model *m, const char *dev, uint32_t port);
/* Start of a collection pass for one kind: clear the seen marks. */
void model_begin(struct node_model *m, enum obj_kind kind);
/* Drop the objects of this kind nobody marked seen since model_begin(). */
void model_sweep(struct node_model *m, enum obj_kind kind);
/* Re-resolve rdma_port -> netdev links by ifindex (then by name). */
void model_link_ports(struct node_model *m);

/* Fields */
void field_set_int(struct object *o, enum field_id id, int64_t v);
void field_set_bool(struct object *o, enum field_id id, bool v);
void field_set_float(struct object *o, enum field_id id, double v);
void field_set_str(struct object *o, enum field_id id, const char *s);
void field_set_set(struct object *o, enum field_id id, uint8_t set);
void field_set_dset(struct object *o, enum field_id id, uint64_t set);
void field_set_prio(struct object *o, enum field_id id, int prio, uint64_t v);
void field_set_dscp_map(struct object *o, enum field_id id, const int8_t map[RW_DSCP_COUNT]);

/*
 * The compact form of a VT_PRIOSET or VT_DSCP_MAP value (fields[].compact):
 * one character per element, so always 8 or 64 characters.  A priority set
 * "00010000": character p is 1 when p is in the set.  A DSCP map: character
 * d is DSCP d's priority, '-' when it is unmapped.  field_compact_text()
 * needs len > 64 for a map; field_compact_parse() sets field id from the
 * text, -EINVAL (the field untouched) for any other text.
 */
int field_compact_text(const struct field_val *f, enum value_type t, char *buf, size_t len);
int field_compact_parse(struct object *o, enum field_id id, const char *text);
/* Mark absent: err is a positive or negative errno (0 for none). */
void field_absent(struct object *o, enum field_id id, enum absent_reason why, int err);
/* Map an errno to its absent reason (EOPNOTSUPP -> unsupported, ...). */
enum absent_reason absent_from_errno(int err);
void field_absent_errno(struct object *o, enum field_id id, int err);

/* A source's fields by the table's .config column. */
enum field_part {
	FIELDS_CONFIG = 1 << 0,	  /* configuration, read in the slow loop */
	FIELDS_COUNTERS = 1 << 1, /* the rest: counters, and what the wire view measures */
	FIELDS_ALL = FIELDS_CONFIG | FIELDS_COUNTERS,
};
/*
 * Mark absent every field of o's kind whose row names src (fields[].src)
 * and is in part: what a collector blanks when it fails for an object,
 * derived from the table so that a row added later cannot keep a stale
 * value.  Returns how many fields were marked.
 */
int field_absent_source(struct object *o, enum field_source src, unsigned int part,
			enum absent_reason why, int err);
int field_absent_source_errno(struct object *o, enum field_source src, unsigned int part, int err);
static inline bool field_present(const struct object *o, enum field_id id)
{
	return o->f[id].state == ABS_NONE;
}
const char *absent_reason_name(enum absent_reason r);
int absent_reason_parse(const char *s);

/* Counter sets: names kept across polls, values replaced. */
void cset_clear(struct counter_set *cs);
int cset_reserve(struct counter_set *cs, uint32_t n);
/* Index of name, or -1. */
int cset_find(const struct counter_set *cs, const char *name);
/* Set (adding the name if new); returns the index or -ENOMEM. */
int cset_set(struct counter_set *cs, const char *name, uint64_t v);
/* Add a name the caller knows is not in the set (a fresh set filled from unique keys). */
int cset_append(struct counter_set *cs, const char *name, uint64_t v);
void cset_free(struct counter_set *cs);

const char *obj_kind_name(enum obj_kind k);
/* An object as a unit is named: "mlx5_0/1", "eth2", "" for the node. */
void object_unit_name(const struct object *o, char *buf, size_t len);
/* The kind obj_kind_name() names s, or -1. */
int obj_kind_parse(const char *s);

/* Objects of a kind, for iteration: returns the count, *out the array. */
size_t model_objects(struct node_model *m, enum obj_kind kind, struct object ***out);

#endif
