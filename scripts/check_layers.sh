#!/usr/bin/env bash
# One-way module dependencies inside libdata/src (docs/design.md draws them):
#
#   common <- thread <- {codec, resize, source, store} <- {reader, convert}
#
# A module may include its own headers, the public libdata/*.h, and the headers of the
# modules listed for it below; nothing else (no include that goes up a layer or sideways,
# except store -> codec: the stores read an encoded record's size from its image header).
# Includes are spelled from libdata/src ("store/store.h"), never "../" or bare.
# cli/ and bindings/ may include public headers only.
#
#   scripts/check_layers.sh [ROOT]     exit 0 when clean, 1 with one line per offending include
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
src=$root/libdata/src

declare -A allowed=(
    [common]=""
    [thread]="common"
    [codec]="common thread"
    [resize]="common thread"
    [source]="common thread"
    [store]="common thread codec"
    [shard]="common thread source store"
    [reader]="common thread codec resize store"
    [convert]="common thread codec resize source store shard"
    [plan]="common"
)

bad=0
say() { echo "check_layers: $*" >&2; bad=1; }

for dir in "$src"/*/; do
    mod=$(basename "$dir")
    if [ -z "${allowed[$mod]+x}" ]; then
        say "libdata/src/$mod/: a module that is not in the layer table of scripts/check_layers.sh (add it there and to docs/design.md)"
        continue
    fi
    while IFS= read -r f; do
        rel=${f#"$root"/}
        while IFS=: read -r line inc; do
            inc=${inc#*\"}
            inc=${inc%%\"*}
            case "$inc" in
                libdata/*) continue ;;
                ../* | ./*) say "$rel:$line: #include \"$inc\": spell it from libdata/src (e.g. \"common/ld_internal.h\")"; continue ;;
                */*) ;;
                *) say "$rel:$line: #include \"$inc\": spell it from libdata/src (\"$mod/$inc\")"; continue ;;
            esac
            dep=${inc%%/*}
            [ "$dep" = "$mod" ] && continue
            case " ${allowed[$mod]} " in
                *" $dep "*) ;;
                *) say "$rel:$line: #include \"$inc\": $mod/ may not depend on $dep/ (allowed: ${allowed[$mod]:-nothing}); move the code to the module that owns it (docs/design.md)" ;;
            esac
        done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" || true)
    done < <(find "$dir" -type f \( -name '*.c' -o -name '*.h' \) | sort)
done

for f in "$root"/cli/*.c "$root"/cli/*.h "$root"/bindings/caffe/*.cpp "$root"/bindings/caffe/*.hpp; do
    [ -e "$f" ] || continue
    rel=${f#"$root"/}
    while IFS=: read -r line inc; do
        inc=${inc#*\"}
        inc=${inc%%\"*}
        dep=${inc%%/*}
        case "$dep" in
            common | thread | codec | resize | source | store | shard | reader | convert | plan)
                say "$rel:$line: #include \"$inc\": ${rel%%/*}/ is a client of the public API (libdata/*.h) only" ;;
        esac
    done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" || true)
done

[ $bad -eq 0 ] && echo "check_layers: libdata/src includes follow docs/design.md"
exit $bad
