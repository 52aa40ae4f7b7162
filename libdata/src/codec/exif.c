/*
 * EXIF orientation: just enough TIFF parsing to read IFD0 tag 0x0112, from a JPEG APP1
 * payload ("Exif\0\0" + TIFF) or a PNG eXIf chunk (TIFF alone). The input is untrusted, so
 * every offset is checked against the payload length before it is read.
 */
#include "codec/codec.h"

static unsigned rd16(const uint8_t *p, int le)
{
    return le ? (unsigned)p[0] | (unsigned)p[1] << 8 : (unsigned)p[0] << 8 | (unsigned)p[1];
}

static uint32_t rd32(const uint8_t *p, int le)
{
    return le ? (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24
              : (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

int ld__exif_orientation(const uint8_t *app1, size_t len)
{
    static const uint8_t hdr[6] = {'E', 'x', 'i', 'f', 0, 0};
    if (!app1 || len < 6 + 8) return 1;
    for (int i = 0; i < 6; i++)
        if (app1[i] != hdr[i]) return 1;
    return ld__tiff_orientation(app1 + 6, len - 6);
}

int ld__tiff_orientation(const uint8_t *t, size_t n)
{
    /* t: the TIFF header; offsets below are relative to it */
    if (!t || n < 8) return 1;
    int le;
    if (t[0] == 'I' && t[1] == 'I')
        le = 1;
    else if (t[0] == 'M' && t[1] == 'M')
        le = 0;
    else
        return 1;
    if (rd16(t + 2, le) != 42) return 1;
    const uint32_t ifd = rd32(t + 4, le);
    /* Compare in a form that cannot overflow: ifd + 2 <= n. */
    if (ifd > n || n - ifd < 2) return 1;
    const unsigned count = rd16(t + ifd, le);
    if ((n - ifd - 2) / 12 < count)
        return 1; /* the directory claims more entries than the payload holds */
    for (unsigned i = 0; i < count; i++) {
        const uint8_t *ent = t + ifd + 2 + (size_t)i * 12;
        if (rd16(ent, le) != 0x0112) continue;
        /* SHORT (3), count 1: the value sits in the first two bytes of the value field. */
        if (rd16(ent + 2, le) != 3 || rd32(ent + 4, le) != 1) return 1;
        const unsigned v = rd16(ent + 8, le);
        return v >= 1 && v <= 8 ? (int)v : 1;
    }
    return 1;
}
