/*
 * Regression driver: replays kept fuzz inputs through a fuzz target's LLVMFuzzerTestOneInput
 * without libFuzzer, so the normal test build (gcc, no clang) covers every corpus under ctest.
 *
 * Usage: fuzzreg_<target> PATH...   PATH is a file or a directory (its regular files, sorted,
 * not recursive). Exit 0 when every input ran (a crash or an abort() in the target kills the
 * process, which ctest reports), 1 when a path could not be read or no input was found.
 * Prints one line per input before running it, so a crash names the input that caused it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* Optional in a target, as in libFuzzer. */
__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    int rc = -1;
    if (!buf) goto done;
    for (;;) {
        if (len == cap) {
            uint8_t *nb = realloc(buf, cap * 2);
            if (!nb) goto done;
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    if (ferror(f)) {
        perror(path);
        goto done;
    }
    printf("replay %s (%zu bytes)\n", path, len);
    fflush(stdout);
    /* An exact-size copy lets ASan catch a read one byte past the input. */
    uint8_t *exact = malloc(len ? len : 1);
    if (!exact) goto done;
    memcpy(exact, buf, len);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    rc = 0;
done:
    free(buf);
    fclose(f);
    return rc;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

int main(int argc, char **argv)
{
    int ran = 0, bad = 0;
    if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            bad++;
            continue;
        }
        if (!S_ISDIR(st.st_mode)) {
            bad += run_file(argv[i]) != 0;
            ran++;
            continue;
        }
        struct dirent **ents;
        int n = scandir(argv[i], &ents, NULL, by_name);
        if (n < 0) {
            perror(argv[i]);
            bad++;
            continue;
        }
        for (int k = 0; k < n; k++) {
            char p[4096];
            struct stat fs;
            snprintf(p, sizeof p, "%s/%s", argv[i], ents[k]->d_name);
            if (ents[k]->d_name[0] != '.' && stat(p, &fs) == 0 && S_ISREG(fs.st_mode)) {
                bad += run_file(p) != 0;
                ran++;
            }
            free(ents[k]);
        }
        free(ents);
    }
    printf("%d inputs replayed, %d unreadable\n", ran, bad);
    return (bad || ran == 0) ? 1 : 0;
}
