// SPDX-License-Identifier: MIT
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_NEXT */
#endif
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "dl_table.h"

static int table_open(const char *soname, const struct dl_sym *syms, size_t n, void *table,
		      const char *need, const char *lib, char *err, size_t errlen,
		      bool interposable)
{
	void *h = dlopen(soname, RTLD_NOW | (interposable ? RTLD_GLOBAL : RTLD_LOCAL));
	const char *e;

	if (!h) {
		e = dlerror();
		snprintf(err, errlen, "%s needs %s: %s", need, soname, e ? e : "cannot be opened");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		/* RTLD_NEXT from here: past the executable, so never its own forwarder */
		void *f = interposable ? dlsym(RTLD_NEXT, syms[i].name) : NULL;

		if (!f)
			f = dlsym(h, syms[i].name);

		if (!f) {
			snprintf(err, errlen, "%s has no %s: too old a %s", soname, syms[i].name,
				 lib);
			return -1;
		}
		memcpy((char *)table + syms[i].off, &f, sizeof(f));
	}
	return 0;
}

int dl_table_open(const char *soname, const struct dl_sym *syms, size_t n, void *table,
		  const char *need, const char *lib, char *err, size_t errlen)
{
	return table_open(soname, syms, n, table, need, lib, err, errlen, false);
}

int dl_table_open_interposable(const char *soname, const struct dl_sym *syms, size_t n, void *table,
			       const char *need, const char *lib, char *err, size_t errlen)
{
	return table_open(soname, syms, n, table, need, lib, err, errlen, true);
}
