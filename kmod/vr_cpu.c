// SPDX-License-Identifier: GPL-2.0
/*
 * vmrapl accounting core, the CPU side: each CPU's scheduling events
 * accrue busy time to the account that runs (vr_cpu_event()), and the
 * closer of a package folds every CPU's open interval into the epoch
 * (vr_pkg_close_fold()).  Locking in vr_core.h.
 */
#include "vr_core.h"

void vr_cpu_init(struct vr_cpu *c, struct vr_pkg *p)
{
	vr_lock_init(&c->lock);
	c->pkg = p;
	vr_cpu_gate_set(c);
}

/* First accrual of @a in this epoch: put the account on the list. */
static vr_noinline void vr_acct_list(struct vr_pkg *p, struct vr_acct *a,
				     u32 slot)
{
	struct vr_acct *head, *old;

	head = READ_ONCE(p->pending[slot]);
	for (;;) {
		a->pnext[slot] = head;
		old = vr_cmpxchg_ptr(&p->pending[slot], head, a);
		if (old == head)
			break;
		head = old;
	}
}

/* Accrue to @a; true when it is its first accrual of the epoch. */
static __always_inline bool vr_acct_accrue(struct vr_acct *a, u32 slot,
					   u64 ns, u64 e)
{
	if (e)
		vr_atomic64_fetch_add(e, &a->pend_e[slot]);
	return !vr_atomic64_fetch_add(ns, &a->pend[slot]);
}

/* The per-core energy weight of @d busy ns on @c, in eu. */
static u64 vr_cpu_weigh(const struct vr_cpu *c, u64 d)
{
	if (d < (1ULL << 32))	/* vr_core_weight() caps core_w below 2^32 */
		return (d * c->core_w) >> VR_CORE_W_SHIFT;
	return vr_mul_div(d, c->core_w, 1ULL << VR_CORE_W_SHIFT);
}

/*
 * Under c->lock: the per-core weight of the CPU's busy time in the open
 * epoch.  The weight changes only at the CPU's own samples, which add up
 * the time before them (@busy_e, up to @core_wns of @busy_ns), so the
 * switch path weighs only tracked time, for its account.
 */
static u64 vr_cpu_busy_e(const struct vr_cpu *c)
{
	if (!c->core_w)
		return c->busy_e;
	return c->busy_e + vr_mul_div(c->busy_ns - c->core_wns, c->core_w,
				      1ULL << VR_CORE_W_SHIFT);
}

/*
 * Under c->lock: account [since, now) to the current state.  Returns the
 * account that accrued for the first time in the epoch, which the caller
 * puts on the pending list (vr_acct_list()) before it unlocks, or NULL.
 * Inline in vr_cpu_event(), the switch path; vr_cpu_fold() elsewhere.
 */
static __always_inline struct vr_acct *vr_cpu_fold_inline(struct vr_cpu *c,
							  u64 now)
{
	u64 d, e;

	/* Another CPU's clock may be slightly behind: never go backwards. */
	if ((s64)(now - c->since) <= 0)
		return NULL;
	d = now - c->since;
	c->since = now;
	if (!c->busy)
		return NULL;
	c->busy_ns += d;
	if (!c->cur)
		return NULL;
	e = c->core_w ? vr_cpu_weigh(c, d) : 0;
	return vr_acct_accrue(c->cur, c->seq & 1, d, e) ? c->cur : NULL;
}

static vr_noinline void vr_cpu_fold(struct vr_cpu *c, u64 now)
{
	struct vr_acct *first = vr_cpu_fold_inline(c, now);

	if (first)
		vr_acct_list(c->pkg, first, c->seq & 1);
}

/*
 * Under c->lock, on the CPU of @c: sample its own core's energy counter
 * (the closer asked for it, vr_pkg_close_fold()) and weigh its busy time
 * from now on by the window's energy per busy ns.  A window with no busy
 * time, or whose energy is unknown (a reset, a read that failed), keeps
 * the weight it had.
 */
static void vr_cpu_core_sample(struct vr_cpu *c, u64 now)
{
	const struct vr_core_src *s = &c->pkg->core;
	u64 raw, eu, sib = 0, own = c->core_busy + c->busy_ns, busy = own;
	u64 cred;

	WRITE_ONCE(c->core_due, false);
	vr_cpu_gate_set(c);
	/* The open epoch's time so far keeps the weight it had. */
	c->busy_e = vr_cpu_busy_e(c);
	c->core_wns = c->busy_ns;
	/* What the weights credited to the window that ends here. */
	cred = c->core_cred + c->busy_e;
	c->core_cred = -c->busy_e;	/* plus @busy_e when folded: 0 */
	if (!s->read)
		return;
	if (!s->read(s->ctx, c, &raw)) {
		c->core_have = false;
		c->core_w = 0;
		c->core_wok = false;
		return;
	}
	if (c->core_have && s->kind == VR_CORE_CYCLES) {
		/* 64-bit cycles: backwards is a reset (resume), unknown. */
		if (raw >= c->core_raw && busy) {
			c->core_w = vr_core_weight(raw - c->core_raw, busy);
			c->core_wok = true;
		}
	} else {
		/*
		 * An SMT sibling shares the core's counter: the core's energy
		 * is over both threads' busy time.  The sibling's is what its
		 * closer folded, up to an epoch behind; consecutive windows
		 * add up to all of it.
		 */
		if (c->sib) {
			sib = READ_ONCE(c->sib->busy_done);
			busy += sib - c->core_sib0;
			c->core_sib0 = sib;
		}
		if (c->core_have &&
		    vr_core_delta(c->core_raw, raw, s->width, s->esu,
				  now - c->core_t, c->pkg->max_power_uw,
				  &c->core_carry, &eu)) {
			if (busy) {
				c->core_w = vr_core_weight(eu, busy);
				c->core_wok = true;
			}
			/*
			 * With a sibling, this thread's share of the window's
			 * energy (half of it when neither ran): the two shares
			 * add up to the core's, up to how their windows differ.
			 */
			if (c->sib)
				eu = busy ? vr_mul_div(eu, own, busy) : eu / 2;
			c->core_corr += (s64)(eu - cred);
		}
	}
	c->core_raw = raw;
	c->core_t = now;
	c->core_busy = -c->busy_ns;	/* plus @busy_ns: 0 */
	c->core_have = true;
}

/*
 * Under c->lock: from @now the CPU runs @next, or the host (NULL), when
 * @busy, else idles.  Going from idle to busy or back starts a run.  The
 * gate is the new state's alone: a per-core sample still due is taken
 * next (vr_cpu_event_rare()), and that sets the gate again.
 */
static inline void vr_cpu_set(struct vr_cpu *c, u64 now, bool busy,
			      struct vr_acct *next)
{
	if (busy != c->busy) {
		c->last_run = now - c->turn;
		c->turn = now;
	}
	c->busy = busy;
	if (busy) {
		c->cur = next;
		WRITE_ONCE(c->gate, next ? VR_GATE_SLOW : 0);
	} else {
		c->cur = NULL;
		WRITE_ONCE(c->gate, VR_GATE_IDLE);
	}
}

/*
 * Under c->lock, the end of vr_cpu_event() when it has more to do: put
 * the account that accrued first on the pending list, and take the
 * per-core sample the closer asked for (it does not depend on what runs
 * from now on, only on the busy time folded so far).
 */
static vr_noinline void vr_cpu_event_rare(struct vr_cpu *c, u64 now,
					  struct vr_acct *first)
{
	if (first)
		vr_acct_list(c->pkg, first, c->seq & 1);
	if (c->core_due)
		vr_cpu_core_sample(c, now);
}

/**
 * vr_cpu_event() - the CPU switches task, or enters/leaves a guest
 * @c: this CPU.
 * @now: local clock.
 * @busy: the CPU runs something else than its idle task from now on.
 * @next: account to charge from now on, NULL for host or idle.
 *
 * When the closer asked for it (@c->core_due), this is where the CPU
 * samples its own per-core energy counter: locally, at most once per
 * VR_CORE_WINDOW_NS (only an online CPU is ever asked).
 *
 * Context: interrupts disabled, on the CPU of @c.
 */
void vr_cpu_event(struct vr_cpu *c, u64 now, bool busy, struct vr_acct *next)
{
	struct vr_acct *first = NULL;

	vr_lock(&c->lock);
	if (c->online)
		first = vr_cpu_fold_inline(c, now);
	vr_cpu_set(c, now, busy, next);
	if (unlikely(first || c->core_due))
		vr_cpu_event_rare(c, now, first);
	vr_unlock(&c->lock);
}

/**
 * vr_cpu_core_poll() - take a per-core sample the closer asked for, now
 * @c: this CPU.
 * @now: local clock.
 *
 * For a CPU that runs on without switching: a vCPU that stays in guest
 * mode but for its exits (the host tick's interrupt, at least) would
 * otherwise never be sampled again, and its busy time would keep the
 * weight its last switch left, none after a single switch to it.
 * Nothing changes but the sample: the CPU goes on charging what it
 * charged.  Call it through vr_cpu_poll().
 *
 * Context: interrupts disabled, on the CPU of @c.
 */
void vr_cpu_core_poll(struct vr_cpu *c, u64 now)
{
	vr_lock(&c->lock);
	if (c->online && c->core_due) {
		vr_cpu_fold(c, now);
		vr_cpu_core_sample(c, now);
	}
	vr_unlock(&c->lock);
}

/**
 * vr_cpu_purge() - stop charging accounts in [@lo, @hi) on a CPU
 * @c: the CPU.
 * @now: local clock.
 * @lo: first account of the range.
 * @hi: end of the range.
 *
 * Used before such accounts are freed: time folded so far stays theirs,
 * later time of the CPU is host time until its next event.
 * Context: interrupts disabled.
 */
void vr_cpu_purge(struct vr_cpu *c, u64 now, const struct vr_acct *lo,
		  const struct vr_acct *hi)
{
	vr_lock(&c->lock);
	if (c->cur >= lo && c->cur < hi) {
		if (c->online)
			vr_cpu_fold(c, now);
		c->cur = NULL;
		vr_cpu_gate_set(c);
	}
	vr_unlock(&c->lock);
}

/**
 * vr_cpu_set_sibling() - @c shares its core's energy counter with @sib
 * @c: the CPU.
 * @sib: its SMT sibling (NULL: none); its state is never freed.
 *
 * Context: close_lock held (the engine: before @c comes online).
 */
void vr_cpu_set_sibling(struct vr_cpu *c, struct vr_cpu *sib)
{
	vr_lock(&c->lock);
	c->sib = sib;
	c->core_sib0 = sib ? READ_ONCE(sib->busy_done) : 0;
	vr_unlock(&c->lock);
}

void vr_cpu_online(struct vr_cpu *c, u64 now, bool busy)
{
	struct vr_pkg *p = c->pkg;

	vr_lock(&c->lock);
	c->since = now;
	c->turn = now;
	c->last_run = 0;
	c->busy_ns = 0;
	c->busy = busy;
	c->cur = NULL;
	c->seq = p->seq;
	c->online = true;
	c->busy_e = 0;
	c->core_wns = 0;
	c->core_busy = 0;
	c->core_have = false;
	c->core_carry = 0;
	c->core_cred = 0;
	c->core_corr = 0;
	/* Its first event takes the per-core baseline. */
	WRITE_ONCE(c->core_due, !!p->core.read);
	vr_cpu_gate_set(c);
	vr_unlock(&c->lock);
	p->nr_online++;
}

void vr_cpu_offline(struct vr_cpu *c, u64 now)
{
	struct vr_pkg *p = c->pkg;
	u64 e;

	vr_lock(&c->lock);
	/*
	 * Its busy time stays in the open epoch and is charged by the next
	 * close; from now on it accrues nothing.
	 */
	vr_cpu_fold(c, now);
	p->fold_busy += c->busy_ns;
	e = vr_cpu_busy_e(c);
	p->fold_busy_e += e;
	c->core_cred += e;
	p->fold_core_corr += c->core_corr;
	c->core_corr = 0;
	if (!c->core_wok)
		p->fold_busy_nw += c->busy_ns - c->core_wns;
	c->core_busy += c->busy_ns;
	WRITE_ONCE(c->busy_done, c->busy_done + c->busy_ns);
	c->busy_ns = 0;
	c->busy_e = 0;
	c->core_wns = 0;
	WRITE_ONCE(c->core_due, false);
	c->cur = NULL;
	c->busy = false;
	c->online = false;
	vr_cpu_gate_set(c);
	vr_unlock(&c->lock);
	p->nr_online--;
}

/*
 * Under c->lock: how long @c was busy in the counter's lag window before
 * @now, of width @win (2 lag_ns), weighted as the read at @now misses it.
 * The counter lags the read by l, uniform over [0, @win): a run of d ns
 * that ended a ns before @now (a = 0: still running) loses
 * min(max(l - a, 0), d) of its time to the next read, on average
 * e^2 / (2 @win) for e = @win - a if d >= e, else d (2 e - d) / (2 @win).
 * Returned times 2 @win (ns^2): @win^2 for a CPU busy all along, 0 for
 * one that has just woken (the close of its wake: nothing of its run
 * can be missed yet) or went idle before the window.
 */
static u64 vr_cpu_tail(const struct vr_cpu *c, u64 now, u64 win)
{
	u64 e, d;

	if (c->busy) {
		e = win;
		d = (s64)(now - c->turn) > 0 ? now - c->turn : 0;
	} else if ((s64)(c->turn - (now - win)) > 0 &&
		   (s64)(now - c->turn) >= 0) {
		e = c->turn - (now - win);
		d = c->last_run;
	} else {
		return 0;
	}
	return d >= e ? e * e : d * (2 * e - d);
}

/*
 * Under c->lock: the last stretch @c is known to have idled, [*@s, *@e):
 * up to @now if it idles, else the idle time before its run (none after
 * online, when that is unknown).  vr_cpu_set() keeps both ends: @turn and
 * @last_run, the length of the state @turn ended.
 */
static void vr_cpu_idle_span(const struct vr_cpu *c, u64 now, u64 *s, u64 *e)
{
	if (!c->busy) {
		*s = c->turn;
		*e = now;
	} else {
		*s = c->turn - c->last_run;
		*e = c->last_run ? c->turn : *s;
	}
}

/**
 * vr_pkg_close_fold() - end the open epoch on every CPU of @p
 * @p: the package.
 * @now: the end of the epoch, local clock.
 *
 * Also sums the CPUs' per-core energy weight (@p->fold_busy_e) and their
 * samples' corrections (@p->fold_core_corr), measures how long they were
 * busy in the counter's lag window before @now (@p->fold_tail,
 * vr_cpu_tail(); vr_busy_tail() takes it from there), how long every CPU
 * idled at once in the epoch (@p->fold_idle: the intersection of each
 * CPU's last known idle stretch, vr_cpu_idle_span(), with the epoch; a
 * lower bound, exact for the stretch a lazy epoch ends with or the one a
 * single wake ended), and asks
 * each CPU whose per-core sample is VR_CORE_WINDOW_NS old to take a new
 * one at its next event: the closer never reads another CPU's counter.
 *
 * Context: close_lock held, interrupts disabled.
 * Return: busy CPU-ns of the epoch.
 */
u64 vr_pkg_close_fold(struct vr_pkg *p, u64 now)
{
	u64 busy = p->fold_busy, busy_e = p->fold_busy_e;
	u64 busy_nw = p->fold_busy_nw, e, tail = 0, win = 2 * p->lag_ns;
	u64 lo = p->t_last, hi = now, s, end;
	s64 corr = p->fold_core_corr;
	bool core = p->core.read;
	unsigned int i;

	for (i = 0; i < p->nr_cpus; i++) {
		struct vr_cpu *c = p->cpus[i];

		if (!c)
			continue;
		vr_lock(&c->lock);
		if (c->online) {
			tail += vr_cpu_tail(c, now, win);
			vr_cpu_idle_span(c, now, &s, &end);
			if ((s64)(s - lo) > 0)
				lo = s;
			if ((s64)(end - hi) < 0)
				hi = end;
			vr_cpu_fold(c, now);
			busy += c->busy_ns;
			if (core) {
				e = vr_cpu_busy_e(c);
				busy_e += e;
				c->core_cred += e;
				corr += c->core_corr;
				c->core_corr = 0;
				if (!c->core_wok)
					busy_nw += c->busy_ns - c->core_wns;
				c->core_busy += c->busy_ns;
				WRITE_ONCE(c->busy_done,
					   c->busy_done + c->busy_ns);
				c->busy_e = 0;
				c->core_wns = 0;
				if (!c->core_have ||
				    (s64)(now - c->core_t) >=
				    (s64)VR_CORE_WINDOW_NS) {
					WRITE_ONCE(c->core_due, true);
					vr_cpu_gate_set(c);
				}
			}
			c->busy_ns = 0;
			c->seq = p->seq + 1;
		}
		vr_unlock(&c->lock);
	}
	p->fold_busy = busy;
	p->fold_busy_e = busy_e;
	p->fold_busy_nw = busy_nw;
	p->fold_core_corr = corr;
	p->fold_tail = tail;
	p->fold_idle = (s64)(hi - lo) > 0 ? hi - lo : 0;
	p->fold_idle_end = hi;
	return busy;
}

