#!/usr/bin/env python3
"""Prints 'N passed, N failed, N skipped' from ctest's JUnit file (ctest --output-junit), then
a line naming each failed test, so the end of a long log says which ones failed."""
import sys
import xml.etree.ElementTree as ET

root = ET.parse(sys.argv[1]).getroot()
passed = skipped = 0
failed = []
for case in root.iter("testcase"):
    status = case.get("status", "")
    if case.find("skipped") is not None or status == "notrun" and case.find("failure") is None:
        skipped += 1
    elif case.find("failure") is not None or case.find("error") is not None or status == "fail":
        failed.append(case.get("name", "?"))
    else:
        passed += 1
print(f"{passed} passed, {len(failed)} failed, {skipped} skipped")
for name in failed:
    print(f"FAILED: {name}")
