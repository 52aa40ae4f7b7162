#!/usr/bin/env bash
# The command-line tool and the bindings must not recover the cause of a failure by searching
# the library's message text: messages are for people and may be reworded; the decision uses
# the status code and the error detail (ld_convert_error / ld_reader_error: parameter, file,
# sample; LibdataError.param/path/sample in Python). Issue 14, item 3.
#
# Fails on, in cli/ and bindings/:
#   C/C++: a call of strstr, strcasestr or memmem (or std::string find on an errmsg) -- unless
#          the line says `not a library message` in a comment (for searches in other data,
#          e.g. a file name);
#   Python: a test of a libdata error's text: `... in <x>.message`, `<x>.message.find(`,
#          `re.search/match(..., <x>.message ...)`, `in str(<exception>)`.
# Usage: scripts/check_no_strstr.sh [SOURCE_ROOT]   (default: the repository of this script)
set -u
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root" || exit 2
[ -d cli ] && [ -d bindings ] || { echo "check_no_strstr: $root has no cli/ and bindings/" >&2; exit 2; }

bad=$(
    find cli bindings -type f \( -name '*.c' -o -name '*.h' -o -name '*.cpp' -o -name '*.hpp' \
        -o -name '*.cc' -o -name '*.cu' \) -print0 |
        xargs -0 grep -nE '\b(strstr|strcasestr|memmem)[[:space:]]*\(|errmsg\([^)]*\)[^;]*\.find\(' |
        grep -v 'not a library message'
    find bindings -type f -name '*.py' -print0 |
        xargs -0 grep -nE '\bin[[:space:]]+[A-Za-z_][A-Za-z_0-9.]*\.message\b|\.message\.(find|index|startswith|endswith)\(|re\.(search|match|findall)\([^)]*\.message|\bin[[:space:]]+str\((e|exc|err|error)\)' |
        grep -v 'not a library message'
)
if [ -n "$bad" ]; then
    echo "check_no_strstr: these lines search message text; decide on the status code and the" >&2
    echo "error detail instead (ld_convert_error / ld_reader_error, LibdataError.param/path/sample):" >&2
    echo "$bad" >&2
    exit 1
fi
echo "check_no_strstr: cli/ and bindings/ decide on codes and error details, not message text"
