#!/usr/bin/env bash
# The .deb end to end: cpack builds it from BUILD_DIR; its Depends name only the C
# library and its Recommends the OpenCL loader and OpenBLAS; installed, gpucheck runs --version
# and a probe, `man -l` renders its page, the bash completion registers, and removal leaves
# nothing behind. As root on CI (CI=true, or GPUCHECK_DEB_INSTALL=1) it is installed with dpkg -i
# and purged; otherwise it is unpacked into a scratch root. Exit 77: skipped (printed why).
set -uo pipefail
build=${1:?usage: deb_check.sh BUILD_DIR}
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
for tool in cpack dpkg-deb man bash; do command -v "$tool" >/dev/null || skip "$tool not installed"; done
[ -f "$build/generated/gpucheck.1" ] || skip "no man page was generated (help2man not installed)"

work=$(mktemp -d /tmp/gpucheck-deb-XXXXXX)
trap 'rm -rf "$work"' EXIT
(cd "$build" && cpack -G DEB -B "$work/pkg" >"$work/cpack.log" 2>&1) || { cat "$work/cpack.log"; fail "cpack -G DEB failed"; }
deb=$(ls "$work"/pkg/gpucheck_*.deb 2>/dev/null | head -1)
[ -n "$deb" ] || fail "cpack wrote no .deb"
echo "package: $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB)"

depends=$(dpkg-deb -f "$deb" Depends)
recommends=$(dpkg-deb -f "$deb" Recommends)
echo "Depends: $depends"
echo "Recommends: $recommends"
others=$(echo "$depends" | tr ',' '\n' | sed 's/(.*//; s/ //g' | grep -v '^libc6$' | grep -v '^$' || true)
[ -z "$others" ] || fail "Depends names more than the C library: $others"
for r in ocl-icd-libopencl1 libopenblas0; do
  [[ $recommends == *"$r"* ]] || fail "Recommends lacks $r"
done

real_install=0
if [ "$(id -u)" = 0 ] && { [ "${CI:-}" = true ] || [ "${GPUCHECK_DEB_INSTALL:-}" = 1 ]; }; then
  if dpkg-query -W -f='${Status}' gpucheck 2>/dev/null | grep -q "install ok installed"; then
    echo "note: a gpucheck package is already installed here: using a scratch root instead"
  else
    real_install=1
  fi
fi
if [ $real_install = 1 ]; then
  root=""
  dpkg -i "$deb" >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log"; fail "dpkg -i failed"; }
  echo "installed with dpkg -i"
else
  root="$work/root"
  dpkg-deb -x "$deb" "$root" || fail "dpkg-deb -x failed"
  echo "unpacked into a scratch root"
fi
gpucheck="$root/usr/bin/gpucheck"
check() {  # what, command...
  local what=$1; shift
  if ! out=$("$@" 2>&1); then
    echo "$out" | tail -20
    [ $real_install = 1 ] && dpkg --purge gpucheck >/dev/null 2>&1
    fail "$what"
  fi
  echo "ok: $what"
}
check "gpucheck --version" "$gpucheck" --version
"$gpucheck" --version | grep -q "^gpucheck " || fail "--version does not start with 'gpucheck '"
if "$gpucheck" probe --help 2>/dev/null | grep -q -- "--list"; then
  check "gpucheck probe --list" "$gpucheck" probe --list
else
  # A build without probe --list: the table probe stands in.
  check "gpucheck probe (no --list in this build)" "$gpucheck" probe --probe-timeout 30
fi
check "qualify finds the installed profile by name" bash -c \
  "'$gpucheck' qualify --profile cpu-only --json -o '$work/q.json' --probe-timeout 30; [ \$? -le 1 ] && grep -q '\"cpu-only\"' '$work/q.json'"
page="$root/usr/share/man/man1/gpucheck.1"
check "man -l gpucheck.1" bash -c "MANWIDTH=100 man -l '$page' 2>/dev/null | grep -q 'gpucheck bench'"
comp="$root/usr/share/bash-completion/completions/gpucheck"
check "the bash completion registers" bash -c "source '$comp' && complete -p gpucheck | grep -q _gpucheck"
check "the completion offers bench flags" bash -c \
  "source '$comp'; COMP_WORDS=(gpucheck bench --dev); COMP_CWORD=2; _gpucheck; printf '%s\n' \"\${COMPREPLY[@]}\" | grep -qx -- --device"
[ -f "$root/usr/share/gpucheck/schema/gpucheck.schema.json" ] || fail "no schema in share/gpucheck"
[ -f "$root/usr/share/zsh/vendor-completions/_gpucheck" ] || fail "no zsh completion"

if [ $real_install = 1 ]; then
  files=$(dpkg -L gpucheck | grep -v '^/\.$')
  dpkg --purge gpucheck >"$work/purge.log" 2>&1 || { cat "$work/purge.log"; fail "dpkg --purge failed"; }
  left=""
  for f in $files; do [ -f "$f" ] && left="$left $f"; done
  [ -z "$left" ] || fail "files left after purge:$left"
  dpkg-query -W gpucheck >/dev/null 2>&1 && dpkg-query -W -f='${Status}\n' gpucheck | grep -q "not-installed\|^$" || true
  echo "ok: purged, no file left"
fi
echo "deb_check: all passed"
