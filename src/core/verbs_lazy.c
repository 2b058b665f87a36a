// SPDX-License-Identifier: MIT
/*
 * libibverbs, opened the first time verbs are used, not when rocewatch
 * starts: by the verbs collector on the live machine (collectors/verbs.c,
 * which does nothing with a --sysfs-root tree or --from), and by the RDMA
 * probe's endpoints (src/probe/probe_ud.c: `serve --probe`, `probe`).
 *
 * Why: a linked libibverbs brings libnl-route-3 and libnl-3 with it, mapped
 * and relocated in every process, about 0.6 MiB resident (the peak RSS of
 * `rocewatch version`: a median 5.99 MiB linked, 5.42 MiB opened; `serve`
 * over a fixture tree alike), though `check` or `snapshot` over a fixture
 * tree, `report`, `replay`, `export` and `fleet check` never make a verbs
 * call.  A `serve` on an RDMA node still opens it when its verbs collector
 * starts.  libbpf, SQLite and libcurl are opened the same way
 * (collectors/wire_libbpf.c, src/recording/sqlite_lazy.c,
 * src/client/curl_api.c), through dl_table.h.
 *
 * Why in the core: two rooms call verbs, the collectors and the probe, and
 * neither may see the other; the core is the one room both use.  The core
 * is compiled with libibverbs' headers only (a partial dependency in
 * meson.build) and links nothing: this file is pulled into a binary only by
 * a caller of one of the functions below.
 *
 * The functions below carry libibverbs' own names and prototypes
 * (<infiniband/verbs.h> is included, so the compiler holds each to the
 * library's declaration) and forward to the library's.  They are the
 * symbols a link against the library bound, no more: most of what
 * <infiniband/verbs.h> calls a function is a static inline that goes
 * through the context's ops (ibv_post_send, ibv_poll_cq, ibv_req_notify_cq,
 * ibv_query_device_ex) or wraps one of these (ibv_query_port and
 * ibv_reg_mr are macros over the exported functions of the same name,
 * ibv_query_gid_ex and ibv_query_gid_table over _ibv_query_gid_ex and
 * _ibv_query_gid_table; ibv_reg_mr_iova2 is what __ibv_reg_mr() calls where
 * the access flags are not folded to a constant, as at -O0).  A callee
 * added elsewhere is an undefined reference at the link, to add here.
 *
 * Versions: most of these exist as IBVERBS_1.0 and, the default,
 * IBVERBS_1.1 (objdump -T); dlsym() returns the default version, the one a
 * link binds, so no dlvsym() is needed.
 *
 * Callers call verbs_lazy_open() before their first verbs call, so a missing
 * library is their reason, said once; past that, every function below has
 * its library.  Should one be reached first anyway, it opens the library,
 * and without it fails as the library's own do (NULL, -1 or an errno
 * value, as the function documents) with errno ENOSYS.  No test interposes
 * a verbs function (LD_PRELOAD), so the library is opened RTLD_LOCAL.  The
 * package depends on libibverbs1 by name (debian/control), which
 * dpkg-shlibdeps cannot see.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>

#include <infiniband/verbs.h>

#include "dl_table.h"
#include "verbs_lazy.h"

/* Macros of verbs.h over the exported functions of the same name, defined below. */
#undef ibv_query_port
#undef ibv_reg_mr

#define FN(name) __typeof__(name) *name
static struct {
	FN(ibv_get_device_list);
	FN(ibv_free_device_list);
	FN(ibv_get_device_name);
	FN(ibv_open_device);
	FN(ibv_close_device);
	FN(ibv_get_async_event);
	FN(ibv_ack_async_event);
	FN(ibv_query_device);
	FN(ibv_query_port);
	FN(_ibv_query_gid_ex);
	FN(_ibv_query_gid_table);
	FN(ibv_alloc_pd);
	FN(ibv_dealloc_pd);
	FN(ibv_reg_mr);
	FN(ibv_reg_mr_iova2);
	FN(ibv_dereg_mr);
	FN(ibv_create_comp_channel);
	FN(ibv_destroy_comp_channel);
	FN(ibv_create_cq);
	FN(ibv_destroy_cq);
	FN(ibv_get_cq_event);
	FN(ibv_ack_cq_events);
	FN(ibv_create_qp);
	FN(ibv_modify_qp);
	FN(ibv_destroy_qp);
	FN(ibv_create_ah);
	FN(ibv_destroy_ah);
} api;
#undef FN

static char load_err[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

#define SYM(f)                                                  \
	{                                                       \
		.name = #f, .off = offsetof(__typeof__(api), f) \
	}
static const struct dl_sym syms[] = {
	SYM(ibv_get_device_list),     SYM(ibv_free_device_list),
	SYM(ibv_get_device_name),     SYM(ibv_open_device),
	SYM(ibv_close_device),	      SYM(ibv_get_async_event),
	SYM(ibv_ack_async_event),     SYM(ibv_query_device),
	SYM(ibv_query_port),	      SYM(_ibv_query_gid_ex),
	SYM(_ibv_query_gid_table),    SYM(ibv_alloc_pd),
	SYM(ibv_dealloc_pd),	      SYM(ibv_reg_mr),
	SYM(ibv_reg_mr_iova2),	      SYM(ibv_dereg_mr),
	SYM(ibv_create_comp_channel), SYM(ibv_destroy_comp_channel),
	SYM(ibv_create_cq),	      SYM(ibv_destroy_cq),
	SYM(ibv_get_cq_event),	      SYM(ibv_ack_cq_events),
	SYM(ibv_create_qp),	      SYM(ibv_modify_qp),
	SYM(ibv_destroy_qp),	      SYM(ibv_create_ah),
	SYM(ibv_destroy_ah),
};
#undef SYM

static void load(void)
{
	dl_table_open(VERBS_LAZY_SONAME, syms, sizeof(syms) / sizeof(syms[0]), &api, "RDMA verbs",
		      "libibverbs", load_err, sizeof(load_err));
}

static int loaded(void)
{
	pthread_once(&once, load);
	return !load_err[0];
}

int verbs_lazy_open(char *err, size_t errlen)
{
	if (loaded())
		return 0;
	snprintf(err, errlen, "%s", load_err);
	return -ENOENT;
}

/* Without the library: the function's own failure value, errno ENOSYS. */
static void *nolib_ptr(void)
{
	errno = ENOSYS;
	return NULL;
}

static int nolib(int r)
{
	errno = ENOSYS;
	return r;
}

struct ibv_device **ibv_get_device_list(int *num_devices)
{
	return loaded() ? api.ibv_get_device_list(num_devices) : nolib_ptr();
}

void ibv_free_device_list(struct ibv_device **list)
{
	if (list && loaded())
		api.ibv_free_device_list(list);
}

const char *ibv_get_device_name(struct ibv_device *device)
{
	return loaded() ? api.ibv_get_device_name(device) : nolib_ptr();
}

struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	return loaded() ? api.ibv_open_device(device) : nolib_ptr();
}

int ibv_close_device(struct ibv_context *context)
{
	return loaded() ? api.ibv_close_device(context) : nolib(-1);
}

int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
	return loaded() ? api.ibv_get_async_event(context, event) : nolib(-1);
}

void ibv_ack_async_event(struct ibv_async_event *event)
{
	if (loaded())
		api.ibv_ack_async_event(event);
}

int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *device_attr)
{
	return loaded() ? api.ibv_query_device(context, device_attr) : nolib(ENOSYS);
}

int ibv_query_port(struct ibv_context *context, uint8_t port_num,
		   struct _compat_ibv_port_attr *port_attr)
{
	return loaded() ? api.ibv_query_port(context, port_num, port_attr) : nolib(ENOSYS);
}

int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num, uint32_t gid_index,
		      struct ibv_gid_entry *entry, uint32_t flags, size_t entry_size)
{
	return loaded()
		   ? api._ibv_query_gid_ex(context, port_num, gid_index, entry, flags, entry_size)
		   : nolib(ENOSYS);
}

ssize_t _ibv_query_gid_table(struct ibv_context *context, struct ibv_gid_entry *entries,
			     size_t max_entries, uint32_t flags, size_t entry_size)
{
	return loaded() ? api._ibv_query_gid_table(context, entries, max_entries, flags, entry_size)
			: nolib(-ENOSYS);
}

struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	return loaded() ? api.ibv_alloc_pd(context) : nolib_ptr();
}

int ibv_dealloc_pd(struct ibv_pd *pd)
{
	return loaded() ? api.ibv_dealloc_pd(pd) : nolib(ENOSYS);
}

struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return loaded() ? api.ibv_reg_mr(pd, addr, length, access) : nolib_ptr();
}

struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
				unsigned int access)
{
	return loaded() ? api.ibv_reg_mr_iova2(pd, addr, length, iova, access) : nolib_ptr();
}

int ibv_dereg_mr(struct ibv_mr *mr)
{
	return loaded() ? api.ibv_dereg_mr(mr) : nolib(ENOSYS);
}

struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	return loaded() ? api.ibv_create_comp_channel(context) : nolib_ptr();
}

int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	return loaded() ? api.ibv_destroy_comp_channel(channel) : nolib(ENOSYS);
}

struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
			     struct ibv_comp_channel *channel, int comp_vector)
{
	return loaded() ? api.ibv_create_cq(context, cqe, cq_context, channel, comp_vector)
			: nolib_ptr();
}

int ibv_destroy_cq(struct ibv_cq *cq)
{
	return loaded() ? api.ibv_destroy_cq(cq) : nolib(ENOSYS);
}

int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
	return loaded() ? api.ibv_get_cq_event(channel, cq, cq_context) : nolib(-1);
}

void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	if (loaded())
		api.ibv_ack_cq_events(cq, nevents);
}

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	return loaded() ? api.ibv_create_qp(pd, qp_init_attr) : nolib_ptr();
}

int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	return loaded() ? api.ibv_modify_qp(qp, attr, attr_mask) : nolib(ENOSYS);
}

int ibv_destroy_qp(struct ibv_qp *qp)
{
	return loaded() ? api.ibv_destroy_qp(qp) : nolib(ENOSYS);
}

struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	return loaded() ? api.ibv_create_ah(pd, attr) : nolib_ptr();
}

int ibv_destroy_ah(struct ibv_ah *ah)
{
	return loaded() ? api.ibv_destroy_ah(ah) : nolib(ENOSYS);
}
