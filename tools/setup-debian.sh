#!/usr/bin/env bash
# Installs what gpucheck needs on Debian 12, as root, with apt-get; safe to run again (only the
# missing packages are installed). Named sets, one or more (default: build):
#   --set build   building and running gpucheck: the compiler and CMake, the header-only
#                 libraries, the OpenCL headers and loader with pocl (an OpenCL device on the
#                 CPU), OpenBLAS and CLBlast (opened at run time), the Vulkan headers and glslc
#                 (the loader is opened at run time), help2man, ccache
#   --set test    the rest, for the test suite (tools/test.sh): Chromium, clang with its
#                 sanitizer runtime, Slurm and munge (their services are not started here),
#                 GoogleTest, the Python test modules and torch, Vulkan and Mesa's OpenCL,
#                 python3-venv and pip for the wheel test, the tools the package tests run, and
#                 a German locale
#   --set all     both
#   --with-slurm  accepted for older callers: the test set holds Slurm
set -euo pipefail
usage="usage: setup-debian.sh [--set build|test|all]..."
declare -A sets=(
  [build]="build-essential cmake ninja-build pkg-config git ccache help2man python3
    libcli11-dev libfmt-dev libspdlog-dev nlohmann-json3-dev libtomlplusplus-dev
    opencl-headers ocl-icd-libopencl1 pocl-opencl-icd libopenblas0-pthread libclblast1
    libvulkan-dev glslc"
  [test]="googletest libgtest-dev libgmock-dev ocl-icd-opencl-dev clinfo clpeak libclblast-dev
    libblis4-pthread libopenblas64-0-pthread
    python3-jsonschema python3-numpy python3-prometheus-client python3-yaml python3-torch
    python3-venv python3-pip locales binutils libxml2-utils file dpkg-dev bash-completion man-db
    chromium fonts-dejavu-core clang libclang-rt-14-dev
    mesa-vulkan-drivers libvulkan1 vulkan-tools mesa-opencl-icd
    slurmctld slurmd slurm-client munge prometheus prometheus-node-exporter"
)
chosen=()
while (($#)); do
  case $1 in
    --set)
      [ $# -ge 2 ] || { echo "setup-debian.sh: --set needs a name (build, test, all); $usage" >&2; exit 2; }
      case $2 in
        build | test) chosen+=("$2") ;;
        all) chosen+=(build test) ;;
        *) echo "setup-debian.sh: unknown set '$2' (build, test, all)" >&2; exit 2 ;;
      esac
      shift 2
      ;;
    --with-slurm) chosen+=(test); shift ;;
    *) echo "setup-debian.sh: unknown argument '$1'; $usage" >&2; exit 2 ;;
  esac
done
((${#chosen[@]})) || chosen=(build)

missing_of() {
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}
# Packages with daemons (munge, slurmd, slurmctld) must not start them: invoke-rc.d and
# deb-systemd-invoke ask policy-rc.d, and 101 means "not now".
updated=0
install_pkgs() {
  local policy=/usr/sbin/policy-rc.d made=0 rc=0
  export DEBIAN_FRONTEND=noninteractive
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy" && made=1
  fi
  if ((!updated)); then apt-get update && updated=1 || rc=$?; fi
  ((rc)) || apt-get install -y --no-install-recommends "$@" || rc=$?
  if ((made)); then rm -f "$policy"; fi
  return "$rc"
}
for set in "${chosen[@]}"; do
  read -r -a pkgs <<<"$(echo ${sets[$set]})"
  mapfile -t missing < <(missing_of "${pkgs[@]}")
  if ((${#missing[@]} == 0)); then
    echo "setup-debian.sh: the $set set is installed"
    continue
  fi
  echo "setup-debian.sh: installing the $set set's ${#missing[@]} missing packages: ${missing[*]}"
  if [ "$set" = build ]; then
    install_pkgs "${missing[@]}"
  elif ! install_pkgs "${missing[@]}"; then
    # Best effort, one by one: a test whose tool cannot be installed skips and says why.
    for p in "${missing[@]}"; do
      install_pkgs "$p" >/dev/null 2>&1 || echo "setup-debian.sh: could not install $p; the tests that need it skip" >&2
    done
  fi
  if [ "$set" = test ] && ! locale -a 2>/dev/null | grep -qi '^de_DE\.utf-\?8$'; then
    # A German locale lets the tests prove that numbers print with a dot whatever LC_NUMERIC says.
    sed -i 's/^# *de_DE.UTF-8/de_DE.UTF-8/' /etc/locale.gen
    locale-gen
  fi
done
