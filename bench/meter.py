#!/usr/bin/env python3
"""meter.py DB [PREFIX] — how busy other processes kept the machine during
each stored comparison's runs, as perfbot compare measured it (the
comparisons' stored inputs): one line with the median, min and max, or
nothing when DB is missing or holds no comparison. It opens DB read-only.
"""
import json, sqlite3, sys

try:
    rows = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True).execute("select inputs from comparisons").fetchall()
except sqlite3.Error:
    sys.exit()
other = sorted(json.loads(r[0]).get("load", {}).get("other_cpus", 0) for r in rows)
if other:
    print("%sother processes' CPU during the runs (perfbot compare's meter): median %.2f CPUs, min %.2f, max %.2f, over %d comparisons"
          % (sys.argv[2] if len(sys.argv) > 2 else "", other[len(other)//2], other[0], other[-1], len(other)))
