#!/usr/bin/env python3
"""contrib/slurm/gpucheck-pairwise --op net as an operator runs it, through real Slurm: the
four-node namespace cluster of tests/slurm/ns_cluster.py (munged and slurmctld here, each slurmd
in a network and UTS namespace of its own behind a bridge), one node's veth slowed both ways
with tc's token bucket (tbf), and

  salloc -N 4 --exclusive -J pairwise -- gpucheck-pairwise --op net --gpucheck GPUCHECK \\
    --net-bytes 2MiB --timeout 30 --drain --out DIR --json -

from this (the submit) host, the recipe's default launcher: one `srun --nodelist=A,B` per pair,
`gpucheck bench --ops net` on each of the two nodes meeting at A. It must blame exactly the
slowed node within ceil(log2 4) + 1 = 3 rounds and drain it (and no other), every pair's
document must come from ranks on the two nodes the pair names, and at the end no daemon,
namespace, link or temp dir of the run is left.

Usage: srun_pairwise_test.py GPUCHECK SOURCE_DIR [NODE]   (NODE: the one to slow; default random)
Exit 0 pass, 1 fail, 77 skipped (printed reason: not root, packages missing, or namespaces,
veths, a bridge or tc's tbf cannot be made here).
"""
import json
import math
import os
import random
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ns_cluster  # noqa: E402
from ns_cluster import wait_for  # noqa: E402

NODES = ("node1", "node2", "node3", "node4")
# 20 Mbit/s against the bridge's several GB/s: far below half the median pair, and 2 MiB a
# repetition keeps a slowed pair's three repetitions each way to a few seconds.
TBF = ["root", "tbf", "rate", "20mbit", "burst", "32kbit", "latency", "400ms"]


def skip(why):
    print(f"SKIP: {why}")
    sys.exit(77)


def kill_session(sid):
    """SIGKILL to every process of session sid (salloc, the recipe and its sruns)."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.getsid(int(pid)) == sid:
                os.kill(int(pid), signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def slow_down(c, node):
    """tbf on both ends of node's veth: what it sends (its eth0) and what reaches it (the
    bridge's end)."""
    i = NODES.index(node) + 1
    try:
        ns_cluster._sh(["tc", "qdisc", "add", "dev", f"{c.tag}v{i}"] + TBF)
        ns_cluster._sh(["tc", "-n", c.netns[node], "qdisc", "add", "dev", "eth0"] + TBF)
    except RuntimeError as e:
        raise ns_cluster.Unavailable(f"tc's tbf is not available here: {e}") from e


def scenario(c, gpucheck, script, slow):
    t0 = time.monotonic()

    def say(text):
        print(f"ok: {text} ({time.monotonic() - t0:.1f} s)", flush=True)

    wait_for(lambda: c.check_daemons() or
             all(s == "idle" for s, _ in (c.nodes_state().get(n, ("absent", ""))
                                          for n in NODES)), 60, "all four nodes to be idle")
    say("four nodes idle")
    slow_down(c, slow)
    say(f"{slow}'s veth slowed to {TBF[3]} both ways")

    out = c.path("pairs")
    # The recipe runs where salloc runs it, on the submit host: its srun reaches every node
    # over the bridge, as a login node's reaches a cluster's.
    cmd = ["salloc", "-N", str(len(NODES)), "--exclusive", "-J", "pairwise", "--",
           sys.executable, script, "--op", "net", "--gpucheck", gpucheck,
           "--net-bytes", "2MiB", "--timeout", "30", "--drain", "--out", out, "--json", "-"]
    print("$ " + " ".join(cmd), flush=True)
    started = time.monotonic()
    # A session of its own, so a recipe that hangs goes with its srun steps, not only salloc
    # (which puts its command in a process group of its own); the limit is well inside ctest's
    # TIMEOUT, so the cluster still comes down in `finally`.
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=c.env, start_new_session=True)
    try:
        stdout, stderr = p.communicate(timeout=180)
    except subprocess.TimeoutExpired:
        kill_session(p.pid)
        stdout, stderr = p.communicate()
        print(stderr)
        raise AssertionError("the recipe did not end within 180 s")
    finally:
        if p.poll() is None:
            kill_session(p.pid)
            p.wait()
    r = subprocess.CompletedProcess(cmd, p.returncode, stdout, stderr)
    took = time.monotonic() - started
    print(r.stderr.rstrip())
    try:
        summary = json.loads(r.stdout)
    except ValueError:
        raise AssertionError(f"no JSON summary on stdout (exit {r.returncode}): {r.stdout!r}")
    print(json.dumps(summary, indent=1))
    most = math.ceil(math.log2(len(NODES))) + 1
    assert summary.get("blamed") == [slow], f"blamed {summary.get('blamed')}, not [{slow}]"
    assert not summary.get("undecided"), f"undecided: {summary.get('undecided')}"
    assert 1 <= summary.get("rounds", 0) <= most, (
        f"{summary.get('rounds')} rounds, more than ceil(log2 {len(NODES)}) + 1 = {most}")
    assert r.returncode == 1, f"exit {r.returncode}, not 1 (a node blamed)"
    say(f"the recipe blamed {slow} alone in {summary['rounds']} rounds ({took:.1f} s)")

    # Each pair ran where it says: rank 0 on its first node, rank 1 on its second (a node's
    # UTS namespace gives its ranks its name), both on the nodes' own addresses.
    for pair in summary["pairs"]:
        a, b = pair["nodes"]
        path = os.path.join(out, f"pair-{a}-{b}.json")
        with open(path) as f:
            doc = json.load(f)
        hosts = [rk.get("hostname") for rk in sorted(doc.get("ranks", []),
                                                     key=lambda rk: rk.get("rank", 0))]
        assert hosts == [a, b], f"{path}: ranks on {hosts}, not [{a}, {b}]"
        ends = {(rec["src"].get("addr"), rec["dst"].get("addr"))
                for rec in doc.get("results", []) if rec.get("op") == "net"}
        want = {(c.addr[a], c.addr[b]), (c.addr[b], c.addr[a])}
        assert ends == want, f"{path}: net records between {ends}, not {want}"
        with_slow = slow in (a, b)
        assert pair["pass"] != with_slow, (
            f"pair {a} + {b} {'passed' if pair['pass'] else 'failed'} at {pair.get('gbps')} GB/s")
    rates = {tuple(p["nodes"]): p.get("gbps") for p in summary["pairs"]}
    say(f"every pair's ranks ran on its two nodes; rates {rates}")

    states = c.nodes_state()
    drained = sorted(n for n, (s, _) in states.items() if s.startswith("drain"))
    assert drained == [slow], f"drained {drained}, not [{slow}]: {states}"
    reason = states[slow][1]
    assert reason.startswith("gpucheck: pairwise net failed with "), f"reason {reason!r}"
    jobs = c.run(["squeue", "-h", "-o", "%i %T"], check=False).stdout.strip()
    assert not jobs, f"jobs left after the recipe: {jobs}"
    say(f"{slow} alone drained ({reason!r}); the allocation is gone")


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__)
        return 2
    gpucheck, source = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    script = os.path.join(source, "contrib", "slurm", "gpucheck-pairwise")
    try:
        ns_cluster.check_host()
    except ns_cluster.Unavailable as e:
        skip(str(e))
    missing = [t for t in ("srun", "salloc", "squeue", "tc") if shutil.which(t) is None]
    if missing:
        skip(f"not installed: {', '.join(missing)} (bash tools/setup-debian.sh --set test)")
    if not os.access(gpucheck, os.X_OK):
        print(f"FAIL: {gpucheck} is not an executable")
        return 1
    slow = sys.argv[3] if len(sys.argv) == 4 else random.choice(NODES)
    if slow not in NODES:
        print(f"FAIL: {slow} is none of {', '.join(NODES)}")
        return 2
    print(f"slowing {slow} of {', '.join(NODES)}", flush=True)
    c = ns_cluster.Cluster(NODES)
    # Run from inside a Slurm job (a CI runner's, say), salloc would take the outer job's
    # SLURM_* for its own; SRUN and SCONTROL would steer the recipe off this cluster.
    c.env = {k: v for k, v in c.env.items()
             if not k.startswith("SLURM_") and k not in ("SRUN", "SCONTROL")}

    def start():
        c.prepare()
        c.start()

    # The qdiscs go with the veths and namespaces they sit on.
    return ns_cluster.run_test(c, start, lambda: scenario(c, gpucheck, script, slow))


if __name__ == "__main__":
    sys.exit(main())
