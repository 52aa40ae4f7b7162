/*
 * Flags generated from the library's parameter tables (ld_convert_params, ld_reader_params):
 * every parameter is a flag under its table name (dashes or underscores), parsed by its type
 * (integer, boolean switch, enum choice name, number, list of numbers, text) and listed in the
 * help with its default, so the commands need no hand-written copy of the table. dataconv and
 * `dataconv bench` add only their shortcuts and aliases (--resize WxH, --rgb, --crop WxH...).
 */
#ifndef DATACONV_PARAMS_H
#define DATACONV_PARAMS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <libdata/convert.h>
#include <libdata/reader.h>

/** One parsed parameter value, in command-line order. */
typedef struct dc_value {
    const ld_param_desc *d;
    int64_t i;  /* INT, BOOL, ENUM */
    double x;   /* DOUBLE */
    float f[4]; /* FLOATS */
    size_t nf;
    const char *s; /* STRING (points into argv) */
    char flag[40]; /* the flag as typed, for messages */
} dc_value;

/** The row named `name` (n bytes; '_' == '-', case-folded) of a table, or NULL. */
const ld_param_desc *dc_param_find(const ld_param_desc *t, size_t count, const char *name,
                                   size_t n);
/** The row of `id`, or NULL. */
const ld_param_desc *dc_param_by_id(const ld_param_desc *t, size_t count, int id);

/** 1 if the parameter takes a value on the command line (all but booleans). */
int dc_param_takes_value(const ld_param_desc *d);

/**
 * Parse `val` for parameter `d` into `out` (a boolean takes NULL = true, or true/false/1/0;
 * an enum its choice names or one of the aliases the commands document: stretch, fit, h5, seq,
 * block, u8, f32, float, i32).
 * `cmd` prefixes usage messages ("" or "bench: "). @return DC_EXIT_OK or DC_EXIT_USAGE (the
 * message, naming the flag and what it accepts, is printed).
 */
int dc_param_parse(const char *cmd, const ld_param_desc *d, const char *flag, const char *val,
                   dc_value *out);

/**
 * A shortcut's value `v` of parameter `id` of table t (INT, BOOL or ENUM) into `out`, checked
 * against the parameter's bounds; `flag` is the shortcut as typed. @return DC_EXIT_OK or
 * DC_EXIT_USAGE (the message is printed).
 */
int dc_param_shortcut(const char *cmd, const ld_param_desc *t, size_t count, int id,
                      const char *flag, int64_t v, dc_value *out);

/** Print one line per parameter: flag, value syntax, help, default. */
void dc_param_help(FILE *f, const ld_param_desc *t, size_t count);

/** Hand one value to the library. @return the library's status. */
int dc_param_apply_convert(ld_convert *c, const dc_value *v);
int dc_param_apply_reader(ld_reader *r, const dc_value *v);

/** The flag spelling of a library parameter name ("max_pixels" -> "--max-pixels") into buf. */
const char *dc_param_flag(const char *name, char *buf, size_t size);

/**
 * How a failure's parameter (ld_error_detail.param, an id of ld_convert_params() or, with
 * `reader` set, of ld_reader_params()) is spelled on the command line, for the line after the
 * library's message: the shortcut when one sets it (--resize WxH for resize_w/resize_h,
 * --mode for resize_mode, --crop WxH for crop_w/crop_h), else the generated flag. `*name`
 * receives the parameter's table name. @return buf, or NULL when id is in no table (-1).
 */
const char *dc_param_cli_spelling(int reader, int id, const char **name, char *buf, size_t size);

#endif /* DATACONV_PARAMS_H */
