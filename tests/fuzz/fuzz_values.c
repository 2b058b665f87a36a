// SPDX-License-Identifier: MIT
/*
 * The value parsers of the core and the recording reader, one per input:
 * byte 0 picks it, the rest is its text.
 *   0 parse_size    1 parse_duration    2 parse_rfc3339 (and back)
 *   3 rec_parse_time    4 pread_u64 (a kept sysfs fd re-read)
 *   5 parse_u64/parse_i64    6 format_rfc3339 of 8 raw bytes
 * Contract: 0 or -EINVAL/-ERANGE (pread_u64: or -errno), and what parses
 * says the same when printed and read again.
 */
#include <errno.h>
#include <inttypes.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "recording.h"
#include "util.h"

static int memfd = -1;

static void check_rc(int r, const char *what, const char *s)
{
	FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ERANGE, "%s(\"%s\") returned %d", what, s, r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s, buf[64];
	uint64_t u;
	int64_t i, j;
	int r;

	if (!size)
		return 0;
	s = fuzz_str(data + 1, size - 1);
	switch (data[0] % 7) {
	case 0:
		check_rc(parse_size(s, &u), "parse_size", s);
		break;
	case 1:
		r = parse_duration(s, &i);
		check_rc(r, "parse_duration", s);
		FUZZ_CHECK(r || i >= 0, "negative duration %" PRId64 " from \"%s\"", i, s);
		break;
	case 2:
		r = parse_rfc3339(s, &i);
		check_rc(r, "parse_rfc3339", s);
		if (!r) {
			FUZZ_CHECK(i >= 0, "time before 1970 from \"%s\"", s);
			format_rfc3339(i, buf, sizeof(buf));
			FUZZ_CHECK(!parse_rfc3339(buf, &j), "\"%s\" does not read back", buf);
			FUZZ_CHECK(j == i / 1000000 * 1000000, "\"%s\" -> %s", s, buf);
		}
		break;
	case 3:
		r = rec_parse_time(s, 1764672000000LL, &i);
		check_rc(r, "rec_parse_time", s);
		break;
	case 4:
		if (memfd < 0)
			memfd = memfd_create("fuzz-sysfs", MFD_CLOEXEC);
		if (memfd < 0 || ftruncate(memfd, 0) ||
		    pwrite(memfd, data + 1, size - 1, 0) != (ssize_t)(size - 1))
			abort();
		r = pread_u64(memfd, &u);
		FUZZ_CHECK(r <= 0, "pread_u64 returned %d", r);
		break;
	case 5:
		r = parse_u64(s, &u);
		FUZZ_CHECK(r <= 0, "parse_u64 returned %d", r);
		r = parse_i64(s, &i);
		FUZZ_CHECK(r <= 0, "parse_i64 returned %d", r);
		break;
	case 6:
		if (size >= 9) {
			memcpy(&i, data + 1, sizeof(i));
			format_rfc3339(i, buf, sizeof(buf));
			FUZZ_CHECK(strlen(buf) < sizeof(buf) - 1, "time text cut: %s", buf);
		}
		break;
	}
	free(s);
	return 0;
}
