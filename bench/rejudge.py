#!/usr/bin/env python3
"""rejudge.py DB [ROUNDS] — re-judge stored comparisons as if they had
stopped after ROUNDS rounds (default 30), from the runs in perfbot's SQLite
store (bench/compare-fpr.sh leaves one in its OUTDIR).

Every comparison on the 2-core machine runs to its cap (some phase is always
inconclusive against a 1% floor), so a comparison run with --max-count 60
holds, in its first 30 rounds, exactly what a --max-count 30 comparison
would have judged. This script judges those rounds the way analysis does for
sec/op: Mann-Whitney U (normal approximation with tie correction), Holm over
the phases of the comparison, a change counted only beyond the 1% floor.
On the comparisons of BENCHMARKS.md it reproduces perfbot's own p-values to
two significant digits at both 30 and 60 rounds.

A comparison of a revision with itself is A/A (flagged: any phase judged
changed); any other is a planted msm_h slowdown (found: msm_h a regression).
Standard library only.
"""
import json
import math
import sqlite3
import sys

PHASES = ["synthesis", "ntt", "msm_a", "msm_b1", "msm_b2", "msm_l", "msm_h", "assemble", "total"]
ALPHA, FLOOR = 0.05, 1.0


def mwu_p(x, y):
    n1, n2 = len(x), len(y)
    allv = sorted([(v, 0) for v in x] + [(v, 1) for v in y])
    ranks, ties, i = [0.0] * len(allv), 0.0, 0
    while i < len(allv):
        j = i
        while j + 1 < len(allv) and allv[j + 1][0] == allv[i][0]:
            j += 1
        for k in range(i, j + 1):
            ranks[k] = (i + j) / 2 + 1
        t = j - i + 1
        ties += t ** 3 - t
        i = j + 1
    u1 = sum(r for r, (_, g) in zip(ranks, allv) if g == 0) - n1 * (n1 + 1) / 2
    n = n1 + n2
    sd = math.sqrt(n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1))))
    if sd == 0:
        return 1.0
    z = (abs(u1 - n1 * n2 / 2) - 0.5) / sd
    return math.erfc(max(z, 0) / math.sqrt(2))


def median(v):
    v = sorted(v)
    return (v[len(v) // 2] + v[(len(v) - 1) // 2]) / 2


def main():
    db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    aa = flagged = planted = found = 0
    rows = db.execute("select id, base_sha, head_sha, inputs from comparisons order by id").fetchall()
    for cid, base, head, inputs in rows:
        inp = json.loads(inputs)
        b, h = inp["base_runs"][:rounds], inp["head_runs"][:rounds]
        if min(len(b), len(h)) < rounds:
            print("comparison %d: only %d rounds stored; skipped" % (cid, min(len(b), len(h))))
            continue
        p, d = {}, {}
        for ph in PHASES:
            q = "select value from samples where run_id in (%s) and phase = ? and unit = 'sec/op'"
            xb = [r[0] for r in db.execute(q % ",".join(map(str, b)), (ph,))]
            xh = [r[0] for r in db.execute(q % ",".join(map(str, h)), (ph,))]
            p[ph], d[ph] = mwu_p(xb, xh), (median(xh) / median(xb) - 1) * 100
        adj, run = {}, 0.0
        for i, ph in enumerate(sorted(PHASES, key=lambda x: p[x])):
            run = max(run, min(1.0, p[ph] * (len(PHASES) - i)))
            adj[ph] = run
        changed = [ph for ph in PHASES if adj[ph] < ALPHA and abs(d[ph]) > FLOOR]
        if base == head:
            aa += 1
            flagged += bool(changed)
            what = "A/A " + ("FLAGGED " + ",".join(changed) if changed else "quiet")
        else:
            planted += 1
            hit = "msm_h" in changed and d["msm_h"] > 0
            found += hit
            what = "planted %s" % ("found" if hit else "missed")
        print("comparison %d at %d rounds: %s (msm_h %+.2f%%, Holm p %.2g)" % (cid, rounds, what, d["msm_h"], adj["msm_h"]))
    if aa:
        print("A/A flagged: %d of %d" % (flagged, aa))
    if planted:
        print("planted found: %d of %d" % (found, planted))


if __name__ == "__main__":
    main()
