// SPDX-License-Identifier: GPL-2.0
/*
 * vmrapl accounting core, the counter's lag share: the part of a close's
 * reading that the previous busy epoch spent and the counter had not yet
 * shown, its size (vr_lag_share()), and the lag list of that epoch's
 * accounts that receives it (vr_lag_give(), vr_lag_keep(),
 * vr_pkg_forget()), which busy epochs that no read showed join
 * (vr_lag_merge(), vr_lag_join()).  The rule is described at
 * vr_split_policy() in vr_core.c, whose close calls everything here; all
 * of it runs under the package's close_lock, as the rest of the close:
 * see vr_core.h.
 */
#include "vr_core.h"
#include "vr_lag.h"

/* Empty the lag list. */
static void vr_prev_clear(struct vr_pkg *p)
{
	struct vr_acct *a, *next;

	for (a = p->prev; a; a = next) {
		next = a->pprev;
		a->pprev = NULL;
		a->prev_ns = 0;
		a->prev_e = 0;
	}
	p->prev = NULL;
	p->prev_busy = 0;
	p->prev_busy_e = 0;
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

/* The busy CPU-ns of the closed epoch's lag window its read missed. */
static u64 vr_lag_tail(const struct vr_pkg *p)
{
	return p->lag_ns ? p->fold_tail / (4 * p->lag_ns) : 0;
}

/* Of @busy CPU-ns just closed, those its read showed: all but at most half. */
static u64 vr_lag_seen(const struct vr_pkg *p, u64 busy)
{
	u64 t = vr_lag_tail(p);

	return busy - (t > busy / 2 ? busy / 2 : t);
}

/*
 * After a split, what sizes the next lag share: the busy CPU-ns the
 * closed epoch's read has not shown yet (@fold_tail / (4 lag_ns), at most
 * half its busy time), and the power per busy CPU-ns of what the delta
 * did show: its dynamic energy @dyn over the busy CPU-ns it covers (the
 * tail carried in, then the epoch's own less its unseen part).  Taken
 * from the whole delta, not from what is left after the lag share: the
 * share then sizes the next one, and with 1 ms epochs (unseen = seen)
 * an error would flip sides every epoch without ever dying out.  An idle
 * epoch keeps the busy one's power and what is still unseen of its
 * window.  Return: the closed epoch's busy CPU-ns that its read showed.
 */
static u64 vr_lag_note(struct vr_pkg *p, u64 busy, u64 dyn)
{
	u64 t = vr_lag_tail(p);

	if (busy) {
		t = busy - vr_lag_seen(p, busy);
		p->prev_dyn = dyn;
		p->prev_seen = (p->prev_busy ? p->prev_tail : 0) + busy - t;
		p->prev_tail = t;
		return busy - t;
	}
	if (p->prev_busy) {
		if (t < p->prev_tail)
			p->prev_tail = t;
	} else {
		p->prev_dyn = 0;
		p->prev_seen = 0;
		p->prev_tail = 0;
	}
	return 0;
}

/**
 * vr_lag_share() - the lag share of the previous busy epoch, this close
 * @p: the package.
 * @busy: busy CPU-ns of the closed epoch.
 * @dyn: its dynamic energy, eu.
 * @seen: out: its busy CPU-ns that its own read showed.
 *
 * The rule is vr_split_policy()'s (vr_core.c): the previous epoch's
 * unseen busy CPU-ns at the power of what its delta showed, at most
 * @dyn, or all of @dyn when nothing is busy now; then notes what sizes
 * the next one (vr_lag_note()).  When the list splits it by per-core
 * energy weight, what of it @dyn could not pay is owed (vr_pkg.pc_owed).
 * Context: close_lock held.
 * Return: the share, eu (0 without a lag list).
 */
u64 vr_lag_share(struct vr_pkg *p, u64 busy, u64 dyn, u64 *seen)
{
	u64 dprev = 0;

	vr_lock_held(&p->close_lock);
	/* A list is made only by a busy epoch, which notes a seen time. */
	if (p->prev_busy && busy) {
		if (p->prev_seen)
			dprev = vr_mul_div(p->prev_dyn, p->prev_tail,
					   p->prev_seen);
		else if (p->prev_tail)
			/*
			 * A list of epochs no read showed (vr_lag_merge()),
			 * with no delta before them to price them: this
			 * delta covers them and this epoch's seen time.
			 */
			dprev = vr_mul_div(dyn, p->prev_tail,
					   p->prev_tail + vr_lag_seen(p, busy));
		if (dprev > dyn) {
			if (p->core.kind == VR_CORE_ENERGY && p->prev_busy_e)
				p->pc_owed += dprev - dyn;
			dprev = dyn;
		}
	} else if (p->prev_busy) {
		/* Nothing runs now: the dynamic energy is a burst's tail. */
		dprev = dyn;
	}
	*seen = vr_lag_note(p, busy, dyn);
	return dprev;
}

/**
 * vr_lag_give() - hand the lag share to the lag list, then keep or drop it
 * @p: the package.
 * @amount: the share per domain.
 * @given: out: what was handed out per domain (the rest goes to the host).
 * @busy: busy CPU-ns of the closed epoch.
 * @keep: the closed epoch is not lost.
 * @now: its end.
 *
 * By time, or by weight: cycles, or energy if every CPU had one.  Idle
 * epochs within two hardware steps of a busy one keep its list: a step
 * the counter skipped shows the tail of a burst one epoch later.  So do
 * idle epochs that are still repaying static debt: the counter lags the
 * static part too, and a burst's tail first repays it.
 * Context: close_lock held.
 */
void vr_lag_give(struct vr_pkg *p, const u64 *amount, u64 *given, u64 busy,
		 bool keep, u64 now)
{
	struct vr_acct *a;
	u64 cum = 0, total;

	vr_lock_held(&p->close_lock);
	total = p->prev_busy_e ? p->prev_busy_e : p->prev_busy;
	for (a = p->prev; a; a = a->pprev) {
		cum += p->prev_busy_e ? a->prev_e : a->prev_ns;
		if (cum > total)
			cum = total;
		vr_give(a, amount, given, cum, total);
	}
	if (busy || !keep || !p->lag_ns ||
	    (now - p->prev_t > 2 * p->step_ns && !p->static_debt))
		vr_prev_clear(p);
}

/**
 * vr_lag_keep() - make the closed epoch's accounts the lag list
 * @p: the package.
 * @list: those accounts, linked by pprev, with prev_ns and prev_e set.
 * @busy: busy CPU-ns of the closed epoch.
 * @wsum: its per-core weight, eu (0: none).
 * @keep: the closed epoch is not lost.
 * @now: its end.
 *
 * Context: close_lock held.
 */
void vr_lag_keep(struct vr_pkg *p, struct vr_acct *list, u64 busy, u64 wsum,
		 bool keep, u64 now)
{
	vr_lock_held(&p->close_lock);
	if (busy && keep && p->lag_ns) {
		p->prev = list;
		p->prev_busy = busy;
		p->prev_busy_e = p->core.kind == VR_CORE_CYCLES ||
				 (p->core.kind == VR_CORE_ENERGY &&
				  !p->fold_busy_nw) ? wsum : 0;
		p->prev_t = now;
	} else if (list) {
		/* No lag to share: the list is not kept. */
		p->prev = list;
		p->prev_busy = busy;
		vr_prev_clear(p);
	}
}

/**
 * vr_lag_merge() - an epoch whose read showed none of it joins the lag list
 * @p: the package.
 * @busy: busy CPU-ns of the closed epoch.
 * @now: its end.
 *
 * A counter that updates less often than the epochs close (250 us epochs
 * on a 1 ms counter) leaves busy epochs with a delta of 0: their energy
 * shows at a later read, with what is still unseen of the list before
 * them.  Such an epoch neither replaces the list nor prices the next
 * share: the list keeps its unseen busy time (each account's weight
 * scaled to it), the epoch's busy time joins it whole (its accounts by
 * vr_lag_join(), the host's implicitly), and the next share is priced at
 * the power of the last delta that showed something, or, with none
 * before the list, by time (vr_lag_share()).  Only for lists split by
 * time: vr_split_policy() does not merge per-core weighted epochs.
 * Context: close_lock held.
 */
void vr_lag_merge(struct vr_pkg *p, u64 busy, u64 now)
{
	struct vr_acct **pp = &p->prev, *a;
	u64 unseen = 0;

	vr_lock_held(&p->close_lock);
	if (p->prev_busy) {
		/* The list's busy CPU-ns not shown yet, the host's included. */
		unseen = p->prev_tail < p->prev_busy ? p->prev_tail :
			 p->prev_busy;
		while ((a = *pp)) {
			a->prev_ns = vr_mul_div(a->prev_ns, unseen,
						p->prev_busy);
			a->prev_e = 0;
			if (a->prev_ns) {
				pp = &a->pprev;
				continue;
			}
			/* Nothing of it unseen: off the list. */
			*pp = a->pprev;
			a->pprev = NULL;
		}
	} else {
		p->prev_dyn = 0;
		p->prev_seen = 0;
	}
	p->prev_busy = unseen + busy;
	p->prev_tail = unseen + busy;
	p->prev_busy_e = 0;
	p->prev_t = now;
}

/**
 * vr_lag_join() - add @r busy ns of @a to the list vr_lag_merge() kept
 * @p: the package.
 * @a: an account of the merged epoch.
 * @r: its busy ns in it, > 0.
 *
 * An account is on the list if and only if its weight (prev_ns) is not 0.
 * Context: close_lock held.
 */
void vr_lag_join(struct vr_pkg *p, struct vr_acct *a, u64 r)
{
	vr_lock_held(&p->close_lock);
	if (a->prev_ns) {
		a->prev_ns += r;
	} else {
		a->prev_ns = r;
		a->prev_e = 0;
		a->pprev = p->prev;
		p->prev = a;
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

	vr_lock_held(&p->close_lock);
	while ((a = *pp)) {
		if (a >= lo && a < hi) {
			*pp = a->pprev;
			a->pprev = NULL;
			a->prev_ns = 0;
			a->prev_e = 0;
		} else {
			pp = &a->pprev;
		}
	}
}
