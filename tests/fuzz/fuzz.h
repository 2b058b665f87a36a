/* SPDX-License-Identifier: MIT */
/*
 * Shared by the harnesses (fuzz_*.c): each defines LLVMFuzzerTestOneInput()
 * and is linked twice, with libFuzzer (`make fuzz`) and with replay.c (the
 * corpus replay `make test` runs).  A harness checks the parser's contract,
 * not only that it survives: a broken promise is a finding (abort()).
 */
#ifndef ROCEWATCH_FUZZ_H
#define ROCEWATCH_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input in a heap buffer of exactly its size: ASan sees a read past it. */
static inline void *fuzz_copy(const uint8_t *data, size_t size)
{
	void *p = malloc(size ? size : 1);

	if (!p)
		abort();
	memcpy(p, data, size);
	return p;
}

/* The input as a terminated string (what a sysfs read or a flag value is). */
static inline char *fuzz_str(const uint8_t *data, size_t size)
{
	char *p = malloc(size + 1);

	if (!p)
		abort();
	memcpy(p, data, size);
	p[size] = '\0';
	return p;
}

#define FUZZ_CHECK(cond, ...)                                                                      \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: broken promise: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

#endif
