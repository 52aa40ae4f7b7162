"""libdata.plan() from Python: the same estimate as `dataconv plan` (ld_plan), with a real
dataset behind a Data layer (made by libdata.convert from the fixtures), errors as LibdataError
naming the file and line, and the largest batch as a boundary.

Run: LIBDATA_LIBRARY=build/libdata.so LD_TEST_DATA=build/testdata PYTHONPATH=bindings/python \
     /usr/bin/python3 -m pytest -q tests/python/test_py_plan.py
"""
import os
import re
import subprocess

import pytest

import libdata
from libdata import LibdataError

TESTDATA = os.environ.get("LD_TEST_DATA", "")
TREE = os.path.join(TESTDATA, "tree")
SRC = os.path.join(os.path.dirname(__file__), "..", "..")
DATACONV = os.environ.get("DATACONV")

pytestmark = pytest.mark.skipif(not os.path.isdir(TREE),
                                reason="LD_TEST_DATA must point at the made fixtures")

NET = """
layer { name: "data" type: "Data" top: "data" top: "label" include { phase: TRAIN }
  data_param { source: "%(src)s" backend: LMDB batch_size: 8 }
  transform_param { crop_size: 24 } }
layer { name: "data" type: "Data" top: "data" top: "label" include { phase: TEST }
  data_param { source: "%(src)s" backend: LMDB batch_size: 4 } transform_param { crop_size: 24 } }
layer { name: "conv" type: "Convolution" bottom: "data" top: "conv"
  convolution_param { num_output: 8 kernel_size: 3 } }
layer { name: "relu" type: "ReLU" bottom: "conv" top: "conv" }
layer { name: "ip" type: "InnerProduct" bottom: "conv" top: "ip" inner_product_param { num_output: 3 } }
layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip" bottom: "label" top: "loss" }
"""


@pytest.fixture
def net(tmp_path):
    db = str(tmp_path / "train.lmdb")
    libdata.convert(TREE, db, resize=32)
    p = tmp_path / "train_val.prototxt"
    p.write_text(NET % {"src": db})
    s = tmp_path / "solver.prototxt"
    s.write_text('net: "%s"\ntype: "Adam"\nmax_iter: 10\ntest_iter: 2\ntest_interval: 5\n' % p)
    return str(p), str(s)


def test_plan_reads_the_source_shape_and_adds_up(net):
    p = libdata.plan(net[0], net[1], ram=1 << 30)
    assert p.batch == 8
    shapes = {(b.phase, b.name): b.shape for b in p.blobs}
    assert shapes[("TRAIN", "data")] == (8, 3, 24, 24)  # the LMDB's 32x32 cropped to 24
    assert shapes[("TRAIN", "conv")] == (8, 8, 22, 22)
    assert shapes[("TEST", "data")] == (4, 3, 24, 24)
    assert sum(i.bytes for i in p.items) == p.total
    hist = [i for i in p.items if "solver history" in i.name]
    params = [i for i in p.items if i.name.endswith("parameters")]
    assert hist and params and hist[0].bytes == 3 * params[0].bytes  # Adam: m, v, temp
    assert any(i.name.startswith("TEST net") for i in p.items)
    assert p.fits and p.largest_batch > 8


def test_largest_batch_is_a_boundary(net):
    first = libdata.plan(net[0], net[1], ram=100 << 20)
    n = first.largest_batch
    assert n >= 1
    assert first.usable == (100 << 20) - (100 << 20) // 100 * 5
    assert libdata.plan(net[0], net[1], batch=n, ram=100 << 20).fits
    assert not libdata.plan(net[0], net[1], batch=n + 1, ram=100 << 20).fits


def test_same_as_dataconv(net):
    if not DATACONV:
        pytest.skip("DATACONV not set")
    p = libdata.plan(net[0], net[1], ram=1 << 30)
    out = subprocess.run([DATACONV, "plan", net[0], "--solver", net[1], "--ram", "1G"],
                         capture_output=True, text=True, check=True).stdout
    assert int(re.search(r"peak RSS: (\d+) bytes", out).group(1)) == p.total
    assert re.search(r"Largest batch that fits in .*: (\d+)", out).group(1) == str(p.largest_batch)


def test_shapes_override_and_phase(tmp_path):
    p = tmp_path / "deploy.prototxt"
    p.write_text('layer { name: "in" type: "Input" top: "data" input_param { shape { dim: 1 dim: 3 '
                 'dim: 8 dim: 8 } } }\nlayer { name: "c" type: "Convolution" bottom: "data" top: "c" '
                 'convolution_param { num_output: 2 kernel_size: 3 } }\n')
    r = libdata.plan(str(p), phase="test", batch=5, shapes={"data": (3, 20, 10)}, ram=1 << 30)
    assert [b.shape for b in r.blobs] == [(5, 3, 20, 10), (5, 2, 18, 8)]


def test_errors_name_file_and_line(tmp_path):
    p = tmp_path / "bad.prototxt"
    p.write_text('layer { name: "in" type: "Input" top: "data" input_param { shape { dim: 1 } } }\n'
                 'layer { name: "x" type: "Mystery" bottom: "data" top: "x" }\n')
    with pytest.raises(LibdataError) as e:
        libdata.plan(str(p))
    assert e.value.code == libdata.LD_EFORMAT
    assert "bad.prototxt:2:" in e.value.message and "'Mystery'" in e.value.message
    p.write_text("layer { name: \"a\"\n")
    with pytest.raises(LibdataError) as e:
        libdata.plan(str(p))
    assert "bad.prototxt:1:7:" in e.value.message
    with pytest.raises(ValueError):
        libdata.plan(str(p), phase="deploy")
