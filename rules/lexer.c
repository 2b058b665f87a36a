// SPDX-License-Identifier: MIT
/* Tokens of one rule expression.  Offsets are byte offsets into the expression string. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules_int.h"
#include "util.h"

struct arena_blk {
	struct arena_blk *next;
	size_t used, cap;
	max_align_t data[];
};

void *arena_alloc(struct arena *a, size_t n)
{
	struct arena_blk *b = a->head;
	size_t al = _Alignof(max_align_t);

	n = (n + al - 1) / al * al;
	if (!b || b->cap - b->used < n) {
		size_t cap = n > 16384 ? n : 16384;

		b = malloc(sizeof(*b) + cap);
		if (!b) {
			a->oom = true;
			return NULL;
		}
		b->next = a->head;
		b->used = 0;
		b->cap = cap;
		a->head = b;
	}
	void *p = (char *)b->data + b->used;

	b->used += n;
	memset(p, 0, n);
	return p;
}

char *arena_strndup(struct arena *a, const char *s, size_t n)
{
	char *p = arena_alloc(a, n + 1);

	if (!p)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *arena_strdup(struct arena *a, const char *s)
{
	return arena_strndup(a, s, strlen(s));
}

void arena_free(struct arena *a)
{
	struct arena_blk *b = a->head;

	while (b) {
		struct arena_blk *n = b->next;

		free(b);
		b = n;
	}
	a->head = NULL;
}

void rx_lex_init(struct lexer *lx, const char *src, int len, struct arena *a)
{
	memset(lx, 0, sizeof(*lx));
	lx->src = src;
	lx->len = len;
	lx->arena = a;
	lx->err_off = -1;
}

static struct token lex_error(struct lexer *lx, int off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static struct token lex_error(struct lexer *lx, int off, const char *fmt, ...)
{
	va_list ap;

	if (lx->err_off < 0) {
		lx->err_off = off;
		va_start(ap, fmt);
		vsnprintf(lx->err, sizeof(lx->err), fmt, ap);
		va_end(ap);
	}
	lx->pos = lx->len;
	return (struct token){ .k = TK_EOF, .off = off };
}

static bool ident_start(int c)
{
	return isalpha(c) || c == '_';
}

static bool ident_char(int c)
{
	return isalnum(c) || c == '_';
}

static struct token lex_number(struct lexer *lx, int start)
{
	const char *s = lx->src;
	int p = start, e;
	char buf[64];
	struct token t = { .k = TK_NUM, .off = start };

	while (p < lx->len && isdigit((unsigned char)s[p]))
		p++;
	/* "0..7" is a range, not the number "0." */
	if (p + 1 < lx->len && s[p] == '.' && isdigit((unsigned char)s[p + 1])) {
		p++;
		while (p < lx->len && isdigit((unsigned char)s[p]))
			p++;
	}
	e = p;
	/* A unit right after the digits makes a duration: 5m, 30s, 1m30s, 100ms. */
	if (p < lx->len && isalpha((unsigned char)s[p])) {
		while (p < lx->len && isalnum((unsigned char)s[p]))
			p++;
		if (p - start >= (int)sizeof(buf) ||
		    (memcpy(buf, s + start, (size_t)(p - start)), buf[p - start] = '\0',
		     parse_duration(buf, &t.dur_ns)))
			return lex_error(lx, start,
					 "'%.*s' is neither a number nor a duration (5m, 30s, 1h)",
					 p - start, s + start);
		t.k = TK_DUR;
		t.len = p - start;
		lx->pos = p;
		return t;
	}
	if (e - start >= (int)sizeof(buf))
		return lex_error(lx, start, "number too long");
	memcpy(buf, s + start, (size_t)(e - start));
	buf[e - start] = '\0';
	t.num = strtod(buf, NULL);
	t.len = e - start;
	lx->pos = e;
	return t;
}

static struct token lex_string(struct lexer *lx, int start)
{
	const char *s = lx->src;
	char q = s[start];
	int p = start + 1, n = 0;
	char *out;
	struct token t = { .k = TK_STR, .off = start };

	out = arena_alloc(lx->arena, (size_t)(lx->len - start) + 1);
	if (!out)
		return lex_error(lx, start, "out of memory");
	while (p < lx->len && s[p] != q) {
		if (s[p] == '\\' && p + 1 < lx->len) {
			p++;
			switch (s[p]) {
			case 'n':
				out[n++] = '\n';
				break;
			case 't':
				out[n++] = '\t';
				break;
			case '\\':
			case '"':
			case '\'':
				out[n++] = s[p];
				break;
			default:
				return lex_error(lx, p - 1, "unknown escape '\\%c' in string",
						 s[p]);
			}
			p++;
			continue;
		}
		out[n++] = s[p++];
	}
	if (p >= lx->len)
		return lex_error(lx, start, "unterminated string");
	out[n] = '\0';
	t.str = out;
	t.len = p + 1 - start;
	lx->pos = p + 1;
	return t;
}

struct token rx_lex_next(struct lexer *lx)
{
	static const struct {
		const char *s;
		enum tok_kind k;
	} ops[] = {
		{ "..", TK_DOTDOT }, { "==", TK_EQ },	 { "!=", TK_NE },     { "<=", TK_LE },
		{ ">=", TK_GE },     { "&&", TK_AND },	 { "||", TK_OR },     { "(", TK_LPAREN },
		{ ")", TK_RPAREN },  { "{", TK_LBRACE }, { "}", TK_RBRACE },  { "[", TK_LBRACK },
		{ "]", TK_RBRACK },  { ",", TK_COMMA },	 { ".", TK_DOT },     { "!", TK_NOT },
		{ "<", TK_LT },	     { ">", TK_GT },	 { "+", TK_PLUS },    { "-", TK_MINUS },
		{ "*", TK_STAR },    { "/", TK_SLASH },	 { "%", TK_PERCENT }, { "|", TK_PIPE },
		{ "&", TK_AMP },
	};
	const char *s = lx->src;
	int p = lx->pos;

	while (p < lx->len && isspace((unsigned char)s[p]))
		p++;
	lx->pos = p;
	if (p >= lx->len)
		return (struct token){ .k = TK_EOF, .off = p };
	if (isdigit((unsigned char)s[p]))
		return lex_number(lx, p);
	if (s[p] == '"' || s[p] == '\'')
		return lex_string(lx, p);
	if (ident_start((unsigned char)s[p]) ||
	    (s[p] == '$' && p + 1 < lx->len && ident_start((unsigned char)s[p + 1]))) {
		int start = p, name = s[p] == '$' ? p + 1 : p;
		struct token t = { .k = s[p] == '$' ? TK_PARAM : TK_IDENT, .off = start };

		p = name;
		while (p < lx->len && ident_char((unsigned char)s[p]))
			p++;
		t.len = p - start;
		t.str = arena_strndup(lx->arena, s + name, (size_t)(p - name));
		if (!t.str)
			return lex_error(lx, start, "out of memory");
		lx->pos = p;
		if (t.k == TK_IDENT && !strcmp(t.str, "true"))
			t.k = TK_TRUE;
		else if (t.k == TK_IDENT && !strcmp(t.str, "false"))
			t.k = TK_FALSE;
		else if (t.k == TK_IDENT && !strcmp(t.str, "in"))
			t.k = TK_IN;
		return t;
	}
	if (s[p] == '$')
		return lex_error(lx, p, "'$' must be followed by a parameter name");
	for (size_t i = 0; i < ARRAY_SIZE(ops); i++) {
		size_t l = strlen(ops[i].s);

		if ((int)(p + l) <= lx->len && !strncmp(s + p, ops[i].s, l)) {
			lx->pos = p + (int)l;
			return (struct token){ .k = ops[i].k, .off = p, .len = (int)l };
		}
	}
	if (s[p] == '=')
		return lex_error(lx, p, "unexpected '=' (comparison is '==')");
	return lex_error(lx, p, "unexpected character '%c'",
			 isprint((unsigned char)s[p]) ? s[p] : '?');
}

const char *rx_tok_name(enum tok_kind k)
{
	static const char *const names[] = {
		[TK_EOF] = "end of expression",
		[TK_NUM] = "number",
		[TK_DUR] = "duration",
		[TK_STR] = "string",
		[TK_IDENT] = "name",
		[TK_PARAM] = "parameter",
		[TK_TRUE] = "'true'",
		[TK_FALSE] = "'false'",
		[TK_IN] = "'in'",
		[TK_LPAREN] = "'('",
		[TK_RPAREN] = "')'",
		[TK_LBRACE] = "'{'",
		[TK_RBRACE] = "'}'",
		[TK_LBRACK] = "'['",
		[TK_RBRACK] = "']'",
		[TK_COMMA] = "','",
		[TK_DOT] = "'.'",
		[TK_DOTDOT] = "'..'",
		[TK_NOT] = "'!'",
		[TK_AND] = "'&&'",
		[TK_OR] = "'||'",
		[TK_EQ] = "'=='",
		[TK_NE] = "'!='",
		[TK_LT] = "'<'",
		[TK_LE] = "'<='",
		[TK_GT] = "'>'",
		[TK_GE] = "'>='",
		[TK_PLUS] = "'+'",
		[TK_MINUS] = "'-'",
		[TK_STAR] = "'*'",
		[TK_SLASH] = "'/'",
		[TK_PERCENT] = "'%'",
		[TK_PIPE] = "'|'",
		[TK_AMP] = "'&'",
	};
	return names[k];
}
