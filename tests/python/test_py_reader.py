"""libdata.Reader from Python, cross-checked with h5py (and python-lmdb for LMDB), plus misuse,
memory growth over 10,000 batches and fork safety.

Run: LIBDATA_LIBRARY=build/libdata.so LD_TEST_DATA=build/testdata PYTHONPATH=bindings/python \
     /usr/bin/python3 -m pytest -q tests/python/test_py_reader.py
"""
import os
import signal
import traceback

import h5py
import numpy as np
import pytest

import libdata
from libdata import LibdataError

TESTDATA = os.environ.get("LD_TEST_DATA", "")
TREE = os.path.join(TESTDATA, "tree")

pytestmark = pytest.mark.skipif(not os.path.isdir(TREE),
                                reason="LD_TEST_DATA must point at the made fixtures")


@pytest.fixture(scope="module")
def h5(tmp_path_factory):
    """The fixture tree converted to raw 24x32 (h x w) BGR uint8, and h5py's copy of it."""
    out = tmp_path_factory.mktemp("reader") / "tree.h5"
    libdata.convert(TREE, out, resize=(32, 24), threads=2)
    with h5py.File(out, "r") as f:
        ref = {"data": f["data"][:], "label": f["label"][:],
               "classes": [c.decode() if isinstance(c, bytes) else c
                           for c in f.attrs["class_names"]]}
    return str(out), ref


def read_all(r):
    """Every batch of one epoch: (data list, label list, index list)."""
    ds, ls, ix = [], [], []
    for d, l in r:
        ds.append(d)
        ls.append(l)
        ix.append(r.indices)
    return ds, ls, ix


def test_sequential_batches_equal_h5py_reads(h5):
    path, ref = h5
    n = len(ref["label"])
    with libdata.Reader(path, batch_size=4, threads=2) as r:
        ds, ls, ix = read_all(r)
        assert len(r) == len(ds) == -(-n // 4)
        idx = np.concatenate(ix)
        assert list(idx) == list(range(n))
        for d, l, i in zip(ds, ls, ix):
            assert d.dtype == np.uint8 and d.shape == (len(i), 3, 24, 32)
            assert l.dtype == np.int32
            assert np.array_equal(d, ref["data"][i]), f"batch {i} differs from h5py"
            assert np.array_equal(l, ref["label"][i])


def test_shuffled_epochs_are_permutations_with_matching_content(h5):
    path, ref = h5
    n = len(ref["label"])
    orders = []
    with libdata.Reader(path, batch_size=3, shuffle=True, seed=7) as r:
        for epoch in range(3):
            assert r.epoch == epoch
            ds, ls, ix = read_all(r)
            idx = np.concatenate(ix)
            assert sorted(idx) == list(range(n)), f"epoch {epoch} is not a permutation"
            for d, l, i in zip(ds, ls, ix):
                assert np.array_equal(d, ref["data"][i]) and np.array_equal(l, ref["label"][i])
            orders.append(list(idx))
    assert orders[0] != orders[1] or orders[1] != orders[2], "shuffle never changed the order"
    with libdata.Reader(path, batch_size=3, shuffle=True, seed=7) as r:
        assert list(np.concatenate(read_all(r)[2])) == orders[0], "same seed, other order"


def test_epochs_helper_and_resume(h5):
    path, ref = h5
    with libdata.Reader(path, batch_size=4, shuffle=True, seed=3) as r:
        per_epoch = len(r)
        batches = list(r.epochs(2))
        assert len(batches) == 2 * per_epoch and r.epoch == 2
        second = [r.indices]
    with libdata.Reader(path, batch_size=4, shuffle=True, seed=3, epoch=1) as r:
        assert r.epoch == 1
        *_, last = read_all(r)[2]
    assert np.array_equal(last, second[0]), "resuming at epoch 1 gave another order"


def test_ranks_split_an_epoch_without_duplicates(h5):
    path, ref = h5
    n = len(ref["label"])
    seen = []
    for rank in range(2):
        with libdata.Reader(path, batch_size=2, shuffle=True, seed=1, rank=rank, world=2) as r:
            assert r.info.epoch_samples == n // 2
            idx = np.concatenate(read_all(r)[2])
            assert len(idx) == n // 2
            seen += list(idx)
    assert len(set(seen)) == len(seen) == n - n % 2


def test_zero_copy_views_are_read_only_and_live_until_the_next_batch(h5):
    path, ref = h5
    with libdata.Reader(path, batch_size=2, copy=False, prefetch=1, threads=1) as r:
        d, l = r.next_batch()
        i = r.indices
        assert not d.flags.writeable and not d.flags.owndata
        assert np.array_equal(d, ref["data"][i])
        with pytest.raises(ValueError):
            d[0, 0, 0, 0] = 1
    with libdata.Reader(path, batch_size=2) as r:
        d, l = r.next_batch()
        i = r.indices
        # a copy is the user's: writable, and the reader never writes it again (it holds the
        # batch's own buffer, taken from the reader: flags.owndata is False, see reader.py)
        assert d.flags.writeable and l.flags.writeable, "copies must be writable"
        for _ in range(5):
            r.next_batch()
    assert np.array_equal(d, ref["data"][i]) and np.array_equal(l, ref["label"][i])


def thread_ids():
    return set(os.listdir("/proc/self/task"))


def test_views_kept_after_close_stay_readable(h5):
    path, ref = h5
    r = libdata.Reader(path, batch_size=4, copy=False, threads=2)
    d, l = r.next_batch()
    i = r.indices
    want = ref["data"][i]
    r.close()
    assert r.closed
    # The C reader is freed only when the last view goes: reading here must not crash.
    assert d.shape == want.shape and int(d.sum()) >= 0 and len(l) == len(i)
    del d, l


def test_a_dropped_reader_stops_its_threads_at_once(h5):
    # By thread id, not by count: a thread of someone else's (pytest's faulthandler watchdog of
    # the previous test) may still be exiting when the count is taken.
    path, _ = h5
    before = thread_ids()
    r = libdata.Reader(path, batch_size=2, threads=2, log=lambda lv, m: None)
    r.next_batch()
    assert r.info.threads == 2
    ours = thread_ids() - before
    assert len(ours) >= 2, ours
    del r  # no close(): no reference cycle keeps it alive until a GC pass
    assert not ours & thread_ids(), "worker threads outlived the Reader"


def test_float_mean_scale_nhwc_and_crop(h5):
    path, ref = h5
    mean = [100.0, 110.0, 120.0]
    with libdata.Reader(path, batch_size=16, dtype="float32", mean=mean, scale=0.5,
                        layout="NHWC", crop=(16, 12)) as r:
        d, l = r.next_batch()
        i = r.indices
        assert d.dtype == np.float32 and d.shape == (len(i), 12, 16, 3)
        assert r.info.shape == (12, 16, 3) and r.info.layout == "NHWC"
    y0, x0 = (24 - 12) // 2, (32 - 16) // 2
    want = ref["data"][i][:, :, y0:y0 + 12, x0:x0 + 16].astype(np.float32)
    want = ((want - np.array(mean, np.float32)[None, :, None, None]) * 0.5).transpose(0, 2, 3, 1)
    assert np.allclose(d, want, atol=1e-4), np.abs(d - want).max()


def test_mean_image_array_is_subtracted(h5):
    path, ref = h5
    m = ref["data"].astype(np.float32).mean(axis=0)
    with libdata.Reader(path, batch_size=16, dtype=np.float32, mean=m) as r:
        d, _ = r.next_batch()
        i = r.indices
    assert np.allclose(d, ref["data"][i].astype(np.float32) - m, atol=1e-3)


def test_info_describes_the_dataset(h5):
    path, ref = h5
    with libdata.Reader(path, batch_size=4) as r:
        info = r.info
    n = len(ref["label"])
    assert (info.samples, info.epoch_samples, info.epoch_batches) == (n, n, -(-n // 4))
    assert info.shape == (3, 24, 32) and info.channel_order == "BGR"
    assert info.dtype == np.uint8 and not info.encoded
    assert info.threads >= 1 and info.prefetch >= 1 and info.memory > 0
    if info.classes is not None:
        assert info.classes == ref["classes"]


@pytest.mark.parametrize("fmt", ["hdf5", "lmdb"])
def test_info_lists_every_class_even_past_twenty(tmp_path, fmt):
    import shutil
    if fmt == "lmdb" and not libdata.has_feature("lmdb"):
        pytest.skip("built without LMDB")
    photo = os.path.join(TREE, "cat", "a.jpg")
    names = [f"class {i:02d}" for i in range(25)]
    for n in names:
        os.makedirs(tmp_path / "src" / n)
        shutil.copy(photo, tmp_path / "src" / n / "x.jpg")
    out = tmp_path / ("out.h5" if fmt == "hdf5" else "out_lmdb")
    libdata.convert(tmp_path / "src", out, resize=8, format=fmt)
    with libdata.Reader(out, batch_size=5) as r:
        assert r.info.classes == names
        assert r.info.num_classes == 25


def test_encoded_jpeg_batches_equal_pil_decodes_of_the_h5py_bytes(tmp_path):
    import io
    from PIL import Image
    out = tmp_path / "enc.h5"
    libdata.convert(TREE, out, resize=40, quality=90)
    with h5py.File(out, "r") as f:
        enc, off = f["encoded"][:], f["offsets"][:]

    def pil(i):  # CHW RGB
        im = Image.open(io.BytesIO(enc[off[i]:off[i + 1]].tobytes())).convert("RGB")
        return np.asarray(im).transpose(2, 0, 1)
    # By default the JPEGs come out in the order the dataset was made for (BGR, as raw data).
    with libdata.Reader(out, batch_size=4, shuffle=True) as r:
        assert r.info.encoded and r.info.channel_order == "BGR"
        n = 0
        for d, _ in r:
            for j, i in enumerate(r.indices):
                assert np.abs(d[j].astype(int) - pil(i)[::-1]).max() <= 1, f"sample {i}"
                n += 1
        assert n == len(off) - 1
    with libdata.Reader(out, batch_size=4, channel_order="RGB") as r:
        d, _ = r.next_batch()
        assert r.info.channel_order == "RGB"
        assert np.abs(d[0].astype(int) - pil(r.indices[0])).max() <= 1


def test_variable_sizes_need_a_crop(tmp_path):
    out = tmp_path / "var.h5"
    libdata.convert(TREE, out, max_side=48, quality=80)
    with pytest.raises(LibdataError) as ei:
        libdata.Reader(out)
    assert ei.value.code == libdata.LD_EINVAL and "crop" in ei.value.message
    with libdata.Reader(out, crop=24, batch_size=4) as r:
        assert all(d.shape[1:] == (3, 24, 24) for d, _ in r)


def test_a_split_list_reads_like_one_file(h5, tmp_path):
    path, ref = h5
    libdata.convert(TREE, tmp_path / "split.h5", resize=(32, 24), split="5K")
    listing = tmp_path / "split.txt"
    assert len(listing.read_text().split()) > 1
    with libdata.Reader(listing, batch_size=4) as r:
        ds, ls, ix = read_all(r)
    assert list(np.concatenate(ix)) == list(range(len(ref["label"])))
    for d, l, i in zip(ds, ls, ix):
        assert np.array_equal(d, ref["data"][i]) and np.array_equal(l, ref["label"][i])


def test_drop_last_drops_the_short_batch(h5):
    path, ref = h5
    n = len(ref["label"])
    with libdata.Reader(path, batch_size=4, drop_last=True) as r:
        ds, _, _ = read_all(r)
    assert len(ds) == n // 4 and all(len(d) == 4 for d in ds)


@pytest.mark.skipif(not libdata.has_feature("lmdb"), reason="built without LMDB")
def test_lmdb_batches_equal_python_lmdb_reads(h5, tmp_path):
    import lmdb
    from test_py_convert import datum_class
    path, ref = h5
    db = tmp_path / "tree_lmdb"
    libdata.convert(TREE, db, resize=(32, 24), format="lmdb")
    Datum = datum_class()
    env = lmdb.open(str(db), readonly=True, lock=False)
    with env.begin() as txn:
        recs = []
        for _, v in txn.cursor():
            d = Datum()
            d.ParseFromString(v)
            recs.append((np.frombuffer(d.data, np.uint8).reshape(d.channels, d.height, d.width),
                         d.label))
    env.close()
    with libdata.Reader(str(db), batch_size=4, shuffle=True, seed=5) as r:
        count = 0
        for d, l in r:
            for j, i in enumerate(r.indices):
                assert np.array_equal(d[j], recs[i][0]), f"LMDB sample {i} differs"
                assert l[j] == recs[i][1]
                count += 1
    assert count == len(recs)


@pytest.mark.skipif(not libdata.has_feature("lmdb"), reason="built without LMDB")
def test_reader_reads_an_lmdb_written_by_python_lmdb(h5, tmp_path):
    """A Caffe-style LMDB made without libdata (python-lmdb + a protobuf Datum)."""
    import lmdb
    from test_py_convert import datum_class
    path, ref = h5
    Datum = datum_class()
    db = tmp_path / "py_lmdb"
    env = lmdb.open(str(db), map_size=64 << 20)
    with env.begin(write=True) as txn:
        for i, (img, label) in enumerate(zip(ref["data"], ref["label"])):
            d = Datum(channels=img.shape[0], height=img.shape[1], width=img.shape[2],
                      data=img.tobytes(), label=int(label))
            txn.put(b"%08d_sample%d.jpg" % (i, i), d.SerializeToString())
    env.close()
    with libdata.Reader(str(db), batch_size=4) as r:
        ds, ls, ix = read_all(r)
    assert list(np.concatenate(ix)) == list(range(len(ref["label"])))
    for d, l, i in zip(ds, ls, ix):
        assert np.array_equal(d, ref["data"][i]) and np.array_equal(l, ref["label"][i])


# ---- misuse ---------------------------------------------------------------------------------

def test_missing_file_raises_with_the_path(tmp_path):
    p = tmp_path / "nope.h5"
    with pytest.raises(LibdataError) as ei:
        libdata.Reader(p)
    assert ei.value.code in (libdata.LD_EIO, libdata.LD_EFORMAT), ei.value
    assert "nope.h5" in ei.value.message, ei.value.message


def test_not_a_dataset_raises_eformat(tmp_path):
    p = tmp_path / "junk.h5"
    p.write_bytes(b"\x89HDF\r\n\x1a\n" + b"\0" * 100)
    with pytest.raises(LibdataError) as ei:
        libdata.Reader(p)
    assert ei.value.code in (libdata.LD_EFORMAT, libdata.LD_EIO), ei.value
    assert ei.value.message


@pytest.mark.parametrize("kwargs", [
    {"batch_size": 0}, {"rank": 2, "world": 2}, {"crop": 1000},
    {"mean": [1, 2, 3]},  # mean with uint8 output
    {"scale": 0.5},       # scale with uint8 output
])
def test_contradictory_parameters_raise_einval(h5, kwargs):
    path, _ = h5
    with pytest.raises(LibdataError) as ei:
        libdata.Reader(path, **kwargs)
    assert ei.value.code == libdata.LD_EINVAL, ei.value
    assert ei.value.message, "no message from the library"


@pytest.mark.parametrize("kwargs, exc", [
    ({"batch_size": "8"}, TypeError), ({"batch_size": 8.0}, TypeError),
    ({"dtype": "float64"}, ValueError), ({"layout": "CHWN"}, ValueError),
    ({"shuffle": "sometimes"}, ValueError), ({"crop": (1, 2, 3)}, ValueError),
    ({"mean": "nofile.npy", "dtype": "float32"}, LibdataError),
    ({"mean": [["a"]]}, TypeError), ({"scale": "big"}, TypeError),
    ({"bogus": 1}, TypeError), ({"seed": 2**64 + 5}, OverflowError),
    ({"batch_size": -2**70}, OverflowError),
])
def test_wrong_types_raise_python_errors(h5, kwargs, exc):
    path, _ = h5
    with pytest.raises(exc):
        libdata.Reader(path, **kwargs)


@pytest.mark.parametrize("path", [None, 3.5, b"bad\0path"])
def test_bad_path_types_raise(path):
    with pytest.raises((TypeError, ValueError)):
        libdata.Reader(path)


def test_closed_reader_raises_estate_everywhere(h5):
    path, _ = h5
    r = libdata.Reader(path, batch_size=4)
    with r:
        pass
    r.close()  # idempotent
    assert r.closed
    for call in (r.next_batch, lambda: len(r), lambda: r.info, lambda: iter(r),
                 lambda: r.get("samples")):
        with pytest.raises(LibdataError) as ei:
            call()
        assert ei.value.code == libdata.LD_ESTATE and "closed" in ei.value.message


def test_memory_budget_too_small_is_elimit_with_the_fitting_batch(h5):
    path, _ = h5
    with pytest.raises(LibdataError) as ei:
        libdata.Reader(path, batch_size=8, memory_budget=1000)
    assert ei.value.code == libdata.LD_ELIMIT and "budget" in ei.value.message, ei.value


def test_unknown_get_name_raises(h5):
    path, _ = h5
    with libdata.Reader(path) as r, pytest.raises(ValueError):
        r.get("no_such_thing")


def test_concurrent_threads_are_serialized_not_crashing(h5):
    import threading
    path, ref = h5
    errors = []
    with libdata.Reader(path, batch_size=2, shuffle=True, threads=2) as r:
        def worker():
            try:
                for _ in range(200):
                    b = r.next_batch()
                    if b is not None:
                        assert len(b[0]) == len(b[1]) > 0
            except BaseException as e:  # pragma: no cover - reported below
                errors.append(e)
        ts = [threading.Thread(target=worker) for _ in range(3)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    assert not errors, errors


# ---- memory: no growth over 10,000 batches --------------------------------------------------

def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.parametrize("copy", [True, False])
def test_no_memory_growth_over_10000_batches(h5, copy):
    path, _ = h5
    with libdata.Reader(path, batch_size=2, shuffle=True, threads=1, copy=copy) as r:
        it = r.epochs()
        for _ in range(500):  # warm up: allocator pools, ring, caches
            next(it)
        before = rss_bytes()
        total = 0
        for _ in range(10_000):
            d, l = next(it)
            total += len(l)
        after = rss_bytes()
    assert total >= 10_000
    growth = after - before
    print(f"RSS {before / 2**20:.1f} MiB -> {after / 2**20:.1f} MiB over 10,000 batches")
    assert growth < 4 << 20, f"RSS grew by {growth / 2**20:.2f} MiB over 10,000 batches"


# ---- fork safety ----------------------------------------------------------------------------

def run_in_child(fn, timeout=60):
    """Run fn() in a forked child; return (exit status, error text)."""
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: never return into pytest
        os.close(rfd)
        signal.alarm(timeout)
        code = 0
        try:
            fn()
        except BaseException:
            os.write(wfd, traceback.format_exc().encode())
            code = 1
        os._exit(code)
    os.close(wfd)
    with os.fdopen(rfd, "rb") as f:
        err = f.read().decode()
    _, status = os.waitpid(pid, 0)
    return status, err


def test_reader_opened_in_a_forked_child_works_and_parent_keeps_working(h5):
    path, ref = h5
    n = len(ref["label"])
    with libdata.Reader(path, batch_size=2, shuffle=True, seed=9, threads=2) as parent:
        first, _ = parent.next_batch()  # workers are running at fork time

        def child():
            # The parent's reader is unusable here and says so instead of hanging.
            try:
                parent.next_batch()
            except LibdataError as e:
                assert e.code == libdata.LD_ESTATE, e
            else:
                raise AssertionError("a reader used across fork did not raise")
            with libdata.Reader(path, batch_size=3, threads=2) as r:
                ds, ls, ix = read_all(r)
                idx = np.concatenate(ix)
                assert list(idx) == list(range(n))
                for d, i in zip(ds, ix):
                    assert np.array_equal(d, ref["data"][i])
            parent.close()  # must not free (or join) the parent's threads in the child

        status, err = run_in_child(child)
        assert status == 0, f"child failed (status {status}):\n{err}"
        # The parent's reader is intact: finish its epoch and check the content
        # (next_batch() continues the epoch; a `for` loop would start the next one).
        count = len(first)
        while (batch := parent.next_batch()) is not None:
            d, l = batch
            assert np.array_equal(d, ref["data"][parent.indices])
            count += len(l)
        assert count == n


def test_torch_style_open_after_fork_in_several_children(h5):
    path, ref = h5
    n = len(ref["label"])
    results = []
    for rank in range(2):
        def child(rank=rank):
            with libdata.Reader(path, batch_size=2, rank=rank, world=2, threads=1) as r:
                idx = np.concatenate(read_all(r)[2])
                assert len(idx) == n // 2
        results.append(run_in_child(child))
    for status, err in results:
        assert status == 0, err
