"""libdata.stat(): what a dataset holds, from the library's ld_dataset_stat() (reader.h), as
a DatasetStat. The names of enum values (format, channel order, resize mode) and the NumPy
dtypes come from the library's parameter tables, not from copies kept here."""
import ctypes
import os
from dataclasses import dataclass
from typing import List, Optional, Tuple

import numpy as np

from . import _lib
from ._lib import LibdataError, api
from .convert import PathLike


@dataclass(frozen=True)
class DatasetStat:
    """What a dataset (HDF5 file, --split list or LMDB directory) holds."""
    path: str
    format: str                   # "hdf5" | "lmdb"
    by_libdata: bool              # written by libdata (else another tool's: Caffe, h5py)
    files: int                    # HDF5 files read (a --split list: its files); LMDB: 1
    samples: int
    encoded: bool                 # encoded images (JPEG/PNG bytes), else raw pixels
    encoding: Optional[str]       # "jpeg" | "png" | "original" when libdata recorded it
    quality: int                  # JPEG quality of re-encoded images, 0 if none
    dtype: np.dtype               # pixels as stored (uint8 or float32)
    label_dtype: np.dtype         # labels as stored (int32 or float32)
    channels: int
    height: int                   # 0 when the sizes vary
    width: int
    shape_of_first: bool          # the shape is only the first sample's (Caffe --encoded LMDB)
    channel_order: Optional[str]  # "BGR" | "RGB" | "GRAY" | None: as the Reader delivers it
    resize_mode: Optional[str]    # "squash" | "crop" | "pad" | "max" | None
    resize_w: int
    resize_h: int
    classes: Optional[List[str]]  # class names (file names, as os.fsdecode gives them)
    label_k: int = 0              # label vectors: K values per sample (labels (n, K)); 0: one
    label_names: Optional[List[str]] = None  # the K values' names (a CSV header), when recorded
    # segmentation masks: (mask_h, mask_w) of every sample's mask, None without masks;
    # mask_is_label: they are the dataset's label (no class labels); mask_dtype: uint8 or
    # uint16 (more than 256 classes), None without masks
    mask_shape: Optional[Tuple[int, int]] = None
    mask_is_label: bool = False
    mask_dtype: Optional[np.dtype] = None
    # detection boxes: whether the samples have them, and their classes' names and the
    # input's ids for them (COCO category_id)
    has_boxes: bool = False
    box_classes: Optional[List[str]] = None
    box_class_ids: Optional[List[int]] = None

    @property
    def num_classes(self) -> Optional[int]:
        return len(self.classes) if self.classes else None


def _choice(kind: str, param: str, value: int) -> Optional[str]:
    """The table's name of an enum value, or None for 0 (not recorded)."""
    if not value:
        return None
    return _lib.param_table(kind)[param].choice_name(value)


_U16 = 0x203  # LD_DTYPE_U16 (types.h): masks only


def _dtype(value: int) -> np.dtype:
    for name in ("dtype", "label_dtype"):
        choices = _lib.param_table("reader")[name].choices
        for choice, v in choices.items():
            if v == value:
                return np.dtype(choice)
    raise LibdataError(_lib.LD_EFORMAT, _lib.strerror(_lib.LD_EFORMAT),
                       f"ld_dataset_stat: unknown dtype {value}")


def stat(path: PathLike) -> DatasetStat:
    """What the dataset at `path` holds: format, count, shape, storage, dtypes, the channel
    order the Reader delivers by default, how it was made, class names. Raises LibdataError
    (with the library's message) for a path that is not a dataset the Reader can open."""
    info = ctypes.POINTER(_lib.DatasetInfo)()
    err = ctypes.c_void_p()
    rc = api.ld_dataset_stat(_lib.fsencode(path), ctypes.byref(info), ctypes.byref(err))
    try:
        msg = ctypes.string_at(err.value).decode("utf-8", "replace") if err.value else ""
        if rc < 0:
            raise LibdataError(rc, _lib.strerror(rc), msg, path=os.fsdecode(path))
        d = info.contents
        classes = [os.fsdecode(d.class_names[i]) for i in range(d.num_classes)] or None
        order = "GRAY" if d.channels == 1 else _choice("convert", "channel_order",
                                                        d.channel_order)
        return DatasetStat(
            path=os.fsdecode(d.path), format=_choice("convert", "format", d.format) or "",
            by_libdata=bool(d.by_libdata), files=int(d.files), samples=int(d.samples),
            encoded=bool(d.encoded),
            encoding=d.encoding.decode("utf-8", "replace") if d.encoding else None,
            quality=int(d.quality), dtype=_dtype(d.dtype), label_dtype=_dtype(d.label_dtype),
            channels=int(d.channels), height=int(d.height), width=int(d.width),
            shape_of_first=bool(d.shape_of_first), channel_order=order.upper() if order else None,
            resize_mode=_choice("convert", "resize_mode", d.resize_mode),
            resize_w=int(d.resize_w), resize_h=int(d.resize_h), classes=classes,
            label_k=int(d.label_k),
            label_names=[d.label_names[i].decode("utf-8", "replace")
                         for i in range(d.num_label_names)] or None,
            mask_shape=(int(d.mask_h), int(d.mask_w)) if d.mask_h else None,
            mask_is_label=bool(d.mask_is_label),
            mask_dtype=np.dtype(np.uint16 if d.mask_dtype == _U16 else np.uint8)
            if d.mask_h else None,
            has_boxes=bool(d.boxes),
            box_classes=[os.fsdecode(d.box_classes[i]) for i in range(d.num_box_classes)] or None,
            box_class_ids=[int(d.box_class_ids[i]) for i in range(d.num_box_classes)] or None)
    finally:
        api.ld_free(ctypes.cast(info, ctypes.c_void_p))
        api.ld_free(err)
