"""LibdataError carries the library's structured error detail (issue 14, item 3): the
parameter's name, the file and the sample, not only the message text.

Run: LIBDATA_LIBRARY=build/libdata.so LD_TEST_DATA=build/testdata PYTHONPATH=bindings/python \
     /usr/bin/python3 -m pytest -q tests/python/test_py_errdetail.py
"""
import os

import pytest

import libdata
from libdata import LibdataError

TESTDATA = os.environ.get("LD_TEST_DATA", "")
TREE = os.path.join(TESTDATA, "tree")
CORRUPT = os.path.join(TESTDATA, "reader", "enc_corrupt.h5")

pytestmark = pytest.mark.skipif(not os.path.isdir(TREE),
                                reason="LD_TEST_DATA must point at the made fixtures")


def test_max_pixels_names_the_parameter_the_image_and_its_index(tmp_path):
    with pytest.raises(LibdataError) as ei:
        libdata.convert(TREE, str(tmp_path / "big.h5"), resize=16, max_pixels=1000,
                        strict=True)
    e = ei.value
    assert e.symbol == "LD_ELIMIT", e
    assert e.param == "max_pixels", e
    assert e.sample == 0, e
    assert e.path and e.path.startswith(TREE + os.sep) and os.path.isfile(e.path), e.path
    assert e.path in e.message
    assert "--" not in e.message, e.message


def test_a_corrupt_sample_gives_its_index_and_file():
    r = libdata.Reader(CORRUPT, batch_size=1, threads=1)
    with pytest.raises(LibdataError) as ei:
        for _ in r:
            pass
    e = ei.value
    assert e.sample == 5, e
    assert e.path == CORRUPT
    assert e.param is None
    r.close()


def test_a_float_mean_without_float_output_names_dtype():
    with pytest.raises(LibdataError) as ei:
        libdata.Reader(CORRUPT, mean=[100.0], dtype="uint8")
    assert ei.value.param == "dtype", ei.value
