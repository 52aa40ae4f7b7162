"""One rank of the distributed launches of test_py_torch_ddp.py: reads an epoch of a
libdata.torch.Dataset through DataLoaders with forked and with spawned workers and writes
what it read to OUT/rank<R>.json: {case: [indices in order, len(loader) or null]}.

torchrun style: python3 torch_ddp_rank.py DATASET OUT, with RANK, WORLD_SIZE, LOCAL_RANK,
MASTER_ADDR and MASTER_PORT set (env:// rendezvous, as torchrun does).
torch.multiprocessing.spawn style: spawn_main(rank, world, init, dataset, out), no variables.
"""
import json
import os
import sys

import torch.distributed as dist
from torch.utils.data import DataLoader

import libdata.torch


def dataset(path):
    return libdata.torch.Dataset(path, batch_size=16, shuffle=True, seed=5, return_indices=True)


def read(ds, workers, context=None):
    loader = DataLoader(ds, batch_size=None, num_workers=workers,
                        multiprocessing_context=context if workers else None)
    idx = []
    for _, _, i in loader:
        idx += i.tolist()
    try:
        n = len(loader)
    except TypeError:  # no len() (before issue 26 item 14): the shares are what is checked
        n = None
    return idx, n


def loaders(ds):
    # spawned workers start with no process group: rank and world must come from the parent
    return {"fork": read(ds, 2, "fork"), "spawn": read(ds, 1, "spawn")}


def write(out, rank, results):
    with open(os.path.join(out, f"rank{rank}.json"), "w") as f:
        json.dump(results, f)


def spawn_main(rank, world, init, path, out):
    """torch.multiprocessing.spawn's target: no RANK/WORLD_SIZE; the dataset is made before
    init_process_group (rank and world are taken when the DataLoader starts its workers)."""
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        os.environ.pop(name, None)
    ds = dataset(path)
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world)
    try:
        write(out, rank, loaders(ds))
        dist.barrier()
    finally:
        dist.destroy_process_group()


def torchrun_main(path, out):
    rank = int(os.environ["RANK"])
    results = {"env": read(dataset(path), 0)}  # RANK / WORLD_SIZE alone, no process group yet
    dist.init_process_group("gloo")  # env://: MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE
    try:
        results.update(loaders(dataset(path)))
        write(out, rank, results)
        dist.barrier()
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    torchrun_main(sys.argv[1], sys.argv[2])
