/*
 * Private to the source module: the ld_source record and the helpers that src_dir.c and
 * src_list.c use to fill it. Strings live in a block arena so that items can point into it
 * without being invalidated as the arena grows (blocks never move).
 */
#ifndef LD_SRC_INTERNAL_H
#define LD_SRC_INTERNAL_H

#include "source.h"

typedef struct ld_arena_block ld_arena_block;

struct ld_source {
    ld_item *items;
    size_t n, cap;
    const char **classes;
    size_t n_classes, cap_classes;
    ld_arena_block *arena; /* newest block first */
};

/* A new, empty source. LD_OK or LD_ENOMEM. */
int ld__source_new(ld_source **out);

/* Copy n bytes plus a NUL into the arena; NULL when out of memory. */
char *ld__source_strndup(ld_source *s, const char *p, size_t n);

/* Append an item whose path is `root` joined with `rel` (rel as-is when root is NULL/empty
 * or rel is absolute). LD_OK or LD_ENOMEM. */
int ld__source_add_item(ld_source *s, const char *root, const char *rel, size_t rel_len,
                        int32_t label);

/* Append a class name (copied). LD_OK or LD_ENOMEM. */
int ld__source_add_class(ld_source *s, const char *name, size_t len);

/* Sort the items by relative path (strcmp): the enumeration order of folder mode. */
void ld__source_sort_items(ld_source *s);

#endif /* LD_SRC_INTERNAL_H */
