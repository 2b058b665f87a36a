// SPDX-License-Identifier: MIT
/* dcb_parse_dcbx() on one DCB_CMD_GDCBX reply: 0 with a mode, or -EBADMSG with a reason. */
#include <errno.h>

#include "fuzz.h"
#include "netdev.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_copy(data, size), err[160] = "", mode[64];
	uint8_t dcbx = 0;
	int r = dcb_parse_dcbx(buf, size, &dcbx, err, sizeof(err));

	FUZZ_CHECK(r == 0 || r == -EBADMSG, "returned %d", r);
	FUZZ_CHECK(!r || err[0], "-EBADMSG without a reason");
	if (!r) {
		dcb_dcbx_str(dcbx, mode, sizeof(mode));
		FUZZ_CHECK(mode[0], "empty DCBX mode text");
	}
	free(buf);
	return 0;
}
