"""Detection boxes in Caffe: fixtures and the independent check of tests/cli/caffe_boxes.sh.

  caffe_boxes_check.py json IN OUT     IN (samples/shapes_coco.json) with more boxes: every
                                       other annotated image a second box of its class (so an
                                       instance 1), every third one of another class, every
                                       seventh box a crowd; the images without boxes kept
  caffe_boxes_check.py difficult H5    sets /box_flags bit 2 (VOC difficult) on every fifth box
  caffe_boxes_check.py masks H5 OUT    OUT: H5's pixels and boxes with masks as the label,
                                       /label (N, 1, H, W) uint8
  caffe_boxes_check.py test H5 ROWS B  the TEST phase's label tops (caffe_first_batch --rows
                                       ROWS, batch size B, no crop) against H5's /boxes,
                                       /box_label, /box_flags, /box_offsets read with h5py:
                                       batch k holds samples k*B.. in file order (the last one
                                       short, then the next epoch), each box a row [item, class
                                       + 1, its number among the item's boxes of its class,
                                       x1/W, y1/H, x2/W, y2/H, 1 if crowd or difficult else 0],
                                       W x H the stored images' size; a batch without boxes one
                                       row of -1 (SSD's AnnotatedData layer). Exactly, in
                                       float32 arithmetic. Exit 1 on any difference.
  caffe_boxes_check.py train ROWS      the TRAIN phase's rows are plausible after crop and
                                       mirror: corners within [0, 1], x1 < x2, y1 < y2
"""
import json
import sys

import numpy as np


def read_rows(path):
    """[(k, n, c, h, w, rows (M, 8) float32)] from caffe_first_batch --rows."""
    out, lines = [], open(path).read().split("\n")
    i = 0
    while i < len(lines) and lines[i]:
        head = lines[i].split()
        assert head[0] == "batch", head
        k, n, c, h, w, m = map(int, head[1:])
        rows = np.array([[np.float32(v) for v in lines[i + 1 + j].split()] for j in range(m)],
                        np.float32).reshape(m, 8)
        out.append((k, n, c, h, w, rows))
        i += 1 + m
    return out


def make_json(src, dst):
    d = json.load(open(src))
    cats = [c["id"] for c in d["categories"]]
    anns = sorted(d["annotations"], key=lambda a: a["image_id"])
    next_id = max(a["id"] for a in anns) + 1
    extra = []
    for i, a in enumerate(anns):
        x, y, w, h = a["bbox"]
        if i % 2 == 0:  # a second box of the same class: instance 1
            extra.append(dict(a, id=next_id, bbox=[x + w / 4, y + h / 4, w / 2, h / 2]))
            next_id += 1
        if i % 3 == 0:  # a box of another class
            other = cats[(cats.index(a["category_id"]) + 1) % len(cats)]
            extra.append(dict(a, id=next_id, category_id=other, bbox=[x, y, w / 3, h / 3]))
            next_id += 1
    for j, a in enumerate(extra + anns):
        a["iscrowd"] = 1 if j % 7 == 3 else 0
    d["annotations"] = anns + extra
    json.dump(d, open(dst, "w"))


def set_difficult(path):
    import h5py
    with h5py.File(path, "a") as f:
        fl = f["box_flags"][:]
        fl[::5] |= 2
        f["box_flags"][...] = fl
        print(f"  {len(fl)} boxes: flags 0: {np.sum(fl == 0)}, crowd (1): {np.sum(fl == 1)}, "
              f"difficult (2): {np.sum(fl == 2)}, both (3): {np.sum(fl == 3)}")


def with_masks(path, out):
    import h5py
    with h5py.File(path, "r") as f, h5py.File(out, "w") as g:
        for k in ("data", "boxes", "box_label", "box_flags", "box_offsets"):
            g[k] = f[k][:]
        n, _, h, w = f["data"].shape
        g["label"] = (np.arange(n * h * w) % 5).astype(np.uint8).reshape(n, 1, h, w)


def expected(path, batch):
    """The label top of every batch of the TEST phase, from the file alone."""
    import h5py
    with h5py.File(path, "r") as f:
        n, _, H, W = f["data"].shape
        bx, lab = f["boxes"][:].astype(np.float32), f["box_label"][:]
        fl, off = f["box_flags"][:], f["box_offsets"][:]
    starts = list(range(0, n, batch))
    k = 0
    while True:
        s = starts[k % len(starts)]
        items = range(s, min(s + batch, n))
        rows = []
        for j, i in enumerate(items):
            seen = {}
            for b in range(off[i], off[i + 1]):
                inst = seen.get(lab[b], 0)
                seen[lab[b]] = inst + 1
                x1, y1, x2, y2 = bx[b]
                rows.append([j, lab[b] + 1, inst, x1 / np.float32(W), y1 / np.float32(H),
                             x2 / np.float32(W), y2 / np.float32(H), 1 if fl[b] & 3 else 0])
        yield len(items), H, W, (np.array(rows, np.float32).reshape(-1, 8) if rows
                                 else np.full((1, 8), -1, np.float32))
        k += 1


def check_test(path, rows_path, batch):
    got = read_rows(rows_path)
    bad = nrows = empty = difficult = inst = 0
    for (k, n, c, h, w, rows), (en, eh, ew, want) in zip(got, expected(path, batch)):
        if (n, h, w) != (en, eh, ew) or rows.shape != want.shape:
            print(f"batch {k}: {n} x {c} x {h} x {w}, label 1 1 {len(rows)} 8; expected "
                  f"{en} x {c} x {eh} x {ew}, label 1 1 {len(want)} 8")
            bad += 1
            continue
        diff = np.argwhere(rows != want)
        if len(diff):
            r, col = diff[0]
            print(f"batch {k}: {len(diff)} values differ, first row {r} column {col}: Caffe "
                  f"{rows[r].tolist()}, h5py {want[r].tolist()}")
            bad += 1
        nrows += len(rows)
        empty += bool(rows[0, 0] == -1)
        difficult += int(np.sum(want[:, 7] == 1))
        inst += int(np.sum(want[:, 2] > 0))
    if len(got) == 0:
        print("no batches in " + rows_path)
        return 1
    print(f"test phase: {len(got)} batches, {nrows} rows compared with h5py (8 values each), "
          f"{empty} batches without boxes (one row of -1), {difficult} rows difficult, {inst} "
          f"rows with instance > 0: {bad} batches differ")
    return 1 if bad else 0


def check_train(rows_path):
    got = read_rows(rows_path)
    bad = nrows = 0
    for k, n, c, h, w, rows in got:
        if rows[0, 0] == -1:
            bad += not np.all(rows == -1)
            continue
        xy = rows[:, 3:7]
        ok = (np.all((xy >= 0) & (xy <= 1)) and np.all(rows[:, 3] < rows[:, 5])
              and np.all(rows[:, 4] < rows[:, 6]) and np.all(np.diff(rows[:, 0]) >= 0)
              and rows[-1, 0] < n)
        bad += not ok
        nrows += len(rows)
    print(f"train phase: {len(got)} batches, {nrows} rows with corners in [0, 1] and x1 < x2, "
          f"y1 < y2: {bad} batches not")
    return 1 if bad or not got else 0


def main():
    cmd = sys.argv[1]
    if cmd == "json":
        make_json(sys.argv[2], sys.argv[3])
    elif cmd == "difficult":
        set_difficult(sys.argv[2])
    elif cmd == "masks":
        with_masks(sys.argv[2], sys.argv[3])
    elif cmd == "test":
        return check_test(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif cmd == "train":
        return check_train(sys.argv[2])
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
