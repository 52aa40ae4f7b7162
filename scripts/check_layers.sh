#!/usr/bin/env bash
# One-way module dependencies inside libdata/src (docs/design.md draws them):
#
#   common <- thread <- {codec, resize} <- store <- source <- shard <- convert
#                                          store <- reader;   plan (public API only)
#
# A module may include its own headers (its folder and subfolders), the headers of the
# modules listed for it in `allowed`, and the public headers listed for it in `public`
# (libdata/include/libdata/NAME.h): no include goes up a layer or sideways, a public
# header included. The table itself must have no cycle (checked below), so no chain of
# includes can come back to where it started. The sideways edges: store -> codec (the
# stores read an encoded record's shape from its image header) and source -> store (dataset
# mode, src_store.c: a dataset as the input of a conversion is read through its store).
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
    [source]="common thread codec store"
    [store]="common thread codec"
    [shard]="common thread source store"
    [reader]="common thread codec resize store"
    [convert]="common thread codec resize source store shard"
    [plan]="common"
)
# Public headers (libdata/include/libdata/NAME.h) a module may include: libdata.h and types.h
# (the shared vocabulary) everywhere; the API it implements; for plan, the API it uses.
base_public="libdata types"
declare -A public=(
    [store]="dataset"
    [shard]="dataset shard"
    [reader]="dataset reader"
    [convert]="dataset shard convert"
    [plan]="dataset reader plan"
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
                libdata/*.h)
                    h=${inc#libdata/}
                    h=${h%.h}
                    case " $base_public ${public[$mod]:-} " in
                        *" $h "*) ;;
                        *) say "$rel:$line: #include \"$inc\": $mod/ may not include the public $h.h (allowed: $base_public ${public[$mod]:-}); move what it needs to libdata/types.h or to the module that owns it (docs/design.md)" ;;
                    esac
                    continue ;;
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

# The table has no cycle: walk each module's dependencies depth-first.
declare -A state=() # 1 = on the current path, 2 = done
cycle_from() {
    local m=$1 d
    state[$m]=1
    for d in ${allowed[$m]}; do
        if [ -z "${allowed[$d]+x}" ]; then
            say "the layer table names $d/ (for $m/), which is not a module"
        elif [ "${state[$d]:-0}" = 1 ]; then
            say "the layer table has a cycle through $m/ -> $d/: one of them must not depend on the other"
        elif [ "${state[$d]:-0}" = 0 ]; then
            cycle_from "$d"
        fi
    done
    state[$m]=2
}
for m in "${!allowed[@]}"; do
    [ "${state[$m]:-0}" = 0 ] && cycle_from "$m"
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
