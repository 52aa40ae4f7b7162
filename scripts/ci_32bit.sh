#!/usr/bin/env bash
# 32-bit builds (issue 15): i386 runs the whole test suite as 32-bit binaries; armhf runs a
# smoke suite (CLI tests, C examples, fuzz regressions) under qemu-arm.
# Usage: scripts/ci_32bit.sh [all|i386|armhf|big|deps]      (default: all)
# i386 runs natively where the kernel runs i386 programs (a tiny static one is tried first),
# else under qemu-i386 (issue 31): see i386_emulation below. LIBDATA_I386_EMULATE=1 forces
# the emulation on a machine that runs them natively. Either way the script says which.
# LIBDATA_32BIT_CTEST adds ctest arguments to the i386 suite (e.g. "-R bench_programs").
# i386 includes `big`: scripts/big_32bit.sh, the > 4 GiB read and write (needs build/, the
# 64-bit build, for the comparison: made when missing); LIBDATA_32BIT_BIG=0 leaves it out.
# Installs what it needs (apt, :i386 and :armhf architectures) and unpacks the packages that
# are not co-installable with their amd64 twins (libhdf5-dev, Criterion + nanomsg, lmdb-utils)
# into a private prefix per architecture under $LIBDATA_32BIT_CACHE (default
# ~/.cache/libdata-32bit); a rerun with everything in place installs nothing.
# Build folders: build-i386, build-armhf. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
what=${1:-all}
cache=${LIBDATA_32BIT_CACHE:-$HOME/.cache/libdata-32bit}
jobs=$(nproc)
t0=$SECONDS
say() { echo "== [32-bit $((SECONDS - t0))s] $*"; }

# (libaec-dev:i386: szip, which a static link of HDF5 needs: install_consumers.sh links -static;
# libtiff-dev, libwebp-dev, libgif-dev, libarchive-dev, libyajl-dev, libxml2-dev: the TIFF/WebP/GIF
# decoders, tar input, COCO and VOC input,
# Multi-Arch: same, so their :i386/:armhf twins install beside the amd64 ones, same version)
apt_pkgs=(crossbuild-essential-i386 crossbuild-essential-armhf qemu-user
          libjpeg62-turbo-dev:i386 libpng-dev:i386 zlib1g-dev:i386 liblmdb-dev:i386
          libhdf5-103-1:i386 libgit2-1.5:i386 libffi8:i386 libaec-dev:i386
          libtiff-dev:i386 libwebp-dev:i386 libgif-dev:i386 libarchive-dev:i386
          libyajl-dev:i386 libxml2-dev:i386
          libjpeg62-turbo-dev:armhf libpng-dev:armhf zlib1g-dev:armhf liblmdb-dev:armhf
          libhdf5-103-1:armhf libtiff-dev:armhf libwebp-dev:armhf libgif-dev:armhf
          libarchive-dev:armhf libyajl-dev:armhf libxml2-dev:armhf)
# Unpacked, not installed: installing libcriterion-dev:i386 removes the amd64 Criterion (its
# libnanomsg5 is single-architecture), libhdf5-dev:<arch> removes libhdf5-dev, and
# lmdb-utils:i386 would replace the amd64 tools.
unpack_i386=(libhdf5-dev libcriterion-dev libcriterion3 libnanomsg5 lmdb-utils)
unpack_armhf=(libhdf5-dev lmdb-utils)

sudo=""
[ "$(id -u)" -ne 0 ] && sudo=sudo
install_deps() {
    local missing=() archs
    archs=$(dpkg --print-foreign-architectures)
    for a in i386 armhf; do
        grep -qx "$a" <<<"$archs" || { $sudo dpkg --add-architecture "$a"; missing+=("arch:$a"); }
    done
    local have
    have=$(dpkg-query -W -f='${binary:Package} ${Status}\n' "${apt_pkgs[@]}" 2>/dev/null \
        | awk '/install ok installed/ {print $1}' || true)
    for p in "${apt_pkgs[@]}"; do
        # dpkg-query names native packages without :amd64
        grep -qx -e "$p" -e "$p:$(dpkg --print-architecture)" <<<"$have" || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        say "installing: ${missing[*]}"
        # A mirror caught mid-sync fails an index now and then ("File has unexpected size"): retry,
        # then go on with the package lists there are (a package they lack then fails the install).
        for try in 1 2 3; do
            $sudo apt-get -o DPkg::Lock::Timeout=600 update -q && break
            [ "$try" = 3 ] && echo "apt-get update failed 3 times; using the package lists there are" >&2
            [ "$try" = 3 ] || sleep 30
        done
        local extra=()
        mapfile -t extra < <(align_multiarch)
        [ ${#extra[@]} -gt 0 ] && say "Multi-Arch twins held at one version: ${#extra[@]} specs," \
            "$(printf '%s\n' "${extra[@]}" | grep -c '\.deb$') .debs fetched from the pools"
        DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -q \
            --no-install-recommends --allow-downgrades "${apt_pkgs[@]}" "${extra[@]}"
    fi
}

# A Multi-Arch: same library installs beside its amd64 twin only at the same version. When the
# package lists disagree (a mirror mid-sync served an old i386 or armhf bookworm-security list,
# so the amd64 twin installed from bookworm-security is newer than any foreign version listed,
# or the installed twin is older than every listed version), apt gives up with "held broken
# packages". align_multiarch prints what to add to the install for each such library that the
# foreign packages need: both twins at the foreign version when it is newer and listed for amd64
# too, else the foreign .deb of the installed amd64 version, fetched from the mirror's pools,
# else (that .deb is not on the mirror) both twins at the foreign version, a downgrade.
align_multiarch() {
    local native debs=$cache/twin-debs foreign=() closure=() specs=() pools=() p a v src s
    native=$(dpkg --print-architecture)
    mapfile -t foreign < <(printf '%s\n' "${apt_pkgs[@]}" | grep -E ':(i386|armhf)$')
    declare -A inst=() srcof=() cand=() listed=()
    while read -r p v src; do inst[$p]=$v srcof[$p]=$src; done < <(dpkg-query -W \
        -f='${binary:Package} ${Version} ${source:Package} ${Multi-Arch} ${db:Status-Abbrev}\n' \
        2>/dev/null | awk -v n=":$native" '$4 == "same" && $5 == "ii" && $1 ~ n"$" {
            sub(n"$", "", $1); print $1, $2, $3}')
    mapfile -t closure < <(apt-cache depends --recurse --no-recommends --no-suggests \
        --no-conflicts --no-breaks --no-replaces --no-enhances "${foreign[@]}" 2>/dev/null |
        grep -E '^[a-z0-9].*:(i386|armhf)$' | sort -u)
    for s in "${closure[@]}"; do
        [ -n "${inst[${s%%:*}]:-}" ] && specs+=("$s" "${s%%:*}:$native")
    done
    [ ${#specs[@]} -gt 0 ] || return 0
    # One apt-cache call: "C pkg:arch candidate", "V pkg:arch version", "P pool-root".
    local kind x y
    while read -r kind x y; do
        case $kind in
        C) cand[$x]=$y ;;
        V) listed["$x=$y"]=1 ;;
        P) grep -qxF "$x" < <(printf '%s\n' "${pools[@]}") || pools+=("$x") ;;
        esac
    done < <(apt-cache policy "${specs[@]}" | awk -v n="$native" '
        /^[^ ]/ {p = $1; sub(/:$/, "", p); if (p !~ /:/) p = p ":" n; next}
        $1 == "Candidate:" {print "C", p, $2; next}
        $1 == "***" {ver = $2; next}
        NF == 2 && $1 !~ /^[0-9]+$/ {ver = $1; next}
        $2 ~ /^https?:/ {
            print "V", p, ver
            split($3, sc, "/")
            print "P", $2 (sc[1] ~ /-security$/ ? "/pool/updates/" : "/pool/") sc[2]}')
    for s in "${closure[@]}"; do
        p=${s%%:*} a=${s#*:} v=${inst[$p]:-}
        [ -n "$v" ] && [ "${cand[$s]:-(none)}" != "(none)" ] || continue
        local f=${cand[$s]} dir deb root got="" sib
        if [ "$f" = "$v" ] || [ -n "${listed["$s=$v"]:-}" ]; then
            # Both at the installed version: apt may otherwise upgrade the amd64 twin alone.
            echo "$p:$native=$v"
            echo "$s=$v"
            continue
        fi
        src=${srcof[$p]}
        dir=${src:0:1}
        [[ $src == lib?* ]] && dir=${src:0:4}
        deb=${p}_${v#*:}_$a.deb
        mkdir -p "$debs" && chmod 777 "$debs" # apt-helper downloads as _apt
        [ -s "$debs/$deb" ] && got=1
        for root in "${pools[@]}"; do
            [ -n "$got" ] && break
            /usr/lib/apt/apt-helper download-file "$root/$dir/$src/$deb" "$debs/$deb" \
                >/dev/null 2>&1 && got=1 || rm -f "$debs/$deb"
        done
        if [ -n "$got" ]; then
            echo "$p:$native=$v"
            echo "$debs/$deb"
        elif [ -n "${listed["$p:$native=$f"]:-}" ]; then
            # Not on the mirror: both twins go to the version both lists have, with the other
            # installed packages of the same source (libssl-dev = libssl3, say).
            dpkg --compare-versions "$f" gt "$v" ||
                echo "align_multiarch: no $deb on the mirror; $p:$native goes from $v to $f" >&2
            echo "$s=$f"
            for sib in $(dpkg-query -W -f='${binary:Package} ${Version} ${source:Package}\n' |
                awk -v s="$src" -v v="$v" -v n=":$native" '$3 == s && $2 == v && $1 ~ n"$" {print $1}'); do
                apt-cache madison "${sib%:*}" | grep -q " $f | .* $native " && echo "$sib=$f"
            done
        else
            echo "align_multiarch: $s $f cannot match $p:$native $v (no $deb in" \
                "${pools[*]}); apt will say why" >&2
        fi
    done | sort -u
}

# unpack ARCH PKG...: $cache/ARCH/{debs,usr}; a stamp records the package versions unpacked.
unpack() {
    local arch=$1 multi; shift
    multi=$(dpkg-architecture -a"$arch" -qDEB_HOST_MULTIARCH 2>/dev/null)
    local dir=$cache/$multi want=""
    local specs=()
    for p in "$@"; do specs+=("$p:$arch"); done
    want=$(apt-cache policy "${specs[@]}" | awk '/^[^ ]/ {p=$1} /Candidate:/ {printf "%s%s ", p, $2}')
    [ -f "$dir/.stamp" ] && [ "$(cat "$dir/.stamp")" = "$want" ] && return 0
    say "unpacking $* ($arch) into $dir"
    rm -rf "$dir"
    mkdir -p "$dir/debs"
    chmod 777 "$dir/debs" # apt-get download runs as _apt
    (cd "$dir/debs" && apt-get download -q "${specs[@]}" 2>&1 | grep -v 'unsandboxed' || true)
    for d in "$dir"/debs/*.deb; do dpkg-deb -x "$d" "$dir"; done
    # Relative .so links that point at runtime libraries installed system-wide: re-point them
    # (top level first, the hdf5/serial links point at those); links to runtimes this build
    # does not use (HDF5's C++ and Fortran) are removed.
    local libdir=$dir/usr/lib/$multi l
    for depth in "-maxdepth 1" ""; do
        # shellcheck disable=SC2086
        while IFS= read -r -d '' l; do
            [ -e "$l" ] && continue
            local sys
            sys=/usr/lib/$multi/$(basename "$(readlink "$l")")
            if [ -e "$sys" ]; then ln -sfn "$sys" "$l"; elif [ -z "$depth" ]; then rm "$l"; fi
        done < <(find "$libdir" $depth -type l -print0)
    done
    # hdf5-serial.pc names the system include folder, whose H5pubconf.h is amd64's.
    sed -i -e "s|-I/usr/include|-I$dir/usr/include|" -e "s|-L/usr/lib|-L$dir/usr/lib|" \
        "$libdir/pkgconfig/hdf5-serial.pc"
    # Foreign tools (armhf mdb_*) run through qemu-arm: wrappers in emu-bin/.
    if [ "$arch" != i386 ]; then
        mkdir -p "$dir/emu-bin"
        for t in "$dir"/usr/bin/*; do
            printf '#!/bin/sh\nexec qemu-arm "%s" "$@"\n' "$t" >"$dir/emu-bin/$(basename "$t")"
            chmod +x "$dir/emu-bin/$(basename "$t")"
        done
    fi
    echo -n "$want" >"$dir/.stamp"
}

i386_prefix=$cache/i386-linux-gnu
armhf_prefix=$cache/arm-linux-gnueabihf

deps() {
    install_deps
    unpack i386 "${unpack_i386[@]}"
    unpack armhf "${unpack_armhf[@]}"
}

# The environment of the i386 tests: Criterion's libraries from the private prefix; the 32-bit
# LMDB tools first on PATH and, for the tests' python cross-checks, python-lmdb's API done with
# those tools (tests/lmdb_tools: LMDB files are not portable between 32- and 64-bit programs);
# tests that compile against the build (install_consumers, hardening_concurrency) use the i386
# compiler, CMake toolchain and pkg-config folders.
i386_env() {
    env LD_LIBRARY_PATH="$i386_prefix/usr/lib/i386-linux-gnu" \
        PATH="$i386_prefix/usr/bin:$PATH" PYTHONPATH="$root/tests/lmdb_tools" \
        CC=i686-linux-gnu-gcc CMAKE_TOOLCHAIN_FILE="$root/cmake/toolchain-i386.cmake" \
        LIBDATA_DEPS_PREFIX="$i386_prefix" \
        PKG_CONFIG_LIBDIR="$i386_prefix/usr/lib/i386-linux-gnu/pkgconfig:/usr/lib/i386-linux-gnu/pkgconfig:/usr/share/pkgconfig" \
        "$@"
}

# i386 under emulation. Kernels built without IA32 emulation, or with it off, refuse i386
# programs ("Exec format error"). The tests run i386 programs in many ways besides ctest's own
# command: Criterion re-executes its test binary for every test (boxfort), the CLI scripts run
# dataconv, freshly compiled consumers and the 32-bit mdb_* tools. CMake's
# CMAKE_CROSSCOMPILING_EMULATOR reaches only the first (a test executable): Criterion's re-exec
# then fails inside the emulator ("Could not spawn test instance"). So, as Debian's
# qemu-user-binfmt does for foreign architectures, the kernel is told to start i386 programs
# with qemu-i386 (binfmt_misc, root), for as long as this script runs; the entry is removed on
# exit. binfmt_misc handlers come before the kernel's own ELF loader, which is what lets
# LIBDATA_I386_EMULATE=1 force the emulation where i386 also runs natively.
# The handler is a small script (i386-binfmt): qemu-user reserves the guest's whole 4 GiB
# address space at start, which a `ulimit -Sv` below 4 GiB refuses, and it ignores a guest's
# setrlimit(RLIMIT_AS); so the handler turns a soft address-space limit into qemu's guest
# address-space size (-R), which limits the program as the limit would (the tests set soft
# limits: `ulimit -Sv`).
binfmt=/proc/sys/fs/binfmt_misc
binfmt_entry=$binfmt/libdata-i386
i386_mode=native
i386_native() {
    local t
    t=$(mktemp -d)
    printf 'int main(void) { return 7; }\n' >"$t/seven.c"
    local rc=0
    i686-linux-gnu-gcc -static -o "$t/seven" "$t/seven.c" && { "$t/seven" 2>/dev/null || rc=$?; }
    rm -rf "$t"
    [ "$rc" -eq 7 ]
}
i386_emulation_off() { [ -e "$binfmt_entry" ] && echo -1 >"$binfmt_entry" || true; }
i386_emulation_on() {
    local qemu handler=$cache/i386-binfmt
    qemu=$(command -v qemu-i386) || { echo "qemu-i386 not found (apt install qemu-user)" >&2; return 1; }
    if [ ! -w "$binfmt/register" ]; then
        [ "$(id -u)" -eq 0 ] && mount -t binfmt_misc binfmt_misc "$binfmt" 2>/dev/null || true
    fi
    [ -w "$binfmt/register" ] || {
        echo "This machine does not run i386 programs, and the emulation needs binfmt_misc as root" >&2
        echo "(mount -t binfmt_misc binfmt_misc $binfmt). Run as root, or run the 64-bit suites only." >&2
        return 1
    }
    mkdir -p "$cache"
    cat >"$handler" <<SH
#!/bin/sh
# binfmt_misc handler (flags P) of scripts/ci_32bit.sh: \$1 the i386 program, \$2 its argv[0].
prog=\$1 argv0=\$2
shift 2
lim=\$(ulimit -Sv)
[ "\$lim" = unlimited ] && exec $qemu -0 "\$argv0" "\$prog" "\$@"
ulimit -Sv "\$(ulimit -Hv)"
exec $qemu -R "\$((lim * 1024))" -0 "\$argv0" "\$prog" "\$@"
SH
    chmod +x "$handler"
    i386_emulation_off
    # ELF, 32-bit, little-endian, e_type 2 or 3 (executable, PIE), e_machine 3 (i386)
    printf '%s' ':libdata-i386:M::\x7fELF\x01\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x03\x00:\xff\xff\xff\xff\xff\xfe\xfe\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff:'"$handler"':P' \
        >"$binfmt/register"
    trap i386_emulation_off EXIT
}
# Sets i386_mode to native or emulated (qemu-i386), or fails when neither can run.
i386_setup() {
    i386_emulation_off # a handler left by an interrupted run must not decide the check
    if [ "${LIBDATA_I386_EMULATE:-0}" != 1 ] && i386_native; then
        i386_mode=native
        say "i386: this machine runs i386 programs natively"
        return 0
    fi
    i386_emulation_on || return 1
    i386_native || { echo "i386 programs do not run under qemu-i386 either" >&2; return 1; }
    i386_mode=emulated
    export LIBDATA_EMULATOR=qemu-i386 # the tests' `emulated` (tests/cli/lib/common.sh)
    # qemu-user 7.2 loses a thread's identity when a signal interrupts its wait: the tests that
    # interrupt a threaded conversion are then skipped, saying why (tests/emulator/signal_join.c).
    local t
    t=$(mktemp -d)
    i686-linux-gnu-gcc -std=c11 -O2 -pthread -o "$t/signal_join" "$root/tests/emulator/signal_join.c"
    if "$t/signal_join" >"$t/out" 2>&1; then
        say "i386: $(cat "$t/out") (the emulator keeps threads across signals)"
    else
        export LIBDATA_EMULATOR_SIGNALS=broken
        say "i386: $(cat "$t/out"): the emulator breaks threads across signals; tests/cli/interrupt.sh is skipped"
    fi
    rm -rf "$t"
    if [ "${LIBDATA_I386_EMULATE:-0}" = 1 ]; then
        say "i386: under qemu-i386 $(qemu-i386 --version | head -1 | awk '{print $3}') (LIBDATA_I386_EMULATE=1)"
    else
        say "i386: the kernel refuses i386 programs (Exec format error): under qemu-i386 $(qemu-i386 --version | head -1 | awk '{print $3}')"
    fi
}

status=0
build_i386() {
    say "i386: configure and build"
    cmake -S . -B build-i386 -DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchain-i386.cmake" \
        -DLIBDATA_DEPS_PREFIX="$i386_prefix" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DLIBDATA_BUILD_TESTS=ON >/dev/null
    cmake --build build-i386 -j"$jobs"
    file -L build-i386/dataconv | grep -q 'ELF 32-bit LSB.*Intel 80386' \
        || { echo "build-i386/dataconv is not an i386 binary" >&2; return 1; }
    say "i386: the whole suite ($i386_mode)"
    # Without address-space randomisation: Criterion's sandbox (boxfort) maps its arena at the
    # parent's addresses in each test child; with a randomised i386 PIE base the arena can land
    # on the child's code and the child jumps into it (seen in CI: test_reader children
    # "segfault ... in bxf_arena", 1 run in 3). The 64-bit suites keep randomisation.
    # LIBDATA_32BIT_CTEST: more ctest arguments, e.g. "-R bench_programs" to rerun one test
    # shellcheck disable=SC2086
    (cd build-i386 && i386_env setarch "$(uname -m)" -R ctest --output-on-failure -j"$jobs" ${LIBDATA_32BIT_CTEST:-})
}
build_armhf() {
    say "armhf: configure and build"
    cmake -S . -B build-armhf -DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchain-armhf.cmake" \
        -DLIBDATA_DEPS_PREFIX="$armhf_prefix" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DLIBDATA_BUILD_TESTS=OFF -DLIBDATA_SMOKE_TESTS=ON >/dev/null
    cmake --build build-armhf -j"$jobs"
    file -L build-armhf/dataconv | grep -q 'ELF 32-bit LSB.*ARM, EABI5' \
        || { echo "build-armhf/dataconv is not an armhf binary" >&2; return 1; }
    say "armhf: smoke suite under qemu-arm"
    # The C examples, the fuzz regressions and the CLI tests of every command and both formats.
    # Left to the i386 run (same 32-bit code): the slow hardening loops (minutes under qemu),
    # and the tests that run a freshly compiled or installed program natively or measure the
    # address space with ulimit -v (qemu-arm reserves 4 GiB of host space up front).
    (cd build-armhf && PATH="$armhf_prefix/emu-bin:$PATH" PYTHONPATH="$root/tests/lmdb_tools" \
        ctest --output-on-failure -j"$jobs" \
        -R '^(make_fixtures|example_|fuzz_regress_|cli_(bad_files|bench|convert_h5|info|info_names|input_formats|lmdb_order|mean|usage|non_utf8_names|split_guard)$)')
}

big() {
    [ -x build/tests/big_stream ] || {
        say "64-bit build for the comparison (build/)"
        cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLIBDATA_BUILD_TESTS=ON >/dev/null
    }
    cmake --build build -j"$jobs" --target big_stream dataconv >/dev/null
    say "i386: > 4 GiB read and write (scripts/big_32bit.sh, $i386_mode)"
    scripts/big_32bit.sh build-i386 build
}

case $what in
deps) deps ;;
i386) deps; if i386_setup; then build_i386 || status=1; [ "${LIBDATA_32BIT_BIG:-1}" = 0 ] || big || status=1
     else status=1; fi ;;
big) if i386_setup; then big || status=1; else status=1; fi ;;
armhf) deps; build_armhf || status=1 ;;
all) deps; if i386_setup; then build_i386 || status=1; [ "${LIBDATA_32BIT_BIG:-1}" = 0 ] || big || status=1
     else status=1; fi
     build_armhf || status=1 ;;
*) echo "usage: $0 [all|i386|armhf|big|deps]" >&2; exit 2 ;;
esac
say "done, status $status (i386: $i386_mode)"
exit $status
