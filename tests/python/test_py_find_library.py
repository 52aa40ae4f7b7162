"""Finding an installed libdata without LIBDATA_LIBRARY (issue 12, item 9): a library installed
under a prefix is found through the prefix of a `dataconv` on PATH, ~/.local or the venv's
prefix; when nothing is found, ImportError says what to do.

Run: LIBDATA_LIBRARY=build/libdata.so LD_TEST_DATA=build/testdata PYTHONPATH=bindings/python \
     /usr/bin/python3 -m pytest -q tests/python/test_py_find_library.py
"""
import os
import shutil
import subprocess
import sys

import pytest

import libdata

PKG_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(libdata.__file__)))
SONAME = "libdata.so.1"


def system_has_libdata():
    """Whether the loader finds a libdata by itself (asked in a fresh process: this one has
    loaded $LIBDATA_LIBRARY, whose soname dlopen would match)."""
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    code = f"import ctypes; ctypes.CDLL({SONAME!r})"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, env=env,
                          cwd="/").returncode == 0


pytestmark = pytest.mark.skipif(system_has_libdata(),
                                reason="a libdata is installed system-wide: it would be found "
                                       "first")


def run_import(tmp_path, path_dirs=(), home=None):
    env = {k: v for k, v in os.environ.items()
           if k not in ("LIBDATA_LIBRARY", "LD_LIBRARY_PATH")}
    env["PYTHONPATH"] = PKG_PARENT
    env["PATH"] = os.pathsep.join(list(path_dirs) + ["/usr/bin", "/bin"])
    env["HOME"] = str(home or tmp_path / "emptyhome")
    code = "import libdata; print(libdata.library_path)"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, cwd="/")


def install(prefix):
    (prefix / "lib").mkdir(parents=True)
    shutil.copy(os.environ["LIBDATA_LIBRARY"], prefix / "lib" / SONAME)
    return prefix / "lib" / SONAME


def test_found_beside_a_dataconv_on_path(tmp_path):
    prefix = tmp_path / "opt"
    lib = install(prefix)
    (prefix / "bin").mkdir()
    exe = prefix / "bin" / "dataconv"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    r = run_import(tmp_path, [str(prefix / "bin")])
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(lib)


def test_found_in_home_local(tmp_path):
    home = tmp_path / "home"
    lib = install(home / ".local")
    r = run_import(tmp_path, home=home)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(lib)


def test_not_found_says_what_to_do(tmp_path):
    r = run_import(tmp_path)
    assert r.returncode != 0
    assert "ImportError" in r.stderr
    for hint in ("cmake --install build --prefix", "ldconfig", "LIBDATA_LIBRARY=", SONAME):
        assert hint in r.stderr, r.stderr
