#!/usr/bin/env python3
"""paired.py DB [PHASE] — how a paired test would have judged stored comparisons.

Each round of a comparison runs base once and head once (in a random order
since issue 15), so run i of base and run i of head are neighbours in
time. This reads every comparison in a
perfbot SQLite database, pairs the runs of each round, and for PHASE
(default msm_h, unit sec/op) prints the unpaired verdict perfbot stored
beside a Wilcoxon signed-rank test on the per-round log ratios head/base
(normal approximation with tie correction, two-sided) and the median
ratio's change: a way to measure, on real data, whether pairing would
cancel noise that hits neighbouring runs alike. "spread" is the standard
deviation of the per-round log ratios over what two independent sides
would give (the square root of the sum of the sides' variances of log
runs): 1 when neighbours are no more alike than any two runs, below 1 when
the machine's speed drifts slower than a round, and then a paired test's
MDE is about that fraction of the unpaired one. The last three lines give
its range over the comparisons, the phase's run-to-run CV and level within
each comparison, and the lag-1 autocorrelation of its runs in the order
they ran. It reads; it changes nothing.
"""
import json, math, sqlite3, statistics, sys

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
    spreads, lag1s, cvs, levels = [], [], [], []
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
        # Every run in the order it ran (run ids grow with time), for the
        # lag-1 autocorrelation: how much a run resembles the one before.
        seq = [v for _, v in sorted(zip(inp["base_runs"] + inp["head_runs"], b + h)) if v]
        if len(seq) > 3:
            m = statistics.fmean(seq)
            cvs.append(100 * statistics.pstdev(seq) / m)
            levels.append(statistics.median(seq))
            den = sum((x - m) ** 2 for x in seq)
            if den > 0:
                lag1s.append(sum((seq[i] - m) * (seq[i + 1] - m) for i in range(len(seq) - 1)) / den)
        d = [math.log(y / x) for x, y in zip(b, h) if x and y]
        p = wilcoxon(d)
        med = sorted(d)[len(d) // 2] if d else 0
        kind = "aa" if base == head else "planted"
        stored = row[0] if row else {}
        lb, lh = [math.log(x) for x in b if x], [math.log(y) for y in h if y]
        spread = "-"
        if len(d) > 2 and len(lb) > 2 and len(lh) > 2:
            indep = math.sqrt(statistics.variance(lb) + statistics.variance(lh))
            if indep > 0:
                spreads.append(statistics.stdev(d) / indep)
                spread = f"{spreads[-1]:.2f}"
        print(f"{cid:3d} {kind:7s} pairs={len(d):2d} unpaired: {stored.get('verdict','-'):12s} d={stored.get('delta_pct', 0):+6.2f}% p={stored.get('p_value', 1):.3g}"
              f" | paired: median ratio {100 * (math.exp(med) - 1):+6.2f}% p={p:.3g} spread {spread}")
    if spreads:
        spreads.sort()
        print(f"spread of the per-round ratios over independent sides' ({phase}): median {statistics.median(spreads):.2f}, "
              f"{spreads[0]:.2f}-{spreads[-1]:.2f} over {len(spreads)} comparisons")
    if cvs:
        cvs.sort()
        print(f"{phase}'s runs within a comparison: CV median {statistics.median(cvs):.1f}% ({cvs[0]:.1f}-{cvs[-1]:.1f}%), "
              f"median {min(levels):.4g}-{max(levels):.4g} from one comparison to the next")
    if lag1s:
        lag1s.sort()
        print(f"lag-1 autocorrelation of {phase}'s runs in the order they ran: median {statistics.median(lag1s):.2f}, "
              f"{lag1s[0]:.2f}-{lag1s[-1]:.2f} over {len(lag1s)} comparisons")

main()
