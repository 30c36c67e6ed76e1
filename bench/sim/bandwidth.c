// SPDX-License-Identifier: GPL-2.0
/*
 * vrsim: CFS bandwidth control of a VM's cgroup (cgroup v2 cpu.max), as
 * kernel/sched/fair.c and core.c enforce it, written here from the
 * kernel's behaviour (nothing of it is shared with the controller in
 * userspace/common/limit.c, which only sees what a daemon sees: energy,
 * CPU time, throttled time).
 *
 * A VM with a quota has a pool of runtime, refilled to the quota at every
 * period (no burst: min(pool + quota, quota)) by a period timer started
 * at the first write.  Every thread of the VM (its vCPUs and its I/O
 * thread) draws from it:
 *
 *   - each CPU holds a local runtime of its own for the VM (the group's
 *     cfs_rq on that CPU); CPU time run there is charged to it exactly;
 *   - when it is used up, the CPU draws a slice from the pool: enough to
 *     bring it to sched_cfs_bandwidth_slice (5 ms), or what the pool has;
 *   - the check is made at the scheduler's tick (HZ=250: every 4 ms, on
 *     every CPU at once) and when a thread of the VM is picked, so a
 *     running thread overruns its local runtime until the next tick; the
 *     overrun is a debt the CPU repays from its next draw;
 *   - when the draw leaves nothing (the pool is empty), the thread is
 *     throttled: taken off its CPU (whose next task runs, or it idles),
 *     and so is every thread of the VM that is picked or wakes there
 *     until the pool is refilled: at the next period, or when a CPU that
 *     the VM left gives its local runtime back (all of it but 1 ms, unless
 *     the period ends within 2 ms) and the pool then holds more than a
 *     slice, 5 ms later (the slack timer);
 *   - a write of cpu.max (tg_set_cfs_bandwidth()) refills the pool to the
 *     new quota, sets every CPU's local runtime to 0 (debts forgiven,
 *     slices dropped) and unthrottles every thread; it does not move an
 *     active period timer.  "max" turns it all off.
 *
 * Not modelled: the period timer's stop when a whole period passes with
 * no draw and nothing throttled (an always-busy VM never lets it stop;
 * after such a stop the kernel restarts it at the next draw, at a phase
 * of its own: struct bw's phase_ns starts the timer at any phase, which
 * limitbench.c's variant "timer at a random phase" uses to see what that
 * does), the hierarchy above the VM's group, and the throttled threads'
 * wait in the CPU's queue (a throttled thread is placed anew, as a waking
 * one, when it is unthrottled).
 */
#include "vrsim.h"

#define BW_SLICE_NS	(5 * MS)	/* sched_cfs_bandwidth_slice_us */
#define BW_MIN_LOCAL_NS	(1 * MS)	/* min_cfs_rq_runtime */
#define BW_MIN_EXPIRE	(2 * MS)	/* min_bandwidth_expiration */
#define BW_SLACK_NS	(5 * MS)	/* cfs_bandwidth_slack_period */

static struct bw *vm_bw(int vi)
{
	struct bw *b = S.vm[vi].bw;

	return b && b->on ? b : NULL;
}

bool bw_on(const struct task *t)
{
	return t->kind != T_HOST && vm_bw(t->vm);
}

/* From task_accrue(): @ran ns of @t on CPU @ci, charged to that CPU. */
void bw_charge(const struct task *t, int ci, u64 ran)
{
	struct bw *b = t->kind == T_HOST ? NULL : vm_bw(t->vm);

	if (b)
		b->local[ci] -= (long long)ran;
}

/*
 * The instant the quota of the task running on @c is next checked: the
 * first scheduler tick at or after its CPU's local runtime runs out
 * (the runtime since run_start not yet charged); ~0 without a quota.
 */
u64 bw_check_at(const struct cpu *c)
{
	const struct task *t;
	long long left;
	u64 out;

	if (c->cur == NOTASK || !bw_on(&S.t[c->cur]))
		return ~0ULL;
	t = &S.t[c->cur];
	left = S.vm[t->vm].bw->local[c - S.cpu] -
	       (long long)(S.now - t->run_start);
	out = left > 0 ? S.now + (u64)left : S.now;
	out = (out + HZ_TICK_NS - 1) / HZ_TICK_NS * HZ_TICK_NS;
	return out;
}

/*
 * May task @ti (running on, or about to run on, CPU @ci) run there now?
 * A CPU whose local runtime is used up draws from the pool first
 * (assign_cfs_rq_runtime()); false: nothing left, throttle it.
 */
bool bw_runnable(int ti, int ci)
{
	struct task *t = &S.t[ti];
	struct bw *b = t->kind == T_HOST ? NULL : vm_bw(t->vm);
	long long *loc;
	u64 amount;

	if (!b)
		return true;
	if (t->state == S_RUNNING)
		task_accrue(t);
	loc = &b->local[ci];
	if (*loc > 0)
		return true;
	amount = (u64)((long long)BW_SLICE_NS - *loc);
	if (amount > b->pool_ns)
		amount = b->pool_ns;
	b->pool_ns -= amount;
	*loc += (long long)amount;
	return *loc > 0;
}

/* Task @ti, off every CPU and queue, waits for its VM's runtime. */
void bw_park(int ti)
{
	struct task *t = &S.t[ti];

	t->state = S_THROTTLED;
	t->cpu = NOTASK;
	t->thr_at = S.now;
}

/* Every throttled thread of VM @vi is placed again (unthrottled). */
static void bw_unthrottle(int vi)
{
	struct vm *v = &S.vm[vi];
	struct bw *b = v->bw;
	int i;

	for (i = 0; i < v->ntask; i++) {
		int ti = v->first_task + i;
		struct task *t = &S.t[ti];

		if (t->state != S_THROTTLED)
			continue;
		b->throttled_ns += S.now - t->thr_at;
		t->state = S_SLEEP;
		task_place(ti);
	}
}

static bool bw_any_throttled(int vi)
{
	const struct vm *v = &S.vm[vi];
	int i;

	for (i = 0; i < v->ntask; i++)
		if (S.t[v->first_task + i].state == S_THROTTLED)
			return true;
	return false;
}

/* Time VM @vi's threads have spent throttled (cpu.stat throttled_usec). */
u64 bw_throttled_ns(int vi)
{
	const struct vm *v = &S.vm[vi];
	u64 ns;
	int i;

	if (!v->bw)
		return 0;
	ns = v->bw->throttled_ns;
	for (i = 0; i < v->ntask; i++) {
		const struct task *t = &S.t[v->first_task + i];

		if (t->state == S_THROTTLED)
			ns += S.now - t->thr_at;
	}
	return ns;
}

/* Re-arms the CPUs that run a thread of VM @vi (its local runtime moved). */
static void bw_rearm(int vi)
{
	int ci;

	for (ci = 0; ci < S.ncpu_total; ci++)
		if (S.cpu[ci].cur != NOTASK && S.t[S.cpu[ci].cur].kind !=
		    T_HOST && S.t[S.cpu[ci].cur].vm == vi)
			cpu_arm(&S.cpu[ci]);
}

/*
 * A write of VM @vi's cpu.max: @quota_ns per @period_ns, or BW_NO_QUOTA
 * ("max").  The runtime its running threads used so far is charged
 * first.
 */
void bw_set(int vi, u64 quota_ns, u64 period_ns)
{
	struct vm *v = &S.vm[vi];
	struct bw *b;
	int i;

	if (!v->bw)
		v->bw = xcalloc(1, sizeof(*v->bw));
	b = v->bw;
	for (i = 0; i < v->ntask; i++)
		task_accrue(&S.t[v->first_task + i]);
	b->writes++;
	if (quota_ns == BW_NO_QUOTA) {
		if (!b->on)
			return;
		b->on = false;
		b->timer_ver++;
		b->slack_ver++;
		b->slack_armed = false;
		bw_unthrottle(vi);
		bw_rearm(vi);
		return;
	}
	b->quota_ns = quota_ns;
	b->pool_ns = quota_ns;
	memset(b->local, 0, sizeof(b->local));
	if (!b->on || b->period_ns != period_ns) {
		/* the period timer starts (at its phase, --limit-phase) */
		b->period_ns = period_ns;
		b->timer_ver++;
		b->period_end = S.now + period_ns - b->phase_ns % period_ns;
		ev_push(b->period_end, EV_BWPERIOD, vi, b->timer_ver);
	}
	b->on = true;
	bw_unthrottle(vi);
	bw_rearm(vi);
}

/* The period timer of VM @vi: the pool refilled, the throttled released. */
void bw_period(int vi, u32 ver)
{
	struct bw *b = S.vm[vi].bw;

	if (!b || !b->on || ver != b->timer_ver)
		return;
	b->nr_periods++;
	b->pool_ns = b->quota_ns;
	b->period_end = S.now + b->period_ns;
	ev_push(b->period_end, EV_BWPERIOD, vi, b->timer_ver);
	if (bw_any_throttled(vi)) {
		b->nr_throttled++;
		bw_unthrottle(vi);
	}
}

/* The slack timer of VM @vi: returned runtime goes to throttled threads. */
void bw_slack(int vi, u32 ver)
{
	struct bw *b = S.vm[vi].bw;

	if (!b || !b->on || ver != b->slack_ver)
		return;
	b->slack_armed = false;
	if (b->pool_ns > BW_SLICE_NS && bw_any_throttled(vi))
		bw_unthrottle(vi);
}

/*
 * A thread of VM @vi left CPU @ci (it slept or was throttled): if no
 * thread of the VM is left there, the CPU gives its local runtime back
 * to the pool but for 1 ms (return_cfs_rq_runtime()).
 */
void bw_left(int ci, int vi)
{
	struct bw *b = vm_bw(vi);
	const struct cpu *c = &S.cpu[ci];
	int ti;

	if (!b)
		return;
	if (c->cur != NOTASK && S.t[c->cur].kind != T_HOST &&
	    S.t[c->cur].vm == vi)
		return;
	for (ti = c->qhead; ti != NOTASK; ti = S.t[ti].qnext)
		if (S.t[ti].kind != T_HOST && S.t[ti].vm == vi)
			return;
	if (b->local[ci] <= (long long)BW_MIN_LOCAL_NS ||
	    b->period_end - S.now < BW_MIN_EXPIRE)
		return;
	b->pool_ns += (u64)(b->local[ci] - (long long)BW_MIN_LOCAL_NS);
	b->local[ci] = BW_MIN_LOCAL_NS;
	if (b->pool_ns > BW_SLICE_NS && !b->slack_armed &&
	    bw_any_throttled(vi)) {
		b->slack_armed = true;
		ev_push(S.now + BW_SLACK_NS, EV_BWSLACK, vi, ++b->slack_ver);
	}
}
