/* SPDX-License-Identifier: MIT */
/* A string -> int64 map (open addressing) for identities: series, objects, rule results. */
#ifndef ROCEWATCH_STRMAP_H
#define ROCEWATCH_STRMAP_H

#include <stddef.h>
#include <stdint.h>

struct strmap {
	size_t n, cap;
	char **keys;
	int64_t *vals;
};
int64_t strmap_get(const struct strmap *m, const char *k); /* -1 when missing */
int strmap_put(struct strmap *m, const char *k, int64_t v);
void strmap_free(struct strmap *m);

#endif
