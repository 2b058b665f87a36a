// SPDX-License-Identifier: MIT
/*
 * SQLite, opened the first time a recording is (`serve --record`, replay,
 * export, report, `check --history`), not when rocewatch starts.
 *
 * Why: a node's `serve` without `--record` never touches a recording, yet a
 * linked libsqlite3 is mapped and relocated in every process: 0.25 MiB of
 * its 8-9 MiB resident (README, Performance).  libcurl is opened the same
 * way (src/client/curl_api.h); systemd does it for its optional libraries
 * (dlopen_many_sym_or_warn() in its src/shared/).
 *
 * The functions below carry SQLite's own names and prototypes (<sqlite3.h>
 * is included, so the compiler holds each to the library's declaration),
 * and forward to the library's.  Callers are unchanged.  Opening a database
 * is where a missing library shows: sqlite3_open_v2() fails with
 * SQLITE_CANTOPEN, no handle, and sqlite3_errmsg(NULL) names the library and
 * why.  Every other function takes a handle or a statement, which only an
 * opened library gives.  The package depends on the library by name
 * (debian/control: libsqlite3-0), which dpkg-shlibdeps cannot see.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <sqlite3.h>

#include "dl_table.h"

#define SQLITE_SONAME "libsqlite3.so.0"

static struct {
	int (*open_v2)(const char *, sqlite3 **, int, const char *);
	int (*close)(sqlite3 *);
	const char *(*errmsg)(sqlite3 *);
	const char *(*errstr)(int);
	int (*extended_result_codes)(sqlite3 *, int);
	int (*busy_timeout)(sqlite3 *, int);
	int (*exec)(sqlite3 *, const char *, int (*)(void *, int, char **, char **), void *,
		    char **);
	void (*free)(void *);
	sqlite3_int64 (*last_insert_rowid)(sqlite3 *);
	int (*prepare_v2)(sqlite3 *, const char *, int, sqlite3_stmt **, const char **);
	int (*prepare_v3)(sqlite3 *, const char *, int, unsigned int, sqlite3_stmt **,
			  const char **);
	int (*step)(sqlite3_stmt *);
	int (*reset)(sqlite3_stmt *);
	int (*finalize)(sqlite3_stmt *);
	int (*clear_bindings)(sqlite3_stmt *);
	int (*bind_int64)(sqlite3_stmt *, int, sqlite3_int64);
	int (*bind_double)(sqlite3_stmt *, int, double);
	int (*bind_text)(sqlite3_stmt *, int, const char *, int, void (*)(void *));
	int (*column_type)(sqlite3_stmt *, int);
	sqlite3_int64 (*column_int64)(sqlite3_stmt *, int);
	double (*column_double)(sqlite3_stmt *, int);
	const unsigned char *(*column_text)(sqlite3_stmt *, int);
	int (*column_bytes)(sqlite3_stmt *, int);
	const char *(*column_name)(sqlite3_stmt *, int);
} api;

static char load_err[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

#define SYM(member)                                                   \
	{                                                             \
		"sqlite3_" #member, offsetof(__typeof__(api), member) \
	}
static const struct dl_sym syms[] = {
	SYM(open_v2),
	SYM(close),
	SYM(errmsg),
	SYM(errstr),
	SYM(extended_result_codes),
	SYM(busy_timeout),
	SYM(exec),
	SYM(free),
	SYM(last_insert_rowid),
	SYM(prepare_v2),
	SYM(prepare_v3),
	SYM(step),
	SYM(reset),
	SYM(finalize),
	SYM(clear_bindings),
	SYM(bind_int64),
	SYM(bind_double),
	SYM(bind_text),
	SYM(column_type),
	SYM(column_int64),
	SYM(column_double),
	SYM(column_text),
	SYM(column_bytes),
	SYM(column_name),
};

static void load(void)
{
	dl_table_open(SQLITE_SONAME, syms, sizeof(syms) / sizeof(syms[0]), &api, "a recording",
		      "SQLite", load_err, sizeof(load_err));
}

static int loaded(void)
{
	pthread_once(&once, load);
	return !load_err[0];
}

int sqlite3_open_v2(const char *filename, sqlite3 **db, int flags, const char *vfs)
{
	if (!loaded()) {
		*db = NULL;
		return SQLITE_CANTOPEN;
	}
	return api.open_v2(filename, db, flags, vfs);
}

int sqlite3_open(const char *filename, sqlite3 **db)
{
	return sqlite3_open_v2(filename, db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
}

int sqlite3_close(sqlite3 *db)
{
	return db ? api.close(db) : SQLITE_OK; /* NULL: a harmless no-op, as SQLite's own */
}

const char *sqlite3_errmsg(sqlite3 *db)
{
	return loaded() ? api.errmsg(db) : load_err;
}

const char *sqlite3_errstr(int rc)
{
	return loaded() ? api.errstr(rc) : load_err;
}

void sqlite3_free(void *p)
{
	if (p)
		api.free(p); /* only the library gives memory to free */
}

int sqlite3_extended_result_codes(sqlite3 *db, int onoff)
{
	return api.extended_result_codes(db, onoff);
}

int sqlite3_busy_timeout(sqlite3 *db, int ms)
{
	return api.busy_timeout(db, ms);
}

int sqlite3_exec(sqlite3 *db, const char *sql, int (*cb)(void *, int, char **, char **), void *arg,
		 char **errmsg)
{
	return api.exec(db, sql, cb, arg, errmsg);
}

sqlite3_int64 sqlite3_last_insert_rowid(sqlite3 *db)
{
	return api.last_insert_rowid(db);
}

int sqlite3_prepare_v2(sqlite3 *db, const char *sql, int n, sqlite3_stmt **st, const char **tail)
{
	return api.prepare_v2(db, sql, n, st, tail);
}

int sqlite3_prepare_v3(sqlite3 *db, const char *sql, int n, unsigned int flags, sqlite3_stmt **st,
		       const char **tail)
{
	return api.prepare_v3(db, sql, n, flags, st, tail);
}

int sqlite3_step(sqlite3_stmt *st)
{
	return api.step(st);
}

int sqlite3_reset(sqlite3_stmt *st)
{
	return api.reset(st);
}

int sqlite3_finalize(sqlite3_stmt *st)
{
	return st ? api.finalize(st) : SQLITE_OK; /* NULL: a no-op, as SQLite's own */
}

int sqlite3_clear_bindings(sqlite3_stmt *st)
{
	return api.clear_bindings(st);
}

int sqlite3_bind_int64(sqlite3_stmt *st, int i, sqlite3_int64 v)
{
	return api.bind_int64(st, i, v);
}

int sqlite3_bind_double(sqlite3_stmt *st, int i, double v)
{
	return api.bind_double(st, i, v);
}

int sqlite3_bind_text(sqlite3_stmt *st, int i, const char *v, int n, void (*destroy)(void *))
{
	return api.bind_text(st, i, v, n, destroy);
}

int sqlite3_column_type(sqlite3_stmt *st, int i)
{
	return api.column_type(st, i);
}

sqlite3_int64 sqlite3_column_int64(sqlite3_stmt *st, int i)
{
	return api.column_int64(st, i);
}

double sqlite3_column_double(sqlite3_stmt *st, int i)
{
	return api.column_double(st, i);
}

const unsigned char *sqlite3_column_text(sqlite3_stmt *st, int i)
{
	return api.column_text(st, i);
}

int sqlite3_column_bytes(sqlite3_stmt *st, int i)
{
	return api.column_bytes(st, i);
}

const char *sqlite3_column_name(sqlite3_stmt *st, int i)
{
	return api.column_name(st, i);
}
