// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "term.h"

const char *const term_color_words[] = { "auto", "always", "never", NULL };

int term_color_parse(const char *s, enum term_color *out)
{
	if (!strcmp(s, "auto"))
		*out = TERM_COLOR_AUTO;
	else if (!strcmp(s, "always"))
		*out = TERM_COLOR_ALWAYS;
	else if (!strcmp(s, "never"))
		*out = TERM_COLOR_NEVER;
	else
		return -EINVAL;
	return 0;
}

static int clamp_width(long w)
{
	return w < TERM_MIN_WIDTH ? TERM_MIN_WIDTH : w > TERM_MAX_WIDTH ? TERM_MAX_WIDTH : (int)w;
}

int term_width(FILE *f)
{
	const char *env = getenv("COLUMNS");
	struct winsize ws;

	/* COLUMNS first, as ls and man do: a script or a test can ask for a width */
	if (env && *env) {
		char *end;
		long w = strtol(env, &end, 10);

		if (!*end && w > 0)
			return clamp_width(w);
	}
	if (f && isatty(fileno(f)) && !ioctl(fileno(f), TIOCGWINSZ, &ws) && ws.ws_col)
		return clamp_width(ws.ws_col);
	return 80;
}

void term_init(struct term *t, FILE *f, enum term_color mode)
{
	const char *nc = getenv("NO_COLOR");

	t->f = f;
	t->width = term_width(f);
	t->col = 0;
	/* https://no-color.org: set and not empty disables colour (auto only) */
	t->color = mode == TERM_COLOR_ALWAYS ||
		   (mode == TERM_COLOR_AUTO && isatty(fileno(f)) && !(nc && *nc));
}

const char *term_col(const struct term *t, const char *code)
{
	return t->color ? code : "";
}

int term_strwidth(const char *s, size_t len)
{
	int w = 0;

	for (size_t i = 0; i < len && s[i]; i++)
		w += ((unsigned char)s[i] & 0xc0) != 0x80;
	return w;
}

void term_printf(struct term *t, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	fputs(buf, t->f);
	if (n && buf[strlen(buf) - 1] == '\n')
		t->col = 0;
	else
		t->col += term_strwidth(buf, strlen(buf));
}

void term_code(struct term *t, const char *code)
{
	if (t->color)
		fputs(code, t->f);
}

void term_newline(struct term *t)
{
	fputc('\n', t->f);
	t->col = 0;
}

void term_pad_to(struct term *t, int c)
{
	while (t->col < c) {
		fputc(' ', t->f);
		t->col++;
	}
}

/* Put len bytes, newlines (inside a `span`) as spaces and runs of blanks as one. */
static void put_token(struct term *t, const char *s, size_t len)
{
	bool blank = false;

	for (size_t i = 0; i < len; i++) {
		if (s[i] == ' ' || s[i] == '\n' || s[i] == '\t') {
			blank = true;
			continue;
		}
		if (blank) {
			fputc(' ', t->f);
			t->col++;
			blank = false;
		}
		fputc(s[i], t->f);
		t->col += ((unsigned char)s[i] & 0xc0) != 0x80;
	}
}

/* Columns a token takes once put_token() has collapsed its blanks. */
static int token_width(const char *s, size_t len)
{
	int w = 0;
	bool blank = false;

	for (size_t i = 0; i < len; i++) {
		if (s[i] == ' ' || s[i] == '\n' || s[i] == '\t') {
			blank = true;
			continue;
		}
		w += blank + (((unsigned char)s[i] & 0xc0) != 0x80);
		blank = false;
	}
	return w;
}

static size_t word_len(const char *p)
{
	return strcspn(p, " \t\n");
}

/*
 * The token at p: a word, or a `span` with what sticks to its ends
 * ("(`ethtool -A IF`)," stays whole) when it fits in room columns.
 */
static size_t token_at(const char *p, int room)
{
	const char *q;
	size_t len;

	if (*p == '`' || (*p == '(' && p[1] == '`')) {
		q = strchr(p + (*p == '(' ? 2 : 1), '`');
		/* a span never runs over a paragraph break */
		if (q && !memmem(p, (size_t)(q - p), "\n\n", 2)) {
			len = (size_t)(q + 1 - p) + word_len(q + 1);
			if (token_width(p, len) <= room)
				return len;
		}
	}
	return word_len(p);
}

void term_wrap(struct term *t, int indent, const char *text, bool reflow)
{
	const char *p = text;
	bool first = true; /* nothing of this text on the line yet */
	int room = t->width - indent;

	while (*p) {
		size_t len;
		int w;

		if (*p == ' ' || *p == '\t') {
			p++;
			continue;
		}
		if (*p == '\n') {
			size_t nl = 0;

			while (*p == '\n' || *p == ' ' || *p == '\t')
				nl += *p++ == '\n';
			if (!*p)
				break;
			if (reflow && nl == 1)
				continue;
			term_newline(t);
			if (reflow)
				term_newline(t);
			term_pad_to(t, indent);
			first = true;
			continue;
		}
		len = token_at(p, room);
		w = token_width(p, len);
		if (t->col > indent && t->col + (first ? 0 : 1) + w > t->width) {
			term_newline(t);
			term_pad_to(t, indent);
		} else if (!first) {
			fputc(' ', t->f);
			t->col++;
		}
		put_token(t, p, len);
		p += len;
		first = false;
	}
	term_newline(t);
}

/*
 * stderr, with every control byte but newline and tab written as \xHH (as the
 * recording reader shows what a row held): an option value echoed in an error
 * ('--format: '\x01\x7fgarb\x1b[2J' is not ...') never reaches the terminal
 * raw, whichever of the many messages echoes it.
 */
static ssize_t guarded_write(void *cookie, const char *buf, size_t len)
{
	char out[4096];
	size_t o = 0;

	(void)cookie;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)buf[i];

		if (o + 4 > sizeof(out)) {
			if (write(STDERR_FILENO, out, o) < 0)
				return -1;
			o = 0;
		}
		if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
			snprintf(out + o, 5, "\\x%02x", c);
			o += 4;
		} else {
			out[o++] = (char)c;
		}
	}
	for (size_t w = 0; w < o;) {
		ssize_t n = write(STDERR_FILENO, out + w, o - w);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		w += (size_t)n;
	}
	return (ssize_t)len;
}

void term_guard_stderr(void)
{
	cookie_io_functions_t io = { .write = guarded_write };
	FILE *f = fopencookie(NULL, "w", io);

	if (!f)
		return; /* the plain stderr, as before */
	setvbuf(f, NULL, _IOLBF, 0);
	stderr = f;
}
