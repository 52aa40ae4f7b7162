#!/usr/bin/env bash
# Ctrl-C while a huge input is still being listed stops the run at once (exit 130, nothing
# written), instead of after the whole listing. The list names 6 million files under a root
# that does not exist: with --strict, a run that is not interrupted lists them all and stops
# at the first missing file, which gives the time the listing takes.
source "$(dirname "$0")/lib/common.sh"
seq -f "d/f%.0f.jpg 1" 6000000 > "$TMP/big.txt"
"$PYTHON" - "$DATACONV" "$TMP" <<'PY'
import os, signal, subprocess, sys, time
dataconv, tmp = sys.argv[1], sys.argv[2]
args = [dataconv, "--list", f"{tmp}/big.txt", "--root", f"{tmp}/none", f"{tmp}/out.h5", "--strict"]
t = time.monotonic()
full = subprocess.run(args, capture_output=True, text=True)
listing = time.monotonic() - t
assert full.returncode in (1, 3) and "stopped: strict" in full.stderr and "--strict on the command line" in full.stderr, full.stderr[-500:]
print(f"check: the full listing takes {listing:.2f} s")
p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
time.sleep(listing * 0.15)
t = time.monotonic()
p.send_signal(signal.SIGINT)
out, err = p.communicate()
latency = time.monotonic() - t
print(f"check: SIGINT at {listing * 0.15:.2f} s: exit {p.returncode} after {latency:.2f} s")
assert p.returncode == 130, (p.returncode, err)
assert "interrupted" in err and "nothing was written" in err, err
assert not os.path.exists(f"{tmp}/out.h5"), "output written"
assert not [f for f in os.listdir(tmp) if ".tmp-" in f], os.listdir(tmp)
assert latency < listing * 0.5, f"took {latency:.2f} s to stop (listing {listing:.2f} s)"
PY
echo "interrupt_listing: all checks passed"
