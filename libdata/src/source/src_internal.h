/*
 * Private to the source module: the ld_source record and the helpers that src_dir.c and
 * src_list.c use to fill it. Strings live in a block arena so that items can point into it
 * without being invalidated as the arena grows (blocks never move).
 *
 * An item is one pointer to an arena record "<int32 label><relative path>\0<label values>":
 * 8 bytes in the item array (what shuffle and sort move) plus 5 bytes and the relative path in
 * the arena, and with label vectors (list mode) K x 4 bytes of values after the path's NUL.
 * The root is kept once and joined with the relative path only when a caller asks for it.
 */
#ifndef LD_SRC_INTERNAL_H
#define LD_SRC_INTERNAL_H

#include "source/source.h"

typedef struct ld_arena_block ld_arena_block;
typedef struct ld_tar ld_tar;
typedef struct ld_dsrc ld_dsrc;

struct ld_source {
    const char **items; /* records: label (4 bytes, unaligned) then the relative path */
    size_t n, cap;
    char *root;      /* as given; NULL or "" when paths are used as listed */
    size_t root_len; /* 0 when there is no root */
    int root_sep;    /* 1: a '/' goes between root and relative path */
    const char **classes;
    size_t n_classes, cap_classes;
    ld_arena_block *arena;            /* newest block first */
    uint64_t unlisted[LD_UNLISTED_N]; /* folder mode: entries passed over, by ld_unlisted_why */
    /* list mode's labels (ld__source_label_count): values per item after the path, their
     * type, whether the list had no labels, and the CSV header's label names */
    uint32_t label_k;
    int label_type;
    int unlabelled;
    const char **label_names;
    size_t n_label_names;
    ld_tar *tar;   /* archive mode: where the members are and how to read them; else NULL */
    ld_dsrc *dsrc; /* dataset mode: the store the records come from; else NULL */
    /* detection sources (COCO, VOC): every item keeps its boxes after its path, "<u32 M><M x
     * ld_box>"; the box classes' names and the input's own ids for them */
    int boxes;
    const char **box_classes;
    int64_t *box_class_ids;
    size_t n_box_classes, cap_box_classes;
};

/* A new, empty source. LD_OK or LD_ENOMEM. */
int ld__source_new(ld_source **out);

/* Copy n bytes plus a NUL into the arena; NULL when out of memory. */
char *ld__source_strndup(ld_source *s, const char *p, size_t n);

/* Set the root that relative paths are joined with (copied; NULL or "" for none). Call
 * before adding items. LD_OK or LD_ENOMEM. */
int ld__source_set_root(ld_source *s, const char *root);

/* Append an item: its path is the root joined with `rel` (rel as-is when there is no root
 * or rel is absolute). LD_OK or LD_ENOMEM. */
int ld__source_add_item(ld_source *s, const char *rel, size_t rel_len, int32_t label);
/* The same with `vec_bytes` bytes of label values kept after the path (ld__source_values). */
int ld__source_add_item_values(ld_source *s, const char *rel, size_t rel_len, int32_t label,
                               const void *values, size_t vec_bytes);

/* The bytes after item i's relative path (ld__source_add_item_values; archive mode keeps
 * where the member is there; unaligned: memcpy them). */
const void *ld__source_extra(const ld_source *s, size_t i);
/* Change the label of item i (archive mode labels items once every class is known). */
void ld__source_set_label(ld_source *s, size_t i, int32_t label);

/* Archive mode (src_tar.c): read member i into out; free the reading state (NULL ok). */
int ld__tar_read(ld_source *s, size_t i, const char *path, ld_buf *out, size_t max_bytes,
                 ld_err *e);
void ld__tar_free(ld_tar *t);
/* The window of a compressed archive's reads, in bytes (64 MiB; tests make it small so that
 * the stream restarts). */
void ld__tar_set_window(ld_source *s, uint64_t bytes);

/* Dataset mode (src_store.c): read item i's record into out (and its labels into the item);
 * free the store (NULL ok). */
int ld__dsrc_read(ld_source *s, size_t i, const char *path, ld_buf *out, size_t max_bytes,
                  ld_err *e);
void ld__dsrc_free(ld_dsrc *d);

/* Detection sources: append an item (label 0) with its m boxes (copied; the source then has
 * boxes: ld__source_has_boxes), and a box class (its name copied, and the input's own id for
 * it: COCO's category_id). LD_OK or LD_ENOMEM. */
int ld__source_add_item_boxes(ld_source *s, const char *rel, size_t rel_len, const ld_box *boxes,
                              uint32_t m);
int ld__source_add_box_class(ld_source *s, const char *name, size_t len, int64_t id);

/* Append a class name (copied). LD_OK or LD_ENOMEM. */
int ld__source_add_class(ld_source *s, const char *name, size_t len);

/* A warning to `warn` (nothing when NULL), formatted as printf does. */
void ld__source_warnf(ld_source_warn_fn warn, void *user, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Sort the items by relative path (strcmp): the enumeration order of folder mode. */
void ld__source_sort_items(ld_source *s);

#endif /* LD_SRC_INTERNAL_H */
