#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One meaning per counter whatever the NIC: every driver's fixture tree
# (tests/fixtures/sysfs/vendors/, README-vendors.md) gives the driver-independent
# families roce_rdma_<meaning>_total with the same values where the driver has
# the counter and no series where it has none, the driver's own names on the raw
# roce_rdma_hw_* families (irdma gen3's spaces sanitised), the driver label from
# the device/driver link, a golden of the RDMA families per driver, a clean
# `promtool check metrics`, and the same rule outcomes: pass where the counter
# exists, skip naming the missing counter where it does not, never a pass.
. "$(dirname "$0")/../lib.sh"

FIX="$SOURCE_DIR/tests/fixtures"
GOLDEN_DIR="$FIX/golden/vendors"
export ROCEWATCH_PROFILE_DIR="${ROCEWATCH_PROFILE_DIR:-$SOURCE_DIR/rules/profiles}"

# tree  driver label  meanings the driver has no counter for
TREES=(
	"vendors/bnxt_re-7.2|bnxt_en|rnr_retries_exceeded"
	"vendors/bnxt_re-6.12|bnxt_en|rnr_retries_exceeded"
	"vendors/bnxt_re-6.1|bnxt_en|rnr_retries_exceeded cnp_sent cnp_handled ecn_marked_packets"
	"vendors/irdma-e810|ice|ack_timeouts retries_exceeded rnr_retries_exceeded sequence_naks_received implied_naks out_of_sequence rnr_naks_received duplicate_requests out_of_buffer"
	"vendors/irdma-gen3-7.2|ice|retries_exceeded rnr_retries_exceeded duplicate_requests out_of_buffer"
	"vendors/ionic-7.2|ionic|rnr_retries_exceeded"
	"vendors/hns_roce-6.12|hns3|ack_timeouts retries_exceeded rnr_retries_exceeded sequence_naks_received implied_naks out_of_sequence rnr_naks_received duplicate_requests ecn_marked_packets out_of_buffer"
	"vendors/mana_ib-7.2|mana|out_of_buffer"
)
MEANINGS="ack_timeouts retries_exceeded rnr_retries_exceeded sequence_naks_received implied_naks out_of_sequence rnr_naks_received duplicate_requests cnp_sent cnp_handled ecn_marked_packets out_of_buffer"
# the rules on counters and the meaning each reads
RULES="no_transport_retries_exceeded:retries_exceeded no_out_of_sequence:out_of_sequence no_packet_seq_errors:sequence_naks_received no_local_ack_timeouts:ack_timeouts"

scrape() { # OUT ARGS...: one /metrics page of serve ARGS once two fast polls ran
	local out=$1 port pid
	shift
	port=$(free_port)
	"$ROCEWATCH" serve --web.listen-address "127.0.0.1:$port" "$@" 2>"$out.err" &
	pid=$!
	on_exit "kill $pid 2>/dev/null"
	polled() {
		curl -sf "127.0.0.1:$port/metrics" >"$out" &&
			[ "$(awk '$1 == "rocewatch_polls_total{loop=\"fast\"}" { print $2 }' "$out")" -ge 2 ]
	}
	wait_until 20 polled || die "serve $* did not come up: $(cat "$out.err")"
	kill "$pid"
	wait "$pid" 2>/dev/null || true
}

[ -n "${UPDATE_GOLDEN:-}" ] && mkdir -p "$GOLDEN_DIR"
for t in "${TREES[@]}"; do
	IFS='|' read -r tree driver missing <<<"$t"
	name=$(basename "$tree")
	args=(--sysfs-root "$FIX/sysfs/$tree" --netdev-exclude '.*')
	scrape "$TMPD/$name.prom" "${args[@]}"
	grep -E '^(# (HELP|TYPE) )?roce_rdma_' "$TMPD/$name.prom" >"$TMPD/$name.rdma"
	if [ -n "${UPDATE_GOLDEN:-}" ]; then cp "$TMPD/$name.rdma" "$GOLDEN_DIR/$name.prom"; fi
	check "$name: RDMA families match the golden" diff -u "$GOLDEN_DIR/$name.prom" "$TMPD/$name.rdma"
	if command -v promtool >/dev/null 2>&1; then
		check "$name: promtool accepts the exposition" bash -c "promtool check metrics <'$TMPD/$name.prom'"
	fi
	check "$name: driver $driver from the device/driver link" grep -q \
		"^roce_rdma_port_info{.*driver=\"$driver\"} 1$" "$TMPD/$name.rdma"
	# The same traffic in every tree (gen-vendors.py SEM): each meaning the same value.
	check "$name: every meaning the driver has, with the value of the others; no series for the rest" \
		python3 - "$TMPD/$name.rdma" "$MEANINGS" "$missing" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
sem = {"ack_timeouts": 11, "retries_exceeded": 1, "rnr_retries_exceeded": 2,
       "sequence_naks_received": 5, "implied_naks": 3, "out_of_sequence": 42,
       "rnr_naks_received": 4, "duplicate_requests": 7, "cnp_sent": 1000,
       "cnp_handled": 900, "ecn_marked_packets": 1200, "out_of_buffer": 6}
missing = set(sys.argv[3].split())
for m in sys.argv[2].split():
    got = re.findall(r"^roce_rdma_%s_total\{[^}]*\} (\S+)$" % m, text, re.M)
    if m in missing:
        assert not got and "roce_rdma_%s_total" % m not in text, (m, got)
    else:
        assert got == [str(sem[m])], (m, got)
PY
	out=$(timeout 20 "$ROCEWATCH" check "${args[@]}" --serve none -j 2>"$TMPD/$name.check.err") || true
	check "$name: counter rules pass where the counter exists, skip naming it where not" \
		python3 -c '
import json, sys
d = json.loads(sys.argv[1]); missing = set(sys.argv[2].split())
res = {x["rule"]: x for x in d["results"] if x["scope"] == "rdma_port"}
for pair in sys.argv[3].split():
    rule, meaning = pair.split(":")
    x = res[rule]
    if meaning in missing:
        assert x["outcome"] == "skip" and "rdma." + meaning in x["reason"], x
    else:
        assert x["outcome"] == "pass", x' "$out" "$missing" "$RULES"
done

# irdma gen3: names with spaces keep their name on the raw family, sanitised
check "irdma gen3: 'Nak Sequence Error Implied' as roce_rdma_hw_nak_sequence_error_implied_total" \
	grep -q '^roce_rdma_hw_nak_sequence_error_implied_total{device="irdma0",port="1",netdev="ens5f0",rdma_device="irdma0"} 3$' \
	"$TMPD/irdma-gen3-7.2.rdma"
# mana: the device-wide counters count, once, on port 1
check "mana: device-wide sent_cnps as cnp_sent and as roce_rdma_hw_device_sent_cnps_total" \
	grep -q '^roce_rdma_hw_device_sent_cnps_total{device="mana_0",port="1",netdev="enP30832s1",rdma_device="mana_0"} 1000$' \
	"$TMPD/mana_ib-7.2.rdma"
# bnxt_re renamed its counters between 6.12 and 7.2: one family, either name
check "bnxt_re 6.12 and 7.2: the same semantic families" bash -c \
	"diff <(grep -E '^roce_rdma_(ack_timeouts|out_of_sequence|cnp_sent)_total' '$TMPD/bnxt_re-6.12.rdma') \
	      <(grep -E '^roce_rdma_(ack_timeouts|out_of_sequence|cnp_sent)_total' '$TMPD/bnxt_re-7.2.rdma')"

# issue 41 item 6: coverage you can see.  irdma and bnxt_re have no PMA counters/: what
# watches their links is said once per device, as a metric and in check, and a node on
# whose device no fatal link-health rule can run is not "healthy"
check "irdma-e810: rocewatch_rule_coverage fatal 0 on irdma0" \
	grep -qx 'rocewatch_rule_coverage{rule_class="fatal",device="irdma0"} 0' "$TMPD/irdma-e810.prom"
check "bnxt_re-7.2: rocewatch_rule_coverage fatal 0.2 on bnxt_re0 (RNR NAK retries only)" \
	grep -qx 'rocewatch_rule_coverage{rule_class="fatal",device="bnxt_re0"} 0.2' "$TMPD/bnxt_re-7.2.prom"
coverage_check() { # TREE DEVICE MISSING-FATAL
	timeout 20 "$ROCEWATCH" check --sysfs-root "$FIX/sysfs/$1" --serve none -j >"$TMPD/cov.json" 2>/dev/null || true
	python3 - "$TMPD/cov.json" "$2" "$3" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
c = [c for c in d["coverage"] if c["device"] == sys.argv[2]][0]
assert c["missing_fatal"] == sys.argv[3], c
assert c["text"].endswith("fatal ones unavailable here (driver or source): " + sys.argv[3]), c["text"]
PY
	COLUMNS=400 timeout 20 "$ROCEWATCH" check --sysfs-root "$FIX/sysfs/$1" --serve none 2>/dev/null |
		grep -q "^coverage: $2 "
}
check "irdma-e810: check says what no rule watches on irdma0 (JSON and text)" coverage_check \
	vendors/irdma-e810 irdma0 "link_not_downed, no_local_link_integrity_errors, no_excessive_buffer_overruns, no_rnr_nak_retry_errors, symbol_errors_within_ber_bound"
check "bnxt_re-7.2: ... and on bnxt_re0" coverage_check \
	vendors/bnxt_re-7.2 bnxt_re0 "link_not_downed, no_local_link_integrity_errors, no_excessive_buffer_overruns, symbol_errors_within_ber_bound"

finish
