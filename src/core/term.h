/* SPDX-License-Identifier: MIT */
/*
 * Terminal output shared by the text reports (check, fleet check): the width
 * to fill (COLUMNS, else the terminal's, else 80), colour only when asked or
 * on a terminal (NO_COLOR honoured, https://no-color.org), and word wrapping
 * that reflows a rule's doc to that width without breaking a `command` in
 * two when it fits on a line of its own.
 */
#ifndef ROCEWATCH_TERM_H
#define ROCEWATCH_TERM_H

#include <stdbool.h>
#include <stdio.h>

#define TERM_RESET "\033[0m"
#define TERM_BOLD  "\033[1m"
#define TERM_RED   "\033[31m"
#define TERM_GREEN "\033[32m"
#define TERM_YEL   "\033[33m"
#define TERM_MAG   "\033[35m"
#define TERM_DIM   "\033[2m"

/* Narrower than this and nothing fits; wider and lines become hard to read. */
#define TERM_MIN_WIDTH 40
#define TERM_MAX_WIDTH 400
/* --color's words, in enum term_color's order */
extern const char *const term_color_words[];
/* The --color row (cli.h) of a command with a text report, into an enum term_color. */
#define TERM_OPT_COLOR(type, member)                                            \
	{                                                                       \
		.name = "color", CLI_CHOICE_AT(type, member, term_color_words), \
		.metavar = "auto|always|never",                                 \
		.help = "colour the text report (default auto: on a\n"          \
			"terminal, unless NO_COLOR is set)"                     \
	}

enum term_color {
	TERM_COLOR_AUTO,
	TERM_COLOR_ALWAYS,
	TERM_COLOR_NEVER,
};

struct term {
	FILE *f;
	int width; /* columns to fill */
	bool color;
	int col; /* column the next character lands in (term_put* keep it) */
};

/* "auto", "always", "never"; -EINVAL for anything else. */
int term_color_parse(const char *s, enum term_color *out);
/*
 * COLUMNS when it is a number, else the terminal's width (TIOCGWINSZ) when f
 * is one, else 80; clamped to [TERM_MIN_WIDTH, TERM_MAX_WIDTH].
 */
int term_width(FILE *f);
/* From here on stderr writes control bytes (but newline and tab) as \\xHH. */
void term_guard_stderr(void);
void term_init(struct term *t, FILE *f, enum term_color mode);

/* code when colouring, else "" */
const char *term_col(const struct term *t, const char *code);

/* printf that keeps t->col (the text must not hold a newline but at its end). */
void term_printf(struct term *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A colour code: printed when colouring, never counted as a column. */
void term_code(struct term *t, const char *code);
void term_newline(struct term *t);
/* Spaces up to column c (at least one when the line already holds text and pad). */
void term_pad_to(struct term *t, int c);

/*
 * Print text from the current column (term_pad_to() first for a hanging
 * indent), wrapping at t->width; continuation lines start at column indent.  reflow: single
 * newlines are spaces, an empty line a paragraph break (a doc written as YAML block text); else
 * every newline breaks the line.  A `quoted` span is kept on one line when it fits.  Ends with a
 * newline.
 */
void term_wrap(struct term *t, int indent, const char *text, bool reflow);

/* Columns text takes (UTF-8 continuation bytes do not count). */
int term_strwidth(const char *s, size_t len);

#endif
