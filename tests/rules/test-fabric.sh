#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Rails and roles (issue 36), one scenario per shape that drained healthy nodes
# elsewhere (tests/fixtures/snapshots/fabric/gen.py says what each file is):
# the whole verdict of `check`, the Slurm prolog's decision with the real
# binary, fleet check naming a miscabled port, the rail map and its errors,
# and the role and rail series on /metrics.
. "$(dirname "$0")/../lib.sh"
FX="$SOURCE_DIR/tests/fixtures/snapshots/fabric"
PROLOG="$SOURCE_DIR/contrib/slurm/prolog-rocewatch.sh"
mkdir -p "$TMPD/bin"
cat >"$TMPD/bin/scontrol" <<'SH'
#!/bin/sh
echo "$*" >>"$FAKE_DIR/scontrol"
SH
chmod +x "$TMPD/bin/scontrol"

# check_rc FILE WANT: check's exit status on a fixture
check_rc() {
	local rc=0
	"$ROCEWATCH" check --from "$FX/$1" >"$TMPD/out" 2>&1 || rc=$?
	[ "$rc" -eq "$2" ] || { echo "  check on $1 exited $rc, want $2:" >&2; cat "$TMPD/out" >&2; return 1; }
}
# result FILE RULE DEVICE OUTCOME [REASON-PREFIX]: one result of check --format json
result() {
	"$ROCEWATCH" check -v --format json --from "$FX/$1" >"$TMPD/j" 2>/dev/null || true
	python3 - "$TMPD/j" "$2" "$3" "$4" "${5:-}" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rule, dev, want, why = sys.argv[2:6]
got = [r for r in d["results"] if r["rule"] == rule and r["object"].get("device", "") == dev]
assert len(got) == 1, (rule, dev, got)
r = got[0]
assert r["outcome"] == want, (rule, dev, r["outcome"], r.get("reason"), r.get("summary"))
assert (r.get("reason") or "").startswith(why), (rule, dev, r.get("reason"))
PY
}
# prolog FILE: the shipped prolog with the real rocewatch on FILE; 0 = job starts
prolog() {
	rm -f "$TMPD/scontrol"
	env -i SLURMD_NODENAME=n7 ROCEWATCH="$ROCEWATCH" SCONTROL="$TMPD/bin/scontrol" \
		FAKE_DIR="$TMPD" ROCEWATCH_PROLOG_CONF=/nonexistent \
		ROCEWATCH_ARGS="--from $FX/$1" /bin/sh "$PROLOG" >"$TMPD/p.out" 2>"$TMPD/p.err"
}
starts() { prolog "$1" && [ ! -e "$TMPD/scontrol" ] || { cat "$TMPD/p.err" >&2; return 1; }; }
drains() {
	! prolog "$1" && grep -q "State=DRAIN" "$TMPD/scontrol" && grep -q -- "$2" "$TMPD/scontrol" ||
		{ cat "$TMPD/p.err" "$TMPD/scontrol" >&2 2>/dev/null; return 1; }
}

# 1. dual-port cards whose second port is unprovisioned (NVSentinel#1361)
check "dual-port, second ports unprovisioned: OK" check_rc dual-port-unprovisioned.json 0
check "dual-port: port_active skips the unprovisioned port, by peer evidence" \
	result dual-port-unprovisioned.json port_active mlx5_1 skip \
	"unused by design: down, no GID on all 4 cards of this model (role from peer"
check "dual-port: the used first port is judged (and passes)" \
	result dual-port-unprovisioned.json port_active mlx5_0 pass
check "dual-port: the prolog starts the job, drains nothing" starts dual-port-unprovisioned.json

# the same port down and unaddressed on one card while its siblings use theirs
check "one card's port down while its siblings' are up: CRITICAL" check_rc lone-port-down.json 2
check "lone port down: port_active fails on it" result lone-port-down.json port_active mlx5_5 fail
check "lone port down: the prolog drains, naming it" drains lone-port-down.json "port_active(mlx5_5/1)"

# 2. the management NIC eth0 backed by mlx5_0, default route, link_downed moving (NVSentinel#1529)
check "management NIC backing mlx5_0: OK" check_rc mgmt-mlx5_0.json 0
check "management NIC: link_not_downed skips it by role" \
	result mgmt-mlx5_0.json link_not_downed mlx5_0 skip \
	"management by design: eth0 carries the default route (role from default_route"
check "management NIC: its netdev's MTU is not judged either" \
	result mgmt-mlx5_0.json netdev_mtu eth0 skip "management by design"
check "management NIC: the prolog starts the job" starts mgmt-mlx5_0.json
check "management NIC judged when the site asks (judged_roles=compute,management): CRITICAL" \
	bash -c '"$0" check --from "$1" --param judged_roles=compute,management >/dev/null 2>&1; [ $? -eq 2 ]' \
	"$ROCEWATCH" "$FX/mgmt-mlx5_0.json"

# 3. a compute port that was ACTIVE and went down still drains
check "a port that was ACTIVE and went down: CRITICAL" check_rc went-down.json 2
check "went down: port_active fails" result went-down.json port_active mlx5_1 fail
check "went down: the prolog drains" drains went-down.json "port_active(mlx5_1/1)"

# 4. rails from the GID subnet: gpu-3's mlx5_3 is in rail 5's subnet
for n in 0 1 2 3; do
	"$ROCEWATCH" snapshot --from "$FX/fleet-$n.json" >"$TMPD/n$n.json"
done
rails_of() {
	python3 - "$TMPD/n3.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
p = {x["device"]: x["fields"] for x in d["rdma_ports"]}
assert p["mlx5_0"]["rail"] == "192.168.10.0/24" and p["mlx5_0"]["rail_source"] == "subnet", p["mlx5_0"]
assert p["mlx5_3"]["rail"] == "192.168.15.0/24" and p["mlx5_3"]["rail_ports"] == 2, p["mlx5_3"]
assert p["mlx5_0"]["role"] == "compute" and p["mlx5_0"]["near_gpus"] == "0", p["mlx5_0"]
PY
}
check "snapshot: each compute port's rail from its GID's /24" rails_of
fleet_json() {
	local rc=0
	"$ROCEWATCH" fleet check --format json "$TMPD"/n[0-3].json >"$TMPD/f.json" 2>"$TMPD/f.err" || rc=$?
	[ "$rc" -eq 2 ] || { echo "  fleet check exited $rc" >&2; cat "$TMPD/f.err" >&2; return 1; }
	python3 - "$TMPD/f.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
res = d.get("fleet") or d.get("results") or d["rules"]
by = {}
for r in res:
    by.setdefault(r["rule"], []).append(r)
fails = {(r["rule"], r.get("group", "")) for r in res if r["outcome"] == "fail"}
assert ("rail_membership", "rail 192.168.15.0/24") in fails, fails
assert ("rail_membership", "rail 192.168.13.0/24") in fails, fails
assert ("gpu_rail_affinity", "rail 192.168.15.0/24") in fails, fails
assert all(r["outcome"] == "pass" for r in by["rail_membership"] if r["group"] not in
           ("rail 192.168.15.0/24", "rail 192.168.13.0/24")), by["rail_membership"]
text = json.dumps([r for r in by["rail_membership"] if r["group"] == "rail 192.168.15.0/24"])
assert "gpu-3" in text and "mlx5_3" in text, text
assert [r["outcome"] for r in by["rails_guessed"]] == ["pass"], by["rails_guessed"]
PY
}
check "fleet check: rail_membership names gpu-3/mlx5_3 on rail 5's subnet (and rail 3 short)" fleet_json
fleet_text() {
	"$ROCEWATCH" fleet check "$TMPD"/n[0-3].json >"$TMPD/f.txt" 2>&1 || true
	grep -q "fail     critical  rail_membership (rail 192.168.15.0/24)" "$TMPD/f.txt" &&
		grep -q "gpu-3/mlx5_3/1 2" "$TMPD/f.txt"
}
check "fleet check text: the rail group is named by its rail" fleet_text
# the same fleet with rails from LLDP: gpu-3's mlx5_3 reaches the rail-5 leaf
for n in 0 1 2 3; do
	"$ROCEWATCH" snapshot --from "$FX/lldp-$n.json" >"$TMPD/l$n.json"
done
lldp_rails() {
	python3 - "$TMPD/l3.json" <<'PY'
import json, sys
p = {x["device"]: x["fields"] for x in json.load(open(sys.argv[1]))["rdma_ports"]}
assert (p["mlx5_3"]["rail"], p["mlx5_3"]["rail_source"], p["mlx5_3"]["leaf"], p["mlx5_3"]["leaf_port"]) == \
    ("leaf-r5", "lldp", "leaf-r5", "Ethernet1/13"), p["mlx5_3"]
assert p["mlx5_2"]["rail"] == "leaf-r2", p["mlx5_2"]
PY
}
check "snapshot: rails from the LLDP neighbour (the rail leaf), before the subnet" lldp_rails
lldp_fleet() {
	local rc=0
	"$ROCEWATCH" fleet check --format json "$TMPD"/l[0-3].json >"$TMPD/lf.json" 2>/dev/null || rc=$?
	[ "$rc" -eq 2 ] || return 1
	python3 - "$TMPD/lf.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
res = d.get("fleet") or d.get("results") or d["rules"]
fails = {(r["rule"], r.get("group", "")) for r in res if r["outcome"] == "fail"}
assert ("rail_leaf", "position 3") in fails, fails
assert ("rail_membership", "rail leaf-r5") in fails and ("rail_membership", "rail leaf-r3") in fails, fails
leaf = [r for r in res if r["rule"] == "rail_leaf" and r["group"] == "position 3"][0]
assert "gpu-3" in json.dumps(leaf) and "leaf-r5" in json.dumps(leaf), leaf
assert all(r["outcome"] == "pass" for r in res if r["rule"] == "rail_leaf" and r["group"] != "position 3"), res
PY
}
check "fleet check: rail_leaf names gpu-3, whose 4th compute port reaches leaf-r5" lldp_fleet

# a fleet whose rails are all guessed from order says so: ACTIVE ports without an IPv4 GID
guessed() {
	for n in 0 1; do
		python3 - "$FX/fleet-$n.json" "$TMPD/raw$n.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for p in d["rdma_ports"]:
    p["fields"]["gids"] = [g for g in p["fields"]["gids"] if g["gid"].startswith("fe80")]
    del p["fields"]["gid.rocev2_ipv4_index"]
    p["absent"]["gid.rocev2_ipv4_index"] = {"reason": "unsupported"}
json.dump(d, open(sys.argv[2], "w"))
PY
		"$ROCEWATCH" snapshot --from "$TMPD/raw$n.json" >"$TMPD/g$n.json" || return 1
	done
	"$ROCEWATCH" fleet check --format json "$TMPD"/g[01].json >"$TMPD/g.json" 2>/dev/null || true
	python3 - "$TMPD/g.json" "$TMPD/g0.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
res = d.get("fleet") or d.get("results") or d["rules"]
r = [x for x in res if x["rule"] == "rails_guessed"]
assert len(r) == 1 and r[0]["outcome"] == "fail", r
p = json.load(open(sys.argv[2]))["rdma_ports"][0]["fields"]
assert p["rail"] == "0" and p["rail_source"] == "order" and p["role"] == "compute", p
PY
}
check "fleet check: nodes whose rails are guessed from port order are reported (info)" guessed

# 5. a rail map: the site's cabling wins over the subnet
cat >"$TMPD/rails.yaml" <<'Y'
# PCI address, netdev or RDMA device -> rail
rails:
  "0000:17:00.0": rail-a
  eth3: rail-b
  mlx5_2: rail-c
Y
mapped() {
	local port
	port=$(free_port)
	"$ROCEWATCH" serve --web.listen-address "127.0.0.1:$port" --interval 100ms \
		--from "$FX/fleet-0.json" --rail-map "$TMPD/rails.yaml" >"$TMPD/serve.log" 2>&1 &
	local pid=$!
	wait_until 10 curl -sf "http://127.0.0.1:$port/healthz" >/dev/null || { kill $pid; cat "$TMPD/serve.log" >&2; return 1; }
	wait_until 10 sh -c "curl -sf http://127.0.0.1:$port/metrics | grep -q 'roce_rdma_port_role_info'"
	curl -sf "http://127.0.0.1:$port/metrics" >"$TMPD/metrics"
	kill $pid
	wait $pid || true
	grep -q 'roce_rdma_port_rail_info{device="mlx5_0",port="1",netdev="eth2",rdma_device="mlx5_0",rail="rail-a",rail_source="map"} 1' "$TMPD/metrics" &&
		grep -q 'rail="rail-b",rail_source="map"' "$TMPD/metrics" &&
		grep -q 'rail="rail-c",rail_source="map"' "$TMPD/metrics" &&
		grep -q 'roce_rdma_port_rail_info{device="mlx5_3",port="1",netdev="eth5",rdma_device="mlx5_3",rail="192.168.13.0/24",rail_source="subnet"} 1' "$TMPD/metrics" &&
		grep -q 'roce_rdma_port_role_info{device="mlx5_0",port="1",netdev="eth2",rdma_device="mlx5_0",role="compute",role_source="default"} 1' "$TMPD/metrics" &&
		grep -q '^roce_host_compute_ports 8' "$TMPD/metrics"
}
check "serve --rail-map: rails from the map, the rest from the subnet, on /metrics" mapped
bad_map() { # CONTENT WANT: check refuses the map with WANT on stderr, exit 3
	printf '%b' "$1" >"$TMPD/bad.yaml"
	local rc=0
	"$ROCEWATCH" check --from "$FX/fleet-0.json" --rail-map "$TMPD/bad.yaml" >/dev/null 2>"$TMPD/e" || rc=$?
	[ "$rc" -eq 3 ] && grep -qF -- "$2" "$TMPD/e" || { echo "  rc=$rc: $(cat "$TMPD/e")" >&2; return 1; }
}
check "a rail map key mapped twice: the file and line" \
	bad_map 'rails:\n  eth2: a\n  eth2: b\n' "bad.yaml:3: 'eth2' is mapped twice"
check "a rail map without rails: names the file" bad_map 'rail:\n  eth2: a\n' "bad.yaml:1: unknown key 'rail'"
check "a rail map that is not YAML: file:line:col" bad_map 'rails: [\n' "bad.yaml:2:1: YAML:"
check "a missing rail map: the path and why" \
	bash -c '"$0" check --from "$1" --rail-map /nonexistent/r.yaml 2>&1 >/dev/null | grep -q "/nonexistent/r.yaml: No such file"' \
	"$ROCEWATCH" "$FX/fleet-0.json"
check "rail_source with a word that is not a source: refused" \
	bash -c '"$0" check --from "$1" --param rail_source=lldp,cabling 2>&1 >/dev/null | grep -q "rail_source: .cabling. is not a rail source"' \
	"$ROCEWATCH" "$FX/fleet-0.json"

# 6. roles: from the profile, first match wins
cat >"$TMPD/site.yaml" <<'Y'
profile: site
params:
  judged_roles: [compute]
roles:
  'eth[2-3]': storage
  'mlx5_4': unused
rules:
  - name: mtu_big
    scope: netdev
    when: rdma
    expr: mtu >= 9000
    severity: critical
    doc: test
Y
roles_map() {
	"$ROCEWATCH" check --from "$FX/fleet-0.json" --profile "$TMPD/site.yaml" --format json -v >"$TMPD/c.json" 2>/dev/null || true
	python3 - "$TMPD/c.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = {x["object"].get("device"): x for x in d["results"] if x["rule"] == "mtu_big"}
assert r["eth2"]["outcome"] == "skip" and r["eth2"]["reason"].startswith("storage by design: roles: 'eth[2-3]' (site)"), r["eth2"]
assert r["eth6"]["outcome"] == "skip" and r["eth6"]["reason"].startswith("unused by design: roles: 'mlx5_4'"), r["eth6"]
assert r["eth4"]["outcome"] == "pass", r["eth4"]
PY
}
check "roles: patterns on netdev and RDMA device names, first match wins; skipped with the pattern" roles_map
bad_role() {
	printf 'profile: x\nroles:\n  eth2: gpu\nrules:\n  - name: a\n    scope: node\n    expr: true\n    severity: info\n    doc: d\n' >"$TMPD/x.yaml"
	"$ROCEWATCH" rules list --profile "$TMPD/x.yaml" 2>&1 | grep -q "x.yaml:3:9: error: roles: 'gpu' is not a role (compute, storage, management, unused)"
}
check "roles: a word that is not a role, with its line and column" bad_role

finish
