"""libdata.convert: an image folder (or a list file) -> an HDF5 file or an LMDB database.

    import libdata
    s = libdata.convert("images/", "train.h5", resize=64, quality=90,
                        progress=lambda p: print(p.done, "/", p.total))
    print(s.converted, s.skipped, s.warnings)

Every parameter of the library's table (ld_convert_params(), libdata.convert_params()) is a
keyword argument under its table name, typed by the table (enums by their choice names:
format="lmdb", resize_mode="crop"); the named keywords below are dataconv's shortcuts.
"""
import ctypes
import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from . import _lib
from ._lib import LibdataError, api

PathLike = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]

# Aliases of choice names, as dataconv accepts them; the names themselves come from the table.
FORMAT_ALIASES = {None: "auto", "h5": "hdf5"}
MODE_ALIASES = {"stretch": "squash", "fit": "pad"}
ENCODE_TYPES = {"jpg": 0, "jpeg": 0, "png": 1}

_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d*)?)\s*([kmgt]?)(i?b)?\s*$", re.I)


@dataclass(frozen=True)
class ConvertProgress:
    """A snapshot of struct ld_progress (the C struct is only valid during the callback)."""
    total: int
    done: int
    converted: int
    skipped: int
    skipped_format: int
    skipped_io: int
    skipped_limit: int
    bytes_in: int
    bytes_out: int
    elapsed: float
    files_out: int
    resumed: int
    unlisted: int
    unlisted_name: int
    unlisted_hidden: int
    unlisted_special: int
    unlisted_loose: int
    first_frame_only: int
    unlisted_unsafe: int

    @classmethod
    def from_c(cls, p: _lib.Progress) -> "ConvertProgress":
        return cls(**p.as_dict())


@dataclass
class ConvertSummary:
    """What a finished run did. `warnings` holds the library's LD_LOG_WARN messages, one per
    skipped file (each names the path and the reason)."""
    output: str
    total: int = 0
    converted: int = 0
    skipped: int = 0
    skipped_format: int = 0
    skipped_io: int = 0
    skipped_limit: int = 0
    bytes_in: int = 0
    bytes_out: int = 0
    elapsed: float = 0.0
    files_out: int = 0
    resumed: int = 0
    unlisted: int = 0
    unlisted_name: int = 0
    unlisted_hidden: int = 0
    unlisted_special: int = 0
    unlisted_loose: int = 0
    first_frame_only: int = 0
    unlisted_unsafe: int = 0
    warnings: List[str] = field(default_factory=list)

    @property
    def skipped_reasons(self) -> Dict[str, int]:
        return {"format": self.skipped_format, "io": self.skipped_io,
                "limit": self.skipped_limit}

    def as_dict(self) -> Dict[str, Any]:
        d = dict(self.__dict__)
        d["warnings"] = list(self.warnings)
        return d


def _choice(value: Any, table: Dict[Any, Any], what: str) -> Any:
    key = value.lower() if isinstance(value, str) else value
    if key not in table:
        names = ", ".join(repr(k) for k in table if isinstance(k, str))
        raise ValueError(f"{what} must be one of {names}, not {value!r}")
    return table[key]


def parse_size(value: Union[int, str], what: str = "split") -> int:
    """Bytes from an int or a string such as "512M", "2GiB" (powers of 1024)."""
    if isinstance(value, str):
        m = _SIZE_RE.match(value)
        if not m:
            raise ValueError(f"{what}: cannot read {value!r} as a size (e.g. 1000000, 512M, 2G)")
        return int(float(m.group(1)) * 1024 ** "_kmgt".index((m.group(2) or "_").lower()))
    return _lib.check_int(value, what)


class Converter(_lib.Handle):
    """A converter handle (ld_convert): set parameters, run one or more conversions.

    Parameters are sticky across runs, as in C. Use as a context manager, or call close();
    close() is idempotent and __del__ is a fallback.
    """

    def __init__(self, log: Optional[Callable[[int, str], None]] = None,
                 progress: Optional[Callable[[ConvertProgress], Any]] = None,
                 **options: Any) -> None:
        self._init_handle()  # one call at a time, no close() inside one (_lib.Handle)
        self._user_log = log
        self._user_progress = progress
        self._warnings: List[str] = []
        self._cb_error: Optional[BaseException] = None
        self._sigint: Optional[Any] = None  # the flag of sigint_deferred() while run() is in the library
        h = api.ld_convert_create()
        if not h:
            raise LibdataError(_lib.LD_ENOMEM, None, "ld_convert_create: out of memory")
        self._h = ctypes.c_void_p(h)
        # The CFUNCTYPE objects must outlive every call that may invoke them: keep them here.
        # They reach self through a weak reference, so there is no cycle and a dropped
        # Converter is freed at once.
        self._log_cb = _lib.weak_callback(_lib.LOG_FN, self, "_on_log", None)
        self._progress_cb = _lib.weak_callback(_lib.PROGRESS_FN, self, "_on_progress", 1)
        api.ld_convert_set_log(self._h, self._log_cb, None)
        api.ld_convert_set_progress(self._h, self._progress_cb, None)
        try:
            self.configure(**options)
        except BaseException:
            self.close()
            raise

    # -- lifetime --------------------------------------------------------------------------
    def _messages(self) -> Dict[str, str]:
        return {
            "closed": "the converter is closed",
            "forked": "the converter was created in another process (before fork)",
            "busy": "converter used from inside its own callback",
            "close_busy": "close() called from inside a converter callback",
        }

    def _release(self) -> None:
        h, self._h = self._h, None
        # A handle inherited through fork() is the parent's: freeing it here could touch
        # state that only made sense in the parent. Leave it to the parent.
        if h is not None and self._pid == os.getpid():
            api.ld_convert_free(h)

    def _on_log(self, user: Any, level: int, msg: Optional[bytes]) -> None:
        try:
            text = msg.decode("utf-8", "replace") if msg else ""
            if level == _lib.LD_LOG_WARN:
                self._warnings.append(text)
            if self._user_log is not None:
                self._user_log(level, text)
        except BaseException as exc:  # never let an exception unwind through C
            if self._cb_error is None:
                self._cb_error = exc

    def _callback_raised(self, exc: BaseException) -> None:
        if self._cb_error is None:
            self._cb_error = exc

    def _on_progress(self, user: Any, p: Any) -> int:
        if self._cb_error is not None:
            return 1
        if self._sigint is not None and self._sigint.is_set():
            return 1  # Ctrl-C: cancel; run() raises KeyboardInterrupt
        if self._user_progress is None:
            return 0
        try:
            return 1 if self._user_progress(ConvertProgress.from_c(p.contents)) else 0
        except BaseException as exc:
            # Cancel the run and re-raise the exception from run().
            self._cb_error = exc
            return 1

    # -- parameters ------------------------------------------------------------------------
    @staticmethod
    def _param(name: str) -> _lib.Param:
        table = _lib.convert_params()
        if name not in table:
            raise ValueError(f"unknown convert parameter {name!r}; known: "
                             f"{', '.join(sorted(table))}")
        return table[name]

    def set(self, name: str, value: Any) -> None:
        """Set a parameter by its ld_convert_params() name, with the setter of its type
        (enums take their choice names)."""
        prm = self._param(name)
        with self._calling() as h:
            _lib.set_param("convert", h, prm, value)

    def get(self, name: str) -> Union[int, str, None]:
        """An integer or boolean parameter's value; an enum's choice name."""
        prm = self._param(name)
        v = ctypes.c_int64()
        with self._calling() as h:
            api.ld_convert_get(h, prm.id, ctypes.byref(v))
        if prm.type == "enum":
            return prm.choice_name(v.value)
        return v.value

    def configure(self, quality: Any = None, resize: Any = None, max_side: Any = None,
                  mode: Any = None, pad_value: Any = None, gray: Any = None, rgb: Any = None,
                  format: Any = None, threads: Any = None, shuffle: Any = None,
                  seed: Any = None, strict: Any = None, max_pixels: Any = None,
                  split: Any = None, deflate: Any = None, check_size: Any = None,
                  encoded: Any = None, encode_type: Any = None, list_file: Any = None,
                  note: Any = None, shard: Any = None, **params: Any) -> None:
        """Set options; None leaves an option as it is. See convert() for their meaning."""
        ints: List[Tuple[str, Any]] = []
        if shard is not None:
            # dataconv --shard K/N: part K (from 0) of N
            if not isinstance(shard, (tuple, list)) or len(shard) != 2:
                raise ValueError(f"shard must be (index, count), e.g. (3, 8), not {shard!r}")
            k, n = (_lib.check_int(v, "shard") for v in shard)
            if n < 1:  # shard_count 0 is "not sharded": not what shard=(k, 0) asks for
                raise ValueError(f"shard={shard!r}: the number of parts must be at least 1 "
                                 f"(shard=None converts everything into one output)")
            ints += [("shard_count", n), ("shard_index", k)]
        if quality is not None:
            ints.append(("quality", _lib.check_int(quality, "quality")))
        if resize is not None:
            if isinstance(resize, (tuple, list)):
                if len(resize) != 2:
                    raise ValueError(f"resize must be N or (width, height), not {resize!r}")
                w, h = (_lib.check_int(v, "resize") for v in resize)
            else:
                w = h = _lib.check_int(resize, "resize")
            ints += [("resize_w", w), ("resize_h", h)]
        if max_side is not None:
            # dataconv --max-side N: keep the aspect, longer side at most N, never enlarge.
            n = _lib.check_int(max_side, "max_side")
            ints += [("resize_mode", "max"), ("resize_w", n), ("resize_h", n)]
        if mode is not None:
            ints.append(("resize_mode", MODE_ALIASES.get(mode, mode)))
        if pad_value is not None:
            ints.append(("pad_value", _lib.check_int(pad_value, "pad_value")))
        if gray is not None:
            ints.append(("gray", _lib.check_bool(gray, "gray")))
        if rgb is not None:
            ints.append(("channel_order", "rgb" if _lib.check_bool(rgb, "rgb") else "bgr"))
        if format is not None:
            key = format.lower() if isinstance(format, str) else format
            ints.append(("format", FORMAT_ALIASES.get(key, format)))
        for name, value in (("threads", threads), ("seed", seed), ("max_pixels", max_pixels),
                            ("deflate", deflate)):
            if value is not None:
                ints.append((name, _lib.check_int(value, name)))
        for name, value in (("shuffle", shuffle), ("strict", strict),
                            ("check_size", check_size), ("encoded", encoded)):
            if value is not None:
                ints.append((name, _lib.check_bool(value, name)))
        if split is not None:
            ints.append(("split_bytes", parse_size(split)))
        if encode_type is not None:
            png = _choice(encode_type, ENCODE_TYPES, "encode_type")
            ints += [("encoded", 1), ("encode_png", png)]
        # Unknown keywords go through the library's own table (the single source of truth).
        table = _lib.convert_params()
        for name, value in params.items():
            if name not in table:
                raise TypeError(f"unexpected keyword argument {name!r}")
            if value is not None:
                ints.append((name, value))
        if list_file is not None:
            ints.append(("list_file", list_file))
        if note is not None:
            ints.append(("source_note", str(note)))
        for name, value in ints:
            self.set(name, value)

    # -- running ---------------------------------------------------------------------------
    def run(self, src: PathLike, out: PathLike) -> "ConvertSummary":
        """Convert `src` into `out`; returns a ConvertSummary. Raises LibdataError on failure
        (the output name is then left untouched), or the exception a callback raised.
        Ctrl-C (SIGINT) cancels the run: the library removes its temporary output and
        KeyboardInterrupt is raised once it has returned."""
        bsrc, bout = _lib.fsencode(src, "src"), _lib.fsencode(out, "out")
        self._handle()
        self._warnings = []
        self._cb_error = None
        try:
            with _lib.sigint_deferred() as sigint:
                self._sigint = sigint
                try:
                    with self._calling() as h:
                        api.ld_convert_run(h, bsrc, bout)
                finally:
                    self._sigint = None
        except LibdataError:
            if sigint.is_set():
                raise KeyboardInterrupt from None  # the library cancelled and cleaned up
            if self._cb_error is not None:
                raise self._cb_error
            raise
        if self._cb_error is not None:
            raise self._cb_error
        if sigint.is_set():
            # Ctrl-C came too late to cancel: the output is complete and published.
            raise KeyboardInterrupt
        count = self.get("shard_count")
        if count:  # the summary names the part the run wrote (or found complete)
            index = int(self.get("shard_index") or 0)
            out = os.fsdecode(_lib.shard_part_name(bout, index, int(count)))
        return self.summary(out)

    def summary(self, out: PathLike = "") -> ConvertSummary:
        s = ConvertSummary(output=os.fsdecode(out), warnings=list(self._warnings))
        with self._calling() as h:
            st = api.ld_convert_stats(h)
            if st:
                for k, v in st.contents.as_dict().items():
                    setattr(s, k, v)
        return s


def convert(src: PathLike, out: PathLike, quality: Optional[int] = None,
            resize: Union[None, int, Tuple[int, int]] = None, max_side: Optional[int] = None,
            mode: Optional[str] = None, pad_value: Optional[int] = None,
            gray: Optional[bool] = None, rgb: Optional[bool] = None,
            format: Optional[str] = None, threads: Optional[int] = None,
            shuffle: Optional[bool] = None, seed: Optional[int] = None,
            strict: Optional[bool] = None, max_pixels: Optional[int] = None,
            split: Union[None, int, str] = None, deflate: Optional[int] = None,
            check_size: Optional[bool] = None, encoded: Optional[bool] = None,
            encode_type: Optional[str] = None, list_file: Optional[PathLike] = None,
            note: Optional[str] = None, shard: Optional[Tuple[int, int]] = None,
            progress: Optional[Callable[["ConvertProgress"], Any]] = None,
            log: Optional[Callable[[int, str], None]] = None,
            **params: Any) -> "ConvertSummary":
    """Convert into `out` (HDF5 file, or LMDB directory) any input dataconv takes: an image
    folder (class sub-folders), a tar archive, with list_file the files of a Caffe
    "relative/path label" list under `src`, or a dataset -- an HDF5 file (libdata's, h5py or
    Caffe-style /data + /label, a merged file), a split .txt list, an LMDB (libdata's or
    convert_imageset's, raw or encoded). A dataset's labels, class names, names and boxes
    carry over and `source` names it; an encoded one stays encoded, its bytes copied
    unchanged unless quality, resize, gray or encode_type asks for a change (datasets with
    masks are refused).

    quality      1..100 re-encode as JPEG at that quality; 0/None store raw pixels
    resize       N or (width, height); None keeps the source size
    max_side     N: keep the aspect ratio, longer side at most N (mode "max")
    mode         "squash" (default) | "crop" | "pad" | "max" ("stretch", "fit" as in dataconv)
    pad_value    gray level of the padding for mode="pad"
    decode_scale "auto" (default): JPEGs shrunk >= 4x are decoded at 1/2..1/8 DCT scale,
                 keeping >= 2x the output size; "exact": always decoded whole
    gray         True: 1-channel output;   rgb: True: RGB order instead of BGR
    format       "hdf5" | "lmdb" | None (from the output name)
    threads      worker threads (0/None: all cores)
    shuffle,seed shuffle the input order reproducibly
    strict       stop at the first bad file instead of skipping it
    max_pixels   refuse larger images (decompression bombs)
    split        HDF5: bytes per file (int or "512M"), writes <out>.txt listing the files
    deflate      HDF5: deflate level 1..9 for raw data
    check_size   every image must have the same size
    encoded      store encoded images; encode_type "jpg" | "png" (implies encoded)
    restart_markers  True: the JPEGs `quality` writes carry restart markers, so a
                 random_resized_crop reader Huffman-decodes only each crop (~5 % larger files)
    list_file    a "path label" list; src is then the root folder of the listed paths
    note         free text stored with the dataset
    shard        (K, N): convert part K (from 0) of N contiguous parts of the whole listing
                 into OUT-0000K-of-0000N.h5 (.lmdb); a complete part of the same run is left
                 as it is (summary.resumed == 1), another run's part is refused. Then merge
                 the parts (dataconv merge). Same as shard_index=K, shard_count=N.
    progress     callable(ConvertProgress) about 10x a second; return True to cancel
    log          callable(level, message) for every library message
    Returns a ConvertSummary; raises LibdataError (with the library's message) on failure.
    """
    with Converter(log=log, progress=progress, quality=quality, resize=resize,
                   max_side=max_side, mode=mode,
                   pad_value=pad_value, gray=gray, rgb=rgb, format=format, threads=threads,
                   shuffle=shuffle, seed=seed, strict=strict, max_pixels=max_pixels, split=split,
                   deflate=deflate, check_size=check_size, encoded=encoded,
                   encode_type=encode_type, list_file=list_file, note=note, shard=shard,
                   **params) as c:
        return c.run(src, out)


def merge(parts: Optional[Sequence[PathLike]], out: PathLike,
          log: Optional[Callable[[int, str], None]] = None) -> str:
    """One dataset `out` from the parts of a sharded conversion (convert(..., shard=(K, N)),
    dataconv --shard K/N), as `dataconv merge OUT [PART...]` does (ld_merge): HDF5 parts
    become a merged file of virtual datasets over them (keep the parts beside it), LMDB parts
    one database with a single run's keys. `parts` in any order; None or [] finds every
    `<out stem>-*-of-*<ext>` beside `out`. `log(level, message)` hears what was found and
    done. Returns `out` as a str; raises LibdataError (with the library's message: a part
    missing, from another run, damaged...) on failure, leaving `out` untouched."""
    bout = _lib.fsencode(out, "out")
    names = [_lib.fsencode(p, "parts") for p in (parts or [])]
    arr = (ctypes.c_char_p * max(len(names), 1))(*names)
    err = ctypes.c_void_p()
    raised: List[BaseException] = []

    def on_log(user: Any, level: int, msg: Optional[bytes]) -> None:
        if log is None or raised:
            return
        try:
            log(int(level), msg.decode("utf-8", "replace") if msg else "")
        except BaseException as exc:  # noqa: BLE001 -- re-raised after the C call
            raised.append(exc)

    cb = _lib.LOG_FN(on_log)  # kept alive until ld_merge returns
    rc = api.ld_merge(bout, arr if names else None, len(names), cb, None, ctypes.byref(err))
    try:
        msg = ctypes.string_at(err.value).decode("utf-8", "replace") if err.value else ""
    finally:
        api.ld_free(err)
    if raised:
        raise raised[0]
    if rc < 0:
        raise LibdataError(rc, _lib.strerror(rc), msg, path=os.fsdecode(bout))
    return os.fsdecode(bout)
