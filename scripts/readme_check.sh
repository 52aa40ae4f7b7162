#!/usr/bin/env bash
# Run the READMEs' commands as written, in a fresh clone (issue 12 item 9): every ```sh and
# ```python block of README.md, bindings/python/README.md and samples/README.md. Called by
# .ci/run; needs what scripts/deps.sh test installs, and root or sudo only if a build package
# is missing (scripts/deps.sh installs it).
#
#  - The clone is `git clone` of this repository's HEAD: commit before running it locally.
#  - HOME is a temporary folder, so `--prefix ~/.local` installs there; ~/.local/bin is put on
#    PATH as Debian's ~/.profile does at login once the folder exists.
#  - README.md's set-up section runs first (the commands above it use the installed dataconv);
#    then its other blocks, then bindings/python/README.md, then samples/README.md, each from
#    the clone's root. The first README block's placeholders are provided: images/ (a link to
#    samples/images) and train.txt (samples/train.txt).
#  - sh blocks run with `bash -euo pipefail`; python blocks with the venv's python made by the
#    set-up (/usr/bin/python3 if there is none). ```c fragments are not run: the complete C
#    examples are built and run by ctest (example_*), and consumers by cli_install_consumers.
#  - `scripts/test.sh` is not run from here: .ci/run runs it itself, in the checkout.
# Usage: scripts/readme_check.sh [--keep]   (--keep: leave the temporary folder for a look)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/readme-check.XXXXXX")
if [ "${1:-}" = --keep ]; then
    echo "keeping $tmp"
else
    trap 'rm -rf "$tmp"' EXIT
fi
git clone -q "$repo" "$tmp/clone"
echo "readme_check: clone of $(git -C "$repo" rev-parse --short HEAD) in $tmp/clone"
export HOME="$tmp/home"
mkdir -p "$HOME"
export PATH="$HOME/.local/bin:$PATH"
unset LIBDATA_LIBRARY PYTHONPATH
cd "$tmp/clone"

/usr/bin/python3 - "$tmp/blocks" <<'PY'
import os, re, sys
out = sys.argv[1]
os.makedirs(out)
fence = re.compile(r"^```(\w*)\s*$")
order = []
for readme in ("README.md", "bindings/python/README.md", "samples/README.md"):
    section, lang, body, blocks = "", None, [], []
    for line in open(readme, encoding="utf-8"):
        m = fence.match(line.rstrip("\n"))
        if lang is None:
            if line.startswith("## "):
                section = line[3:].strip()
            elif m:
                lang, body = m.group(1), []
        elif m and not m.group(1):
            if lang in ("sh", "python"):
                blocks.append((section, lang, "".join(body)))
            lang = None
        else:
            body.append(line)
    if lang is not None:
        sys.exit(f"{readme}: a code block is not closed")
    if readme == "README.md":  # the set-up first: the commands above it need its install
        blocks.sort(key=lambda b: not b[0].startswith("Set-up"))
    order += [(readme, *b) for b in blocks]
for i, (readme, section, lang, body) in enumerate(order):
    name = f"{i:02d}.{lang}"
    with open(os.path.join(out, name), "w") as f:
        f.write(body)
    with open(os.path.join(out, name + ".where"), "w") as f:
        f.write(f"{readme} ({section or 'top'})")
print(f"readme_check: {len(order)} blocks")
PY

# Placeholders of README.md's first block.
ln -s samples/images images
cp samples/train.txt train.txt

fail=0
for f in "$tmp"/blocks/[0-9][0-9].sh "$tmp"/blocks/[0-9][0-9].python; do
    echo "$f"
done | sort > "$tmp/order"
while read -r f; do
    [ -e "$f" ] || continue
    where=$(cat "$f.where")
    echo "== $where: $(basename "$f")"
    sed 's/^/   | /' "$f"
    case "$f" in
    *.sh)
        # .ci/run runs scripts/test.sh itself; everything else runs as written.
        sed -i 's|^scripts/test\.sh\b.*|echo "(scripts/test.sh: run by .ci/run itself)"|' "$f"
        if ! bash -euo pipefail "$f" > "$f.log" 2>&1; then
            tail -n 30 "$f.log" | sed 's/^/   ! /'
            echo "FAIL: $where: block $(basename "$f")"
            fail=1
        fi ;;
    *.python)
        py=/usr/bin/python3
        [ -x venv/bin/python ] && py=venv/bin/python
        if ! "$py" "$f" > "$f.log" 2>&1; then
            tail -n 30 "$f.log" | sed 's/^/   ! /'
            echo "FAIL: $where: block $(basename "$f")"
            fail=1
        fi ;;
    esac
done < "$tmp/order"
[ -x venv/bin/python ] || { echo "FAIL: the README set-up made no venv"; fail=1; }
[ -x "$HOME/.local/bin/dataconv" ] || { echo "FAIL: the README set-up installed no dataconv"; fail=1; }
if [ "$fail" -ne 0 ]; then
    echo "readme_check: FAILED"
    exit 1
fi
echo "readme_check: every README command block ran as written"
