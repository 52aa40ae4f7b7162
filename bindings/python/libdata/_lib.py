"""Loading libdata.so and declaring its C API for ctypes.

The library is looked for, in order, at:
  1. $LIBDATA_LIBRARY (a path to the shared library: what the build tree's tests use); when
     set, nothing else is tried,
  2. the package folder (a libdata.so* copied next to this file by a packager),
  3. the dynamic loader's search for libdata.so.<major> (LD_LIBRARY_PATH, ld.so.cache: an
     install to /usr/local after ldconfig), then ctypes.util.find_library("data"),
  4. the lib folders of install prefixes: that of a `dataconv` on PATH (PREFIX/bin ->
     PREFIX/lib), sys.prefix (a venv used as the prefix), ~/.local, /usr/local.
When none loads, ImportError says how to install or name it.

Every function gets its argtypes/restype once, here. Functions that return a status get an
errcheck that turns `rc < 0` into LibdataError carrying the handle's detailed message; positive
codes (LD_END) pass through. The library's version is checked first: another major version,
or a library that lacks a function these bindings use (an older build), is an ImportError
that names both versions.
"""
import ctypes
import ctypes.util
import glob
import os
import signal
import threading
import weakref
from contextlib import contextmanager
from typing import (TYPE_CHECKING, Any, Callable, Dict, Iterator, List, NoReturn, Optional,
                    Sequence, Tuple, Union)

# A path argument: what os.fsencode accepts.
PathLike = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]

# The version these bindings were written for; a library with another major version has an
# incompatible ABI (styled on PyTurboJPEG refusing libraries that lack tj3Init).
BINDINGS_VERSION = "1.0.0"
ABI_MAJOR = 1

# Status codes (libdata.h; fixed forever).
LD_OK = 0
LD_END = 1
LD_ENOMEM = -1
LD_EINVAL = -2
LD_EIO = -3
LD_EFORMAT = -4
LD_ELIMIT = -5
LD_ECANCELED = -6
LD_ENOTSUP = -7
LD_ESTATE = -8

LD_LOG_ERROR, LD_LOG_WARN, LD_LOG_INFO, LD_LOG_DEBUG = 0, 1, 2, 3

FEATURES = {"hdf5": 1, "lmdb": 2, "png": 3, "threads": 4, "tiff": 5, "webp": 6, "gif": 7,
            "archive": 8, "coco": 9, "voc": 10}

_STATUS_NAMES = {
    LD_ENOMEM: "LD_ENOMEM", LD_EINVAL: "LD_EINVAL", LD_EIO: "LD_EIO", LD_EFORMAT: "LD_EFORMAT",
    LD_ELIMIT: "LD_ELIMIT", LD_ECANCELED: "LD_ECANCELED", LD_ENOTSUP: "LD_ENOTSUP",
    LD_ESTATE: "LD_ESTATE",
}


class LibdataError(Exception):
    """A libdata call failed.

    Attributes:
      code    -- the negative ld_status value (LD_EINVAL, LD_EIO, ...)
      name    -- ld_strerror(code), e.g. "invalid argument"
      message -- the handle's detailed message (file, sample, reason); may be "".
      param   -- the name of the parameter the failure is about (a keyword argument of
                 Converter/convert() or Reader, e.g. "max_pixels"), or None
      path    -- the file the failure is in (an input image, a dataset file), or None
      sample  -- the sample's index (Reader) or the input's index in the run (convert), or None
    (from the handle's ld_error_detail; None when the failure did not come from a handle).
    """

    def __init__(self, code: Union[int, str, None], name: Optional[str] = None,
                 message: str = "", param: Optional[str] = None, path: Optional[str] = None,
                 sample: Optional[int] = None) -> None:
        if isinstance(code, str) and name is None and not message:
            # Re-raised from a message alone (torch's DataLoader does this with an exception
            # from a worker: type(exc)(text)): the code is not known any more.
            name, message = "error", code
            code = None
        self.code: Optional[int] = None if code is None else int(code)
        self.name = name if name is not None else strerror(self.code)
        self.message = message or ""
        self.param = param
        self.path = path
        self.sample = sample
        super().__init__(self.code, self.name, self.message)

    @property
    def symbol(self) -> str:
        """The C name of the code, e.g. "LD_EIO"."""
        return _STATUS_NAMES.get(self.code, str(self.code)) if self.code is not None else "None"

    def __str__(self) -> str:
        if self.code is None:
            return self.message
        if self.message:
            return f"{self.message} ({self.symbol}: {self.name})"
        return f"{self.name} ({self.symbol})"


# ---- C types ---------------------------------------------------------------------------------

c_int64_p = ctypes.POINTER(ctypes.c_int64)
LOG_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p)


class Progress(ctypes.Structure):
    """struct ld_progress (convert.h). Only read through pointers the library owns, so fields
    the library appends later do not matter."""
    _fields_ = [
        ("total", ctypes.c_uint64),
        ("done", ctypes.c_uint64),
        ("converted", ctypes.c_uint64),
        ("skipped", ctypes.c_uint64),
        ("skipped_format", ctypes.c_uint64),
        ("skipped_io", ctypes.c_uint64),
        ("skipped_limit", ctypes.c_uint64),
        ("bytes_in", ctypes.c_uint64),
        ("bytes_out", ctypes.c_uint64),
        ("elapsed", ctypes.c_double),
        ("files_out", ctypes.c_uint32),
        ("resumed", ctypes.c_uint32),
        # added after 1.0.0: what folder mode did not list, and multi-frame inputs
        ("unlisted", ctypes.c_uint64),
        ("unlisted_name", ctypes.c_uint64),
        ("unlisted_hidden", ctypes.c_uint64),
        ("unlisted_special", ctypes.c_uint64),
        ("unlisted_loose", ctypes.c_uint64),
        ("first_frame_only", ctypes.c_uint64),
        ("unlisted_unsafe", ctypes.c_uint64),
    ]

    def as_dict(self) -> Dict[str, Any]:
        return {name: getattr(self, name) for name, _ in self._fields_}


PROGRESS_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(Progress))


class ParamChoice(ctypes.Structure):
    """struct ld_param_choice (libdata.h)."""
    _fields_ = [("name", ctypes.c_char_p), ("value", ctypes.c_int64)]


class ParamDesc(ctypes.Structure):
    """struct ld_param_desc (libdata.h)."""
    _fields_ = [
        ("id", ctypes.c_int),
        ("name", ctypes.c_char_p),
        ("type", ctypes.c_int),
        ("default", ctypes.c_int64),
        ("min", ctypes.c_int64),
        ("max", ctypes.c_int64),
        ("unit", ctypes.c_char_p),
        ("choices", ctypes.POINTER(ParamChoice)),
        ("nchoices", ctypes.c_size_t),
        ("def_text", ctypes.c_char_p),
        ("help", ctypes.c_char_p),
    ]


# ld_param_type (libdata.h)
PARAM_TYPES = {1: "int", 2: "bool", 3: "enum", 4: "double", 5: "floats", 6: "string"}


# ---- finding and loading the library --------------------------------------------------------

def _soname() -> str:
    return f"libdata.so.{ABI_MAJOR}"


def _prefix_libdirs() -> List[str]:
    """lib folders of prefixes where `cmake --install build --prefix P` may have put the
    library: the prefix of a dataconv on PATH, this Python's prefix (a venv used as the install
    prefix), ~/.local and /usr/local."""
    prefixes: List[str] = []
    import shutil
    import sys
    exe = shutil.which("dataconv")
    if exe:
        prefixes.append(os.path.dirname(os.path.dirname(os.path.realpath(exe))))
    prefixes += [sys.prefix, os.path.expanduser("~/.local"), "/usr/local"]
    dirs = []
    for p in prefixes:
        for sub in ("lib", "lib64", os.path.join("lib", _multiarch())):
            d = os.path.join(p, sub)
            if d not in dirs:
                dirs.append(d)
    return dirs


def _multiarch() -> str:
    import sys
    return getattr(sys.implementation, "_multiarch", "") or ""


def _candidates() -> Tuple[List[str], bool]:
    """(paths to try in order, explicit?)."""
    env = os.environ.get("LIBDATA_LIBRARY")
    if env:
        # An explicit choice is final: silently falling back to another copy would hide
        # exactly the mistake the variable is used to avoid.
        return [env], True
    here = os.path.dirname(os.path.abspath(__file__))
    found = sorted(glob.glob(os.path.join(here, "libdata.so*")) +
                   glob.glob(os.path.join(here, "libdata*.dylib")) +
                   glob.glob(os.path.join(here, "data.dll")))
    # The dynamic loader's own search (LD_LIBRARY_PATH, ld.so.cache after ldconfig, ...).
    found.append(_soname())
    sys_lib = ctypes.util.find_library("data")
    if sys_lib:
        found.append(sys_lib)
    for d in _prefix_libdirs():
        for name in (_soname(), "libdata.dylib"):
            f = os.path.join(d, name)
            if os.path.exists(f) and f not in found:
                found.append(f)
    return found, False


def _load() -> Tuple[ctypes.CDLL, str]:
    paths, explicit = _candidates()
    errors = []
    for path in paths:
        try:
            return ctypes.CDLL(path), path
        except OSError as exc:
            errors.append(f"{path}: {exc}")
            if explicit:
                break
    if explicit:
        hint = ("LIBDATA_LIBRARY is set but the library cannot be loaded: point it at the "
                "libdata shared library (in a build tree: build/libdata.so), or unset it to "
                "search the usual places")
    else:
        hint = (f"the libdata C library ({_soname()}) was not found. The Python package needs "
                "it installed or named. Do one of:\n"
                "  - install it: cmake --install build --prefix ~/.local (or /usr/local, then run "
                "ldconfig as root)\n"
                "  - name it: export LIBDATA_LIBRARY=/path/to/build/libdata.so\n"
                "Looked in: this package's folder, the dynamic loader's path, "
                + ", ".join(_prefix_libdirs()))
    raise ImportError(hint + ("\n  " + "\n  ".join(errors) if errors else ""))


_dll, path = _load()


class ErrorDetail(ctypes.Structure):
    """struct ld_error_detail (libdata.h). Only read through the pointer the library hands
    out, so fields the library appends later do not matter."""
    _fields_ = [
        ("code", ctypes.c_int),
        ("param", ctypes.c_int),
        ("path", ctypes.c_char_p),
        ("sample", ctypes.c_int64),
    ]


class _Api:
    """Namespace of declared functions: api.ld_convert_run(...), ..."""
    if TYPE_CHECKING:  # set by declare(); for the type checker, any ld_* name is a function
        def __getattr__(self, name: str) -> Any: ...


api = _Api()


Errcheck = Callable[[int, Any, Tuple[Any, ...]], int]


def _errmsg_check(errmsg_fn: Callable[[Any], Optional[bytes]], error_fn: Any = None,
                  kind: Optional[str] = None) -> Errcheck:
    """An errcheck raising LibdataError with errmsg_fn(handle) and the detail of
    error_fn(handle) (parameter name from the `kind` table, file, sample) for rc < 0."""
    def check(rc: int, func: Any, args: Tuple[Any, ...]) -> int:
        if rc < 0:
            msg = ""
            detail: Dict[str, Any] = {}
            handle = args[0] if args else None
            if errmsg_fn is not None and handle:
                raw = errmsg_fn(handle)
                msg = raw.decode("utf-8", "replace") if raw else ""
            if error_fn is not None and handle:
                d = error_fn(handle).contents
                if d.param >= 0:
                    detail["param"] = next((p.name for p in param_table(kind or "").values()
                                            if p.id == d.param), None)
                if d.path:
                    detail["path"] = os.fsdecode(d.path)
                if d.sample >= 0:
                    detail["sample"] = int(d.sample)
            raise LibdataError(rc, strerror(rc), msg, **detail)
        return rc
    return check


def _plain_check(rc: int, func: Any, args: Tuple[Any, ...]) -> int:
    if rc < 0:
        raise LibdataError(rc, strerror(rc), f"{func.__name__} failed")
    return rc


def _version_text() -> str:
    try:
        fn = _dll.ld_version_string
        fn.restype = ctypes.c_char_p
        return fn().decode()
    except (AttributeError, UnicodeDecodeError):
        return "unknown"


def declare(name: str, restype: Any, argtypes: Sequence[Any],
            errcheck: Optional[Errcheck] = None) -> None:
    """Declare one function once. A library without it is not the one these bindings were
    written for: ImportError naming both versions."""
    try:
        fn = getattr(_dll, name)
    except AttributeError:
        raise ImportError(f"{path} (libdata {_version_text()}) has no {name}(): these bindings "
                          f"need libdata {BINDINGS_VERSION}; install the library built from "
                          f"the same source, or point LIBDATA_LIBRARY at it") from None
    fn.restype = restype
    fn.argtypes = argtypes
    if errcheck is not None:
        fn.errcheck = errcheck
    setattr(api, name, fn)


_int, _vp, _cp = ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p

# libdata.h
declare("ld_version_number", ctypes.c_uint, [])
declare("ld_version_string", _cp, [])


def _check_version() -> None:
    """Refuse a library of another major version before anything else is declared."""
    major = int(api.ld_version_number()) // 10000
    if major != ABI_MAJOR:
        raise ImportError(f"{path} is libdata {api.ld_version_string().decode()}, but these "
                          f"bindings need major version {ABI_MAJOR} ({BINDINGS_VERSION})")


_check_version()
declare("ld_strerror", _cp, [_int])
declare("ld_has_feature", _int, [_int])
declare("ld_free", None, [_vp])
declare("ld_describe", _int, [_cp, ctypes.POINTER(_vp), ctypes.POINTER(_vp)])


class DatasetInfo(ctypes.Structure):
    """struct ld_dataset_info (reader.h). Only read through the pointer ld_dataset_stat()
    hands out, so fields the library appends later do not matter."""
    _fields_ = [
        ("path", _cp),
        ("format", _int),
        ("by_libdata", _int),
        ("files", ctypes.c_uint32),
        ("samples", ctypes.c_uint64),
        ("encoded", _int),
        ("encoding", _cp),
        ("quality", _int),
        ("dtype", _int),
        ("label_dtype", _int),
        ("channels", _int),
        ("height", _int),
        ("width", _int),
        ("shape_of_first", _int),
        ("channel_order", _int),
        ("resize_mode", _int),
        ("resize_w", _int),
        ("resize_h", _int),
        ("num_classes", ctypes.c_size_t),
        ("class_names", ctypes.POINTER(_cp)),
        ("label_k", _int),
        ("num_label_names", ctypes.c_size_t),
        ("label_names", ctypes.POINTER(_cp)),
        ("mask_h", _int),
        ("mask_w", _int),
        ("mask_is_label", _int),
        ("boxes", _int),
        ("num_box_classes", ctypes.c_size_t),
        ("box_classes", ctypes.POINTER(_cp)),
        ("box_class_ids", ctypes.POINTER(ctypes.c_int64)),
        ("mask_dtype", _int),
    ]


declare("ld_dataset_stat", _int,
        [_cp, ctypes.POINTER(ctypes.POINTER(DatasetInfo)), ctypes.POINTER(_vp)])

# convert.h. Handles are c_void_p: opaque, never dereferenced here.
declare("ld_convert_errmsg", _cp, [_vp])
declare("ld_convert_error", ctypes.POINTER(ErrorDetail), [_vp])
_convert_check = _errmsg_check(api.ld_convert_errmsg, api.ld_convert_error, "convert")
declare("ld_convert_create", _vp, [])
declare("ld_convert_free", None, [_vp])
declare("ld_convert_set", _int, [_vp, _int, ctypes.c_int64], _convert_check)
declare("ld_convert_get", _int, [_vp, _int, c_int64_p], _convert_check)
declare("ld_convert_set_str", _int, [_vp, _int, _cp], _convert_check)
declare("ld_convert_params", ctypes.POINTER(ParamDesc), [ctypes.POINTER(ctypes.c_size_t)])
declare("ld_convert_param_bounds", _int, [_int, c_int64_p, c_int64_p], _plain_check)
declare("ld_convert_set_log", None, [_vp, LOG_FN, _vp])
declare("ld_convert_set_progress", None, [_vp, PROGRESS_FN, _vp])
declare("ld_convert_run", _int, [_vp, _cp, _cp], _convert_check)
declare("ld_convert_stats", ctypes.POINTER(Progress), [_vp])
declare("ld_shard_part_name", _int, [_cp, _int, _int, ctypes.POINTER(_vp)])
declare("ld_merge", _int, [_cp, ctypes.POINTER(_cp), ctypes.c_size_t, LOG_FN, _vp,
                           ctypes.POINTER(_vp)])


def shard_part_name(out: bytes, index: int, count: int) -> bytes:
    """The file a shard run of part `index` of `count` writes for `out` (ld_shard_part_name):
    bytes in, bytes out. ValueError for an index/count the library refuses."""
    name = _vp()
    rc = api.ld_shard_part_name(out, int(index), int(count), ctypes.byref(name))
    try:
        if rc < 0:
            raise ValueError(f"no part {index} of {count} parts: {strerror(rc)}")
        assert name.value is not None
        return ctypes.string_at(name.value)
    finally:
        api.ld_free(name)


def strerror(code: Optional[int]) -> str:
    if code is None:
        return "error"
    raw = api.ld_strerror(int(code))
    return raw.decode("utf-8", "replace") if raw else f"status {code}"


def version_number() -> int:
    return int(api.ld_version_number())


def weak_callback(cfunctype: Any, obj: Any, method: str, dead_result: Any,
                  error_result: Any = None) -> Any:
    """A ctypes callback calling obj.method(...) through a weak reference to obj.

    No exception may leave a ctypes callback: ctypes would print "Exception ignored on calling
    ctypes callback function" and hand C an unspecified return value. An exception raised in
    the call (also one raised by a signal handler at its first instruction) is given to
    obj._callback_raised(exc), to be re-raised after the C call returns, and C gets
    error_result (for a progress callback: nonzero = cancel)."""
    ref = weakref.ref(obj)

    def call(*args: Any) -> Any:
        try:
            o = ref()
            return dead_result if o is None else getattr(o, method)(*args)
        except BaseException as exc:
            o = ref()
            if o is not None:
                o._callback_raised(exc)
            return error_result
    return cfunctype(call)


@contextmanager
def sigint_deferred() -> Iterator[threading.Event]:
    """While a long C call runs, turn Ctrl-C (SIGINT) into a flag instead of an exception.

    Python's default SIGINT handler raises KeyboardInterrupt at whatever Python instruction
    runs next, which during a C call is inside a ctypes callback, possibly before any `try`
    of ours. With Python's default handler in place (and only on the main thread, where
    handlers live), this installs one that records the signal; the callbacks poll
    `flag.is_set()`, cancel the C call, and the caller raises KeyboardInterrupt after it
    returns. A handler the program installed itself is left alone. Yields the flag."""
    flag = threading.Event()
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        yield flag
        return

    def on_sigint(signum: int, frame: Any) -> None:
        if flag.is_set():  # a second Ctrl-C while the call winds down: the usual behaviour
            raise KeyboardInterrupt
        flag.set()
    signal.signal(signal.SIGINT, on_sigint)
    try:
        yield flag
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


class Handle:
    """What Reader and Converter share: one C handle used by one call at a time (the library's
    rule; ctypes drops the GIL during calls and callbacks run inside them), never from inside
    its own callback, never after close() or in a forked child. Subclasses set self._h and
    implement _release() (free the C handle) and _messages() (their wording)."""

    def _init_handle(self) -> None:
        self._h: Optional[Any] = None  # the C handle (c_void_p)
        self._pid = os.getpid()
        self._lock = threading.RLock()
        self._busy = False

    def _messages(self) -> Dict[str, str]:
        """{"closed", "forked", "busy", "close_busy"}: the LD_ESTATE messages."""
        raise NotImplementedError

    def _release(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Free the C handle. Idempotent; the object is unusable afterwards."""
        with self._lock:
            if self._busy:
                raise LibdataError(LD_ESTATE, None, self._messages()["close_busy"])
            self._release()

    @property
    def closed(self) -> bool:
        return self._h is None

    def __enter__(self) -> Any:
        self._handle()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def _handle(self) -> Any:
        if self._h is None:
            raise LibdataError(LD_ESTATE, None, self._messages()["closed"])
        if self._pid != os.getpid():
            raise LibdataError(LD_ESTATE, None, self._messages()["forked"])
        return self._h

    @contextmanager
    def _calling(self) -> Iterator[Any]:
        """Hold the handle for one call into the library."""
        with self._lock:
            h = self._handle()
            if self._busy:
                raise LibdataError(LD_ESTATE, None, self._messages()["busy"])
            self._busy = True
            try:
                yield h
            finally:
                self._busy = False


def check_int64(v: int, what: str) -> int:
    """v itself, or OverflowError: ctypes would silently wrap it modulo 2**64 (2**64 + 5
    would arrive in C as 5)."""
    if not -(1 << 63) <= v < (1 << 63):
        raise OverflowError(f"{what} = {v} does not fit in a 64-bit signed integer")
    return v


def fsencode(p: Any, what: str = "path") -> bytes:
    """A path argument (str, bytes or os.PathLike) as bytes for C; TypeError otherwise."""
    try:
        b = os.fsencode(p)
    except TypeError:
        raise TypeError(f"{what} must be a str, bytes or os.PathLike, not "
                        f"{type(p).__name__}") from None
    if b"\0" in b:
        raise ValueError(f"{what} contains a NUL byte")
    return b


class Param:
    """One row of a library parameter table (ld_convert_params / ld_reader_params): what the
    keyword arguments of Converter/convert() and Reader are generated from."""
    __slots__ = ("id", "name", "type", "default", "min", "max", "unit", "choices", "help")

    def __init__(self, d: ParamDesc) -> None:
        self.id = int(d.id)
        self.name = d.name.decode()
        self.type = PARAM_TYPES.get(d.type, "int")
        self.min, self.max = int(d.min), int(d.max)
        self.unit = (d.unit or b"").decode()
        self.help = (d.help or b"").decode()
        self.choices: Dict[str, int] = {d.choices[i].name.decode(): int(d.choices[i].value)
                        for i in range(d.nchoices if d.choices else 0)}
        text = (d.def_text or b"").decode()
        self.default: Union[str, bool, float, int, Tuple[float, ...], None]
        if self.type == "enum":
            self.default = text
        elif self.type == "bool":
            self.default = bool(d.default)
        elif self.type == "double":
            self.default = float(text)
        elif self.type == "floats":  # the numbers of def_text ("0.08,1"), or None
            self.default = tuple(float(v) for v in text.split(",")) if text else None
        elif self.type == "string":
            self.default = text or None
        else:
            self.default = int(d.default)

    def __repr__(self) -> str:
        return f"Param({self.name!r}, {self.type}, default={self.default!r})"

    def choice_value(self, value: Any) -> int:
        """An enum's C value from its name (case-insensitive, '-' == '_') or its value."""
        if isinstance(value, str):
            key = value.lower().replace("-", "_")
            if key in self.choices:
                return self.choices[key]
        elif isinstance(value, int) and not isinstance(value, bool) and \
                value in self.choices.values():
            return value
        names = ", ".join(repr(n) for n in self.choices)
        raise ValueError(f"{self.name} must be one of {names}, not {value!r}")

    def choice_name(self, value: int) -> Optional[str]:
        for name, v in self.choices.items():
            if v == value:
                return name
        return None


_tables: Dict[str, Dict[str, Param]] = {}
_param_lock = threading.Lock()


def param_table(kind: str) -> Dict[str, Param]:
    """{name: Param} of "convert" or "reader" (ld_<kind>_params()), read once and cached."""
    table = _tables.get(kind)
    if table is None:
        with _param_lock:
            fn = getattr(api, f"ld_{kind}_params")
            n = ctypes.c_size_t(0)
            arr = fn(ctypes.byref(n))
            table = {}
            for i in range(n.value if arr else 0):
                prm = Param(arr[i])
                table[prm.name] = prm
            _tables[kind] = table
    return table


def convert_params() -> Dict[str, Param]:
    return param_table("convert")


def check_int(value: Any, what: str) -> int:
    """An integer argument (int, NumPy integer: anything with __index__ but a float) that fits
    in int64; TypeError or OverflowError otherwise."""
    if isinstance(value, float) or not hasattr(value, "__index__"):
        raise TypeError(f"{what} must be an integer, not {type(value).__name__}")
    return check_int64(value.__index__(), what)


def check_bool(value: Any, what: str) -> int:
    """A boolean argument (bool, int or NumPy bool_) as 0 or 1; TypeError otherwise."""
    if not isinstance(value, (bool, int)) and type(value).__name__ != "bool_":
        raise TypeError(f"{what} must be a bool, not {type(value).__name__}")
    return int(bool(value))


def set_param(kind: str, h: Any, prm: Param, value: Any) -> None:
    """Hand `value` to parameter `prm` of a handle with the setter of its type."""
    if prm.type == "string":
        if value is not None:
            value = fsencode(value, prm.name)
        getattr(api, f"ld_{kind}_set_str")(h, prm.id, value)
    elif prm.type == "double":
        if isinstance(value, (bool, str)) or not isinstance(value, (int, float)) and \
                not hasattr(value, "__float__"):
            raise TypeError(f"{prm.name} must be a number, not {type(value).__name__}")
        getattr(api, f"ld_{kind}_set_double")(h, prm.id, float(value))
    elif prm.type == "floats":
        vals = [] if value is None else [float(v) for v in value]
        arr = (ctypes.c_float * max(len(vals), 1))(*vals)
        getattr(api, f"ld_{kind}_set_floats")(h, prm.id, arr, len(vals))
    else:
        if prm.type == "enum":
            v = prm.choice_value(value)
        elif prm.type == "bool":
            v = check_bool(value, prm.name)
        else:
            v = check_int(value, prm.name)
        getattr(api, f"ld_{kind}_set")(h, prm.id, v)


# ---- reader.h --------------------------------------------------------------------------------

class Batch(ctypes.Structure):
    """struct ld_batch (reader.h). Read only through the pointer ld_reader_next() gives, so
    fields the library appends later do not matter."""
    _fields_ = [
        ("n", ctypes.c_size_t),
        ("dtype", ctypes.c_int),
        ("layout", ctypes.c_int),
        ("c", ctypes.c_int),
        ("h", ctypes.c_int),
        ("w", ctypes.c_int),
        ("data", ctypes.c_void_p),
        ("data_bytes", ctypes.c_size_t),
        ("label_dtype", ctypes.c_int),
        ("labels", ctypes.c_void_p),
        ("indices", ctypes.POINTER(ctypes.c_uint64)),
        ("epoch", ctypes.c_uint64),
        ("number", ctypes.c_uint64),
        ("label_k", ctypes.c_int),
        ("masks", ctypes.c_void_p),
        ("mask_h", ctypes.c_int),
        ("mask_w", ctypes.c_int),
        ("mask_is_label", ctypes.c_int),
        ("n_boxes", ctypes.c_size_t),
        ("boxes", ctypes.c_void_p),
        ("box_labels", ctypes.c_void_p),
        ("box_flags", ctypes.c_void_p),
        ("box_offsets", ctypes.c_void_p),
        ("mask_dtype", ctypes.c_int),
    ]


declare("ld_reader_errmsg", _cp, [_vp])
declare("ld_reader_error", ctypes.POINTER(ErrorDetail), [_vp])
_reader_check = _errmsg_check(api.ld_reader_errmsg, api.ld_reader_error, "reader")
declare("ld_reader_create", _vp, [])
declare("ld_reader_free", None, [_vp])
declare("ld_reader_set", _int, [_vp, _int, ctypes.c_int64], _reader_check)
declare("ld_reader_set_str", _int, [_vp, _int, _cp], _reader_check)
declare("ld_reader_set_double", _int, [_vp, _int, ctypes.c_double], _reader_check)
declare("ld_reader_set_floats", _int, [_vp, _int, ctypes.POINTER(ctypes.c_float), ctypes.c_size_t],
        _reader_check)
declare("ld_reader_get", _int, [_vp, _int, c_int64_p], _reader_check)
declare("ld_reader_get_info", _int, [_vp, _int, c_int64_p], _reader_check)
declare("ld_reader_set_mean_image", _int,
        [_vp, ctypes.POINTER(ctypes.c_float), _int, _int, _int], _reader_check)
declare("ld_reader_params", ctypes.POINTER(ParamDesc), [ctypes.POINTER(ctypes.c_size_t)])
declare("ld_reader_param_bounds", _int, [_int, c_int64_p, c_int64_p], _plain_check)
declare("ld_reader_open", _int, [_vp, _cp], _reader_check)
declare("ld_reader_next", _int, [_vp, ctypes.POINTER(ctypes.POINTER(Batch))], _reader_check)
declare("ld_reader_set_log", None, [_vp, LOG_FN, _vp])
declare("ld_reader_take_data", _int, [_vp, _vp], _reader_check)
declare("ld_reader_buffer_alloc", _vp, [_vp, ctypes.POINTER(ctypes.c_size_t)])
declare("ld_reader_buffer_free", None, [_vp])


class CropBox(ctypes.Structure):
    """struct ld_crop_box (reader.h; the caller allocates it, its layout is fixed in 1.x)."""
    _fields_ = [("x", ctypes.c_int), ("y", ctypes.c_int), ("w", ctypes.c_int),
                ("h", ctypes.c_int), ("mirror", ctypes.c_int)]


declare("ld_reader_crop_box", _int,
        [_vp, ctypes.c_uint64, ctypes.c_uint64, _int, _int, ctypes.POINTER(CropBox)],
        _plain_check)

def reader_params() -> Dict[str, Param]:
    return param_table("reader")
