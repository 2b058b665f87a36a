/* SPDX-License-Identifier: MIT */
/*
 * Reading outside input at a bounded cost: a file read with a size cap that
 * also returns on /dev/zero and on a FIFO, and a pre-scan of YAML text that
 * refuses deep flow nesting before libyaml (whose scanner is quadratic in it)
 * sees the text.
 */
#ifndef ROCEWATCH_BOUNDED_H
#define ROCEWATCH_BOUNDED_H

#include <stdbool.h>
#include <stddef.h>

/* Caps per kind of input; each error names its cap. */
#define RW_MAX_PROFILE_BYTES   (1u << 20)   /* a rule file: the shipped ones are 2-30 KB */
#define RW_MAX_WEBCONFIG_BYTES (256u << 10) /* web config, inline PEM included */
#define RW_MAX_SNAPSHOT_BYTES  (32u << 20)  /* --from: an 8-NIC node's snapshot is ~100 KB */
#define RW_MAX_NCCL_ENV_BYTES  (1u << 20)   /* --nccl-env: a few dozen NCCL_* lines */
/* Flow collections ([..], {..}) nested deeper than this are refused. */
#define RW_MAX_YAML_FLOW_DEPTH 64

/*
 * Whole file into a NUL-terminated heap buffer, at most max bytes: -EFBIG if
 * it holds more (a regular file is judged by its size before reading).  A FIFO,
 * pipe or character device is read without blocking forever: no writer is an
 * empty file, and one that sends nothing for RW_READ_WAIT_S seconds -ETIMEDOUT.
 */
#define RW_READ_WAIT_S 10
int read_file_max(const char *path, size_t max, char **out, size_t *len);

/*
 * Where the pre-scan stopped: the bracket that went past the bound (line and
 * column 1-based, columns in characters as the rule loader counts them).
 */
struct yaml_scan_pos {
	int line, col;
};

/*
 * 0, or -EMLINK (too many links: nested too deep) with *at at the '[' or '{'
 * that opened level max_depth + 1.  Linear, allocation-free, and generous where
 * it cannot tell what libyaml would make of a character: it only has to be
 * right about text nesting flow collections past the bound.
 */
int yaml_flow_prescan(const char *text, size_t len, int max_depth, struct yaml_scan_pos *at);

/* A size as "1 MiB" / "256 KiB" / "300 bytes" for messages. */
const char *rw_size_text(size_t n, char *buf, size_t len);

/*
 * read_file_max()'s error as text: "larger than 1 MiB, the limit for a rule
 * file" for -EFBIG (what names the kind of input), strerror() otherwise.
 */
const char *read_error_text(int err, size_t max, const char *what, char *buf, size_t len);

/*
 * s with its control bytes (C0, DEL) written as \\xNN, so that text from a file
 * (a recording's event, a garbage line) cannot drive the terminal it is shown
 * on; truncated to fit buf.  Returns buf.
 */
const char *text_escape_ctl(const char *s, char *buf, size_t len);
/* The same for n bytes that may hold NULs. */
const char *text_escape_ctl_n(const char *s, size_t n, char *buf, size_t len);
/* true if s holds a control byte text_escape_ctl() would rewrite */
bool text_has_ctl(const char *s);

#endif
