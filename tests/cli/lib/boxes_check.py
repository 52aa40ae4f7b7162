"""Detection boxes (issue 28): fixtures and independent checks for tests/cli/boxes.sh.

  boxes_check.py h5 OUT            an h5py detection file (another tool's layout as libdata
                                   reads it: /data, /boxes, /box_label, /box_flags,
                                   /box_offsets), random pixels so that crops are unique
  boxes_check.py reader FILE       the reader's boxes under crop + mirror and random resized
                                   crop against NumPy on the stored boxes (offsets found from
                                   the pixels; the RRC box from Reader.crop_box), and torch
  boxes_check.py coco DIR PHOTOS   COCO-style images + instances JSON under DIR
  boxes_check.py stored OUT JSON W H MODE   OUT's /boxes equal the JSON's boxes under the
                                   resize's scale (NumPy), within 1e-3 px
"""
import json
import os
import sys

import numpy as np


def clip_drop(b, w, h):
    """Clip (M, 4) boxes to [0, w] x [0, h]; keep those with area. Returns (boxes, kept)."""
    b = b.copy()
    b[:, [0, 2]] = b[:, [0, 2]].clip(0, w)
    b[:, [1, 3]] = b[:, [1, 3]].clip(0, h)
    keep = (b[:, 2] > b[:, 0]) & (b[:, 3] > b[:, 1])
    return b[keep], keep


def make_h5(out):
    import h5py
    rng = np.random.default_rng(11)
    n, h, w = 12, 40, 50
    data = rng.integers(0, 256, (n, 3, h, w), dtype=np.uint8)
    counts = rng.integers(0, 5, n)
    boxes, labels, flags = [], [], []
    for m in counts:
        for _ in range(m):
            x1, y1 = rng.uniform(0, w - 4), rng.uniform(0, h - 4)
            boxes.append([x1, y1, rng.uniform(x1 + 1, w), rng.uniform(y1 + 1, h)])
            labels.append(int(rng.integers(0, 3)))
            flags.append(int(rng.integers(0, 2)))
    off = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    with h5py.File(out, "w") as f:
        f["data"] = data
        f["boxes"] = np.array(boxes, np.float32).reshape(-1, 4)
        f["box_label"] = np.array(labels, np.int32)
        f["box_flags"] = np.array(flags, np.uint8)
        f["box_offsets"] = off


def stored_boxes(path):
    import h5py
    with h5py.File(path, "r") as f:
        data = f["data"][:]
        b, lab, fl, off = (f[k][:] for k in ("boxes", "box_label", "box_flags", "box_offsets"))
    return data, [(b[off[i]:off[i + 1]], lab[off[i]:off[i + 1]], fl[off[i]:off[i + 1]])
                  for i in range(len(off) - 1)]


def reader(path):
    import libdata
    data, per = stored_boxes(path)
    n, c, H, W = data.shape
    ch, cw = H - 9, W - 13
    checked = 0
    with libdata.Reader(path, batch_size=5, shuffle=True, crop=(cw, ch), random_crop=True,
                        mirror=True, seed=4) as r:
        assert r.info.fields == ("data", "boxes"), r.info.fields
        for epoch in range(2):
            for x, targets in r:
                for j, i in enumerate(r.indices):
                    hits = [(y, xo, f) for f in (0, 1) for y in range(H - ch + 1)
                            for xo in range(W - cw + 1)
                            if np.array_equal((data[i][..., ::-1] if f else data[i])
                                              [:, y:y + ch, xo:xo + cw], x[j])]
                    assert len(hits) == 1, hits
                    y, xo, f = hits[0]
                    b, lab, fl = per[i]
                    if f:  # the crop of the mirrored image: x counted from the right
                        b = np.stack([W - b[:, 2], b[:, 1], W - b[:, 0], b[:, 3]], 1)
                    want, keep = clip_drop(b - np.array([xo, y, xo, y], np.float32), cw, ch)
                    t = targets[j]
                    assert np.allclose(t["boxes"], want, atol=1e-4), (i, t["boxes"], want)
                    assert np.array_equal(t["labels"], lab[keep]) and np.array_equal(
                        t["flags"], fl[keep])
                    checked += len(want)
    size = (30, 24)
    with libdata.Reader(path, batch_size=4, shuffle=True, random_resized_crop=size,
                        mirror=True, seed=8) as r:
        for x, targets in r:
            for j, i in enumerate(r.indices):
                bx, by, bw, bh, flip = r.crop_box(r.batch_epoch, int(i), W, H)
                b, lab, fl = per[i]
                s = np.array([size[0] / bw, size[1] / bh] * 2, np.float32)
                want, keep = clip_drop((b - np.array([bx, by, bx, by], np.float32)) * s, *size)
                if flip:
                    want = np.stack([size[0] - want[:, 2], want[:, 1], size[0] - want[:, 0],
                                     want[:, 3]], 1)
                assert np.allclose(targets[j]["boxes"], want, atol=1e-3), (i, targets[j], want)
                assert np.array_equal(targets[j]["labels"], lab[keep])
                checked += len(want)
    print(f"  {checked} boxes equal NumPy's under crop + mirror and random resized crop")
    try:
        import torch
        from libdata.torch import Dataset
    except ImportError:
        print("  skip torch: not installed")
        return
    from torch.utils.data import DataLoader
    ds = Dataset(path, batch_size=4, crop=(cw, ch), mirror=True, seed=2)
    for x, targets in DataLoader(ds, batch_size=None):
        assert isinstance(targets, list) and len(targets) == len(x)
        for t in targets:
            assert t["boxes"].dtype == torch.float32 and t["boxes"].shape[1:] == (4,)
            assert t["labels"].dtype == torch.int64 and len(t["labels"]) == len(t["boxes"])
    print("  torch: targets as torchvision's detection models take them")


def make_coco(root, photos):
    """12 real photos (3 with EXIF orientation 6, 3 and 8) in images/, their boxes in a COCO
    instances JSON (category ids 3, 7, 11, not contiguous; some crowd), and the same boxes as
    Pascal VOC XML (1-based pixels) in voc/."""
    from PIL import Image
    rng = np.random.default_rng(5)
    os.makedirs(f"{root}/images", exist_ok=True)
    for d in ("Annotations", "JPEGImages", "ImageSets/Main"):
        os.makedirs(f"{root}/voc/{d}", exist_ok=True)
    cats = [{"id": 3, "name": "cat"}, {"id": 7, "name": "dog"}, {"id": 11, "name": "bird"}]
    images, anns, ids = [], [], []
    for k in range(12):
        im = Image.open(f"{photos}/p{k % 10:02d}.jpg").convert("RGB")
        w, h = im.size
        name = f"img{k:02d}.jpg"
        kw = {}
        if k in (4, 5, 6):
            ex = Image.Exif()
            ex[0x0112] = {4: 6, 5: 3, 6: 8}[k]
            kw["exif"] = ex.tobytes()
        im.save(f"{root}/images/{name}", quality=90, **kw)
        im.save(f"{root}/voc/JPEGImages/{name}", quality=90, **kw)
        images.append({"id": 100 + k, "file_name": name, "width": w, "height": h})
        objs = []
        for m in range(int(rng.integers(0, 4))):
            bw, bh = rng.uniform(10, w / 2), rng.uniform(10, h / 2)
            x, y = rng.uniform(0, w - bw), rng.uniform(0, h - bh)
            c = cats[int(rng.integers(0, 3))]
            crowd = int(rng.integers(0, 4) == 0)
            anns.append({"id": len(anns) + 1, "image_id": 100 + k, "category_id": c["id"],
                         "bbox": [round(x, 2), round(y, 2), round(bw, 2), round(bh, 2)],
                         "iscrowd": crowd, "area": bw * bh,
                         "segmentation": [[x, y, x + bw, y, x + bw, y + bh]] * 3})
            objs.append((c["name"], int(x) + 1, int(y) + 1, int(x + bw), int(y + bh), crowd))
        ids.append(name[:-4])
        xml = "".join(f"<object><name>{n}</name><difficult>{d}</difficult><bndbox><xmin>{a}</xmin>"
                      f"<ymin>{b}</ymin><xmax>{c2}</xmax><ymax>{d2}</ymax></bndbox></object>"
                      for n, a, b, c2, d2, d in objs)
        with open(f"{root}/voc/Annotations/{name[:-4]}.xml", "w") as f:
            f.write(f"<annotation><filename>{name}</filename><size><width>{w}</width>"
                    f"<height>{h}</height></size>{xml}</annotation>")
    with open(f"{root}/voc/ImageSets/Main/train.txt", "w") as f:
        f.write("".join(i + "\n" for i in ids[:9]))
    # annotations before images, as the key order may be in any file
    with open(f"{root}/instances.json", "w") as f:
        json.dump({"annotations": anns, "categories": cats, "images": images,
                   "info": {"year": 2017}}, f)


def orient_boxes(b, o, w, h):
    """(M, 4) boxes of a w x h file as displayed after EXIF orientation o (6, 3, 8, 1)."""
    x1, y1, x2, y2 = b.T
    if o == 6:
        return np.stack([h - y2, x1, h - y1, x2], 1)
    if o == 3:
        return np.stack([w - x2, h - y2, w - x1, h - y1], 1)
    if o == 8:
        return np.stack([y1, w - x2, y2, w - x1], 1)
    return b


def expected(b, w, h, tw, th, mode):
    """dataconv's geometry (resize/geometry.c) on boxes of a w x h image, in NumPy."""
    if mode == "squash":
        cx, cy, cw, ch, sw, sh, ox, oy = 0, 0, w, h, tw, th, 0, 0
    elif mode == "crop":
        if tw * h >= th * w:
            cx, cw, ch = 0, w, th * w / tw
            cy = (h - ch) / 2
        else:
            cy, ch, cw = 0, h, tw * h / th
            cx = (w - cw) / 2
        sw, sh, ox, oy = tw, th, 0, 0
    else:  # pad
        cx, cy, cw, ch = 0, 0, w, h
        if tw * h <= th * w:
            sw, sh = tw, min(th, max(1, (2 * h * tw + w) // (2 * w)))
        else:
            sw, sh = min(tw, max(1, (2 * w * th + h) // (2 * h))), th
        ox, oy = (tw - sw) // 2, (th - sh) // 2
    out = np.empty_like(b, dtype=np.float64)
    out[:, [0, 2]] = ((b[:, [0, 2]] - cx) * sw / cw + ox).clip(ox, ox + sw)
    out[:, [1, 3]] = ((b[:, [1, 3]] - cy) * sh / ch + oy).clip(oy, oy + sh)
    keep = (out[:, 2] > out[:, 0]) & (out[:, 3] > out[:, 1])
    return out[keep], keep


def stored(out, root, src, tw, th, mode):
    """OUT's boxes (h5py) against the annotation files under the same geometry, within 1e-3 px;
    labels are the class indices of the dataset's box_classes, whose ids are the files'."""
    import h5py
    from PIL import Image
    with h5py.File(out, "r") as f:
        b, lab, fl, off = (f[k][:] for k in ("boxes", "box_label", "box_flags", "box_offsets"))
        names = [n.decode() for n in f["filename"][:]]
        classes = [c.decode() if isinstance(c, bytes) else c for c in f.attrs["box_classes"]]
        cids = list(f.attrs["box_class_ids"])
        assert "label" not in f, list(f)
    want = {}
    if src == "coco":
        js = json.load(open(f"{root}/instances.json"))
        cat = {c["id"]: c["name"] for c in js["categories"]}
        assert classes == [cat[i] for i in sorted(cat)] and cids == sorted(cat), (classes, cids)
        fname = {i["id"]: i["file_name"] for i in js["images"]}
        for a in js["annotations"]:
            x, y, w_, h_ = a["bbox"]
            want.setdefault(fname[a["image_id"]], []).append(
                ([x, y, x + w_, y + h_], classes.index(cat[a["category_id"]]), a["iscrowd"]))
        folder = f"{root}/images"
    else:  # voc: 1-based inclusive pixels
        import xml.etree.ElementTree as ET
        assert classes[:3] == ["aeroplane", "bicycle", "bird"], classes
        for n in names:
            t = ET.parse(f"{root}/voc/Annotations/{os.path.basename(n)[:-4]}.xml")
            for o in t.findall("object"):
                bb = [float(o.find(f"bndbox/{k}").text) for k in ("xmin", "ymin", "xmax", "ymax")]
                want.setdefault(n, []).append(([bb[0] - 1, bb[1] - 1, bb[2], bb[3]],
                                               classes.index(o.find("name").text),
                                               2 * int(o.find("difficult").text)))
        folder = f"{root}/voc"
    total = 0
    for i, n in enumerate(names):
        im = Image.open(f"{folder}/{n}")
        o = im.getexif().get(0x0112, 1)
        w, h = im.size
        rows = want.get(n, [])
        src_b = np.array([r[0] for r in rows], np.float64).reshape(-1, 4)
        disp = orient_boxes(src_b, o, w, h)
        dw, dh = (h, w) if o in (5, 6, 7, 8) else (w, h)
        e, keep = expected(disp, dw, dh, tw, th, mode)
        got = b[off[i]:off[i + 1]]
        assert got.shape == e.shape and np.allclose(got, e, atol=1e-3), (n, got, e)
        assert np.array_equal(lab[off[i]:off[i + 1]], np.array([r[1] for r in rows])[keep])
        assert np.array_equal(fl[off[i]:off[i + 1]], np.array([r[2] for r in rows])[keep])
        total += len(e)
    print(f"  {total} boxes of {len(names)} images equal the {src} file's under {mode} "
          f"{tw}x{th} (NumPy, 1e-3 px); classes {classes[:4]}...")


if __name__ == "__main__":
    a = sys.argv
    {"h5": lambda: make_h5(a[2]), "reader": lambda: reader(a[2]),
     "coco": lambda: make_coco(a[2], a[3]),
     "stored": lambda: stored(a[2], a[3], a[4], int(a[5]), int(a[6]), a[7])}[a[1]]()
