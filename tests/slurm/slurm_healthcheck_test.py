#!/usr/bin/env python3
"""contrib/slurm/gpucheck-healthcheck against a real single-node Slurm (Debian's slurm-wlm and
munge): munged, slurmctld and slurmd started here in the foreground on localhost with a
generated slurm.conf, and stopped at the end, whatever happened.

  (1) the node is idle while healthy;
  (2) a planted failing check (nouveau holding an NVIDIA GPU in the fabricated root that doctor
      reads through --sysroot) drains it within two health-check intervals, the check id in
      `sinfo -R`;
  (3) removing the fault resumes it;
  (4) a node drained by an administrator with another reason stays drained;
  (5) `srun -N1 gpucheck qualify --profile configs/qualify/cpu-only.toml --junit F` runs as a
      job and F is valid JUnit (tests/fixtures/junit/junit.xsd, xmllint).

Usage: slurm_healthcheck_test.py GPUCHECK SOURCE_DIR
Exit 0 pass, 1 fail, 77 skipped (printed reason: not root, or the packages are not installed;
tools/setup-debian.sh --with-slurm installs them).
"""
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

INTERVAL = 5  # HealthCheckInterval, seconds
NODE = "gpucheck-node"
DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("munge", "scontrol", "sinfo", "srun")


def skip(why):
    print(f"SKIP: {why}")
    sys.exit(77)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    def __init__(self, gpucheck, source):
        self.gpucheck = gpucheck
        self.source = source
        self.dir = tempfile.mkdtemp(prefix="gpucheck_slurm_")
        os.chmod(self.dir, 0o755)  # munged wants every directory above its socket searchable
        self.procs = []
        self.conf = os.path.join(self.dir, "slurm.conf")
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        self.root = os.path.join(self.dir, "node-root")  # the node as doctor sees it
        self.hc_log = os.path.join(self.dir, "healthcheck.log")

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def start_munge(self):
        os.makedirs(self.path("munge"), mode=0o700)
        os.makedirs(self.path("run"), mode=0o755)
        key = self.path("munge", "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(128))
        os.chmod(key, 0o400)
        self.socket = self.path("run", "munge.socket")
        self.spawn("munged", ["munged", "-F", f"--socket={self.socket}", f"--key-file={key}",
                              f"--pid-file={self.path('run', 'munged.pid')}",
                              f"--seed-file={self.path('munge', 'seed')}",
                              f"--log-file={self.path('munged.log')}"])
        wait_for(lambda: os.path.exists(self.socket), 20, "munged's socket")

    def write_config(self):
        os.makedirs(self.path("state"))
        os.makedirs(self.path("spool"))
        os.makedirs(os.path.join(self.root, "proc"))
        facts = os.path.join(self.source, "tests", "fixtures", "doctor", "base_probe.json")
        with open(self.path("healthcheck.conf"), "w") as f:
            f.write(f"GPUCHECK={self.gpucheck}\n"
                    f"GPUCHECK_FLAGS=\"--facts {facts} --sysroot {self.root}\"\n"
                    f"GPUCHECK_STATE={self.path('gpucheck-state.json')}\n"
                    f"GPUCHECK_TIMEOUT=20\n"
                    f"SLURM_CONF={self.conf}\n"
                    f"LOG_FILE={self.hc_log}\n")
        # slurmd gives a health check an environment of its own: the one variable that names
        # the config travels through a wrapper, as a site would set it in the script's unit.
        wrapper = self.path("healthcheck-wrapper")
        with open(wrapper, "w") as f:
            f.write("#!/bin/sh\n"
                    f"GPUCHECK_HEALTHCHECK_CONF={self.path('healthcheck.conf')} exec "
                    f"{os.path.join(self.source, 'contrib', 'slurm', 'gpucheck-healthcheck')}\n")
        os.chmod(wrapper, 0o755)
        cpus = os.cpu_count() or 1
        lines = [
            "ClusterName=gpucheck-test",
            "SlurmctldHost=localhost(127.0.0.1)",
            f"SlurmctldPort={free_port()}",
            f"SlurmdPort={free_port()}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self.socket}",
            f"StateSaveLocation={self.path('state')}",
            f"SlurmdSpoolDir={self.path('spool')}",
            f"SlurmctldPidFile={self.path('run', 'slurmctld.pid')}",
            f"SlurmdPidFile={self.path('run', 'slurmd.pid')}",
            f"SlurmctldLogFile={self.path('slurmctld.log')}",
            f"SlurmdLogFile={self.path('slurmd.log')}",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "SchedulerType=sched/builtin",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU",
            "MpiDefault=none",
            "ReturnToService=2",
            f"HealthCheckProgram={wrapper}",
            f"HealthCheckInterval={INTERVAL}",
            "HealthCheckNodeState=ANY",
            "SlurmdTimeout=60",
            f"NodeName={NODE} NodeAddr=127.0.0.1 NodeHostname=localhost CPUs={cpus} State=UNKNOWN",
            f"PartitionName=test Nodes={NODE} Default=YES MaxTime=INFINITE State=UP",
        ]
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")

    def spawn(self, name, argv):
        log = open(self.path(f"{name}.out"), "w")
        p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=self.env,
                             start_new_session=True)
        self.procs.append((name, p))
        return p

    def start_slurm(self):
        self.spawn("slurmctld", ["slurmctld", "-D", "-i", "-f", self.conf])
        wait_for(lambda: self.run(["scontrol", "ping"], check=False).returncode == 0, 60,
                 "slurmctld to answer scontrol ping")
        self.spawn("slurmd", ["slurmd", "-D", "-N", NODE, "-f", self.conf])

    def run(self, argv, check=True, timeout=120):
        r = subprocess.run(argv, capture_output=True, text=True, env=self.env, timeout=timeout)
        if check and r.returncode != 0:
            raise AssertionError(f"{' '.join(argv)} exited {r.returncode}: {r.stderr.strip()}")
        return r

    def node(self):
        """(state, reason) as sinfo prints them."""
        r = self.run(["sinfo", "-h", "-N", "-n", NODE, "-o", "%T|%E"], check=False)
        state, _, reason = r.stdout.strip().partition("|")
        return state, reason

    def health_runs(self):
        try:
            with open(self.hc_log) as f:
                return f.read().count("\n")
        except FileNotFoundError:
            return 0

    def stop(self):
        # scontrol shutdown lets both Slurm daemons save and exit; anything left is killed.
        if any(n.startswith("slurm") and p.poll() is None for n, p in self.procs):
            subprocess.run(["scontrol", "shutdown"], env=self.env, capture_output=True, timeout=30)
        for name, p in reversed(self.procs):
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGTERM)
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait()
        left = [n for n, p in self.procs if p.poll() is None]
        if left:
            raise AssertionError(f"still running after the test: {left}")

    def dump_logs(self):
        for name in ("slurmctld.log", "slurmd.log", "munged.log", "healthcheck.log",
                     "slurmctld.out", "slurmd.out"):
            p = self.path(name)
            if os.path.exists(p):
                with open(p, errors="replace") as f:
                    tail = f.read().splitlines()[-25:]
                print(f"--- {name} (last lines)")
                print("\n".join(tail))


def wait_for(predicate, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.5)
    raise AssertionError(f"timed out after {seconds} s waiting for {what}")


def plant_fault(root):
    gpu = os.path.join(root, "sys", "bus", "pci", "devices", "0000:17:00.0")
    os.makedirs(gpu, exist_ok=True)
    with open(os.path.join(gpu, "vendor"), "w") as f:
        f.write("0x10de\n")
    with open(os.path.join(gpu, "class"), "w") as f:
        f.write("0x030200\n")
    with open(os.path.join(root, "proc", "modules"), "w") as f:
        f.write("nouveau 2826240 0 - Live 0x0000000000000000\n")


def remove_fault(root):
    shutil.rmtree(os.path.join(root, "sys"))
    os.remove(os.path.join(root, "proc", "modules"))


def scenarios(c):
    # (1) healthy: idle, and the health check has run (and said so) at least twice.
    wait_for(lambda: c.node()[0] == "idle", 90, "the node to be idle")
    runs = c.health_runs()
    wait_for(lambda: c.health_runs() >= runs + 2, 4 * INTERVAL + 30, "two health-check runs")
    assert c.node()[0] == "idle", c.node()
    print(f"ok 1: node idle while healthy ({c.health_runs()} health-check runs)")

    # (2) a failing check drains it within two intervals, with the check id in sinfo -R.
    plant_fault(c.root)
    start = time.monotonic()
    wait_for(lambda: c.node()[0].startswith("drain"), 2 * INTERVAL + 15, "the node to drain")
    took = time.monotonic() - start
    reasons = c.run(["sinfo", "-R", "-h", "-o", "%N|%E"]).stdout
    assert f"{NODE}|gpucheck: GC-NOUVEAU-LOADED: nouveau_module" in reasons, reasons
    print(f"ok 2: drained after {took:.1f} s: {reasons.strip()}")

    # (3) without the fault the health check resumes the node it drained.
    remove_fault(c.root)
    wait_for(lambda: c.node()[0] == "idle", 2 * INTERVAL + 15, "the node to resume")
    print("ok 3: resumed once the fault was gone")

    # (4) an administrator's drain is not the health check's to undo.
    c.run(["scontrol", "update", f"nodename={NODE}", "state=drain", "reason=maintenance by admin"])
    runs = c.health_runs()
    wait_for(lambda: c.health_runs() >= runs + 2, 4 * INTERVAL + 30, "two health-check runs")
    state, reason = c.node()
    assert state.startswith("drain") and reason == "maintenance by admin", (state, reason)
    print(f"ok 4: admin drain kept ({state}, {reason!r}) across two healthy runs")
    c.run(["scontrol", "update", f"nodename={NODE}", "state=resume"])
    wait_for(lambda: c.node()[0] == "idle", 30, "the node to be idle again")

    # (5) qualify runs as a job and writes valid JUnit.
    junit = c.path("qualify.xml")
    profile = os.path.join(c.source, "configs", "qualify", "cpu-only.toml")
    r = c.run(["srun", "-N1", "-t", "10", c.gpucheck, "qualify", "--profile", profile,
               "--junit", junit, "--quiet"], check=False, timeout=600)
    assert r.returncode in (0, 1), f"srun exited {r.returncode}: {r.stderr}"
    assert os.path.exists(junit), f"no JUnit file; srun said: {r.stderr}"
    xsd = os.path.join(c.source, "tests", "fixtures", "junit", "junit.xsd")
    v = subprocess.run(["xmllint", "--noout", "--schema", xsd, junit], capture_output=True,
                       text=True)
    assert v.returncode == 0, v.stderr
    with open(junit) as f:
        assert "cpu_backend" in f.read()
    print(f"ok 5: srun qualify exited {r.returncode}; {junit} is valid JUnit")


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    gpucheck, source = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    if os.geteuid() != 0:
        skip("slurmd and munged run as root here, and this is not root")
    missing = [t for t in DAEMONS + CLIENTS if shutil.which(t) is None]
    if missing:
        skip(f"not installed: {', '.join(missing)} (bash tools/setup-debian.sh --with-slurm)")
    if shutil.which("xmllint") is None:
        skip("xmllint is not installed (libxml2-utils)")
    c = Cluster(gpucheck, source)
    ok = False
    try:
        c.start_munge()
        c.write_config()
        c.start_slurm()
        scenarios(c)
        ok = True
    except AssertionError as e:
        print(f"FAIL: {e}")
    finally:
        if not ok:
            c.dump_logs()
        try:
            c.stop()
        except AssertionError as e:
            print(f"FAIL: {e}")
            ok = False
    if ok:
        shutil.rmtree(c.dir, ignore_errors=True)
        print("5 passed, 0 failed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
