/*
 * dataconv command-line parsing: argv -> a dc_opts value. No I/O except the messages of
 * usage errors (stderr), so every rule of the command line lives here and in one place.
 *
 * Flags are accepted the way both communities type them:
 *  - GNU style: --quality 70, --quality=70, -j 4, -j4
 *  - gflags style (Caffe's convert_imageset): -gray, -resize_width=256, --check_size,
 *    -shuffle=true, --noshuffle. Underscores and dashes are interchangeable in names.
 * Every parameter of the library's table (ld_convert_params) is a flag under its table name,
 * parsed by its type (params.h), so a parameter added to the library is reachable without a
 * CLI change; the named options below are shortcuts and convert_imageset aliases.
 */
#ifndef DATACONV_OPTIONS_H
#define DATACONV_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include <libdata/convert.h>

#include "params.h"

/** Exit codes (documented in --help and docs/cli.md). */
enum {
    DC_EXIT_OK = 0,        /* output written (files may have been skipped, with warnings) */
    DC_EXIT_FAIL = 1,      /* conversion failed: I/O, out of memory, invalid combination */
    DC_EXIT_USAGE = 2,     /* bad command line; nothing was read or written */
    DC_EXIT_BAD_INPUT = 3, /* input data refused: --strict hit a bad file, no usable image */
    DC_EXIT_SIGINT = 130,  /* interrupted by Ctrl-C (128 + SIGINT); nothing written */
    DC_EXIT_SIGTERM = 143  /* terminated (128 + SIGTERM); nothing written */
};

typedef enum dc_command {
    DC_CMD_CONVERT = 0,
    DC_CMD_INFO,
    DC_CMD_BENCH, /* arguments parsed by bench.c from argv[2] on */
    DC_CMD_MEAN,
    DC_CMD_MERGE, /* arguments parsed by merge.c from argv[2] on */
    DC_CMD_HELP,
    DC_CMD_VERSION,
    DC_CMD_PLAN /* arguments parsed by plan.c from argv[2] on */
} dc_command;

#define DC_MAX_PARAMS 64
#define DC_MAX_POS 8

typedef struct dc_opts {
    dc_command cmd;
    int quiet;
    int verbose;
    const char *pos[DC_MAX_POS]; /* positional arguments (after the subcommand word) */
    int npos;
    const char *list;               /* --list FILE */
    const char *root;               /* --root DIR */
    dc_value params[DC_MAX_PARAMS]; /* library parameters, in command-line order */
    int nparams;
    char shard_from[128]; /* --shard auto: the variables K/N came from ("" otherwise) */
    int shard_derived;    /* --shard auto: N from a Slurm array's MIN/MAX (shard.h) */
} dc_opts;

/**
 * Parse argv. On a usage error, print "dataconv: <what>" plus a hint to stderr and return
 * DC_EXIT_USAGE; otherwise return DC_EXIT_OK. Values are checked against the library's
 * bounds (ld_convert_param_bounds) so an out-of-range value is a usage error that names
 * the valid range.
 */
int dc_parse(int argc, char **argv, dc_opts *o);

/** Last value given for a parameter, or `def` if it was not given. */
int64_t dc_param_value(const dc_opts *o, ld_convert_param id, int64_t def);

/* Value parsers shared with the bench command; each returns 1 on success, 0 on bad input. */
int dc_parse_i64(const char *s, int64_t *out);
int dc_parse_geometry(const char *s, int64_t *w, int64_t *h);   /* "N" or "WxH", both > 0 */
int dc_parse_size(const char *s, int64_t *out);                 /* bytes, K/M/G/T binary suffix */
int dc_parse_bool(const char *s, int *out);                     /* true/false/1/0/yes/no */
int dc_name_eq(const char *typed, size_t n, const char *canon); /* '_' == '-', case-folded */

/** Print the full --help text to `f`. */
void dc_print_help(void *f);

/** Print "dataconv: <fmt>\nTry 'dataconv --help' ..." to stderr; returns DC_EXIT_USAGE. */
int dc_usage_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/**
 * After a dataset command (info, bench) failed on `path`: when it is a folder that is not an
 * LMDB database, print how to convert it (the library says what it is, in its own terms).
 */
void dc_hint_convert(const char *path);

#endif /* DATACONV_OPTIONS_H */
