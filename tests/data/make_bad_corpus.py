#!/usr/bin/python3
"""Build the bad-input corpus (issue 7) from the fixture photos: OUTDIR/tree/ is a class
folder tree with good images (class `good/`) next to damaged, hostile and odd inputs (class
`bad/`), and OUTDIR/MANIFEST lists what each entry is and what a conversion must do with it.

Usage: make_bad_corpus.py PHOTOS_DIR OUTDIR      (PHOTOS_DIR: LD_TEST_DATA/photos)

MANIFEST lines are tab-separated: EXPECT, RELATIVE NAME (bytes, may be non-UTF-8), WHY.
EXPECT is
  good      a valid image: it must be converted (1x1 images, a PNG named .jpg, a non-UTF-8
            file name, the unreadable file when the tests run as root, see below)
  bad       must be skipped and named on stderr with a reason
  ignored   not an image entry at all (a folder named x.jpg, a FIFO, a symlink loop of
            folders): skipped, possibly with a warning
  unreadable  chmod 000: bad for a normal user; root reads it anyway (CAP_DAC_OVERRIDE),
            so the tests decide at run time (`[ -r FILE ]`) and say which case they checked
Deterministic (fixed seeds). Everything is small except the hard-linked photos.
"""
import io
import os
import random
import stat
import struct
import sys
import zlib

from PIL import Image

MANIFEST = []


def add(expect, rel, why):
    MANIFEST.append((expect, rel, why))


def write(root, rel, data, expect, why):
    p = os.path.join(root, os.fsdecode(rel) if isinstance(rel, bytes) else rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "wb") as f:
        f.write(data)
    folder = os.path.basename(root)
    add(expect, folder.encode() + b"/" + rel if isinstance(rel, bytes) else folder + "/" + rel,
        why)


def png_chunk(kind, data, crc=None):
    c = zlib.crc32(kind + data) if crc is None else crc
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", c & 0xFFFFFFFF)


def png_file(w, h, depth=8, ctype=2, interlace=0, comp=0, idat=None, ihdr_crc=None,
             idat_crc=None, iend=True):
    if idat is None:
        ch = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}.get(ctype, 3)
        row = b"\0" + bytes((x * 7) & 255 for x in range(w * ch))
        idat = zlib.compress(row * h)
    out = b"\x89PNG\r\n\x1a\n"
    out += png_chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, ctype, comp, 0, interlace),
                     ihdr_crc)
    out += png_chunk(b"IDAT", idat, idat_crc)
    if iend:
        out += png_chunk(b"IEND", b"")
    return out


def jpeg_segments(b):
    """(offset, marker, segment length incl. the 2 length bytes) up to SOS."""
    out, i = [], 2
    while i + 4 <= len(b):
        assert b[i] == 0xFF, i
        m = b[i + 1]
        n = struct.unpack(">H", b[i + 2:i + 4])[0]
        out.append((i, m, n))
        if m == 0xDA:
            break
        i += 2 + n
    return out


def find(segs, marker):
    return next(s for s in segs if s[1] == marker)


def jpeg_bytes(im, **kw):
    b = io.BytesIO()
    im.save(b, "JPEG", **kw)
    return b.getvalue()


def png_bytes(im):
    b = io.BytesIO()
    im.save(b, "PNG")
    return b.getvalue()


def make(photos_dir, out):
    tree = os.path.join(out, "tree")
    good, bad = os.path.join(tree, "good"), os.path.join(tree, "bad")
    os.makedirs(good)
    os.makedirs(bad)
    photos = sorted(f for f in os.listdir(photos_dir) if f.endswith(".jpg"))
    for f in photos[:8]:
        os.link(os.path.join(photos_dir, f), os.path.join(good, f))
        add("good", "good/" + f, "fixture photo")
    src = open(os.path.join(photos_dir, photos[1]), "rb").read()
    im = Image.open(io.BytesIO(src)).convert("RGB")
    small = im.resize((64, 48))
    rng = random.Random(7)

    # -- valid odd ones: must convert
    one = Image.new("RGB", (1, 1), (200, 30, 60))
    write(bad, "one_1x1.jpg", jpeg_bytes(one, quality=90), "good", "1x1 baseline JPEG")
    write(bad, "one_1x1_progressive.jpg", jpeg_bytes(one, progressive=True), "good",
          "1x1 progressive JPEG")
    write(bad, "one_1x1.png", png_bytes(one), "good", "1x1 RGB PNG")
    write(bad, "one_1x1_gray.png", png_bytes(Image.new("L", (1, 1), 77)), "good", "1x1 gray PNG")
    write(bad, "one_1x1_palette.png", png_bytes(one.convert("P")), "good", "1x1 palette PNG")
    write(bad, "png_named.jpg", png_bytes(small), "good", "a PNG named .jpg (sniffed, not named)")
    write(bad, "jpeg_named.png", jpeg_bytes(small), "good", "a JPEG named .png")
    write(bad, b"caf\xe9_latin1_name.jpg", jpeg_bytes(small), "good",
          "non-UTF-8 file name (Latin-1 byte), valid JPEG")

    # -- truncated JPEGs at many offsets (header bytes, tables, inside the scan)
    cuts = [1, 2, 3, 4, 10, 21, 100, 200, 400, 620] + [len(src) * k // 20 for k in range(1, 19)]
    for c in sorted(set(cuts)):
        write(bad, "trunc_%06d.jpg" % c, src[:c], "bad", "JPEG cut after %d of %d bytes" %
              (c, len(src)))
    write(bad, b"trunc_\xff\xfe_non_utf8.jpg", src[:3000], "bad",
          "truncated JPEG with a non-UTF-8 name")

    # -- broken Huffman tables and markers
    segs = jpeg_segments(src)
    off, _, n = find(segs, 0xC4)
    b = bytearray(src)
    for k in range(16):  # code counts summing to 16*255 > 256 symbols
        b[off + 5 + k] = 255
    write(bad, "huffman_counts.jpg", bytes(b), "bad", "DHT code counts exceed 256 symbols")
    b = bytearray(src)
    b[off + 4] = 0x27  # table class 2, id 7
    write(bad, "huffman_index.jpg", bytes(b), "bad", "DHT with class 2 / index 7")
    b = bytearray(src)
    b[off + 2:off + 4] = b"\x00\x01"
    write(bad, "marker_length_1.jpg", bytes(b), "bad", "marker length 1 (< 2)")
    sof = next(s for s in segs if s[1] in (0xC0, 0xC1, 0xC2))
    b = bytearray(src)
    b[sof[0] + 9] = 0  # number of components
    write(bad, "sof_no_components.jpg", bytes(b), "bad", "SOF with 0 components")
    b = bytearray(src)
    b[sof[0] + 4] = 12  # precision
    write(bad, "sof_precision_12.jpg", bytes(b), "bad", "12-bit precision (unsupported)")
    b = bytearray(src)
    b[sof[0] + 5:sof[0] + 7] = b"\x00\x00"  # height 0
    write(bad, "sof_height_0.jpg", bytes(b), "bad", "SOF height 0")
    dqt = find(segs, 0xDB)
    b = bytearray(src)
    b[dqt[0] + 1] = 0xFE  # DQT -> COM: quantization tables missing
    write(bad, "no_dqt.jpg", bytes(b), "bad", "DQT turned into a comment: no quantization table")
    sos = find(segs, 0xDA)
    b = bytearray(src)
    b[sos[0] + 5] = 0x09  # component selector not in the frame
    write(bad, "sos_bad_component.jpg", bytes(b), "bad", "SOS names a component not in SOF")
    write(bad, "no_soi.jpg", b"\xff\xd9" + src[2:], "bad", "missing SOI")
    write(bad, "soi_eoi_only.jpg", b"\xff\xd8\xff\xd9", "bad", "SOI then EOI, no image")
    write(bad, "eoi_before_scan.jpg", src[:sos[0]] + b"\xff\xd9", "bad", "EOI right before SOS")

    # -- PNGs
    p = png_bytes(small)
    b = bytearray(p)
    b[29] ^= 0xFF  # IHDR CRC (8 signature + 4 len + 4 type + 13 data = 29)
    write(bad, "png_ihdr_crc.png", bytes(b), "bad", "IHDR CRC wrong")
    i = p.index(b"IDAT")
    n = struct.unpack(">I", p[i - 4:i])[0]
    b = bytearray(p)
    b[i + 4 + n] ^= 0xFF
    write(bad, "png_idat_crc.png", bytes(b), "bad", "IDAT CRC wrong")
    write(bad, "png_truncated_idat.png", p[:i + 4 + n // 2], "bad", "cut in the middle of IDAT")
    write(bad, "png_no_idat_data.png", p[:i + 4], "bad", "cut right after the IDAT type")
    write(bad, "png_width_0.png", png_file(0, 8), "bad", "IHDR width 0")
    write(bad, "png_depth_3.png", png_file(8, 8, depth=3), "bad", "IHDR bit depth 3")
    write(bad, "png_colortype_5.png", png_file(8, 8, ctype=5), "bad", "IHDR colour type 5")
    write(bad, "png_interlace_7.png", png_file(8, 8, interlace=7), "bad", "IHDR interlace 7")
    write(bad, "png_compression_1.png", png_file(8, 8, comp=1), "bad", "IHDR compression 1")
    write(bad, "png_zlib_garbage.png", png_file(8, 8, idat=bytes(rng.randrange(256)
                                                                   for _ in range(64))),
          "bad", "IDAT is not zlib data")
    write(bad, "png_idat_short.png", png_file(32, 32, idat=zlib.compress(b"\0" * 100)), "bad",
          "IDAT holds fewer rows than IHDR says")
    write(bad, "png_signature_only.png", b"\x89PNG\r\n\x1a\n", "bad", "PNG signature only")

    # -- bombs: headers that promise 60000x60000 (3.6 Gpx) with almost no data
    b = bytearray(src[:sos[0] + 2 + sos[2]] + src[-2000:])  # headers, a little scan, EOI
    b[sof[0] + 5:sof[0] + 9] = struct.pack(">HH", 60000, 60000)
    write(bad, "bomb_60000x60000.jpg", bytes(b), "bad", "JPEG header says 60000x60000")
    write(bad, "bomb_60000x60000.png", png_file(60000, 60000, idat=zlib.compress(b"\0" * 1000)),
          "bad", "PNG IHDR says 60000x60000")
    write(bad, "bomb_1x2000000000.png", png_file(1, 2000000000, idat=zlib.compress(b"\0" * 10)),
          "bad", "PNG 1 x 2e9 rows")

    # -- the other input formats (issue 29): valid odd ones, then truncated and corrupt files
    # of each, and headers that promise more pixels than the limit. Pillow writes the valid
    # ones; the damage is done here, byte by byte.
    def saved(im, fmt, **kw):
        b = io.BytesIO()
        im.save(b, fmt, **kw)
        return b.getvalue()

    frames = [small, small.transpose(Image.FLIP_LEFT_RIGHT), small.rotate(180)]
    tif = saved(small, "TIFF")
    tif3 = saved(frames[0], "TIFF", save_all=True, append_images=frames[1:])
    webp = saved(small, "WEBP", quality=80)
    webpl = saved(small, "WEBP", lossless=True)
    gif = saved(small, "GIF")
    gif3 = saved(frames[0], "GIF", save_all=True, append_images=frames[1:], duration=50)
    bmp = saved(small, "BMP")
    ppm = saved(small, "PPM")
    write(bad, "fmt_tiff_pages3.tif", tif3, "good", "3-page TIFF: the first page converts")
    write(bad, "fmt_gif_anim.gif", gif3, "good", "animated GIF: the first frame converts")
    write(bad, "fmt_bmp_named.jpg", bmp, "good", "a BMP named .jpg (sniffed, not named)")
    write(bad, "fmt_webp_1x1.webp", saved(one, "WEBP", lossless=True), "good", "1x1 WebP")
    write(bad, "fmt_pgm_1x1.pgm", b"P2 1 1 255 77\n", "good", "1x1 ASCII PGM")
    # the second frame damaged: the first still converts (only it is decoded)
    cut = len(gif3) - len(gif3) // 5
    write(bad, "fmt_gif_anim_cut_late.gif", gif3[:cut], "good",
          "animated GIF cut inside a later frame: the first frame converts")
    for name, data, kind in (("tiff", tif, "tif"), ("webp", webp, "webp"),
                             ("webpl", webpl, "webp"), ("gif", gif, "gif"), ("bmp", bmp, "bmp"),
                             ("ppm", ppm, "ppm")):
        for frac in (0, 1, 2, 5, 10, 15):
            c = max(frac * len(data) // 20, {0: 6}.get(frac, 0))
            write(bad, "fmt_%s_cut_%05d.%s" % (name, c, kind), data[:c], "bad",
                  "%s cut after %d of %d bytes" % (name, c, len(data)))
    # TIFF: header fields
    e = "<"
    ifd = struct.unpack(e + "I", tif[4:8])[0]
    n = struct.unpack(e + "H", tif[ifd:ifd + 2])[0]
    entries = {struct.unpack(e + "H", tif[ifd + 2 + 12 * k:ifd + 4 + 12 * k])[0]: ifd + 2 + 12 * k
               for k in range(n)}

    def tif_set(tag, value, typ=None):
        b = bytearray(tif)
        at = entries[tag]
        t = struct.unpack(e + "H", b[at + 2:at + 4])[0] if typ is None else typ
        b[at + 2:at + 4] = struct.pack(e + "H", t)
        b[at + 8:at + 12] = struct.pack(e + ("H2x" if t == 3 else "I"), value)
        return bytes(b)

    b = bytearray(tif)  # IFD0's next-IFD offset (after its entries) past the end
    b[ifd + 2 + 12 * n:ifd + 6 + 12 * n] = struct.pack(e + "I", len(tif) + 4000)
    write(bad, "fmt_tiff_next_ifd_past_end.tif", bytes(b), "good",
          "the second IFD's offset is past the end: the first page still converts")
    t = saved(small.convert("1"), "TIFF")  # 1-bit: libtiff's RGBA path
    b = bytearray(t)
    i0 = struct.unpack(e + "I", t[4:8])[0]
    k = struct.unpack(e + "H", t[i0:i0 + 2])[0]
    b[i0 + 2 + 12 * k:i0 + 6 + 12 * k] = struct.pack(e + "I", len(t) + 4000)
    write(bad, "fmt_tiff_1bit_next_ifd_past_end.tif", bytes(b), "good",
          "1-bit (RGBA path), second IFD's offset past the end: the first page still converts")
    write(bad, "fmt_tiff_ifd_past_end.tif", tif[:4] + struct.pack(e + "I", len(tif) + 1000) +
          tif[8:], "bad", "first IFD offset past the end")
    write(bad, "fmt_tiff_width_0.tif", tif_set(256, 0), "bad", "ImageWidth 0")
    write(bad, "fmt_tiff_width_60000.tif", tif_set(256, 60000, 4), "bad",
          "ImageWidth 60000 (x 48 rows: the strips are far too short)")
    b = bytearray(tif_set(256, 60000, 4))
    at = entries[257]
    b[at + 2:at + 4] = struct.pack(e + "H", 4)
    b[at + 8:at + 12] = struct.pack(e + "I", 60000)
    write(bad, "fmt_tiff_bomb_60000x60000.tif", bytes(b), "bad", "TIFF header says 60000x60000")
    write(bad, "fmt_tiff_compression_999.tif", tif_set(259, 999), "bad", "unknown compression")
    write(bad, "fmt_tiff_strip_past_end.tif", tif_set(273, len(tif) + 5000, 4), "bad",
          "StripOffsets past the end of the file")
    # WebP: a corrupt bitstream and a VP8L header of 16384 x 16384 (268 Mpx)
    b = bytearray(webp)
    for k in range(40, min(len(b), 200)):
        b[k] ^= 0x5A
    write(bad, "fmt_webp_garbage.webp", bytes(b), "bad", "VP8 bitstream xor-ed")
    vp8l = b"\x2f" + struct.pack("<I", (16383) | (16383 << 14)) + b"\0" * 20
    write(bad, "fmt_webp_bomb_16384.webp", b"RIFF" + struct.pack("<I", 4 + 8 + len(vp8l)) +
          b"WEBPVP8L" + struct.pack("<I", len(vp8l)) + vp8l, "bad", "VP8L header 16384x16384")
    # GIF: a bad LZW stream, no image, a 65535 x 65535 screen
    i = 13 + (3 << ((gif[10] & 7) + 1) if gif[10] & 0x80 else 0)  # after the colour table
    while gif[i] == 0x21:  # extensions: label, then sub-blocks up to a zero length
        i += 2
        while gif[i]:
            i += gif[i] + 1
        i += 1
    assert gif[i] == 0x2C, "no image descriptor at %d" % i
    b = bytearray(gif)
    for k in range(i + 12, min(len(b) - 2, i + 60)):
        b[k] = 0xFF
    write(bad, "fmt_gif_lzw_garbage.gif", bytes(b), "bad", "first frame's LZW data garbled")
    write(bad, "fmt_gif_no_image.gif", gif[:i] + b";", "bad", "header and trailer, no image")
    write(bad, "fmt_gif_bomb_65535.gif", b"GIF89a" + struct.pack("<HH", 65535, 65535) +
          gif[10:], "bad", "logical screen 65535x65535")
    # BMP: header fields
    def bmp_set(off, fmt, value):
        b = bytearray(bmp)
        b[off:off + struct.calcsize(fmt)] = struct.pack(fmt, value)
        return bytes(b)

    write(bad, "fmt_bmp_offset_past_end.bmp", bmp_set(10, "<I", len(bmp) + 10), "bad",
          "pixel data offset past the end")
    write(bad, "fmt_bmp_bpp_7.bmp", bmp_set(28, "<H", 7), "bad", "7 bits per pixel")
    write(bad, "fmt_bmp_compression_4.bmp", bmp_set(30, "<I", 4), "bad", "embedded JPEG")
    b = bytearray(bmp)
    b[18:26] = struct.pack("<ii", 60000, -60000)  # top-down
    write(bad, "fmt_bmp_bomb_60000.bmp", bytes(b), "bad", "BMP header says 60000x60000")
    rle = (b"BM" + struct.pack("<IHHI", 14 + 40 + 8 + 4, 0, 0, 14 + 40 + 8) +
           struct.pack("<IiiHHIIiiII", 40, 4, 4, 1, 8, 1, 4, 0, 0, 2, 0) +
           b"\0\0\0\0\xff\xff\xff\0" + b"\x04\x01\x00\x00")
    write(bad, "fmt_bmp_rle8_truncated.bmp", rle, "bad", "RLE8 data ends before end-of-bitmap")
    # PNM
    write(bad, "fmt_pgm_maxval_0.pgm", b"P5 4 4 0\n" + b"\0" * 16, "bad", "maxval 0")
    write(bad, "fmt_pgm_maxval_70000.pgm", b"P5 4 4 70000\n" + b"\0" * 32, "bad",
          "maxval over 65535")
    write(bad, "fmt_pgm_over_maxval.pgm", b"P2 2 1 100 50 101\n", "bad", "ASCII sample > maxval")
    write(bad, "fmt_ppm_ascii_garbage.ppm", b"P3 2 2 255 1 2 3 x y z\n", "bad",
          "ASCII samples that are not numbers")
    write(bad, "fmt_ppm_bomb_60000.ppm", b"P6 60000 60000 255\n" + b"\0" * 64, "bad",
          "PPM header says 60000x60000")
    write(bad, "fmt_pgm_width_0.pgm", b"P5 0 4 255\n", "bad", "width 0")

    # -- not images at all
    write(bad, "zero.jpg", b"", "bad", "zero bytes")
    write(bad, "zero.png", b"", "bad", "zero bytes")
    write(bad, "random.jpg", bytes(rng.randrange(256) for _ in range(4096)), "bad",
          "random bytes named .jpg")
    write(bad, "random_jpeg_magic.jpg", b"\xff\xd8\xff" + bytes(rng.randrange(256)
                                                                for _ in range(4096)),
          "bad", "JPEG magic then random bytes")
    write(bad, "text.png", b"this is a text file, not a PNG\n" * 20, "bad", "text named .png")
    write(bad, "html.jpg", b"<html><body>404 Not Found</body></html>\n", "bad",
          "an HTML error page saved as .jpg")

    # -- file-system oddities
    os.makedirs(os.path.join(bad, "x.jpg", "inner"))
    add("ignored", "bad/x.jpg", "a directory named x.jpg (walked as a folder, holds nothing)")
    os.symlink("does_not_exist.jpg", os.path.join(bad, "dangling.jpg"))
    add("bad", "bad/dangling.jpg", "dangling symlink")
    os.symlink("loop_b.jpg", os.path.join(bad, "loop_a.jpg"))
    os.symlink("loop_a.jpg", os.path.join(bad, "loop_b.jpg"))
    add("bad", "bad/loop_a.jpg", "symlink loop a -> b -> a")
    add("bad", "bad/loop_b.jpg", "symlink loop b -> a -> b")
    os.symlink(".", os.path.join(bad, "self_dir"))
    add("ignored", "bad/self_dir", "symlink to its own folder (a directory loop)")
    os.mkfifo(os.path.join(bad, "fifo.jpg"))
    add("ignored", "bad/fifo.jpg", "a FIFO named .jpg (opening it would block)")
    p = os.path.join(bad, "unreadable.jpg")
    with open(p, "wb") as f:
        f.write(jpeg_bytes(small))
    os.chmod(p, 0)
    add("unreadable", "bad/unreadable.jpg", "chmod 000 (valid JPEG inside)")

    with open(os.path.join(out, "MANIFEST"), "wb") as f:
        for expect, rel, why in MANIFEST:
            rel = rel if isinstance(rel, bytes) else rel.encode()
            f.write(expect.encode() + b"\t" + rel + b"\t" + why.encode() + b"\n")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    photos, out = sys.argv[1], sys.argv[2]
    if os.path.exists(out):
        sys.exit("%s exists; remove it first" % out)
    make(photos, out)
    counts = {}
    for e, _, _ in MANIFEST:
        counts[e] = counts.get(e, 0) + 1
    print("bad corpus in %s: %s" % (out, ", ".join("%d %s" % (v, k) for k, v in
                                                    sorted(counts.items()))))


if __name__ == "__main__":
    main()
