"""libdata.torch: a PyTorch IterableDataset over libdata.Reader.

    from torch.utils.data import DataLoader
    import libdata.torch
    ds = libdata.torch.Dataset("train.h5", batch_size=64, shuffle=True, dtype="float32",
                               scale=1/255)
    loader = DataLoader(ds, batch_size=None)                    # the dataset batches itself
    print(len(loader), ds.classes)                              # batches per epoch, names
    for epoch in range(10):
        ds.set_epoch(epoch)                                     # new permutation each epoch
        for x, y in loader:                                     # x: float32 NCHW, y: int64
            ...

What an epoch holds: every sample exactly once, in batches of batch_size (the last one may be
short; drop_last=True drops it, as DataLoader's drop_last). len(ds), hence len(DataLoader(ds,
batch_size=None)), is the number of batches this rank yields per epoch, whatever num_workers.

Distributed ranks (rank, world from torch.distributed, RANK/WORLD_SIZE or the arguments) follow
DistributedSampler's convention: each rank reads ceil(N / world) samples of every epoch's
permutation (identical on every rank: same seed, same epoch), a contiguous share; when world
does not divide N, the first N mod world ranks also read one of the N mod world samples the
equal shares leave over, and the other ranks repeat one sample from the start of the
permutation, so every sample is read and every rank reads as many as the others. With
drop_last=True, each rank reads floor(N / world) samples instead (the tail of the permutation
is dropped) and only full batches. The extra sample is read by a second, one-sample reader at
the end of the epoch, from a share that reaches it: the C reader's shares (LD_R_RANK,
LD_R_WORLD, world <= 2^20) reach every position when N <= 2^20; for larger N the reader may
have to read and drop up to max(batch_size, 1% of the rank's epoch) samples before it, and a
position no share reaches that cheaply (the last one of a prime N > 2^20, which only world 1
reaches) is replaced by a repeat, with a RuntimeWarning.

DataLoader workers: the first worker reads the rank's whole epoch, with all the cores for the
C reader's threads (threads=None); the other workers yield nothing. DataLoader collects the
workers' batches round-robin, so the batches come out in the epoch's order (shuffle=False:
samples 0, 1, 2, ... of the rank's share) and the same as with num_workers=0. Reading is not
split between workers: the C reader reads one contiguous share per open, and an open indexes
the whole dataset, so batch-by-batch shares would cost an open per batch; the reader's threads
already read, decode and transform in parallel. num_workers=0 is usually the fastest
(bench/python_read_bench.py: ~125k vs ~17k samples/s for 64x64 uint8 batches on 2 cores,
where DataLoader workers pay for moving every batch through shared memory); num_workers=1
reads in another process.

Rank and world are taken in the process that builds the DataLoader (torch.distributed when
initialized, else the RANK and WORLD_SIZE variables torchrun sets, else 0 and 1), whenever
the dataset is pickled for a worker (multiprocessing "spawn"), iterated or asked its len():
a spawned worker, where torch.distributed is not initialized, reads the share of its rank.

Epochs: every pass over the DataLoader (every iter(loader), i.e. every `for` loop) is a new
epoch, whether or not the previous pass was read to its end (`break`), with num_workers=0,
with workers, and with persistent_workers=True. Without set_epoch() the passes are epochs
epoch, epoch + 1, epoch + 2, ... (`epoch` from the constructor, default 0); set_epoch(e) makes
the next pass epoch e (and the ones after it e + 1, ...), as DistributedSampler.set_epoch does.
An epoch's order (and its random crops and mirrors) depends only on (seed, epoch, world), so a
job resumed with Dataset(..., epoch=N) or set_epoch(N) reads what an uninterrupted job reads in
epoch N. The epoch reaches worker processes through shared memory (their Dataset is a copy):
the first worker of a pass to start takes the epoch and the others of that pass join it.

The reader is opened inside __iter__, i.e. in the worker process after the DataLoader forked
it: no reader thread or file handle crosses a fork. torch is imported only by this module.
"""
import os
import warnings
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np
import torch
from torch.utils.data import IterableDataset, get_worker_info

from . import _lib
from ._lib import LibdataError
from .dataset import stat
from .reader import PathLike, Reader

# What a pass yields: (data, labels), or (data, labels, indices) with return_indices. With
# segmentation masks (Reader.info.fields): (data, masks) when the masks are the label, else
# (data, labels, masks); masks are int64 (B, H, W), what nn.CrossEntropyLoss takes. With
# detection boxes: (data, targets), targets a list of B dicts as torchvision's detection
# models take them ("boxes" float32 (K, 4) x1, y1, x2, y2, "labels" int64 (K,), "iscrowd").
Item = Tuple[Any, ...]
# A batch before it becomes tensors: the reader's arrays (data, labels[, masks]), then the
# dataset indices.
_Arrays = Tuple[Any, ...]


def _dist_rank_world() -> Optional[Tuple[int, int]]:
    """torch.distributed's rank and world size when this process has initialized it."""
    dist = getattr(torch, "distributed", None)
    if dist is not None and dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return None


def _env_rank_world() -> Optional[Tuple[int, int]]:
    """RANK and WORLD_SIZE as torchrun (and torch.distributed.launch) set them."""
    rank, world = os.environ.get("RANK"), os.environ.get("WORLD_SIZE")
    if rank is None or world is None:
        return None
    try:
        return int(rank), int(world)
    except ValueError:
        return None


def _locate(p: int, n: int, max_world: int) -> Tuple[int, int, int]:
    """(world, rank, skip): the C reader's share that reaches position p of an epoch of n
    samples with the fewest positions before it (skip), the shortest such share on ties.
    A share of world g is floor(n / g) positions; rank k starts at k * floor(n / g)."""
    if n <= max_world:
        return n, p, 0  # shares of one sample
    best: Optional[Tuple[int, int, int, int]] = None  # (skip, share, world, rank)
    g = 1
    while g <= max_world:
        s = n // g
        top = min(n // s, max_world)  # the largest world with shares of s samples
        if p < top * s:
            cand = (p % s, s, top, p // s)
            if best is None or cand[:2] < best[:2]:
                best = cand
        g = top + 1
    assert best is not None  # world 1 reaches every position
    return best[2], best[3], best[0]


def _max_world() -> int:
    """The largest world the C reader takes (its parameter table's bound)."""
    return _lib.reader_params()["world"].max


def _std_array(std: Any) -> np.ndarray:
    try:
        arr = np.asarray(std, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise TypeError(f"std must be a number or per-channel numbers, not {std!r}") from None
    if not 1 <= arr.size <= 4 or not np.all(np.isfinite(arr)) or np.any(arr == 0):
        raise ValueError(f"std must be 1 to 4 finite, non-zero numbers, not {std!r}")
    return arr


class Dataset(IterableDataset):
    """Yields (data, labels) tensors, one batch at a time; use DataLoader(batch_size=None).

    path, batch_size, shuffle, seed and every other keyword go to libdata.Reader (dtype,
    layout, crop, mirror, mean, scale, memory_budget, ...).
      rank, world   distributed share; None (default) = torch.distributed's when initialized,
                    else the RANK / WORLD_SIZE environment variables (torchrun), else 0 and 1
                    (taken in the main process, see the module docstring)
      drop_last     False (default): every sample once per epoch, the last batch may be short,
                    ranks get ceil(N / world) samples (padded with repeats); True: only full
                    batches of floor(N / world) samples per rank
      std           per-channel (or one) divisor after the mean, torchvision's
                    Normalize(mean, std): the output is (x - mean) * scale / std per channel
                    (mean subtracted and scale applied by the C reader, std divided in place
                    on the float32 batch; one value is folded into the C reader's scale).
                    ToTensor() + Normalize(m, s) on 8-bit images is mean=[255 * v for v in
                    m], scale=1/255, std=s (channel_order="RGB" for RGB statistics); float32
                    output only
      threads       reader threads; None = all the cores (one process per rank reads)
      long_labels   True (default): labels as int64 (what nn.CrossEntropyLoss wants)
      return_indices  True: yield (data, labels, indices), indices = the samples' dataset
                    positions (int64), e.g. to check coverage or look up file names
      epoch         the epoch of the first pass (to resume); set_epoch() changes the epoch
                    of the next pass; without it each pass is the next epoch (see above)
    len(ds) is the number of batches this rank yields per epoch; ds.classes and
    ds.class_to_idx are the class names the dataset records, as torchvision's ImageFolder
    (label i is classes[i]; None when the dataset records none).
    """

    def __init__(self, path: PathLike, batch_size: int = 64, shuffle: Union[bool, str] = False,
                 seed: int = 0, rank: Optional[int] = None, world: Optional[int] = None,
                 threads: Optional[int] = None, long_labels: bool = True,
                 return_indices: bool = False, epoch: int = 0, drop_last: bool = False,
                 std: Union[None, float, Sequence[float]] = None,
                 **reader_kwargs: Any) -> None:
        super().__init__()
        for bad in ("copy", "log"):
            if bad in reader_kwargs:
                raise TypeError(f"{bad!r} is not supported by the torch adapter")
        self.path: Union[str, bytes] = os.fspath(path)
        self.batch_size = _lib.check_int(batch_size, "batch_size")
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, not {batch_size}")
        self.shuffle = shuffle
        self.seed = seed
        self.rank = rank
        self.world = world
        self.threads = threads
        self.long_labels = long_labels
        self.return_indices = return_indices
        self.drop_last = bool(drop_last)
        self._counter = _EpochCounter(epoch)
        self.reader_kwargs = reader_kwargs
        # Per-channel divisors applied to each float32 batch in place (None: none, or folded
        # into the C reader's scale when they are all equal).
        self._std: Optional[np.ndarray] = None
        if std is not None:
            arr = _std_array(std)
            dtype = reader_kwargs.get("dtype")
            try:
                is_float = dtype is not None and np.dtype(dtype) == np.float32
            except TypeError:
                is_float = False
            if not is_float:
                raise ValueError("std applies to float32 output: pass dtype='float32'")
            if np.all(arr == arr[0]):  # one divisor: the C reader's scale does it
                scale = reader_kwargs.get("scale")
                reader_kwargs["scale"] = (1.0 if scale is None else float(scale)) / arr[0]
            else:
                self._std = arr.astype(np.float32)
        self.std: Optional[List[float]] = None if std is None else \
            [float(v) for v in np.asarray(std, dtype=np.float64).reshape(-1)]
        self._parent_shard: Optional[Tuple[int, int]] = None
        self._capture_shard()

    # -- rank and world ----------------------------------------------------------------------
    def _capture_shard(self) -> None:
        """In the main process: remember torch.distributed's (or torchrun's) rank and world
        for the workers, where a spawned one has no process group."""
        if get_worker_info() is None:
            found = _dist_rank_world() or _env_rank_world()
            if found is not None:
                self._parent_shard = found

    def shard(self) -> Tuple[int, int]:
        """(rank, world): the distributed share this dataset reads: the arguments, else
        torch.distributed's when this process initialized it, else what the main process
        found when the dataset was made, pickled for a worker, iterated or asked its len(),
        else RANK / WORLD_SIZE, else (0, 1)."""
        self._capture_shard()
        found = _dist_rank_world() or self._parent_shard or _env_rank_world() or (0, 1)
        rank = found[0] if self.rank is None else self.rank
        world = found[1] if self.world is None else self.world
        return rank, world

    def __getstate__(self) -> Dict[str, Any]:
        # Pickled in the main process for a spawned worker: take rank and world now, when the
        # process group the worker lacks is known (it may have been set up after __init__).
        self._capture_shard()
        return dict(self.__dict__)

    # -- what the dataset is ---------------------------------------------------------------------
    def _samples(self) -> int:
        """Samples in the dataset (all ranks): from a reader opened for a moment (the HDF5
        dataset names may be the caller's), once."""
        n: Optional[int] = self.__dict__.get("_n_samples")
        if n is None:
            names = {k: v for k, v in self.reader_kwargs.items()
                     if k in ("data_name", "label_name")}
            with Reader(self.path, batch_size=1, threads=1, prefetch=1, copy=False,
                        **names) as r:
                n = r.get("samples")
            self.__dict__["_n_samples"] = n
        return n

    def __len__(self) -> int:
        """Batches per epoch of this rank (len(DataLoader(ds, batch_size=None))), whatever the
        number of DataLoader workers."""
        _, world = self.shard()
        n, b = self._samples(), self.batch_size
        if self.drop_last:
            return (n // world) // b
        per_rank = -(-n // world)  # ceil: the ranks are padded to equal shares
        return -(-per_rank // b)

    @property
    def classes(self) -> Optional[List[str]]:
        """The class names the dataset records (label i is classes[i]), as ImageFolder's
        classes; None when it records none."""
        if "_classes" not in self.__dict__:
            try:
                self.__dict__["_classes"] = stat(self.path).classes
            except LibdataError:
                self.__dict__["_classes"] = None
        names: Optional[List[str]] = self.__dict__["_classes"]
        return None if names is None else list(names)

    @property
    def class_to_idx(self) -> Optional[Dict[str, int]]:
        """{class name: label}, as ImageFolder's class_to_idx; None without class names."""
        names = self.classes
        return None if names is None else {name: i for i, name in enumerate(names)}

    # -- epochs ------------------------------------------------------------------------------
    @property
    def epoch(self) -> int:
        """The epoch the next pass (iter()) reads, unless set_epoch() changes it."""
        return self._counter.next_epoch()

    @epoch.setter
    def epoch(self, epoch: int) -> None:
        self._counter.set(epoch)

    def set_epoch(self, epoch: int) -> None:
        """Make the next pass read `epoch` (then epoch + 1, ...), also in persistent workers."""
        self._counter.set(epoch)

    def __iter__(self) -> Iterator[Item]:
        # Not a generator function: the epoch is taken now, when the DataLoader creates the
        # iterator (a worker's start or resume, which the main process waits for), not at the
        # first batch.
        info = get_worker_info()
        if info is None:
            epoch = self._counter.take(None)
        else:
            # A pass is one DataLoader iterator: non-persistent workers are new processes with
            # a new base seed (info.seed - info.id) each pass; a persistent worker keeps its
            # seed and counts its own passes (every worker resumes once per pass).
            base_seed = info.seed - info.id
            n = self._passes.get(base_seed, 0)
            self._passes[base_seed] = n + 1
            epoch = self._counter.take((base_seed, n))
        rank, world = self.shard()
        if info is not None and info.id > 0:
            return iter(())  # the first worker reads the epoch (see the module docstring)
        return self._tensors(self._arrays(epoch, rank, world))

    # -- reading -----------------------------------------------------------------------------
    def _reader(self, epoch: int, **kw: Any) -> Reader:
        args: Dict[str, Any] = dict(self.reader_kwargs)
        args.update(shuffle=self.shuffle, seed=self.seed, epoch=epoch, copy=True)
        args.update(kw)
        return Reader(self.path, **args)

    def _arrays(self, epoch: int, rank: int, world: int) -> Iterator[_Arrays]:
        """The rank's batches of `epoch`: its share of the permutation (the C reader's rank
        and world), then, without drop_last when world does not divide N, one more sample:
        a left-over one or a repeat (DistributedSampler's padding)."""
        threads = 0 if self.threads is None else self.threads
        with self._reader(epoch, batch_size=self.batch_size, rank=rank, world=world,
                          threads=threads, drop_last=self.drop_last) as r:
            n = r.get("samples")
            extra = None if self.drop_last or n % world == 0 else \
                self._extra_position(n, rank, world)
            last: Optional[_Arrays] = None
            for batch in r:
                assert r.indices is not None
                item = (*batch, r.indices)
                if extra is None:
                    yield item
                else:
                    if last is not None:
                        yield last
                    last = item
        if extra is None or last is None:
            return
        one = self._read_position(epoch, extra, n, world)
        if len(last[1]) < self.batch_size:  # the short last batch takes it
            yield tuple(a + b if isinstance(a, list) else np.concatenate([a, b])
                        for a, b in zip(last, one))
        else:
            yield last
            yield one

    def _extra_position(self, n: int, rank: int, world: int) -> int:
        """The position of the permutation rank `rank` reads after its share: the left-over
        positions world * floor(n / world) ... n - 1 go to the first ranks, the others repeat
        positions 0, 1, ... (DistributedSampler pads with the start of its permutation)."""
        left = n % world
        return world * (n // world) + rank if rank < left else rank - left

    def _read_position(self, epoch: int, p: int, n: int, world: int) -> _Arrays:
        """Sample at position p of the epoch's permutation, as a batch of one, read from the
        C reader's share that reaches it with the fewest samples before it."""
        max_world = _max_world()
        g, k, skip = _locate(p, n, max_world)
        limit = max(self.batch_size, n // world // 100)
        if skip > limit:
            # a repeat instead: the rank's number among those reading a left-over position
            # (a position near the start, which a short share reaches)
            q = p - world * (n // world)
            warnings.warn(
                f"libdata.torch: position {p} of the {n}-sample permutation can only be read "
                f"after {skip} others (no reader share of a world up to {max_world} starts "
                f"near it); this rank repeats position {q} instead, so one sample is left out "
                f"of this epoch (a world that divides {n}, or drop_last=True, avoids it)",
                RuntimeWarning, stacklevel=2)
            g, k, skip = _locate(q, n, max_world)
        with self._reader(epoch, batch_size=skip + 1, rank=k, world=g, threads=1,
                          prefetch=1, drop_last=False) as r:
            batch = next(iter(r))
            idx = r.indices
        assert idx is not None and len(batch[1]) == skip + 1
        return tuple(a[skip:] for a in batch) + (idx[skip:],)

    def _tensors(self, arrays: Iterator[_Arrays]) -> Iterator[Item]:
        std = self._std
        for arrays_ in arrays:
            data, indices = arrays_[0], arrays_[-1]
            if std is not None:
                nhwc = str(self.reader_kwargs.get("layout") or "NCHW").upper() == "NHWC"
                c = data.shape[3] if nhwc else data.shape[1]
                if len(std) != c:
                    raise ValueError(f"std has {len(std)} values for {c}-channel samples")
                np.divide(data, std if nhwc else std.reshape(c, 1, 1), out=data)
            if data.dtype == np.uint16:  # 16-bit datasets: torch has no uint16; int32 is exact
                data = data.astype(np.int32)
            out: List[Any] = [torch.from_numpy(data)]
            for a in arrays_[1:-1]:
                if isinstance(a, list):  # boxes: torchvision's detection targets
                    out.append([{"boxes": torch.from_numpy(t["boxes"]),
                                 "labels": torch.from_numpy(t["labels"]).long(),
                                 "iscrowd": torch.from_numpy(t["flags"] & 1).long()}
                                for t in a])
                    continue
                if a.ndim == 4 and a.dtype in (np.uint8, np.uint16):  # masks (B, 1, H, W):
                    # int64 (B, H, W)
                    # (torch has no uint16: those are widened by NumPy)
                    m = a[:, 0] if a.dtype == np.uint8 else a[:, 0].astype(np.int64)
                    out.append(torch.from_numpy(m).long())
                    continue
                y = torch.from_numpy(a)
                out.append(y.long() if self.long_labels and not y.is_floating_point() else y)
            if self.return_indices:
                out.append(torch.from_numpy(indices))
            yield tuple(out)

    @property
    def _passes(self) -> Dict[int, int]:
        # Per process (a worker's copy of the dataset): passes seen per base seed.
        d: Optional[Tuple[int, Dict[int, int]]] = self.__dict__.get("_passes_d")
        if d is None or d[0] != os.getpid():
            d = (os.getpid(), {})
            self.__dict__["_passes_d"] = d
        return d[1]


class _EpochCounter:
    """The epoch of each pass, shared by the main process and the DataLoader's workers.

    Shared memory (a multiprocessing Array with a lock of the "spawn" context, which both
    forked and spawned workers can use): [base, count, then _SLOTS (key, epoch) pairs]. A pass
    takes epoch base + count, count += 1; its key records that epoch so that the pass's other
    workers get the same one. set_epoch(e) sets base = e, count = 0 and forgets the keys."""

    _SLOTS = 64

    def __init__(self, epoch: int) -> None:
        epoch = int(epoch)
        if epoch < 0:
            raise ValueError(f"epoch must be >= 0, not {epoch}")
        self._make(epoch)

    def _make(self, epoch: int) -> None:
        import multiprocessing
        self._arr = multiprocessing.get_context("spawn").Array("q", 2 + 2 * self._SLOTS)
        self._arr[0] = epoch

    def set(self, epoch: int) -> None:
        epoch = int(epoch)
        if epoch < 0:
            raise ValueError(f"epoch must be >= 0, not {epoch}")
        with self._arr.get_lock():
            # slice assignment works; typeshed (mypy 1.0) declares int indices only
            self._arr[:] = [epoch] + [0] * (len(self._arr) - 1)  # type: ignore[index]

    def next_epoch(self) -> int:
        with self._arr.get_lock():
            return self._arr[0] + self._arr[1]

    def take(self, key: Optional[Tuple[int, int]]) -> int:
        """The epoch of pass `key` (None: a pass of its own), assigning the next one if new."""
        a = self._arr
        with a.get_lock():
            if key is not None:
                k = (hash(key) & 0x7FFFFFFFFFFFFFFF) | 1  # 0 marks an empty slot
                for i in range(2, len(a), 2):
                    if a[i] == k:
                        return a[i + 1]
            epoch = a[0] + a[1]
            a[1] += 1
            if key is not None:
                slot = 2 + 2 * ((a[1] - 1) % self._SLOTS)
                a[slot], a[slot + 1] = k, epoch
            return epoch

    def __getstate__(self) -> Dict[str, Any]:
        from multiprocessing import context
        if context.get_spawning_popen() is not None:
            return {"arr": self._arr}  # a worker being started: share the memory
        return {"epoch": self.next_epoch()}  # e.g. pickle.dumps(dataset): a plain copy

    def __setstate__(self, state: Dict[str, Any]) -> None:
        if "arr" in state:
            self._arr = state["arr"]
        else:
            self._make(state["epoch"])
