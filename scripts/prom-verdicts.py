#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The verdicts of scripts/prom-scrape.sh, each over Prometheus's HTTP API.

Usage: prom-verdicts.py URL AT CHECK [ARGS...]
AT is the Unix time instant queries are evaluated at (the end of the
scrape window, while every hypervisor still serves).  Exit 0 when the
check holds; what was seen goes to stdout as TAP comments.
"""
import json
import sys
import urllib.parse
import urllib.request

VMS = ("busy", "duty", "idle")
PER_VM = 'instance_vm:vmrapl_vm_energy_joules:rate1m{domain="pkg"}'
FLEET = 'vm_domain:vmrapl_vm_energy_joules:rate1m{domain="pkg"}'


def say(*a):
    print("#", *a)


class Prom:
    def __init__(self, url, at):
        self.url, self.at = url, at

    def get(self, path, **params):
        q = urllib.parse.urlencode(params)
        with urllib.request.urlopen(f"{self.url}{path}?{q}", timeout=30) as r:
            d = json.load(r)
        if d["status"] != "success":
            raise RuntimeError(d)
        return d["data"]

    def query(self, expr, at=None):
        return self.get("/api/v1/query", query=expr, time=at or self.at)["result"]

    def query_range(self, expr, start, end, step):
        return self.get("/api/v1/query_range", query=expr, start=start,
                        end=end, step=step)["result"]


def targets_up(p, window, restarting):
    # A scrape times out after the 5 s interval: a TCG hypervisor running
    # three VMs on a loaded machine misses one now and then (CI saw hv1's
    # last scrape fail once).  Each target must have answered one of its
    # last three scrapes, and the one that does not restart at least 90 %
    # of the window's scrapes.
    w = f"{int(window)}s"
    now = {r["metric"]["instance"]: r["value"][1]
           for r in p.query('up{job="vmrapl"}')}
    recent = {r["metric"]["instance"]: float(r["value"][1])
              for r in p.query('max_over_time(up{job="vmrapl"}[16s])')}
    frac = {r["metric"]["instance"]: float(r["value"][1])
            for r in p.query(f'avg_over_time(up{{job="vmrapl"}}[{w}])')}
    slow = {r["metric"]["instance"]: round(float(r["value"][1]), 3)
            for r in p.query('max_over_time('
                             f'scrape_duration_seconds{{job="vmrapl"}}[{w}])')}
    say("up now:", now, "in the last 16 s:", recent)
    say(f"share of scrapes answered over {w}:",
        {k: round(v, 3) for k, v in frac.items()}, "slowest (s):", slow)
    return (set(recent) == {"hv1", "hv2"} and
            all(v == 1 for v in recent.values()) and
            all(v >= 0.9 for k, v in frac.items() if k != restarting))


def per_host(p, hv):
    w = {r["metric"]["vm"]: float(r["value"][1])
         for r in p.query(f'sum by (vm) ({PER_VM[:-1]},instance="{hv}"}})')}
    say(f"{hv} W:", {k: round(v, 3) for k, v in w.items()})
    return set(w) == set(VMS) and w["busy"] > w["idle"]


def fleet_sum(p):
    # The recorded fleet series and the per-host ones come from the same
    # rule group evaluation: at its timestamp the sum must be exact.
    fleet = p.query(FLEET)
    if not fleet:
        say("no fleet series")
        return False
    t = max(float(r["value"][0]) for r in fleet)
    fleet = {r["metric"]["vm"]: float(r["value"][1]) for r in p.query(FLEET, t)}
    hosts = {}
    for r in p.query(PER_VM, t):
        hosts.setdefault(r["metric"]["vm"], {})[r["metric"]["instance"]] = \
            float(r["value"][1])
    ok = set(fleet) == set(VMS)
    for vm in VMS:
        per = hosts.get(vm, {})
        s = sum(per.values())
        say(f"{vm}: fleet {fleet.get(vm)} W, hosts {per} (sum {s})")
        ok &= set(per) == {"hv1", "hv2"} and \
            abs(fleet.get(vm, -1) - s) <= 1e-9 * max(1.0, abs(s))
    return ok


def restart(p, moved, kept, window_s):
    ch = {r["metric"]["instance"]: float(r["value"][1]) for r in
          p.query(f"changes(vmrapl_module_load_time_seconds[{window_s}s])")}
    say("changes(load time):", ch)
    return ch.get(moved, 0) >= 1 and ch.get(kept, -1) == 0


def no_gaps(p, start, end):
    step = 5
    want = (int(end) - int(start)) // step + 1
    ok = True
    res = {r["metric"]["vm"]: r["values"] for r in
           p.query_range(FLEET, start, end, step)}
    for vm in VMS:
        vals = [float(v) for _, v in res.get(vm, [])]
        say(f"{vm}: {len(vals)} of {want} steps, min {min(vals, default=None)} W, "
            f"max {max(vals, default=None)} W")
        ok &= len(vals) == want and min(vals) >= 0
    return ok


def legend(p, html_path):
    with open(html_path, encoding="utf-8", errors="replace") as f:
        dom = f.read()
    seen = [vm for vm in VMS
            if f'vm="{vm}"' in dom or f'vm=&quot;{vm}&quot;' in dom]
    say("vm labels in the rendered page:", seen)
    return seen == list(VMS)


def page_range(p, expr, start, end):
    # The classic graph page asks query_range for the whole range with
    # its own step; the same question, with a 14 s step.
    vms = {r["metric"]["vm"] for r in p.query_range(expr, start, end, 14)}
    say("query_range vms:", sorted(vms))
    return vms == set(VMS)


def main():
    url, at, check, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    try:
        ok = globals()[check](Prom(url, at), *args)
    except Exception as e:  # a query the API rejects, or no answer
        say(f"{check}: {e!r}")
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
