"""Class names that are not UTF-8 or hold control characters (a newline), through describe() and
Reader.info.classes: HDF5 and LMDB give the same names, read as os.fsdecode reads file names
(surrogateescape: 'caf\\udce9'), and the description keeps one item per line (names escaped).

Run: LIBDATA_LIBRARY=build/libdata.so LD_TEST_DATA=build/testdata PYTHONPATH=bindings/python \
     /usr/bin/python3 -m pytest -q tests/python/test_py_describe_names.py
"""
import glob
import os
import shutil

import pytest

import libdata

TESTDATA = os.environ.get("LD_TEST_DATA", "")
PHOTOS = sorted(glob.glob(os.path.join(TESTDATA, "photos", "p*.jpg")))

pytestmark = pytest.mark.skipif(len(PHOTOS) < 4,
                                reason="LD_TEST_DATA must point at the made fixtures")

LATIN1 = [b"cl\xe9s3", b"ok"]
CONTROL = [b"caf\xe9", b"new\nline", b"ok", b"tab\tand\\slash"]


def make_tree(root, names):
    for k, name in enumerate(names):
        d = os.path.join(os.fsencode(str(root)), name)
        os.mkdir(d)
        shutil.copy(PHOTOS[k], os.path.join(d, b"img.jpg"))
    return str(root)


@pytest.mark.parametrize("names", [LATIN1, CONTROL], ids=["latin1", "control"])
@pytest.mark.parametrize("out", ["out.h5", "out.lmdb"])
def test_class_names_come_back_as_fsdecode_gives_them(tmp_path, names, out):
    os.mkdir(tmp_path / "src")
    tree = make_tree(tmp_path / "src", names)
    path = str(tmp_path / out)
    libdata.convert(tree, path, resize=16, threads=2)
    want = [os.fsdecode(n) for n in names]
    with libdata.Reader(path, batch_size=2, threads=1) as r:
        assert r.info.classes == want
    text = libdata.describe(path)
    assert "\ufffd" not in text  # valid UTF-8: nothing replaced
    if out.endswith(".h5") and names is CONTROL:
        line = [l for l in text.splitlines() if l.startswith("classes:")]
        assert line == ["classes: 4: caf\\xe9, new\\nline, ok, tab\\tand\\\\slash"], text


@pytest.mark.parametrize("kind", ["fixed-ascii", "vlen-ascii", "vlen-utf8", "fixed-utf8"])
def test_class_names_written_by_other_tools(tmp_path, kind):
    """class_names as h5py or NumPy users write it: fixed-length ('S') or variable-length
    strings, ASCII or UTF-8. Reader.info.classes and describe() read every form."""
    import h5py
    import numpy as np
    os.mkdir(tmp_path / "src")
    tree = make_tree(tmp_path / "src", [b"bird", b"car", b"cat"])
    path = str(tmp_path / "out.h5")
    libdata.convert(tree, path, resize=16, threads=1)
    names = ["bird", "car", "cat"]
    with h5py.File(path, "r+") as f:
        del f.attrs["class_names"]
        if kind == "fixed-ascii":
            f.attrs["class_names"] = np.array([n.encode() for n in names], dtype="S5")
        elif kind == "fixed-utf8":
            f.attrs.create("class_names", [n.encode() for n in names],
                           dtype=h5py.string_dtype("utf-8", 8))
        else:
            enc = "ascii" if kind == "vlen-ascii" else "utf-8"
            f.attrs.create("class_names", names, dtype=h5py.string_dtype(enc))
    with libdata.Reader(path, batch_size=2, threads=1) as r:
        assert r.info.classes == names
    text = libdata.describe(path)
    assert "classes: 3: bird, car, cat" in text, text
