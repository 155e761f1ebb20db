#!/usr/bin/env bash
# The wheel end to end: `cmake --build BUILD --target wheel` writes it; its RECORD matches its
# files; it installs with `pip install --no-index` into a fresh venv, where `gpucheck` on the
# venv's PATH runs --version, `probe --json` and `qualify --profile cpu-only` (the profile found
# by name in the venv's share/gpucheck), `python -m gpucheck --version` runs the same binary, and
# `pip uninstall` leaves no file behind. A binary that needs more than the C library is
# refused. Exit 77: skipped (printed why).
set -uo pipefail
build=${1:?usage: wheel_check.sh BUILD_DIR SOURCE_DIR}
source_dir=${2:?usage: wheel_check.sh BUILD_DIR SOURCE_DIR}
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
[ -z "${GPUCHECK_WHEEL_SKIP:-}" ] || skip "$GPUCHECK_WHEEL_SKIP"
python=/usr/bin/python3
[ -x "$python" ] || skip "no /usr/bin/python3"
"$python" -c 'import ensurepip, venv' 2>/dev/null || skip "python3 -m venv cannot make a venv with pip here (Debian: apt install python3-venv)"
for tool in readelf objdump; do command -v "$tool" >/dev/null || skip "$tool not installed (binutils)"; done

work=$(mktemp -d /tmp/gpucheck-wheel-XXXXXX)
trap 'rm -rf "$work"' EXIT
cmake --build "$build" --target wheel >"$work/build.log" 2>&1 || { cat "$work/build.log"; fail "the wheel target failed"; }
whl=$(ls "$build"/dist/gpucheck-*-py3-none-manylinux_2_34_*.whl 2>/dev/null | head -1)
[ -n "$whl" ] || { cat "$work/build.log"; fail "no $build/dist/gpucheck-*-py3-none-manylinux_2_34_*.whl"; }
echo "wheel: $(basename "$whl") ($(du -k "$whl" | cut -f1) KiB)"

# RECORD: every file once with its sha256 and size, and nothing unlisted.
"$python" - "$whl" <<'EOF' || fail "the wheel's RECORD does not match its files"
import base64, csv, hashlib, io, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
record = next(n for n in z.namelist() if n.endswith(".dist-info/RECORD"))
rows = list(csv.reader(io.StringIO(z.read(record).decode())))
listed = {r[0] for r in rows}
assert listed == set(z.namelist()), set(z.namelist()) ^ listed
for name, digest, size in rows:
    if name == record:
        continue
    data = z.read(name)
    want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    assert digest == want and int(size) == len(data), name
wheel = z.read(record.replace("RECORD", "WHEEL")).decode()
assert "Tag: py3-none-manylinux_2_34_" in wheel, wheel
for must in ("scripts/gpucheck", "share/gpucheck/configs/qualify/cpu-only.toml",
             "share/gpucheck/schema/gpucheck.schema.json", "gpucheck/__main__.py",
             "share/bash-completion/completions/gpucheck", "share/zsh/vendor-completions/_gpucheck"):
    assert any(n.endswith(must) for n in listed), must
print("ok: RECORD lists every file with its sha256 and size; WHEEL tags manylinux_2_34")
EOF

venv="$work/venv"
"$python" -m venv "$venv" >"$work/venv.log" 2>&1 || { cat "$work/venv.log"; skip "python3 -m venv failed"; }
(cd "$venv" && find . ! -type d | sort) >"$work/before.txt"
"$venv/bin/pip" install --no-index --disable-pip-version-check "$whl" >"$work/pip.log" 2>&1 ||
  { cat "$work/pip.log"; fail "pip install --no-index failed"; }
echo "ok: pip install --no-index"
check() {  # what, command...
  local what=$1; shift
  if ! out=$("$@" 2>&1); then echo "$out" | tail -20; fail "$what"; fi
  echo "ok: $what"
}
in_venv() { PATH="$venv/bin:$PATH" "$@"; }
[ "$(in_venv command -v gpucheck)" = "$venv/bin/gpucheck" ] || fail "gpucheck is not on the venv's PATH"
check "gpucheck --version" in_venv gpucheck --version
version=$(in_venv gpucheck --version)
[[ $version == "gpucheck "* ]] || fail "--version says '$version'"
check "gpucheck probe --json" bash -c "PATH='$venv/bin:$PATH' gpucheck probe --json --probe-timeout 30 >'$work/probe.json' && '$python' -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d[\"schema\"].startswith(\"gpucheck/\")' '$work/probe.json'"
check "qualify --profile cpu-only finds the venv's profile by name" bash -c \
  "PATH='$venv/bin:$PATH' gpucheck qualify --profile cpu-only --json -o '$work/q.json' --probe-timeout 30; [ \$? -le 1 ] && grep -q '\"cpu-only\"' '$work/q.json'"
check "python -m gpucheck --version" "$venv/bin/python" -m gpucheck --version
[ "$("$venv/bin/python" -m gpucheck --version)" = "$version" ] || fail "python -m gpucheck runs another gpucheck"
[ -f "$venv/share/man/man1/gpucheck.1" ] || echo "note: no man page in the wheel (help2man not installed at build time)"

"$venv/bin/pip" uninstall -y --disable-pip-version-check gpucheck >"$work/uninstall.log" 2>&1 ||
  { cat "$work/uninstall.log"; fail "pip uninstall failed"; }
(cd "$venv" && find . ! -type d | sort) >"$work/after.txt"
diff "$work/before.txt" "$work/after.txt" >"$work/left.txt" || { cat "$work/left.txt"; fail "pip uninstall left files behind or took some away"; }
# pip removes the files it installed but not the data folders it made (share/man, ...).
empty=$(cd "$venv" && find share -type d -empty 2>/dev/null | sort | tr '\n' ' ')
echo "ok: pip uninstall leaves no file behind${empty:+ (pip leaves these empty folders: $empty)}"

# A binary that needs libstdc++ at load time is not tagged manylinux_2_34.
refuse=$(command -v ninja || command -v cmake)
if "$python" "$source_dir/tools/wheel/build_wheel.py" --binary "$refuse" --version 0.1.0 \
  --source-root "$source_dir" --generated "$work" --stage "$work/stage" --out "$work/dist" >"$work/refuse.log" 2>&1; then
  fail "build_wheel.py tagged $refuse, which needs libstdc++"
fi
grep -q "refused: .*libstdc++" "$work/refuse.log" || { cat "$work/refuse.log"; fail "the refusal does not name libstdc++"; }
[ -z "$(ls "$work/dist" 2>/dev/null)" ] || fail "a refused binary left a wheel behind"
echo "ok: $(basename "$refuse") (libstdc++ at load time) is refused"
echo "wheel_check: all passed"
