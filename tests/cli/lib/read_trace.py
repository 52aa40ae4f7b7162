"""What a reader's system calls did, from `strace -ff -s 0 -e
trace=pread64,preadv,preadv2,/^fadvise64 -o PREFIX`: one file per thread, so no call is split by
another thread's. Prints one line, "CALLS LARGEST ADVISED MOST ADVICE WAITED UNADVISED PROBES":
  CALLS, LARGEST   read calls (pread64, preadv, preadv2; HDF5's own metadata reads at open
                   included) and the most bytes one returned;
  ADVISED, MOST, ADVICE   bytes advised (posix_fadvise WILLNEED), the most one call advised,
                   and the number of such calls;
  WAITED, UNADVISED   over the reading threads (those that probe with preadv2 RWF_NOWAIT or
                   advise): the bytes read by calls that may wait for I/O (pread64, preadv:
                   what a probe did not find cached), and how many of those bytes the thread
                   had not advised before;
  PROBES           preadv2 RWF_NOWAIT calls: 0 where the kernel or an emulator lacks preadv2
                   (the reader then advises every piece).
Usage: read_trace.py TRACE_FILE..."""
import bisect
import re
import sys


def add(spans, a, b):
    """Adds [a, b) to spans, a sorted list of disjoint [start, end) pairs, merging overlaps."""
    i = bisect.bisect_left(spans, (a, a))
    if i and spans[i - 1][1] >= a:
        i -= 1
    j = i
    while j < len(spans) and spans[j][0] <= b:
        a, b = min(a, spans[j][0]), max(b, spans[j][1])
        j += 1
    spans[i:j] = [(a, b)]


def covered(spans, a, b):
    """Bytes of [a, b) inside spans."""
    i = max(bisect.bisect_left(spans, (a, a)) - 1, 0)
    n = 0
    while i < len(spans) and spans[i][0] < b:
        n += max(0, min(b, spans[i][1]) - max(a, spans[i][0]))
        i += 1
    return n


calls = largest = advised = most = advice = waited = unadvised = probes = 0
for path in sys.argv[1:]:
    with open(path) as f:
        lines = f.read().splitlines()
    reader = any(ln.startswith(("preadv2(", "fadvise64")) for ln in lines)
    done = {}  # fd -> the ranges this thread advised so far
    for ln in lines:
        m = re.match(r"fadvise64(?:_64)?\((\d+), (\d+), (\d+), POSIX_FADV_WILLNEED", ln)
        if m:
            fd, off, n = map(int, m.groups())
            add(done.setdefault(fd, []), off, off + n)
            advised += n
            most = max(most, n)
            advice += 1
            continue
        m = re.match(r"(?:pread64|preadv2?)\((\d+), .*, (\d+)(, RWF_NOWAIT)?\)\s+=\s+(-?\d+)", ln)
        if not m:
            continue
        fd, off, probe, got = int(m.group(1)), int(m.group(2)), m.group(3), int(m.group(4))
        calls += 1
        probes += bool(probe)
        largest = max(largest, got)
        if reader and not probe and got > 0:
            waited += got
            unadvised += got - covered(done.get(fd, []), off, off + got)
print(calls, largest, advised, most, advice, waited, unadvised, probes)
