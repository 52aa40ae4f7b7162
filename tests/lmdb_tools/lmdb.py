"""The part of python-lmdb's API the tests use, done with LMDB's own tools (mdb_dump, mdb_load,
mdb_stat from lmdb-utils) found on PATH.

For 32-bit test runs only (scripts/ci_32bit.sh puts this folder on PYTHONPATH): an LMDB file
is not portable between 32- and 64-bit programs (page numbers and sizes are size_t in the
file), the only python-lmdb on the machine is 64-bit, and the tools that script puts first on
PATH are the 32-bit ones (lmdb-utils:i386). The tests' cross-checks thus still read every key
and value with an independent LMDB implementation of the right word size. Writes (tests that
make an LMDB themselves) are buffered per transaction and committed with one mdb_load.
"""
import os
import subprocess

__version__ = "lmdb-tools-shim"


class Error(Exception):
    pass


class InvalidError(Error):
    pass


class MapFullError(Error):
    pass


def _run(args, data=None):
    p = subprocess.run(args, input=data, capture_output=True)
    if p.returncode:
        msg = p.stderr.decode("utf-8", "replace").strip() or f"{args[0]} exit {p.returncode}"
        if "MDB_INVALID" in msg or "MDB_VERSION_MISMATCH" in msg:
            raise InvalidError(msg)
        if "MDB_MAP_FULL" in msg:
            raise MapFullError(msg)
        raise Error(msg)
    return p.stdout


def _parse_dump(out):
    lines = out.split(b"\n")
    i = lines.index(b"HEADER=END") + 1
    items = []
    while lines[i] != b"DATA=END":
        k = bytes.fromhex(lines[i][1:].decode())
        v = bytes.fromhex(lines[i + 1][1:].decode())
        items.append((k, v))
        i += 2
    return items


class Cursor:
    def __init__(self, items):
        self._items = items

    def __iter__(self):
        return iter(self._items)

    def iternext(self, keys=True, values=True):
        for k, v in self._items:
            yield (k, v) if keys and values else (k if keys else v)


class Transaction:
    def __init__(self, env, write):
        self.env, self.write = env, write
        self._items, self._puts = None, {}

    def _all(self):
        if self._items is None:
            self._items = dict(self.env._dump())
        merged = dict(self._items)
        merged.update(self._puts)
        return sorted(merged.items())

    def get(self, key, default=None):
        if key in self._puts:
            return self._puts[key]
        if self._items is None:
            self._items = dict(self.env._dump())
        return self._items.get(bytes(key), default)

    def put(self, key, value, overwrite=True, **_):
        if not self.write:
            raise Error("put in a read-only transaction")
        if not overwrite and self.get(key) is not None:
            return False
        self._puts[bytes(key)] = bytes(value)
        return True

    def cursor(self, db=None):
        return Cursor(self._all())

    def commit(self):
        if self.write and self._puts:
            self.env._load(sorted(self._puts.items()))
        self._puts = {}

    def abort(self):
        self._puts = {}

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *_):
        if exc_type is None:
            self.commit()
        else:
            self.abort()


class Environment:
    def __init__(self, path, map_size=10485760, subdir=True, readonly=False, lock=True,
                 create=True, **_):
        self.path, self.subdir, self.readonly, self.map_size = str(path), subdir, readonly, map_size
        data = os.path.join(self.path, "data.mdb") if subdir else self.path
        if not os.path.exists(data):
            if readonly or not create:
                raise Error(f"{self.path}: No such file or directory")
            if subdir:
                os.makedirs(self.path, exist_ok=True)
            self._load([])  # python-lmdb creates the environment on open
        self.stat()  # refuses what is not an LMDB environment, as lmdb.open does

    def _flags(self):
        return [] if self.subdir else ["-n"]

    def _dump(self):
        return _parse_dump(_run(["mdb_dump"] + self._flags() + [self.path]))

    def _load(self, items):
        body = [b"VERSION=3", b"format=bytevalue", b"type=btree",
                b"mapsize=%d" % self.map_size, b"HEADER=END"]
        for k, v in items:
            body += [b" " + k.hex().encode(), b" " + v.hex().encode()]
        body.append(b"DATA=END")
        _run(["mdb_load"] + self._flags() + [self.path], b"\n".join(body) + b"\n")

    def _stat_lines(self, extra):
        out = _run(["mdb_stat"] + extra + self._flags() + [self.path]).decode()
        return {k.strip(): v.strip() for k, v in
                (line.split(":", 1) for line in out.splitlines() if ":" in line)}

    def stat(self):
        s = self._stat_lines(["-e"])
        return {"psize": int(s["Page size"]), "depth": int(s["Tree depth"]),
                "branch_pages": int(s["Branch pages"]), "leaf_pages": int(s["Leaf pages"]),
                "overflow_pages": int(s["Overflow pages"]), "entries": int(s["Entries"])}

    def info(self):
        s = self._stat_lines(["-e"])
        return {"map_size": int(s["Map size"]), "last_pgno": int(s["Number of pages used"]) - 1,
                "last_txnid": int(s["Last transaction ID"]), "max_readers": int(s["Max readers"]),
                "num_readers": int(s["Number of readers used"])}

    def begin(self, write=False, **_):
        if write and self.readonly:
            raise Error("write transaction in a read-only environment")
        return Transaction(self, write)

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.close()


def open(path, **kw):  # noqa: A001 (python-lmdb's name)
    return Environment(path, **kw)
