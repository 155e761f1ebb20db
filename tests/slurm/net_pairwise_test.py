#!/usr/bin/env python3
"""contrib/slurm/gpucheck-pairwise --op net against a planted bad link: four network namespaces
on a bridge stand for four nodes, one node's veth is slowed with tc's token bucket (tbf, both
ways), and the recipe, running real `gpucheck bench --ops net` ranks in the namespaces through
its --runner hook, must name exactly that node within ceil(log2 N) + 1 rounds.

Needs root (ip netns, tc); exits 77 with the reason otherwise. Every namespace, veth and bridge
it makes carries this run's own prefix and is removed in `finally`, whatever happened.

Usage: net_pairwise_test.py SOURCE_DIR GPUCHECK
"""
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

SRC = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
GPUCHECK = sys.argv[2] if len(sys.argv) > 2 else shutil.which("gpucheck")
SCRIPT = os.path.join(SRC, "contrib", "slurm", "gpucheck-pairwise")
N = 4


def skip(why):
    print(f"SKIP: {why}")
    sys.exit(77)


def sh(*cmd, check=True):
    r = subprocess.run(list(cmd), capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip()}")
    return r


if os.geteuid() != 0:
    skip("needs root for ip netns and tc")
for tool in ("ip", "tc"):
    if not shutil.which(tool):
        skip(f"no {tool} (iproute2)")
if not GPUCHECK or not os.access(GPUCHECK, os.X_OK):
    skip(f"no gpucheck binary ({GPUCHECK})")

# Names unique to this run (interface names: 15 characters at most).
tag = f"gn{os.getpid() % 100000}"
bridge = f"{tag}br"
nodes = [f"{tag}n{i}" for i in range(N)]
addrs = {n: f"10.231.{os.getpid() % 200}.{i + 1}" for i, n in enumerate(nodes)}
made_ns, made_links = [], []
tmp = tempfile.mkdtemp(prefix="net-pairwise-")
slow = random.choice(nodes)
print(f"slowing {slow} of {', '.join(nodes)}")

try:
    try:
        sh("ip", "link", "add", bridge, "type", "bridge")
    except RuntimeError as e:
        skip(f"cannot make a bridge here: {e}")
    made_links.append(bridge)
    sh("ip", "link", "set", bridge, "up")
    for i, n in enumerate(nodes):
        host_end, node_end = f"{tag}h{i}", f"{tag}c{i}"
        try:
            sh("ip", "netns", "add", n)
        except RuntimeError as e:
            skip(f"cannot make a network namespace here: {e}")
        made_ns.append(n)
        sh("ip", "link", "add", host_end, "type", "veth", "peer", "name", node_end)
        made_links.append(host_end)
        sh("ip", "link", "set", node_end, "netns", n)
        sh("ip", "link", "set", host_end, "master", bridge)
        sh("ip", "link", "set", host_end, "up")
        sh("ip", "-n", n, "addr", "add", f"{addrs[n]}/24", "dev", node_end)
        sh("ip", "-n", n, "link", "set", node_end, "up")
        sh("ip", "-n", n, "link", "set", "lo", "up")
        if n == slow:
            # Both ways: the node's sends (its own end) and what reaches it (the bridge's end).
            tbf = ["root", "tbf", "rate", "20mbit", "burst", "32kbit", "latency", "400ms"]
            try:
                sh("tc", "qdisc", "add", "dev", host_end, *tbf)
                sh("ip", "netns", "exec", n, "tc", "qdisc", "add", "dev", node_end, *tbf)
            except RuntimeError as e:
                skip(f"tc's tbf is not available here: {e}")
    # The nodes reach each other over the bridge (a host's firewall may drop bridged packets).
    first, last = nodes[0], nodes[-1]
    server = subprocess.Popen(
        ["ip", "netns", "exec", last, sys.executable, "-c",
         "import socket; s = socket.socket(); s.bind(('', 29799)); s.listen(); s.settimeout(10);"
         " s.accept()"])
    reach = None
    for _ in range(50):
        reach = sh("ip", "netns", "exec", first, sys.executable, "-c",
                   f"import socket; socket.create_connection(('{addrs[last]}', 29799), timeout=2)",
                   check=False)
        if reach.returncode == 0:
            break
        time.sleep(0.1)
    server.wait(timeout=15)
    if reach.returncode != 0:
        skip(f"the namespaces do not reach each other over the bridge: {reach.stderr.strip()}")

    runner = os.path.join(tmp, "runner")
    with open(runner, "w") as f:
        f.write(f"""#!{sys.executable}
# NODE_A NODE_B PORT OUT: rank 0 in A's namespace (meeting there), rank 1 in B's; exit 0 when
# both ended well; rank 0's document in OUT.
import json, subprocess, sys
a, b, port, out = sys.argv[1:5]
addrs = json.loads({json.dumps(json.dumps(addrs))})
def rank(node, r, doc):
    return subprocess.Popen(["ip", "netns", "exec", node, {GPUCHECK!r}, "bench", "--ops", "net",
                             "--rank", str(r), "--world-size", "2",
                             "--rendezvous", addrs[a] + ":" + port, "--rendezvous-timeout", "30",
                             "--net-bytes", "2MiB", "--reps", "2", "--json", "-o", doc],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
procs = [rank(a, 0, out), rank(b, 1, out + ".rank1")]
codes = []
for p in procs:
    _, err = p.communicate(timeout=300)
    codes.append(p.returncode)
    if p.returncode != 0:
        sys.stderr.write(err)
sys.exit(0 if codes == [0, 0] else 1)
""")
    os.chmod(runner, 0o755)
    r = subprocess.run([sys.executable, SCRIPT, "--op", "net", "--nodes", ",".join(nodes),
                        "--runner", runner, "--timeout", "60", "--port", "29800",
                        "--out", tmp, "--json", "-"], capture_output=True, text=True,
                       timeout=1200, env=dict(os.environ))
    print(r.stderr)
    summary = json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}
    print(json.dumps(summary, indent=1))
    failed = []
    if summary.get("blamed") != [slow]:
        failed.append(f"blamed {summary.get('blamed')}, not [{slow}]")
    if summary.get("undecided"):
        failed.append(f"undecided: {summary.get('undecided')}")
    most = math.ceil(math.log2(N)) + 1
    if not 1 <= summary.get("rounds", 99) <= most:
        failed.append(f"{summary.get('rounds')} rounds, more than {most}")
    fast = [p["gbps"] for p in summary.get("pairs", []) if slow not in p["nodes"] and p.get("gbps")]
    slowed = [p["gbps"] for p in summary.get("pairs", []) if slow in p["nodes"] and p.get("gbps")]
    print(f"pairs without {slow}: {fast} GB/s; with it: {slowed} GB/s")
    if r.returncode != 1:
        failed.append(f"exit {r.returncode}, not 1 (a node blamed)")
    if failed:
        print("FAIL: " + "; ".join(failed))
        sys.exit(1)
    print(f"the planted bad link was found: {slow}")
finally:
    for n in made_ns:
        sh("ip", "netns", "del", n, check=False)
    for link in made_links:
        sh("ip", "link", "del", link, check=False)
    shutil.rmtree(tmp, ignore_errors=True)
