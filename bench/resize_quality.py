#!/usr/bin/python3
"""Resize quality: mean PSNR against Pillow's LANCZOS for libdata, OpenCV INTER_LINEAR (what
Caffe's convert_imageset uses) and OpenCV INTER_AREA, on real photographs, plus timing.

Usage: bench/resize_quality.py [TESTDATA]     (default: build/testdata)

TESTDATA is the fixture folder made by tests/data/make_fixtures.py (it holds photos/ and the
decoded sources in resize/). The script runs BUILD/bench/resize_quality (the CMake target of
bench/resize_quality.c, built with -DLIBDATA_BUILD_BENCH=ON; BUILD is TESTDATA's parent
folder) through stdin/stdout. Geometry and source crop are identical for every method (see
tests/data/fixtures_resize.py); mode `crop` for INTER_AREA resizes to the rounded cover size
and crops at the rounded offset, which costs it some dB for misalignment.
"""
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(SRC, "tests", "data"))
import fixtures_resize as fx  # noqa: E402


def find_exe(testdata):
    """BUILD/bench/resize_quality, a CMake target (-DLIBDATA_BUILD_BENCH=ON); BUILD is the
    folder holding TESTDATA (tests/data/make_fixtures.py writes BUILD/testdata)."""
    build = os.path.dirname(os.path.abspath(testdata))
    exe = os.path.join(build, "bench", "resize_quality")
    if not os.access(exe, os.X_OK):
        sys.exit(f"no {exe}: configure {build} with -DLIBDATA_BUILD_BENCH=ON and build the "
                 "'resize_quality' target (cmake --build BUILD --target resize_quality)")
    return exe


def to_px(arr):
    h, w = arr.shape[:2]
    c = 1 if arr.ndim == 2 else arr.shape[2]
    return b"LDPX" + np.array([w, h, c], "<u4").tobytes() + np.ascontiguousarray(arr).tobytes()


def from_px(data):
    w, h, c = np.frombuffer(data[4:16], "<u4")
    a = np.frombuffer(data[16:], np.uint8).reshape(h, w, c)
    return a[:, :, 0] if c == 1 else a


def psnr(a, b):
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return 99.0 if mse == 0 else 10 * np.log10(255.0 ** 2 / mse)


def main():
    import cv2
    from PIL import Image

    cv2.setNumThreads(1)
    testdata = sys.argv[1] if len(sys.argv) > 1 else os.path.join(SRC, "build", "testdata")
    photos = sorted(os.path.join(testdata, "photos", f)
                    for f in os.listdir(os.path.join(testdata, "photos")))
    exe = find_exe(testdata)
    rows = {}
    for name, im in fx.sources(photos):
        arr = np.asarray(im)
        full = (0.0, 0.0, float(im.width), float(im.height))
        for mode, box in (("squash", full), ("crop", fx.crop_box(im.width, im.height))):
            ref = np.asarray(im.resize((fx.SIZE, fx.SIZE), Image.LANCZOS, box=box))
            out = subprocess.run([exe, mode, str(fx.SIZE), str(fx.SIZE)], input=to_px(arr),
                                 stdout=subprocess.PIPE, check=True).stdout
            if mode == "squash":
                lin = cv2.resize(arr, (fx.SIZE, fx.SIZE), interpolation=cv2.INTER_LINEAR)
                area = cv2.resize(arr, (fx.SIZE, fx.SIZE), interpolation=cv2.INTER_AREA)
            else:
                lin = fx.cv_linear_box(cv2, arr, box)
                area = fx.cv_area_crop(cv2, arr)
            r = rows.setdefault(mode, {"libdata": [], "cv2 INTER_LINEAR": [],
                                       "cv2 INTER_AREA": []})
            r["libdata"].append(psnr(from_px(out), ref))
            r["cv2 INTER_LINEAR"].append(psnr(lin, ref))
            r["cv2 INTER_AREA"].append(psnr(area, ref))
    n = len(rows["squash"]["libdata"])
    print(f"Mean PSNR (dB) vs Pillow LANCZOS, {n} photos -> {fx.SIZE}x{fx.SIZE} "
          "(min in parentheses)")
    print(f"{'method':<20}{'squash':>18}{'crop':>18}")
    for method in rows["squash"]:
        cells = [f"{np.mean(rows[m][method]):7.2f} ({np.min(rows[m][method]):5.2f})"
                 for m in ("squash", "crop")]
        print(f"{method:<20}{cells[0]:>18}{cells[1]:>18}")

    first = np.asarray(Image.open(photos[1]).convert("RGB"))
    for mode in ("squash", "crop"):
        t = subprocess.run([exe, "--time", mode, "224", "224", "2000"], input=to_px(first),
                           stdout=subprocess.PIPE, check=True).stdout.decode().strip()
        print("libdata:", t)
    cv_t = time_it(lambda: cv2.resize(first, (224, 224), interpolation=cv2.INTER_LINEAR))
    cv_a = time_it(lambda: cv2.resize(first, (224, 224), interpolation=cv2.INTER_AREA))
    pim = Image.fromarray(first)
    pil_t = time_it(lambda: pim.resize((224, 224), Image.LANCZOS))
    print(f"cv2 INTER_LINEAR: best {cv_t:.1f} us, cv2 INTER_AREA: best {cv_a:.1f} us, "
          f"Pillow LANCZOS: best {pil_t:.1f} us (same image, squash, one thread)")


def time_it(fn, n=300):
    import time
    best = 1e9
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best * 1e6


if __name__ == "__main__":
    main()
