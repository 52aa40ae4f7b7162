/*
 * dataconv merge OUT [PART... | 'PATTERN']: the parts that `dataconv SRC OUT --shard K/N`
 * wrote (OUT-KKKKK-of-NNNNN.h5 / .lmdb) -> one dataset OUT, through ld_merge(). Parts are
 * paths, or patterns that the shell did not expand ('out-*-of-00008.h5': expanded here with
 * glob(3)), or nothing: then the library finds OUT-*-of-* beside OUT.
 */
#include "merge.h"

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <libdata/convert.h>
#include <libdata/libdata.h>

#include "options.h"

void dc_merge_help(void *fp)
{
    FILE *f = fp;
    fputs("Usage: dataconv merge OUT [PART... | 'PATTERN'] [-q] [-v]\n"
          "\n"
          "Merge the parts of a sharded conversion (dataconv SRC OUT --shard K/N, which writes\n"
          "OUT-KKKKK-of-NNNNN.h5 or .lmdb) into one dataset OUT. Without parts, every\n"
          "OUT-*-of-* beside OUT is taken; a quoted pattern ('out-*-of-00008.h5') is expanded.\n"
          "\n"
          "HDF5: OUT is a small file of virtual datasets that map the parts in order (h5py,\n"
          "Caffe's HDF5Data and libdata read it as one file). It holds no sample data: keep the\n"
          "parts where they are; the parts are named relative to OUT's folder when they are in\n"
          "it or below it, so that folder can be moved or copied as a whole.\n"
          "LMDB: the records are copied in order into one database OUT (Caffe's Data layer\n"
          "reads one), with the keys and libdata.json of a single run; the parts can then go.\n"
          "\n"
          "Refused, naming the file: a missing part, a part given twice, parts of another N,\n"
          "from another run (other options or input), with other class names, a renamed part\n"
          "(its name's K/N differ from what it holds), a truncated or unreadable part, and an\n"
          "OUT that is one of the parts. OUT is written under a temporary name and renamed\n"
          "when complete: on failure nothing is left under OUT.\n"
          "\n"
          "  -q, --quiet    print errors only\n"
          "  -v, --verbose  also print what was found\n"
          "  -h, --help     this text\n"
          "\n"
          "Exit codes: 0 merged; 1 I/O error; 2 usage error; 3 the parts were refused.\n"
          "\n"
          "Examples:\n"
          "  dataconv merge train.h5                      every train-*-of-*.h5 beside it\n"
          "  dataconv merge train.h5 'train-*-of-00008.h5'\n"
          "  dataconv merge train.lmdb train-0000[0-3]-of-00004.lmdb\n",
          f);
}

typedef struct merge_log {
    int quiet, verbose;
} merge_log;

static void on_log(void *user, int level, const char *msg)
{
    const merge_log *l = user;
    if (level == LD_LOG_ERROR || level == LD_LOG_DEBUG || l->quiet) return; /* error: below */
    if (level == LD_LOG_INFO && !l->verbose && strncmp(msg, "merged ", 7) != 0) return;
    fprintf(stderr, "dataconv: %s%s\n", level == LD_LOG_WARN ? "warning: " : "", msg);
}

static int has_glob_chars(const char *s)
{
    return strpbrk(s, "*?[") != NULL;
}

/* Room for one more part name in *parts (capacity *cap, n used); 0 (said) when out of memory. */
static int push_room(char ***parts, size_t *cap, size_t n)
{
    if (n < *cap) return 1;
    size_t c = *cap ? *cap * 2 : 16;
    char **t = realloc(*parts, c * sizeof *t);
    if (!t) {
        fprintf(stderr, "dataconv: out of memory\n");
        return 0;
    }
    *parts = t;
    *cap = c;
    return 1;
}

int dc_merge(int argc, char **argv, int first)
{
    merge_log lg = {0, 0};
    const char *out = NULL;
    char **parts = NULL;
    size_t n = 0, cap = 0;
    int only_pos = 0, rc = DC_EXIT_OK;
    glob_t g;
    int globbed = 0;

    for (int i = first; i < argc && rc == DC_EXIT_OK; i++) {
        const char *a = argv[i];
        if (!only_pos && a[0] == '-' && a[1]) {
            if (!strcmp(a, "--")) {
                only_pos = 1;
            } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
                dc_merge_help(stdout);
                free(parts);
                return fflush(stdout) == 0 ? DC_EXIT_OK : DC_EXIT_FAIL;
            } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
                lg.quiet = 1;
            } else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
                lg.verbose = 1;
            } else {
                rc = dc_usage_error("merge: unknown option '%s' (merge takes OUT, the parts, "
                                    "-q, -v; 'dataconv merge --help')",
                                    a);
            }
            continue;
        }
        if (!out) {
            out = a;
            continue;
        }
        struct stat st;
        if (has_glob_chars(a) && stat(a, &st) != 0) {
            /* a pattern the shell left alone (quoted, or no match there) */
            if (glob(a, globbed ? GLOB_APPEND : 0, NULL, &g) != 0) {
                if (globbed) globfree(&g);
                free(parts);
                fprintf(stderr, "dataconv: merge: %s: no file matches this pattern\n", a);
                return DC_EXIT_BAD_INPUT;
            }
            globbed = 1;
            continue;
        }
        if (!push_room(&parts, &cap, n)) {
            rc = DC_EXIT_FAIL;
            break;
        }
        parts[n++] = (char *)a;
    }
    if (rc == DC_EXIT_OK && !out)
        rc = dc_usage_error("merge: missing OUT: dataconv merge OUT [PART...] (OUT.h5 or "
                            "OUT.lmdb; without parts, OUT-*-of-* beside it)");
    /* the pattern's matches after the parts named one by one */
    for (size_t k = 0; rc == DC_EXIT_OK && globbed && k < g.gl_pathc; k++) {
        if (!push_room(&parts, &cap, n)) {
            rc = DC_EXIT_FAIL;
            break;
        }
        parts[n++] = g.gl_pathv[k];
    }
    if (rc == DC_EXIT_OK) {
        char *err = NULL;
        int r = ld_merge(out, (const char *const *)parts, n, on_log, &lg, &err);
        if (r < 0) {
            fprintf(stderr, "dataconv: %s\n", err ? err : ld_strerror(r));
            if (r == LD_ENOTSUP)
                fputs("dataconv: hint: 'dataconv --version' lists the formats this build "
                      "supports\n",
                      stderr);
            rc = r == LD_EINVAL || r == LD_EFORMAT ? DC_EXIT_BAD_INPUT : DC_EXIT_FAIL;
        }
        ld_free(err);
    }
    if (globbed) globfree(&g);
    free(parts);
    return rc;
}
