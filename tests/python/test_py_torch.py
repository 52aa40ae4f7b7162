"""libdata.torch.Dataset: every epoch delivers every sample once, in its order, whatever the
number of DataLoader workers; distributed ranks follow DistributedSampler's convention (equal
counts, padded with repeats); len() is the batches per epoch; classes, class_to_idx and std
match torchvision; the reader opens after the fork, and tensors match h5py.
(torchrun and torch.multiprocessing.spawn launches: test_py_torch_ddp.py.)

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


# ---- issue 26 item 3: every sample once per epoch, in order, whatever the workers -----------

@pytest.fixture(scope="module")
def p305(photo_list_h5):
    """305 samples (5 x 61: no multiple of 2, 3 or 4 workers or ranks, nor of the batches),
    label i = sample i, raw 8x8."""
    return photo_list_h5(305, 8)


def epoch_of(ds, workers, **loader):
    """(indices, labels, batch sizes, DataLoader) of one pass over a DataLoader."""
    dl = DataLoader(ds, batch_size=None, num_workers=workers, **loader)
    idx, labels, sizes = [], [], []
    for _, y, i in dl:
        idx += i.tolist()
        labels += y.tolist()
        sizes.append(len(i))
    assert labels == idx, "label i is sample i: labels and indices disagree"
    return idx, labels, sizes, dl


@pytest.mark.filterwarnings("ignore:This DataLoader will create:UserWarning")  # 3 on 2 cores
@pytest.mark.parametrize("workers", [1, 2, 3])
def test_sequential_epoch_through_workers_is_every_sample_in_order(p305, workers):
    """305 samples, 3 workers: the old shares of floor(305/3) never read 303 and 304, and the
    DataLoader interleaved the workers' shares (0-31, 101-132, 202-233, ...)."""
    path, _ = p305
    ds = libdata.torch.Dataset(path, batch_size=32, return_indices=True)
    idx, _, sizes, _ = epoch_of(ds, workers)
    assert idx == list(range(305)), f"{workers} workers: first {idx[:40]}, {len(idx)} samples"
    assert sizes == [32] * 9 + [17]


@pytest.mark.filterwarnings("ignore:This DataLoader will create:UserWarning")  # 3 on 2 cores
@pytest.mark.parametrize("workers", [1, 2, 3])
def test_shuffled_epochs_through_workers_are_permutations(p305, workers):
    """305 samples, 2 workers: 304 unique per epoch before."""
    path, _ = p305
    ds = libdata.torch.Dataset(path, batch_size=32, shuffle=True, seed=6, return_indices=True)
    orders = [epoch_of(ds, workers)[0] for _ in range(2)]
    for order in orders:
        assert sorted(order) == list(range(305)), \
            f"{workers} workers: {len(order)} samples, {len(set(order))} unique"
    assert orders[0] != orders[1] and orders[0] != list(range(305))
    # the same permutation as without workers: one process per rank reads the epoch
    ds0 = libdata.torch.Dataset(path, batch_size=32, shuffle=True, seed=6, return_indices=True)
    assert epoch_of(ds0, 0)[0] == orders[0]


def test_drop_last_drops_the_short_last_batch_only(p305):
    """drop_last went to each worker's reader: every worker dropped its own short batch."""
    path, _ = p305
    ds = libdata.torch.Dataset(path, batch_size=32, drop_last=True, return_indices=True)
    idx, _, sizes, dl = epoch_of(ds, 2)
    assert idx == list(range(288)) and sizes == [32] * 9, (len(idx), sizes)
    assert len(dl) == 9


@pytest.mark.parametrize("world", [2, 3, 4])
def test_ranks_follow_distributed_sampler_padding(p305, world):
    """Each rank reads ceil(N / world) samples, the union is every sample; the extra ones are
    the left-over samples, then repeats; drop_last: floor(N / world) and full batches only."""
    path, _ = p305
    seen, per_rank = [], []
    for rank in range(world):
        ds = libdata.torch.Dataset(path, batch_size=16, shuffle=True, seed=2, rank=rank,
                                   world=world, return_indices=True)
        idx, _, sizes, _ = epoch_of(ds, 2 if rank == 0 else 0)
        assert all(b == 16 for b in sizes[:-1]), f"rank {rank}: batch sizes {sizes}"
        per_rank.append(len(idx))
        assert len(set(idx)) == len(idx), f"rank {rank} read a sample twice"
        seen += idx
    assert per_rank == [-(-305 // world)] * world, per_rank
    assert sorted(set(seen)) == list(range(305)), f"missing {set(range(305)) - set(seen)}"
    assert len(seen) - 305 == world * -(-305 // world) - 305  # the repeats: padding only

    # sequential: rank r reads its contiguous share, then its extra sample
    share = 305 // world
    for rank in range(world):
        ds = libdata.torch.Dataset(path, batch_size=16, rank=rank, world=world,
                                   return_indices=True)
        idx = epoch_of(ds, 0)[0]
        assert idx[:share] == list(range(rank * share, (rank + 1) * share))
        extra = world * share + rank if rank < 305 % world else rank - 305 % world
        assert idx[share:] == [extra]

    # drop_last: floor(305 / world) per rank, disjoint, whole batches
    seen = []
    for rank in range(world):
        ds = libdata.torch.Dataset(path, batch_size=16, shuffle=True, seed=2, rank=rank,
                                   world=world, drop_last=True, return_indices=True)
        idx, _, sizes, _ = epoch_of(ds, 0)
        assert sizes == [16] * (share // 16), sizes
        seen += idx
    assert len(seen) == len(set(seen)) == world * (share // 16 * 16)


def test_a_position_no_reader_share_reaches_is_replaced_by_a_repeat(p305, monkeypatch):
    """Position N-1 is only in a share of a world that divides N; with worlds up to 4 (the C
    limit is 2^20: this is the case of a prime N > 2^20, e.g. ImageNet's 1,281,167), 304 is
    reached only by reading the whole epoch: the rank repeats a sample instead and warns."""
    path, _ = p305
    monkeypatch.setattr(libdata.torch, "_max_world", lambda: 4)
    orders = []
    for rank in range(2):
        ds = libdata.torch.Dataset(path, batch_size=32, shuffle=True, seed=1, rank=rank,
                                   world=2, return_indices=True)
        if rank == 0:
            with pytest.warns(RuntimeWarning, match="position 304 .* can only be read"):
                orders.append(epoch_of(ds, 0)[0])
        else:
            orders.append(epoch_of(ds, 0)[0])
    assert [len(o) for o in orders] == [153, 153]
    assert len(set(orders[0] + orders[1])) == 304


def test_locate_finds_the_share_with_the_fewest_samples_before_a_position():
    def brute(p, n, max_world):
        return min((p - p // (n // g) * (n // g), n // g) for g in range(1, min(n, max_world) + 1)
                   if p // (n // g) < g)
    for n in range(1, 90):
        for max_world in (1, 3, 7, 50):
            for p in range(n):
                g, k, skip = libdata.torch._locate(p, n, max_world)
                s = n // g
                assert g <= max_world and k < g and k * s + skip == p
                assert (skip, s) == brute(p, n, max_world), (p, n, max_world)
    # a prime N > 2^20: its last position only in world 1's share; the one before in a
    # share of 2 samples
    assert libdata.torch._locate(1281166, 1281167, 1 << 20) == (1, 0, 1281166)
    assert libdata.torch._locate(1281165, 1281167, 1 << 20)[2] == 1


# ---- issue 26 item 14: len(), classes / class_to_idx, std ---------------------------------

@pytest.mark.parametrize("world,drop_last,batch", [(1, False, 32), (1, True, 32), (2, False, 1),
                                                   (3, False, 50), (3, True, 20), (1, False, 305)])
def test_len_is_the_batches_the_loader_yields(p305, world, drop_last, batch):
    import warnings
    path, _ = p305
    for rank in range(world):
        ds = libdata.torch.Dataset(path, batch_size=batch, rank=rank, world=world,
                                   drop_last=drop_last, return_indices=True)
        n = len(ds)  # before any pass: a scheduler asks first
        for workers in (0, 2) if rank == 0 else (0,):
            with warnings.catch_warnings():
                warnings.simplefilter("error", UserWarning)  # "Length of IterableDataset ..."
                _, _, sizes, dl = epoch_of(ds, workers)
            assert n == len(dl) == len(sizes), (world, rank, drop_last, batch, workers, n, sizes)
    expected = (305 // world) // batch if drop_last else -(-(-(-305 // world)) // batch)
    assert n == expected


def test_classes_and_class_to_idx_are_imagefolders(tmp_path):
    import h5py
    path = tmp_path / "tree.h5"
    libdata.convert(TREE, path, resize=8, threads=2)
    ds = libdata.torch.Dataset(path, batch_size=4)
    folders = sorted(d.name for d in os.scandir(TREE) if d.is_dir())
    assert ds.classes == folders == ["bird", "car", "cat"]
    assert ds.class_to_idx == {name: i for i, name in enumerate(folders)}
    try:
        from torchvision.datasets import ImageFolder
    except ImportError:
        ImageFolder = None
    if ImageFolder is not None:
        ref = ImageFolder(TREE)
        assert ds.classes == ref.classes and ds.class_to_idx == ref.class_to_idx
    # every label is the index of its file's class folder
    with h5py.File(path, "r") as f:
        names = [n.decode() for n in f["filename"][:]]
    ds = libdata.torch.Dataset(path, batch_size=4, return_indices=True)
    for _, y, i in DataLoader(ds, batch_size=None):
        for label, j in zip(y.tolist(), i.tolist()):
            assert label == ds.class_to_idx[names[j].split("/")[0]]


def test_classes_of_a_dataset_without_names_are_none(tmp_path):
    import h5py
    path = tmp_path / "plain.h5"
    with h5py.File(path, "w") as f:
        f["images"] = np.zeros((6, 3, 4, 4), np.uint8)
        f["y"] = np.arange(6, dtype=np.int32)
    ds = libdata.torch.Dataset(path, batch_size=4, data_name="images", label_name="y")
    assert ds.classes is None and ds.class_to_idx is None
    assert len(ds) == 2 == len(list(ds))


def test_std_normalizes_like_torchvision(p305):
    path, (data, _) = p305
    x = torch.from_numpy(data).float()
    mean, std = [101.5, 117.0, 122.25], [55.0, 61.5, 70.25]

    def read(workers=0, **kw):
        ds = libdata.torch.Dataset(path, batch_size=40, dtype="float32", return_indices=True,
                                   **kw)
        out = [(b, i) for b, _, i in DataLoader(ds, batch_size=None, num_workers=workers)]
        assert torch.cat([i for _, i in out]).tolist() == list(range(305))
        return torch.cat([b for b, _ in out])

    try:
        from torchvision.transforms import Normalize
    except ImportError:
        def Normalize(m, s):  # noqa: N802 - torchvision's semantics
            return lambda t: (t - torch.tensor(m).view(-1, 1, 1)) / torch.tensor(s).view(-1, 1, 1)
    # per channel, in the worker too: (x - mean) / std exactly as torchvision computes it
    ref = Normalize(mean, std)(x)
    assert torch.equal(read(mean=mean, std=std), ref)
    assert torch.equal(read(2, mean=mean, std=std), ref)
    # ToTensor() + Normalize(m, s): mean in pixel units, scale 1/255, std as torchvision's
    m, s = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
    got = read(mean=[255 * v for v in m], scale=1 / 255, std=s)
    assert torch.allclose(got, Normalize(m, s)(x / 255), rtol=1e-6, atol=1e-6)
    # one std (folded into the C reader's scale), and NHWC against NumPy
    got = read(mean=mean, std=57.3)
    assert torch.allclose(got, Normalize(mean, [57.3] * 3)(x), rtol=1e-6, atol=1e-6)
    got = read(mean=mean, std=std, layout="NHWC").numpy()
    ref = (data.transpose(0, 2, 3, 1).astype(np.float32) - np.float32(mean)) / np.float32(std)
    assert np.array_equal(got, ref)


def test_std_errors(p305):
    path, _ = p305
    with pytest.raises(ValueError, match="float32"):
        libdata.torch.Dataset(path, std=[50, 60, 70])
    with pytest.raises(ValueError, match="non-zero"):
        libdata.torch.Dataset(path, dtype="float32", std=[50, 0, 70])
    ds = libdata.torch.Dataset(path, dtype="float32", std=[50, 60])
    with pytest.raises(ValueError, match="2 values for 3-channel"):
        list(ds)
