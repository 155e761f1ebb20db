#!/usr/bin/env python3
"""Runs a gpucheck command and validates its JSON output against the gpucheck/1 schema.

usage: validate_schema.py SCHEMA -- COMMAND [ARGS...]
Exit 0 valid, 1 invalid or command failed, 77 when python3-jsonschema is missing (skipped)."""
import json
import subprocess
import sys

try:
    import jsonschema
except ImportError:
    print("SKIP: python3-jsonschema is not installed", file=sys.stderr)
    sys.exit(77)

schema_path = sys.argv[1]
cmd = sys.argv[sys.argv.index("--") + 1:]
proc = subprocess.run(cmd, capture_output=True)
if proc.returncode not in (0, 1):
    print(f"command exited {proc.returncode}: {proc.stderr.decode(errors='replace')}", file=sys.stderr)
    sys.exit(1)
doc = json.loads(proc.stdout)
with open(schema_path) as f:
    schema = json.load(f)
validator = jsonschema.Draft202012Validator(schema)
errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
for e in errors[:20]:
    print(f"{'/'.join(map(str, e.path))}: {e.message[:300]}", file=sys.stderr)
if errors:
    sys.exit(1)
print(f"valid: {' '.join(cmd[1:])} ({len(json.dumps(doc))} bytes)")
