#!/usr/bin/env python3
"""contrib/kubernetes: both manifests parse and carry the fields Kubernetes and
node-problem-detector require, and what they run keeps its contract.

- The ConfigMap's custom plugin monitor config is validated against NPD's config fields
  (npd_custom_plugin.schema.json, written from NPD's custom plugin monitor documentation) and
  its rule is run as NPD runs it (path + args; only the fabricated-system hooks added): exit 0
  and no output when healthy, 1 with one line <= max_output_length naming the failing check,
  2 within the rule's timeout when a check hangs.
  Every message stays within 80 characters, where NPD cuts a custom plugin's output, so the
  fault code at its start always survives.
- The textfile DaemonSet's loop body runs once against a fabricated system: the textfile appears
  under its final name only, and python3-prometheus-client parses it.
- The NFD DaemonSet's loop body runs twice: the features.d file is read as nfd-worker reads it
  (expiry directive first and in the future, label names valid, the planted fault a fail), is
  replaced by a rename (a new inode, no dot file left), and bad --nfd-expiry values are exit 2
  with a message that names the flag, leaving the file as it was.
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


def load_daemonset(path):
    ds = load_one(path, "DaemonSet")
    name = os.path.basename(path)
    check(ds.get("apiVersion") == "apps/v1", f"{name}: apiVersion apps/v1")
    spec = ds.get("spec", {})
    template = spec.get("template", {})
    selector = spec.get("selector", {}).get("matchLabels", {})
    labels = template.get("metadata", {}).get("labels", {})
    check(bool(selector) and all(labels.get(k) == v for k, v in selector.items()),
          f"{name}: spec.selector.matchLabels match the pod template's labels")
    pod = template.get("spec", {})
    containers = pod.get("containers", [])
    check(bool(containers) and all(c.get("name") and c.get("image") for c in containers),
          f"{name}: every container has a name and an image")
    volumes = {v["name"] for v in pod.get("volumes", [])}
    mounts = {m["name"] for c in containers for m in c.get("volumeMounts", [])}
    check(mounts <= volumes, f"{name}: every volumeMount names a volume ({mounts - volumes})")
    return ds


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
    return root


# NPD cuts a custom plugin's output to max_output_length; 80 is what gpucheck's line is made for.
NPD_MESSAGE_LIMIT = 80


def within_npd_limit(stdout, max_len):
    """One line (NPD keeps the whole output as the message) of at most max_len characters."""
    message = stdout[:-1] if stdout.endswith("\n") else stdout
    return "\n" not in message and len(message) <= max_len


def plugin_contract(config, gpucheck, facts, tmp):
    rule = next(r for r in config["rules"] if r.get("condition") == "GpucheckUnhealthy")
    max_len = config["pluginConfig"]["max_output_length"]
    check(max_len == NPD_MESSAGE_LIMIT,
          f"max_output_length is {NPD_MESSAGE_LIMIT}, the length gpucheck's line keeps to "
          f"({max_len})")
    rule_timeout = seconds(rule.get("timeout", config["pluginConfig"]["timeout"]))
    args = list(rule["args"])
    check(args[:2] == ["doctor", "--quick"] and "oneline" in args,
          "the rule runs gpucheck doctor --quick --format oneline")
    gp_timeout = float(args[args.index("--timeout") + 1])
    check(gp_timeout + 5 <= rule_timeout,
          f"gpucheck's --timeout {gp_timeout:g} s ends well before the rule's {rule_timeout:g} s")
    # The state file the rule names is the node's; here a temporary one.
    args[args.index("--state") + 1] = os.path.join(tmp, "npd-state.json")

    def run(root, timeout=None, env=None):
        argv = list(args)
        if timeout is not None:
            argv[argv.index("--timeout") + 1] = timeout
        start = time.monotonic()
        r = subprocess.run([gpucheck] + argv + ["--facts", facts, "--sysroot", root],
                           capture_output=True, text=True, timeout=rule_timeout,
                           env=dict(os.environ, **(env or {})))
        return r, time.monotonic() - start

    r, _ = run(fabricated_root(tmp))
    check(r.returncode == 0 and r.stdout == "", f"healthy: exit 0, no message ({r.returncode}, "
          f"{r.stdout!r}, {r.stderr.strip()[:200]})")
    r, _ = run(fabricated_root(tmp, "nouveau"))
    lines = r.stdout.splitlines()
    check(r.returncode == 1, f"unhealthy: exit 1 (NonOK) ({r.returncode})")
    check(len(lines) == 1 and within_npd_limit(r.stdout, NPD_MESSAGE_LIMIT)
          and "nouveau_module" in lines[0] and lines[0].startswith("FAIL GC-"),
          f"unhealthy: one line <= {NPD_MESSAGE_LIMIT} characters, led by the code, naming the "
          f"check: {r.stdout!r}")
    # A hang (gpucheck's test hook blocks one check as a wedged driver's /proc read would); the
    # deadline is shortened from the rule's value so the test stays short.
    r, took = run(fabricated_root(tmp), timeout="2", env={"GPUCHECK_TEST_HANG": "nvidia_xid"})
    check(r.returncode == 2 and r.stdout.startswith("UNKNOWN") and took < rule_timeout,
          f"a hanging check: exit 2 (Unknown) after {took:.1f} s: {r.stdout!r}")
    check(within_npd_limit(r.stdout, NPD_MESSAGE_LIMIT),
          f"a hanging check: one line <= {NPD_MESSAGE_LIMIT} characters: {r.stdout!r}")


def loop_once(ds, gpucheck, facts, tmp, mount):
    """A DaemonSet's loop body and that body made to run once against a fabricated system with a
    planted fault: the fabricated system's hooks go right behind "doctor", the output mount and
    the state directory under tmp; the rest of the loop is as shipped."""
    script = ds["spec"]["template"]["spec"]["containers"][0]["args"][0]
    out = os.path.join(tmp, mount.strip("/"))
    state = out + "-state"
    os.makedirs(out)
    os.makedirs(state)
    hooks = f"--facts {facts} --sysroot {fabricated_root(tmp, 'nouveau')}"
    once = (script.replace("/opt/gpucheck/bin/gpucheck doctor", f"{gpucheck} doctor {hooks}")
            .replace(mount, out).replace("/var/lib/gpucheck", state)
            .replace('sleep "$INTERVAL"', "exit 0"))
    check(hooks in once, f"the {mount} loop runs /opt/gpucheck/bin/gpucheck doctor")
    return script, once, out


def daemonset_loop(ds, gpucheck, facts, tmp):
    script, once, textfile = loop_once(ds, gpucheck, facts, tmp, "/textfile")
    check("--format prometheus" in script and "mv -f" in script,
          "the DaemonSet writes --format prometheus under a temporary name and renames it")
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


def read_nfd_file(path):
    """Labels and expiry as nfd-worker's local source reads a features.d file: '# +' lines are
    directives applying to the lines after them, other '#' lines comments, the rest KEY=VALUE."""
    import datetime
    import re
    expiry, labels, invalid, before_labels = None, {}, [], True
    name_ok = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$")
    with open(path) as f:
        for line in f.read().split("\n"):
            line = line.strip()
            if line.startswith("# +expiry-time="):
                check(before_labels, "the expiry directive comes before the labels")
                expiry = datetime.datetime.fromisoformat(line[15:].replace("Z", "+00:00"))
            elif line and not line.startswith("#"):
                before_labels = False
                key, _, value = line.partition("=")
                prefix, _, name = key.rpartition("/")
                if not (prefix == "feature.node.kubernetes.io" and name_ok.match(name)
                        and name_ok.match(value)):
                    invalid.append(line)
                labels[name] = value
    check(bool(labels) and not invalid, f"{len(labels)} labels, all valid for NFD ({invalid})")
    return expiry, labels


def nfd_loop(ds, gpucheck, facts, tmp):
    import datetime
    script, once, features = loop_once(ds, gpucheck, facts, tmp, "/features.d")
    check("--format nfd" in script and "-o /features.d/gpucheck" in script,
          "the NFD DaemonSet writes --format nfd into features.d")
    path = os.path.join(features, "gpucheck")
    inodes = []
    for _ in range(2):
        r = subprocess.run(["sh", "-c", once], capture_output=True, text=True, timeout=120)
        files = sorted(os.listdir(features))
        check(r.returncode == 0 and files == ["gpucheck"],
              f"a run of the NFD loop leaves only features.d/gpucheck ({files}, "
              f"{r.stderr.strip()[:300]})")
        if files != ["gpucheck"]:
            return
        inodes.append(os.stat(path).st_ino)
    check(inodes[0] != inodes[1], "the second run replaced the file by a rename (a new inode)")
    expiry, labels = read_nfd_file(path)
    now = datetime.datetime.now(datetime.timezone.utc)
    check(expiry is not None and now + datetime.timedelta(minutes=14) < expiry
          < now + datetime.timedelta(minutes=16),
          f"the labels expire 15 minutes ahead ({expiry})")
    check(labels.get("gpucheck.health") == "fail",
          f"gpucheck.health=fail ({labels.get('gpucheck.health')})")
    check(labels.get("gpucheck.check.nouveau_module") == "fail",
          "the planted fault's check is labelled fail")
    check(set(labels.values()) <= {"pass", "warn", "fail", "skip"}, "only pass/warn/fail/skip")
    before = open(path).read()
    for args, words in ((["--format", "nfd", "--nfd-expiry", "0"], "--nfd-expiry"),
                        (["--format", "nfd", "--nfd-expiry", "2d"], "--nfd-expiry"),
                        (["--format", "nfd", "--nfd-expiry", "soon"], "--nfd-expiry"),
                        (["--nfd-expiry", "5m"], "--format nfd")):
        r = subprocess.run([gpucheck, "doctor", "--quick", "--no-state", "--facts", facts,
                            "-o", path] + args, capture_output=True, text=True, timeout=60)
        check(r.returncode == 2 and words in r.stderr and "Traceback" not in r.stderr,
              f"{' '.join(args)}: exit 2 naming {words} ({r.returncode}, "
              f"{r.stderr.strip()[:200]!r})")
    check(open(path).read() == before, "a refused run leaves the feature file as it was")


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

    ds = load_daemonset(os.path.join(contrib, "gpucheck-textfile-daemonset.yaml"))
    nfd_ds = load_daemonset(os.path.join(contrib, "gpucheck-nfd-daemonset.yaml"))

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
        nfd_loop(nfd_ds, gpucheck, facts, tmp)

    print(f"{'FAILED' if failures else 'all passed'}: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
