"""libdata._lib: finding the library, the version check, module-level helpers.

Run: LIBDATA_LIBRARY=build/libdata.so LD_TEST_DATA=build/testdata PYTHONPATH=bindings/python \
     /usr/bin/python3 -m pytest -q tests/python/test_py_lib.py
"""
import os
import shutil
import subprocess
import sys

import pytest

import libdata
from libdata import LibdataError, _lib

PKG = os.path.dirname(os.path.abspath(libdata.__file__))


def run_import(env, pythonpath, code="import libdata; print(libdata.library_path)"):
    e = {k: v for k, v in os.environ.items() if k != "LIBDATA_LIBRARY"}
    e.update(env)
    e["PYTHONPATH"] = pythonpath
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e,
                          cwd="/")


def test_environment_variable_is_used_first():
    assert os.path.samefile(libdata.library_path, os.environ["LIBDATA_LIBRARY"])


def test_a_bad_environment_variable_is_an_import_error_naming_it():
    r = run_import({"LIBDATA_LIBRARY": "/nonexistent/libdata.so"}, os.path.dirname(PKG))
    assert r.returncode != 0
    assert "LIBDATA_LIBRARY" in r.stderr and "/nonexistent/libdata.so" in r.stderr, r.stderr


def test_the_package_folder_is_searched_second(tmp_path):
    pkg = tmp_path / "libdata"
    shutil.copytree(PKG, pkg, ignore=shutil.ignore_patterns("__pycache__", "libdata.so*"))
    shutil.copy(os.environ["LIBDATA_LIBRARY"], pkg / "libdata.so")
    r = run_import({}, str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(pkg / "libdata.so")


def test_another_major_version_is_refused(monkeypatch):
    monkeypatch.setattr(_lib, "ABI_MAJOR", _lib.ABI_MAJOR + 1)
    with pytest.raises(ImportError, match="major version"):
        _lib._check_version()


def test_version_and_features():
    assert libdata.version() == "%d.%d.%d" % (libdata.version_number() // 10000,
                                               libdata.version_number() // 100 % 100,
                                               libdata.version_number() % 100)
    assert libdata.has_feature("hdf5") in (True, False)
    with pytest.raises(ValueError):
        libdata.has_feature("cuda")


def test_strerror_names_codes():
    assert libdata.strerror(libdata.LD_EIO) != libdata.strerror(libdata.LD_EFORMAT)
    e = LibdataError(libdata.LD_EIO, None, "x.h5: cannot open")
    assert e.name == libdata.strerror(libdata.LD_EIO) and e.symbol == "LD_EIO"
    assert "x.h5: cannot open" in str(e) and "LD_EIO" in str(e)


def test_describe_and_its_errors(tmp_path):
    tree = os.path.join(os.environ.get("LD_TEST_DATA", ""), "tree")
    if not os.path.isdir(tree):
        pytest.skip("LD_TEST_DATA must point at the made fixtures")
    out = tmp_path / "d.h5"
    libdata.convert(tree, out, resize=16)
    text = libdata.describe(out)
    assert "samples" in text and "16" in text, text
    with pytest.raises(LibdataError) as ei:
        libdata.describe(tmp_path / "missing.h5")
    assert "missing.h5" in ei.value.message
    with pytest.raises(TypeError):
        libdata.describe(12)
