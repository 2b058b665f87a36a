/* SPDX-License-Identifier: MIT */
/*
 * libbpf opened on first use (collectors/wire_libbpf.c says why): the wire
 * collector calls this before the loader.
 */
#ifndef ROCEWATCH_WIRE_LIBBPF_H
#define ROCEWATCH_WIRE_LIBBPF_H

#include <stddef.h>

/* 0, or -ENOENT with err naming the library and why it did not open. */
int wire_libbpf_open(char *err, size_t errlen);

#endif
