/*
 * Descriptions (store/desc.h) for the dataset writers under test, made as the converter makes
 * them (convert.c, describe_output).
 */
#ifndef LD_TEST_DESC_H
#define LD_TEST_DESC_H

#include <string.h>

#include "libdata/libdata.h"
#include "store/desc.h"

typedef struct test_rec {
    int encoded;
    const char *encoding; /* encoded: "jpeg" | "png" | "original" (NULL: "original") */
    int channels;         /* 1 or 3 */
    int rgb;              /* 3 channels: RGB, else BGR */
    size_t n_classes;
    const char *const *classes;
    int quality, resize_w, resize_h; /* resize: squash, when w or h > 0 */
    const char *source, *note;
} test_rec;

/* The description of t. Its strings are t's (borrowed: a writer copies what it keeps and
 * never changes a description); it lives in one of a few static slots, so that helpers can
 * return writer options by value (a test uses at most a few at a time). */
static inline const ld_desc *test_desc(const test_rec *t)
{
    static ld_desc slot[8];
    static unsigned next;
    ld_desc *d = &slot[next++ % 8];
    memset(d, 0, sizeof *d);
    d->format = 0;
    d->encoded = t->encoded;
    d->storage = (char *)(t->encoded ? "encoded" : "raw");
    d->encoding = t->encoded ? (char *)(t->encoding ? t->encoding : "original") : NULL;
    d->channels = t->channels;
    d->channel_order = (char *)(t->channels == 1 ? "GRAY" : t->rgb ? "RGB" : "BGR");
    d->n_classes = t->n_classes;
    d->class_names = (char **)t->classes;
    d->num_classes_recorded = (int)t->n_classes;
    d->quality = t->quality;
    d->resize_w = t->resize_w;
    d->resize_h = t->resize_h;
    d->resize_mode = t->resize_w || t->resize_h ? LD_RESIZE_SQUASH : 0;
    d->resize_mode_name = (char *)(d->resize_mode ? "squash" : "none");
    d->source = (char *)t->source;
    d->note = (char *)t->note;
    d->tool_version = (char *)LD_VERSION_STRING;
    ld__desc_mark_recorded(d);
    return d;
}

#endif /* LD_TEST_DESC_H */
