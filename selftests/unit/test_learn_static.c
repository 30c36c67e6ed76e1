// SPDX-License-Identifier: GPL-2.0
/*
 * Regression test (was bugs/bug_learned_static.c, fixed in 8c8a520): the
 * learning of P_static (origin unknown/learned), vr_learn_static().
 *
 * 1. Not biased low on a real counter.  With 1 ms epochs and a counter
 *    latched every ~1 ms, one idle epoch reads one or two latches
 *    whatever dt is in 1.0-1.9 ms; learning the minimum of per-epoch
 *    samples followed their low tail (a 40 W idle package was learned as
 *    ~27 W, forever).  P_static is now learned from idle epochs summed
 *    to 100 ms (first from runs of consecutive ones; since December 2
 *    from any stretches of them, less the first 2 ms of each, which
 *    test_fit.c's C-state case covers).
 *
 * 3. Short idle stretches between bursts (December 3).  Only complete
 *    sums of 100 ms set the floor, so a package idle for a few ms now and
 *    then went on with the fit (or nothing) for minutes: the simulator's
 *    turbo packages took 2 to 3 minutes, their fit read 53 W for an 18 W
 *    floor.  The mean of the first 5 ms or more is now a provisional
 *    floor.  And the complete sums were folded in as a slowly rising
 *    minimum, which settled on their low tail, a few % low with short
 *    stretches; their running mean is used now.
 *
 * 4. A quiet package (December 3).  An all-idle package is not closed
 *    again until one of its CPUs wakes (no tick, and the package timer
 *    is deferrable), so each idle stretch is one epoch, and the 2 ms
 *    skip took it whole: the module learned nothing, which the rig's
 *    emulated AMD package showed (the other package's floor never came).
 *    A stretch's first epoch of 2 ms or more now counts, less the tail
 *    of busy power the counter's lag carries into it.  1-3 ms bursts at
 *    20 W above a 40 W floor, 20-80 ms idle between them, closes only
 *    at CPU 0's events: within 1 % of 40 W.
 *
 * 5. Several CPUs in the last busy epoch (December 3).  The tail taken
 *    off a stretch's first epoch was lag_ns at the last busy epoch's mean
 *    power.  Where CPUs go idle one by one, the busy time ends with fewer
 *    of them than its mean, so that overstated the tail and the floor was
 *    learned low (the simulator's floating, turbo and spread packages,
 *    up to 11 % low).  The tail is now what the CPUs still busy in the
 *    counter's lag window burn, as the fold measured them.  Four CPUs
 *    at 20 W each above a 40 W floor, then 2-4 ms idle: three go idle
 *    after 0.3-0.5 ms and the last at 2 ms learn 40 W +- 1 % (the old
 *    rule: about 37 W); all four ending together, the same.
 *
 * 6. Kernel threads on a quiet package (December 4).  The rig's idle
 *    emulated package once learned 1.45 W for its 8 W floor (0 W after
 *    3 s), after the test that read it stopped running there: its only
 *    busy time was the emulated kernel's threads, 0.1 % of it.  Two
 *    mistakes in the tail: a CPU busy at the close counted as busy for
 *    the whole lag window, the CPU whose wake closed the epoch too; and
 *    with no estimate yet, the excess over it was the whole floor, which
 *    k, dt / B times the CPU time in the window (B a kthread's, a
 *    thousandth of dt), made the whole busy epoch's energy: the idle
 *    epoch after it was learned as 0 W, and the estimate held at 0 took
 *    the next tails at the whole floor again.  Now the fold counts each
 *    CPU's run as far as it lies in the window, and while there is no
 *    estimate the idle epoch's own power stands for it.  And the tail is
 *    the last busy epoch's, also when its power is too short to measure
 *    (it was the last measured one's).  The fold's measure is checked
 *    on single CPUs (the old one fails three of the six); the tail of
 *    an unmeasured epoch is its own (19.6 mJ, not 41.5); a kthread's
 *    epoch, closed as another CPU wakes, then 100 ms idle at 40 W learn
 *    40 W (the old rule: 26.8 W), and so they do with the kthread still
 *    busy at that close (28.0 W over 0 W); four CPUs busy through a
 *    close, then 10 ms idle, give a first estimate of 40 W (44.0 W with
 *    no tail before the first estimate, a rule tried on the way).  And a
 *    guard, which the old rules passed too: CPU 1 wakes every 20-60 ms for
 *    0.1-0.3 ms at 10 W, the package timer closes it 1-1.3 ms after half
 *    the wakes (the counter steps every 1.15 ms, as the rig's did), the
 *    floor is 40 W +- 25 % from one wake to the next: the estimate over
 *    the last 150 of 200 s averages 40 W +- 1 %.  (Over the last 15 of
 *    20 s until case 7: the sums then vary by 3.5 W, about 3.5 of them a
 *    second, so 1 % was about one standard error of that average, and
 *    the running mean of case 7 read 39.38 W on this seed.)
 *
 * 7. The sums' weights (December 4).  Each complete sum moved the floor
 *    by 1/16 of the difference, whatever its length, and the first sum
 *    stood for all those before the 16th: a single long idle epoch (one
 *    sum of a second or more) weighed as much as 100 ms of it, and the
 *    first sum's error stayed (the simulator's spread: 0.93 %, seeds up
 *    to 1.96 %; 0.57 and 0.91 % now).  A sum of t now moves it by t / T
 *    of the difference, T the idle time summed so far, at most 1.6 s:
 *    with 100 ms sums, the n-th by 1/n up to the 16th, then by 1/16.
 *    Sums of 38 and 42 W in turn: 40 W after the second (the old rule:
 *    38.25 W), within 2 / n W after the n-th up to the 16th, and 0.13 W
 *    (2 / 15.5) after that; sums uniform in 40 +- 2 W: within 0.25 W on
 *    average (expected 0.165 W); a floor that moves to 44 W is followed
 *    to within 0.1 W in 100 sums (10 s of idle time); one idle epoch of
 *    1.6 s at 44 W after 40 W takes the floor to 44 W (the old rule:
 *    40.25 W); a floor handed in counts as 1.6 s of sums, so one more of
 *    48 W moves 40 W to 40.5 W.  (A memory of 12.8 s, tried on the way,
 *    averaged more noise away on the simulator's constant floors but
 *    read 24.5 % on mostly-idle with floors that drift +-5 % over two
 *    minutes, against 7.01 % now: bench/RESULTS.md.)
 *
 * 8. A package C-state entered some time after the last core idles.
 *    The package still draws its uncore (15 W above a 40 W floor) for
 *    3 ms after CPU 0's bursts, then the floor alone; idle stretches of
 *    4-40 ms.  Each stretch held 45 mJ above floor x length, which the
 *    old rule learned as floor (about 42 W, +5 %).  The stretches' bins
 *    measure it (struct vr_settle) and take it off: 40 W +- 1 %, with no
 *    constant for the delay; the same with a 1 ms delay.
 *
 * 2. Nothing learned, and no static debt added, by a baseline.  After a
 *    close that could not read the counter (valid = 0, e.g. the glue's
 *    forced close with VR_CLOSE_LOST and no reader), the next close only
 *    records the baseline: de = 0.  It used to be a clean epoch, so an
 *    idle package learned 0 W and owed P_static x dt of static debt.  A
 *    first PKG sample now makes the epoch lost: no split, no debt, nothing
 *    learned.  (A debt carried in from the epochs before the unread one is
 *    not the baseline's doing: it is compared with the one before.)
 */
#include "vt_host.h"

/* A forced close with no reader: nothing read, the interval unknown. */
static u32 read_none(void *ctx, u64 *raw, u64 dt, u64 busy)
{
	(void)ctx;
	(void)raw;
	(void)dt;
	(void)busy;
	return VR_READ_LOST;
}

/* One close at @now, close_lock held, the counter read by @read. */
static void close_at(struct bh *h, u64 now, vr_read_fn read)
{
	struct bh_read r = { h, now };

	vr_lock(&h->p.close_lock);
	vr_pkg_close_locked(&h->p, now, read, &r);
	vr_unlock(&h->p.close_lock);
}

/*
 * 5: CPUs 0-3 run host work at @h->vcpu_uw each; @ends[i] (ascending):
 * when CPU i goes idle after they all woke.
 */
static u64 burst4(struct bh *h, u64 now, const u64 *ends)
{
	int i, n = 4;

	vrm_set_power(&h->ctr, now, h->static_uw + 4 * h->vcpu_uw);
	for (i = 0; i < 4; i++) {
		vr_cpu_event(&h->cpu[i], now, true, NULL);
		bh_close(h, now);
	}
	for (i = 0; i < 4; i++) {
		vrm_set_power(&h->ctr, now + ends[i],
			      h->static_uw + --n * h->vcpu_uw);
		vr_cpu_event(&h->cpu[i], now + ends[i], false, NULL);
		bh_close(h, now + ends[i]);
	}
	return now + ends[3] + vt_range(2 * VT_MS, 4 * VT_MS);
}

/*
 * 5: 20 s of bursts4() at 20 W per CPU above a 40 W floor, 2-4 ms idle
 * between them: CPU 3 goes idle at 2 ms, the others at 0.3-0.5 ms, or
 * all four together.  Returns the static power learned, W, on average
 * over the last 10 s.
 */
static double bursts4(struct bh *h, bool together)
{
	u64 now, ends[4];
	double sum = 0;
	int i, n = 0;

	bh_init(h, 0, 14, 32, VT_MS, 50000, VT_MS, 500000000ULL,
		40000000ULL, VR_STATIC_UNKNOWN, VR_STATIC_OCCUPIED);
	h->vcpu_uw = 20000000;
	for (now = 0; now < 20 * VT_SEC;) {
		ends[0] = together ? 2 * VT_MS : 300000;
		for (i = 1; i < 3; i++)
			ends[i] = together ? 2 * VT_MS :
				  ends[i - 1] + vt_range(0, 100000);
		ends[3] = 2 * VT_MS;
		now = burst4(h, now, ends);
		if (now >= 10 * VT_SEC) {
			sum += (double)h->p.p_static_uw / 1e6;
			n++;
		}
	}
	return sum / n;
}

/*
 * 6: one cycle of a kernel thread on CPU 1 of a quiet package, waking at
 * @t; the floor is drawn for the cycle.  Returns the next wake.
 */
static u64 kthread_cycle(struct bh *h, u64 t)
{
	u64 floor = h->static_uw / 100 * (75 + vt_below(51));
	u64 r = vt_range(100000, 300000);

	vrm_set_power(&h->ctr, t, floor + h->vcpu_uw);
	vr_cpu_event(&h->cpu[1], t, true, NULL);
	bh_close(h, t);
	vrm_set_power(&h->ctr, t + r, floor);
	vr_cpu_event(&h->cpu[1], t + r, false, NULL);
	bh_close(h, t + r);
	if (vt_below(2))		/* the package timer, on some wakes */
		bh_close(h, t + vt_range(VT_MS, 1300000));
	return t + vt_range(20 * VT_MS, 60 * VT_MS);
}

/*
 * 6: the first estimate after busy time that ran through a close:
 * @trials fresh packages, the counter's latch at @trials phases evenly
 * over its 1 ms step (no jitter: the mean is the same for every seed),
 * four CPUs busy for 20 ms at 20 W each above a 40 W floor, the close at
 * its end, all four idle right after it, then 10 ms all idle: that
 * epoch is the first estimate (provisional).  Returns its mean, W.
 */
static double first_after4(struct bh *h, int trials)
{
	double sum = 0;
	u64 t0;
	int t, i;

	for (t = 0; t < trials; t++) {
		t0 = (u64)t * VT_MS / trials;
		bh_init(h, t0, 14, 32, VT_MS, 0, VT_MS, 500000000ULL,
			40000000ULL, VR_STATIC_UNKNOWN, VR_STATIC_OCCUPIED);
		close_at(h, 2 * VT_MS, bh_read_ctr);
		vrm_set_power(&h->ctr, 2 * VT_MS, 120000000);
		for (i = 0; i < 4; i++)
			vr_cpu_event(&h->cpu[i], 2 * VT_MS, true, NULL);
		close_at(h, 22 * VT_MS, bh_read_ctr);
		vrm_set_power(&h->ctr, 22 * VT_MS, 40000000);
		for (i = 0; i < 4; i++)
			vr_cpu_event(&h->cpu[i], 22 * VT_MS, false, NULL);
		close_at(h, 32 * VT_MS, bh_read_ctr);
		sum += (double)h->p.p_static_uw / 1e6;
	}
	return sum / trials;
}

/*
 * 6: an exact counter, nothing known, the first close at 1 ms, the
 * floor @uw from there.
 */
static void exact_unknown(struct bh *h, u64 uw)
{
	bh_init(h, 0, 24, 64, 1000, 0, VT_MS, 500000000ULL, 40000000ULL,
		VR_STATIC_UNKNOWN, VR_STATIC_OCCUPIED);
	close_at(h, VT_MS, bh_read_ctr);
	vrm_set_power(&h->ctr, VT_MS, uw);
}

/* 6: CPU 1 busy from @t, the package drawing @uw. */
static void cpu1_busy(struct bh *h, u64 t, u64 uw)
{
	vrm_set_power(&h->ctr, t, uw);
	vr_cpu_event(&h->cpu[1], t, true, NULL);
}

/*
 * 6: a close at 31 ms, after which CPU @cpu goes idle and the package
 * stays all idle at 40 W, closed again at 131 ms: returns the static
 * power then learned, W.
 */
static double idle_from_31ms(struct bh *h, int cpu)
{
	close_at(h, 31 * VT_MS, bh_read_ctr);
	vr_cpu_event(&h->cpu[cpu], 31 * VT_MS, false, NULL);
	vrm_set_power(&h->ctr, 31 * VT_MS, 40000000);
	close_at(h, 131 * VT_MS, bh_read_ctr);
	return (double)h->p.p_static_uw / 1e6;
}

/*
 * 7: one complete sum of @uw: an idle epoch of @ns (100 ms or more),
 * straight into the learning (no tail: nothing was busy).  Returns
 * P_static then, W.
 */
static double long_sum(struct bh *h, u64 uw, u64 ns)
{
	u64 rem = 0;

	vr_lock(&h->p.close_lock);
	vr_learn_static(&h->p, vr_energy_eu(uw, ns, &rem), ns, 0, false);
	vr_unlock(&h->p.close_lock);
	return (double)h->p.p_static_uw / 1e6;
}

/* 7: a sum of 100 ms. */
static double sum_of(struct bh *h, u64 uw)
{
	return long_sum(h, uw, 100 * VT_MS);
}

/* 7: the sums' running mean. */
static void sums_mean(struct bh *h)
{
	double w = 0, err = 0, worst = 0;
	int n;

	bh_init(h, 0, 24, 64, 1000, 0, VT_MS, 500000000ULL, 40000000ULL,
		VR_STATIC_UNKNOWN, VR_STATIC_OCCUPIED);
	for (n = 1; n <= 400; n++) {
		w = sum_of(h, n & 1 ? 38000000 : 42000000);
		if (n == 2)
			vt_near(w, 40.0, 1e-6,
				"sums of 38 and 42 W: 40 W after the second "
				"(got %.4f W)", w);
		if (n >= 2 && fabs(w - 40.0) - (n <= 16 ? 2.0 / n : 0.13) >
		    worst)
			worst = fabs(w - 40.0) - (n <= 16 ? 2.0 / n : 0.13);
	}
	vt_ok(worst <= 1e-5,
	      "sums of 38 and 42 W in turn: within 2 / n W of 40 W after the "
	      "n-th up to the 16th, 0.13 W after (worst excess %.4f W)",
	      worst);

	bh_init(h, 0, 24, 64, 1000, 0, VT_MS, 500000000ULL, 40000000ULL,
		VR_STATIC_UNKNOWN, VR_STATIC_OCCUPIED);
	for (n = 1; n <= 1200; n++) {
		w = sum_of(h, 38000000 + vt_below(4000001));
		if (n > 200)
			err += fabs(w - 40.0);
	}
	err /= 1000;
	vt_ok(err <= 0.25,
	      "sums uniform in 40 +- 2 W: within 0.25 W on average after the "
	      "first 200 (got %.4f W)", err);
	for (n = 1; n <= 100; n++)
		w = sum_of(h, 44000000);
	vt_near(w, 44.0, 0.1,
		"a floor moved to 44 W is followed within 0.1 W in 100 sums "
		"(got %.3f W)", w);

	/* one long idle epoch weighs its time */
	for (n = 1; n <= 100; n++)
		w = sum_of(h, 40000000);
	w = long_sum(h, 44000000, 1600 * VT_MS);
	vt_near(w, 44.0, 1e-3,
		"after 40 W, one idle epoch of 1.6 s at 44 W: 44 W (got %.3f W)",
		w);

	/* a floor handed in (a restart) counts as a whole memory */
	bh_init(h, 0, 24, 64, 1000, 0, VT_MS, 500000000ULL, 40000000ULL,
		VR_STATIC_LEARNED, VR_STATIC_OCCUPIED);
	w = sum_of(h, 48000000);
	vt_near(w, 40.5, 1e-4,
		"40 W handed in, then a sum of 48 W: 40 + 8 x 0.1 / 1.6 W "
		"(got %.4f W)", w);
}

/* 6: the fold's tail measure of CPU 0 alone, closed at @now. */
static u64 fold_tail_at(struct bh *h, u64 now)
{
	close_at(h, now, bh_read_ctr);
	return h->p.fold_tail;
}

/* 8: the uncore for @delay after CPU 0's bursts, then the floor alone */
static void pc6_delay(u64 delay)
{
	static struct bh h;
	u64 now, wake;
	double w = 0;
	int n = 0;

	bh_init(&h, 0, 14, 32, 976563, 50000, VT_MS, 500000000ULL,
		40000000ULL, VR_STATIC_UNKNOWN, VR_STATIC_OCCUPIED);
	h.vcpu_uw = 20000000;
	for (now = 0; now < 60 * VT_SEC;) {
		bh_event(&h, 0, now, true);
		now += vt_range(VT_MS, 3 * VT_MS);
		bh_event(&h, 0, now, false);
		vrm_set_power(&h.ctr, now, 55000000);
		wake = now + vt_range(4 * VT_MS, 40 * VT_MS);
		vrm_set_power(&h.ctr, now + delay, 40000000);
		now = wake;
		if (now >= 40 * VT_SEC) {
			w += (double)h.p.p_static_uw / 1e6;
			n++;
		}
	}
	w /= n;
	vt_near(w, 40.0, 0.4, "package C-state %llu ms after the last core "
		"idles: 40 W +- 1 %% on average over the last 20 s (got %.3f "
		"W)", (unsigned long long)(delay / VT_MS), w);
}

int main(void)
{
	static struct bh h;
	struct vr_pkg_stats st0, st1;
	u64 now, debt0, uw0, samples0;
	double w;
	int i;

	vt_start("vmrapl core: learned P_static");
	vt_seed(3);

	/* 1: hardware-like counter, 10 s idle at 40 W */
	bh_init(&h, 0, 14, 32, 976563, 50000, VT_MS, 500000000ULL,
		40000000ULL, VR_STATIC_UNKNOWN, VR_STATIC_OCCUPIED);
	bh_run(&h, 0, 10 * VT_SEC, false, 100000, 900000);
	vt_near((double)h.p.p_static_uw / 1e6, 40.0, 0.4,
		"hw-like counter: 10 s idle at 40 W learns 40 W +- 1%% "
		"(got %.3f W)", (double)h.p.p_static_uw / 1e6);
	vt_eq(h.p.static_origin, VR_STATIC_LEARNED,
	      "hw-like counter: origin learned");

	/* a provisional floor from the first 5 ms, final at 100 ms */
	bh_init(&h, 0, 14, 32, 976563, 50000, VT_MS, 500000000ULL,
		40000000ULL, VR_STATIC_UNKNOWN, VR_STATIC_OCCUPIED);
	bh_run(&h, 0, 6 * VT_MS, false, 100000, 900000);
	vt_ok(h.p.static_origin == VR_STATIC_UNKNOWN && !h.p.p_static_uw,
	      "6 ms idle (4 after the first 2): nothing learned yet");
	bh_run(&h, 6 * VT_MS, 90 * VT_MS, false, 100000, 900000);
	vt_ok(h.p.static_origin == VR_STATIC_LEARNED && h.p.idle_prov &&
	      !h.p.idle_known,
	      "90 ms idle: a provisional floor in use");
	vt_near((double)h.p.p_static_uw / 1e6, 40.0, 2.0,
		"90 ms idle: provisional 40 W +- 5%% (got %.3f W)",
		(double)h.p.p_static_uw / 1e6);
	bh_run(&h, 90 * VT_MS, 200 * VT_MS, false, 100000, 900000);
	vt_ok(h.p.static_origin == VR_STATIC_LEARNED && !h.p.idle_prov &&
	      h.p.idle_known, "200 ms idle: the floor is final");

	/* 3: 2 ms bursts at 20 W above the floor, 8 ms idle between them */
	bh_init(&h, 0, 14, 32, 976563, 50000, VT_MS, 500000000ULL,
		40000000ULL, VR_STATIC_UNKNOWN, VR_STATIC_OCCUPIED);
	h.vcpu_uw = 20000000;
	w = 0;
	for (now = 0; now < 20 * VT_SEC; now += 10 * VT_MS) {
		bh_run(&h, now, now + 2 * VT_MS, true, 100000, 900000);
		bh_run(&h, now + 2 * VT_MS, now + 10 * VT_MS, false, 100000,
		       900000);
		if (now == 40 * VT_MS)
			vt_ok(h.p.static_origin == VR_STATIC_LEARNED,
			      "bursts: a floor (%.3f W) in use after 50 ms, "
			      "from 5 ms of idle stretches",
			      (double)h.p.p_static_uw / 1e6);
		if (now >= 10 * VT_SEC)
			w += (double)h.p.p_static_uw / 1e6 / 1000;
	}
	vt_near(w, 40.0, 0.2,
		"bursts: 20 s learn 40 W +- 0.5%% on average over the last 10 s "
		"(got %.3f W)", w);

	/* control: an exact counter (1 us latches) learns it */
	bh_init(&h, 0, 24, 64, 1000, 0, VT_MS, 500000000ULL, 40000000ULL,
		VR_STATIC_UNKNOWN, VR_STATIC_OCCUPIED);
	bh_run(&h, 0, 10 * VT_SEC, false, 100000, 900000);
	vt_near((double)h.p.p_static_uw / 1e6, 40.0, 0.4,
		"control: exact counter: 10 s idle at 40 W learns 40 W +- 1%%");

	/* 4: a quiet package, closed only when its one busy CPU switches */
	bh_init(&h, 0, 14, 32, 976563, 50000, VT_MS, 500000000ULL,
		40000000ULL, VR_STATIC_UNKNOWN, VR_STATIC_OCCUPIED);
	h.vcpu_uw = 20000000;
	for (now = 0; now < 20 * VT_SEC;) {
		bh_event(&h, 0, now, true);
		now += vt_range(VT_MS, 3 * VT_MS);
		bh_event(&h, 0, now, false);
		now += vt_range(20 * VT_MS, 80 * VT_MS);
	}
	vt_ok(h.p.static_origin == VR_STATIC_LEARNED && h.p.idle_known,
	      "quiet package: its floor is learned (origin %s)",
	      vr_origin_names[h.p.static_origin]);
	vt_near((double)h.p.p_static_uw / 1e6, 40.0, 0.4,
		"quiet package: 20 s learn 40 W +- 1%% (got %.3f W)",
		(double)h.p.p_static_uw / 1e6);
	h.p.lag_ns = 0;		/* the same, with no tail taken off */
	h.p.idle_known = false;
	h.p.idle_prov = false;
	h.p.learn_eu = 0;
	h.p.learn_ns = 0;
	{
		double sum = 0;
		int n = 0;

		for (; now < 40 * VT_SEC;) {
			bh_event(&h, 0, now, true);
			now += vt_range(VT_MS, 3 * VT_MS);
			bh_event(&h, 0, now, false);
			now += vt_range(20 * VT_MS, 80 * VT_MS);
			if (now >= 30 * VT_SEC) {
				sum += (double)h.p.idle_uw / 1e6;
				n++;
			}
		}
		w = sum / n;
	}
	vt_diag("quiet package, no tail taken off: %.3f W over the last 10 s",
		w);
	/*
	 * 20 W x 0.5 ms of tail on stretches of 50 ms on average: 0.5 %
	 * high, on average over the last 10 s, less what the stretches'
	 * intercept (struct vr_settle) takes of it when it stands out of
	 * their noise: 40.08 to 40.24 W over seeds 1-12.
	 */
	vt_ok(w > 40.04,
	      "quiet package: without the tail it learns high (%.3f W > "
	      "40.04 W, on average over the last 10 s)", w);

	/*
	 * 5: several CPUs busy, going idle one by one or together.  The
	 * counter steps every 1 ms, as lag_ns (500 us) takes it: with the
	 * 976.6 us steps above, four CPUs ending together learn 38.94 W,
	 * the assumed lag being 2.4 % longer than the mean one on tails a
	 * third of a stretch's energy.
	 */
	w = bursts4(&h, false);
	vt_near(w, 40.0, 0.4, "one by one: 20 s learn 40 W +- 1%% on average "
		"over the last 10 s (got %.3f W)", w);
	w = bursts4(&h, true);
	vt_near(w, 40.0, 0.4, "together: 20 s learn 40 W +- 1%% on average "
		"over the last 10 s (got %.3f W)", w);

	/*
	 * 2: one forced close without a reader, then the baseline close,
	 * 10 ms after the last close (case 5's; until December 4 at 10 s,
	 * which case 5, added later, had already passed: the clock went
	 * back 10 s, which the close takes as an epoch of 0 ns).
	 */
	now = h.p.t_last + 10 * VT_MS;
	debt0 = h.p.static_debt;
	uw0 = h.p.p_static_uw;
	samples0 = h.p.samples;
	vr_pkg_read_stats(&h.p, &st0, 1);
	close_at(&h, now, read_none);
	close_at(&h, now + 1500000, bh_read_ctr);
	vr_pkg_read_stats(&h.p, &st1, 1);
	vt_diag("around the baseline: P_static %.6f -> %.6f W, static debt "
		"%llu -> %llu eu", (double)uw0 / 1e6,
		(double)h.p.p_static_uw / 1e6, (unsigned long long)debt0,
		(unsigned long long)h.p.static_debt);
	vt_eq(h.p.samples, samples0 + 2, "two closes: unread, then baseline");
	vt_eq(h.p.p_static_uw, uw0,
	      "a baseline epoch after an unread close learns nothing");
	vt_ok(h.p.static_debt <= debt0,
	      "a baseline epoch owes no static energy (debt %llu <= %llu)",
	      (unsigned long long)h.p.static_debt,
	      (unsigned long long)debt0);
	vt_ok(st1.static_e == st0.static_e && st1.dynamic == st0.dynamic &&
	      st1.sampled == st0.sampled,
	      "the unread and the baseline closes split nothing");

	/* and the package goes on learning 40 W */
	bh_run(&h, now + 1500000, now + 2 * VT_SEC, false, 100000, 900000);
	vt_near((double)h.p.p_static_uw / 1e6, 40.0, 0.4,
		"2 s later: still 40 W +- 1%%");

	/* 6: the fold's measure, lag_ns 500 us: a window of 1 ms */
	bh_init(&h, 0, 14, 32, 976563, 0, VT_MS, 500000000ULL, 40000000ULL,
		VR_STATIC_UNKNOWN, VR_STATIC_OCCUPIED);
	vr_cpu_event(&h.cpu[0], 10 * VT_MS, true, NULL);
	vt_eq(fold_tail_at(&h, 10 * VT_MS), 0ULL,
	      "tail measure: a CPU that woke at the close counts nothing");
	vt_eq(fold_tail_at(&h, 10 * VT_MS + 200000), 200000ULL * 1800000,
	      "tail measure: busy for 0.2 ms: 0.2 x (2 - 0.2) ms^2");
	vt_eq(fold_tail_at(&h, 13 * VT_MS), 1000000ULL * 1000000,
	      "tail measure: busy for 3 ms: the whole window, 1 ms^2");
	vr_cpu_event(&h.cpu[0], 13 * VT_MS + 100000, false, NULL);
	vt_eq(fold_tail_at(&h, 13 * VT_MS + 300000), 800000ULL * 800000,
	      "tail measure: idle for 0.2 ms after a long run: 0.8^2 ms^2");
	vr_cpu_event(&h.cpu[0], 20 * VT_MS, true, NULL);
	vr_cpu_event(&h.cpu[0], 20 * VT_MS + 100000, false, NULL);
	vt_eq(fold_tail_at(&h, 20 * VT_MS + 300000), 100000ULL * 1500000,
	      "tail measure: idle for 0.2 ms after 0.1 ms: 0.1 x (1.6 - "
	      "0.1) ms^2");
	vt_eq(fold_tail_at(&h, 22 * VT_MS), 0ULL,
	      "tail measure: idle for longer than the window: nothing");

	/*
	 * 6: the tail is the last busy epoch's, even when its power could
	 * not be measured.  An exact counter, the floor known (40 W): four
	 * CPUs busy for 20 ms at 20 W each above it, closed while they run;
	 * they go idle 50 us later, in an epoch closed 0.3 ms after that
	 * (shorter than lag_ns: its power is not measured); then 10 ms
	 * idle.  The CPUs left the lag window's last 0.3 ms idle: 80 W x
	 * 0.7^2 / 2 ms = 19.6 mJ of tail, not the 40 mJ of a window they
	 * were busy in all along (+- 10 %: the busy power is measured 3 W
	 * high, with no lead; the epoch before's tail: 41.5 mJ).
	 */
	bh_init(&h, 0, 24, 64, 1000, 0, VT_MS, 500000000ULL, 40000000ULL,
		VR_STATIC_LEARNED, VR_STATIC_OCCUPIED);
	close_at(&h, VT_MS, bh_read_ctr);
	vrm_set_power(&h.ctr, VT_MS, 120000000);
	for (i = 0; i < 4; i++)
		vr_cpu_event(&h.cpu[i], VT_MS, true, NULL);
	close_at(&h, 21 * VT_MS, bh_read_ctr);
	vrm_set_power(&h.ctr, 21 * VT_MS + 50000, 40000000);
	for (i = 0; i < 4; i++)
		vr_cpu_event(&h.cpu[i], 21 * VT_MS + 50000, false, NULL);
	close_at(&h, 21 * VT_MS + 350000, bh_read_ctr);
	close_at(&h, 31 * VT_MS + 350000, bh_read_ctr);
	w = 400.0 - (double)h.p.learn_eu * 1e3 / (1 << VR_EU_SHIFT);
	vt_near(w, 19.6, 1.96,
		"tail of an epoch too short to measure: its own, 19.6 mJ +- "
		"10%% (got %.2f mJ)", w);

	/*
	 * 6: what a kthread's epoch did: 30 ms at a floor of 44 W, CPU 1
	 * busy for 0.1 ms of it, closed as CPU 0 wakes (for nothing: it
	 * idles again at once); then 100 ms all idle at 40 W, nothing known
	 * before.  The old rule took a tail of 44 W (the excess over the
	 * estimate, 0 W) x 29.5 ms off the idle epoch and learned 27 W.
	 */
	exact_unknown(&h, 44000000);
	cpu1_busy(&h, 2 * VT_MS, 54000000);
	vrm_set_power(&h.ctr, 2 * VT_MS + 100000, 44000000);
	vr_cpu_event(&h.cpu[1], 2 * VT_MS + 100000, false, NULL);
	vr_cpu_event(&h.cpu[0], 31 * VT_MS, true, NULL);
	w = idle_from_31ms(&h, 0);
	vt_near(w, 40.0, 0.2,
		"a kthread's epoch closed at a wake: the idle epoch after it "
		"learns 40 W +- 0.5%% (got %.3f W)", w);

	/*
	 * 6: 30 ms at the 40 W floor, CPU 1 busy for its last 0.2 ms at
	 * 10 W more, going idle just after the close: a real tail (10 W x
	 * about 0.1 ms).  With no estimate yet, the excess over 0 W would
	 * be the whole floor and k is held at 15 ms: the tail would take
	 * 29.5 ms of floor (that rule: 28.0 W).  The idle epoch's own power
	 * stands for the estimate instead, the tail solved for the
	 * estimate it leaves, with the busy epoch's lead, taken at 0 W, at
	 * that estimate too: 40 W +- 0.25 % (39.97 W; the tail over the
	 * idle epoch's own power alone read 39.8 W, the busy power being
	 * measured 0.7 W high by its lead at 0 W; solved for the estimate
	 * but with that lead, 39.7 W).
	 */
	exact_unknown(&h, 40000000);
	cpu1_busy(&h, 30 * VT_MS + 800000, 50000000);
	w = idle_from_31ms(&h, 1);
	vt_near(w, 40.0, 0.1,
		"no estimate yet, a CPU busy at the close: the tail solved for "
		"the estimate, 40 W +- 0.25%% (got %.3f W)", w);

	/*
	 * 6: and where the busy time was real, the first estimate still
	 * takes its tail off: 80 W over the counter's lag of 0.5 ms on
	 * average, 4 W on the 10 ms idle epoch (with no tail while there
	 * is no estimate: 44 W, which the later tails, taken over it, kept
	 * high: the simulator's turbo packages learned 19.3 W for 18.4 W).
	 * The tail taken over the idle epoch's own power, which holds the
	 * tail, fell short and left 40.14 W; solved for the estimate it
	 * leaves, 39.94 W; with the busy power's lead, taken at 0 W, at
	 * that estimate too, 39.99 W.  Until the phases were spread
	 * evenly, the jitter's random walk drew them and the first rule
	 * failed the 1 % bound it had then on 5 of 20 seeds.
	 */
	w = first_after4(&h, 1000);
	vt_near(w, 40.0, 0.04,
		"no estimate yet, four CPUs busy through the close: the first "
		"estimate is 40 W +- 0.1%% over 1000 counter phases (got "
		"%.3f W)", w);

	/* 6: kernel threads on a quiet package, a noisy floor */
	bh_init(&h, 0, 14, 32, 1150000, 100000, VT_MS, 500000000ULL,
		40000000ULL, VR_STATIC_UNKNOWN, VR_STATIC_OCCUPIED);
	h.vcpu_uw = 10000000;
	{
		double sum = 0;
		int n = 0;

		for (now = 0; now < 200 * VT_SEC;) {
			now = kthread_cycle(&h, now);
			if (now >= 50 * VT_SEC) {
				sum += (double)h.p.p_static_uw / 1e6;
				n++;
			}
		}
		w = sum / n;
	}
	vt_diag("kernel threads: %llu idle epochs of %llu, P_static %s",
		(unsigned long long)h.p.epochs_idle,
		(unsigned long long)h.p.samples,
		vr_origin_names[h.p.static_origin]);
	vt_near(w, 40.0, 0.4,
		"kernel threads: 200 s learn 40 W +- 1%% on average over the "
		"last 150 s (got %.3f W)", w);

	sums_mean(&h);

	pc6_delay(3 * VT_MS);
	pc6_delay(VT_MS);
	return vt_done();
}
