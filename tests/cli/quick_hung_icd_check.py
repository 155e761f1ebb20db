#!/usr/bin/env python3
"""doctor --quick with an OpenCL ICD that hangs in clGetPlatformIDs (the fake ICD,
FAKE_ICD_HANG=1): the probe child and its per-ICD re-run are killed inside --timeout, the hung
enumeration is a FAIL (exit 1, which outranks the OpenCL checks that could not answer), gpucheck
ends before the deadline, and no probe child of this run is left behind (found by its unique
OCL_ICD_VENDORS in /proc/*/environ).

Usage: quick_hung_icd_check.py GPUCHECK FAKE_ICD     Exit 0 pass, 1 fail."""
import os
import subprocess
import sys
import tempfile
import time

gpucheck, fake_icd = sys.argv[1], sys.argv[2]
vendors = tempfile.mkdtemp(prefix="gpucheck_hung_icd_")
with open(os.path.join(vendors, "fake.icd"), "w") as f:
    f.write(fake_icd + "\n")
env = dict(os.environ, OCL_ICD_VENDORS=vendors, FAKE_ICD_HANG="1")
env.pop("OCL_ICD_FILENAMES", None)


def run(timeout):
    start = time.monotonic()
    r = subprocess.run([gpucheck, "doctor", "--quick", "--no-state", "--timeout", str(timeout),
                        "--format", "oneline"], capture_output=True, text=True, env=env,
                       timeout=120)
    took = time.monotonic() - start
    time.sleep(0.5)
    left = []
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if f"OCL_ICD_VENDORS={vendors}".encode() in f.read().split(b"\0"):
                    left.append(pid)
        except OSError:
            pass
    print(f"--timeout {timeout}: exit {r.returncode} after {took:.1f} s: {r.stdout.strip()!r}; "
          f"left behind: {left}")
    return r, took, left


# Room for both probe stages: the hung ICD is a finding (enumeration hung), FAIL outranks the
# OpenCL checks that could not answer.
r, took, left = run(10)
ok = (r.returncode == 1 and r.stdout.startswith("FAIL GC-OPENCL-ENUM-FAILED: opencl_enumeration: ") and took < 10.5
      and not left)
# Little room: whether the deadline falls inside the probe (every check unanswered: 2) or just
# after it (1, as above) depends on the machine's load; the deadline holds and nothing is left.
r, took, left = run(3)
verdict = (r.returncode == 2 and r.stdout.startswith("UNKNOWN no answer within 3 s: ")) or (
    r.returncode == 1 and r.stdout.startswith("FAIL GC-OPENCL-ENUM-FAILED: opencl_enumeration: "))
ok = ok and verdict and took < 3.5 and not left
os.remove(os.path.join(vendors, "fake.icd"))
os.rmdir(vendors)
sys.exit(0 if ok else 1)
