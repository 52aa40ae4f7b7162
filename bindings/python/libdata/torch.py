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

import torch
from torch.utils.data import IterableDataset, get_worker_info

from .reader import Reader


def _dist_rank_world():
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
      epoch         the first epoch; set_epoch() changes it (call it every epoch when the
                    DataLoader's workers are not persistent, as with DistributedSampler)
    """

    def __init__(self, path, batch_size=64, shuffle=False, seed=0, rank=None, world=None,
                 threads=None, long_labels=True, return_indices=False, epoch=0,
                 **reader_kwargs):
        super().__init__()
        for bad in ("copy", "log"):
            if bad in reader_kwargs:
                raise TypeError(f"{bad!r} is not supported by the torch adapter")
        self.path = os.fspath(path)
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.seed = seed
        self.rank = rank
        self.world = world
        self.threads = threads
        self.long_labels = long_labels
        self.return_indices = return_indices
        self.epoch = epoch
        self.reader_kwargs = reader_kwargs

    def set_epoch(self, epoch):
        self.epoch = int(epoch)

    def shard(self):
        """(rank, world) of the reader this process would open: ranks x DataLoader workers."""
        rank, world = _dist_rank_world()
        if self.rank is not None:
            rank = self.rank
        if self.world is not None:
            world = self.world
        info = get_worker_info()
        nw, wid = (info.num_workers, info.id) if info is not None else (1, 0)
        return rank * nw + wid, world * nw

    def __iter__(self):
        info = get_worker_info()
        nw = info.num_workers if info is not None else 1
        threads = self.threads
        if threads is None:
            # Every worker runs its own reader: share the cores instead of oversubscribing.
            threads = max(1, (os.cpu_count() or 1) // nw) if info is not None else 0
        rank, world = self.shard()
        with Reader(self.path, batch_size=self.batch_size, shuffle=self.shuffle,
                    seed=self.seed, rank=rank, world=world, threads=threads, epoch=self.epoch,
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
        # A persistent worker (or the main process) moves on to the next epoch by itself.
        self.epoch += 1
