"""libdata.convert(shard=(K, N)) from Python: the part's name and attributes (h5py), resume
(summary.resumed), refusals; the same parameters as dataconv --shard.

Run: LIBDATA_LIBRARY=build/libdata.so LD_TEST_DATA=build/testdata PYTHONPATH=bindings/python \\
     /usr/bin/python3 -m pytest -q tests/python/test_py_shard.py
"""
import os

import h5py
import numpy as np
import pytest

import libdata
from libdata import LibdataError

TESTDATA = os.environ.get("LD_TEST_DATA", "")
TREE = os.path.join(TESTDATA, "tree")

pytestmark = pytest.mark.skipif(not os.path.isdir(TREE),
                                reason="LD_TEST_DATA must point at the made fixtures")


def test_parts_hold_the_single_runs_samples_in_order(tmp_path):
    single = libdata.convert(TREE, tmp_path / "s.h5", resize=16, shuffle=True, seed=3)
    got = []
    for k in range(3):
        s = libdata.convert(TREE, tmp_path / "p.h5", resize=16, shuffle=True, seed=3,
                            shard=(k, 3))
        assert s.output == str(tmp_path / f"p-{k:05d}-of-00003.h5")
        assert s.resumed == 0
        with h5py.File(s.output, "r") as f:
            assert (int(f.attrs["shard_index"]), int(f.attrs["shard_count"])) == (k, 3)
            assert int(f.attrs["listing_total"]) == single.total
            got.append((f["data"][:], f["label"][:]))
    with h5py.File(tmp_path / "s.h5", "r") as f:
        assert np.array_equal(np.concatenate([g[0] for g in got]), f["data"][:])
        assert np.array_equal(np.concatenate([g[1] for g in got]), f["label"][:])


def test_a_complete_part_is_resumed_and_another_runs_part_refused(tmp_path):
    libdata.convert(TREE, tmp_path / "r.lmdb", resize=16, shard_index=1, shard_count=2)
    again = libdata.convert(TREE, tmp_path / "r.lmdb", resize=16, shard=(1, 2))
    assert again.resumed == 1 and again.converted == 0
    assert again.output == str(tmp_path / "r-00001-of-00002.lmdb")
    with pytest.raises(LibdataError) as e:
        libdata.convert(TREE, tmp_path / "r.lmdb", resize=24, shard=(1, 2))
    assert "is from another run" in str(e.value) and "r-00001-of-00002.lmdb" in str(e.value)


@pytest.mark.parametrize("shard", [(2, 2), (0, 0), (1,), "1/2"])
def test_bad_shards_are_refused(tmp_path, shard):
    with pytest.raises((LibdataError, ValueError)):
        libdata.convert(TREE, tmp_path / "b.h5", resize=16, shard=shard)
    assert not list(tmp_path.iterdir())
