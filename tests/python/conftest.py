"""Fixtures shared by the tests/python suites (pytest loads this file for them)."""
import os

import h5py
import pytest


@pytest.fixture(scope="session")
def tree_list_h5(tmp_path_factory):
    """tree_list_h5(n, size): the fixture tree's images as listed in list.txt, the list repeated
    up to n samples, converted raw size x size; returns (path, (data, labels)), the arrays read
    by h5py."""
    def make(n, size):
        import libdata

        testdata = os.environ.get("LD_TEST_DATA", "")
        d = tmp_path_factory.mktemp("tree_list")
        lines = [ln for ln in open(os.path.join(testdata, "list.txt")).read().splitlines() if ln]
        (d / "list.txt").write_text("\n".join((lines * (n // len(lines) + 1))[:n]) + "\n")
        out = d / "t.h5"
        libdata.convert(os.path.join(testdata, "tree"), out, list_file=d / "list.txt",
                        resize=size, threads=2)
        with h5py.File(out, "r") as f:
            ref = f["data"][:], f["label"][:]
        assert len(ref[1]) == n
        return str(out), ref
    return make


@pytest.fixture(scope="session")
def photo_list_h5(tmp_path_factory):
    """photo_list_h5(n, size): the fixture photos (LD_TEST_DATA/photos) listed over and over up
    to n samples, line i with label i (so a label names its sample), converted raw size x size;
    returns (path, (data, labels)), the arrays read by h5py. Made once per (n, size)."""
    made = {}

    def make(n, size):
        import libdata

        if (n, size) in made:
            return made[(n, size)]
        photos = os.path.join(os.environ.get("LD_TEST_DATA", ""), "photos")
        names = sorted(f for f in os.listdir(photos) if f.endswith(".jpg"))
        d = tmp_path_factory.mktemp("photo_list")
        (d / "list.txt").write_text("".join(f"{names[i % len(names)]} {i}\n" for i in range(n)))
        out = d / f"p{n}.h5"
        libdata.convert(photos, out, list_file=d / "list.txt", resize=size, threads=2)
        with h5py.File(out, "r") as f:
            ref = f["data"][:], f["label"][:]
        assert list(ref[1]) == list(range(n))
        made[(n, size)] = (str(out), ref)
        return made[(n, size)]
    return make
