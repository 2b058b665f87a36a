// SPDX-License-Identifier: MIT
/*
 * libbpf, opened when the wire collector starts (`--collector.wire`), not
 * when rocewatch does.
 *
 * Why: the wire view is off by default, yet a linked libbpf (and the libelf
 * it brings) is mapped and relocated in every process, serve, check and the
 * one-shot commands alike: about 0.2 MiB of serve's resident memory and two
 * more libraries for every `check` a Slurm prolog runs.  SQLite and libcurl
 * are opened the same way (src/recording/sqlite_lazy.c,
 * src/client/curl_api.c), through src/core/dl_table.h.
 *
 * The loader (collectors/wire/wire_loader.c) and the skeleton bpftool
 * generates call libbpf by its own names; the functions below carry those
 * names and prototypes (the libbpf headers are included, so the compiler
 * holds each to the library's declaration) and forward to the library's.
 * The collector calls wire_libbpf_open() before the loader, so a missing
 * library is its reason, said once; past that, every function below has its
 * library.  The package depends on libbpf1 by name (debian/control), which
 * dpkg-shlibdeps cannot see.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "dl_table.h"
#include "wire_libbpf.h"

#define LIBBPF_SONAME "libbpf.so.1"

static struct {
	libbpf_print_fn_t (*set_print)(libbpf_print_fn_t);
	int (*num_possible_cpus)(void);
	int (*open_skeleton)(struct bpf_object_skeleton *, const struct bpf_object_open_opts *);
	int (*load_skeleton)(struct bpf_object_skeleton *);
	void (*destroy_skeleton)(struct bpf_object_skeleton *);
	int (*map_fd)(const struct bpf_map *);
	int (*prog_fd)(const struct bpf_program *);
	int (*map_get_next_key)(int, const void *, void *);
	int (*map_lookup_elem)(int, const void *, void *);
	int (*link_create)(int, int, enum bpf_attach_type, const struct bpf_link_create_opts *);
	int (*link_detach)(int);
	int (*tc_hook_create)(struct bpf_tc_hook *);
	int (*tc_hook_destroy)(struct bpf_tc_hook *);
	int (*tc_attach)(const struct bpf_tc_hook *, struct bpf_tc_opts *);
	int (*tc_detach)(const struct bpf_tc_hook *, const struct bpf_tc_opts *);
	int (*tc_query)(const struct bpf_tc_hook *, struct bpf_tc_opts *);
} api;

static char load_err[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

#define SYM(name, member)                               \
	{                                               \
		name, offsetof(__typeof__(api), member) \
	}
static const struct dl_sym syms[] = {
	SYM("libbpf_set_print", set_print),
	SYM("libbpf_num_possible_cpus", num_possible_cpus),
	SYM("bpf_object__open_skeleton", open_skeleton),
	SYM("bpf_object__load_skeleton", load_skeleton),
	SYM("bpf_object__destroy_skeleton", destroy_skeleton),
	SYM("bpf_map__fd", map_fd),
	SYM("bpf_program__fd", prog_fd),
	SYM("bpf_map_get_next_key", map_get_next_key),
	SYM("bpf_map_lookup_elem", map_lookup_elem),
	SYM("bpf_link_create", link_create),
	SYM("bpf_link_detach", link_detach),
	SYM("bpf_tc_hook_create", tc_hook_create),
	SYM("bpf_tc_hook_destroy", tc_hook_destroy),
	SYM("bpf_tc_attach", tc_attach),
	SYM("bpf_tc_detach", tc_detach),
	SYM("bpf_tc_query", tc_query),
};

static void load(void)
{
	dl_table_open_interposable(LIBBPF_SONAME, syms, sizeof(syms) / sizeof(syms[0]), &api,
				   "the wire view (--collector.wire)", "libbpf", load_err,
				   sizeof(load_err));
}

static int loaded(void)
{
	pthread_once(&once, load);
	return !load_err[0];
}

int wire_libbpf_open(char *err, size_t errlen)
{
	if (loaded())
		return 0;
	snprintf(err, errlen, "%s", load_err);
	return -ENOENT;
}

/*
 * The forwarders.  Only the loader calls them, after wire_libbpf_open()
 * succeeded; should one come first anyway, each fails as libbpf's own do.
 */
libbpf_print_fn_t libbpf_set_print(libbpf_print_fn_t fn)
{
	return loaded() ? api.set_print(fn) : NULL;
}

int libbpf_num_possible_cpus(void)
{
	return loaded() ? api.num_possible_cpus() : -ENOENT;
}

int bpf_object__open_skeleton(struct bpf_object_skeleton *s,
			      const struct bpf_object_open_opts *opts)
{
	return loaded() ? api.open_skeleton(s, opts) : -ENOENT;
}

int bpf_object__load_skeleton(struct bpf_object_skeleton *s)
{
	return loaded() ? api.load_skeleton(s) : -ENOENT;
}

void bpf_object__destroy_skeleton(struct bpf_object_skeleton *s)
{
	if (s && loaded())
		api.destroy_skeleton(s);
}

int bpf_map__fd(const struct bpf_map *map)
{
	return loaded() ? api.map_fd(map) : -ENOENT;
}

int bpf_program__fd(const struct bpf_program *prog)
{
	return loaded() ? api.prog_fd(prog) : -ENOENT;
}

int bpf_map_get_next_key(int fd, const void *key, void *next_key)
{
	return loaded() ? api.map_get_next_key(fd, key, next_key) : -ENOENT;
}

int bpf_map_lookup_elem(int fd, const void *key, void *value)
{
	return loaded() ? api.map_lookup_elem(fd, key, value) : -ENOENT;
}

int bpf_link_create(int prog_fd, int target_fd, enum bpf_attach_type type,
		    const struct bpf_link_create_opts *opts)
{
	return loaded() ? api.link_create(prog_fd, target_fd, type, opts) : -ENOENT;
}

int bpf_link_detach(int link_fd)
{
	return loaded() ? api.link_detach(link_fd) : -ENOENT;
}

int bpf_tc_hook_create(struct bpf_tc_hook *hook)
{
	return loaded() ? api.tc_hook_create(hook) : -ENOENT;
}

int bpf_tc_hook_destroy(struct bpf_tc_hook *hook)
{
	return loaded() ? api.tc_hook_destroy(hook) : -ENOENT;
}

int bpf_tc_attach(const struct bpf_tc_hook *hook, struct bpf_tc_opts *opts)
{
	return loaded() ? api.tc_attach(hook, opts) : -ENOENT;
}

int bpf_tc_detach(const struct bpf_tc_hook *hook, const struct bpf_tc_opts *opts)
{
	return loaded() ? api.tc_detach(hook, opts) : -ENOENT;
}

int bpf_tc_query(const struct bpf_tc_hook *hook, struct bpf_tc_opts *opts)
{
	return loaded() ? api.tc_query(hook, opts) : -ENOENT;
}
