"""libdata.plan(): will a Caffe net fit in memory? The library's ld_plan() (plan.h): Caffe
1.0's peak host memory for a net (and solver), by component, every blob's shape, the largest
batch that fits a memory figure and advice. `dataconv plan` prints the same."""
import ctypes
import os
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple, Union

from . import _lib
from ._lib import LibdataError, api
from .convert import PathLike

PHASES = {"train": 0, "test": 1, "auto": 2}  # plan.h ld_plan_phase
HEADROOM_PCT = 5  # plan.h LD_PLAN_HEADROOM_PCT: percent of ram kept for the estimate's error

# `dataconv plan --ram`'s sizes (cli/options.c dc_parse_size): a decimal number (strtod's
# forms, leading blanks), then K/M/G/T (powers of 1024, any case) optionally followed by iB or
# B, or B alone; nothing after.
_RAM_RE = re.compile(r"[ \t\n\v\f\r]*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)"
                     r"(?:([KMGTkmgt])(?:[iI][bB]|[bB])?|[bB])?")


def _ram_bytes(ram: Union[int, str, None]) -> int:
    """`ram` as bytes for ld_plan: None or 0 is MemAvailable (0); a string as the CLI reads it."""
    if ram is None:
        return 0
    if isinstance(ram, str):
        m = _RAM_RE.fullmatch(ram)
        v = float(m.group(1)) * 1024 ** " KMGT".index((m.group(2) or " ").upper()) if m else -1.0
        if not m or v <= 0 or v >= 9.2e18:
            raise ValueError(f"ram: {ram!r} is not a size such as 4G, 512M or 1.5GiB")
        return int(v)
    n = _lib.check_int(ram, "ram")
    if n < 0:
        raise ValueError(f"ram must be >= 0 bytes (0: MemAvailable), not {n}")
    return n


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
    (`ram` less HEADROOM_PCT percent for the estimate's error). `phase` is the phase planned
    ("train" or "test"; what "auto" became) and `phase_reason` why; `notes` say what the
    estimate does not fully cover (layer types whose parameters it did not all interpret)."""
    batch: int
    total: int
    ram: int
    usable: int
    largest_batch: int
    items: List[PlanItem]
    blobs: List[PlanBlob]
    advice: List[str]
    phase: str = "train"
    phase_reason: str = ""
    notes: List[str] = field(default_factory=list)

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
                ("usable", ctypes.c_uint64),
                ("phase", ctypes.c_int), ("phase_reason", ctypes.c_char_p),
                ("nnotes", ctypes.c_size_t), ("notes", ctypes.POINTER(ctypes.c_char_p)),
                ("advice_terms", ctypes.c_uint)]


_lib.declare("ld_plan", ctypes.c_int,
             [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_uint64,
              ctypes.c_char_p, ctypes.POINTER(ctypes.POINTER(_Info)), ctypes.POINTER(ctypes.c_void_p)])


def _text(b: Optional[bytes]) -> str:
    return b.decode("utf-8", "replace") if b else ""


def plan(net: Optional[PathLike] = None, solver: Optional[PathLike] = None, *, phase: str = "auto",
         batch: int = 0, ram: Union[int, str, None] = None,
         shapes: Optional[Dict[str, Sequence[int]]] = None) -> Plan:
    """Estimate Caffe 1.0's peak host memory for `net` (a train_val prototxt; None: the one the
    solver names) and `solver` (its type, max_iter, test net). `phase`: "train", "test" or
    "auto" (train with a solver or when the net has a loss layer, else test: a deploy net);
    `batch`: the planned phase's batch size (0: the net's own); `ram`: bytes to fit in, an int
    or a size string as `dataconv plan --ram` takes ("4G", "512M", "1.5GiB"; None or 0:
    MemAvailable); `shapes`: data tops' shapes instead of their sources', e.g.
    {"data": (3, 227, 227)} (also how a Python or MemoryData data layer is planned). Data
    sources are opened (relative paths from the current directory, as caffe does). Raises
    LibdataError with the library's message (file:line: reason) for a malformed net, a field
    caffe.proto does not have, an unknown layer type, a missing bottom or source (code
    LD_EINVAL when a shape must be given in `shapes`), and ValueError for a bad argument."""
    if phase not in PHASES:
        raise ValueError(f"phase must be 'train', 'test' or 'auto', not {phase!r}")
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
    ram_bytes = _ram_bytes(ram)
    out = ctypes.POINTER(_Info)()
    err = ctypes.c_void_p()
    rc = api.ld_plan(_lib.fsencode(net) if net is not None else None,
                     _lib.fsencode(solver) if solver is not None else None,
                     PHASES[phase], int(batch), ram_bytes, sh, ctypes.byref(out), ctypes.byref(err))
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
        notes = [_text(d.notes[i]) for i in range(d.nnotes)]
        return Plan(batch=int(d.batch), total=int(d.total), ram=int(d.ram), usable=int(d.usable),
                    largest_batch=int(d.largest_batch), items=items, blobs=blobs, advice=advice,
                    phase="test" if d.phase == PHASES["test"] else "train",
                    phase_reason=_text(d.phase_reason), notes=notes)
    finally:
        if out:
            api.ld_free(ctypes.cast(out, ctypes.c_void_p))
        if err.value:
            api.ld_free(err)
