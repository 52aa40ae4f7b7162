"""libdata.Reader's fast paths (issue 16 §2, §4), cross-checked with h5py:

- copy=True batches are the reader's own buffers handed over (ld_reader_take_data), recycled
  when the program drops them: no per-batch allocation of the batch's size, yet every batch
  the program keeps stays intact and writable;
- the batch ring is on transparent huge pages where the kernel offers them (MADV_HUGEPAGE).

Run: LIBDATA_LIBRARY=build/libdata.so LD_TEST_DATA=build/testdata PYTHONPATH=bindings/python \
     /usr/bin/python3 -m pytest -q tests/python/test_py_reader_fast.py
"""
import ctypes
import gc
import os
import tracemalloc

import h5py
import numpy as np
import pytest

import libdata
from libdata import LibdataError
from libdata._lib import api

TESTDATA = os.environ.get("LD_TEST_DATA", "")
pytestmark = pytest.mark.skipif(not os.path.isdir(TESTDATA),
                                reason="LD_TEST_DATA must point at the made fixtures")

N, C, H, W = 300, 3, 64, 64  # batches of 64: 786 KB of pixels


@pytest.fixture(scope="module")
def raw(tmp_path_factory):
    """An h5py-made raw uint8 file (contiguous: the reader's direct pread path)."""
    path = tmp_path_factory.mktemp("fast") / "raw.h5"
    rng = np.random.default_rng(7)
    data = rng.integers(0, 256, (N, C, H, W), dtype=np.uint8)
    label = np.arange(N, dtype=np.int32) % 7
    with h5py.File(path, "w") as f:
        f["data"] = data
        f["label"] = label
    return str(path), data, label


@pytest.mark.parametrize("shuffle", [False, True])
def test_kept_copies_stay_intact_over_epochs(raw, shuffle):
    """Every batch of three epochs kept: each equals h5py's rows, although the reader went on
    reading into recycled buffers meanwhile."""
    path, data, label = raw
    kept = []
    with libdata.Reader(path, batch_size=64, shuffle=shuffle, seed=3, threads=2) as r:
        for _ in range(3):
            for d, l in r:
                assert d.flags.writeable and d.flags.c_contiguous
                kept.append((d, l, r.indices.copy()))
    assert len(kept) == 3 * 5
    for d, l, i in kept:  # the reader is closed: the kept arrays are the program's
        assert np.array_equal(d, data[i]) and np.array_equal(l, label[i])


def test_dropped_copies_are_recycled_and_writes_do_not_leak(raw):
    """A loop that drops each batch: no allocation of a batch's size per batch (NumPy reports
    its allocations to tracemalloc: a 786 KB copy per batch showed as a peak of ~1.6 MB), and
    what the program wrote into a dropped batch never shows up in a later one."""
    path, data, label = raw
    sums = data.reshape(N, -1).sum(1, dtype=np.uint64)  # checks that allocate nothing large
    with libdata.Reader(path, batch_size=64, shuffle=True, seed=5, threads=2) as r:
        it = r.epochs()
        for _ in range(6):  # warm-up: the pool's spare buffers exist
            d, l = next(it)
            d[...] = 255
        del d, l
        gc.collect()
        tracemalloc.start()
        for _ in range(40):
            d, l = next(it)
            got = d.reshape(len(l), -1).sum(1, dtype=np.uint64)
            assert np.array_equal(got, sums[r.indices]), "a recycled buffer kept old bytes"
            d[...] = 255  # the program's own writes
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert peak < 64 * C * H * W // 2, f"{peak} bytes allocated at peak: batches are copied"


def test_copies_and_views_give_the_same_batches(raw):
    path, _, _ = raw
    with libdata.Reader(path, batch_size=64, shuffle=True, seed=9, threads=2) as a, \
            libdata.Reader(path, batch_size=64, shuffle=True, seed=9, threads=2,
                           copy=False) as b:
        for _ in range(2):
            for (da, la), (db, lb) in zip(a, b):
                assert np.array_equal(da, db) and np.array_equal(la, lb)


def test_take_data_misuse_is_refused(raw):
    """The C call's contract: a batch's data is taken once, only while a batch is held."""
    path, _, _ = raw
    h = api.ld_reader_create()
    try:
        assert api.ld_reader_buffer_alloc(h, ctypes.byref(ctypes.c_size_t())) is None
        api.ld_reader_set(h, libdata._lib.reader_params()["batch"].id, 64)
        api.ld_reader_open(h, path.encode())
        size = ctypes.c_size_t()
        spare = api.ld_reader_buffer_alloc(h, ctypes.byref(size))
        assert spare and size.value == 64 * C * H * W
        with pytest.raises(LibdataError, match="no batch is held"):
            api.ld_reader_take_data(h, spare)  # before the first batch
        b = ctypes.POINTER(libdata._lib.Batch)()
        api.ld_reader_next(h, ctypes.byref(b))
        with pytest.raises(LibdataError, match="replacement"):
            api.ld_reader_take_data(h, None)
        api.ld_reader_take_data(h, spare)  # the reader owns `spare` now
        mine = b.contents.data
        with pytest.raises(LibdataError, match="once per batch"):
            api.ld_reader_take_data(h, spare)
        api.ld_reader_buffer_free(mine)
    finally:
        api.ld_reader_free(h)


def _thp_mode():
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            text = f.read()
    except OSError:
        return None
    return text[text.index("[") + 1:text.index("]")]


def _thp_eligible(addr):
    """THPeligible of the mapping that holds address addr (/proc/self/smaps)."""
    inside = False
    with open("/proc/self/smaps") as f:
        for ln in f:
            head = ln.split()[0]
            if "-" in head and not head.endswith(":"):
                lo, hi = (int(x, 16) for x in head.split("-"))
                inside = lo <= addr < hi
            elif inside and head == "THPeligible:":
                return int(ln.split()[1])
    return None


@pytest.mark.skipif(_thp_mode() not in ("always", "madvise"),
                    reason="transparent huge pages are off or not on this kernel")
def test_batch_ring_is_on_huge_pages(tmp_path):
    """Batches of >= 2 MiB sit in memory the kernel may back with 2 MiB pages (with THP in
    "madvise" mode, plain malloc'd memory is not eligible)."""
    path = tmp_path / "big.h5"
    with h5py.File(path, "w") as f:
        f["data"] = np.zeros((96, 3, 128, 128), np.uint8)  # batches of 64: 3 MiB
        f["label"] = np.zeros(96, np.int32)
    for copy in (False, True):
        with libdata.Reader(str(path), batch_size=64, threads=1, copy=copy) as r:
            d, _ = r.next_batch()
            assert _thp_eligible(d.ctypes.data) == 1, f"copy={copy}: ring not THP-eligible"
