#!/usr/bin/env bash
# Installs what gpucheck needs to build and test on Debian 12, as root; safe to run again.
#   --with-slurm   also Slurm and munge, for the test that runs contrib/slurm's health check
#                  against a real single-node Slurm (the test starts and stops its own daemons;
#                  the packages' services are not started here)
set -euo pipefail
with_slurm=0
for arg in "$@"; do
  case $arg in
    --with-slurm) with_slurm=1 ;;
    *) echo "setup-debian.sh: unknown argument '$arg' (--with-slurm)" >&2; exit 2 ;;
  esac
done
pkgs=(
  build-essential cmake ninja-build pkg-config git
  libcli11-dev libfmt-dev libspdlog-dev nlohmann-json3-dev libtomlplusplus-dev
  libopenblas0-pthread libblis4-pthread libopenblas64-0-pthread googletest libgtest-dev libgmock-dev
  ocl-icd-opencl-dev ocl-icd-libopencl1 opencl-headers pocl-opencl-icd clinfo clpeak libclblast-dev
  python3 python3-jsonschema python3-numpy python3-prometheus-client python3-yaml locales binutils libxml2-utils
  chromium fonts-dejavu-core help2man bash-completion man-db dpkg-dev file
)
missing_of() {
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}
# Packages with daemons (munge, slurmd, slurmctld) must not start them: invoke-rc.d and
# deb-systemd-invoke ask policy-rc.d, and 101 means "not now".
install_pkgs() {
  local policy=/usr/sbin/policy-rc.d made=0 rc=0
  export DEBIAN_FRONTEND=noninteractive
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy" && made=1
  fi
  { apt-get update && apt-get install -y --no-install-recommends "$@"; } || rc=$?
  if ((made)); then rm -f "$policy"; fi
  return "$rc"
}
mapfile -t missing < <(missing_of "${pkgs[@]}")
if ((${#missing[@]})); then install_pkgs "${missing[@]}"; fi
if ((with_slurm)); then
  mapfile -t missing < <(missing_of slurmctld slurmd slurm-client munge)
  # Best effort: where they cannot be installed, the Slurm test skips and says why.
  if ((${#missing[@]})) && ! install_pkgs "${missing[@]}"; then
    echo "setup-debian.sh: could not install ${missing[*]}; the Slurm test will skip" >&2
  fi
fi
# A German locale lets the tests prove that numbers print with a dot whatever LC_NUMERIC says.
if ! locale -a 2>/dev/null | grep -qi '^de_DE\.utf-\?8$'; then
  sed -i 's/^# *de_DE.UTF-8/de_DE.UTF-8/' /etc/locale.gen
  locale-gen
fi
