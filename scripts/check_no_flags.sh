#!/usr/bin/env bash
# The library speaks of its parameters by their table names (max_pixels, resize_w), never by
# dataconv's flags (--max-pixels, --resize): its messages and describe text reach C and Python
# programs too, and the CLI translates a parameter to its flag itself (from the error detail).
# Issue 14, item 3.
#
# Fails on a C string literal in libdata/src that holds a double-dash flag (comments are not
# looked at). Usage: scripts/check_no_flags.sh [SOURCE_ROOT]   (default: this repository)
set -u
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
[ -d "$root/libdata/src" ] || { echo "check_no_flags: $root has no libdata/src" >&2; exit 2; }
"${PYTHON:-/usr/bin/python3}" - "$root" <<'PY'
import glob, os, re, sys
root = sys.argv[1]
bad = []
for path in sorted(glob.glob(os.path.join(root, "libdata/src/**/*.[ch]"), recursive=True)):
    with open(path, encoding="utf-8", errors="replace") as f:
        src = f.read()
    # comments out, line numbers kept
    src = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), src, flags=re.S)
    src = re.sub(r"//[^\n]*", "", src)
    for lit in re.finditer(r'"(?:[^"\\\n]|\\.)*"', src):
        for flag in re.finditer(r"(?<![\w-])--[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*", lit.group(0)):
            line = src.count("\n", 0, lit.start()) + 1
            bad.append(f"{os.path.relpath(path, root)}:{line}: {flag.group(0)} in {lit.group(0)}")
if bad:
    print("check_no_flags: library text names dataconv flags; name the parameters (their table "
          "names: resize_w, crop_w, max_pixels) and let the CLI translate:", file=sys.stderr)
    print("\n".join(bad), file=sys.stderr)
    sys.exit(1)
print("check_no_flags: libdata's messages name parameters, not dataconv flags")
PY
