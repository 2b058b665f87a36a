/* SPDX-License-Identifier: MIT */
/*
 * A job's NCCL settings, and what NCCL will do with them on this node.
 * check --nccl reads them from the environment, --nccl-env from a KEY=VALUE
 * file; nccl_apply() reads each one the way NCCL's own code reads it (not as
 * its documentation describes it), keeps that reading per variable (raw
 * value, effective value, a note where the two differ) and writes the
 * node's job.* facts, which the profile's nccl_* rules read.
 *
 * NCCL versions modelled: 2.21.5 to 2.30.7 (NVIDIA/nccl tags v2.21.5-1 ..
 * v2.30.7-1); where they differ, the note names the versions.
 */
#ifndef ROCEWATCH_NCCL_H
#define ROCEWATCH_NCCL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "strbuf.h"

/* NCCL's own limits: MAX_IB_DEVS (net_ib), MAX_IFS (socket.h), netIf.prefix (utils.h). */
#define NCCL_IB_HCA_MAX 32
#define NCCL_IFS_MAX	16
#define NCCL_PREFIX_MAX 64
#define NCCL_LIST_MAX	NCCL_IB_HCA_MAX
/* NCCL_SOCKET_IFNAME shorter than this is ignored (ncclFindInterfaces: strlen(env) > 1). */
#define NCCL_IFNAME_MIN_LEN 2

/* What parseStringList() read differently from how the value looks. */
enum nccl_list_note {
	NCCL_LN_EMPTY_PORT = 1 << 0,  /* "dev:": port 0 up to 2.30.4, any port from 2.30.7 */
	NCCL_LN_ODD_PORT = 1 << 1,    /* "dev: 1", "dev:+1", "dev:1x": strtol's reading */
	NCCL_LN_LONG = 1 << 2,	      /* a name of NCCL_PREFIX_MAX characters or more */
	NCCL_LN_DROPPED = 1 << 3,     /* entries past the maximum are not read */
	NCCL_LN_EMPTY_ENTRY = 1 << 4, /* ",,", a leading or trailing ',' (skipped) */
};

/*
 * A list as NCCL_IB_HCA / NCCL_SOCKET_IFNAME give it, read as
 * ncclIbInit[Devices]() / findInterfaces() read it: a leading '^'
 * (exclude) is taken off first, then a leading '=' (exact names); the rest
 * goes to parseStringList() (src/misc/utils.cc): ','-separated, empty
 * entries skipped, "name:port[:rail[:plane]]", at most max entries.
 */
struct nccl_list_entry {
	char name[NCCL_PREFIX_MAX]; /* cut to 63 characters, as 2.30.7's snprintf does */
	int port;		    /* 2.30.7: -1 any port (absent or empty); -2 and below: none */
	int port_old;		    /* 2.21.5 .. 2.30.4: an empty port is atoi("") = 0 */
	bool odd_port; /* not plain decimal digits, or past the int range (atoi wraps) */
	bool long_name;
};

struct nccl_list {
	bool exclude, exact;
	size_t n;
	unsigned notes;		       /* enum nccl_list_note */
	char dropped[NCCL_PREFIX_MAX]; /* the first entry not read (NCCL_LN_DROPPED) */
	struct nccl_list_entry e[NCCL_LIST_MAX];
};

/* Parse s (NULL: no list) keeping at most max (<= NCCL_LIST_MAX) entries; never fails. */
void nccl_list_parse(const char *s, size_t max, struct nccl_list *l);
/*
 * matchIfList() ^ searchNot: does the list select (name, port)?  port -1: an
 * interface.  matchPort() takes only -1 as any port: an entry's port -2 is no port.  old: read
 * ports as NCCL up to 2.30.4 did.  An empty list selects everything, and its '^' inverse nothing
 * (so "^" alone selects nothing).
 */
bool nccl_list_selects(const struct nccl_list *l, const char *name, int port, bool old);

/* How NCCL's ncclLoadParam() (src/misc/param.cc) read a number. */
enum nccl_num_note {
	NCCL_NUM_PLAIN,	   /* reads as it looks */
	NCCL_NUM_DEFAULT,  /* empty: NCCL's default */
	NCCL_NUM_OCTAL,	   /* a leading 0: octal */
	NCCL_NUM_HEX,	   /* 0x: hexadecimal */
	NCCL_NUM_TRAILING, /* characters after the number are ignored */
	NCCL_NUM_NOT_NUM,  /* no number at all: 0 */
	NCCL_NUM_RANGE,	   /* out of int64_t: NCCL's default */
};

/* strtoll(s, NULL, 0) with ncclLoadParam's empty and ERANGE cases; the note in *note. */
int64_t nccl_load_param(const char *s, int64_t deflt, enum nccl_num_note *note);

/* The path type NCCL_NET_GDR_LEVEL names, as ncclGetLevel() (src/graph/paths.cc) reads it. */
enum nccl_path {
	NCCL_PATH_LOC,
	NCCL_PATH_NVL,
	NCCL_PATH_NVB,
	NCCL_PATH_C2C, /* 2.26 and later */
	NCCL_PATH_PIX,
	NCCL_PATH_PXB,
	NCCL_PATH_P2C, /* 2.27 and later */
	NCCL_PATH_PXN,
	NCCL_PATH_PHB,
	NCCL_PATH_SYS,
	NCCL__PATHS,
};
const char *nccl_path_name(enum nccl_path p);
/*
 * -1: NCCL ignores the value (no such name, case-sensitive, and not a
 * number).  -2: an old-style number that is negative in NCCL's int
 * (2147483648, 4294967295, an overflow), which NCCL uses to index its
 * table from below: the level is undefined.  *since: the minor version
 * (21..) from which the name is known.  *numeric: the value was read as
 * an old-style number 0..5 (above: SYS; past the int range it wraps).
 */
int nccl_gdr_level(const char *s, int *since, bool *numeric);

enum nccl_var {
	NCCL_IB_HCA,
	NCCL_SOCKET_IFNAME,
	NCCL_IB_GID_INDEX,
	NCCL_IB_TC,
	NCCL_IB_DISABLE,
	NCCL_NET_GDR_LEVEL,
	NCCL_CROSS_NIC,
	NCCL_IB_ADDR_FAMILY,
	NCCL_IB_ADDR_RANGE,
	NCCL_IB_ROCE_VERSION_NUM,
	NCCL_SOCKET_FAMILY,
	NCCL_NET,
	NCCL_NET_PLUGIN,
	NCCL_IB_MERGE_NICS,
	NCCL_IB_MERGE_VFS,
	NCCL_IB_FIFO_TC,
	NCCL_DEBUG,
	NCCL_ALGO,
	NCCL_PROTO,
	/* read to say what rocewatch does not judge (never a line of their own) */
	NCCL_NET_MERGE_LEVEL,
	NCCL_NET_FORCE_MERGE,
	NCCL_IB_DATA_DIRECT,
	NCCL_COMM_ID,
	NCCL_NETDEVS_POLICY,
	NCCL__VARS,
};

/*
 * An IP address as getifaddrs() lists it to NCCL.  ncclOsFindInterfaces()
 * walks the addresses in getifaddrs() order and keeps an interface at the
 * first address that passes (family, IFF_RUNNING, the list), so the order of
 * the interfaces it names depends on the family asked for: glibc lists every
 * IPv4 address before the first IPv6 one.
 */
struct nccl_ifaddr {
	char name[RW_NAME_MAX];
	int family;   /* AF_INET or AF_INET6 */
	bool running; /* IFF_RUNNING of the interface */
};

struct nccl_ifaddrs {
	size_t n;
	struct nccl_ifaddr *e;
};

/* getifaddrs(), in its order, one entry per IPv4 or IPv6 address but ::1: 0 or -errno. */
int nccl_ifaddrs_read(struct nccl_ifaddrs *ifs);
void nccl_ifaddrs_free(struct nccl_ifaddrs *ifs);

enum nccl_eff_kind {
	NCCL_EFF_NONE, /* null: NCCL ignores the value, or does not use it */
	NCCL_EFF_LIST, /* items: "mlx5_0:1" or interface names, or "mlx5_0:1=3" (GID) */
	NCCL_EFF_INT,  /* num */
	NCCL_EFF_STR,  /* items[0] */
};

#define NCCL_ITEM_MAX	  80
#define NCCL_UNJUDGED_MAX 8
#define NCCL_UNJUDGED_LEN 192

/* What NCCL does with one variable on this node. */
struct nccl_reading {
	enum nccl_eff_kind kind;
	int64_t num;
	size_t n;
	char items[NCCL_LIST_MAX][NCCL_ITEM_MAX];
	/*
	 * What NCCL does that the value does not show: every sentence, "; "
	 * between them, however many the value makes (a list of 32 odd
	 * entries and then the versions' remark); read it with nccl_note().
	 */
	struct strbuf note;
	bool warn; /* the note is a value NCCL reads differently from how it looks */
};

/* r's note, "" when there is none; valid until the next nccl_apply() or nccl_env_free(). */
const char *nccl_note(const struct nccl_reading *r);

struct nccl_env {
	bool given; /* --nccl or --nccl-env */
	bool set[NCCL__VARS];
	char *val[NCCL__VARS]; /* owned; the whole value, as long as it is */
	/* the node's IP interfaces (check on a live node); NULL: the model's netdevs */
	const struct nccl_ifaddrs *ifs;
	struct nccl_reading out[NCCL__VARS]; /* filled by nccl_apply() */
	/*
	 * What NCCL does with the job that rocewatch does not judge, one phrase
	 * each (with the job's value where it set one), for the report to name
	 * rather than stay silent; filled by nccl_apply().
	 */
	size_t n_unjudged;
	char unjudged[NCCL_UNJUDGED_MAX][NCCL_UNJUDGED_LEN];
};

const char *nccl_var_name(enum nccl_var v);
/* Is v one that check judges and reports (the rest are read for those)? */
bool nccl_var_reported(enum nccl_var v);
/* KEY=VALUE: the variables rocewatch judges are kept, any other key is ignored. 0 or -ENOMEM. */
int nccl_env_put(struct nccl_env *env, const char *key, const char *val);
void nccl_env_free(struct nccl_env *env);
/* The process environment (environ). */
int nccl_env_from_environ(struct nccl_env *env, char **envp);
/*
 * A KEY=VALUE file (a job's environment: `export` prefixes, quotes, blank
 * lines and # comments allowed).  0, or -errno with "FILE:LINE: what" in err.
 */
int nccl_env_read_file(struct nccl_env *env, const char *path, char *err, size_t errlen);
/*
 * Write env->out and the job.* facts of m->node (and of its ports: job.hca_index,
 * job.rail, job.gid_index) from env and the rest of the model.
 */
void nccl_apply(struct nccl_env *env, struct node_model *m);

/*
 * Set used[id] for every fact nccl_apply() reads of a model, so that a
 * reader that keeps only the facts its rules read (fleet check's snapshot
 * filter, its Prometheus queries) keeps these too.
 */
void nccl_fields_read(bool used[F__COUNT]);

/*
 * The rail key of RDMA port p of m, the one place the job's per-rail
 * comparison takes it from (fleet check --nccl-env: the ports NCCL uses must
 * be the same rails in the same positions on every node): the port's `rail`
 * fact where the model has one (the rails issue adds it; found by its path,
 * so this needs no change when it lands), else "N", the port's position
 * among the node's RDMA ports in PCI address order (on identically built
 * nodes the slot is the physical NIC, which the names need not follow), in
 * name order where a port's PCI address is unknown.  Into buf (n bytes).
 */
void job_port_rail(const struct node_model *m, const struct object *p, char *buf, size_t n);

#endif
