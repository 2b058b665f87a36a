#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The status page (/ of serve) in a real headless Chromium, against serve
# replaying a misconfigured node whose counters move (gen-status-snapshots.py):
# the verdict is check's, the failing rules are there with their fix for the
# node's devices, the sparklines have points, alerts and the Alertmanager and
# reload status are shown; the HTML is well formed; netdev names holding
# <script> and & come out as text and no script runs.  Screenshots at 1280 px
# and at a phone's width are kept in BUILD_DIR/test-artefacts/status-page/.
. "$(dirname "$0")/../lib.sh"
need_cmd curl
need_cmd python3
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROMIUM" ] || skip "needs chromium (apt-get install chromium)"

GEN="$SOURCE_DIR/tests/web/gen-status-snapshots.py"
ART="${BUILD_DIR:-$TMPD}/test-artefacts/status-page"
mkdir -p "$ART"
rm -f "$ART"/*.png "$ART"/*.html

# Flags that work as root in a container: no sandbox, no GPU, nothing fetched
# from outside, a fresh profile each time.
browse() { # browse URL ARGS...: chromium headless with a throw-away profile
	local url=$1 prof
	shift
	prof=$(mktemp -d "$TMPD/chromium.XXXXXX")
	timeout 90 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic \
		--no-first-run --disable-background-networking --disable-component-update \
		--disable-sync --disable-extensions --user-data-dir="$prof" "$@" "$url" \
		2>>"$TMPD/chromium.log"
}

python3 "$GEN" 400 "$TMPD/seq.json" >/dev/null || die "cannot generate the snapshots"
python3 "$GEN" 400 "$TMPD/evil.json" --evil >"$TMPD/evil-names.json" ||
	die "cannot generate the snapshots"
cp "$SOURCE_DIR/rules/profiles/lossless-roce.yaml" "$TMPD/site.yaml"
am_port=$(free_port) # nobody listens there: deliveries fail, and the page must say so

start_serve() { # start_serve SNAPSHOTS: serve on a free port, $url and $pid set
	port=$(free_port)
	url="http://127.0.0.1:$port"
	"$ROCEWATCH" serve --web.listen-address "127.0.0.1:$port" --interval 100ms \
		--from "$1" --profile "$TMPD/site.yaml" \
		--alertmanager.url "http://127.0.0.1:$am_port" >"$TMPD/serve.log" 2>&1 &
	pid=$!
	on_exit "kill $pid"
	wait_until 20 curl -sf "$url/healthz" || die "serve did not come up: $(cat "$TMPD/serve.log")"
}

# the page once the pause sparkline of mlx5_0 has at least N points (one a second)
points_at_least() {
	curl -sf "$url/" >"$TMPD/page.html" && python3 - "$TMPD/page.html" "$1" <<'PY'
import re, sys
html = open(sys.argv[1]).read()
m = re.search(r'data-chart="pause-rx".*?data-points="(\d+)"', html, re.S)
sys.exit(0 if m and int(m.group(1)) >= int(sys.argv[2]) else 1)
PY
}

start_serve "$TMPD/seq.json"
check "the sparklines fill: 8 points within 60 s" wait_until 60 points_at_least 8
# the Alertmanager delivery has failed at least once by now
am_failed() { curl -sf "$url/" | grep -q 'id="alertmanager".*errors (last: '; }
check "the page says Alertmanager deliveries fail" wait_until 30 am_failed

browse "$url/" --dump-dom >"$TMPD/dom.html" || true
cp "$TMPD/dom.html" "$ART/dom.html"
"$ROCEWATCH" check --from "$TMPD/seq.json" --profile "$TMPD/site.yaml" -j >"$TMPD/check.json" || true
dom() { # dom PYTHON: assertions over the DOM Chromium rendered (ok(), doc, text, els)
	python3 - "$TMPD/dom.html" "$TMPD/check.json" "$1" <<'PY'
import json, sys
from html.parser import HTMLParser

class Dom(HTMLParser):
    """Elements with their attributes, classes, text and the ids of their ancestors."""
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.els, self.stack = [], []
    def handle_starttag(self, tag, attrs):
        e = {"tag": tag, "attrs": dict(attrs), "text": "", "parents": list(self.stack)}
        e["cls"] = (e["attrs"].get("class") or "").split()
        self.els.append(e)
        if tag not in ("meta", "link", "br", "img", "input", "hr", "wbr"):
            self.stack.append(e)
    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i]["tag"] == tag:
                del self.stack[i:]
                break
    def handle_data(self, data):
        for e in self.stack:
            e["text"] += data

d = Dom()
d.feed(open(sys.argv[1]).read())
els = d.els
check_json = json.load(open(sys.argv[2]))
def find(tag=None, cls=None, **attrs):
    return [e for e in els if (tag is None or e["tag"] == tag)
            and (cls is None or cls in e["cls"])
            and all(e["attrs"].get(k.replace("_", "-")) == v for k, v in attrs.items())]
def by_id(i):
    r = [e for e in els if e["attrs"].get("id") == i]
    return r[0] if r else None
def inside(e, anc):
    return any(p is anc for p in e["parents"])
exec(sys.argv[3])
PY
}

check "verdict first: CRITICAL, as check says" dom '
v = by_id("verdict"); s = by_id("status")
assert v and s and els.index(v) < els.index(by_id("problems")), "verdict not first"
assert s["text"].strip() == check_json["status"] == "CRITICAL", (s["text"], check_json["status"])
assert "critical" in v["cls"]
assert "lossless-roce" in by_id("profile")["text"] and "roce_priority=3" in by_id("profile")["text"]'
check "failing rules first, with object, summary, since and the fix for the device" dom '
arts = find("article", "problem")
rules = [a["attrs"]["data-rule"] for a in arts]
assert rules[:3] == ["pfc_only_on_roce_priority", "netdev_mtu", "active_mtu_4096"], rules
mtu = arts[1]
assert "netdev eth2" in mtu["text"] and "MTU 1500" in mtu["text"], mtu["text"]
assert "ip link set dev eth2 mtu 9000" in mtu["text"], "the doc does not name eth2"
assert " IF " not in mtu["text"]
assert any(inside(t, mtu) and t["text"].startswith("since ") and t["text"].endswith("ago")
           for t in find("time")), "no relative since"
pfc = arts[0]
assert "netdev eth3" in pfc["text"] and "mlnx_qos -i eth3" in pfc["text"], pfc["text"]'
check "passing rules are folded, skipped ones too" dom '
p = by_id("passing")
assert p and p["tag"] == "details" and "open" not in p["attrs"], p
import re
assert re.match(r"\d+ passing", p["text"].strip()), p["text"][:80]
assert by_id("skipped")["tag"] == "details"'
check "sparklines per RDMA port: pause by priority, retries, CNPs, discards with points" dom '
cards = find("article", "card")
assert [c["attrs"]["data-port"] for c in cards] == ["mlx5_0/1", "mlx5_1/1"], cards
for c in cards:
    charts = {e["attrs"]["data-chart"]: e for e in find("div", "chart") if inside(e, c)}
    assert set(charts) == {"pause-rx", "pause-tx", "retries", "cnp", "discards"}, charts.keys()
    for name, ch in charts.items():
        svg = [e for e in find("svg") if inside(e, ch)]
        lines = [e for e in find("polyline") if inside(e, ch)]
        assert svg and lines, (c["attrs"]["data-port"], name, "no sparkline")
        pts = sum(len(l["attrs"]["points"].split()) for l in lines)
        assert pts >= 8, (name, pts)
    assert "p3" in charts["pause-rx"]["text"], charts["pause-rx"]["text"]
    assert "sent" in charts["cnp"]["text"] and "handled" in charts["cnp"]["text"]
# eth3 has PFC on 0 too and pause arrives there: its own line
c1 = {e["attrs"]["data-chart"]: e for e in find("div", "chart") if inside(e, cards[1])}
assert "p0" in c1["pause-rx"]["text"], c1["pause-rx"]["text"]'
check "alerts listed, Alertmanager and reload status shown" dom '
lst = by_id("alert-list")
assert lst and any("netdev_mtu" in li["text"] for li in find("li") if inside(li, lst)), "no alert"
assert "firing" in by_id("alert-summary")["text"]
am = by_id("alertmanager")["text"]
assert "127.0.0.1" in am and "errors (last: " in am, am
assert "loaded at start-up" in by_id("reload")["text"]'
check "refreshes itself, fits a phone, no script, nothing from elsewhere" dom '
metas = find("meta")
assert any(m["attrs"].get("http-equiv") == "refresh" for m in metas)
assert any(m["attrs"].get("name") == "viewport" for m in metas)
assert not find("script") and not find("link") and not find("img") and not find("iframe")
for e in els:
    for k in ("src", "href"):
        v = e["attrs"].get(k)
        assert v is None or v.startswith("/"), (e["tag"], k, v)'

# the HTML as served: every element closed in order, ids unique
well_formed() {
	curl -sf "$url/" >"$TMPD/raw.html" && python3 - "$TMPD/raw.html" <<'PY'
import sys
from html.parser import HTMLParser
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}
class V(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.errors, self.ids = [], [], set()
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            if a["id"] in self.ids:
                self.errors.append("duplicate id %r at %s" % (a["id"], self.getpos()))
            self.ids.add(a["id"])
        if tag not in VOID:
            self.stack.append((tag, self.getpos()))
    def handle_startendtag(self, tag, attrs):
        if tag not in VOID and tag not in ("polyline", "path", "rect", "line", "circle"):
            self.errors.append("self-closed <%s/> at %s" % (tag, self.getpos()))
    def handle_endtag(self, tag):
        if tag in VOID:
            self.errors.append("</%s> for a void element at %s" % (tag, self.getpos()))
        elif not self.stack or self.stack[-1][0] != tag:
            self.errors.append("</%s> at %s closes %s" % (tag, self.getpos(),
                               self.stack[-1] if self.stack else "nothing"))
        else:
            self.stack.pop()
v = V()
html = open(sys.argv[1]).read()
v.feed(html)
v.close()
if v.stack:
    v.errors.append("never closed: %s" % v.stack)
if not html.startswith("<!DOCTYPE html>"):
    v.errors.append("no doctype")
for e in v.errors[:10]:
    print(e, file=sys.stderr)
sys.exit(1 if v.errors else 0)
PY
}
check "the HTML is well formed: every element closed, ids unique" well_formed
check "served as text/html; charset=utf-8" bash -c \
	"curl -sfI '$url/' | tr -d '\r' | grep -qi '^content-type: text/html; charset=utf-8$'"

# screenshots: 1280 px wide and a phone; a PNG of that size, not an error page
shot() { # shot NAME WIDTH HEIGHT
	browse "$url/" --hide-scrollbars --screenshot="$ART/$1.png" --window-size="$2,$3" >/dev/null &&
		python3 - "$ART/$1.png" "$2" "$3" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
assert b[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
w, h = struct.unpack(">II", b[16:24])
assert (w, h) == (int(sys.argv[2]), int(sys.argv[3])), (w, h)
assert len(b) > 20000, "nearly empty: %d bytes" % len(b)
PY
}
check "screenshot at 1280x900 kept in $ART" shot status-1280 1280 900
check "screenshot at a phone's 390x2400 kept in $ART" shot status-phone 390 2400
# a failed SIGHUP reload is shown, old rules kept
echo "rules: [ not: valid" >>"$TMPD/site.yaml"
kill -HUP "$pid"
reload_banner() { curl -sf "$url/" | grep -q 'id="reload-failed".*site.yaml'; }
check "a failed reload is a banner naming the file" wait_until 20 reload_banner
check "... and the verdict still stands on the old rules" bash -c \
	"curl -sf '$url/' | grep -q '<span id=\"status\">CRITICAL</span>'"
kill "$pid"
wait "$pid" 2>/dev/null || true
cp "$SOURCE_DIR/rules/profiles/lossless-roce.yaml" "$TMPD/site.yaml"

# device names with <script> and &: text, escaped, and no script runs
start_serve "$TMPD/evil.json"
check "evil names: the sparklines fill" wait_until 60 points_at_least 2
browse "$url/" --dump-dom >"$TMPD/dom.html" || true
cp "$TMPD/dom.html" "$ART/dom-evil.html"
browse "$url/" --hide-scrollbars --screenshot="$ART/status-evil-1280.png" --window-size=1280,900 \
	>/dev/null || true
check "names with <script> and & are text, and no script ran" dom '
names = json.load(open(sys.argv[2].replace("check.json", "evil-names.json")))
assert not find("script"), "a script element made it into the page"
t = [e for e in els if e["tag"] == "title"][0]["text"]
assert "PWNED" not in t, t
objs = [e["text"] for e in find("b", "obj")]
assert any(names["eth2"] in o for o in objs), objs
assert any(names["eth3"] in o for o in objs), objs
assert not [e for e in find("i") if e["text"] == "d"], "a name became markup"
cards = [c["attrs"]["data-port"] for c in find("article", "card")]
assert cards == ["mlx5_0/1", "mlx5_1/1"], cards'
check "... and the raw HTML has them escaped" bash -c \
	"curl -sf '$url/' | grep -qF '&lt;script&gt;document.title=' &&
	 curl -sf '$url/' | grep -qF 'a&amp;b&quot;c&lt;i&gt;d&lt;/i&gt;' &&
	 ! curl -sf '$url/' | grep -qF '<script>'"
check "evil names: still well formed" well_formed
finish
