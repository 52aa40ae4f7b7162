"""libdata.convert() with a dataset as input (HDF5, LMDB, split list, merged file) and
libdata.merge(), cross-checked with h5py and python3-lmdb (issue 29, item 4).

Run: LIBDATA_LIBRARY=build/libdata.so LD_TEST_DATA=build/testdata PYTHONPATH=bindings/python \\
     /usr/bin/python3 -m pytest -q tests/python/test_py_dataset_input.py
"""
import hashlib
import os

import h5py
import lmdb
import numpy as np
import pytest

import libdata
from libdata import LibdataError

TESTDATA = os.environ.get("LD_TEST_DATA", "")
TREE = os.path.join(TESTDATA, "tree")

pytestmark = pytest.mark.skipif(not os.path.isdir(TREE),
                                reason="LD_TEST_DATA must point at the made fixtures")


def h5_samples(path):
    with h5py.File(path, "r") as f:
        names = [n.decode() for n in f["filename"][:]]
        labels = f["label"][:].tolist()
        classes = [c.decode() if isinstance(c, bytes) else c for c in f.attrs["class_names"]]
        if "encoded" in f:
            off, enc = f["offsets"][:], f["encoded"][:]
            data = [hashlib.md5(enc[off[i]:off[i + 1]].tobytes()).hexdigest()
                    for i in range(len(names))]
        else:
            data = [hashlib.md5(x.tobytes()).hexdigest() for x in f["data"][:]]
        return names, labels, classes, data, f.attrs["source"]


def test_convert_hdf5_to_lmdb_and_back_keeps_everything(tmp_path):
    raw = tmp_path / "raw.h5"
    libdata.convert(TREE, raw, resize=(20, 16))
    s = libdata.convert(raw, tmp_path / "raw.lmdb")
    assert s.converted == s.total > 0
    env = lmdb.open(str(tmp_path / "raw.lmdb"), readonly=True, lock=False)
    with env.begin() as txn:
        keys = [k.decode() for k, _ in txn.cursor()]
    env.close()
    names = h5_samples(raw)[0]
    assert [k.split("_", 1)[1] for k in keys] == names
    libdata.convert(tmp_path / "raw.lmdb", tmp_path / "back.h5")
    a, b = h5_samples(raw), h5_samples(tmp_path / "back.h5")
    assert a[:4] == b[:4]  # names, labels, classes, pixels
    assert b[4] == str(tmp_path / "raw.lmdb")  # provenance names the input


def test_convert_encoded_dataset_keeps_bytes_unless_asked(tmp_path):
    enc = tmp_path / "enc.h5"
    libdata.convert(TREE, enc, encoded=True)
    libdata.convert(enc, tmp_path / "same.h5")
    assert h5_samples(enc)[:4] == h5_samples(tmp_path / "same.h5")[:4]
    libdata.convert(enc, tmp_path / "q.h5", quality=60, resize=24)
    a, b = h5_samples(enc), h5_samples(tmp_path / "q.h5")
    assert a[:3] == b[:3] and a[3] != b[3]
    with h5py.File(tmp_path / "q.h5", "r") as f:
        assert int(f.attrs["quality"]) == 60
        assert (f["shape"][:, 1:] == 24).all()


def test_convert_split_list_and_shuffle(tmp_path):
    libdata.convert(TREE, tmp_path / "sp.h5", resize=(20, 16), split=8000)
    listing = tmp_path / "sp.txt"
    assert len(listing.read_text().split()) >= 2
    libdata.convert(listing, tmp_path / "all.h5")
    libdata.convert(TREE, tmp_path / "one.h5", resize=(20, 16))
    assert h5_samples(tmp_path / "one.h5")[:4] == h5_samples(tmp_path / "all.h5")[:4]
    libdata.convert(tmp_path / "one.h5", tmp_path / "shuf.h5", shuffle=True, seed=5)
    a, b = h5_samples(tmp_path / "one.h5"), h5_samples(tmp_path / "shuf.h5")
    assert sorted(zip(a[0], a[1], a[3])) == sorted(zip(b[0], b[1], b[3]))
    assert a[0] != b[0]


def test_merge_parts_of_a_dataset_input(tmp_path):
    enc = tmp_path / "enc.h5"
    libdata.convert(TREE, enc, encoded=True)
    parts = [libdata.convert(enc, tmp_path / "p.lmdb", shard=(k, 2)).output for k in (1, 0)]
    logged = []
    out = libdata.merge(parts, tmp_path / "p.lmdb", log=lambda lvl, m: logged.append(m))
    assert out == str(tmp_path / "p.lmdb") and logged
    libdata.convert(tmp_path / "p.lmdb", tmp_path / "m.h5")
    assert h5_samples(enc)[:4] == h5_samples(tmp_path / "m.h5")[:4]
    # HDF5 parts found beside the output (parts=None), read back through the merged file
    for k in range(3):
        libdata.convert(enc, tmp_path / "q.h5", shard=(k, 3))
    assert libdata.merge(None, tmp_path / "q.h5") == str(tmp_path / "q.h5")
    libdata.convert(tmp_path / "q.h5", tmp_path / "q2.h5")
    assert h5_samples(enc)[:4] == h5_samples(tmp_path / "q2.h5")[:4]


def test_merge_refuses_a_missing_part(tmp_path):
    libdata.convert(TREE, tmp_path / "r.h5", resize=8, shard=(0, 2))
    with pytest.raises(LibdataError) as ei:
        libdata.merge([tmp_path / "r-00000-of-00002.h5"], tmp_path / "r.h5")
    assert ei.value.code == libdata.LD_EINVAL
    assert "r-00001-of-00002" in ei.value.message
    assert not (tmp_path / "r.h5").exists()


def test_convert_refuses_a_truncated_dataset(tmp_path):
    libdata.convert(TREE, tmp_path / "ok.h5", resize=8)
    data = (tmp_path / "ok.h5").read_bytes()
    (tmp_path / "bad.h5").write_bytes(data[:len(data) // 3])
    with pytest.raises(LibdataError) as ei:
        libdata.convert(tmp_path / "bad.h5", tmp_path / "out.lmdb")
    assert ei.value.code in (libdata.LD_EFORMAT, libdata.LD_EIO)
    assert "bad.h5" in ei.value.message
    assert not (tmp_path / "out.lmdb").exists()


def test_float_pixels_and_masks_are_refused_with_what_to_do(tmp_path):
    with h5py.File(tmp_path / "f.h5", "w") as f:
        f["data"] = np.zeros((2, 3, 4, 5), np.float32)
        f["label"] = np.zeros(2, np.int32)
    with pytest.raises(LibdataError) as ei:
        libdata.convert(tmp_path / "f.h5", tmp_path / "o.h5")
    assert ei.value.code == libdata.LD_EFORMAT and "float32" in ei.value.message
    with h5py.File(tmp_path / "m.h5", "w") as f:
        f["data"] = np.zeros((2, 3, 4, 5), np.uint8)
        f["label"] = np.zeros(2, np.int32)
        f["mask"] = np.zeros((2, 1, 4, 5), np.uint8)
    with pytest.raises(LibdataError) as ei:
        libdata.convert(tmp_path / "m.h5", tmp_path / "o.h5")
    assert ei.value.code == libdata.LD_EFORMAT and "masks" in ei.value.message
