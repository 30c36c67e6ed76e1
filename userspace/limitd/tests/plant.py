#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A fake plant for vmrapl-limitd's host test: VMs whose power follows the
CPU time their cgroup's cpu.max lets them have.

Usage: plant.py ENERGY_FILE STOP_FILE VM_ID:CGROUP_DIR:WATTS_PER_CPU:CPUS...

Every 5 ms, for each VM: its share of CPU is what cpu.max allows ("max":
all its CPUs), never more than its CPUs; usage_usec grows by share x dt,
throttled_usec by the CPUs' time it was held back, and its energy by
WATTS_PER_CPU x share x dt.  ENERGY_FILE gets "ID ENERGY_UJ RUNTIME_NS"
lines for the fake device ($FAKE_VM_ENERGY), each cgroup a cpu.stat
(rewritten in place, as a reader of cgroupfs sees it).
A VM whose cgroup is gone keeps its energy and stops.  Exits when
STOP_FILE exists.

This plant shares the controller's own assumption (energy proportional
to the CPU time the quota gives, exactly, at once): limitd.sh judges the
daemon's plumbing with it (cgroups, units, records, restores), never the
controller's accuracy.  That is judged against plants unlike its model:
common/tests/test_limit.c, bench/sim's CFS bandwidth model, and the rig's
rapl_limit (real CFS bandwidth control, the emulated RAPL's power).
"""
import os
import sys
import time


def write_in_place(path, text):
    """As cgroupfs: the reader's open file sees the new text (the daemon
    keeps cpu.stat open and reads it at offset 0); fixed-width numbers,
    so the length never shrinks and one pwrite() replaces it all."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        os.pwrite(fd, text.encode(), 0)
    finally:
        os.close(fd)


def write(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def share(cg, cpus):
    try:
        with open(os.path.join(cg, "cpu.max")) as f:
            tok = f.read().split()
    except OSError:
        return None
    if not tok or tok[0] == "max":
        return float(cpus)
    period = float(tok[1]) if len(tok) > 1 else 100000.0
    return min(float(cpus), float(tok[0]) / period)


def main():
    energy_file, stop = sys.argv[1], sys.argv[2]
    vms = []
    for a in sys.argv[3:]:
        vid, cg, w, cpus = a.split(":")
        vms.append({"id": vid, "cg": cg, "w": float(w), "cpus": int(cpus),
                    "uj": 0.0, "usage": 0.0, "thr": 0.0, "periods": 0})
    last = time.monotonic()
    while not os.path.exists(stop):
        time.sleep(0.005)
        now = time.monotonic()
        dt, last = now - last, now
        for v in vms:
            s = share(v["cg"], v["cpus"])
            if s is None:
                continue
            v["usage"] += s * dt * 1e6
            v["thr"] += (v["cpus"] - s) * dt * 1e6
            v["uj"] += v["w"] * 1e6 * s * dt
            v["periods"] += 1
            try:
                write_in_place(os.path.join(v["cg"], "cpu.stat"),
                      "usage_usec %020d\nuser_usec %020d\nsystem_usec 0\n"
                      "nr_periods %020d\nnr_throttled %020d\n"
                      "throttled_usec %020d\n"
                      % (v["usage"], v["usage"], v["periods"],
                         v["periods"] if s < v["cpus"] else 0, v["thr"]))
            except OSError:
                pass
        write(energy_file, "".join("%s %d %d\n" % (v["id"], v["uj"],
                                                   v["usage"] * 1000)
                                   for v in vms))


main()
