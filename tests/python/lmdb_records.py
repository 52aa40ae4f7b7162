"""All (key, value) records of an LMDB environment in key order, read with python3-lmdb: the
independent reader the merge and shard checks compare libdata's LMDB output with."""
import lmdb


def records(path):
    env = lmdb.open(path, readonly=True, lock=False)
    try:
        with env.begin() as t:
            return list(t.cursor())
    finally:
        env.close()
