/*
 * GIF decoding with giflib 5.2: the first frame only.
 *
 * The file is read record by record (DGifGetRecordType / DGifGetImageDesc / DGifGetLine),
 * not with DGifSlurp, which would decode every frame of an animation into memory. After the
 * first frame, the remaining records are only walked (their data skipped, not decoded) to
 * count the frames for ld__codec_frames(). The first frame is drawn on the logical screen,
 * whose other pixels get the background colour of the global colour map (black without one).
 * Transparency is ignored: a transparent index shows its colour-map entry, as Pillow's
 * convert("RGB") of frame 0 does. Interlaced frames are put back in row order.
 *
 * The pixel limit is checked on the logical screen size, before anything of that size is
 * allocated. A frame that reaches outside the screen is clipped to it.
 */
#ifdef LD_HAVE_GIF

#include <stdlib.h>
#include <string.h>

#include <gif_lib.h>

#include "codec/codec_int.h"

typedef struct mem_gif {
    const uint8_t *buf;
    size_t len, pos;
} mem_gif;

static int m_read(GifFileType *g, GifByteType *dst, int n)
{
    mem_gif *m = g->UserData;
    if (n <= 0) return 0;
    size_t k = (size_t)n;
    if (k > m->len - m->pos) k = m->len - m->pos;
    memcpy(dst, m->buf + m->pos, k);
    m->pos += k;
    return (int)k;
}

static const char *gif_reason(int code)
{
    const char *s = GifErrorString(code);
    if (code == D_GIF_ERR_READ_FAILED) return "truncated GIF (read past the end)";
    return s ? s : "unknown error";
}

static GifFileType *open_gif(mem_gif *m, const uint8_t *buf, size_t len, int *err)
{
    m->buf = buf;
    m->len = len;
    m->pos = 0;
    *err = 0;
    return DGifOpen(m, m_read, err);
}

int ld__gif_info(ld_codec *c, const uint8_t *buf, size_t len, const char *name, ld_img_info *info,
                 ld_err *e)
{
    (void)c;
    mem_gif m;
    int err, rc = LD_OK;
    GifFileType *g = open_gif(&m, buf, len, &err);
    if (!g)
        return ld__err(e, LD_EFORMAT, "%s: GIF: cannot read the header: %s", name, gif_reason(err));
    if (g->SWidth <= 0 || g->SHeight <= 0)
        rc = ld__err(e, LD_EFORMAT, "%s: GIF: bad screen size %dx%d", name, g->SWidth, g->SHeight);
    info->format = LD_IMG_GIF;
    info->orientation = 1;
    info->w = g->SWidth;
    info->h = g->SHeight;
    info->channels = 3;
    DGifCloseFile(g, &err);
    return rc;
}

/* Skip an extension record's data blocks. GIF_OK or GIF_ERROR. */
static int skip_extension(GifFileType *g)
{
    int code;
    GifByteType *ext = NULL;
    if (DGifGetExtension(g, &code, &ext) == GIF_ERROR) return GIF_ERROR;
    while (ext)
        if (DGifGetExtensionNext(g, &ext) == GIF_ERROR) return GIF_ERROR;
    return GIF_OK;
}

/* Count the frames after the first, skipping their compressed data. Damage there only stops
 * the count: the first frame is what we convert. */
static int count_rest(GifFileType *g)
{
    int n = 1;
    GifRecordType t;
    while (DGifGetRecordType(g, &t) == GIF_OK && t != TERMINATE_RECORD_TYPE) {
        if (t == EXTENSION_RECORD_TYPE) {
            if (skip_extension(g) == GIF_ERROR) break;
        } else if (t == IMAGE_DESC_RECORD_TYPE) {
            int size;
            GifByteType *block = NULL;
            if (DGifGetImageDesc(g) == GIF_ERROR || DGifGetCode(g, &size, &block) == GIF_ERROR)
                break;
            while (block)
                if (DGifGetCodeNext(g, &block) == GIF_ERROR) break;
            if (block) break;
            n++;
        } else {
            break;
        }
    }
    return n;
}

int ld__gif_decode(ld_codec *c, const uint8_t *buf, size_t len, const char *name,
                   const ld_decode_opts *opts, ld_image *out, ld_err *e)
{
    mem_gif m;
    int err, rc = LD_OK;
    GifFileType *g = open_gif(&m, buf, len, &err);
    if (!g)
        return ld__err(e, LD_EFORMAT, "%s: GIF: cannot read the header: %s", name, gif_reason(err));
    const int sw = g->SWidth, sh = g->SHeight, ch = opts->channels;
    LD_CHECK(e, sw > 0 && sh > 0, LD_EFORMAT, "%s: GIF: bad screen size %dx%d", name, sw, sh);
    LD_TRY(ld__img_limit(name, LD_IMG_GIF, (uint64_t)sw, (uint64_t)sh, opts->max_pixels, e));

    /* Up to the first image descriptor. */
    GifRecordType t;
    for (;;) {
        LD_CHECK(e, DGifGetRecordType(g, &t) == GIF_OK, LD_EFORMAT, "%s: GIF: %s", name,
                 gif_reason(g->Error));
        LD_CHECK(e, t != TERMINATE_RECORD_TYPE, LD_EFORMAT, "%s: GIF: no image in the file", name);
        if (t == IMAGE_DESC_RECORD_TYPE) break;
        LD_CHECK(e, t == EXTENSION_RECORD_TYPE && skip_extension(g) == GIF_OK, LD_EFORMAT,
                 "%s: GIF: %s", name,
                 t == EXTENSION_RECORD_TYPE ? gif_reason(g->Error) : "bad record");
    }
    LD_CHECK(e, DGifGetImageDesc(g) == GIF_OK, LD_EFORMAT, "%s: GIF: %s", name,
             gif_reason(g->Error));
    const GifImageDesc *d = &g->Image;
    const ColorMapObject *cmap = d->ColorMap ? d->ColorMap : g->SColorMap;
    LD_CHECK(e, cmap && cmap->Colors && cmap->ColorCount > 0, LD_EFORMAT,
             "%s: GIF: the first frame has no colour map", name);
    const int fw = d->Width, fh = d->Height;
    LD_CHECK(e, fw > 0 && fh > 0 && d->Left >= 0 && d->Top >= 0, LD_EFORMAT,
             "%s: GIF: bad frame %dx%d at %d,%d", name, fw, fh, d->Left, d->Top);

    /* The screen, filled with the background colour, in RGB (made gray at the end). */
    ld_image *rgb = ch == 3 ? out : &c->tmp;
    rc = ld__image_alloc(rgb, sw, sh, 3);
    if (rc == LD_OK && ch == 1) rc = ld__image_alloc(out, sw, sh, 1);
    if (rc == LD_OK) rc = ld__buf_reserve(&c->rows, (size_t)fw);
    LD_CHECK(e, rc == LD_OK, rc, "%s: cannot allocate a %dx%dx%d image", name, sw, sh, ch);
    GifColorType bg = {0, 0, 0};
    if (g->SColorMap && g->SBackGroundColor >= 0 && g->SBackGroundColor < g->SColorMap->ColorCount)
        bg = g->SColorMap->Colors[g->SBackGroundColor];
    for (size_t i = 0; i < (size_t)sw * sh; i++) {
        rgb->px[3 * i] = bg.Red;
        rgb->px[3 * i + 1] = bg.Green;
        rgb->px[3 * i + 2] = bg.Blue;
    }
    /* Rows in file order; interlaced files send rows 0, 8, 16.. then 4, 12.. then 2, 6..
     * then 1, 3.. (GIF89a appendix E). */
    static const int start[4] = {0, 4, 2, 1}, step[4] = {8, 8, 4, 2};
    const int passes = d->Interlace ? 4 : 1;
    for (int p = 0; p < passes; p++) {
        for (int y = d->Interlace ? start[p] : 0; y < fh; y += d->Interlace ? step[p] : 1) {
            LD_CHECK(e, DGifGetLine(g, c->rows.p, fw) == GIF_OK, LD_EFORMAT,
                     "%s: GIF: cannot read row %d of the first frame: %s", name, y,
                     gif_reason(g->Error));
            const int sy = d->Top + y;
            if (sy >= sh || d->Left >= sw) continue; /* clipped */
            uint8_t *dst = rgb->px + ((size_t)sy * sw + d->Left) * 3;
            for (int x = 0; x < fw && d->Left + x < sw; x++, dst += 3) {
                const int idx = c->rows.p[x];
                const GifColorType col = idx < cmap->ColorCount ? cmap->Colors[idx] : bg;
                dst[0] = col.Red;
                dst[1] = col.Green;
                dst[2] = col.Blue;
            }
        }
    }
    c->frames = count_rest(g);
    if (ch == 1)
        for (size_t i = 0; i < (size_t)sw * sh; i++)
            out->px[i] = ld__luma(c->tmp.px[3 * i], c->tmp.px[3 * i + 1], c->tmp.px[3 * i + 2]);
fail:
    DGifCloseFile(g, &err);
    return rc;
}

#else
typedef int ld_gif_dec_unused; /* ISO C forbids an empty translation unit */
#endif /* LD_HAVE_GIF */
