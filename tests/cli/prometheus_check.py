#!/usr/bin/env python3
"""Checks gpucheck's --format prometheus output with the Prometheus client's own text parser.

usage: prometheus_check.py [--expect-metric NAME]... [--expect-label NAME=VALUE]... -- COMMAND...

Runs COMMAND (a gpucheck command with --format prometheus), then checks:
  - python3-prometheus-client's text_string_to_metric_families parses it;
  - every metric is gpucheck_*, a gauge, with one # HELP and one # TYPE line before its samples;
  - each series (name and label set) has exactly one sample;
  - the named metrics exist, and some sample carries each expected label value exactly (after
    the parser undoes the escaping: \\" \\\\ \\n), so quotes, backslashes and newlines survive.
VALUE may use \\n for a newline. Exit 0 pass, 1 fail, 77 skipped (no prometheus_client).
"""
import argparse
import subprocess
import sys

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:
    print("SKIP: python3-prometheus-client is not installed")
    sys.exit(77)


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--expect-metric", action="append", default=[])
    ap.add_argument("--expect-label", action="append", default=[])
    ap.add_argument("command", nargs=argparse.REMAINDER)
    o = ap.parse_args()
    cmd = o.command[1:] if o.command and o.command[0] == "--" else o.command
    proc = subprocess.run(cmd, capture_output=True)
    if proc.returncode not in (0, 1):
        fail(f"command exited {proc.returncode}: {proc.stderr.decode(errors='replace')[-2000:]}")
    text = proc.stdout.decode("utf-8")
    if not text.endswith("\n"):
        fail("the output does not end with a newline (the textfile collector needs one)")

    # HELP and TYPE: once each, before the family's samples.
    helps, types, seen_sample = {}, {}, set()
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("# HELP "):
            name = line.split()[2]
            if name in helps:
                fail(f"line {n}: a second HELP for {name}")
            helps[name] = n
        elif line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ", 3)
            if name in types:
                fail(f"line {n}: a second TYPE for {name}")
            if kind != "gauge":
                fail(f"line {n}: {name} is a {kind}, not a gauge")
            types[name] = n
        elif line.startswith("#") or not line:
            fail(f"line {n}: unexpected line {line!r}")
        else:
            name = line.split("{", 1)[0].split(" ", 1)[0]
            if name not in helps or name not in types:
                fail(f"line {n}: sample of {name} before its HELP and TYPE")
            seen_sample.add(name)
    if set(helps) != set(types):
        fail(f"HELP without TYPE or the reverse: {set(helps) ^ set(types)}")

    families = list(text_string_to_metric_families(text))
    series = set()
    labels_seen = {}
    for fam in families:
        if not fam.name.startswith("gpucheck_"):
            fail(f"metric {fam.name} lacks the gpucheck_ prefix")
        if not fam.documentation:
            fail(f"metric {fam.name} has no HELP text")
        for s in fam.samples:
            key = (s.name, tuple(sorted(s.labels.items())))
            if key in series:
                fail(f"two samples of one series: {key}")
            series.add(key)
            for k, v in s.labels.items():
                labels_seen.setdefault(k, set()).add(v)
    names = {f.name for f in families}
    for m in o.expect_metric:
        if m not in names:
            fail(f"no metric {m} (have {sorted(names)})")
    for e in o.expect_label:
        k, v = e.split("=", 1)
        v = v.replace("\\n", "\n")
        if v not in labels_seen.get(k, set()):
            fail(f"no sample with {k}={v!r}; {k} values: {sorted(labels_seen.get(k, []))[:10]}")
    print(f"valid: {len(families)} metrics, {len(series)} series: {' '.join(cmd[1:])}")


if __name__ == "__main__":
    main()
