"""What a reader's system calls did, from `strace -ff -s 0 -e
trace=pread64,preadv,preadv2,/^fadvise64 -o PREFIX`: one file per thread, so no call is split by
another thread's. Prints one line, "CALLS LARGEST ADVISED MOST ADVICE WAITED UNADVISED":
  CALLS, LARGEST   read calls (pread64, preadv, preadv2; HDF5's own metadata reads at open
                   included) and the most bytes one returned;
  ADVISED, MOST, ADVICE   bytes advised (posix_fadvise WILLNEED), the most one call advised,
                   and the number of such calls;
  WAITED, UNADVISED   over the reading threads (those that probe with preadv2 RWF_NOWAIT or
                   advise): the bytes read by calls that may wait for I/O (pread64, preadv:
                   what a probe did not find cached), and how many of those bytes the thread
                   had not advised before.
Usage: read_trace.py TRACE_FILE..."""
import re
import sys

calls = largest = advised = most = advice = waited = unadvised = 0
for path in sys.argv[1:]:
    with open(path) as f:
        lines = f.read().splitlines()
    reader = any(ln.startswith(("preadv2(", "fadvise64")) for ln in lines)
    done = {}  # fd -> the ranges this thread advised so far
    for ln in lines:
        m = re.match(r"fadvise64(?:_64)?\((\d+), (\d+), (\d+), POSIX_FADV_WILLNEED", ln)
        if m:
            fd, off, n = map(int, m.groups())
            done.setdefault(fd, []).append((off, off + n))
            advised += n
            most = max(most, n)
            advice += 1
            continue
        m = re.match(r"(?:pread64|preadv2?)\((\d+), .*, (\d+)(, RWF_NOWAIT)?\)\s+=\s+(-?\d+)", ln)
        if not m:
            continue
        fd, off, probe, got = int(m.group(1)), int(m.group(2)), m.group(3), int(m.group(4))
        calls += 1
        largest = max(largest, got)
        if reader and not probe and got > 0:
            waited += got
            unadvised += got - sum(max(0, min(off + got, b) - max(off, a)) for a, b in done.get(fd, []))
print(calls, largest, advised, most, advice, waited, unadvised)
