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
 * else it is dropped.
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
 */
void vr_step_estimate(const struct vr_step_poll *s, struct vr_step *out)
{
	u64 v[VR_STEP_MAX], w[VR_STEP_MAX], med, tol, b, x, k;
	unsigned int i, n = 0, m = 0;

	vr_step_default(out);
	if (s->n < VR_STEP_MIN + 1)
		return;
	for (i = 0; i + 1 < s->n; i++)
		v[i] = (s->lo[i + 1] + (s->hi[i + 1] - s->lo[i + 1]) / 2) -
		       (s->lo[i] + (s->hi[i] - s->lo[i]) / 2);
	n = s->n - 1;
	vr_step_sort(v, n);
	tol = vr_step_median(v, n) / 8;

	/* Only the intervals whose two steps were timed closely. */
	n = 0;
	for (i = 0; i + 1 < s->n; i++) {
		if (s->hi[i] - s->lo[i] > tol ||
		    s->hi[i + 1] - s->lo[i + 1] > tol)
			continue;
		v[n++] = (s->lo[i + 1] + (s->hi[i + 1] - s->lo[i + 1]) / 2) -
			 (s->lo[i] + (s->hi[i] - s->lo[i]) / 2);
	}
	if (n < VR_STEP_MIN)
		return;
	vr_step_sort(v, n);
	med = vr_step_median(v, n);
	b = vr_step_base(v, n, med);
	if (!b)
		return;

	for (i = 0; i < n; i++) {
		k = (v[i] + b / 2) / b;
		if (!k)
			continue;
		x = v[i] / k;
		if (!vr_step_near(v[i], k * b, b / 4))
			continue;
		w[m++] = x;
	}
	if (m < VR_STEP_MIN)
		return;
	vr_step_sort(w, m);
	out->interval_ns = vr_step_median(w, m);
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
