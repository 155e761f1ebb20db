#!/usr/bin/env python3
"""Prints 'N passed, N failed, N skipped' from ctest's JUnit file (ctest --output-junit)."""
import sys
import xml.etree.ElementTree as ET

root = ET.parse(sys.argv[1]).getroot()
passed = failed = skipped = 0
for case in root.iter("testcase"):
    status = case.get("status", "")
    if case.find("skipped") is not None or status == "notrun" and case.find("failure") is None:
        skipped += 1
    elif case.find("failure") is not None or case.find("error") is not None or status == "fail":
        failed += 1
    else:
        passed += 1
print(f"{passed} passed, {failed} failed, {skipped} skipped")
