"""Issue 14 item 11 (and 5's ld_version check in the bindings): the bindings check the library
they load. Another major version, or a library without a function the bindings use (an older
build), is an ImportError at import naming the versions; there is no lazy stand-in that fails
later with LD_ENOTSUP."""
import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
BINDINGS = os.path.join(HERE, "..", "..", "bindings", "python")
CC = shutil.which("cc") or shutil.which("gcc")
pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler to build the stub libraries")


def stub(tmp_path, version, text):
    src = tmp_path / "stub.c"
    src.write_text(f"unsigned ld_version_number(void) {{ return {version}; }}\n"
                   f"const char *ld_version_string(void) {{ return \"{text}\"; }}\n"
                   "const char *ld_strerror(int s) { (void)s; return \"x\"; }\n")
    so = tmp_path / f"libstub{version}.so"
    subprocess.run([CC, "-shared", "-fPIC", "-o", str(so), str(src)], check=True)
    return so


def import_with(lib):
    env = dict(os.environ, LIBDATA_LIBRARY=str(lib), PYTHONPATH=BINDINGS)
    return subprocess.run([sys.executable, "-c", "import libdata"], env=env,
                          capture_output=True, text=True)


def test_another_major_version_is_refused(tmp_path):
    r = import_with(stub(tmp_path, 20000, "2.0.0"))
    assert r.returncode != 0
    assert "ImportError" in r.stderr and "libdata 2.0.0" in r.stderr, r.stderr
    assert "major version 1" in r.stderr, r.stderr


def test_a_library_missing_a_function_is_refused_at_import(tmp_path):
    r = import_with(stub(tmp_path, 10000, "1.0.0"))
    assert r.returncode != 0
    assert "ImportError" in r.stderr and "has no ld_" in r.stderr, r.stderr
    assert "libdata 1.0.0" in r.stderr, r.stderr
