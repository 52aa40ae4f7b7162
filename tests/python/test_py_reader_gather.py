"""The reader's file-order reads of raw samples (reader.c fill_sorted, h5_store.c
h5_read_gather): a piece's samples are read in file order, each run of consecutive samples with
one vectored read into their own batch slots. Every batch must still be exactly h5py's rows at
the batch's indices, in every order, for contiguous files and for chunked files whose chunks
are not in file order (a run then splits where the file does), and for compressed files that
HDF5 reads.

Run: LIBDATA_LIBRARY=build/libdata.so LD_TEST_DATA=build/testdata PYTHONPATH=bindings/python \
     /usr/bin/python3 -m pytest -q tests/python/test_py_reader_gather.py
"""
import os

import h5py
import numpy as np
import pytest

import libdata

TESTDATA = os.environ.get("LD_TEST_DATA", "")
pytestmark = pytest.mark.skipif(not os.path.isdir(TESTDATA),
                                reason="LD_TEST_DATA must point at the made fixtures")

N, C, H, W = 203, 3, 20, 24  # 1440 bytes a sample; 203 = 40 chunks of 5 and a short one


def _write(path, layout):
    rng = np.random.default_rng(11)
    data = rng.integers(0, 256, (N, C, H, W), dtype=np.uint8)
    label = (np.arange(N, dtype=np.int32) * 7) % 13
    with h5py.File(path, "w") as f:
        if layout == "contiguous":
            f["data"] = data
        elif layout == "deflate":  # read through HDF5, sample by sample
            f.create_dataset("data", data=data, chunks=(5, C, H, W), compression="gzip")
        else:  # chunks of 5 samples, written last chunk first: their file order is reversed
            d = f.create_dataset("data", (N, C, H, W), np.uint8, chunks=(5, C, H, W))
            for s in reversed(range(0, N, 5)):
                d[s:s + 5] = data[s:s + 5]
        f["label"] = label
    if layout == "reversed_chunks":
        with h5py.File(path, "r") as f:
            d = f["data"]
            first, last = d.id.get_chunk_info(0), d.id.get_chunk_info(d.id.get_num_chunks() - 1)
            assert first.byte_offset > last.byte_offset, "chunks not written in reverse order"
    return data, label


@pytest.fixture(scope="module", params=["contiguous", "reversed_chunks", "deflate"])
def raw(request, tmp_path_factory):
    path = tmp_path_factory.mktemp("gather") / f"{request.param}.h5"
    data, label = _write(path, request.param)
    return str(path), data, label


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("order", [False, True, "block"])
def test_batches_are_the_rows_at_their_indices(raw, order, threads):
    path, data, label = raw
    seen = []
    with libdata.Reader(path, batch_size=37, shuffle=order, seed=4, threads=threads,
                        window=3) as r:
        for _ in range(2):
            ep = []
            for d, lab in r:
                i = r.indices.copy()
                assert np.array_equal(d, data[i]), "a sample is not h5py's row at its index"
                assert np.array_equal(lab, label[i])
                ep.extend(i.tolist())
            assert sorted(ep) == list(range(N)), "an epoch is not a permutation"
            seen.append(ep)
    if order is not False:
        assert seen[0] != seen[1], "the two epochs have the same order"


def test_block_shuffle_keeps_its_order(raw):
    """The order is the sampler's, not the file order the reads take: a block-shuffled batch
    is not sorted, and the same seed gives the same indices with 1 and 2 threads."""
    path, _, _ = raw
    got = []
    for threads in (1, 2):
        with libdata.Reader(path, batch_size=37, shuffle="block", seed=4, threads=threads,
                            window=3) as r:
            got.append([r.indices.copy() for _ in r])
    assert all(np.array_equal(a, b) for a, b in zip(*got))
    assert any(np.any(np.diff(i.astype(np.int64)) < 0) for i in got[0])
