/* The parameter values of a handle, kept by its ld_param_desc table (ld_param_store.h). */
#include "common/ld_param_store.h"

#include <stdlib.h>

void ld__params_init(ld_param_store *s, const ld_param_table *t)
{
    s->t = t;
    for (size_t k = 0; k < LD_PARAM_STORE_MAX; k++) {
        s->row[k] = UINT8_MAX;
        s->val[k] = 0;
        s->str[k] = NULL;
    }
    for (size_t k = 0; k < t->n; k++) {
        const int slot = ld__param_slot(t, t->rows[k].id);
        if (slot < 0 || s->row[slot] != UINT8_MAX) continue; /* a table error: the id is unknown */
        s->row[slot] = (uint8_t)k;
        s->val[slot] = t->rows[k].def;
    }
}

void ld__params_free(ld_param_store *s)
{
    for (size_t k = 0; k < LD_PARAM_STORE_MAX; k++) {
        free(s->str[k]);
        s->str[k] = NULL;
    }
}

const ld_param_desc *ld__params_row(const ld_param_store *s, int id)
{
    const int slot = ld__param_slot(s->t, id);
    if (slot < 0 || s->row[slot] == UINT8_MAX) return NULL;
    return &s->t->rows[s->row[slot]];
}

int ld__params_set(ld_param_store *s, ld_err *e, int id, int64_t v)
{
    const ld_param_desc *d = ld__params_row(s, id);
    if (!d) return ld__err(e, LD_EINVAL, "%s: unknown parameter %d", s->t->who, id);
    const int rc = ld__param_check(e, s->t->who, d, v);
    if (rc < 0) return rc;
    s->val[ld__param_slot(s->t, id)] = v;
    return LD_OK;
}

static int is_integer(int type)
{
    return type == LD_PARAM_INT || type == LD_PARAM_BOOL || type == LD_PARAM_ENUM;
}

int ld__params_get(const ld_param_store *s, int id, int64_t *v)
{
    const ld_param_desc *d = ld__params_row(s, id);
    if (!d || !is_integer(d->type)) return LD_EINVAL;
    *v = s->val[ld__param_slot(s->t, id)];
    return LD_OK;
}

int ld__params_set_str(ld_param_store *s, ld_err *e, int id, const char *v)
{
    const ld_param_desc *d = ld__params_row(s, id);
    if (!d) return ld__err(e, LD_EINVAL, "%s: unknown parameter %d", s->t->who, id);
    if (d->type != LD_PARAM_STRING) return ld__param_wrong_type(e, s->t->who, d);
    char *copy = NULL;
    if (v && !(copy = ld__strdup(v))) return ld__err(e, LD_ENOMEM, "out of memory");
    char **slot = &s->str[ld__param_slot(s->t, id)];
    free(*slot);
    *slot = copy;
    return LD_OK;
}

void ld__params_clear_str(ld_param_store *s, int id)
{
    char **slot = &s->str[ld__param_slot(s->t, id)];
    free(*slot);
    *slot = NULL;
}

const ld_param_desc *ld__param_table_row(const ld_param_table *t, int id)
{
    for (size_t k = 0; k < t->n; k++)
        if (t->rows[k].id == id) return &t->rows[k];
    return NULL;
}
