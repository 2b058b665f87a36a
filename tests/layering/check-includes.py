#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Which room may include which: the one table of rocewatch's layering.

Every #include "x.h" in a room's sources must name a header of that room or
of a room the table lets it use.  Relative includes ("../x.h") are refused
outright: they would walk around the per-room include paths meson gives each
static library (meson.build), which is the other half of the enforcement.

usage: check-includes.py SOURCE_ROOT [STAMP]      exit 0 clean, 1 violations
       check-includes.py --self-test SOURCE_ROOT  a planted violation must fail
"""
import os
import re
import shutil
import sys
import tempfile

# room -> (directories, rooms it may include besides itself), from the ground up.
# The same table is meson.build's per-room include paths and the README's rooms.
ROOMS = {
    # the node model, the field table, snapshots, options as tables, terminal output
    "core": (["src/core"], []),
    "collectors": (["collectors"], ["core"]),
    "rules": (["rules"], ["core"]),
    # the one outbound HTTP client (fetches, pushes)
    "client": (["src/client"], ["core"]),
    # the RDMA probe's data path (verbs): neither fills the model nor publishes it
    "probe": (["src/probe"], ["core"]),
    "exporters": (["exporters"], ["rules", "client", "core"]),
    # the flight recorder's format: schema, writer, reader
    "recording": (["src/recording"], ["exporters", "rules", "core"]),
    # the daemon and its model sources (live, snapshot, recording)
    "engine": (["src/engine"], ["recording", "exporters", "collectors", "rules", "core"]),
    "postmortem": (["src/postmortem"], ["engine", "recording", "exporters", "rules", "core"]),
    # fleet check: its report, the Prometheus reader, the client's options
    "fleet": (["src/fleet"], ["engine", "client", "rules", "core"]),
    # serve's command and its stages
    "serve": (["src/serve"], ["engine", "recording", "exporters", "probe", "client", "collectors",
                              "rules", "core"]),
    "cmd": (["src/cmd"], ["serve", "fleet", "postmortem", "engine", "recording", "exporters",
                          "probe", "client", "collectors", "rules", "core"]),
}
# Generated at build time, owned by the room whose directory generates it.
GENERATED = {"wire.skel.h": "collectors"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def room_files(root):
    """(path, room) for every C source and header of every room."""
    for room, (dirs, _) in ROOMS.items():
        for d in dirs:
            for base, _, names in os.walk(os.path.join(root, d)):
                for n in sorted(names):
                    if n.endswith((".c", ".h")):
                        yield os.path.join(base, n), room


def check(root):
    owner = dict(GENERATED)
    files = list(room_files(root))
    errors = []
    for path, room in files:
        if path.endswith(".h"):
            name = os.path.basename(path)
            if name in owner and owner[name] != room:
                errors.append("%s: header name also in room %s" % (path, owner[name]))
            owner[name] = room
    for path, room in files:
        rel = os.path.relpath(path, root)
        allowed = {room, *ROOMS[room][1]}
        text = open(path, encoding="utf-8", errors="replace").read()
        for m in INCLUDE.finditer(text):
            inc = m.group(1)
            line = text.count("\n", 0, m.start()) + 1
            if "/" in inc:
                errors.append('%s:%d: #include "%s": no paths in includes; the room\'s '
                              "include directories say what it may see" % (rel, line, inc))
                continue
            to = owner.get(inc)
            if to is None:
                errors.append('%s:%d: #include "%s": not a header of any room' % (rel, line, inc))
            elif to not in allowed:
                errors.append('%s:%d: #include "%s": %s may not include %s (it may use: %s)'
                              % (rel, line, inc, room, to, ", ".join(sorted(allowed))))
    return errors


def self_test(root):
    """Copy the rooms, plant a collector -> exporter include, expect it refused."""
    tmp = tempfile.mkdtemp(prefix="rw-layering.")
    try:
        for dirs, _ in ROOMS.values():
            for d in dirs:
                shutil.copytree(os.path.join(root, d), os.path.join(tmp, d))
        if check(tmp):
            print("FAIL: the tree itself does not pass")
            return 1
        ok = True
        for plant, want in (('#include "../exporters/prom.h"\n', "no paths"),
                            ('#include "prom.h"\n', "collectors may not include exporters"),
                            ('#include "serve_nosuch.h"\n', "not a header of any room")):
            victim = os.path.join(tmp, "collectors", "link.c")
            orig = open(victim).read()
            open(victim, "w").write(plant + orig)
            errs = check(tmp)
            open(victim, "w").write(orig)
            hit = any(want in e for e in errs)
            print("%s - planted %s is refused: %s" % ("ok" if hit else "not ok", plant.strip(),
                                                     errs[0] if errs else "no error"))
            ok &= hit
        victim = os.path.join(tmp, "src", "core", "model.h")
        orig = open(victim).read()
        open(victim, "w").write(orig.replace('#include "fields.h"', '#include "fields.h"\n#include "commands.h"'))
        errs = check(tmp)
        hit = any("core may not include cmd" in e for e in errs)
        print("%s - core including a command header is refused" % ("ok" if hit else "not ok"))
        ok &= hit
        victim = os.path.join(tmp, "src", "client", "client.c")
        orig = open(victim).read()
        open(victim, "w").write('#include "prom.h"\n' + orig)
        errs = check(tmp)
        open(victim, "w").write(orig)
        hit = any("client may not include exporters" in e for e in errs)
        print("%s - the outbound client including an exporter is refused" % ("ok" if hit else "not ok"))
        ok &= hit
        return 0 if ok else 1
    finally:
        shutil.rmtree(tmp)


def main(argv):
    if len(argv) >= 3 and argv[1] == "--self-test":
        return self_test(argv[2])
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    errors = check(argv[1])
    for e in errors:
        print("layering: " + e, file=sys.stderr)
    if errors:
        return 1
    if len(argv) > 2:
        open(argv[2], "w").write("ok\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
