/* SPDX-License-Identifier: MIT */
/*
 * A job's NCCL settings, and what they mean on this node.  check --nccl reads
 * them from the environment, --nccl-env from a KEY=VALUE file; nccl_apply()
 * judges them against the node model and writes the node's job.* facts, which
 * the profile's nccl_* rules read.  NCCL's list syntax is implemented as NCCL
 * documents it (Environment Variables, NCCL_IB_HCA / NCCL_SOCKET_IFNAME).
 */
#ifndef ROCEWATCH_NCCL_H
#define ROCEWATCH_NCCL_H

#include <stdbool.h>
#include <stddef.h>

#include "model.h"

#define NCCL_LIST_MAX 32

/*
 * "mlx5_0:1,mlx5_1": entries are prefixes of a name unless the list starts
 * with '=' (exact names); a leading '^' (before the '=') inverts the list; a
 * ":N" suffix restricts an entry to port N.
 */
struct nccl_list {
	bool exclude, exact;
	size_t n;
	struct {
		char name[RW_NAME_MAX];
		int port; /* -1: any port */
	} e[NCCL_LIST_MAX];
};

/* 0, or -EINVAL (an empty entry, a bad port, too many or too long entries). */
int nccl_list_parse(const char *s, struct nccl_list *l);
/* Does the list select (name, port)?  port -1: an interface, which has none. */
bool nccl_list_selects(const struct nccl_list *l, const char *name, int port);

enum nccl_var {
	NCCL_IB_HCA,
	NCCL_SOCKET_IFNAME,
	NCCL_IB_GID_INDEX,
	NCCL_IB_TC,
	NCCL_IB_DISABLE,
	NCCL_NET_GDR_LEVEL,
	NCCL_CROSS_NIC,
	NCCL_DEBUG,
	NCCL_ALGO,
	NCCL_PROTO,
	NCCL__VARS,
};

#define NCCL_VAL_MAX 256

struct nccl_env {
	bool given; /* --nccl or --nccl-env */
	bool set[NCCL__VARS];
	char val[NCCL__VARS][NCCL_VAL_MAX];
};

const char *nccl_var_name(enum nccl_var v);
/* KEY=VALUE: the variables rocewatch judges are kept, any other key is ignored. */
void nccl_env_put(struct nccl_env *env, const char *key, const char *val);
/* The process environment (environ). */
void nccl_env_from_environ(struct nccl_env *env, char **envp);
/*
 * A KEY=VALUE file (a job's environment: `export` prefixes, quotes, blank
 * lines and # comments allowed).  0, or -errno with "FILE:LINE: what" in err.
 */
int nccl_env_read_file(struct nccl_env *env, const char *path, char *err, size_t errlen);
/* Write the job.* facts of m->node from env and the rest of the model. */
void nccl_apply(const struct nccl_env *env, struct node_model *m);

#endif
