// SPDX-License-Identifier: GPL-2.0
/*
 * vmrapl accounting core, the package side: a package's setup and the
 * close of its epochs, which samples the energy and splits it exactly
 * (vr_cpu.c is the CPU side, vr_static.c the static power, vr_units.c the
 * arithmetic).  See vr_core.h for the model and the locking,
 * Documentation/design.rst for the reasoning.
 */
#include "vr_core.h"
#include "vr_lag.h"

const char *const vr_dom_names[VR_NDOM] = { "pkg", "core", "dram" };
const char *const vr_policy_names[VR_STATIC_NR] = {
	"occupied", "busy", "none"
};

const char *const vr_core_kind_names[VR_CORE_KIND_NR] = {
	"none", "energy", "cycles"
};

const char *const vr_origin_names[VR_STATIC_ORIGIN_NR] = {
	"unknown", "param", "learned", "model", "fit", "core",
	"host"
};

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
	/*
	 * Hardware counters: on average half a step old when read, with the
	 * default step until vr_pkg_set_step() gives the measured one.
	 */
	p->step_ns = VR_STEP_DEFAULT_NS;
	p->lag_ns = VR_STEP_DEFAULT_NS / 2;
	for (d = 0; d < VR_NDOM; d++) {
		p->src[d].esu = VR_EU_SHIFT;
		p->src[d].width = 64;
		vr_step_default(&p->step[d]);
	}
}

/**
 * vr_pkg_set_step() - a counter's update interval, measured or not
 * @p: the package.
 * @dom: its domain (VR_DOM_CORE: PP0, or the per-core counter).
 * @st: the interval (vr_step_estimate()).
 *
 * The PKG counter's sets the lag correction's: its mean lag
 * (vr_step_lag_ns()) for a lagging source (lag_ns not 0), and the step
 * that bounds a delta and keeps the lag list.  Not measured: the
 * default (VR_STEP_DEFAULT_NS).
 * Context: close_lock held.
 */
void vr_pkg_set_step(struct vr_pkg *p, unsigned int dom,
		     const struct vr_step *st)
{
	vr_lock_held(&p->close_lock);
	if (dom >= VR_NDOM)
		return;
	vr_seq_write_begin(&p->stat_seq);
	p->step[dom] = *st;
	vr_seq_write_end(&p->stat_seq);
	if (dom != VR_DOM_PKG)
		return;
	p->step_ns = st->interval_ns ? st->interval_ns : VR_STEP_DEFAULT_NS;
	/* Read locklessly by debugfs. */
	if (p->lag_ns)
		WRITE_ONCE(p->lag_ns, vr_step_lag_ns(st));
}

/* Copy the update interval of every domain (@st: VR_NDOM entries). */
void vr_pkg_read_step(struct vr_pkg *p, struct vr_step *st)
{
	unsigned int seq, d;

	do {
		seq = vr_seq_read_begin(&p->stat_seq);
		for (d = 0; d < VR_NDOM; d++)
			st[d] = p->step[d];
	} while (vr_seq_read_retry(&p->stat_seq, seq));
}

void vr_pkg_set_domain(struct vr_pkg *p, unsigned int dom, u32 esu, u32 width)
{
	p->src[dom].esu = esu;
	p->src[dom].width = width;
	p->carry[dom] = 0;
	p->have_raw &= ~(1U << dom);
	p->domains |= 1U << dom;
}

/**
 * vr_pkg_set_core() - weigh the dynamic split by a per-core counter
 * @p: the package, before its CPUs come online.
 * @kind: VR_CORE_ENERGY (charged as energy) or VR_CORE_CYCLES (a weight).
 * @read: reads the calling CPU's own counter (vr_core_read_fn).
 * @ctx: passed to @read.
 * @esu: unit of an energy counter, 1/2^esu J (unused for cycles).
 * @width: counter bits.
 */
void vr_pkg_set_core(struct vr_pkg *p, enum vr_core_kind kind,
		     vr_core_read_fn read, void *ctx, u32 esu, u32 width)
{
	p->core.kind = kind;
	p->core.read = read;
	p->core.ctx = ctx;
	p->core.esu = esu;
	p->core.width = width;
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
	 * The counter steps every step_ns, so a delta can hold up to a step
	 * more than dt: allow two, plus two units of rounding.
	 */
	slack = s->esu <= VR_EU_SHIFT ? 2ULL << (VR_EU_SHIFT - s->esu) : 2;
	max_eu = vr_energy_eu(p->max_power_uw, dt + 2 * p->step_ns, &rem) +
		 slack;
	range_eu = s->width + VR_EU_SHIFT <= s->esu ? 1 :
		   s->width + VR_EU_SHIFT - s->esu < 64 ?
		   1ULL << (s->width + VR_EU_SHIFT - s->esu) : ~0ULL;
	if (max_eu >= range_eu) {
		/* Could have wrapped more than once: cannot tell. */
		p->overruns++;
		*lost = true;
	} else if (*eu > max_eu) {
		/*
		 * More than the package can draw: the bound is too low, or
		 * the register was reset.  A step of half its range or more
		 * is a reset (no epoch covers it: the timer reads well
		 * within a quarter of it).  Below that, forward is real
		 * energy: it is charged, and the engine warns.  Numerically
		 * back is a wrap or a reset: a wrap within VR_OVER_MAX_WRAP
		 * times the bound, since a reset lands anywhere in the
		 * range; so what is charged for a reset taken for a wrap is
		 * bounded by that power too.
		 */
		if (delta >= 1ULL << (s->width - 1))
			goto reset;
		if (raw < p->raw[d] &&
		    (max_eu > ~0ULL / VR_OVER_MAX_WRAP ||
		     *eu > max_eu * VR_OVER_MAX_WRAP))
			goto reset;
		p->over_max++;
		if (raw < p->raw[d] && d == VR_DOM_PKG)
			p->wraps++;
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
 * What one close hands out, per domain: to the accounts of this epoch
 * (cur, of which scur is static), to those of the previous one (prev, the
 * counter's lag: dynamic only), and what each list was actually given.
 * The static and dynamic parts of cur are rounded separately, so every
 * account's share is exactly its static plus its dynamic part.
 */
struct vr_split {
	u64 de[VR_NDOM];
	u64 cur[VR_NDOM];
	u64 scur[VR_NDOM];
	u64 prev[VR_NDOM];
	u64 given_cur[VR_NDOM];
	u64 given_scur[VR_NDOM];
	u64 given_dcur[VR_NDOM];
	u64 given_prev[VR_NDOM];
	/*
	 * PKG only: the part of cur charged by per-core weight (dynamic),
	 * split over the epoch's per-core weight @wsum.
	 */
	u64 pc;
	u64 wsum;
	bool merge;	/* the epoch joins the lag list (vr_lag_merge()) */
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
 * The part of an all-idle stretch's energy beyond the floor that this
 * epoch holds: the stretch is the epoch's all-idle time (@fold_idle, up
 * to @fold_idle_end), continued from the last epoch when that one's
 * ended at its close and this one's starts there; each stretch gets
 * vr_settle_idle() of its length once, over the epochs it spans.
 */
static u64 vr_settle_part(struct vr_pkg *p)
{
	u64 lo = p->fold_idle_end - p->fold_idle, c;

	if (!p->fold_idle) {
		p->settle_end = 0;
		return 0;
	}
	if (lo != p->t_last || p->settle_end != p->t_last) {
		p->settle_start = lo;
		p->settle_given = 0;
	}
	p->settle_end = p->fold_idle_end;
	c = vr_settle_idle(p, p->fold_idle_end - p->settle_start);
	if (c <= p->settle_given)
		return 0;
	c -= p->settle_given;
	p->settle_given += c;
	return c;
}

/*
 * Split the PKG delta by the static policy; other domains follow it.
 *
 * The counter read at a close lags the close by up to one hardware step
 * (about 1 ms): part of its dynamic energy was spent in the previous
 * epoch.  That lag share goes to the previous epoch's busy time (all of
 * it when nothing is busy now), so a short burst is not billed to
 * whatever runs after it.  Its size is what the reads have not shown yet
 * of that busy time: the busy CPU-ns of its lag window (@fold_tail, in
 * vr_pkg_close_fold(): a CPU busy to the close misses lag_ns on average,
 * one that went idle before it less, one that woke just before it about
 * its whole run) at the dynamic power per busy CPU-ns of what that
 * epoch's delta showed (vr_lag.c), at most this epoch's dynamic
 * energy, split over its accounts by their busy time, or by their
 * per-core weight where every CPU had one.  Measured per CPU, it follows
 * a burst that starts or ends inside the epoch, which a share of the
 * epoch's mean power does not.  An idle epoch between them gives
 * the list all its dynamic energy and keeps the part of the window its
 * own read has still not shown (vr_cpu_tail() at its close: a CPU idle
 * for longer than two lag_ns has none left), for the next busy epoch.
 * A busy epoch whose read showed nothing (epochs shorter than the
 * counter's step) joins the list instead of replacing it
 * (vr_lag_merge()): its energy shows later, with the list's.
 * With per-core energy (VR_CORE_ENERGY), the share comes out of the
 * whole dynamic energy too, and the per-core part of this epoch is the
 * weight of its seen busy time only (below).
 */
static void vr_split_policy(struct vr_pkg *p, struct vr_split *sp, u64 busy,
			    u64 busy_e, u64 dt, struct vr_pkg_stats *st)
{
	u64 de = sp->de[VR_DOM_PKG], stat, dyn, cap, stat_busy, dprev;
	u64 seen, settle, stat_idle = 0;
	unsigned int d;

	stat = vr_static_part(p, de, dt);
	dyn = de - stat;
	/*
	 * An all-idle stretch holds energy beyond the floor's (the package
	 * not settled yet, vr_settle_idle()): nobody's, like the floor then,
	 * so it is idle's, static in the books, neither the busy time's of
	 * a lazy epoch nor a burst's lag share.
	 */
	settle = vr_settle_part(p);
	if (settle > dyn)
		settle = dyn;
	dyn -= settle;
	stat_idle = settle;
	st->static_e += stat + stat_idle;
	st->dynamic += dyn;

	cap = (u64)p->nr_online * dt;
	if (!busy)
		stat_busy = 0;
	else if (p->policy == VR_STATIC_BUSY)
		/*
		 * Whatever runs gets the package's power, but not while
		 * nothing runs: a lazy epoch (closed only at the next event
		 * after a quiet stretch) keeps the static part of its
		 * all-idle time (@fold_idle) for idle.
		 */
		stat_busy = p->fold_idle < dt ?
			    vr_mul_div(stat, dt - p->fold_idle, dt) : 0;
	else if (p->policy == VR_STATIC_NONE)
		stat_busy = 0;
	else	/* Each occupied CPU-ns carries P_static / ncpus. */
		stat_busy = cap ? vr_mul_div(stat, busy < cap ? busy : cap,
					     cap) : 0;

	/*
	 * A busy epoch whose read showed none of it (the counter did not
	 * step): its energy shows later, with the list's; it joins the list
	 * (vr_drain(), vr_lag_merge()) and takes no share now.  Not where
	 * per-core weights split the list or the epoch: they would be lost.
	 */
	sp->merge = busy && !de && p->lag_ns && !p->prev_busy_e &&
		    !(busy_e && p->policy != VR_STATIC_BUSY &&
		      (p->core.kind == VR_CORE_ENERGY ||
		       p->core.kind == VR_CORE_CYCLES));
	if (sp->merge) {
		dprev = 0;
		seen = 0;
	} else {
		dprev = vr_lag_share(p, busy, dyn, &seen);
	}
	/*
	 * Per-core energy (VR_CORE_ENERGY): the busy time's per-core energy
	 * (its weight) is charged by weight, out of the dynamic part left
	 * after the lag share; only the rest (uncore, and whatever the
	 * cores' counters do not see) is split by time.  The weights are
	 * rates over windows of VR_CORE_WINDOW_NS or more and cover the
	 * whole busy time, but the package's read did not show its unseen
	 * part (the next close's lag share), so only the seen part's weight
	 * is charged here, with what earlier epochs owe (@pc_owed).  More
	 * weight than that dynamic energy is clamped to it: the weights then
	 * only say who gets the dynamic part, and nothing is created.  The
	 * rest is owed to the next epochs, up to two of the counter's steps
	 * of this epoch's weight: a delta that showed fewer steps than its
	 * time is followed by one that shows more, while a P_static too
	 * high, which no later delta makes up, owes no more than that.
	 */
	if (busy && busy_e && p->core.kind == VR_CORE_ENERGY &&
	    p->policy != VR_STATIC_BUSY) {
		u64 seen_e = vr_mul_div(busy_e, seen, busy);
		u64 want = seen_e + p->pc_owed, cap;

		sp->wsum = busy_e;
		sp->pc = dyn - dprev;
		if (want <= dyn - dprev) {
			sp->pc = want;
			p->pc_owed = 0;
		} else {
			p->percore_clamps++;
			p->pc_owed = want - sp->pc;
			cap = dt ? vr_mul_div(busy_e, 2 * p->step_ns, dt) : 0;
			if (p->pc_owed > cap)
				p->pc_owed = cap;
		}
	}
	/*
	 * Cycles (VR_CORE_CYCLES, APERF): not energy, only a weight, so the
	 * whole dynamic part of this epoch's busy time goes by it (and the
	 * lag share by the previous epoch's, vr_lag_give()).  Under
	 * VR_STATIC_BUSY, neither weight: the package's power is shared by
	 * busy time alone, whatever each core drew.
	 */
	if (busy && busy_e && p->core.kind == VR_CORE_CYCLES &&
	    p->policy != VR_STATIC_BUSY) {
		sp->wsum = busy_e;
		sp->pc = dyn - dprev;
	}
	/* Dynamic energy with no busy time now or before it stays idle. */
	sp->prev[VR_DOM_PKG] = dprev;
	sp->cur[VR_DOM_PKG] = stat_busy + (busy ? dyn - dprev : 0);
	sp->scur[VR_DOM_PKG] = stat_busy;
	for (d = 1; d < VR_NDOM; d++) {
		sp->cur[d] = de ? vr_mul_div(sp->de[d], sp->cur[VR_DOM_PKG],
					     de) : 0;
		/* <= cur[d]: the floors of a smaller share of the same */
		sp->scur[d] = de ? vr_mul_div(sp->de[d], stat_busy, de) : 0;
		sp->prev[d] = de ? vr_mul_div(sp->de[d], sp->prev[VR_DOM_PKG],
					      de) : 0;
	}
}

/*
 * Charge @a its share of this epoch's list: the static and the dynamic
 * part each by cumulative rounding, so the static parts add up to scur
 * and the dynamic ones to cur - scur, exactly.  @energy first: a
 * lockless reader that sees the new @static_e clamps it (vr_core.h).
 */
static void vr_give_cur(struct vr_acct *a, struct vr_split *sp, u64 cum,
			u64 total, u64 cum_e)
{
	unsigned int d;
	u64 s, t, q, pc;

	for (d = 0; d < VR_NDOM; d++) {
		if (!sp->cur[d])
			continue;
		/* The per-core part (PKG), by weight; its rest by time. */
		pc = d == VR_DOM_PKG ? sp->pc : 0;
		q = pc ? vr_mul_div(pc, cum_e, sp->wsum) : 0;
		s = sp->scur[d] ? vr_mul_div(sp->scur[d], cum, total) : 0;
		t = sp->cur[d] == sp->scur[d] + pc ? 0 :
		    vr_mul_div(sp->cur[d] - sp->scur[d] - pc, cum, total);
		t += q;
		WRITE_ONCE(a->energy[d], a->energy[d] + s + t -
			   sp->given_scur[d] - sp->given_dcur[d]);
		WRITE_ONCE(a->static_e[d], a->static_e[d] + s -
			   sp->given_scur[d]);
		sp->given_scur[d] = s;
		sp->given_dcur[d] = t;
		sp->given_cur[d] = s + t;
	}
}

/*
 * Resolve the accounts of the last busy epoch (the lag share, vr_lag.c),
 * then those that accrued in the closed epoch, which become the lag list.
 */
static void vr_drain(struct vr_pkg *p, u32 slot, struct vr_split *sp,
		     u64 busy, bool keep, u64 now)
{
	struct vr_acct *a, *next, *prev = NULL;
	u64 cum, cum_e, r, e;

	if (sp->merge)		/* only ever set for a clean epoch */
		vr_lag_merge(p, busy, now);
	else
		vr_lag_give(p, sp->prev, sp->given_prev, busy, keep, now);

	/*
	 * Every CPU of the package accrues into the other slot since the
	 * fold, so nothing is added to @slot until the next close.
	 */
	a = READ_ONCE(p->pending[slot]);
	WRITE_ONCE(p->pending[slot], NULL);
	for (cum = 0, cum_e = 0; a; a = next) {
		next = a->pnext[slot];
		a->pnext[slot] = NULL;
		r = vr_atomic64_xchg(&a->pend[slot], 0);
		cum += r;
		if (cum > busy)		/* tracked time is busy time */
			cum = busy;
		/* Only a per-core source ever adds to pend_e. */
		e = p->core.read ? vr_atomic64_xchg(&a->pend_e[slot], 0) : 0;
		cum_e += e;
		if (cum_e > sp->wsum)	/* and its weight the CPUs' weight */
			cum_e = sp->wsum;
		vr_give_cur(a, sp, cum, busy, cum_e);
		WRITE_ONCE(a->ns, a->ns + r);
		if (keep && r && sp->merge) {
			vr_lag_join(p, a, r);
		} else if (keep && r) {
			a->prev_ns = r;
			a->prev_e = e;
			a->pprev = prev;
			prev = a;
		}
	}
	if (!sp->merge)
		vr_lag_keep(p, prev, busy, sp->wsum, keep, now);
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
	u64 busy = p->fold_busy, busy_e = p->fold_busy_e;
	u64 dt = now - p->t_last;
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
		vr_split_policy(p, &sp, busy, busy_e, dt, &st[VR_DOM_PKG]);
	else
		p->static_debt = 0;	/* owed by an interval now unknown */
	vr_learn_static(p, sp.de[VR_DOM_PKG], dt, busy, lost);
	/*
	 * The cores' energy of the epoch, for the package less its cores
	 * (vr_fit_epoch()): the per-core counters' (AMD), else PP0's
	 * (Intel client parts), read with the package's at the close.
	 */
	if (p->core.kind == VR_CORE_ENERGY)
		vr_fit_epoch(p, sp.de[VR_DOM_PKG], dt, busy, busy_e,
			     p->fold_core_corr, !p->fold_busy_nw, lost);
	else
		vr_fit_epoch(p, sp.de[VR_DOM_PKG], dt, busy,
			     sp.de[VR_DOM_CORE], 0,
			     (p->domains & BIT(VR_DOM_CORE)) &&
			     (valid & BIT(VR_DOM_CORE)), lost);
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
		st[d].tracked_static = sp.given_scur[d];
		st[d].host_static = sp.scur[d] - sp.given_scur[d];
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
		p->st[d].tracked_static += st[d].tracked_static;
		p->st[d].host_static += st[d].host_static;
	}
	p->samples++;
	p->busy_ns += busy;
	p->percore_e += sp.pc;
	if (!busy)
		p->epochs_idle++;
	vr_seq_write_end(&p->stat_seq);

	p->rebase = false;
	p->fold_busy = 0;
	p->fold_busy_e = 0;
	p->fold_busy_nw = 0;
	p->fold_core_corr = 0;
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

	vr_lock_held(&p->close_lock);
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

