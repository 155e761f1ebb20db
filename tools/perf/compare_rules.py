#!/usr/bin/env python3
# Replays report compare's band rule and two alternatives over the documents
# tools/perf/compare_acceptance.sh left in DIR (docs/PERFORMANCE.md): false regressions among
# identical pairs, missed 3x and 25 % slowdowns.   tools/perf/compare_rules.py DIR
import json, sys, glob, statistics as st, os
d = sys.argv[1]
def recs(path):
    out = {}
    for r in json.load(open(path))['results']:
        if r.get('status') != 'ok': continue
        key = json.dumps([r['op'], r.get('dtype'), r['shape'], r.get('transfers')], sort_keys=True)
        t = r['time_s']
        out[key] = (t['median'], t.get('round_medians') or [t['median']], t.get('samples') or [])
    return out
def verdict(bases, new, rule, tol=0.05):
    B = [recs(b) for b in bases]; N = recs(new)
    n_reg = 0; n_imp = 0
    for k, (mn, rn, sn) in N.items():
        if not all(k in b for b in B): continue
        meds = [b[k][0] for b in B]
        mb = st.median(meds)
        change = mb / mn - 1  # throughput change (time ratio inverted)
        if rule == 'current':
            lo = min(min(b[k][1]) for b in B); hi = max(max(b[k][1]) for b in B)
            band = (1/lo - 1/hi) * mb  # relative in throughput
            spread = (1/min(rn) - 1/max(rn)) * mn
        elif rule == 'medians':
            if len(B) > 1:
                band = (1/min(meds) - 1/max(meds)) * mb
            else:
                band = (1/min(B[0][k][1]) - 1/max(B[0][k][1])) * mb
            spread = (1/min(rn) - 1/max(rn)) * mn
        elif rule == 'medians_half':
            if len(B) > 1:
                band = (1/min(meds) - 1/max(meds)) * mb
            else:
                band = 0
            spread = 0
        thr = max(tol, band + spread)
        if abs(change) > thr:
            if change < 0: n_reg += 1
            else: n_imp += 1
    return n_reg, n_imp
for rule in ['current', 'medians', 'medians_half']:
    res = {'same-pair-fp': 0, 'pairs': 0, '3x-miss': 0, '3x': 0, '25-miss': 0, '25': 0}
    for phase in ['quiet', 'loaded']:
        for i in range(1, 21):
            a = f'{d}/{phase}-{i}-a.json'; b = f'{d}/{phase}-{i}-b.json'
            if not os.path.exists(b): continue
            for x, y in ((a, b), (b, a)):
                res['pairs'] += 1
                if verdict([x], y, rule)[0] > 0: res['same-pair-fp'] += 1
            s3 = f'{d}/{phase}-{i}-slow3.json'
            if os.path.exists(s3):
                res['3x'] += 1
                if verdict([a], s3, rule)[0] == 0: res['3x-miss'] += 1
            s25 = f'{d}/{phase}-{i}-slow25.json'
            if os.path.exists(s25):
                res['25'] += 1
                if verdict([f'{d}/{phase}-{i-1}-b.json', a, b], s25, rule)[0] == 0: res['25-miss'] += 1
    print(rule, res)
