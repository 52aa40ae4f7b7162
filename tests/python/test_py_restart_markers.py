"""Restart markers in the JPEGs dataconv writes, and the box decoder's splicing of them (issue 16
item 3): with --restart-markers every re-encoded image carries a DRI whose interval divides its
MCUs per row (or is whole rows); independent decoders read the files (Pillow, OpenCV and djpeg
agree), and the markers do not change the pixels (jpegtran -restart 0 rewrites the same
coefficients without them: same pixels). Without the flag there are none, and it is refused when
nothing is JPEG-encoded. The box decoder's pixels on such files: tests/unit/test_jpeg_splice.c;
the reader's random resized crop on the recipe files against Pillow: test_py_rrc.py.

Run: LIBDATA_LIBRARY=build/libdata.so LD_TEST_DATA=build/testdata DATACONV=build/dataconv \
     PYTHONPATH=bindings/python /usr/bin/python3 -m pytest -q tests/python/test_py_restart_markers.py
"""
import io
import shutil
import subprocess

import cv2
import h5py
import numpy as np
import pytest
from PIL import Image

from photo_sets import DATACONV, PHOTOS, convert, needed

pytestmark = needed


@pytest.fixture(scope="module")
def datasets(tmp_path_factory):
    tmp = str(tmp_path_factory.mktemp("rst"))
    rst = "--restart-markers"
    return {
        "recipe": convert(tmp, "recipe.h5", "--rgb", "--max-side", "256", "--quality", "90", rst),
        "q80": convert(tmp, "q80.h5", "--rgb", "--max-side", "256", "--quality", "80", rst),
        "gray": convert(tmp, "gray.h5", "--gray", "--max-side", "256", "--quality", "90", rst),
        "plain": convert(tmp, "plain.h5", "--rgb", "--max-side", "256", "--quality", "90"),
    }


def samples(path):
    with h5py.File(path, "r") as f:
        e, o = f["encoded"][:], f["offsets"][:]
    return [e[o[i]:o[i + 1]].tobytes() for i in range(len(o) - 1)]


def header(b):
    """(width, height, [(h, v) per component], restart interval or 0) from the markers."""
    p, dri, sof = 2, 0, None
    while p + 4 <= len(b):
        assert b[p] == 0xFF, f"no marker at {p}"
        m, n = b[p + 1], b[p + 2] << 8 | b[p + 3]
        if m in (0xC0, 0xC1):
            h, w, nc = b[p + 5] << 8 | b[p + 6], b[p + 7] << 8 | b[p + 8], b[p + 9]
            sof = (w, h, [(b[p + 11 + 3 * k] >> 4, b[p + 11 + 3 * k] & 15) for k in range(nc)])
        elif m == 0xDD:
            dri = b[p + 4] << 8 | b[p + 5]
        elif m == 0xDA:
            break
        p += 2 + n
    assert sof, "no baseline SOF"
    return (*sof, dri)


@pytest.mark.parametrize("name", ["recipe", "q80", "gray"])
def test_reencoded_files_carry_restart_markers(datasets, name):
    for b in samples(datasets[name]):
        w, h, comps, dri = header(b)
        mcu = 8 * max(c[0] for c in comps) if len(comps) > 1 else 8
        per_row = (w + mcu - 1) // mcu
        assert dri > 0, "no DRI"
        assert per_row % dri == 0 or dri % per_row == 0, f"{dri} vs {per_row} MCUs per row"
        assert dri <= 4 or dri == per_row
        # the recipe is 4:4:4, quality 80 is 4:2:0
        if name == "q80":
            assert comps[0] == (2, 2)
        # as many RST markers as segments
        count = sum(b.count(bytes([0xFF, 0xD0 + k])) for k in range(8))
        mcus = per_row * ((h + (8 * max(c[1] for c in comps) if len(comps) > 1 else 8) - 1)
                          // (8 * max(c[1] for c in comps) if len(comps) > 1 else 8))
        assert count == (mcus + dri - 1) // dri - 1


@pytest.mark.skipif(not (shutil.which("djpeg") and shutil.which("jpegtran")),
                    reason="djpeg and jpegtran (libjpeg-turbo-progs) are needed")
@pytest.mark.parametrize("name", ["recipe", "q80", "gray"])
def test_independent_decoders_same_pixels_as_without_markers(datasets, name):
    for b in samples(datasets[name])[:12]:
        pil = np.asarray(Image.open(io.BytesIO(b)))
        if pil.ndim == 3:  # OpenCV: what Caffe's Data layer decodes with
            cv = cv2.imdecode(np.frombuffer(b, np.uint8), cv2.IMREAD_COLOR)
            assert np.array_equal(cv[:, :, ::-1], pil)
        dj = subprocess.run(["djpeg", "-pnm"], input=b, capture_output=True, check=True)
        assert dj.stderr == b"", dj.stderr  # djpeg prints libjpeg's warnings
        assert np.array_equal(np.asarray(Image.open(io.BytesIO(dj.stdout))), pil)
        plain = subprocess.run(["jpegtran", "-restart", "0", "-copy", "none"], input=b,
                               capture_output=True, check=True).stdout
        assert header(plain)[3] == 0, "jpegtran kept the DRI"
        assert len(plain) < len(b)
        assert np.array_equal(np.asarray(Image.open(io.BytesIO(plain))), pil)


def test_restart_markers_are_opt_in(datasets):
    """Without --restart-markers no DRI is written, and the pixels are the same as with it."""
    plain, marked = samples(datasets["plain"]), samples(datasets["recipe"])
    assert len(plain) == len(marked) > 0
    for p, m in zip(plain, marked):
        assert header(p)[3] == 0, "a DRI without --restart-markers"
        assert len(p) < len(m)
        assert np.array_equal(np.asarray(Image.open(io.BytesIO(p))),
                              np.asarray(Image.open(io.BytesIO(m))))


@pytest.mark.parametrize("flags", [["--resize", "64"], ["--encoded"],
                                   ["--max-side", "64", "--encode-type", "png"]])
def test_restart_markers_need_a_jpeg_encode(tmp_path, flags):
    """Raw pixels, original file bytes, PNG: nothing to put markers in. Refused, saying what
    to add, and nothing is written."""
    out = tmp_path / "x.h5"
    r = subprocess.run([DATACONV, PHOTOS, str(out), "--flat", "--restart-markers", *flags],
                       capture_output=True, text=True)
    assert r.returncode != 0
    assert "restart_markers" in r.stderr and "quality" in r.stderr, r.stderr
    assert not out.exists()
