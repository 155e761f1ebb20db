"""A real multi-node Slurm on one machine, for tests: munged and slurmctld in the root network
namespace, and one `slurmd -D -N nodeN` per node, each in a network namespace and UTS namespace
of its own (so a job's `hostname` is its node's name), joined by a Linux bridge with one veth
per node on a private /24.

Everything is made under names that carry this process's id (bridge gcc<pid>br, veths
gcc<pid>v<i>, namespaces gcc<pid>-n<i>, temp dir gpucheck_cluster_<pid>_*), so what a killed run
leaves behind cannot clash with the next; Cluster.start() removes such leftovers of runs whose
process is gone. The daemons get SIGKILL when this process dies (PR_SET_PDEATHSIG), so a run
killed outright does not leave them behind either.

Raise Unavailable (the caller skips) where the machine cannot host it: not root, packages
missing, namespaces or links refused.
"""
import ctypes
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("scontrol", "sinfo", "sbatch", "ip", "unshare", "nsenter", "hostname")
SLURMD_PORT = 6818  # each slurmd has a network namespace of its own, so they share the number
PREFIX = "gcc"
TMP_PREFIX = "gpucheck_cluster_"
_PR_SET_PDEATHSIG = 1


class Unavailable(Exception):
    """This machine cannot host the cluster; the message says why."""


def _die_with_parent():
    # Runs in the child between fork and exec: the daemon must not outlive a test killed by
    # ctest's timeout, which no finally block sees.
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    os.setsid()


def wait_for(predicate, seconds, what, interval=0.5):
    deadline = time.monotonic() + seconds
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {seconds} s waiting for {what}")
        time.sleep(interval)


def _sh(argv, check=True):
    r = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {r.returncode}: {r.stderr.strip()}")
    return r


def _alive(pid):
    # Called before this run makes anything: a name with our own id is a dead run's whose id
    # came round again.
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def reap_leftovers():
    """Removes namespaces, links and temp dirs that runs no longer alive left behind; returns
    their names."""
    reaped = []
    mine = re.compile(rf"^{PREFIX}(\d+)(?:-n\d+|br|v\d+)$")
    r = _sh(["ip", "netns", "list"], check=False)
    for line in r.stdout.splitlines():
        name = line.split()[0] if line.split() else ""
        m = mine.match(name)
        if m and not _alive(int(m.group(1))):
            for pid in _sh(["ip", "netns", "pids", name], check=False).stdout.split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
            _sh(["ip", "netns", "delete", name], check=False)
            reaped.append(name)
    r = _sh(["ip", "-o", "link", "show"], check=False)
    for line in r.stdout.splitlines():
        parts = line.split(":")
        if len(parts) < 2:
            continue
        name = parts[1].strip().split("@")[0]
        m = mine.match(name)
        if m and not _alive(int(m.group(1))):
            if _sh(["ip", "link", "delete", name], check=False).returncode == 0:
                reaped.append(name)
    tmp = tempfile.gettempdir()
    for entry in os.listdir(tmp):
        m = re.match(rf"^{TMP_PREFIX}(\d+)_", entry)
        if m and not _alive(int(m.group(1))):
            shutil.rmtree(os.path.join(tmp, entry), ignore_errors=True)
            reaped.append(os.path.join(tmp, entry))
    return reaped


def _free_subnet():
    """A 10.77.X.0/24 that no address or route here uses (a leftover bridge may hold one)."""
    used = _sh(["ip", "-4", "addr", "show"]).stdout + _sh(["ip", "-4", "route", "show"]).stdout
    for x in range(256):
        if not re.search(rf"\b10\.77\.{x}\.\d+", used):
            return f"10.77.{x}"
    raise Unavailable("no free 10.77.X.0/24 subnet for the bridge")


def _free_port():
    with socket.socket() as s:
        s.bind(("0.0.0.0", 0))
        return s.getsockname()[1]


def check_host():
    """Raises Unavailable unless this machine can host the cluster."""
    if os.geteuid() != 0:
        raise Unavailable("munged, slurmd and network namespaces need root, and this is not root")
    missing = [t for t in DAEMONS + CLIENTS if shutil.which(t) is None]
    if missing:
        raise Unavailable(f"not installed: {', '.join(missing)} "
                          "(bash tools/setup-debian.sh --set test)")


class Cluster:
    """nodes: names; slurm_lines: extra slurm.conf lines; node_lines: {node: extra NodeName
    words}. Use as a context manager, or call start() and stop() in try/finally."""

    def __init__(self, nodes, slurm_lines=(), node_lines=None):
        self.nodes = list(nodes)
        self.slurm_lines = list(slurm_lines)
        self.node_lines = dict(node_lines or {})
        self.tag = f"{PREFIX}{os.getpid()}"
        self.bridge = f"{self.tag}br"
        self.dir = None
        self.procs = {}  # name -> Popen
        self.netns = {}  # node -> namespace name
        self.addr = {}  # node -> IPv4 address
        self.env = dict(os.environ)
        self.stopped = False

    # --- paths -------------------------------------------------------------------------------
    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    # --- start -------------------------------------------------------------------------------
    def prepare(self):
        """Temp dir and network; before start() so callers can write files the config names."""
        reaped = reap_leftovers()
        if reaped:
            print(f"removed what earlier runs left behind: {' '.join(reaped)}", flush=True)
        self.dir = tempfile.mkdtemp(prefix=f"{TMP_PREFIX}{os.getpid()}_")
        os.chmod(self.dir, 0o755)  # munged wants every directory above its socket searchable
        for d in ("run", "log", "state", "spool", "jobs"):
            os.makedirs(self.path(d))
        self.conf = self.path("slurm.conf")
        self.env["SLURM_CONF"] = self.conf
        self._network()

    def _network(self):
        net = _free_subnet()
        self.ctl_addr = f"{net}.1"
        try:
            _sh(["ip", "link", "add", self.bridge, "type", "bridge"])
            _sh(["ip", "addr", "add", f"{self.ctl_addr}/24", "dev", self.bridge])
            _sh(["ip", "link", "set", self.bridge, "up"])
            for i, node in enumerate(self.nodes, start=1):
                ns = f"{self.tag}-n{i}"
                host_end, node_end = f"{self.tag}v{i}", f"{self.tag}p{i}"
                _sh(["ip", "netns", "add", ns])
                self.netns[node] = ns
                _sh(["ip", "link", "add", host_end, "type", "veth", "peer", "name", node_end])
                _sh(["ip", "link", "set", node_end, "netns", ns])
                _sh(["ip", "link", "set", host_end, "master", self.bridge, "up"])
                self.addr[node] = f"{net}.{10 + i}"
                _sh(["ip", "-n", ns, "link", "set", "lo", "up"])
                _sh(["ip", "-n", ns, "link", "set", node_end, "name", "eth0"])
                _sh(["ip", "-n", ns, "addr", "add", f"{self.addr[node]}/24", "dev", "eth0"])
                _sh(["ip", "-n", ns, "link", "set", "eth0", "up"])
        except RuntimeError as e:
            raise Unavailable(f"cannot make the bridge, veths or namespaces: {e}") from e
        self._probe_network()

    def _probe_network(self):
        # A bridge can exist and still not carry traffic (br_netfilter with a DROP policy):
        # better said here than as a slurmd that never registers.
        with socket.socket() as s:
            s.bind((self.ctl_addr, 0))
            s.listen(8)
            port = s.getsockname()[1]
            s.settimeout(10)
            for node, ns in self.netns.items():
                probe = subprocess.Popen(
                    ["nsenter", f"--net=/run/netns/{ns}", sys.executable, "-c",
                     "import socket,sys; socket.create_connection((sys.argv[1], int(sys.argv[2])),"
                     " timeout=5).close()", self.ctl_addr, str(port)],
                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                try:
                    s.accept()[0].close()
                except socket.timeout:
                    pass
                if probe.wait(timeout=15) != 0:
                    raise Unavailable(f"{node}'s namespace {ns} cannot reach {self.ctl_addr} "
                                      f"over the bridge: {probe.stderr.read().strip()}")

    def write_config(self):
        self.munge_socket = self.path("run", "munge.socket")
        self.ctl_port = _free_port()
        lines = [
            "ClusterName=gpucheck-cluster",
            # slurmctld accepts "localhost" as its own name whatever this machine is called;
            # the address is what slurmd and the clients in the namespaces reach.
            f"SlurmctldHost=localhost({self.ctl_addr})",
            f"SlurmctldPort={self.ctl_port}",
            f"SlurmdPort={SLURMD_PORT}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            # cred_expire is also how long a requeued job waits before it may start again
            # (120 s by default).
            f"AuthInfo=socket={self.munge_socket},cred_expire=10",
            f"StateSaveLocation={self.path('state')}",
            f"SlurmdSpoolDir={self.path('spool', '%n')}",
            f"SlurmctldPidFile={self.path('run', 'slurmctld.pid')}",
            f"SlurmdPidFile={self.path('run', 'slurmd-%n.pid')}",
            f"SlurmctldLogFile={self.path('log', 'slurmctld.log')}",
            f"SlurmdLogFile={self.path('log', 'slurmd-%n.log')}",
            "SlurmctldDebug=info",
            "SlurmdDebug=info",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "SchedulerType=sched/builtin",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU",
            "MpiDefault=none",
            "ReturnToService=2",
            "SlurmdTimeout=60",
            "MinJobAge=600",
        ] + self.slurm_lines
        for node in self.nodes:
            extra = self.node_lines.get(node, "")
            lines.append(f"NodeName={node} NodeAddr={self.addr[node]} NodeHostname={node} "
                         f"CPUs=1 State=UNKNOWN {extra}".rstrip())
        lines.append(f"PartitionName=test Nodes={','.join(self.nodes)} Default=YES "
                     "MaxTime=INFINITE State=UP")
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        for node in self.nodes:
            os.makedirs(self.path("spool", node), exist_ok=True)

    def start(self):
        if self.dir is None:
            self.prepare()
        self.write_config()
        os.makedirs(self.path("munge"), mode=0o700)
        key = self.path("munge", "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(128))
        os.chmod(key, 0o400)
        self._spawn("munged", ["munged", "-F", f"--socket={self.munge_socket}",
                               f"--key-file={key}", f"--pid-file={self.path('run', 'munged.pid')}",
                               f"--seed-file={self.path('munge', 'seed')}",
                               f"--log-file={self.path('log', 'munged.log')}"])
        wait_for(lambda: self.check_daemons() or os.path.exists(self.munge_socket), 20,
                 "munged's socket")
        self._spawn("slurmctld", ["slurmctld", "-D", "-i", "-f", self.conf])
        wait_for(lambda: self.check_daemons() or
                 self.run(["scontrol", "ping"], check=False).returncode == 0, 60,
                 "slurmctld to answer scontrol ping")
        for node in self.nodes:
            # nsenter, not `ip netns exec`: that remounts /sys, which hides /sys/fs/cgroup from
            # slurmd. nsenter and unshare exec in place, so the process we hold is slurmd.
            self._spawn(f"slurmd-{node}", [
                "nsenter", f"--net=/run/netns/{self.netns[node]}", "unshare", "--uts", "--",
                "sh", "-c", 'hostname "$1" && exec slurmd -D -N "$1" -f "$2"', "sh", node,
                self.conf])

    def _spawn(self, name, argv):
        out = open(self.path("log", f"{name}.out"), "w")
        p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             env=self.env, preexec_fn=_die_with_parent)
        out.close()
        self.procs[name] = p
        return p

    # --- use ---------------------------------------------------------------------------------
    def run(self, argv, check=True, timeout=60):
        r = subprocess.run(argv, capture_output=True, text=True, env=self.env, timeout=timeout)
        if check and r.returncode != 0:
            raise AssertionError(f"{' '.join(argv)} exited {r.returncode}: {r.stderr.strip()}")
        return r

    def on_node(self, node, argv, env=None, check=True, timeout=60):
        """argv inside node's network and UTS namespaces, as its slurmd's children run."""
        pid = self.procs[f"slurmd-{node}"].pid
        r = subprocess.run(["nsenter", "-t", str(pid), "-n", "-u", "--"] + list(argv),
                           capture_output=True, text=True, env=dict(self.env, **(env or {})),
                           timeout=timeout)
        if check and r.returncode != 0:
            raise AssertionError(f"on {node}: {' '.join(argv)} exited {r.returncode}: "
                                 f"{r.stderr.strip()}")
        return r

    def nodes_state(self):
        """{node: (state, reason)} as sinfo prints them."""
        r = self.run(["sinfo", "-h", "-N", "-o", "%N|%T|%E"], check=False)
        out = {}
        for line in r.stdout.splitlines():
            node, state, reason = (line.split("|", 2) + ["", ""])[:3]
            out[node] = (state, reason)
        return out

    def check_daemons(self):
        """Raises AssertionError naming any daemon that has exited."""
        dead = [f"{n} (exit {p.returncode})" for n, p in self.procs.items()
                if p.poll() is not None]
        if dead:
            raise AssertionError(f"exited early: {', '.join(dead)}")

    def log_tail(self, name, lines=30):
        p = self.path("log", name)
        try:
            with open(p, errors="replace") as f:
                return f.read().splitlines()[-lines:]
        except FileNotFoundError:
            return []

    def dump_logs(self, extra=()):
        if self.dir is None:
            return
        names = ["slurmctld.log"] + [f"slurmd-{n}.log" for n in self.nodes] + list(extra) + [
            "munged.log"]
        # A daemon's stderr repeats its log, unless it died before opening that.
        for daemon in ["slurmctld"] + [f"slurmd-{n}" for n in self.nodes]:
            if not self.log_tail(f"{daemon}.log"):
                names.append(f"{daemon}.out")
        for name in names:
            tail = self.log_tail(name)
            if tail:
                print(f"--- {name} (last lines)")
                print("\n".join(tail))

    # --- stop --------------------------------------------------------------------------------
    def stop(self, keep_dir=False):
        """Stops every daemon and removes namespaces, links and (unless keep_dir) the temp dir.
        Returns the names of daemons that had to be killed."""
        if self.stopped:
            return []
        self.stopped = True
        killed = []
        if any(n.startswith("slurm") and p.poll() is None for n, p in self.procs.items()):
            try:
                subprocess.run(["scontrol", "shutdown"], env=self.env, capture_output=True,
                               timeout=20)
            except subprocess.TimeoutExpired:
                pass
        for name, p in reversed(list(self.procs.items())):
            if name == "munged":
                p.send_signal(signal.SIGTERM) if p.poll() is None else None
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                killed.append(name)
                p.kill()
                p.wait()
        # Jobs' slurmstepd processes are not slurmd's children once started; whatever still
        # runs in a node's namespace goes with it.
        for ns in self.netns.values():
            for pid in _sh(["ip", "netns", "pids", ns], check=False).stdout.split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
            _sh(["ip", "netns", "delete", ns], check=False)
        _sh(["ip", "link", "delete", self.bridge], check=False)
        for i in range(1, len(self.nodes) + 1):
            _sh(["ip", "link", "delete", f"{self.tag}v{i}"], check=False)
        if self.dir and not keep_dir:
            shutil.rmtree(self.dir, ignore_errors=True)
        return killed

    def leftovers(self):
        """What of this run still exists after stop(), for the test to assert on."""
        left = [n for n, p in self.procs.items() if p.poll() is None]
        nslist = _sh(["ip", "netns", "list"], check=False).stdout
        left += [ns for ns in self.netns.values() if re.search(rf"^{ns}\b", nslist, re.M)]
        links = _sh(["ip", "-o", "link", "show"], check=False).stdout
        left += [m for m in re.findall(rf"\b({self.tag}[a-z]+\d*)\b", links)]
        return sorted(set(left))


def _interrupted(signum, _frame):
    # Every stopping signal ends the run through the finally block that takes the cluster down
    # (SIGINT too: a shell starts a background job with it ignored, which Python would keep).
    raise KeyboardInterrupt(signal.Signals(signum).name)


def run_test(cluster, start, scenario, passed="passed", logs=()):
    """A test's run on the cluster: start() (which starts it), then scenario(); the cluster is
    stopped whatever happened, a failure dumps its logs (and `logs`, file names in its
    directory), and a daemon that had to be killed or anything left after it fails the run.
    Returns the exit code: 0 passed, 1 failed; exits 77 (SKIP, with the reason) where the host
    cannot run it and nothing was left."""
    stopping = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    for s in stopping:
        signal.signal(s, _interrupted)
    started = time.monotonic()
    ok = False
    unavailable = None
    left, killed = [], []
    try:
        start()
        scenario()
        ok = True
    except Unavailable as e:
        unavailable = str(e)
    except AssertionError as e:
        print(f"FAIL: {e}")
    except KeyboardInterrupt as e:
        print(f"FAIL: interrupted ({e or 'SIGINT'}); stopping the cluster")
    finally:
        # A second Ctrl-C must not cut the clean-up short; it is bounded (about 30 s at worst).
        for s in stopping:
            signal.signal(s, signal.SIG_IGN)
        if not ok and unavailable is None and cluster.dir:
            cluster.dump_logs(list(logs))
        killed = cluster.stop()
        left = cluster.leftovers()
        if killed:
            print(f"FAIL: had to kill {killed} after scontrol shutdown")
            ok = False
        if left:
            print(f"FAIL: left after stopping: {left}")
            ok = False
    if unavailable is not None and not left and not killed:
        print(f"SKIP: {unavailable}")
        sys.exit(77)
    if ok:
        print(f"{passed} ({time.monotonic() - started:.1f} s)")
    return 0 if ok else 1
