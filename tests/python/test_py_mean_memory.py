"""Issue 14 item 4: a (C, H, W) mean array goes to the library from memory
(ld_reader_set_mean_image), not through a protobuf file the bindings encode into the temporary
folder; the result is the same as the same mean given as a file."""
import os
import tempfile

import numpy as np
import pytest

import libdata

TESTDATA = os.environ.get("LD_TEST_DATA", "")
RAW = os.path.join(TESTDATA, "reader", "raw_ours.h5")
pytestmark = pytest.mark.skipif(not os.path.exists(RAW), reason="LD_TEST_DATA fixtures missing")


def epoch(**kw):
    with libdata.Reader(RAW, batch_size=16, dtype="float32", crop=(10, 8), **kw) as r:
        return np.concatenate([d for d, _ in r])


def test_mean_array_needs_no_file(tmp_path, monkeypatch):
    c, h, w = 3, 24, 20
    mean = (np.arange(c * h * w, dtype=np.float32) % 89).reshape(c, h, w) * 0.5
    # a temporary folder that cannot be written: the old bindings' mkstemp failed here
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "missing"))
    got = epoch(mean=mean, scale=0.5)
    npy = tmp_path / "mean.npy"
    np.save(npy, mean)
    want = epoch(mean=str(npy), scale=0.5)
    np.testing.assert_array_equal(got, want)
    assert not (tmp_path / "missing").exists()


def test_mean_array_of_the_wrong_size_is_refused():
    with pytest.raises(libdata.LibdataError) as e:
        epoch(mean=np.zeros((3, 4, 4), np.float32))
    assert e.value.code == libdata.LD_EINVAL and "mean" in e.value.message
