#!/usr/bin/env bash
# Installs what gpucheck needs to build and test on Debian 12, as root; safe to run again.
set -euo pipefail
pkgs=(
  build-essential cmake ninja-build pkg-config git
  libcli11-dev libfmt-dev libspdlog-dev nlohmann-json3-dev libtomlplusplus-dev
  libopenblas0-pthread libblis4-pthread libopenblas64-0-pthread googletest libgtest-dev libgmock-dev
  ocl-icd-opencl-dev ocl-icd-libopencl1 opencl-headers pocl-opencl-icd clinfo clpeak libclblast-dev
  python3 python3-jsonschema python3-numpy python3-prometheus-client locales binutils libxml2-utils
  chromium fonts-dejavu-core help2man bash-completion man-db dpkg-dev file
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  apt-get install -y --no-install-recommends "${missing[@]}"
fi
# A German locale lets the tests prove that numbers print with a dot whatever LC_NUMERIC says.
if ! locale -a 2>/dev/null | grep -qi '^de_DE\.utf-\?8$'; then
  sed -i 's/^# *de_DE.UTF-8/de_DE.UTF-8/' /etc/locale.gen
  locale-gen
fi
