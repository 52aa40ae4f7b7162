"""PNG eXIf orientation is applied like Pillow's ImageOps.exif_transpose (issue 12, item 20).

PNGs with an eXIf chunk (orientations 1..8) are made with Pillow at test time, converted with
libdata.convert (raw pixels, RGB order) and compared with exif_transpose; also with the chunk
moved after the image data, with the "Exif\\0\\0" prefix some writers keep, gray, and read
back through the encoded (PNG kept as is) path of the Reader.

Run: LIBDATA_LIBRARY=build/libdata.so LD_TEST_DATA=build/testdata PYTHONPATH=bindings/python \
     /usr/bin/python3 -m pytest -q tests/python/test_py_png_exif.py
"""
import struct
import zlib

import h5py
import numpy as np
import pytest

import libdata

Image = pytest.importorskip("PIL.Image")
ImageOps = pytest.importorskip("PIL.ImageOps")

W, H = 11, 6  # not square: orientations 5..8 swap the sides


def pixels(mode):
    rng = np.random.default_rng(7)
    if mode == "L":
        return Image.fromarray(rng.integers(0, 256, (H, W), dtype=np.uint8), "L")
    return Image.fromarray(rng.integers(0, 256, (H, W, 3), dtype=np.uint8), "RGB")


def chunks(data):
    """[(type, body)] of a PNG."""
    out, pos = [], 8
    while pos < len(data):
        n, = struct.unpack(">I", data[pos:pos + 4])
        out.append((data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]))
        pos += 12 + n
    return out


def build(chunk_list):
    out = b"\x89PNG\r\n\x1a\n"
    for t, body in chunk_list:
        out += struct.pack(">I", len(body)) + t + body + struct.pack(">I", zlib.crc32(t + body))
    return out


def make_png(path, orientation, mode="RGB", where="before", prefix=False):
    im = pixels(mode)
    exif = Image.Exif()
    exif[0x0112] = orientation
    im.save(path, exif=exif.tobytes())
    data = open(path, "rb").read()
    cl = chunks(data)
    ex = [c for c in cl if c[0] == b"eXIf"]
    assert len(ex) == 1, "Pillow did not write an eXIf chunk"
    body = ex[0][1]
    if prefix and not body.startswith(b"Exif\0\0"):
        body = b"Exif\0\0" + body
    cl = [c for c in cl if c[0] != b"eXIf"]
    idat = next(i for i, c in enumerate(cl) if c[0] == b"IDAT")
    cl.insert(idat if where == "before" else len(cl) - 1, (b"eXIf", body))
    data = build(cl)
    open(path, "wb").write(data)
    if not prefix:  # (this Pillow does not parse the prefixed form)
        with Image.open(path) as check:
            check.load()
            assert check.getexif().get(0x0112) == orientation
    return path


def expected(path):
    with Image.open(path) as im:
        im.load()
        return np.asarray(ImageOps.exif_transpose(im))


def convert_one(tmp_path, png, **kw):
    src = tmp_path / "src"
    (src / "a").mkdir(parents=True)
    (src / "a" / "x.png").write_bytes(png.read_bytes())
    out = tmp_path / "out.h5"
    libdata.convert(src, out, rgb=True, **kw)
    with h5py.File(out, "r") as f:
        return f["data"][0]


@pytest.mark.parametrize("where", ["before", "after"])
@pytest.mark.parametrize("orientation", range(1, 9))
def test_png_exif_orientation_matches_pillow(tmp_path, orientation, where):
    png = make_png(tmp_path / "o.png", orientation, where=where)
    want = expected(png)
    if orientation >= 5:
        assert want.shape[:2] == (W, H)
    got = convert_one(tmp_path, png)  # (C, H, W) RGB
    assert got.shape == (3,) + want.shape[:2], f"orientation {orientation}: shape {got.shape}"
    assert np.array_equal(got.transpose(1, 2, 0), want), f"orientation {orientation} differs"


@pytest.mark.parametrize("orientation", [3, 6, 8])
@pytest.mark.parametrize("prefix", [False, True])
def test_gray_and_exif_prefix(tmp_path, orientation, prefix):
    """Gray; and the eXIf body with the APP1 "Exif\\0\\0" prefix (compared with Pillow on
    the same image without it)."""
    want = expected(make_png(tmp_path / "plain.png", orientation, mode="L"))
    png = make_png(tmp_path / "g.png", orientation, mode="L", prefix=prefix)
    got = convert_one(tmp_path, png, gray=True)
    assert np.array_equal(got[0], want)


def test_encoded_png_read_back_through_the_reader_is_oriented(tmp_path):
    png = make_png(tmp_path / "e.png", 6)
    want = expected(png)
    src = tmp_path / "src"
    (src / "a").mkdir(parents=True)
    (src / "a" / "x.png").write_bytes(png.read_bytes())
    out = tmp_path / "enc.h5"
    libdata.convert(src, out, encode_type="png", rgb=True)
    with libdata.Reader(out, batch_size=1, channel_order="RGB") as r:
        assert r.info.shape == (3, W, H)
        data, _ = next(iter(r))
    assert np.array_equal(data[0].transpose(1, 2, 0), want)
