#!/bin/bash
# Sourced by the OpenCL scripts of tools/device: registers NVIDIA's OpenCL for this run only
# (an OCL_ICD_VENDORS directory in /tmp; the machine's own registration stays as it is) and
# sets $dev to the NVIDIA OpenCL device's gpucheck name (openclN), or exits 1 saying why.
# Expects $gpucheck, $out (a folder for probe.json) and say().
# ---- NVIDIA's OpenCL, registered for this run only
nv=""
for f in /usr/local/nvidia/lib64/libnvidia-opencl.so.1 /usr/lib/x86_64-linux-gnu/libnvidia-opencl.so.1; do
  [ -e "$f" ] && { nv=$f; break; }
done
vend=/tmp/gpucheck-nvidia-vendors
rm -rf "$vend" && mkdir -p "$vend"
cp /etc/OpenCL/vendors/*.icd "$vend"/ 2>/dev/null
[ -n "${OCL_ICD_VENDORS:-}" ] && [ -d "$OCL_ICD_VENDORS" ] && cp "$OCL_ICD_VENDORS"/*.icd "$vend"/ 2>/dev/null
if [ -z "$nv" ]; then
  say "no libnvidia-opencl.so.1 under /usr/local/nvidia/lib64 or /usr/lib/x86_64-linux-gnu:"
  ls -l /usr/local/nvidia/lib64 /usr/lib/x86_64-linux-gnu 2>&1 | grep -i nvidia | head -20 | tee -a "$log"
elif ! grep -qs nvidia-opencl "$vend"/*.icd && [[ "${OCL_ICD_FILENAMES:-}" != *nvidia-opencl* ]]; then
  echo "$nv" >"$vend/nvidia.icd"
fi
export OCL_ICD_VENDORS=$vend
say "vendors $vend: $(cd "$vend" && for f in *.icd; do printf '%s=%s ' "$f" "$(cat "$f")"; done) OCL_ICD_FILENAMES=${OCL_ICD_FILENAMES:-}"
nvidia-smi -L 2>&1 | tee -a "$log"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader 2>&1 | tee -a "$log"

# ---- the NVIDIA OpenCL device's index
"$gpucheck" probe --json -o "$out/probe.json" 2>>"$log"
dev=$(python3 - "$out/probe.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for b in doc.get("backends", []):
    if b.get("name") != "opencl":
        continue
    plats = {p.get("index"): p for p in b.get("platforms", [])}
    for d in b.get("devices", []):
        p = plats.get(d.get("platform"), {})
        text = f"{p.get('name', '')} {p.get('vendor', '')} {d.get('device_name', '')}"
        if "NVIDIA" in text and not d.get("duplicate_of") and "duplicate_of" not in p:
            print(d["device"]); sys.exit(0)
PY
)
if [ -z "$dev" ]; then
  say "no NVIDIA OpenCL device in the probe; its OpenCL section:"
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps([b for b in d.get('backends',[]) if b.get('name')=='opencl'], indent=1)[:6000])" "$out/probe.json" | tee -a "$log"
  clinfo -l 2>&1 | tee -a "$log"
  exit 1
fi
