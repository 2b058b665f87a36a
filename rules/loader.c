// SPDX-License-Identifier: MIT
/*
 * Profile files: YAML read with libyaml's document loader, validated key by
 * key, expressions parsed and type-checked against the field table.  Every
 * error carries file:line:col.  libyaml marks are 0-based and count
 * characters; an error inside an `expr`, `when` or `summary` string is
 * placed by walking the scalar's source text alongside its parsed value
 * (quotes, escapes, block-scalar indentation and folded line breaks are
 * skipped), so the column points at the offending character in the file.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <regex.h>
#include <yaml.h>

#include "bounded.h"
#include "fabric.h"
#include "rules_int.h"
#include "util.h"

#ifndef ROCEWATCH_DATA_PROFILE_DIR
#define ROCEWATCH_DATA_PROFILE_DIR "/usr/local/share/rocewatch/profiles"
#endif

/* ---- spec ---- */

int rules_spec_add_profile(struct rules_spec *s, const char *name_or_file)
{
	char **np = realloc(s->profiles, (s->n_profiles + 1) * sizeof(*np));

	if (!np)
		return -ENOMEM;
	s->profiles = np;
	np[s->n_profiles] = strdup(name_or_file);
	if (!np[s->n_profiles])
		return -ENOMEM;
	s->n_profiles++;
	return 0;
}

int rules_spec_add_param(struct rules_spec *s, const char *kv)
{
	const char *eq = strchr(kv, '=');
	struct rules_param_override *np;

	if (!eq || eq == kv)
		return -EINVAL;
	np = realloc(s->params, (s->n_params + 1) * sizeof(*np));
	if (!np)
		return -ENOMEM;
	s->params = np;
	np[s->n_params].key = strndup(kv, (size_t)(eq - kv));
	np[s->n_params].value = strdup(eq + 1);
	if (!np[s->n_params].key || !np[s->n_params].value) {
		free(np[s->n_params].key);
		free(np[s->n_params].value);
		return -ENOMEM;
	}
	np[s->n_params].profile = NULL;
	np[s->n_params].optional = false;
	s->n_params++;
	return 0;
}

int rules_spec_add_param_for(struct rules_spec *s, const char *profile, const char *key,
			     const char *value)
{
	struct rules_param_override *np, *o;

	if (!key[0])
		return -EINVAL;
	np = realloc(s->params, (s->n_params + 1) * sizeof(*np));
	if (!np)
		return -ENOMEM;
	s->params = np;
	o = &np[s->n_params];
	*o = (struct rules_param_override){ .key = strdup(key),
					    .value = strdup(value),
					    .profile = profile ? strdup(profile) : NULL,
					    .optional = true };
	if (!o->key || !o->value || (profile && !o->profile)) {
		free(o->key);
		free(o->value);
		free(o->profile);
		return -ENOMEM;
	}
	s->n_params++;
	return 0;
}

void rules_spec_free(struct rules_spec *s)
{
	for (size_t i = 0; i < s->n_profiles; i++)
		free(s->profiles[i]);
	for (size_t i = 0; i < s->n_params; i++) {
		free(s->params[i].key);
		free(s->params[i].value);
		free(s->params[i].profile);
	}
	free(s->profiles);
	free(s->params);
	memset(s, 0, sizeof(*s));
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t l = strlen(s), ls = strlen(suffix);

	return l >= ls && !strcmp(s + l - ls, suffix);
}

const struct rules_builtin *rules_builtin_find(const char *name)
{
	for (size_t i = 0; i < rules_builtin_count; i++)
		if (!strcmp(rules_builtin_profiles[i].name, name))
			return &rules_builtin_profiles[i];
	return NULL;
}

const char *rules_origin_name(enum rules_origin o)
{
	static const char *const names[] = {
		[RULES_ORIGIN_FILE] = "file",
		[RULES_ORIGIN_ENV_DIR] = "ROCEWATCH_PROFILE_DIR",
		[RULES_ORIGIN_DATA_DIR] = "data directory",
		[RULES_ORIGIN_BUILTIN] = "built-in",
	};

	return o <= RULES_ORIGIN_BUILTIN ? names[o] : "?";
}

/* rules_profile_path(), and which of its places the file came from. */
static int profile_path(const char *spec, char *out, size_t len, char *searched, size_t slen,
			enum rules_origin *origin)
{
	const char *dirs[2];
	int nd = 0;
	size_t used = 0;

	if (searched && slen)
		searched[0] = '\0';
	*origin = RULES_ORIGIN_FILE;
	if (strchr(spec, '/') || ends_with(spec, ".yaml") || ends_with(spec, ".yml")) {
		if (snprintf(out, len, "%s", spec) >= (int)len)
			return -ENAMETOOLONG;
		return access(out, R_OK) ? -errno : 0;
	}
	if (getenv("ROCEWATCH_PROFILE_DIR") && *getenv("ROCEWATCH_PROFILE_DIR"))
		dirs[nd++] = getenv("ROCEWATCH_PROFILE_DIR");
	dirs[nd++] = ROCEWATCH_DATA_PROFILE_DIR;
	for (int i = 0; i < nd; i++) {
		if (snprintf(out, len, "%s/%s.yaml", dirs[i], spec) < (int)len &&
		    !access(out, R_OK)) {
			*origin = i + 1 < nd ? RULES_ORIGIN_ENV_DIR : RULES_ORIGIN_DATA_DIR;
			return 0;
		}
		if (searched && used < slen)
			used += (size_t)snprintf(searched + used, slen - used, "%s%s",
						 i ? ", " : "", dirs[i]);
	}
	return -ENOENT;
}

int rules_profile_path(const char *spec, char *out, size_t len, char *searched, size_t slen)
{
	enum rules_origin origin;

	return profile_path(spec, out, len, searched, slen, &origin);
}

/* ---- diagnostics ---- */

void rules_diags_free(struct rules_diags *dg)
{
	for (size_t i = 0; i < dg->n; i++)
		free(dg->d[i].file);
	free(dg->d);
	memset(dg, 0, sizeof(*dg));
}

void rules_diag_format(const struct rules_diag *d, char *buf, size_t len)
{
	const char *kind = d->warning ? "warning" : "error";

	if (d->file && d->line)
		snprintf(buf, len, "%s:%d:%d: %s: %s", d->file, d->line, d->col, kind, d->msg);
	else if (d->file)
		snprintf(buf, len, "%s: %s: %s", d->file, kind, d->msg);
	else
		snprintf(buf, len, "%s: %s", kind, d->msg);
}

static void vdiag(struct rules_diags *dg, const char *file, int line, int col, bool warning,
		  const char *fmt, va_list ap)
{
	struct rules_diag *d;

	if (dg->n == dg->cap) {
		size_t nc = dg->cap ? dg->cap * 2 : 8;
		struct rules_diag *nd = realloc(dg->d, nc * sizeof(*nd));

		if (!nd) {
			/* still count it, so the load fails */
			dg->n_errors += !warning;
			return;
		}
		dg->d = nd;
		dg->cap = nc;
	}
	d = &dg->d[dg->n++];
	memset(d, 0, sizeof(*d));
	d->file = file ? strdup(file) : NULL;
	d->line = line;
	d->col = col;
	d->warning = warning;
	vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
	if (!warning)
		dg->n_errors++;
}

static void diag_at(struct rules_diags *dg, const char *file, int line, int col, bool warning,
		    const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static void diag_at(struct rules_diags *dg, const char *file, int line, int col, bool warning,
		    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdiag(dg, file, line, col, warning, fmt, ap);
	va_end(ap);
}

/* ---- the loader ---- */

struct loader {
	struct rules_engine *e;
	struct rules_diags *dg;
	const struct rules_spec *spec;
	bool *param_used;   /* per spec->params */
	bool *param_blamed; /* per spec->params: its error was reported at the flag */
	const char *file;
	const char *origin; /* rules_origin_name() of where file came from */
	const char *text;
	size_t len;
	size_t *lines; /* byte offset of each line start */
	size_t n_lines;
	yaml_document_t doc;
};

/* A diagnostic at n's line and column (none without n); lerr() and lwarn() say which. */
static void ldiag(struct loader *ld, const yaml_node_t *n, bool warn, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void ldiag(struct loader *ld, const yaml_node_t *n, bool warn, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdiag(ld->dg, ld->file, n ? (int)n->start_mark.line + 1 : 0,
	      n ? (int)n->start_mark.column + 1 : 0, warn, fmt, ap);
	va_end(ap);
}

#define lerr(ld, n, ...)  ldiag(ld, n, false, __VA_ARGS__)
#define lwarn(ld, n, ...) ldiag(ld, n, true, __VA_ARGS__)

static int index_lines(struct loader *ld)
{
	size_t n = 1;

	for (size_t i = 0; i < ld->len; i++)
		n += ld->text[i] == '\n';
	ld->lines = malloc(n * sizeof(*ld->lines));
	if (!ld->lines)
		return -ENOMEM;
	ld->lines[0] = 0;
	ld->n_lines = 1;
	for (size_t i = 0; i < ld->len; i++)
		if (ld->text[i] == '\n')
			ld->lines[ld->n_lines++] = i + 1;
	return 0;
}

/* Byte offset of a libyaml mark (line and character column, 0-based). */
static size_t mark_byte(const struct loader *ld, const yaml_mark_t *m)
{
	size_t b;

	if (m->line >= ld->n_lines)
		return ld->len;
	b = ld->lines[m->line];
	for (size_t c = 0; c < m->column && b < ld->len && ld->text[b] != '\n'; c++) {
		b++;
		while (b < ld->len && ((unsigned char)ld->text[b] & 0xc0) == 0x80)
			b++;
	}
	return b;
}

static void byte_to_pos(const struct loader *ld, size_t b, int *line, int *col)
{
	size_t lo = 0, hi = ld->n_lines;
	int c = 1;

	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (ld->lines[mid] <= b)
			lo = mid;
		else
			hi = mid;
	}
	for (size_t i = ld->lines[lo]; i < b && i < ld->len; i++)
		if (((unsigned char)ld->text[i] & 0xc0) != 0x80)
			c++;
	*line = (int)lo + 1;
	*col = c;
}

/*
 * Where in the file is byte `off` of a scalar's value?  Walk the source from
 * the scalar's start mark, matching the value's characters in order and
 * skipping what the YAML syntax adds (quotes, escape backslashes,
 * indentation); a folded line break matches the space it became.  Exact for
 * plain, quoted and literal block scalars; for escapes such as "\n" it is
 * the best effort the mapping allows.
 */
static void scalar_pos(const struct loader *ld, const yaml_node_t *n, int off, int *line, int *col)
{
	const char *v = (const char *)n->data.scalar.value;
	int vlen = (int)n->data.scalar.length;
	size_t sp = mark_byte(ld, &n->start_mark), end = mark_byte(ld, &n->end_mark);

	if (off > vlen)
		off = vlen;
	for (int i = 0; i <= off && i < vlen; i++) {
		while (sp < end && ld->text[sp] != v[i] && !(v[i] == ' ' && ld->text[sp] == '\n'))
			sp++;
		if (i == off || sp >= end)
			break;
		sp++;
	}
	byte_to_pos(ld, sp, line, col);
}

static void lerr_in(struct loader *ld, const yaml_node_t *n, int off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void lerr_in(struct loader *ld, const yaml_node_t *n, int off, const char *fmt, ...)
{
	int line, col;
	va_list ap;

	scalar_pos(ld, n, off, &line, &col);
	va_start(ap, fmt);
	vdiag(ld->dg, ld->file, line, col, false, fmt, ap);
	va_end(ap);
}

/*
 * An error at "$name" where --param name=VALUE overrode the profile's value
 * is the flag's fault, not the file's: say so at the flag, once, with where
 * the value was used.  true when reported (or already reported) that way.
 */
static bool blame_param(struct loader *ld, const yaml_node_t *n, const char *src, int off,
			const char *what, const char *err)
{
	size_t len = 0;
	int line, col;

	if (off < 0 || !src || src[off] != '$' || !ld->spec)
		return false;
	while (src[off + 1 + len] == '_' ||
	       (src[off + 1 + len] >= 'a' && src[off + 1 + len] <= 'z') ||
	       (src[off + 1 + len] >= 'A' && src[off + 1 + len] <= 'Z') ||
	       (src[off + 1 + len] >= '0' && src[off + 1 + len] <= '9'))
		len++;
	for (size_t i = 0; len && i < ld->spec->n_params; i++) {
		const struct rules_param_override *o = &ld->spec->params[i];

		if (strlen(o->key) != len || strncmp(o->key, src + off + 1, len))
			continue;
		if (ld->param_blamed && ld->param_blamed[i]) {
			ld->dg->n_errors++; /* still an error: the load fails */
			return true;
		}
		if (ld->param_blamed)
			ld->param_blamed[i] = true;
		scalar_pos(ld, n, off, &line, &col);
		diag_at(ld->dg, NULL, 0, 0, false,
			"--param %s=%s: %s (where %s:%d:%d uses it in %s)", o->key, o->value, err,
			ld->file, line, col, what);
		return true;
	}
	return false;
}

static yaml_node_t *ynode(struct loader *ld, int id)
{
	return yaml_document_get_node(&ld->doc, id);
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static const char *want_scalar(struct loader *ld, const yaml_node_t *n, const char *what)
{
	const char *s = scalar(n);

	if (!s)
		lerr(ld, n, "%s must be a single value (a string), not a %s", what,
		     n && n->type == YAML_SEQUENCE_NODE ? "list" : "mapping");
	return s;
}

static bool valid_name(const char *s, bool allow_dash)
{
	if (!*s || !(islower((unsigned char)*s) || (allow_dash && isdigit((unsigned char)*s))))
		return false;
	for (const char *p = s; *p; p++)
		if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_' ||
		      (allow_dash && (*p == '-' || *p == '.'))))
			return false;
	return true;
}

/*
 * The name a rule (name:) or a profile (profile:) must have, present and as
 * valid_name() takes it for its kind: NULL after saying why.
 */
static const char *want_name(struct loader *ld, const yaml_node_t *map, const yaml_node_t *v,
			     bool profile)
{
	const char *s;

	if (!v) {
		lerr(ld, map, profile ? "missing 'profile: NAME'" : "rule has no name");
		return NULL;
	}
	s = want_scalar(ld, v, profile ? "profile" : "name");
	if (s && !valid_name(s, profile)) {
		lerr(ld, v, "%s name '%s': use lower-case letters, %s",
		     profile ? "profile" : "rule", s,
		     profile ? "digits, '-', '_' and '.'" : "digits and _ (start with a letter)");
		return NULL;
	}
	return s;
}

/* ---- parameters ---- */

static void param_text(struct loader *ld, struct rparam *pm)
{
	char buf[256];
	struct tbuf tb = { buf, 0, sizeof(buf) };

	buf[0] = '\0';
	rx_format_val(&tb, &pm->v, pm->type);
	pm->text = arena_strdup(&ld->e->arena, buf);
}

static bool parse_number(const char *s, double *out)
{
	char *end;
	uint64_t sz;

	if (!*s)
		return false;
	errno = 0;
	*out = strtod(s, &end);
	if (!errno && end != s && !*end && isfinite(*out) && !isspace((unsigned char)*s))
		return true;
	/* byte sizes for limits such as memlock: 64KiB, 1GiB, 512MB */
	if (ends_with(s, "B") && !parse_size(s, &sz)) {
		*out = (double)sz;
		return true;
	}
	return false;
}

static bool parse_set_text(const char *s, uint64_t *out)
{
	char buf[256], *p, *tok, *save = NULL;
	size_t l;

	while (isspace((unsigned char)*s))
		s++;
	l = strlen(s);
	if (l >= sizeof(buf))
		return false;
	memcpy(buf, s, l + 1);
	p = buf;
	if (*p == '{') {
		if (l < 2 || buf[l - 1] != '}')
			return false;
		buf[l - 1] = '\0';
		p++;
	}
	*out = 0;
	for (tok = strtok_r(p, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;

		while (isspace((unsigned char)*tok))
			tok++;
		rstrip(tok);
		if (!*tok)
			continue;
		if (parse_u64(tok, &v) || v >= RW_DSCP_COUNT)
			return false;
		*out |= 1ULL << v;
	}
	return true;
}

/* A value from --param, typed by the parameter's declaration. */
static int param_override(struct loader *ld, struct rparam *pm,
			  const struct rules_param_override *o)
{
	const char *value = o->value;
	double d;
	uint64_t set;
	const char *want = NULL;

	switch (pm->type) {
	case RT_NUM:
		if (parse_number(value, &d))
			pm->v.v.n = d;
		else
			want = "a number";
		break;
	case RT_BOOL:
		if (!strcmp(value, "true") || !strcmp(value, "false"))
			pm->v.v.b = !strcmp(value, "true");
		else
			want = "true or false";
		break;
	case RT_SET:
		if (parse_set_text(value, &set))
			pm->v.v.set = set;
		else
			want = "a set of integers 0-63 such as 3 or 3,4";
		break;
	default:
		pm->v.v.s = arena_strdup(&ld->e->arena, value);
		break;
	}
	if (want && o->optional) {
		/* a recorded value the parameter's new declaration does not take: not fatal */
		diag_at(ld->dg, NULL, 0, 0, true,
			"%s=%s: profile %s declares %s as %s now (expected %s): its value there "
			"is kept",
			pm->name, value, ld->file, pm->name, rx_type_name(pm->type), want);
		return 0;
	}
	if (want) {
		diag_at(ld->dg, NULL, 0, 0, false,
			"--param %s=%s: profile %s declares %s as %s; expected %s", pm->name, value,
			ld->file, pm->name, rx_type_name(pm->type), want);
		return -EINVAL;
	}
	pm->used_override = true;
	return 0;
}

/* A sequence whose first item is a word, not an integer: a list parameter. */
static bool seq_of_words(struct loader *ld, const yaml_node_t *v)
{
	yaml_node_item_t *it = v->data.sequence.items.start;
	const char *s;

	if (it >= v->data.sequence.items.top)
		return false;
	s = scalar(ynode(ld, *it));
	return s && *s && !(*s >= '0' && *s <= '9');
}

/* [a, b, c] -> the string "a,b,c" (words: a-z, 0-9, _ and -). */
static int load_word_list(struct loader *ld, const yaml_node_t *v, struct rparam *pm)
{
	char buf[256];
	size_t len = 0;

	buf[0] = '\0';
	for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
	     it++) {
		const yaml_node_t *e = ynode(ld, *it);
		const char *w = scalar(e);

		if (!w || !valid_name(w, true)) {
			lerr(ld, e, "parameter '%s': list elements are words (a-z, 0-9, _, -)",
			     pm->name);
			return -EINVAL;
		}
		if (len + strlen(w) + 2 > sizeof(buf)) {
			lerr(ld, e, "parameter '%s': list too long", pm->name);
			return -EINVAL;
		}
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", len ? "," : "", w);
	}
	pm->type = RT_STR;
	pm->list = true;
	pm->v.v.s = arena_strdup(&ld->e->arena, buf);
	return 0;
}

static int load_params(struct loader *ld, const yaml_node_t *map, struct rprofile *pf)
{
	size_t n;
	yaml_node_pair_t *pair;
	int bad = 0;

	if (map->type != YAML_MAPPING_NODE) {
		lerr(ld, map, "params must be a mapping of name: value");
		return -EINVAL;
	}
	n = (size_t)(map->data.mapping.pairs.top - map->data.mapping.pairs.start);
	pf->params = arena_alloc(&ld->e->arena, (n ? n : 1) * sizeof(*pf->params));
	if (!pf->params)
		return -ENOMEM;
	for (pair = map->data.mapping.pairs.start; pair < map->data.mapping.pairs.top; pair++) {
		yaml_node_t *k = ynode(ld, pair->key), *v = ynode(ld, pair->value);
		const char *name = scalar(k);
		struct rparam *pm = &pf->params[pf->info.n_params];

		if (!name || !valid_name(name, false)) {
			lerr(ld, k, "parameter names are lower-case identifiers (a-z, 0-9, _)");
			bad = -EINVAL;
			continue;
		}
		for (size_t i = 0; i < pf->info.n_params; i++)
			if (!strcmp(pf->params[i].name, name)) {
				lerr(ld, k, "duplicate parameter '%s'", name);
				bad = -EINVAL;
				goto next;
			}
		pm->name = arena_strdup(&ld->e->arena, name);
		pm->v.st = V_OK;
		if (v->type == YAML_SEQUENCE_NODE && seq_of_words(ld, v)) {
			/* a list of words (rail_source: [map, lldp]): read by rocewatch, as text */
			if (load_word_list(ld, v, pm)) {
				bad = -EINVAL;
				goto next;
			}
		} else if (v->type == YAML_SEQUENCE_NODE) {
			pm->type = RT_SET;
			for (yaml_node_item_t *it = v->data.sequence.items.start;
			     it < v->data.sequence.items.top; it++) {
				yaml_node_t *e = ynode(ld, *it);
				uint64_t x;

				if (!scalar(e) || parse_u64(scalar(e), &x) || x >= RW_DSCP_COUNT) {
					lerr(ld, e,
					     "parameter '%s': set elements are integers 0-63",
					     name);
					bad = -EINVAL;
					goto next;
				}
				pm->v.v.set |= 1ULL << x;
			}
		} else if (v->type == YAML_SCALAR_NODE) {
			const char *s = scalar(v);
			bool plain = v->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
			double d;

			if (plain && (!strcmp(s, "true") || !strcmp(s, "false"))) {
				pm->type = RT_BOOL;
				pm->v.v.b = !strcmp(s, "true");
			} else if (plain && parse_number(s, &d)) {
				pm->type = RT_NUM;
				pm->v.v.n = d;
			} else {
				pm->type = RT_STR;
				pm->v.v.s = arena_strdup(&ld->e->arena, s);
			}
		} else {
			lerr(ld, v,
			     "parameter '%s' must be a number, a string, true/false or a list",
			     name);
			bad = -EINVAL;
			continue;
		}
		for (size_t i = 0; i < ld->spec->n_params; i++) {
			const struct rules_param_override *o = &ld->spec->params[i];

			if (strcmp(o->key, name) ||
			    (o->profile && strcmp(o->profile, pf->info.name)))
				continue;
			ld->param_used[i] = true;
			if (param_override(ld, pm, o))
				bad = -EINVAL;
		}
		param_text(ld, pm);
		pf->info.n_params++;
	next:;
	}
	return bad;
}

/*
 * Sort a mapping's values into v[] by the key table names[]; kn[] keeps each key's node so a
 * duplicate can name the line of the first. Unknown and duplicate keys are reported and
 * skipped, so one run reports them all: returns -EINVAL if there was any, else 0.
 * what is "" or "rule " (the error's noun); help lists the keys for the error.
 */
static int split_mapping(struct loader *ld, const yaml_node_t *map, const char *const *names, int n,
			 const char *what, const char *help, const yaml_node_t **v,
			 const yaml_node_t **kn)
{
	int bad = 0;

	for (yaml_node_pair_t *pair = map->data.mapping.pairs.start;
	     pair < map->data.mapping.pairs.top; pair++) {
		yaml_node_t *k = ynode(ld, pair->key);
		const char *key = scalar(k);
		int i;

		for (i = 0; key && i < n; i++)
			if (!strcmp(key, names[i]))
				break;
		if (!key || i == n) {
			lerr(ld, k, "unknown %skey '%s' (keys: %s)", what, key ? key : "?", help);
			bad = -EINVAL;
			continue;
		}
		if (v[i]) {
			lerr(ld, k, "duplicate key '%s' (first at line %d)", key,
			     (int)kn[i]->start_mark.line + 1);
			bad = -EINVAL;
			continue;
		}
		v[i] = ynode(ld, pair->value);
		kn[i] = k;
	}
	return bad;
}

/* ---- rules ---- */

static const char *const rule_keys[] = { "name",    "scope", "when", "expr", "severity", "for",
					 "summary", "doc",   "each", "by",   "class",	 "action" };
enum {
	RK_NAME,
	RK_SCOPE,
	RK_WHEN,
	RK_EXPR,
	RK_SEVERITY,
	RK_FOR,
	RK_SUMMARY,
	RK_DOC,
	RK_EACH,   /* fleet rules: the kind of the units compared */
	RK_BY,	   /* fleet rules: how units are grouped */
	RK_CLASS,  /* health rules: fatal or degraded */
	RK_ACTION, /* what to do about a failure */
	RK__N
};

/* A profile parameter's number, or def when the profile does not declare it. */
static double param_number(const struct rprofile *pf, const char *name, double def)
{
	for (size_t i = 0; i < pf->info.n_params; i++)
		if (!strcmp(pf->params[i].name, name) && pf->params[i].type == RT_NUM)
			return pf->params[i].v.v.n;
	return def;
}

/* class: fatal|degraded (severity follows), action: one of the vocabulary. */
static int load_class_action(struct loader *ld, const struct rprofile *pf,
			     const yaml_node_t *const *kv, struct rule_info *ri)
{
	const char *s;
	double n, w;

	if (kv[RK_CLASS]) {
		s = want_scalar(ld, kv[RK_CLASS], "class");
		if (!s)
			return -EINVAL;
		if (!strcmp(s, "fatal")) {
			ri->cls = RCLASS_FATAL;
			ri->severity = SEV_CRITICAL;
		} else if (!strcmp(s, "degraded")) {
			ri->cls = RCLASS_DEGRADED;
			ri->severity = SEV_WARNING;
		} else {
			lerr(ld, kv[RK_CLASS], "class must be fatal or degraded, not '%s'", s);
			return -EINVAL;
		}
		if (ri->fleet) {
			lerr(ld, kv[RK_CLASS],
			     "class: fleet rules judge the fleet, not a node's "
			     "health");
			return -EINVAL;
		}
	}
	if (kv[RK_ACTION]) {
		int a;

		s = want_scalar(ld, kv[RK_ACTION], "action");
		if (!s)
			return -EINVAL;
		for (a = 1; a < RACT__COUNT; a++)
			if (!strcmp(s, rule_action_name((enum rule_action)a)))
				break;
		if (a == RACT__COUNT) {
			lerr(ld, kv[RK_ACTION],
			     "action must be one of fix-config, reset-link, "
			     "reseat-or-replace-cable, "
			     "drain-node, reload-driver, contact-vendor, not '%s'",
			     s);
			return -EINVAL;
		}
		ri->action = (enum rule_action)a;
	}
	/* a device gone for a poll or a driver reload keeps its counter history this long */
	n = param_number(pf, "history_grace_minutes", 5);
	if (n < 0 || n > 24 * 60) {
		lerr(ld, kv[RK_CLASS] ? kv[RK_CLASS] : kv[RK_NAME],
		     "history_grace_minutes must be 0 (forget at once) to 1440 (a day)");
		return -EINVAL;
	}
	ri->history_grace_ns = (int64_t)(n * 60e9);
	if (ri->cls != RCLASS_DEGRADED)
		return 0;
	/* NVSentinel's RepeatedNICDegradation: 5 degradations in 24 h are fatal */
	n = param_number(pf, "escalate_after", 5);
	w = param_number(pf, "escalate_window_hours", 24);
	if (n < 0 || n > RULE_ESCALATE_MAX || w <= 0 || w > 24 * 366) {
		lerr(ld, kv[RK_CLASS],
		     "escalate_after must be 0 (never) to %d and escalate_window_hours above 0 "
		     "and at most a year",
		     RULE_ESCALATE_MAX);
		return -EINVAL;
	}
	ri->escalate_after = (int)n;
	ri->escalate_window_ns = (int64_t)(w * 3600.0 * 1e9);
	return 0;
}

static struct expr *parse_expr_node(struct loader *ld, struct parse_ctx *pc, const yaml_node_t *n,
				    const char *key, const char **src_out)
{
	const char *s = want_scalar(ld, n, key);
	char *src;
	struct expr *e;

	if (!s)
		return NULL;
	src = arena_strndup(&ld->e->arena, s, n->data.scalar.length);
	if (!src)
		return NULL;
	*src_out = src;
	e = rx_parse(pc, src, (int)n->data.scalar.length);
	if (!e) {
		if (!blame_param(ld, n, src, pc->err_off, key, pc->err))
			lerr_in(ld, n, pc->err_off < 0 ? 0 : pc->err_off, "%s: %s", key, pc->err);
		return NULL;
	}
	if (e->type != RT_BOOL) {
		lerr_in(ld, n, e->off, "%s must be a boolean (a comparison or a test), not %s", key,
			rx_type_name(e->type));
		return NULL;
	}
	return e;
}

static int parse_for(const char *s, int64_t *ns)
{
	if (!strcmp(s, "0"))
		return *ns = 0, 0;
	return parse_duration(s, ns);
}

static int parse_kind(const char *s, enum obj_kind *out)
{
	for (int k = 0; k < OBJ__COUNT; k++)
		if (!strcmp(s, obj_kind_name((enum obj_kind)k))) {
			*out = (enum obj_kind)k;
			return 0;
		}
	return -EINVAL;
}

/* each: and by: belong to fleet rules only. */
static int load_fleet_keys(struct loader *ld, const yaml_node_t *each, const yaml_node_t *by,
			   struct rule_info *ri)
{
	const char *s;

	if (!ri->fleet) {
		if (each || by) {
			lerr(ld, each ? each : by, "%s: only fleet rules (scope: fleet) have it",
			     each ? "each" : "by");
			return -EINVAL;
		}
		return 0;
	}
	ri->scope = OBJ_NODE;
	if (each) {
		s = want_scalar(ld, each, "each");
		if (!s)
			return -EINVAL;
		if (parse_kind(s, &ri->scope)) {
			lerr(ld, each, "each must be node, netdev or rdma_port, not '%s'", s);
			return -EINVAL;
		}
	}
	if (by) {
		s = want_scalar(ld, by, "by");
		if (!s)
			return -EINVAL;
		if (!strcmp(s, "rail"))
			ri->by = FLEET_BY_RAIL;
		else if (!strcmp(s, "position"))
			ri->by = FLEET_BY_POSITION;
		else if (!strcmp(s, "device"))
			ri->by = FLEET_BY_DEVICE;
		else if (!strcmp(s, "pool"))
			ri->by = FLEET_BY_POOL;
		else {
			lerr(ld, by, "by must be rail, position, device or pool, not '%s'", s);
			return -EINVAL;
		}
		if (ri->scope == OBJ_NODE) {
			lerr(ld, by,
			     "by: a node has one unit per node; group netdevs or rdma_ports");
			return -EINVAL;
		}
	}
	return 0;
}

/* The mapping's keys, the rule's name (unique in its profile) and the keys every rule needs. */
static int load_rule_keys(struct loader *ld, const yaml_node_t *map, const struct rprofile *pf,
			  const yaml_node_t **kv, const yaml_node_t **kn, const char **namep)
{
	struct rules_engine *e = ld->e;
	const char *name;
	int bad;

	if (map->type != YAML_MAPPING_NODE) {
		lerr(ld, map, "each rule is a mapping with name, scope, expr and severity");
		return -EINVAL;
	}
	bad = split_mapping(ld, map, rule_keys, RK__N, "rule ",
			    "name, scope, when, expr, severity, for, summary, doc, class, action; "
			    "fleet rules also each, by",
			    kv, kn);
	name = want_name(ld, map, kv[RK_NAME], false);
	if (!name)
		return -EINVAL;
	for (size_t i = pf->info.n_rules ? e->n_rules - pf->info.n_rules : e->n_rules;
	     i < e->n_rules; i++)
		if (!strcmp(e->rules[i].info.name, name)) {
			lerr(ld, kv[RK_NAME], "duplicate rule name '%s' (first at line %d)", name,
			     e->rules[i].info.line);
			return -EINVAL;
		}
	*namep = name;
	for (int i = 0; i < RK__N; i++)
		if (!kv[i] &&
		    (i == RK_SCOPE || i == RK_EXPR || (i == RK_SEVERITY && !kv[RK_CLASS]))) {
			lerr(ld, map, "rule '%s' has no %s", name, rule_keys[i]);
			bad = -EINVAL;
		}
	return bad;
}

static int load_severity(struct loader *ld, const yaml_node_t *n, struct rule_info *ri)
{
	enum rule_severity sev;
	const char *s = want_scalar(ld, n, "severity");

	if (!s)
		return -EINVAL;
	if (!strcmp(s, "critical"))
		sev = SEV_CRITICAL;
	else if (!strcmp(s, "warning"))
		sev = SEV_WARNING;
	else if (!strcmp(s, "info"))
		sev = SEV_INFO;
	else {
		lerr(ld, n, "severity must be critical, warning or info, not '%s'", s);
		return -EINVAL;
	}
	if (ri->cls && sev != ri->severity) {
		lerr(ld, n,
		     "severity %s contradicts class %s (fatal is critical, degraded is "
		     "warning): give one of them",
		     s, rule_class_name(ri->cls));
		return -EINVAL;
	}
	ri->severity = sev;
	return 0;
}

/* scope, fleet keys, class and action, severity, for and doc: what the rule is, before its
 * expressions are parsed against its scope */
static int load_rule_info(struct loader *ld, const yaml_node_t *map, struct rprofile *pf,
			  const yaml_node_t **kv, struct rule_info *ri)
{
	const char *s = want_scalar(ld, kv[RK_SCOPE], "scope");

	if (!s)
		return -EINVAL;
	if (!strcmp(s, "fleet"))
		ri->fleet = true;
	else if (parse_kind(s, &ri->scope)) {
		lerr(ld, kv[RK_SCOPE], "scope must be node, netdev, rdma_port or fleet, not '%s'",
		     s);
		return -EINVAL;
	}
	if (load_fleet_keys(ld, kv[RK_EACH], kv[RK_BY], ri))
		return -EINVAL;
	if (load_class_action(ld, pf, kv, ri))
		return -EINVAL;
	if (kv[RK_SEVERITY] && load_severity(ld, kv[RK_SEVERITY], ri))
		return -EINVAL;
	if (kv[RK_FOR]) {
		s = want_scalar(ld, kv[RK_FOR], "for");
		if (!s)
			return -EINVAL;
		if (parse_for(s, &ri->for_ns)) {
			lerr(ld, kv[RK_FOR], "for: '%s' is not a duration (30s, 5m, 1h)", s);
			return -EINVAL;
		}
	}
	if (kv[RK_DOC]) {
		s = want_scalar(ld, kv[RK_DOC], "doc");
		if (!s)
			return -EINVAL;
		ri->doc = arena_strdup(&ld->e->arena, s);
	} else {
		ri->doc = "";
		lwarn(ld, map, "rule '%s' has no doc: say what a failure means and how to fix it",
		      ri->name);
	}
	if ((ri->severity == SEV_CRITICAL || ri->cls == RCLASS_FATAL) && ri->action == RACT_NONE)
		/* a verdict always comes with what to do: "fatal (drain)" and actions: [] helps
		 * nobody */
		lwarn(
		    ld, map,
		    "critical rule '%s' has no action: a node it fails reads 'drain' with nothing "
		    "to do (action: fix-config, reset-link, reseat-or-replace-cable, drain-node, "
		    "reload-driver or contact-vendor)",
		    ri->name);
	return 0;
}

static int load_summary(struct loader *ld, struct parse_ctx *pc, const yaml_node_t *n,
			struct rrule *r)
{
	const char *s = want_scalar(ld, n, "summary");

	if (!s)
		return -EINVAL;
	r->info.summary_src = arena_strndup(&ld->e->arena, s, n->data.scalar.length);
	if (!r->info.summary_src)
		return -ENOMEM;
	pc->fleet = r->info.fleet ? FC_TOP : FC_NONE;
	if (rx_parse_template(pc, r->info.summary_src, (int)n->data.scalar.length, &r->summary)) {
		if (!blame_param(ld, n, r->info.summary_src, pc->err_off, "summary", pc->err))
			lerr_in(ld, n, pc->err_off < 0 ? 0 : pc->err_off, "summary: %s", pc->err);
		return 1; /* reported: the caller's bad, not a return of its own */
	}
	return 0;
}

/*
 * Do t (in a summary) and w (in the expr) spell the same expression, node for
 * node?  With share, t's counter calls then take w's history rings: a call
 * the summary evaluates itself (the expr short-circuited past it) samples the
 * same ring at the same time, which replaces the sample, so the two never
 * disagree.
 */
static bool same_expr(struct expr *t, const struct expr *w, bool share)
{
	if (t->kind != w->kind || t->type != w->type || t->len != w->len ||
	    memcmp(t->src + t->off, w->src + w->off, (size_t)t->len))
		return false;
	switch (t->kind) {
	case N_UNARY:
		return same_expr(t->u.un.a, w->u.un.a, share);
	case N_BINARY:
		return same_expr(t->u.bin.a, w->u.bin.a, share) &&
		       same_expr(t->u.bin.b, w->u.bin.b, share);
	case N_INDEX:
		return same_expr(t->u.index.base, w->u.index.base, share) &&
		       same_expr(t->u.index.idx, w->u.index.idx, share);
	case N_CALL:
		if (t->u.call.fn != w->u.call.fn || t->u.call.n != w->u.call.n)
			return false;
		for (int i = 0; i < t->u.call.n; i++)
			if (!same_expr(t->u.call.args[i], w->u.call.args[i], share))
				return false;
		if (share)
			t->u.call.ring = w->u.call.ring;
		return true;
	case N_SETLIT:
		return false; /* not worth the walk: no counter call is a set literal */
	default:
		return true; /* a leaf: the same text is the same field, counter or constant */
	}
}

/* The call in w that spells t, or NULL. */
static struct expr *find_twin(const struct expr *t, struct expr *w)
{
	struct expr *f = NULL;

	if (!w)
		return NULL;
	if (w->kind == N_CALL && same_expr((struct expr *)t, w, false))
		return w;
	switch (w->kind) {
	case N_UNARY:
		return find_twin(t, w->u.un.a);
	case N_BINARY:
		return (f = find_twin(t, w->u.bin.a)) ? f : find_twin(t, w->u.bin.b);
	case N_INDEX:
		return (f = find_twin(t, w->u.index.base)) ? f : find_twin(t, w->u.index.idx);
	case N_CALL:
		for (int i = 0; i < w->u.call.n && !f; i++)
			f = find_twin(t, w->u.call.args[i]);
		return f;
	default:
		return NULL;
	}
}

/*
 * A summary that shows a call of its expr ("{increase(x, 5m)} events" beside
 * increase(x, 5m) == 0) takes the value the expr's evaluation computed: one
 * window walk, one ring, instead of two (every counter result, every poll).
 */
static void link_summary_twins(struct rrule *r)
{
	for (int i = 0; i < r->summary.n; i++) {
		struct tmpl_part *p = &r->summary.parts[i];
		struct expr *w;

		if (p->text || !p->e || p->e->kind != N_CALL || !(w = find_twin(p->e, r->expr)))
			continue;
		same_expr(p->e, w, true);
		w->memo = true;
		p->twin = w;
	}
}

/*
 * Can the rule's result settle (rx_settle in engine.c)?  Only if each value
 * it reads can be compared with the one its last evaluation read: counters
 * and fields that are a number or a truth (a string, a set, a table could
 * change in place), at most RX_SETTLE_READS of them; and not with delta(),
 * whose raw values may differ between two samples with the same ends, nor
 * an aggregate, which reads other nodes.  Its reads are kept for comparing,
 * each text once.
 */
static bool settle_scan(const struct expr *e, struct rrule *r)
{
	if (!e)
		return true;
	switch (e->kind) {
	case N_OUTCOME:
		return false;
	case N_FIELD:
	case N_CSET:
		if (e->kind == N_FIELD && e->type != RT_NUM && e->type != RT_BOOL)
			return false;
		for (int i = 0; i < r->n_settle_reads; i++)
			if (r->settle_reads[i]->len == e->len &&
			    !memcmp(r->settle_reads[i]->src + r->settle_reads[i]->off,
				    e->src + e->off, (size_t)e->len))
				return true;
		if (r->n_settle_reads == RX_SETTLE_READS)
			return false;
		r->settle_reads[r->n_settle_reads++] = e;
		return true;
	case N_SETLIT:
		for (int i = 0; i < e->u.set.n; i++)
			if (!settle_scan(e->u.set.lo[i], r) || !settle_scan(e->u.set.hi[i], r))
				return false;
		return true;
	case N_INDEX:
		return settle_scan(e->u.index.base, r) && settle_scan(e->u.index.idx, r);
	case N_UNARY:
		return settle_scan(e->u.un.a, r);
	case N_BINARY:
		return settle_scan(e->u.bin.a, r) && settle_scan(e->u.bin.b, r);
	case N_CALL:
		if (e->u.call.fn->counter == CTR_DELTA || e->u.call.fn->aggregate)
			return false;
		for (int i = 0; i < e->u.call.n; i++)
			if (!settle_scan(e->u.call.args[i], r))
				return false;
		return true;
	default:
		return true; /* a constant, a parameter */
	}
}

static void settle_check(struct rrule *r)
{
	bool ok = !r->info.fleet && r->n_rings > 0 && r->n_rings <= 64 && settle_scan(r->when, r) &&
		  settle_scan(r->expr, r);

	for (int i = 0; ok && i < r->summary.n; i++)
		ok = r->summary.parts[i].text || settle_scan(r->summary.parts[i].e, r);
	r->settles = ok && r->n_settle_reads > 0;
	if (!r->settles)
		r->n_settle_reads = 0;
}

/* when, expr and summary, parsed against the rule's scope and its profile's params */
static int load_rule_exprs(struct loader *ld, const struct rprofile *pf, const yaml_node_t **kv,
			   struct parse_ctx *pc, struct rrule *r)
{
	struct rules_engine *e = ld->e;
	int bad = 0, rs;

	pc->scope = r->info.scope;
	pc->params = pf->params;
	pc->n_params = pf->info.n_params;
	pc->param_hash = RX_FNV_INIT;
	pc->fields_used = e->fields_used;
	pc->reads = r->reads;
	if (kv[RK_WHEN]) {
		pc->fleet = r->info.fleet ? FC_INNER : FC_NONE;
		r->when = parse_expr_node(ld, pc, kv[RK_WHEN], "when", &r->info.when_src);
		if (!r->when)
			bad = -EINVAL;
	}
	pc->fleet = r->info.fleet ? FC_TOP : FC_NONE;
	r->expr = parse_expr_node(ld, pc, kv[RK_EXPR], "expr", &r->info.expr_src);
	if (!r->expr)
		bad = -EINVAL;
	else if (r->info.fleet && !pc->subject) {
		lerr_in(ld, kv[RK_EXPR], 0,
			"expr: a fleet rule compares a value across nodes with distinct(), "
			"majority() or outliers()");
		bad = -EINVAL;
	}
	if (kv[RK_SUMMARY]) {
		rs = load_summary(ld, pc, kv[RK_SUMMARY], r);
		if (rs < 0)
			return rs;
		if (rs)
			bad = -EINVAL;
	}
	if (!bad && r->expr && !r->info.fleet)
		link_summary_twins(r);
	return bad;
}

/* What makes two loads of a rule the same rule (alert identity across reloads). */
static uint64_t rule_fingerprint(const struct rprofile *pf, const struct rule_info *ri,
				 uint64_t param_hash)
{
	uint64_t h = rx_fnv1a(RX_FNV_INIT, pf->info.name, strlen(pf->info.name) + 1);

	h = rx_fnv1a(h, ri->name, strlen(ri->name) + 1);
	h = rx_fnv1a(h, &ri->scope, sizeof(ri->scope));
	h = rx_fnv1a(h, &ri->severity, sizeof(ri->severity));
	h = rx_fnv1a(h, &ri->cls, sizeof(ri->cls));
	h = rx_fnv1a(h, &ri->action, sizeof(ri->action));
	h = rx_fnv1a(h, &ri->for_ns, sizeof(ri->for_ns));
	h = rx_fnv1a(h, &ri->fleet, sizeof(ri->fleet));
	h = rx_fnv1a(h, &ri->by, sizeof(ri->by));
	if (ri->when_src)
		h = rx_fnv1a(h, ri->when_src, strlen(ri->when_src) + 1);
	h = rx_fnv1a(h, ri->expr_src, strlen(ri->expr_src) + 1);
	if (ri->summary_src)
		h = rx_fnv1a(h, ri->summary_src, strlen(ri->summary_src) + 1);
	/* the profile's applies_to guards the rule too */
	if (pf->info.applies_src[ri->scope])
		h = rx_fnv1a(h, pf->info.applies_src[ri->scope],
			     strlen(pf->info.applies_src[ri->scope]) + 1);
	return rx_fnv1a(h, &param_hash, sizeof(param_hash));
}

static int load_rule(struct loader *ld, const yaml_node_t *map, struct rprofile *pf, size_t pidx)
{
	const yaml_node_t *kv[RK__N] = { 0 }, *kn[RK__N] = { 0 };
	struct rules_engine *e = ld->e;
	struct parse_ctx pc = { .arena = &e->arena };
	struct rrule r = { 0 }, *nr;
	const char *name = NULL;
	int bad;

	bad = load_rule_keys(ld, map, pf, kv, kn, &name);
	if (!name)
		return -EINVAL;
	r.info.name = arena_strdup(&e->arena, name);
	r.info.line = (int)map->start_mark.line + 1;
	r.profile = pidx;
	if (bad)
		return bad;
	if (load_rule_info(ld, map, pf, kv, &r.info))
		return -EINVAL;
	bad = load_rule_exprs(ld, pf, kv, &pc, &r);
	if (bad)
		return bad;
	r.rings = pc.rings;
	r.n_rings = pc.n_rings;
	for (int i = 0; i < r.n_rings; i++)
		if (r.rings[i].window_ns > r.window_ns)
			r.window_ns = r.rings[i].window_ns;
	if (r.window_ns) {
		rules_format_duration(r.window_ns, r.window_text, sizeof(r.window_text));
		r.window_note_len = (uint8_t)snprintf(r.window_note, sizeof(r.window_note),
						      " (over the last %s)", r.window_text);
		r.window_tail_len = (uint8_t)snprintf(r.window_tail, sizeof(r.window_tail),
						      " of the %s window observed)", r.window_text);
	}
	r.n_caches = pc.n_caches;
	r.subject = pc.subject;
	settle_check(&r);
	r.info.fingerprint = rule_fingerprint(pf, &r.info, pc.param_hash);
	r.info.file = ld->file;

	nr = realloc(e->rules, (e->n_rules + 1) * sizeof(*nr));
	if (!nr)
		return -ENOMEM;
	e->rules = nr;
	e->rules[e->n_rules++] = r;
	pf->info.n_rules++;
	return 0;
}

static int load_requires(struct loader *ld, const yaml_node_t *n, struct rprofile *pf)
{
	const yaml_node_item_t *it, *end;
	yaml_node_item_t single;

	if (n->type == YAML_SCALAR_NODE) {
		single = 0;
		it = &single;
		end = it + 1;
	} else if (n->type == YAML_SEQUENCE_NODE) {
		it = n->data.sequence.items.start;
		end = n->data.sequence.items.top;
	} else {
		lerr(ld, n, "requires must be a list of object kinds (node, netdev, rdma_port)");
		return -EINVAL;
	}
	for (; it < end; it++) {
		const yaml_node_t *k = n->type == YAML_SCALAR_NODE ? n : ynode(ld, *it);
		const char *s = scalar(k);
		int kind;

		for (kind = 0; s && kind < OBJ__COUNT; kind++)
			if (!strcmp(s, obj_kind_name((enum obj_kind)kind)))
				break;
		if (!s || kind == OBJ__COUNT) {
			lerr(ld, k, "requires: '%s' is not node, netdev or rdma_port", s ? s : "?");
			return -EINVAL;
		}
		pf->info.requires[kind] = true;
	}
	return 0;
}

/* applies_to: { rdma_port: EXPR, ... }, each a guard of every rule of that scope */
static int load_applies(struct loader *ld, const yaml_node_t *n, struct rprofile *pf)
{
	int bad = 0;

	if (n->type != YAML_MAPPING_NODE) {
		lerr(ld, n,
		     "applies_to must be a mapping of object kind (netdev, rdma_port) to an "
		     "expression");
		return -EINVAL;
	}
	for (yaml_node_pair_t *pair = n->data.mapping.pairs.start; pair < n->data.mapping.pairs.top;
	     pair++) {
		yaml_node_t *k = ynode(ld, pair->key), *v = ynode(ld, pair->value);
		const char *s = scalar(k);
		struct parse_ctx pc = {
			.arena = &ld->e->arena,
			.params = pf->params,
			.n_params = pf->info.n_params,
			.param_hash = RX_FNV_INIT,
			/* the guard reads them too (fleet check reads only these) */
			.fields_used = ld->e->fields_used
		};
		struct expr *e;
		int kind = -1;

		for (int i = OBJ_NETDEV; s && i < OBJ__COUNT; i++)
			if (!strcmp(s, obj_kind_name((enum obj_kind)i)))
				kind = i;
		if (kind < 0) {
			lerr(ld, k, "applies_to: '%s' is not netdev or rdma_port", s ? s : "?");
			bad = -EINVAL;
			continue;
		}
		if (pf->applies[kind]) {
			lerr(ld, k, "applies_to: %s given twice", s);
			bad = -EINVAL;
			continue;
		}
		pc.scope = (enum obj_kind)kind;
		pc.reads = pf->applies_reads[kind];
		e = parse_expr_node(ld, &pc, v, "applies_to", &pf->info.applies_src[kind]);
		if (!e) {
			bad = -EINVAL;
			continue;
		}
		/* no per-rule state: it is evaluated for every rule of the scope */
		if (pc.n_rings || pc.n_caches) {
			lerr(ld, v,
			     "applies_to: fields, parameters and constants only (no counter sets, "
			     "no rate/increase/delta)");
			bad = -EINVAL;
			continue;
		}
		pf->applies[kind] = e;
	}
	return bad;
}

static const char *const top_keys[] = { "profile",    "description", "params", "requires",
					"applies_to", "roles",	     "rules" };
enum {
	TK_PROFILE,
	TK_DESCRIPTION,
	TK_PARAMS,
	TK_REQUIRES,
	TK_APPLIES,
	TK_ROLES,
	TK_RULES,
	TK__N
};

/*
 * roles: PATTERN: ROLE, in order (the first pattern that matches a port's
 * netdev, RDMA device or PCI address wins); each pattern must compile.
 */
static int load_roles(struct loader *ld, const yaml_node_t *n, struct rprofile *pf)
{
	size_t cnt;
	int bad = 0;

	if (n->type != YAML_MAPPING_NODE) {
		lerr(ld, n,
		     "roles must be a mapping of pattern: role (compute, storage, "
		     "management, unused)");
		return -EINVAL;
	}
	cnt = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
	pf->roles = arena_alloc(&ld->e->arena, (cnt ? cnt : 1) * sizeof(*pf->roles));
	if (!pf->roles)
		return -ENOMEM;
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	     p++) {
		const yaml_node_t *k = ynode(ld, p->key), *v = ynode(ld, p->value);
		const char *pat = scalar(k), *role = scalar(v);
		char anchored[512];
		regex_t re;
		int rc;

		if (!pat || !*pat) {
			lerr(ld, k, "roles: a pattern is a regular expression");
			bad = -EINVAL;
			continue;
		}
		if (!role || fabric_role_parse(role) == ROLE_NONE) {
			lerr(ld, v,
			     "roles: '%s' is not a role (compute, storage, management, unused)",
			     role ? role : "");
			bad = -EINVAL;
			continue;
		}
		snprintf(anchored, sizeof(anchored), "^(%s)$", pat);
		rc = regcomp(&re, anchored, REG_EXTENDED | REG_NOSUB);
		if (rc) {
			char why[128];

			regerror(rc, &re, why, sizeof(why));
			lerr(ld, k, "roles: pattern '%s': %s", pat, why);
			bad = -EINVAL;
			continue;
		}
		regfree(&re);
		pf->roles[pf->n_roles].pattern = arena_strdup(&ld->e->arena, pat);
		pf->roles[pf->n_roles].role = fabric_role_parse(role);
		pf->n_roles++;
	}
	return bad;
}

/* judged_roles: [compute, storage]: the roles whose ports (and netdevs) the profile judges. */
static int load_judged(struct loader *ld, const yaml_node_t *root, struct rprofile *pf)
{
	const char *list = NULL;

	for (size_t i = 0; i < pf->info.n_params; i++)
		if (!strcmp(pf->params[i].name, "judged_roles") && pf->params[i].type == RT_STR)
			list = pf->params[i].v.v.s;
	if (!list)
		return 0;
	for (const char *p = list; *p;) {
		size_t len = strcspn(p, ", ");
		char w[32];

		size_t wl = len < sizeof(w) ? len : sizeof(w) - 1;

		memcpy(w, p, wl);
		w[wl] = '\0';
		if (len && fabric_role_parse(w) == ROLE_NONE) {
			lerr(ld, root,
			     "judged_roles: '%s' is not a role (compute, storage, "
			     "management, unused)",
			     w);
			return -EINVAL;
		}
		if (len)
			pf->judged |= 1u << fabric_role_parse(w);
		p += len;
		p += strspn(p, ", ");
	}
	pf->info.judged_src = list;
	return 0;
}

static int load_document(struct loader *ld)
{
	const yaml_node_t *root = yaml_document_get_root_node(&ld->doc), *v[TK__N] = { 0 },
			  *kn[TK__N] = { 0 };
	struct rules_engine *e = ld->e;
	struct rprofile pf = { 0 };
	size_t pidx = e->n_profiles;
	const char *s;
	int bad = 0;

	if (!root) {
		diag_at(ld->dg, ld->file, 0, 0, false,
			"empty file: a profile needs profile: and rules:");
		return -EINVAL;
	}
	if (root->type != YAML_MAPPING_NODE) {
		lerr(
		    ld, root,
		    "a profile is a mapping with profile, description, params, requires and rules");
		return -EINVAL;
	}
	bad = split_mapping(ld, root, top_keys, TK__N, "",
			    "profile, description, params, requires, applies_to, roles, rules", v,
			    kn);
	s = want_name(ld, root, v[TK_PROFILE], true);
	if (!s)
		return -EINVAL;
	for (size_t i = 0; i < e->n_profiles; i++)
		if (!strcmp(e->profiles[i].info.name, s)) {
			lerr(ld, v[TK_PROFILE], "profile '%s' is already loaded from %s", s,
			     e->profiles[i].info.file);
			return -EINVAL;
		}
	pf.info.name = arena_strdup(&e->arena, s);
	pf.info.file = ld->file;
	pf.info.text_hash = rx_fnv1a(RX_FNV_INIT, ld->text, ld->len);
	pf.info.origin = ld->origin ? ld->origin : rules_origin_name(RULES_ORIGIN_FILE);
	pf.info.description = "";
	if (v[TK_DESCRIPTION]) {
		s = want_scalar(ld, v[TK_DESCRIPTION], "description");
		if (!s)
			return -EINVAL;
		pf.info.description = arena_strdup(&e->arena, s);
	}
	if (v[TK_PARAMS] && load_params(ld, v[TK_PARAMS], &pf))
		bad = -EINVAL;
	if (v[TK_REQUIRES] && load_requires(ld, v[TK_REQUIRES], &pf))
		bad = -EINVAL;
	if (v[TK_APPLIES] && load_applies(ld, v[TK_APPLIES], &pf))
		bad = -EINVAL;
	if (v[TK_ROLES] && load_roles(ld, v[TK_ROLES], &pf))
		bad = -EINVAL;
	if (load_judged(ld, v[TK_PARAMS] ? v[TK_PARAMS] : root, &pf))
		bad = -EINVAL;
	if (!v[TK_RULES]) {
		lerr(ld, root, "missing 'rules:' (a list of rules)");
		return -EINVAL;
	}
	if (v[TK_RULES]->type != YAML_SEQUENCE_NODE) {
		lerr(ld, v[TK_RULES], "rules must be a list (each item starts with '- name:')");
		return -EINVAL;
	}
	{
		struct rprofile *np = realloc(e->profiles, (e->n_profiles + 1) * sizeof(*np));

		if (!np)
			return -ENOMEM;
		e->profiles = np;
		e->profiles[e->n_profiles++] = pf;
	}
	for (yaml_node_item_t *it = v[TK_RULES]->data.sequence.items.start;
	     it < v[TK_RULES]->data.sequence.items.top; it++) {
		/* keep going after a bad rule: report every error in one run */
		int r = load_rule(ld, ynode(ld, *it), &e->profiles[pidx], pidx);

		if (r == -ENOMEM)
			return r;
		if (r)
			bad = r;
	}
	if (!e->profiles[pidx].info.n_rules && !bad)
		lwarn(ld, v[TK_RULES], "profile '%s' has no rules", pf.info.name);
	return bad;
}

static int load_text(struct loader *ld, const char *file, const char *text, size_t len)
{
	yaml_parser_t parser;
	yaml_document_t extra;
	int r;

	struct yaml_scan_pos at;
	char sz[32];

	ld->file = arena_strdup(&ld->e->arena, file);
	ld->text = text;
	ld->len = len;
	if (!ld->file)
		return -ENOMEM;
	/* bounds before libyaml: its cost grows with both, and faster than linearly with nesting */
	if (len > RW_MAX_PROFILE_BYTES) {
		diag_at(ld->dg, ld->file, 0, 0, false, "larger than %s, the limit for a rule file",
			rw_size_text(RW_MAX_PROFILE_BYTES, sz, sizeof(sz)));
		return -EFBIG;
	}
	if (yaml_flow_prescan(text, len, RW_MAX_YAML_FLOW_DEPTH, &at)) {
		diag_at(ld->dg, ld->file, at.line, at.col, false,
			"YAML: flow collections ([...], {...}) nested deeper than %d",
			RW_MAX_YAML_FLOW_DEPTH);
		return -EINVAL;
	}
	if (index_lines(ld))
		return -ENOMEM;
	if (!yaml_parser_initialize(&parser)) {
		free(ld->lines);
		return -ENOMEM;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &ld->doc)) {
		const yaml_mark_t *m = &parser.problem_mark;

		if (parser.context)
			diag_at(ld->dg, ld->file, (int)m->line + 1, (int)m->column + 1, false,
				"YAML: %s %s (line %d)",
				parser.problem ? parser.problem : "syntax error", parser.context,
				(int)parser.context_mark.line + 1);
		else
			diag_at(ld->dg, ld->file, (int)m->line + 1, (int)m->column + 1, false,
				"YAML: %s", parser.problem ? parser.problem : "syntax error");
		yaml_parser_delete(&parser);
		free(ld->lines);
		return -EINVAL;
	}
	r = load_document(ld);
	if (!r) {
		if (!yaml_parser_load(&parser, &extra)) {
			diag_at(ld->dg, ld->file, (int)parser.problem_mark.line + 1,
				(int)parser.problem_mark.column + 1, false, "YAML: %s",
				parser.problem ? parser.problem : "syntax error");
			r = -EINVAL;
		} else {
			yaml_node_t *root = yaml_document_get_root_node(&extra);

			if (root) {
				lerr(ld, root, "only one YAML document per profile file");
				r = -EINVAL;
			}
			yaml_document_delete(&extra);
		}
	}
	yaml_document_delete(&ld->doc);
	yaml_parser_delete(&parser);
	free(ld->lines);
	ld->lines = NULL;
	return r;
}

static struct rules_engine *engine_new(void)
{
	return calloc(1, sizeof(struct rules_engine));
}

static int finish(struct rules_engine *e, const struct rules_spec *spec, const bool *used,
		  struct rules_diags *dg)
{
	for (size_t i = 0; spec && i < spec->n_params; i++)
		if (!used[i] && !spec->params[i].optional)
			diag_at(dg, NULL, 0, 0, false,
				"--param %s: no loaded profile declares a parameter '%s'",
				spec->params[i].key, spec->params[i].key);
	if (e->arena.oom)
		diag_at(dg, NULL, 0, 0, false, "out of memory loading rules");
	for (size_t i = 0; i < e->n_rules; i++) {
		e->rules[i].info.profile = e->profiles[e->rules[i].profile].info.name;
		if (e->rules[i].n_rings)
			e->need_history = true;
	}
	return dg->n_errors ? -EINVAL : 0;
}

/* A loader into a new engine: 0, or -ENOMEM. */
static int loader_start(struct loader *ld, const struct rules_spec *spec, struct rules_diags *dg)
{
	*ld = (struct loader){ .e = engine_new(), .dg = dg, .spec = spec };
	if (!ld->e || !(ld->param_used = calloc(spec->n_params + 1, sizeof(bool))) ||
	    !(ld->param_blamed = calloc(spec->n_params + 1, sizeof(bool)))) {
		free(ld->param_used);
		free(ld->e);
		return -ENOMEM;
	}
	return 0;
}

/* After loading (r: -ENOMEM, or whatever was said is in dg): *out is the engine, or r. */
static int loader_end(struct loader *ld, int r, struct rules_engine **out)
{
	if (r != -ENOMEM)
		r = finish(ld->e, ld->spec, ld->param_used, ld->dg);
	free(ld->param_used);
	free(ld->param_blamed);
	if (r) {
		rules_free(ld->e);
		return r;
	}
	*out = ld->e;
	return 0;
}

int rules_load_buffer(const char *name, const char *text, size_t len, const struct rules_spec *spec,
		      struct rules_engine **out, struct rules_diags *diags)
{
	static const struct rules_spec none;
	struct loader ld;

	*out = NULL;
	if (loader_start(&ld, spec ? spec : &none, diags))
		return -ENOMEM;
	return loader_end(&ld, load_text(&ld, name, text, len), out);
}

int rules_load(const struct rules_spec *spec, struct rules_engine **out, struct rules_diags *diags)
{
	static const char *const def[] = { RULES_DEFAULT_PROFILE };
	struct loader ld;
	const char *const *names = spec->n_profiles ? (const char *const *)spec->profiles : def;
	size_t n = spec->n_profiles ? spec->n_profiles : 1;
	int r = 0;

	*out = NULL;
	if (loader_start(&ld, spec, diags))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		char path[4096], searched[1024], builtins[256] = "";
		const struct rules_builtin *b = NULL;
		enum rules_origin origin;
		char *text = NULL;
		size_t len = 0;
		int lr =
		    profile_path(names[i], path, sizeof(path), searched, sizeof(searched), &origin);

		/* last: the copy built into the binary (an installed file of that name wins) */
		if (lr == -ENOENT && searched[0] && (b = rules_builtin_find(names[i]))) {
			snprintf(path, sizeof(path), "built-in:%s.yaml", b->name);
			origin = RULES_ORIGIN_BUILTIN;
			lr = 0;
		}
		if (lr) {
			for (size_t k = 0, used = 0;
			     k < rules_builtin_count && used < sizeof(builtins); k++)
				used += (size_t)snprintf(builtins + used, sizeof(builtins) - used,
							 "%s%s", k ? ", " : "",
							 rules_builtin_profiles[k].name);
			if (searched[0])
				diag_at(diags, NULL, 0, 0, false,
					"profile '%s' not found (looked in %s; built in: %s)",
					names[i], searched, builtins);
			else
				diag_at(diags, names[i], 0, 0, false, "cannot read: %s",
					strerror(-lr));
			continue;
		}
		if (!b) {
			lr = read_file_max(path, RW_MAX_PROFILE_BYTES, &text, &len);
			if (lr) {
				char why[160];

				diag_at(diags, path, 0, 0, false, "cannot read: %s",
					read_error_text(lr, RW_MAX_PROFILE_BYTES, "a rule file",
							why, sizeof(why)));
				continue;
			}
		}
		ld.origin = rules_origin_name(origin);
		lr = b ? load_text(&ld, path, b->text, b->len) : load_text(&ld, path, text, len);
		free(text);
		if (lr == -ENOMEM) {
			r = lr;
			break;
		}
	}
	return loader_end(&ld, r, out);
}

/* ---- the site's rail map (--rail-map FILE) ---- */

#define RAIL_MAP_MAX_BYTES (4u << 20)

static int rail_map_doc(const char *path, yaml_document_t *doc, const yaml_node_t *root,
			struct fabric_config *fc, char *err, size_t errlen)
{
	const yaml_node_t *rails = NULL;

	if (!root || root->type != YAML_MAPPING_NODE) {
		snprintf(err, errlen,
			 "%s: a rail map is a mapping with 'rails:' (PCI address, "
			 "netdev or RDMA device: rail)",
			 path);
		return -EINVAL;
	}
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
	     p++) {
		const yaml_node_t *k = yaml_document_get_node(doc, p->key);
		const char *ks =
		    k && k->type == YAML_SCALAR_NODE ? (const char *)k->data.scalar.value : NULL;

		if (ks && !strcmp(ks, "rails")) {
			rails = yaml_document_get_node(doc, p->value);
			continue;
		}
		snprintf(err, errlen, "%s:%d: unknown key '%s' (a rail map has 'rails:')", path,
			 k ? (int)k->start_mark.line + 1 : 0, ks ? ks : "?");
		return -EINVAL;
	}
	if (!rails || rails->type != YAML_MAPPING_NODE) {
		snprintf(err, errlen,
			 "%s: 'rails:' must be a mapping of PCI address, netdev or RDMA "
			 "device to a rail name",
			 path);
		return -EINVAL;
	}
	for (yaml_node_pair_t *p = rails->data.mapping.pairs.start;
	     p < rails->data.mapping.pairs.top; p++) {
		const yaml_node_t *k = yaml_document_get_node(doc, p->key),
				  *v = yaml_document_get_node(doc, p->value);
		const char *ks, *vs;
		int line = k ? (int)k->start_mark.line + 1 : 0, r;

		if (!k || !v || k->type != YAML_SCALAR_NODE || v->type != YAML_SCALAR_NODE) {
			snprintf(err, errlen, "%s:%d: each line is KEY: RAIL (scalars)", path,
				 line);
			return -EINVAL;
		}
		ks = (const char *)k->data.scalar.value;
		vs = (const char *)v->data.scalar.value;
		if (!*ks || strlen(ks) >= RW_NAME_MAX || !*vs || strlen(vs) >= RW_STR_MAX) {
			snprintf(err, errlen,
				 "%s:%d: '%.40s: %.40s': key and rail must be 1-%d "
				 "characters",
				 path, line, ks, vs, RW_STR_MAX - 1);
			return -EINVAL;
		}
		r = fabric_config_add_rail(fc, ks, vs);
		if (r == -EEXIST) {
			snprintf(err, errlen, "%s:%d: '%s' is mapped twice", path, line, ks);
			return -EINVAL;
		}
		if (r)
			return r;
	}
	free(fc->map_file);
	fc->map_file = strdup(path);
	return fc->map_file ? 0 : -ENOMEM;
}

int rules_load_rail_map(const char *path, struct fabric_config *fc, char *err, size_t errlen)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	char *text = NULL;
	size_t len = 0;
	int r = read_file_all(path, &text, &len);

	if (r) {
		snprintf(err, errlen, "%s: %s", path, strerror(-r));
		return r;
	}
	if (len > RAIL_MAP_MAX_BYTES) {
		snprintf(err, errlen, "%s: %zu bytes: a rail map is at most %u", path, len,
			 RAIL_MAP_MAX_BYTES);
		free(text);
		return -EFBIG;
	}
	if (!yaml_parser_initialize(&parser)) {
		free(text);
		return -ENOMEM;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		snprintf(err, errlen, "%s:%d:%d: YAML: %s", path, (int)parser.problem_mark.line + 1,
			 (int)parser.problem_mark.column + 1,
			 parser.problem ? parser.problem : "syntax error");
		yaml_parser_delete(&parser);
		free(text);
		return -EINVAL;
	}
	r = rail_map_doc(path, &doc, yaml_document_get_root_node(&doc), fc, err, errlen);
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	free(text);
	return r;
}
