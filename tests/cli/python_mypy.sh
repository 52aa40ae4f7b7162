#!/usr/bin/env bash
# Issue 14 item 11: the Python package type-checks clean with mypy (Debian's python3-mypy,
# installed by scripts/deps.sh test) under bindings/python/pyproject.toml's [tool.mypy]
# settings, which require annotations on every function; and the check does fail on an
# unannotated helper or a wrong type. Needs no dataconv and no library: lib/helpers.sh.
set -euo pipefail
source "$(dirname "$0")/lib/helpers.sh"
PYTHON=${PYTHON:-/usr/bin/python3}

if ! "$PYTHON" -m mypy --version >/dev/null 2>&1; then
    echo "skipped: mypy is not installed for $PYTHON (apt-get install python3-mypy, or"
    echo "         scripts/deps.sh test)"
    exit 77
fi
pkg=$SRC/bindings/python
mypy() { "$PYTHON" -m mypy --cache-dir "$TMP/cache" --config-file "$1/pyproject.toml" "$1/libdata"; }

check "the package checks clean"
run mypy "$pkg" && expect_rc 0
expect_out "Success: no issues found"

# A copy of the package to break one thing at a time.
copy() { rm -rf "$TMP/py"; mkdir -p "$TMP/py"; cp -r "$pkg/pyproject.toml" "$pkg/libdata" "$TMP/py/"; }

check "an internal helper without type hints is refused"
copy
printf '\n\ndef _helper(x):\n    return x\n' >> "$TMP/py/libdata/_lib.py"
run mypy "$TMP/py" && expect_rc 1
expect_out "_lib.py:.*Function is missing a type annotation"

check "a wrong type is refused"
copy
printf '\n\ndef _count() -> int:\n    return "three"\n' >> "$TMP/py/libdata/dataset.py"
run mypy "$TMP/py" && expect_rc 1
expect_out "dataset.py:.*Incompatible return value type"
echo "python_mypy: all checks passed"
