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


if __name__ == "__main__":
    {"h5": lambda: make_h5(sys.argv[2]), "reader": lambda: reader(sys.argv[2])}[sys.argv[1]]()
