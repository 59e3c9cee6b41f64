#!/usr/bin/env python3
"""The layout's rules, checked on the source tree (docs/architecture.md).

- analyzer/'s stages are layers, lowest first: model, slices, gpu, rules, advice, report,
  live, timeline, export, html.  A file includes headers of its own layer and of the
  layers below it, never one above (perf's util/ never includes a UI).
- The layers under the front-ends (common/, collector/, writer/, analyzer/,
  tui/) include nothing from cmd/.  common/ includes no other folder's
  headers; collector/ and writer/ none of analyzer/'s or tui/'s.
- No folder holds more than 20 C files.
- No C function is longer than 80 lines (from its opening brace in column 0
  to its closing one), in the folders above and in tests/fuzz.
Prints one line per breach and exits 1 when there is any.
"""
import glob
import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] != "--self-test" else os.path.join(os.path.dirname(__file__), "..", "..")
STAGES = ["model", "slices", "gpu", "rules", "advice", "report", "live", "timeline", "export", "html"]
# Folders in layer order; a folder may include headers of folders before it.
FOLDERS = ["common", "collector", "writer"] + ["analyzer/" + s for s in STAGES] + ["tui", "cmd/agprof"]
# collector/ and writer/ are siblings (the ring's two ends), neither above the other.
SIBLINGS = {("collector", "writer"), ("writer", "collector")}


def headers_by_folder():
    owner = {}
    for folder in FOLDERS:
        for h in glob.glob(os.path.join(ROOT, folder, "**", "*.h"), recursive=True):
            owner.setdefault(os.path.basename(h), folder)
    return owner


MAX_FUNCTION_LINES = 80


def long_functions(path):
    """(name, first line, lines) of each function of path over MAX_FUNCTION_LINES."""
    lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
    out, i = [], 1
    while i < len(lines):
        if lines[i].startswith("{"):
            head = i - 1
            while head > 0 and "(" not in lines[head]:
                head -= 1
            name = re.search(r"(\w+)\s*\(", lines[head])
            end = i + 1
            while end < len(lines) and not lines[end].startswith("}"):
                end += 1
            if end - i + 1 > MAX_FUNCTION_LINES:
                out.append((name.group(1) if name else "?", i + 1, end - i + 1))
            i = end
        i += 1
    return out


def breaches():
    owner = headers_by_folder()
    out = []
    for folder in FOLDERS + ["tests/fuzz"]:
        for f in sorted(glob.glob(os.path.join(ROOT, folder, "*.c"))):
            for name, line, n in long_functions(f):
                out.append("%s:%d: %s() has %d lines (at most %d)"
                           % (os.path.relpath(f, ROOT), line, name, n, MAX_FUNCTION_LINES))
    for folder in FOLDERS:
        files = glob.glob(os.path.join(ROOT, folder, "*.[ch]"))
        nc = sum(1 for f in files if f.endswith(".c"))
        if nc > 20:
            out.append("%s: %d C files (at most 20)" % (folder, nc))
        for f in sorted(files):
            text = open(f, encoding="utf-8", errors="replace").read()
            for m in re.finditer(r'^#include "([^"]+)"', text, re.M):
                h = os.path.basename(m.group(1))
                to = owner.get(h)
                if to is None or to == folder or (folder, to) in SIBLINGS:
                    continue
                if FOLDERS.index(to) > FOLDERS.index(folder):
                    out.append("%s includes %s (%s, a layer above %s)"
                               % (os.path.relpath(f, ROOT), h, to, folder))
    return out


def self_test():
    """A planted upward include and a 21-file folder must be found."""
    import tempfile
    global ROOT
    with tempfile.TemporaryDirectory() as tmp:
        for folder in FOLDERS + ["tests/fuzz"]:
            os.makedirs(os.path.join(tmp, folder))
        with open(os.path.join(tmp, "writer/long.c"), "w") as fh:
            fh.write("static int too_long(void)\n{\n" + "\tx++;\n" * 80 + "}\n")
        open(os.path.join(tmp, "analyzer/report/report.h"), "w").close()
        with open(os.path.join(tmp, "analyzer/model/model.c"), "w") as fh:
            fh.write('#include "report.h"\n')
        for i in range(21):
            open(os.path.join(tmp, "tui", "v%d.c" % i), "w").close()
        saved, ROOT = ROOT, tmp
        try:
            found = breaches()
        finally:
            ROOT = saved
    want = ["analyzer/model/model.c includes report.h", "tui: 21 C files", "writer/long.c:2: too_long() has 82 lines"]
    missing = [w for w in want if not any(line.startswith(w) for line in found)]
    for w in missing:
        print("self-test: not found: %s" % w)
    return 1 if missing or len(found) != 3 else 0


def main():
    if "--self-test" in sys.argv:
        return self_test()
    found = breaches()
    for line in found:
        print(line)
    print("%d breaches of the layout" % len(found))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
