// SPDX-License-Identifier: MIT
/*
 * A job's NCCL settings (src/core/nccl.c), byte 0 picks:
 *   0 nccl_list_parse + nccl_list_selects: never fails; a parsed list has
 *     at most NCCL_LIST_MAX non-empty entries shorter than NCCL_PREFIX_MAX,
 *     ports -1 or what atoi gives, and selects a name in exactly one of it
 *     and its '^' inverse, read as old and as new NCCL
 *   1 nccl_env_read_file (a --nccl-env file) then nccl_apply() on a small
 *     model: 0, or -EINVAL with "FILE:LINE: " in the message; every job.*
 *     fact afterwards present or absent with a reason, strings terminated,
 *     every reading's items and note terminated
 */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "model.h"
#include "nccl.h"

static int memfd = -1;

static void fuzz_list(const char *s)
{
	static const char *const names[] = { "mlx5_0", "mlx5_10", "eth0", "docker0", "" };
	struct nccl_list l, inv;

	nccl_list_parse(s, NCCL_LIST_MAX, &l);
	FUZZ_CHECK(l.n <= NCCL_LIST_MAX, "%zu entries", l.n);
	for (size_t i = 0; i < l.n; i++)
		FUZZ_CHECK(l.e[i].name[0] && strlen(l.e[i].name) < NCCL_PREFIX_MAX, "entry %zu", i);
	inv = l;
	inv.exclude = !l.exclude;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		for (int port = -1; port <= 2; port++)
			for (int old = 0; old <= 1; old++)
				FUZZ_CHECK(nccl_list_selects(&l, names[i], port, old) !=
					       nccl_list_selects(&inv, names[i], port, old),
					   "'%s' and its inverse agree on %s:%d", s, names[i],
					   port);
}

/* An ACTIVE RoCE port with a GID table, so the GID walk runs on what the input sets. */
static void add_port_with_gids(struct node_model *m)
{
	static const struct gid_entry gids[] = {
		{ 0, "fe80:0000:0000:0000:0a00:27ff:fe00:0001", "IB/RoCE v1" },
		{ 1, "fe80:0000:0000:0000:0a00:27ff:fe00:0001", "RoCE v2" },
		{ 2, "0000:0000:0000:0000:0000:ffff:c0a8:010a", "IB/RoCE v1" },
		{ 3, "0000:0000:0000:0000:0000:ffff:c0a8:010a", "RoCE v2" },
		{ 5, "fd00:0000:0000:0000:0000:0000:0000:0001", "RoCE v2" },
	};
	struct object *p = model_add_port(m, "mlx5_0", 1);

	if (!p)
		abort();
	field_set_str(p, F_PORT_STATE, "ACTIVE");
	field_set_str(p, F_PORT_LINK_LAYER, "Ethernet");
	p->gids.e = malloc(sizeof(gids));
	if (!p->gids.e)
		abort();
	memcpy(p->gids.e, gids, sizeof(gids));
	p->gids.n = p->gids.cap = sizeof(gids) / sizeof(gids[0]);
	p->f[F_PORT_GIDS].state = ABS_NONE;
	p->f[F_PORT_GIDS].v.gids = &p->gids;
}

static void fuzz_env(const uint8_t *data, size_t size)
{
	char path[64], err[512] = "";
	struct nccl_env env = { 0 };
	struct node_model m;
	int r;

	if (memfd < 0)
		memfd = memfd_create("fuzz-nccl", MFD_CLOEXEC);
	if (memfd < 0 || ftruncate(memfd, 0) || pwrite(memfd, data, size, 0) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
	r = nccl_env_read_file(&env, path, err, sizeof(err));
	FUZZ_CHECK(r == 0 || r == -EINVAL, "nccl_env_read_file returned %d", r);
	if (r) {
		FUZZ_CHECK(!strncmp(err, path, strlen(path)) && err[strlen(path)] == ':',
			   "error does not name FILE:LINE: %s", err);
		nccl_env_free(&env);
		return;
	}
	for (int v = 0; v < NCCL__VARS; v++)
		FUZZ_CHECK(env.set[v] == (env.val[v] != NULL), "value %d set but NULL", v);
	model_init(&m);
	add_port_with_gids(&m);
	field_set_str(model_add_port(&m, "mlx5_1", 1), F_PORT_LINK_LAYER, "Ethernet");
	field_set_str(model_add_netdev(&m, "eth0"), F_NETDEV_OPERSTATE, "up");
	nccl_apply(&env, &m);
	for (int id = F_JOB_NCCL; id <= F_JOB_DEBUG_TUNING; id++) {
		const struct field_val *f = &m.node.f[id];

		FUZZ_CHECK(f->state < ABS__COUNT, "%s: state %d", fields[id].path, f->state);
		if (f->state == ABS_NONE && fields[id].type == VT_STR)
			FUZZ_CHECK(memchr(f->v.s, '\0', sizeof(f->v.s)), "%s unterminated",
				   fields[id].path);
	}
	for (int v = 0; v < NCCL__VARS; v++) {
		const struct nccl_reading *o = &env.out[v];

		FUZZ_CHECK(o->n <= NCCL_LIST_MAX, "%d: %zu items", v, o->n);
		FUZZ_CHECK(strlen(nccl_note(o)) == o->note.len, "%d: note of %zu bytes, %zu long",
			   v, o->note.len, strlen(nccl_note(o)));
		for (size_t i = 0; i < o->n; i++)
			FUZZ_CHECK(memchr(o->items[i], '\0', NCCL_ITEM_MAX),
				   "%d: item unterminated", v);
	}
	nccl_env_free(&env);
	model_free(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	if (!size)
		return 0;
	if (data[0] % 2 == 0) {
		s = fuzz_str(data + 1, size - 1);
		fuzz_list(s);
		free(s);
	} else {
		fuzz_env(data + 1, size - 1);
	}
	return 0;
}
