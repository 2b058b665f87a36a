// SPDX-License-Identifier: MIT
/*
 * Bounded reads of outside input; see bounded.h.  The YAML pre-scan exists
 * because libyaml's scanner keeps a stack of possible simple keys, one per
 * flow level, and walks it for every token: a file of 200 000 '[' takes
 * minutes of CPU.  Counting the flow levels ourselves first costs one pass.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bounded.h"
#include "util.h"

int read_file_max(const char *path, size_t max, char **out, size_t *len)
{
	/*
	 * O_NONBLOCK: opening a FIFO nobody writes to would block here for
	 * ever; opened this way, a read with no writer is EOF at once.
	 */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	int64_t deadline = mono_ns() + (int64_t)RW_READ_WAIT_S * 1000000000;
	size_t n = 0, cap = 16384;
	char *buf = NULL;
	struct stat st;
	int r = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		r = -errno;
		goto close;
	}
	if (S_ISDIR(st.st_mode)) {
		r = -EISDIR;
		goto close;
	}
	if (S_ISREG(st.st_mode)) {
		if ((uint64_t)st.st_size > max) {
			r = -EFBIG;
			goto close;
		}
		cap = (size_t)st.st_size + 2;
	}
	if (cap > max + 2)
		cap = max + 2;
	for (;;) {
		ssize_t got;

		if (n + 1 >= cap) {
			/* room for one byte past max: that byte says "too big" */
			size_t ncap = cap * 2 > max + 2 ? max + 2 : cap * 2;
			char *nb;

			if (ncap <= cap) {
				r = -EFBIG;
				goto close;
			}
			nb = realloc(buf, ncap);
			if (!nb) {
				r = -ENOMEM;
				goto close;
			}
			buf = nb;
			cap = ncap;
		}
		if (!buf && !(buf = malloc(cap))) {
			r = -ENOMEM;
			goto close;
		}
		got = read(fd, buf + n, cap - 1 - n);
		if (got > 0) {
			n += (size_t)got;
			if (n > max) {
				r = -EFBIG;
				goto close;
			}
			continue;
		}
		if (got == 0)
			break;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN) {
			/* a pipe or FIFO whose writer has not written yet */
			struct pollfd pfd = { .fd = fd, .events = POLLIN };
			int64_t left = deadline - mono_ns();

			if (left <= 0) {
				r = -ETIMEDOUT;
				goto close;
			}
			if (poll(&pfd, 1, (int)(left / 1000000) + 1) < 0 && errno != EINTR) {
				r = -errno;
				goto close;
			}
			continue;
		}
		r = -errno;
		goto close;
	}
	if (!buf && !(buf = malloc(1))) {
		r = -ENOMEM;
		goto close;
	}
	buf[n] = '\0';
	*out = buf;
	buf = NULL;
	if (len)
		*len = n;
close:
	free(buf);
	close(fd);
	return r;
}

const char *rw_size_text(size_t n, char *buf, size_t len)
{
	if (n >= (1u << 20) && !(n % (1u << 20)))
		snprintf(buf, len, "%zu MiB", n >> 20);
	else if (n >= 1024 && !(n % 1024))
		snprintf(buf, len, "%zu KiB", n >> 10);
	else
		snprintf(buf, len, "%zu bytes", n);
	return buf;
}

const char *read_error_text(int err, size_t max, const char *what, char *buf, size_t len)
{
	char sz[32];

	if (err == -EFBIG)
		snprintf(buf, len, "larger than %s, the limit for %s",
			 rw_size_text(max, sz, sizeof(sz)), what);
	else if (err == -ETIMEDOUT)
		snprintf(buf, len,
			 "nothing came from it in %d s (a FIFO or pipe nobody writes to?)",
			 RW_READ_WAIT_S);
	else
		snprintf(buf, len, "%s", strerror(-err));
	return buf;
}

static bool is_ctl(unsigned char c)
{
	/* tab is kept: it is how a terminal shows it anyway */
	return (c < 0x20 && c != '\t') || c == 0x7f;
}

const char *text_escape_ctl_n(const char *s, size_t n, char *buf, size_t len)
{
	size_t o = 0;

	if (!len)
		return buf;
	for (size_t i = 0; i < n && s; i++) {
		unsigned char c = (unsigned char)s[i];

		if (is_ctl(c)) {
			if (o + 4 >= len)
				break;
			snprintf(buf + o, len - o, "\\x%02x", c);
			o += 4;
		} else {
			if (o + 1 >= len)
				break;
			buf[o++] = (char)c;
		}
	}
	buf[o] = '\0';
	return buf;
}

const char *text_escape_ctl(const char *s, char *buf, size_t len)
{
	return text_escape_ctl_n(s, s ? strlen(s) : 0, buf, len);
}

bool text_has_ctl(const char *s)
{
	for (; s && *s; s++)
		if (is_ctl((unsigned char)*s))
			return true;
	return false;
}

/* ---- the YAML pre-scan ---- */

struct scan {
	const char *s;
	size_t len, i;
	int line, col;
};

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static bool ends_token(const struct scan *sc, size_t i)
{
	return i >= sc->len || blank(sc->s[i]) || sc->s[i] == '\n';
}

static void step(struct scan *sc)
{
	char c = sc->s[sc->i++];

	if (c == '\n') {
		sc->line++;
		sc->col = 1;
	} else if (((unsigned char)c & 0xc0) != 0x80) {
		/* columns count characters: a UTF-8 continuation byte is not one */
		sc->col++;
	}
}

static void to_eol(struct scan *sc)
{
	while (sc->i < sc->len && sc->s[sc->i] != '\n')
		step(sc);
}

static void quoted(struct scan *sc)
{
	char q = sc->s[sc->i];

	step(sc);
	while (sc->i < sc->len) {
		char c = sc->s[sc->i];

		if (q == '"' && c == '\\' && sc->i + 1 < sc->len) {
			step(sc);
			step(sc);
			continue;
		}
		step(sc);
		if (c == q) {
			if (q == '\'' && sc->i < sc->len && sc->s[sc->i] == '\'') {
				step(sc); /* '' is a quote inside a single-quoted scalar */
				continue;
			}
			return;
		}
	}
}

int yaml_flow_prescan(const char *text, size_t len, int max_depth, struct yaml_scan_pos *at)
{
	struct scan sc = { .s = text, .len = len, .line = 1, .col = 1 };
	bool start = true;	/* a node may begin here */
	bool line_start = true; /* only indentation so far on this line */
	int depth = 0, indent = 0;
	int block = -1; /* in a block scalar (| or >): the indentation of its key, else -1 */

	while (sc.i < len) {
		char c = text[sc.i];

		if (c == '\n') {
			step(&sc);
			line_start = true;
			indent = 0;
			if (!depth)
				start = true;
			continue;
		}
		if (line_start) {
			if (c == ' ') {
				indent++;
				step(&sc);
				continue;
			}
			line_start = false;
			if (block >= 0) {
				/* a block scalar's text: lines indented past its key */
				if (indent > block || blank(c)) {
					to_eol(&sc);
					continue;
				}
				block = -1;
			}
		}
		if (c == '#' && (sc.i == 0 || blank(text[sc.i - 1]) || text[sc.i - 1] == '\n')) {
			to_eol(&sc);
			continue;
		}
		if (start && (c == '"' || c == '\'')) {
			quoted(&sc);
			start = false;
			continue;
		}
		if ((c == '[' || c == '{') && (depth || start)) {
			if (depth >= max_depth) {
				at->line = sc.line;
				at->col = sc.col;
				return -EMLINK;
			}
			depth++;
			start = true;
			step(&sc);
			continue;
		}
		step(&sc);
		if (depth && (c == ']' || c == '}')) {
			depth--;
			start = false;
		} else if (depth && c == ',') {
			start = true;
		} else if (c == ':' && (depth || ends_token(&sc, sc.i))) {
			start = true;
		} else if (blank(c)) {
			/* leaves start as it was */
		} else if (!depth && start && (c == '-' || c == '?') && ends_token(&sc, sc.i)) {
			/* a sequence entry or complex key: a node may follow */
		} else if (!depth && start && (c == '|' || c == '>')) {
			block = indent;
			to_eol(&sc);
			start = false;
		} else if (start && (c == '&' || c == '!' || c == '*')) {
			/* an anchor or tag comes before the node; an alias is one */
			while (!ends_token(&sc, sc.i) && !(depth && strchr(",[]{}", text[sc.i])))
				step(&sc);
			start = c != '*';
		} else {
			start = false; /* a plain scalar: [ and { inside it are text */
		}
	}
	return 0;
}
