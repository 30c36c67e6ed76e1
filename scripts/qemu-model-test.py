#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The rig's power model (QEMU patches 0002, 0010, 0011, 0013, 0015) as a
QEMU user drives it, without a guest: TAP on stdout.

  scripts/qemu-model-test.py [qemu-system-x86_64]   (default: make qemu's)

Each case starts the binary with rapl=on under TCG, firmware only (no
kernel: SeaBIOS finds nothing to boot and waits), and talks QMP to it:

  1. a vCPU hot-plugged into the last slot of -smp 2,maxcpus=4 first (a
     later slot before an earlier one): the model's 1 ms tick keeps
     running, QEMU stays up and exits 0 on "quit";
  2. thread=single: refused at start, the reason named (one thread for
     every vCPU: the model charges a vCPU its thread's CPU time);
  3. a migration: refused, the model named (its state is in no vmstate);
  4. the AMD RAPL CPUID bit (0x80000007 EDX[14]) is the named feature
     amd-rapl (patch 0019): query-cpu-model-expansion lists it, off where
     nothing answers the MSRs (here: TCG, no vmrapl), and -cpu
     ...,amd-rapl=on,enforce is refused for it;
  5. the accelerator's properties as management software probes them
     (qom-list-properties kvm-accel): rapl-backend, vmrapl and the
     vmrapl-* ones in this QEMU; and, when the QEMU built without
     libvmrapl exists (QEMU_VMRAPL_LIB=no scripts/qemu.sh, which .ci/run
     builds), rapl-backend there and no vmrapl property (patch 0020);
  6. and there, rapl-backend=vmrapl and QEMU_VMRAPL stop QEMU, saying it
     was built without vmrapl (patch 0024; where /dev/kvm is usable).
"""
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
n = 0
failed = 0


def ok(cond, what, diag=""):
    global n, failed
    n += 1
    if not cond:
        failed += 1
        for line in diag.splitlines()[-15:]:
            print("# " + line)
    print(("ok %d " if cond else "not ok %d ") % n + what, flush=True)


def skip(why):
    global n
    n += 1
    print("ok %d # SKIP %s" % (n, why), flush=True)


def qemu_path(nolib=False):
    if len(sys.argv) > 1 and not nolib:
        return sys.argv[1]
    env = dict(os.environ, QEMU_VMRAPL_LIB="no" if nolib else "yes")
    r = subprocess.run([os.path.join(TOP, "scripts/qemu.sh"), "path"],
                       capture_output=True, text=True, env=env)
    return r.stdout.strip() if r.returncode == 0 else None


VMRAPL_PROPS = {"vmrapl", "vmrapl-period-ms", "vmrapl-regset",
                "vmrapl-domains"}


def accel_props(q):
    r = q.cmd("qom-list-properties", typename="kvm-accel")
    return {p["name"] for p in r.get("return", [])}, json.dumps(r)[:2000]


class Qmp:
    def __init__(self, path, timeout=20):
        end = time.time() + timeout
        while True:
            try:
                self.s = socket.socket(socket.AF_UNIX)
                self.s.connect(path)
                break
            except OSError:
                self.s.close()
                if time.time() > end:
                    raise
                time.sleep(0.1)
        self.s.settimeout(timeout)
        self.f = self.s.makefile("r")
        json.loads(self.f.readline())           # the greeting
        self.cmd("qmp_capabilities")

    def cmd(self, name, **args):
        msg = {"execute": name}
        if args:
            msg["arguments"] = args
        self.s.sendall((json.dumps(msg) + "\n").encode())
        while True:
            r = json.loads(self.f.readline())
            if "return" in r or "error" in r:
                return r


def start(qemu, tmp, accel, smp, extra=(), cpu="max,family=25,model=1,rapl=on"):
    sock = os.path.join(tmp, "qmp")
    if os.path.exists(sock):
        os.unlink(sock)
    fw = subprocess.run([os.path.join(TOP, "scripts/qemu.sh"), "firmware"],
                        capture_output=True, text=True).stdout.split()
    args = [qemu, *fw, "-machine", "q35", "-accel", accel,
            "-cpu", cpu, "-smp", smp,
            "-m", "128", "-nodefaults", "-display", "none",
            "-qmp", "unix:%s,server=on,wait=off" % sock, *extra]
    log = open(os.path.join(tmp, "log"), "w+")
    p = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log,
                         stderr=subprocess.STDOUT)
    return p, sock, log


def exit_code(p):
    """What a QEMU expected to stop by itself exited with (None: it ran on)."""
    try:
        return p.wait(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        return None


def text(log):
    log.seek(0)
    return log.read()


def main():
    qemu = qemu_path()
    print("TAP version 13", flush=True)
    if not qemu or not os.access(qemu, os.X_OK):
        print("1..0 # SKIP no QEMU of make qemu")
        return 0
    with tempfile.TemporaryDirectory(prefix="vmrapl-model.") as tmp:
        # 1. The last slot first.
        p, sock, log = start(qemu, tmp, "tcg,thread=multi",
                             "2,maxcpus=4,sockets=1,cores=4")
        try:
            q = Qmp(sock)
            cpus = q.cmd("query-hotpluggable-cpus")["return"]
            free = [c for c in cpus if "qom-path" not in c]
            last = max(free, key=lambda c: c["props"].get("core-id", 0))
            r = q.cmd("device_add", driver=last["type"], id="late",
                      **last["props"])
            ok("error" not in r, "device_add into the last slot (core-id "
               "%d) first" % last["props"].get("core-id", -1), json.dumps(r))
            time.sleep(1.5)                     # some 1500 model ticks
            r = q.cmd("query-status")
            ok(r.get("return", {}).get("status") == "running",
               "the model's ticks run with a slot before it empty",
               json.dumps(r) + "\n" + text(log))
            q.cmd("quit")
        except (OSError, ValueError) as e:
            ok(False, "QMP with a hot-plugged vCPU", repr(e) + "\n" +
               text(log))
        try:
            rc = p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
            rc = p.wait()
        ok(rc == 0, "and QEMU exits 0 on quit (rc %d)" % rc, text(log))

        # 2. One thread for every vCPU.
        p, sock, log = start(qemu, tmp, "tcg,thread=single", "2")
        rc = exit_code(p)
        ok(rc not in (None, 0) and
           "rapl=on needs multi-threaded TCG" in text(log),
           "thread=single: refused, the reason named (rc %s)" % rc,
           text(log))

        # 3. No migration of the model's state.
        p, sock, log = start(qemu, tmp, "tcg,thread=multi", "2")
        try:
            q = Qmp(sock)
            r = q.cmd("migrate", uri="exec:cat > /dev/null")
            desc = r.get("error", {}).get("desc", "")
            ok("the power model's state is not migrated" in desc,
               "migration: refused, the model named", json.dumps(r))
            # 4. amd-rapl, a named feature that QEMU's tooling sees.
            r = q.cmd("query-cpu-model-expansion", type="full",
                      model={"name": "EPYC"})
            props = r.get("return", {}).get("model", {}).get("props", {})
            ok(props.get("amd-rapl") is False,
               "query-cpu-model-expansion lists amd-rapl, off without "
               "vmrapl (%r)" % props.get("amd-rapl"), json.dumps(r)[:2000])
            # 5. The accelerator's properties, built with libvmrapl.
            names, diag = accel_props(q)
            ok(VMRAPL_PROPS | {"rapl-backend"} <= names,
               "with libvmrapl: kvm-accel has rapl-backend and %s" %
               " ".join(sorted(VMRAPL_PROPS)), diag)
            q.cmd("quit")
        except (OSError, ValueError) as e:
            ok(False, "QMP for a migration", repr(e) + "\n" + text(log))
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()

        # 4. enforce sees it: nothing here answers the MSRs.
        p, sock, log = start(qemu, tmp, "tcg,thread=multi", "1",
                             cpu="EPYC,amd-rapl=on,enforce")
        rc = exit_code(p)
        # QEMU 10.0 names it CPUID.80000007H:EDX.amd-rapl, 10.1 and
        # later CPUID[eax=80000007h].EDX.amd-rapl.
        ok(rc not in (None, 0) and
           re.search(r"requested feature: CPUID(\.80000007H:|"
                     r"\[eax=80000007h\]\.)EDX\.amd-rapl \[bit 14\]",
                     text(log)),
           "-cpu EPYC,amd-rapl=on,enforce without vmrapl: refused, the "
           "feature named (rc %s)" % rc, text(log))

        # 5. Built without libvmrapl: nothing to probe but rapl-backend.
        nolib = qemu_path(nolib=True)
        if not nolib or not os.access(nolib, os.X_OK):
            skip("no QEMU built without libvmrapl "
                 "(QEMU_VMRAPL_LIB=no scripts/qemu.sh)")
        else:
            p, sock, log = start(nolib, tmp, "tcg,thread=multi", "1")
            try:
                q = Qmp(sock)
                names, diag = accel_props(q)
                ok("rapl-backend" in names and not names & VMRAPL_PROPS,
                   "without libvmrapl: kvm-accel has rapl-backend and no "
                   "vmrapl property (%s)" %
                   (" ".join(sorted(names & VMRAPL_PROPS)) or "none"), diag)
                q.cmd("quit")
            except (OSError, ValueError) as e:
                ok(False, "QMP to the QEMU without libvmrapl",
                   repr(e) + "\n" + text(log))
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
            # 6. Asking that QEMU for vmrapl stops it, saying why: at the
            # accelerator's init, so only where KVM is usable.
            if not os.access("/dev/kvm", os.R_OK | os.W_OK):
                skip("no usable /dev/kvm: vmrapl is asked for at KVM's init")
            else:
                for what, env, accel in (
                        ("rapl-backend=vmrapl", {},
                         "kvm,rapl=on,rapl-backend=vmrapl"),
                        ("QEMU_VMRAPL=vmrapl=on",
                         {"QEMU_VMRAPL": "vmrapl=on"}, "kvm")):
                    want = ("%s: this QEMU was built without vmrapl "
                            "support" % what)
                    try:
                        r = subprocess.run(
                            [nolib, "-machine", "none", "-accel", accel,
                             "-display", "none", "-nodefaults"],
                            capture_output=True, text=True, timeout=30,
                            env=dict(os.environ, **env))
                        rc, err = r.returncode, r.stderr
                    except subprocess.TimeoutExpired:
                        rc, err = None, "still running after 30 s"
                    ok(rc not in (None, 0) and want in err,
                       "without libvmrapl, %s: refused, the build named "
                       "(rc %s)" % (what, rc), err)
    print("1..%d" % n)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
