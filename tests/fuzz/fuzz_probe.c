// SPDX-License-Identifier: MIT
/*
 * What the RDMA probe takes from the network: probe_pkt_decode() on a
 * received UD payload (any bytes a peer or a stranger sends to the probe
 * QP), probe_info_parse() and probe_info_parse_all() on a peer's
 * /api/v1/probe answer, and a fleet probe's slice and results
 * (probe_slice_decode(), probe_results_decode()).  Contract:
 * a packet that decodes re-encodes to the same bytes (or, with a damaged
 * payload, to the same header); a refused one is refused with one of the
 * three errors; accepted probe info has a GID, a QPN of 24 bits and an MTU
 * no larger than a UD message can be; a refusal says why in one line.
 *
 * Wiring: the harness list in tests/fuzz/meson.build ('probe'), corpus
 * tests/fuzz/corpus/probe/.
 */
#include <errno.h>

#include "fuzz.h"
#include "probe_info.h"
#include "probe_pkt.h"
#include "probe_slice.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = fuzz_copy(data, size), *again;
	struct probe_hdr h;
	struct probe_info pi;
	char err[256] = "";
	int r = probe_pkt_decode(buf, size, &h);

	FUZZ_CHECK(r == 0 || r == -EBADMSG || r == -EPROTONOSUPPORT || r == -EILSEQ, "decode: %d",
		   r);
	if (r == 0 || r == -EILSEQ) {
		FUZZ_CHECK(h.size == size && size >= PROBE_HDR_LEN && size <= PROBE_MAX_SIZE,
			   "size %u of %zu bytes", h.size, size);
		again = malloc(size);
		if (!again)
			abort();
		probe_pkt_encode(again, &h);
		/* flags (bytes 6-7) are ignored on receipt and written as 0 */
		FUZZ_CHECK(!memcmp(again, buf, 6) && !memcmp(again + 8, buf + 8, PROBE_HDR_LEN - 8),
			   "header does not round-trip");
		FUZZ_CHECK((r == 0) == !memcmp(again + PROBE_HDR_LEN, buf + PROBE_HDR_LEN,
					       size - PROBE_HDR_LEN),
			   "payload verdict %d disagrees with the pattern", r);
		free(again);
	}
	free(buf);

	r = probe_info_parse((const char *)data, size, &pi, err, sizeof(err));
	if (r) {
		FUZZ_CHECK(r == -EBADMSG && err[0] && !strchr(err, '\n'), "refusal %d: '%s'", r,
			   err);
	} else {
		FUZZ_CHECK(pi.gid[0] && pi.qpn > 0 && pi.qpn <= 0xffffff &&
			       pi.active_mtu <= PROBE_MAX_SIZE,
			   "accepted gid '%s' qpn %u mtu %u", pi.gid, pi.qpn, pi.active_mtu);
	}
	{
		struct probe_doc d;
		struct probe_slice s;
		struct probe_result res[4];
		struct probe_ah_stats ah;

		r = probe_info_parse_all((const char *)data, size, &d, err, sizeof(err));
		FUZZ_CHECK(r ? (r == -EBADMSG || r == -ENOMEM) && !strchr(err, '\n')
			     : d.n <= PROBE_INFO_MAX_PORTS,
			   "parse_all %d: '%s'", r, err);
		probe_doc_free(&d);
		r = probe_slice_decode((const char *)data, size, &s, err, sizeof(err));
		FUZZ_CHECK(r ? err[0] && !strchr(err, '\n') : s.n <= PROBE_SLICE_MAX_ENTRIES,
			   "slice %d: '%s'", r, err);
		for (size_t k = 0; !r && k < s.n; k++)
			FUZZ_CHECK(s.e[k].slot < s.n_slots && s.e[k].port < s.n_ports,
				   "slice entry %zu out of range", k);
		probe_slice_free(&s);
		r = probe_results_decode((const char *)data, size, 1, 4, res, &ah, err,
					 sizeof(err));
		FUZZ_CHECK(r >= 0 || (err[0] && !strchr(err, '\n')), "results %d: '%s'", r, err);
	}
	return 0;
}
