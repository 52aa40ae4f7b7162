"""LMDBs made exactly as Caffe's convert_imageset makes them (tests/python/lmdb_make_caffe_db.py:
python-lmdb + protobuf + OpenCV, no libdata), read through libdata.Reader (the C reader) and
compared pixel for pixel with OpenCV's decode of the same records (cv2.imdecode with
IMREAD_ANYCOLOR, which is Caffe's DecodeDatumNative): raw, encoded JPEG (file bytes, sizes that
differ, no shape in the Datum), encoded PNG, gray, keys without the "%08d_" prefix, no
libdata.json.

Run: LIBDATA_LIBRARY=build/libdata.so LD_TEST_DATA=build/testdata PYTHONPATH=bindings/python \
     /usr/bin/python3 -m pytest -q tests/python/test_py_lmdb_caffe.py
"""
import glob
import os
import subprocess
import sys

import cv2
import lmdb
import numpy as np
import pytest

import libdata
from libdata import LibdataError

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from lmdb_caffe_pb import Datum  # noqa: E402

TESTDATA = os.environ.get("LD_TEST_DATA", "")
PHOTOS = sorted(glob.glob(os.path.join(TESTDATA, "photos", "p*.jpg")))

pytestmark = pytest.mark.skipif(len(PHOTOS) < 8,
                                reason="LD_TEST_DATA must point at the made fixtures")


def portrait(path):
    return cv2.imread(path).shape[0] > cv2.imread(path).shape[1]


def same_size():
    """Six photos of one size (375 x 500)."""
    return [p for p in PHOTOS if not portrait(p)][:6]


def mixed_size():
    """Landscape and portrait photos: two sizes, the first one landscape."""
    land = [p for p in PHOTOS if not portrait(p)][:3]
    port = [p for p in PHOTOS if portrait(p)][:2]
    assert port, "the fixtures should hold portrait photos"
    return [land[0], port[0], land[1], port[1], land[2]]


def make(tmp_path, name, kind, images):
    db = str(tmp_path / name)
    subprocess.run([sys.executable, os.path.join(HERE, "lmdb_make_caffe_db.py"), db, kind,
                    *images], check=True)
    assert not os.path.exists(os.path.join(db, "libdata.json"))
    return db


def records(db, imdecode=cv2.IMREAD_ANYCOLOR):
    """(label, CHW uint8 array) per record, in key order, by python-lmdb; encoded records decoded
    by OpenCV with the flag imdecode (by default as Caffe decodes them)."""
    out = []
    env = lmdb.open(db, readonly=True, lock=False)
    with env.begin() as txn:
        for _, v in txn.cursor():
            d = Datum()
            d.ParseFromString(v)
            if d.encoded:
                assert not d.channels and not d.height and not d.width
                img = cv2.imdecode(np.frombuffer(d.data, np.uint8), imdecode)
                chw = img[None] if img.ndim == 2 else img.transpose(2, 0, 1)
            else:
                chw = np.frombuffer(d.data, np.uint8).reshape(d.channels, d.height, d.width)
            out.append((d.label, chw))
    env.close()
    return out


def read_all(db, **kw):
    data, labels, idx = [], [], []
    with libdata.Reader(db, batch_size=kw.pop("batch_size", 2), threads=2, **kw) as r:
        info = r.info
        for d, l in r:
            data.append(d.copy())
            labels.append(l.copy())
            idx.append(r.indices.copy())
    return info, np.concatenate(data), np.concatenate(labels), np.concatenate(idx)


def check_equal(db, ref, **kw):
    info, data, labels, idx = read_all(db, **kw)
    assert list(idx) == list(range(len(ref)))
    assert info.samples == len(ref)
    c, h, w = ref[0][1].shape
    assert (info.channels, info.height, info.width) == (c, h, w)
    assert data.shape == (len(ref), c, h, w)
    for i, (label, chw) in enumerate(ref):
        assert labels[i] == label, f"record {i}: label"
        assert np.array_equal(data[i], chw), \
            f"record {i}: pixels differ from OpenCV's (max diff " \
            f"{np.abs(data[i].astype(int) - chw).max()})"
    return info


@pytest.mark.parametrize("kind", ["cis-raw,resize=40x30", "cis-jpg", "cis-png",
                                  "cis-jpg,resize=40x30", "cis-jpg,gray,resize=40x30",
                                  "cis-png,gray", "cis-raw,gray,resize=40x30",
                                  "cis-jpg,keys=plain,reverse"])
def test_convert_imageset_database_reads_as_opencv_decodes_it(tmp_path, kind):
    """Same-size images: the shape comes from the records (raw) or the first record's image
    header (encoded: no channels/height/width in the Datum), the channel order is Caffe's BGR
    (gray: 1 channel), and every pixel equals OpenCV's decode."""
    db = make(tmp_path, "db", kind, same_size())
    ref = records(db)
    info = check_equal(db, ref)
    assert info.channel_order == ("GRAY" if "gray" in kind else "BGR")
    assert info.encoded == ("raw" not in kind)


def test_gray_jpeg_files_stored_as_they_are_read_as_one_channel(tmp_path):
    """convert_imageset --encoded keeps a gray JPEG's bytes: Caffe decodes it to 1 channel."""
    gray = []
    for k, p in enumerate(same_size()[:4]):
        out = str(tmp_path / f"g{k}.jpg")
        cv2.imwrite(out, cv2.imread(p, cv2.IMREAD_GRAYSCALE))
        gray.append(out)
    db = make(tmp_path, "db", "cis-jpg,gray", gray)
    ref = records(db)
    assert ref[0][1].shape[0] == 1
    check_equal(db, ref)


def test_gray_and_color_files_mixed_read_with_the_first_record_channels(tmp_path):
    """A color first record, then gray JPEG files (kept as they are): every sample has 3
    channels, the gray ones as OpenCV's IMREAD_COLOR decode gives them (gray replicated)."""
    color = same_size()[:2]
    gray = []
    for k, p in enumerate(same_size()[2:4]):
        out = str(tmp_path / f"g{k}.jpg")
        cv2.imwrite(out, cv2.imread(p, cv2.IMREAD_GRAYSCALE))
        gray.append(out)
    db = make(tmp_path, "db", "cis-jpg", [color[0], gray[0], color[1], gray[1]])
    ref = records(db)
    assert [chw.shape[0] for _, chw in ref] == [3, 1, 3, 1]
    as_color = [(label, chw if chw.shape[0] == 3 else np.repeat(chw, 3, axis=0))
                for label, chw in ref]
    check_equal(db, as_color)


def test_gray_first_record_never_turns_colour_images_gray(tmp_path):
    """A gray JPEG file first, then colour ones (convert_imageset --encoded keeps files as they
    are): the first record gives 1 channel, so by default the first colour image stops the
    reader with what to do (Caffe's Data layer stops too), instead of being decoded gray.
    channels=3 (force_color) reads every image in colour, BGR, as OpenCV's IMREAD_COLOR;
    channels=1 (force_gray) reads every image gray, as OpenCV's IMREAD_GRAYSCALE."""
    color = same_size()[:2]
    gray = []
    for k, p in enumerate(same_size()[2:4]):
        out = str(tmp_path / f"g{k}.jpg")
        cv2.imwrite(out, cv2.imread(p, cv2.IMREAD_GRAYSCALE))
        gray.append(out)
    db = make(tmp_path, "db", "cis-jpg", [gray[0], color[0], gray[1], color[1]])
    with pytest.raises(LibdataError) as ex:
        read_all(db)
    msg = str(ex.value)
    assert "sample 1 is a colour image" in msg and "channels to 3" in msg, msg

    info = check_equal(db, records(db, cv2.IMREAD_COLOR), channels=3)
    assert info.channel_order == "BGR"
    check_equal(db, records(db, cv2.IMREAD_GRAYSCALE), channels=1)


@pytest.mark.parametrize("kind", ["cis-jpg", "cis-png", "cis-jpg,keys=plain"])
def test_sizes_that_differ_need_a_crop_and_say_so(tmp_path, kind):
    """Records of different sizes: without a crop the reader stops at the first one that differs
    from the first record and tells what to do; with a crop every sample is Caffe's center crop
    (offsets (h - crop_h) / 2, (w - crop_w) / 2) of OpenCV's decode."""
    db = make(tmp_path, "db", kind, mixed_size())
    ref = records(db)
    assert len({chw.shape for _, chw in ref}) == 2
    with pytest.raises(LibdataError) as ex:
        read_all(db)
    msg = str(ex.value)
    assert "differ in size" in msg and "crop_w" in msg and "resize_w" in msg, msg
    assert ex.value.param == "crop_w" and ex.value.sample == 1, (ex.value.param, ex.value.sample)
    cw, ch = 300, 200
    cropped = []
    for label, chw in ref:
        y, x = (chw.shape[1] - ch) // 2, (chw.shape[2] - cw) // 2
        cropped.append((label, chw[:, y:y + ch, x:x + cw]))
    check_equal(db, cropped, crop=(cw, ch))
    # a random crop of each image, whatever its size, is a window of OpenCV's decode
    info, data, labels, idx = read_all(db, crop=(cw, ch), random_crop=True)
    assert data.shape == (len(ref), 3, ch, cw)
    for out, (_, chw) in zip(data, ref):
        assert is_window(out, chw), "a random crop is not a window of its image"


def is_window(crop, src):
    """Whether crop (C x ch x cw) equals src[:, y:y+ch, x:x+cw] for some y, x."""
    _, ch, cw = crop.shape
    ys, xs = src.shape[1] - ch + 1, src.shape[2] - cw + 1
    cand = np.ones((ys, xs), bool)  # where three pixels of the crop match
    for py, px in ((0, 0), (ch // 2, cw // 3), (ch - 1, cw - 1)):
        cand &= np.all(src[:, py:py + ys, px:px + xs] == crop[:, py:py + 1, px:px + 1], axis=0)
    return any(np.array_equal(src[:, y:y + ch, x:x + cw], crop) for y, x in zip(*cand.nonzero()))
