// SPDX-License-Identifier: GPL-2.0
/*
 * vmrapl accounting core, the settle of all-idle stretches: what a stretch
 * holds beyond the floor before the package reaches its deep C-state,
 * from the stretches' own energies (vr_settle_add(), vr_settle_idle()).
 * vr_static.c's idle learning feeds it and takes C off each stretch;
 * vr_core.c's split gives C to idle.  Everything here runs under the
 * package's close_lock, as the rest of the core: see vr_core.h.
 */
#include "vr_core.h"

/*
 * The energy a settled stretch holds beyond floor x length: the intercept
 * C of E = floor x T + C over the stretches the bins hold (struct
 * vr_settle), and the shortest stretch that counts, 2 C / floor.
 *
 * A package reaches its deep C-state some time D after its last core
 * idles, or never; until then it still draws its uncore, so a stretch
 * of T >= D holds floor x T + uncore x D, and a shorter one (floor +
 * uncore) x T.  D is nobody's constant: per package and BIOS profile,
 * 0 to milliseconds.  The stretches themselves show it: their energy
 * grows by the floor per ns once settled, so the slope between the
 * longest bin and any shorter settled one is the floor, and between it
 * and an unsettled one more (that bin's mean sits on the steeper line
 * through 0).  From the longest bin down, each shorter bin's slope to it
 * is taken while it stays within 1/2^VR_SETTLE_TOL of the one before: the
 * farthest pair that is still settled, which has the least noise (the
 * smallest of all the slopes would pick the noise's low tail); a bin
 * whose slope rises beyond that is unsettled, and so are the shorter
 * ones.  C is the longest bin's mean energy less the slope times its
 * mean length (whatever the first-epoch tail correction left, too), at
 * most half of it.  Fewer than two bins with VR_SETTLE_MIN stretches
 * each: C = 0.
 */
/*
 * The standard error of the mean energy of bin @b's stretches, eu: their
 * powers' spread (mW), at the bin's mean length, over sqrt(n).
 */
static u64 vr_settle_sd(const struct vr_settle *st, int b)
{
	u64 n = st->n[b], m = st->p[b] / n, m2 = st->p2[b] / n;

	if (m2 <= m * m)
		return 0;
	/* mW x ns = 10^-12 J = 2^24 / 10^12 eu */
	return vr_mul_div(vr_isqrt((m2 - m * m) / n), (st->t[b] / n) << 12,
			  1000000000000ULL >> 12);
}

static void vr_settle_solve(struct vr_settle *st)
{
	u64 el, tl, eb, tb, slope, best = ~0ULL, c, v, sl, sb;
	int l, b, bb = -1;

	st->c_eu = 0;
	st->t_min = 0;
	for (l = VR_SETTLE_BINS - 1; l >= 0; l--)
		if (st->n[l] >= VR_SETTLE_MIN)
			break;
	if (l <= 0)
		return;
	el = st->e[l] / st->n[l];
	tl = st->t[l] / st->n[l];
	for (b = l - 1; b >= 0; b--) {
		if (st->n[b] < VR_SETTLE_MIN)
			continue;
		eb = st->e[b] / st->n[b];
		tb = st->t[b] / st->n[b];
		if (tb >= tl || eb >= el)
			continue;
		/* eu per 2^16 ns */
		slope = vr_mul_div(el - eb, 1ULL << 16, tl - tb);
		if (best != ~0ULL && slope > best + (best >> VR_SETTLE_TOL))
			break;
		best = slope;
		bb = b;
	}
	if (best == ~0ULL || !best)
		return;
	c = vr_mul_div(best, tl, 1ULL << 16);
	if (c >= el)
		return;
	c = el - c;
	if (c > el / 2)
		c = el / 2;
	/*
	 * Only a C beyond its standard error: the slope's error is
	 * the two means' over the bins' distance, and C takes it times
	 * the longest bin's length, besides that bin's own.  Without it,
	 * a package whose stretches merely scatter (a floor that varies
	 * from one stretch to the next) took a C of noise off its floor.
	 */
	tb = st->t[bb] / st->n[bb];
	sl = vr_settle_sd(st, l);
	sb = vr_settle_sd(st, bb);
	v = vr_mul_div(vr_mul_div(sl * sl + sb * sb, tl, tl - tb), tl,
		       tl - tb) + sl * sl;
	if (c < (1ULL << 31) && c * c <= v)
		return;
	st->c_eu = c;
	st->t_min = vr_mul_div(2 * c, 1ULL << 16, best);
}

/* A stretch (or a long one's first VR_LEARN_NS) of @e eu over @t ns. */
void vr_settle_add(struct vr_settle *st, u64 e, u64 t)
{
	u64 mw = vr_mul_div(e, VR_FJ_PER_J >> VR_EU_SHIFT, t) / 1000;
	int b = 0;

	while (b < VR_SETTLE_BINS - 1 &&
	       t >= (VR_LEARN_SKIP_NS << (b + 1)))
		b++;
	if (mw > VR_SETTLE_MW_MAX)
		mw = VR_SETTLE_MW_MAX;
	if (st->n[b] >= 2 * VR_SETTLE_MEM) {
		st->n[b] /= 2;
		st->e[b] /= 2;
		st->t[b] /= 2;
		st->p[b] /= 2;
		st->p2[b] /= 2;
	}
	st->n[b]++;
	st->e[b] += e;
	st->t[b] += t;
	st->p[b] += mw;
	st->p2[b] += mw * mw;
	vr_settle_solve(st);
}

/**
 * vr_settle_idle() - the energy an all-idle stretch of @t ns holds beyond
 * the floor's
 * @p: the package.
 * @t: the stretch, ns (vr_pkg.fold_idle).
 *
 * What the learning took off each stretch (struct vr_settle): C, or for a
 * stretch shorter than half the shortest one learned from, its share by
 * length.  An epoch that ends with such a stretch (a lazy epoch) gives it
 * to idle, as the learning did: without it, a floor learned without C
 * left C to the burst that started the epoch.
 * Context: close_lock held.
 */
u64 vr_settle_idle(const struct vr_pkg *p, u64 t)
{
	const struct vr_settle *st = &p->settle;

	if (!st->c_eu)
		return 0;
	if (2 * t >= st->t_min)
		return st->c_eu;
	return vr_mul_div(st->c_eu, 2 * t, st->t_min);
}
