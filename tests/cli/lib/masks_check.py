"""Segmentation masks (issue 28): fixtures and independent checks for tests/cli/masks.sh.

  masks_check.py make DIR PHOTOS      images, their masks and an unlabelled list under DIR
  masks_check.py stored OUT DIR W H MODE [PAD]   OUT (HDF5, or an LMDB pair) holds what Pillow
                                      makes of each mask (nearest, the same geometry), and the
                                      flat-colour images agree with their masks
  masks_check.py reader OUT DIR       the reader's batches (crop + mirror, random resized crop)

Flat-colour images: each region has one colour of COLOURS and the mask holds its index, so
every interior pixel of a converted or transformed image names its own mask value. Photos
(real JPEGs from the fixtures) get a mask made from their brightness; one is stored with EXIF
orientation 6 and its mask in the file's pixel grid (the image's orientation turns both).

With MASKS_WIDE=1 in the environment the masks are 16-bit gray PNGs whose region k holds
WIDE[k] (values above 255: --mask-type uint16), the photos' "ignore" band 65535, and every
check expects uint16 masks."""
import io
import os
import sys

import numpy as np
from PIL import Image, ImageOps

COLOURS = np.array([[200, 30, 30], [30, 200, 30], [30, 30, 200], [220, 220, 20]], np.uint8)
WIDE_ON = os.environ.get("MASKS_WIDE") == "1"
WIDE = np.array([0, 300, 40000, 65000], np.uint16)  # region k's value in a wide mask
MTYPE = np.uint16 if WIDE_ON else np.uint8


def region_ids(m):
    """Region indices of a mask's values (a wide mask's WIDE[k] is k; others: 99)."""
    if not WIDE_ON:
        return m
    ids = np.full(m.shape, 99, np.int32)
    for k, v in enumerate(WIDE):
        ids[m == v] = k
    return ids
PALETTE = [0, 0, 0, 128, 0, 0, 0, 128, 0, 128, 128, 0] + [0] * (252 * 3)


def regions(w, h, k):
    m = np.zeros((h, w), np.uint8)
    m[h // 4:3 * h // 4, w // 5 + k:w // 2] = 1
    m[:h // 3, 2 * w // 3 - k:] = 2
    m[2 * h // 3:, 3 * w // 5:] = 3
    return m


def make(root, photos):
    os.makedirs(f"{root}/img/flat", exist_ok=True)
    os.makedirs(f"{root}/img/photo", exist_ok=True)
    os.makedirs(f"{root}/masks/flat", exist_ok=True)
    os.makedirs(f"{root}/masks/photo", exist_ok=True)
    rels = []
    for k in range(8):
        w, h = 90 + 11 * k, 70 + 7 * k
        m = regions(w, h, k)
        rel = f"flat/s{k}.png"
        Image.fromarray(COLOURS[m]).save(f"{root}/img/{rel}")
        if WIDE_ON and k == 6:  # an 8-bit palette mask among them: its indices, widened
            pm = Image.fromarray(m, "P")
            pm.putpalette(PALETTE)
            pm.save(f"{root}/masks/{rel}")
        elif WIDE_ON:
            Image.fromarray(WIDE[m]).save(f"{root}/masks/flat/s{k}.png")  # 16-bit gray
        elif k == 5:  # a 16-bit gray mask whose values fit a byte
            Image.fromarray(m.astype(np.uint16)).save(f"{root}/masks/flat/s{k}.png")
        else:
            pm = Image.fromarray(m, "P")
            pm.putpalette(PALETTE)
            pm.save(f"{root}/masks/{rel}")
        rels.append(rel)
    for k in range(5):
        im = Image.open(f"{photos}/p{k:02d}.jpg").convert("RGB")
        im.thumbnail((200, 200))
        gray = np.asarray(im.convert("L"))
        m = (gray // 64).astype(np.uint8)  # 0..3
        m[:, : m.shape[1] // 10] = 255      # an "ignore" band
        rel = f"photo/p{k}.jpg"
        exif = None
        if k == 4:  # EXIF orientation 6: the file's pixels are the image turned
            ex = Image.Exif()
            ex[0x0112] = 6
            exif = ex.tobytes()
        im.save(f"{root}/img/{rel}", quality=92, **({"exif": exif} if exif else {}))
        if WIDE_ON:
            wm = np.where(m == 255, 65535, WIDE[np.minimum(m, 3)]).astype(np.uint16)
            Image.fromarray(wm).save(f"{root}/masks/photo/p{k}.png")
        else:
            Image.fromarray(m, "L").save(f"{root}/masks/photo/p{k}.png")
        rels.append(rel)
    with open(f"{root}/list.txt", "w") as f:
        f.write("".join(r + "\n" for r in rels))


def source(root, rel):
    """The image (RGB, EXIF orientation applied) and its mask turned the same way."""
    im = Image.open(f"{root}/img/{rel}")
    orient = im.getexif().get(0x0112, 1)
    mask = Image.open(f"{root}/masks/{os.path.splitext(rel)[0]}.png")
    if WIDE_ON:  # 32-bit "I" mode: values as they are (Pillow resamples it with NEAREST)
        mask = Image.fromarray(np.asarray(mask).astype(np.int32), "I")
    else:
        mask = Image.fromarray(np.asarray(mask).astype(np.uint8), "L")  # indices, not colours
    if orient != 1:
        mask = mask.transpose({6: Image.Transpose.ROTATE_270, 3: Image.Transpose.ROTATE_180,
                               8: Image.Transpose.ROTATE_90}[orient])
    return ImageOps.exif_transpose(im).convert("RGB"), mask


def expected_mask(mask, w, h, mode, pad):
    """dataconv's geometry (resize/geometry.c), computed here with Pillow's NEAREST."""
    sw, sh = mask.size
    if mode == "squash":
        return np.asarray(mask.resize((w, h), Image.Resampling.NEAREST))
    if mode == "crop":
        if w * sh >= h * sw:
            ch = h * sw / w
            box = (0, (sh - ch) / 2, sw, (sh - ch) / 2 + ch)
        else:
            cw = w * sh / h
            box = ((sw - cw) / 2, 0, (sw - cw) / 2 + cw, sh)
        return np.asarray(mask.resize((w, h), Image.Resampling.NEAREST, box=box))
    if mode == "pad":
        if w * sh <= h * sw:
            s_w, s_h = w, min(h, max(1, (2 * sh * w + sw) // (2 * sw)))
        else:
            s_w, s_h = min(w, max(1, (2 * sw * h + sh) // (2 * sh))), h
        out = np.full((h, w), pad, MTYPE)
        ox, oy = (w - s_w) // 2, (h - s_h) // 2
        out[oy:oy + s_h, ox:ox + s_w] = np.asarray(mask.resize((s_w, s_h),
                                                               Image.Resampling.NEAREST))
        return out
    raise SystemExit(f"unknown mode {mode}")


def interior(m, r=2):
    """Pixels whose (2r+1)^2 neighbourhood has one mask value (resampling blends only near
    edges: r must cover the filter's reach in output pixels). Pixels within r of the border
    are left out: a crop's border may cut through what was an edge before it."""
    p = np.pad(m.astype(np.int16), r, constant_values=-1)
    same = np.ones(m.shape, bool)
    for dy in range(2 * r + 1):
        for dx in range(2 * r + 1):
            same &= p[dy:dy + m.shape[0], dx:dx + m.shape[1]] == m
    return same & (region_ids(m) < len(COLOURS))


def colour_ids(img_hwc):
    d = ((img_hwc[:, :, None, :].astype(int) - COLOURS[None, None].astype(int)) ** 2).sum(-1)
    return d.argmin(-1)


def aligned(img_hwc, m, what, r=2):
    """Every interior pixel's colour is its mask's region; returns the pixels checked."""
    inner = interior(m, r)
    m = region_ids(m)
    bad = (colour_ids(img_hwc) != m) & inner
    if bad.any():
        y, x = np.argwhere(bad)[0]
        raise SystemExit(f"{what}: pixel ({x}, {y}) has the colour of region "
                         f"{colour_ids(img_hwc)[y, x]} but mask {m[y, x]} "
                         f"({int(bad.sum())} of {int(inner.sum())} interior pixels)")
    return int(inner.sum())


def read_stored(out):
    """(images N x H x W x 3 RGB, masks N x H x W, names) from an HDF5 file or an LMDB pair."""
    if out.endswith(".h5"):
        import h5py
        with h5py.File(out, "r") as f:
            data = f["data"][:]
            masks = (f["mask"] if "mask" in f else f["label"])[:]
            names = [n.decode() if isinstance(n, bytes) else n for n in f["filename"][:]]
        assert masks.ndim == 4 and masks.shape[1] == 1 and masks.dtype == MTYPE, masks.dtype
        return data[:, ::-1].transpose(0, 2, 3, 1), masks[:, 0], names
    import lmdb
    sys.path.insert(0, os.environ["SRC"] + "/tests/python")
    from lmdb_caffe_pb import Datum  # python3-protobuf, not libdata
    imgs, masks, names = [], [], []
    with lmdb.open(out, readonly=True, lock=False) as env, \
            lmdb.open(out[:-5] + "-masks.lmdb", readonly=True, lock=False) as menv:
        with env.begin() as t, menv.begin() as mt:
            for key, val in t.cursor():
                if key.startswith(b"__"):
                    continue
                d, md = Datum(), Datum()
                d.ParseFromString(val)
                md.ParseFromString(mt.get(key))
                imgs.append(np.frombuffer(d.data, np.uint8).reshape(d.channels, d.height, d.width))
                assert md.channels == 1 and (md.height, md.width) == (d.height, d.width), key
                if WIDE_ON:  # uint16 masks: float_data (a Datum's data is bytes)
                    assert not md.data and len(md.float_data) == md.height * md.width, key
                    mv = np.array(md.float_data, np.float32)
                    assert np.array_equal(mv, np.round(mv)), key
                    masks.append(mv.astype(np.uint16).reshape(md.height, md.width))
                else:
                    masks.append(np.frombuffer(md.data, np.uint8).reshape(md.height, md.width))
                names.append(key.decode().split("_", 1)[1])
    return np.stack(imgs)[:, ::-1].transpose(0, 2, 3, 1), np.stack(masks), names


def stored(out, root, w, h, mode, pad=255):
    imgs, masks, names = read_stored(out)
    checked = 0
    for img, m, rel in zip(imgs, masks, names):
        _, src_mask = source(root, rel)
        want = expected_mask(src_mask, w, h, mode, pad)
        if not np.array_equal(m, want):
            diff = np.argwhere(m != want)
            raise SystemExit(f"{out}: {rel}: {len(diff)} mask pixels differ from Pillow's "
                             f"NEAREST, first at {tuple(diff[0][::-1])}: {m[tuple(diff[0])]} "
                             f"vs {want[tuple(diff[0])]}")
        if rel.startswith("flat/"):
            checked += aligned(img, m, f"{out}: {rel}")
    values = sorted(set(np.unique(masks).tolist()))
    print(f"  {len(names)} masks equal Pillow's nearest {mode} {w}x{h}; values {values}; "
          f"{checked} interior pixels of flat images name their region")


def reader(out, root):
    import libdata
    data, masks, names = read_stored(out)
    n, H, W = masks.shape
    st = libdata.stat(out)
    assert st.mask_shape == (H, W) and st.mask_is_label == ("mask" not in out), st
    assert st.mask_dtype == MTYPE, st.mask_dtype
    total = exact = 0
    # crop + mirror: the mask takes the image's offsets and flip, found from the image itself
    with libdata.Reader(out, batch_size=4, shuffle=True, crop=(W - 13, H - 9), random_crop=True,
                        mirror=True, seed=5, layout="nhwc", channel_order="rgb") as r:
        mi = r.info.fields.index("mask") if "mask" in r.info.fields else 1
        for epoch in range(2):
            for batch in r:
                for j, i in enumerate(r.indices):
                    img, m = batch[0][j], batch[mi][j, 0]
                    assert m.dtype == MTYPE, m.dtype
                    hits = [(y, x, f) for f in (0, 1) for y in range(10) for x in range(14)
                            if np.array_equal((data[i][:, ::-1] if f else data[i])
                                              [y:y + H - 9, x:x + W - 13], img)]
                    if names[i].startswith("photo/"):
                        assert len(hits) == 1, (names[i], hits)
                        y, x, f = hits[0]
                        want = (masks[i][:, ::-1] if f else masks[i])[y:y + H - 9, x:x + W - 13]
                        assert np.array_equal(m, want), f"crop+mirror: {names[i]}: mask differs"
                        exact += 1
                    else:
                        assert hits, names[i]
                        total += aligned(img, m, f"crop+mirror: {names[i]}")
    # random resized crop + mirror: the box the reader reports, resampled here with Pillow
    size = (40, 32)
    with libdata.Reader(out, batch_size=5, shuffle=True, random_resized_crop=size, mirror=True,
                        seed=9, layout="nhwc", channel_order="rgb") as r:
        mi = r.info.fields.index("mask") if "mask" in r.info.fields else 1
        for batch in r:
            for j, i in enumerate(r.indices):
                x, y, bw, bh, flip = r.crop_box(r.batch_epoch, int(i), W, H)
                want = np.asarray(Image.fromarray(masks[i].astype(np.int32)).resize(
                    size, Image.Resampling.NEAREST, box=(x, y, x + bw, y + bh)))
                if flip:
                    want = want[:, ::-1]
                m = batch[mi][j, 0]
                assert np.array_equal(m, want), f"rrc: {names[i]}: mask differs from Pillow's"
                exact += 1
                if names[i].startswith("flat/"):  # bilinear reaches 1 source pixel each way
                    reach = int(np.ceil(2 * max(size[0] / bw, size[1] / bh))) + 1
                    total += aligned(batch[0][j], m, f"rrc: {names[i]}", reach)
    print(f"  {exact} reader masks equal the independent crop; {total} interior pixels of "
          f"flat images name their region")


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "make":
        make(sys.argv[2], sys.argv[3])
    elif cmd == "stored":
        stored(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6],
               *(int(v) for v in sys.argv[7:]))
    elif cmd == "reader":
        reader(sys.argv[2], sys.argv[3])
    else:
        raise SystemExit(__doc__)
