/*
 * The parameter values of a handle (ld_convert, ld_reader), kept by its table of ld_param_desc
 * rows (common/ld_params.h builds them; ld_convert_params() / ld_reader_params() list them).
 *
 * Each handle numbers its own ids (they overlap on purpose: see libdata.h): 1..last_low for the
 * integer, boolean and enum parameters (and any other type), LD_PARAM_HIGH_ID..last_high for
 * the strings and the other non-integer ones. Both ranges are dense, so an id maps to a slot
 * (id - 1, or last_low + id - LD_PARAM_HIGH_ID) in O(1): the values are indexed by slot, and a
 * slot -> row map (filled once at init; the table's row order is the public listing order,
 * not the id order) gives the row that checks a value. The store holds the integer values
 * (defaults from the table) and the strings (unset, NULL, until set: def_text says what unset
 * means); a handle keeps the values of other types itself.
 *
 * A handle declares its table with LD_PARAM_TABLE_DEFINE, which checks at compile time that the id
 * ranges have exactly one row per id: a row added without moving the last id, or a last id
 * moved without a row, does not compile.
 */
#ifndef LD_PARAM_STORE_H
#define LD_PARAM_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "common/ld_internal.h"

#define LD_PARAM_HIGH_ID 100  /* the first id of the high range (strings: LD_C_LIST_FILE...) */
#define LD_PARAM_STORE_MAX 48 /* rows a table may have */

/* The table of one handle: who names it in messages ("convert", "reader") and in the setters'
 * names (ld_<who>_set_str). */
typedef struct ld_param_table {
    const char *who;
    const ld_param_desc *rows;
    size_t n;
    int last_low, last_high; /* ids 1..last_low and LD_PARAM_HIGH_ID..last_high */
} ld_param_table;

/* Define `static const ld_param_table name` for the array `rows`, whose ids are 1..last_low and
 * LD_PARAM_HIGH_ID..last_high, one row each. The count is checked here, the rows' ids by
 * ld__params_init: a row whose id is outside the ranges, or repeats one, is skipped, which
 * leaves a slot without a row, and the setters and getters refuse that id as unknown. */
#define LD_PARAM_TABLE_DEFINE(name, who, rows, last_low, last_high)                                \
    static const ld_param_table name = {who, rows, sizeof(rows) / sizeof((rows)[0]), last_low,     \
                                        last_high};                                                \
    _Static_assert((last_low) + (last_high)-LD_PARAM_HIGH_ID + 1 ==                                \
                       (int)(sizeof(rows) / sizeof((rows)[0])),                                    \
                   #rows ": one row per parameter id, 1.." #last_low " and 100.." #last_high);     \
    _Static_assert(sizeof(rows) / sizeof((rows)[0]) <= LD_PARAM_STORE_MAX,                         \
                   #rows ": raise LD_PARAM_STORE_MAX")

typedef struct ld_param_store {
    const ld_param_table *t;
    uint8_t row[LD_PARAM_STORE_MAX]; /* slot -> row of t->rows; UINT8_MAX: none */
    int64_t val[LD_PARAM_STORE_MAX]; /* by slot: INT, BOOL, ENUM values */
    char *str[LD_PARAM_STORE_MAX];   /* by slot: STRING values (owned), NULL = unset */
} ld_param_store;

/* The slot of `id` in table t, or -1 when it has none. */
static inline int ld__param_slot(const ld_param_table *t, int id)
{
    if (id >= 1 && id <= t->last_low) return id - 1;
    if (id >= LD_PARAM_HIGH_ID && id <= t->last_high) return t->last_low + id - LD_PARAM_HIGH_ID;
    return -1;
}

/* Fill s for table t: every integer value at its default, every string unset. */
void ld__params_init(ld_param_store *s, const ld_param_table *t);

/* Free the strings (s itself belongs to its handle). */
void ld__params_free(ld_param_store *s);

/* The row of parameter `id`, or NULL when the table has none. O(1). */
const ld_param_desc *ld__params_row(const ld_param_store *s, int id);

/* Set an INT, BOOL or ENUM parameter after checking it (ld__param_check): LD_OK, or LD_EINVAL
 * with e naming the parameter ("WHO: unknown parameter ID", out of range, not one of its
 * values, a parameter of another type with the setter to use). */
int ld__params_set(ld_param_store *s, ld_err *e, int id, int64_t v);

/* Get an INT, BOOL or ENUM value: LD_OK, or LD_EINVAL (unknown id, another type; e untouched). */
int ld__params_get(const ld_param_store *s, int id, int64_t *v);

/* Set a STRING parameter to a copy of v (NULL: unset): LD_OK, LD_EINVAL (unknown id, another
 * type) or LD_ENOMEM; the old value is kept on failure. */
int ld__params_set_str(ld_param_store *s, ld_err *e, int id, const char *v);

/* The row of parameter `id` in table t, or NULL: for the queries without a handle
 * (ld_convert_param_bounds, ld_reader_param_bounds), which scan the table; the values go
 * through a store's O(1) map. */
const ld_param_desc *ld__param_table_row(const ld_param_table *t, int id);

/* The value of an INT, BOOL or ENUM parameter the handle knows it has (its own enum). t is
 * s->t, passed as the handle's static table so that the slot of a constant id is a constant. */
static inline int64_t ld__params_int(const ld_param_store *s, const ld_param_table *t, int id)
{
    return s->val[ld__param_slot(t, id)];
}

/* The value of a STRING parameter the handle knows it has (NULL when unset); t as above. */
static inline const char *ld__params_str(const ld_param_store *s, const ld_param_table *t, int id)
{
    return s->str[ld__param_slot(t, id)];
}

/* Unset a STRING parameter the handle knows it has (frees its value). */
void ld__params_clear_str(ld_param_store *s, int id);

#endif
