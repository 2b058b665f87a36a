// SPDX-License-Identifier: MIT
/* genl_parse_family() on one CTRL_CMD_NEWFAMILY reply. */
#include <errno.h>

#include "fuzz.h"
#include "netdev.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_copy(data, size), err[160] = "";
	uint16_t id = 0;
	int r = genl_parse_family(buf, size, &id, err, sizeof(err));

	FUZZ_CHECK(r == 0 || r == -EBADMSG, "returned %d", r);
	FUZZ_CHECK(!r || err[0], "-EBADMSG without a reason");
	free(buf);
	return 0;
}
