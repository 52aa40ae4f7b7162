"""Reading a merged file (issue 13 item 5): virtual datasets over sharded parts, as the contract
in libdata/src/store/h5_format.h describes them, built here by an independent writer
(tests/python/vds_build.py: dataconv for the parts, h5py's VirtualLayout for the merge).

libdata's reader must give exactly what h5py reads through HDF5 (sequential, shuffled,
rank/world slices straddling part boundaries, uint8 and float32, raw and encoded), take the
direct path (its log says "virtual, N parts, direct pread"), and refuse a missing, truncated,
rewritten, retyped or foreign part with a message naming the part file."""
import glob
import os
import shutil
import subprocess
import sys

import h5py
import numpy as np
import pytest

import libdata

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vds_build  # noqa: E402

DATACONV = os.environ.get("DATACONV")
TESTDATA = os.environ.get("LD_TEST_DATA", "")
pytestmark = pytest.mark.skipif(not DATACONV, reason="DATACONV not set (the parts are made by it)")


def photo_list(path, copies=4):
    """A list of the fixture photos, `copies` times, labels 0..4: 24 * copies samples."""
    photos = sorted(glob.glob(os.path.join(TESTDATA, "photos", "p*.jpg")))
    assert photos, "no fixture photos"
    with open(path, "w") as f:
        for r in range(copies):
            for i, p in enumerate(photos):
                f.write(f"{os.path.relpath(p, TESTDATA)} {(i + r) % 5}\n")
    return len(photos) * copies


def build(d, n, options, single=True):
    """Parts of N, the merged file m.h5, and the same list converted in one go (single.h5)."""
    d = str(d)
    os.makedirs(d, exist_ok=True)
    lst = os.path.join(d, "all.txt")
    total = photo_list(lst)
    cwd = os.getcwd()
    os.chdir(d)
    try:
        parts = vds_build.make_parts(DATACONV, lst, TESTDATA, "p", n, options)
        vds_build.merge("m.h5", parts)
        if single:
            subprocess.run([DATACONV, "--list", lst, "--root", TESTDATA, "single.h5", "-q",
                            *options], check=True)
    finally:
        os.chdir(cwd)
    return os.path.join(d, "m.h5"), [os.path.join(d, p) for p in parts], total


def read_all(path, **kw):
    """(data, labels, indices, log lines) of one epoch."""
    logs = []
    ds, ls, ix = [], [], []
    with libdata.Reader(path, log=lambda lv, m: logs.append(m), **kw) as r:
        for d, lab in r:
            ds.append(d)
            ls.append(lab)
            ix.append(r.indices)
    return np.concatenate(ds), np.concatenate(ls), np.concatenate(ix), logs


def how(logs):
    line = [m for m in logs if m.startswith("reader: ") and "samples (" in m]
    assert line, logs
    return line[0]


@pytest.fixture(scope="module")
def raw5(tmp_path_factory):
    """96 samples, 32x32 raw uint8, 5 parts of 19, 19, 19, 19, 20 (boundaries inside batches)."""
    return build(tmp_path_factory.mktemp("raw5"), 5, ["--resize", "32"])


def h5py_read(path, names=("data", "label")):
    with h5py.File(path, "r") as f:
        return [f[n][:] for n in names]


def test_merged_file_equals_single_run_through_h5py(raw5):
    """The builder's cross-check: h5py reads the merged file as the one-go conversion."""
    m, parts, total = raw5
    data, label = h5py_read(m)
    sdata, slabel = h5py_read(os.path.join(os.path.dirname(m), "single.h5"))
    assert data.shape[0] == total and (data.reshape(total, -1).max(1) > 0).all()
    np.testing.assert_array_equal(data, sdata)
    np.testing.assert_array_equal(label, slabel)


@pytest.mark.parametrize("shuffle,batch", [(False, 7), (True, 7), ("block", 40)])
def test_raw_reads_equal_h5py_and_take_the_direct_path(raw5, shuffle, batch):
    """(block: runs of consecutive samples, read with one vectored read each, cross parts)"""
    m, parts, total = raw5
    data, label = h5py_read(m)
    d, lab, ix, logs = read_all(m, batch_size=batch, shuffle=shuffle, seed=3, threads=2)
    assert "hdf5 raw uint8 virtual, 5 parts, direct pread" in how(logs)
    assert sorted(ix.tolist()) == list(range(total))
    assert (ix.tolist() != list(range(total))) == bool(shuffle)
    np.testing.assert_array_equal(d, data[ix])
    np.testing.assert_array_equal(lab, label[ix])


@pytest.mark.parametrize("shuffle", [False, True])
def test_rank_world_slices_straddle_parts(raw5, shuffle):
    """world=3: shares of 32 samples, cut at 32 and 64, cross the part boundaries 19/38/57/76."""
    m, parts, total = raw5
    data, label = h5py_read(m)
    seen = []
    for rank in range(3):
        d, lab, ix, _ = read_all(m, batch_size=5, shuffle=shuffle, seed=9, rank=rank, world=3,
                                 threads=2)
        assert len(ix) == total // 3
        if not shuffle:
            assert ix.tolist() == list(range(rank * 32, rank * 32 + 32))
        np.testing.assert_array_equal(d, data[ix])
        np.testing.assert_array_equal(lab, label[ix])
        seen += ix.tolist()
    assert sorted(seen) == list(range(total))


def test_float32_parts(tmp_path):
    m, parts, total = build(tmp_path, 3, ["--resize", "24"], single=False)
    vds_build.to_float32(parts)
    vds_build.merge(m, parts)  # again: /data's element type changed
    data, label = h5py_read(m)
    assert data.dtype == np.float32
    for shuffle in (False, True):
        d, lab, ix, logs = read_all(m, batch_size=10, shuffle=shuffle, dtype="float32")
        assert "hdf5 raw float32 virtual, 3 parts, direct pread" in how(logs)
        np.testing.assert_array_equal(d, data[ix])
        np.testing.assert_array_equal(lab, label[ix])


def test_encoded_parts(tmp_path):
    """--quality: /encoded is virtual, /offsets real and shifted; decoded samples equal those of
    the one-go conversion (whose bytes h5py finds equal)."""
    m, parts, total = build(tmp_path, 4, ["--resize", "40", "--quality", "90"])
    single = os.path.join(os.path.dirname(m), "single.h5")
    enc, offs, label = h5py_read(m, ("encoded", "offsets", "label"))
    senc, soffs, slabel = h5py_read(single, ("encoded", "offsets", "label"))
    np.testing.assert_array_equal(enc, senc)
    np.testing.assert_array_equal(offs, soffs)
    sd, slab, six, _ = read_all(single, batch_size=9, threads=2)
    for shuffle in (False, True):
        d, lab, ix, logs = read_all(m, batch_size=9, shuffle=shuffle, seed=5, threads=2)
        assert "hdf5 encoded virtual, 4 parts, direct pread" in how(logs)
        np.testing.assert_array_equal(d, sd[ix])
        np.testing.assert_array_equal(lab, label[ix])
    d, lab, ix, _ = read_all(m, batch_size=9, rank=1, world=2)
    np.testing.assert_array_equal(d, sd[total // 2:])


def test_deflate_parts_fall_back_to_hdf5_with_the_same_checks(tmp_path):
    m, parts, total = build(tmp_path, 3, ["--resize", "16", "--deflate", "3"], single=False)
    data, label = h5py_read(m)
    d, lab, ix, logs = read_all(m, batch_size=8, shuffle=True)
    assert "virtual, via HDF5 (serialized)" in how(logs)
    np.testing.assert_array_equal(d, data[ix])
    with h5py.File(parts[1], "a") as f:
        f.attrs["run_id"] = "0123456789abcdef"
    with pytest.raises(libdata.LibdataError, match="p-00001-of-00003.h5 comes from another run"):
        read_all(m)


@pytest.fixture
def raw3(tmp_path):
    return build(tmp_path, 3, ["--resize", "16"], single=False)


def refused(m, *patterns):
    with pytest.raises(libdata.LibdataError) as ex:
        read_all(m, batch_size=8)
    for p in patterns:
        assert p in str(ex.value), str(ex.value)


def test_missing_part_is_refused(raw3):
    m, parts, _ = raw3
    os.rename(parts[1], parts[1] + ".gone")
    refused(m, "p-00001-of-00003.h5", "does not exist")


def test_truncated_part_is_refused(raw3):
    m, parts, _ = raw3
    size = os.path.getsize(parts[2])
    os.truncate(parts[2], size // 2)
    refused(m, "p-00002-of-00003.h5")


def test_part_with_fewer_rows_than_its_mapping_is_refused(raw3):
    """A part converted again from a shorter list: HDF5 would read its missing rows as fills."""
    m, parts, _ = raw3
    with h5py.File(parts[0], "a") as f:
        for name in ("data", "label", "filename"):
            f[name].resize(f[name].shape[0] - 2, axis=0)
    refused(m, "maps 32 rows of part", "p-00000-of-00003.h5", "holds 30 rows")


def test_part_of_another_element_type_is_refused(raw3):
    m, parts, _ = raw3
    vds_build.to_float32(parts[1:2])
    refused(m, "p-00001-of-00003.h5", "another element type")


def test_part_from_another_run_is_refused(raw3):
    m, parts, _ = raw3
    with h5py.File(parts[2], "a") as f:
        f.attrs["run_id"] = "ffffffffffffffff"
    refused(m, "p-00002-of-00003.h5 comes from another run", "ffffffffffffffff")


def test_part_replaced_after_open_is_refused_not_misread(raw3):
    """The chunk addresses were taken from the part checked at open: a part rewritten before
    its first read (opened lazily) is refused, not read at stale addresses."""
    m, parts, _ = raw3
    spare = parts[1] + ".new"
    shutil.copyfile(parts[1], spare)
    with h5py.File(spare, "a") as f:
        f.attrs["note"] = "x" * 5000  # another layout of the same samples
    with libdata.Reader(m, batch_size=4, threads=1, prefetch=1) as r:
        os.replace(spare, parts[1])
        with pytest.raises(libdata.LibdataError, match="p-00001-of-00003.h5 was replaced or changed"):
            for _ in r:
                pass


def test_h5py_reads_a_missing_part_as_fill_values(raw3):
    """Why the reader refuses: HDF5 (h5py) reads a missing part silently as zeros."""
    m, parts, _ = raw3
    os.rename(parts[1], parts[1] + ".gone")
    with h5py.File(m, "r") as f:
        assert (f["data"][32:64] == 0).all()


def test_encoded_offsets_not_matching_the_parts_are_refused(tmp_path):
    """/offsets is the one real per-sample table of a merged encoded file: a merge that shifted
    it wrongly would cut samples at other places than the parts' bytes."""
    m, parts, total = build(tmp_path, 4, ["--resize", "24", "--quality", "80"], single=False)
    with h5py.File(m, "a") as f:
        o = f["offsets"][:]
        o[48] += 1  # part 2 starts at the old o[48]: now inside sample 47
        f["offsets"][...] = o
    refused(m, "p-00002-of-00004.h5 starts at byte", "inside sample 47",
            "offsets do not match its parts")


def test_other_tools_contiguous_parts_read_directly(tmp_path):
    """Any VDS of the "whole part -> next rows" shape reads directly, also over h5py's
    contiguous datasets of (N, H, W) float32 with float labels and no libdata attributes."""
    rng = np.random.default_rng(7)
    sizes = [5, 1, 9, 4]
    total = sum(sizes)
    lay = h5py.VirtualLayout(shape=(total, 6, 7), dtype=np.float32)
    llay = h5py.VirtualLayout(shape=(total,), dtype=np.float64)
    at = 0
    for k, n in enumerate(sizes):
        with h5py.File(tmp_path / f"src{k}.h5", "w") as f:
            f["x"] = rng.random((n, 6, 7), dtype=np.float32)
            f["y"] = rng.random(n) * 10
            assert f["x"].chunks is None  # contiguous
        lay[at:at + n] = h5py.VirtualSource(f"src{k}.h5", "x", shape=(n, 6, 7))
        llay[at:at + n] = h5py.VirtualSource(f"src{k}.h5", "y", shape=(n,))
        at += n
    m = str(tmp_path / "v.h5")
    with h5py.File(m, "w", libver="latest") as f:
        f.create_virtual_dataset("x", lay)
        f.create_virtual_dataset("y", llay)
        data, label = f["x"][:], f["y"][:]
    d, lab, ix, logs = read_all(m, batch_size=4, shuffle=True, data_name="x", label_name="y",
                                label_dtype="float32", dtype="float32")
    assert "hdf5 raw float32 virtual, 4 parts, direct pread" in how(logs)
    np.testing.assert_array_equal(d.reshape(total, 6, 7), data[ix])
    np.testing.assert_array_equal(lab, label[ix].astype(np.float32))
