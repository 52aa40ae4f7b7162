"""Issue 26 item 2: libdata.torch.Dataset under torch.distributed reads each rank's share
whatever launched the ranks (torchrun's RANK/WORLD_SIZE variables and env:// rendezvous, or
torch.multiprocessing.spawn with init_process_group in each rank) and whatever starts the
DataLoader's workers ("fork", or "spawn", where a worker has no process group): 2 ranks on
gloo over loopback, 305 samples, each rank ceil(305 / 2) = 153 of them, together all 305.
Before, spawned workers read the whole dataset on every rank.

Run: LIBDATA_LIBRARY=build/libdata.so LD_TEST_DATA=build/testdata PYTHONPATH=bindings/python \
     /usr/bin/python3 -m pytest -q tests/python/test_py_torch_ddp.py
"""
import json
import os
import socket
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

import torch_ddp_rank  # noqa: E402 (tests/python: the ranks' code)

TESTDATA = os.environ.get("LD_TEST_DATA", "")
pytestmark = [
    pytest.mark.skipif(not os.path.isdir(os.path.join(TESTDATA, "photos")),
                       reason="LD_TEST_DATA must point at the made fixtures"),
    pytest.mark.skipif(not torch.distributed.is_available(),
                       reason="torch.distributed not available"),
]
N, WORLD, BATCH = 305, 2, 16


@pytest.fixture(scope="module")
def p305(photo_list_h5):
    return photo_list_h5(N, 8)[0]


def check(out, cases):
    """Every case: each rank read ceil(N / WORLD) distinct samples, len(loader) batches of
    them, and the ranks together every sample; all the cases' problems in one message."""
    ranks = [json.loads((out / f"rank{r}.json").read_text()) for r in range(WORLD)]
    problems = []
    for case in cases:
        what = {"env": "RANK/WORLD_SIZE only, no workers"}.get(case, case + " workers")
        seen = []
        for r, got in enumerate(ranks):
            idx, length = got[case]
            if not len(idx) == len(set(idx)) == -(-N // WORLD):
                problems.append(f"{what}: rank {r} of {WORLD} read {len(idx)} samples "
                                f"({len(set(idx))} unique) of {N}")
            if length != -(-len(idx) // BATCH):
                problems.append(f"{what}: rank {r}: len(loader) = {length}")
            seen += idx
        if sorted(set(seen)) != list(range(N)):
            problems.append(f"{what}: samples no rank read: "
                            f"{sorted(set(range(N)) - set(seen))}")
    assert not problems, "\n".join(problems)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_torchrun_style_ranks_read_their_shares(p305, tmp_path):
    port = str(free_port())
    procs = []
    for rank in range(WORLD):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(WORLD), LOCAL_RANK=str(rank),
                   LOCAL_WORLD_SIZE=str(WORLD), MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
        procs.append(subprocess.Popen([sys.executable, torch_ddp_rank.__file__, p305,
                                       str(tmp_path)], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True))
    outs = []
    try:
        for p in procs:
            outs.append(p.communicate(timeout=240)[0])
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    for rank, (p, text) in enumerate(zip(procs, outs)):
        assert p.returncode == 0, f"rank {rank} failed:\n{text[-3000:]}"
    check(tmp_path, ["env", "fork", "spawn"])  # env: no process group yet, no workers


def test_multiprocessing_spawn_ranks_read_their_shares(p305, tmp_path):
    init = "file://" + str(tmp_path / "rendezvous")
    torch.multiprocessing.spawn(torch_ddp_rank.spawn_main,
                                args=(WORLD, init, p305, str(tmp_path)), nprocs=WORLD)
    check(tmp_path, ["fork", "spawn"])
