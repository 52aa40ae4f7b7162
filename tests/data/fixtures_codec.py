"""Fixtures for tests/unit/test_codec.c, written into OUTDIR/codec/.

Every image comes with the pixels the decoder must produce, as binary PPM (RGB) or PGM
(gray) files:
  *.jpg + same-name .ppm/.pgm  PIL's decode of that exact file (PIL uses the same
                               libjpeg-turbo); gray refs use libjpeg's own gray output
                               (Image.draft("L")), half-size refs its 1/2 DCT scaling.
  orientN.jpg                  a non-symmetric crop stored transposed with EXIF orientation
                               N; orientN.ppm is PIL's decode + exif_transpose, up.ppm the
                               upright crop before JPEG coding.
  *.png                        written by the small PNG writer below (PIL cannot write 16-bit
                               colour, interlaced or low-depth palette PNGs); references
                               computed with numpy per the decoder rules: drop alpha/tRNS,
                               keep the high byte of 16-bit samples, luma = libjpeg's.
  bad_*, bomb.*, text.png ...  damaged or hostile inputs.
"""
import io
import os
import struct
import zlib

import numpy as np
from PIL import Image, ImageOps

ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2),
         (0, 1, 1, 2)]


def chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def pack_rows(a, depth):
    """a: h x w x spp array of samples -> list of raw row bytes (no filter byte)."""
    h, w = a.shape[:2]
    flat = a.reshape(h, -1)
    if depth == 16:
        return [r.astype(">u2").tobytes() for r in flat]
    if depth == 8:
        return [r.astype(np.uint8).tobytes() for r in flat]
    per = 8 // depth
    out = []
    for r in flat:
        r = np.concatenate([r, np.zeros((-len(r)) % per, dtype=r.dtype)]).astype(np.uint8)
        r = r.reshape(-1, per)
        b = np.zeros(len(r), dtype=np.uint8)
        for i in range(per):
            b |= (r[:, i] << (8 - depth * (i + 1))).astype(np.uint8)
        out.append(b.tobytes())
    return out


def png_bytes(a, ctype, depth, interlace=0, palette=None, trns=None):
    if a.ndim == 2:
        a = a[:, :, None]
    h, w = a.shape[:2]
    raw = b""
    passes = ADAM7 if interlace else [(0, 0, 1, 1)]
    for xs, ys, dx, dy in passes:
        sub = a[ys::dy, xs::dx]
        if sub.shape[0] == 0 or sub.shape[1] == 0:
            continue
        raw += b"".join(b"\0" + r for r in pack_rows(sub, depth))
    out = b"\x89PNG\r\n\x1a\n"
    out += chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, ctype, 0, 0, interlace))
    if palette is not None:
        out += chunk(b"PLTE", palette.astype(np.uint8).tobytes())
    if trns is not None:
        out += chunk(b"tRNS", trns)
    out += chunk(b"IDAT", zlib.compress(raw, 6))
    out += chunk(b"IEND", b"")
    return out


def luma(rgb):
    r, g, b = (rgb[..., i].astype(np.uint32) for i in range(3))
    return ((19595 * r + 38470 * g + 7471 * b + 32768) >> 16).astype(np.uint8)


def save_refs(d, stem, rgb):
    """rgb: h x w x 3 (colour) or h x w (gray) uint8 expected decode."""
    if rgb.ndim == 2:
        Image.fromarray(np.repeat(rgb[:, :, None], 3, 2)).save(os.path.join(d, stem + ".ppm"))
        Image.fromarray(rgb).save(os.path.join(d, stem + ".pgm"))
    else:
        Image.fromarray(rgb).save(os.path.join(d, stem + ".ppm"))
        Image.fromarray(luma(rgb)).save(os.path.join(d, stem + ".pgm"))


def jpeg_refs(d, stem):
    p = os.path.join(d, stem + ".jpg")
    Image.open(p).convert("RGB").save(os.path.join(d, stem + ".ppm"))
    im = Image.open(p)
    im.draft("L", im.size)  # libjpeg's JCS_GRAYSCALE output, what our decoder uses
    assert im.mode == "L"
    im.convert("L").save(os.path.join(d, stem + ".pgm"))


def make_pngs(d, photo):
    rng = np.random.default_rng(7)
    rgb = np.asarray(photo.resize((61, 47)))  # odd sizes exercise Adam7 edge passes
    gray = luma(rgb)
    alpha = rng.integers(0, 256, rgb.shape[:2], dtype=np.uint8)
    rgb16 = rgb.astype(np.uint16) * 257 + rng.integers(0, 256, rgb.shape, dtype=np.uint16) % 257
    gray16 = rgb16[..., 1]

    def w(name, data, expect):
        with open(os.path.join(d, name + ".png"), "wb") as f:
            f.write(data)
        save_refs(d, name, expect)

    w("rgb8", png_bytes(rgb, 2, 8), rgb)
    w("rgba8", png_bytes(np.dstack([rgb, alpha]), 6, 8), rgb)
    w("gray8", png_bytes(gray, 0, 8), gray)
    w("graya8", png_bytes(np.dstack([gray, alpha]), 4, 8), gray)
    w("rgb16", png_bytes(rgb16, 2, 16), (rgb16 >> 8).astype(np.uint8))
    w("rgba16", png_bytes(np.dstack([rgb16, gray16]), 6, 16), (rgb16 >> 8).astype(np.uint8))
    w("gray16", png_bytes(gray16, 0, 16), (gray16 >> 8).astype(np.uint8))
    w("rgb8_interlaced", png_bytes(rgb, 2, 8, interlace=1), rgb)
    w("gray16_interlaced", png_bytes(gray16, 0, 16, interlace=1), (gray16 >> 8).astype(np.uint8))
    bits = (gray > 128).astype(np.uint8)
    w("gray1", png_bytes(bits, 0, 1), bits * 255)
    g4 = gray >> 4
    w("gray4", png_bytes(g4, 0, 4), (g4 * 17).astype(np.uint8))
    pal = rng.integers(0, 256, (16, 3), dtype=np.uint8)
    idx = (gray >> 4).astype(np.uint8)
    w("pal4", png_bytes(idx, 3, 4, palette=pal), pal[idx])
    pal256 = rng.integers(0, 256, (256, 3), dtype=np.uint8)
    idx8 = rgb[..., 0]
    trns = bytes(rng.integers(0, 256, 256, dtype=np.uint8))
    w("pal8_trns", png_bytes(idx8, 3, 8, palette=pal256, trns=trns), pal256[idx8])
    w("gray8_trns", png_bytes(gray, 0, 8, trns=struct.pack(">H", 10)), gray)
    w("rgb8_trns", png_bytes(rgb, 2, 8, trns=struct.pack(">HHH", 10, 20, 30)), rgb)

    # Damaged files made from a good one.
    good = png_bytes(rgb, 2, 8)
    idat = good.index(b"IDAT")
    idat_len = struct.unpack(">I", good[idat - 4:idat])[0]
    bad = bytearray(good)
    bad[idat + 4 + idat_len] ^= 0x55  # the IDAT CRC itself: data intact, checksum wrong
    open(os.path.join(d, "bad_crc.png"), "wb").write(bad)
    bad = bytearray(good)
    bad[idat + 10] ^= 0x55  # inside the compressed data (zlib notices before the CRC check)
    open(os.path.join(d, "bad_zlib.png"), "wb").write(bad)
    ihdr = struct.pack(">IIBBBBB", 0, 47, 8, 2, 0, 0, 0)  # width 0, with a valid CRC
    open(os.path.join(d, "bad_ihdr.png"), "wb").write(good[:8] + chunk(b"IHDR", ihdr) + good[33:])
    open(os.path.join(d, "trunc_idat.png"), "wb").write(good[:idat + 4 + idat_len // 2])
    bomb = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 60000, 60000, 8, 2, 0,
                                                            0, 0))
    bomb += chunk(b"IDAT", zlib.compress(b"\0" * 1000)) + chunk(b"IEND", b"")
    open(os.path.join(d, "bomb.png"), "wb").write(bomb)
    open(os.path.join(d, "text.png"), "w").write("this is not an image, just text\n" * 4)


def make_jpegs(d, photos):
    src = Image.open(photos[1]).convert("RGB")
    assert src.size == (500, 375)
    with open(photos[1], "rb") as f:
        data = f.read()
    open(os.path.join(d, "base.jpg"), "wb").write(data)
    jpeg_refs(d, "base")
    half = Image.open(os.path.join(d, "base.jpg"))
    half.draft("RGB", (250, 187))  # PIL picks 1/2 DCT scaling: 250x188
    assert half.size == (250, 188), half.size
    half.convert("RGB").save(os.path.join(d, "base_half.ppm"))

    src.save(os.path.join(d, "prog.jpg"), quality=85, progressive=True)
    jpeg_refs(d, "prog")
    src.convert("L").save(os.path.join(d, "gray.jpg"), quality=90)
    jpeg_refs(d, "gray")
    src.save(os.path.join(d, "q444.jpg"), quality=95, subsampling=0)
    jpeg_refs(d, "q444")

    # Adobe CMYK (PIL stores it inverted, as Photoshop does, with an APP14 marker).
    cmyk_src = src.resize((160, 120)).convert("CMYK")
    cmyk_src.save(os.path.join(d, "cmyk.jpg"), quality=95)
    raw = 255 - np.asarray(Image.open(os.path.join(d, "cmyk.jpg"))).astype(np.uint32)
    k = raw[..., 3:4]
    exp = ((raw[..., :3] * k + 127) // 255).astype(np.uint8)
    save_refs(d, "cmyk", exp)

    # EXIF orientations: a non-symmetric 240x160 crop.
    up = src.crop((60, 40, 300, 200))
    up.save(os.path.join(d, "up.ppm"))
    inverse = {1: None, 2: Image.FLIP_LEFT_RIGHT, 3: Image.ROTATE_180, 4: Image.FLIP_TOP_BOTTOM,
               5: Image.TRANSPOSE, 6: Image.ROTATE_90, 7: Image.TRANSVERSE, 8: Image.ROTATE_270}
    for o, op in inverse.items():
        stored = up if op is None else up.transpose(op)
        ex = Image.Exif()
        ex[0x0112] = o
        p = os.path.join(d, f"orient{o}.jpg")
        stored.save(p, quality=95, exif=ex.tobytes())
        im = ImageOps.exif_transpose(Image.open(p)).convert("RGB")
        assert im.size == up.size
        im.save(os.path.join(d, f"orient{o}.ppm"))
        st = Image.open(p).convert("RGB")
        st.save(os.path.join(d, f"orient{o}_stored.ppm"))

    # Hostile: SOF dimensions patched to 60000x60000 (header parses, data is tiny).
    buf = io.BytesIO()
    Image.new("RGB", (16, 16), (200, 10, 10)).save(buf, "JPEG", quality=90)
    b = bytearray(buf.getvalue())
    sof = b.index(b"\xff\xc0")
    b[sof + 5:sof + 9] = struct.pack(">HH", 60000, 60000)
    open(os.path.join(d, "bomb.jpg"), "wb").write(b)
    open(os.path.join(d, "empty.jpg"), "wb").close()
    rng = np.random.default_rng(99)
    open(os.path.join(d, "random.jpg"), "wb").write(bytes(rng.integers(0, 256, 4096,
                                                                      dtype=np.uint8)))
    open(os.path.join(d, "random_soi.jpg"), "wb").write(
        b"\xff\xd8\xff" + bytes(rng.integers(0, 256, 4096, dtype=np.uint8)))


def make(outdir, photos):
    d = os.path.join(outdir, "codec")
    os.makedirs(d, exist_ok=True)
    make_jpegs(d, photos)
    make_pngs(d, Image.open(photos[2]).convert("RGB"))


def make_fuzz_seeds(corpus):
    """Tiny seed inputs for tests/fuzz (synthetic gradients, nothing third-party):
    python3 tests/data/fixtures_codec.py --seeds tests/fuzz/corpus"""
    y, x = np.mgrid[0:16, 0:24]
    rgb = np.dstack([x * 10, y * 15, (x + y) * 6]).astype(np.uint8)
    im = Image.fromarray(rgb)
    jd = os.path.join(corpus, "jpeg_decode")
    pd = os.path.join(corpus, "png_decode")
    os.makedirs(jd, exist_ok=True)
    os.makedirs(pd, exist_ok=True)
    ex = Image.Exif()
    ex[0x0112] = 6
    im.save(os.path.join(jd, "baseline.jpg"), quality=80)
    im.save(os.path.join(jd, "progressive.jpg"), quality=80, progressive=True)
    im.save(os.path.join(jd, "q444_exif6.jpg"), quality=95, subsampling=0, exif=ex.tobytes())
    im.convert("L").save(os.path.join(jd, "gray.jpg"), quality=80)
    im.convert("CMYK").save(os.path.join(jd, "cmyk.jpg"), quality=80)
    g = rgb[..., 0]
    g16 = g.astype(np.uint16) * 257
    pal = np.arange(48, dtype=np.uint8).reshape(16, 3) * 5
    seeds = {
        "rgb8": png_bytes(rgb, 2, 8),
        "rgba8": png_bytes(np.dstack([rgb, g]), 6, 8),
        "gray16_interlaced": png_bytes(g16, 0, 16, interlace=1),
        "gray1": png_bytes((g > 100).astype(np.uint8), 0, 1),
        "pal4_trns": png_bytes(g >> 4, 3, 4, palette=pal, trns=bytes(range(0, 160, 10))),
    }
    for name, data in seeds.items():
        with open(os.path.join(pd, name + ".png"), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    import sys
    if len(sys.argv) == 3 and sys.argv[1] == "--seeds":
        make_fuzz_seeds(sys.argv[2])
    else:
        sys.exit("usage: fixtures_codec.py --seeds CORPUS_DIR")
