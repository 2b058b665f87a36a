/* SPDX-License-Identifier: MIT */
/* Small helpers shared by every room: strings, durations, files, logging. */
#ifndef ROCEWATCH_UTIL_H
#define ROCEWATCH_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

enum log_level {
	LOG_LVL_ERROR,
	LOG_LVL_WARN,
	LOG_LVL_INFO,
	LOG_LVL_DEBUG
};

/* --log.format: logfmt (the default) or json, each line with a UTC timestamp. */
enum log_format {
	LOG_FMT_LOGFMT,
	LOG_FMT_JSON
};

void log_set_level(enum log_level lvl);
void log_set_format(enum log_format fmt);
int log_format_parse(const char *s);
enum log_level log_get_level(void);
int log_level_parse(const char *s);
void rw_log(enum log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * Log only the first time a (key) is seen, so a device that keeps failing
 * the same way says so once, not every second.  log_once_reset() forgets a
 * key when the cause went away.
 */
void rw_log_once(enum log_level lvl, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void rw_log_once_reset(const char *key);
/* How many distinct keys rw_log_once() remembers; past that it says so once and logs no new ones.
 */
#define RW_LOG_ONCE_KEYS 1024

#define log_err(...)   rw_log(LOG_LVL_ERROR, __VA_ARGS__)
#define log_warn(...)  rw_log(LOG_LVL_WARN, __VA_ARGS__)
#define log_info(...)  rw_log(LOG_LVL_INFO, __VA_ARGS__)
#define log_debug(...) rw_log(LOG_LVL_DEBUG, __VA_ARGS__)

/*
 * Make room for one more element in a growable array (doubling, starting at
 * first): 0, or -ENOMEM with the array untouched.
 */
int array_grow(void *arrp, size_t *cap, size_t n, size_t elem, size_t first);
/* Resize a growable array to n elements: 0, or -ENOMEM with the array untouched. */
int array_resize(void *arrp, size_t n, size_t elem);

/* FNV-1a 64: hashes for in-memory tables and change detection (never stored). */
#define FNV1A_INIT 0xcbf29ce484222325ULL
uint64_t fnv1a(const void *p, size_t n, uint64_t h);
uint64_t fnv1a_str(const char *s);

/* Copy with truncation, always terminated. */
size_t strlcpy0(char *dst, const char *src, size_t size);
/*
 * The decimal digits of v written backwards, ending just before end (room
 * for 20): where they start.  Without printf, for the paths every poll takes.
 */
char *u64_digits(char *end, uint64_t v);
/* Trim trailing whitespace in place. */
char *rstrip(char *s);

/*
 * Durations: "100ms", "1s", "1.5s", "5m", "2h", "1d", and Prometheus-style
 * compounds ("1m30s").  Result in nanoseconds; -EINVAL for what is not a
 * duration, -ERANGE for one that does not fit in an int64 of nanoseconds.
 */
int parse_duration(const char *s, int64_t *ns);
/*
 * Decimal integers (trailing whitespace allowed): 0, -EINVAL, or -ERANGE.
 * "010" is 10 and "0x10" is refused; what the kernel prints in hex (PCI
 * vendor, class) goes through parse_hex_u64, "0x" prefix optional.
 */
int parse_u64(const char *s, uint64_t *v);
int parse_hex_u64(const char *s, uint64_t *v);
int parse_i64(const char *s, int64_t *v);
/*
 * Bytes with an optional K/M/G/T (binary) suffix: "64MiB", "1G", "1.5K".
 * -EINVAL for signs, "nan", "inf", hex; -ERANGE for 2^64 bytes and more.
 */
int parse_size(const char *s, uint64_t *v);

/*
 * A kernel attribute file (sysfs, procfs, debugfs, configfs: always regular)
 * opened read-only without blocking: the fd, or -errno, or -RW_ENOTREG for a
 * FIFO, device, socket or directory in its place (a crafted --sysfs-root).
 */
#define RW_ENOTREG 4096 /* past every errno: "not a regular file" */
/*
 * Why an LLDP neighbour fact is absent (ABS_NO_DATA), as the field's errno: the
 * text is what `check` and snapshots show; the netdev and the TTL are in the log.
 */
#define RW_ENOLLDP	4097 /* nothing heard yet */
#define RW_ELLDPEXPIRED 4098 /* heard, then its TTL passed without a new frame */
int open_kfile_at(int dfd, const char *name);
/* strerror() that knows RW_ENOTREG, RW_ENOLLDP and RW_ELLDPEXPIRED */
const char *rw_strerror(int err);

/*
 * Read a small kernel file into buf (terminated, trailing newline stripped):
 * 0, or -errno (-RW_ENOTREG: not a regular file).
 */
int read_file_str(const char *path, char *buf, size_t size);
/* The same relative to a directory fd (AT_FDCWD: read_file_str). */
int read_file_at(int dfd, const char *name, char *buf, size_t size);
int read_file_u64(const char *path, uint64_t *v);
int read_file_hex(const char *path, uint64_t *v);
/* The value of one hex digit (0-9, a-f, A-F), or -1. */
int rw_hex_digit(int c);
/*
 * For "did you mean": the edit distance of two short strings (a swap of
 * neighbours counts one; 99 past 62 characters), and whether d is close
 * enough to be a typo of a word of len characters, not another short word.
 */
int rw_edit_distance(const char *a, const char *b);
static inline bool rw_typo_close(int d, size_t len)
{
	return d <= (len > 3 ? (int)(len / 3) : 1);
}

/* Read a whole file into a malloc'ed buffer.  -errno. */
int read_file_all(const char *path, char **out, size_t *len);
/* The same for a kernel file: regular files only, as open_kfile_at(). */
int read_kfile_all(const char *path, char **out, size_t *len);
/*
 * mkdir -p: create path and its missing parents (mode for each created);
 * 0 when it exists as a directory, -errno otherwise (-ENOTDIR: a non-directory
 * is in the way).
 */
int mkdir_p(const char *path, mode_t mode);
/*
 * The last step of replacing a file atomically: data into fd (opened for
 * writing on tmp, beside path so that rename() stays on one filesystem), on
 * disk, fd closed, tmp renamed over path.  A reader sees the old file or the
 * new one, never half of one.  0, or -errno with tmp unlinked; fd is closed
 * either way.
 */
int rw_replace_file(int fd, const char *tmp, const char *path, const void *data, size_t len);
/* pread(fd, 0) into buf and parse as u64: the re-read of a kept sysfs fd. */
int pread_u64(int fd, uint64_t *v);

double ts_to_double(const struct timespec *ts);
/* A timespec in ns: the one place the multiplication is written. */
static inline int64_t ts_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000LL + ts->tv_nsec;
}
/* And back: ns as a timespec. */
static inline struct timespec ns_ts(int64_t ns)
{
	return (struct timespec){ .tv_sec = ns / 1000000000LL, .tv_nsec = ns % 1000000000LL };
}
/*
 * Arithmetic rocewatch would otherwise take from libm, whose load alone (its
 * IFUNC relocations and their pages) is ~0.28 MiB of every process's
 * resident memory for the few functions below.  Each is exact, and
 * test_util checks it against libm's.
 *
 * rw_fmod: C99's fmod() (the rule language's %): x - n*y for the integer
 * n that makes the result have x's sign and a magnitude below |y|; NaN for
 * a NaN, an infinite x or a zero y; x for an infinite y.
 */
double rw_fmod(double x, double y);
/* llround(): to nearest, halves away from zero; saturated at INT64_MIN/MAX, 0 for NaN. */
int64_t rw_llround(double x);
/* ceil() of a finite x below 2^63 in magnitude (else x). */
double rw_ceil(double x);

int64_t mono_ns(void);
int64_t real_ns(void);
/* RFC 3339 UTC with milliseconds. */
void format_rfc3339(int64_t ns, char *buf, size_t size);
/*
 * "YYYY-MM-DDTHH:MM:SS[.frac]Z" in nanoseconds since the epoch: -EINVAL for
 * what is not one (or not a calendar date: February 30), -ERANGE before
 * 1970 or after 2262-04-11T23:47:16Z (the end of int64 nanoseconds).
 */
int parse_rfc3339(const char *s, int64_t *ns);
/*
 * The date and time of an RFC 3339 timestamp, up to its zone: *sec since
 * the epoch, *nsec the fraction, *end at the zone ("Z", "+02:00").  The
 * separator may be T, t or a space.  -EINVAL, or -ERANGE before 1970.
 */
int rfc3339_datetime(const char *s, int64_t *sec, int64_t *nsec, const char **end);

#endif
