#!/usr/bin/env python3
"""Writes gpucheck's wheel from a finished build, with the standard library alone (no pip).

    build_wheel.py --binary BUILD/src/gpucheck --version 0.1.0 --source-root SRC \
        --generated BUILD/generated --stage BUILD/wheel --out BUILD/dist [--strip strip]

The wheel (gpucheck-<version>-py3-none-manylinux_2_34_<arch>.whl) holds:
  gpucheck-<v>.data/scripts/gpucheck            the stripped binary: <prefix>/bin/gpucheck
  gpucheck-<v>.data/data/share/gpucheck/        configs/ and schema/, where the binary looks
                                                beside its own prefix (src/core/install_dirs.cpp)
  gpucheck-<v>.data/data/share/man/man1/, share/bash-completion/, share/zsh/
  gpucheck/__init__.py, gpucheck/__main__.py    `python -m gpucheck` runs the binary
  gpucheck-<v>.dist-info/                       METADATA, WHEEL, RECORD
The tag is manylinux_2_34 only while the binary needs nothing more at load time: its NEEDED
entries are the C library family and every versioned symbol it imports is GLIBC_2.34 or older
(the rule tests/cli/test_binary_deps.cpp holds the release binary to). Anything else is refused.
Exit codes: 0 written, 1 refused or failed (the reason on stderr), 2 bad arguments.
"""
import argparse
import base64
import hashlib
import os
import re
import shutil
import stat
import subprocess
import sys
import zipfile

GLIBC_FLOOR = (2, 34)
ALLOWED_NEEDED = {"libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1",
                  "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1"}
ELF_MACHINES = {62: "x86_64", 183: "aarch64"}
# Fixed entry times: the same build gives the same wheel.
ZIP_TIME = (1980, 1, 1, 0, 0, 0)


class Refused(Exception):
    pass


def run(tool, *args):
    try:
        r = subprocess.run([tool, *args], capture_output=True, text=True)
    except FileNotFoundError:
        raise Refused(f"{tool} not found: it checks what the binary needs at load time "
                      "(Debian: apt install binutils)")
    if r.returncode != 0:
        raise Refused(f"{tool} {' '.join(args)} exited {r.returncode}: {r.stderr.strip()}")
    return r.stdout


def elf_arch(path):
    with open(path, "rb") as f:
        header = f.read(20)
    if header[:4] != b"\x7fELF" or header[4] != 2 or header[5] != 1:
        raise Refused(f"{path} is not a 64-bit little-endian ELF file")
    machine = int.from_bytes(header[18:20], "little")
    if machine not in ELF_MACHINES:
        raise Refused(f"{path}: ELF machine {machine} has no manylinux tag here")
    return ELF_MACHINES[machine]


def load_time_problems(path):
    """What the binary needs at load time beyond the C library family up to GLIBC_2.34."""
    problems = []
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", run("readelf", "-d", path))
    problems += [f"it needs {lib} at load time" for lib in needed if lib not in ALLOWED_NEEDED]
    glibc = 0
    beyond = {}  # "GLIBCXX_3.4" -> the symbols that need it
    pattern = r"\b(GLIBC|GLIBCXX|CXXABI|GCC)_([0-9]+)\.([0-9]+)(?:\.[0-9]+)?\)?\s+(\S+)"
    for family, major, minor, symbol in re.findall(pattern, run("objdump", "-T", path)):
        if family == "GLIBC" and (int(major), int(minor)) <= GLIBC_FLOOR:
            glibc += 1
        else:
            beyond.setdefault(f"{family}_{major}.{minor}", []).append(symbol)
    for version, symbols in sorted(beyond.items()):
        problems.append(f"{len(symbols)} symbols need {version} (e.g. {symbols[0]})")
    if glibc == 0:
        problems.append("objdump -T listed no glibc symbol: not a dynamically linked binary?")
    return problems


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


class Wheel:
    def __init__(self, path):
        self.zip = zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED)
        self.records = []

    def add(self, name, data, executable=False):
        if isinstance(data, str):
            data = data.encode()
        info = zipfile.ZipInfo(name, ZIP_TIME)
        info.compress_type = zipfile.ZIP_DEFLATED
        info.external_attr = (stat.S_IFREG | (0o755 if executable else 0o644)) << 16
        self.zip.writestr(info, data)
        self.records.append(record_line(name, data))

    def add_file(self, name, path, executable=False):
        with open(path, "rb") as f:
            self.add(name, f.read(), executable)

    def add_tree(self, prefix, root):
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            for fn in sorted(filenames):
                full = os.path.join(dirpath, fn)
                self.add_file(f"{prefix}/{os.path.relpath(full, root)}", full)

    def close(self, record_name):
        self.records.append(f"{record_name},,")
        info = zipfile.ZipInfo(record_name, ZIP_TIME)
        info.external_attr = (stat.S_IFREG | 0o644) << 16
        self.zip.writestr(info, "\n".join(self.records) + "\n", zipfile.ZIP_DEFLATED)
        self.zip.close()


def metadata_text(version, summary, readme):
    return (f"Metadata-Version: 2.1\nName: gpucheck\nVersion: {version}\nSummary: {summary}\n"
            "Requires-Python: >=3.8\nDescription-Content-Type: text/markdown\n\n" + readme)


def build(args):
    arch = elf_arch(args.binary)
    os.makedirs(args.stage, exist_ok=True)
    staged = os.path.join(args.stage, "gpucheck")
    shutil.copyfile(args.binary, staged)
    if args.strip:
        run(args.strip, "--strip-unneeded", staged)
    problems = load_time_problems(staged)
    if problems:
        raise Refused("the binary is not manylinux_2_%d: %s" % (GLIBC_FLOOR[1], "; ".join(problems)))

    v = args.version
    tag = f"py3-none-manylinux_{GLIBC_FLOOR[0]}_{GLIBC_FLOOR[1]}_{arch}"
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"gpucheck-{v}-{tag}.whl")
    tmp = path + ".part"
    here = os.path.dirname(os.path.abspath(__file__))
    w = Wheel(tmp)
    with open(os.path.join(here, "__init__.py")) as f:
        w.add("gpucheck/__init__.py", f.read().replace("@VERSION@", v))
    w.add_file("gpucheck/__main__.py", os.path.join(here, "__main__.py"))
    data = f"gpucheck-{v}.data"
    w.add_file(f"{data}/scripts/gpucheck", staged, executable=True)
    w.add_tree(f"{data}/data/share/gpucheck/configs", os.path.join(args.source_root, "configs"))
    w.add_tree(f"{data}/data/share/gpucheck/schema", os.path.join(args.source_root, "schema"))
    docs = [("gpucheck.1", "share/man/man1/gpucheck.1"),
            ("gpucheck.bash", "share/bash-completion/completions/gpucheck"),
            ("_gpucheck", "share/zsh/vendor-completions/_gpucheck")]
    for name, dest in docs:
        src = os.path.join(args.generated, name)
        if os.path.exists(src):
            w.add_file(f"{data}/data/{dest}", src)
        else:
            print(f"build_wheel.py: no {src}: the wheel has no {dest}", file=sys.stderr)
    info = f"gpucheck-{v}.dist-info"
    with open(os.path.join(args.source_root, "README.md")) as f:
        readme = f.read()
    w.add(f"{info}/METADATA", metadata_text(v, args.summary, readme))
    w.add(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: gpucheck tools/wheel/build_wheel.py\n"
          f"Root-Is-Purelib: true\nTag: {tag}\n")
    w.close(f"{info}/RECORD")
    os.replace(tmp, path)
    return path


def main():
    p = argparse.ArgumentParser(description="Writes gpucheck's wheel from a finished build.")
    p.add_argument("--binary", required=True)
    p.add_argument("--version", required=True)
    p.add_argument("--source-root", required=True)
    p.add_argument("--generated", required=True, help="the man page and completions' folder")
    p.add_argument("--stage", required=True, help="a scratch folder for the stripped binary")
    p.add_argument("--out", required=True)
    p.add_argument("--strip", default="", help="strip program (empty: the binary as it is)")
    p.add_argument("--summary", default="GPU stack checker and benchmark")
    args = p.parse_args()
    if not re.fullmatch(r"[0-9]+(\.[0-9]+)*([ab]|rc)?[0-9]*", args.version):
        p.error(f"--version {args.version!r} is not a PEP 440 release version")
    try:
        print(build(args))
    except Refused as e:
        print(f"build_wheel.py: refused: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"build_wheel.py: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
