// SPDX-License-Identifier: GPL-2.0
/*
 * The counters' update interval (kmod/vr_step.c): a counter model of this
 * file's own, updated every U ns +- a uniform jitter with the energy of
 * the interval in whole units (the rest carried), wrapped at 32 bits, is
 * polled as the module polls it: a read every few microseconds, with
 * gaps where the poller was preempted.  Checked: the interval and spread
 * that vr_step_estimate() finds against the model's own, and the lag
 * that vr_step_lag_ns() derives against the mean age of the value at
 * random reads, measured on the model (length-biased, as reads land);
 * the 1 ms default's lag misses a 2 ms counter's; a jittered counter; a
 * counter whose updates often add less than a unit (steps missed); a
 * poll preempted across steps; reads too coarse for the median; reads
 * slower than the counter, and a counter that does not step or too
 * rarely (not measured: the default); wraps of a 32-bit counter; and
 * vr_pkg_set_step() setting the package's lag from the PKG counter only.
 */
#include <math.h>

#include "vr_test.h"

/* The model: a counter updated every @step +- @jit ns. */
struct cm {
	u64 step, jit;		/* ns */
	double units_per_ns;	/* energy, counter units per ns */
	double carry;		/* units not shown yet */
	u64 last_upd, next_upd;	/* ns */
	u64 val;		/* the register, 32 bits */
	u64 n_upd;
};

static void cm_init(struct cm *c, u64 step, u64 jit, double units_per_ns,
		    u64 val0)
{
	memset(c, 0, sizeof(*c));
	c->step = step;
	c->jit = jit;
	c->units_per_ns = units_per_ns;
	c->val = val0 & 0xffffffffULL;
	/* The first update lands anywhere in the first interval. */
	c->next_upd = vt_below(step) + 1;
}

static u64 cm_interval(struct cm *c)
{
	return c->step - c->jit + (c->jit ? vt_below(2 * c->jit + 1) : 0);
}

/* The register at @t (non-decreasing). */
static u64 cm_read(struct cm *c, u64 t)
{
	while (c->next_upd <= t) {
		double e = c->carry +
			   c->units_per_ns * (double)(c->next_upd - c->last_upd);
		u64 whole = (u64)e;

		c->carry = e - (double)whole;
		c->val = (c->val + whole) & 0xffffffffULL;
		c->last_upd = c->next_upd;
		c->next_upd += cm_interval(c);
		c->n_upd++;
	}
	return c->val;
}

/* The model's mean age of the register at @n random instants, ns. */
static double cm_mean_age(u64 step, u64 jit, unsigned int n)
{
	double sum = 0;
	unsigned int i;
	struct cm c;
	u64 t = 0;

	cm_init(&c, step, jit, 1.0, 0);
	for (i = 0; i < n; i++) {
		t += vt_below(3 * step) + 1;
		cm_read(&c, t);
		sum += (double)(t - c.last_upd);
	}
	return sum / n;
}

/*
 * Poll @c as the module does: a read every @poll ns (+- half), for
 * @window ns or until vr_step_enough(); every @gap_every ns, the poller
 * is away for @gap ns (0: never).
 */
static void poll(struct cm *c, struct vr_step_poll *s, u64 poll, u64 window,
		 u64 gap_every, u64 gap)
{
	u64 t = 1000, next_gap = gap_every;

	vr_step_poll_init(s);
	while (t < window && !vr_step_enough(s)) {
		vr_step_feed(s, t, cm_read(c, t));
		t += poll / 2 + vt_below(poll + 1);
		if (gap_every && t >= next_gap) {
			t += gap;
			next_gap += gap_every;
		}
	}
}

static int near_rel(double got, double exp, double rel, const char *what)
{
	return vt_near(got, exp, fabs(exp) * rel, "%s", what);
}

/* A 2 ms counter: measured, and the default 1 ms lag misses it. */
static void test_two_ms(void)
{
	struct vr_step_poll s;
	struct vr_step st;
	double age;
	struct cm c;

	cm_init(&c, 2000000, 0, 0.01, 12345);
	poll(&c, &s, 2000, VR_STEP_WINDOW_NS, 0, 0);
	vr_step_estimate(&s, &st);
	vt_ok(st.measured, "2 ms counter: measured (%u intervals)", st.used);
	near_rel((double)st.interval_ns, 2e6, 0.005, "2 ms counter: interval");
	vt_ok(st.spread_ns < 10000, "2 ms counter: spread %llu ns < 10 us",
	      (unsigned long long)st.spread_ns);
	age = cm_mean_age(2000000, 0, 200000);
	vt_diag("2 ms counter: mean age at random reads %.0f ns", age);
	near_rel((double)vr_step_lag_ns(&st), age, 0.02,
		 "2 ms counter: its lag is the mean age of a read");
	/* What the 1 ms constant gave: a lag of 500 us. */
	vt_ok(fabs((double)VR_STEP_DEFAULT_NS / 2 - age) > 0.4 * age,
	      "2 ms counter: the 1 ms default's lag is 40 %% or more off");
}

/* 976.6 us +- 5 %, and +- 20 %: interval, spread and lag. */
static void test_jitter(void)
{
	static const unsigned int pct[] = { 5, 20 };
	struct vr_step_poll s;
	struct vr_step st;
	unsigned int i;
	double age;
	struct cm c;

	for (i = 0; i < 2; i++) {
		u64 jit = 976600ULL * pct[i] / 100;
		double sum_i = 0, sum_s = 0, sum_l = 0;
		unsigned int r, runs = 20, meas = 0;

		for (r = 0; r < runs; r++) {
			cm_init(&c, 976600, jit, 0.02, vt_rand());
			poll(&c, &s, 3000, VR_STEP_WINDOW_NS, 0, 0);
			vr_step_estimate(&s, &st);
			meas += st.measured;
			sum_i += (double)st.interval_ns;
			sum_s += (double)st.spread_ns;
			sum_l += (double)vr_step_lag_ns(&st);
		}
		vt_eq(meas, runs, "+- %u %%: every poll measured", pct[i]);
		near_rel(sum_i / runs, 976600, pct[i] / 100.0 / 4 + 0.002,
			 "jitter: mean interval");
		/* Uniform +- j: the 10th-90th half-range is 0.8 j. */
		near_rel(sum_s / runs, 0.8 * (double)jit, 0.35,
			 "jitter: mean spread 0.8 j");
		age = cm_mean_age(976600, jit, 200000);
		vt_diag("+- %u %%: mean age %.0f ns, lag %.0f ns", pct[i],
			age, sum_l / runs);
		/* 20 polls of 15 intervals: the median's noise, 1 to 3 %. */
		near_rel(sum_l / runs, age, pct[i] < 10 ? 0.015 : 0.04,
			 "jitter: the lag is the mean age of a read");
	}
}

/*
 * Updates that add less than a unit: about 0.6 units per update, so
 * two in five show no change and an interval spans two updates.  (Below
 * half a unit per update no interval spans a single update, and what the
 * poll shows is a multiple of the interval: no PKG counter draws that
 * little, 30 mW with a 61 uJ unit.)
 */
static void test_missed(void)
{
	struct vr_step_poll s;
	struct vr_step st;
	struct cm c;

	cm_init(&c, 1000000, 20000, 0.6e-6, 7);
	poll(&c, &s, 2000, VR_STEP_WINDOW_NS, 0, 0);
	vr_step_estimate(&s, &st);
	vt_ok(st.measured, "0.6 units per update: measured (%u intervals)",
	      st.used);
	near_rel((double)st.interval_ns, 1e6, 0.02,
		 "0.6 units per update: interval 1 ms, not a multiple");

}

/* A poller away for 2.3 ms every 7 ms loses steps, not correctness. */
static void test_preempted(void)
{
	struct vr_step_poll s;
	struct vr_step st;
	struct cm c;

	cm_init(&c, 1000000, 0, 0.01, 99);
	poll(&c, &s, 1000, VR_STEP_WINDOW_NS, 7000000, 2300000);
	vr_step_estimate(&s, &st);
	vt_ok(st.measured, "preempted: measured (%u intervals of %u steps)",
	      st.used, s.n);
	near_rel((double)st.interval_ns, 1e6, 0.002,
		 "preempted: interval 1 ms");
	vt_ok(st.spread_ns < 2000, "preempted: spread %llu ns < 2 us",
	      (unsigned long long)st.spread_ns);

	/*
	 * Reads 150 to 450 us apart (a guest's late sleeps): too coarse for
	 * the median, the mean from the first step to the last.
	 */
	cm_init(&c, 1000000, 0, 0.01, 99);
	poll(&c, &s, 300000, VR_STEP_WINDOW_NS, 0, 0);
	vr_step_estimate(&s, &st);
	vt_ok(st.measured, "300 us reads: measured (%u steps)", s.n);
	near_rel((double)st.interval_ns, 1e6, 0.03,
		 "300 us reads: interval 1 ms, from first to last step");

	/* Slow reads (25 to 75 us apart): still close. */
	cm_init(&c, 1500000, 0, 0.01, 99);
	poll(&c, &s, 50000, VR_STEP_WINDOW_NS, 0, 0);
	vr_step_estimate(&s, &st);
	vt_ok(st.measured, "50 us reads: measured");
	near_rel((double)st.interval_ns, 1.5e6, 0.02,
		 "50 us reads: interval 1.5 ms");
}

/*
 * Reads slower than the counter (a guest CPU whose sleeps wake 1 to 2 ms
 * late): nearly every read sees a step, so the steps time the reads, not
 * the counter.  Not measured (the default, and the module's retry), where
 * it once read as an interval the mean gap between reads.
 */
static void test_reads_slower(void)
{
	static const u64 gap[] = { 1650000, 1200000, 900000 };
	struct vr_step_poll s;
	struct vr_step st;
	unsigned int i;
	struct cm c;

	for (i = 0; i < 3; i++) {
		cm_init(&c, 1000000, 40000, 0.01, 77);
		poll(&c, &s, gap[i], VR_STEP_WINDOW_NS, 0, 0);
		vr_step_estimate(&s, &st);
		vt_ok(s.n > VR_STEP_MIN, "reads %llu us apart: %u steps",
		      (unsigned long long)gap[i] / 1000, s.n);
		vt_ok(!st.measured,
		      "reads %llu us apart, a 1 ms counter: not measured (%llu ns, %u adjacent)",
		      (unsigned long long)gap[i] / 1000,
		      (unsigned long long)st.interval_ns,
		      vr_step_adjacent(&s));
		vt_eq(st.interval_ns, VR_STEP_DEFAULT_NS,
		      "reads slower than the counter: the default");
	}
}

/* A counter that does not step, or too rarely: the default. */
static void test_not_stepping(void)
{
	struct vr_step_poll s;
	struct vr_step st;
	struct cm c;

	cm_init(&c, 1000000, 0, 0, 5);
	poll(&c, &s, 2000, VR_STEP_WINDOW_NS, 0, 0);
	vr_step_estimate(&s, &st);
	vt_ok(!st.measured, "still counter: not measured");
	vt_eq(st.interval_ns, VR_STEP_DEFAULT_NS, "still counter: 1 ms default");
	vt_eq(vr_step_lag_ns(&st), VR_STEP_DEFAULT_NS / 2,
	      "still counter: lag half the default");

	/* A step every 4.2 ms: 7 steps in the window. */
	cm_init(&c, 4200000, 0, 0.01, 5);
	poll(&c, &s, 2000, VR_STEP_WINDOW_NS, 0, 0);
	vr_step_estimate(&s, &st);
	vt_ok(s.n < VR_STEP_MIN + 1 && !st.measured,
	      "%u steps in the window: not measured", s.n);
}

/* A 32-bit counter wrapping many times in the window. */
static void test_wraps(void)
{
	struct vr_step_poll s;
	struct vr_step st;
	struct cm c;
	u64 wraps = 0, prev;
	u64 t;

	/* About 0.9 of the range per update. */
	cm_init(&c, 1250000, 10000, 0.9 * 4294967296.0 / 1250000,
		0xfffffff0ULL);
	vr_step_poll_init(&s);
	prev = cm_read(&c, 0);
	for (t = 1000; t < VR_STEP_WINDOW_NS && !vr_step_enough(&s);
	     t += 2000) {
		u64 v = cm_read(&c, t);

		wraps += v < prev;
		prev = v;
		vr_step_feed(&s, t, v);
	}
	vr_step_estimate(&s, &st);
	vt_ok(wraps >= 8, "32-bit counter wrapped %llu times",
	      (unsigned long long)wraps);
	vt_ok(st.measured, "wrapping counter: measured");
	near_rel((double)st.interval_ns, 1.25e6, 0.01,
		 "wrapping counter: interval 1.25 ms");
}

/* The poll keeps at most VR_STEP_MAX steps. */
static void test_poll_bounds(void)
{
	struct vr_step_poll s;
	u64 i;

	vr_step_poll_init(&s);
	for (i = 0; i < 3 * VR_STEP_MAX; i++)
		vr_step_feed(&s, i * 1000, i);
	vt_eq(s.n, VR_STEP_MAX, "the poll keeps VR_STEP_MAX steps");
	vt_ok(vr_step_enough(&s), "and has enough");
}

/* vr_pkg_set_step(): the PKG counter's interval sets the lag. */
static void test_pkg(void)
{
	struct vr_step st = {
		.interval_ns = 2000000, .spread_ns = 0, .used = 12,
		.measured = true,
	};
	struct vr_step got[VR_NDOM];
	struct vr_pkg p;

	memset(&p, 0, sizeof(p));
	vr_pkg_init(&p, NULL, 0, 1000000, 500000000ULL);
	vt_eq(p.lag_ns, VR_STEP_DEFAULT_NS / 2, "init: default lag");
	vt_eq(p.step_ns, VR_STEP_DEFAULT_NS, "init: default step");
	vr_lock(&p.close_lock);
	vr_pkg_set_step(&p, VMRAPL_DOM_DRAM, &st);
	vt_eq(p.lag_ns, VR_STEP_DEFAULT_NS / 2, "DRAM's interval: lag unchanged");
	vr_pkg_set_step(&p, VR_DOM_PKG, &st);
	vr_unlock(&p.close_lock);
	vt_eq(p.lag_ns, 1000000, "PKG 2 ms: lag 1 ms");
	vt_eq(p.step_ns, 2000000, "PKG 2 ms: step 2 ms");
	vr_pkg_read_step(&p, got);
	vt_ok(got[VR_DOM_PKG].measured && got[VMRAPL_DOM_DRAM].measured &&
	      !got[VMRAPL_DOM_CORE].measured, "read back: PKG, DRAM measured");

	/* An exact source (lag 0) stays exact. */
	p.lag_ns = 0;
	vr_lock(&p.close_lock);
	vr_pkg_set_step(&p, VR_DOM_PKG, &st);
	vr_unlock(&p.close_lock);
	vt_eq(p.lag_ns, 0, "exact source: no lag");

	/* Not measured: back to the default. */
	vr_step_default(&st);
	p.lag_ns = 1;
	vr_lock(&p.close_lock);
	vr_pkg_set_step(&p, VR_DOM_PKG, &st);
	vr_unlock(&p.close_lock);
	vt_eq(p.lag_ns, VR_STEP_DEFAULT_NS / 2, "not measured: default lag");
}

int main(void)
{
	vt_start("vmrapl core: the counters' update interval");
	vt_seed(0x73746570ULL);
	test_two_ms();
	test_jitter();
	test_missed();
	test_preempted();
	test_reads_slower();
	test_not_stepping();
	test_wraps();
	test_poll_bounds();
	test_pkg();
	return vt_done();
}
