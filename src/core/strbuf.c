// SPDX-License-Identifier: MIT
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"
#include "util.h"

void sb_reset(struct strbuf *sb)
{
	sb->len = 0;
	sb->oom = false;
	if (sb->buf)
		sb->buf[0] = '\0';
}

void sb_free(struct strbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->cap = 0;
	sb->oom = false;
}

int sb_reserve(struct strbuf *sb, size_t extra)
{
	size_t need = sb->len + extra + 1;
	size_t ncap;
	char *nb;

	if (need <= sb->cap)
		return 0;
	ncap = sb->cap ? sb->cap : 256;
	while (ncap < need)
		ncap *= 2;
	nb = realloc(sb->buf, ncap);
	if (!nb) {
		sb->oom = true;
		return -1;
	}
	sb->buf = nb;
	sb->cap = ncap;
	return 0;
}

void sb_add(struct strbuf *sb, const char *s, size_t n)
{
	if (sb_reserve(sb, n))
		return;
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void sb_puts(struct strbuf *sb, const char *s)
{
	sb_add(sb, s, strlen(s));
}

void sb_putc(struct strbuf *sb, char c)
{
	if (sb_reserve(sb, 1))
		return;
	sb->buf[sb->len++] = c;
	sb->buf[sb->len] = '\0';
}

void sb_vprintf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list again;
	int n;

	/* measured first, then written in place: no bound of a local buffer */
	va_copy(again, ap);
	n = vsnprintf(NULL, 0, fmt, again);
	va_end(again);
	if (n < 0 || sb_reserve(sb, (size_t)n))
		return;
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
}

void sb_printf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sb_vprintf(sb, fmt, ap);
	va_end(ap);
}

void sb_u64(struct strbuf *sb, uint64_t v)
{
	char tmp[24], *p = u64_digits(tmp + sizeof(tmp), v);

	sb_add(sb, p, (size_t)(tmp + sizeof(tmp) - p));
}

void sb_i64(struct strbuf *sb, int64_t v)
{
	if (v < 0) {
		sb_putc(sb, '-');
		sb_u64(sb, (uint64_t)0 - (uint64_t)v);
	} else {
		sb_u64(sb, (uint64_t)v);
	}
}

void sb_double(struct strbuf *sb, double v)
{
	char tmp[32];

	if (isnan(v)) {
		sb_puts(sb, "NaN");
		return;
	}
	if (isinf(v)) {
		sb_puts(sb, v > 0 ? "+Inf" : "-Inf");
		return;
	}
	/* the range first: casting 2^63 or more to int64_t is undefined */
	if (fabs(v) < 1e15 && v == (double)(int64_t)v) {
		sb_i64(sb, (int64_t)v);
		return;
	}
	/* Shortest of %.15g / %.17g that reads back as the same double. */
	snprintf(tmp, sizeof(tmp), "%.15g", v);
	if (strtod(tmp, NULL) != v)
		snprintf(tmp, sizeof(tmp), "%.17g", v);
	sb_puts(sb, tmp);
}

void sb_label_escape(struct strbuf *sb, const char *s)
{
	const char *start = s;

	for (; *s; s++) {
		const char *rep = NULL;

		switch (*s) {
		case '\\':
			rep = "\\\\";
			break;
		case '"':
			rep = "\\\"";
			break;
		case '\n':
			rep = "\\n";
			break;
		default:
			continue;
		}
		sb_add(sb, start, (size_t)(s - start));
		sb_puts(sb, rep);
		start = s + 1;
	}
	sb_add(sb, start, (size_t)(s - start));
}

void sb_html_escape_n(struct strbuf *sb, const char *s, size_t n)
{
	for (size_t i = 0; i < n && s[i]; i++) {
		switch (s[i]) {
		case '<':
			sb_puts(sb, "&lt;");
			break;
		case '>':
			sb_puts(sb, "&gt;");
			break;
		case '&':
			sb_puts(sb, "&amp;");
			break;
		case '"':
			sb_puts(sb, "&quot;");
			break;
		default:
			sb_putc(sb, s[i]);
		}
	}
}

void sb_html_escape(struct strbuf *sb, const char *s)
{
	sb_html_escape_n(sb, s, strlen(s));
}

void sb_swap(struct strbuf *a, struct strbuf *b)
{
	struct strbuf t = *a;

	*a = *b;
	*b = t;
}
