#!/bin/bash
# SPDX-License-Identifier: MIT
# Every command's --help and ~50 bad-flag cases per command, with exit codes, for
# comparing two binaries (a refactor that must not change what users see):
#   cli-matrix.sh OLD-ROCEWATCH DIR-A; cli-matrix.sh NEW-ROCEWATCH DIR-B; cli-matrix.sh --diff DIR-A DIR-B
if [ "${1:-}" = --diff ]; then
	B=$2; A=$3
	for f in "$B"/*.err; do n=$(basename "$f" .err); c=$(cat "$B/$n.cmd" 2>/dev/null || echo "$n")
	  if ! cmp -s "$f" "$A/$n.err"; then echo "== $c"; diff "$f" "$A/$n.err" | sed 's/^/   /'; fi; done
	for f in "$B"/*-help.out "$B"/*-h.out "$B"/top-*.out "$B"/version*.out; do n=$(basename "$f")
	  cmp -s "$f" "$A/$n" || { echo "== stdout $n"; diff "$f" "$A/$n" | head -10; }; done
	exit 0
fi
RW=$(realpath "$1"); OUT=$(realpath -m "$2"); mkdir -p "$OUT"
export ROCEWATCH_PROFILE_DIR="$(cd "$(dirname "$0")/../../rules/profiles" && pwd)" ROCEWATCH_NO_PROGRESS=1
cd /tmp
run() { # NAME ARGS...
	local n=$1; shift
	timeout 10 "$RW" "$@" >"$OUT/$n.out" 2>"$OUT/$n.err" </dev/null; echo "rc=$?" >>"$OUT/$n.err"
}
run top-help --help; run top-none; run top-bad nosuch; run version version; run version-help version --help; run version-extra version x
i=0
for c in serve check snapshot "rules lint" "rules list" rules report replay export "fleet check" fleet probe; do
	t=${c// /_}
	run "$t-help" $c --help
	run "$t-h" $c -h
	for bad in --bogus --prof --config=x "--config x" --from --sysfs --interval=0 --interval=abc --interval=50ms \
		--format=xml --format --collector.nosuch --no-collector.foo --collector.link=1 -Z -o \
		--web.read-timeout=10ms --web.max-connections=3 --web.max-connections=70000 --record.max-size=1k --record.capture-max-size=x \
		--record.retention=-1s --alertmanager.timeout=0 --alertmanager.url=ftp://x --alert.unknown-for=x --probe.interval=1ms \
		--probe.peers=a:b --web.listen-address=x --web.telemetry-path=/ --log.level=x --log.format=x --collector.wire.port=0 \
		--netdev-include=[ --color=x --serve=x --timeout=0 --port=0 --parallel=0 --max-body=1 --max-names=x --sizes=1 --count=0 --dscp=64 \
		--interval --help=1 --version=1 -hx "-q -v" --nccl-env --record.ethtool-include=[ "--profile nosuch-profile" "--param x" extra-arg "--prof lossless-roce" "--devi eth0" "--form=json" "--prom http://x" "--db" "--db /nonexistent" "--since=x" "--until=-1h --since=now" "--sinc=now" /nonexistent.db "--format json /nonexistent.db" "-j /nonexistent" "-o" "-o /dev/full --from /nonexistent" "--from /nonexistent" "--output=/dev/null" "--slurm" "--scheme=ftp" "--user u" "--client-config /nonexistent" "--port 1 node1" "--max-names x" "-vq" "--collector.link --no-collector.link --from /nonexistent" "--probe.peers x" "--web.config.file /nonexistent" "--user=nobody --web.listen-address=256.1.1.1:1" "--record.capture-after=1x" "--nccl --nccl-env x" "-- --help" "- " ; do
		i=$((i+1))
		run "$t-bad$(printf %03d $i)" $c $bad
		echo "$c $bad" > "$OUT/$t-bad$(printf %03d $i).cmd"
	done
done
