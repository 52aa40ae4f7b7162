"""Issue 14 item 4: libdata.stat() (the C ld_dataset_stat) gives what a dataset holds, and
Reader.info takes its class names from it instead of parsing describe()'s text. Compared with
h5py, python-lmdb and the LMDB sidecar read as JSON, on datasets made by libdata and by other
tools (h5py; Caffe's convert_imageset layout made with python-lmdb + protobuf).

Run: LIBDATA_LIBRARY=build/libdata.so LD_TEST_DATA=build/testdata PYTHONPATH=bindings/python \
     /usr/bin/python3 -m pytest -q tests/python/test_py_dataset_stat.py
"""
import glob
import json
import os
import shutil
import subprocess
import sys

import h5py
import lmdb
import numpy as np
import pytest

import libdata

TESTDATA = os.environ.get("LD_TEST_DATA", "")
TREE = os.path.join(TESTDATA, "tree")
PHOTOS = sorted(glob.glob(os.path.join(TESTDATA, "photos", "p*.jpg")))
HERE = os.path.dirname(os.path.abspath(__file__))

pytestmark = pytest.mark.skipif(not os.path.isdir(TREE) or len(PHOTOS) < 4,
                                reason="LD_TEST_DATA must point at the made fixtures")


def reader_view(path):
    with libdata.Reader(path, batch_size=2, threads=1, crop=8) as r:
        return r.info


def test_ours_hdf5_against_h5py(tmp_path):
    out = str(tmp_path / "t.h5")
    libdata.convert(TREE, out, resize=(20, 12), rgb=True, threads=2)
    s = libdata.stat(out)
    with h5py.File(out, "r") as f:
        assert s.samples == len(f["label"])
        assert (s.channels, s.height, s.width) == f["data"].shape[1:]
        assert s.dtype == f["data"].dtype and s.label_dtype == f["label"].dtype
        assert s.classes == [n.decode() if isinstance(n, bytes) else n
                             for n in f.attrs["class_names"]]
        assert s.channel_order == f.attrs["channel_order"] == "RGB"
        assert (s.resize_w, s.resize_h) == (f.attrs["resize_w"], f.attrs["resize_h"]) == (20, 12)
    assert (s.format, s.by_libdata, s.files, s.encoded, s.encoding) == ("hdf5", True, 1, False, None)
    info = reader_view(out)
    assert (info.samples, info.channels, info.channel_order, info.classes) == \
        (s.samples, s.channels, s.channel_order, s.classes)


def test_ours_lmdb_jpeg_against_lmdb_and_the_sidecar(tmp_path):
    out = str(tmp_path / "t.lmdb")
    libdata.convert(TREE, out, resize=16, quality=70, gray=True, threads=2)
    s = libdata.stat(out)
    with open(os.path.join(out, "libdata.json"), encoding="utf-8") as f:
        side = json.load(f)
    env = lmdb.open(out, readonly=True, lock=False)
    entries = env.stat()["entries"]
    env.close()
    assert s.samples == entries == side["entries"]
    assert s.classes == side["class_names"]
    assert (s.encoded, s.encoding, s.quality) == (True, side["encoding"], side["quality"]) == \
        (True, "jpeg", 70)
    assert (s.channels, s.height, s.width) == (side["channels"], side["height"], side["width"])
    assert s.channel_order == side["channel_order"] == "GRAY"
    assert s.resize_mode == side["resize_mode"] == "squash"
    info = reader_view(out)
    assert (info.samples, info.channels, info.channel_order, info.classes) == \
        (s.samples, s.channels, s.channel_order, s.classes)


def test_other_tools_files(tmp_path):
    h5 = str(tmp_path / "other.h5")
    with h5py.File(h5, "w") as f:
        f["data"] = np.zeros((7, 3, 10, 9), np.float32)
        f["label"] = np.arange(7, dtype=np.float32)
    s = libdata.stat(h5)
    assert (s.by_libdata, s.samples, s.channels, s.height, s.width) == (False, 7, 3, 10, 9)
    assert (s.dtype, s.label_dtype) == (np.float32, np.float32)
    assert s.channel_order is None and s.classes is None and s.encoding is None

    db = str(tmp_path / "caffe")
    subprocess.run([sys.executable, os.path.join(HERE, "lmdb_make_caffe_db.py"), db, "encoded"],
                   check=True)
    s = libdata.stat(db)
    env = lmdb.open(db, readonly=True, lock=False)
    entries = env.stat()["entries"]
    env.close()
    assert (s.format, s.by_libdata, s.samples, s.encoded) == ("lmdb", False, entries, True)
    assert s.shape_of_first and s.channel_order == "BGR"  # Caffe decodes to BGR
    assert s.classes is None


@pytest.mark.parametrize("out", ["many.h5", "many.lmdb"])
def test_classes_do_not_come_from_the_description(tmp_path, out, monkeypatch):
    """25 classes: describe() lists at most 20 of an HDF5 file's, which the old parser gave up
    on (then asked h5py); and whatever describe() says, the names come from the struct."""
    src = tmp_path / "src"
    names = [f"class {k:02d}" for k in range(25)]
    for k, name in enumerate(names):
        os.makedirs(src / name)
        shutil.copy(PHOTOS[k % len(PHOTOS)], src / name / "x.jpg")
    path = str(tmp_path / out)
    libdata.convert(str(src), path, resize=8, threads=2)
    monkeypatch.setitem(sys.modules, "h5py", None)  # no h5py fallback
    monkeypatch.setattr(libdata, "describe", lambda p: "classes: 2: wrong, names\n")
    assert libdata.stat(path).classes == names
    with libdata.Reader(path, batch_size=5, threads=1) as r:
        assert r.info.classes == names
        assert r.info.description == "classes: 2: wrong, names\n"


def test_errors_name_the_path(tmp_path):
    missing = str(tmp_path / "none.h5")
    with pytest.raises(libdata.LibdataError) as e:
        libdata.stat(missing)
    assert e.value.code == libdata.LD_EIO and missing in str(e.value)
    with pytest.raises(libdata.LibdataError) as e:
        libdata.stat(TREE)
    assert e.value.code == libdata.LD_EFORMAT and "convert" in str(e.value)
    with pytest.raises(TypeError):
        libdata.stat(3)  # type: ignore[arg-type]
