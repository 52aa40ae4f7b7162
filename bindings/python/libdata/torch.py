"""libdata.torch: a PyTorch IterableDataset over libdata.Reader.

    from torch.utils.data import DataLoader
    import libdata.torch
    ds = libdata.torch.Dataset("train.h5", batch_size=64, shuffle=True, dtype="float32",
                               scale=1/255)
    loader = DataLoader(ds, batch_size=None, num_workers=2)   # the dataset batches itself
    for epoch in range(10):
        ds.set_epoch(epoch)                                     # new permutation each epoch
        for x, y in loader:                                     # x: float32 NCHW, y: int64
            ...

Epochs: every pass over the DataLoader (every iter(loader), i.e. every `for` loop) is a new
epoch, whether or not the previous pass was read to its end (`break`), with num_workers=0,
with workers, and with persistent_workers=True. Without set_epoch() the passes are epochs
epoch, epoch + 1, epoch + 2, ... (`epoch` from the constructor, default 0); set_epoch(e) makes
the next pass epoch e (and the ones after it e + 1, ...), as DistributedSampler.set_epoch does.
An epoch's order (and its random crops and mirrors) depends only on (seed, epoch), so a job
resumed with Dataset(..., epoch=N) or set_epoch(N) reads what an uninterrupted job reads in
epoch N. The epoch reaches worker processes through shared memory (their Dataset is a copy):
the first worker of a pass to start takes the epoch and the others of that pass join it.

Work is split across DataLoader workers and distributed ranks with no duplicates: worker w of
W on rank r of R reads share (r * W + w) of (R * W) of every epoch's permutation. The C reader
cuts the permutation (identical everywhere: same seed, same epoch) into equal contiguous shares
of floor(N / (R*W)) samples, so the N mod (R*W) samples left over are skipped that epoch
(different ones each epoch when shuffling), as LD_R_WORLD documents.

The reader is opened inside __iter__, i.e. in the worker process after the DataLoader forked
it: no reader thread or file handle crosses a fork. torch is imported only by this module.

Workers or not: the C reader already reads, decodes and transforms with its own threads, so
num_workers=0 is usually the fastest (bench/python_read_bench.py: ~125k vs ~17k samples/s for
64x64 uint8 batches on 2 cores, where DataLoader workers pay for moving every batch through
shared memory). Use workers when per-batch Python work, not reading, is the bottleneck.
"""
import os
from typing import Any, Dict, Iterator, Optional, Tuple, Union

import torch
from torch.utils.data import IterableDataset, get_worker_info

from .reader import PathLike, Reader

# What a pass yields: (data, labels), or (data, labels, indices) with return_indices.
Item = Union[Tuple[torch.Tensor, torch.Tensor], Tuple[torch.Tensor, torch.Tensor, torch.Tensor]]


def _dist_rank_world() -> Tuple[int, int]:
    dist = getattr(torch, "distributed", None)
    if dist is not None and dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


class Dataset(IterableDataset):
    """Yields (data, labels) tensors, one batch at a time; use DataLoader(batch_size=None).

    path, batch_size, shuffle, seed and every other keyword go to libdata.Reader (dtype,
    layout, crop, mirror, mean, scale, memory_budget, drop_last, ...).
      rank, world   distributed share; None (default) = torch.distributed's when initialized,
                    else 0 and 1
      threads       reader threads per process; None = the cores divided among the workers
      long_labels   True (default): labels as int64 (what nn.CrossEntropyLoss wants)
      return_indices  True: yield (data, labels, indices), indices = the samples' dataset
                    positions (int64), e.g. to check coverage or look up file names
      epoch         the epoch of the first pass (to resume); set_epoch() changes the epoch
                    of the next pass; without it each pass is the next epoch (see above)
    """

    def __init__(self, path: PathLike, batch_size: int = 64, shuffle: Union[bool, str] = False,
                 seed: int = 0, rank: Optional[int] = None, world: Optional[int] = None,
                 threads: Optional[int] = None, long_labels: bool = True,
                 return_indices: bool = False, epoch: int = 0, **reader_kwargs: Any) -> None:
        super().__init__()
        for bad in ("copy", "log"):
            if bad in reader_kwargs:
                raise TypeError(f"{bad!r} is not supported by the torch adapter")
        self.path: Union[str, bytes] = os.fspath(path)
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.seed = seed
        self.rank = rank
        self.world = world
        self.threads = threads
        self.long_labels = long_labels
        self.return_indices = return_indices
        self._counter = _EpochCounter(epoch)
        self.reader_kwargs = reader_kwargs

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

    def shard(self) -> Tuple[int, int]:
        """(rank, world) of the reader this process would open: ranks x DataLoader workers."""
        rank, world = _dist_rank_world()
        if self.rank is not None:
            rank = self.rank
        if self.world is not None:
            world = self.world
        info = get_worker_info()
        nw, wid = (info.num_workers, info.id) if info is not None else (1, 0)
        return rank * nw + wid, world * nw

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
        return self._batches(info, epoch)

    def _batches(self, info: Any, epoch: int) -> Iterator[Item]:
        nw = info.num_workers if info is not None else 1
        threads = self.threads
        if threads is None:
            # Every worker runs its own reader: share the cores instead of oversubscribing.
            threads = max(1, (os.cpu_count() or 1) // nw) if info is not None else 0
        rank, world = self.shard()
        with Reader(self.path, batch_size=self.batch_size, shuffle=self.shuffle,
                    seed=self.seed, rank=rank, world=world, threads=threads, epoch=epoch,
                    copy=True, **self.reader_kwargs) as r:
            for data, labels in r:
                x = torch.from_numpy(data)
                y = torch.from_numpy(labels)
                if self.long_labels and not y.is_floating_point():
                    y = y.long()
                if self.return_indices:
                    yield x, y, torch.from_numpy(r.indices)
                else:
                    yield x, y

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
