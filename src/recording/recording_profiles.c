// SPDX-License-Identifier: MIT
/*
 * The rules a recording says serve ran (the profiles table of schema 2,
 * docs/recording.md): which set was in force at a time, read as outside
 * input like every other table.  replay_rules.c decides what to do with it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bounded.h"
#include "recording.h"
#include "util.h"

/* A copy of s with its control bytes escaped (it reaches the terminal), or NULL. */
static char *text_dup(const char *s)
{
	size_t n = strlen(s) * 4 + 1;
	char *buf = malloc(n);

	if (buf)
		text_escape_ctl(s, buf, n);
	return buf;
}

static void profile_row_free(struct rec_profile_row *p)
{
	for (size_t i = 0; i < p->n_params; i++) {
		free(p->params[i].name);
		free(p->params[i].value);
		free(p->params[i].given);
	}
	free(p->params);
	free(p->name);
	free(p->source);
	free(p->origin);
}

void rec_rules_free(struct rec_rules *rr)
{
	for (size_t i = 0; i < rr->n; i++)
		profile_row_free(&rr->p[i]);
	free(rr->p);
	memset(rr, 0, sizeof(*rr));
}

/* params, the JSON array: 0, -EINVAL (bad, why says what) or -ENOMEM */
static int parse_params(struct rec_profile_row *p, const char *text, const char **why)
{
	json_t *arr = json_loads(text, 0, NULL), *o;
	size_t i;
	int r = 0;

	if (!json_is_array(arr)) {
		*why = "params is not a JSON array";
		json_decref(arr);
		return -EINVAL;
	}
	p->params = calloc(json_array_size(arr) + 1, sizeof(*p->params));
	if (!p->params) {
		json_decref(arr);
		return -ENOMEM;
	}
	json_array_foreach(arr, i, o)
	{
		const char *name = json_string_value(json_object_get(o, "name"));
		const char *value = json_string_value(json_object_get(o, "value"));
		const char *given = json_string_value(json_object_get(o, "given"));
		struct rec_param_row *q = &p->params[p->n_params];

		if (!name || !name[0] || !value) {
			*why = "a parameter without a name or a value";
			r = -EINVAL;
			break;
		}
		q->name = text_dup(name);
		q->value = text_dup(value);
		q->given = given ? text_dup(given) : NULL;
		p->n_params++;
		if (!q->name || !q->value || (given && !q->given)) {
			r = -ENOMEM;
			break;
		}
	}
	json_decref(arr);
	return r;
}

/* The set that began at t_ms, in load order. */
static int load_set(struct rec_reader *r, int64_t t_ms, struct rec_rules *out, char *err,
		    size_t errlen)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc;

	rc = sqlite3_prepare_v2(r->db,
				"SELECT pos, name, source, origin, text_hash, params FROM profiles"
				" WHERE t_ms = ?1 ORDER BY pos",
				-1, &st, NULL);
	if (rc != SQLITE_OK)
		goto sql_err;
	sqlite3_bind_int64(st, 1, t_ms);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 1);
		const char *source = (const char *)sqlite3_column_text(st, 2);
		const char *origin = (const char *)sqlite3_column_text(st, 3);
		const char *hash = (const char *)sqlite3_column_text(st, 4);
		const char *params = (const char *)sqlite3_column_text(st, 5);
		int64_t pos = sqlite3_column_int64(st, 0);
		struct rec_profile_row *p;
		const char *why = NULL;
		char *end = NULL;
		int pr;

		if (!name || !name[0] || !source || !hash || !params) {
			rec_bad(r,
				"profiles at %" PRId64 " position %" PRId64 ": a column is empty",
				t_ms, pos);
			continue;
		}
		if (array_grow(&out->p, &cap, out->n, sizeof(*out->p), 4)) {
			sqlite3_finalize(st);
			return -ENOMEM;
		}
		p = &out->p[out->n];
		memset(p, 0, sizeof(*p));
		p->text_hash = strtoull(hash, &end, 16);
		if (!end || *end || strlen(hash) != 16) {
			rec_bad(r,
				"profiles at %" PRId64 " position %" PRId64
				": text_hash is no 64-bit hex",
				t_ms, pos);
			continue;
		}
		p->name = text_dup(name);
		p->source = text_dup(source);
		p->origin = text_dup(origin ? origin : "");
		pr = p->name && p->source && p->origin ? parse_params(p, params, &why) : -ENOMEM;
		if (pr == -EINVAL) {
			rec_bad(r, "profiles at %" PRId64 " position %" PRId64 ": %s", t_ms, pos,
				why);
			profile_row_free(p);
			continue;
		}
		out->n++;
		if (pr) {
			sqlite3_finalize(st);
			return pr;
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		goto sql_err;
	return 0;
sql_err:
	snprintf(err, errlen, "%s: reading profiles: %s", r->path, sqlite3_errmsg(r->db));
	return -EIO;
}

int rec_rules_at(struct rec_reader *r, int64_t at_ms, int64_t until_ms, struct rec_rules *out,
		 char *err, size_t errlen)
{
	sqlite3_stmt *st;
	char *first = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!rec_has_table(r->db, "main", "profiles"))
		return 0;
	/* a set whose time is no time is no set: named, never chosen */
	rc = sqlite3_prepare_v2(r->db,
				"SELECT DISTINCT quote(t_ms) FROM profiles WHERE typeof(t_ms) !="
				" 'integer' OR t_ms < 0 OR t_ms > 9223372036854",
				-1, &st, NULL);
	if (rc == SQLITE_OK) {
		while (sqlite3_step(st) == SQLITE_ROW) {
			char v[96];

			text_escape_ctl((const char *)sqlite3_column_text(st, 0) ?: "", v,
					sizeof(v));
			rec_bad(r, "profiles: t_ms %s is not a time in range", v);
		}
		sqlite3_finalize(st);
	}
	out->t_ms = -1;
	rc = sqlite3_prepare_v2(r->db,
				"SELECT coalesce((SELECT max(t_ms) FROM profiles WHERE t_ms <= ?1"
				" AND typeof(t_ms) = 'integer' AND t_ms >= 0),"
				" (SELECT min(t_ms) FROM profiles WHERE typeof(t_ms) = 'integer'"
				" AND t_ms >= 0))",
				-1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, at_ms);
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_INTEGER)
			out->t_ms = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	if (out->t_ms < 0)
		return 0; /* the table, but no set: polls from before the upgrade only */
	rc = load_set(r, out->t_ms, out, err, errlen);
	if (rc)
		return rc;
	out->recorded = out->n > 0;
	/* a reload or a restart that changed them (an identical set again is no change) */
	rc = sqlite3_prepare_v2(
	    r->db,
	    "SELECT t_ms, group_concat(name || char(31) || text_hash || char(31) ||"
	    " params, char(30)) FROM (SELECT * FROM profiles WHERE typeof(t_ms) ="
	    " 'integer' AND t_ms >= ?1 AND t_ms <= ?2 ORDER BY t_ms, pos)"
	    " GROUP BY t_ms ORDER BY t_ms",
	    -1, &st, NULL);
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "%s: reading profiles: %s", r->path, sqlite3_errmsg(r->db));
		return -EIO;
	}
	sqlite3_bind_int64(st, 1, out->t_ms);
	sqlite3_bind_int64(st, 2, until_ms);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *sig = (const char *)sqlite3_column_text(st, 1);

		if (!first) {
			first = strdup(sig ? sig : "");
			if (!first)
				break;
			continue;
		}
		if (strcmp(first, sig ? sig : "")) {
			out->changed_ms = sqlite3_column_int64(st, 0);
			break;
		}
	}
	sqlite3_finalize(st);
	free(first);
	return 0;
}
