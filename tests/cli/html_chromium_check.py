#!/usr/bin/env python3
"""Renders gpucheck's HTML view in headless Chromium and checks what the browser drew.

usage: html_chromium_check.py [--doc FILE] [--expect-text T]... [--min-charts N] GPUCHECK -- ARGS...

Runs `GPUCHECK ARGS --json -o doc.json` and `GPUCHECK ARGS --format html -o page.html` (with
--doc FILE instead: `GPUCHECK report show FILE --format html -o page.html`), then:
  - loads the page with --dump-dom and counts the <svg> charts and their data marks in the
    rendered DOM against the counts derived here from the JSON document;
  - takes a --screenshot and checks it is not blank (a small PNG reader, no PIL);
  - points Chromium's proxy at a local listener (name lookups outside it fail) and checks the
    page made no request, after a control page with one remote image proves the listener sees
    requests. Chromium 156 still makes its own update and account checks (update.googleapis.com,
    accounts.google.com) through the proxy despite --disable-background-networking; requests to
    Google's service hosts are printed and not counted as the page's, every other one is.
With --order, the first element matching each token (tag, tag.class, or tag:text for a heading)
must come in that order in the rendered DOM. With --check-colours, a copy of the page with a
small script added (the page itself must hold none) is rendered again and the script writes the
computed colours of status cells, verdict boxes and outlier dots into the DOM: each status has
its own colour, red for failures, yellow for warnings, grey for skips, blue for info, green for
passes, and outlier dots are red.
With --dom-only the screenshot and the control page are left to the tests of live runs.
Exit 0 pass, 1 fail, 77 skipped (no chromium), with the reason printed.
"""
import argparse
import colorsys
import html
import html.parser
import json
import math
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import zlib

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-background-networking",
                  "--no-first-run", "--disable-gpu", "--disable-extensions",
                  "--disable-sync", "--disable-component-update", "--mute-audio",
                  "--disable-features=NetworkTimeServiceQuerying"]


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


# ---- expectations from the JSON document (the same rules the HTML view states) ----

def expected_marks(doc):
    """Chart and mark counts per data-kind that the page must show for this document."""
    charts, marks = 0, {"throughput": 0, "speedup": 0, "sweep": 0, "verdict": 0}
    results = doc.get("results", [])
    ops = []
    for r in results:
        if r.get("status") == "ok" and r.get("transfers") == "excluded" and "throughput" in r:
            marks["throughput"] += 1
            if r["op"] not in ops:
                ops.append(r["op"])
    charts += len(ops)
    speedups = [r for r in results if isinstance(r.get("speedup_vs_cpu"), (int, float))]
    marks["speedup"] = len(speedups)
    charts += 1 if speedups else 0
    groups = {}
    for s in doc.get("sweep", {}).get("series", []):
        key = (s["device"], s["dtype"], s.get("layout"))
        groups.setdefault(key, []).append(s)
    for series in groups.values():
        charts += 1
        first = next((s for s in series if s["transfers"] == "excluded"), series[0])
        marks["sweep"] += sum(1 for p in first["points"] if "cpu" in p)
        for s in series:
            marks["sweep"] += sum(1 for p in s["points"] if p["status"] == "ok" and p.get("median", 0) > 0)
    verdicts = doc.get("qualify", {}).get("verdicts", [])
    marks["verdict"] = len(verdicts)
    charts += 1 if verdicts else 0
    fleet_groups = doc.get("fleet", {}).get("groups", [])
    if fleet_groups:
        charts += len(fleet_groups)
        marks["fleet"] = sum(len(g.get("members", [])) for g in fleet_groups)
    return charts, marks


class DomCounter(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.svgs = 0
        self.marks = {}
        self.text = []
        self.tags = {}
        self.remote = []
        self.charts = []    # per <svg>: {"kind", "unit", "ticks": [(value, label)], "values"}
        self.tick = None    # the tick <text> being read: [value, label]
        self.sequence = []  # (tag, classes, text) of every element, in document order
        self.reading = None  # the sequence entry whose text is being read (headings, labels)
        self.outliers = []  # per red dot: the outlier label that follows it ("" if none)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags[tag] = self.tags.get(tag, 0) + 1
        if tag == "svg":
            self.svgs += 1
            self.charts.append({"kind": a.get("data-chart", ""), "unit": a.get("data-unit", ""),
                                "ticks": [], "values": []})
        classes = (a.get("class") or "").split()
        entry = [tag, classes, ""]
        self.sequence.append(entry)
        if tag in ("h1", "h2", "h3", "th", "text", "li", "p"):
            self.reading = entry
        if tag == "circle" and a.get("data-outlier") == "true":
            self.outliers.append(None)
        if tag == "text" and "outlier-label" in classes and self.outliers:
            self.outliers[-1] = entry
        if "mark" in classes:
            kind = a.get("data-kind", "")
            self.marks[kind] = self.marks.get(kind, 0) + 1
            if "data-value" in a and self.charts:
                self.charts[-1]["values"].append(float(a["data-value"]))
        if tag == "text" and "tick" in classes and self.charts:
            self.tick = [float(a.get("data-value", "nan")), ""]
        for name in ("src", "href", "xlink:href", "action", "srcset", "poster", "data"):
            if name in a:
                self.remote.append(f"{tag} {name}={a[name]}")

    def handle_endtag(self, tag):
        if self.reading is not None and self.reading[0] == tag:
            self.reading = None
        if tag == "text" and self.tick is not None:
            self.charts[-1]["ticks"].append(tuple(self.tick))
            self.tick = None

    def handle_data(self, data):
        self.text.append(data)
        if self.reading is not None:
            self.reading[2] += data
        if self.tick is not None:
            self.tick[1] += data


# ---- tick labels: what a reader sees must be the value the axis puts there ----

UNITS = {"k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "ns": 1e-9, "\u00b5s": 1e-6, "ms": 1e-3, "s": 1.0}
PREFIXES = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
# A chart's values are in the record's unit (data-unit); its tick labels in the unit people read.
RECORD_UNITS = {"GB/s": ("B/s", 1e9), "TFLOP/s": ("FLOP/s", 1e12), "s": ("s", 1.0)}


def tick_value(label, record_unit=""):
    """1k -> 1000, 2.5k, 2^16, 250 ms, 0.01; with a record unit (GB/s) "4.10 TB/s" -> 4100;
    None for anything a reader could not read."""
    label = label.strip()
    if "e+" in label or "e-" in label or not label:
        return None
    if label.startswith("2^"):
        return 2.0 ** int(label[2:])
    parts = label.split()
    number, unit = (parts[0], parts[1]) if len(parts) == 2 else (label, "")
    if record_unit in RECORD_UNITS and record_unit != "s":
        base, scale = RECORD_UNITS[record_unit]
        if not unit.endswith(base) or unit[:-len(base)] not in PREFIXES:
            return None
        try:
            return float(number) * PREFIXES[unit[:-len(base)]] / scale
        except ValueError:
            return None
    if not unit and number[-1:] in ("k", "M", "G", "T"):
        number, unit = number[:-1], number[-1]
    try:
        return float(number.replace(",", "")) * UNITS.get(unit, 1.0 if not unit else float("nan"))
    except ValueError:
        return None


def check_ticks(charts):
    """Every tick label reads as its value; a linear axis starts at 0, rises and ends at the first
    round step at or above the largest bar (so the bars fill the plot)."""
    checked = 0
    for i, c in enumerate(charts):
        ticks = c["ticks"]
        if not ticks:
            continue
        values = [v for v, _ in ticks]
        for value, label in ticks:
            read = tick_value(label, c["unit"])
            if read is None or abs(read - value) > 1e-3 * max(abs(value), 1e-12):
                fail(f"chart {i} ({c['kind']}): tick {label!r} does not read as {value}")
            checked += 1
        if len(set(values)) != len(values):
            fail(f"chart {i} ({c['kind']}): repeated ticks {values}")
        if c["kind"] == "throughput" and c["values"]:
            top, step = max(c["values"]), values[1] - values[0]
            if values[0] != 0 or any(b - a <= 0 for a, b in zip(values, values[1:])):
                fail(f"chart {i}: linear ticks {values} do not rise from 0")
            if not (values[-1] >= top > values[-1] - step):
                fail(f"chart {i}: the axis ends at {values[-1]}, the largest bar is {top}")
        if c["kind"] == "fleet" and c["values"]:
            # Round, evenly spaced ticks around every dot.
            steps = [b - a for a, b in zip(values, values[1:])]
            step = steps[0]
            if any(abs(x - step) > 1e-6 * step for x in steps):
                fail(f"chart {i}: ticks {values} are not evenly spaced")
            mantissa = step / 10 ** math.floor(math.log10(step))
            if not any(abs(mantissa - m) < 1e-6 for m in (1, 2, 2.5, 5)):
                fail(f"chart {i}: tick step {step} is not 1, 2, 2.5 or 5 times a power of ten")
            if min(c["values"]) < values[0] or max(c["values"]) > values[-1]:
                fail(f"chart {i}: dots outside the axis {values[0]}..{values[-1]}")
    return checked


def check_order(sequence, tokens):
    """The first element matching each token comes after the one before: tag, tag.class,
    tag:text (a heading's text)."""
    last, where = -1, []
    for token in tokens:
        tag, _, text = token.partition(":")
        tag, _, cls = tag.partition(".")
        found = next((i for i, (t, classes, txt) in enumerate(sequence)
                      if t == tag and (not cls or cls in classes)
                      and (not text or txt.strip() == text)), None)
        if found is None:
            fail(f"--order: nothing in the rendered page matches {token!r}")
        if found <= last:
            fail(f"--order: {token!r} (element {found}) comes before {tokens[len(where) - 1]!r} "
                 f"(element {last})")
        where.append(found)
        last = found
    print(f"order: {' < '.join(tokens)} (elements {where})")


# ---- computed colours: a script in a copy of the page writes them into its DOM ----

COLOUR_PROBE = """<script>
(function () {
  var out = {cells: {}, verdicts: {}, dots: []};
  document.querySelectorAll('td[class], li[class]').forEach(function (e) {
    var cs = getComputedStyle(e), key = e.tagName.toLowerCase() + '.' + e.className;
    (out.cells[key] = out.cells[key] || []).push([cs.backgroundColor, cs.color]);
  });
  document.querySelectorAll('div.verdict').forEach(function (e) {
    out.verdicts[e.className] = getComputedStyle(e).borderTopColor;
  });
  document.querySelectorAll('circle[data-outlier="true"]').forEach(function (e) {
    out.dots.push(getComputedStyle(e).fill);
  });
  var pre = document.createElement('pre');
  pre.id = 'gpucheck-computed';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>"""


def rgb(css):
    nums = [float(x) for x in css[css.index("(") + 1:css.index(")")].split(",")[:3]]
    return tuple(int(round(x)) for x in nums)


def hue(c):
    """What a reader calls the colour, pastel or not: red, yellow (amber), green, blue or grey."""
    h, _, sat = colorsys.rgb_to_hls(*(x / 255 for x in c))
    if sat < 0.08 or max(c) - min(c) < 10:
        return "grey"
    deg = h * 360
    if deg < 20 or deg >= 330:
        return "red"
    if deg < 70:
        return "yellow"
    if deg < 170:
        return "green"
    if deg < 260:
        return "blue"
    return "other"


WANTED_HUE = {"fail": "red", "failed": "red", "mismatch": "red", "unmet": "red",
              "regression": "red", "warn": "yellow", "noisy": "yellow", "changed": "yellow",
              "skip": "grey", "skipped": "grey", "unsupported": "grey", "same": "grey",
              "info": "blue", "pass": "green", "ok": "green", "met": "green",
              "improvement": "green"}
VERDICT_HUE = {"bad": "red", "warn": "yellow", "good": "green"}


def check_colours(computed):
    """Status cells: one colour per status word, each its expected hue; no two statuses of
    different meaning share a background. Verdict boxes and outlier dots by their tone."""
    seen = {}
    for key, pairs in computed["cells"].items():
        tag, _, cls = key.partition(".")
        backgrounds = {bg for bg, _ in pairs}
        if len(backgrounds) != 1:
            fail(f"{key}: cells of one status drawn in several colours {backgrounds}")
        bg = rgb(backgrounds.pop())
        want = WANTED_HUE.get(cls)
        if tag == "td" and want and hue(bg) != want:
            fail(f"{key}: background {bg} reads as {hue(bg)}, want {want}")
        if tag == "td":
            seen[cls] = bg
    by_hue = {}
    for cls, bg in seen.items():
        by_hue.setdefault(WANTED_HUE.get(cls, cls), set()).add(bg)
    for h, colours in by_hue.items():
        for other, others in by_hue.items():
            if h < other and colours & others:
                fail(f"statuses meaning {h} and {other} share a background {colours & others}")
    for cls, colour in computed["verdicts"].items():
        tone = cls.split()[-1]
        if VERDICT_HUE.get(tone) and hue(rgb(colour)) != VERDICT_HUE[tone]:
            fail(f"div.{cls}: border {colour} reads as {hue(rgb(colour))}, want {VERDICT_HUE[tone]}")
    for dot in computed["dots"]:
        if hue(rgb(dot)) != "red":
            fail(f"an outlier dot is drawn {dot}, not red")
    print(f"colours: {len(seen)} statuses {sorted(seen)}, {len(computed['verdicts'])} verdict "
          f"boxes, {len(computed['dots'])} outlier dots as their meaning says")


# ---- a proxy that only counts who knocks ----

class CountingListener:
    """Accepts every connection on its own thread and reads until the request line is complete
    or the client closes. A connection closed without sending a byte carried no request: Chromium
    opens sockets to an HTTP proxy ahead of use (preconnects for its plain-HTTP service traffic,
    such as the component updater's POST to update.googleapis.com) and closes the idle ones when
    it exits. The old listener read one recv() with a 1 s timeout and recorded such a socket as
    a request with an empty line (''), which failed html.probe_hostile_names once; such sockets
    are now listed apart, and everything that sent bytes is judged by its request line."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.requests = []  # request lines, in order of arrival
        self.silent = 0     # connections closed (or still idle at close()) with no byte sent
        self.lock = threading.Lock()
        self.stop = False
        self.handlers = []
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stop:
            try:
                conn, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            t = threading.Thread(target=self.handle, args=(conn,), daemon=True)
            t.start()
            self.handlers.append(t)

    def handle(self, conn):
        data = b""
        conn.settimeout(0.5)
        # Until the request line is complete, the client closes, or the listener stops (the
        # browser has exited by then): a socket idle that long never asked for anything.
        while b"\r\n" not in data and not self.stop:
            try:
                chunk = conn.recv(512)
            except socket.timeout:
                continue
            except OSError:
                break
            if not chunk:
                break
            data += chunk
        conn.close()
        with self.lock:
            if data:
                self.requests.append(data.split(b"\r\n", 1)[0].decode(errors="replace"))
            else:
                self.silent += 1

    def close(self):
        self.stop = True
        self.thread.join(2)
        self.sock.close()
        for t in self.handlers:
            t.join(2)


BROWSER_OWN_HOSTS = (".google.com", ".googleapis.com", ".gstatic.com")


def request_host(line):
    """The host a proxy request line names: CONNECT host:443 or GET http://host/path."""
    parts = line.split()
    if len(parts) < 2:
        return ""
    target = parts[1]
    if "://" in target:
        target = target.split("://", 1)[1].split("/", 1)[0]
    return target.rsplit(":", 1)[0] if target.count(":") == 1 else target


def page_requests(lines):
    """The requests not explained by the browser's own service traffic. A line that names no
    host (not a request line at all) is counted: only a request to a known service is excused."""
    return [l for l in lines
            if not request_host(l) or not ("." + request_host(l)).endswith(BROWSER_OWN_HOSTS)]


def chromium(binary, profile, listener, extra, timeout=20):
    args = [binary] + CHROMIUM_FLAGS + [
        f"--user-data-dir={profile}",
        f"--proxy-server=http://127.0.0.1:{listener.port}",
        "--proxy-bypass-list=<-loopback>",
        # Name lookups outside the proxy fail, so nothing can reach out around it either.
        "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
    ] + extra
    proc = subprocess.run(args, capture_output=True, timeout=timeout)
    return proc


# ---- PNG: enough of the format to count non-background pixels ----

def png_pixels(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail(f"{path} is not a PNG")
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, ctype = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if ctype == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or colour not in (2, 6) or interlace:
                fail(f"unexpected PNG format depth={depth} colour={colour} interlace={interlace}")
            channels = 4 if colour == 6 else 3
        elif ctype == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, prev = [], bytearray(stride)
    for y in range(height):
        ftype = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if ftype == 1:
            for i in range(channels, stride):
                line[i] = (line[i] + line[i - channels]) & 0xFF
        elif ftype == 2:
            line = bytearray((a + b) & 0xFF for a, b in zip(line, prev))
        elif ftype == 3:
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif ftype == 4:
            for i in range(stride):
                a = line[i - channels] if i >= channels else 0
                b = prev[i]
                c = prev[i - channels] if i >= channels else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 0xFF
        rows.append(line)
        prev = line
    return width, height, channels, rows


def screenshot_ink(path):
    """Fraction of pixels that are not the page's white and how many distinct colours."""
    width, height, channels, rows = png_pixels(path)
    ink, colours = 0, set()
    for line in rows:
        for x in range(0, width * channels, channels):
            px = bytes(line[x:x + 3])
            if px != b"\xff\xff\xff":
                ink += 1
                if len(colours) < 4096:
                    colours.add(px)
    return ink / float(width * height), len(colours)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--doc", help="a saved document, rendered with report show")
    ap.add_argument("--expect-text", action="append", default=[],
                    help="text the rendered page must contain")
    ap.add_argument("--min-charts", type=int, default=0)
    ap.add_argument("--check-ticks", action="store_true",
                    help="every tick label must read as its value; linear axes end near the top")
    ap.add_argument("--order", default="",
                    help="element tokens (tag, tag.class, tag:text), comma-separated, in their "
                         "page order")
    ap.add_argument("--check-colours", action="store_true",
                    help="computed colours of statuses, verdict boxes and outlier dots")
    ap.add_argument("--dom-only", action="store_true",
                    help="judge the rendered DOM only: no screenshot, no control page")
    ap.add_argument("gpucheck")
    ap.add_argument("args", nargs=argparse.REMAINDER)
    o = ap.parse_args()
    args = o.args[1:] if o.args and o.args[0] == "--" else o.args

    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        print("SKIP: chromium is not installed (apt-get install chromium)")
        sys.exit(77)

    work = tempfile.mkdtemp(prefix="gpucheck-html-")
    try:
        doc_path = o.doc or os.path.join(work, "doc.json")
        page = os.path.join(work, "page.html")
        if not o.doc:
            r = subprocess.run([o.gpucheck] + args + ["--json", "-o", doc_path], capture_output=True)
            if r.returncode == 3:
                print(f"SKIP: a device is not here: {r.stderr.decode(errors='replace').strip()}")
                sys.exit(77)
            if r.returncode not in (0, 1):
                fail(f"gpucheck --json exited {r.returncode}: {r.stderr.decode(errors='replace')}")
        render = [o.gpucheck, "report", "show", o.doc] if o.doc else [o.gpucheck] + args
        r = subprocess.run(render + ["--format", "html", "-o", page], capture_output=True)
        if r.returncode not in (0, 1):
            fail(f"gpucheck --format html exited {r.returncode}: {r.stderr.decode(errors='replace')}")
        with open(doc_path) as f:
            doc = json.load(f)
        want_charts, want_marks = expected_marks(doc)
        if want_charts < o.min_charts:
            fail(f"the document gives {want_charts} charts, the test needs {o.min_charts}: {args}")

        with open(page, encoding="utf-8") as f:
            source = f.read()
        # The page as written holds no script, frame or stylesheet link and names no resource.
        written = DomCounter()
        written.feed(source)
        if written.tags.get("script") or written.tags.get("iframe") or written.tags.get("link"):
            fail(f"the page holds script/iframe/link elements: {written.tags}")
        if written.remote:
            fail(f"the page references resources: {written.remote[:5]}")
        # With --check-colours the DOM is read from a copy with the colour script added (one
        # browser run for both); the script's own element is left out of the counts below.
        url = "file://" + page
        if o.check_colours:
            instrumented = os.path.join(work, "colours.html")
            with open(instrumented, "w", encoding="utf-8") as f:
                f.write(source.replace("</body>", COLOUR_PROBE + "</body>"))
            url = "file://" + instrumented

        # One listener per browser run: each run's connections are its own, however late they
        # arrive, and every one is read to its end before the run is judged.
        listener = CountingListener()
        try:
            dom = chromium(browser, os.path.join(work, "p1"), listener, ["--dump-dom", url])
            if dom.returncode != 0 or b"<svg" not in dom.stdout and want_charts:
                fail(f"chromium --dump-dom exited {dom.returncode}: {dom.stderr.decode(errors='replace')[-2000:]}")
        finally:
            listener.close()
        page_lines, silent = list(listener.requests), listener.silent
        dom_text = dom.stdout.decode("utf-8", errors="replace")
        computed = None
        if o.check_colours:
            start = dom_text.find('<pre id="gpucheck-computed">')
            if start < 0:
                fail("the colour script wrote nothing: " + dom.stderr.decode(errors="replace")[-500:])
            body = dom_text.index(">", start) + 1
            end = dom_text.index("</pre>", body)
            computed = json.loads(html.unescape(dom_text[body:end]))
            dom_text = dom_text[:start] + dom_text[end + len("</pre>"):]

        counter = DomCounter()
        counter.feed(dom_text)
        got_marks = {k: counter.marks.get(k, 0) for k in want_marks}
        print(f"charts: {counter.svgs} (want {want_charts}); marks: {got_marks} (want {want_marks})")
        if counter.svgs != want_charts:
            fail(f"{counter.svgs} <svg> charts in the rendered DOM, want {want_charts}")
        if got_marks != want_marks:
            fail(f"data marks {got_marks}, want {want_marks}")
        if not o.check_colours and (counter.tags.get("script") or counter.tags.get("iframe")
                                    or counter.tags.get("link")):
            fail(f"the rendered page holds script/iframe/link elements: {counter.tags}")
        if counter.remote:
            fail(f"the rendered page references resources: {counter.remote[:5]}")
        if o.check_ticks:
            n = check_ticks(counter.charts)
            if n == 0:
                fail("--check-ticks: the page has no tick labels")
            print(f"ticks: {n} labels read back as their values")
        if o.order:
            check_order(counter.sequence, o.order.split(","))
        fleet = doc.get("fleet", {})
        if fleet.get("groups"):
            # Every red dot is named beside it, with a node the outlier table names.
            hosts = {x["hostname"] for x in fleet.get("outliers", [])}
            if len(counter.outliers) < len(fleet.get("outliers", [])) and hosts:
                fail(f"{len(counter.outliers)} red dots for {len(fleet['outliers'])} outliers")
            for entry in counter.outliers:
                if entry is None or entry[2].split()[0] not in hosts:
                    fail(f"a red dot is not labelled with an outlier's node: {entry}")
            print(f"outlier dots: {len(counter.outliers)}, each labelled with its node")
        if computed is not None:
            check_colours(computed)
        text = "".join(counter.text)
        for t in o.expect_text:
            if t not in text:
                fail(f"the rendered text lacks {t!r}")
        if o.dom_only:
            # The screenshot and the network are judged by the tests that render live runs.
            if page_requests(page_lines):
                fail(f"the page made network requests: {page_requests(page_lines)}")
            print("screenshot and control page: not run (--dom-only)")
            print("PASS")
            return

        shot = os.path.join(work, "shot.png")
        listener = CountingListener()
        try:
            s = chromium(browser, os.path.join(work, "p2"), listener,
                         ["--window-size=1000,1400", "--hide-scrollbars", f"--screenshot={shot}",
                          "file://" + page])
            if s.returncode != 0 or not os.path.exists(shot):
                fail(f"chromium --screenshot exited {s.returncode}: {s.stderr.decode(errors='replace')[-2000:]}")
        finally:
            listener.close()
        page_lines += listener.requests
        silent += listener.silent
        # Control: a page with one remote image must reach the listener, or zero proves nothing.
        control = os.path.join(work, "control.html")
        with open(control, "w") as f:
            f.write('<!DOCTYPE html><img src="http://gpucheck-control.invalid/x.png">')
        listener = CountingListener()
        try:
            chromium(browser, os.path.join(work, "p3"), listener, ["--dump-dom", "file://" + control])
        finally:
            listener.close()
        control_lines = listener.requests
        ink, colours = screenshot_ink(shot)
        print(f"screenshot: {ink:.1%} of pixels drawn, {colours} colours")
        if ink < 0.02 or colours < 8:
            fail(f"the screenshot looks blank ({ink:.2%} drawn, {colours} colours)")
        own = [l for l in page_lines if l not in page_requests(page_lines)]
        print(f"network: {len(page_requests(page_lines))} requests from the page "
              f"({len(own)} of the browser's own, not counted: {[request_host(l) for l in own]}; "
              f"{silent} connections closed without a request); "
              f"{len(page_requests(control_lines))} from the control page")
        if not page_requests(control_lines):
            fail("the control page's remote image never reached the counting proxy")
        if page_requests(page_lines):
            fail(f"the page made network requests: {page_requests(page_lines)}")
        print("PASS")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
