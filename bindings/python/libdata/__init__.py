"""libdata: image folders -> HDF5/LMDB datasets, and bounded-memory mini-batches from them.

A pure-Python package over the C library through ctypes (no compiled extension). The library
is found through $LIBDATA_LIBRARY, then this package's folder, then the system's loader path.

    import libdata
    libdata.convert("images/", "train.h5", resize=64)
    with libdata.Reader("train.h5", batch_size=32, shuffle=True) as r:
        for data, labels in r:
            ...

PyTorch: libdata.torch.Dataset (torch is imported only when that module is).
"""
import ctypes as _ctypes
from typing import Any, Dict

from . import _lib
from ._lib import LibdataError, api as _api
from ._lib import (LD_OK, LD_END, LD_ENOMEM, LD_EINVAL, LD_EIO, LD_EFORMAT, LD_ELIMIT,
                   LD_ECANCELED, LD_ENOTSUP, LD_ESTATE)
from .convert import convert, merge, Converter, ConvertSummary, ConvertProgress
from .convert import PathLike as _PathLike

from .reader import Reader, DatasetInfo
from .dataset import stat, DatasetStat
from .plan import plan, Plan, PlanItem, PlanBlob

__all__ = ["convert", "merge", "Converter", "ConvertSummary", "ConvertProgress", "Reader", "DatasetInfo",
           "LibdataError", "describe", "stat", "DatasetStat", "plan", "Plan", "PlanItem", "PlanBlob", "version", "version_number", "has_feature", "strerror",
           "convert_params", "reader_params", "library_path", "LD_OK", "LD_END", "LD_ENOMEM", "LD_EINVAL",
           "LD_EIO", "LD_EFORMAT", "LD_ELIMIT", "LD_ECANCELED", "LD_ENOTSUP", "LD_ESTATE"]
__version__ = "1.0.0"
library_path = _lib.path


def version() -> str:
    """The loaded library's version string, e.g. "1.0.0"."""
    return _api.ld_version_string().decode()


def version_number() -> int:
    """The loaded library's version as major*10000 + minor*100 + patch."""
    return _lib.version_number()


def has_feature(name: str) -> bool:
    """True if the library was built with `name`: "hdf5", "lmdb", "png", "threads", "tiff", "webp" or "gif"."""
    try:
        fid = _lib.FEATURES[name]
    except KeyError:
        raise ValueError(f"unknown feature {name!r}; known: {', '.join(_lib.FEATURES)}") from None
    return bool(_api.ld_has_feature(fid))


def strerror(code: int) -> str:
    """The library's name for a status code."""
    return _lib.strerror(code)


def describe(path: "_PathLike") -> str:
    """A multi-line description of a dataset (HDF5 file, LMDB directory or split list):
    format, count, shape, storage, channel order, classes, how it was made."""
    text, err = _ctypes.c_void_p(), _ctypes.c_void_p()
    rc = _api.ld_describe(_lib.fsencode(path), _ctypes.byref(text), _ctypes.byref(err))
    try:
        s = _ctypes.string_at(text.value).decode("utf-8", "replace") if text.value else ""
        msg = _ctypes.string_at(err.value).decode("utf-8", "replace") if err.value else ""
    finally:
        _api.ld_free(text)
        _api.ld_free(err)
    if rc < 0:
        raise LibdataError(rc, strerror(rc), msg)
    return s


def _table_dicts(kind: str) -> "Dict[str, Dict[str, Any]]":
    return {k: {"id": p.id, "type": p.type, "default": p.default, "min": p.min, "max": p.max,
                "unit": p.unit, "choices": dict(p.choices), "help": p.help}
            for k, p in _lib.param_table(kind).items()}


def convert_params() -> "Dict[str, Dict[str, Any]]":
    """The library's converter parameters, {name: {id, type, default, min, max, unit, choices,
    help}}: every one is a keyword argument of convert() and Converter. `type` is "int",
    "bool", "enum" (default: a name of `choices`), "double", "floats" or "string"."""
    return _table_dicts("convert")


def reader_params() -> "Dict[str, Dict[str, Any]]":
    """The library's reader parameters (as convert_params()): every one is a keyword argument
    of Reader."""
    return _table_dicts("reader")


def __getattr__(name: str) -> Any:
    # `libdata.torch` imports torch only when first used.
    if name == "torch":
        import importlib
        return importlib.import_module(".torch", __name__)
    raise AttributeError(f"module 'libdata' has no attribute {name!r}")
