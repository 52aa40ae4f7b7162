#!/usr/bin/env bash
# Every allocation and write function that the library's own code calls is failed by
# tests/fault/fault_inject.c (issue 26 item 11): this fails when an object file of the library
# calls one that fault_inject does not wrap, so a new call cannot slip past the fault tests.
# Usage: unwrapped.sh WRAPPED OBJECTS   (WRAPPED: the wrapped names, comma-separated; OBJECTS:
# the library's object files, separated by ';' as CMake's $<TARGET_OBJECTS> gives them)
set -euo pipefail
wrapped=",$1,"
IFS=';' read -ra objects <<<"$2"
set -- "${objects[@]}"
# Functions whose failure the library must report as out of memory, a failed thread or lock,
# or a lost write. (Opens and reads are not here: their failures are the input's, tested
# with bad files.)
watch="malloc calloc realloc reallocarray strdup strndup asprintf vasprintf getline getdelim
       realpath posix_memalign aligned_alloc memalign valloc mmap mmap64 open_memstream
       write writev pwrite pwrite64 pwritev pwritev64 pwritev2 pwritev64v2 fwrite fputs fputc
       putc fprintf vfprintf dprintf vdprintf fflush fsync fdatasync fclose rename renameat
       renameat2 mkdir mkdirat ftruncate ftruncate64 truncate truncate64 posix_fallocate
       posix_fallocate64 fallocate fallocate64 link symlink
       pthread_create pthread_mutex_init pthread_cond_init pthread_rwlock_init sem_init"
called=$(nm -u "$@" | awk 'NF == 2 {print $2}' | sed 's/@.*//' | sort -u)
missing=()
for f in $watch; do
    if grep -qx "$f" <<<"$called" && [[ $wrapped != *",$f,"* ]]; then
        missing+=("$f")
    fi
done
n=$(wc -w <<<"$watch")
if [ ${#missing[@]} -gt 0 ]; then
    echo "FAIL: the library calls ${missing[*]}, which tests/fault/fault_inject.c does not fail:"
    echo "      wrap it there (a __wrap_ function) and add it to LD_FAULT_WRAPPED"
    for f in "${missing[@]}"; do
        echo "  $f called in: $(nm -A -u "$@" | grep -w "U $f" | sed 's|.*/||; s|\.o:.*||' | sort -u | tr '\n' ' ')"
    done
    exit 1
fi
echo "unwrapped: of $n allocation and write functions watched, the library calls $(grep -cxF -f <(tr ' ' '\n' <<<"$watch" | grep .) <<<"$called"), all wrapped"
