"""A NumPy .npy mean file (issue 12, item 12): C x H x W or H x W x C, float32, float64 or
uint8, of the sample or the crop size; the output equals (data - mean) computed by numpy from
h5py's copy of the data. Fortran order, big-endian and other dtypes are refused, naming why.

Run: LIBDATA_LIBRARY=build/libdata.so PYTHONPATH=bindings/python \
     /usr/bin/python3 -m pytest -q tests/python/test_py_mean_npy.py
"""
import h5py
import numpy as np
import pytest

import libdata
from libdata import LibdataError

C, H, W, N = 3, 12, 10, 8


@pytest.fixture(scope="module")
def h5(tmp_path_factory):
    d = tmp_path_factory.mktemp("npy")
    p = d / "x.h5"
    rng = np.random.default_rng(3)
    with h5py.File(p, "w") as f:
        f["data"] = rng.integers(0, 256, (N, C, H, W), dtype=np.uint8)
        f["label"] = np.arange(N, dtype=np.int32)
    with h5py.File(p, "r") as f:
        ref = f["data"][:].astype(np.float32)
    return str(p), ref, d


def read(path, **kw):
    logs = []
    with libdata.Reader(path, batch_size=N, threads=1, dtype="float32",
                        log=lambda lvl, m: logs.append(m), **kw) as r:
        (data, _), = list(r)
    return data, logs


def mean_chw(seed=5):
    return np.random.default_rng(seed).uniform(0, 255, (C, H, W)).astype(np.float32)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.uint8])
def test_chw_mean_of_each_dtype(h5, dtype):
    path, ref, d = h5
    m = mean_chw().astype(dtype)
    np.save(d / "chw.npy", m)
    data, logs = read(path, mean=str(d / "chw.npy"))
    np.testing.assert_allclose(data, ref - m.astype(np.float32)[None], rtol=0, atol=1e-4)
    assert any("C x H x W" in x for x in logs), logs


def test_hwc_mean_is_transposed_and_says_so(h5):
    path, ref, d = h5
    m = mean_chw()
    np.save(d / "hwc.npy", np.ascontiguousarray(m.transpose(1, 2, 0)))
    data, logs = read(path, mean=str(d / "hwc.npy"))
    np.testing.assert_allclose(data, ref - m[None], rtol=0, atol=1e-4)
    assert any("H x W x C" in x for x in logs), logs


def test_crop_sized_mean_and_scale(h5):
    path, ref, d = h5
    m = np.random.default_rng(7).uniform(0, 255, (8, 6, C)).astype(np.float32)  # H x W x C
    np.save(d / "crop.npy", m)
    data, _ = read(path, mean=str(d / "crop.npy"), crop=(6, 8), scale=0.5)
    y0, x0 = (H - 8) // 2, (W - 6) // 2
    want = (ref[:, :, y0:y0 + 8, x0:x0 + 6] - m.transpose(2, 0, 1)[None]) * 0.5
    np.testing.assert_allclose(data, want, rtol=0, atol=1e-4)


def test_mean_with_a_leading_axis_of_one(h5):
    path, ref, d = h5
    m = mean_chw()
    np.save(d / "n1.npy", m[None])
    data, _ = read(path, mean=str(d / "n1.npy"))
    np.testing.assert_allclose(data, ref - m[None], rtol=0, atol=1e-4)


def refused(h5, name, arr, *words):
    path, _, d = h5
    np.save(d / name, arr)
    with pytest.raises(LibdataError) as ei:
        read(path, mean=str(d / name))
    for w in words:
        assert w in str(ei.value), str(ei.value)


def test_fortran_order_is_refused(h5):
    refused(h5, "f.npy", np.asfortranarray(mean_chw()), "Fortran order")


def test_big_endian_is_refused(h5):
    refused(h5, "be.npy", mean_chw().astype(">f4"), "'>f4'", "little-endian")


def test_other_dtypes_are_refused(h5):
    refused(h5, "i16.npy", mean_chw().astype(np.int16), "'<i2'", "float32")


def test_a_shape_that_fits_neither_order_names_both(h5):
    refused(h5, "bad.npy", np.zeros((C, H + 1, W), np.float32), "(3, 13, 10)",
            "C x H x W", "H x W x C", "(3, 12, 10)", "(12, 10, 3)")


def test_a_mean_needs_float32_output_and_says_which_parameter(h5):
    path, _, d = h5
    np.save(d / "ok.npy", mean_chw())
    with pytest.raises(LibdataError) as ei:
        with libdata.Reader(path, batch_size=N, mean=str(d / "ok.npy")):
            pass
    msg = str(ei.value)
    assert "dtype to float32" in msg and "= 1" not in msg, msg
