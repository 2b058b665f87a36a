// SPDX-License-Identifier: MIT
/*
 * The GID table of an RDMA port (gids/N, gid_attrs/types/N,
 * gid_attrs/ndevs/N) and what NCCL needs from it: the index of the RoCE v2
 * GID carrying the netdev's IPv4 address (NCCL_IB_GID_INDEX).
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rdma.h"
#include "util.h"

bool rdma_gid_ipv4(const char *gid, uint32_t *v4)
{
	struct in6_addr a;

	/* sysfs prints GIDs as eight 4-digit groups, which inet_pton accepts. */
	if (inet_pton(AF_INET6, gid, &a) != 1 || !IN6_IS_ADDR_V4MAPPED(&a))
		return false;
	if (v4)
		memcpy(v4, &a.s6_addr[12], 4);
	return true;
}

bool rdma_gid_is_zero(const char *gid)
{
	struct in6_addr a;

	return inet_pton(AF_INET6, gid, &a) == 1 && IN6_IS_ADDR_UNSPECIFIED(&a);
}

/*
 * drivers/infiniband/core/cache.c prints "IB/RoCE v1" for both IB and RoCE
 * v1 GIDs (user-space compatibility); the link layer tells them apart.
 */
void rdma_gid_type_name(const char *sysfs_type, const char *link_layer, char *out, size_t size)
{
	if (!strcmp(sysfs_type, "IB/RoCE v1"))
		strlcpy0(out, link_layer && !strcmp(link_layer, "InfiniBand") ? "IB" : "RoCE v1",
			 size);
	else
		strlcpy0(out, sysfs_type, size);
}

int rdma_rocev2_ipv4_index(const struct gid_table *t, const char *netdev, const char *addrs)
{
	int best = -ENOENT;
	char list[RW_STR_MAX], *save = NULL, *tok;

	for (size_t i = 0; i < t->n; i++) {
		const struct gid_entry *g = &t->e[i];

		/* the index is returned as an int: one past INT_MAX is no table's (fuzzing) */
		if (g->index > INT_MAX || strcmp(g->type, "RoCE v2") || strcmp(g->netdev, netdev) ||
		    !rdma_gid_ipv4(g->gid, NULL))
			continue;
		if (best < 0 || g->index < (uint32_t)best)
			best = (int)g->index;
	}
	if (best < 0 || !addrs || !*addrs)
		return best;
	/* Several addresses: NCCL picks by address family and subnet; prefer the first address. */
	strlcpy0(list, addrs, sizeof(list));
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		struct in_addr want;

		if (inet_pton(AF_INET, tok, &want) != 1)
			continue;
		for (size_t i = 0; i < t->n; i++) {
			const struct gid_entry *g = &t->e[i];
			uint32_t v4;

			if (g->index <= INT_MAX && !strcmp(g->type, "RoCE v2") &&
			    !strcmp(g->netdev, netdev) && rdma_gid_ipv4(g->gid, &v4) &&
			    v4 == want.s_addr)
				return (int)g->index;
		}
	}
	return best;
}

/* A directory that did not open (dfd < 0) has no files: a 1024-entry table is 3000 reads. */
static int read_at(int dfd, const char *name, char *buf, size_t size)
{
	return dfd >= 0 ? read_file_at(dfd, name, buf, size) : -ENOENT;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

int rdma_read_gids(struct rdma_priv *rp, const char *dev, uint32_t port, const char *ll,
		   struct gid_table *t)
{
	char path[PATH_MAX], name[16], gid[64], type[32];
	uint32_t *idx = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	int r = 0, gfd, tfd, nfd;
	DIR *dir;

	t->n = 0;
	snprintf(path, sizeof(path), "%s/%s/ports/%u/gids", rp->ib, dev, port);
	dir = opendir(path);
	if (!dir)
		return -errno;
	gfd = dirfd(dir);
	snprintf(path, sizeof(path), "%s/%s/ports/%u/gid_attrs/types", rp->ib, dev, port);
	tfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	snprintf(path, sizeof(path), "%s/%s/ports/%u/gid_attrs/ndevs", rp->ib, dev, port);
	nfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	while ((de = readdir(dir))) {
		uint64_t v;

		if (!rdma_is_number(de->d_name) || parse_u64(de->d_name, &v) || v > INT_MAX)
			continue;
		if (array_grow(&idx, &cap, n, sizeof(*idx), 8)) {
			r = -ENOMEM;
			goto close_dirs;
		}
		idx[n++] = (uint32_t)v;
	}
	/* readdir order is the filesystem's; GID tables are listed by index. */
	if (n > 1)
		qsort(idx, n, sizeof(*idx), cmp_u32);
	for (size_t i = 0; i < n; i++) {
		struct gid_entry *g;
		int tr;

		snprintf(name, sizeof(name), "%u", idx[i]);
		if (read_at(gfd, name, gid, sizeof(gid)) || rdma_gid_is_zero(gid) ||
		    strlen(gid) >= RW_GID_STR_MAX)
			continue;
		/* An unpopulated entry's type reads EINVAL (core/sysfs.c print_gid_type()). */
		tr = read_at(tfd, name, type, sizeof(type));
		if (tr == -EINVAL)
			continue;
		if (array_grow(&t->e, &t->cap, t->n, sizeof(*t->e), 16)) {
			r = -ENOMEM;
			goto close_dirs;
		}
		g = &t->e[t->n++];
		memset(g, 0, sizeof(*g));
		g->index = idx[i];
		strlcpy0(g->gid, gid, sizeof(g->gid));
		/* Kernels before gid_attrs (4.8) have no types: the type stays unknown (""). */
		if (!tr)
			rdma_gid_type_name(type, ll, g->type, sizeof(g->type));
		if (read_at(nfd, name, g->netdev, sizeof(g->netdev)))
			g->netdev[0] = '\0';
	}
close_dirs:
	if (nfd >= 0)
		close(nfd);
	if (tfd >= 0)
		close(tfd);
	closedir(dir);
	free(idx);
	return r;
}
