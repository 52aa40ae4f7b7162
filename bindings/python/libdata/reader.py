"""libdata.Reader: fixed-size mini-batches from an HDF5 file, a split list or an LMDB directory.

    with libdata.Reader("train.h5", batch_size=64, shuffle=True, dtype="float32",
                        scale=1/255) as r:
        print(len(r), r.info.shape, r.info.classes)
        for epoch in range(10):
            for data, labels in r:        # one `for` loop = one epoch
                ...                       # data: (n, C, H, W) float32, labels: (n,) int32

Epochs: each iter() (each `for` loop) starts a new epoch. A loop left with `break` in epoch e
does not resume e: the next loop gets epoch e + 1 from its first batch, exactly the batches an
uninterrupted run gives in epoch e + 1 (the same as Reader(..., epoch=e + 1)). next_batch()
is the lower-level call that continues the current epoch until it returns None.

Batches are NumPy copies by default. With copy=False they are read-only views of the
reader's own buffer, valid only until the next batch is taken (as in C): copy what you keep.
A copy costs no copying: the reader hands over the batch's buffer (ld_reader_take_data) and
continues with a buffer of a batch the program has dropped (two spares, allocated at open), so
copies are as fast as views; memory is the reader's ring, the two spares and the batches the
program holds.

Fork: a reader belongs to the process that opened it. Using it in a forked child raises
LibdataError(LD_ESTATE) (its worker threads do not exist there); open a new Reader in the child.
The parent's reader keeps working.
"""
import ctypes
import functools
import os
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, NoReturn, Optional, Sequence, Tuple, Union

import numpy as np

from . import _lib
from ._lib import LibdataError, api
from .dataset import stat

PathLike = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]
# (data, labels), or with segmentation masks beside class labels (data, labels, masks): the
# order of Reader.fields
Batch = Tuple[np.ndarray, ...]

# Read-only values (ld_reader_info in reader.h; fixed forever). The parameters themselves come
# from the library's table (_lib.reader_params()).
_INFO = {
    "samples": 200, "epoch_samples": 201, "epoch_batches": 202, "c": 203, "h": 204, "w": 205,
    "prefetch": 206, "threads": 207, "memory": 208, "encoded": 209, "order": 210,
    "label_k": 211, "mask": 212, "boxes": 213, "mask_dtype": 214,
}
_MASK_U16 = 0x203  # LD_DTYPE_U16 (types.h): masks stored as uint16
# Python spellings of the keyword arguments that are not table names.
_ALIASES = {"batch_size": "batch"}
_NHWC = _lib.reader_params()["layout"].choices["nhwc"]
_SHUFFLE = {None: None, False: "sequential", True: "shuffle", "sequential": "sequential",
            "shuffle": "shuffle", "block": "block_shuffle", "block_shuffle": "block_shuffle"}


@functools.lru_cache(maxsize=None)
def _np_types() -> Dict[int, np.dtype]:
    """{C ld_dtype value: NumPy dtype}, from the choice names of the dtype parameters (read
    once: _take() needs it for every batch)."""
    table = _lib.reader_params()
    out = {}
    for name in ("dtype", "label_dtype"):
        for choice, value in table[name].choices.items():
            out[value] = np.dtype(choice)
    return out


@dataclass(frozen=True)
class DatasetInfo:
    """What an open reader delivers and what the dataset is."""
    samples: int                 # samples in the dataset (all ranks)
    epoch_samples: int           # samples this rank delivers per epoch
    epoch_batches: int           # batches this rank delivers per epoch
    channels: int
    height: int
    width: int
    layout: str                  # "NCHW" | "NHWC"
    channel_order: Optional[str]  # "BGR" | "RGB" | "GRAY" | None (unknown)
    encoded: bool                # the dataset stores encoded images
    dtype: np.dtype
    label_dtype: np.dtype
    prefetch: int
    threads: int
    memory: int                  # bytes the reader allocated
    classes: Optional[List[str]]  # class names the dataset records (libdata.stat())
    description: str             # ld_describe()'s text, for people ("" if unavailable)
    label_k: int = 0             # label vectors: K values per sample, labels (n, K); 0: (n,)
    # what each batch holds, in order: ("data", "label"); ("data", "label", "mask") with
    # segmentation masks beside class labels; ("data", "label") with label = the masks
    # (n, 1, H, W) uint8 when the masks are the dataset's label (HDF5 /label (N, 1, H, W))
    fields: Tuple[str, ...] = ("data", "label")
    mask_is_label: bool = False
    mask_dtype: Optional[np.dtype] = None  # the masks' dtype (uint8 or uint16); None without

    @property
    def shape(self) -> Tuple[int, int, int]:
        """One sample's shape in the output layout."""
        if self.layout == "NHWC":
            return (self.height, self.width, self.channels)
        return (self.channels, self.height, self.width)

    @property
    def num_classes(self) -> Optional[int]:
        return len(self.classes) if self.classes else None


def _dtype(value: Any, what: str) -> str:
    """A dtype parameter's choice name from a NumPy dtype or its name."""
    try:
        dt = np.dtype(value)
    except TypeError:
        raise TypeError(f"{what} must be a NumPy dtype or its name, not {value!r}") from None
    choices = _lib.reader_params()[what].choices
    if dt.name not in choices:
        raise ValueError(f"{what} must be one of {', '.join(choices)}, not {dt.name}")
    return dt.name


def _rrc_params(value: Any) -> Dict[str, Any]:
    """random_resized_crop=size | (size,) | (size, scale) | (size, scale, ratio), size being N
    or (width, height): the table parameters rrc_w, rrc_h, rrc_scale, rrc_ratio."""
    def pair(v: Any, what: str, cast: Callable[[Any], Any]) -> Tuple[Any, Any]:
        if not isinstance(v, (tuple, list)) or len(v) != 2:
            raise ValueError(f"random_resized_crop: {what} must be a pair, not {v!r}")
        return cast(v[0]), cast(v[1])
    parts = list(value) if isinstance(value, (tuple, list)) else [value]
    if len(parts) == 2 and all(isinstance(v, (int, np.integer)) for v in parts):
        parts = [tuple(parts)]  # (width, height)
    if not 1 <= len(parts) <= 3:
        raise ValueError("random_resized_crop must be size, (size, scale) or (size, scale, "
                         f"ratio), e.g. (224, (0.08, 1.0), (3/4, 4/3)), not {value!r}")
    size = parts[0]
    if isinstance(size, (tuple, list)):
        w, h = pair(size, "size", lambda v: _lib.check_int(v, "random_resized_crop"))
    else:
        w = h = _lib.check_int(size, "random_resized_crop")
    out: Dict[str, Any] = {"rrc_w": w, "rrc_h": h}
    if len(parts) > 1:
        out["rrc_scale"] = list(pair(parts[1], "scale", float))
    if len(parts) > 2:
        out["rrc_ratio"] = list(pair(parts[2], "ratio", float))
    return out


class Reader(_lib.Handle):
    """A libdata reader (ld_reader): a context manager and an iterator of (data, labels).

    Arguments (all keyword except path):
      batch_size     samples per batch (default 64); drop_last: drop the short last batch
      shuffle        False | True (full permutation each epoch) | "block" (chunk-local shuffle)
      seed           seed of the order and of random crops/mirrors
      rank, world    this process's share: 0 <= rank < world (distributed training)
      threads        worker threads (0: all cores); prefetch: batches prepared ahead (0: auto)
      dtype          "uint8" (default) | "float32" | "uint16" (a 16-bit dataset's values above
                     255 need uint16 or float32); label_dtype "int32" | "float32"
      layout         "NCHW" (default) | "NHWC"
      crop           N or (width, height); random_crop: random position instead of the center
      mirror         random left-right flips
      random_resized_crop
                     torchvision's RandomResizedCrop: size N or (width, height), or
                     (size, (scale_min, scale_max)) or (size, scale, (ratio_min, ratio_max)),
                     e.g. (224, (0.08, 1.0), (3/4, 4/3)) (those are the defaults); with
                     mirror=True it is RandomResizedCrop + RandomHorizontalFlip. JPEGs decode
                     only the crop box at a reduced DCT scale; rrc_full_decode=True decodes
                     them whole (reference). rrc_filter="bilinear" (default: torchvision's
                     antialiased bilinear) or "lanczos3" (the converter's, sharper, slower).
                     crop_box() gives a sample's box.
      mean           per-channel values (sequence), a mean image file (path: Caffe's
                     .binaryproto or NumPy .npy, C x H x W or H x W x C), or a (C,H,W) ndarray;
                     float output only
      scale          multiplier after the mean (e.g. 1/255); float output only
      channel_order  "BGR" | "RGB" | None (as stored); swap: reverse channels unconditionally
      memory_budget  bytes the reader may use (prefetch is reduced to fit)
      epoch          the epoch to start at (resume); data_name, label_name: HDF5 dataset names
                     (each iter() starts a new epoch, also after a `break`: see the module
                     docstring)
      copy           True (default): batches are copies; False: read-only views valid until
                     the next batch
      log            callable(level, message) for the library's messages during open/next
    Other integer parameters of ld_reader_params() may be given by their table name.
    """

    def __init__(self, path: PathLike, batch_size: Optional[int] = None,
                 shuffle: Union[None, bool, str] = None, seed: Optional[int] = None,
                 rank: Optional[int] = None, world: Optional[int] = None,
                 threads: Optional[int] = None, prefetch: Optional[int] = None,
                 dtype: Any = None, layout: Optional[str] = None,
                 crop: Union[None, int, Tuple[int, int]] = None,
                 random_resized_crop: Any = None,
                 random_crop: Optional[bool] = None, mirror: Optional[bool] = None,
                 mean: Union[None, PathLike, Sequence[float], np.ndarray] = None,
                 scale: Optional[float] = None, memory_budget: Optional[int] = None,
                 drop_last: Optional[bool] = None, label_dtype: Any = None,
                 channel_order: Optional[str] = None, swap: Optional[bool] = None,
                 window: Optional[int] = None, epoch: int = 0, dct_scale: Optional[bool] = None,
                 data_name: Optional[str] = None, label_name: Optional[str] = None,
                 copy: bool = True, log: Optional[Callable[[int, str], None]] = None,
                 **params: Any) -> None:
        self._init_handle()  # one call at a time, no close() inside one (_lib.Handle)
        self._copy = bool(copy)
        self._has_labels: Optional[bool] = None
        self._user_log = log
        self._log_error: Optional[BaseException] = None
        self._info: Optional[DatasetInfo] = None
        self._batch = ctypes.POINTER(_lib.Batch)()
        self.path = os.fsdecode(path) if isinstance(path, (str, bytes, os.PathLike)) else path
        bpath = _lib.fsencode(path)
        self.indices: Optional[np.ndarray] = None  # dataset indices of the last batch (int64)
        self.batch_epoch: Optional[int] = None  # epoch and number of the last batch
        self.batch_number: Optional[int] = None
        self._epoch = _lib.check_int(epoch, "epoch")
        table = _lib.reader_params()

        # Keywords named like table parameters; None = the library's default.
        given: Dict[str, Any] = dict(seed=seed, rank=rank, world=world, threads=threads, prefetch=prefetch,
                     random_crop=random_crop, mirror=mirror, scale=scale,
                     memory_budget=memory_budget, drop_last=drop_last, swap=swap,
                     window=window, dct_scale=dct_scale, data_name=data_name,
                     label_name=label_name, batch=batch_size)
        for name, value in params.items():
            name = _ALIASES.get(name, name)
            if name not in table or name == "epoch":
                raise TypeError(f"unexpected keyword argument {name!r}")
            given[name] = value
        # Python shortcuts mapped onto table parameters.
        if shuffle is not None:
            key = shuffle if isinstance(shuffle, (bool, str)) else None
            if key not in _SHUFFLE:
                raise ValueError(f"shuffle must be False, True or 'block', not {shuffle!r}")
            given["order"] = _SHUFFLE[key]
        if dtype is not None:
            given["dtype"] = _dtype(dtype, "dtype")
        if label_dtype is not None:
            given["label_dtype"] = _dtype(label_dtype, "label_dtype")
        if layout is not None:
            if not isinstance(layout, str) or layout.lower() not in table["layout"].choices:
                raise ValueError(f"layout must be 'NCHW' or 'NHWC', not {layout!r}")
            given["layout"] = layout.lower()
        if channel_order is not None:
            if not isinstance(channel_order, str) or \
                    channel_order.lower() not in table["channel_order"].choices:
                raise ValueError(f"channel_order must be 'BGR', 'RGB' or None, not "
                                 f"{channel_order!r}")
            given["channel_order"] = channel_order.lower()
        if crop is not None:
            if isinstance(crop, (tuple, list)):
                if len(crop) != 2:
                    raise ValueError(f"crop must be N or (width, height), not {crop!r}")
                cw, ch = (_lib.check_int(v, "crop") for v in crop)
            else:
                cw = ch = _lib.check_int(crop, "crop")
            given["crop_w"], given["crop_h"] = cw, ch
        if random_resized_crop is not None:
            given.update(_rrc_params(random_resized_crop))
        mean_image = None
        if mean is not None:
            if isinstance(mean, (str, bytes, os.PathLike)):
                given["mean_file"] = mean
            else:
                arr = np.asarray(mean)
                if arr.dtype.kind not in "uif" or arr.ndim not in (1, 3):
                    raise TypeError("mean must be per-channel numbers, a (C,H,W) array or "
                                    "the path of a mean file")
                if arr.ndim == 1:
                    given["mean_values"] = [float(v) for v in arr]
                else:
                    if arr.shape[0] > 4:
                        raise ValueError(f"a mean image must have shape (C, H, W) with C <= 4, "
                                         f"not {arr.shape}")
                    # ld_reader_set_mean_image copies it at each open
                    mean_image = np.ascontiguousarray(arr, dtype=np.float32)
        settings = [(table[name], value) for name, value in given.items() if value is not None]
        # Everything open needs again when iter() restarts the reader at a new epoch.
        self._open_args = (bpath, settings, mean_image)
        self._mid_epoch = False  # a batch of the current epoch was taken, its end not seen
        self._generation = 0     # bumped when a restart ends the iterators of the old epoch
        # Keep the CFUNCTYPE object alive as long as the handle may call it (the owner holds
        # it). It reaches the reader through a weak reference: no reference cycle, so a
        # dropped Reader is freed at once.
        self._log_cb = _lib.weak_callback(_lib.LOG_FN, self, "_on_log", None) if log else None
        self._owner: Optional[_Owner] = None
        self._pool: Optional[_BufferPool] = None
        self._open(self._epoch)

    def _open(self, epoch: int) -> None:
        """Create and open a C reader starting at `epoch` with the options given to
        __init__ (the C reader's epoch is fixed at open: restarting mid-epoch means a new
        handle). Closes the reader on failure."""
        bpath, settings, mean_image = self._open_args
        h = api.ld_reader_create()
        if not h:
            self.close()
            raise LibdataError(_lib.LD_ENOMEM, None, "ld_reader_create: out of memory")
        self._h = ctypes.c_void_p(h)
        self._owner = _Owner(self._h, self._log_cb)
        self._pool = _BufferPool() if self._copy else None  # this handle's batch size
        try:
            with self._calling() as hh:
                if self._log_cb is not None:
                    api.ld_reader_set_log(hh, self._log_cb, None)
                for prm, value in settings:
                    _lib.set_param("reader", hh, prm, value)
                _lib.set_param("reader", hh, _lib.reader_params()["epoch"], epoch)
                if mean_image is not None:
                    c, hgt, w = mean_image.shape
                    api.ld_reader_set_mean_image(
                        hh, mean_image.ctypes.data_as(ctypes.POINTER(ctypes.c_float)), c, hgt, w)
                api.ld_reader_open(hh, bpath)
                if self._pool is not None:
                    self._pool.fill(hh)
            self._raise_log_error()
        except BaseException:
            self.close()
            raise
        self._epoch = epoch
        self._mid_epoch = False

    # -- lifetime (close, context manager, fork and re-entry checks: _lib.Handle) ------------
    def _messages(self) -> Dict[str, str]:
        return {
            "closed": f"{self.path}: the reader is closed",
            "forked": f"{self.path}: this reader was opened in process {self._pid} before a "
                      f"fork; open a new Reader in process {os.getpid()}",
            "busy": f"{self.path}: reader used from inside its own callback",
            "close_busy": f"{self.path}: close() called from inside a reader call",
        }

    def _release(self) -> None:
        """Stop the workers and free the reader. If zero-copy views (copy=False) are still
        referenced, the C reader is freed when the last of them goes away, so a stale view
        never points at freed memory."""
        self._h = None
        self._batch = ctypes.POINTER(_lib.Batch)()
        self._pool = None  # its buffers are freed as the batches using them go
        owner, self._owner = getattr(self, "_owner", None), None
        del owner  # frees now unless views hold it

    def __reduce__(self) -> NoReturn:
        raise TypeError("a libdata.Reader cannot be pickled or sent to another process: pass "
                        "its path and options and open a Reader there (libdata.torch does)")

    def _on_log(self, user: Any, level: int, msg: Optional[bytes]) -> None:
        if self._user_log is None:
            return
        try:
            self._user_log(level, msg.decode("utf-8", "replace") if msg else "")
        except BaseException as exc:  # never unwind through C; re-raised after the call
            if self._log_error is None:
                self._log_error = exc

    def _callback_raised(self, exc: BaseException) -> None:
        if self._log_error is None:
            self._log_error = exc

    def _raise_log_error(self) -> None:
        exc, self._log_error = self._log_error, None
        if exc is not None:
            raise exc

    # -- information -----------------------------------------------------------------------
    def crop_box(self, epoch: int, index: int, width: int, height: int) -> Tuple[int, int, int, int, bool]:
        """The random resized crop box of dataset sample `index` in `epoch` for an image of
        width x height (decoded, after EXIF orientation): (x, y, w, h, mirrored), as the
        reader takes it (ld_reader_crop_box). Crop those pixels, resample them to the output
        size and flip them when mirrored to reproduce the reader's sample."""
        box = _lib.CropBox()
        with self._calling() as h:
            api.ld_reader_crop_box(h, _lib.check_int(epoch, "epoch"),
                                   _lib.check_int(index, "index"), _lib.check_int(width, "width"),
                                   _lib.check_int(height, "height"), ctypes.byref(box))
        return box.x, box.y, box.w, box.h, bool(box.mirror)

    def get(self, name: str) -> int:
        """An integer, boolean or enum parameter (an enum as its C value), or a read-only info
        value, by name ("batch_size", "samples", "epoch_batches", ...)."""
        table = _lib.reader_params()
        key = _ALIASES.get(name, name)
        # Parameters first ("prefetch" is the setting; info("prefetch") the chosen depth).
        if key in table and table[key].type in ("int", "bool", "enum"):
            fn, pid = api.ld_reader_get, table[key].id
        elif name in _INFO:
            fn, pid = api.ld_reader_get_info, _INFO[name]
        else:
            raise ValueError(f"unknown reader parameter {name!r}")
        v = ctypes.c_int64()
        with self._calling() as h:
            fn(h, pid, ctypes.byref(v))
        return v.value

    def _info_value(self, name: str) -> int:
        v = ctypes.c_int64()
        with self._calling() as h:
            api.ld_reader_get_info(h, _INFO[name], ctypes.byref(v))
        return v.value

    @property
    def info(self) -> DatasetInfo:
        """DatasetInfo of the open reader."""
        self._handle()
        if self._info is None:
            g = self.get

            def i(key: str) -> int:
                return self._info_value(key)
            table = _lib.reader_params()
            order = table["channel_order"].choice_name(i("order"))
            order = order.upper() if order in ("bgr", "rgb") else None
            np_types = _np_types()
            c = i("c")
            if c == 1:
                order = "GRAY"
            description = ""
            try:
                from . import describe
                description = describe(self.path)
            except (LibdataError, TypeError):
                description = ""
            self._info = DatasetInfo(
                samples=i("samples"), epoch_samples=i("epoch_samples"),
                epoch_batches=i("epoch_batches"), channels=c, height=i("h"), width=i("w"),
                layout=(table["layout"].choice_name(g("layout")) or "").upper(), channel_order=order,
                encoded=bool(i("encoded")),
                dtype=np_types[g("dtype")], label_dtype=np_types[g("label_dtype")],
                prefetch=i("prefetch"), threads=i("threads"), memory=i("memory"),
                classes=self._classes(), description=description, label_k=i("label_k"),
                fields=_fields(i("mask"), i("boxes"), self._labelled()),
                mask_is_label=i("mask") == 2,
                mask_dtype=np.dtype(np.uint16 if i("mask_dtype") == _MASK_U16 else np.uint8)
                if i("mask") else None)
        return self._info

    def _labelled(self) -> bool:
        """Whether the dataset's samples have labels of their own (classes, label vectors):
        a detection dataset (COCO, VOC) has only boxes. Asked once."""
        if self._has_labels is None:
            st = stat(self.path)
            self._has_labels = st.classes is not None or st.label_k > 0 or not st.has_boxes
        return self._has_labels

    def _classes(self) -> Optional[List[str]]:
        """The class names the dataset records (ld_dataset_stat), or None."""
        try:
            return stat(self.path).classes
        except LibdataError:
            return None

    def __len__(self) -> int:
        """Batches per epoch for this rank."""
        return self._info_value("epoch_batches")

    @property
    def epoch(self) -> int:
        """The epoch the next batch of next_batch() belongs to (after a `break` in epoch e
        this is still e; the next `for` loop starts e + 1)."""
        return self._epoch

    # -- batches ---------------------------------------------------------------------------
    def next_batch(self) -> Optional[Batch]:
        """The next (data, labels) of the current epoch, or None at the end of the epoch (the
        following call then starts the next epoch)."""
        with self._calling() as h:
            rc = api.ld_reader_next(h, ctypes.byref(self._batch))
            if rc == _lib.LD_END:
                self._epoch += 1
                self._mid_epoch = False
                batch = None
            else:
                batch = self._take(self._batch.contents, h)
                self._mid_epoch = True
        self._raise_log_error()
        return batch

    def _take(self, b: _lib.Batch, h: Any) -> Batch:
        n = b.n
        if b.layout == _NHWC:
            shape = (n, b.h, b.w, b.c)
        else:
            shape = (n, b.c, b.h, b.w)
        keep: Any = None if self._copy else self._owner
        np_types = _np_types()
        pool = self._pool
        if pool is not None and n and b.data:
            # copy=True without copying: the batch's buffer becomes the array's (returned to
            # the pool when the array and its views are gone), a spare one takes its place
            spare = pool.get(h)
            try:
                api.ld_reader_take_data(h, spare)
            except BaseException:
                pool.put(spare)
                raise
            data = _view(b.data, np_types[b.dtype], shape, b.data_bytes,
                         _Recycled(b.data, pool), writeable=True)
        else:
            data = _view(b.data, np_types[b.dtype], shape, b.data_bytes, keep)
            if self._copy:
                data = data.copy()
        # label vectors (HDF5 /label (N, K), an LMDB pair): (n, K); else (n,)
        labels = _view(b.labels, np_types[b.label_dtype], (n, b.label_k) if b.label_k else (n,),
                       None, keep)
        # int64, not the C uint64: NumPy turns uint64 + int into float64, so `indices[j] + 1`
        # would stop being usable as an index.
        self.indices = np.ctypeslib.as_array(b.indices, shape=(n,)).astype(np.int64) if n \
            else np.empty(0, np.int64)
        self.batch_epoch, self.batch_number = b.epoch, b.number
        self._epoch = b.epoch
        if self._copy:
            labels = labels.copy()
        out: List[Any] = [data, labels]
        if b.masks:
            # segmentation masks: (n, 1, H, W) uint8 (or uint16) class indices, cropped and mirrored with
            # their images (Caffe's label blob for SoftmaxWithLoss)
            mt = np.dtype(np.uint16 if b.mask_dtype == _MASK_U16 else np.uint8)
            masks = _view(b.masks, mt, (n, 1, b.mask_h, b.mask_w), None, keep)
            if self._copy:
                masks = masks.copy()
            out = [data, masks] if b.mask_is_label else [data, labels, masks]
        if b.box_offsets:
            out.append(_boxes(b, n))
            if not self._labelled():
                del out[1]  # a detection dataset without image labels: (data, boxes)
        return tuple(out)

    def __iter__(self) -> Iterator[Batch]:
        """Start an epoch: each iter() (each `for` loop) begins a new epoch. After a full
        epoch that is simply the next one; after a `break` (or next_batch() calls) in epoch e
        the rest of e is dropped and the loop gets epoch e + 1 from its first batch (the
        reader is reopened there: its prefetched batches of e are discarded). An iterator
        of the dropped epoch stops."""
        self._handle()
        if self._mid_epoch:
            with self._lock:
                if self._busy:
                    raise LibdataError(_lib.LD_ESTATE, None, self._messages()["busy"])
                self._release()  # the old reader goes now unless zero-copy views hold it
                self._generation += 1
                self._open(self._epoch + 1)
        return _EpochIter(self)

    def epochs(self, n: Optional[int] = None) -> Iterator[Batch]:
        """Iterate over n epochs (None: forever), yielding (data, labels)."""
        done = 0
        while n is None or done < n:
            yield from self
            done += 1


class _EpochIter:
    """Iterates the batches of one epoch of a reader."""

    def __init__(self, reader: "Reader") -> None:
        self._r = reader
        self._generation = reader._generation
        self._done = False

    def __iter__(self) -> "_EpochIter":
        return self

    def __next__(self) -> Batch:
        if self._done or self._generation != self._r._generation:
            self._done = True  # a later iter() started a new epoch: this one is over
            raise StopIteration
        batch = self._r.next_batch()
        if batch is None:
            self._done = True
            raise StopIteration
        return batch


class _Owner:
    """Owns a C reader handle: frees it when the last reference goes (the Reader's, or a
    zero-copy view's). In a forked child the handle is the parent's: its worker threads do
    not exist there and joining them would hang, so the child leaves it alone."""

    def __init__(self, h: Any, log_cb: Any) -> None:
        self.h = h
        self.log_cb = log_cb  # the C reader holds this function pointer
        self.pid = os.getpid()

    def __del__(self) -> None:
        h, self.h = self.h, None
        if h is not None and self.pid == os.getpid():
            try:
                api.ld_reader_free(h)
            except Exception:  # interpreter shutdown
                pass


class _BufferPool:
    """The spare pixel buffers of one open C reader (copy=True): a batch's buffer is taken
    from the reader with ld_reader_take_data() and given to the user's array; when that array
    and every view of it are gone, the buffer comes back here (_Recycled) and replaces the
    buffer of a later batch. Buffers are already faulted in, so a batch costs neither a copy
    nor page faults. At most KEEP spares are kept, the rest freed; a pool outlives its reader
    while batches use its buffers (they are plain memory, ld_reader_buffer_free())."""
    KEEP = 2

    def __init__(self) -> None:
        self.spare: List[int] = []

    def fill(self, h: Any) -> None:
        """Allocate the spares now, at open: fresh memory is slow to touch (page faults, and
        huge page compaction), which would stall the first batches instead."""
        while len(self.spare) < self.KEEP:
            self.spare.append(self._new(h))

    def get(self, h: Any) -> int:
        """A spare buffer, or a new one of the open reader `h` (held by the caller)."""
        try:
            return self.spare.pop()
        except IndexError:
            return self._new(h)

    @staticmethod
    def _new(h: Any) -> int:
        p = api.ld_reader_buffer_alloc(h, ctypes.byref(ctypes.c_size_t()))
        if not p:
            raise LibdataError(_lib.LD_ENOMEM, None,
                               "out of memory for a batch buffer (the program holds many "
                               "batches: drop the ones it no longer needs)")
        return int(p)

    def put(self, p: int) -> None:
        """Any thread (the garbage collector's): list.append is atomic."""
        if len(self.spare) < self.KEEP:
            self.spare.append(p)
        else:
            api.ld_reader_buffer_free(p)

    def __del__(self) -> None:
        spare, self.spare = self.spare, []
        for p in spare:
            try:
                api.ld_reader_buffer_free(p)
            except Exception:  # interpreter shutdown
                pass


class _Recycled:
    """Held by a copy=True batch array (through its buffer): gives the buffer back to the
    pool when the array and its views are gone."""
    __slots__ = ("ptr", "pool")

    def __init__(self, ptr: int, pool: _BufferPool) -> None:
        self.ptr, self.pool = ptr, pool

    def __del__(self) -> None:
        try:
            self.pool.put(self.ptr)
        except Exception:  # interpreter shutdown
            pass


def _fields(mask: int, boxes: int, labelled: bool) -> Tuple[str, ...]:
    """What each batch holds, in order (DatasetInfo.fields)."""
    f: List[str] = ["data", "label"]
    if mask == 1:
        f.append("mask")
    if boxes:
        f.append("boxes")
        if not labelled and mask != 2:
            f.remove("label")
    return tuple(f)


def _boxes(b: Any, n: int) -> List[Dict[str, np.ndarray]]:
    """A batch's boxes, one dict per sample: "boxes" (M, 4) float32 x1, y1, x2, y2 in the
    output's pixels, "labels" (M,) int32 box class indices, "flags" (M,) uint8 (1 crowd, 2
    difficult). Copies: the batch's arrays are the reader's until the next batch."""
    off = np.ctypeslib.as_array(ctypes.cast(b.box_offsets, ctypes.POINTER(ctypes.c_uint64)),
                                shape=(n + 1,)).astype(np.int64)
    m = int(off[n])
    xy = _view(b.boxes, np.dtype(np.float32), (m, 4), None).copy()
    lab = _view(b.box_labels, np.dtype(np.int32), (m,), None).copy()
    fl = _view(b.box_flags, np.dtype(np.uint8), (m,), None).copy()
    return [{"boxes": xy[off[j]:off[j + 1]], "labels": lab[off[j]:off[j + 1]],
             "flags": fl[off[j]:off[j + 1]]} for j in range(n)]


def _view(ptr: Optional[int], dtype: Any, shape: Tuple[int, ...], nbytes: Optional[int],
          keep: Any = None, writeable: bool = False) -> np.ndarray:
    """A NumPy view of memory the array does not own: read-only reader memory (valid until
    the next batch), or a taken buffer (writeable). `keep` is referenced by the view so that
    the memory outlives it."""
    dtype = np.dtype(dtype)
    count = int(np.prod(shape, dtype=np.int64))
    need = count * dtype.itemsize
    if nbytes is not None and nbytes < need:
        raise LibdataError(_lib.LD_EFORMAT, None,
                           f"batch holds {nbytes} bytes, shape {shape} needs {need}")
    if count == 0 or not ptr:
        return np.empty(shape, dtype)
    buf = (ctypes.c_char * need).from_address(ptr)
    buf._keep = keep
    arr = np.frombuffer(buf, dtype=dtype, count=count).reshape(shape)
    arr.flags.writeable = writeable
    return arr
