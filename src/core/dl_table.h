/* SPDX-License-Identifier: MIT */
/*
 * An optional library opened on first use (libcurl, SQLite): its soname
 * with dlopen, then each function of a table looked up by name into the
 * table's member.  Who uses it keeps its own table and pthread_once.
 */
#ifndef ROCEWATCH_DL_TABLE_H
#define ROCEWATCH_DL_TABLE_H

#include <stddef.h>

struct dl_sym {
	const char *name; /* in the library */
	size_t off;	  /* of its member in the table */
};

/*
 * 0, or -1 with err saying what needs the library and why it is not there:
 * "<need> needs <soname>: <dlerror>", "<soname> has no <name>: too old a <lib>".
 */
int dl_table_open(const char *soname, const struct dl_sym *syms, size_t n, void *table,
		  const char *need, const char *lib, char *err, size_t errlen);
/*
 * The same, as a linked library would be: opened into the global scope, and
 * a function an LD_PRELOAD object defines taken from it first (a shim that
 * calls on with dlsym(RTLD_NEXT) then reaches the library).  For libbpf,
 * whose test shim makes tcx look absent.
 */
int dl_table_open_interposable(const char *soname, const struct dl_sym *syms, size_t n, void *table,
			       const char *need, const char *lib, char *err, size_t errlen);

#endif
