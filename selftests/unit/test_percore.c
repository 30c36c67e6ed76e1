// SPDX-License-Identifier: GPL-2.0
/*
 * Per-core weighting of the dynamic split (vr_pkg_set_core()): the
 * per-core counter's decoding (units, 32-bit wrap, resets), each core's
 * energy charged to what ran on it, conservation with per-core sums above
 * and below the package's dynamic energy, and the fallback to a time
 * split when the per-core counter cannot be read; APERF cycles as a
 * weight where there is no per-core energy; SMT siblings sharing a core's
 * counter; bursts of two cores against a package counter that lags.
 *
 * The host: PC_NCPU CPUs of one package, exact counters (no steps) in a
 * 2^-16 J unit, 32 bits wide, integrated from each core's power while it
 * is busy plus a static power (the package counter read late by a few
 * steps in test_bursts() only).  Every CPU has an event every 250 us and
 * the package closes every 1 ms.
 */
#include "vr_test.h"

#define PC_NCPU		4
#define PC_ESU		16
#define PC_STEP		250000ULL
#define PC_MASK		0xffffffffULL

struct pc_host {
	struct vr_pkg p;
	struct vr_cpu cpu[PC_NCPU];
	struct vr_cpu *cpus[PC_NCPU];
	struct vr_acct acct[PC_NCPU];
	u64 core_uw[PC_NCPU];	/* the core's power while busy */
	u64 idle_core_uw[PC_NCPU];	/* and while not: the idle task's work */
	u64 claim_uw[PC_NCPU];	/* what its counter says; 0: core_uw */
	bool busy[PC_NCPU];
	bool tracked[PC_NCPU];	/* runs acct[i], else a host task */
	bool unreadable;
	enum vr_core_kind kind;
	u64 ghz[PC_NCPU];	/* VR_CORE_CYCLES: cycles per ns */
	int core_of[PC_NCPU];	/* the core whose counter a CPU reads */
	u64 cycles[PC_NCPU];
	u64 static_uw;
	vt_u128 pkg_fj, core_fj[PC_NCPU];
	u64 core_off;		/* raw offset of the core counters */
	bool quiet;		/* events only when what runs changes */
	bool exits;		/* quiet, but vr_cpu_poll() each step */
	u64 now;
	struct vr_pkg_stats st0;	/* the books at pc_reset() */
	/* the package counter shows the energy of @lag_steps steps ago */
	unsigned int lag_steps;
	/* or steps only every @pkg_every PC_STEPs, showing @pkg_shown */
	unsigned int pkg_every;
	vt_u128 pkg_shown;
	u64 nstep;
	vt_u128 pkg_hist[4];
	u64 gate_bad;		/* CPUs found with a gate not their fields' */
};

static u64 pc_units(vt_u128 fj, u64 off)
{
	return ((u64)(fj * (1ULL << PC_ESU) / VT_FJ_PER_J) + off) & PC_MASK;
}

static bool pc_core_read(void *ctx, struct vr_cpu *c, u64 *raw)
{
	struct pc_host *h = ctx;

	if (h->unreadable)
		return false;
	if (h->kind == VR_CORE_CYCLES)
		*raw = h->cycles[c - h->cpu];
	else
		*raw = pc_units(h->core_fj[h->core_of[c - h->cpu]],
				h->core_off);
	return true;
}

static u32 pc_pkg_read(void *ctx, u64 *raw, u64 dt, u64 busy)
{
	struct pc_host *h = ctx;

	(void)dt;
	(void)busy;
	if (h->pkg_every)
		raw[VR_DOM_PKG] = pc_units(h->pkg_shown, 12345);
	else
		raw[VR_DOM_PKG] = pc_units(h->lag_steps ?
					   h->pkg_hist[(h->nstep -
							h->lag_steps) % 4] :
					   h->pkg_fj, 12345);
	return BIT(VR_DOM_PKG);
}

static void pc_init(struct pc_host *h, u64 static_uw,
		    enum vr_core_kind kind)
{
	int i;

	memset(h, 0, sizeof(*h));
	for (i = 0; i < PC_NCPU; i++) {
		h->cpus[i] = &h->cpu[i];
		h->core_of[i] = i;
	}
	vr_pkg_init(&h->p, h->cpus, PC_NCPU, VT_MS, 500000000ULL);
	vr_pkg_set_domain(&h->p, VR_DOM_PKG, PC_ESU, 32);
	vr_pkg_set_static(&h->p, static_uw, VR_STATIC_PARAM);
	h->p.policy = VR_STATIC_OCCUPIED;
	h->kind = kind;
	if (kind == VR_CORE_ENERGY)
		vr_pkg_set_core(&h->p, kind, pc_core_read, h, PC_ESU, 32);
	else if (kind == VR_CORE_CYCLES)
		vr_pkg_set_core(&h->p, kind, pc_core_read, h, 0, 64);
	h->static_uw = static_uw;
	h->now = VT_SEC;
	for (i = 0; i < PC_NCPU; i++) {
		vr_cpu_init(&h->cpu[i], &h->p);
		vr_lock(&h->p.close_lock);
		vr_cpu_online(&h->cpu[i], h->now, false);
		vr_unlock(&h->p.close_lock);
	}
}

/* CPUs 0 and 1 run a vCPU each, on cores of @uw0 and @uw1 uW. */
static void pc_two_vcpus(struct pc_host *h, u64 uw0, u64 uw1)
{
	h->busy[0] = h->busy[1] = true;
	h->tracked[0] = h->tracked[1] = true;
	h->core_uw[0] = uw0;
	h->core_uw[1] = uw1;
}

/* Runs @ns: every CPU has an event each PC_STEP, closes when stale. */
static void pc_run(struct pc_host *h, u64 ns)
{
	u64 end = h->now + ns;
	int i;

	while (h->now < end) {
		h->now += PC_STEP;
		h->pkg_fj += (vt_u128)h->static_uw * PC_STEP;
		for (i = 0; i < PC_NCPU; i++) {
			u64 claim = h->claim_uw[i] ? h->claim_uw[i] :
				    h->core_uw[i];

			if (!h->busy[i]) {
				h->pkg_fj += (vt_u128)h->idle_core_uw[i] *
					     PC_STEP;
				h->core_fj[h->core_of[i]] +=
					(vt_u128)h->idle_core_uw[i] * PC_STEP;
				continue;
			}
			h->pkg_fj += (vt_u128)h->core_uw[i] * PC_STEP;
			h->core_fj[h->core_of[i]] += (vt_u128)claim * PC_STEP;
			h->cycles[i] += h->ghz[i] * PC_STEP;
		}
		h->pkg_hist[++h->nstep % 4] = h->pkg_fj;
		if (h->pkg_every && h->nstep % h->pkg_every == 0)
			h->pkg_shown = h->pkg_fj;
		for (i = 0; i < PC_NCPU; i++) {
			struct vr_cpu *c = &h->cpu[i];
			struct vr_acct *a = h->busy[i] && h->tracked[i] ?
					    &h->acct[i] : NULL;

			if (h->quiet) {
				if (c->busy != h->busy[i] || c->cur != a)
					vr_cpu_event(c, h->now, h->busy[i], a);
				else if (h->exits)
					vr_cpu_poll(c, h->now);
			} else if (vr_cpu_event_needed(c, h->busy[i], a)) {
				vr_cpu_event(c, h->now, h->busy[i], a);
			}
			/* After a sample too, which clears core_due. */
			if (c->gate != ((c->busy ? 0 : VR_GATE_IDLE) |
					(c->cur || c->core_due ?
					 VR_GATE_SLOW : 0)))
				h->gate_bad++;
		}
		if (vr_pkg_stale(&h->p, h->now))
			vr_pkg_try_close(&h->p, h->now, pc_pkg_read, h);
	}
}

/* After a warm-up: the accounts and the books start from here. */
static void pc_reset(struct pc_host *h)
{
	memset(h->acct, 0, sizeof(h->acct));
	vr_pkg_read_stats(&h->p, &h->st0, 1);
}

static double pc_w(const struct pc_host *h, int i, double s)
{
	return vt_eu_j(h->acct[i].energy[VR_DOM_PKG]) / s;
}

static void pc_check_books(struct pc_host *h, const char *what)
{
	struct vr_pkg_stats st;
	u64 sum = 0, ssum = 0;
	int i;

	vr_pkg_read_stats(&h->p, &st, 1);
	for (i = 0; i < PC_NCPU; i++) {
		sum += h->acct[i].energy[VR_DOM_PKG];
		ssum += h->acct[i].static_e[VR_DOM_PKG];
	}
	vt_ok(vt_conserved(&st, 1), "%s: tracked + host + idle + lost == "
	      "sampled exactly", what);
	vt_eq(sum, st.tracked - h->st0.tracked,
	      "%s: the accounts add up to tracked", what);
	vt_eq(ssum, st.tracked_static - h->st0.tracked_static,
	      "%s: their static parts add up", what);
	vt_ok(h->p.percore_e <= st.dynamic, "%s: per-core charges within the "
	      "dynamic energy", what);
	vt_eq(h->gate_bad, 0, "%s: every CPU's gate sums up its fields", what);
}

/* The counter's decoding: units, wrap, resets, ambiguous windows. */
static void test_decode(void)
{
	u64 carry = 0, eu;
	bool ok;

	ok = vr_core_delta(1000, 1001, 32, 16, VT_MS, 500000000ULL, &carry,
			   &eu);
	vt_ok(ok && eu == 256, "one 2^-16 J unit is 256 eu");
	ok = vr_core_delta(PC_MASK - 99, 100, 32, 16, VT_MS, 500000000ULL,
			   &carry, &eu);
	vt_ok(ok && eu == 200 * 256ULL, "a 32-bit wrap is a delta of 200 "
	      "units");
	ok = vr_core_delta(5000000, 1000, 32, 16, 10 * VT_MS, 500000000ULL,
			   &carry, &eu);
	vt_ok(!ok && !eu, "a backward step is a reset: unknown");
	ok = vr_core_delta(0, 1000000, 32, 16, 10 * VT_MS, 500000000ULL,
			   &carry, &eu);
	vt_ok(!ok, "15 J in 10 ms at most 500 W: a jump, unknown");
	ok = vr_core_delta(0, 10, 32, 16, 200 * VT_SEC, 500000000ULL,
			   &carry, &eu);
	vt_ok(!ok, "a window that 500 W could wrap (65536 J): unknown");
	carry = 0;
	ok = vr_core_delta(0, 3, 32, 26, VT_MS, 500000000ULL, &carry, &eu);
	vt_ok(ok && eu == 0 && carry == 3, "units finer than eu are carried");
	ok = vr_core_delta(3, 4, 32, 26, VT_MS, 500000000ULL, &carry, &eu);
	vt_ok(ok && eu == 1 && carry == 0, "and given with the next delta");
	vt_eq(vr_core_weight(1ULL << 24, VT_SEC),
	      (1ULL << (24 + VR_CORE_W_SHIFT)) / VT_SEC,
	      "1 W while busy is 2^24 eu per 10^9 busy ns");
	vt_eq(vr_core_weight(1, 0), 0, "no busy time: no weight");
}

/*
 * A vector-heavy vCPU (10 W core) next to a memory-bound one (2 W), 20 W
 * static on 4 CPUs (5 W per occupied CPU): per-core weighting gives each
 * its own core's energy, a time split gives both the mean.
 */
static void test_hetero(bool percore)
{
	static struct pc_host h;
	const char *what = percore ? "per-core" : "time split";
	double s = 2.0, a, b;

	pc_init(&h, 20000000ULL, percore ? VR_CORE_ENERGY : VR_CORE_NONE);
	pc_two_vcpus(&h, 10000000ULL, 2000000ULL);
	h.core_off = PC_MASK - 100000;	/* the core counters wrap early */
	pc_run(&h, 100 * VT_MS);		/* warm up: weights, baseline */
	pc_reset(&h);
	pc_run(&h, 2 * VT_SEC);
	a = pc_w(&h, 0, s);
	b = pc_w(&h, 1, s);
	vt_diag("%s: vector-heavy %.3f W, memory-bound %.3f W", what, a, b);
	if (percore) {
		vt_near(a, 15.0, 0.15, "per-core: the 10 W core's vCPU gets "
			"10 W + 5 W static within 1%%");
		vt_near(b, 7.0, 0.07, "per-core: the 2 W core's vCPU gets "
			"2 W + 5 W static within 1%%");
		vt_ok(h.p.percore_e > 0, "per-core energy was charged");
	} else {
		vt_near(a, 11.0, 0.11, "time split: 6 W + 5 W within 1%%");
		vt_near(b, 11.0, 0.11, "time split: the same for both");
		vt_eq(h.p.percore_e, 0, "nothing charged by per-core weight");
	}
	pc_check_books(&h, what);
}

/*
 * Bursts on a package counter that lags: a vCPU on the 10 W core runs
 * 2 ms, one on the 2 W core the next 2 ms, then both idle 16 ms, and the
 * package counter shows the energy of three steps (0.75 ms) ago: 0.5 ms
 * before the events that account it, which this host runs at the end of
 * each step.  The close after the first one stops reads its last 0.5 ms,
 * which is the lag share of its epoch, at its own core's power; the
 * second's weight covers only the part of its epoch that the read
 * showed.  When the lag share came from the time-split rest only, the
 * second vCPU's weight took a whole epoch of its core's energy out of a
 * delta that held mostly the first one's tail: 10 W + 5 W against 2 W +
 * 5 W read 13.5 and 8.5 W.
 */
static void test_bursts(void)
{
	static struct pc_host h;
	double s = 2.0, a, b;
	int k;

	pc_init(&h, 20000000ULL, VR_CORE_ENERGY);
	h.lag_steps = 3;
	h.tracked[0] = h.tracked[1] = true;
	h.core_uw[0] = 10000000ULL;
	h.core_uw[1] = 2000000ULL;
	for (k = 0; k < 110; k++) {
		if (k == 10)	/* warm up: weights, baseline */
			pc_reset(&h);
		h.busy[0] = true;
		pc_run(&h, 2 * VT_MS);
		h.busy[0] = false;
		h.busy[1] = true;
		pc_run(&h, 2 * VT_MS);
		h.busy[1] = false;
		pc_run(&h, 16 * VT_MS);
	}
	/* 10 % of the time at 10 W + 5 W, and at 2 W + 5 W */
	a = pc_w(&h, 0, s);
	b = pc_w(&h, 1, s);
	vt_diag("bursts: 10 W core %.4f W, 2 W core %.4f W (of 15 / 7 W "
		"while busy)", 10 * a, 10 * b);
	vt_near(a, 1.5, 0.03, "bursts, lagging counter: the 10 W core's "
		"vCPU gets 10 W + 5 W within 2%%");
	vt_near(b, 0.7, 0.014, "bursts: the 2 W core's 2 W + 5 W within 2%%");
	pc_check_books(&h, "bursts");
}

/*
 * The two vCPUs of test_hetero() on a package counter that steps every
 * @every PC_STEPs (0.75, 1.5 or 2 ms; the module measured it,
 * vr_pkg_set_step()) while the package closes every 1 ms: a close's
 * delta holds fewer steps or more than its time, down to none, so an
 * epoch's dynamic energy is below the cores' weight (a rate) in about
 * half of them, and the lag share priced from the last delta is above
 * it.  What an epoch cannot pay of either is owed, and paid first by the
 * weights of the next (vr_pkg.pc_owed).  When it was dropped instead,
 * the rest of the steps' energy went by time: at 1.5 ms, 12.8 W and
 * 9.2 W for 15 W and 7 W.
 */
static void test_hetero_steps(unsigned int every)
{
	static struct pc_host h;
	struct vr_step st = {
		.interval_ns = every * PC_STEP, .spread_ns = 0, .used = 12,
		.measured = true,
	};
	double s = 2.0, a, b, ms = every * PC_STEP / 1e6;

	pc_init(&h, 20000000ULL, VR_CORE_ENERGY);
	h.pkg_every = every;
	vr_lock(&h.p.close_lock);
	vr_pkg_set_step(&h.p, VR_DOM_PKG, &st);
	vr_unlock(&h.p.close_lock);
	pc_two_vcpus(&h, 10000000ULL, 2000000ULL);
	pc_run(&h, 100 * VT_MS);
	pc_reset(&h);
	pc_run(&h, 2 * VT_SEC);
	a = pc_w(&h, 0, s);
	b = pc_w(&h, 1, s);
	vt_diag("%.2f ms steps: vector-heavy %.3f W, memory-bound %.3f W "
		"(%llu epochs clamped)", ms, a, b,
		(unsigned long long)h.p.percore_clamps);
	vt_ok(h.p.percore_clamps > 0, "%.2f ms steps: some epochs' weight "
	      "exceeds their dynamic energy", ms);
	vt_near(a, 15.0, 0.3, "%.2f ms steps: the 10 W core's vCPU gets "
		"10 W + 5 W within 2%%", ms);
	vt_near(b, 7.0, 0.14, "%.2f ms steps: the 2 W core's vCPU gets "
		"2 W + 5 W within 2%%", ms);
	pc_check_books(&h, "coarse steps");
}

/*
 * The same two vCPUs, but neither CPU ever switches: each runs its vCPU
 * all along, as a vCPU alone on its CPU does.  Its only events are its
 * exits (vr_cpu_poll(), the kernel's kvm_entry/kvm_exit): without them
 * the per-core counter is read once, for the baseline, and the split
 * stays by time.
 */
static void test_exits(bool exits)
{
	static struct pc_host h;
	const char *what = exits ? "exits" : "no exits";
	double a, b;

	pc_init(&h, 20000000ULL, VR_CORE_ENERGY);
	h.quiet = true;
	h.exits = exits;
	pc_two_vcpus(&h, 10000000ULL, 2000000ULL);
	pc_run(&h, 100 * VT_MS);
	pc_reset(&h);
	pc_run(&h, 2 * VT_SEC);
	a = pc_w(&h, 0, 2.0);
	b = pc_w(&h, 1, 2.0);
	vt_diag("%s: vector-heavy %.3f W, memory-bound %.3f W", what, a, b);
	if (exits) {
		vt_near(a, 15.0, 0.15, "switchless, sampled at exits: the 10 W "
			"core's vCPU gets 10 W + 5 W within 1%%");
		vt_near(b, 7.0, 0.07, "and the 2 W core's 2 W + 5 W");
	} else {
		vt_near(a, 11.0, 0.11, "switchless, no exits: a time split");
		vt_eq(h.p.percore_e, 0, "nothing by per-core weight");
	}
	pc_check_books(&h, what);
}

/*
 * Per-core counters that claim more than the package's dynamic energy
 * (3x): clamped, in proportion; and less (a host task's core counts
 * half of its power): the rest is split by time.  Either way the books
 * add up exactly.
 */
static void test_clamp(void)
{
	static struct pc_host h;
	double s = 1.0;

	pc_init(&h, 20000000ULL, VR_CORE_ENERGY);
	h.busy[0] = h.busy[1] = true;
	h.tracked[0] = h.tracked[1] = true;
	h.core_uw[0] = 9000000ULL;
	h.core_uw[1] = 3000000ULL;
	h.claim_uw[0] = 27000000ULL;
	h.claim_uw[1] = 9000000ULL;
	pc_run(&h, 100 * VT_MS);
	pc_reset(&h);
	pc_run(&h, VT_SEC);
	vt_ok(h.p.percore_clamps > 0, "sums above dE are clamped (%llu "
	      "epochs)", (unsigned long long)h.p.percore_clamps);
	vt_near(pc_w(&h, 0, s), 9.0 + 5.0, 0.15, "clamped: the weights "
		"still split the 12 W 3:1 (9 W + 5 W)");
	vt_near(pc_w(&h, 1, s), 3.0 + 5.0, 0.1, "and 3 W + 5 W");
	pc_check_books(&h, "sums above dE");

	pc_init(&h, 20000000ULL, VR_CORE_ENERGY);
	h.busy[0] = h.busy[1] = h.busy[2] = true;
	h.tracked[0] = h.tracked[1] = true;	/* CPU 2: a host task */
	h.core_uw[0] = 8000000ULL;
	h.core_uw[1] = 8000000ULL;
	h.core_uw[2] = 8000000ULL;
	h.claim_uw[0] = 4000000ULL;		/* counters see half */
	h.claim_uw[1] = 4000000ULL;
	h.claim_uw[2] = 4000000ULL;
	pc_run(&h, 100 * VT_MS);
	pc_reset(&h);
	pc_run(&h, VT_SEC);
	vt_near(pc_w(&h, 0, s), 13.0, 0.13, "sums below dE: 4 W by weight, "
		"4 W by time, 5 W static");
	vt_near(pc_w(&h, 1, s), 13.0, 0.13, "the same on the other core");
	pc_check_books(&h, "sums below dE");
}

/* An unreadable per-core counter: no weight, a plain time split. */
static void test_unreadable(void)
{
	static struct pc_host h;

	pc_init(&h, 20000000ULL, VR_CORE_ENERGY);
	h.unreadable = true;
	pc_two_vcpus(&h, 10000000ULL, 2000000ULL);
	pc_run(&h, 100 * VT_MS);
	pc_reset(&h);
	pc_run(&h, VT_SEC);
	vt_eq(h.p.percore_e, 0, "unreadable: nothing by per-core weight");
	vt_near(pc_w(&h, 0, 1.0), 11.0, 0.11, "unreadable: a time split");
	pc_check_books(&h, "unreadable");
}

/*
 * APERF (VR_CORE_CYCLES): a core at 4 GHz next to one at 2 GHz, 12 W of
 * dynamic power.  Cycles are a weight, not energy: the whole dynamic
 * part, the lag share included, goes 2:1 (8 W + 5 W, 4 W + 5 W).
 */
static void test_cycles(void)
{
	static struct pc_host h;

	pc_init(&h, 20000000ULL, VR_CORE_CYCLES);
	h.busy[0] = h.busy[1] = true;
	h.tracked[0] = h.tracked[1] = true;
	h.core_uw[0] = 8000000ULL;
	h.core_uw[1] = 4000000ULL;
	h.ghz[0] = 4;
	h.ghz[1] = 2;
	h.cycles[1] = ~0ULL - 1000;	/* a reset (backwards) on the way */
	pc_run(&h, 100 * VT_MS);
	pc_reset(&h);
	pc_run(&h, VT_SEC);
	vt_near(pc_w(&h, 0, 1.0), 13.0, 0.13, "cycles: the 4 GHz core's "
		"vCPU gets 2/3 of 12 W + 5 W within 1%%");
	vt_near(pc_w(&h, 1, 1.0), 9.0, 0.09, "cycles: the 2 GHz one 1/3 + "
		"5 W");
	vt_eq(h.p.percore_clamps, 0, "cycles are never clamped");
	pc_check_books(&h, "cycles");
}

/*
 * SMT: CPUs 0 and 1 are the two threads of one core, whose counter both
 * read (10 W with both busy); CPU 2 has a 2 W core of its own.  The
 * core's energy is over both threads' busy time: 5 W each, not 10 W each.
 */
static void test_smt(void)
{
	static struct pc_host h;

	pc_init(&h, 20000000ULL, VR_CORE_ENERGY);
	vr_lock(&h.p.close_lock);
	vr_cpu_set_sibling(&h.cpu[0], &h.cpu[1]);
	vr_cpu_set_sibling(&h.cpu[1], &h.cpu[0]);
	vr_unlock(&h.p.close_lock);
	h.core_of[1] = 0;
	h.busy[0] = h.busy[1] = h.busy[2] = true;
	h.tracked[0] = h.tracked[1] = h.tracked[2] = true;
	h.core_uw[0] = h.core_uw[1] = 5000000ULL;
	h.core_uw[2] = 2000000ULL;
	pc_run(&h, 100 * VT_MS);
	pc_reset(&h);
	pc_run(&h, VT_SEC);
	vt_near(pc_w(&h, 0, 1.0), 10.0, 0.15, "SMT: each thread of the 10 W "
		"core gets 5 W + 5 W static");
	vt_near(pc_w(&h, 1, 1.0), 10.0, 0.15, "SMT: its sibling too");
	/* Counted twice, the core would take 10/11 of 12 W: 6.1 W here. */
	vt_near(pc_w(&h, 2, 1.0), 7.0, 0.07, "SMT: the 2 W core's vCPU "
		"2 W + 5 W within 1%%");
	pc_check_books(&h, "SMT");
}

/*
 * Run @ns with CPU 0 always busy and each other CPU busy half the time,
 * redrawn every 20 to 60 ms; the package timer solves every 100 ms.
 */
static void pc_run_mixed(struct pc_host *h, u64 ns)
{
	u64 end = h->now + ns, fit = h->now;
	int i;

	while (h->now < end) {
		u64 hold = vt_range(20 * VT_MS, 60 * VT_MS);

		h->busy[0] = true;
		for (i = 1; i < PC_NCPU; i++)
			h->busy[i] = vt_below(2);
		pc_run(h, hold);
		if (h->now - fit >= 100 * VT_MS) {
			fit = h->now;
			vr_lock(&h->p.close_lock);
			vr_pkg_fit_update(&h->p);
			vr_unlock(&h->p.close_lock);
		}
	}
}

/*
 * The static power of a package that is never idle, from its per-core
 * counters: the package's power less its cores' is 20 W in every block,
 * whatever runs.  Cores of 12, 12, 6 and 3 W, CPU 0 always busy: the
 * expected power at u busy CPUs is 25 W + 7 W x u, so a line through
 * (busy CPUs, power) puts P_static at 25 W, and only the cores' own
 * counters tell the 20 W apart.  The estimate is used (origin core) when
 * no idle run is known, held when the counters stop, and an idle run
 * still takes precedence; APERF is not energy and gives none.
 */
static void test_static_core(void)
{
	static struct pc_host h;
	struct vr_static_report r;

	pc_init(&h, 20000000ULL, VR_CORE_ENERGY);
	vr_pkg_set_static(&h.p, 0, VR_STATIC_UNKNOWN);
	h.core_uw[0] = h.core_uw[1] = 12000000ULL;
	h.core_uw[2] = 6000000ULL;
	h.core_uw[3] = 3000000ULL;
	h.tracked[0] = h.tracked[1] = h.tracked[2] = h.tracked[3] = true;
	pc_run_mixed(&h, 4 * VT_SEC);
	vr_pkg_static_report(&h.p, &r);
	vt_diag("never idle: package less cores %.3f W over %u blocks; the "
		"fit %.3f W (P_dyn %.3f W/CPU, conditioned %d)",
		r.core_uw / 1e6, r.core_blocks, r.fit_uw / 1e6,
		r.fit_dyn_uw / 1e6, !!(r.fit_flags & VR_FIT_OK));
	vt_ok(r.fit_flags & VR_FIT_CORE, "per-core counters measure the "
	      "package less its cores");
	vt_near(r.core_uw / 1e6, 20.0, 0.2, "it is the 20 W static power "
		"within 1%%");
	vt_eq(r.core_blocks, VR_FIT_BLOCKS, "over the fit's whole window");
	vt_ok(r.origin == VR_STATIC_CORE && r.p_static_uw == r.core_uw,
	      "no idle run: it is P_static (origin %s)",
	      vr_origin_names[r.origin]);
	vt_ok(!(r.fit_flags & VR_FIT_OK) || r.fit_uw > 23000000ULL,
	      "the line through (busy CPUs, power) is biased here (%.3f W)",
	      r.fit_uw / 1e6);
	pc_check_books(&h, "never idle");

	/* The ring's known samples run out: the last mean of 32+ stays. */
	h.unreadable = true;
	pc_run_mixed(&h, 4 * VT_SEC);
	vr_pkg_static_report(&h.p, &r);
	vt_eq(h.p.fit.nr, 0, "unreadable counters: no new sample");
	vt_ok((r.fit_flags & VR_FIT_CORE) && r.origin == VR_STATIC_CORE &&
	      r.core_blocks >= VR_FIT_MIN_BLOCKS,
	      "the last estimate is held (%.3f W over %u blocks)",
	      r.core_uw / 1e6, r.core_blocks);
	vt_near(r.core_uw / 1e6, 20.0, 0.6, "and still within 3%% (fewer "
		"samples)");

	memset(h.busy, 0, sizeof(h.busy));
	pc_run(&h, 300 * VT_MS);
	vr_pkg_static_report(&h.p, &r);
	vt_ok(r.origin == VR_STATIC_LEARNED && r.idle_known,
	      "an idle run takes precedence (origin %s, %.3f W)",
	      vr_origin_names[r.origin], r.p_static_uw / 1e6);

	pc_init(&h, 20000000ULL, VR_CORE_CYCLES);
	vr_pkg_set_static(&h.p, 0, VR_STATIC_UNKNOWN);
	h.core_uw[0] = 12000000ULL;
	h.ghz[0] = h.ghz[1] = h.ghz[2] = h.ghz[3] = 3;
	pc_run_mixed(&h, 2 * VT_SEC);
	vr_pkg_static_report(&h.p, &r);
	vt_ok(!(r.fit_flags & VR_FIT_CORE) && !r.core_uw &&
	      r.origin != VR_STATIC_CORE, "APERF cycles are not energy: no "
	      "package-less-cores estimate");
}

/*
 * Cores whose counters also count what their CPUs do outside busy time
 * (the idle task's work before it halts, a core's idle power): 2, 3 and
 * 1 W on CPUs 1 to 3 while they are not busy, in their counters and in
 * the package's.  The package less its cores is still 20 W.  The weights
 * (a window's energy per busy ns, applied to later busy time) never see
 * that energy, nor the energy of a window that was mostly idle at the
 * rate it had: the estimate then read 21.5 W.  The samples' corrections
 * (each window's measured energy less what its weights credited) make
 * the blocks hold the counters' energy.  With CPUs 0 and 1 SMT siblings
 * of one core, each thread's correction is its share of the core's
 * window by busy time (half when neither ran): the two add up to the
 * core's energy up to how their windows differ.  At 0.5 W of static
 * power a block's share of a correction often exceeds what is left of
 * the package's energy, or is below none: what is outside moves on to the
 * next block, so that the mean is not lifted by clamping the blocks.
 */
static void test_static_core_idle_work(bool smt, u64 static_uw)
{
	static struct pc_host h;
	struct vr_static_report r;
	char what[64];

	snprintf(what, sizeof(what), "idle work%s, %.1f W static",
		 smt ? ", SMT" : "", static_uw / 1e6);
	pc_init(&h, static_uw, VR_CORE_ENERGY);
	vr_pkg_set_static(&h.p, 0, VR_STATIC_UNKNOWN);
	if (smt) {
		vr_lock(&h.p.close_lock);
		vr_cpu_set_sibling(&h.cpu[0], &h.cpu[1]);
		vr_cpu_set_sibling(&h.cpu[1], &h.cpu[0]);
		vr_unlock(&h.p.close_lock);
		h.core_of[1] = 0;
	}
	h.core_uw[0] = h.core_uw[1] = 12000000ULL;
	h.core_uw[2] = 6000000ULL;
	h.core_uw[3] = 3000000ULL;
	h.idle_core_uw[1] = 2000000ULL;
	h.idle_core_uw[2] = 3000000ULL;
	h.idle_core_uw[3] = 1000000ULL;
	h.tracked[0] = h.tracked[1] = h.tracked[2] = h.tracked[3] = true;
	pc_run_mixed(&h, 4 * VT_SEC);
	vr_pkg_static_report(&h.p, &r);
	vt_diag("%s: package less cores %.3f W over %u blocks", what,
		r.core_uw / 1e6, r.core_blocks);
	vt_ok((r.fit_flags & VR_FIT_CORE) && r.origin == VR_STATIC_CORE,
	      "%s: it is P_static (origin %s)", what,
	      vr_origin_names[r.origin]);
	vt_near(r.core_uw / 1e6, static_uw / 1e6, 0.2, "%s: the counters' "
		"energy, not the weights': the static power within 0.2 W",
		what);
	pc_check_books(&h, what);
}

/*
 * A core whose counter stops while its CPU is busy: in the rig, a vCPU
 * whose host thread did not run (QEMU's model counts the thread's host
 * CPU time), on hardware a core that drew nothing measurable.  CPU 3's
 * core draws 6 W, or nothing (a third of the holds), while busy; its
 * counter says so, and so does the package's.  A window with busy time
 * and no energy measures a weight of 0 eu/ns: a weight, not the absence
 * of one.  Taken for none, it made the next busy time "unweighted", and
 * the block that held it was dropped from the package less its cores,
 * while the correction for that time (all of its measured energy) landed
 * in a later block: 17 of 118 blocks dropped, -11.9 % in the rig
 * (rapl.static_busy_package, December 2).
 */
static void test_static_core_stalls(void)
{
	static struct pc_host h;
	struct vr_static_report r;
	u64 end, fit;
	int i;

	pc_init(&h, 20000000ULL, VR_CORE_ENERGY);
	vr_pkg_set_static(&h.p, 0, VR_STATIC_UNKNOWN);
	h.core_uw[0] = h.core_uw[1] = 12000000ULL;
	h.core_uw[2] = 6000000ULL;
	h.tracked[0] = h.tracked[1] = h.tracked[2] = h.tracked[3] = true;
	end = h.now + 4 * VT_SEC;
	fit = h.now;
	while (h.now < end) {
		h.busy[0] = true;
		for (i = 1; i < PC_NCPU; i++)
			h.busy[i] = vt_below(2);
		h.core_uw[3] = vt_below(3) ? 6000000ULL : 0;
		pc_run(&h, vt_range(20 * VT_MS, 60 * VT_MS));
		if (h.now - fit >= 100 * VT_MS) {
			fit = h.now;
			vr_lock(&h.p.close_lock);
			vr_pkg_fit_update(&h.p);
			vr_unlock(&h.p.close_lock);
		}
	}
	vr_pkg_static_report(&h.p, &r);
	vt_diag("stalled core: package less cores %.3f W over %u blocks",
		r.core_uw / 1e6, r.core_blocks);
	vt_eq(r.core_blocks, VR_FIT_BLOCKS, "stalled core: a measured weight "
	      "of 0 keeps every block");
	vt_near(r.core_uw / 1e6, 20.0, 0.2, "stalled core: the static power "
		"within 1%%");
	pc_check_books(&h, "stalled core");
}

/*
 * The package less its cores is energy over time: blocks last from 20 ms
 * to that plus an epoch, and each counts by its length.  Blocks of 20 ms
 * at 10 W and of 80 ms at 30 W (cores 5 W in both) are 26 W over time;
 * the mean of the blocks' powers said 20 W.
 */
static void test_static_core_weighted(void)
{
	static struct pc_host h;
	u64 rem = 0, crem = 0, dt;
	int i;

	pc_init(&h, 0, VR_CORE_ENERGY);
	vr_pkg_set_static(&h.p, 0, VR_STATIC_UNKNOWN);
	vr_lock(&h.p.close_lock);
	for (i = 0; i < 2 * VR_FIT_BLOCKS; i++) {
		u64 de, ce;

		dt = i & 1 ? 80 * VT_MS : 20 * VT_MS;
		de = vr_energy_eu(i & 1 ? 35000000ULL : 15000000ULL, dt, &rem);
		ce = vr_energy_eu(5000000ULL, dt, &crem);
		vr_fit_epoch(&h.p, de, dt, dt, ce, 0, true, false);
	}
	vr_pkg_fit_update(&h.p);
	vr_unlock(&h.p.close_lock);
	vt_eq(h.p.fit.core_blocks, VR_FIT_BLOCKS, "blocks of 20 and 80 ms: "
	      "all of them");
	vt_near(h.p.fit.core_uw / 1e6, 26.0, 0.01, "blocks of 20 ms at 10 W "
		"and 80 ms at 30 W: 26 W over time (%.3f W)",
		h.p.fit.core_uw / 1e6);
}

int main(void)
{
	vt_start("vmrapl core: per-core energy weighting");
	vt_seed(12);
	test_decode();
	test_hetero(false);
	test_hetero(true);
	test_hetero_steps(3);
	test_hetero_steps(6);
	test_hetero_steps(8);
	test_bursts();
	test_exits(false);
	test_exits(true);
	test_clamp();
	test_unreadable();
	test_cycles();
	test_smt();
	test_static_core();
	test_static_core_idle_work(false, 20000000ULL);
	test_static_core_idle_work(true, 20000000ULL);
	test_static_core_idle_work(false, 500000ULL);
	test_static_core_stalls();
	test_static_core_weighted();
	return vt_done();
}
