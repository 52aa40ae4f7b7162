/*
 * dataconv command-line parsing. A small hand-written parser instead of getopt_long because
 * convert_imageset users type gflags spellings (-gray, -resize_width=256, --noshuffle)
 * that getopt cannot express, and because the library's parameter table adds flags at
 * run time.
 */
#include "options.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "shard.h"

void dc_hint_convert(const char *path)
{
    struct stat st;
    char mdb[4096];
    snprintf(mdb, sizeof mdb, "%s/data.mdb", path);
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode) && stat(mdb, &st) != 0)
        fprintf(stderr, "dataconv: to make a dataset of a folder of images: dataconv %s out.h5\n",
                path);
    else if (ld_convert_input_is_archive(path))
        fprintf(stderr,
                "dataconv: to make a dataset of a tar archive of images: dataconv %s out.h5\n",
                path);
}

int dc_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("dataconv: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\nTry 'dataconv --help' for the options and examples.\n", stderr);
    return DC_EXIT_USAGE;
}

/* ---- value parsers ------------------------------------------------------------------- */

int dc_parse_i64(const char *s, int64_t *out)
{
    if (!s || !*s) return 0;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (errno || *end) return 0;
    *out = v;
    return 1;
}

/* "N" or "WxH" (also "WXH"); both sides > 0. */
int dc_parse_geometry(const char *s, int64_t *w, int64_t *h)
{
    const char *x = strpbrk(s, "xX");
    if (!x) return dc_parse_i64(s, w) && *w > 0 && (*h = *w, 1);
    char left[32];
    size_t n = (size_t)(x - s);
    if (n == 0 || n >= sizeof left) return 0;
    memcpy(left, s, n);
    left[n] = '\0';
    return dc_parse_i64(left, w) && dc_parse_i64(x + 1, h) && *w > 0 && *h > 0;
}

/* Bytes with an optional binary suffix: 500M, 2G, 1.5G, 64KiB, 1000000. */
int dc_parse_size(const char *s, int64_t *out)
{
    if (!s || !*s) return 0;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (errno || end == s || v < 0) return 0;
    double mul = 1;
    switch (toupper((unsigned char)*end)) {
    case 'K':
        mul = 1024.0;
        end++;
        break;
    case 'M':
        mul = 1024.0 * 1024;
        end++;
        break;
    case 'G':
        mul = 1024.0 * 1024 * 1024;
        end++;
        break;
    case 'T':
        mul = 1024.0 * 1024 * 1024 * 1024;
        end++;
        break;
    default: break;
    }
    if (mul > 1 && (end[0] == 'i' || end[0] == 'I') && toupper((unsigned char)end[1]) == 'B')
        end += 2;
    else if (toupper((unsigned char)*end) == 'B')
        end++;
    if (*end) return 0;
    v *= mul;
    if (v >= 9.2e18) return 0;
    *out = (int64_t)v;
    return 1;
}

/* gflags booleans: true/false, 1/0, yes/no, t/f, y/n. */
int dc_parse_bool(const char *s, int *out)
{
    static const char *yes[] = {"true", "1", "yes", "t", "y"};
    static const char *no[] = {"false", "0", "no", "f", "n"};
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) {
        if (strcasecmp(s, yes[i]) == 0) return *out = 1, 1;
        if (strcasecmp(s, no[i]) == 0) return *out = 0, 1;
    }
    return 0;
}

/* ---- the option table ---------------------------------------------------------------- */

/* The command's own options and the shortcuts of library parameters; every other flag comes
 * from the library's table (params.h). */
typedef enum opt_id {
    O_PARAM, /* another name of the table parameter `param`, parsed as that parameter */
    O_HELP,
    O_VERSION,
    O_QUIET,
    O_VERBOSE,
    O_RGB,
    O_BGR,
    O_RESIZE,
    O_MAX_SIDE,
    O_MAX_PIXELS,
    O_ENCODE_TYPE,
    O_ROOT,
    O_SHARD
} opt_id;

typedef struct opt_def {
    const char *name; /* canonical spelling with dashes; matched with '_' == '-' */
    char short_name;  /* 0 = none */
    int takes_value;  /* 0 = boolean switch */
    opt_id id;
    const char *param; /* O_PARAM: the table parameter's name */
} opt_def;

static const opt_def OPTS[] = {
    {"help", 'h', 0, O_HELP, NULL},
    {"version", 'V', 0, O_VERSION, NULL},
    {"quiet", 'q', 0, O_QUIET, NULL},
    {"verbose", 'v', 0, O_VERBOSE, NULL},
    {"grey", 0, 0, O_PARAM, "gray"},
    {"rgb", 0, 0, O_RGB, NULL},
    {"bgr", 0, 0, O_BGR, NULL},
    {"resize", 0, 1, O_RESIZE, NULL},
    {"resize-width", 0, 1, O_PARAM, "resize_w"},
    {"resize-height", 0, 1, O_PARAM, "resize_h"},
    {"mode", 0, 1, O_PARAM, "resize_mode"},
    {"max-side", 0, 1, O_MAX_SIDE, NULL},
    {"backend", 0, 1, O_PARAM, "format"},
    {"threads", 'j', 1, O_PARAM, "threads"},
    {"max-pixels", 0, 1, O_MAX_PIXELS, NULL},
    {"split", 0, 1, O_PARAM, "split_bytes"},
    {"encode-type", 0, 1, O_ENCODE_TYPE, NULL},
    {"list", 0, 1, O_PARAM, "list_file"},
    {"root", 0, 1, O_ROOT, NULL},
    {"shard", 0, 1, O_SHARD, NULL},
};
#define NOPTS (sizeof OPTS / sizeof *OPTS)

/* Compare a typed name (n bytes) with a canonical one, '_' matching '-'. */
int dc_name_eq(const char *typed, size_t n, const char *canon)
{
    size_t i = 0;
    for (; i < n && canon[i]; i++) {
        char a = typed[i] == '_' ? '-' : (char)tolower((unsigned char)typed[i]);
        char b = canon[i] == '_' ? '-' : canon[i];
        if (a != b) return 0;
    }
    return i == n && canon[i] == '\0';
}

static const opt_def *find_long(const char *name, size_t n)
{
    for (size_t i = 0; i < NOPTS; i++)
        if (dc_name_eq(name, n, OPTS[i].name)) return &OPTS[i];
    return NULL;
}

static const opt_def *find_short(char c)
{
    for (size_t i = 0; i < NOPTS; i++)
        if (OPTS[i].short_name && OPTS[i].short_name == c) return &OPTS[i];
    return NULL;
}

static const ld_param_desc *find_table_param(const char *name, size_t n)
{
    size_t count = 0;
    const ld_param_desc *t = ld_convert_params(&count);
    return dc_param_find(t, count, name, n);
}

static int push(dc_opts *o, const dc_value *v)
{
    if (o->nparams == DC_MAX_PARAMS) return dc_usage_error("too many options");
    o->params[o->nparams++] = *v;
    return DC_EXIT_OK;
}

/* Record a shortcut's value of a parameter after checking it against the library's table. */
static int add_param(dc_opts *o, const char *flag, ld_convert_param id, int64_t v)
{
    size_t count = 0;
    const ld_param_desc *t = ld_convert_params(&count);
    dc_value val;
    int rc = dc_param_shortcut("", t, count, (int)id, flag, v, &val);
    return rc != DC_EXIT_OK ? rc : push(o, &val);
}

int64_t dc_param_value(const dc_opts *o, ld_convert_param id, int64_t def)
{
    for (int i = o->nparams - 1; i >= 0; i--)
        if (o->params[i].d->id == (int)id) return o->params[i].i;
    return def;
}

#define TRY(x)                                                                                     \
    do {                                                                                           \
        int rc_ = (x);                                                                             \
        if (rc_ != DC_EXIT_OK) return rc_;                                                         \
    } while (0)

/* Apply one of the command's own options or shortcuts (not O_PARAM). `val` is its value
 * (NULL for a switch), `on` the switch state. */
static int apply(dc_opts *o, const opt_def *d, const char *flag, const char *val, int on)
{
    int64_t v = 0, w = 0, h = 0;
    switch (d->id) {
    case O_PARAM: break;
    case O_HELP: o->cmd = DC_CMD_HELP; return DC_EXIT_OK;
    case O_VERSION: o->cmd = DC_CMD_VERSION; return DC_EXIT_OK;
    case O_QUIET: o->quiet = on; return DC_EXIT_OK;
    case O_VERBOSE: o->verbose = on; return DC_EXIT_OK;
    case O_RGB:
        return add_param(o, flag, LD_C_CHANNEL_ORDER, on ? LD_CHANNELS_RGB : LD_CHANNELS_BGR);
    case O_BGR:
        return add_param(o, flag, LD_C_CHANNEL_ORDER, on ? LD_CHANNELS_BGR : LD_CHANNELS_RGB);
    case O_RESIZE:
        if (!dc_parse_geometry(val, &w, &h))
            return dc_usage_error("%s '%s': expected N (for NxN) or WxH, e.g. --resize 224 or "
                                  "--resize 256x192",
                                  flag, val);
        TRY(add_param(o, flag, LD_C_RESIZE_W, w));
        return add_param(o, flag, LD_C_RESIZE_H, h);
    case O_MAX_SIDE:
        if (!dc_parse_i64(val, &v)) return dc_usage_error("%s: '%s' is not an integer", flag, val);
        if (v <= 0) return dc_usage_error("%s %s: the maximum side must be at least 1", flag, val);
        TRY(add_param(o, flag, LD_C_RESIZE_MODE, LD_RESIZE_MAX));
        TRY(add_param(o, flag, LD_C_RESIZE_W, v));
        return add_param(o, flag, LD_C_RESIZE_H, v);
    case O_MAX_PIXELS:
        /* WxH: a product beyond int64 is out of range, not a wrapped (negative) count */
        if (!dc_parse_i64(val, &v) &&
            !(dc_parse_geometry(val, &w, &h) && (v = w > INT64_MAX / h ? INT64_MAX : w * h, 1)))
            return dc_usage_error("%s '%s': expected a pixel count (e.g. 100000000) or WxH", flag,
                                  val);
        return add_param(o, flag, LD_C_MAX_PIXELS, v);
    case O_ENCODE_TYPE:
        /* convert_imageset: an encode type alone already makes encoded records */
        if (strcasecmp(val, "png") == 0) return add_param(o, flag, LD_C_ENCODE_PNG, 1);
        if (strcasecmp(val, "jpg") == 0 || strcasecmp(val, "jpeg") == 0) {
            TRY(add_param(o, flag, LD_C_ENCODE_PNG, 0));
            return add_param(o, flag, LD_C_ENCODED, 1);
        }
        if (*val == '\0') /* convert_imageset's default: keep the files' own encoding */
            return DC_EXIT_OK;
        return dc_usage_error("%s '%s': expected jpg or png", flag, val);
    case O_ROOT: o->root = val; return DC_EXIT_OK;
    case O_SHARD: {
        int k, n;
        TRY(dc_shard_parse(flag, val, &k, &n, o->shard_from, sizeof o->shard_from,
                           &o->shard_derived));
        TRY(add_param(o, flag, LD_C_SHARD_COUNT, n));
        return add_param(o, flag, LD_C_SHARD_INDEX, k);
    }
    }
    return DC_EXIT_OK;
}

/* A value of a table parameter (given under its name or an O_PARAM alias). */
static int apply_param(dc_opts *o, const ld_param_desc *pd, const char *flag, const char *val)
{
    if (pd->id == LD_C_LIST_FILE) { /* the input's list: dataconv.c checks and passes it */
        o->list = val;
        return DC_EXIT_OK;
    }
    if (pd->id == LD_C_FORMAT && strcasecmp(val, "leveldb") == 0)
        return dc_usage_error("%s leveldb: LevelDB is not supported; use --backend lmdb "
                              "(Caffe's Data layer reads both) or --format hdf5",
                              flag);
    dc_value v;
    TRY(dc_param_parse("", pd, flag, val, &v));
    return push(o, &v);
}

/* Is `a` an option (as opposed to a positional like "-" or "-5")? */
static int is_option(const char *a)
{
    return a[0] == '-' && a[1] != '\0' && !isdigit((unsigned char)a[1]);
}

int dc_parse(int argc, char **argv, dc_opts *o)
{
    memset(o, 0, sizeof *o);
    o->cmd = DC_CMD_CONVERT;
    int only_pos = 0;
    int first = 1;
    if (argc > 1) {
        if (strcmp(argv[1], "convert") == 0) {
            first = 2;
        } else if (strcmp(argv[1], "info") == 0) {
            o->cmd = DC_CMD_INFO;
            first = 2;
        } else if (strcmp(argv[1], "mean") == 0) {
            o->cmd = DC_CMD_MEAN;
            first = 2;
        } else if (strcmp(argv[1], "bench") == 0) {
            o->cmd = DC_CMD_BENCH;
            return DC_EXIT_OK;
        } else if (strcmp(argv[1], "merge") == 0) {
            o->cmd = DC_CMD_MERGE; /* arguments parsed by merge.c: any number of parts */
            return DC_EXIT_OK;
        } else if (strcmp(argv[1], "plan") == 0) {
            o->cmd = DC_CMD_PLAN; /* arguments parsed by plan.c */
            return DC_EXIT_OK;
        } else if (strcmp(argv[1], "help") == 0) {
            o->cmd = DC_CMD_HELP;
            return DC_EXIT_OK;
        }
    }
    dc_command sub = o->cmd;
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        if (only_pos || !is_option(a)) {
            if (o->npos == DC_MAX_POS)
                return dc_usage_error("too many arguments (from '%s' on)", a);
            o->pos[o->npos++] = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            only_pos = 1;
            continue;
        }
        const opt_def *d = NULL;
        const char *val = NULL; /* inline value */
        const char *name;
        size_t n;
        if (a[1] != '-' && (a[2] == '\0' || (find_short(a[1]) && find_short(a[1])->takes_value &&
                                             isdigit((unsigned char)a[2])))) {
            /* short option: -j 4, -j4, -q */
            d = find_short(a[1]);
            if (!d) return dc_usage_error("unknown option '%s'", a);
            if (a[2]) val = a + 2;
            name = a + 1;
            n = 1;
        } else {
            name = a + (a[1] == '-' ? 2 : 1);
            const char *eq = strchr(name, '=');
            n = eq ? (size_t)(eq - name) : strlen(name);
            val = eq ? eq + 1 : NULL;
            d = find_long(name, n);
        }
        char flag[40]; /* the flag as typed, without "=value", for messages */
        snprintf(flag, sizeof flag, "%.*s", (int)(name - a + (ptrdiff_t)n), a);
        int on = 1;
        const ld_param_desc *pd = d ? NULL : find_table_param(name, n);
        if (!d && !pd && n > 2 && name[0] == 'n' && name[1] == 'o') {
            /* gflags negation: --noshuffle, -nogray */
            d = find_long(name + 2, n - 2);
            if (d && d->takes_value) d = NULL;
            pd = d ? NULL : find_table_param(name + 2, n - 2);
            if (pd && dc_param_takes_value(pd)) pd = NULL;
            on = 0;
        }
        if (d && d->id == O_PARAM) { /* an alias: from here on, the table parameter */
            pd = find_table_param(d->param, strlen(d->param));
            if (!pd) return dc_usage_error("%s: this libdata has no parameter %s", flag, d->param);
            d = NULL;
        }
        if (d && !d->takes_value) {
            if (val) {
                int b;
                if (!dc_parse_bool(val, &b))
                    return dc_usage_error("%s: expected true or false, got '%s'", flag, val);
                on = on ? b : !b;
            }
            TRY(apply(o, d, flag, NULL, on));
            continue;
        }
        if (!d && !pd) return dc_usage_error("unknown option '%s'", flag);
        if (pd && !dc_param_takes_value(pd)) {
            /* a boolean parameter of the table is a switch, like the named ones */
            dc_value v;
            TRY(dc_param_parse("", pd, flag, val, &v));
            if (!on) v.i = !v.i;
            TRY(push(o, &v));
            continue;
        }
        if (!val) {
            if (i + 1 >= argc) return dc_usage_error("%s needs a value", flag);
            val = argv[++i];
        }
        TRY(d ? apply(o, d, flag, val, 1) : apply_param(o, pd, flag, val));
    }
    if (o->cmd == DC_CMD_HELP || o->cmd == DC_CMD_VERSION) return DC_EXIT_OK;
    o->cmd = sub;
    /* convert_imageset treats a size of 0 as "do not resize": one side alone is a mistake */
    if ((dc_param_value(o, LD_C_RESIZE_W, 0) > 0) != (dc_param_value(o, LD_C_RESIZE_H, 0) > 0))
        return dc_usage_error("--resize_width and --resize_height must be given together "
                              "(or use --resize WxH)");
    return DC_EXIT_OK;
}

void dc_print_help(void *fp)
{
    FILE *f = fp;
    fputs(
        "Usage:\n"
        "  dataconv [convert] SRC OUT [options]           SRC: a folder with one sub-folder per "
        "class\n"
        "  dataconv --list LIST --root ROOT OUT [options] LIST: 'relative/path label' lines\n"
        "  dataconv ROOT/ LIST DB [options]               convert_imageset's argument order (LMDB\n"
        "                                                 unless DB ends in .h5/.hdf5 or "
        "--format)\n"
        "  dataconv info FILE                             describe a dataset (HDF5, LMDB, split "
        ".txt)\n"
        "  dataconv mean INPUT [OUT.binaryproto]          per-pixel mean for Caffe's mean_file, "
        "and\n"
        "                                                 the per-channel means (mean_value)\n"
        "  dataconv bench FILE [--batch N --shuffle ...]  read it with libdata's reader: "
        "images/s,\n"
        "                                                 memory ('dataconv bench --help')\n"
        "  dataconv merge OUT [PART...]                   one dataset from the parts of\n"
        "                                                 --shard K/N runs ('dataconv merge -h')\n"
        "  dataconv plan NET.prototxt [--solver S] [--ram 4G]  will a Caffe net fit in memory:\n"
        "                                                 components, largest batch ('dataconv\n"
        "                                                 plan -h')\n"
        "\n"
        "OUT ending in .lmdb (or an existing directory) is written as LMDB, anything else as "
        "HDF5.\n"
        "Without --quality/--encoded, pixels are stored raw (uint8 NxCxHxW) and every image must\n"
        "end up the same size: give --resize unless all inputs already match.\n"
        "\n"
        "Images: JPEG, PNG, TIFF, WebP, GIF, BMP, PNM, by extension (.jpg .jpeg .jpe .jfif .png\n"
        ".tif .tiff .webp .gif .bmp .dib .pgm .ppm .pbm .pnm), decoded by content; -v names the\n"
        "files that are not listed. Multi-page TIFF, animated GIF/WebP: the first page/frame.\n"
        "SRC's sub-folders are the classes (label = index in sorted name order); image files\n"
        "directly in SRC, and sub-folders that are datasets (LMDB, temporaries), are skipped with\n"
        "a warning. --flat: SRC has no class folders, every image below it gets label 0.\n"
        "SRC may be a tar archive (.tar, .tar.gz/.tgz, .tar.bz2, .tar.xz, .tar.zst), read in "
        "place\n"
        "like the folder it holds; a top-level member that is a tar (ILSVRC2012 train) is a "
        "class.\n"
        "OUT must not be, or lie inside, an input (SRC, LIST or a listed image): refused, exit 1.\n"
        "\n"
        "Shortcuts (each sets parameters listed below):\n"
        "  --resize N | WxH       resize_w and resize_h: resize to NxN or WxH\n"
        "  --mode M               resize_mode; also stretch (= squash) and fit (= pad)\n"
        "  --max-side N           resize_mode max with resize_w = resize_h = N\n"
        "  --rgb | --bgr          channel_order rgb | bgr\n"
        "  --format, --backend hdf5|h5|lmdb|auto    format\n"
        "  --max-pixels N|WxH     max_pixels, also as WxH\n"
        "  --split SIZE           split_bytes: HDF5 files of at most SIZE bytes of data (K/M/G\n"
        "                         suffix) plus OUT-stem.txt listing them, for Caffe's HDF5Data\n"
        "  --encode-type jpg|png  encoded, and encode_png for png\n"
        "  --list LIST --root ROOT  list_file and the folder its paths are relative to\n"
        "  --shard K/N            shard_index K and shard_count N: convert part K (from 0) of N\n"
        "                         into OUT-0000K-of-0000N.h5 (.lmdb); an existing complete part\n"
        "                         of the same run is skipped. --shard auto takes K/N from\n"
        "                         mpirun/srun (OMPI_COMM_WORLD_*, PMI_*) or a Slurm array\n"
        "                         (SLURM_ARRAY_TASK_*); --shard auto/N from JOB_COMPLETION_INDEX\n"
        "                         (Kubernetes). Then: dataconv merge OUT PARTS...\n"
        "  -j N                   threads;  --grey: gray\n"
        "  -q, --quiet            print errors only\n"
        "  -v, --verbose          also print what the library decided (sizes, layout, threads)\n"
        "  -h, --help             this text;  -V, --version   versions of dataconv and libdata\n"
        "\n"
        "convert_imageset spellings are accepted: -gray -shuffle -backend lmdb -resize_width W\n"
        "-resize_height H -check_size -encoded -encode_type png, also --flag=value and --noflag.\n"
        "\n"
        "Examples:\n"
        "  dataconv images/ train.h5 --resize 224 --quality 70   JPEG q70 at 224x224, compressed\n"
        "  dataconv images/ train.h5 --resize 256                raw pixels for Caffe's HDF5Data\n"
        "  dataconv images/ train.lmdb --resize 256 --shuffle    Caffe Datum LMDB, shuffled\n"
        "  dataconv --list train.txt --root images/ train.h5 --resize 227x227\n"
        "  dataconv -resize_width=256 -resize_height=256 -shuffle images/ train.txt train_lmdb\n"
        "  dataconv images/ big.h5 --resize 224 --split 1G       files of at most 1 GiB + big.txt\n"
        "  dataconv images/ train.h5 --resize 224 --shard 3/8    part 3 of 8: "
        "train-00003-of-00008.h5\n"
        "  dataconv --list train.txt --root JPEGImages --masks SegmentationClass seg.h5 \\\n"
        "      --resize 256 --mode pad               VOC segmentation: masks as /label\n"
        "  dataconv info train.h5\n"
        "  dataconv mean train_lmdb mean.binaryproto\n"
        "  dataconv bench train.h5 --batch 256 --shuffle --epochs 3\n"
        "\n"
        "Exit codes:\n"
        "  0    output written (skipped files, if any, were named on stderr)\n"
        "  1    conversion failed: I/O error, out of memory, an impossible option combination\n"
        "  2    usage error: bad command line, nothing was read or written\n"
        "  3    input refused: --strict stopped at a bad file, or no usable image was found\n"
        "  130  interrupted (Ctrl-C), 143 terminated (SIGTERM): nothing left under OUT\n",
        f);
    size_t n = 0;
    const ld_param_desc *t = ld_convert_params(&n);
    fputs("\nParameters (libdata's ld_convert_params table; --NAME VALUE, --NAME=VALUE, a\n"
          "switch for on/off ones, which also take =true/=false and --noNAME):\n",
          f);
    dc_param_help(f, t, n);
}
