#!/usr/bin/env python3
"""gpucheck's textfiles read by Debian's node_exporter and scraped by Debian's Prometheus beside a
dcgm-exporter page, as an operator runs them:

- `promtool check metrics` finds nothing to say about any textfile gpucheck writes but the one
  label it writes on purpose in dcgm-exporter's camelCase (modelName);
- node_exporter reads them all without a scrape error (a family written twice with different
  help, or a series twice, would be one);
- a PromQL join of gpucheck's per-GPU series with dcgm-exporter's on UUID returns a row per GPU;
- every panel of contrib/grafana/gpucheck-dashboard.json, with $instance, $gpu and
  $__rate_interval substituted, runs through `promtool query instant` and names only series
  gpucheck writes, and the dashboard's variables are the official DCGM dashboard's (instance, gpu).

usage: dcgm_join_test.py GPUCHECK VIEWS_DIR DCGM_PAGE DASHBOARD
Exit 77 (a skip, with its reason) where prometheus, promtool or node_exporter is not installed.
"""
import http.server
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

# stress_cpu.json: the one saved document whose records carry a limit (the fraction-of-limit panel).
DOCS = ["probe_h100x2.json", "doctor_h100x2.json", "bench_h100x2.json", "stress_cpu.json"]
CAMEL = "label names should be written in 'snake_case' not 'camelCase'"
JOIN = "gpucheck_gpu_temperature_celsius * on(UUID) group_left DCGM_FI_DEV_GPU_TEMP"


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def query(port, expr):
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(url, timeout=10) as r:
        body = json.load(r)
    if body.get("status") != "success":
        fail(f"query {expr!r}: {body}")
    return body["data"]["result"]


def main():
    if len(sys.argv) != 5:
        print(__doc__)
        sys.exit(2)
    gpucheck, views, dcgm_page, dashboard = sys.argv[1:]
    tools = {t: shutil.which(t) for t in ("prometheus", "promtool", "prometheus-node-exporter")}
    missing = [t for t, p in tools.items() if not p]
    if missing:
        print(f"SKIP: not installed: {', '.join(missing)} (Debian: apt-get install prometheus "
              "prometheus-node-exporter)")
        sys.exit(77)

    work = tempfile.mkdtemp(prefix="gpucheck-prom-")
    procs = []
    try:
        textfiles = os.path.join(work, "textfile")
        os.mkdir(textfiles)
        written = set()
        for doc in DOCS:
            out = os.path.join(textfiles, doc.replace(".json", ".prom"))
            r = subprocess.run([gpucheck, "report", "show", os.path.join(views, doc), "--format",
                                "prometheus", "-o", out], capture_output=True, text=True)
            if r.returncode != 0:
                fail(f"gpucheck report show {doc}: rc {r.returncode}: {r.stderr}")
            text = open(out).read()
            lint = subprocess.run([tools["promtool"], "check", "metrics"], input=text,
                                  capture_output=True, text=True)
            # promtool exits 3 on lint findings, 1 on text it cannot parse. One finding is
            # gpucheck's on purpose: dcgm-exporter's camelCase `modelName`, kept so the series
            # join. It is allowed only while modelName is the one camelCase label written.
            said = [ln for ln in (lint.stdout + lint.stderr).splitlines() if ln.strip()]
            others = [ln for ln in said if not ln.endswith(CAMEL)]
            camel = set(re.findall(r"[{,]([a-z]+[A-Z][A-Za-z0-9]*)=", text))
            if lint.returncode not in (0, 3) or others or (said and camel != {"modelName"}):
                fail(f"promtool check metrics on {doc}'s textfile: rc {lint.returncode}\n"
                     + "\n".join(others or said) + f"\ncamelCase labels: {sorted(camel)}")
            written |= set(re.findall(r"^# TYPE (\S+)", text, re.M))
        print(f"promtool check metrics: clean (but modelName) on {len(DOCS)} textfiles, {len(written)} families")

        page = open(dcgm_page, "rb").read()

        class Page(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(200 if self.path == "/metrics" else 404)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.end_headers()
                if self.path == "/metrics":
                    self.wfile.write(page)

            def log_message(self, *args):
                pass

        dcgm_port, node_port, prom_port = free_port(), free_port(), free_port()
        server = http.server.ThreadingHTTPServer(("127.0.0.1", dcgm_port), Page)
        threading.Thread(target=server.serve_forever, daemon=True).start()

        log = open(os.path.join(work, "daemons.log"), "w")
        procs.append(subprocess.Popen(
            [tools["prometheus-node-exporter"], f"--web.listen-address=127.0.0.1:{node_port}",
             "--collector.disable-defaults", "--collector.textfile",
             f"--collector.textfile.directory={textfiles}"], stdout=log, stderr=log))
        config = os.path.join(work, "prometheus.yml")
        with open(config, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                    "scrape_configs:\n"
                    f"  - job_name: node\n    static_configs:\n      - targets: ['127.0.0.1:{node_port}']\n"
                    f"  - job_name: dcgm\n    static_configs:\n      - targets: ['127.0.0.1:{dcgm_port}']\n")
        procs.append(subprocess.Popen(
            [tools["prometheus"], f"--config.file={config}",
             f"--storage.tsdb.path={os.path.join(work, 'data')}",
             f"--web.listen-address=127.0.0.1:{prom_port}"], stdout=log, stderr=log))

        deadline = time.monotonic() + 90
        rows = []
        while time.monotonic() < deadline:
            try:
                up = query(prom_port, "up == 1")
                rows = query(prom_port, JOIN)
                if len(up) == 2 and rows:
                    break
            except OSError:
                pass
            time.sleep(1)
        else:
            log.flush()
            fail(f"no joined rows within 90 s; daemons' log:\n{open(log.name).read()[-3000:]}")
        uuids = sorted(r["metric"]["UUID"] for r in rows)
        if len(uuids) != 2 or any(r["metric"].get("gpucheck_device", "") == "" for r in rows):
            fail(f"the join should give one row per GPU with gpucheck's labels: {rows}")
        print(f"join {JOIN!r}: {len(rows)} rows, {uuids}")
        errors = query(prom_port, "node_textfile_scrape_error")
        if not errors or any(float(e["value"][1]) != 0 for e in errors):
            fail(f"node_exporter's textfile collector reports an error: {errors}")

        dash = json.load(open(dashboard))
        names = [v["name"] for v in dash["templating"]["list"]]
        if names != ["instance", "gpu"]:
            fail(f"the dashboard's variables should be the DCGM dashboard's instance, gpu: {names}")
        exprs = [(p["title"], t["expr"]) for p in dash["panels"] for t in p.get("targets", [])]
        exprs += [(f"variable {v['name']}", v["definition"]) for v in dash["templating"]["list"]]
        instance = f"127.0.0.1:{node_port}"
        for title, expr in exprs:
            m = re.fullmatch(r"label_values\((.*), *\w+\)", expr)
            q = m.group(1) if m else expr
            q = (q.replace("$instance", instance).replace("$gpu", "0")
                  .replace("$__rate_interval", "1m"))
            ours = set(re.findall(r"\bgpucheck_[a-z0-9_]+", q))
            unknown = ours - written
            if not ours or unknown:
                fail(f"panel {title!r} names no series gpucheck writes: {sorted(unknown) or q}")
            r = subprocess.run([tools["promtool"], "query", "instant", f"http://127.0.0.1:{prom_port}",
                                q], capture_output=True, text=True)
            if r.returncode != 0:
                fail(f"panel {title!r}: promtool query instant {q!r}: {r.stdout}{r.stderr}")
        print(f"dashboard: {len(exprs)} queries parse and run, naming only gpucheck's series")
        server.shutdown()
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(work, ignore_errors=True)
    print("PASS")


if __name__ == "__main__":
    main()
