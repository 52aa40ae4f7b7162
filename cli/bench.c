/*
 * dataconv bench FILE: stream mini-batches with libdata's reader (<libdata/reader.h>) and
 * report the throughput and the memory it took, to size a training job's input pipeline
 * before running it.
 *
 * Flags: the reader's parameter table (ld_reader_params) gives every parameter as --NAME
 * VALUE, parsed by its type (params.h; booleans also as switches); the shortcuts below (--crop
 * WxH, --shuffle, --rgb, u8/f32, ...) are mapped onto it. The batch contents are read (one byte per
 * cache line) as a training step would, so lazily filled memory cannot flatter the numbers.
 */
#include "bench.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <libdata/reader.h>

#include "options.h"
#include "params.h"
#include "progress.h"

#define MAX_SETS 64

typedef struct bench_opts {
    const char *path;
    int64_t epochs;
    int quiet;
    int verbose;
    dc_value set[MAX_SETS]; /* reader parameters, in command-line order */
    int nset;
} bench_opts;

static int push(bench_opts *b, const dc_value *v)
{
    if (b->nset == MAX_SETS) return dc_usage_error("bench: too many options");
    b->set[b->nset++] = *v;
    return DC_EXIT_OK;
}

/* A shortcut's value of an integer, boolean or enum parameter. */
static int add_set(bench_opts *b, const char *flag, ld_reader_param id, int64_t v)
{
    size_t count = 0;
    const ld_param_desc *t = ld_reader_params(&count);
    dc_value val;
    int rc = dc_param_shortcut("bench: ", t, count, (int)id, flag, v, &val);
    return rc != DC_EXIT_OK ? rc : push(b, &val);
}

/* The reader parameter of a flag name: its table name, or --memory for memory_budget. */
static const ld_param_desc *reader_param(const char *name, size_t n)
{
    size_t count = 0;
    const ld_param_desc *t = ld_reader_params(&count);
    if (dc_name_eq(name, n, "memory")) return dc_param_by_id(t, count, LD_R_MEMORY_BUDGET);
    return dc_param_find(t, count, name, n);
}

/* Flags with a value, mapped onto reader parameters (or bench's own). */
static int apply_value(bench_opts *b, const char *flag, const char *name, size_t n, const char *val)
{
    int64_t v, w, h;
    if (dc_name_eq(name, n, "epochs")) {
        if (!dc_parse_i64(val, &v) || v < 1)
            return dc_usage_error("bench: %s '%s': expected a count >= 1", flag, val);
        b->epochs = v;
        return DC_EXIT_OK;
    }
    if (dc_name_eq(name, n, "crop")) {
        if (!dc_parse_geometry(val, &w, &h))
            return dc_usage_error("bench: %s '%s': expected N or WxH", flag, val);
        int rc = add_set(b, flag, LD_R_CROP_W, w);
        return rc ? rc : add_set(b, flag, LD_R_CROP_H, h);
    }
    /* the table's parameters; choice aliases (seq, u8, f32...) are dc_param_parse's */
    const ld_param_desc *d = reader_param(name, n);
    if (!d) return dc_usage_error("bench: unknown option '%s'", flag);
    dc_value pv;
    int rc = dc_param_parse("bench: ", d, flag, val, &pv);
    return rc != DC_EXIT_OK ? rc : push(b, &pv);
}

static int is_value_flag(const char *name, size_t n)
{
    if (dc_name_eq(name, n, "epochs") || dc_name_eq(name, n, "crop")) return 1;
    const ld_param_desc *d = reader_param(name, n);
    return d && dc_param_takes_value(d);
}

static int parse(int argc, char **argv, int first, bench_opts *b)
{
    memset(b, 0, sizeof *b);
    b->epochs = 1;
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-' || a[1] == '\0') {
            if (b->path)
                return dc_usage_error("bench takes one FILE (got '%s' and '%s')", b->path, a);
            b->path = a;
            continue;
        }
        if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            b->quiet = 1;
            continue;
        }
        if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
            b->verbose = 1;
            continue;
        }
        const char *name, *val = NULL;
        size_t n;
        if (a[1] == 'j' && (a[2] == '\0' || (a[2] >= '0' && a[2] <= '9'))) { /* -j N, -jN */
            name = "threads";
            n = 7;
            val = a[2] ? a + 2 : NULL;
        } else {
            name = a + (a[1] == '-' ? 2 : 1);
            const char *eq = strchr(name, '=');
            n = eq ? (size_t)(eq - name) : strlen(name);
            val = eq ? eq + 1 : NULL;
        }
        char flag[40];
        snprintf(flag, sizeof flag, "%s", a);
        flag[strcspn(flag, "=")] = '\0';
        /* switches: friendly ones, and 0/1 parameters of the table */
        int on = 1, rc;
        if (val && !is_value_flag(name, n) && !dc_parse_bool(val, &on))
            return dc_usage_error("bench: %s: expected true or false, got '%s'", flag, val);
        if (dc_name_eq(name, n, "shuffle")) {
            rc = add_set(b, flag, LD_R_ORDER, on ? LD_ORDER_SHUFFLE : LD_ORDER_SEQUENTIAL);
        } else if (dc_name_eq(name, n, "block-shuffle")) {
            rc = add_set(b, flag, LD_R_ORDER, on ? LD_ORDER_BLOCK_SHUFFLE : LD_ORDER_SEQUENTIAL);
        } else if (dc_name_eq(name, n, "rgb") || dc_name_eq(name, n, "bgr")) {
            int rgb = dc_name_eq(name, n, "rgb") ? on : !on;
            rc = add_set(b, flag, LD_R_CHANNEL_ORDER, rgb ? LD_CHANNELS_RGB : LD_CHANNELS_BGR);
        } else if (!is_value_flag(name, n)) {
            const ld_param_desc *d = reader_param(name, n);
            if (!d) return dc_usage_error("bench: unknown option '%s'", flag);
            rc = add_set(b, flag, d->id, on);
        } else {
            if (!val) {
                if (i + 1 >= argc) return dc_usage_error("bench: %s needs a value", flag);
                val = argv[++i];
            }
            rc = apply_value(b, flag, name, n, val);
        }
        if (rc != DC_EXIT_OK) return rc;
    }
    if (!b->path)
        return dc_usage_error("bench: missing FILE (an .h5 file, a --split .txt list or an "
                              "LMDB directory)");
    return DC_EXIT_OK;
}

/* The library's messages name reader parameters ("set dtype to float32"); the error detail
 * says which one: say which bench flag that is, on a line of its own after the message. */
static void print_error(const ld_reader *r)
{
    const ld_error_detail *det = ld_reader_error(r);
    fprintf(stderr, "dataconv: %s\n", ld_reader_errmsg(r));
    char flag[48];
    const char *name = NULL;
    if (!dc_param_cli_spelling(1, det->param, &name, flag, sizeof flag)) return;
    /* the short spellings of the float32 choices, as the help lists them */
    int64_t labels = LD_DTYPE_I32;
    if (det->param == LD_R_LABEL_DTYPE && ld_reader_get(r, LD_R_LABEL_DTYPE, &labels) < 0)
        labels = LD_DTYPE_I32;
    if (det->param == LD_R_DTYPE || det->param == LD_R_LABEL_DTYPE)
        fprintf(stderr, "dataconv: in dataconv bench that is %s %s\n", flag,
                det->param == LD_R_DTYPE || labels != LD_DTYPE_F32 ? "f32" : "i32");
    else
        fprintf(stderr, "dataconv: in dataconv bench that is %s (%s)\n", flag, name);
}

/* The reader's log: warnings always, what it decided (memory plan, mean file axis order)
 * with -v; errors come back as the call's message instead. */
static void bench_log(void *user, int level, const char *msg)
{
    const bench_opts *b = user;
    if (level == LD_LOG_WARN || (level == LD_LOG_INFO && b->verbose))
        fprintf(stderr, "dataconv: %s\n", msg);
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static long peak_rss_kib(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : 0;
}

void dc_bench_help(void *fp)
{
    FILE *f = fp;
    fputs(
        "Usage: dataconv bench FILE [options]      stream batches with libdata's reader, report "
        "speed\n"
        "  --epochs E           epochs to read (default 1)\n"
        "Shortcuts (each sets parameters listed below):\n"
        "  --shuffle | --block-shuffle   order shuffle | block_shuffle;  --order seq|block also\n"
        "  --dtype u8|u16|f32  --label-dtype i32|f32   short names of uint8, uint16, float32,\n"
        "                  int32\n"
        "  --crop N|WxH         crop_w and crop_h\n"
        "  --memory SIZE        memory_budget (e.g. 512M): prefetch is reduced to fit\n"
        "  --rgb|--bgr          channel_order rgb | bgr;  -j N: threads\n"
        "  -q  -v (what the reader decided)\n"
        "  mean_file: Caffe .binaryproto or NumPy .npy (CxHxW or HxWxC, float32, float64 or\n"
        "  uint8), of the sample or the crop size\n"
        "Parameters (libdata's ld_reader_params table; --NAME VALUE, switches for on/off ones):\n",
        f);
    size_t n = 0;
    const ld_param_desc *t = ld_reader_params(&n);
    dc_param_help(f, t, n);
}

int dc_bench(int argc, char **argv, int first)
{
    for (int i = first; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            dc_bench_help(stdout);
            return DC_EXIT_OK;
        }
    bench_opts b;
    int rc = parse(argc, argv, first, &b);
    if (rc != DC_EXIT_OK) return rc;
    ld_reader *r = ld_reader_create();
    if (!r) {
        fprintf(stderr, "dataconv: out of memory\n");
        return DC_EXIT_FAIL;
    }
    int code = DC_EXIT_FAIL;
    ld_reader_set_log(r, bench_log, &b);
    for (int i = 0; i < b.nset; i++)
        if (dc_param_apply_reader(r, &b.set[i]) < 0) {
            code = dc_usage_error("bench: %s: %s", b.set[i].flag, ld_reader_errmsg(r));
            goto done;
        }
    dc_signals_install();
    double t0 = now_seconds();
    rc = ld_reader_open(r, b.path);
    if (rc < 0) {
        print_error(r);
        if (rc == LD_EFORMAT) dc_hint_convert(b.path);
        code = rc == LD_EINVAL ? DC_EXIT_USAGE : DC_EXIT_FAIL;
        goto done;
    }
    double t_open = now_seconds() - t0;
    int64_t ns = 0, c = 0, h = 0, w = 0, th = 0, pf = 0, mem = 0, bs = 0, dt = 0;
    ld_reader_get_info(r, LD_R_INFO_SAMPLES, &ns);
    ld_reader_get_info(r, LD_R_INFO_C, &c);
    ld_reader_get_info(r, LD_R_INFO_H, &h);
    ld_reader_get_info(r, LD_R_INFO_W, &w);
    ld_reader_get_info(r, LD_R_INFO_THREADS, &th);
    ld_reader_get_info(r, LD_R_INFO_PREFETCH, &pf);
    ld_reader_get_info(r, LD_R_INFO_MEMORY, &mem);
    ld_reader_get(r, LD_R_BATCH_SIZE, &bs);
    ld_reader_get(r, LD_R_DTYPE, &dt);
    char mbuf[32];
    if (!b.quiet)
        printf("%s: %" PRId64 " samples, batch %" PRId64 " x %" PRId64 "x%" PRId64 "x%" PRId64
               " %s; %" PRId64 " threads, prefetch %" PRId64 ", reader memory %s; open %.3f s\n",
               b.path, ns, bs, c, h, w, dt == LD_DTYPE_F32 ? "float32" : "uint8", th, pf,
               dc_human_bytes((uint64_t)mem, mbuf, sizeof mbuf), t_open);
    uint64_t total_samples = 0, total_bytes = 0, total_batches = 0, sink = 0;
    double t_all = now_seconds();
    for (int64_t e = 0; e < b.epochs; e++) {
        double te = now_seconds();
        uint64_t samples = 0, bytes = 0, batches = 0;
        const ld_batch *bt;
        while ((rc = ld_reader_next(r, &bt)) == LD_OK) {
            /* read the batch as a consumer would: one byte per cache line */
            const unsigned char *p = bt->data;
            for (size_t k = 0; k < bt->data_bytes; k += 64)
                sink += p[k];
            samples += bt->n;
            bytes += bt->data_bytes;
            batches++;
            if (dc_signal_caught()) break;
        }
        if (dc_signal_caught()) {
            fprintf(stderr, "dataconv: bench interrupted\n");
            code = dc_signal_caught() == 2 ? DC_EXIT_SIGINT : DC_EXIT_SIGTERM;
            goto done;
        }
        if (rc < 0) {
            print_error(r);
            code = DC_EXIT_FAIL;
            goto done;
        }
        double s = now_seconds() - te;
        char bb[32];
        if (!b.quiet)
            printf("epoch %" PRId64 ": %" PRIu64 " batches, %" PRIu64 " samples in %.3f s: "
                   "%.0f samples/s, %s/s, %.2f ms/batch\n",
                   e, batches, samples, s, s > 0 ? samples / s : 0,
                   dc_human_bytes(s > 0 ? (uint64_t)(bytes / s) : 0, bb, sizeof bb),
                   batches ? s * 1e3 / (double)batches : 0);
        total_samples += samples;
        total_bytes += bytes;
        total_batches += batches;
    }
    double s = now_seconds() - t_all;
    char bb[32], rss[32];
    printf("total: %" PRIu64 " samples in %.3f s: %.0f samples/s, %s/s, %.2f ms/batch; "
           "peak RSS %s (checksum %" PRIu64 ")\n",
           total_samples, s, s > 0 ? total_samples / s : 0,
           dc_human_bytes(s > 0 ? (uint64_t)(total_bytes / s) : 0, bb, sizeof bb),
           total_batches ? s * 1e3 / (double)total_batches : 0,
           dc_human_bytes((uint64_t)peak_rss_kib() * 1024, rss, sizeof rss), sink % 1000);
    code = DC_EXIT_OK;
done:
    ld_reader_free(r);
    return code;
}
