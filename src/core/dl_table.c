// SPDX-License-Identifier: MIT
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "dl_table.h"

int dl_table_open(const char *soname, const struct dl_sym *syms, size_t n, void *table,
		  const char *need, const char *lib, char *err, size_t errlen)
{
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	const char *e;

	if (!h) {
		e = dlerror();
		snprintf(err, errlen, "%s needs %s: %s", need, soname, e ? e : "cannot be opened");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		void *f = dlsym(h, syms[i].name);

		if (!f) {
			snprintf(err, errlen, "%s has no %s: too old a %s", soname, syms[i].name,
				 lib);
			return -1;
		}
		memcpy((char *)table + syms[i].off, &f, sizeof(f));
	}
	return 0;
}
