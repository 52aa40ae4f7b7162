"""What Converter and Reader share through _lib (Handle, check_int, check_bool): the same
rules for both classes, on real files.

Run: LIBDATA_LIBRARY=build/libdata.so LD_TEST_DATA=build/testdata PYTHONPATH=bindings/python \
     /usr/bin/python3 -m pytest -q tests/python/test_py_handle_shared.py
"""
import os

import h5py
import numpy as np
import pytest

import libdata
from libdata import LibdataError, _lib

TREE = os.path.join(os.environ["LD_TEST_DATA"], "tree")


@pytest.fixture(scope="module")
def h5(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("shared") / "tree.h5")
    libdata.convert(TREE, out, resize=16)
    return out


def test_with_on_a_closed_converter_raises_like_a_closed_reader(h5):
    c = libdata.Converter()
    c.close()
    with pytest.raises(LibdataError) as e:
        with c:
            pass
    assert e.value.code == _lib.LD_ESTATE and "closed" in e.value.message
    r = libdata.Reader(h5, batch_size=4)
    r.close()
    with pytest.raises(LibdataError) as e:
        with r:
            pass
    assert e.value.code == _lib.LD_ESTATE and "closed" in e.value.message


def test_numpy_bool_and_int_are_accepted_by_both(tmp_path, h5):
    out = str(tmp_path / "gray.h5")
    s = libdata.convert(TREE, out, resize=np.int64(12), gray=np.bool_(True),
                        shuffle=np.bool_(False))
    assert s.converted == 9
    with h5py.File(out, "r") as f:
        assert f["data"].shape == (9, 1, 12, 12)
    with libdata.Reader(h5, batch_size=np.int32(4), drop_last=np.bool_(True)) as r:
        assert [len(y) for _, y in r] == [4, 4]


@pytest.mark.parametrize("kw", [dict(gray="yes"), dict(threads=1.5), dict(quality="70")])
def test_wrong_types_are_type_errors_in_convert(tmp_path, kw):
    with pytest.raises(TypeError):
        libdata.convert(TREE, str(tmp_path / "x.h5"), resize=8, **kw)
    assert not os.path.exists(tmp_path / "x.h5")


@pytest.mark.parametrize("kw", [dict(mirror="yes"), dict(threads=1.5), dict(scale="0.5"),
                                dict(batch_size=2 ** 64)])
def test_wrong_types_are_refused_when_the_reader_is_made(h5, kw):
    with pytest.raises((TypeError, OverflowError)):
        libdata.Reader(h5, **kw)


def test_a_restart_after_break_reads_the_next_epoch_and_frees_the_old_reader(h5):
    with libdata.Reader(h5, batch_size=2, shuffle=True, seed=3, copy=False) as r:
        first = None
        for x, _ in r:
            first = x  # a zero-copy view of epoch 0's reader
            break
        keep = first.copy()
        got = [r.indices.tolist() for _ in r]
        want = libdata.Reader(h5, batch_size=2, shuffle=True, seed=3, epoch=1)
        assert got == [want.indices.tolist() for _ in want]
        want.close()
        assert np.array_equal(first, keep)  # the old reader lives while its view does
