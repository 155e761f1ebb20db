#!/usr/bin/env python3
"""contrib/slurm/gpucheck-pairwise's pairing and blame with a stand-in runner (no Slurm, no
GPU): the runner fails a pair when one of its nodes is in BAD (or the pair is in FLAKY, once),
and records every pair it ran. Also the srun command the script forms, through a stand-in srun.

Usage: pairwise_test.py SOURCE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

SRC = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
SCRIPT = os.path.join(SRC, "contrib", "slurm", "gpucheck-pairwise")
TMP = tempfile.mkdtemp(prefix="pairwise-test-")

RUNNER = os.path.join(TMP, "runner")
with open(RUNNER, "w") as f:
    f.write("""#!/bin/sh
# NODE_A NODE_B PORT OUT: fails when a node is bad, or the pair is flaky the first time.
echo "$1 $2" >> "$PAIRS_LOG"
for n in $BAD; do [ "$n" = "$1" ] || [ "$n" = "$2" ] && { echo "all-reduce mismatch" >&2; exit 1; }; done
for p in $FLAKY; do
  if [ "$p" = "$1+$2" ] && [ ! -e "$PAIRS_LOG.$p" ]; then touch "$PAIRS_LOG.$p"; exit 1; fi
done
exit 0
""")
os.chmod(RUNNER, 0o755)

failed = []


def check(what, cond):
    if not cond:
        failed.append(what)
        print(f"FAIL: {what}")


def run(nodes, bad=(), flaky=(), extra=(), runner=True, env=None):
    log = os.path.join(TMP, f"pairs-{len(os.listdir(TMP))}.log")
    e = dict(os.environ, BAD=" ".join(bad), FLAKY=" ".join(flaky), PAIRS_LOG=log)
    e.update(env or {})
    cmd = [sys.executable, SCRIPT, "--nodes", ",".join(nodes), "--json", "-", "--out", TMP]
    if runner:
        cmd += ["--runner", RUNNER]
    r = subprocess.run(cmd + list(extra), capture_output=True, text=True, env=e, timeout=60)
    pairs = open(log).read().split("\n") if os.path.exists(log) else []
    summary = json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}
    return r, summary, [p for p in pairs if p]


nodes = [f"n{i}" for i in range(1, 7)]

# Healthy: three pairs, nobody blamed, exit 0.
r, s, pairs = run(nodes)
check("healthy exits 0", r.returncode == 0)
check("healthy runs pass 1 only", sorted(pairs) == ["n1 n2", "n3 n4", "n5 n6"])
check("healthy blames nobody", s.get("blamed") == [] and sorted(s.get("cleared", [])) == nodes)

# One bad node: its pair fails, each of the pair meets a good node, only the bad one is blamed.
r, s, pairs = run(nodes, bad=["n3"])
check("one bad exits 1", r.returncode == 1)
check("one bad is blamed", s.get("blamed") == ["n3"])
check("its partner is cleared", "n4" in s.get("cleared", []))
check("pass 2 pairs the failed pair with good nodes",
      any(p.startswith("n3 ") and p != "n3 n4" for p in pairs) and
      any(p.startswith("n4 ") for p in pairs))
check("blame names the partners", "BLAMED n3" in r.stderr)

# A flaky pair (fails once): both of its nodes pass with good nodes; nobody blamed.
r, s, _ = run(nodes, flaky=["n1+n2"])
check("a flaky pair blames nobody", r.returncode == 0 and s.get("blamed") == [])

# Both nodes of one pair bad: both blamed after failing with good nodes.
r, s, _ = run(nodes, bad=["n5", "n6"])
check("two bad of one pair both blamed", sorted(s.get("blamed", [])) == ["n5", "n6"])

# An odd node out that is bad: two good partners, two failures, blamed; good odd one cleared.
odd = nodes + ["n7"]
r, s, pairs = run(odd, bad=["n7"])
check("odd bad node blamed after two good partners",
      s.get("blamed") == ["n7"] and len([p for p in pairs if p.startswith("n7 ")]) == 2)
r, s, _ = run(odd)
check("odd good node cleared", r.returncode == 0 and "n7" in s.get("cleared", []))

# Every pair fails: no good node to compare with, so nobody is blamed, all undecided.
r, s, _ = run(nodes[:4], bad=["n1", "n3"])
check("no good node: undecided, not blamed",
      r.returncode == 1 and s.get("blamed") == [] and sorted(s.get("undecided", [])) == nodes[:4])

# Usage errors.
for args, what in ((["--nodes", "n1"], "one node"), (["--nodes", "n1,n1"], "a node twice"),
                   (["--nodes", "n1,n2", "--port", "0"], "port 0")):
    r = subprocess.run([sys.executable, SCRIPT] + args, capture_output=True, text=True,
                       env=dict(os.environ, SLURM_JOB_NODELIST=""))
    check(f"usage error: {what}", r.returncode == 2 and "gpucheck-pairwise:" in r.stderr)

# The srun command of a pair, through a stand-in srun that records its arguments and succeeds.
srun = os.path.join(TMP, "srun")
argv_log = os.path.join(TMP, "srun.log")
token_log = os.path.join(TMP, "tokens.log")
with open(srun, "w") as f:
    f.write(f'#!/bin/sh\necho "$@" >> {argv_log}\necho "$GPUCHECK_RENDEZVOUS_TOKEN" >> {token_log}\n'
            'exit 0\n')
os.chmod(srun, 0o755)
# A stand-in scontrol: node a's NodeAddr is 10.1.2.3, b's an IPv6 address.
scontrol = os.path.join(TMP, "scontrol")
with open(scontrol, "w") as f:
    f.write('#!/bin/sh\necho "NodeName=a Arch=x86_64 NodeAddr=10.1.2.3 NodeHostName=a"\n'
            'echo "NodeName=b Arch=x86_64 NodeAddr=fd00::2 NodeHostName=b"\n')
os.chmod(scontrol, 0o755)
r, s, _ = run(["a", "b"], runner=False, env={"SRUN": srun, "SCONTROL": scontrol},
              extra=["--port", "31000", "--gpucheck", "/opt/gpucheck"])
line = open(argv_log).read().strip()
token = open(token_log).read().split()
check("srun runs the pair on its two nodes", "--nodes=2 --nodelist=a,b --ntasks-per-node=1" in line)
check("bench meets at the first node's NodeAddr",
      "/opt/gpucheck bench --ops allreduce --transport net" in line
      and "--rendezvous 10.1.2.3:31000" in line and "--device all" in line)
check("rank 0 writes the document to srun's stdout, not to a path on its node",
      " -o " not in line and "--json" in line)
open(argv_log, "w").close()
run(["b", "a"], runner=False, env={"SRUN": srun, "SCONTROL": scontrol})
check("an IPv6 NodeAddr in brackets", "--rendezvous [fd00::2]:29600" in open(argv_log).read())
open(argv_log, "w").close()
run(["a", "b"], runner=False, env={"SRUN": srun, "SCONTROL": os.path.join(TMP, "none")})
check("without scontrol, the node's name", "--rendezvous a:29600" in open(argv_log).read())

# Which task is rank 0 is the recipe's to say: srun sorts --nodelist, so for the pair (b, a) it
# starts a's tasks first. A stand-in srun that does so runs each task's command with the
# variables slurmstepd sets, and a stand-in gpucheck records the rank it was given.
task_srun = os.path.join(TMP, "task-srun")
task_log = os.path.join(TMP, "tasks.log")
fake_gpucheck = os.path.join(TMP, "gpucheck")
with open(task_srun, "w") as f:
    f.write(f"""#!{sys.executable}
import os, subprocess, sys
args = sys.argv[1:]
task = args[args.index("--export=ALL") + 1:]
nodes = next(a for a in args if a.startswith("--nodelist=")).split("=")[1].split(",")
per = int(next(a for a in args if a.startswith("--ntasks-per-node=")).split("=")[1])
for node in sorted(nodes):
    for local in range(per):
        subprocess.run(task, env=dict(os.environ, SLURMD_NODENAME=node, SLURM_LOCALID=str(local)),
                       check=True)
""")
with open(fake_gpucheck, "w") as f:
    f.write(f'#!/bin/sh\necho "$SLURMD_NODENAME $SLURM_LOCALID $*" >> {task_log}\n')
for p in (task_srun, fake_gpucheck):
    os.chmod(p, 0o755)
r, s, _ = run(["b", "a"], runner=False, env={"SRUN": task_srun, "SCONTROL": scontrol},
              extra=["--gpucheck", fake_gpucheck, "--tasks-per-node", "2"])
ranks = {}
for task in open(task_log).read().splitlines():
    node, local, argv = task.split(" ", 2)
    words = argv.split()
    ranks[(node, local)] = (words[words.index("--rank") + 1],
                            words[words.index("--world-size") + 1])
check("the pair's first node holds ranks 0 and 1 whatever srun's order, the second 2 and 3",
      ranks == {("b", "0"): ("0", "4"), ("b", "1"): ("1", "4"), ("a", "0"): ("2", "4"),
                ("a", "1"): ("3", "4")})
check("srun passes the environment on", "--export=ALL" in line)
check("each pair's ranks get a token through the environment",
      len(token) == 1 and len(token[0]) >= 32)
check("the token is on no command line", token and token[0] not in line)
# Four nodes: two pairs at once, each with a token of its own.
open(token_log, "w").close()
run(["a", "b", "c", "d"], runner=False, env={"SRUN": srun, "SCONTROL": scontrol})
tokens = open(token_log).read().split()
check("every pair has its own token", len(tokens) == 2 and len(set(tokens)) == 2)

# --op net: the runner writes rank 0's document; a pair with a node in SLOW runs at 0.1 GB/s,
# the others at 10. Slow pairs fail against the median of the pairs so far, not on exit codes.
NET_RUNNER = os.path.join(TMP, "net-runner")
with open(NET_RUNNER, "w") as f:
    f.write("""#!/bin/sh
echo "$1 $2" >> "$PAIRS_LOG"
rate=10
for n in $SLOW; do [ "$n" = "$1" ] || [ "$n" = "$2" ] && rate=0.1; done
for n in $BAD; do [ "$n" = "$1" ] || [ "$n" = "$2" ] && exit 1; done
cat > "$4" <<DOC
{"results": [{"op": "net", "status": "ok", "throughput": {"value": $rate}},
             {"op": "net", "status": "ok", "throughput": {"value": $rate}}]}
DOC
""")
os.chmod(NET_RUNNER, 0o755)


def run_net(nodes, slow=(), bad=(), extra=()):
    log = os.path.join(TMP, f"net-pairs-{len(os.listdir(TMP))}.log")
    e = dict(os.environ, SLOW=" ".join(slow), BAD=" ".join(bad), PAIRS_LOG=log)
    cmd = [sys.executable, SCRIPT, "--op", "net", "--nodes", ",".join(nodes), "--json", "-",
           "--out", TMP, "--runner", NET_RUNNER] + list(extra)
    r = subprocess.run(cmd, capture_output=True, text=True, env=e, timeout=60)
    return r, json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}


r, s = run_net(nodes)
check("net healthy: nobody blamed", r.returncode == 0 and s.get("blamed") == [])
check("net summary has rates", all(p.get("gbps") == 10 for p in s.get("pairs", [])))
r, s = run_net(nodes, slow=["n4"])
check("net: the slow node is blamed", r.returncode == 1 and s.get("blamed") == ["n4"])
check("net: its partner is cleared", "n3" in s.get("cleared", []))
r, s = run_net(nodes, bad=["n2"])
check("net: a failed run fails the pair", s.get("blamed") == ["n2"])
r, s = run_net(nodes, extra=["--min-gbps", "20"])
check("net: --min-gbps fails every pair below it", s.get("blamed") == [] and
      sorted(s.get("undecided", [])) == nodes)
for extra, what in ((["--fraction", "0"], "fraction 0"), (["--fraction", "1.5"], "fraction 1.5"),
                    (["--min-gbps", "-1"], "negative floor"), (["--tasks-per-node", "2"],
                                                               "net with tasks per node")):
    r, _ = run_net(["n1", "n2"], extra=extra)
    check(f"net usage error: {what}", r.returncode == 2 and "gpucheck-pairwise:" in r.stderr)
# The srun command of a net pair.
open(argv_log, "w").close()
run(["a", "b"], runner=False, env={"SRUN": srun, "SCONTROL": scontrol},
    extra=["--op", "net", "--net-bytes", "8MiB"])
line = open(argv_log).read().strip()
check("net pair runs bench --ops net", "bench --ops net --net-bytes 8MiB" in line and
      "--rendezvous 10.1.2.3:" in line and "--device" not in line and "allreduce" not in line)

if failed:
    print(f"{len(failed)} check(s) failed")
    sys.exit(1)
print("all pairwise checks passed")
