#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Do docs/hacking.md's recipes still name every place a change must touch?

Two recipes list places the compiler cannot list for the reader:

- "Add a value type": every `switch` over `enum value_type` (a `case VT_...:`
  label) in product code and unit tests must be named in the recipe by its
  function (`name()`) and its file.  -Wswitch finds the switches a new type
  misses; this finds the switch a new room adds that the recipe does not say.
- "Add a rule builtin": every row of `funcs[]` in rules/functions.c must have
  its row in docs/rules.md's functions table, and no test may spell out the
  builtin list by hand (the "unknown function" error is compared with
  rules_function_names(), which reads the table).

usage: check-recipes.py SOURCE_ROOT              exit 0 clean, 1 drift
       check-recipes.py --self-test SOURCE_ROOT  planted drift must fail
"""
import os
import re
import shutil
import sys
import tempfile

PRODUCT = ["src", "collectors", "rules", "exporters"]
# where tests compare error texts, and where a value-type switch of a test lives
TESTS = ["tests/unit", "tests/cli", "tests/rules"]
HACKING = "docs/hacking.md"
RULES_DOC = "docs/rules.md"
FUNCTIONS = "rules/functions.c"
CASE_VT = re.compile(r"\bcase\s+(VT_[A-Z0-9_]+)\s*:")
SWITCH = re.compile(r"\bswitch\s*\(")
IDENT_CALL = re.compile(r"([A-Za-z_]\w*)\s*\(")


def blank(text):
    """Comments, strings and character literals as spaces (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
        else:
            out.append(c)
            i += 1
            continue
        out.append(re.sub(r"[^\n]", " ", text[i:j]))
        i = j
    return "".join(out)


def match_close(s, i, open_c, close_c):
    """Index of the bracket closing the one at s[i]."""
    depth = 0
    for j in range(i, len(s)):
        if s[j] == open_c:
            depth += 1
        elif s[j] == close_c:
            depth -= 1
            if depth == 0:
                return j
    return len(s) - 1


def functions(s):
    """(name, start, end) of every function body at file level."""
    out, depth, head = [], 0, 0
    for i, c in enumerate(s):
        if c == "{":
            if depth == 0:
                h = s[head:i]
                calls = IDENT_CALL.findall(h)
                if calls and "=" not in h and ")" in h:
                    end = match_close(s, i, "{", "}")
                    out.append((calls[0] if not h.lstrip().startswith("#") else calls[-1],
                                i, end))
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                head = i + 1
        elif c == ";" and depth == 0:
            head = i + 1
    return out


def fn_name(s, start):
    """The name of the function whose body opens at s[start]."""
    head_start = max(s.rfind(";", 0, start), s.rfind("}", 0, start)) + 1
    head = s[head_start:start]
    # the parameter list is the last top-level (...) of the head
    depth, last_open = 0, -1
    for i in range(len(head) - 1, -1, -1):
        if head[i] == ")":
            depth += 1
        elif head[i] == "(":
            depth -= 1
            if depth == 0:
                last_open = i
                break
    m = re.search(r"([A-Za-z_]\w*)\s*$", head[:last_open]) if last_open >= 0 else None
    return m.group(1) if m else "?"


def vt_switches(root, dirs):
    """{(path, function)} of every switch with a `case VT_...:` label of its own."""
    found = set()
    for d in dirs:
        for base, _, names in os.walk(os.path.join(root, d)):
            for n in sorted(names):
                if not n.endswith(".c"):
                    continue
                path = os.path.join(base, n)
                with open(path, errors="replace") as f:
                    s = blank(f.read())
                bodies = [(st, en) for _, st, en in functions(s)]
                for m in SWITCH.finditer(s):
                    close = match_close(s, s.index("(", m.start()), "(", ")")
                    brace = s.find("{", close)
                    if brace < 0:
                        continue
                    end = match_close(s, brace, "{", "}")
                    body, depth, own = s[brace + 1:end], 0, []
                    # only the switch's own labels: a nested switch's are deeper
                    for part in re.split(r"([{}])", body):
                        if part == "{":
                            depth += 1
                        elif part == "}":
                            depth -= 1
                        elif depth == 0:
                            own += CASE_VT.findall(part)
                    if not own:
                        continue
                    fn = "?"
                    for st, en in bodies:
                        if st < m.start() < en:
                            fn = fn_name(s, st)
                    found.add((os.path.relpath(path, root), fn))
    return found


def section(text, title):
    """The recipe under '### title', up to the next heading."""
    at = text.find("### " + title)
    if at < 0:
        return ""
    nxt = re.search(r"^#{2,3} ", text[at + 4:], re.M)
    return text[at:at + 4 + nxt.start()] if nxt else text[at:]


def builtins(root):
    with open(os.path.join(root, FUNCTIONS)) as f:
        s = f.read()
    at = s.find("funcs[] = {")
    if at < 0:
        return []
    table = s[at:match_close(s, s.index("{", at), "{", "}")]
    return re.findall(r"^\s*\{\s*\"([A-Za-z_]\w*)\"\s*,", table, re.M)


def check(root):
    bad = []
    with open(os.path.join(root, HACKING)) as f:
        hacking = f.read()
    recipe = section(hacking, "Add a value type")
    if not recipe:
        bad.append(f"{HACKING}: no '### Add a value type' recipe")
    for path, fn in sorted(vt_switches(root, PRODUCT + TESTS)):
        if f"{fn}()" not in recipe or os.path.basename(path) not in recipe:
            bad.append(f"{path}: {fn}() switches over enum value_type, and {HACKING}'s "
                       f"value-type recipe does not name it (`{os.path.basename(path)}` "
                       f"`{fn}()`)")

    names = builtins(root)
    if not names:
        bad.append(f"{FUNCTIONS}: no funcs[] table found")
    with open(os.path.join(root, RULES_DOC)) as f:
        rules_doc = f.read()
    for name in names:
        # as test_rules.c reads it: a table line ('|' first) that shows `name(
        if not re.search(r"^\s*\|.*`" + re.escape(name) + r"\(", rules_doc, re.M):
            bad.append(f"{FUNCTIONS}: builtin '{name}' has no row in {RULES_DOC}'s "
                       "functions table (the builtin recipe, step 2)")
    # three builtins in the table's order, as the error lists them: a hand-kept copy
    triples = [", ".join(names[i:i + 3]) for i in range(len(names) - 2)]
    for d in TESTS:
        for base, _, files in os.walk(os.path.join(root, d)):
            for n in sorted(files):
                if not n.endswith((".c", ".h", ".sh", ".py")):
                    continue
                path = os.path.join(base, n)
                with open(path, errors="replace") as f:
                    for ln, line in enumerate(f, 1):
                        if any(t in line for t in triples):
                            bad.append(f"{os.path.relpath(path, root)}:{ln}: spells out the "
                                       "builtin list by hand; compare with "
                                       "rules_function_names()")
    return bad


def self_test(root):
    """The tree passes; each planted drift fails, and naming it in the recipe heals it."""
    bad = check(root)
    if bad:
        print("\n".join(bad))
        return 1
    tmp = tempfile.mkdtemp(prefix="rw-recipes-")
    failures = []
    try:
        def fresh():
            shutil.rmtree(tmp)
            os.makedirs(tmp)
            for d in PRODUCT + TESTS + ["docs"]:
                shutil.copytree(os.path.join(root, d), os.path.join(tmp, d),
                                ignore=shutil.ignore_patterns("fixtures", "*.o"))

        def append(rel, text):
            with open(os.path.join(tmp, rel), "a") as f:
                f.write(text)

        def expect(what, must_fail, needle):
            got = check(tmp)
            hit = [b for b in got if needle in b]
            if must_fail and not hit:
                failures.append(f"{what}: not refused (got {got})")
            if not must_fail and got:
                failures.append(f"{what}: refused: {got}")

        planted = ("\nint planted_shape(enum value_type t);\n"
                   "int planted_shape(enum value_type t)\n{\n\tswitch (t) {\n"
                   "\tcase VT_INT:\n\t\treturn 1;\n\tdefault:\n\t\treturn 0;\n\t}\n}\n")
        fresh()
        append("exporters/prom.c", planted)
        expect("a new value-type switch", True, "exporters/prom.c: planted_shape()")
        with open(os.path.join(tmp, HACKING)) as f:
            text = f.read()
        text = text.replace("### Add a value type\n",
                            "### Add a value type\n\n(`prom.c` `planted_shape()`)\n", 1)
        with open(os.path.join(tmp, HACKING), "w") as f:
            f.write(text)
        expect("the switch, named in the recipe", False, "")

        fresh()
        with open(os.path.join(tmp, FUNCTIONS)) as f:
            text = f.read()
        text = text.replace("static const struct rx_func funcs[] = {\n",
                            "static const struct rx_func funcs[] = {\n"
                            "\t{ \"clamp\", 3, 3, RT_NUM, .eval = eval_abs },\n", 1)
        with open(os.path.join(tmp, FUNCTIONS), "w") as f:
            f.write(text)
        expect("a builtin without a row in rules.md", True, "builtin 'clamp'")

        fresh()
        names = builtins(tmp)
        append("tests/unit/test_rules.c", "/* \"" + ", ".join(names[:4]) + "\" */\n")
        expect("a hand-kept builtin list in a test", True, "spells out the builtin list")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("self-test failed:\n  " + "\n  ".join(failures))
        return 1
    print("check-recipes: the tree passes; a planted switch, builtin and list are refused")
    return 0


def main(argv):
    if len(argv) == 3 and argv[1] == "--self-test":
        return self_test(argv[2])
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-2].strip(), file=sys.stderr)
        return 2
    bad = check(argv[1])
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
