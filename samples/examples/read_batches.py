#!/usr/bin/python3
"""Convert an image folder with libdata and stream mini-batches from the result.

    PYTHONPATH=bindings/python LIBDATA_LIBRARY=build/libdata.so \
        /usr/bin/python3 samples/examples/read_batches.py samples/images samples.h5

The folder holds one sub-folder per class. The dataset is made once (64x64, BGR, raw uint8)
and then read for two shuffled epochs of float32 batches scaled to [0, 1].
"""
import os
import sys
import time

import numpy as np

import libdata


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: read_batches.py IMAGE_FOLDER DATASET.h5")
    folder, dataset = sys.argv[1], sys.argv[2]

    if not os.path.exists(dataset):
        def progress(p):
            print(f"\rconverting {p.done}/{p.total}", end="", file=sys.stderr)
        s = libdata.convert(folder, dataset, resize=64, progress=progress)
        print(file=sys.stderr)
        print(f"converted {s.converted} images, skipped {s.skipped} "
              f"in {s.elapsed:.2f} s")
        for w in s.warnings:  # one line per skipped file: its path and why
            print("  skipped:", w)

    try:
        reader = libdata.Reader(dataset, batch_size=32, shuffle=True, seed=1,
                                dtype="float32", scale=1 / 255)
    except libdata.LibdataError as e:
        sys.exit(f"read_batches: {e.message or e}")
    with reader as r:
        info = r.info
        print(f"{info.samples} samples of shape {info.shape} ({info.channel_order}), "
              f"{len(r)} batches per epoch, classes: {info.classes}")
        for epoch in range(2):
            t0 = time.perf_counter()
            seen, counts = 0, {}
            for data, labels in r:
                seen += len(labels)
                for k, v in zip(*np.unique(labels, return_counts=True)):
                    counts[int(k)] = counts.get(int(k), 0) + int(v)
            dt = time.perf_counter() - t0
            print(f"epoch {epoch}: {seen} samples, mean pixel {data.mean():.3f}, "
                  f"labels {dict(sorted(counts.items()))}, {seen / dt:.0f} samples/s")


if __name__ == "__main__":
    main()
