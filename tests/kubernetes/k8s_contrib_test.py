#!/usr/bin/env python3
"""contrib/kubernetes: both manifests parse and carry the fields Kubernetes and
node-problem-detector require, and what they run keeps its contract.

- The ConfigMap's custom plugin monitor config is validated against NPD's config fields
  (npd_custom_plugin.schema.json, written from NPD's custom plugin monitor documentation) and
  its rule is run as NPD runs it (path + args; only the fabricated-system hooks added): exit 0
  and no output when healthy, 1 with one line <= max_output_length naming the failing check,
  2 within the rule's timeout when a check hangs.
- The DaemonSet's loop body runs once against a fabricated system: the textfile appears under
  its final name only, and python3-prometheus-client parses it.
- Where kubeconform is on PATH it validates both manifests too; Debian has no offline
  Kubernetes validator, so otherwise the required fields are checked here.

Usage: k8s_contrib_test.py GPUCHECK SOURCE_DIR     Exit 0 pass, 1 fail, 77 skipped.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

try:
    import jsonschema
    import yaml
except ImportError as e:
    print(f"SKIP: {e.name} is not installed (python3-yaml, python3-jsonschema)")
    sys.exit(77)

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def load_one(path, kind):
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d is not None]
    check(len(docs) == 1, f"{os.path.basename(path)}: one YAML document")
    doc = docs[0]
    check(doc.get("kind") == kind, f"{os.path.basename(path)}: kind {kind}")
    meta = doc.get("metadata", {})
    check(bool(meta.get("name")) and bool(meta.get("namespace")),
          f"{os.path.basename(path)}: metadata.name and namespace")
    return doc


def seconds(duration):
    units = {"s": 1, "m": 60, "h": 3600}
    return float(duration[:-1]) * units[duration[-1]]


def fabricated_root(tmp, fault=None):
    root = tempfile.mkdtemp(dir=tmp)
    if fault == "nouveau":
        gpu = os.path.join(root, "sys/bus/pci/devices/0000:17:00.0")
        os.makedirs(gpu)
        open(os.path.join(gpu, "vendor"), "w").write("0x10de\n")
        open(os.path.join(gpu, "class"), "w").write("0x030200\n")
        os.makedirs(os.path.join(root, "proc"))
        open(os.path.join(root, "proc/modules"), "w").write("nouveau 1 0 - Live 0x0\n")
    if fault == "hang":
        os.makedirs(os.path.join(root, "dev"))
        open(os.path.join(root, "dev/kmsg"), "w").write("6,1,1,-;no NVIDIA here\n")
        os.makedirs(os.path.join(root, "proc/sys/kernel/random"))
        os.mkfifo(os.path.join(root, "proc/sys/kernel/random/boot_id"))
    return root


def plugin_contract(config, gpucheck, facts, tmp):
    rule = next(r for r in config["rules"] if r.get("condition") == "GpucheckUnhealthy")
    max_len = config["pluginConfig"]["max_output_length"]
    rule_timeout = seconds(rule.get("timeout", config["pluginConfig"]["timeout"]))
    args = list(rule["args"])
    check(args[:2] == ["doctor", "--quick"] and "oneline" in args,
          "the rule runs gpucheck doctor --quick --format oneline")
    gp_timeout = float(args[args.index("--timeout") + 1])
    check(gp_timeout + 5 <= rule_timeout,
          f"gpucheck's --timeout {gp_timeout:g} s ends well before the rule's {rule_timeout:g} s")
    # The state file the rule names is the node's; here a temporary one.
    args[args.index("--state") + 1] = os.path.join(tmp, "npd-state.json")

    def run(root, timeout=None):
        argv = list(args)
        if timeout is not None:
            argv[argv.index("--timeout") + 1] = timeout
        start = time.monotonic()
        r = subprocess.run([gpucheck] + argv + ["--facts", facts, "--sysroot", root],
                           capture_output=True, text=True, timeout=rule_timeout)
        return r, time.monotonic() - start

    r, _ = run(fabricated_root(tmp))
    check(r.returncode == 0 and r.stdout == "", f"healthy: exit 0, no message ({r.returncode}, "
          f"{r.stdout!r}, {r.stderr.strip()[:200]})")
    r, _ = run(fabricated_root(tmp, "nouveau"))
    lines = r.stdout.splitlines()
    check(r.returncode == 1, f"unhealthy: exit 1 (NonOK) ({r.returncode})")
    check(len(lines) == 1 and len(lines[0]) <= max_len and "nouveau_module" in lines[0],
          f"unhealthy: one line <= {max_len} characters naming the check: {r.stdout!r}")
    # A hang: the deadline is shortened from the rule's value so the test stays short.
    r, took = run(fabricated_root(tmp, "hang"), timeout="2")
    check(r.returncode == 2 and r.stdout.startswith("UNKNOWN") and took < rule_timeout,
          f"a hanging check: exit 2 (Unknown) after {took:.1f} s: {r.stdout!r}")


def daemonset_loop(ds, gpucheck, facts, tmp):
    container = ds["spec"]["template"]["spec"]["containers"][0]
    script = container["args"][0]
    check("--format prometheus" in script and "mv -f" in script,
          "the DaemonSet writes --format prometheus under a temporary name and renames it")
    textfile, state = os.path.join(tmp, "textfile"), os.path.join(tmp, "state")
    os.makedirs(textfile)
    os.makedirs(state)
    # The fabricated system's hooks go right behind "doctor"; the rest of the loop is as shipped.
    hooks = f"--facts {facts} --sysroot {fabricated_root(tmp, 'nouveau')}"
    once = (script.replace("/opt/gpucheck/bin/gpucheck doctor", f"{gpucheck} doctor {hooks}")
            .replace("/textfile", textfile).replace("/var/lib/gpucheck", state)
            .replace('sleep "$INTERVAL"', "exit 0"))
    check(hooks in once, "the loop runs /opt/gpucheck/bin/gpucheck doctor")
    r = subprocess.run(["sh", "-c", once], capture_output=True, text=True, timeout=120)
    files = sorted(os.listdir(textfile))
    check(r.returncode == 0 and files == ["gpucheck.prom"],
          f"one run of the loop leaves only gpucheck.prom ({files}, {r.stderr.strip()[:300]})")
    if files != ["gpucheck.prom"]:
        return
    try:
        from prometheus_client.parser import text_string_to_metric_families
    except ImportError:
        print("note: python3-prometheus-client missing: the textfile is not parsed")
        return
    with open(os.path.join(textfile, "gpucheck.prom")) as f:
        families = {m.name: m for m in text_string_to_metric_families(f.read())}
    status = families.get("gpucheck_doctor_check_status")
    check(status is not None, "the textfile holds gpucheck_doctor_check_status")
    if status is not None:
        failing = {s.labels.get("check") for s in status.samples
                   if s.labels.get("status") == "fail" and s.value == 1}
        check("nouveau_module" in failing, f"the planted fault is a fail sample ({failing})")
    health = families.get("gpucheck_doctor_health")
    verdicts = {s.labels.get("verdict"): s.value for s in health.samples} if health else {}
    check(verdicts.get("unhealthy") == 1 and verdicts.get("healthy") == 0,
          f"gpucheck_doctor_health says unhealthy ({verdicts})")


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    gpucheck, source = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    contrib = os.path.join(source, "contrib", "kubernetes")
    facts = os.path.join(source, "tests", "fixtures", "doctor", "base_probe.json")
    here = os.path.dirname(os.path.abspath(__file__))

    cm = load_one(os.path.join(contrib, "node-problem-detector-gpucheck.yaml"), "ConfigMap")
    check(cm.get("apiVersion") == "v1", "ConfigMap: apiVersion v1")
    config = json.loads(cm["data"]["gpucheck-plugin-monitor.json"])
    with open(os.path.join(here, "npd_custom_plugin.schema.json")) as f:
        schema = json.load(f)
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(config))
    check(not errors, "the plugin config is valid for NPD's custom plugin monitor: " +
          "; ".join(e.message for e in errors[:5]))
    check(any(c["type"] == "GpucheckUnhealthy" for c in config["conditions"]),
          "the plugin config declares the GpucheckUnhealthy condition")

    ds = load_one(os.path.join(contrib, "gpucheck-textfile-daemonset.yaml"), "DaemonSet")
    check(ds.get("apiVersion") == "apps/v1", "DaemonSet: apiVersion apps/v1")
    spec = ds.get("spec", {})
    template = spec.get("template", {})
    selector = spec.get("selector", {}).get("matchLabels", {})
    labels = template.get("metadata", {}).get("labels", {})
    check(bool(selector) and all(labels.get(k) == v for k, v in selector.items()),
          "DaemonSet: spec.selector.matchLabels match the pod template's labels")
    pod = template.get("spec", {})
    containers = pod.get("containers", [])
    check(bool(containers) and all(c.get("name") and c.get("image") for c in containers),
          "DaemonSet: every container has a name and an image")
    volumes = {v["name"] for v in pod.get("volumes", [])}
    mounts = {m["name"] for c in containers for m in c.get("volumeMounts", [])}
    check(mounts <= volumes, f"DaemonSet: every volumeMount names a volume ({mounts - volumes})")

    kubeconform = shutil.which("kubeconform")
    if kubeconform:
        r = subprocess.run([kubeconform, "-strict", "-summary", contrib], capture_output=True,
                           text=True)
        check(r.returncode == 0, f"kubeconform: {r.stdout.strip()} {r.stderr.strip()}")
    else:
        print("note: kubeconform is not on PATH (not packaged in Debian 12): the manifests' "
              "required fields were checked here instead")

    with tempfile.TemporaryDirectory(prefix="gpucheck_k8s_") as tmp:
        plugin_contract(config, gpucheck, facts, tmp)
        daemonset_loop(ds, gpucheck, facts, tmp)

    print(f"{'FAILED' if failures else 'all passed'}: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
