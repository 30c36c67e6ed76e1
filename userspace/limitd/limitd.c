// SPDX-License-Identifier: MIT
/*
 * vmrapl-limitd: holds every VM that has an operator's power limit
 * (VMRAPL_SET_VM_LIMIT, "vmraplctl limit VM 40W --window 1s") to it, by
 * writing the cpu.max of the VM's cgroup.
 *
 * Each tick (--tick-ms, 100 ms, also the cpu.max period it writes) it
 * opens the device (never keeping the module from unloading), one
 * LIST_VMS gives every VM's energy as vmrapl attributes it; each held
 * VM's cgroup gives its CPU time and throttled time (cpu.stat); the
 * controller (common/limit.c) turns the deltas into the next tick's
 * quota, and common/cgquota.c writes it, the lower share of it and of
 * the value the operator or libvirt had there.  Every --scan-ms (1 s) it
 * asks the module for each VM's limit (GET_VM_LIMIT): a new limit starts
 * holding the VM, a changed one is taken at once, a removed one (or a VM
 * that is gone) puts the original cpu.max back.
 *
 * The ticks are whole periods on CLOCK_MONOTONIC, so the writes stay at
 * the start of the periods the first one started (limit.h says why that
 * matters).
 *
 * Which cgroup: the VMM's (/proc/PID/cgroup), up to the systemd machine
 * scope it is in (libvirt's machine-qemu*.scope: vCPUs, emulator and
 * I/O threads together); without one, its own cgroup when that holds no
 * other process (systemd-run --scope, a cgroup the operator made).  A VMM
 * that shares its cgroup with other processes is not held (throttling it
 * would throttle them): the daemon says so and leaves it.
 *
 * Failure: fail open, with a trace.  Before its first write to a cgroup
 * the daemon records the original cpu.max (cgq_record(), under
 * --run-dir); it restores and forgets it when the limit goes, the VM
 * goes, and at SIGTERM or SIGINT.  A daemon that is killed leaves the
 * quota and the record; its unit's ExecStopPost= ("vmrapl-limitd
 * --restore") and the next start restore every record, and say so in
 * the log.  The limit itself stays in the module (GET_VM_LIMIT), so a
 * VM that runs above its limit while no daemon holds it is visible.
 *
 * Single-threaded; signals only set a flag.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/vmrapl.h>

#include "cgquota.h"
#include "libvmrapl-host.h"
#include "limit.h"

#define NS_PER_MS	((uint64_t)1000000)
#define NS_PER_US	((uint64_t)1000)

static const char *opt_device = "/dev/vmrapl";
static const char *opt_cgroot = "/sys/fs/cgroup";
static const char *opt_rundir = "/run/vmrapl/limit";
static const char *opt_proc = "/proc";
static bool opt_make_cgroup = true;
static uint64_t opt_tick_ns = 100 * NS_PER_MS;
static uint64_t opt_scan_ns = 1000 * NS_PER_MS;
static bool opt_verbose;

static volatile sig_atomic_t stop_sig;

enum vm_state {
	VM_REFUSED,	/* not held: @why says why */
	VM_PRIMING,	/* held; the first tick samples the VM unlimited */
	VM_HOLDING,	/* held; the controller runs */
};

/**
 * struct vm - a VM with an operator's limit
 * @id: vmrapl's id.
 * @pid: its VMM.
 * @name: its name (vmrapl_host_vm_name()).
 * @limit_uw: the module's limit, uW, as last read.
 * @window_us: its window, us, as last read.
 * @state: see enum vm_state.
 * @why: VM_REFUSED: the reason, logged when it changes.
 * @h: the cgroup (held states).
 * @l: the controller (held states).
 * @every: the controller ticks every @every daemon ticks (windows over
 *	VR_LIMIT_RING daemon ticks).
 * @phase: daemon ticks since the controller's last tick.
 * @energy_uj, @usage_us, @throttled_us, @t_ns: the VM at the controller's
 *	last tick (or at VM_PRIMING's start).
 * @err: the last error of a write to cpu.max, logged when it changes.
 * @seen: listed by the module at this tick.
 */
struct vm {
	uint64_t id;
	pid_t pid;
	char name[128];
	uint64_t limit_uw;
	uint64_t window_us;
	enum vm_state state;
	char why[PATH_MAX + 160];
	struct cgq h;
	struct vr_limit l;
	uint32_t every;
	uint32_t phase;
	uint64_t energy_uj;
	uint64_t usage_us;
	uint64_t throttled_us;
	uint64_t t_ns;
	int err;
	bool seen;
};

static struct vm **vms;
static size_t nr_vms;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	fputs("vmrapl-limitd: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* "40.000 W", "250 mW" */
static const char *fmt_w(uint64_t uw, char *buf, size_t len)
{
	if (uw >= 1000000)
		snprintf(buf, len, "%.3f W", uw / 1e6);
	else
		snprintf(buf, len, "%.3f mW", uw / 1e3);
	return buf;
}

/* "1 s", "1.5 s", "250 ms" */
static const char *fmt_t(uint64_t ns, char *buf, size_t len)
{
	if (ns >= 1000 * NS_PER_MS)
		snprintf(buf, len, "%g s", ns / 1e9);
	else
		snprintf(buf, len, "%g ms", ns / 1e6);
	return buf;
}

static void id_str(uint64_t id, char *buf, size_t len)
{
	snprintf(buf, len, "%" PRIu64, id);
}

/* Log a refusal when its reason is new. */
static void vm_refuse(struct vm *v, const char *why)
{
	if (v->state == VM_REFUSED && !strcmp(v->why, why))
		return;
	snprintf(v->why, sizeof(v->why), "%s", why);
	v->state = VM_REFUSED;
	say("VM %" PRIu64 " (%s): not held to its limit: %s", v->id,
	     v->name, why);
}

/*
 * The controller for @v's limit: the daemon's tick, or a multiple of it
 * for a window over VR_LIMIT_RING ticks; a window under two ticks is
 * held over two, one that is not whole ticks over the whole ticks in it.
 */
static int vm_controller(struct vm *v, uint32_t max_cpus)
{
	uint64_t window = v->window_us * NS_PER_US, tick, held;
	char a[32], b[32], c[32];
	uint32_t every = 1;

	while (window / (opt_tick_ns * every) > VR_LIMIT_RING)
		every++;
	tick = opt_tick_ns * every;
	held = window < 2 * tick ? 2 * tick : window / tick * tick;
	if (held != window)
		say("VM %" PRIu64 " (%s): window %s held as %s (whole ticks of %s)",
		     v->id, v->name, fmt_t(window, a, sizeof(a)),
		     fmt_t(held, b, sizeof(b)),
		     fmt_t(tick, c, sizeof(c)));
	v->every = every;
	v->phase = 0;
	return vr_limit_init(&v->l, v->limit_uw, held, tick, opt_tick_ns,
			     max_cpus);
}

static uint32_t vm_max_cpus(const struct vmrapl_vm_entry *e)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	uint32_t n = e->nr_vcpus + 1;	/* and the VMM's own threads */

	if (online > 0 && n > (uint32_t)online)
		n = (uint32_t)online;
	return n ? n : 1;
}

/* Sample @v's cgroup and energy: 0, or -errno. */
static int vm_sample(struct vm *v, const struct vmrapl_vm_entry *e,
		     uint64_t t, struct vr_limit_sample *s)
{
	uint64_t energy = e->energy_uj[VMRAPL_DOM_PKG];
	struct cgq_stat st;
	int err;

	err = cgq_stat(&v->h, &st);
	if (err)
		return err;
	if (s) {
		s->energy_uj = energy >= v->energy_uj ? energy - v->energy_uj : 0;
		s->cpu_ns = st.usage_usec >= v->usage_us ?
			    (st.usage_usec - v->usage_us) * NS_PER_US : 0;
		s->throttled_ns = st.throttled_usec >= v->throttled_us ?
				  (st.throttled_usec - v->throttled_us) *
				  NS_PER_US : 0;
		s->dt_ns = t - v->t_ns;
	}
	v->energy_uj = energy;
	v->usage_us = st.usage_usec;
	v->throttled_us = st.throttled_usec;
	v->t_ns = t;
	return 0;
}

/* Start holding @v: its cgroup, the record, the controller. */
static void vm_hold(struct vm *v, const struct vmrapl_vm_entry *e, uint64_t t)
{
	char rel[PATH_MAX], path[PATH_MAX + 64], why[PATH_MAX + 160];
	char from[PATH_MAX], made[PATH_MAX];
	char id[24], a[32], b[32], line[CGQ_LINE_MAX];
	int err;

	err = cgq_vm_cgroup(opt_proc, opt_cgroot, v->pid, rel, sizeof(rel),
			    why, sizeof(why));
	id_str(v->id, id, sizeof(id));
	made[0] = 0;
	if (err == -EBUSY && opt_make_cgroup) {
		/* A shared cgroup: one of its own, the VMM moved into it. */
		snprintf(from, sizeof(from), "%s%s", opt_cgroot,
			 strcmp(rel, "/") ? rel : "");
		err = cgq_make(opt_cgroot, id, v->pid, made, sizeof(made));
		if (err) {
			snprintf(why + strlen(why), sizeof(why) - strlen(why),
				 "; cannot make it a cgroup of its own (%s/vm-%s): %s",
				 CGQ_SLICE, id, strerror(-err));
		} else {
			say("VM %" PRIu64 " (%s): %s; moved it into %s, made for its limit",
			     v->id, v->name, why, made);
			snprintf(rel, sizeof(rel), "%s", made + strlen(opt_cgroot));
		}
	}
	if (err) {
		vm_refuse(v, why);
		return;
	}
	snprintf(path, sizeof(path), "%s%s", opt_cgroot, rel);
	err = cgq_open(&v->h, path);
	if (!err && made[0])
		err = cgq_set_moved(&v->h, v->pid, from);
	if (err) {
		if (made[0])
			cgq_unmake(made, v->pid, from);
		if (err == -ENODEV)
			snprintf(why, sizeof(why), "%s has no cpu.max: enable the cpu controller in its parent's cgroup.subtree_control",
				 path);
		else
			snprintf(why, sizeof(why), "cannot open cgroup %s: %s",
				 path, strerror(-err));
		vm_refuse(v, why);
		return;
	}
	err = cgq_record(opt_rundir, id, &v->h);
	if (err) {
		snprintf(why, sizeof(why), "cannot record %s's cpu.max in %s: %s",
			 path, opt_rundir, strerror(-err));
		if (v->h.moved_pid)
			cgq_unmake(v->h.path, v->h.moved_pid, v->h.moved_from);
		cgq_close(&v->h);
		vm_refuse(v, why);
		return;
	}
	err = vm_controller(v, vm_max_cpus(e));
	if (!err)
		err = vm_sample(v, e, t, NULL);
	if (err) {
		snprintf(why, sizeof(why), "cannot start its controller: %s",
			 strerror(-err));
		cgq_restore(&v->h);
		if (v->h.moved_pid)
			cgq_unmake(v->h.path, v->h.moved_pid, v->h.moved_from);
		cgq_forget(opt_rundir, id);
		cgq_close(&v->h);
		vm_refuse(v, why);
		return;
	}
	v->state = VM_PRIMING;
	v->why[0] = 0;
	v->err = 0;
	if (cgq_max_format(&v->h.orig, line, sizeof(line)) > 0)
		line[strcspn(line, "\n")] = 0;
	else
		snprintf(line, sizeof(line), "?");
	say("VM %" PRIu64 " (%s): holding %s over %s through cgroup %s (its cpu.max was \"%s\")",
	     v->id, v->name, fmt_w(v->limit_uw, a, sizeof(a)),
	     fmt_t(v->l.window_ns, b, sizeof(b)), rel, line);
}

/* Stop holding @v: the original cpu.max back, the record removed. */
static void vm_let_go(struct vm *v, const char *why)
{
	char id[24], line[CGQ_LINE_MAX] = "?";
	int err;

	if (v->state == VM_REFUSED)
		return;
	id_str(v->id, id, sizeof(id));
	err = cgq_restore(&v->h);
	if (cgq_max_format(&v->h.orig, line, sizeof(line)) > 0)
		line[strcspn(line, "\n")] = 0;
	/* A removed cgroup: its directory no longer opens cpu.max. */
	if (err == -ENODEV)
		err = -ENOENT;
	/* One made for its VMM: the VMM back where it was, the cgroup gone. */
	if ((!err || err == -ENOENT) && v->h.moved_pid) {
		int uerr = cgq_unmake(v->h.path, v->h.moved_pid,
				      v->h.moved_from);

		if (uerr && uerr != -ENOENT)
			say("VM %" PRIu64 " (%s): cannot undo the cgroup %s made for it: %s",
			     v->id, v->name, v->h.path, strerror(-uerr));
		else
			say("VM %" PRIu64 " (%s): its VMM back in %s, %s removed",
			     v->id, v->name, v->h.moved_from, v->h.path);
	}
	if (!err || err == -ENOENT) {
		cgq_forget(opt_rundir, id);
		if (err)
			say("VM %" PRIu64 " (%s): %s; nothing to restore (the cgroup is gone)",
			     v->id, v->name, why);
		else
			say("VM %" PRIu64 " (%s): %s; cpu.max back to \"%s\"",
			     v->id, v->name, why, line);
	} else {
		say("VM %" PRIu64 " (%s): %s; cpu.max of %s could not be restored (%s): the record stays in %s for vmrapl-limitd --restore",
		     v->id, v->name, why, v->h.path, strerror(-err),
		     opt_rundir);
	}
	cgq_close(&v->h);
	v->state = VM_REFUSED;
	v->why[0] = 0;
}

/* Write @quota_ns (VR_LIMIT_NO_QUOTA: released); false: @v is gone. */
static bool vm_apply(struct vm *v, uint64_t quota_ns)
{
	int err = cgq_apply(&v->h, quota_ns, opt_tick_ns);

	if (err >= 0) {
		v->err = 0;
		return true;
	}
	if (err == -ENOENT || err == -ENODEV) {
		vm_let_go(v, "its cgroup went away");
		return false;
	}
	if (err != v->err)
		say("VM %" PRIu64 " (%s): cannot write %s/cpu.max: %s",
		     v->id, v->name, v->h.path, strerror(-err));
	v->err = err;
	return true;
}

/* One daemon tick of a held VM. */
static void vm_tick(struct vm *v, const struct vmrapl_vm_entry *e, uint64_t t)
{
	struct vr_limit_sample s;
	uint64_t q;
	int err;

	/* Not in the tick that started it (or its new window). */
	if (v->state == VM_REFUSED || v->t_ns == t || ++v->phase < v->every)
		return;
	v->phase = 0;
	err = vm_sample(v, e, t, &s);
	if (err) {
		if (err == -ENOENT || err == -ENODEV)
			vm_let_go(v, "its cgroup went away");
		else if (err != v->err)
			say("VM %" PRIu64 " (%s): cannot read %s/cpu.stat: %s",
			     v->id, v->name, v->h.path, strerror(-err));
		v->err = err;
		return;
	}
	if (v->state == VM_PRIMING) {
		q = vr_limit_prime(&v->l, &s);
		v->state = VM_HOLDING;
	} else {
		q = vr_limit_tick(&v->l, &s);
	}
	if (opt_verbose)
		say("VM %" PRIu64 ": %" PRIu64 " uJ, %" PRIu64 " us CPU, %" PRIu64 " us throttled in %" PRIu64 " us: quota %s%" PRIu64,
		     v->id, s.energy_uj, s.cpu_ns / NS_PER_US,
		     s.throttled_ns / NS_PER_US, s.dt_ns / NS_PER_US,
		     q == VR_LIMIT_NO_QUOTA ? "max" : "",
		     q == VR_LIMIT_NO_QUOTA ? 0 : q / NS_PER_US);
	vm_apply(v, q);
}

/* The module's limit of @v changed: take it now. */
static void vm_change(struct vm *v, const struct vmrapl_vm_entry *e,
		      const struct vmrapl_limit *lim, uint64_t t)
{
	bool window = lim->window_us != v->window_us;
	char a[32], b[32];
	uint64_t q;

	v->limit_uw = lim->limit_uw;
	v->window_us = lim->window_us;
	if (v->state == VM_REFUSED) {
		vm_hold(v, e, t);
		return;
	}
	say("VM %" PRIu64 " (%s): limit now %s over %s", v->id, v->name,
	     fmt_w(v->limit_uw, a, sizeof(a)),
	     fmt_t(v->window_us * NS_PER_US, b, sizeof(b)));
	if (!window && !vr_limit_set(&v->l, v->limit_uw, &q)) {
		vm_apply(v, q);
		return;
	}
	/* Another window: a controller of its own, primed again. */
	if (vm_controller(v, vm_max_cpus(e)) || vm_sample(v, e, t, NULL)) {
		vm_let_go(v, "its controller could not start again");
		return;
	}
	v->state = VM_PRIMING;
}

static struct vm *vm_find(uint64_t id)
{
	size_t i;

	for (i = 0; i < nr_vms; i++)
		if (vms[i]->id == id)
			return vms[i];
	return NULL;
}

static struct vm *vm_add(const struct vmrapl_vm_entry *e,
			 const struct vmrapl_limit *lim)
{
	struct vm **n, *v;

	v = calloc(1, sizeof(*v));
	n = realloc(vms, (nr_vms + 1) * sizeof(*vms));
	if (!v || !n) {
		free(v);
		if (n)
			vms = n;
		say("VM %" PRIu64 ": out of memory; not held", (uint64_t)e->id);
		return NULL;
	}
	vms = n;
	v->id = e->id;
	v->pid = (pid_t)e->pid;
	v->limit_uw = lim->limit_uw;
	v->window_us = lim->window_us;
	v->state = VM_REFUSED;
	vmrapl_host_vm_name(v->pid, v->name, sizeof(v->name));
	vms[nr_vms++] = v;
	return v;
}

static void vm_remove(size_t i)
{
	free(vms[i]);
	vms[i] = vms[--nr_vms];
}

/*
 * The held cgroup is still there: its path names the directory the
 * daemon opened.  A removed cgroup's open files read on (a plain
 * directory's) or fail only at the next write (cgroupfs), and one made
 * again at the same path is another cgroup, libvirt's new one.
 */
static bool vm_cgroup_same(const struct vm *v)
{
	struct stat st;

	return !stat(v->h.path, &st) && (uint64_t)st.st_ino == v->h.ino;
}

/* What the module says of each VM's limit: hold, change or let go. */
static void scan(int fd, const struct vmrapl_vm_entry *ents, int n,
		 uint64_t t)
{
	struct vmrapl_limit lim;
	uint64_t uw, us;
	struct vm *v;
	int i, err;

	for (i = 0; i < n; i++) {
		v = vm_find(ents[i].id);
		/* A held cgroup removed (or made again) since: let it go. */
		if (v && v->state != VM_REFUSED && !vm_cgroup_same(v))
			vm_let_go(v, "its cgroup went away");
		err = vmrapl_host_vm_limit_get(fd, ents[i].id, &lim);
		if (err == -ENOENT) {
			continue;	/* gone since the list: next tick */
		} else if (err) {
			say("VM %" PRIu64 ": GET_VM_LIMIT: %s",
			    (uint64_t)ents[i].id,
			     strerror(-err));
			continue;
		}
		/* Held to the lower of the operator's and the guest's. */
		vmrapl_host_limit_held(&lim, &uw, &us);
		lim.limit_uw = uw;
		lim.window_us = us;
		if (!lim.limit_uw) {
			if (v) {
				vm_let_go(v, "limit removed");
				v->limit_uw = 0;
			}
			continue;
		}
		if (!v) {
			v = vm_add(&ents[i], &lim);
			if (v)
				vm_hold(v, &ents[i], t);
		} else if (lim.limit_uw != v->limit_uw ||
			   lim.window_us != v->window_us ||
			   v->state == VM_REFUSED) {
			vm_change(v, &ents[i], &lim, t);
		}
	}
	/* VMs without a limit are not kept. */
	for (i = (int)nr_vms - 1; i >= 0; i--)
		if (!vms[i]->limit_uw)
			vm_remove((size_t)i);
}

static void tick(int fd, uint64_t t, bool do_scan)
{
	struct vmrapl_vm_entry *ents = NULL;
	static int list_err;
	struct vm *v;
	size_t j;
	int n, i;

	n = vmrapl_host_list_vms(fd, &ents);
	if (n < 0) {
		if (n != list_err)
			say("LIST_VMS: %s", strerror(-n));
		list_err = n;
		return;
	}
	list_err = 0;
	if (do_scan)
		scan(fd, ents, n, t);
	for (j = 0; j < nr_vms; j++)
		vms[j]->seen = false;
	for (i = 0; i < n; i++) {
		v = vm_find(ents[i].id);
		if (!v)
			continue;
		v->seen = true;
		vm_tick(v, &ents[i], t);
	}
	for (j = nr_vms; j-- > 0;) {
		if (vms[j]->seen)
			continue;
		vm_let_go(vms[j], "the VM is gone");
		vm_remove(j);
	}
	free(ents);
}

static void let_go_all(const char *why)
{
	while (nr_vms) {
		vm_let_go(vms[nr_vms - 1], why);
		vm_remove(nr_vms - 1);
	}
}

static void report(void *arg, const char *vm_id, const char *cgroup, int err)
{
	unsigned int *failed = arg;

	if (!err)
		say("VM %s: cpu.max of %s restored (left by a vmrapl-limitd that stopped without restoring it)",
		     vm_id, cgroup);
	else if (err == -ENOENT)
		say("VM %s: cgroup %s is gone; its record removed", vm_id,
		     cgroup ? cgroup : "?");
	else {
		say("VM %s: cpu.max of %s not restored: %s (record kept)",
		     vm_id, cgroup ? cgroup : "(unreadable record)",
		     strerror(-err));
		(*failed)++;
	}
}

static int restore_pass(void)
{
	struct cgq_counts c;
	unsigned int failed = 0;
	int err;

	err = cgq_restore_all(opt_rundir, report, &failed, &c);
	if (err) {
		say("cannot read %s: %s", opt_rundir, strerror(-err));
		return 1;
	}
	if (opt_verbose || c.restored || c.gone || c.failed)
		say("restore pass: %u restored, %u gone, %u failed",
		     c.restored, c.gone, c.failed);
	return failed ? 1 : 0;
}

static void on_signal(int sig)
{
	stop_sig = sig;
}

static int mkdir_p(const char *path)
{
	char buf[PATH_MAX], *p;

	if ((size_t)snprintf(buf, sizeof(buf), "%s", path) >= sizeof(buf))
		return -ENAMETOOLONG;
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: vmrapl-limitd [OPTION]...\n"
		"Holds every VM with a power limit (vmraplctl limit) to it through the\n"
		"cpu.max of its cgroup.\n"
		"\n"
		"  --device PATH      vmrapl's device (default /dev/vmrapl)\n"
		"  --cgroup-root DIR  cgroup v2 mount (default /sys/fs/cgroup)\n"
		"  --run-dir DIR      records of the original cpu.max values\n"
		"                     (default /run/vmrapl/limit)\n"
		"  --tick-ms N        controller tick and cpu.max period, 1..1000\n"
		"                     (default 100)\n"
		"  --scan-ms N        how often the limits are read, a multiple of\n"
		"                     the tick (default 1000)\n"
		"  --restore          put back every recorded cpu.max and exit\n"
		"                     (the unit's ExecStopPost)\n"
		"  --no-make-cgroup   leave a VM whose VMM shares its cgroup unheld\n"
		"                     (default: move the VMM into a cgroup of its\n"
		"                     own, " CGQ_SLICE "/vm-ID, and back at the end)\n"
		"  --proc DIR         where /proc is (a test's fake one)\n"
		"  -v, --verbose      log every tick\n"
		"  -h, --help         this text\n");
}

static int parse_ms(const char *opt, const char *s, uint64_t lo, uint64_t hi,
		    uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < lo || v > hi) {
		fprintf(stderr, "vmrapl-limitd: %s %s: must be %" PRIu64 "..%" PRIu64 " (ms)\n",
			opt, s, lo, hi);
		return -EINVAL;
	}
	*out = v * NS_PER_MS;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "cgroup-root", required_argument, NULL, 'c' },
		{ "run-dir", required_argument, NULL, 'r' },
		{ "tick-ms", required_argument, NULL, 't' },
		{ "scan-ms", required_argument, NULL, 's' },
		{ "restore", no_argument, NULL, 'R' },
		{ "no-make-cgroup", no_argument, NULL, 'M' },
		{ "proc", required_argument, NULL, 'p' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sigaction sa = { .sa_handler = on_signal };
	bool restore_only = false;
	uint64_t t, next, scan_every, n_tick = 0, missed = 0;
	struct timespec ts;
	int c, fd, err, open_err = 0;

	while ((c = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			opt_device = optarg;
			break;
		case 'c':
			opt_cgroot = optarg;
			break;
		case 'r':
			opt_rundir = optarg;
			break;
		case 't':
			if (parse_ms("--tick-ms", optarg, 1, 1000, &opt_tick_ns))
				return 2;
			break;
		case 's':
			if (parse_ms("--scan-ms", optarg, 1, 3600000,
				     &opt_scan_ns))
				return 2;
			break;
		case 'R':
			restore_only = true;
			break;
		case 'M':
			opt_make_cgroup = false;
			break;
		case 'p':
			opt_proc = optarg;
			break;
		case 'v':
			opt_verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "vmrapl-limitd: unexpected argument: %s\n",
			argv[optind]);
		return 2;
	}
	if (opt_scan_ns % opt_tick_ns) {
		fprintf(stderr, "vmrapl-limitd: --scan-ms must be a multiple of --tick-ms\n");
		return 2;
	}
	if (restore_only)
		return restore_pass();

	err = mkdir_p(opt_rundir);
	if (err) {
		say("cannot make %s: %s", opt_rundir, strerror(-err));
		return 1;
	}
	/* What a daemon that was killed left behind, first. */
	restore_pass();

	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	scan_every = opt_scan_ns / opt_tick_ns;
	say("holding VMs to their limits: tick %" PRIu64 " ms, limits read every %" PRIu64 " ms, records in %s",
	     opt_tick_ns / NS_PER_MS, opt_scan_ns / NS_PER_MS, opt_rundir);

	next = now_ns();
	while (!stop_sig) {
		t = now_ns();
		/*
		 * Open for each tick, as the exporter does for each scrape:
		 * the daemon never keeps the module from unloading, and
		 * follows it across a reload.  Without the device, no VM is
		 * tracked: every VM is let go.
		 */
		fd = open(opt_device, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			if (open_err)
				say("%s is back", opt_device);
			open_err = 0;
			tick(fd, t, n_tick % scan_every == 0);
			close(fd);
		} else {
			if (errno != open_err)
				say("cannot open %s: %s%s; every VM let go until it opens", opt_device,
				    strerror(errno), errno == ENOENT ?
				    " (is the vmrapl module loaded?)" : "");
			open_err = errno;
			let_go_all("vmrapl is gone");
		}
		n_tick++;
		next += opt_tick_ns;
		t = now_ns();
		if (t > next + opt_tick_ns) {
			/* Late by more than a tick: start again from now. */
			if (!missed++ || opt_verbose)
				say("ticks late by %" PRIu64 " ms (and %" PRIu64 " times before): the host is overloaded",
				     (t - next) / NS_PER_MS, missed - 1);
			next = t;
		}
		ts.tv_sec = (time_t)(next / 1000000000ULL);
		ts.tv_nsec = (long)(next % 1000000000ULL);
		while (!stop_sig &&
		       clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts,
				       NULL) == EINTR)
			;
	}
	say("%s: letting every VM go", strsignal(stop_sig));
	let_go_all("vmrapl-limitd stops");
	free(vms);
	return 0;
}
