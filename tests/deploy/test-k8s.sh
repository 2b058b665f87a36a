#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# contrib/kubernetes: every manifest parses and has what its kind needs, the
# objects fit together (selectors, port names, namespace), the container
# arguments are flags the binary has, the PrometheusRule is what the generator
# makes of contrib/prometheus (and promtool accepts its rules), the Containerfile
# installs the package.
. "$(dirname "$0")/../lib.sh"
python3 -c 'import yaml' 2>/dev/null || skip "needs python3-yaml (contrib/install-deps.sh test)"

K="$SOURCE_DIR/contrib/kubernetes"
"$ROCEWATCH" serve --help >"$TMPD/serve.help"
"$ROCEWATCH" check --help >"$TMPD/check.help"

check "the generator reproduces the checked-in PrometheusRule" bash -c \
	"python3 '$K/gen-prometheusrule.py' '$TMPD/pr.yaml' && diff -u '$K/prometheusrule.yaml' '$TMPD/pr.yaml'"

python3 - "$K" "$TMPD" <<'PY' >"$TMPD/results" 2>&1
import glob, os, re, shlex, sys
import yaml

kdir, tmp = sys.argv[1:3]
serve_help = open(os.path.join(tmp, "serve.help")).read()
check_help = open(os.path.join(tmp, "check.help")).read()
results = []

def ok(what, cond, detail=""):
    results.append((bool(cond), what + ("" if cond else ": " + str(detail))))

docs = {}
for path in sorted(glob.glob(os.path.join(kdir, "*.yaml"))):
    name = os.path.basename(path)
    try:
        objs = [o for o in yaml.safe_load_all(open(path)) if o is not None]
    except yaml.YAMLError as e:
        ok(name + " is valid YAML", False, e)
        continue
    ok(name + " is valid YAML with objects", objs)
    for o in objs:
        for k in ("apiVersion", "kind", "metadata"):
            ok("%s: has %s" % (name, k), k in o)
        md = o.get("metadata", {})
        ok("%s: metadata.name" % name, md.get("name"))
        if o.get("kind") != "Namespace":
            ok("%s: %s has a namespace" % (name, o.get("kind")), md.get("namespace"))
        docs.setdefault(o.get("kind"), []).append((name, o))

def one(kind):
    objs = docs.get(kind, [])
    ok("exactly one %s" % kind, len(objs) == 1, [n for n, _ in objs])
    return objs[0][1] if objs else {}

ns = one("Namespace")
ds = one("DaemonSet")
svc = one("Service")
sm = one("ServiceMonitor")
pr = one("PrometheusRule")
pod = one("Pod")
nsname = ns.get("metadata", {}).get("name")
for kind in ("DaemonSet", "Service", "ServiceMonitor", "PrometheusRule"):
    for n, o in docs.get(kind, []):
        ok("%s lives in namespace %s" % (kind, nsname), o["metadata"].get("namespace") == nsname)

# --- DaemonSet
ok("DaemonSet apiVersion apps/v1", ds.get("apiVersion") == "apps/v1")
spec = ds.get("spec", {})
tmpl = spec.get("template", {})
plabels = tmpl.get("metadata", {}).get("labels", {})
sel = spec.get("selector", {}).get("matchLabels", {})
ok("DaemonSet selector matches its pod labels", sel and all(plabels.get(k) == v for k, v in sel.items()))
ps = tmpl.get("spec", {})
ok("DaemonSet: hostNetwork", ps.get("hostNetwork") is True)
ok("DaemonSet: dnsPolicy ClusterFirstWithHostNet", ps.get("dnsPolicy") == "ClusterFirstWithHostNet")
cs = ps.get("containers", [])
ok("DaemonSet: one container", len(cs) == 1)
c = cs[0] if cs else {}
vols = {v["name"]: v for v in ps.get("volumes", [])}
mounts = {m["mountPath"]: m for m in c.get("volumeMounts", [])}
def host_path_of(mount):
    v = vols.get(mounts.get(mount, {}).get("name"), {})
    return v.get("hostPath", {}).get("path")
ok("DaemonSet: /sys from the host, read-only", host_path_of("/sys") == "/sys" and mounts["/sys"].get("readOnly") is True)
ok("DaemonSet: /dev/infiniband from the host", host_path_of("/dev/infiniband") == "/dev/infiniband")
ok("DaemonSet: every mount has its volume", all(m["name"] in vols for m in c.get("volumeMounts", [])))
img = c.get("image", "")
ok("DaemonSet: a real image name, not a placeholder", img and "example" not in img and "invalid" not in img, img)
sc = c.get("securityContext", {})
caps = sc.get("capabilities", {})
ok("DaemonSet: all capabilities dropped, none added (the default collectors need none)",
   caps.get("drop") == ["ALL"] and not caps.get("add") and not sc.get("privileged"), caps)
ok("DaemonSet: no privilege escalation, read-only root", sc.get("allowPrivilegeEscalation") is False
   and sc.get("readOnlyRootFilesystem") is True)
ports = {p["name"]: p for p in c.get("ports", [])}
ok("DaemonSet: port 'metrics' 9479", ports.get("metrics", {}).get("containerPort") == 9479)
for probe in ("readinessProbe", "livenessProbe"):
    hg = c.get(probe, {}).get("httpGet", {})
    ok("DaemonSet: %s on /healthz at a declared port" % probe, hg.get("path") == "/healthz" and hg.get("port") in ports)
res = c.get("resources", {})
ok("DaemonSet: resource requests and a memory limit", res.get("requests", {}).get("cpu")
   and res.get("requests", {}).get("memory") and res.get("limits", {}).get("memory"))
args = c.get("args", [])
ok("DaemonSet: runs serve", args[:1] == ["serve"], args)
for a in args[1:]:
    flag = a.split("=", 1)[0]
    ok("DaemonSet: serve knows %s" % flag, re.search(r"(^|\s|, )%s(\s|,|$)" % re.escape(flag), serve_help, re.M))
nfd = [a.split("=", 1)[1] for a in args if a.startswith("--nfd.feature-file=")]
ok("DaemonSet: the NFD feature file is in a mounted features.d",
   nfd and os.path.dirname(nfd[0]) in mounts and host_path_of(os.path.dirname(nfd[0])) == os.path.dirname(nfd[0]))

# --- Service and ServiceMonitor
sspec = svc.get("spec", {})
ok("Service selects the DaemonSet's pods", sspec.get("selector") and
   all(plabels.get(k) == v for k, v in sspec.get("selector", {}).items()))
sports = {p["name"]: p for p in sspec.get("ports", [])}
ok("Service port 'metrics' targets the container port", sports.get("metrics", {}).get("targetPort") in ports)
ok("Service is named rocewatch (the job the alerts select)", svc.get("metadata", {}).get("name") == "rocewatch")
ok("ServiceMonitor apiVersion monitoring.coreos.com/v1", sm.get("apiVersion") == "monitoring.coreos.com/v1")
smspec = sm.get("spec", {})
slabels = svc.get("metadata", {}).get("labels", {})
ok("ServiceMonitor selects the Service", all(slabels.get(k) == v for k, v in smspec.get("selector", {}).get("matchLabels", {}).items()) and smspec.get("selector"))
eps = smspec.get("endpoints", [])
ok("ServiceMonitor scrapes port 'metrics' at /metrics", eps and all(e.get("port") in sports and e.get("path", "/metrics") == "/metrics" for e in eps))
ok("ServiceMonitor: jobLabel gives job=rocewatch", slabels.get(smspec.get("jobLabel")) == "rocewatch")

# --- PrometheusRule
groups = pr.get("spec", {}).get("groups", [])
rules = [r for g in groups for r in g.get("rules", [])]
ok("PrometheusRule has groups and alerts", groups and rules)
ok("every rule has alert or record, and expr", all(("alert" in r or "record" in r) and r.get("expr") for r in rules))
with open(os.path.join(tmp, "pr-rules.yml"), "w") as f:
    yaml.safe_dump({"groups": groups}, f)

# --- init container example
pspec = pod.get("spec", {})
ics = pspec.get("initContainers", [])
ok("example pod has an init container", ics)
ic = ics[0] if ics else {}
cmd = " ".join(ic.get("command", []) + ic.get("args", []))
ok("the init container runs rocewatch check", "rocewatch check" in cmd, cmd)
ok("... with the container profile", "--profile container" in cmd)
words = shlex.split(cmd.split("rocewatch check", 1)[1].split(";")[0]) if "rocewatch check" in cmd else []
for w in words:
    if w.startswith("--"):
        ok("check knows %s" % w, re.search(r"(^|\s|, )%s(\s|,|$)" % re.escape(w.split("=")[0]), check_help, re.M))
ok("a WARNING (1) does not block the pod", '[ "$rc" -le 1 ]' in cmd)
ok("the init container is given IPC_LOCK like the trainer",
   "IPC_LOCK" in ic.get("securityContext", {}).get("capabilities", {}).get("add", []) and
   all("IPC_LOCK" in c2.get("securityContext", {}).get("capabilities", {}).get("add", []) for c2 in pspec.get("containers", [])))
ok("the pod is on the host network (the node's netdevs)", pspec.get("hostNetwork") is True)
ok("the pod wants a node NFD labelled ready",
   pspec.get("nodeSelector", {}).get("feature.node.kubernetes.io/rocewatch.roce-ready") == "true")

# --- Containerfile
cf = open(os.path.join(kdir, "Containerfile")).read()
ok("Containerfile: FROM Debian 12 slim", re.search(r"^FROM \S*debian:12-slim$", cf, re.M))
ok("Containerfile: installs the package built by make deb", "build-deb/rocewatch_" in cf and "apt-get install" in cf)
ok("Containerfile: runs /usr/bin/rocewatch", '"/usr/bin/rocewatch"' in cf)

for good, what in results:
    print(("ok - " if good else "not ok - ") + what)
PY
while read -r line; do
	case $line in
	"ok - "*) check "${line#ok - }" true ;;
	"not ok - "*) check "${line#not ok - }" false ;;
	*) echo "$line" ;;
	esac
done <"$TMPD/results"
if command -v promtool >/dev/null; then
	check "promtool check rules accepts the PrometheusRule's groups" promtool check rules "$TMPD/pr-rules.yml"
fi
finish
