#!/usr/bin/env python3
"""paired.py DB [PHASE] — how a paired test would have judged stored comparisons.

perfbot runs base and head alternately (A B A B ...), so run i of base and
run i of head are neighbours in time. This reads every comparison in a
perfbot SQLite database, pairs the runs of each round, and for PHASE
(default msm_h, unit sec/op) prints the unpaired verdict perfbot stored
beside a Wilcoxon signed-rank test on the per-round log ratios head/base
(normal approximation with tie correction, two-sided) and the median
ratio's change: a way to measure, on real data, whether pairing would
cancel noise that hits neighbouring runs alike. It reads; it changes
nothing.
"""
import json, math, sqlite3, sys

def wilcoxon(d):
    d = [x for x in d if x != 0]
    n = len(d)
    if n == 0:
        return 1.0
    order = sorted(range(n), key=lambda i: abs(d[i]))
    ranks = [0.0] * n
    i = 0
    ties = 0.0
    while i < n:
        j = i
        while j + 1 < n and abs(d[order[j + 1]]) == abs(d[order[i]]):
            j += 1
        r = (i + j) / 2 + 1
        for k in range(i, j + 1):
            ranks[order[k]] = r
        t = j - i + 1
        ties += t ** 3 - t
        i = j + 1
    w = sum(r for r, x in zip(ranks, d) if x > 0)
    mean = n * (n + 1) / 4
    var = n * (n + 1) * (2 * n + 1) / 24 - ties / 48
    if var <= 0:
        return 1.0
    z = (abs(w - mean) - 0.5) / math.sqrt(var)
    return math.erfc(z / math.sqrt(2))

def main():
    db = sqlite3.connect(sys.argv[1])
    phase = sys.argv[2] if len(sys.argv) > 2 else "msm_h"
    rows = db.execute("SELECT c.id, c.base_sha, c.head_sha, c.inputs, c.report FROM comparisons c ORDER BY c.id").fetchall()
    for cid, base, head, inputs, report in rows:
        inp = json.loads(inputs)
        rep = json.loads(report)
        row = [p for p in rep["phases"] if p["phase"] == phase and p["unit"] == "sec/op"]
        def values(ids):
            out = []
            for rid in ids:
                v = db.execute("SELECT value FROM samples WHERE run_id = ? AND phase = ? AND unit = 'sec/op'", (rid, phase)).fetchall()
                out.append(v[0][0] if v else None)
            return out
        b, h = values(inp["base_runs"]), values(inp["head_runs"])
        d = [math.log(y / x) for x, y in zip(b, h) if x and y]
        p = wilcoxon(d)
        med = sorted(d)[len(d) // 2] if d else 0
        kind = "aa" if base == head else "planted"
        stored = row[0] if row else {}
        print(f"{cid:3d} {kind:7s} pairs={len(d):2d} unpaired: {stored.get('verdict','-'):12s} d={stored.get('delta_pct', 0):+6.2f}% p={stored.get('p_value', 1):.3g}"
              f" | paired: median ratio {100 * (math.exp(med) - 1):+6.2f}% p={p:.3g}")

main()
