#!/usr/bin/env bash
# The C sources follow .clang-format. CI (.ci/run) runs this check; it fails on any file that
# clang-format would change and prints how to fix it.
#
#   scripts/check_format.sh              check every tracked *.c and *.h file
#   scripts/check_format.sh FILE...      check these files
#   scripts/check_format.sh --fix [FILE...]   reformat in place (then review and commit)
#
# Formatting differs between clang-format major versions, so one is pinned: 14, Debian 12's
# (scripts/deps.sh installs clang-format-14). Set CLANG_FORMAT to use another binary of that
# version.
set -euo pipefail
cd "$(dirname "$0")/.."
want=14
fix=0
if [ "${1:-}" = --fix ]; then
    fix=1
    shift
fi
cf=${CLANG_FORMAT:-}
if [ -z "$cf" ]; then
    for c in clang-format-$want clang-format; do
        command -v "$c" >/dev/null && { cf=$c; break; }
    done
fi
[ -n "$cf" ] || { echo "check_format: clang-format $want not found: scripts/deps.sh test" \
    "(or apt-get install clang-format-$want)" >&2; exit 2; }
ver=$("$cf" --version | sed -n 's/.*clang-format version \([0-9]*\)\..*/\1/p')
[ "$ver" = "$want" ] || { echo "check_format: $cf is version ${ver:-?}; the tree is formatted" \
    "with clang-format $want, whose output differs: install clang-format-$want or set" \
    "CLANG_FORMAT" >&2; exit 2; }
if [ $# -gt 0 ]; then
    # only C and C++ sources: clang-format would rewrite a shell script, Python or Markdown
    # file as if it were C (a file list from `git diff --name-only` holds those too)
    files=()
    for f in "$@"; do
        case $f in
            *.c | *.h | *.cpp | *.hpp) files+=("$f") ;;
            *) echo "check_format: skipping $f (not a C or C++ source)" >&2 ;;
        esac
    done
else
    mapfile -t files < <(git ls-files -- '*.c' '*.h')
fi
[ ${#files[@]} -gt 0 ] || { echo "check_format: no C files" >&2; exit 2; }
if [ $fix -eq 1 ]; then
    "$cf" -i --style=file "${files[@]}"
    echo "check_format: reformatted ${#files[@]} files with $cf; review with git diff"
    exit 0
fi
bad=()
lines=0
for f in "${files[@]}"; do
    # --dry-run -Werror: one warning per change, non-zero exit when the file would change
    if ! out=$("$cf" --dry-run -Werror --style=file "$f" 2>&1); then
        bad+=("$f")
        lines=$((lines + $(grep -c 'warning:\|error:' <<<"$out" || true)))
    fi
done
if [ ${#bad[@]} -gt 0 ]; then
    printf '  %s\n' "${bad[@]}" >&2
    echo "check_format: ${#bad[@]} of ${#files[@]} files differ from .clang-format" \
        "($lines places). Fix: scripts/check_format.sh --fix ${bad[*]:0:3}$([ ${#bad[@]} -gt 3 ] && echo ' ...')" >&2
    exit 1
fi
echo "check_format: ${#files[@]} files match .clang-format ($cf, version $ver)"
