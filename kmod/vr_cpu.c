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
}

static void vr_acct_accrue(struct vr_pkg *p, struct vr_acct *a, u32 slot,
			   u64 ns)
{
	struct vr_acct *head, *old;

	if (vr_atomic64_fetch_add(ns, &a->pend[slot]))
		return;
	/* First accrual of this epoch: put the account on the list. */
	head = READ_ONCE(p->pending[slot]);
	for (;;) {
		a->pnext[slot] = head;
		old = vr_cmpxchg_ptr(&p->pending[slot], head, a);
		if (old == head)
			break;
		head = old;
	}
}

/* Under c->lock: account [since, now) to the current state. */
static void vr_cpu_fold(struct vr_cpu *c, u64 now)
{
	u64 d;

	/* Another CPU's clock may be slightly behind: never go backwards. */
	if ((s64)(now - c->since) <= 0)
		return;
	d = now - c->since;
	c->since = now;
	if (!c->busy)
		return;
	c->busy_ns += d;
	if (c->cur)
		vr_acct_accrue(c->pkg, c->cur, c->seq & 1, d);
}

/**
 * vr_cpu_event() - the CPU switches task, or enters/leaves a guest
 * @c: this CPU.
 * @now: local clock.
 * @busy: the CPU runs something else than its idle task from now on.
 * @next: account to charge from now on, NULL for host or idle.
 *
 * Context: interrupts disabled, on the CPU of @c.
 */
void vr_cpu_event(struct vr_cpu *c, u64 now, bool busy, struct vr_acct *next)
{
	vr_lock(&c->lock);
	if (c->online)
		vr_cpu_fold(c, now);
	c->busy = busy;
	c->cur = busy ? next : NULL;
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
	}
	vr_unlock(&c->lock);
}

void vr_cpu_online(struct vr_cpu *c, u64 now, bool busy)
{
	struct vr_pkg *p = c->pkg;

	vr_lock(&c->lock);
	c->since = now;
	c->busy_ns = 0;
	c->busy = busy;
	c->cur = NULL;
	c->seq = p->seq;
	c->online = true;
	vr_unlock(&c->lock);
	p->nr_online++;
}

void vr_cpu_offline(struct vr_cpu *c, u64 now)
{
	struct vr_pkg *p = c->pkg;

	vr_lock(&c->lock);
	/*
	 * Its busy time stays in the open epoch and is charged by the next
	 * close; from now on it accrues nothing.
	 */
	vr_cpu_fold(c, now);
	p->fold_busy += c->busy_ns;
	c->busy_ns = 0;
	c->cur = NULL;
	c->busy = false;
	c->online = false;
	vr_unlock(&c->lock);
	p->nr_online--;
}

/**
 * vr_pkg_close_fold() - end the open epoch on every CPU of @p
 * @p: the package.
 * @now: the end of the epoch, local clock.
 *
 * Context: close_lock held, interrupts disabled.
 * Return: busy CPU-ns of the epoch.
 */
u64 vr_pkg_close_fold(struct vr_pkg *p, u64 now)
{
	u64 busy = p->fold_busy;
	unsigned int i;

	for (i = 0; i < p->nr_cpus; i++) {
		struct vr_cpu *c = p->cpus[i];

		if (!c)
			continue;
		vr_lock(&c->lock);
		if (c->online) {
			vr_cpu_fold(c, now);
			busy += c->busy_ns;
			c->busy_ns = 0;
			c->seq = p->seq + 1;
		}
		vr_unlock(&c->lock);
	}
	p->fold_busy = busy;
	return busy;
}

