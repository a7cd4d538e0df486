#!/usr/bin/env python3
"""Prints the line coverage of each module from an `llvm-cov export -summary-only` JSON on stdin.

Usage: llvm-cov export -summary-only -instr-profile P BINARY -object OTHER | coverage-report.py
Modules are the folders under Sources/. Those below 70% are marked: the Tests section of docs/development.md
says why each one is.
"""
import collections
import json
import sys

THRESHOLD = 70.0
files = json.load(sys.stdin)["data"][0]["files"]
modules = collections.defaultdict(lambda: [0, 0])
for entry in files:
    name = entry["filename"]
    if "/Sources/" not in name:
        continue
    module = name.split("/Sources/", 1)[1].split("/", 1)[0]
    if module == "RoostTestSupport":  # the tests' own fixtures, not the product
        continue
    lines = entry["summary"]["lines"]
    modules[module][0] += lines["covered"]
    modules[module][1] += lines["count"]
if not modules:
    sys.exit("coverage-report: no Sources/ file in the export")
print(f"{'module':24} {'lines covered':>15} {'of':>8} {'coverage':>9}")
covered_total = count_total = 0
for module, (covered, count) in sorted(modules.items()):
    covered_total += covered
    count_total += count
    percent = 100.0 * covered / max(count, 1)
    mark = "  (below 70%: see docs/development.md)" if percent < THRESHOLD else ""
    print(f"{module:24} {covered:15} {count:8} {percent:8.1f}%{mark}")
print(f"{'all':24} {covered_total:15} {count_total:8} {100.0 * covered_total / max(count_total, 1):8.1f}%")
