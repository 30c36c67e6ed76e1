// SPDX-License-Identifier: GPL-2.0
/*
 * vmrapl accounting core.  See vr_core.h for the model and the locking;
 * Documentation/design.rst for the reasoning.
 */
#include "vr_core.h"

#define VR_FJ_PER_J	1000000000000000ULL	/* uW * ns = 1e-15 J */
#define VR_UW_MAX	BIT_ULL(39)		/* 550 kW: uw << 24 fits */
#define VR_HW_STEP_NS	1000000ULL		/* RAPL update interval */
#define VR_LEARN_NS	(100 * VR_HW_STEP_NS)	/* idle run to learn from */

/* a * b / c with the remainder, for a quotient that fits in 64 bits. */
static u64 vr_mul_div_rem(u64 a, u64 b, u64 c, u64 *rem)
{
	u64 q = vr_mul_div(a, b, c);

	/* The true remainder is below c, so wrapping arithmetic is exact. */
	*rem = a * b - q * c;
	return q;
}

u64 vr_wrap_delta(u64 old, u64 cur, u32 width)
{
	u32 shift = 64 - width;

	if (!width || width >= 64)
		return cur - old;
	return ((cur << shift) - (old << shift)) >> shift;
}

u64 vr_units_to_eu(u64 units, u32 esu, u64 *carry)
{
	u32 sh;
	u64 t;

	if (esu <= VR_EU_SHIFT)
		return units << (VR_EU_SHIFT - esu);
	/* Finer than eu: keep the sub-eu remainder for the next delta. */
	sh = esu - VR_EU_SHIFT;
	t = units + *carry;
	*carry = t & ((1ULL << sh) - 1);
	return t >> sh;
}

u64 vr_eu_to_units(u64 eu, u32 esu)
{
	if (esu <= VR_EU_SHIFT)
		return eu >> (VR_EU_SHIFT - esu);
	return eu << (esu - VR_EU_SHIFT);
}

u64 vr_eu_to_uj(u64 eu)
{
	return vr_mul_div(eu, 1000000, 1ULL << VR_EU_SHIFT);
}

/* Energy of @uw over @ns in eu; *rem carries the sub-eu part (in fJ/2^24). */
u64 vr_energy_eu(u64 uw, u64 ns, u64 *rem)
{
	u64 r, q;

	if (uw > VR_UW_MAX)
		uw = VR_UW_MAX;
	q = vr_mul_div_rem(uw << VR_EU_SHIFT, ns, VR_FJ_PER_J, &r);
	*rem += r;
	if (*rem >= VR_FJ_PER_J) {
		*rem -= VR_FJ_PER_J;
		q++;
	}
	return q;
}

/*
 * Server parts whose DRAM domain counts in a fixed 15.3 uJ (2^-16 J) unit
 * whatever the ESU says: Haswell-X, Broadwell-X/D, Skylake-X, Ice Lake-X/D,
 * Knights Landing and Knights Mill (family 6).
 */
static bool vr_intel_fixed_dram_unit(u32 family, u32 model)
{
	static const u8 models[] = { 0x3f, 0x4f, 0x56, 0x55, 0x6a, 0x6c,
				     0x57, 0x85 };
	unsigned int i;

	if (family != 6)
		return false;
	for (i = 0; i < sizeof(models); i++)
		if (model == models[i])
			return true;
	return false;
}

/**
 * vr_rapl_decode() - domains, units and widths of a RAPL package
 * @v: vendor register set.
 * @r: what was read from the hardware.
 * @src: filled per domain.
 *
 * Return: mask of the domains present.  ESU is bits 12:8 of the unit
 * register; the counters are 32 bits wide.  AMD's core counters are per
 * core, not per package, so only its package counter is a domain here.
 */
u32 vr_rapl_decode(enum vr_rapl_vendor v, const struct vr_rapl_regs *r,
		   struct vr_dom_src *src)
{
	u32 esu = (r->unit >> 8) & 0x1f, doms = 0;

	if (!r->pkg)
		return 0;
	doms |= BIT(VR_DOM_PKG);
	if (v == VR_RAPL_INTEL && r->core)
		doms |= BIT(1);
	if (v == VR_RAPL_INTEL && r->dram)
		doms |= BIT(2);
	src[0].esu = esu;
	src[1].esu = esu;
	src[2].esu = vr_intel_fixed_dram_unit(r->family, r->model) ? 16 : esu;
	src[0].width = 32;
	src[1].width = 32;
	src[2].width = 32;
	return doms;
}

u64 vr_estimate_advance(struct vr_estimate *e, u64 dt_ns, u64 busy_ns)
{
	e->counter += vr_energy_eu(e->idle_uw, dt_ns, &e->rem);
	e->counter += vr_energy_eu(e->busy_uw, busy_ns, &e->rem);
	return e->counter;
}

void vr_pkg_init(struct vr_pkg *p, struct vr_cpu **cpus, unsigned int nr_cpus,
		 u64 period_ns, u64 max_power_uw)
{
	unsigned int d;

	vr_lock_init(&p->close_lock);
	vr_seq_init(&p->stat_seq);
	p->cpus = cpus;
	p->nr_cpus = nr_cpus;
	p->period_ns = period_ns;
	p->max_power_uw = max_power_uw;
	p->policy = VR_STATIC_OCCUPIED;
	p->learn_static = true;
	/* Hardware counters: on average half a step old when read. */
	p->lag_ns = VR_HW_STEP_NS / 2;
	for (d = 0; d < VR_NDOM; d++) {
		p->src[d].esu = VR_EU_SHIFT;
		p->src[d].width = 64;
	}
}

void vr_pkg_set_domain(struct vr_pkg *p, unsigned int dom, u32 esu, u32 width)
{
	p->src[dom].esu = esu;
	p->src[dom].width = width;
	p->carry[dom] = 0;
	p->have_raw &= ~(1U << dom);
	p->domains |= 1U << dom;
}

void vr_pkg_set_static(struct vr_pkg *p, u64 uw, enum vr_static_origin origin)
{
	p->p_static_uw = uw;
	p->static_origin = origin;
	/* Only a package whose static power is unknown or learned learns. */
	p->learn_static = origin == VR_STATIC_UNKNOWN ||
			  origin == VR_STATIC_LEARNED;
}

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

/* Energy of one domain since the last sample, in eu; false when unknown. */
static bool vr_dom_delta(struct vr_pkg *p, unsigned int d, u64 raw, u64 dt,
			 u64 *eu, bool *lost)
{
	const struct vr_dom_src *s = &p->src[d];
	u64 delta, max_eu, range_eu, slack, rem = 0;

	if (!(p->have_raw & (1U << d))) {
		p->raw[d] = raw;
		p->have_raw |= 1U << d;
		*eu = 0;
		return false;
	}
	delta = vr_wrap_delta(p->raw[d], raw, s->width);
	*eu = vr_units_to_eu(delta, s->esu, &p->carry[d]);

	if (s->width >= 64) {
		/* A 64-bit counter never wraps: backwards is a reset. */
		if (raw < p->raw[d])
			goto reset;
		goto out;
	}
	/*
	 * The counter steps about once a millisecond, so a delta can hold up
	 * to a step more than dt: allow two, plus two units of rounding.
	 */
	slack = s->esu <= VR_EU_SHIFT ? 2ULL << (VR_EU_SHIFT - s->esu) : 2;
	max_eu = vr_energy_eu(p->max_power_uw, dt + 2 * VR_HW_STEP_NS, &rem) +
		 slack;
	range_eu = s->width + VR_EU_SHIFT <= s->esu ? 1 :
		   s->width + VR_EU_SHIFT - s->esu < 64 ?
		   1ULL << (s->width + VR_EU_SHIFT - s->esu) : ~0ULL;
	if (max_eu >= range_eu) {
		/* Could have wrapped more than once: cannot tell. */
		p->overruns++;
		*lost = true;
	} else if (*eu > max_eu) {
		/* More than the package can draw: a backward jump. */
		goto reset;
	} else if (raw < p->raw[d] && d == VR_DOM_PKG) {
		p->wraps++;
	}
	goto out;

reset:
	/*
	 * A reset or resume, not a wrap: the counter restarted from zero at
	 * an unknown time.  What it counted since then is lost.
	 */
	p->resets++;
	p->carry[d] = 0;
	*eu = vr_units_to_eu(raw, s->esu, &p->carry[d]);
	*lost = true;
out:
	p->raw[d] = raw;
	return true;
}

/*
 * Learn the package's idle power from runs of epochs in which no CPU was
 * busy.  A single 1 ms epoch reads 0, 1 or 2 hardware steps, so only runs
 * of at least VR_LEARN_NS count: the step error is then below 1%.
 */
static void vr_learn_static(struct vr_pkg *p, u64 de, u64 dt, bool idle)
{
	u64 uw;

	if (!p->learn_static)
		return;
	if (!idle) {
		p->learn_eu = 0;
		p->learn_ns = 0;
		return;
	}
	p->learn_eu += de;
	p->learn_ns += dt;
	if (p->learn_ns < VR_LEARN_NS)
		return;
	uw = vr_mul_div(p->learn_eu, VR_FJ_PER_J >> VR_EU_SHIFT, p->learn_ns);
	p->learn_eu = 0;
	p->learn_ns = 0;
	if (p->static_origin == VR_STATIC_UNKNOWN || uw < p->p_static_uw) {
		p->p_static_uw = uw;
		p->static_origin = VR_STATIC_LEARNED;
	} else {
		/* A slowly rising minimum: robust to a noisy low run. */
		p->p_static_uw += (uw - p->p_static_uw) >> 6;
	}
}

/*
 * What one close hands out, per domain: to the accounts of this epoch
 * (cur), to those of the previous one (prev, the counter's lag), and what
 * each list was actually given.
 */
struct vr_split {
	u64 de[VR_NDOM];
	u64 cur[VR_NDOM];
	u64 prev[VR_NDOM];
	u64 given_cur[VR_NDOM];
	u64 given_prev[VR_NDOM];
};

/* The static part of this epoch, with the debt of earlier ones. */
static u64 vr_static_part(struct vr_pkg *p, u64 de, u64 dt)
{
	u64 want, cap, rem = 0;

	want = vr_energy_eu(p->p_static_uw, dt, &p->static_rem) +
	       p->static_debt;
	if (de >= want) {
		p->static_debt = 0;
		return want;
	}
	/*
	 * Owed by the next epochs: the hardware counter steps about once a
	 * millisecond, so a short epoch can read less than its static part
	 * and the next one more.  At most 10 ms of it is carried, so that a
	 * wrong P_static or a stalled counter cannot starve the dynamic part
	 * later.
	 */
	p->static_debt = want - de;
	cap = vr_energy_eu(p->p_static_uw, VR_NSEC_PER_SEC / 100, &rem);
	if (p->static_debt > cap)
		p->static_debt = cap;
	return de;
}

/*
 * Split the PKG delta by the static policy; other domains follow it.
 *
 * The counter read at a close lags the close by up to one hardware step
 * (about 1 ms): part of its dynamic energy was spent in the previous
 * epoch.  A share lag_ns / dt of it goes to the previous epoch's busy time
 * (all of it when nothing is busy now), so a short burst is not billed to
 * whatever runs after it.
 */
static void vr_split_policy(struct vr_pkg *p, struct vr_split *sp, u64 busy,
			    u64 dt, struct vr_pkg_stats *st)
{
	u64 de = sp->de[VR_DOM_PKG], stat, dyn, cap, stat_busy, lag, dprev;
	unsigned int d;

	stat = vr_static_part(p, de, dt);
	dyn = de - stat;
	st->static_e += stat;
	st->dynamic += dyn;

	cap = (u64)p->nr_online * dt;
	if (!busy)
		stat_busy = 0;
	else if (p->policy == VR_STATIC_BUSY)
		stat_busy = stat;
	else if (p->policy == VR_STATIC_NONE)
		stat_busy = 0;
	else	/* Each occupied CPU-ns carries P_static / ncpus. */
		stat_busy = cap ? vr_mul_div(stat, busy < cap ? busy : cap,
					     cap) : 0;

	dprev = 0;
	if (p->prev_busy && busy) {
		lag = p->lag_ns < dt ? p->lag_ns : dt;
		dprev = dt ? vr_mul_div(dyn, lag, dt) : 0;
	} else if (p->prev_busy) {
		/* Nothing runs now: the dynamic energy is a burst's tail. */
		dprev = dyn;
	}
	/* Dynamic energy with no busy time now or before it stays idle. */
	sp->prev[VR_DOM_PKG] = dprev;
	sp->cur[VR_DOM_PKG] = stat_busy + (busy ? dyn - dprev : 0);
	for (d = 1; d < VR_NDOM; d++) {
		sp->cur[d] = de ? vr_mul_div(sp->de[d], sp->cur[VR_DOM_PKG],
					     de) : 0;
		sp->prev[d] = de ? vr_mul_div(sp->de[d], sp->prev[VR_DOM_PKG],
					      de) : 0;
	}
}

/* Charge @a its cumulative-rounded share of @amount for @cum of @total. */
static void vr_give(struct vr_acct *a, const u64 *amount, u64 *given,
		    u64 cum, u64 total)
{
	unsigned int d;
	u64 s;

	for (d = 0; d < VR_NDOM; d++) {
		if (!amount[d])
			continue;
		/* Cumulative rounding: the shares add up exactly. */
		s = vr_mul_div(amount[d], cum, total);
		WRITE_ONCE(a->energy[d], a->energy[d] + s - given[d]);
		given[d] = s;
	}
}

/* Empty the lag list. */
static void vr_prev_clear(struct vr_pkg *p)
{
	struct vr_acct *a, *next;

	for (a = p->prev; a; a = next) {
		next = a->pprev;
		a->pprev = NULL;
		a->prev_ns = 0;
	}
	p->prev = NULL;
	p->prev_busy = 0;
}

/*
 * Resolve the accounts of the last busy epoch (the lag share), then those
 * that accrued in the closed epoch, which become the lag list.  Idle
 * epochs within two hardware steps of a busy one keep its list: a step the
 * counter skipped shows the tail of a burst one epoch later.  So do idle
 * epochs that are still repaying static debt: the counter lags the static
 * part too, and a burst's tail first repays it.
 */
static void vr_drain(struct vr_pkg *p, u32 slot, struct vr_split *sp,
		     u64 busy, bool keep, u64 now)
{
	struct vr_acct *a, *next, *prev = NULL;
	u64 cum = 0, r;

	for (a = p->prev; a; a = a->pprev) {
		cum += a->prev_ns;
		if (cum > p->prev_busy)
			cum = p->prev_busy;
		vr_give(a, sp->prev, sp->given_prev, cum, p->prev_busy);
	}
	if (busy || !keep || !p->lag_ns ||
	    (now - p->prev_t > 2 * VR_HW_STEP_NS && !p->static_debt))
		vr_prev_clear(p);

	/*
	 * Every CPU of the package accrues into the other slot since the
	 * fold, so nothing is added to @slot until the next close.
	 */
	a = READ_ONCE(p->pending[slot]);
	WRITE_ONCE(p->pending[slot], NULL);
	for (cum = 0; a; a = next) {
		next = a->pnext[slot];
		a->pnext[slot] = NULL;
		r = vr_atomic64_xchg(&a->pend[slot], 0);
		cum += r;
		if (cum > busy)		/* tracked time is busy time */
			cum = busy;
		vr_give(a, sp->cur, sp->given_cur, cum, busy);
		WRITE_ONCE(a->ns, a->ns + r);
		if (keep && r) {
			a->prev_ns = r;
			a->pprev = prev;
			prev = a;
		}
	}
	if (busy && keep && p->lag_ns) {
		p->prev = prev;
		p->prev_busy = busy;
		p->prev_t = now;
	} else if (prev) {
		/* No lag to share: the list is not kept. */
		p->prev = prev;
		p->prev_busy = busy;
		vr_prev_clear(p);
	}
}

/**
 * vr_pkg_forget() - drop accounts in [@lo, @hi) from the lag list
 * @p: the package.
 * @lo: first account of the range.
 * @hi: end of the range.
 *
 * Before such accounts are freed.  Their lag share goes to the host.
 * Context: close_lock held.
 */
void vr_pkg_forget(struct vr_pkg *p, const struct vr_acct *lo,
		   const struct vr_acct *hi)
{
	struct vr_acct **pp = &p->prev, *a;

	while ((a = *pp)) {
		if (a >= lo && a < hi) {
			*pp = a->pprev;
			a->pprev = NULL;
			a->prev_ns = 0;
		} else {
			pp = &a->pprev;
		}
	}
}

/**
 * vr_pkg_close_commit() - attribute the energy of the folded epoch
 * @p: package, after vr_pkg_close_fold().
 * @now: the time passed to vr_pkg_close_fold().
 * @raw: raw counter value per domain, in source units.
 * @valid: mask of domains whose @raw could be read.
 * @flags: VR_CLOSE_*.
 *
 * Context: close_lock held, interrupts disabled.
 */
void vr_pkg_close_commit(struct vr_pkg *p, u64 now, const u64 *raw,
			 u32 valid, unsigned int flags)
{
	struct vr_pkg_stats st[VR_NDOM] = {};
	struct vr_split sp = {};
	u64 busy = p->fold_busy, dt = now - p->t_last;
	bool lost = p->rebase || (flags & VR_CLOSE_LOST);
	u32 slot = p->seq & 1;
	unsigned int d;

	if ((s64)dt < 0)
		dt = 0;
	for (d = 0; d < VR_NDOM; d++) {
		if (!(p->domains & BIT(d)))
			continue;
		if (!(valid & BIT(d))) {
			/* Unreadable now: re-baseline at the next read. */
			p->have_raw &= ~BIT(d);
			if (d == VR_DOM_PKG)
				lost = true;
			continue;
		}
		/*
		 * A first PKG sample only sets the baseline: the interval is
		 * unknown, so nothing is split and no static debt is owed.
		 */
		if (!vr_dom_delta(p, d, raw[d], dt, &sp.de[d], &lost) &&
		    d == VR_DOM_PKG)
			lost = true;
	}

	if (!lost)
		vr_split_policy(p, &sp, busy, dt, &st[VR_DOM_PKG]);
	else
		p->static_debt = 0;	/* owed by an interval now unknown */
	vr_learn_static(p, sp.de[VR_DOM_PKG], dt, !lost && !busy);
	vr_drain(p, slot, &sp, busy, !lost, now);

	for (d = 0; d < VR_NDOM; d++) {
		st[d].sampled = sp.de[d];
		if (lost) {
			st[d].lost = sp.de[d];
			continue;
		}
		st[d].tracked = sp.given_cur[d] + sp.given_prev[d];
		st[d].host = sp.cur[d] - sp.given_cur[d] +
			     sp.prev[d] - sp.given_prev[d];
		st[d].idle = sp.de[d] - sp.cur[d] - sp.prev[d];
	}

	vr_seq_write_begin(&p->stat_seq);
	for (d = 0; d < VR_NDOM; d++) {
		p->st[d].sampled += st[d].sampled;
		p->st[d].static_e += st[d].static_e;
		p->st[d].dynamic += st[d].dynamic;
		p->st[d].tracked += st[d].tracked;
		p->st[d].host += st[d].host;
		p->st[d].idle += st[d].idle;
		p->st[d].lost += st[d].lost;
	}
	p->samples++;
	p->busy_ns += busy;
	if (!busy)
		p->epochs_idle++;
	vr_seq_write_end(&p->stat_seq);

	p->rebase = false;
	p->fold_busy = 0;
	p->t_last = now;
	p->seq++;
	WRITE_ONCE(p->last_close, now);
}

/**
 * vr_pkg_close_locked() - close the open epoch of @p: fold, read, commit
 * @p: the package.
 * @now: the end of the epoch, local clock.  A clock a little behind the
 *	package's (an unstable TSC) ends the epoch where it started.
 * @read: reads the counters; VR_READ_LOST in its answer settles the
 *	epoch as an unknown interval.
 * @ctx: passed to @read.
 *
 * Context: close_lock held, interrupts disabled.
 */
void vr_pkg_close_locked(struct vr_pkg *p, u64 now, vr_read_fn read,
			 void *ctx)
{
	u64 raw[VR_NDOM] = {}, busy;
	u32 valid;

	if ((s64)(now - p->t_last) < 0)
		now = p->t_last;
	busy = vr_pkg_close_fold(p, now);
	valid = read(ctx, raw, now - p->t_last, busy);
	vr_pkg_close_commit(p, now, raw, valid & ~VR_READ_LOST,
			    valid & VR_READ_LOST ? VR_CLOSE_LOST : 0);
}

/**
 * vr_pkg_try_close() - close the open epoch of @p unless another CPU is
 * @p: the package.
 * @now: the end of the epoch.
 * @read: reads the counters (see vr_pkg_close_locked()).
 * @ctx: passed to @read.
 *
 * A package with no CPU online has nobody to read it: it stays open until
 * one comes back (which re-baselines it).
 *
 * Context: interrupts disabled; never waits for close_lock.
 * Return: whether this call closed the epoch.
 */
bool vr_pkg_try_close(struct vr_pkg *p, u64 now, vr_read_fn read, void *ctx)
{
	bool closed = false;

	if (!vr_trylock(&p->close_lock))
		return false;
	if (p->nr_online) {
		vr_pkg_close_locked(p, now, read, ctx);
		closed = true;
	}
	vr_unlock(&p->close_lock);
	return closed;
}

void vr_pkg_read_stats(struct vr_pkg *p, struct vr_pkg_stats *st,
		       unsigned int ndom)
{
	unsigned int seq, d;

	do {
		seq = vr_seq_read_begin(&p->stat_seq);
		for (d = 0; d < ndom && d < VR_NDOM; d++)
			st[d] = p->st[d];
	} while (vr_seq_read_retry(&p->stat_seq, seq));
}
