#!/usr/bin/env python3
"""The judgements of build_change.sh over the JSON files it left in DIR.

  build_change.py medium DIR   old-1, old-2, new-1, new-2: the same records and statuses, and
                               whether each record's new mean lies within the pairs' spread + 2 %
  build_change.py group DIR    scale-old/new and flags-old/new: the same records and statuses
"""
import json
import sys


def load(d, name):
    try:
        return json.load(open(f"{d}/{name}.json"))["results"]
    except Exception as e:  # noqa: BLE001 - report and go on
        print(name, e)
        return []


def medium(d):
    def recs(n):
        return {json.dumps([r["op"], r.get("dtype"), r["shape"], r.get("transfers"), r.get("impl")],
                           sort_keys=True): r for r in load(d, n)}
    o1, o2, n1, n2 = (recs(x) for x in ("old-1", "old-2", "new-1", "new-2"))
    print("record sets equal:", set(o1) == set(o2) == set(n1) == set(n2), len(o1), len(n1))
    print("statuses equal:", all(o1[k]["status"] == n1[k]["status"] == n2[k]["status"]
                                 for k in o1 if k in n1 and k in n2))
    within, rows = 0, []
    for k in o1:
        if o1[k]["status"] != "ok" or not all(k in x and x[k]["status"] == "ok"
                                              for x in (o2, n1, n2)):
            continue
        a, b, c, e = (x[k]["time_s"]["median"] for x in (o1, o2, n1, n2))
        om, nm = (a + b) / 2, (c + e) / 2
        spread = max(abs(b / a - 1), abs(e / c - 1))
        ok = abs(nm / om - 1) <= spread + 0.02
        within += ok
        rows.append((nm / om, spread, ok, k))
    print(f"new mean within the pairs' spread + 2 %: {within} of {len(rows)}")
    if rows:
        rs = sorted(r[0] for r in rows)
        print(f"new/old median time: median {rs[len(rs) // 2]:.3f}, range {rs[0]:.3f}-{rs[-1]:.3f}")
    for r in rows:
        if not r[2]:
            print(f"  outside: new/old {r[0]:.3f}, pair spread {r[1]:.3f}: {r[3]}")


def group(d):
    def recs(n):
        return {json.dumps([r["op"], r.get("dtype"), r["shape"], r.get("status")], sort_keys=True)
                for r in load(d, n)}
    for plan in ("scale", "flags"):
        o, n = recs(f"{plan}-old"), recs(f"{plan}-new")
        same = bool(o) and o == n  # no records at all is no evidence
        print(f"{plan}: old {len(o)} records, new {len(n)}, the same records and statuses: {same}")
        for x in sorted(o - n)[:3]:
            print("  old only:", x)
        for x in sorted(n - o)[:3]:
            print("  new only:", x)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("medium", "group"):
        sys.exit(__doc__)
    (medium if sys.argv[1] == "medium" else group)(sys.argv[2])
