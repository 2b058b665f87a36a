// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "build_info.h"
#include "cli.h"
#include "config.h"
#include "util.h"

/* The command whose options are being parsed, for the messages of shared rows. */
static const char *parsing = "";

const char *cli_parsing(void)
{
	return parsing;
}

void cli_print_version(void)
{
	printf("rocewatch %s (revision %s, %s)\n", ROCEWATCH_VERSION, rw_build_revision,
	       rw_build_compiler);
}

const char *const cli_text_json[] = { "text", "json", NULL };

FILE *cli_open_output(const char *cmd, const char *path)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;

	if (!f)
		fprintf(stderr, "rocewatch %s: %s: %s\n", cmd, path, strerror(errno));
	return f;
}

int cli_close_output(const char *cmd, const char *path, FILE *f)
{
	int bad = fflush(f) || ferror(f);

	if (f != stdout && fclose(f))
		bad = 1;
	if (bad) {
		fprintf(stderr, "rocewatch %s: %s: write error\n", cmd,
			strcmp(path, "-") ? path : "standard output");
		return -EIO;
	}
	return 0;
}

/* ---- options as tables ---- */

#define EACH_ROW(c, t, o)                                                  \
	for (size_t t = 0; t < CLI_TABLES_MAX && (c)->tables[t].rows; t++) \
		for (const struct cli_opt *o = (c)->tables[t].rows; o->name; o++)

void cli_print_row(const struct cli_opt *o, FILE *f)
{
	int n = 2;

	if (o->kind == CLI_TEXT) {
		fputs(o->help, f);
		return;
	}
	if (!o->help)
		return;
	fputs("  ", f);
	if (o->short_name)
		n += fprintf(f, o->name[0] ? "-%c, " : "-%c", o->short_name);
	if (o->name[0])
		n += fprintf(f, "--%s", o->name);
	if (o->metavar)
		n += fprintf(f, "%s%s", o->prefix ? "" : " ", o->metavar);
	/* a synopsis past the column: the help says how it goes on (spaces, a newline) */
	if (n < CLI_HELP_COLUMN)
		fprintf(f, "%*s", CLI_HELP_COLUMN - n, "");
	for (const char *p = o->help; *p; p++) {
		fputc(*p, f);
		if (*p == '\n' && p[1] && p[1] != '\n')
			fprintf(f, "%*s", CLI_HELP_COLUMN, "");
	}
	fputc('\n', f);
}

/* "Usage: rocewatch NAME " and the synopsis, its lines under its first. */
static void print_synopsis(const struct cli_cmd *c, FILE *f)
{
	int indent = fprintf(f, "Usage: rocewatch %s ", c->name);

	for (const char *p = c->synopsis; *p; p++) {
		fputc(*p, f);
		if (*p == '\n')
			fprintf(f, "%*s", indent, "");
	}
	fputs("\n\n", f);
}

void cli_print_help(const struct cli_cmd *c, FILE *f)
{
	if (c->synopsis)
		print_synopsis(c, f);
	fputs(c->head, f);
	EACH_ROW(c, t, o)
	cli_print_row(o, f);
	if (c->tail)
		fputs(c->tail, f);
	if (c->help_after)
		c->help_after(f);
}

static bool takes_arg(const struct cli_opt *o)
{
	return o->kind != CLI_FLAG && o->kind != CLI_SET && o->kind != CLI_CALL_FLAG &&
	       o->kind != CLI_HELP && o->kind != CLI_VERSION;
}

/* The row named exactly name[0..len) (or whose prefix it extends), and its table. */
static const struct cli_opt *find_long(const struct cli_cmd *c, const char *name, size_t len,
				       size_t *table)
{
	const struct cli_opt *pre = NULL;
	size_t pre_t = 0;

	EACH_ROW(c, t, o)
	{
		size_t n = strlen(o->name);

		if (!n) /* a short option only, or a heading */
			continue;
		if (!o->prefix && n == len && !strncmp(o->name, name, len)) {
			*table = t;
			return o;
		}
		if (o->prefix && len > n && !strncmp(o->name, name, n) && !pre) {
			pre = o;
			pre_t = t;
		}
	}
	*table = pre_t;
	return pre;
}

static const struct cli_opt *find_short(const struct cli_cmd *c, char ch, size_t *table)
{
	EACH_ROW(c, t, o)
	if (o->short_name && o->short_name == ch) {
		*table = t;
		return o;
	}
	return NULL;
}

/* The long option a mistyped --WORD (no value) is closest to, or NULL. */
static const char *closest_long(const struct cli_cmd *c, const char *word)
{
	const char *name = word + 2, *eq = strchr(name, '='), *best = NULL;
	char w[64];
	int bd = 99;

	if (strncmp(word, "--", 2) || (size_t)(eq ? eq - name : (long)strlen(name)) >= sizeof(w))
		return NULL;
	snprintf(w, sizeof(w), "%.*s", (int)(eq ? eq - name : (long)strlen(name)), name);
	EACH_ROW(c, t, o)
	{
		int d;

		if (!o->name[0] || !o->help)
			continue;
		d = rw_edit_distance(w, o->name);
		if (d && d < bd && rw_typo_close(d, strlen(w))) {
			bd = d;
			best = o->name;
		}
	}
	return best;
}

static void bad_word(const struct cli_cmd *c, const char *word, char short_name)
{
	const char *near;

	near = short_name ? NULL : closest_long(c, word);
	if (near)
		fprintf(stderr, "rocewatch %s: unknown option '%s'; did you mean '--%s'?\n",
			c->name, word, near);
	else if (short_name)
		fprintf(stderr,
			"rocewatch %s: unknown option '-%c' or missing value (see --help)\n",
			c->name, short_name);
	else
		fprintf(stderr,
			"rocewatch %s: unknown option or missing value: '%s' (see --help)\n",
			c->name, word);
}

/* "'ARG' is not " the row's .bad, or its words as a list: "a, b or c". */
static int bad_value(const struct cli_opt *o, const char *arg)
{
	fprintf(stderr, "rocewatch %s: --%s: '%.*s' is not ", parsing, o->name,
		o->arg_max ? o->arg_max : (int)strlen(arg), arg);
	if (o->words && !o->bad)
		for (size_t i = 0; o->words[i]; i++)
			fprintf(stderr, "%s%s", i ? o->words[i + 1] ? ", " : " or " : "",
				o->words[i]);
	else
		fputs(o->bad, stderr);
	fputc('\n', stderr);
	return -EINVAL;
}

/* The index of arg in the row's words, or -1. */
static int word_index(const struct cli_opt *o, const char *arg)
{
	for (int i = 0; o->words[i]; i++)
		if (!strcmp(o->words[i], arg))
			return i;
	return -1;
}

static void store_uint(void *at, size_t size, uint64_t u)
{
	if (size == sizeof(uint64_t))
		*(uint64_t *)at = u;
	else if (size == sizeof(uint32_t))
		*(uint32_t *)at = (uint32_t)u;
	else if (size == sizeof(uint16_t))
		*(uint16_t *)at = (uint16_t)u;
	else
		*(uint8_t *)at = (uint8_t)u;
}

/* The kinds that are a number within bounds: 0 or -EINVAL (printed). */
static int store_number(const struct cli_opt *o, void *at, const char *arg)
{
	int64_t ns;
	uint64_t u;

	if (o->kind == CLI_DURATION) {
		if (parse_duration(arg, &ns) || ns < o->min || (o->max && ns > o->max))
			return bad_value(o, arg);
		if (ns < o->floor) {
			fprintf(stderr, "rocewatch %s: --%s: %s is below the minimum of %s\n",
				parsing, o->name, arg, o->floor_text);
			return -EINVAL;
		}
		*(int64_t *)at = ns;
		return 0;
	}
	if ((o->kind == CLI_SIZE ? parse_size(arg, &u) : parse_u64(arg, &u)) ||
	    u < (uint64_t)o->min || (o->max && u > (uint64_t)o->max))
		return bad_value(o, arg);
	store_uint(at, o->size, u);
	return 0;
}

/* A copy of arg at at (the one before freed): 0, or -ENOMEM (printed). */
static int store_copy(char **at, const char *arg)
{
	char *s = strdup(arg);

	if (!s) {
		fprintf(stderr, "rocewatch %s: out of memory\n", parsing);
		return -ENOMEM;
	}
	free(*at);
	*at = s;
	return 0;
}

/*
 * A directory that is there: a root (/sys, /proc) that is not would read as
 * a node with no devices and pass or skip every rule.  0 or -EINVAL (printed).
 */
static int want_dir(const struct cli_opt *o, const char *arg)
{
	struct stat st;

	if (stat(arg, &st)) {
		fprintf(stderr, "rocewatch %s: --%s %s: %s\n", parsing, o->name, arg,
			strerror(errno));
		return -EINVAL;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "rocewatch %s: --%s %s: not a directory\n", parsing, o->name, arg);
		return -EINVAL;
	}
	return 0;
}

/* A handler's answer: 0, -EINVAL (printed), or 2 (not this option). */
static int call(const struct cli_opt *o, void *at, const char *arg)
{
	int r = o->fn(o, at, arg);

	if (r == CLI_BAD)
		return bad_value(o, arg);
	return r == 1 ? 2 : r ? -EINVAL : 0;
}

/* Store one option's value: 0, 1 (help/version printed), -EINVAL (printed), 2 (not it). */
static int apply(const struct cli_cmd *c, const struct cli_opt *o, char *base, const char *arg)
{
	char *at = base + o->off;
	char flag[128];
	int i;

	/* a string of a few words; a handler's words are its message (it may take more) */
	if (o->words && (o->kind == CLI_STRING || o->kind == CLI_STRDUP) && word_index(o, arg) < 0)
		return bad_value(o, arg);
	switch (o->kind) {
	case CLI_HELP:
		cli_print_help(c, stdout);
		return 1;
	case CLI_VERSION:
		cli_print_version();
		return 1;
	case CLI_FLAG:
		*(bool *)at = true;
		return 0;
	case CLI_SET:
		*(int *)at = (int)o->value;
		return 0;
	case CLI_STRING:
		*(const char **)at = arg;
		return 0;
	case CLI_STRDUP:
		return store_copy((char **)at, arg) ? -EINVAL : 0;
	case CLI_DIR:
		if (want_dir(o, arg))
			return -EINVAL;
		*(const char **)at = arg;
		return 0;
	case CLI_CHOICE:
		i = word_index(o, arg);
		if (i < 0)
			return bad_value(o, arg);
		if (o->size == sizeof(bool))
			*(bool *)at = i;
		else
			*(int *)at = i;
		return 0;
	case CLI_DURATION:
	case CLI_SIZE:
	case CLI_COUNT:
		return store_number(o, at, arg);
	case CLI_REGEX:
		snprintf(flag, sizeof(flag), "--%s", o->name);
		return config_regex_add((regex_t *)at, (bool *)(base + o->has_off),
					(char **)(base + o->src_off), flag, arg)
			   ? -EINVAL
			   : 0;
	case CLI_CALL:
	case CLI_CALL_FLAG:
		return call(o, at, arg);
	case CLI_TEXT:
		break;
	}
	return -EINVAL;
}

/* --NAME, --NAME=VALUE or --NAME VALUE at argv[*i]; *i moves past what it used. */
static int parse_long(const struct cli_cmd *c, char *base, int argc, char **argv, int *i)
{
	const char *word = argv[*i], *name = word + 2, *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name), t;
	const struct cli_opt *o = find_long(c, name, len, &t);
	const char *arg = NULL;
	char rest[128];
	int r;

	if (!o || len >= sizeof(rest))
		goto bad;
	if (takes_arg(o)) {
		if (eq)
			arg = eq + 1;
		else if (*i + 1 < argc)
			arg = argv[++*i];
		else
			goto bad;
	} else if (eq) {
		goto bad; /* a flag given a value */
	}
	if (o->prefix) { /* --collector.NAME: the handler gets NAME */
		size_t n = strlen(o->name);

		memcpy(rest, name + n, len - n);
		rest[len - n] = '\0';
		arg = rest;
	}
	r = apply(c, o, base + c->tables[t].off, arg);
	if (r != 2)
		return r;
bad:
	bad_word(c, word, 0);
	return -EINVAL;
}

/* -x, -xy (flags), -oFILE or -o FILE at argv[*i]. */
static int parse_short(const struct cli_cmd *c, char *base, int argc, char **argv, int *i)
{
	const char *word = argv[*i];

	for (const char *p = word + 1; *p; p++) {
		size_t t;
		const struct cli_opt *o = find_short(c, *p, &t);
		const char *arg = NULL;
		int r;

		if (!o) {
			bad_word(c, word, *p);
			return -EINVAL;
		}
		if (takes_arg(o)) {
			if (p[1])
				arg = p + 1;
			else if (*i + 1 < argc)
				arg = argv[++*i];
			else {
				bad_word(c, word, *p);
				return -EINVAL;
			}
		}
		r = apply(c, o, base + c->tables[t].off, arg);
		if (r == 2) {
			bad_word(c, word, *p);
			return -EINVAL;
		}
		if (r || arg)
			return r;
	}
	return 0;
}

int cli_parse(const struct cli_cmd *c, void *base, int argc, char **argv, int *first)
{
	char **pos = calloc((size_t)argc + 1, sizeof(*pos));
	int n = 0, r = 0, i;

	if (!pos) {
		fprintf(stderr, "rocewatch %s: out of memory\n", c->name);
		return -EINVAL;
	}
	parsing = c->range ? c->range : c->name;
	for (i = 1; i < argc && !r; i++) {
		const char *w = argv[i];

		if (!strcmp(w, "--")) {
			while (++i < argc)
				pos[n++] = argv[i];
			break;
		}
		if (w[0] != '-' || !w[1])
			pos[n++] = argv[i];
		else if (w[1] == '-')
			r = parse_long(c, base, argc, argv, &i);
		else
			r = parse_short(c, base, argc, argv, &i);
	}
	/* Like GNU getopt: the operands after the options, in their order. */
	*first = argc - n;
	for (i = 0; i < n; i++)
		argv[*first + i] = pos[i];
	free(pos);
	return r;
}
