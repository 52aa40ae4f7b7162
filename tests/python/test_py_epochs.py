"""Epoch rules of the Python bindings (issue 12, items 4 and 13).

libdata.Reader: each iter() starts a new epoch; a `break` in epoch e makes the next loop
deliver exactly what an uninterrupted run delivers in epoch e + 1.
libdata.torch.Dataset: set_epoch() takes effect at the next iter() with num_workers = 0 and
with worker processes (persistent or not); without set_epoch every iter() is a new epoch; a
run resumed at epoch N gives the order of an uninterrupted run's epoch N.

Run: LIBDATA_LIBRARY=build/libdata.so LD_TEST_DATA=build/testdata PYTHONPATH=bindings/python \
     /usr/bin/python3 -m pytest -q tests/python/test_py_epochs.py
"""
import os

import numpy as np
import pytest

import libdata

TESTDATA = os.environ.get("LD_TEST_DATA", "")
TREE = os.path.join(TESTDATA, "tree")

pytestmark = pytest.mark.skipif(not os.path.isdir(TREE),
                                reason="LD_TEST_DATA must point at the made fixtures")


@pytest.fixture(scope="module")
def h5(tree_list_h5):
    """24 samples (the tree's images listed over and over), raw 8x8, and h5py's copy."""
    return tree_list_h5(24, 8)


def epoch_order(r):
    """The dataset indices of one `for` loop over r, in delivery order."""
    idx = []
    for _ in r:
        idx += r.indices.tolist()
    return idx


def uninterrupted(path, epochs, **kw):
    with libdata.Reader(path, **kw) as r:
        return [epoch_order(r) for _ in range(epochs)]


# ---- libdata.Reader ----------------------------------------------------------------------

def test_reader_loop_after_break_starts_the_next_epoch(h5):
    path, (data, labels) = h5
    kw = dict(batch_size=5, shuffle=True, seed=9, random_crop=True, crop=6, mirror=True)
    ref = uninterrupted(path, 4, **kw)
    assert len({tuple(o) for o in ref}) == 4, "test needs distinct epochs"
    with libdata.Reader(path, **kw) as r:
        for _ in r:  # epoch 0: one batch, then break
            first = r.indices.tolist()
            break
        assert first == ref[0][:5]
        assert epoch_order(r) == ref[1], "the loop after a break continued the old epoch"
        assert r.epoch == 2
        # break again after two batches of epoch 2: the next loop is epoch 3 in full, with
        # the same pixels (crop positions, mirrors) as the uninterrupted run's epoch 3
        for i, _ in enumerate(r):
            if i == 1:
                break
        got = [(d.copy(), r.indices.copy()) for d, _ in r]
    with libdata.Reader(path, epoch=3, **kw) as r3:
        want = [(d.copy(), r3.indices.copy()) for d, _ in r3]
    assert [i.tolist() for _, i in got] == [i.tolist() for _, i in want] and \
        sum(len(i) for _, i in got) == 24
    for (dg, _), (dw, _) in zip(got, want):
        assert np.array_equal(dg, dw), "epoch 3 after a break has other pixels"


def test_reader_full_epochs_and_next_batch_continue(h5):
    path, _ = h5
    kw = dict(batch_size=7, shuffle=True, seed=4)
    ref = uninterrupted(path, 3, **kw)
    with libdata.Reader(path, **kw) as r:
        # next_batch() continues the epoch; a loop afterwards starts the next one
        r.next_batch()
        assert r.indices.tolist() == ref[0][:7]
        r.next_batch()
        assert r.indices.tolist() == ref[0][7:14]
        assert epoch_order(r) == ref[1]
        assert epoch_order(r) == ref[2]  # a full epoch ends cleanly: no epoch is skipped


def test_old_iterator_stops_when_a_new_epoch_starts(h5):
    path, _ = h5
    ref = uninterrupted(path, 2, batch_size=4, shuffle=True, seed=1)
    with libdata.Reader(path, batch_size=4, shuffle=True, seed=1) as r:
        old = iter(r)
        next(old)
        assert epoch_order(r) == ref[1]
        with pytest.raises(StopIteration):
            next(old)


def test_zero_copy_view_survives_a_restart(h5):
    path, (data, _) = h5
    with libdata.Reader(path, batch_size=4, copy=False) as r:
        for d, _ in r:
            view, idx = d, r.indices.copy()
            break
        for _ in r:
            break
        assert np.array_equal(view, data[idx]), "a view of the dropped epoch was freed"


def test_reader_restart_keeps_a_mean_image(h5):
    path, (data, _) = h5
    mean = np.full((3, 8, 8), 10.0, np.float32)
    with libdata.Reader(path, batch_size=4, dtype="float32", mean=mean) as r:
        for _ in r:
            break
        d, _ = next(iter(r))
        assert np.allclose(d, data[r.indices].astype(np.float32) - 10.0)


# ---- libdata.torch.Dataset -----------------------------------------------------------------

torch = pytest.importorskip("torch")
from torch.utils.data import DataLoader  # noqa: E402

import libdata.torch  # noqa: E402,F401

MODES = [
    pytest.param(dict(num_workers=0), id="main"),
    pytest.param(dict(num_workers=2), id="workers"),
    pytest.param(dict(num_workers=2, persistent_workers=True), id="persistent"),
]


def loader_order(loader, stop_after=None):
    """Indices of one pass over a DataLoader in delivery order (workers' batches arrive in a
    fixed round-robin order, so this is reproducible); stop_after: break after that many
    batches."""
    idx = []
    for n, (_, _, i) in enumerate(loader):
        idx += i.tolist()
        if stop_after is not None and n + 1 >= stop_after:
            break
    return idx


def dataset(path, **kw):
    return libdata.torch.Dataset(path, batch_size=3, shuffle=True, seed=5,
                                 return_indices=True, **kw)


@pytest.fixture(scope="module")
def ref_orders(h5):
    """Epochs 0..5 of an uninterrupted run in the main process."""
    path, _ = h5
    loader = DataLoader(dataset(path), batch_size=None, num_workers=0)
    return [loader_order(loader) for _ in range(6)]


@pytest.mark.parametrize("mode", MODES)
def test_set_epoch_takes_effect_at_next_iter(h5, mode):
    path, _ = h5
    ds = dataset(path)
    loader = DataLoader(ds, batch_size=None, **mode)
    got = {}
    for e in (0, 3, 1, 3):
        ds.set_epoch(e)
        got.setdefault(e, []).append(loader_order(loader))
    for e in (0, 1, 3):
        fresh = dataset(path, epoch=e)
        want = loader_order(DataLoader(fresh, batch_size=None, **mode))
        for o in got[e]:
            assert o == want, f"set_epoch({e}) delivered another epoch's order"
    assert got[0][0] != got[3][0] and got[3][0] != got[1][0]


@pytest.mark.parametrize("mode", MODES)
def test_default_gives_a_new_epoch_per_iter_even_after_break(h5, mode, ref_orders):
    path, _ = h5
    nw = mode["num_workers"]
    loader = DataLoader(dataset(path), batch_size=None, **mode)
    passes = [loader_order(loader, stop_after=2), loader_order(loader),
              loader_order(loader, stop_after=1), loader_order(loader)]
    wants = []
    for e in range(4):
        wants.append(loader_order(DataLoader(dataset(path, epoch=e), batch_size=None, **mode)))
    assert passes[1] == wants[1] and passes[3] == wants[3], \
        "after a break the next pass did not deliver the next epoch"
    assert passes[0] == wants[0][:len(passes[0])]
    assert passes[2] == wants[2][:len(passes[2])]
    if nw == 0:
        assert wants == ref_orders[:4]
    for w in wants:
        assert len(set(w)) == len(w)
    assert len({tuple(w) for w in wants}) == 4, "the default repeated an epoch"


@pytest.mark.parametrize("mode", MODES)
def test_resume_at_epoch_n_matches_uninterrupted_run(h5, mode):
    path, _ = h5
    ds = dataset(path)
    loader = DataLoader(ds, batch_size=None, **mode)
    full = []
    for e in range(5):
        ds.set_epoch(e)
        full.append(loader_order(loader))
    # a "resumed" job: a new dataset and loader, started at epoch 3 by either means
    for how in ("ctor", "set_epoch"):
        ds2 = dataset(path, epoch=3) if how == "ctor" else dataset(path)
        if how == "set_epoch":
            ds2.set_epoch(3)
        loader2 = DataLoader(ds2, batch_size=None, **mode)
        assert loader_order(loader2) == full[3], f"resume via {how}: epoch 3 differs"
        assert loader_order(loader2) == full[4], f"resume via {how}: epoch 4 differs"


def test_epochs_agree_across_worker_modes(h5):
    """The same epoch holds the same samples whether read by 0 or 2 workers (the sample
    set of each pass, since 2 workers split the permutation into shares)."""
    path, _ = h5
    for e in (0, 2):
        a = loader_order(DataLoader(dataset(path, epoch=e), batch_size=None, num_workers=0))
        b = loader_order(DataLoader(dataset(path, epoch=e), batch_size=None, num_workers=2,
                                    persistent_workers=True))
        assert sorted(a) == sorted(b) == list(range(24))


def test_spawned_persistent_workers_follow_set_epoch(h5):
    path, _ = h5
    ds = dataset(path)
    loader = DataLoader(ds, batch_size=None, num_workers=2, persistent_workers=True,
                        multiprocessing_context="spawn")
    ds.set_epoch(2)
    got = loader_order(loader)
    want = loader_order(DataLoader(dataset(path, epoch=2), batch_size=None, num_workers=2))
    assert got == want


def test_dataset_pickles_outside_a_worker_start(h5):
    import pickle
    path, _ = h5
    ds = dataset(path)
    ds.set_epoch(4)
    copy = pickle.loads(pickle.dumps(ds))
    assert copy.epoch == 4
    ds.epoch = 1  # the attribute form sets it too
    assert ds.epoch == 1 and copy.epoch == 4  # the pickled copy is independent
