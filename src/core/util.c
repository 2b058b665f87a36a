// SPDX-License-Identifier: MIT
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

static enum log_level cur_level = LOG_LVL_INFO;
static enum log_format cur_format = LOG_FMT_LOGFMT;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

void log_set_level(enum log_level lvl)
{
	cur_level = lvl;
}

enum log_level log_get_level(void)
{
	return cur_level;
}

int log_level_parse(const char *s)
{
	static const char *const names[] = { "error", "warn", "info", "debug" };

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(s, names[i]))
			return (int)i;
	if (!strcmp(s, "warning"))
		return LOG_LVL_WARN;
	return -EINVAL;
}

void log_set_format(enum log_format fmt)
{
	cur_format = fmt;
}

int log_format_parse(const char *s)
{
	if (!strcmp(s, "logfmt"))
		return LOG_FMT_LOGFMT;
	if (!strcmp(s, "json"))
		return LOG_FMT_JSON;
	return -EINVAL;
}

/* logfmt wants a quoted value escaped like a Go string; JSON the same for these bytes. */
static void log_quoted(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

/*
 * The line format of Prometheus exporters (go-kit log through exporter-toolkit):
 * logfmt "ts=... level=... msg=..." or one JSON object per line, with an
 * RFC 3339 UTC timestamp in milliseconds.
 */
static void vlog(enum log_level lvl, const char *fmt, va_list ap)
{
	static const char *const tag[] = { "error", "warn", "info", "debug" };
	char msg[2048], ts[64];
	struct timespec now;
	struct tm tm;

	if (lvl > cur_level)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	snprintf(ts, sizeof(ts), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 now.tv_nsec / 1000000);
	pthread_mutex_lock(&log_lock);
	if (cur_format == LOG_FMT_JSON) {
		fprintf(stderr, "{\"ts\":\"%s\",\"level\":\"%s\",\"msg\":", ts, tag[lvl]);
		log_quoted(stderr, msg);
		fputs("}\n", stderr);
	} else {
		fprintf(stderr, "ts=%s level=%s msg=", ts, tag[lvl]);
		log_quoted(stderr, msg);
		fputc('\n', stderr);
	}
	pthread_mutex_unlock(&log_lock);
}

void rw_log(enum log_level lvl, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(lvl, fmt, ap);
	va_end(ap);
}

uint64_t fnv1a(const void *p, size_t n, uint64_t h)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++) {
		h ^= c[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

uint64_t fnv1a_str(const char *s)
{
	return fnv1a(s, strlen(s), FNV1A_INIT);
}

/*
 * The log-once table: open addressing over key hashes (a collision only
 * costs a message).  A reset key leaves a tombstone so the probe chains
 * behind it stay intact; the next insert on its chain takes the slot back.
 * When every slot holds a live key, a new key cannot be remembered, so it is
 * not logged either (logging it would repeat on every call): that is said
 * once, until a reset makes room again.
 */
#define ONCE_SLOTS     RW_LOG_ONCE_KEYS
#define ONCE_EMPTY     0ULL
#define ONCE_TOMBSTONE UINT64_MAX

static uint64_t once_keys[ONCE_SLOTS];
static unsigned once_live;
static bool once_full_said;

static uint64_t once_hash(const char *key)
{
	uint64_t h = fnv1a_str(key);

	return h == ONCE_EMPTY || h == ONCE_TOMBSTONE ? 1 : h;
}

/* The slot holding h, or NULL; *free_slot gets where h would go (NULL: full). */
static uint64_t *once_find(uint64_t h, uint64_t **free_slot)
{
	uint64_t *hole = NULL;

	for (unsigned i = 0; i < ONCE_SLOTS; i++) {
		uint64_t *k = &once_keys[(h + i) % ONCE_SLOTS];

		if (*k == h) {
			*free_slot = NULL;
			return k;
		}
		if (*k == ONCE_TOMBSTONE && !hole)
			hole = k;
		if (*k == ONCE_EMPTY) {
			*free_slot = hole ? hole : k;
			return NULL;
		}
	}
	*free_slot = hole;
	return NULL;
}

void rw_log_once(enum log_level lvl, const char *key, const char *fmt, ...)
{
	uint64_t h = once_hash(key), *slot, *free_slot;
	bool say_full = false;
	va_list ap;

	pthread_mutex_lock(&log_lock);
	slot = once_find(h, &free_slot);
	if (slot) {
		pthread_mutex_unlock(&log_lock);
		return;
	}
	if (!free_slot) {
		say_full = !once_full_said;
		once_full_said = true;
		pthread_mutex_unlock(&log_lock);
		if (say_full)
			rw_log(LOG_LVL_WARN,
			       "%u distinct problems are already reported once each; "
			       "further new ones are not logged until one of them clears",
			       ONCE_SLOTS);
		return;
	}
	*free_slot = h;
	once_live++;
	pthread_mutex_unlock(&log_lock);
	va_start(ap, fmt);
	vlog(lvl, fmt, ap);
	va_end(ap);
}

void rw_log_once_reset(const char *key)
{
	uint64_t *slot, *free_slot;

	pthread_mutex_lock(&log_lock);
	slot = once_find(once_hash(key), &free_slot);
	if (slot) {
		*slot = ONCE_TOMBSTONE;
		once_live--;
		once_full_said = false;
		/* Nothing remembered: start over without tombstones (short probes again). */
		if (!once_live)
			memset(once_keys, 0, sizeof(once_keys));
	}
	pthread_mutex_unlock(&log_lock);
}

int array_resize(void *arrp, size_t n, size_t elem)
{
	void **arr = arrp;
	void *na = realloc(*arr, n * elem);

	if (!na)
		return -ENOMEM;
	*arr = na;
	return 0;
}

int array_grow(void *arrp, size_t *cap, size_t n, size_t elem, size_t first)
{
	size_t nc;

	if (n < *cap)
		return 0;
	nc = *cap ? *cap * 2 : first;
	if (array_resize(arrp, nc, elem))
		return -ENOMEM;
	*cap = nc;
	return 0;
}

char *u64_digits(char *end, uint64_t v)
{
	do {
		*--end = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return end;
}

size_t strlcpy0(char *dst, const char *src, size_t size)
{
	size_t len = strlen(src);

	if (size) {
		size_t n = len < size - 1 ? len : size - 1;

		memcpy(dst, src, n);
		dst[n] = '\0';
	}
	return len;
}

char *rstrip(char *s)
{
	size_t n = strlen(s);

	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

int parse_duration(const char *s, int64_t *ns)
{
	static const struct {
		const char *unit;
		int64_t mult;
	} units[] = {
		{ "ms", 1000000LL },
		{ "us", 1000LL },
		{ "ns", 1LL },
		{ "s", 1000000000LL },
		{ "m", 60000000000LL },
		{ "h", 3600000000000LL },
		{ "d", 86400000000000LL },
		{ "w", 7 * 86400000000000LL },
	};
	int64_t total = 0;
	const char *p = s;

	if (!s || !*s)
		return -EINVAL;
	while (*p) {
		uint64_t whole = 0;
		double frac = 0, scale = 0.1;
		int64_t part, fpart;
		size_t i;

		/* digits, then an optional fraction: no sign, exponent, "nan" or "inf" */
		if (!isdigit((unsigned char)*p) && !(*p == '.' && isdigit((unsigned char)p[1])))
			return -EINVAL;
		for (; isdigit((unsigned char)*p); p++)
			if (__builtin_mul_overflow(whole, 10, &whole) ||
			    __builtin_add_overflow(whole, (uint64_t)(*p - '0'), &whole))
				return -ERANGE;
		if (*p == '.')
			for (p++; isdigit((unsigned char)*p); p++, scale /= 10)
				frac += (*p - '0') * scale;
		for (i = 0; i < ARRAY_SIZE(units); i++) {
			size_t l = strlen(units[i].unit);

			if (!strncmp(p, units[i].unit, l) &&
			    (l == 2 || !(p[l] == 's' && units[i].unit[0] == 'm')))
				break;
		}
		if (i == ARRAY_SIZE(units))
			return -EINVAL;
		p += strlen(units[i].unit);
		/* integers exactly (9223372036854775807ns is INT64_MAX), the fraction below one
		 * unit */
		if (whole > (uint64_t)INT64_MAX / (uint64_t)units[i].mult)
			return -ERANGE;
		part = (int64_t)whole * units[i].mult;
		fpart = (int64_t)(frac * (double)units[i].mult); /* frac < 1: below mult */
		if (__builtin_add_overflow(part, fpart, &part) ||
		    __builtin_add_overflow(total, part, &total))
			return -ERANGE;
	}
	*ns = total;
	return 0;
}

/*
 * Decimal, as the kernel prints counters and indices: base 0 would read a
 * sysfs "010" as octal 8.  Trailing whitespace (a file's newline) is fine.
 */
static int parse_unsigned(const char *s, int base, uint64_t *v)
{
	char *end;
	unsigned long long r;

	/* strtoull skips blanks and signs, and base 16 takes a (second) "0x" */
	if (!s || !isxdigit((unsigned char)*s) || s[1] == 'x' || s[1] == 'X')
		return -EINVAL;
	errno = 0;
	r = strtoull(s, &end, base);
	if (errno)
		return -errno;
	while (isspace((unsigned char)*end))
		end++;
	if (*end)
		return -EINVAL;
	*v = r;
	return 0;
}

/* isspace() in the C locale, which a kernel file's bytes are in whatever the process's is */
static bool c_space(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

int parse_u64(const char *s, uint64_t *v)
{
	const unsigned char *p = (const unsigned char *)s, *end;
	uint64_t r = 0;
	unsigned d;

	if (!s || (d = (unsigned)*p - '0') > 9)
		return -EINVAL;
	/*
	 * A counter file's "12345\n", a few hundred times every fast poll: 19
	 * digits cannot overflow, so they need no strtoull.  Anything else
	 * (more digits, or not only blanks after them) takes the full path.
	 */
	end = p + 19;
	do {
		r = r * 10 + d;
		d = (unsigned)*++p - '0';
	} while (d <= 9 && p < end);
	if (d > 9) {
		while (c_space(*p))
			p++;
		if (!*p) {
			*v = r;
			return 0;
		}
	}
	return parse_unsigned(s, 10, v);
}

int parse_hex_u64(const char *s, uint64_t *v)
{
	if (s && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	return parse_unsigned(s, 16, v);
}

int parse_i64(const char *s, int64_t *v)
{
	bool neg = s && *s == '-';
	uint64_t u;
	int r = parse_u64(neg ? s + 1 : s, &u);

	if (r)
		return r;
	if (u > (uint64_t)INT64_MAX + neg)
		return -ERANGE;
	*v = neg ? -(int64_t)(u - 1) - 1 : (int64_t)u; /* -(u) without overflow at INT64_MIN */
	return 0;
}

int parse_size(const char *s, uint64_t *v)
{
	const char *end;
	uint64_t mult = 1, whole = 0;
	double d = 0;
	size_t nd;
	bool exact;

	/* digits first: no sign, "nan", "inf" or hex float */
	if (!s || !(isdigit((unsigned char)*s) || (*s == '.' && isdigit((unsigned char)s[1]))))
		return -EINVAL;
	nd = strspn(s, "0123456789");
	exact = s[nd] != '.' && s[nd] != 'e' && s[nd] != 'E';
	if (!exact) {
		char *e;

		errno = 0;
		d = strtod(s, &e);
		if (errno == ERANGE || !isfinite(d))
			return -ERANGE;
		if (e == s || memchr(s, 'x', (size_t)(e - s)) || memchr(s, 'X', (size_t)(e - s)))
			return -EINVAL;
		end = e;
	} else {
		/* a plain integer is read exactly, not through a double */
		for (size_t i = 0; i < nd; i++)
			if (__builtin_mul_overflow(whole, 10, &whole) ||
			    __builtin_add_overflow(whole, (uint64_t)(s[i] - '0'), &whole))
				return -ERANGE;
		end = s + nd;
	}
	switch (toupper((unsigned char)*end)) {
	case 'K':
		mult = 1ULL << 10;
		break;
	case 'M':
		mult = 1ULL << 20;
		break;
	case 'G':
		mult = 1ULL << 30;
		break;
	case 'T':
		mult = 1ULL << 40;
		break;
	case 'B':
	case '\0':
		break;
	default:
		return -EINVAL;
	}
	if (*end && toupper((unsigned char)*end) != 'B') {
		end++;
		if (*end == 'i')
			end++;
		if (*end == 'B')
			end++;
	} else if (*end) {
		end++;
	}
	if (*end)
		return -EINVAL;
	if (exact) {
		if (__builtin_mul_overflow(whole, mult, &whole))
			return -ERANGE;
		*v = whole;
		return 0;
	}
	d *= (double)mult;
	/* 2^64 and above do not fit (nor does a cast of them mean anything) */
	if (!(d < 18446744073709551616.0))
		return -ERANGE;
	*v = (uint64_t)d;
	return 0;
}

int rw_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned char d[64][64];

	if (la >= 63 || lb >= 63)
		return 99;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = (unsigned char)i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (unsigned char)j;
	for (size_t i = 1; i <= la; i++) {
		for (size_t j = 1; j <= lb; j++) {
			int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);

			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			/* two neighbours swapped are one typo (--intreval) */
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = (unsigned char)best;
		}
	}
	return d[la][lb];
}

int read_file_str(const char *path, char *buf, size_t size)
{
	return read_file_at(AT_FDCWD, path, buf, size);
}

int open_kfile_at(int dfd, const char *name)
{
	/*
	 * O_NONBLOCK: a FIFO planted under --sysfs-root (or a test tree) opens
	 * at once instead of waiting for a writer, and is then refused; so is
	 * a device node or a directory.  The kernel's attribute files (sysfs,
	 * procfs, debugfs, configfs) are all regular.
	 */
	int fd = openat(dfd, name, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	struct stat st;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		int e = -errno;

		close(fd);
		return e;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return -RW_ENOTREG;
	}
	return fd;
}

const char *rw_strerror(int err)
{
	switch (err) {
	case RW_ENOTREG:
		return "not a regular file";
	case RW_ENOLLDP:
		/* mlx5 firmware's LLDP agent (mlxconfig LLDP_NB_RX_MODE) can take every frame */
		return "no LLDP frame seen since rocewatch started (NIC firmware may take them)";
	case RW_ELLDPEXPIRED:
		return "LLDP neighbour expired: no frame within its TTL";
	default:
		return strerror(err);
	}
}

int read_file_at(int dfd, const char *name, char *buf, size_t size)
{
	int fd = open_kfile_at(dfd, name);
	ssize_t n;

	if (fd < 0)
		return fd;
	n = read(fd, buf, size - 1);
	if (n < 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	close(fd);
	buf[n] = '\0';
	rstrip(buf);
	return 0;
}

int read_file_u64(const char *path, uint64_t *v)
{
	char buf[64];
	int r = read_file_str(path, buf, sizeof(buf));

	return r ? r : parse_u64(buf, v);
}

int rw_hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int read_file_hex(const char *path, uint64_t *v)
{
	char buf[64];
	int r = read_file_str(path, buf, sizeof(buf));

	return r ? r : parse_hex_u64(buf, v);
}

static int read_all_stream(FILE *f, char **out, size_t *len)
{
	char *buf = NULL;
	size_t cap = 0, n = 0;

	for (;;) {
		if (n + 4096 + 1 > cap) {
			size_t ncap = cap ? cap * 2 : 16384;
			char *nb = realloc(buf, ncap);

			if (!nb) {
				free(buf);
				fclose(f);
				return -ENOMEM;
			}
			buf = nb;
			cap = ncap;
		}
		size_t r = fread(buf + n, 1, cap - n - 1, f);
		n += r;
		if (r == 0) {
			if (ferror(f)) {
				int e = errno ? -errno : -EIO;

				free(buf);
				fclose(f);
				return e;
			}
			break;
		}
	}
	fclose(f);
	buf[n] = '\0';
	*out = buf;
	if (len)
		*len = n;
	return 0;
}

int read_file_all(const char *path, char **out, size_t *len)
{
	FILE *f = fopen(path, "rb");

	return f ? read_all_stream(f, out, len) : -errno;
}

int read_kfile_all(const char *path, char **out, size_t *len)
{
	int fd = open_kfile_at(AT_FDCWD, path);
	FILE *f;

	if (fd < 0)
		return fd;
	f = fdopen(fd, "rb");
	if (!f) {
		int e = -errno;

		close(fd);
		return e;
	}
	return read_all_stream(f, out, len);
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* Are the 8 bytes of c (first byte lowest) all '0'..'9'? */
static bool digits8(uint64_t c)
{
	const uint64_t hi = 0xF0F0F0F0F0F0F0F0ULL;

	/* each byte 0x30..0x39: its high nibble is 3, and adding 6 keeps it 3 */
	return ((c & hi) | (((c + 0x0606060606060606ULL) & hi) >> 4)) == 0x3333333333333333ULL;
}

/*
 * The value of 8 decimal digits at once: each byte's digit, then pairs
 * (tens times 10 plus units), fours and the eight, by one multiply a step.
 */
static uint64_t value8(uint64_t c)
{
	c = ((c & 0x0F0F0F0F0F0F0F0FULL) * 2561) >> 8;
	c = ((c & 0x00FF00FF00FF00FFULL) * 6553601) >> 16;
	return ((c & 0x0000FFFF0000FFFFULL) * 42949672960001ULL) >> 32;
}
#endif

/*
 * parse_u64() over the n bytes of a counter file, eight digits a step (a
 * counter is 10 to 15 digits after a few days, a few hundred files every
 * fast poll).  Anything but digits and trailing blanks, or more than 16
 * digits, is parse_u64()'s to judge: the same answer, the long way.
 */
static int parse_counter(const char *buf, size_t n, uint64_t *v)
{
	const char *p = buf, *end = buf + n;
	uint64_t r = 0;
	int chunks = 0;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t c;

	while (chunks < 2 && end - p >= 8 && (memcpy(&c, p, 8), digits8(c))) {
		r = r * 100000000ULL + value8(c);
		p += 8;
		chunks++;
	}
#endif
	for (int left = 19 - 8 * chunks; p < end && *p >= '0' && *p <= '9'; left--) {
		if (!left)
			return parse_u64(buf, v);
		r = r * 10 + (uint64_t)(*p++ - '0');
	}
	if (p == buf)
		return parse_u64(buf, v);
	while (p < end && c_space((unsigned char)*p))
		p++;
	if (p != end)
		return parse_u64(buf, v);
	*v = r;
	return 0;
}

int pread_u64(int fd, uint64_t *v)
{
	char buf[64];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n < 0)
		return -errno;
	if (n == 0)
		return -ENODATA; /* a file caught while it is rewritten (a test tree), not a value
				  */
	buf[n] = '\0';
	return parse_counter(buf, (size_t)n, v); /* the newline and blanks after the digits too */
}

double ts_to_double(const struct timespec *ts)
{
	return (double)ts->tv_sec + (double)ts->tv_nsec / 1e9;
}

double rw_fmod(double x, double y)
{
	double ax = fabs(x), ay = fabs(y);
	int ey;

	if (isnan(x) || isnan(y) || isinf(x) || y == 0)
		return NAN;
	if (isinf(y) || ax < ay)
		return x;
	/*
	 * Take |y| times the largest power of two that fits out of |x|, until
	 * less than |y| is left.  Each step is exact: with t <= ax < 2t the
	 * difference ax - t is representable (Sterbenz), and a power-of-two
	 * multiple of ay >= ay is exact too.  One step per bit of x/y: at most
	 * ~2100 (DBL_MAX % DBL_TRUE_MIN).
	 */
	frexp(ay, &ey);
	while (ax >= ay) {
		int ex;
		double t;

		frexp(ax, &ex);
		t = ldexp(ay, ex - ey);
		if (t > ax)
			t = ldexp(ay, ex - ey - 1);
		ax -= t;
	}
	return copysign(ax, x);
}

int64_t rw_llround(double x)
{
	int64_t i;
	double f;

	if (isnan(x))
		return 0;
	if (x >= 9223372036854775807.0)
		return INT64_MAX;
	if (x <= -9223372036854775808.0)
		return INT64_MIN;
	i = (int64_t)x;	   /* toward zero, exact for every double in range */
	f = x - (double)i; /* exact: |f| < 1 and x, i agree in all bits above it */
	if (f >= 0.5)
		i++;
	else if (f <= -0.5)
		i--;
	return i;
}

double rw_ceil(double x)
{
	double t;

	if (!(fabs(x) < 9223372036854775808.0))
		return x;
	t = (double)(int64_t)x;
	t = t < x ? t + 1 : t;
	return t == 0 ? copysign(0.0, x) : t; /* ceil(-0.5) is -0.0 */
}

int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts_ns(&ts);
}

int64_t real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts_ns(&ts);
}

void format_rfc3339(int64_t ns, char *buf, size_t size)
{
	/* floor division: a time before the epoch has a positive fraction too */
	int64_t sec = ns / 1000000000LL, rem = ns % 1000000000LL;
	time_t t;
	struct tm tm;
	char tmp[48];

	if (rem < 0) {
		rem += 1000000000LL;
		sec--;
	}
	t = (time_t)sec;
	if (!gmtime_r(&t, &tm)) {
		snprintf(buf, size, "(time %" PRId64 " ns)", ns);
		return;
	}
	strftime(tmp, sizeof(tmp), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, size, "%s.%03dZ", tmp, (int)(rem / 1000000));
}

static int two_digits(const char *s, int *v)
{
	if (!isdigit((unsigned char)s[0]) || !isdigit((unsigned char)s[1]))
		return -EINVAL;
	*v = (s[0] - '0') * 10 + (s[1] - '0');
	return 0;
}

int rfc3339_datetime(const char *s, int64_t *sec, int64_t *nsec, const char **end)
{
	int y1, y2, mon, day, h, min, secs;
	struct tm tm = { 0 }, chk;
	int64_t frac = 0, scale = 1000000000LL;
	const char *p;
	time_t t;

	/* YYYY-MM-DD(T|t| )HH:MM:SS, every position a digit: no signs, spaces or short fields */
	if (!s || strlen(s) < 19 || two_digits(s, &y1) || two_digits(s + 2, &y2) || s[4] != '-' ||
	    two_digits(s + 5, &mon) || s[7] != '-' || two_digits(s + 8, &day) ||
	    (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || two_digits(s + 11, &h) ||
	    s[13] != ':' || two_digits(s + 14, &min) || s[16] != ':' || two_digits(s + 17, &secs))
		return -EINVAL;
	p = s + 19;
	if (*p == '.') {
		if (!isdigit((unsigned char)p[1]))
			return -EINVAL;
		for (p++; isdigit((unsigned char)*p); p++) {
			if (scale > 1) {
				scale /= 10;
				frac += (*p - '0') * scale;
			}
		}
	}
	tm.tm_year = y1 * 100 + y2 - 1900;
	tm.tm_mon = mon - 1;
	tm.tm_mday = day;
	tm.tm_hour = h;
	tm.tm_min = min;
	tm.tm_sec = secs;
	chk = tm;
	t = timegm(&chk);
	/* timegm() moves February 30 to March 2: a date that does not round-trip is no date */
	if (!gmtime_r(&t, &chk) || chk.tm_year != tm.tm_year || chk.tm_mon != tm.tm_mon ||
	    chk.tm_mday != tm.tm_mday || chk.tm_hour != tm.tm_hour || chk.tm_min != tm.tm_min ||
	    chk.tm_sec != tm.tm_sec)
		return -EINVAL;
	if (t < 0)
		return -ERANGE; /* before 1970: no rocewatch ever recorded that */
	*sec = (int64_t)t;
	*nsec = frac;
	*end = p;
	return 0;
}

int parse_rfc3339(const char *s, int64_t *ns)
{
	int64_t sec, frac;
	const char *p;
	int r = rfc3339_datetime(s, &sec, &frac, &p);

	if (r)
		return r;
	if ((*p != 'Z' && *p != 'z') || p[1])
		return -EINVAL;
	/* nanoseconds in an int64 end at 2262-04-11T23:47:16.854775807Z */
	if (sec > INT64_MAX / 1000000000LL || __builtin_add_overflow(sec * 1000000000LL, frac, ns))
		return -ERANGE;
	return 0;
}

int rw_replace_file(int fd, const char *tmp, const char *path, const void *data, size_t len)
{
	const char *p = data;
	int r = 0;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n < 0 ? -errno : -EIO;
			break;
		}
		p += n;
		len -= (size_t)n;
	}
	if (!r && fsync(fd))
		r = -errno;
	if (close(fd) && !r)
		r = -errno;
	if (!r && rename(tmp, path))
		r = -errno;
	if (r)
		unlink(tmp);
	return r;
}

int mkdir_p(const char *path, mode_t mode)
{
	char buf[4096];
	struct stat st;
	size_t len = strlen(path);

	if (!len || len >= sizeof(buf))
		return len ? -ENAMETOOLONG : -EINVAL;
	memcpy(buf, path, len + 1);
	for (char *p = buf + 1; p <= buf + len; p++) {
		if (*p != '/' && *p)
			continue;
		*p = '\0';
		if (mkdir(buf, mode) && errno != EEXIST)
			return -errno;
		if (stat(buf, &st))
			return -errno;
		if (!S_ISDIR(st.st_mode))
			return -ENOTDIR;
		if (p < buf + len)
			*p = '/';
	}
	return 0;
}
