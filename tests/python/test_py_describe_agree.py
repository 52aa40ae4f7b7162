"""Issue 27 item 1: one description of a dataset. ld_describe() (its "reader:" and "classes:"
lines), ld_dataset_stat() (libdata.stat) and ld_reader_open() (Reader.info) agree on every kind
of dataset the suite makes -- format, samples, encoded, channels, height, width, dtype, channel
order, class count -- and all three accept or all three refuse each path (one format probe).

Run: LIBDATA_LIBRARY=build/libdata.so LD_TEST_DATA=build/testdata PYTHONPATH=bindings/python \
     /usr/bin/python3 -m pytest -q tests/python/test_py_describe_agree.py
"""
import ctypes
import glob
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import libdata

TESTDATA = os.environ.get("LD_TEST_DATA", "")
TREE = os.path.join(TESTDATA, "tree")
HERE = os.path.dirname(os.path.abspath(__file__))

pytestmark = pytest.mark.skipif(not os.path.isdir(TREE),
                                reason="LD_TEST_DATA must point at the made fixtures")


def merge(out, parts):
    """ld_merge through ctypes (the bindings do not wrap it)."""
    lib = ctypes.CDLL(os.environ["LIBDATA_LIBRARY"])
    lib.ld_merge.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t,
                             ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
    arr = (ctypes.c_char_p * len(parts))(*[os.fsencode(p) for p in parts])
    err = ctypes.c_void_p()
    rc = lib.ld_merge(os.fsencode(out), arr, len(parts), None, None, ctypes.byref(err))
    assert rc == 0, ctypes.string_at(err.value).decode() if err.value else rc


def make_all(tmp):
    """Every kind of dataset the suite makes: name -> path."""
    d = {}
    d["h5_raw"] = str(tmp / "raw.h5")
    libdata.convert(TREE, d["h5_raw"], resize=16, threads=2)
    d["h5_rgb_gray"] = str(tmp / "gray.h5")
    libdata.convert(TREE, d["h5_rgb_gray"], resize=(20, 12), gray=True, threads=2)
    d["h5_encoded"] = str(tmp / "enc.h5")
    libdata.convert(TREE, d["h5_encoded"], resize=16, encoded=True, rgb=True, threads=2)
    libdata.convert(TREE, str(tmp / "split.h5"), resize=16, split=4000, threads=2)
    d["h5_split_list"] = str(tmp / "split.txt")
    parts = []
    for k in range(3):
        libdata.convert(TREE, str(tmp / "p.h5"), resize=16, shard=(k, 3), threads=1)
        parts.append(str(tmp / f"p-{k:05d}-of-00003.h5"))
    d["h5_part"] = parts[1]
    d["h5_merged"] = str(tmp / "merged.h5")
    merge(d["h5_merged"], parts)
    d["lmdb_raw"] = str(tmp / "raw.lmdb")
    libdata.convert(TREE, d["lmdb_raw"], resize=16, threads=2)
    d["lmdb_jpeg"] = str(tmp / "jpeg.lmdb")
    libdata.convert(TREE, d["lmdb_jpeg"], resize=16, quality=70, rgb=True, threads=2)
    d["lmdb_data_mdb"] = os.path.join(d["lmdb_raw"], "data.mdb")
    lparts = []
    for k in range(2):
        libdata.convert(TREE, str(tmp / "q.lmdb"), resize=16, shard=(k, 2), threads=1)
        lparts.append(str(tmp / f"q-{k:05d}-of-00002.lmdb"))
    d["lmdb_merged"] = str(tmp / "merged.lmdb")
    merge(d["lmdb_merged"], lparts)
    for kind in ("raw", "encoded"):
        d[f"caffe_{kind}"] = str(tmp / f"caffe_{kind}")
        subprocess.run([sys.executable, os.path.join(HERE, "lmdb_make_caffe_db.py"),
                        d[f"caffe_{kind}"], kind], check=True)
    import h5py
    d["h5py_other_tool"] = str(tmp / "other.h5")
    with h5py.File(d["h5py_other_tool"], "w") as f:
        f["data"] = np.zeros((7, 3, 10, 9), np.float32)
        f["label"] = np.arange(7, dtype=np.float32)
    return d


def from_describe(text):
    """The facts of describe()'s text: its "reader:" line (what ld_reader gives, laid over the
    records) and its "classes:" line."""
    m = re.search(r"^reader: (HDF5|LMDB), (\d+) samples, (raw|encoded) (uint8|float32), "
                  r"(\d+) x (\d+) x (\d+)(?: \(the first sample's\))?, channel order "
                  r"(BGR|RGB|GRAY|as stored), labels (int32|float32)$", text, re.M)
    assert m, text
    c = re.search(r"^classes: (\d+):|^classes: none recorded$", text, re.M)
    order = None if m[8] == "as stored" else m[8]
    return dict(format=m[1].lower(), samples=int(m[2]), encoded=m[3] == "encoded",
                dtype=np.dtype(m[4]), channels=int(m[5]), height=int(m[6]), width=int(m[7]),
                channel_order=order, classes=int(c[1]) if c and c[1] else 0)


def from_stat(s):
    return dict(format=s.format, samples=s.samples, encoded=s.encoded, dtype=np.dtype(s.dtype),
                channels=s.channels, height=s.height, width=s.width,
                channel_order=s.channel_order, classes=len(s.classes or []))


def from_reader(path, fmt):
    with libdata.Reader(path, batch_size=2, threads=1) as r:
        i = r.info
        return dict(format=fmt, samples=i.samples, encoded=i.encoded, dtype=np.dtype(i.dtype),
                    channels=i.channels, height=i.height, width=i.width,
                    channel_order=i.channel_order, classes=len(i.classes or []))


@pytest.fixture(scope="module")
def datasets(tmp_path_factory):
    return make_all(tmp_path_factory.mktemp("agree"))


KINDS = ["h5_raw", "h5_rgb_gray", "h5_encoded", "h5_split_list", "h5_part", "h5_merged",
         "lmdb_raw", "lmdb_jpeg", "lmdb_data_mdb", "lmdb_merged", "caffe_raw", "caffe_encoded",
         "h5py_other_tool"]


@pytest.mark.parametrize("kind", KINDS)
def test_the_three_agree(datasets, kind):
    path = datasets[kind]
    d = from_describe(libdata.describe(path))
    s = from_stat(libdata.stat(path))
    r = from_reader(path, s["format"])
    assert d == s, (kind, d, s)
    # the reader delivers float32 for a float dataset only when asked: it says what it gives
    if s["dtype"] == np.float32:
        r["dtype"] = s["dtype"]
    assert r == s, (kind, r, s)
    assert s["samples"] > 0


def test_what_each_kind_is(datasets):
    """The agreed facts are the right ones (not three times the same mistake)."""
    want = {
        "h5_raw": ("hdf5", 9, False, 3, 16, 16, "BGR", 3),
        "h5_rgb_gray": ("hdf5", 9, False, 1, 12, 20, "GRAY", 3),
        "h5_encoded": ("hdf5", 9, True, 3, 16, 16, "RGB", 3),
        "h5_split_list": ("hdf5", 9, False, 3, 16, 16, "BGR", 3),
        "h5_merged": ("hdf5", 9, False, 3, 16, 16, "BGR", 3),
        "lmdb_jpeg": ("lmdb", 9, True, 3, 16, 16, "RGB", 3),
        "lmdb_data_mdb": ("lmdb", 9, False, 3, 16, 16, "BGR", 3),
        "lmdb_merged": ("lmdb", 9, False, 3, 16, 16, "BGR", 3),
        "caffe_raw": ("lmdb", 8, False, 3, 12, 10, "BGR", 0),
        "h5py_other_tool": ("hdf5", 7, False, 3, 10, 9, None, 0),
    }
    for kind, w in want.items():
        s = libdata.stat(datasets[kind])
        got = (s.format, s.samples, s.encoded, s.channels, s.height, s.width, s.channel_order,
               len(s.classes or []))
        assert got == w, (kind, got, w)
    text = libdata.describe(datasets["h5_part"])
    assert re.search(r"^shard: part 1 of 3 \(0-based\), listed samples 3\.\.6 of 9, run_id "
                     r"[0-9a-f]{16}$", text, re.M), text


def refused(path):
    """(code or None) from each of the three."""
    out = []
    for fn in (libdata.describe, libdata.stat,
               lambda p: libdata.Reader(p, batch_size=1, threads=1).close()):
        try:
            fn(path)
            out.append(None)
        except libdata.LibdataError as e:
            out.append(e.code)
    return out


def test_all_three_refuse_the_same_paths(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "junk.h5").write_bytes(b"not an HDF5 file\n" * 10)
    (tmp_path / "missing.txt").write_text("nothere-00000.h5\n")
    (tmp_path / "nolist.txt").write_text("\n# nothing\n")
    (tmp_path / "x.mdb").write_bytes(b"\0" * 100)
    cases = {str(tmp_path / "none.h5"): libdata.LD_EIO,
             TREE: libdata.LD_EFORMAT,  # a folder of images: "convert it first"
             str(tmp_path / "empty"): libdata.LD_EFORMAT,
             str(tmp_path / "junk.h5"): None,
             str(tmp_path / "missing.txt"): None,
             str(tmp_path / "nolist.txt"): libdata.LD_EFORMAT,
             str(tmp_path / "x.mdb"): None}
    for path, code in cases.items():
        got = refused(path)
        assert None not in got, (path, got)  # every one refuses
        if code is not None:
            assert got == [code] * 3, (path, got)
    with pytest.raises(libdata.LibdataError) as e:
        libdata.describe(TREE)
    assert "convert" in str(e.value)
