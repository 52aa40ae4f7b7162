"""libdata.plan() from Python: the same estimate as `dataconv plan` (ld_plan), with a real
dataset behind a Data layer (made by libdata.convert from the fixtures), errors as LibdataError
naming the file and line, and the largest batch as a boundary. Issue 26: `ram` takes the CLI's
size strings, a deploy net is planned as inference, fields caffe.proto lacks are refused, a
Python data layer says how to give its shape, and the advice names what does not grow with
the batch. Those tests need no fixtures.

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

DEPLOY = os.path.join(SRC, "tests", "data", "plan", "deploy_caffenet.prototxt")
MiB = 1 << 20

needs_tree = pytest.mark.skipif(not os.path.isdir(TREE),
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


@needs_tree
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


@needs_tree
def test_largest_batch_is_a_boundary(net):
    first = libdata.plan(net[0], net[1], ram=100 << 20)
    n = first.largest_batch
    assert n >= 1
    assert first.usable == (100 << 20) - (100 << 20) // 100 * 5
    assert libdata.plan(net[0], net[1], batch=n, ram=100 << 20).fits
    assert not libdata.plan(net[0], net[1], batch=n + 1, ram=100 << 20).fits


@needs_tree
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


def test_ram_takes_the_size_strings_of_the_cli():
    """Issue 26, item 9: ram="512M" raised ValueError where `dataconv plan --ram 512M` works."""
    for text, n in [("512M", 512 * MiB), ("512MiB", 512 * MiB), ("512mb", 512 * MiB),
                    ("512MB", 512 * MiB), ("0.5G", 512 * MiB), ("0.5gib", 512 * MiB),
                    ("524288K", 512 * MiB), ("536870912", 512 * MiB), ("536870912B", 512 * MiB),
                    (".5G", 512 * MiB), ("1T", 1 << 40), (" 512M", 512 * MiB)]:
        assert libdata.plan(DEPLOY, ram=text).ram == n, text
    assert libdata.plan(DEPLOY, ram=512 * MiB).ram == 512 * MiB
    for bad in ["lots", "512X", "512 M", "5iB", "-1G", "0", "0M", "", "1e", "M", "512M "]:
        with pytest.raises(ValueError):
            libdata.plan(DEPLOY, ram=bad)
    with pytest.raises(ValueError):
        libdata.plan(DEPLOY, ram=-1)


def test_deploy_net_is_inference_by_default():
    """Issue 26, item 7: a net without a loss and no solver is planned as inference (it was
    planned as training, with gradients and solver history); the plan says which and why."""
    p = libdata.plan(DEPLOY, ram="8G")
    assert (p.phase, p.phase_reason) == ("test", "the net has no loss layer")
    assert not [i for i in p.items if i.bytes and ("gradients" in i.name or "history" in i.name)]
    assert {b.phase for b in p.blobs} == {"TEST"}
    assert libdata.plan(DEPLOY, ram="8G", phase="test").total == p.total
    t = libdata.plan(DEPLOY, ram="8G", phase="train")
    assert (t.phase, t.phase_reason) == ("train", "as asked")
    assert t.total > 2 * p.total
    with pytest.raises(ValueError):
        libdata.plan(DEPLOY, phase="deploy")


def test_misspelt_field_is_refused(tmp_path):
    """Issue 26, item 8: `strde` planned conv1 without its stride (4.63 GiB, exit 0)."""
    p = tmp_path / "strde.prototxt"
    p.write_text(open(DEPLOY).read().replace("kernel_size: 11 stride: 4", "kernel_size: 11 strde: 4"))
    with pytest.raises(LibdataError) as e:
        libdata.plan(str(p))
    assert e.value.code == libdata.LD_EFORMAT
    assert "strde.prototxt:7:54: layer 'conv1': message type \"caffe.ConvolutionParameter\" " \
           "has no field named \"strde\"" in e.value.message


def test_python_data_layer_needs_a_shape(tmp_path):
    """Issue 26, item 9: a Python data layer was "no bottom"; now: not supported, how to give
    the shape (LD_EINVAL: the `shapes` argument must give it), and planned when given."""
    p = tmp_path / "py.prototxt"
    p.write_text('layer { name: "data" type: "Python" top: "data" top: "label"\n'
                 '  python_param { module: "feed" layer: "Feed" } }\n'
                 'layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip" '
                 'inner_product_param { num_output: 2 } }\n')
    with pytest.raises(LibdataError) as e:
        libdata.plan(str(p))
    assert e.value.code == libdata.LD_EINVAL
    assert "(Python): not supported" in e.value.message and "shapes (data=C,H,W" in e.value.message
    r = libdata.plan(str(p), shapes={"data": (3, 16, 16)}, batch=2, ram="1G")
    assert [b.shape for b in r.blobs] == [(2, 3, 16, 16), (2,), (2, 2)]
    assert r.notes == ["Python (layer 'data'): planned as an input of the shape given in shapes; "
                       "what the layer holds itself is not counted"]


def test_nothing_fits_names_what_does_not_grow_with_the_batch():
    """Issue 26, item 9: "what does not grow with the batch is too large (below)" had nothing
    below it."""
    p = libdata.plan(DEPLOY, ram="200M")
    assert p.largest_batch == 0 and not p.fits
    assert "what does not grow with the batch needs 293 MiB by itself" in p.advice[0]
    assert p.advice[1].startswith("parameters: 217 MiB; the largest: InnerProduct 'fc6' 37.8M "
                                  "(144 MiB), InnerProduct 'fc7' 16.8M (64 MiB)")
