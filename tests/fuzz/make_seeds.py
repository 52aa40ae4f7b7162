#!/usr/bin/env python3
"""Generate the seed corpora of the fuzz targets added by the hardening work:
tests/fuzz/corpus/{exif,list_file,h5_store_open,lmdb_open,mean_file,encode_roundtrip}/, and
of the input-format decoders (issue 29): corpus/{tiff,webp,gif,bmp,pnm}_decode/, small
synthetic images (a gradient and a plasma of fixed seed, never a photo) written by
ImageMagick's `convert` in each format's variants, plus a few hand-made headers.

Usage: /usr/bin/python3 tests/fuzz/make_seeds.py [DATACONV]
DATACONV (a built dataconv) adds HDF5 files and LMDB databases written by libdata itself;
without it only h5py / python-lmdb files are made. Every seed is small (a few KiB; the HDF5 and
LMDB ones are the smallest valid files of each kind, ~2-40 KiB) so the corpus can be committed
and replayed fast. Deterministic: running it again rewrites the same bytes, except the files
dataconv writes (HDF5 object headers hold no times, LMDB pages may differ in free space).
Existing files with other names (kept crash inputs) are left alone.
"""
import io
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import h5py
import lmdb
import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")


def put(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# ---- EXIF (APP1 payload after the length: "Exif\0\0" + TIFF) ----------------------------
def tiff(order, entries, ifd_off=8, count_override=None):
    e = "<" if order == b"II" else ">"
    out = bytearray(order + struct.pack(e + "HI", 42, ifd_off))
    out += b"\0" * (ifd_off - 8)
    out += struct.pack(e + "H", count_override if count_override is not None else len(entries))
    for tag, typ, cnt, val in entries:
        if typ == 3:
            out += struct.pack(e + "HHI", tag, typ, cnt) + struct.pack(e + "H", val) + b"\0\0"
        else:
            out += struct.pack(e + "HHII", tag, typ, cnt, val)
    out += struct.pack(e + "I", 0)
    return bytes(out)


def exif_seeds():
    for o in range(1, 9):
        put("exif", "le_orient%d" % o, b"Exif\0\0" + tiff(b"II", [(0x0112, 3, 1, o)]))
    put("exif", "be_orient6", b"Exif\0\0" + tiff(b"MM", [(0x0112, 3, 1, 6)]))
    put("exif", "le_several_tags", b"Exif\0\0" + tiff(
        b"II", [(0x010F, 2, 4, 0x41414141), (0x0110, 2, 3, 0x424242), (0x0112, 3, 1, 8),
                (0x8769, 4, 1, 60)]))
    put("exif", "ifd_offset_far", b"Exif\0\0" + tiff(b"II", [(0x0112, 3, 1, 3)], ifd_off=24))
    put("exif", "count_too_big", b"Exif\0\0" + tiff(b"II", [(0x0112, 3, 1, 5)],
                                                    count_override=0xFFFF))
    put("exif", "orient_bad_value", b"Exif\0\0" + tiff(b"II", [(0x0112, 3, 1, 77)]))
    put("exif", "orient_wrong_type", b"Exif\0\0" + tiff(b"II", [(0x0112, 4, 1, 6)]))
    put("exif", "ifd_offset_past_end", b"Exif\0\0II*\0\xff\xff\xff\x7f")
    put("exif", "bad_byte_order", b"Exif\0\0XX*\0\x08\0\0\0")
    put("exif", "no_exif_header", b"JFIF\0" + b"\0" * 9)
    put("exif", "empty", b"")


# ---- list files ------------------------------------------------------------------------
def list_seeds():
    put("list_file", "simple", b"cat/a.jpg 0\ndog/b.png 1\nbird/c.jpg 2\n")
    put("list_file", "crlf_blank_lines", b"a.jpg 0\r\n\r\n  \r\nb b/c d.jpg 3\r\n")
    put("list_file", "spaces_in_path", b"my photos/one two.jpg 5\nx  7\n")
    put("list_file", "no_label", b"cat/a.jpg\n")
    put("list_file", "bad_label", b"cat/a.jpg -1\ncat/b.jpg 1x\n")
    put("list_file", "huge_label", b"a.jpg 2147483648\nb.jpg 16777216\n")
    put("list_file", "max_label", b"a.jpg 1000\n")
    put("list_file", "nul_byte", b"a.jpg 0\nb\0.jpg 1\n")
    put("list_file", "no_final_newline", b"a.jpg 0\nb.jpg 1")
    put("list_file", "tabs", b"\ta.jpg 0\t\nb.jpg\t1\n")
    put("list_file", "label_only", b" 3\n")
    put("list_file", "utf8_and_latin1", "été/ñ.jpg 1\n".encode() + b"\xe9t\xe9.jpg 2\n")
    put("list_file", "empty", b"")


# ---- mean files (BlobProto) --------------------------------------------------------------
def varint(v):
    out = bytearray()
    v &= (1 << 64) - 1
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(num, wt, payload):
    key = varint((num << 3) | wt)
    if wt == 0:
        return key + varint(payload)
    return key + varint(len(payload)) + payload


def blob_legacy(n, c, h, w, floats, packed=True):
    b = field(1, 0, n) + field(2, 0, c) + field(3, 0, h) + field(4, 0, w)
    if packed:
        b += field(5, 2, struct.pack("<%df" % len(floats), *floats))
    else:
        b += b"".join(varint((5 << 3) | 5) + struct.pack("<f", x) for x in floats)
    return b


def blob_shape(dims, floats):
    shape = field(1, 2, b"".join(varint(d) for d in dims))  # BlobShape.dim packed
    return field(7, 2, shape) + field(5, 2, struct.pack("<%df" % len(floats), *floats))


def mean_seeds():
    f = [float(i) for i in range(3 * 2 * 2)]
    put("mean_file", "legacy_3x2x2", blob_legacy(1, 3, 2, 2, f))
    put("mean_file", "legacy_unpacked", blob_legacy(1, 1, 2, 2, f[:4], packed=False))
    put("mean_file", "shape_1x3x2x2", blob_shape([1, 3, 2, 2], f))
    put("mean_file", "shape_3x2x2", blob_shape([3, 2, 2], f))
    put("mean_file", "num_2", blob_legacy(2, 3, 2, 2, f + f))
    put("mean_file", "too_few_floats", blob_legacy(1, 3, 2, 2, f[:5]))
    put("mean_file", "huge_dims", blob_legacy(1, 65535, 65535, 65535, f[:3]))
    put("mean_file", "negative_dim", blob_legacy(1, -3, 2, 2, f))
    put("mean_file", "nan_inf", blob_legacy(1, 1, 1, 3, [float("nan"), float("inf"), -1.0]))
    put("mean_file", "truncated", blob_legacy(1, 3, 2, 2, f)[:-7])
    put("mean_file", "empty", b"")
    # NumPy .npy means (the magic decides, not the name)
    a = np.arange(3 * 2 * 2, dtype=np.float32).reshape(3, 2, 2)
    for name, arr, ver in [("npy_chw_f4", a, (1, 0)), ("npy_hwc_u1", a.astype(np.uint8), (1, 0)),
                           ("npy_f8_v2", a.astype(np.float64), (2, 0)),
                           ("npy_fortran", np.asfortranarray(a.transpose(1, 2, 0)), (1, 0)),
                           ("npy_big_endian", a.astype(">f4"), (1, 0))]:
        b = io.BytesIO()
        np.lib.format.write_array(b, arr, version=ver)
        put("mean_file", name, b.getvalue())
    put("mean_file", "npy_truncated", data_of_npy(a)[:-5])


def data_of_npy(a):
    b = io.BytesIO()
    np.lib.format.write_array(b, a, version=(1, 0))
    return b.getvalue()


# ---- encode round trip: w, h, channel flag, quality, pixels -------------------------------
def encode_seeds():
    rng = np.random.RandomState(7)
    put("encode_roundtrip", "1x1_gray", bytes([0, 0, 0, 89, 128]))
    put("encode_roundtrip", "8x8_rgb_q75", bytes([7, 7, 1, 74]) + rng.bytes(192))
    put("encode_roundtrip", "17x5_gray_q100", bytes([16, 4, 0, 99]) + rng.bytes(85))
    put("encode_roundtrip", "64x64_rgb_q1_ramp", bytes([63, 63, 1, 0]) + bytes(range(256)))
    put("encode_roundtrip", "33x2_rgb_q90_flat", bytes([32, 1, 1, 89]) + b"\x80")


# ---- HDF5 ------------------------------------------------------------------------------
def h5_bytes(build):
    with tempfile.TemporaryDirectory() as t:
        p = os.path.join(t, "x.h5")
        with h5py.File(p, "w", libver="earliest", track_order=False) as f:
            build(f)
        return open(p, "rb").read()


def jpeg_bytes(arr, **kw):
    b = io.BytesIO()
    Image.fromarray(arr).save(b, "JPEG", quality=50, **kw)
    return b.getvalue()


def png_bytes(arr):
    b = io.BytesIO()
    Image.fromarray(arr).save(b, "PNG")
    return b.getvalue()


def h5_seeds(dataconv, tmp):
    rng = np.random.RandomState(3)
    px = rng.randint(0, 256, (3, 3, 4, 4)).astype(np.uint8)

    def raw_contig(f):
        f["data"] = px
        f["label"] = np.array([0, 1, 2], np.int32)

    def raw_chunked(f):
        f.create_dataset("data", data=px, chunks=(2, 3, 4, 4), maxshape=(None, 3, 4, 4))
        f.create_dataset("label", data=np.array([0, 1, 2], np.float32))

    def raw_deflate(f):
        f.create_dataset("data", data=px, chunks=(1, 3, 4, 4), compression="gzip")
        f.create_dataset("label", data=np.array([[0], [1], [2]], np.float64))

    def float_data(f):
        f["data"] = px.astype(np.float32) / 255
        f["label"] = np.array([5, 6, 7], np.int64)

    def encoded(f):
        imgs = [jpeg_bytes(rng.randint(0, 256, (6, 5, 3)).astype(np.uint8)),
                png_bytes(rng.randint(0, 256, (4, 4)).astype(np.uint8))]
        enc = np.frombuffer(b"".join(imgs), np.uint8)
        f.create_dataset("encoded", data=enc, chunks=(1024,), maxshape=(None,))
        f["offsets"] = np.array([0, len(imgs[0]), len(enc)], np.uint64)
        f["shape"] = np.array([[3, 6, 5], [1, 4, 4]], np.uint32)
        f["label"] = np.array([1, 0], np.int32)
        f.attrs["format"] = "libdata"
        f.attrs["format_version"] = np.int32(1)
        f.attrs["storage"] = "encoded"
        f.attrs["encoding"] = "original"
        f.attrs["channel_order"] = "RGB"

    def no_label(f):
        f["data"] = px

    def masks(f):  # segmentation masks as the label, chunked one mask per chunk
        f["data"] = px
        m = np.random.RandomState(5).randint(0, 4, (3, 1, 4, 4))  # (rng's draws unchanged)
        f.create_dataset("label", data=m.astype(np.uint8),
                         chunks=(1, 1, 4, 4))

    def mask_deflate(f):  # class labels and deflated masks (read through HDF5)
        f["data"] = px
        f["label"] = np.array([0, 1, 2], np.int32)
        m = np.random.RandomState(6).randint(0, 255, (3, 1, 4, 4))
        f.create_dataset("mask", data=m.astype(np.uint8),
                         chunks=(2, 1, 4, 4), compression="gzip")

    def empty(f):
        f.create_dataset("data", shape=(0, 3, 4, 4), dtype=np.uint8, maxshape=(None, 3, 4, 4),
                         chunks=(1, 3, 4, 4))
        f.create_dataset("label", shape=(0,), dtype=np.int32)

    for name, fn in [("h5py_raw_contiguous", raw_contig), ("h5py_raw_chunked", raw_chunked),
                     ("h5py_raw_deflate", raw_deflate), ("h5py_float32", float_data),
                     ("h5py_encoded", encoded), ("h5py_no_label", no_label),
                     ("h5py_empty", empty), ("h5py_masks", masks),
                     ("h5py_mask_deflate", mask_deflate)]:
        put("h5_store_open", name, h5_bytes(fn))
    put("h5_store_open", "not_hdf5", b"\x89HDF\r\n\x1a\n" + b"\0" * 40)

    if not dataconv:
        return
    imgdir = os.path.join(tmp, "img")
    for c in ("a", "b"):
        os.makedirs(os.path.join(imgdir, c))
        for k in range(2):
            Image.fromarray(rng.randint(0, 256, (7 + k, 6, 3)).astype(np.uint8)).save(
                os.path.join(imgdir, c, "%d.png" % k))
    # Our writer allocates whole chunks early (1 MiB of pixels, 4096 labels/offsets), so its
    # files are ~1 MiB even for 4 tiny images: h5repack re-chunks them small (same datasets,
    # types and attributes; only the chunk sizes change) to keep the seeds fuzzable.
    small = {"data": "2x3x4x4", "encoded": "512", "label": "4", "filename": "4",
             "offsets": "4", "shape": "4x3"}
    runs = [("dataconv_raw", ["--resize", "4"], "data"),
            ("dataconv_gray", ["--resize", "4", "--gray"], "data"),
            ("dataconv_jpeg", ["--resize", "4", "--quality", "50"], "encoded"),
            ("dataconv_original", ["--encoded"], "encoded")]
    for name, args, pix in runs:
        out = os.path.join(tmp, name + ".h5")
        subprocess.run([dataconv, imgdir, out, "-q", "-j", "1"] + args, check=True)
        names = ["label", "filename"] + (["data"] if pix == "data" else
                                         ["encoded", "offsets", "shape"])
        chunks = dict(small, data="2x1x4x4" if "--gray" in args else small["data"])
        lay = sum((["-l", "%s:CHUNK=%s" % (n, chunks[n])] for n in names), [])
        packed = os.path.join(tmp, name + "-small.h5")
        subprocess.run(["h5repack"] + lay + [out, packed], check=True)
        put("h5_store_open", name, open(packed, "rb").read())
    for name, args in [("dataconv_raw", ["--resize", "4"]),
                       ("dataconv_encoded", ["--resize", "4", "--encoded"])]:
        out = os.path.join(tmp, name + ".lmdb")
        subprocess.run([dataconv, imgdir, out, "-q", "-j", "1"] + args, check=True)
        put("lmdb_open", name, open(os.path.join(out, "data.mdb"), "rb").read())


# ---- LMDB ------------------------------------------------------------------------------
def datum(c, h, w, data, label, encoded=False):
    b = field(1, 0, c) + field(2, 0, h) + field(3, 0, w) + field(4, 2, data) + field(5, 0, label)
    if encoded:
        b += field(7, 0, 1)
    return b


def lmdb_bytes(records):
    with tempfile.TemporaryDirectory() as t:
        env = lmdb.open(t, map_size=1 << 20, subdir=True)
        with env.begin(write=True) as txn:
            for k, v in records:
                txn.put(k, v)
        env.close()
        return open(os.path.join(t, "data.mdb"), "rb").read()


def lmdb_seeds():
    rng = np.random.RandomState(5)
    raw = [(b"%08d_c/%d.jpg" % (i, i), datum(3, 2, 2, rng.bytes(12), i % 3)) for i in range(4)]
    put("lmdb_open", "pylmdb_keyed_raw", lmdb_bytes(raw))
    gaps = [(b"%08d_x.jpg" % i, datum(1, 2, 3, rng.bytes(6), 1)) for i in (0, 2, 5)]
    put("lmdb_open", "pylmdb_gaps_cursor", lmdb_bytes(gaps))
    jpg = jpeg_bytes(rng.randint(0, 256, (5, 4, 3)).astype(np.uint8))
    enc = [(b"%08d_e.jpg" % i, datum(0, 0, 0, jpg, i, encoded=True)) for i in range(2)]
    put("lmdb_open", "pylmdb_encoded", lmdb_bytes(enc))
    put("lmdb_open", "pylmdb_bad_record", lmdb_bytes([(b"00000000_a", b"\x08\x03\x10"),
                                                      (b"00000001_b", datum(3, 1, 1, b"ab", 0))]))
    put("lmdb_open", "pylmdb_empty", lmdb_bytes([]))


# ---- image formats (ImageMagick writes them; `convert` from the imagemagick package) ------
FORMAT_SEEDS = {
    "tiff_decode": [("rgb_lzw.tif", ["-compress", "LZW"]), ("gray_zip.tif", ["-colorspace",
                    "Gray", "-compress", "Zip"]), ("palette.tif", ["-colors", "16", "-type",
                    "Palette"]), ("rgb16_msb.tif", ["-depth", "16", "-define",
                    "tiff:endian=msb"]), ("tiled.tif", ["-define", "tiff:tile-geometry=16x16"]),
                    ("jpeg.tif", ["-compress", "JPEG"]), ("rgba.tif", ["ALPHA"]),
                    ("orient6.tif", ["-orient", "RightTop"]), ("pages2.tif", ["PAGES"])],
    "webp_decode": [("lossy.webp", ["-quality", "50"]), ("lossless.webp", ["-define",
                    "webp:lossless=true"]), ("alpha.webp", ["ALPHA", "-quality", "50"]),
                    ("anim.webp", ["PAGES", "-define", "webp:lossless=true"])],
    "gif_decode": [("palette.gif", []), ("interlaced.gif", ["-interlace", "GIF"]),
                   ("transparent.gif", ["ALPHA"]), ("anim.gif", ["PAGES"])],
    "bmp_decode": [("rgb24.bmp", []), ("bmp3.bmp", ["-define", "bmp:format=bmp3"]),
                   ("pal8_rle.bmp", ["-colors", "16", "-type", "Palette", "-compress", "RLE",
                    "-define", "bmp:format=bmp3"]), ("pal4.bmp", ["-colors", "8", "-depth", "4",
                    "-type", "Palette"]), ("bilevel.bmp", ["-type", "Bilevel"]),
                   ("alpha32.bmp", ["ALPHA"]), ("rgb565.bmp", ["-define", "bmp:subtype=RGB565"])],
    "pnm_decode": [("gray.pgm", ["-colorspace", "Gray"]), ("rgb.ppm", []), ("ascii.ppm",
                   ["-compress", "None"]), ("ascii.pgm", ["-colorspace", "Gray", "-compress",
                   "None"]), ("bitmap.pbm", []), ("ascii.pbm", ["-compress", "None"]),
                   ("rgb16.ppm", ["-depth", "16"])],
}


def format_seeds():
    if not shutil.which("convert"):
        print("note: no ImageMagick convert: format seeds not made (apt-get install imagemagick)")
        return
    base = ["-seed", "7", "-size", "12x9", "plasma:", "-depth", "8"]
    alpha = ["(", "+clone", "-fx", "(i+j)/(w+h)", ")", "-alpha", "off", "-compose",
             "CopyOpacity", "-composite"]
    tmp = tempfile.mkdtemp()
    try:
        for target, files in FORMAT_SEEDS.items():
            for name, opts in files:
                out = os.path.join(tmp, name)
                if opts[:1] == ["PAGES"]:
                    args = ["-delay", "10"] + base + ["-size", "12x9", "gradient:red-blue"] + \
                        opts[1:] + [out]
                elif opts[:1] == ["ALPHA"]:
                    args = base + alpha + opts[1:] + [out]
                else:
                    args = base + opts + [out]
                subprocess.run(["convert"] + args, check=True)
                with open(out, "rb") as f:
                    put(target, name, f.read())
    finally:
        shutil.rmtree(tmp)
    # hand-made: the smallest headers, and sizes the pixel limit refuses
    put("bmp_decode", "core12_pal1.bmp", b"BM" + struct.pack("<IHHI", 38, 0, 0, 32) +
        struct.pack("<IHHHH", 12, 2, 2, 1, 1) + b"\0\0\0\xff\xff\xff" + b"\x40\0\0\0\x80\0\0\0")
    put("bmp_decode", "topdown_bomb.bmp", b"BM" + struct.pack("<IHHI", 62, 0, 0, 54) +
        struct.pack("<IiiHHIIiiII", 40, 60000, -60000, 1, 24, 0, 0, 0, 0, 0, 0) + b"\0" * 8)
    put("pnm_decode", "p5_maxval_1000.pgm", b"P5\n# comment\n2 2\n1000\n" +
        struct.pack(">4H", 0, 500, 999, 1000))
    put("pnm_decode", "bomb.ppm", b"P6 60000 60000 255\n" + b"\0" * 16)
    put("gif_decode", "no_colormap.gif", b"GIF89a\x02\0\x02\0\0\0\0,\0\0\0\0\x02\0\x02\0\0\x02\x02D\x01\0;")


def main():
    dataconv = sys.argv[1] if len(sys.argv) > 1 else None
    if len(sys.argv) > 1 and sys.argv[1] == "--formats":
        format_seeds()  # only the image-format seeds (no h5py/lmdb files rewritten)
        return
    format_seeds()
    exif_seeds()
    list_seeds()
    mean_seeds()
    encode_seeds()
    lmdb_seeds()
    tmp = tempfile.mkdtemp()
    try:
        h5_seeds(dataconv, tmp)
    finally:
        shutil.rmtree(tmp)
    for t in sorted(os.listdir(CORPUS)):
        files = os.listdir(os.path.join(CORPUS, t))
        size = sum(os.path.getsize(os.path.join(CORPUS, t, f)) for f in files)
        print("%-18s %3d files %8d bytes" % (t, len(files), size))


if __name__ == "__main__":
    main()
