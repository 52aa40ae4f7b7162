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
