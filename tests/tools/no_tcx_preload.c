// SPDX-License-Identifier: MIT
/*
 * no_tcx_preload: LD_PRELOAD shim that makes libbpf's bpf_link_create()
 * answer tcx attach types the way a pre-6.6 kernel does (-EINVAL), so the
 * loader's fallback to clsact can be tested on a kernel that has tcx.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>

#include <bpf/bpf.h>

/* enum bpf_attach_type: BPF_TCX_INGRESS, BPF_TCX_EGRESS (Linux 6.6). */
#define TCX_INGRESS 46
#define TCX_EGRESS  47

int bpf_link_create(int prog_fd, int target_fd, enum bpf_attach_type type,
		    const struct bpf_link_create_opts *opts)
{
	int (*real)(int, int, enum bpf_attach_type, const struct bpf_link_create_opts *);

	if ((int)type == TCX_INGRESS || (int)type == TCX_EGRESS) {
		errno = EINVAL;
		return -EINVAL;
	}
	/* POSIX's way around ISO C's object/function pointer split. */
	*(void **)&real = dlsym(RTLD_NEXT, "bpf_link_create");
	if (!real) {
		errno = ENOSYS;
		return -ENOSYS;
	}
	return real(prog_fd, target_fd, type, opts);
}
