"""Random resized crop (issue 16 item 3): torchvision's RandomResizedCrop box rule, the pixels of
the JPEG box decoder and of the full-decode reference path against Pillow (decode + crop(box) +
resize with the same filter: BILINEAR, torchvision's, for rrc_filter="bilinear" (the default), and
LANCZOS for "lanczos3"; PSNR >= 35 dB), raw datasets, thread-count independence, and the settings
it refuses.

Run: LIBDATA_LIBRARY=build/libdata.so LD_TEST_DATA=build/testdata DATACONV=build/dataconv \
     PYTHONPATH=bindings/python /usr/bin/python3 -m pytest -q tests/python/test_py_rrc.py
"""
import io
import math
import os

import h5py
import numpy as np
import pytest
from PIL import Image

import libdata

import photo_sets
from photo_sets import TESTDATA

pytestmark = photo_sets.needed


def convert(tmp, name, *flags):
    return photo_sets.convert(tmp, name, "--rgb", *flags)


@pytest.fixture(scope="module")
def datasets(tmp_path_factory):
    tmp = str(tmp_path_factory.mktemp("rrc"))
    return {
        # the documented recipe: bounded size, JPEG q90 with restart markers (splice path)
        "recipe": convert(tmp, "recipe.h5", "--max-side", "256", "--quality", "90",
                          "--restart-markers"),
        # the original 500x375 files: boxes large enough for DCT scales 1/4 and 1/2
        "original": convert(tmp, "original.h5", "--encoded"),
        "png": convert(tmp, "png.h5", "--resize", "160x120", "--encode-png"),
        "raw": convert(tmp, "raw.h5", "--resize", "160x120"),
    }


def encoded_images(path):
    with h5py.File(path, "r") as f:
        e, o = f["encoded"][:], f["offsets"][:]
    return [Image.open(io.BytesIO(e[o[i]:o[i + 1]].tobytes())).convert("RGB")
            for i in range(len(o) - 1)]


def raw_images(path):
    with h5py.File(path, "r") as f:
        return [Image.fromarray(np.ascontiguousarray(s.transpose(1, 2, 0))) for s in f["data"][:]]


def psnr(a, b):
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return math.inf if mse == 0 else 10 * math.log10(255.0 ** 2 / mse)


def first_epochs(path, epochs=2, **kw):
    """(epoch, indices, NHWC data) of every batch of the first epochs."""
    out = []
    with libdata.Reader(path, layout="NHWC", channel_order="RGB", **kw) as r:
        for _ in range(epochs):
            for data, _labels in r:
                out.append((r.batch_epoch, r.indices.copy(), data.copy()))
    return out


PIL_FILTERS = {"bilinear": Image.BILINEAR, "lanczos3": Image.LANCZOS}


def check_against_pillow(path, images, size, rrc_filter=None, **kw):
    """Every sample of two epochs vs Pillow: the reader's box, cropped, resized with the
    filter's Pillow twin (rrc_filter None: the reader's default, torchvision's BILINEAR) and
    mirrored as the reader says. Returns the boxes and the worst PSNR."""
    kw.setdefault("mirror", True)
    if rrc_filter is not None:
        kw["rrc_filter"] = rrc_filter
    pil_filter = PIL_FILTERS[rrc_filter or "bilinear"]
    boxes, worst = [], math.inf
    with libdata.Reader(path, layout="NHWC", channel_order="RGB", batch_size=8, shuffle=True,
                        seed=7, random_resized_crop=size, **kw) as r:
        ow, oh = (size, size) if isinstance(size, int) else size
        for _ in range(2):
            for data, _labels in r:
                assert data.shape[1:] == (oh, ow, 3)
                for j, i in enumerate(r.indices):
                    im = images[int(i)]
                    x, y, w, h, m = r.crop_box(r.batch_epoch, int(i), im.width, im.height)
                    ref = np.asarray(im.crop((x, y, x + w, y + h)).resize((ow, oh),
                                                                           pil_filter))
                    if m:
                        ref = ref[:, ::-1]
                    p = psnr(data[j], ref)
                    worst = min(worst, p)
                    assert p >= 35.0, (path, int(i), (x, y, w, h, m), p)
                    boxes.append((w, h, m))
    return boxes, worst


@pytest.mark.parametrize("rrc_filter", [None, "bilinear", "lanczos3"])
@pytest.mark.parametrize("full", [False, True])
def test_recipe_jpeg_matches_pillow(datasets, full, rrc_filter):
    path = datasets["recipe"]
    boxes, worst = check_against_pillow(path, encoded_images(path), 224, rrc_filter,
                                        rrc_full_decode=full)
    assert {m for _w, _h, m in boxes} == {False, True}  # both mirror states were checked


@pytest.mark.parametrize("rrc_filter", ["bilinear", "lanczos3"])
@pytest.mark.parametrize("full", [False, True])
def test_dct_scaled_boxes_match_pillow(datasets, full, rrc_filter):
    """64x56 output from 500x375 JPEGs with boxes of 30-100 % of the area: boxes >= 2x and
    >= 4x the output, so the box decoder runs at DCT scales 1/2 and 1/4."""
    path = datasets["original"]
    boxes, _ = check_against_pillow(path, encoded_images(path), (64, 56), rrc_filter,
                                    rrc_scale=(0.3, 1.0), rrc_full_decode=full)
    assert any(w >= 4 * 64 and h >= 4 * 56 for w, h, _m in boxes)  # scale 1/4
    assert any(w < 4 * 64 or h < 4 * 56 for w, h, _m in boxes)      # scale 1/2


@pytest.mark.parametrize("rrc_filter", ["bilinear", "lanczos3"])
def test_png_and_raw_match_pillow(datasets, rrc_filter):
    check_against_pillow(datasets["png"], encoded_images(datasets["png"]), 64, rrc_filter)
    check_against_pillow(datasets["raw"], raw_images(datasets["raw"]), (64, 80), rrc_filter)


def test_filters_differ_and_bilinear_is_pillows(datasets):
    """The two filters give different pixels, and bilinear is nearer Pillow's BILINEAR than
    Lanczos-3 is (so the PSNR checks above can tell the filters apart)."""
    path = datasets["original"]
    images = encoded_images(path)
    kw = dict(batch_size=8, seed=5, random_resized_crop=(64, (0.3, 1.0)), rrc_full_decode=True)
    bil, lan = (first_epochs(path, epochs=1, rrc_filter=f, **kw) for f in ("bilinear", "lanczos3"))
    with libdata.Reader(path, **kw) as r:
        for (e, idx, db), (_e, _i, dl) in zip(bil, lan):
            assert not np.array_equal(db, dl)
            for j, i in enumerate(idx):
                im = images[int(i)]
                x, y, w, h, _m = r.crop_box(e, int(i), im.width, im.height)
                ref = np.asarray(im.crop((x, y, x + w, y + h)).resize((64, 64), Image.BILINEAR))
                assert psnr(db[j], ref) > psnr(dl[j], ref) + 3.0, (int(i), (x, y, w, h))


def test_fast_path_agrees_with_full_decode(datasets):
    """Same boxes, same mirrors: the two paths differ only by DCT scaling and edge context."""
    kw = dict(batch_size=8, shuffle=True, seed=3, mirror=True, random_resized_crop=96)
    fast = first_epochs(datasets["original"], **kw)
    full = first_epochs(datasets["original"], rrc_full_decode=True, **kw)
    for (e1, i1, d1), (e2, i2, d2) in zip(fast, full):
        assert e1 == e2 and (i1 == i2).all()
        assert psnr(d1, d2) >= 33.0


@pytest.mark.parametrize("rrc_filter", ["bilinear", "lanczos3"])
@pytest.mark.parametrize("name", ["recipe", "original", "raw"])
def test_same_for_any_thread_count(datasets, name, rrc_filter):
    kw = dict(batch_size=5, shuffle=True, seed=11, mirror=True, rrc_filter=rrc_filter,
              random_resized_crop=(64, (0.08, 1.0), (3 / 4, 4 / 3)))
    one = first_epochs(datasets[name], threads=1, **kw)
    two = first_epochs(datasets[name], threads=2, **kw)
    assert len(one) == len(two)
    for (e1, i1, d1), (e2, i2, d2) in zip(one, two):
        assert e1 == e2 and (i1 == i2).all() and np.array_equal(d1, d2)
    # and a new epoch draws new boxes
    assert not np.array_equal(one[0][2][np.argsort(one[0][1])],
                              one[len(one) // 2][2][np.argsort(one[len(one) // 2][1])])


def tv_get_params(width, height, scale, ratio, draws):
    torch = pytest.importorskip("torch")
    T = pytest.importorskip("torchvision.transforms")
    torch.manual_seed(0)
    img = torch.zeros(1, height, width)
    return [T.RandomResizedCrop.get_params(img, list(scale), list(ratio)) for _ in range(draws)]


@pytest.mark.parametrize("size", [(500, 375), (256, 192), (64, 900)])
def test_box_statistics_follow_torchvision(datasets, size):
    """Boxes lie inside the image with area fraction and ratio in range (or are the fallback
    box), and their distribution matches torchvision's get_params."""
    width, height = size
    scale, ratio = (0.08, 1.0), (3 / 4, 4 / 3)
    with libdata.Reader(datasets["recipe"], random_resized_crop=(224, scale, ratio),
                        seed=1) as r:
        ours = [r.crop_box(e, i, width, height)[:4] for e in range(4) for i in range(1000)]
    theirs = [(j, i, w, h) for i, j, h, w in tv_get_params(width, height, scale, ratio, 4000)]
    in_ratio = width / height
    fw, fh = width, height
    if in_ratio < ratio[0]:
        fh = round(width / ratio[0])
    elif in_ratio > ratio[1]:
        fw = round(height * ratio[1])
    fallback = ((width - fw) // 2, (height - fh) // 2, fw, fh)
    for x, y, w, h in ours:
        assert 0 <= x and 0 <= y and 0 < w and 0 < h and x + w <= width and y + h <= height
        if (x, y, w, h) != fallback:
            # area and ratio before rounding were in range; rounding moves each side by <= 0.5
            assert scale[0] * width * height <= (w + 0.5) * (h + 0.5)
            assert (w - 0.5) * (h - 0.5) <= scale[1] * width * height
            assert ratio[0] <= (w + 0.5) / (h - 0.5) and (w - 0.5) / (h + 0.5) <= ratio[1]

    def stats(boxes):
        a = np.array([w * h / (width * height) for _x, _y, w, h in boxes])
        lr = np.array([math.log(w / h) for _x, _y, w, h in boxes])
        cx = np.array([(x + w / 2) / width for x, _y, w, _h in boxes])
        fb = np.mean([b == fallback for b in boxes])
        return a.mean(), lr.mean(), lr.std(), cx.mean(), fb
    so, st = stats(ours), stats(theirs)
    assert abs(so[0] - st[0]) < 0.03, (so, st)   # mean area fraction
    assert abs(so[1] - st[1]) < 0.03, (so, st)   # mean log ratio
    assert abs(so[2] - st[2]) < 0.03, (so, st)
    assert abs(so[3] - st[3]) < 0.03, (so, st)   # horizontal placement
    assert abs(so[4] - st[4]) < 0.03, (so, st)   # how often the fallback is taken


def test_fallback_box_is_torchvisions():
    """A scale range no box can meet (> 1): every sample takes the fallback, exactly as
    torchvision computes it, for an image too wide, too tall, and in range."""
    with libdata.Reader(os.path.join(TESTDATA, "reader", "raw_ours.h5"),
                        random_resized_crop=(8, (1.5, 2.0), (3 / 4, 4 / 3))) as r:
        for width, height in [(900, 100), (100, 900), (500, 375), (37, 41)]:
            (i, j, h, w), = tv_get_params(width, height, (1.5, 2.0), (3 / 4, 4 / 3), 1)
            for k in range(20):
                assert r.crop_box(0, k, width, height)[:4] == (j, i, w, h)


def test_refused_settings(datasets):
    path = datasets["recipe"]
    bad = [
        (dict(random_resized_crop=64, crop=32), "crop_w"),
        (dict(random_resized_crop=64, random_crop=True, crop=None), "random_crop"),
        (dict(random_resized_crop=64, dct_scale=True), "dct_scale"),
        (dict(rrc_full_decode=True), "rrc_w and rrc_h"),
        (dict(rrc_scale=(0.2, 0.9)), "rrc_w and rrc_h"),
        (dict(rrc_w=64), "both rrc_w and rrc_h"),
        (dict(random_resized_crop=(64, (0.9, 0.2))), "0 < min <= max"),
        (dict(random_resized_crop=(64, (0.08, 1.0), (0, 1))), "0 < min <= max"),
        (dict(rrc_ratio=(1.0,), rrc_w=8, rrc_h=8), "two numbers"),
        (dict(rrc_filter="lanczos3"), "rrc_w and rrc_h"),
    ]
    for kw, words in bad:
        with pytest.raises(libdata.LibdataError) as ei:
            libdata.Reader(path, **kw)
        assert words in str(ei.value), (kw, str(ei.value))
    for value in ("bicubic", 3, 0x7ff):  # the bindings name the choices
        with pytest.raises(ValueError, match="'bilinear', 'lanczos3'"):
            libdata.Reader(path, random_resized_crop=64, rrc_filter=value)


def test_torch_adapter(datasets):
    """libdata.torch.Dataset passes random_resized_crop to its readers: the same batches as a
    Reader with the same seed and epoch."""
    torch = pytest.importorskip("torch")
    import libdata.torch
    kw = dict(batch_size=6, shuffle=True, seed=4, mirror=True,
              random_resized_crop=(48, (0.2, 1.0), (3 / 4, 4 / 3)))
    ds = libdata.torch.Dataset(datasets["recipe"], long_labels=False, **kw)
    ds.set_epoch(1)
    got = [x for x, _y in torch.utils.data.DataLoader(ds, batch_size=None, num_workers=0)]
    with libdata.Reader(datasets["recipe"], epoch=1, **kw) as r:
        want = [d for d, _l in r]
    assert len(got) == len(want) and got[0].shape == (6, 3, 48, 48)
    for g, w in zip(got, want):
        assert np.array_equal(g.numpy(), w)


@pytest.mark.parametrize("rrc_filter,words", [(None, "bilinear, antialiased"),
                                              ("lanczos3", "Lanczos-3 (rrc_filter = lanczos3")])
def test_open_says_what_it_does(datasets, rrc_filter, words):
    """The design choices (the filter, bilinear as torchvision by default; the box decoder) are
    logged at open."""
    msgs = []
    kw = {} if rrc_filter is None else {"rrc_filter": rrc_filter}
    with libdata.Reader(datasets["recipe"], random_resized_crop=32,
                        log=lambda level, m: msgs.append(m), **kw):
        pass
    text = "\n".join(msgs)
    assert "random resized crop to 32x32" in text and words in text, text
    assert "decoded over the box only" in text, text
