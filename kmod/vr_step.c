// SPDX-License-Identifier: GPL-2.0
/*
 * vmrapl accounting core, the counters' update interval: from a series
 * of (time, raw counter) reads taken by polling a counter, the instants
 * it stepped (vr_step_feed()), and the interval and spread of those steps
 * (vr_step_estimate()); the lag a read sees on average with such a
 * counter (vr_step_lag_ns()).  Plain C, no locks: the poll state belongs
 * to the poller (kmod/engine_step.c in the module, the simulator's
 * package init, the unit tests).
 *
 * Robustness.  A poll that is preempted or interrupted between two reads
 * does not know when the counter stepped in that gap: intervals that
 * start or end at such a step are not used (the poll loses a step, not
 * correctness).  A counter whose energy in an update was less than one
 * unit does not change at that update, so an interval may span two or
 * more updates: near a multiple of the interval it is divided, anywhere
 * else it is dropped.  Reads slower than the counter see a step at
 * nearly every read, and their intervals are the reads' gaps: when more
 * than a quarter of the intervals lie between consecutive reads
 * (vr_step_adjacent()), the poll measured nothing.
 */
#include "vr_step.h"

void vr_step_poll_init(struct vr_step_poll *s)
{
	s->have = false;
	s->n = 0;
}

/**
 * vr_step_feed() - one read of a polled counter
 * @s: the poll.
 * @t: when it was read, ns (non-decreasing).
 * @raw: the register's value (any width: only changes count, so a
 *	wrap is a step like any other).
 */
void vr_step_feed(struct vr_step_poll *s, u64 t, u64 raw)
{
	if (s->have && raw != s->last_raw && s->n < VR_STEP_MAX) {
		s->lo[s->n] = s->last_t;
		s->hi[s->n] = t;
		s->n++;
	}
	s->have = true;
	s->last_t = t;
	s->last_raw = raw;
}

/* The poll has timed enough steps to stop. */
bool vr_step_enough(const struct vr_step_poll *s)
{
	return s->n >= VR_STEP_ENOUGH;
}

/* Sort @v[0..@n) ascending (n <= VR_STEP_MAX: insertion sort). */
static void vr_step_sort(u64 *v, unsigned int n)
{
	unsigned int i, j;
	u64 x;

	for (i = 1; i < n; i++) {
		x = v[i];
		for (j = i; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

/* Median of sorted @v[0..@n), n > 0. */
static u64 vr_step_median(const u64 *v, unsigned int n)
{
	return n & 1 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
}

/* |@a - @b| <= @tol */
static bool vr_step_near(u64 a, u64 b, u64 tol)
{
	return a > b ? a - b <= tol : b - a <= tol;
}

void vr_step_default(struct vr_step *out)
{
	out->interval_ns = VR_STEP_DEFAULT_NS;
	out->spread_ns = 0;
	out->used = 0;
	out->measured = false;
}

/*
 * The base interval of the sorted intervals @v[0..@n) whose median is
 * @med: @med, or @med / k (k up to 4) when at least a quarter of them,
 * and two, lie near that: a counter that skips most of its updates (a
 * nearly idle domain) has a median that is a multiple of its interval,
 * while a regular one has no interval near half its median.
 */
static u64 vr_step_base(const u64 *v, unsigned int n, u64 med)
{
	unsigned int k, i, near;
	u64 b;

	for (k = 4; k > 1; k--) {
		b = med / k;
		near = 0;
		for (i = 0; i < n; i++)
			near += vr_step_near(v[i], b, b / 8);
		if (near >= 2 && 4 * near >= n)
			return b;
	}
	return med;
}

/* The instant of step @i: the middle of the reads around it. */
static u64 vr_step_mid(const struct vr_step_poll *s, unsigned int i)
{
	return s->lo[i] + (s->hi[i] - s->lo[i]) / 2;
}

/*
 * Normalize the intervals @v[0..@n) by the base @b: an interval within a
 * quarter of the base from k times it stands for k intervals of a k-th of
 * it (into @w, which returns their number), any other is dropped; @upd
 * adds the updates each interval spans (1 for a dropped one).
 */
static unsigned int vr_step_norm(const u64 *v, unsigned int n, u64 b, u64 *w,
				 u64 *upd)
{
	unsigned int i, m = 0;
	u64 k;

	*upd = 0;
	for (i = 0; i < n; i++) {
		k = (v[i] + b / 2) / b;
		if (!k || !vr_step_near(v[i], k * b, b / 4)) {
			*upd += 1;
			continue;
		}
		*upd += k;
		w[m++] = v[i] / k;
	}
	return m;
}

/**
 * vr_step_adjacent() - steps seen by consecutive reads
 * @s: the poll.
 *
 * Return: how many of the poll's step-to-step intervals hold no read
 * that saw the counter unchanged: any number of updates may lie in
 * such an interval, which only the reads' own gap timed.
 */
unsigned int vr_step_adjacent(const struct vr_step_poll *s)
{
	unsigned int i, adj = 0;

	for (i = 0; i + 1 < s->n; i++)
		adj += s->lo[i + 1] == s->hi[i];
	return adj;
}

/**
 * vr_step_estimate() - the update interval a poll timed
 * @s: the poll.
 * @out: the interval and spread; not measured (vr_step_default()) when
 *	fewer than VR_STEP_MIN intervals remain.
 *
 * The instant of a step is the middle of the reads around it.  The
 * intervals between consecutive steps are kept when both steps are known
 * to within an eighth of their median; the base interval is their median
 * (or a fraction of it, vr_step_base()); an interval within a quarter of
 * the base from k times it counts as k intervals of a k-th of it, any
 * other is dropped.  Then the median and the spread (half the 10th-90th
 * percentile range) of what remains.
 *
 * Reads too far apart for that (a virtual machine's CPU, whose sleeps
 * and timer run late) leave fewer than VR_STEP_MIN close intervals; then
 * the interval is the time from the first step to the last over the
 * updates between them (an interval near k bases counting k), which the
 * reads' error affects once, not at every step, and the spread that of
 * all the intervals, the reads' error included.  Reads further apart
 * than the counter's updates time only themselves: not measured when
 * more than a quarter of the intervals are vr_step_adjacent().
 */
void vr_step_estimate(const struct vr_step_poll *s, struct vr_step *out)
{
	u64 v[VR_STEP_MAX], w[VR_STEP_MAX], tol, b, upd;
	unsigned int i, n, m;
	bool coarse;

	vr_step_default(out);
	if (s->n < VR_STEP_MIN + 1)
		return;
	n = s->n - 1;
	/* Reads slower than the counter: they timed themselves. */
	if (4 * vr_step_adjacent(s) > n)
		return;
	for (i = 0; i < n; i++)
		v[i] = vr_step_mid(s, i + 1) - vr_step_mid(s, i);
	vr_step_sort(v, n);
	tol = vr_step_median(v, n) / 8;

	/* Only the intervals whose two steps were timed closely. */
	m = 0;
	for (i = 0; i < n; i++) {
		if (s->hi[i] - s->lo[i] > tol ||
		    s->hi[i + 1] - s->lo[i + 1] > tol)
			continue;
		w[m++] = vr_step_mid(s, i + 1) - vr_step_mid(s, i);
	}
	coarse = m < VR_STEP_MIN;
	if (!coarse) {
		for (i = 0; i < m; i++)
			v[i] = w[i];
		n = m;
	}
	vr_step_sort(v, n);
	b = vr_step_base(v, n, vr_step_median(v, n));
	if (!b)
		return;
	m = vr_step_norm(v, n, b, w, &upd);
	if (m < VR_STEP_MIN)
		return;
	vr_step_sort(w, m);
	out->interval_ns = coarse ?
		(vr_step_mid(s, s->n - 1) - vr_step_mid(s, 0)) / upd :
		vr_step_median(w, m);
	out->spread_ns = (w[(m - 1) * 9 / 10] - w[(m - 1) / 10]) / 2;
	out->used = m;
	out->measured = true;
}

/**
 * vr_step_lag_ns() - how old a counter's value is, on average, when read
 * @st: its update interval.
 *
 * A read at a random instant lands in an update interval L with a
 * probability proportional to L (length-biased sampling), and is then
 * uniform in it: the mean time since the last update is
 * E[L^2] / (2 E[L]) = (m^2 + sd^2) / (2 m), for L of mean m and standard
 * deviation sd.  m is taken as the median; sd from the spread as for a
 * normal distribution (the 10th-90th percentile half-range is 1.28 sd).
 * Return: the mean lag, ns.
 */
u64 vr_step_lag_ns(const struct vr_step *st)
{
	u64 m = st->interval_ns, sd = st->spread_ns * 100 / 128;

	if (!m)
		return 0;
	return (m * m + sd * sd) / (2 * m);
}
