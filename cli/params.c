/*
 * Flags from the library's parameter tables: parsing by type and help lines. See params.h.
 */
#include "params.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

const ld_param_desc *dc_param_find(const ld_param_desc *t, size_t count, const char *name, size_t n)
{
    for (size_t i = 0; t && i < count; i++)
        if (t[i].name && dc_name_eq(name, n, t[i].name)) return &t[i];
    return NULL;
}

const ld_param_desc *dc_param_by_id(const ld_param_desc *t, size_t count, int id)
{
    for (size_t i = 0; t && i < count; i++)
        if (t[i].id == id) return &t[i];
    return NULL;
}

int dc_param_takes_value(const ld_param_desc *d)
{
    return d->type != LD_PARAM_BOOL;
}

const char *dc_param_cli_spelling(int reader, int id, const char **name, char *buf, size_t size)
{
    size_t count = 0;
    const ld_param_desc *t = reader ? ld_reader_params(&count) : ld_convert_params(&count);
    const ld_param_desc *d = id >= 0 ? dc_param_by_id(t, count, id) : NULL;
    if (!d) return NULL;
    *name = d->name;
    if (!reader && (id == LD_C_RESIZE_W || id == LD_C_RESIZE_H))
        snprintf(buf, size, "--resize WxH");
    else if (!reader && id == LD_C_RESIZE_MODE)
        snprintf(buf, size, "--mode");
    else if (reader && (id == LD_R_CROP_W || id == LD_R_CROP_H))
        snprintf(buf, size, "--crop WxH");
    else
        dc_param_flag(d->name, buf, size);
    return buf;
}

const char *dc_param_flag(const char *name, char *buf, size_t size)
{
    snprintf(buf, size, "--%s", name);
    for (char *p = buf + 2; *p; p++)
        if (*p == '_') *p = '-';
    return buf;
}

/* An enum's choice names: "a|b|c" with sep "|", or "a, b or c" with sep NULL. */
static void choice_list(const ld_param_desc *d, char *buf, size_t size, const char *sep)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < d->nchoices; i++) {
        const char *before = i == 0 ? "" : sep ? sep : i + 1 == d->nchoices ? " or " : ", ";
        int k = snprintf(buf + len, size - len, "%s%s", before, d->choices[i].name);
        if (k < 0 || (size_t)k >= size - len) break;
        len += (size_t)k;
    }
}

/* Words the commands accept for an enum besides its choice names (convert_imageset's and
 * short spellings), by parameter name. A name in both tables (channel_order, seed, threads)
 * means the same thing in both, so its aliases apply to both. */
static const struct {
    const char *param, *word, *choice;
} ALIASES[] = {
    {"resize_mode", "stretch", "squash"},
    {"resize_mode", "fit", "pad"},
    {"format", "h5", "hdf5"},
    {"order", "seq", "sequential"},
    {"order", "block", "block_shuffle"},
    {"dtype", "u8", "uint8"},
    {"dtype", "f32", "float32"},
    {"dtype", "u16", "uint16"},
    {"dtype", "float", "float32"},
    {"label_dtype", "i32", "int32"},
    {"label_dtype", "f32", "float32"},
    {"label_dtype", "float", "float32"},
};

/* The choice name `val` stands for: an alias's choice, else `val` itself. */
static const char *unalias(const ld_param_desc *d, const char *val)
{
    for (size_t i = 0; i < sizeof ALIASES / sizeof *ALIASES; i++)
        if (strcmp(d->name, ALIASES[i].param) == 0 && dc_name_eq(val, strlen(val), ALIASES[i].word))
            return ALIASES[i].choice;
    return val;
}

/* 1..4 comma-separated finite numbers. */
static int parse_floats(const char *s, float *out, size_t max, size_t *n)
{
    *n = 0;
    while (*s) {
        char *end;
        errno = 0;
        double v = strtod(s, &end);
        if (end == s || *n == max || !isfinite(v) || !isfinite((float)v)) return 0;
        out[(*n)++] = (float)v;
        s = end;
        while (*s == ' ')
            s++;
        if (*s == ',')
            s++;
        else if (*s)
            return 0;
    }
    return *n > 0;
}

int dc_param_parse(const char *cmd, const ld_param_desc *d, const char *flag, const char *val,
                   dc_value *out)
{
    memset(out, 0, sizeof *out);
    out->d = d;
    snprintf(out->flag, sizeof out->flag, "%s", flag);
    char names[200];
    switch (d->type) {
    case LD_PARAM_BOOL: {
        int b = 1;
        if (val && !dc_parse_bool(val, &b))
            return dc_usage_error("%s%s: expected true or false, got '%s'", cmd, flag, val);
        out->i = b;
        return DC_EXIT_OK;
    }
    case LD_PARAM_ENUM: {
        const char *name = unalias(d, val);
        for (size_t i = 0; i < d->nchoices; i++)
            if (dc_name_eq(name, strlen(name), d->choices[i].name)) {
                out->i = d->choices[i].value;
                return DC_EXIT_OK;
            }
        choice_list(d, names, sizeof names, NULL);
        return dc_usage_error("%s%s '%s': expected %s", cmd, flag, val, names);
    }
    case LD_PARAM_INT: {
        int64_t v;
        if (strcmp(d->unit, "bytes") == 0) {
            if (!dc_parse_size(val, &v))
                return dc_usage_error("%s%s '%s': expected a size in bytes, e.g. 2G, 500M, 64K",
                                      cmd, flag, val);
        } else if (!dc_parse_i64(val, &v)) {
            return dc_usage_error("%s%s: '%s' is not an integer", cmd, flag, val);
        }
        if (v < d->min || v > d->max)
            return dc_usage_error("%s%s %" PRId64 ": out of range (%s must be %" PRId64 "..%" PRId64
                                  ")",
                                  cmd, flag, v, d->name, d->min, d->max);
        out->i = v;
        return DC_EXIT_OK;
    }
    case LD_PARAM_DOUBLE: {
        char *end;
        errno = 0;
        out->x = strtod(val, &end);
        if (!*val || *end || errno || !isfinite(out->x))
            return dc_usage_error("%s%s '%s': expected a number, e.g. 0.00390625", cmd, flag, val);
        return DC_EXIT_OK;
    }
    case LD_PARAM_FLOATS:
        if (!parse_floats(val, out->f, (size_t)d->max < 4 ? (size_t)d->max : 4, &out->nf))
            return dc_usage_error("%s%s '%s': expected 1 to %" PRId64 " comma-separated "
                                  "numbers, e.g. 104,117,123",
                                  cmd, flag, val, d->max);
        return DC_EXIT_OK;
    default: out->s = val; return DC_EXIT_OK;
    }
}

int dc_param_shortcut(const char *cmd, const ld_param_desc *t, size_t count, int id,
                      const char *flag, int64_t v, dc_value *out)
{
    const ld_param_desc *d = dc_param_by_id(t, count, id);
    if (!d) return dc_usage_error("%s%s: this libdata has no parameter %d", cmd, flag, id);
    if (d->type != LD_PARAM_ENUM && (v < d->min || v > d->max))
        return dc_usage_error("%s%s %" PRId64 ": out of range (%s must be %" PRId64 "..%" PRId64
                              ")",
                              cmd, flag, v, d->name, d->min, d->max);
    memset(out, 0, sizeof *out);
    out->d = d;
    out->i = v;
    snprintf(out->flag, sizeof out->flag, "%s", flag);
    return DC_EXIT_OK;
}

/* Print `text` from column `col` (already reached), wrapping at `width` with lines indented
 * to `col`. */
static void wrap(FILE *f, const char *text, int col, int width)
{
    int at = col;
    const char *w = text;
    while (*w) {
        while (*w == ' ')
            w++;
        size_t n = strcspn(w, " ");
        if (!n) break;
        if (at > col && at + 1 + (int)n > width) {
            fprintf(f, "\n%*s", col, "");
            at = col;
        } else if (at > col) {
            fputc(' ', f);
            at++;
        }
        fwrite(w, 1, n, f);
        at += (int)n;
        w += n;
    }
    fputc('\n', f);
}

void dc_param_help(FILE *f, const ld_param_desc *t, size_t count)
{
    for (size_t i = 0; t && i < count; i++) {
        const ld_param_desc *d = &t[i];
        char flag[48], syntax[120], def[64];
        dc_param_flag(d->name, flag, sizeof flag);
        switch (d->type) {
        case LD_PARAM_BOOL: syntax[0] = '\0'; break;
        case LD_PARAM_ENUM: choice_list(d, syntax, sizeof syntax, "|"); break;
        case LD_PARAM_INT:
            if (strcmp(d->unit, "bytes") == 0)
                snprintf(syntax, sizeof syntax, "SIZE");
            else if (d->min == INT64_MIN || d->max == INT64_MAX)
                snprintf(syntax, sizeof syntax, "N");
            else
                snprintf(syntax, sizeof syntax, "%" PRId64 "..%" PRId64, d->min, d->max);
            break;
        case LD_PARAM_DOUBLE: snprintf(syntax, sizeof syntax, "X"); break;
        case LD_PARAM_FLOATS: snprintf(syntax, sizeof syntax, "A[,B,...]"); break;
        default: snprintf(syntax, sizeof syntax, "TEXT"); break;
        }
        if (d->type == LD_PARAM_BOOL)
            snprintf(def, sizeof def, "%s", d->def ? "on" : "off");
        else
            snprintf(def, sizeof def, "%s", d->def_text && *d->def_text ? d->def_text : "none");
        char left[180], text[600];
        snprintf(left, sizeof left, "%s%s%s", flag, *syntax ? " " : "", syntax);
        snprintf(text, sizeof text, "%s (default %s%s%s)", d->help, def,
                 *d->unit && d->type == LD_PARAM_INT ? " " : "",
                 d->type == LD_PARAM_INT ? d->unit : "");
        if (strlen(left) > 24)
            fprintf(f, "  %s\n%27s", left, "");
        else
            fprintf(f, "  %-24s ", left);
        wrap(f, text, 27, 92);
    }
}

int dc_param_apply_convert(ld_convert *c, const dc_value *v)
{
    if (v->d->type == LD_PARAM_STRING)
        return ld_convert_set_str(c, (ld_convert_param)v->d->id, v->s);
    return ld_convert_set(c, (ld_convert_param)v->d->id, v->i);
}

int dc_param_apply_reader(ld_reader *r, const dc_value *v)
{
    const ld_reader_param p = (ld_reader_param)v->d->id;
    switch (v->d->type) {
    case LD_PARAM_STRING: return ld_reader_set_str(r, p, v->s);
    case LD_PARAM_DOUBLE: return ld_reader_set_double(r, p, v->x);
    case LD_PARAM_FLOATS: return ld_reader_set_floats(r, p, v->f, v->nf);
    default: return ld_reader_set(r, p, v->i);
    }
}
