/*
 * dataconv: convert image folders into HDF5/LMDB datasets, describe datasets.
 *
 * A thin client of the public API (<libdata/convert.h>, <libdata/libdata.h>): this file
 * only decides what the command line means, hands the parameters to the library, and turns
 * the library's status codes into messages and exit codes (see options.h).
 */
#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libdata/convert.h>
#include <libdata/libdata.h>

#include "bench.h"
#include "merge.h"
#include "plan.h"
#include "options.h"
#include "mpi.h"
#include "progress.h"
#include "shard.h"

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int print_version(void)
{
    printf("dataconv %s (libdata %s; built with:%s%s%s%s%s%s%s)\n", LD_VERSION_STRING,
           ld_version_string(), ld_has_feature(LD_FEATURE_HDF5) ? " hdf5" : "",
           ld_has_feature(LD_FEATURE_LMDB) ? " lmdb" : "",
           ld_has_feature(LD_FEATURE_PNG) ? " png" : "",
           ld_has_feature(LD_FEATURE_THREADS) ? " threads" : "",
           ld_has_feature(LD_FEATURE_COCO) ? " coco" : "",
           ld_has_feature(LD_FEATURE_VOC) ? " voc" : "", dc_mpi_built() ? " mpi" : "");
    return DC_EXIT_OK;
}

static int cmd_info(const dc_opts *o)
{
    if (o->npos != 1)
        return dc_usage_error(o->npos ? "info takes one FILE"
                                      : "info: missing FILE "
                                        "(an .h5 file, an LMDB directory or a --split .txt list)");
    if (o->nparams || o->list || o->root) return dc_usage_error("info takes no conversion options");
    char *text = NULL, *err = NULL;
    int rc = ld_describe(o->pos[0], &text, &err);
    if (rc < 0) {
        fprintf(stderr, "dataconv: %s\n", err ? err : ld_strerror(rc));
        ld_free(err);
        if (rc == LD_EFORMAT) dc_hint_convert(o->pos[0]);
        return DC_EXIT_FAIL;
    }
    size_t n = strlen(text);
    fputs(text, stdout);
    if (n == 0 || text[n - 1] != '\n') fputc('\n', stdout);
    ld_free(text);
    /* The description speaks in the library's terms (crop_w, resize_w); say the flags here,
     * from the struct, when the images need a crop to be read in batches. */
    ld_dataset_info *d = NULL;
    if (ld_dataset_stat(o->pos[0], &d, NULL) == LD_OK && d->encoded &&
        (d->height == 0 || d->shape_of_first))
        printf("dataconv: %s: read with `dataconv bench FILE --crop WxH` (no larger than the "
               "smallest image), or convert again with --resize\n",
               d->height == 0 ? "the image sizes vary"
                              : "sizes are not recorded for every image; if they vary");
    ld_free(d);
    return fflush(stdout) == 0 ? DC_EXIT_OK : DC_EXIT_FAIL;
}

static int cmd_mean(const dc_opts *o)
{
    if (o->npos < 1 || o->npos > 2)
        return dc_usage_error(o->npos ? "mean takes INPUT and an optional OUT.binaryproto"
                                      : "mean: missing INPUT (an .h5 file, a --split .txt list "
                                        "or an LMDB directory)");
    if (o->nparams || o->list || o->root) return dc_usage_error("mean takes no conversion options");
    const char *out = o->npos == 2 ? o->pos[1] : NULL;
    double m[4] = {0, 0, 0, 0};
    int c = 0;
    char *err = NULL;
    int rc = ld_compute_mean(o->pos[0], out, m, &c, &err);
    if (rc < 0) {
        fprintf(stderr, "dataconv: %s\n", err ? err : ld_strerror(rc));
        ld_free(err);
        return DC_EXIT_FAIL;
    }
    /* stdout: what Caffe's transform_param mean_value wants, in the stored channel order */
    printf("mean_value:");
    for (int i = 0; i < c && i < 4; i++)
        printf(" %.4f", m[i]);
    printf("\n");
    if (out && !o->quiet)
        fprintf(stderr, "dataconv: wrote the per-pixel mean of %s to %s (Caffe mean_file)\n",
                o->pos[0], out);
    return fflush(stdout) == 0 ? DC_EXIT_OK : DC_EXIT_FAIL;
}

/* Flags that cannot change the output. Left out of the note so that the same conversion run
 * with another -j (or -q) gives a byte-identical file. Returns how many argv entries to skip. */
static int output_neutral(char **argv, int i, int argc)
{
    const char *a = argv[i];
    if (!strcmp(a, "-q") || !strcmp(a, "--quiet") || !strcmp(a, "-quiet") || !strcmp(a, "-v") ||
        !strcmp(a, "--verbose") || !strcmp(a, "-verbose"))
        return 1;
    if (!strcmp(a, "-j") || !strcmp(a, "--threads") || !strcmp(a, "-threads"))
        return i + 1 < argc ? 2 : 1;
    if ((!strncmp(a, "-j", 2) && a[2] >= '0' && a[2] <= '9') || !strncmp(a, "--threads=", 10) ||
        !strncmp(a, "-threads=", 9))
        return 1;
    /* --shard K/N (and --shard-index, --shard-count): the parts of one run carry one note;
     * the part is recorded in the shard attributes */
    if (a[0] == '-') {
        const char *name = a + (a[1] == '-' ? 2 : 1);
        const char *eq = strchr(name, '=');
        size_t n = eq ? (size_t)(eq - name) : strlen(name);
        if (dc_name_eq(name, n, "shard") || dc_name_eq(name, n, "shard-index") ||
            dc_name_eq(name, n, "shard-count"))
            return eq || i + 1 >= argc ? 1 : 2;
    }
    return 0;
}

/* The command line, kept in the dataset as LD_C_SOURCE_NOTE (how was this file made?). */
static char *join_argv(int argc, char **argv)
{
    size_t n = sizeof "dataconv";
    for (int i = 0; i < argc; i++)
        n += strlen(argv[i]) + 1;
    char *s = malloc(n);
    if (!s) return NULL;
    char *p = s;
    int only_pos = 0;
    for (int i = 0; i < argc; i++) {
        int skip = only_pos || i == 0 ? 0 : output_neutral(argv, i, argc);
        if (skip) {
            i += skip - 1;
            continue;
        }
        /* the program's own path says nothing about the data and varies between installs */
        const char *arg = i == 0 ? "dataconv" : argv[i];
        if (!strcmp(arg, "--")) only_pos = 1;
        if (p != s) *p++ = ' ';
        size_t m = strlen(arg);
        memcpy(p, arg, m);
        p += m;
    }
    *p = '\0';
    return s;
}

/* The last value given for a string parameter, or NULL. */
static const char *param_str(const dc_opts *o, int id)
{
    for (int i = o->nparams - 1; i >= 0; i--)
        if (o->params[i].d->id == id) return o->params[i].s;
    return NULL;
}

/* Work out SRC/ROOT, the list file and OUT from the positionals (three command forms, and the
 * detection inputs: --coco JSON --root IMAGES OUT, --voc DIR [--list IMAGESETS] OUT). */
static int resolve_inputs(dc_opts *o, const char **input, const char **list, const char **out)
{
    *list = o->list;
    const char *coco = param_str(o, LD_C_COCO), *voc = param_str(o, LD_C_VOC);
    if (coco || voc) {
        if (coco && voc) return dc_usage_error("--coco and --voc exclude each other");
        if (coco && o->list)
            return dc_usage_error("--coco: the JSON lists the images; --list is for --voc");
        if (coco && !o->root)
            return dc_usage_error("--coco %s needs --root IMAGES, the folder its file_names are "
                                  "relative to (e.g. --root train2017/)",
                                  coco);
        if (voc && o->root) return dc_usage_error("--voc DIR is the root: no --root");
        if (o->npos != 1)
            return dc_usage_error("with --%s give one OUT (got %d arguments)",
                                  coco ? "coco" : "voc", o->npos);
        if (coco && !is_file(coco)) return dc_usage_error("--coco %s: no such file", coco);
        *input = coco ? o->root : voc;
        *out = o->pos[0];
        return DC_EXIT_OK;
    }
    if (o->list) {
        if (o->npos == 1 && o->root) {
            *input = o->root;
            *out = o->pos[0];
        } else if (o->npos == 2 && !o->root) {
            *input = o->pos[0];
            *out = o->pos[1];
        } else if (o->npos == 0 || (o->npos == 1 && !o->root)) {
            return dc_usage_error(o->npos == 0 ? "missing OUT: dataconv --list LIST --root ROOT OUT"
                                               : "--list needs --root ROOT, the folder the listed "
                                                 "paths are relative to (--root . for the "
                                                 "current folder)");
        } else {
            return dc_usage_error("with --list give --root ROOT and one OUT (got %d arguments)",
                                  o->npos);
        }
        if (!is_file(o->list)) return dc_usage_error("--list %s: no such file", o->list);
        return DC_EXIT_OK;
    }
    if (o->root && o->npos == 2)
        return dc_usage_error("--root is only used with --list (or give ROOT/ LIST DB)");
    switch (o->npos) {
    case 0: return dc_usage_error("missing SRC and OUT: dataconv SRC OUT [options]");
    case 1: return dc_usage_error("missing OUT after '%s': dataconv SRC OUT [options]", o->pos[0]);
    case 2: /* a file SRC is a tar archive or a dataset (HDF5, split list, data.mdb) */
        *input = o->pos[0];
        *out = o->pos[1];
        return DC_EXIT_OK;
    case 3:
        /* convert_imageset ROOTFOLDER/ LISTFILE DB_NAME */
        if (!is_file(o->pos[1]))
            return dc_usage_error("with three arguments dataconv expects convert_imageset's "
                                  "order ROOT/ LISTFILE DB, but '%s' is not a file",
                                  o->pos[1]);
        *input = o->pos[0];
        *list = o->pos[1];
        *out = o->pos[2];
        /* convert_imageset writes LMDB by default: keep that for its argument order */
        if (dc_param_value(o, LD_C_FORMAT, LD_FORMAT_AUTO) == LD_FORMAT_AUTO &&
            !ends_with(*out, ".h5") && !ends_with(*out, ".hdf5") && !ends_with(*out, ".txt") &&
            o->nparams < DC_MAX_PARAMS) {
            size_t count = 0;
            const ld_param_desc *t = ld_convert_params(&count);
            if (dc_param_shortcut("", t, count, LD_C_FORMAT, "(convert_imageset order: LMDB)",
                                  LD_FORMAT_LMDB, &o->params[o->nparams]) == DC_EXIT_OK)
                o->nparams++;
        }
        return DC_EXIT_OK;
    default: return dc_usage_error("too many arguments (%d): dataconv SRC OUT [options]", o->npos);
    }
}

/* The format the library will write, for messages (mirrors LD_FORMAT_AUTO's rule). */
static const char *format_name(int64_t fmt, const char *out)
{
    if (fmt == LD_FORMAT_LMDB ||
        (fmt == LD_FORMAT_AUTO && (ends_with(out, ".lmdb") || is_dir(out))))
        return "lmdb";
    return "hdf5";
}

/* After a failed run, a second line that says what to do next: the library's message speaks
 * of parameters by their table names; the error detail says which one, and here it gets its
 * command-line spelling. */
static void print_hint(const dc_opts *o, int rc, const ld_error_detail *det)
{
    int raw = dc_param_value(o, LD_C_QUALITY, 0) == 0 && !dc_param_value(o, LD_C_ENCODED, 0) &&
              !dc_param_value(o, LD_C_ENCODE_PNG, 0);
    int resized = dc_param_value(o, LD_C_RESIZE_W, 0) > 0 &&
                  dc_param_value(o, LD_C_RESIZE_MODE, 0) != LD_RESIZE_MAX;
    char flag[48];
    const char *name = NULL;
    const char *spelled = dc_param_cli_spelling(0, det->param, &name, flag, sizeof flag);
    /* a size refusal of raw storage, whether or not the detail names resize_w/resize_h */
    int size_hint = rc == LD_EINVAL && raw && !resized &&
                    (!spelled || det->param == LD_C_RESIZE_W || det->param == LD_C_RESIZE_H);
    if (size_hint)
        fputs("dataconv: hint: raw storage needs one size for all images: add --resize WxH, "
              "or store compressed images with --quality Q\n",
              stderr);
    else if (spelled && det->param == LD_C_RESIZE_MODE)
        fputs("dataconv: hint: on the command line: --quality Q, or --mode squash|crop|pad\n",
              stderr);
    else if (spelled)
        fprintf(stderr, "dataconv: %s is %s on the command line\n", name, spelled);
    else if (rc == LD_EFORMAT && dc_param_value(o, LD_C_STRICT, 0))
        fputs("dataconv: hint: without --strict, bad files are skipped with a warning\n", stderr);
    else if (rc == LD_ENOTSUP)
        fputs("dataconv: hint: 'dataconv --version' lists the formats this build supports\n",
              stderr);
}

/* One conversion (of one part with --shard); *res receives OUT as given and what was done. */
static int convert_once(dc_opts *o, int argc, char **argv, dc_run_result *res)
{
    const char *input = NULL, *list = NULL, *out = NULL;
    int rc = resolve_inputs(o, &input, &list, &out);
    if (rc != DC_EXIT_OK) return rc;
    res->out = out;
    const char *fmt = format_name(dc_param_value(o, LD_C_FORMAT, LD_FORMAT_AUTO), out);
    if (strcmp(fmt, "lmdb") == 0 && !ld_has_feature(LD_FEATURE_LMDB))
        return dc_usage_error("%s: this build has no LMDB support; write HDF5 instead "
                              "(an .h5 name or --format hdf5)",
                              out);
    if (strcmp(fmt, "hdf5") == 0 && !ld_has_feature(LD_FEATURE_HDF5))
        return dc_usage_error("%s: this build has no HDF5 support; write LMDB instead "
                              "(a .lmdb name or --format lmdb)",
                              out);

    /* Started by mpirun/srun as one of several processes, without --shard: every process
     * would convert everything into the same OUT. */
    const char *mpi_var = NULL;
    const int mpi_size = dc_shard_mpi_size(&mpi_var);
    const int64_t nparts = dc_param_value(o, LD_C_SHARD_COUNT, 0);
    if (mpi_size > 1 && nparts == 0)
        return dc_usage_error("started as one of %d processes (%s=%d) without --shard: each "
                              "would convert everything into %s. Give --shard auto to convert one "
                              "part per process (then: dataconv merge), or run one process; a "
                              "dataconv built with -DLIBDATA_WITH_MPI=ON does both in one mpirun",
                              mpi_size, mpi_var, mpi_size, out);
    if (o->shard_derived) {
        const int src = dc_shard_check_siblings(out, (int)nparts, o->shard_from);
        if (src != DC_EXIT_OK) return src;
    }
    char *part = NULL; /* shards: the file this run writes */
    /* LD_EINVAL (K >= N given as --shard-index/--shard-count): the library says so below */
    if (nparts > 0 && ld_shard_part_name(out, (int)dc_param_value(o, LD_C_SHARD_INDEX, 0),
                                         (int)nparts, &part) == LD_ENOMEM) {
        fprintf(stderr, "dataconv: out of memory\n");
        return DC_EXIT_FAIL;
    }
    if (part && o->shard_from[0] && !o->quiet)
        fprintf(stderr, "dataconv: --shard auto: part %d of %d (0-based) from %s: %s\n",
                (int)dc_param_value(o, LD_C_SHARD_INDEX, 0), (int)nparts, o->shard_from, part);
    const char *given = out; /* the library names the part itself; messages name the part */
    if (part) out = part;

    ld_convert *c = ld_convert_create();
    char *note = join_argv(argc, argv);
    if (!c || !note) {
        fprintf(stderr, "dataconv: out of memory\n");
        ld_convert_free(c);
        free(note);
        ld_free(part);
        return DC_EXIT_FAIL;
    }
    int exit_code = DC_EXIT_OK;
    /* the command line as the note, unless --source-note (a parameter below) replaces it */
    if (ld_convert_set_str(c, LD_C_SOURCE_NOTE, note) < 0 ||
        (list && ld_convert_set_str(c, LD_C_LIST_FILE, list) < 0)) {
        fprintf(stderr, "dataconv: %s\n", ld_convert_errmsg(c));
        exit_code = DC_EXIT_FAIL;
        goto done;
    }
    for (int i = 0; i < o->nparams; i++) {
        if (dc_param_apply_convert(c, &o->params[i]) < 0) {
            exit_code = dc_usage_error("%s: %s", o->params[i].flag, ld_convert_errmsg(c));
            goto done;
        }
    }

    dc_progress prog;
    dc_progress_init(&prog, o->quiet, o->verbose);
    ld_convert_set_log(c, dc_progress_log, &prog);
    ld_convert_set_progress(c, dc_progress_update, &prog);
    dc_signals_install();

    rc = ld_convert_run(c, input, given);
    const ld_progress *st = ld_convert_stats(c);
    if (rc >= 0 && st) {
        res->converted = st->converted;
        res->skipped = st->skipped;
        res->resumed = st->resumed != 0;
    }
    if (rc >= 0 && st && st->resumed) {
        /* resume: the part is there from an earlier run of the same command */
        dc_progress_clear(&prog);
        if (!o->quiet)
            fprintf(stderr, "dataconv: part %d/%d: %s already complete, skipped\n",
                    (int)dc_param_value(o, LD_C_SHARD_INDEX, 0), (int)nparts, out);
        exit_code = DC_EXIT_OK;
        goto done;
    }
    if (rc >= 0) {
        if (st) dc_progress_summary(&prog, st, out, fmt);
        exit_code = DC_EXIT_OK;
        goto done;
    }
    dc_progress_clear(&prog);
    int sig = dc_signal_caught();
    if (rc == LD_ECANCELED && sig) {
        fprintf(stderr, "dataconv: %s; nothing was written to %s\n",
                sig == 2 ? "interrupted" : "terminated", out);
        exit_code = sig == 2 ? DC_EXIT_SIGINT : DC_EXIT_SIGTERM;
        goto done;
    }
    const char *msg = ld_convert_errmsg(c);
    fprintf(stderr, "dataconv: %s\n", msg && *msg ? msg : ld_strerror(rc));
    print_hint(o, rc, ld_convert_error(c));
    if (st && !o->quiet && st->done)
        fprintf(stderr, "dataconv: stopped after %llu of %llu files; nothing was written to %s\n",
                (unsigned long long)st->done, (unsigned long long)st->total, out);
    exit_code = (rc == LD_EFORMAT || rc == LD_ELIMIT) ? DC_EXIT_BAD_INPUT : DC_EXIT_FAIL;
done:
    ld_convert_free(c);
    free(note);
    ld_free(part);
    return exit_code;
}

static int cmd_convert(dc_opts *o, int argc, char **argv)
{
    /* mpirun/srun started us, without --shard, and MPI is built in: MPI mode */
    if (dc_mpi_built() && dc_param_value(o, LD_C_SHARD_COUNT, 0) == 0 && dc_shard_mpi_size(NULL))
        return dc_mpi_convert(o, argc, argv, convert_once);
    dc_run_result res = {0};
    return convert_once(o, argc, argv, &res);
}

/* glibc's malloc, tuned for this process (the library leaves process-wide settings to the
 * program). LMDB mallocs the pages of each record larger than a page and frees them at every
 * commit; glibc then handed the freed top of the heap back to the kernel (its trim threshold
 * follows the largest block freed so far, about twice a record), so every transaction faulted
 * in fresh memory, which this VM makes at ~0.34 GB/s: 2,000 raw 224x224 records to LMDB took
 * 81,000 page faults at -j1 and 1.9 s at -j2, against 5,800 and 1.3 s with blocks up to 2 MiB
 * served from the heap and up to 32 MiB of it kept (peak RSS unchanged). Since the writer's
 * transactions are 1 MiB: 46,000 faults at -j1 and 1.8 s at -j2 without the tuning, 2,500 and
 * 1.2 s with it. A program that converts through the library can do the same (README, "Memory
 * and speed"). */
static void tune_malloc(void)
{
#ifdef __GLIBC__
    /* 2 MiB: the most glibc takes on 32-bit systems. Setting the trim threshold alone would
     * also freeze glibc's own raising of the mmap threshold: both or neither. */
    if (mallopt(M_MMAP_THRESHOLD, 2 << 20) == 1) mallopt(M_TRIM_THRESHOLD, 32 << 20);
#endif
}

int main(int argc, char **argv)
{
    dc_opts o;
    tune_malloc();
    int rc = dc_parse(argc, argv, &o);
    if (rc != DC_EXIT_OK) return rc;
    switch (o.cmd) {
    case DC_CMD_HELP: dc_print_help(stdout); return fflush(stdout) == 0 ? DC_EXIT_OK : DC_EXIT_FAIL;
    case DC_CMD_VERSION: return print_version();
    case DC_CMD_INFO: return cmd_info(&o);
    case DC_CMD_MEAN: return cmd_mean(&o);
    case DC_CMD_BENCH: return dc_bench(argc, argv, 2);
    case DC_CMD_MERGE: return dc_merge(argc, argv, 2);
    case DC_CMD_PLAN: return dc_plan(argc, argv, 2);
    case DC_CMD_CONVERT: return cmd_convert(&o, argc, argv);
    }
    return DC_EXIT_FAIL;
}
