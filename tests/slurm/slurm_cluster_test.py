#!/usr/bin/env python3
"""contrib/slurm/gpucheck-healthcheck on a real four-node Slurm (Debian's slurm-wlm and munge):
munged and slurmctld here, and four `slurmd -D -N nodeN`, each in a network and UTS namespace of
its own behind a bridge (tests/slurm/ns_cluster.py). The script is every node's
HealthCheckProgram and its Prolog, with one config per node; doctor reads a fabricated node
(--facts, --sysroot) and a fault is planted on node3 alone with `doctor --inject xid:79` in that
node's GPUCHECK_FLAGS. node3 has the lowest Weight, so it is the scheduler's first choice.

  (1) every node is idle and its health check has run and found it healthy;
  (2) four jobs run one per node, each node's Prolog ran gpucheck first, and the first job went
      to node3 (so a job submitted later "would have gone to it");
  (3) the fault on node3 drains exactly node3 at the health check's next run, with the reason
      `gpucheck: GC-XID-HARDWARE: nvidia_xid: ...` (80 characters at most); the other three stay
      idle through a health check of their own after the fault was planted;
  (4) without the fault the next health check resumes node3;
  (5) the fault planted again just after node3's health check ran, a job submitted at once goes
      to node3, whose Prolog fails: node3 is drained with the gpucheck reason by the Prolog and
      the job is requeued and runs on another node (its `hostname`, SLURM_RESTART_COUNT=1);
  (6) without the fault, the health check run by hand inside node3's namespaces resumes it;
  and at the end no daemon, namespace, link or temp dir of the run is left.

Usage: slurm_cluster_test.py GPUCHECK SOURCE_DIR
Exit 0 pass, 1 fail, 77 skipped (printed reason: not root, packages missing, or network
namespaces, veths or a bridge cannot be made here).
"""
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ns_cluster  # noqa: E402
from ns_cluster import wait_for  # noqa: E402

NODES = ("node1", "node2", "node3", "node4")
BAD = "node3"
INTERVAL = 8  # HealthCheckInterval, seconds
FAULT = "xid:79"
REASON_START = "gpucheck: GC-XID-HARDWARE: nvidia_xid: Xid 79"


def skip(why):
    print(f"SKIP: {why}")
    sys.exit(77)


class Test:
    def __init__(self, gpucheck, source):
        self.gpucheck = gpucheck
        self.source = source
        self.script = os.path.join(source, "contrib", "slurm", "gpucheck-healthcheck")
        self.facts = os.path.join(source, "tests", "fixtures", "doctor", "base_probe.json")
        weights = {n: ("Weight=1" if n == BAD else "Weight=10") for n in NODES}
        self.c = ns_cluster.Cluster(NODES, node_lines=weights)

    # --- per-node gpucheck config ------------------------------------------------------------
    def node_dir(self, node, *parts):
        return self.c.path("nodes", node, *parts)

    def hc_log(self, node):
        return self.c.path("log", f"healthcheck-{node}.log")

    def set_fault(self, node, inject):
        """node's config for the script: doctor on a fabricated node, plus --inject when set.
        Written whole and renamed into place so a run never reads half a file."""
        flags = f"--facts {self.facts} --sysroot {self.node_dir(node, 'root')}"
        if inject:
            flags += f" --inject {inject}"
        conf = self.node_dir(node, "healthcheck.conf")
        with open(conf + ".new", "w") as f:
            f.write(f"GPUCHECK={self.gpucheck}\n"
                    f"GPUCHECK_FLAGS=\"{flags}\"\n"
                    f"GPUCHECK_STATE={self.node_dir(node, 'state.json')}\n"
                    "GPUCHECK_TIMEOUT=20\n"
                    f"SLURM_CONF={self.c.conf}\n"
                    f"LOG_FILE={self.hc_log(node)}\n")
        os.replace(conf + ".new", conf)

    def prepare(self):
        self.c.prepare()
        for node in NODES:
            os.makedirs(self.node_dir(node, "root", "proc"))
            self.set_fault(node, None)
        # Slurm gives both programs a cleaned environment; a site's script reads
        # /etc/gpucheck/healthcheck.conf, here each node's file is named by its node.
        self.wrapper = self.c.path("gpucheck-node")
        with open(self.wrapper, "w") as f:
            f.write("#!/bin/sh\n"
                    'node=${SLURMD_NODENAME:-$(hostname)}\n'
                    f'GPUCHECK_HEALTHCHECK_CONF={self.c.path("nodes")}/$node/healthcheck.conf '
                    f'exec {self.script}\n')
        os.chmod(self.wrapper, 0o755)
        self.c.slurm_lines += [
            f"HealthCheckProgram={self.wrapper}",
            f"HealthCheckInterval={INTERVAL}",
            "HealthCheckNodeState=ANY",
            f"Prolog={self.wrapper}",
            # Without nohold_on_prolog_fail a job whose Prolog failed is requeued held and never
            # runs elsewhere; nothing but the main loop (60 s by default) starts a requeued job
            # once its wait (cred_expire) is over.
            "SchedulerParameters=nohold_on_prolog_fail,sched_interval=2",
        ]

    # --- observations ------------------------------------------------------------------------
    def log_lines(self, node):
        try:
            with open(self.hc_log(node)) as f:
                return f.read().splitlines()
        except FileNotFoundError:
            return []

    def runs(self, node, role="healthcheck"):
        """The script's log lines on node from the given role ("healthcheck" or "prolog")."""
        return [ln for ln in self.log_lines(node) if f" {node} ({role}" in ln]

    def state(self, node):
        return self.c.nodes_state().get(node, ("absent", ""))

    def idle(self, node):
        self.c.check_daemons()
        state, reason = self.state(node)
        return state == "idle" and reason in ("", "none")

    def submit(self, tag, script):
        out = self.c.path("jobs", f"{tag}-%j.out")
        r = self.c.run(["sbatch", "--parsable", "-J", tag, "-D", self.c.path("jobs"), "-o", out,
                        "--wrap", script])
        job = r.stdout.strip().split(";")[0]
        return job, out.replace("%j", job)

    def job_output(self, path):
        try:
            with open(path) as f:
                text = f.read()
        except FileNotFoundError:
            return None
        return text if text.endswith("\n") else None

    def job_field(self, job, field):
        r = self.c.run(["scontrol", "show", "job", job], check=False)
        m = re.search(rf"\b{field}=(\S*)", r.stdout)
        return m.group(1) if m else None

    def others_idle_after_a_run(self, marks):
        """The nodes other than BAD each ran their health check past marks, and are idle."""
        for node in NODES:
            if node == BAD:
                continue
            if len(self.runs(node)) <= marks[node]:
                return False
            if not self.idle(node):
                raise AssertionError(f"{node} is {self.state(node)} while only {BAD} is bad")
        return True

    # --- scenarios ---------------------------------------------------------------------------
    def scenarios(self):
        c = self.c
        t0 = time.monotonic()

        def say(n, text):
            print(f"ok {n}: {text} ({time.monotonic() - t0:.1f} s)", flush=True)

        # (1)
        wait_for(lambda: all(self.idle(n) for n in NODES), 60, "all four nodes to be idle")
        wait_for(lambda: all(any("healthy" in ln for ln in self.runs(n)) for n in NODES),
                 INTERVAL + 30, "a healthy health-check run logged by every node")
        for n in NODES:
            bad = [ln for ln in self.runs(n) if "unhealthy" in ln or "undecided" in ln]
            assert not bad, f"{n}'s health check did not find it healthy: {bad}"
        say(1, "four nodes idle, each one's health check ran gpucheck and found it healthy")

        # (2)
        jobs = [self.submit(f"warm{i}", "hostname; sleep 2") for i in range(len(NODES))]
        outs = {}
        wait_for(lambda: all(self.job_output(o) for _, o in jobs), 60,
                 "four jobs, one per node, to write their hostname")
        for job, out in jobs:
            outs[job] = self.job_output(out).strip()
        assert sorted(outs.values()) == sorted(NODES), f"jobs ran on {outs}, not one per node"
        first = jobs[0][0]
        assert outs[first] == BAD, (f"the first job went to {outs[first]}, not to {BAD}, the "
                                    "lowest Weight: the later job would not go there either")
        for n in NODES:
            prolog = [ln for ln in self.runs(n, "prolog") if "healthy" in ln]
            assert prolog, f"no Prolog run of gpucheck logged on {n}: {self.log_lines(n)[-5:]}"
        say(2, f"one job per node {outs}, the first on {BAD}, gpucheck ran as each one's Prolog")
        wait_for(lambda: all(self.idle(n) for n in NODES), 60, "the four jobs to finish")

        # (3)
        marks = {n: len(self.runs(n)) for n in NODES}
        self.set_fault(BAD, FAULT)
        planted = time.monotonic()
        wait_for(lambda: self.state(BAD)[0].startswith("drain"), 2 * INTERVAL + 15,
                 f"{BAD} to drain after --inject {FAULT} in its config")
        took = time.monotonic() - planted
        state, reason = self.state(BAD)
        assert reason.startswith(REASON_START), f"{BAD}'s reason: {reason!r}"
        assert len(reason) <= 80, f"reason of {len(reason)} characters: {reason!r}"
        drains = [ln for ln in self.runs(BAD)[marks[BAD]:] if "unhealthy, draining" in ln]
        assert drains, f"{BAD} drained, but not by its health check: {self.log_lines(BAD)[-5:]}"
        wait_for(lambda: self.others_idle_after_a_run(marks), 2 * INTERVAL + 15,
                 "the other three nodes' health checks to run after the fault was planted")
        say(3, f"{BAD} alone drained {took:.1f} s after the fault, reason {reason!r} "
               f"({len(reason)} characters); the others ran their check and stay idle")

        # (4)
        self.set_fault(BAD, None)
        wait_for(lambda: self.idle(BAD), 2 * INTERVAL + 15,
                 f"{BAD}'s next health check to resume it without the fault")
        resumed = [ln for ln in self.runs(BAD) if "resuming" in ln]
        assert resumed, f"{BAD} is idle, but its health check did not resume it"
        say(4, f"{BAD} resumed by its health check once the fault was gone")

        # (5) The fault is planted right after a health-check run on BAD, so the job reaches
        # BAD's Prolog well before the next run could drain it.
        mark = len(self.runs(BAD))
        wait_for(lambda: len(self.runs(BAD)) > mark, INTERVAL + 15,
                 f"a health-check run on {BAD}")
        self.set_fault(BAD, FAULT)
        # slurmd writes the failed Prolog's message into the job's output file, so the job
        # reports where it ran in a file of its own.
        where = c.path("jobs", "moved.where")
        job, out = self.submit("moved", f'echo "$(hostname) ${{SLURM_RESTART_COUNT:-0}}" > {where}')
        wait_for(lambda: self.job_field(job, "JobState") == "COMPLETED", 60,
                 f"job {job} (sent to {BAD} first, its Prolog failing) to complete elsewhere")
        text = self.job_output(where) or ""
        host, _, restarts = text.strip().partition(" ")
        assert host in NODES and host != BAD, f"job {job} ran on {host!r}: {text!r}"
        assert restarts == "1" and self.job_field(job, "Restarts") == "1", (
            f"job {job} ran on {host} without a requeue (SLURM_RESTART_COUNT {restarts!r}, "
            f"Restarts={self.job_field(job, 'Restarts')}): it never went to {BAD}")
        prolog = [ln for ln in self.runs(BAD, f"prolog job {job}") if "unhealthy" in ln]
        assert prolog, f"{BAD}'s Prolog did not find the fault for job {job}"
        state, reason = self.state(BAD)
        assert state.startswith("drain") and reason.startswith(REASON_START), (
            f"{BAD} after its Prolog failed: {state}, {reason!r}")
        for n in NODES:
            if n != BAD:
                wait_for(lambda n=n: self.idle(n), 30, f"{n} to be idle after job {job}")
        say(5, f"job {job} went to {BAD}, whose Prolog failed and drained it ({reason!r}), "
               f"and was requeued onto {host}")

        # (6)
        self.set_fault(BAD, None)
        r = c.on_node(BAD, [self.wrapper], env={"SLURMD_NODENAME": BAD})
        assert r.returncode == 0, r.stderr
        wait_for(lambda: self.idle(BAD), 15, f"{BAD} to resume after a health check by hand")
        assert all(self.idle(n) for n in NODES), c.nodes_state()
        say(6, f"the health check run by hand in {BAD}'s namespaces resumed it; all four idle")


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    gpucheck, source = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    try:
        ns_cluster.check_host()
    except ns_cluster.Unavailable as e:
        skip(str(e))
    if not os.access(gpucheck, os.X_OK):
        print(f"FAIL: {gpucheck} is not an executable")
        return 1
    t = Test(gpucheck, source)

    def start():
        t.prepare()
        t.c.start()

    return ns_cluster.run_test(t.c, start, t.scenarios, passed="6 passed, 0 failed",
                               logs=[f"healthcheck-{n}.log" for n in NODES])


if __name__ == "__main__":
    sys.exit(main())
