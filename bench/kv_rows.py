#!/usr/bin/env python3
"""Turns a bench script's `RESULT name key=value ...` lines into the JSON rows bench/run.py reads
(`{"op": name, key: value, ...}`, numbers as numbers); JSON lines and other output pass through."""
import json
import sys


def value(v):
    for cast in (int, float):
        try:
            return cast(v)
        except ValueError:
            pass
    return v


for line in sys.stdin:
    line = line.rstrip("\n")
    if line.startswith("RESULT ") and not line[7:].lstrip().startswith("{"):
        name, *pairs = line[7:].split()
        row = {"op": name}
        for p in pairs:
            if "=" in p:
                k, v = p.split("=", 1)
                row[k] = value(v)
        print(json.dumps(row))
    elif line.startswith("RESULT "):
        print(line[7:].lstrip())
    else:
        print(line)
    sys.stdout.flush()
