// SPDX-License-Identifier: GPL-2.0
/*
 * vrsim: the event queue, the round-robin scheduler (3 ms slices), and the
 * VMs and tasks it runs.  A VM with a CPU quota (bandwidth.c) has its
 * threads checked where the kernel checks them: when one is picked or
 * wakes, and at the scheduler tick while one runs.
 */
#include "vrsim.h"

/* ------------------------------------------------------- event queue */

static struct ev *heap;
static size_t nheap, capheap;

/* Empties the queue for a new run. */
void ev_reset(void)
{
	nheap = 0;
}

bool ev_empty(void)
{
	return !nheap;
}

static bool ev_less(const struct ev *a, const struct ev *b)
{
	return a->t < b->t || (a->t == b->t && a->type < b->type);
}

void ev_push(u64 t, int type, int id, u32 ver)
{
	size_t i;

	heap = xgrow(heap, nheap, &capheap, 1024, sizeof(*heap));
	i = nheap++;
	heap[i] = (struct ev){ t, ver, type, id };
	while (i && ev_less(&heap[i], &heap[(i - 1) / 2])) {
		struct ev x = heap[i];

		heap[i] = heap[(i - 1) / 2];
		heap[(i - 1) / 2] = x;
		i = (i - 1) / 2;
	}
}

struct ev ev_pop(void)
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

/*
 * The CPU's next event: its task's burst or slice ends, or a re-check;
 * before that, the tick where its VM's quota is checked, if it has one.
 */
void cpu_arm(struct cpu *c)
{
	struct task *t;
	u64 left, slice_end, chk;

	c->ev_ver++;
	if (c->cur == NOTASK)
		return;
	t = &S.t[c->cur];
	left = t->demand;
	/*
	 * A task with a quota is re-armed mid-slice at its checks: what is
	 * left of its burst counts from the slice's start.
	 */
	if (left != ~0ULL >> 2 && bw_on(t))
		left = left > S.now - c->slice_start ?
		       left - (S.now - c->slice_start) : 0;
	slice_end = c->slice_start + 3 * MS;
	if (c->qlen && slice_end - S.now < left)
		left = slice_end > S.now ? slice_end - S.now : 0;
	else if (!c->qlen && left > 4 * MS)
		left = 4 * MS;	/* re-check the queue now and then */
	c->norm_at = S.now + left;
	chk = bw_check_at(c);
	if (chk < S.now + left)
		left = chk - S.now;
	ev_push(S.now + left, EV_CPU, (int)(c - S.cpu), c->ev_ver);
}

/* The CPU switches to @next (NOTASK: idle). */
static void cpu_switch(int ci, int next)
{
	struct cpu *c = &S.cpu[ci];
	struct vr_acct *a[NVR] = {};
	bool busy = next != NOTASK;
	int v;

	pkg_advance(c->pkg);
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
		for (v = 0; v < NVR; v++)
			a[v] = task_acct(t, c->pkg, v);
	}
	pkg_retune(c->pkg);
	S.switches++;
	for (v = 0; v < NVR; v++)
		if (vr_cpu_event_needed(&c->vc[v], busy, a[v]))
			vr_cpu_event(&c->vc[v], S.now, busy, a[v]);
	vr_close(c->pkg);
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

/* The next task of @c's queue that may run; the throttled are parked. */
static int q_pop_run(struct cpu *c)
{
	int ti;

	while ((ti = q_pop(c)) != NOTASK) {
		if (bw_runnable(ti, (int)(c - S.cpu)))
			return ti;
		bw_park(ti);
	}
	return NOTASK;
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

void task_wake(int ti)
{
	struct task *t = &S.t[ti];

	if (t->state == S_DEAD)
		return;
	t->demand = burst_demand(t);
	task_place(ti);
}

/*
 * Task @ti becomes runnable (woken, or unthrottled with the demand it
 * had): onto a CPU or into a queue, or throttled if its VM has no
 * runtime for the idle CPU it would run on.
 */
void task_place(int ti)
{
	struct task *t = &S.t[ti];
	int ci, best = NOTASK, start;

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
		if (!bw_runnable(ti, best)) {
			bw_park(ti);
			return;
		}
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

void on_cpu_event(int ci)
{
	struct cpu *c = &S.cpu[ci];
	int cur = c->cur, next;
	struct task *t;
	u64 ran;

	if (cur == NOTASK)
		return;
	t = &S.t[cur];
	if (bw_on(t)) {
		/* the tick: its VM's quota checked (and drawn from) */
		if (!bw_runnable(cur, ci)) {
			next = q_pop_run(c);
			cpu_switch(ci, next);
			bw_park(cur);
			bw_left(ci, t->vm);
			return;
		}
		if (S.now < c->norm_at) {
			cpu_arm(c);
			return;
		}
	}
	ran = S.now - c->slice_start;
	if (t->demand != ~0ULL >> 2 && ran >= t->demand) {
		/* burst done: sleep */
		next = q_pop_run(c);
		cpu_switch(ci, next);
		task_sleep(t, cur);
		if (t->kind != T_HOST)
			bw_left(ci, t->vm);
		return;
	}
	if (c->qlen && ran >= 3 * MS) {
		/* slice over: to the tail (unless every other is throttled) */
		next = q_pop_run(c);
		if (next != NOTASK) {
			cpu_switch(ci, next);
			q_push(c, cur);
			return;
		}
	}
	/*
	 * Nothing to do: keep running, new slice.  This re-check stands for
	 * the host tick; a vCPU takes it as an exit, where the kernel's
	 * kvm_exit/kvm_entry probes poll for a per-core sample.
	 */
	if (t->kind == T_VCPU && !switches_only) {
		int v;

		for (v = 0; v < NVR; v++)
			vr_cpu_poll(&c->vc[v], S.now);
	}
	task_accrue(t);
	if (t->demand != ~0ULL >> 2)
		t->demand = t->demand > ran ? t->demand - ran : 0;
	c->slice_start = S.now;
	cpu_arm(c);
}

/* ---------------------------------------------------- VMs and tasks */

static int new_task(int kind, int vm, int vidx, u64 base_uw, int pattern,
		    u64 on, u64 off)
{
	struct task *t;
	int ci;

	S.t = xgrow(S.t, S.ntask, &S.captask, 64, sizeof(*S.t));
	t = &S.t[S.ntask];
	*t = (struct task){
		.kind = kind, .vm = vm, .vidx = vidx, .base_uw = base_uw,
		.pattern = pattern, .on_ns = on, .off_ns = off,
		.phase_off = below(phase_len()), .state = S_SLEEP,
		.cpu = NOTASK, .last_cpu = NOTASK, .qnext = NOTASK,
	};
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
int new_vm(int nvcpu, u64 base_uw, int pattern, u64 on, u64 off, int pkg,
	   u64 io_uw, u64 io_on, u64 io_off, u64 start, u64 stop)
{
	struct vm *v;
	int i, ti;

	S.vm = xgrow(S.vm, S.nvm, &S.capvm, 16, sizeof(*S.vm));
	v = &S.vm[S.nvm];
	memset(v, 0, sizeof(*v));
	v->nvcpu = nvcpu;
	v->first_task = S.ntask;
	start += S.lead;		/* after --idle-lead's idle host */
	if (stop)
		stop += S.lead;
	v->start = start;
	v->stop = stop;
	v->acct = xcalloc((size_t)NVR * (nvcpu + 1) * S.npkg,
			  sizeof(*v->acct));
	for (i = 0; i < nvcpu; i++) {
		ti = new_task(T_VCPU, S.nvm, i, base_uw, pattern, on, off);
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
	ev_push(start, EV_VMSTART, S.nvm, 0);
	if (stop)
		ev_push(stop, EV_VMSTOP, S.nvm, 0);
	return S.nvm++;
}

/* @n host tasks (daemons), 1 ms bursts every ~20 ms, at @base_uw. */
void host_noise(int n, u64 base_uw)
{
	while (n--)
		new_task(T_HOST, -1, 0, base_uw, P_RANDOM, 1 * MS, 19 * MS);
}

void vm_start(int vi)
{
	struct vm *v = &S.vm[vi];
	int i;

	v->started = true;
	for (i = 0; i < v->ntask; i++)
		task_wake(v->first_task + i);
}

void vm_stop(int vi)
{
	struct vm *v = &S.vm[vi];
	int i;

	for (i = 0; i < v->ntask; i++) {
		int ti = v->first_task + i;
		struct task *t = &S.t[ti];

		if (t->state == S_RUNNING) {
			int ci = t->cpu;

			cpu_switch(ci, q_pop_run(&S.cpu[ci]));
		} else if (t->state == S_QUEUED) {
			q_remove(&S.cpu[t->cpu], ti);
		}
		t->state = S_DEAD;
		t->cpu = NOTASK;
	}
	v->stopped = true;
}

