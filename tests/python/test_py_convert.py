"""libdata.convert() from Python, cross-checked with h5py, python-lmdb + protobuf and dataconv.

Run: LIBDATA_LIBRARY=build/libdata.so LD_TEST_DATA=build/testdata PYTHONPATH=bindings/python \
     /usr/bin/python3 -m pytest -q tests/python/test_py_convert.py
"""
import os
import shutil
import subprocess

import h5py
import numpy as np
import pytest

import libdata
from libdata import LibdataError

TESTDATA = os.environ.get("LD_TEST_DATA", "")
TREE = os.path.join(TESTDATA, "tree")
LIST = os.path.join(TESTDATA, "list.txt")
DATACONV = os.environ.get("DATACONV")
IMAGE_EXT = (".jpg", ".jpeg", ".png")

pytestmark = pytest.mark.skipif(not os.path.isdir(TREE),
                                reason="LD_TEST_DATA must point at the made fixtures")


def tree_items(root):
    """(classes, [(relative path, label)]) as dataconv's folder mode orders them: class =
    sorted top-level folder, hidden entries skipped, samples sorted by byte path."""
    classes = sorted(d for d in os.listdir(root)
                     if os.path.isdir(os.path.join(root, d)) and not d.startswith("."))
    items = []
    for label, cls in enumerate(classes):
        for dirpath, dirnames, files in os.walk(os.path.join(root, cls)):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            for f in files:
                if not f.startswith(".") and f.lower().endswith(IMAGE_EXT):
                    items.append((os.path.relpath(os.path.join(dirpath, f), root), label))
    items.sort(key=lambda t: t[0].encode())
    return classes, items


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def datum_class():
    """Caffe's Datum message, built at run time (no caffe.proto or protoc needed)."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    fdp = descriptor_pb2.FileDescriptorProto(name="ld_test_datum.proto", package="ldtest",
                                             syntax="proto2")
    m = fdp.message_type.add(name="Datum")
    F = descriptor_pb2.FieldDescriptorProto
    for name, num, typ, lab in [("channels", 1, F.TYPE_INT32, F.LABEL_OPTIONAL),
                                ("height", 2, F.TYPE_INT32, F.LABEL_OPTIONAL),
                                ("width", 3, F.TYPE_INT32, F.LABEL_OPTIONAL),
                                ("data", 4, F.TYPE_BYTES, F.LABEL_OPTIONAL),
                                ("label", 5, F.TYPE_INT32, F.LABEL_OPTIONAL),
                                ("float_data", 6, F.TYPE_FLOAT, F.LABEL_REPEATED),
                                ("encoded", 7, F.TYPE_BOOL, F.LABEL_OPTIONAL)]:
        m.field.add(name=name, number=num, type=typ, label=lab)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    desc = pool.FindMessageTypeByName("ldtest.Datum")
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(desc)
    return message_factory.MessageFactory(pool).GetPrototype(desc)


@pytest.fixture(scope="module")
def tree_h5(tmp_path_factory):
    out = tmp_path_factory.mktemp("conv") / "tree.h5"
    s = libdata.convert(TREE, out, resize=(64, 48), threads=2, note="from pytest")
    return out, s


def test_convert_writes_what_h5py_reads(tree_h5):
    out, s = tree_h5
    classes, items = tree_items(TREE)
    assert s.converted == len(items), s
    assert s.skipped == 0 and s.warnings == [], s
    assert s.total == len(items) and s.bytes_out == len(items) * 3 * 48 * 64, s
    assert s.elapsed > 0 and s.files_out == 1 and s.output == str(out)
    with h5py.File(out, "r") as f:
        assert f["data"].shape == (len(items), 3, 48, 64) and f["data"].dtype == np.uint8
        assert [text(n) for n in f["filename"][:]] == [r for r, _ in items]
        assert list(f["label"][:]) == [l for _, l in items]
        assert [text(c) for c in f.attrs["class_names"]] == classes
        assert text(f.attrs["channel_order"]) == "BGR"
        assert text(f.attrs["note"]) == "from pytest"
        assert f["data"][:].std() > 10, "pixels look blank"


def test_summary_is_a_dataclass_with_reasons(tree_h5):
    _, s = tree_h5
    d = s.as_dict()
    assert d["converted"] == s.converted and d["warnings"] == []
    assert s.skipped_reasons == {"format": 0, "io": 0, "limit": 0}


@pytest.mark.skipif(not DATACONV, reason="DATACONV not set")
def test_convert_matches_the_cli_byte_for_byte(tree_h5, tmp_path):
    out, _ = tree_h5
    cli_out = tmp_path / "cli.h5"
    r = subprocess.run([DATACONV, "-q", "--resize", "64x48", TREE, str(cli_out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    with h5py.File(out, "r") as a, h5py.File(cli_out, "r") as b:
        assert np.array_equal(a["data"][:], b["data"][:])
        assert np.array_equal(a["label"][:], b["label"][:])


def test_rgb_and_gray_options(tree_h5, tmp_path):
    out, _ = tree_h5
    rgb = libdata.convert(TREE, tmp_path / "rgb.h5", resize=(64, 48), rgb=True)
    gray = libdata.convert(TREE, tmp_path / "gray.h5", resize=(64, 48), gray=True)
    assert rgb.converted == gray.converted == rgb.total
    with h5py.File(out, "r") as b, h5py.File(tmp_path / "rgb.h5", "r") as r, \
            h5py.File(tmp_path / "gray.h5", "r") as g:
        assert np.array_equal(r["data"][:], b["data"][:][:, ::-1]), "RGB is not reversed BGR"
        assert text(r.attrs["channel_order"]) == "RGB"
        assert g["data"].shape[1] == 1 and text(g.attrs["channel_order"]) == "GRAY"


def test_list_file_mode_keeps_list_order_and_labels(tmp_path):
    s = libdata.convert(TREE, tmp_path / "list.h5", list_file=LIST, resize=32)
    lines = [ln.rsplit(" ", 1) for ln in open(LIST).read().splitlines() if ln.strip()]
    assert s.converted == len(lines), s
    with h5py.File(tmp_path / "list.h5", "r") as f:
        assert [text(n) for n in f["filename"][:]] == [p for p, _ in lines]
        assert list(f["label"][:]) == [int(l) for _, l in lines]
        assert f["data"].shape[1:] == (3, 32, 32)


def test_encoded_jpeg_storage_decodes_with_pil(tmp_path):
    import io
    from PIL import Image
    s = libdata.convert(TREE, tmp_path / "q.h5", resize=40, quality=90)
    with h5py.File(tmp_path / "q.h5", "r") as f:
        enc, off = f["encoded"][:], f["offsets"][:]
        assert len(off) == s.converted + 1 and off[-1] == len(enc)
        im = Image.open(io.BytesIO(enc[off[0]:off[1]].tobytes()))
        assert im.format == "JPEG" and im.size == (40, 40)


def test_split_writes_several_files_and_a_list(tmp_path):
    s = libdata.convert(TREE, tmp_path / "split.h5", resize=32, split="10K")
    listing = tmp_path / "split.txt"
    assert listing.exists(), os.listdir(tmp_path)
    files = [ln for ln in listing.read_text().splitlines() if ln]
    assert len(files) == s.files_out > 1
    total = 0
    for name in files:
        p = name if os.path.isabs(name) else tmp_path / os.path.basename(name)
        with h5py.File(p, "r") as f:
            total += f["data"].shape[0]
    assert total == s.converted


@pytest.mark.skipif(not libdata.has_feature("lmdb"), reason="built without LMDB")
def test_lmdb_output_reads_back_with_python_lmdb_and_protobuf(tree_h5, tmp_path):
    import lmdb
    out, _ = tree_h5
    db = tmp_path / "tree_lmdb"
    s = libdata.convert(TREE, db, resize=(64, 48), format="lmdb")
    _, items = tree_items(TREE)
    Datum = datum_class()
    with h5py.File(out, "r") as f:
        ref, ref_labels = f["data"][:], f["label"][:]
    env = lmdb.open(str(db), readonly=True, lock=False)
    with env.begin() as txn:
        keys = [k for k, _ in txn.cursor()]
        assert len(keys) == s.converted == len(items)
        for i, k in enumerate(keys):
            assert k.decode() == "%08d_%s" % (i, items[i][0])
            d = Datum()
            d.ParseFromString(txn.get(k))
            assert (d.channels, d.height, d.width) == (3, 48, 64)
            assert d.label == ref_labels[i]
            px = np.frombuffer(d.data, np.uint8).reshape(3, 48, 64)
            assert np.array_equal(px, ref[i]), f"sample {i} differs from the HDF5 output"
    env.close()


# ---- bad input files: skipped with warnings, or fatal in strict mode --------------------------

@pytest.fixture
def broken_tree(tmp_path):
    root = tmp_path / "broken"
    shutil.copytree(TREE, root)
    good = root / "cat" / "a.jpg"
    data = good.read_bytes()
    (root / "cat" / "truncated.jpg").write_bytes(data[:200])
    (root / "car" / "not_an_image.jpg").write_bytes(b"this is text, not a JPEG\n" * 10)
    return root


def test_bad_files_are_skipped_and_named_in_the_warnings(broken_tree, tmp_path):
    _, items = tree_items(broken_tree)
    s = libdata.convert(broken_tree, tmp_path / "b.h5", resize=32)
    assert s.skipped == 2 and s.converted == len(items) - 2, s
    assert s.skipped_format == 2, s.skipped_reasons
    joined = "\n".join(s.warnings)
    assert "truncated.jpg" in joined and "not_an_image.jpg" in joined, s.warnings
    with h5py.File(tmp_path / "b.h5", "r") as f:
        assert f["data"].shape[0] == s.converted


def test_strict_mode_raises_with_the_file_named(broken_tree, tmp_path):
    out = tmp_path / "strict.h5"
    with pytest.raises(LibdataError) as ei:
        libdata.convert(broken_tree, out, resize=32, strict=True)
    assert ei.value.code == libdata.LD_EFORMAT, ei.value
    assert ".jpg" in ei.value.message, ei.value.message
    assert not out.exists()


# ---- callbacks ------------------------------------------------------------------------------

def test_progress_is_called_and_ends_complete(tmp_path):
    seen = []
    s = libdata.convert(TREE, tmp_path / "p.h5", resize=32, progress=seen.append)
    assert seen, "the progress callback was never called"
    assert seen[-1].done == seen[-1].total == s.total
    assert all(a.done <= b.done for a, b in zip(seen, seen[1:]))


def test_progress_returning_true_cancels_and_leaves_no_output(tmp_path):
    out = tmp_path / "c.h5"
    with pytest.raises(LibdataError) as ei:
        libdata.convert(TREE, out, resize=32, progress=lambda p: True)
    assert ei.value.code == libdata.LD_ECANCELED, ei.value
    assert not out.exists() and os.listdir(tmp_path) == []


def test_an_exception_in_a_callback_cancels_and_propagates(tmp_path):
    def boom(p):
        raise KeyError("from the callback")
    out = tmp_path / "e.h5"
    with pytest.raises(KeyError, match="from the callback"):
        libdata.convert(TREE, out, resize=32, progress=boom)
    assert not out.exists()


def test_log_callback_receives_messages(broken_tree, tmp_path):
    got = []
    libdata.convert(broken_tree, tmp_path / "l.h5", resize=32,
                    log=lambda level, msg: got.append((level, msg)))
    assert any(level == 1 and "truncated.jpg" in msg for level, msg in got), got


# ---- misuse: exceptions, never a crash ------------------------------------------------------

def test_missing_input_raises_with_the_path(tmp_path):
    with pytest.raises(LibdataError) as ei:
        libdata.convert(tmp_path / "does-not-exist", tmp_path / "o.h5")
    assert ei.value.code in (libdata.LD_EIO, libdata.LD_EINVAL), ei.value
    assert "does-not-exist" in ei.value.message


def test_out_of_range_value_raises_einval_naming_the_parameter(tmp_path):
    with pytest.raises(LibdataError) as ei:
        libdata.convert(TREE, tmp_path / "o.h5", quality=101)
    assert ei.value.code == libdata.LD_EINVAL
    assert "quality" in ei.value.message, ei.value.message
    assert "quality" in str(ei.value)


@pytest.mark.parametrize("kwargs, exc", [
    ({"quality": "high"}, TypeError), ({"quality": 9.5}, TypeError),
    ({"resize": (1, 2, 3)}, ValueError), ({"mode": "zoom"}, ValueError),
    ({"format": "tiff"}, ValueError), ({"encode_type": "gif"}, ValueError),
    ({"split": "lots"}, ValueError), ({"gray": "yes"}, TypeError),
    ({"no_such_option": 1}, TypeError), ({"quality": 2**64 + 90}, OverflowError),
])
def test_wrong_types_and_values_raise_python_errors(tmp_path, kwargs, exc):
    with pytest.raises(exc):
        libdata.convert(TREE, tmp_path / "o.h5", **kwargs)
    assert not (tmp_path / "o.h5").exists()


@pytest.mark.parametrize("src", [None, 42, "bad\0path"])
def test_bad_path_arguments_raise(tmp_path, src):
    with pytest.raises((TypeError, ValueError)):
        libdata.convert(src, tmp_path / "o.h5")


def test_closed_converter_raises_estate(tmp_path):
    c = libdata.Converter(resize=16)
    c.close()
    c.close()  # idempotent
    with pytest.raises(LibdataError) as ei:
        c.run(TREE, tmp_path / "o.h5")
    assert ei.value.code == libdata.LD_ESTATE


def test_closing_from_inside_a_callback_is_refused(tmp_path):
    holder = {}
    c = libdata.Converter(resize=16, progress=lambda p: holder["c"].close())
    holder["c"] = c
    with pytest.raises(LibdataError) as ei:
        c.run(TREE, tmp_path / "o.h5")
    assert ei.value.code == libdata.LD_ESTATE, ei.value
    assert not (tmp_path / "o.h5").exists()
    c.close()
    assert c._h is None


def test_converter_parameters_are_sticky_and_readable(tmp_path):
    with libdata.Converter(quality=80, resize=(20, 10)) as c:
        assert c.get("quality") == 80 and c.get("resize_w") == 20 and c.get("resize_h") == 10
        s1 = c.run(TREE, tmp_path / "a.h5")
        s2 = c.run(TREE, tmp_path / "b.h5")
        assert s1.converted == s2.converted > 0


def test_parameter_table_drives_keywords():
    table = libdata.convert_params()
    assert table, "ld_convert_params() returned no parameters"
    for name, d in table.items():
        if d["type"] in ("int", "bool"):
            assert d["min"] <= d["default"] <= d["max"], (name, d)
        elif d["type"] == "enum":
            assert d["min"] <= d["choices"][d["default"]] <= d["max"], (name, d)
