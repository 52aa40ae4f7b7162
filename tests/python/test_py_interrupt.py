"""Ctrl-C (SIGINT) during libdata.convert() raises KeyboardInterrupt, prints no "Exception
ignored" traceback, and leaves no output (issue 12, item 7).

A child python converts a list of many photos; the test sends it SIGINT once the conversion
is running and checks its stderr, its exception and the output folder.

Run: LIBDATA_LIBRARY=build/libdata.so LD_TEST_DATA=build/testdata PYTHONPATH=bindings/python \
     /usr/bin/python3 -m pytest -q tests/python/test_py_interrupt.py
"""
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

TESTDATA = os.environ.get("LD_TEST_DATA", "")
PHOTOS = os.path.join(TESTDATA, "photos")

pytestmark = pytest.mark.skipif(not os.path.isdir(PHOTOS),
                                reason="LD_TEST_DATA must point at the made fixtures")

CHILD = r"""
import os, sys, time, traceback
import libdata
root, out, mode = sys.argv[1], sys.argv[2], sys.argv[3]
kw = {}
if mode == "progress":
    kw["progress"] = lambda p: print("progress", p.done, flush=True) and False
elif mode == "log":
    kw["log"] = lambda level, msg: None
print("started", flush=True)
try:
    libdata.convert(root, out, list_file=os.path.join(root, "list.txt"), resize=96,
                    threads=1, **kw)
except KeyboardInterrupt:
    print("caught KeyboardInterrupt", flush=True)
    sys.exit(130)
except BaseException as e:
    print("caught", type(e).__name__, e, flush=True)
    sys.exit(3)
print("finished without interruption", flush=True)
"""


@pytest.fixture(scope="module")
def many(tmp_path_factory):
    """A list of 30,000 entries over the fixture photos (far longer than the test waits)."""
    d = tmp_path_factory.mktemp("interrupt")
    photos = sorted(f for f in os.listdir(PHOTOS) if f.endswith(".jpg"))
    for f in photos:
        shutil.copyfile(os.path.join(PHOTOS, f), d / f)
    lines = [f"{photos[i % len(photos)]} {i % 3}" for i in range(30000)]
    (d / "list.txt").write_text("\n".join(lines) + "\n")
    return d


@pytest.mark.parametrize("mode", ["plain", "progress", "log"])
@pytest.mark.parametrize("fmt", ["h5", "lmdb"])
def test_sigint_raises_keyboard_interrupt_and_leaves_no_output(many, tmp_path, mode, fmt):
    out = tmp_path / f"out.{fmt}"
    p = subprocess.Popen([sys.executable, "-c", CHILD, str(many), str(out), mode],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=dict(os.environ))
    assert p.stdout.readline().strip() == "started"
    if mode == "progress":
        assert p.stdout.readline().startswith("progress")  # the conversion is running
    time.sleep(1.0)  # well inside the run: 30,000 photos take minutes on one thread
    p.send_signal(signal.SIGINT)
    try:
        rest, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        raise AssertionError("the conversion did not stop within 60 s of SIGINT")
    assert "Exception ignored" not in err, err
    assert "caught KeyboardInterrupt" in rest, f"stdout: {rest}\nstderr: {err}"
    assert p.returncode == 130, (p.returncode, err)
    assert sorted(os.listdir(tmp_path)) == [], f"left behind: {os.listdir(tmp_path)}"
