// SPDX-License-Identifier: MIT
/* A string -> int64 map with open addressing, for identities (series, objects, rule results). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "strmap.h"
#include "util.h"

int64_t strmap_get(const struct strmap *m, const char *k)
{
	size_t i;

	if (!m->cap)
		return -1;
	for (i = fnv1a_str(k) & (m->cap - 1); m->keys[i]; i = (i + 1) & (m->cap - 1))
		if (!strcmp(m->keys[i], k))
			return m->vals[i];
	return -1;
}

int strmap_put(struct strmap *m, const char *k, int64_t v)
{
	size_t i;

	if ((m->n + 1) * 10 > m->cap * 7) {
		struct strmap nm = { .cap = m->cap ? m->cap * 2 : 1024, .n = m->n };

		nm.keys = calloc(nm.cap, sizeof(*nm.keys));
		nm.vals = calloc(nm.cap, sizeof(*nm.vals));
		if (!nm.keys || !nm.vals) {
			free(nm.keys);
			free(nm.vals);
			return -ENOMEM;
		}
		for (size_t j = 0; j < m->cap; j++) {
			if (!m->keys[j])
				continue;
			for (i = fnv1a_str(m->keys[j]) & (nm.cap - 1); nm.keys[i];
			     i = (i + 1) & (nm.cap - 1))
				;
			nm.keys[i] = m->keys[j];
			nm.vals[i] = m->vals[j];
		}
		free(m->keys);
		free(m->vals);
		*m = nm;
	}
	for (i = fnv1a_str(k) & (m->cap - 1); m->keys[i]; i = (i + 1) & (m->cap - 1))
		if (!strcmp(m->keys[i], k)) {
			m->vals[i] = v;
			return 0;
		}
	m->keys[i] = strdup(k);
	if (!m->keys[i])
		return -ENOMEM;
	m->vals[i] = v;
	m->n++;
	return 0;
}

void strmap_free(struct strmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->keys[i]);
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}
