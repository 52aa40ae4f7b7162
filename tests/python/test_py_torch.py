"""libdata.torch.Dataset: DataLoader workers and distributed ranks split every epoch with no
duplicates, the reader opens after the fork, and tensors match h5py.

Run: LIBDATA_LIBRARY=build/libdata.so LD_TEST_DATA=build/testdata PYTHONPATH=bindings/python \
     /usr/bin/python3 -m pytest -q tests/python/test_py_torch.py
"""
import os
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch.utils.data import DataLoader  # noqa: E402

import libdata  # noqa: E402

TESTDATA = os.environ.get("LD_TEST_DATA", "")
TREE = os.path.join(TESTDATA, "tree")

pytestmark = pytest.mark.skipif(not os.path.isdir(TREE),
                                reason="LD_TEST_DATA must point at the made fixtures")


@pytest.fixture(scope="module")
def h5(tree_list_h5):
    """20 samples (the tree's images listed twice), raw 16x16, and h5py's copy."""
    return tree_list_h5(20, 16)


def collect(loader):
    idx, xs, ys = [], [], []
    for x, y, i in loader:
        idx += i.tolist()
        xs.append(x)
        ys.append(y)
    return idx, xs, ys


def test_two_workers_yield_every_sample_exactly_once(h5):
    path, (data, labels) = h5
    ds = libdata.torch.Dataset(path, batch_size=3, shuffle=True, seed=4, return_indices=True)
    loader = DataLoader(ds, batch_size=None, num_workers=2)
    idx, xs, ys = collect(loader)
    assert sorted(idx) == list(range(20)), f"indices {sorted(idx)}"
    got = torch.cat(xs).numpy()
    assert np.array_equal(got, data[idx]), "tensor content differs from h5py"
    y = torch.cat(ys)
    assert y.dtype == torch.int64 and np.array_equal(y.numpy(), labels[idx])


def test_spawned_workers_work_too(h5):
    """multiprocessing "spawn" (macOS/Windows default) pickles the dataset: it holds only the
    path and options, and each fresh worker loads the library itself."""
    path, _ = h5
    ds = libdata.torch.Dataset(path, batch_size=4, return_indices=True)
    loader = DataLoader(ds, batch_size=None, num_workers=2, multiprocessing_context="spawn")
    idx, _, _ = collect(loader)
    assert sorted(idx) == list(range(20))


def test_a_reader_refuses_to_be_pickled(h5):
    import pickle
    path, _ = h5
    with libdata.Reader(path) as r, pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(r)


def test_main_process_iteration_matches_workers_in_total(h5):
    path, (data, labels) = h5
    ds = libdata.torch.Dataset(path, batch_size=4, return_indices=True)
    idx, xs, _ = collect(DataLoader(ds, batch_size=None, num_workers=0))
    assert idx == list(range(20))
    assert isinstance(xs[0], torch.Tensor) and xs[0].dtype == torch.uint8
    assert tuple(xs[0].shape) == (4, 3, 16, 16)


def test_ranks_times_workers_partition_the_epoch(h5):
    path, _ = h5
    seen = []
    for rank in range(2):
        ds = libdata.torch.Dataset(path, batch_size=2, shuffle=True, seed=11, rank=rank,
                                   world=2, return_indices=True)
        idx, _, _ = collect(DataLoader(ds, batch_size=None, num_workers=2))
        assert len(idx) == 20 // 4 * 2, f"rank {rank} got {len(idx)} samples"
        seen += idx
    assert len(seen) == len(set(seen)) == 20, sorted(seen)


def _dist_rank(rank, world, init, path, outdir):
    import torch.distributed as dist
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world)
    try:
        # rank/world come from torch.distributed; each rank runs 2 DataLoader workers.
        ds = libdata.torch.Dataset(path, batch_size=2, shuffle=True, seed=3,
                                   return_indices=True)
        idx, _, _ = collect(DataLoader(ds, batch_size=None, num_workers=2))
        with open(os.path.join(outdir, f"rank{rank}.txt"), "w") as f:
            f.write(" ".join(map(str, idx)))
    finally:
        dist.destroy_process_group()


def test_torch_distributed_ranks_and_workers_partition_the_epoch(h5, tmp_path):
    import torch.multiprocessing as mp
    if not torch.distributed.is_available():
        pytest.skip("torch.distributed not available")
    path, _ = h5
    init = "file://" + str(tmp_path / "dist_init")
    mp.start_processes(_dist_rank, args=(2, init, path, str(tmp_path)), nprocs=2,
                       start_method="fork")
    seen = []
    for rank in range(2):
        idx = [int(v) for v in (tmp_path / f"rank{rank}.txt").read_text().split()]
        assert len(idx) == 5 * 2, f"rank {rank}: {idx}"
        seen += idx
    assert len(seen) == len(set(seen)) == 20, sorted(seen)


def test_shards_compose_rank_and_worker():
    ds = libdata.torch.Dataset("unused.h5", rank=1, world=3)
    assert ds.shard() == (1, 3)  # main process: no worker info


def test_set_epoch_changes_the_permutation(h5):
    path, _ = h5
    ds = libdata.torch.Dataset(path, batch_size=5, shuffle=True, seed=2, return_indices=True)
    orders = []
    for e in range(2):
        ds.set_epoch(e)
        orders.append(collect(DataLoader(ds, batch_size=None, num_workers=2))[0])
    assert sorted(orders[0]) == sorted(orders[1]) == list(range(20))
    assert orders[0] != orders[1]


def test_float_output_and_training_step(h5):
    path, _ = h5
    ds = libdata.torch.Dataset(path, batch_size=10, dtype="float32", scale=1 / 255)
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 16 * 16, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in DataLoader(ds, batch_size=None, num_workers=2):
        assert x.dtype == torch.float32 and float(x.max()) <= 1.0
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        assert torch.isfinite(loss)


def test_errors_surface_from_workers(tmp_path):
    ds = libdata.torch.Dataset(tmp_path / "missing.h5")
    with pytest.raises(Exception) as ei:
        list(DataLoader(ds, batch_size=None, num_workers=1))
    assert "missing.h5" in str(ei.value)


def test_importing_libdata_does_not_import_torch():
    import subprocess
    code = "import sys, libdata; print('torch' in sys.modules)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=dict(os.environ))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"
