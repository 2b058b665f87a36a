// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build_info.h"
#include "cli.h"
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

int cli_format_json(const char *cmd, const char *arg, bool *json)
{
	if (strcmp(arg, "text") && strcmp(arg, "json")) {
		fprintf(stderr, "rocewatch %s: --format: '%s' is not text or json\n", cmd, arg);
		return -EINVAL;
	}
	*json = !strcmp(arg, "json");
	return 0;
}

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

void cli_print_help(const struct cli_cmd *c, FILE *f)
{
	fputs(c->head, f);
	for (size_t t = 0; t < CLI_TABLES_MAX && c->tables[t]; t++)
		for (const struct cli_opt *o = c->tables[t]; o->name; o++)
			if (o->usage)
				fputs(o->usage, f);
	if (c->tail)
		fputs(c->tail, f);
	if (c->help_after)
		c->help_after(f);
}

static bool takes_arg(const struct cli_opt *o)
{
	return o->kind != CLI_FLAG && o->kind != CLI_CALL_FLAG && o->kind != CLI_HELP &&
	       o->kind != CLI_VERSION;
}

/* The row named exactly name[0..len) (or whose prefix it extends), and its table. */
static const struct cli_opt *find_long(const struct cli_cmd *c, const char *name, size_t len,
				       size_t *table)
{
	const struct cli_opt *pre = NULL;
	size_t pre_t = 0;

	for (size_t t = 0; t < CLI_TABLES_MAX && c->tables[t]; t++) {
		for (const struct cli_opt *o = c->tables[t]; o->name; o++) {
			size_t n = strlen(o->name);

			if (!n) /* a short option only */
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
	}
	*table = pre_t;
	return pre;
}

static const struct cli_opt *find_short(const struct cli_cmd *c, char ch, size_t *table)
{
	for (size_t t = 0; t < CLI_TABLES_MAX && c->tables[t]; t++)
		for (const struct cli_opt *o = c->tables[t]; o->name; o++)
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
	for (size_t t = 0; t < CLI_TABLES_MAX && c->tables[t]; t++)
		for (const struct cli_opt *o = c->tables[t]; o->name; o++) {
			int d;

			if (!o->name[0] || !o->usage)
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

static int bad_value(const struct cli_cmd *c, const struct cli_opt *o, const char *arg)
{
	fprintf(stderr, "rocewatch %s: --%s: '%s' is not %s\n", c->range ? c->range : c->name,
		o->name, arg, o->bad);
	return -EINVAL;
}

/* Store one option's value: 0, 1 (help/version printed), -EINVAL (printed), 2 (not it). */
static int apply(const struct cli_cmd *c, const struct cli_opt *o, void *base, const char *name,
		 const char *arg)
{
	char *at = (char *)base + o->off;
	int64_t ns;
	uint64_t u;

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
	case CLI_STRING:
		*(const char **)at = arg;
		return 0;
	case CLI_CALL:
	case CLI_CALL_FLAG: {
		int r = o->fn(base, name, arg);

		return r == 1 ? 2 : r ? -EINVAL : 0;
	}
	case CLI_DURATION:
		if (parse_duration(arg, &ns) || ns < o->min || (o->max && ns > o->max))
			return bad_value(c, o, arg);
		if (ns < o->floor) {
			fprintf(stderr, "rocewatch %s: --%s: %s is below the minimum of %s\n",
				c->range ? c->range : c->name, o->name, arg, o->floor_text);
			return -EINVAL;
		}
		*(int64_t *)at = ns;
		return 0;
	case CLI_SIZE:
	case CLI_COUNT:
		if ((o->kind == CLI_SIZE ? parse_size(arg, &u) : parse_u64(arg, &u)) ||
		    u < (uint64_t)o->min || (o->max && u > (uint64_t)o->max))
			return bad_value(c, o, arg);
		if (o->size == sizeof(uint64_t))
			*(uint64_t *)at = u;
		else if (o->size == sizeof(uint32_t))
			*(uint32_t *)at = (uint32_t)u;
		else if (o->size == sizeof(uint16_t))
			*(uint16_t *)at = (uint16_t)u;
		else
			*(uint8_t *)at = (uint8_t)u;
		return 0;
	}
	return -EINVAL;
}

/* --NAME, --NAME=VALUE or --NAME VALUE at argv[*i]; *i moves past what it used. */
static int parse_long(const struct cli_cmd *c, void *const *bases, int argc, char **argv, int *i)
{
	const char *word = argv[*i], *name = word + 2, *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name), t;
	const struct cli_opt *o = find_long(c, name, len, &t);
	const char *arg = NULL;
	char whole[128];
	int r;

	if (!o || len >= sizeof(whole))
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
	memcpy(whole, name, len);
	whole[len] = '\0';
	r = apply(c, o, bases[t], whole, arg);
	if (r != 2)
		return r;
bad:
	bad_word(c, word, 0);
	return -EINVAL;
}

/* -x, -xy (flags), -oFILE or -o FILE at argv[*i]. */
static int parse_short(const struct cli_cmd *c, void *const *bases, int argc, char **argv, int *i)
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
		r = apply(c, o, bases[t], o->name, arg);
		if (r == 2) {
			bad_word(c, word, *p);
			return -EINVAL;
		}
		if (r || arg)
			return r;
	}
	return 0;
}

int cli_parse(const struct cli_cmd *c, void *const *bases, int argc, char **argv, int *first)
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
			r = parse_long(c, bases, argc, argv, &i);
		else
			r = parse_short(c, bases, argc, argv, &i);
	}
	/* Like GNU getopt: the operands after the options, in their order. */
	*first = argc - n;
	for (i = 0; i < n; i++)
		argv[*first + i] = pos[i];
	free(pos);
	return r;
}
