/* SPDX-License-Identifier: MIT */
/* A growable byte buffer, reused across polls so steady state does not allocate. */
#ifndef ROCEWATCH_STRBUF_H
#define ROCEWATCH_STRBUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strbuf {
	char *buf;
	size_t len, cap;
	bool oom; /* an append failed; the content is incomplete */
};

void sb_reset(struct strbuf *sb);
void sb_free(struct strbuf *sb);
int sb_reserve(struct strbuf *sb, size_t extra);
void sb_add(struct strbuf *sb, const char *s, size_t n);
void sb_puts(struct strbuf *sb, const char *s);
void sb_putc(struct strbuf *sb, char c);
void sb_printf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_vprintf(struct strbuf *sb, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
void sb_u64(struct strbuf *sb, uint64_t v);
void sb_i64(struct strbuf *sb, int64_t v);
/* A float as Prometheus and JSON read it back exactly (%.17g, with NaN/Inf spelled out). */
void sb_double(struct strbuf *sb, double v);
/* Escape for a Prometheus label value: backslash, double quote, newline. */
void sb_label_escape(struct strbuf *sb, const char *s);
/* Escape for HTML text (and double-quoted attribute values). */
void sb_html_escape(struct strbuf *sb, const char *s);
/* The same for the first n bytes of s (or up to its NUL). */
void sb_html_escape_n(struct strbuf *sb, const char *s, size_t n);
/* Swap the contents of two buffers. */
void sb_swap(struct strbuf *a, struct strbuf *b);

#endif
