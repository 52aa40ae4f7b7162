"""Values the output dtype cannot hold are refused with a message, never clipped (issue 12,
item 5); values it can hold come back exactly, cross-checked with h5py.

Run: LIBDATA_LIBRARY=build/libdata.so PYTHONPATH=bindings/python \
     /usr/bin/python3 -m pytest -q tests/python/test_py_value_ranges.py
"""
import h5py
import numpy as np
import pytest

import libdata
from libdata import LibdataError

N = 6


def write(path, data, label):
    with h5py.File(path, "w") as f:
        f["data"] = data
        f["label"] = label
    return str(path)


def pixels(dtype, value=7):
    return np.full((N, 1, 4, 5), value, dtype=dtype)


def read_all(path, **kw):
    with libdata.Reader(path, batch_size=N, threads=1, **kw) as r:
        batches = list(r)
    assert len(batches) == 1
    return batches[0]


def refused(path, *words, **kw):
    with pytest.raises(LibdataError) as ei:
        read_all(path, **kw)
    msg = str(ei.value)
    for w in words:
        assert w in msg, msg
    return msg


# ---- labels ---------------------------------------------------------------------------------

@pytest.mark.parametrize("label_dtype", ["int32", "float32"])
def test_int64_labels_beyond_int32_are_refused_with_their_range(tmp_path, label_dtype):
    lab = np.arange(N, dtype=np.int64)
    lab[3] = 2**31 + 5
    p = write(tmp_path / "big.h5", pixels(np.uint8), lab)
    refused(p, "'/label'", "0 to 2147483653", "sample 3", "int32", label_dtype=label_dtype)


def test_uint64_labels_beyond_int64_are_reported_as_they_are(tmp_path):
    lab = np.arange(N, dtype=np.uint64)
    lab[1] = 2**64 - 1
    p = write(tmp_path / "u64.h5", pixels(np.uint8), lab)
    refused(p, "18446744073709551615", "sample 1")


def test_int64_labels_within_int32_read_exactly(tmp_path):
    lab = np.array([-2**31, 2**31 - 1, 0, 5, -7, 123456789], dtype=np.int64)
    p = write(tmp_path / "edge.h5", pixels(np.uint8), lab)
    _, labels = read_all(p)
    assert labels.dtype == np.int32
    np.testing.assert_array_equal(labels, lab)


@pytest.mark.parametrize("bad", [float("nan"), 1e12, 2.5, float("inf"), -3e9])
def test_float_labels_that_are_not_int32_whole_numbers_are_refused(tmp_path, bad):
    lab = np.arange(N, dtype=np.float64)
    lab[4] = bad
    p = write(tmp_path / "f.h5", pixels(np.uint8), lab)
    refused(p, "sample 4", "int32", "label_dtype float32")


def test_float_labels_read_as_float32(tmp_path):
    lab = np.array([0.5, float("nan"), 1e12, -2.25, float("inf"), 3.0], dtype=np.float64)
    p = write(tmp_path / "f.h5", pixels(np.uint8), lab)
    _, labels = read_all(p, label_dtype="float32")
    np.testing.assert_array_equal(labels, lab.astype(np.float32))


def test_whole_float_labels_read_as_int32(tmp_path):
    lab = np.array([0, 1, 2, -5, 2**31 - 1, 9], dtype=np.float64)
    p = write(tmp_path / "f.h5", pixels(np.uint8), lab)
    _, labels = read_all(p)
    np.testing.assert_array_equal(labels, lab.astype(np.int64))


def test_labels_float32_would_round_are_refused(tmp_path):
    lab = np.arange(N, dtype=np.int32)
    lab[2] = 2**24 + 1
    p = write(tmp_path / "r.h5", pixels(np.uint8), lab)
    refused(p, "sample 2", "16777217", "float32", label_dtype="float32")
    _, labels = read_all(p)  # int32 output holds it
    np.testing.assert_array_equal(labels, lab)


def test_float64_labels_beyond_float32_are_refused(tmp_path):
    lab = np.arange(N, dtype=np.float64)
    lab[5] = 1e300
    p = write(tmp_path / "r.h5", pixels(np.uint8), lab)
    refused(p, "sample 5", "float32", label_dtype="float32")


# ---- pixels ---------------------------------------------------------------------------------

def test_uint16_pixel_1000_is_refused_in_uint8_output_and_exact_in_float32(tmp_path):
    d = pixels(np.uint16)
    d[2, 0, 1, 3] = 1000
    p = write(tmp_path / "u16.h5", d, np.arange(N))
    refused(p, "'/data'", "1000", "sample 2", "uint8", "dtype float32")
    data, _ = read_all(p, dtype="float32")
    np.testing.assert_array_equal(data, d.astype(np.float32))


def test_uint16_pixels_within_0_255_read_exactly_as_uint8(tmp_path):
    d = (np.arange(N * 20, dtype=np.uint16) % 256).reshape(N, 1, 4, 5)
    p = write(tmp_path / "u16ok.h5", d, np.arange(N))
    data, _ = read_all(p)
    assert data.dtype == np.uint8
    np.testing.assert_array_equal(data, d)


@pytest.mark.parametrize("bad", [-1.0, 0.5, 255.5, float("nan")])
def test_float_pixels_that_are_not_uint8_values_are_refused_in_uint8_output(tmp_path, bad):
    d = pixels(np.float32)
    d[1, 0, 0, 0] = bad
    p = write(tmp_path / "f32.h5", d, np.arange(N))
    refused(p, "sample 1", "uint8", "dtype float32")


def test_int64_pixels_float32_cannot_hold_are_refused(tmp_path):
    d = pixels(np.int64)
    d[3, 0, 2, 2] = 2**24 + 1
    p = write(tmp_path / "i64.h5", d, np.arange(N))
    refused(p, "'/data'", "16777217", "float32", dtype="float32")


def test_int64_pixels_read_exactly_when_they_fit(tmp_path):
    d = pixels(np.int64)
    d[3, 0, 2, 2] = -2**24
    d[0, 0, 0, 0] = 2**24
    p = write(tmp_path / "i64ok.h5", d, np.arange(N))
    data, _ = read_all(p, dtype="float32")
    np.testing.assert_array_equal(data, d.astype(np.float32))


def test_float64_pixels_beyond_float32_are_refused(tmp_path):
    d = pixels(np.float64)
    d[0, 0, 3, 4] = -1e300
    p = write(tmp_path / "f64.h5", d, np.arange(N))
    refused(p, "'/data'", "1e+300", "float32", dtype="float32")
