#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Kubernetes node agents fed by check: the Node Feature Discovery feature file
# (check --format nfd, serve --nfd.feature-file, in NFD's local-source format)
# and the node-problem-detector plugin (check's Nagios codes mapped to NPD's).
. "$(dirname "$0")/../lib.sh"

FX="$SOURCE_DIR/tests/fixtures/snapshots/rules"
NPD="$SOURCE_DIR/contrib/node-problem-detector"
P=feature.node.kubernetes.io/rocewatch.

nfd_of() { # FIXTURE [ARGS]: check --format nfd, its exit code in $TMPD/rc
	local fx=$1 rc=0
	shift
	"$ROCEWATCH" check --from "$FX/$fx" --format nfd "$@" >"$TMPD/nfd" 2>"$TMPD/nfd.err" || rc=$?
	echo "$rc" >"$TMPD/rc"
	cat "$TMPD/nfd"
}

# Every line is a comment or <namespace>/<name>=<value> that NFD turns into a label.
valid_feature_file() {
	python3 - "$1" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
assert len(text.encode()) <= 65536, "NFD ignores files over 64 kB"
key = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")
val = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$")
n = 0
for line in text.splitlines():
    if not line or line.startswith("#"):
        continue
    k, _, v = line.partition("=")
    assert key.match(k), "bad label name %r" % k
    assert val.match(v), "bad label value %r" % v
    n += 1
assert n >= 3, text
PY
}

out=$(nfd_of good.json)
check "good node: roce-ready=true, status and profile ok, mtu, PFC 3, exit 0" bash -c "
	[ \"\$(cat '$TMPD/rc')\" = 0 ] && [ \"\$(grep -v '^#' '$TMPD/nfd')\" = \"${P}roce-ready=true
${P}status=ok
${P}health=healthy
${P}profile.lossless-roce=ok
${P}active-mtu=4096
${P}pfc-priority=3\" ]"
check "the feature file is valid for NFD" valid_feature_file "$TMPD/nfd"
check "check --format nfd has no expiry (the installer decides)" bash -c "! grep -q '+expiry-time' '$TMPD/nfd'"

nfd_of pfc-0-and-3.json --profile lossless-roce --profile lossy-roce >/dev/null
check "PFC 0+3 on one NIC: roce-ready=false, critical, per-profile outcome, PFC mixed, exit 2" bash -c "
	[ \"\$(cat '$TMPD/rc')\" = 2 ] &&
	grep -qx '${P}roce-ready=false' '$TMPD/nfd' && grep -qx '${P}status=critical' '$TMPD/nfd' &&
	grep -qx '${P}profile.lossless-roce=critical' '$TMPD/nfd' &&
	grep -qx '${P}profile.lossy-roce=warning' '$TMPD/nfd' && grep -qx '${P}pfc-priority=mixed' '$TMPD/nfd'"
nfd_of cnp-prio-0.json >/dev/null
check "a warning only: still roce-ready=true, status=warning" bash -c "
	grep -qx '${P}roce-ready=true' '$TMPD/nfd' && grep -qx '${P}status=warning' '$TMPD/nfd'"
nfd_of ../health/break-link-not-downed.json >/dev/null
check "a link that went down: health=fatal (what the NoSchedule rule matches)" grep -qx "${P}health=fatal" "$TMPD/nfd"
nfd_of ../health/break-carrier-stable.json >/dev/null
check "a flap: health=degraded, still roce-ready" bash -c "
	grep -qx '${P}health=degraded' '$TMPD/nfd' && grep -qx '${P}roce-ready=true' '$TMPD/nfd'"
check "the NoSchedule NodeFeatureRule matches that label" python3 - "$NPD/nodefeaturerule-noschedule.yaml" "${P}health" <<'PY'
import sys, yaml
o = yaml.safe_load(open(sys.argv[1]))
assert o["kind"] == "NodeFeatureRule" and o["apiVersion"].startswith("nfd.k8s-sigs.io/"), o
r = o["spec"]["rules"][0]
assert r["taints"] == [{"effect": "NoSchedule", "key": "rocewatch.io/roce-fatal", "value": "true"}], r
m = r["matchFeatures"][0]
assert m["feature"] == "local.label", m
assert m["matchExpressions"][sys.argv[2]] == {"op": "In", "value": ["fatal"]}, m
PY
nfd_of mtu-1500.json >/dev/null
check "MTU 1500: active-mtu=1024 is what the scheduler sees" grep -qx "${P}active-mtu=1024" "$TMPD/nfd"
nfd_of good.json --profile container >/dev/null
check "undecided (no pod facts in the snapshot): roce-ready=false, status=unknown" bash -c "
	grep -qx '${P}roce-ready=false' '$TMPD/nfd' && grep -qx '${P}status=unknown' '$TMPD/nfd'"

# serve keeps the file current: written atomically, with an expiry, updated on change.
cp "$FX/good.json" "$TMPD/state.json"
mkdir "$TMPD/features.d"
port=$(free_port)
"$ROCEWATCH" serve --from "$TMPD/state.json" --web.listen-address "127.0.0.1:$port" \
	--interval 100ms --nfd.feature-file "$TMPD/features.d/rocewatch" >"$TMPD/serve.log" 2>&1 &
on_exit "kill $!"
check "serve writes the feature file" wait_until 20 grep -qx "${P}roce-ready=true" "$TMPD/features.d/rocewatch"
check "it is valid for NFD" valid_feature_file "$TMPD/features.d/rocewatch"
check "with an expiry-time at least 5 minutes ahead" python3 -c '
import datetime, re, sys
m = re.search(r"^# \+expiry-time=(\S+)$", open(sys.argv[1]).read(), re.M)
t = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)
assert t - datetime.datetime.now(datetime.timezone.utc) > datetime.timedelta(minutes=4), t' \
	"$TMPD/features.d/rocewatch"
cp "$FX/pfc-0-and-3.json" "$TMPD/new.json" && mv "$TMPD/new.json" "$TMPD/state.json"
check "a change reaches the file" wait_until 20 grep -qx "${P}roce-ready=false" "$TMPD/features.d/rocewatch"
check "no temporary file is left (NFD would ignore a dot file anyway)" \
	bash -c "[ \"\$(ls -A '$TMPD/features.d')\" = rocewatch ]"
check "serve --nfd.feature-file into a missing directory says so once" bash -c "
	p=\$(python3 -c 'import socket; s=socket.socket(); s.bind((\"127.0.0.1\",0)); print(s.getsockname()[1])')
	'$ROCEWATCH' serve --from '$FX/good.json' --web.listen-address 127.0.0.1:\$p --interval 100ms \
		--nfd.feature-file '$TMPD/nope/rocewatch' 2>'$TMPD/nope.log' & pid=\$!
	for i in \$(seq 100); do grep -q nfd.feature-file '$TMPD/nope.log' && break; sleep 0.1; done
	sleep 0.5; kill \$pid; wait \$pid
	[ \"\$(grep -c 'nfd.feature-file: $TMPD/nope/rocewatch: No such file or directory' '$TMPD/nope.log')\" = 1 ]"

# node-problem-detector: exit code and message of the plugin wrapper
npd() { # WANT_RC PATTERN ARGS...
	local want=$1 pat=$2 rc=0
	shift 2
	ROCEWATCH="$ROCEWATCH" "$NPD/rocewatch-npd.sh" "$@" >"$TMPD/npd" 2>&1 || rc=$?
	[ "$rc" = "$want" ] && [ "$(wc -l <"$TMPD/npd")" = 1 ] && grep -qE -- "$pat" "$TMPD/npd" ||
		{ echo "  npd $*: exit $rc (want $want): $(cat "$TMPD/npd")" >&2; return 1; }
}
check "NPD: OK (check 0) -> 0" npd 0 "rocewatch check: .* OK$" --from "$FX/good.json"
check "NPD: WARNING (check 1) -> 0, the node stays usable" npd 0 "WARNING$" --from "$FX/cnp-prio-0.json"
check "NPD: CRITICAL (check 2) -> 1 NonOK, naming the rules" \
	npd 1 "^rocewatch check CRITICAL: pfc_only_on_roce_priority$" --from "$FX/pfc-0-and-3.json"
check "NPD: a fatal link -> 1 NonOK, with the verdict and the action" \
	npd 1 "^rocewatch check CRITICAL: link_not_downed \(node verdict fatal \(drain\); do: reseat-or-replace-cable\)$" \
	--from "$FX/../health/break-link-not-downed.json"
check "NPD: UNKNOWN (check 3) -> 2 Unknown" npd 2 "could not decide \(exit 3\)" --from "$FX/good.json" --profile nosuch
check "NPD: rocewatch missing -> 2 Unknown" bash -c "ROCEWATCH=/nonexistent/rocewatch '$NPD/rocewatch-npd.sh' >/dev/null 2>&1; [ \$? = 2 ]"
check "NPD plugin config: custom plugin, the condition, both rules on the installed wrapper" python3 - "$NPD/rocewatch-plugin.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
assert c["plugin"] == "custom" and c["source"], c
pc = c["pluginConfig"]
for k in ("invoke_interval", "timeout", "max_output_length", "concurrency"):
    assert k in pc, k
# no condition before the first run: Unknown to the scheduler, never a "healthy" nobody decided
assert pc.get("skip_initial_status") is True, pc
conds = {x["type"] for x in c["conditions"]}
assert conds == {"RoCEMisconfigured"}, conds
kinds = sorted(r["type"] for r in c["rules"])
assert kinds == ["permanent", "temporary"], kinds
for r in c["rules"]:
    assert r["path"] == "/usr/share/rocewatch/node-problem-detector/rocewatch-npd.sh", r
    assert r.get("condition", "RoCEMisconfigured") in conds, r
    # NPD kills the plugin at the rule's timeout: it must fit in the plugin timeout
    assert int(r["timeout"][:-1]) <= int(pc["timeout"][:-1]), r
PY
finish
