#!/usr/bin/env bash
# The parameter ids of the two handles are separate numberings that overlap (LD_C_FORMAT ==
# LD_R_BATCH_SIZE == 1): a convert id given to the reader cannot be told from the reader's id
# with that number (issue 26 item 12). What guards a program is the compiler: passing one
# handle's enum to the other's setter is an enum conversion, which GCC's -Wextra reports
# (-Wenum-conversion) and -Werror refuses. And a reader parameter of another type (a double,
# floats, a string) given to ld_reader_set() is refused, never written past the integer ones.
source "$(dirname "$0")/lib/helpers.sh"
: "${LIBDATA_LIBRARY:?set LIBDATA_LIBRARY to the built libdata.so}"
CC=${CC:-cc}
inc=$SRC/libdata/include
san=() # a sanitizer build of the library needs its runtime in the program
deps=$("$SRC/tests/cli/lib/ldd.sh" "$LIBDATA_LIBRARY")
[[ $deps == *libasan* ]] && san=(-fsanitize=address,undefined)
[[ $deps == *libtsan* ]] && san=(-fsanitize=thread)

check "ld_convert_set(c, LD_R_SEED, 224) does not compile with -Wextra -Werror"
cat > "$TMP/mixed.c" <<'C'
#include <libdata/convert.h>
#include <libdata/reader.h>
int f(ld_convert *c) { return ld_convert_set(c, LD_R_SEED, 224); }
int g(ld_reader *r) { return ld_reader_set(r, LD_C_QUALITY, 70); }
C
run "$CC" -std=c11 -Wall -Wextra -Werror -I"$inc" -c "$TMP/mixed.c" -o "$TMP/mixed.o"
[ "$rc" -ne 0 ] || fail "mixing the handles' parameter enums compiled without an error"
expect_err "enum-conversion"
[ "$(grep -c "enum-conversion" "$TMP/err")" -ge 2 ] || { show; fail "not both calls reported"; }

check "each handle's own enum compiles cleanly, and a non-integer reader id is refused by ld_reader_set"
cat > "$TMP/own.c" <<'C'
#include <stdio.h>
#include <libdata/convert.h>
#include <libdata/reader.h>
int main(void)
{
    ld_convert *c = ld_convert_create();
    ld_reader *r = ld_reader_create();
    if (!c || !r) return 2;
    int ok = ld_convert_set(c, LD_C_RESIZE_H, 224) == LD_OK && ld_reader_set(r, LD_R_SEED, 7) == LD_OK;
    int refused = ld_reader_set(r, LD_R_SCALE, 1) == LD_EINVAL &&
                  ld_reader_set(r, LD_R_DATA_NAME, 1) == LD_EINVAL &&
                  ld_reader_set(r, (ld_reader_param)27, 1) == LD_EINVAL;
    printf("own ids %s, other types %s\n", ok ? "set" : "REFUSED", refused ? "refused" : "ACCEPTED");
    ld_reader_free(r);
    ld_convert_free(c);
    return ok && refused ? 0 : 1;
}
C
"$CC" -std=c11 -Wall -Wextra -Werror "${san[@]}" -I"$inc" "$TMP/own.c" -o "$TMP/own" "$LIBDATA_LIBRARY" \
    -Wl,-rpath,"$(dirname "$LIBDATA_LIBRARY")" || fail "a correct program did not compile"
run "$TMP/own"
expect_rc 0
expect_out "own ids set, other types refused"
echo "param_ids: all checks passed"
