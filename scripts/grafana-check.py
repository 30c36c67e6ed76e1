#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Run every query of a Grafana dashboard against a live Prometheus.

Each panel target's expr, and each template variable's label_values()
query, goes to the Prometheus HTTP API (the one prom-scrape.sh runs, with
the rules loaded and the rigs scraped for a few minutes) with the
dashboard's variables at their "All" value ($instance, $vm: .*) and
$__rate_interval at 1m.  Every query must succeed and return data.  TAP.

Usage: grafana-check.py PROMETHEUS_URL DASHBOARD.json [FIRST_TEST_NUMBER]
"""
import json
import re
import sys
import urllib.parse
import urllib.request


def api(url, path, params):
    q = urllib.parse.urlencode(params, doseq=True)
    with urllib.request.urlopen(f"{url}{path}?{q}", timeout=30) as r:
        return json.load(r)


def subst(expr):
    expr = expr.replace("$__rate_interval", "1m")
    return re.sub(r"\$\{?(instance|vm)\}?", ".*", expr)


def main():
    url, path = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) - 1 if len(sys.argv) > 3 else 0
    with open(path) as f:
        dash = json.load(f)
    failed = 0
    checks = []
    for p in dash["panels"]:
        for t in p.get("targets", []):
            checks.append((f'panel "{p["title"]}" {t["refId"]}', "expr", t["expr"]))
    for v in dash["templating"]["list"]:
        if v["type"] == "query":
            checks.append((f'variable ${v["name"]}', "label_values",
                           v["definition"]))
    for name, kind, q in checks:
        n += 1
        try:
            if kind == "expr":
                r = api(url, "/api/v1/query", {"query": subst(q)})
                ok = r["status"] == "success" and len(r["data"]["result"]) > 0
                got = len(r["data"]["result"]) if r["status"] == "success" else r
            else:
                m = re.fullmatch(r"label_values\((.*),\s*(\w+)\)", q)
                r = api(url, "/api/v1/series", {"match[]": subst(m.group(1))})
                vals = {s.get(m.group(2)) for s in r["data"]} - {None}
                ok = r["status"] == "success" and len(vals) > 0
                got = sorted(vals)
        except Exception as e:  # an HTTP 400 is a query Prometheus rejects
            ok, got = False, e
        if ok:
            print(f"ok {n} grafana: {name} returns data ({got if kind != 'expr' else str(got) + ' series'})")
        else:
            failed += 1
            print(f"not ok {n} grafana: {name}: {got}\n# query: {q}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
