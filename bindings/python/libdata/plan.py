"""libdata.plan(): will a Caffe net fit in memory? The library's ld_plan() (plan.h): Caffe
1.0's peak host memory for a net (and solver), by component, every blob's shape, the largest
batch that fits a memory figure and advice. `dataconv plan` prints the same."""
import ctypes
import os
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from . import _lib
from ._lib import LibdataError, api
from .convert import PathLike

PHASES = {"train": 0, "test": 1}
HEADROOM_PCT = 5  # plan.h LD_PLAN_HEADROOM_PCT: percent of ram kept for the estimate's error


@dataclass(frozen=True)
class PlanItem:
    """One component of the estimate."""
    name: str
    bytes: int
    per_sample: int  # how much of `bytes` grows with each sample of the batch


@dataclass(frozen=True)
class PlanBlob:
    """One top blob, as Caffe's log prints it ("Top shape")."""
    phase: str  # "TRAIN" | "TEST"
    layer: str
    name: str
    shape: Tuple[int, ...]


@dataclass(frozen=True)
class Plan:
    """The estimate: `total` bytes of peak host memory at `batch`; `largest_batch` fits `usable`
    (`ram` less HEADROOM_PCT percent for the estimate's error)."""
    batch: int
    total: int
    ram: int
    usable: int
    largest_batch: int
    items: List[PlanItem]
    blobs: List[PlanBlob]
    advice: List[str]

    @property
    def fits(self) -> bool:
        return self.total <= self.usable


class _Item(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("bytes", ctypes.c_uint64), ("per_sample", ctypes.c_uint64)]


class _Blob(ctypes.Structure):
    _fields_ = [("phase", ctypes.c_char_p), ("layer", ctypes.c_char_p), ("name", ctypes.c_char_p),
                ("ndims", ctypes.c_int), ("dims", ctypes.POINTER(ctypes.c_int64))]


class _Info(ctypes.Structure):
    """struct ld_plan_info (plan.h); only read through the library's pointer."""
    _fields_ = [("batch", ctypes.c_int), ("total", ctypes.c_uint64), ("ram", ctypes.c_uint64),
                ("largest_batch", ctypes.c_int64),
                ("nitems", ctypes.c_size_t), ("items", ctypes.POINTER(_Item)),
                ("nblobs", ctypes.c_size_t), ("blobs", ctypes.POINTER(_Blob)),
                ("nadvice", ctypes.c_size_t), ("advice", ctypes.POINTER(ctypes.c_char_p)),
                ("usable", ctypes.c_uint64)]


_lib.declare("ld_plan", ctypes.c_int,
             [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_uint64,
              ctypes.c_char_p, ctypes.POINTER(ctypes.POINTER(_Info)), ctypes.POINTER(ctypes.c_void_p)])


def _text(b: Optional[bytes]) -> str:
    return b.decode("utf-8", "replace") if b else ""


def plan(net: Optional[PathLike] = None, solver: Optional[PathLike] = None, *, phase: str = "train",
         batch: int = 0, ram: Optional[int] = None,
         shapes: Optional[Dict[str, Sequence[int]]] = None) -> Plan:
    """Estimate Caffe 1.0's peak host memory for `net` (a train_val prototxt; None: the one the
    solver names) and `solver` (its type, max_iter, test net). `batch`: the planned phase's batch
    size (0: the net's own); `ram`: bytes to fit in (None: MemAvailable); `shapes`: data tops'
    shapes instead of their sources', e.g. {"data": (3, 227, 227)}. Data sources are opened
    (relative paths from the current directory, as caffe does). Raises LibdataError with the
    library's message (file:line: reason) for a malformed net, an unknown layer type, a missing
    bottom or source, and ValueError for a bad argument."""
    if phase not in PHASES:
        raise ValueError(f"phase must be 'train' or 'test', not {phase!r}")
    if batch < 0:
        raise ValueError("batch must be >= 0")
    if net is None and solver is None:
        raise ValueError("give a net prototxt or a solver")
    sh = None
    if shapes:
        parts = []
        for name, dims in shapes.items():
            if not dims or any(int(d) <= 0 for d in dims) or ";" in name or "=" in name:
                raise ValueError(f"shapes[{name!r}]: positive dims (C, H, W) expected")
            parts.append(f"{name}=" + ",".join(str(int(d)) for d in dims))
        sh = ";".join(parts).encode()
    out = ctypes.POINTER(_Info)()
    err = ctypes.c_void_p()
    rc = api.ld_plan(_lib.fsencode(net) if net is not None else None,
                     _lib.fsencode(solver) if solver is not None else None,
                     PHASES[phase], int(batch), int(ram or 0), sh, ctypes.byref(out), ctypes.byref(err))
    try:
        msg = ctypes.string_at(err.value).decode("utf-8", "replace") if err.value else ""
        if rc < 0:
            where = net if net is not None else solver
            raise LibdataError(rc, _lib.strerror(rc), msg, path=os.fsdecode(where) if where is not None else None)
        d = out.contents
        items = [PlanItem(_text(d.items[i].name), int(d.items[i].bytes), int(d.items[i].per_sample))
                 for i in range(d.nitems)]
        blobs = [PlanBlob(_text(d.blobs[i].phase), _text(d.blobs[i].layer), _text(d.blobs[i].name),
                          tuple(int(d.blobs[i].dims[k]) for k in range(d.blobs[i].ndims)))
                 for i in range(d.nblobs)]
        advice = [_text(d.advice[i]) for i in range(d.nadvice)]
        return Plan(batch=int(d.batch), total=int(d.total), ram=int(d.ram), usable=int(d.usable),
                    largest_batch=int(d.largest_batch), items=items, blobs=blobs, advice=advice)
    finally:
        if out:
            api.ld_free(ctypes.cast(out, ctypes.c_void_p))
        if err.value:
            api.ld_free(err)
