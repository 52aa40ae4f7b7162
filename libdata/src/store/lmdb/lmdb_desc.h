/*
 * The LMDB reader of a dataset's description (desc.h) and the one typed reader of the
 * libdata.json sidecar (lmdb_write.c writes it one key per line; ld__lmdb_sidecar_value
 * finds a key's line). Quotes and JSON string escapes are handled here only.
 */
#ifndef LD_LMDB_DESC_H
#define LD_LMDB_DESC_H

#include "store/desc.h"

/* The string value of `key` (a JSON string, unescaped: \uDCxx gives back the byte xx, as the
 * writer puts a byte that is not UTF-8) into *out, malloc'd. 1 read, 0 absent or not a
 * string, LD_EFORMAT malformed string, LD_ENOMEM. */
int ld__side_str(const char *text, const char *key, char **out);

/* The integer value of `key`: 1 read (a JSON integer), 0 absent or not an integer. */
int ld__side_i64(const char *text, const char *key, int64_t *v);

/* The array of strings of `key` (one line): *out = n malloc'd strings in a malloc'd array.
 * 1 read, 0 absent, LD_EFORMAT not a one-line list of strings, LD_ENOMEM. */
int ld__side_strings(const char *text, const char *key, char ***out, size_t *n);

/* The raw JSON text of `key`'s value: [*v, *v + *n), without the trailing comma. 1 or 0. */
int ld__side_raw(const char *text, const char *key, const char **v, size_t *n);

/* Fill *d from sidecar text (as ld__lmdb_desc_read; `dir` names it in messages). */
int ld__lmdb_desc_from(const char *text, const char *dir, ld_desc *d, ld_err *e);

/* Append d as a libdata.json sidecar (lmdb_write.c): its records (desc.h), the class names,
 * what LMDB alone records (format, record, layout, tool) and "entries": d->samples. One key
 * per line (the line scanner of lmdb_store.h reads them). LD_OK or LD_ENOMEM. */
int ld__lmdb_desc_write(ld_buf *b, const ld_desc *d);

#endif /* LD_LMDB_DESC_H */
