// SPDX-License-Identifier: MIT
/*
 * Unit tests of the power-limit controller (common/limit.c), TAP output.
 *
 * The plant is written here and is not the controller's model: a VM that
 * could use @demand CPUs, whose CPU time per tick is its quota's plus an
 * overrun the controller is not told about (a share of the quota and a
 * fixed part per period, as the kernel's tick-granular enforcement gives),
 * whose energy is a static part while it runs plus a per-CPU part that
 * grows as it is throttled (fewer busy cores, a higher clock), with a
 * deterministic +-2 % noise.  The checks judge what the limit promises:
 * each window's average power within 3 % of the limit and never more
 * than 3 % above it, after 3 windows to settle.  The same judgement run
 * on a controller with its feedback removed must fail: the test would
 * catch a broken controller.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "limit.h"
#include "tap.h"

#define MS		1000000ULL
#define SEC		1000000000ULL
#define TICK		(100 * MS)
#define PERIOD		(100 * MS)
#define WINDOW		SEC
#define NCPU		5		/* 4 vCPUs and an I/O thread */

struct plant {
	double demand;		/* CPUs it could use */
	double light;		/* CPUs in its light ticks (phase) */
	int busy_ticks, light_ticks;	/* phase: 0 for a steady load */
	int n;			/* ticks so far */
	double static_w;	/* drawn while it runs at all */
	double w_per_cpu;	/* per CPU, unthrottled */
	double turbo;		/* per-CPU power at 0 CPUs, x w_per_cpu */
	double leak;		/* CPU time over the quota, share of it */
	double overrun_ms;	/* and per period */
	uint32_t rs;		/* noise */
	uint64_t tick;		/* the controller's */
};

static double noise(struct plant *p)
{
	p->rs = p->rs * 1664525u + 1013904223u;
	return ((double)(p->rs >> 8) / 16777216.0 - 0.5) * 0.04;
}

/* One tick of the plant under @quota: the controller's sample. */
static struct vr_limit_sample plant_tick(struct plant *p, uint64_t quota,
					 double *watts)
{
	double cpus = p->demand, want, w;
	int cyc = p->busy_ticks + p->light_ticks;

	if (cyc && p->n++ % cyc >= p->busy_ticks)
		cpus = p->light;
	want = cpus;
	if (quota != VR_LIMIT_NO_QUOTA) {
		double got = (double)quota / PERIOD * (1 + p->leak) +
			     p->overrun_ms * MS / PERIOD;

		if (got < cpus)
			cpus = got;
	}
	w = (cpus > 0 ? p->static_w : 0) + cpus * p->w_per_cpu *
	    (1 + (p->turbo - 1) * (1 - cpus / p->demand));
	w *= 1 + noise(p);
	*watts = w;
	return (struct vr_limit_sample){
		.energy_uj = (uint64_t)llround(w * 1e6 * p->tick / SEC),
		.cpu_ns = (uint64_t)llround(cpus * p->tick),
		.dt_ns = p->tick,
		.throttled_ns = quota != VR_LIMIT_NO_QUOTA &&
				cpus < want ? 1000 : 0,
	};
}

static struct plant default_plant(void)
{
	return (struct plant){
		.demand = 4.1, .static_w = 3, .w_per_cpu = 13, .turbo = 1.3,
		.leak = 0.05, .overrun_ms = 3, .rs = 12345, .tick = TICK,
	};
}

static double uncapped_w(struct plant p)
{
	return p.static_w + p.demand * p.w_per_cpu;
}

/* A quota as cpu.max takes it: "max", or whole us in [1 ms, NCPU periods]. */
static int quota_ok(uint64_t q)
{
	return q == VR_LIMIT_NO_QUOTA ||
	       (q >= VR_LIMIT_MIN_QUOTA_NS && q <= NCPU * PERIOD &&
		q % 1000 == 0);
}

/* The judgement of a run: per-window error against the limit, in %. */
struct verdict {
	double err, over;	/* mean abs, worst above, judged windows */
	double slide;		/* worst sliding window above, judged */
	int settled;		/* windows from the start to settle */
	int bad_quota;
};

/*
 * Runs @l on @p for @nwin windows from a primed start; at window @step
 * (if > 0) the limit becomes @limit2_uw.  Judges windows @from .. the
 * end, and settling after @step (or the start).
 */
static struct verdict run(struct vr_limit *l, struct plant *p, int nwin,
			  int step, uint64_t limit2_uw, int from)
{
	struct verdict v = { 0, -INFINITY, -INFINITY, -1, 0 };
	int i, k, n = 0, base = step > 0 ? step : 0;
	int per = (int)(WINDOW / p->tick), t = 0;
	double win[64], w, lim[64], last[256], sum = 0;
	uint64_t q;
	struct vr_limit_sample s;

	s = plant_tick(p, VR_LIMIT_NO_QUOTA, &w);
	q = vr_limit_prime(l, &s);
	v.bad_quota += !quota_ok(q);
	for (i = 0; i < nwin && i < 64; i++) {
		if (step > 0 && i == step)
			vr_limit_set(l, limit2_uw, &q);
		lim[i] = (double)l->limit_uw / 1e6;
		win[i] = 0;
		for (k = 0; k < per; k++, t++) {
			s = plant_tick(p, q, &w);
			win[i] += w / per;
			/* the sliding window ending at this tick */
			sum += w - (t >= per ? last[t % per] : 0);
			last[t % per] = w;
			if (i >= from && t >= per)
				v.slide = fmax(v.slide, 100 * (sum / per -
							       lim[i]) /
					       lim[i]);
			q = vr_limit_tick(l, &s);
			v.bad_quota += !quota_ok(q);
		}
	}
	for (i = from; i < nwin; i++) {
		double e = 100 * (win[i] - lim[i]) / lim[i];

		v.err += fabs(e);
		v.over = fmax(v.over, e);
		n++;
	}
	v.err /= n ? n : 1;
	for (i = nwin - 1; i >= base; i--) {
		if (fabs(100 * (win[i] - lim[i]) / lim[i]) > 3)
			break;
		v.settled = i - base + 1;
	}
	return v;
}

static int meets(const struct verdict *v)
{
	return v->err <= 3 && v->over <= 3 && v->slide <= 3 &&
	       !v->bad_quota;
}

static void test_init(void)
{
	struct vr_limit l, before;
	static const struct {
		uint64_t limit, window, tick, period;
		uint32_t cpus;
		const char *what;
	} bad[] = {
		{ 0, SEC, TICK, PERIOD, 4, "0 W" },
		{ 999, SEC, TICK, PERIOD, 4, "under 1 mW" },
		{ VR_LIMIT_MAX_UW + 1, SEC, TICK, PERIOD, 4, "over 100 kW" },
		{ 40000000, 0, TICK, PERIOD, 4, "window 0" },
		{ 40000000, SEC, 0, PERIOD, 4, "tick 0" },
		{ 40000000, SEC, TICK, 0, 4, "period 0" },
		{ 40000000, SEC, TICK, 999999, 4, "period under 1 ms" },
		{ 40000000, 4 * SEC, 2 * SEC, 2 * SEC, 4, "period over 1 s" },
		{ 40000000, SEC, TICK, 100000500, 4, "period not whole us" },
		{ 40000000, SEC, 150 * MS, PERIOD, 4,
		  "tick not a whole number of periods" },
		{ 40000000, SEC, 300 * MS, PERIOD, 4,
		  "window not a whole number of ticks" },
		{ 40000000, SEC, SEC, PERIOD, 4, "one tick a window" },
		{ 40000000, 300 * SEC, MS, MS, 4, "over 256 ticks a window" },
		{ 40000000, 3601 * SEC, 3601 * SEC / 10, 1000 * MS, 4,
		  "window over an hour" },
		{ 40000000, SEC, TICK, PERIOD, 0, "no CPUs" },
		{ 40000000, SEC, TICK, PERIOD, VR_LIMIT_MAX_CPUS + 1,
		  "too many CPUs" },
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&l, 0xa5, sizeof(l));
		before = l;
		tap(vr_limit_init(&l, bad[i].limit, bad[i].window, bad[i].tick,
				  bad[i].period, bad[i].cpus) == -EINVAL &&
		    !memcmp(&l, &before, sizeof(l)),
		    "init: %s is -EINVAL, the state untouched", bad[i].what);
	}
	tap(!vr_limit_init(&l, 40000000, SEC, TICK, PERIOD, 4) &&
	    l.nticks == 10 && l.quota_ns == VR_LIMIT_NO_QUOTA,
	    "init: 40 W, 1 s, 100 ms, 100 ms, 4 CPUs accepted, released");
	tap(!vr_limit_init(&l, VR_LIMIT_MIN_UW, 3584 * SEC, 14 * SEC,
			   1000 * MS, 1) && l.nticks == 256 &&
	    !vr_limit_init(&l, VR_LIMIT_MAX_UW, 2 * MS, MS, MS,
			   VR_LIMIT_MAX_CPUS),
	    "init: the ranges' ends accepted (1 mW, 256 ticks of 14 s; "
	    "100 kW, 2 ms, 65536 CPUs)");
	before = l;
	tap(vr_limit_set(&l, 0, NULL) == -EINVAL &&
	    !memcmp(&l, &before, sizeof(l)), "set: 0 W is -EINVAL, untouched");
}

static void test_converge(void)
{
	static const int pct[] = { 20, 50, 90 };
	size_t i;

	for (i = 0; i < sizeof(pct) / sizeof(pct[0]); i++) {
		struct plant p = default_plant();
		struct vr_limit l;
		struct verdict v;
		uint64_t lim = (uint64_t)(uncapped_w(p) * pct[i] * 1e4);

		vr_limit_init(&l, lim, WINDOW, TICK, PERIOD, NCPU);
		v = run(&l, &p, 13, 0, 0, 3);
		tap(meets(&v) && v.settled >= 1 && v.settled <= 3,
		    "converges at %d %% of the uncapped power: error %.2f %%, "
		    "worst window %+.2f %%, sliding %+.2f %%, settled in %d "
		    "windows", pct[i], v.err, v.over, v.slide, v.settled);
	}
}

/* A tick of 2 and 5 periods: the quota is per period, not per tick. */
static void test_tick(void)
{
	static const uint64_t ticks[] = { 200 * MS, 500 * MS };
	size_t i;

	for (i = 0; i < sizeof(ticks) / sizeof(ticks[0]); i++) {
		struct plant p = default_plant();
		struct vr_limit l;
		struct verdict v;

		p.tick = ticks[i];
		vr_limit_init(&l, (uint64_t)(uncapped_w(p) * 50 * 1e4),
			      WINDOW, ticks[i], PERIOD, NCPU);
		v = run(&l, &p, 13, 0, 0, 3);
		tap(meets(&v) && v.settled >= 1 && v.settled <= 3,
		    "a tick of %llu ms, period 100 ms: error %.2f %%, worst "
		    "window %+.2f %%, settled in %d windows",
		    (unsigned long long)(ticks[i] / MS), v.err, v.over,
		    v.settled);
	}
}

/*
 * Phases of 5 busy and 5 light ticks, one a window: the busy ticks spend
 * what the light ones saved, so each window is near the limit (a quarter
 * of the savings is kept back each tick, so the busy ticks leave a little
 * unspent: 2 % here).  A load whose period is the window's is the window
 * term's worst case: what a tick spends leaves the window a period
 * later, in step with the next phase, so a start-up transient echoes for
 * a few windows; judged from the 6th.
 */
static void test_phase(void)
{
	struct plant p = default_plant();
	struct vr_limit l;
	struct verdict v;

	p.light = 0.3;
	p.busy_ticks = 5;
	p.light_ticks = 5;
	vr_limit_init(&l, (uint64_t)(uncapped_w(p) * 40 * 1e4), WINDOW, TICK,
		      PERIOD, NCPU);
	v = run(&l, &p, 15, 0, 0, 5);
	tap(meets(&v), "phases (5 ticks at 4.1 CPUs, 5 at 0.3) under 40 %%: "
	    "the window's savings spent, error %.2f %%, worst window %+.2f "
	    "%%, sliding %+.2f %%", v.err, v.over, v.slide);
}

/* The guest's code draws 1.75x per CPU from window 6 on. */
static void test_load_step(void)
{
	struct plant p = default_plant();
	struct vr_limit l;
	struct vr_limit_sample s;
	double w, win[16], lim;
	uint64_t q;
	int i, k, settled = -1;

	lim = uncapped_w(p) * 0.5;
	vr_limit_init(&l, (uint64_t)(lim * 1e6), WINDOW, TICK, PERIOD, NCPU);
	s = plant_tick(&p, VR_LIMIT_NO_QUOTA, &w);
	q = vr_limit_prime(&l, &s);
	for (i = 0; i < 16; i++) {
		if (i == 6)
			p.w_per_cpu *= 1.75;
		win[i] = 0;
		for (k = 0; k < 10; k++) {
			s = plant_tick(&p, q, &w);
			win[i] += w / 10;
			q = vr_limit_tick(&l, &s);
		}
	}
	for (i = 15; i >= 6; i--) {
		if (fabs(100 * (win[i] - lim) / lim) > 3)
			break;
		settled = i - 6 + 1;
	}
	tap(settled >= 1 && settled <= 3,
	    "a load step (1.75x per CPU) at 50 %%: settled in %d windows "
	    "(the step's window %+.2f %%)", settled,
	    100 * (win[6] - lim) / lim);
}

/*
 * The same judgement must fail without feedback: the gain estimate alone
 * does not see the quota's overrun (here 25 %).
 */
static void test_mutant(void)
{
	struct plant p = default_plant();
	struct vr_limit l;
	struct verdict good, bad;
	uint64_t lim = (uint64_t)(uncapped_w(p) * 50 * 1e4);

	p.leak = 0.25;
	vr_limit_init(&l, lim, WINDOW, TICK, PERIOD, NCPU);
	good = run(&l, &p, 13, 0, 0, 3);
	p = default_plant();
	p.leak = 0.25;
	vr_limit_init(&l, lim, WINDOW, TICK, PERIOD, NCPU);
	l.ki_shift = 63;
	l.keep_shift = 0;
	l.repay_shift = 63;
	bad = run(&l, &p, 13, 0, 0, 3);
	tap(meets(&good) && !meets(&bad),
	    "a 25 %% overrun: met with feedback (error %.2f %%, worst %+.2f "
	    "%%), caught without it (error %.2f %%, worst %+.2f %%)",
	    good.err, good.over, bad.err, bad.over);
}

static void test_release(void)
{
	struct plant p = default_plant();
	struct vr_limit l;
	struct vr_limit_sample s;
	uint64_t q = VR_LIMIT_NO_QUOTA;
	double w, win = 0;
	int i, released_at = -1, engaged_at = -1, held = 1;

	/* a limit above what one busy CPU draws */
	p.demand = 1;
	vr_limit_init(&l, (uint64_t)(uncapped_w(default_plant()) * 0.6e6),
		      WINDOW, TICK, PERIOD, NCPU);
	s = plant_tick(&p, q, &w);
	q = vr_limit_prime(&l, &s);
	for (i = 0; i < 30; i++) {
		s = plant_tick(&p, q, &w);
		q = vr_limit_tick(&l, &s);
		if (q == VR_LIMIT_NO_QUOTA && released_at < 0)
			released_at = i;
		if (released_at >= 0 && q != VR_LIMIT_NO_QUOTA)
			held = 0;
	}
	tap(released_at >= 0 && released_at < 10 && held,
	    "a VM under its limit is released (\"max\") within a window "
	    "(%d ticks: once all its CPUs could not spend what the window "
	    "has left) and stays released", released_at + 1);

	/* its demand rises to 4 CPUs: taken back within a window */
	p.demand = 4.1;
	for (i = 0; i < 40; i++) {
		s = plant_tick(&p, q, &w);
		q = vr_limit_tick(&l, &s);
		if (q != VR_LIMIT_NO_QUOTA && engaged_at < 0)
			engaged_at = i;
		if (i >= 30)
			win += w / 10;
	}
	tap(engaged_at >= 0 && engaged_at < 10 &&
	    fabs(100 * (win - (double)l.limit_uw / 1e6) /
		 ((double)l.limit_uw / 1e6)) <= 3,
	    "its demand rises: a quota again after %d ticks, the 4th window "
	    "%.2f W for %.2f W", engaged_at + 1, win,
	    (double)l.limit_uw / 1e6);
}

/*
 * A quota that does not bind (a VM of 1 CPU, a limit that all its CPUs
 * would exceed) must not wind the integral up: when its demand rises, no
 * sliding window goes above the limit.
 */
static void test_windup(void)
{
	struct plant p = default_plant();
	struct vr_limit l;
	struct vr_limit_sample s;
	uint64_t q;
	double w, last[10] = { 0 }, sum = 0, lim, worst = -INFINITY;
	int i, bound = 1;

	p.demand = 1;
	lim = 20;
	vr_limit_init(&l, (uint64_t)(lim * 1e6), WINDOW, TICK, PERIOD, NCPU);
	s = plant_tick(&p, VR_LIMIT_NO_QUOTA, &w);
	q = vr_limit_prime(&l, &s);
	for (i = 0; i < 80; i++) {
		if (i == 40)
			p.demand = 4.1;
		s = plant_tick(&p, q, &w);
		sum += w - last[i % 10];
		last[i % 10] = w;
		if (i >= 10)
			worst = fmax(worst, 100 * (sum / 10 - lim) / lim);
		q = vr_limit_tick(&l, &s);
		if (i < 40 && q == VR_LIMIT_NO_QUOTA)
			bound = 0;
	}
	tap(bound && worst <= 3,
	    "a quota that does not bind for 4 s, then the demand rises: the "
	    "worst sliding window %+.2f %% (no windup)", worst);
}

static void test_step(void)
{
	struct plant p = default_plant();
	struct vr_limit l;
	struct verdict v;
	double u = uncapped_w(p);

	vr_limit_init(&l, (uint64_t)(u * 0.8e6), WINDOW, TICK, PERIOD, NCPU);
	v = run(&l, &p, 19, 6, (uint64_t)(u * 0.4e6), 9);
	tap(meets(&v) && v.settled >= 1 && v.settled <= 3,
	    "a step 80 %% -> 40 %%: settled in %d windows, then error %.2f "
	    "%%, worst window %+.2f %%, sliding %+.2f %%", v.settled, v.err,
	    v.over, v.slide);

	p = default_plant();
	vr_limit_init(&l, (uint64_t)(u * 0.3e6), WINDOW, TICK, PERIOD, NCPU);
	v = run(&l, &p, 19, 6, (uint64_t)(u * 0.7e6), 9);
	tap(meets(&v) && v.settled >= 1 && v.settled <= 3,
	    "a step 30 %% -> 70 %%: settled in %d windows, then error %.2f "
	    "%%, worst window %+.2f %%, sliding %+.2f %%", v.settled, v.err,
	    v.over, v.slide);
}

static void test_edges(void)
{
	struct vr_limit l;
	struct vr_limit_sample s = { 0 };
	uint64_t q, k;

	vr_limit_init(&l, 20000000, WINDOW, TICK, PERIOD, 4);
	s = (struct vr_limit_sample){ 5000000, 4 * TICK, TICK, 0 };
	q = vr_limit_prime(&l, &s);
	k = l.k_uw;
	tap(k == 12500000 && q == 160 * MS,
	    "prime: 50 W on 4 CPUs is 12.5 W per CPU; 20 W is 1.6 CPUs "
	    "(%llu uW, %llu ns)", (unsigned long long)k,
	    (unsigned long long)q);
	s = (struct vr_limit_sample){ 0, 0, 0, 0 };
	tap(vr_limit_tick(&l, &s) == q && l.k_uw == k,
	    "a tick of length 0 changes nothing");
	tap(!vr_limit_set(&l, 10000000, &q) && q == 80 * MS &&
	    l.quota_ns == q && !vr_limit_set(&l, 20000000, NULL) &&
	    l.quota_ns == 160 * MS,
	    "set: a new limit is planned at once (10 W: 0.8 CPUs, back to "
	    "20 W: 1.6)");
	s = (struct vr_limit_sample){ 0, 0, TICK, 0 };
	q = vr_limit_tick(&l, &s);
	tap(l.k_uw == k && quota_ok(q),
	    "an idle tick (no CPU, no energy) leaves the gain alone");
	k = l.k_uw;
	s = (struct vr_limit_sample){ UINT64_MAX, TICK, TICK, 1000 };
	q = vr_limit_tick(&l, &s);
	tap(quota_ok(q) && l.k_uw == k + (4 * k - k) / 4,
	    "an absurd tick (2^64 uJ on one CPU) is taken as 4x the gain, at "
	    "its weight of a quarter; the quota stays in range");
	s = (struct vr_limit_sample){ UINT64_MAX, 1, TICK, UINT64_MAX };
	k = l.k_uw;
	q = vr_limit_tick(&l, &s);
	tap(quota_ok(q) && l.k_uw == k,
	    "a tick with 1 ns of CPU does not show the gain");

	tap(vr_limit_static_quota(10000000, 25000000, PERIOD, 4) ==
	    250 * MS, "static: 25 W at 10 W per CPU is 2.5 CPUs");
	tap(vr_limit_static_quota(10000000, 40000000, PERIOD, 4) ==
	    VR_LIMIT_NO_QUOTA &&
	    vr_limit_static_quota(0, 25000000, PERIOD, 4) ==
	    VR_LIMIT_NO_QUOTA,
	    "static: \"max\" at all 4 CPUs' worth, or without a figure");
	tap(vr_limit_static_quota(10000000, 1000, PERIOD, 4) ==
	    VR_LIMIT_MIN_QUOTA_NS &&
	    vr_limit_static_quota(3000000, 1000000, PERIOD, 4) == 33333000,
	    "static: at least 1 ms, whole microseconds");
}

int main(void)
{
	printf("TAP version 13\n");
	test_init();
	test_converge();
	test_tick();
	test_phase();
	test_mutant();
	test_release();
	test_windup();
	test_step();
	test_load_step();
	test_edges();
	return tap_done();
}
