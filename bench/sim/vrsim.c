// SPDX-License-Identifier: GPL-2.0
/*
 * vrsim: a trace-driven comparison of per-VM energy accounting.
 *
 * A simulated host (packages x CPUs, a small round-robin scheduler with
 * 3 ms slices) runs workloads of VMs (vCPU threads, VMM I/O threads) and
 * host tasks.  Every task has a known dynamic power while it runs; each
 * package has a static power, carried in equal parts by its CPUs and
 * charged to whatever task occupies a CPU (unoccupied time is idle).
 * That is the ground truth ("occupied" semantics).  Each package has a
 * RAPL-like PKG counter: ESU 14, 32-bit wrap, latched about every 1 ms.
 *
 * On the same schedule and counters, per-VM energy is computed by:
 *   vmrapl     the real accounting core (kmod/vr_core.c), 1 ms epochs,
 *              driven like the kernel glue drives it;
 *   qemu-vmsr  QEMU's documented vmsr algorithm: 1 s loop per VM, thread
 *              utime+stime in 100 Hz ticks, ratio = ticks / (ticks per s x
 *              CPUs of the package), package = CPU the thread last ran on,
 *              non-vCPU threads split equally over the package's vCPUs, a
 *              wrapped counter gives a delta of 0;
 *   scaphandre its qemu exporter: 5 s loop, the VM process's share of the
 *              host's consumed CPU time (ticks) x the host energy delta (a
 *              wrapped delta is dropped);
 *   kepler     its ratio model: 5 s loop, the process's share of CPU time
 *              (exact, eBPF) x the active energy (dE minus idle power,
 *              idle power known exactly here), wraps unwound, no idle
 *              share.
 * These are written from their documented descriptions, not their code.
 *
 * Reported per algorithm and workload: mean and max absolute error of
 * per-VM energy in % of the VM's true energy over 1 s and 60 s windows,
 * the net energy created (+) or lost (-) over the whole run, and the
 * error against each algorithm's own stated semantics (its formula fed
 * with exact inputs: for kepler, the VM's true dynamic energy).  For
 * vmrapl, the core's conservation (tracked + host + idle + lost ==
 * sampled) is checked after every close.
 *
 *   vrsim [--quick] [--json FILE] [--only NAME] [--seed N] [--secs S]
 *         [--period-us US (vmrapl epoch, 1000)]
 *         [--latch-us US (counter update interval, 976)]
 *         [--lag-us US (vmrapl's counter lag share; default: the one
 *          vr_pkg_init() gives hardware counters, 500)]
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vr_core.h"
#include "user/vr_rapl_model.h"

#define MS		1000000ULL
#define SEC		1000000000ULL
#define FJ_PER_J	1e15
#define MAXPKG		4
#define MAXCPU		64
#define NALG		4
#define NOTASK		(-1)

enum { A_VMRAPL, A_QEMU, A_SCAPH, A_KEPLER };
static const char *const alg_name[NALG] = {
	"vmrapl", "qemu-vmsr", "scaphandre", "kepler"
};
static const char *const own_name[NALG] = {
	"occupied truth", "exact-input vmsr formula",
	"exact-input process share", "exact dynamic energy (no idle)"
};

/* ------------------------------------------------------------ helpers */

/* One stream for the schedule and the counters' jitter, in event order. */
static struct vrm_rng rng;

static u64 rnd(void)
{
	return vrm_rand(&rng);
}

static u64 below(u64 n)
{
	return n ? vrm_below(&rng, n) : 0;
}

static double unif(void)
{
	return vrm_unit(&rng);
}

/* Exponential with mean @m ns, at least 10 us. */
static u64 expo(u64 m)
{
	double x = -log(1.0 - unif()) * (double)m;

	return x < 10000 ? 10000 : (u64)x;
}

static void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz);

	if (!p) {
		perror("calloc");
		exit(2);
	}
	return p;
}

/* ------------------------------------------------ RAPL counter model */

static u64 latch_ns = 976563;		/* the counter's update interval */

/*
 * The PKG counter of a package (kmod/user/vr_rapl_model.h): ESU 14, 32
 * bits, latched every latch_ns +- 2 %, its jitter drawn from the
 * simulation's stream.
 */
static void rapl_init(struct vrm_rapl *r, u64 offset)
{
	vrm_init(r, 14, 32, latch_ns, latch_ns / 50, offset, 0);
	vrm_use_rng(r, &rng);
}

/* ------------------------------------------------------------ model */

enum tkind { T_VCPU, T_IO, T_HOST };
enum pattern { P_STEADY, P_BURSTY, P_JITTER, P_PHASE, P_RANDOM };
enum tstate { S_SLEEP, S_QUEUED, S_RUNNING, S_DEAD };

struct task {
	int kind, vm, vidx;
	u64 dyn_uw;
	int pattern;
	u64 on_ns, off_ns, phase_off;
	u64 aff[MAXCPU / 64];		/* allowed CPUs */
	int state, cpu, last_cpu;
	u64 demand;			/* CPU ns left in this burst */
	u64 run_start;
	u64 runtime;			/* exact, cumulative */
	u64 runtime_pkg[MAXPKG];
	u32 wake_ver;
	int qnext;
};

struct cpu {
	int pkg, cur;
	int qhead, qtail, qlen;
	u64 slice_start;
	u32 ev_ver;
	struct vr_cpu vc;
};

struct pkg {
	u64 static_uw;
	int ncpu, first;
	struct vrm_rapl ctr;
	struct vr_pkg p;
	struct vr_cpu *cpus[MAXCPU];
	u64 closes;
	/* anchors: last raw reads */
	u64 scaph_raw, kepler_raw;
	double scaph_truth_j, kepler_truth_j;
};

struct vm {
	int nvcpu, first_task, ntask;	/* vCPUs first, then the I/O thread */
	u64 start, stop;
	bool started, stopped;
	struct vr_acct *acct;		/* (nvcpu + 1) x npkg */
	double truth_j, dyn_j;
	double est[NALG], own[NALG];
	/* qemu vmsr (per VM loop) */
	bool q_have;
	u64 q_raw[MAXPKG];
	double q_truth_pkg[MAXPKG];
	u64 *q_ticks;			/* per task */
	u64 q_rt_pkg[MAXPKG];		/* exact runtime per package */
	/* scaphandre / kepler: per process */
	bool s_have, k_have;
	u64 s_ticks, s_rt, k_rt;
	double k_dyn;
	/* window snapshots, one per second: truth, dyn, est[4], own[4] */
	double *snap;
};

#define SNAPW	(2 + 2 * NALG)

struct workload {
	const char *name, *what;
	void (*setup)(void);
	int npkg, ncpu;
	u64 static_uw;
	bool start_near_wrap;
	u64 full_secs;			/* 0: the default */
};

struct sim {
	const struct workload *w;
	int npkg, ncpu_total;
	struct pkg pk[MAXPKG];
	struct cpu cpu[MAXCPU];
	struct task *t;
	int ntask, captask;
	struct vm *vm;
	int nvm, capvm;
	u64 now, end;
	int nsec;			/* whole seconds simulated */
	u64 host_busy_ns;		/* all tasks, exact */
	double host_truth_j;
	/* anchors' host-level state */
	bool s_have, k_have;
	u64 s_host_ticks, s_host_rt, k_host_rt;
	/* checks */
	u64 events, switches, closes, conservation_bad;
	u64 vr_lost_eu, vr_host_eu, vr_idle_eu, vr_sampled_eu, vr_resets;
	u64 vr_overruns, vr_wraps, qemu_wrap_zero, scaph_wrap_drop;
};

static struct sim S;
static bool quick;
static u64 period_ns = 1000000;		/* vmrapl's epoch */
static long long lag_ns = -1;		/* -1: vr_pkg_init()'s default */
static u64 lag_used_ns;			/* what the packages ran with */

/* ------------------------------------------------------- event queue */

/* At equal times, the anchors' loops run before a window is read. */
enum { EV_CPU, EV_WAKE, EV_TICK, EV_QEMU, EV_SCAPH, EV_KEPLER, EV_WIN,
       EV_VMSTART, EV_VMSTOP };

struct ev {
	u64 t;
	u32 ver;
	int type, id;
};

static struct ev *heap;
static size_t nheap, capheap;

static bool ev_less(const struct ev *a, const struct ev *b)
{
	return a->t < b->t || (a->t == b->t && a->type < b->type);
}

static void ev_push(u64 t, int type, int id, u32 ver)
{
	size_t i;

	if (nheap == capheap) {
		capheap = capheap ? 2 * capheap : 1024;
		heap = realloc(heap, capheap * sizeof(*heap));
		if (!heap) {
			perror("realloc");
			exit(2);
		}
	}
	i = nheap++;
	heap[i] = (struct ev){ t, ver, type, id };
	while (i && ev_less(&heap[i], &heap[(i - 1) / 2])) {
		struct ev x = heap[i];

		heap[i] = heap[(i - 1) / 2];
		heap[(i - 1) / 2] = x;
		i = (i - 1) / 2;
	}
}

static struct ev ev_pop(void)
{
	struct ev top = heap[0];
	size_t i = 0;

	heap[0] = heap[--nheap];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		struct ev x;

		if (l < nheap && ev_less(&heap[l], &heap[m]))
			m = l;
		if (r < nheap && ev_less(&heap[r], &heap[m]))
			m = r;
		if (m == i)
			break;
		x = heap[i];
		heap[i] = heap[m];
		heap[m] = x;
		i = m;
	}
	return top;
}

/* ----------------------------------------------------------- vmrapl */

static struct vr_acct *task_acct(const struct task *t, int pkg)
{
	const struct vm *v;

	if (t->kind == T_HOST)
		return NULL;
	v = &S.vm[t->vm];
	return &v->acct[(t->kind == T_VCPU ? t->vidx : v->nvcpu) * S.npkg +
			pkg];
}

/* The vr_read_fn of a package: its PKG counter, now. */
static u32 pkg_read(void *ctx, u64 *raw, u64 dt, u64 busy)
{
	struct pkg *pk = ctx;

	(void)dt;
	(void)busy;
	raw[VR_DOM_PKG] = vrm_read(&pk->ctr, S.now);
	return BIT(VR_DOM_PKG);
}

static void vr_close(int pi)
{
	struct pkg *pk = &S.pk[pi];
	struct vr_pkg_stats st[VR_NDOM];
	unsigned int d;

	if (!vr_pkg_stale(&pk->p, S.now) ||
	    !vr_pkg_try_close(&pk->p, S.now, pkg_read, pk))
		return;
	pk->closes++;
	S.closes++;
	vr_pkg_read_stats(&pk->p, st, VR_NDOM);
	for (d = 0; d < VR_NDOM; d++)
		if (st[d].tracked + st[d].host + st[d].idle + st[d].lost !=
		    st[d].sampled)
			S.conservation_bad++;
}

/* ------------------------------------------------------------ truth */

static void task_accrue(struct task *t)
{
	struct cpu *c;
	struct pkg *pk;
	u64 ran;
	double stat_j, dyn_j;

	if (t->state != S_RUNNING)
		return;
	c = &S.cpu[t->cpu];
	pk = &S.pk[c->pkg];
	ran = S.now - t->run_start;
	t->run_start = S.now;
	if (!ran)
		return;
	t->runtime += ran;
	t->runtime_pkg[c->pkg] += ran;
	S.host_busy_ns += ran;
	dyn_j = (double)t->dyn_uw * (double)ran / FJ_PER_J;
	stat_j = (double)pk->static_uw / pk->ncpu * (double)ran / FJ_PER_J;
	if (t->kind != T_HOST) {
		S.vm[t->vm].truth_j += dyn_j + stat_j;
		S.vm[t->vm].dyn_j += dyn_j;
	}
}

static void pkg_power(int pi)
{
	struct pkg *pk = &S.pk[pi];
	u64 uw = pk->static_uw;
	int i;

	for (i = 0; i < pk->ncpu; i++) {
		int cur = S.cpu[pk->first + i].cur;

		if (cur != NOTASK)
			uw += S.t[cur].dyn_uw;
	}
	vrm_set_power(&pk->ctr, S.now, uw);
}

/* -------------------------------------------------------- scheduler */

static u64 phase_len(void)
{
	return 300 * MS;
}

/* A new burst: CPU demand, or 0 if the task should sleep first. */
static u64 burst_demand(struct task *t)
{
	u64 ph, into;

	switch (t->pattern) {
	case P_STEADY:
		return ~0ULL >> 2;
	case P_BURSTY:
	case P_JITTER:
		return t->on_ns;
	case P_RANDOM:
		return expo(t->on_ns);
	case P_PHASE:
		ph = (S.now + t->phase_off) / phase_len();
		into = (S.now + t->phase_off) % phase_len();
		if (ph & 1)		/* busy phase: run to its end */
			return phase_len() - into;
		return t->on_ns;	/* light phase: bursty */
	}
	return 0;
}

static u64 sleep_len(struct task *t)
{
	u64 into;

	switch (t->pattern) {
	case P_BURSTY:
		return t->off_ns;
	case P_JITTER:	/* off time +-10 %, uniform */
		return t->off_ns - t->off_ns / 10 + below(t->off_ns / 5);
	case P_RANDOM:
		return expo(t->off_ns);
	case P_PHASE:
		into = (S.now + t->phase_off) % phase_len();
		if (((S.now + t->phase_off) / phase_len()) & 1)
			return 1000;	/* a phase change: wake right away */
		/* light phase: sleep, but not past the phase end */
		return t->off_ns < phase_len() - into ? t->off_ns :
			phase_len() - into;
	}
	return 1000;
}

static void cpu_arm(struct cpu *c)
{
	struct task *t;
	u64 left, slice_end;

	c->ev_ver++;
	if (c->cur == NOTASK)
		return;
	t = &S.t[c->cur];
	left = t->demand;
	slice_end = c->slice_start + 3 * MS;
	if (c->qlen && slice_end - S.now < left)
		left = slice_end > S.now ? slice_end - S.now : 0;
	else if (!c->qlen && left > 4 * MS)
		left = 4 * MS;	/* re-check the queue now and then */
	ev_push(S.now + left, EV_CPU, (int)(c - S.cpu), c->ev_ver);
}

/* The CPU switches to @next (NOTASK: idle). */
static void cpu_switch(int ci, int next)
{
	struct cpu *c = &S.cpu[ci];
	struct pkg *pk = &S.pk[c->pkg];
	struct vr_acct *a = NULL;
	bool busy = next != NOTASK;

	if (c->cur != NOTASK) {
		struct task *o = &S.t[c->cur];

		task_accrue(o);
		if (o->demand != ~0ULL >> 2) {
			u64 ran = S.now - c->slice_start;

			o->demand = o->demand > ran ? o->demand - ran : 0;
		}
	}
	c->cur = next;
	c->slice_start = S.now;
	if (busy) {
		struct task *t = &S.t[next];

		t->state = S_RUNNING;
		t->cpu = ci;
		t->last_cpu = ci;
		t->run_start = S.now;
		a = task_acct(t, c->pkg);
	}
	pkg_power(c->pkg);
	S.switches++;
	if (vr_cpu_event_needed(&c->vc, busy, a))
		vr_cpu_event(&c->vc, S.now, busy, a);
	vr_close(c->pkg);
	(void)pk;
	cpu_arm(c);
}

static void q_push(struct cpu *c, int ti)
{
	S.t[ti].qnext = NOTASK;
	S.t[ti].state = S_QUEUED;
	S.t[ti].cpu = (int)(c - S.cpu);
	if (c->qtail == NOTASK)
		c->qhead = ti;
	else
		S.t[c->qtail].qnext = ti;
	c->qtail = ti;
	c->qlen++;
}

static int q_pop(struct cpu *c)
{
	int ti = c->qhead;

	if (ti == NOTASK)
		return NOTASK;
	c->qhead = S.t[ti].qnext;
	if (c->qhead == NOTASK)
		c->qtail = NOTASK;
	c->qlen--;
	return ti;
}

static void q_remove(struct cpu *c, int ti)
{
	int *pp = &c->qhead, prev = NOTASK;

	while (*pp != NOTASK && *pp != ti) {
		prev = *pp;
		pp = &S.t[*pp].qnext;
	}
	if (*pp != ti)
		return;
	*pp = S.t[ti].qnext;
	if (c->qtail == ti)
		c->qtail = prev;
	c->qlen--;
}

static bool allowed(const struct task *t, int ci)
{
	return t->aff[ci / 64] >> (ci % 64) & 1;
}

static void task_wake(int ti)
{
	struct task *t = &S.t[ti];
	int ci, best = NOTASK, start;

	if (t->state == S_DEAD)
		return;
	t->demand = burst_demand(t);
	/* the last CPU if idle, else any idle allowed CPU, else the
	 * allowed CPU with the shortest queue */
	if (t->last_cpu != NOTASK && allowed(t, t->last_cpu) &&
	    S.cpu[t->last_cpu].cur == NOTASK) {
		best = t->last_cpu;
	} else {
		start = (int)below(S.ncpu_total);
		for (ci = 0; ci < S.ncpu_total; ci++) {
			int c = (start + ci) % S.ncpu_total;

			if (allowed(t, c) && S.cpu[c].cur == NOTASK) {
				best = c;
				break;
			}
		}
	}
	if (best != NOTASK) {
		cpu_switch(best, ti);
		return;
	}
	start = (int)below(S.ncpu_total);
	for (ci = 0; ci < S.ncpu_total; ci++) {
		int c = (start + ci) % S.ncpu_total;

		if (allowed(t, c) && (best == NOTASK ||
				      S.cpu[c].qlen < S.cpu[best].qlen))
			best = c;
	}
	q_push(&S.cpu[best], ti);
	cpu_arm(&S.cpu[best]);
}

static void task_sleep(struct task *t, int ti)
{
	t->state = S_SLEEP;
	t->cpu = NOTASK;
	t->wake_ver++;
	ev_push(S.now + sleep_len(t), EV_WAKE, ti, t->wake_ver);
}

static void on_cpu_event(int ci)
{
	struct cpu *c = &S.cpu[ci];
	int cur = c->cur, next;
	struct task *t;
	u64 ran;

	if (cur == NOTASK)
		return;
	t = &S.t[cur];
	ran = S.now - c->slice_start;
	if (t->demand != ~0ULL >> 2 && ran >= t->demand) {
		/* burst done: sleep */
		next = q_pop(c);
		cpu_switch(ci, next);
		task_sleep(t, cur);
		return;
	}
	if (c->qlen && ran >= 3 * MS) {
		/* slice over: to the tail */
		next = q_pop(c);
		cpu_switch(ci, next);
		q_push(c, cur);
		return;
	}
	/* nothing to do: keep running, new slice */
	task_accrue(t);
	if (t->demand != ~0ULL >> 2)
		t->demand = t->demand > ran ? t->demand - ran : 0;
	c->slice_start = S.now;
	cpu_arm(c);
}

/* ---------------------------------------------------- VMs and tasks */

static int new_task(int kind, int vm, int vidx, u64 dyn_uw, int pattern,
		    u64 on, u64 off)
{
	struct task *t;
	int ci;

	if (S.ntask == S.captask) {
		S.captask = S.captask ? 2 * S.captask : 64;
		S.t = realloc(S.t, S.captask * sizeof(*S.t));
		if (!S.t) {
			perror("realloc");
			exit(2);
		}
	}
	t = &S.t[S.ntask];
	memset(t, 0, sizeof(*t));
	t->kind = kind;
	t->vm = vm;
	t->vidx = vidx;
	t->dyn_uw = dyn_uw;
	t->pattern = pattern;
	t->on_ns = on;
	t->off_ns = off;
	t->phase_off = below(phase_len());
	t->state = S_SLEEP;
	t->cpu = t->last_cpu = NOTASK;
	t->qnext = NOTASK;
	for (ci = 0; ci < S.ncpu_total; ci++)
		t->aff[ci / 64] |= 1ULL << (ci % 64);
	return S.ntask++;
}

static void task_pin_pkg(int ti, int pkg)
{
	struct task *t = &S.t[ti];
	int i;

	memset(t->aff, 0, sizeof(t->aff));
	for (i = 0; i < S.pk[pkg].ncpu; i++) {
		int ci = S.pk[pkg].first + i;

		t->aff[ci / 64] |= 1ULL << (ci % 64);
	}
}

/* A VM with @nvcpu vCPUs (and an I/O thread if io_uw), on @pkg (-1: any). */
static int new_vm(int nvcpu, u64 dyn_uw, int pattern, u64 on, u64 off,
		  int pkg, u64 io_uw, u64 io_on, u64 io_off, u64 start,
		  u64 stop)
{
	struct vm *v;
	int i, ti;

	if (S.nvm == S.capvm) {
		S.capvm = S.capvm ? 2 * S.capvm : 16;
		S.vm = realloc(S.vm, S.capvm * sizeof(*S.vm));
		if (!S.vm) {
			perror("realloc");
			exit(2);
		}
	}
	v = &S.vm[S.nvm];
	memset(v, 0, sizeof(*v));
	v->nvcpu = nvcpu;
	v->first_task = S.ntask;
	v->start = start;
	v->stop = stop;
	v->acct = xcalloc((size_t)(nvcpu + 1) * S.npkg, sizeof(*v->acct));
	for (i = 0; i < nvcpu; i++) {
		ti = new_task(T_VCPU, S.nvm, i, dyn_uw, pattern, on, off);
		if (pkg >= 0)
			task_pin_pkg(ti, pkg);
	}
	if (io_uw) {
		ti = new_task(T_IO, S.nvm, nvcpu, io_uw, P_RANDOM, io_on,
			      io_off);
		if (pkg >= 0)
			task_pin_pkg(ti, pkg);
	}
	v->ntask = S.ntask - v->first_task;
	v->q_ticks = xcalloc(v->ntask, sizeof(u64));
	ev_push(start, EV_VMSTART, S.nvm, 0);
	if (stop)
		ev_push(stop, EV_VMSTOP, S.nvm, 0);
	return S.nvm++;
}

static void host_noise(int n)
{
	while (n--)
		new_task(T_HOST, -1, 0, 5000000, P_RANDOM, 1 * MS, 19 * MS);
}

static void vm_start(int vi)
{
	struct vm *v = &S.vm[vi];
	int i;

	v->started = true;
	for (i = 0; i < v->ntask; i++)
		task_wake(v->first_task + i);
}

static void vm_stop(int vi)
{
	struct vm *v = &S.vm[vi];
	int i;

	for (i = 0; i < v->ntask; i++) {
		int ti = v->first_task + i;
		struct task *t = &S.t[ti];

		if (t->state == S_RUNNING) {
			int ci = t->cpu;

			cpu_switch(ci, q_pop(&S.cpu[ci]));
		} else if (t->state == S_QUEUED) {
			q_remove(&S.cpu[t->cpu], ti);
		}
		t->state = S_DEAD;
		t->cpu = NOTASK;
	}
	v->stopped = true;
}

/* ------------------------------------------------------- anchors */

/* /proc's utime + stime of a thread, in 100 Hz ticks. */
static u64 ticks_of(u64 ns)
{
	return ns / (10 * MS);
}

static void task_sync(struct task *t)
{
	task_accrue(t);
}

/* QEMU vmsr: one loop iteration of VM @vi. */
static void on_qemu(int vi)
{
	struct vm *v = &S.vm[vi];
	double de[MAXPKG], tr[MAXPKG], pool[MAXPKG] = {}, own = 0;
	int nv_on[MAXPKG] = {};
	int p, i;

	if (v->stopped)
		return;
	for (i = 0; i < v->ntask; i++)
		task_sync(&S.t[v->first_task + i]);
	for (p = 0; p < S.npkg; p++) {
		u64 raw = vrm_read(&S.pk[p].ctr, S.now);

		/* a wrapped counter gives 0 */
		if (raw >= v->q_raw[p]) {
			de[p] = vrm_units_j(&S.pk[p].ctr, raw - v->q_raw[p]);
		} else {
			de[p] = 0;
			if (v->q_have)
				S.qemu_wrap_zero++;
		}
		v->q_raw[p] = raw;
		tr[p] = vrm_truth_j(&S.pk[p].ctr, S.now) - v->q_truth_pkg[p];
		v->q_truth_pkg[p] += tr[p];
	}
	for (i = 0; i < v->ntask; i++) {
		struct task *t = &S.t[v->first_task + i];
		u64 tk = ticks_of(t->runtime), d = tk - v->q_ticks[i];
		int pp;
		double e;

		v->q_ticks[i] = tk;
		if (t->last_cpu == NOTASK || !v->q_have)
			continue;
		pp = S.cpu[t->last_cpu].pkg;
		e = (double)d / (100.0 * S.pk[pp].ncpu) * de[pp];
		if (t->kind == T_VCPU) {
			v->est[A_QEMU] += e;
			nv_on[pp]++;
		} else {
			pool[pp] += e;
		}
	}
	/* non-vCPU threads: split over the package's vCPUs (lost if none) */
	for (p = 0; p < S.npkg; p++)
		if (nv_on[p])
			v->est[A_QEMU] += pool[p];
	/* its own semantics with exact inputs */
	for (p = 0; p < S.npkg; p++) {
		u64 rt = 0;

		for (i = 0; i < v->ntask; i++)
			rt += S.t[v->first_task + i].runtime_pkg[p];
		if (v->q_have)
			own += (double)(rt - v->q_rt_pkg[p]) /
			       ((double)SEC * S.pk[p].ncpu) * tr[p];
		v->q_rt_pkg[p] = rt;
	}
	v->own[A_QEMU] += own;
	v->q_have = true;
	ev_push(S.now + SEC, EV_QEMU, vi, 0);
}

static u64 vm_runtime(const struct vm *v)
{
	u64 rt = 0;
	int i;

	for (i = 0; i < v->ntask; i++)
		rt += S.t[v->first_task + i].runtime;
	return rt;
}

static void sync_all(void)
{
	int i;

	for (i = 0; i < S.ntask; i++)
		task_accrue(&S.t[i]);
}

/*
 * Scaphandre qemu exporter, one 5 s iteration: the VM process's share of
 * the host's consumed CPU time (/proc ticks) x the host energy delta.
 */
static void on_scaph(void)
{
	double de = 0, tr = 0;
	u64 host_ticks = ticks_of(S.host_busy_ns), d_ticks, d_rt;
	int p, vi;

	sync_all();
	host_ticks = ticks_of(S.host_busy_ns);
	d_ticks = host_ticks - S.s_host_ticks;
	d_rt = S.host_busy_ns - S.s_host_rt;
	for (p = 0; p < S.npkg; p++) {
		struct pkg *pk = &S.pk[p];
		u64 raw = vrm_read(&pk->ctr, S.now);
		double t = vrm_truth_j(&pk->ctr, S.now);

		if (raw >= pk->scaph_raw)
			de += vrm_units_j(&pk->ctr, raw - pk->scaph_raw);
		else if (S.s_have)
			S.scaph_wrap_drop++;	/* no wrap handling */
		pk->scaph_raw = raw;
		tr += t - pk->scaph_truth_j;
		pk->scaph_truth_j = t;
	}
	for (vi = 0; vi < S.nvm; vi++) {
		struct vm *v = &S.vm[vi];
		u64 rt = vm_runtime(v), tk = ticks_of(rt);

		if (!v->started)
			continue;
		if (v->stopped) {
			/* the process is gone, and its last interval */
			v->s_have = false;
			continue;
		}
		if (v->s_have && S.s_have) {
			if (d_ticks)
				v->est[A_SCAPH] += (double)(tk - v->s_ticks) /
						   (double)d_ticks * de;
			if (d_rt)
				v->own[A_SCAPH] += (double)(rt - v->s_rt) /
						   (double)d_rt * tr;
		}
		v->s_ticks = tk;
		v->s_rt = rt;
		v->s_have = true;
	}
	S.s_host_ticks = host_ticks;
	S.s_host_rt = S.host_busy_ns;
	S.s_have = true;
	ev_push(S.now + 5 * SEC, EV_SCAPH, 0, 0);
}

/*
 * Kepler ratio model, one 5 s iteration: the process's share of CPU time
 * (exact) x the active energy (dE - P_idle x dt per package, wraps
 * unwound); no idle share.  P_idle is the true static power here (its
 * best case).
 */
static void on_kepler(u64 dt)
{
	double active = 0;
	u64 d_rt;
	int p, vi;

	sync_all();
	for (p = 0; p < S.npkg; p++) {
		struct pkg *pk = &S.pk[p];
		u64 raw = vrm_read(&pk->ctr, S.now);
		u64 du = raw >= pk->kepler_raw ? raw - pk->kepler_raw :
			 raw + vrm_range_units(&pk->ctr) - pk->kepler_raw;
		double a = vrm_units_j(&pk->ctr, du) -
			   (double)pk->static_uw * (double)dt / FJ_PER_J;

		pk->kepler_raw = raw;
		if (S.k_have && a > 0)
			active += a;
	}
	d_rt = S.host_busy_ns - S.k_host_rt;
	for (vi = 0; vi < S.nvm; vi++) {
		struct vm *v = &S.vm[vi];
		u64 rt = vm_runtime(v);

		if (!v->started)
			continue;
		if (v->stopped) {
			v->k_have = false;
			continue;
		}
		if (v->k_have && S.k_have && d_rt) {
			v->est[A_KEPLER] += (double)(rt - v->k_rt) /
					    (double)d_rt * active;
			v->own[A_KEPLER] += v->dyn_j - v->k_dyn;
		}
		v->k_dyn = v->dyn_j;
		v->k_rt = rt;
		v->k_have = true;
	}
	S.k_host_rt = S.host_busy_ns;
	S.k_have = true;
	ev_push(S.now + 5 * SEC, EV_KEPLER, 0, 0);
}

/* A reader of vmrapl: close what is stale, sum the VM's accounts. */
static double vmrapl_vm_j(const struct vm *v)
{
	u64 e = 0;
	int i;

	for (i = 0; i < (v->nvcpu + 1) * S.npkg; i++)
		e += v->acct[i].energy[VR_DOM_PKG];
	return ldexp((double)e, -VR_EU_SHIFT);
}

static void on_window(int k)
{
	int vi, p;

	for (p = 0; p < S.npkg; p++)
		vr_close(p);
	sync_all();
	for (vi = 0; vi < S.nvm; vi++) {
		struct vm *v = &S.vm[vi];
		double *s = &v->snap[(size_t)k * SNAPW];
		int a;

		v->est[A_VMRAPL] = vmrapl_vm_j(v);
		v->own[A_VMRAPL] = v->truth_j;
		s[0] = v->truth_j;
		s[1] = v->dyn_j;
		for (a = 0; a < NALG; a++) {
			s[2 + a] = v->est[a];
			s[2 + NALG + a] = v->own[a];
		}
	}
	if (k < S.nsec)
		ev_push(S.now + SEC, EV_WIN, k + 1, 0);
}

/* -------------------------------------------------------- workloads */

static int vm_pkg(int i)
{
	return i % S.npkg;
}

static void wl_steady(void)
{
	int i;

	for (i = 0; i < 4; i++)
		new_vm(2, 10000000, P_STEADY, 0, 0, vm_pkg(i), 0, 0, 0, 0, 0);
	host_noise(2);
}

static void wl_bursty(void)
{
	int i;

	for (i = 0; i < 6; i++)
		new_vm(2, 12000000, P_BURSTY, 2 * MS, 18 * MS, vm_pkg(i), 0,
		       0, 0, below(20 * MS), 0);
	host_noise(2);
}

/* As bursty, but the sleeps vary by +-10 %: no fixed phase between VMs. */
static void wl_bursty_jitter(void)
{
	int i;

	for (i = 0; i < 6; i++)
		new_vm(2, 12000000, P_JITTER, 2 * MS, 18 * MS, vm_pkg(i), 0,
		       0, 0, below(20 * MS), 0);
	host_noise(2);
}

static void wl_phase(void)
{
	int i;

	for (i = 0; i < 4; i++)
		new_vm(2, 10000000, P_PHASE, 2 * MS, 18 * MS, vm_pkg(i), 0, 0,
		       0, 0, 0);
	host_noise(2);
}

static void wl_oversub(void)
{
	int i;

	/* 3 vCPUs per CPU: 16 VMs x 3 vCPUs on 16 CPUs */
	for (i = 0; i < S.ncpu_total; i++)
		new_vm(3, 8000000, P_STEADY, 0, 0, vm_pkg(i), 0, 0, 0, 0, 0);
	host_noise(2);
}

static void wl_floating(void)
{
	int i;

	for (i = 0; i < 4; i++)
		new_vm(4, 10000000, P_RANDOM, 5 * MS, 5 * MS, -1, 0, 0, 0, 0,
		       0);
	host_noise(2);
}

static void wl_vmm_io(void)
{
	int i;

	/* a heavy I/O thread per VM: 0.2 ms bursts, ~40 % of a CPU */
	for (i = 0; i < 4; i++)
		new_vm(2, 10000000, P_RANDOM, 4 * MS, 4 * MS, vm_pkg(i),
		       8000000, 200000, 300000, 0, 0);
	host_noise(2);
}

static void wl_shortlived(void)
{
	u64 t;
	int i = 0;

	/* one VM starts every 2 s and lives 2-10 s */
	for (t = 0; t < S.end; t += 2 * SEC, i++) {
		u64 life = 2 * SEC + below(8) * SEC;

		new_vm(2, 10000000, P_RANDOM, 6 * MS, 4 * MS, vm_pkg(i),
		       3000000, 500000, 2 * MS, t + below(SEC),
		       t + life < S.end ? t + life : 0);
	}
	host_noise(2);
}

static void wl_wrap(void)
{
	int i;

	/* 40 W + 8 x 25 W = 240 W per package */
	for (i = 0; i < 2; i++)
		new_vm(8, 25000000, P_STEADY, 0, 0, vm_pkg(i), 0, 0, 0, 0, 0);
}

static void wl_hetero(void)
{
	/* VM 0 at twice the per-core power of VM 1, on the same package */
	new_vm(4, 20000000, P_STEADY, 0, 0, 0, 0, 0, 0, 0, 0);
	new_vm(4, 10000000, P_STEADY, 0, 0, 0, 0, 0, 0, 0, 0);
	new_vm(4, 20000000, P_RANDOM, 5 * MS, 5 * MS, 1, 0, 0, 0, 0, 0);
	new_vm(4, 10000000, P_RANDOM, 5 * MS, 5 * MS, 1, 0, 0, 0, 0, 0);
}

static void wl_lone(void)
{
	/* one VM busy on one CPU of a 16-CPU package, 40 W static, 5 W */
	new_vm(1, 5000000, P_STEADY, 0, 0, 0, 0, 0, 0, 0, 0);
}

static const struct workload workloads[] = {
	{ "steady", "4 VMs x 2 vCPUs always busy", wl_steady, 2, 8,
	  40000000, false, 0 },
	{ "bursty", "6 VMs x 2 vCPUs, 2 ms on / 18 ms off", wl_bursty, 2, 8,
	  40000000, false, 0 },
	{ "bursty-jitter", "as bursty, the 18 ms off time +-10 %",
	  wl_bursty_jitter, 2, 8, 40000000, false, 0 },
	{ "phases", "busy / 10 % phases every 300 ms", wl_phase, 2, 8,
	  40000000, false, 0 },
	{ "oversubscribed", "3 vCPUs per CPU, 3 ms slices", wl_oversub, 2, 8,
	  40000000, false, 0 },
	{ "floating", "4 x 4 vCPUs floating over both packages",
	  wl_floating, 2, 8, 40000000, false, 0 },
	{ "vmm-io", "a heavy VMM I/O thread per VM", wl_vmm_io, 2, 8,
	  40000000, false, 0 },
	{ "short-lived", "a VM started every 2 s, living 2-10 s",
	  wl_shortlived, 2, 8, 40000000, false, 0 },
	{ "wrap", "240 W per package, counter wraps", wl_wrap, 2, 8,
	  40000000, true, 3600 },
	{ "heterogeneous", "one VM at 2x the per-core power of another",
	  wl_hetero, 2, 8, 40000000, false, 0 },
	{ "lone", "one VM busy on 1 CPU of a 16-CPU package", wl_lone, 1,
	  16, 40000000, false, 0 },
};

#define NWL	(sizeof(workloads) / sizeof(workloads[0]))

/* --------------------------------------------------------- results */

struct stat {
	double sum, max;
	u64 n;
};

struct result {
	const char *wl;
	struct stat err[NALG][2];	/* [alg][0: 1 s, 1: 60 s] */
	struct stat own[NALG][2];
	double net[NALG];		/* % created (+) or lost (-) */
	double truth_j, host_lost_j;
	int nvm;
	u64 events, switches, closes, conservation_bad;
	double vr_lost_j, vr_host_j, vr_idle_j, vr_sampled_j;
	u64 vr_resets, vr_overruns, vr_wraps, qemu_wrap_zero;
	u64 scaph_wrap_drop;
	double secs, wall;
};

static void stat_add(struct stat *s, double x)
{
	s->sum += x;
	if (x > s->max)
		s->max = x;
	s->n++;
}

static double stat_mean(const struct stat *s)
{
	return s->n ? s->sum / (double)s->n : NAN;
}

static void analyse(struct result *r)
{
	static const int wsec[2] = { 1, 60 };
	static const double thr[2] = { 0.05, 3.0 };	/* J */
	int vi, wi, a;

	for (wi = 0; wi < 2; wi++) {
		int w = wsec[wi], k;

		for (k = 0; (k + 1) * w <= S.nsec; k++) {
			for (vi = 0; vi < S.nvm; vi++) {
				const double *s0 = &S.vm[vi].snap[
					(size_t)k * w * SNAPW];
				const double *s1 = &S.vm[vi].snap[
					(size_t)(k + 1) * w * SNAPW];
				double tr = s1[0] - s0[0];

				if (tr < thr[wi])
					continue;
				for (a = 0; a < NALG; a++) {
					double e = s1[2 + a] - s0[2 + a];
					double o = s1[2 + NALG + a] -
						   s0[2 + NALG + a];

					stat_add(&r->err[a][wi],
						 100 * fabs(e - tr) / tr);
					if (o > thr[wi] / 10)
						stat_add(&r->own[a][wi],
							 100 * fabs(e - o) / o);
				}
			}
		}
	}
	for (a = 0; a < NALG; a++) {
		double est = 0, tr = 0;

		for (vi = 0; vi < S.nvm; vi++) {
			const double *s = &S.vm[vi].snap[(size_t)S.nsec *
							 SNAPW];

			est += s[2 + a];
			tr += s[0];
		}
		r->net[a] = tr > 0 ? 100 * (est - tr) / tr : 0;
		r->truth_j = tr;
	}
}

/* ------------------------------------------------------------- run */

static void run(const struct workload *w, u64 secs, struct result *r)
{
	struct vr_pkg_stats st[VR_NDOM];
	clock_t c0 = clock();
	int p, i, vi;

	memset(&S, 0, sizeof(S));
	nheap = 0;
	S.w = w;
	S.npkg = w->npkg;
	S.ncpu_total = w->npkg * w->ncpu;
	S.end = secs * SEC;
	S.nsec = (int)secs;
	for (p = 0; p < S.npkg; p++) {
		struct pkg *pk = &S.pk[p];
		u64 off = rnd() & 0xffffffffULL;

		pk->static_uw = w->static_uw;
		pk->ncpu = w->ncpu;
		pk->first = p * w->ncpu;
		if (w->start_near_wrap) {
			/* about 20 s (quick) or 200 s before the first wrap */
			u64 lead = (quick ? 20 : 200) * 240ULL << 14;

			off = (1ULL << 32) - lead - below(1 << 20);
		}
		rapl_init(&pk->ctr, off);
		for (i = 0; i < pk->ncpu; i++)
			pk->cpus[i] = &S.cpu[pk->first + i].vc;
		vr_pkg_init(&pk->p, pk->cpus, pk->ncpu, period_ns,
			    500000000ULL);
		/*
		 * The counter is hardware-like (latched every ~1 ms): keep the
		 * lag share vr_pkg_init() gives hardware sources, as the
		 * kernel's RAPL source does.
		 */
		if (lag_ns >= 0)
			pk->p.lag_ns = (u64)lag_ns;
		lag_used_ns = pk->p.lag_ns;
		vr_pkg_set_domain(&pk->p, VR_DOM_PKG, pk->ctr.esu,
				  pk->ctr.width);
		vr_pkg_set_static(&pk->p, pk->static_uw, VR_STATIC_PARAM);
		pk->p.policy = VR_STATIC_OCCUPIED;
		for (i = 0; i < pk->ncpu; i++) {
			struct cpu *c = &S.cpu[pk->first + i];

			c->pkg = p;
			c->cur = c->qhead = c->qtail = NOTASK;
			vr_cpu_init(&c->vc, &pk->p);
			vr_lock(&pk->p.close_lock);
			vr_cpu_online(&c->vc, 0, false);
			vr_unlock(&pk->p.close_lock);
		}
		vrm_set_power(&pk->ctr, 0, pk->static_uw);
		ev_push(4 * MS, EV_TICK, p, 0);
	}
	w->setup();
	for (vi = 0; vi < S.nvm; vi++) {
		S.vm[vi].snap = xcalloc((size_t)(S.nsec + 1) * SNAPW,
					sizeof(double));
		ev_push(S.vm[vi].start, EV_QEMU, vi, 0);
	}
	for (i = 0; i < S.ntask; i++)
		if (S.t[i].kind == T_HOST)
			ev_push(below(20 * MS), EV_WAKE, i, S.t[i].wake_ver);
	ev_push(0, EV_WIN, 0, 0);
	ev_push(5 * SEC + 370 * MS, EV_SCAPH, 0, 0);
	ev_push(2 * SEC + 710 * MS, EV_KEPLER, 0, 0);

	while (nheap) {
		struct ev e = ev_pop();

		if (e.t > S.end)
			break;
		S.now = e.t;
		S.events++;
		switch (e.type) {
		case EV_CPU:
			if (e.ver == S.cpu[e.id].ev_ver)
				on_cpu_event(e.id);
			break;
		case EV_WAKE:
			if (e.ver == S.t[e.id].wake_ver &&
			    S.t[e.id].state == S_SLEEP)
				task_wake(e.id);
			break;
		case EV_TICK:
			/* the module's timer / the tick: close if stale */
			vr_close(e.id);
			ev_push(S.now + 4 * MS, EV_TICK, e.id, 0);
			break;
		case EV_WIN:
			on_window(e.id);
			break;
		case EV_QEMU:
			on_qemu(e.id);
			break;
		case EV_SCAPH:
			on_scaph();
			break;
		case EV_KEPLER:
			on_kepler(5 * SEC);
			break;
		case EV_VMSTART:
			vm_start(e.id);
			break;
		case EV_VMSTOP:
			vm_stop(e.id);
			break;
		}
	}

	memset(r, 0, sizeof(*r));
	r->wl = w->name;
	r->nvm = S.nvm;
	analyse(r);
	r->events = S.events;
	r->switches = S.switches;
	r->closes = S.closes;
	r->conservation_bad = S.conservation_bad;
	for (p = 0; p < S.npkg; p++) {
		vr_pkg_read_stats(&S.pk[p].p, st, 1);
		r->vr_lost_j += ldexp((double)st[0].lost, -VR_EU_SHIFT);
		r->vr_host_j += ldexp((double)st[0].host, -VR_EU_SHIFT);
		r->vr_idle_j += ldexp((double)st[0].idle, -VR_EU_SHIFT);
		r->vr_sampled_j += ldexp((double)st[0].sampled, -VR_EU_SHIFT);
		r->vr_resets += S.pk[p].p.resets;
		r->vr_overruns += S.pk[p].p.overruns;
		r->vr_wraps += S.pk[p].p.wraps;
	}
	r->qemu_wrap_zero = S.qemu_wrap_zero;
	r->scaph_wrap_drop = S.scaph_wrap_drop;
	r->secs = (double)secs;
	r->wall = (double)(clock() - c0) / CLOCKS_PER_SEC;

	for (vi = 0; vi < S.nvm; vi++) {
		free(S.vm[vi].acct);
		free(S.vm[vi].q_ticks);
		free(S.vm[vi].snap);
	}
	free(S.vm);
	free(S.t);
}

/* ---------------------------------------------------------- output */

static void fmt_pct(char *b, size_t n, double x)
{
	if (isnan(x))
		snprintf(b, n, "-");
	else if (x >= 1000)
		snprintf(b, n, "%.0f", x);
	else if (x >= 10)
		snprintf(b, n, "%.1f", x);
	else
		snprintf(b, n, "%.2f", x);
}

static void print_md(const struct result *res, int n)
{
	int i, a;

	printf("vmrapl: %llu us epochs, counter lag share lag_ns = %llu us%s; "
	       "counter latched every %llu us.\n\n",
	       (unsigned long long)period_ns / 1000,
	       (unsigned long long)lag_used_ns / 1000,
	       lag_ns < 0 ? " (vr_pkg_init() default for hardware counters)" :
	       " (--lag-us)", (unsigned long long)latch_ns / 1000);
	printf("Per-VM energy error, %% of the VM's true energy "
	       "(ground truth: dynamic power of its threads + P_static / "
	       "ncpus per occupied CPU-ns).\n\n");
	printf("| workload | algorithm | 1 s mean | 1 s max | 60 s mean | "
	       "60 s max | net created(+)/lost(-) | own semantics 60 s mean |"
	       "\n|---|---|---:|---:|---:|---:|---:|---:|\n");
	for (i = 0; i < n; i++) {
		const struct result *r = &res[i];

		for (a = 0; a < NALG; a++) {
			char m1[16], x1[16], m6[16], x6[16], nt[16], ow[16];

			fmt_pct(m1, sizeof(m1), stat_mean(&r->err[a][0]));
			fmt_pct(x1, sizeof(x1), r->err[a][0].n ?
				r->err[a][0].max : NAN);
			fmt_pct(m6, sizeof(m6), stat_mean(&r->err[a][1]));
			fmt_pct(x6, sizeof(x6), r->err[a][1].n ?
				r->err[a][1].max : NAN);
			snprintf(nt, sizeof(nt), "%+.2f %%", r->net[a]);
			fmt_pct(ow, sizeof(ow), stat_mean(&r->own[a][1]));
			printf("| %s | %s | %s | %s | %s | %s | %s | %s |\n",
			       a ? "" : r->wl, alg_name[a], m1, x1, m6, x6,
			       nt, ow);
		}
	}
	printf("\nOwn semantics: ");
	for (a = 0; a < NALG; a++)
		printf("%s vs %s%s", alg_name[a], own_name[a],
		       a < NALG - 1 ? "; " : ".\n");
	printf("\nvmrapl conservation (tracked + host + idle + lost == "
	       "sampled, after every close) and counter events:\n\n");
	printf("| workload | sim s | VMs | closes | conservation | lost J | "
	       "host J | idle J | wraps | resets | overruns | vmsr wraps "
	       "zeroed | scaph deltas dropped | wall s |\n"
	       "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|"
	       "---:|---:|\n");
	for (i = 0; i < n; i++) {
		const struct result *r = &res[i];

		printf("| %s | %.0f | %d | %llu | %s | %.3f | %.1f | %.1f | "
		       "%llu | %llu | %llu | %llu | %llu | %.2f |\n", r->wl,
		       r->secs, r->nvm, (unsigned long long)r->closes,
		       r->conservation_bad ? "BROKEN" : "exact",
		       r->vr_lost_j, r->vr_host_j, r->vr_idle_j,
		       (unsigned long long)r->vr_wraps,
		       (unsigned long long)r->vr_resets,
		       (unsigned long long)r->vr_overruns,
		       (unsigned long long)r->qemu_wrap_zero,
		       (unsigned long long)r->scaph_wrap_drop, r->wall);
	}
}

static void json_num(FILE *f, double x)
{
	if (isnan(x))
		fprintf(f, "null");
	else
		fprintf(f, "%.6g", x);
}

static int write_json(const char *path, const struct result *res, int n)
{
	FILE *f = fopen(path, "w");
	int i, a, wi;

	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(f, "{\n  \"mode\": \"%s\",\n  \"period_us\": %llu,\n"
		"  \"latch_us\": %llu,\n  \"lag_us\": %llu,\n"
		"  \"results\": [\n", quick ? "quick" : "full",
		(unsigned long long)period_ns / 1000,
		(unsigned long long)latch_ns / 1000,
		(unsigned long long)lag_used_ns / 1000);
	for (i = 0; i < n; i++) {
		const struct result *r = &res[i];

		fprintf(f, "    {\"workload\": \"%s\", \"sim_s\": %.0f, "
			"\"vms\": %d, \"events\": %llu, \"closes\": %llu, "
			"\"conservation_exact\": %s, \"vmrapl_lost_j\": ",
			r->wl, r->secs, r->nvm,
			(unsigned long long)r->events,
			(unsigned long long)r->closes,
			r->conservation_bad ? "false" : "true");
		json_num(f, r->vr_lost_j);
		fprintf(f, ", \"vmrapl_resets\": %llu, \"vmrapl_overruns\": "
			"%llu, \"vmrapl_wraps\": %llu, \"vmsr_wraps_zeroed\":"
			" %llu, \"scaph_deltas_dropped\": %llu, "
			"\"truth_j\": ", (unsigned long long)r->vr_resets,
			(unsigned long long)r->vr_overruns,
			(unsigned long long)r->vr_wraps,
			(unsigned long long)r->qemu_wrap_zero,
			(unsigned long long)r->scaph_wrap_drop);
		json_num(f, r->truth_j);
		fprintf(f, ", \"algorithms\": {");
		for (a = 0; a < NALG; a++) {
			fprintf(f, "%s\"%s\": {", a ? ", " : "", alg_name[a]);
			for (wi = 0; wi < 2; wi++) {
				const char *w = wi ? "60s" : "1s";

				fprintf(f, "\"mean_err_pct_%s\": ", w);
				json_num(f, stat_mean(&r->err[a][wi]));
				fprintf(f, ", \"max_err_pct_%s\": ", w);
				json_num(f, r->err[a][wi].n ?
					 r->err[a][wi].max : NAN);
				fprintf(f, ", \"own_mean_err_pct_%s\": ", w);
				json_num(f, stat_mean(&r->own[a][wi]));
				fprintf(f, ", ");
			}
			fprintf(f, "\"net_pct\": ");
			json_num(f, r->net[a]);
			fprintf(f, ", \"own_semantics\": \"%s\"}",
				own_name[a]);
		}
		fprintf(f, "}}%s\n", i < n - 1 ? "," : "");
	}
	fprintf(f, "  ]\n}\n");
	return fclose(f);
}

int main(int argc, char **argv)
{
	const char *json = NULL, *only = NULL;
	struct result res[NWL];
	u64 seed = 0x76727369ULL, secs = 0;
	int i, n = 0, bad = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick"))
			quick = true;
		else if (!strcmp(argv[i], "--json") && i + 1 < argc)
			json = argv[++i];
		else if (!strcmp(argv[i], "--only") && i + 1 < argc)
			only = argv[++i];
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--secs") && i + 1 < argc)
			secs = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--period-us") && i + 1 < argc)
			period_ns = strtoull(argv[++i], NULL, 0) * 1000;
		else if (!strcmp(argv[i], "--latch-us") && i + 1 < argc)
			latch_ns = strtoull(argv[++i], NULL, 0) * 1000;
		else if (!strcmp(argv[i], "--lag-us") && i + 1 < argc)
			lag_ns = strtoll(argv[++i], NULL, 0) * 1000;
		else {
			fprintf(stderr, "usage: %s [--quick] [--json FILE] "
				"[--only WORKLOAD] [--seed N] [--secs S] "
				"[--period-us US] [--latch-us US] "
				"[--lag-us US]\n",
				argv[0]);
			return 2;
		}
	}
	for (i = 0; i < (int)NWL; i++) {
		const struct workload *w = &workloads[i];
		u64 s = secs ? secs : quick ? 61 :
			w->full_secs ? w->full_secs : 600;

		if (only && strcmp(only, w->name))
			continue;
		rng.s = seed + (u64)i * 0x1000193ULL;
		run(w, s, &res[n]);
		fprintf(stderr, "# %-14s %5llu s simulated, %9llu events, "
			"%8llu closes, %.2f s\n", w->name,
			(unsigned long long)s,
			(unsigned long long)res[n].events,
			(unsigned long long)res[n].closes, res[n].wall);
		if (res[n].conservation_bad)
			bad = 1;
		n++;
	}
	if (!n) {
		fprintf(stderr, "no such workload\n");
		return 2;
	}
	print_md(res, n);
	if (json && write_json(json, res, n))
		return 2;
	if (bad)
		fprintf(stderr, "vmrapl conservation BROKEN\n");
	return bad;
}
