// SPDX-License-Identifier: GPL-2.0
/*
 * vrsim: the physical side of the host, written for the simulator alone
 * (it shares no code and no formula with kmod/): the random stream, the
 * power model of a package, its RAPL-like counter, and the three truths.
 *
 * Power of a package at any instant:
 *
 *   every core idle:  P = floor                      (package C-state)
 *   n cores active:   P = floor + uncore + sum over the active cores of
 *                         base_uw(task) x (f(n) / f_all)^2
 *
 * (--smt, --leakage, --mem-uncore add to it: below)
 *
 * (every core idle: P = floor + uncore until the package reaches its
 * C-state, see "Breaking the model's assumptions" below)
 *
 * where f(n) falls linearly from f_one (one core active, turbo) to f_all
 * (every core active), and base_uw is the task's intensity: a vector-heavy
 * task draws more per core than a memory-bound one.  The package floor is
 * only reached when every core is idle; while any core runs, the uncore
 * adds its uplift.  The packages of a host are one model, not one part:
 * each one's floor is the workload's times 1 + u, u uniform in
 * +-floor_spread % (pkg_floor_uw()), from a stream of its own.  The floor
 * is constant, unless --floor-drift swings it by +-floor_drift % over
 * DRIFT_PERIOD_S, a sine at a phase of each package's own, as a floor
 * drifts with temperature (a comparison run, not the tables' model).
 *
 * The truths, integrated exactly between scheduling events (the state is
 * constant in between), for a task running on a core while n are active:
 *
 *   dynamic-only  its core's power, plus uncore / n (the uplift is there
 *                 because something runs; the runners share it equally)
 *   occupied      dynamic-only, plus floor / ncpu (the baseline, split by
 *                 occupied CPU time; unoccupied time's part is nobody's)
 *   busy-share    P / n (the whole package power over whatever runs)
 *
 * Energy while every core is idle belongs to no task: the floor, and the
 * uncore the package still draws before it reaches its C-state (below).
 *
 * The counter: the package energy integrated exactly (uW x ns), latched
 * every latch_ns (+- update_jitter %, 5 % by default, uniform), shown
 * floored to the ESU (2^-ctr_esu J, 2^-14 by default), plus a start
 * offset, in 32 bits: it wraps.
 *
 * Per-core energy counters, as AMD family 17h and later have them
 * (MSR_AMD_CORE_ENERGY_STATUS, one per core): each CPU's core power
 * above, base_uw(task) x (f(n) / f_all)^2 while it runs and 0 while it
 * idles, integrated exactly, latched, quantized and wrapping like the
 * package counter (same ESU: AMD's one RAPL_PWR_UNIT serves both; 32
 * bits; a random start offset; every CORE_LATCH_NS, ~1 ms, +- 5 %).  The
 * uncore uplift and the floor are not in any core's counter: on Zen the
 * core energy MSR covers the core (its CCX's cores and their L2), not the
 * uncore, the SoC or the I/O die, so the cores' counters add up to less
 * than the package's.  By default the model has no SMT: one CPU per core,
 * so no CPU shares its counter with a sibling (--smt below).  These
 * counters draw their latch jitter from a stream of their
 * own, so adding them leaves the schedule and the package counters'
 * instants as they were.  vmrapl reads only the counter registers
 * (ctr_read()), never the exact energy.
 *
 * Breaking the model's assumptions.  By default the model agrees with two
 * of the module's own assumptions: the floor is drawn alone the instant
 * the last core of a package idles (so an all-idle stretch shows the
 * floor exactly, and the occupied truth is then what the module's own
 * split would give with exact inputs), and the counter updates every
 * ~1 ms, the step the module assumed before it measured it.  Options, each off
 * by default (the default run is as it was, to the byte), break them.
 * Under every one, the truths are the same function of what runs: a task
 * on a core while n cores run gets its core's power + uncore / n
 * (dynamic-only), that + floor / ncpu (occupied; floor is the model's
 * C-state power, m.floor_uw, never a figure learned from the counter),
 * or P / n (busy-share); whatever the package draws while no core runs
 * is nobody's under all three.  None of them is defined by what an
 * algorithm can observe, and none by vmrapl's formula:
 *
 *   --pc6-delay-us D  after the last core of a package idles, it keeps
 *                     drawing floor + uncore for D us, then the floor
 *                     alone (a package C-state entered after a delay, as
 *                     PC6 is).  The truths: as above; the uncore drawn in
 *                     the delay is idle energy (no core runs), nobody's
 *                     under all three truths, not the last runner's.  A
 *                     core that wakes in the delay cancels it; the next
 *                     all-idle instant starts it again.
 *   --no-pc6          the package never reaches the C-state: floor +
 *                     uncore while every core idles, so the floor is never
 *                     drawn alone.  The truths: as above, the floor in
 *                     the occupied truth is still the model's floor, and
 *                     the uncore drawn while no core runs is nobody's.
 *                     (Calling the uncore static here, split by occupied
 *                     time, would make the occupied truth what vmrapl
 *                     learns from idle time, floor + uncore: the check
 *                     would share the assumption it checks.)
 *   --update-us U,    the package counter and the per-core counters
 *   --update-jitter P latch every U us +- P % (uniform) instead of every
 *                     976.6 us +- 5 %.  The truths: unchanged (the update
 *                     instants change what the registers show, not what
 *                     is drawn).
 *   --esu N           the counters count in 2^-N J (AMD Zen: 16) instead
 *                     of 2^-14 J; vmrapl is told N, as the module reads
 *                     it from the power-unit register.  The truths:
 *                     unchanged.
 *
 * Three more make the physics richer than the module's picture of it:
 *
 *   --smt             two hardware threads per core: a package's CPUs stay
 *                     CPUs (the scheduler is unchanged), CPUs 2k and
 *                     2k + 1 of a package are one core's siblings, and
 *                     the frequency f(n) follows the active cores, not
 *                     threads (n of ncpu / 2).  A core with one runner
 *                     draws its intensity x (f / f_all)^2 as before; with
 *                     two, SMT_PAIR (0.65) x the sum of both intensities
 *                     x (f / f_all)^2, so a second equal thread adds 30 %
 *                     of the first's core power.  One AMD-like counter per
 *                     core counts the whole core; both threads read it.
 *                     The truths: a runner's part of its core's power is
 *                     the core's power x its own intensity / the sum of
 *                     both runners' (split by each task's own intensity);
 *                     dynamic-only adds uncore / n, n the busy threads;
 *                     occupied adds floor / ncpu per occupied thread (ncpu
 *                     the package's threads); busy-share P / n over busy
 *                     threads.
 *   --leakage         the floor and a running core's static part (1 W at
 *                     f_all, CORE_LEAK_UW) grow with voltage and with
 *                     temperature.  Voltage, linear in f:
 *                     V / V_all = 0.6 + 0.4 f(n) / f_all while n > 0 cores
 *                     run, 1 while none does.  Temperature: theta, K above
 *                     the all-idle steady state, follows the package's
 *                     power first-order, theta -> 0.3 K/W x (P - floor),
 *                     tau 5 s, stepped every THERM_STEP_NS (10 ms) from
 *                     the mean power of the step.  Leakage: linear,
 *                     + 1 %/K (x (1 + 0.01 theta)).  Floor now = floor x
 *                     V / V_all x (1 + 0.01 theta).  The truths: occupied
 *                     splits the floor of each instant (as it drifts with
 *                     voltage and temperature) per occupied CPU; a core's
 *                     leakage while it runs is part of its core's power,
 *                     its runner's (in its per-core counter too); idle,
 *                     nobody's.
 *   --mem-uncore      each running task has a memory traffic by its
 *                     intensity (memory-bound 10 GB/s, normal 3, vector
 *                     2); the uncore draws 0.3 W per GB/s of the traffic
 *                     of what runs on top of its uplift (not in any
 *                     core's counter), and a DRAM domain counter per
 *                     package (its own counter, the fixed server DRAM
 *                     unit 2^-16 J, 32 bits, latched as the per-core
 *                     counters) counts DRAM power = 3 W idle + 0.5 W per
 *                     GB/s.  vmrapl is fed it as VMRAPL_DOM_DRAM.  The
 *                     truths: the traffic-driven uncore uplift and the
 *                     DRAM dynamic energy belong to the task whose
 *                     traffic it is (in dynamic-only, so in occupied);
 *                     the DRAM idle part is split as the floor under
 *                     occupied (3 W / ncpu per occupied CPU), is nobody's
 *                     under dynamic-only, and under busy-share the whole
 *                     DRAM power goes over the busy CPUs, / n; with no
 *                     core running, all of it is nobody's.
 *
 * Under each, the model's self-check holds: the busy-share truths plus
 * the all-idle energy are the packages' energy (and the DRAM domains'),
 * and so is each counter's exact integral.
 */
#include "vrsim.h"

/* ---------------------------------------------------- random stream */

/*
 * Uniform in [0, 1) for (@seed, @k), from splitmix64 rather than the
 * schedule's stream, which it leaves as it was.
 */
static double pkg_uniform(u64 seed, u64 k)
{
	u64 h = seed * 0x9e3779b97f4a7c15ULL + k;

	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
	h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return (double)(h >> 11) / 9007199254740992.0;	/* [0, 1) */
}

/*
 * Package @p's idle floor for @seed: @nominal x (1 + u), u uniform in
 * +-floor_spread %.
 */
u64 pkg_floor_uw(u64 nominal, u64 seed, int p)
{
	double u = pkg_uniform(seed, (u64)p + 1);

	return (u64)llround(nominal * (1 + floor_spread / 100 * (2 * u - 1)));
}

/*
 * With --floor-drift: package @p's phase in its floor's swing, uniform
 * over the period, from the same stream as its floor (another key).
 */
double pkg_drift_phase(u64 seed, int p)
{
	return 2 * M_PI * pkg_uniform(seed, (u64)p + 1 + 4096);
}

/* xorshift64*: one stream for the schedule and the counters' jitter. */
static u64 rng_state;

void rng_seed(u64 s)
{
	rng_state = s * 0x2545f4914f6cdd1dULL + 0x9e3779b97f4a7c15ULL;
	if (!rng_state)
		rng_state = 1;
	rnd();
	rnd();
}

u64 rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

u64 below(u64 n)
{
	return n ? (u64)(((__uint128_t)rnd() * n) >> 64) : 0;
}

static double unif(void)
{
	return (double)(rnd() >> 11) * 0x1p-53;
}

/* Exponential with mean @m ns, at least 10 us. */
u64 expo(u64 m)
{
	double x = -log(1.0 - unif()) * (double)m;

	return x < 10000 ? 10000 : (u64)x;
}

void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz);

	if (!p) {
		perror("calloc");
		exit(2);
	}
	return p;
}

/* Room for element @n of @p, *@cap long: doubles it (at first, @first). */
void *xgrow(void *p, size_t n, size_t *cap, size_t first, size_t sz)
{
	if (n < *cap)
		return p;
	*cap = *cap ? 2 * *cap : first;
	p = realloc(p, *cap * sz);
	if (!p) {
		perror("realloc");
		exit(2);
	}
	return p;
}

/* ------------------------------------------------------- counter */

/*
 * The latch jitter of a counter updated every @step ns: +- update_jitter
 * % (by default 5 %, step / 20, exactly: step x 5 is exact in a double,
 * and so is the quotient when it is a whole number).
 */
static u64 ctr_jitter_ns(u64 step)
{
	return (u64)((double)step * update_jitter / 100);
}

void ctr_init(struct ctr *c, u64 offset)
{
	memset(c, 0, sizeof(*c));
	c->esu = ctr_esu;
	c->width = 32;
	c->step_ns = latch_ns;
	c->jitter_ns = ctr_jitter_ns(latch_ns);
	c->offset = offset;
	c->next_upd = c->step_ns;
}

/* xorshift64* on a counter's own state (per-core counters). */
static u64 ctr_rnd(struct ctr *c)
{
	c->rs ^= c->rs >> 12;
	c->rs ^= c->rs << 25;
	c->rs ^= c->rs >> 27;
	return c->rs * 0x2545f4914f6cdd1dULL;
}

/*
 * A core's energy counter: as the package's, the start offset and the
 * latch jitter drawn from its own stream seeded by @seed; latched every
 * core_latch_ns (CORE_LATCH_NS unless --update-us) whatever --latch-us
 * says (that option is the package counter's: sixteen counters latched
 * every microsecond would make its diagnostic runs nine times longer).
 */
void core_ctr_init(struct ctr *c, u32 esu, u64 seed)
{
	ctr_init(c, 0);
	c->esu = esu;
	c->step_ns = core_latch_ns;
	c->jitter_ns = ctr_jitter_ns(core_latch_ns);
	c->rs = seed * 0x9e3779b97f4a7c15ULL + 0xd1b54a32d192ed03ULL;
	if (!c->rs)
		c->rs = 1;
	c->offset = ctr_rnd(c) & (ctr_range(c) - 1);
	c->next_upd = c->step_ns - c->jitter_ns +
		      (u64)(((__uint128_t)ctr_rnd(c) *
			     (2 * c->jitter_ns + 1)) >> 64);
}

static u64 ctr_jitter(struct ctr *c)
{
	u64 n = 2 * c->jitter_ns + 1;

	if (!c->rs)
		return below(n);
	return (u64)(((__uint128_t)ctr_rnd(c) * n) >> 64);
}

static void ctr_advance(struct ctr *c, u64 now)
{
	while (c->next_upd <= now) {
		c->fj += (__uint128_t)c->power_uw * (c->next_upd - c->t);
		c->t = c->next_upd;
		c->latch_fj = c->fj;
		c->next_upd += c->step_ns - c->jitter_ns + ctr_jitter(c);
	}
	if (now > c->t) {
		c->fj += (__uint128_t)c->power_uw * (now - c->t);
		c->t = now;
	}
}

static void ctr_set_power(struct ctr *c, u64 now, u64 uw)
{
	ctr_advance(c, now);
	c->power_uw = uw;
}

/* The register at @now: latched energy in ESU units, wrapped. */
u64 ctr_read(struct ctr *c, u64 now)
{
	u64 units;

	ctr_advance(c, now);
	units = (u64)((c->latch_fj << c->esu) / (__uint128_t)1000000000000000ULL);
	return (units + c->offset) & (ctr_range(c) - 1);
}

double ctr_units_j(const struct ctr *c, u64 u)
{
	return ldexp((double)u, -(int)c->esu);
}

u64 ctr_range(const struct ctr *c)
{
	return 1ULL << c->width;
}

/* ------------------------------------------------------ power model */

/* --smt: two runners on one core draw this times the sum of theirs. */
#define SMT_PAIR	0.65
/* --leakage: thermal resistance K/W, time constant s, leakage per K. */
#define THERM_R_K_W	0.3
#define THERM_TAU_S	5.0
#define LEAK_PER_K	0.01
#define CORE_LEAK_UW	1000000.0	/* a running core's, at f_all */
/* --mem-uncore: uncore and DRAM W per GB/s of traffic; DRAM's idle part */
#define UNC_UW_PER_GBS	300000.0
#define DRAM_UW_PER_GBS	500000.0
#define DRAM_IDLE_UW	3000000ULL
#define DRAM_ESU	16

/*
 * --floor-drift: the floor swings as with temperature, changing at the
 * package's scheduling events (the truths, integrated between them,
 * follow the same steps).
 */
static double leak_t(const struct pkg *pk);

static void pkg_floor_now(struct pkg *pk)
{
	double fl = (double)pk->floor0_uw;

	if (floor_drift)
		fl *= 1 + floor_drift / 100 *
		      sin(2 * M_PI * (double)S.now / (DRIFT_PERIOD_S * SEC) +
			  pk->drift_phase);
	/* --leakage: at the cores' voltage and the package's temperature */
	if (leakage)
		fl *= pk->lv * leak_t(pk);
	if (floor_drift || leakage)
		pk->m.floor_uw = (u64)llround(fl);
}

/*
 * Every core idle at t = 0, after an idle stretch before the run: in the
 * C-state, drawing the floor (--no-pc6: never in it, floor + uncore).
 */
void pkg_model_init(struct pkg *pk)
{
	pk->lv = 1;
	pkg_floor_now(pk);
	pk->nbusy = 0;
	pk->fscale = 1;
	pk->t_truth = 0;
	pk->pc6 = !no_pc6;
	pk->power_uw = pk->m.floor_uw + (pk->pc6 ? 0 : pk->m.uncore_uw);
	ctr_set_power(&pk->ctr, 0, pk->power_uw);
}

/* The cores' counters of package @pi start at 0 W (every core idle). */
void core_ctrs_init(int pi, u64 seed)
{
	struct pkg *pk = &S.pk[pi];
	int i;

	for (i = 0; i < pk->ncpu; i++) {
		int ci = pk->first + i;

		core_ctr_init(&S.cpu[ci].core_ctr, pk->ctr.esu,
			      seed * MAXCPU + (u64)ci + 1);
		ctr_set_power(&S.cpu[ci].core_ctr, 0, 0);
	}
}

/* Integrate the truths of package @pi up to now, in the current state. */
void pkg_advance(int pi)
{
	struct pkg *pk = &S.pk[pi];
	u64 dt = S.now - pk->t_truth;
	double d = (double)dt / FJ_PER_J, base, share;
	int i, j;

	if (!dt)
		return;
	pk->t_truth = S.now;
	pk->truth_j += (double)pk->power_uw * d;
	if (mem_uncore)
		pk->dram_j += (double)pk->dram_power_uw * d;
	/* no core runs: the floor, and the uncore before PC6, nobody's */
	if (!pk->nbusy) {
		pk->all_idle_j += (double)pk->power_uw * d;
		if (mem_uncore)
			pk->dram_idle_j += (double)pk->dram_power_uw * d;
		return;
	}
	base = (double)pk->m.floor_uw / pk->ncpu * d;
	share = (double)pk->m.uncore_uw / pk->nbusy * d;
	for (i = 0; i < pk->ncpu; i++) {
		const struct cpu *c = &S.cpu[pk->first + i];
		double tr[NTRUTH], *to;

		if (c->cur == NOTASK)
			continue;
		tr[J_DYN] = (double)c->core_uw * d + share;
		/* --mem-uncore: the uncore its own traffic adds */
		if (mem_uncore)
			tr[J_DYN] += (double)c->traffic_uw * d;
		tr[J_OCC] = tr[J_DYN] + base;
		tr[J_BUSY] = (double)pk->power_uw / pk->nbusy * d;
		to = S.t[c->cur].kind == T_HOST ? S.host_task_truth :
		     S.vm[S.t[c->cur].vm].truth;
		for (j = 0; j < NTRUTH; j++)
			to[j] += tr[j];
		if (!mem_uncore)
			continue;
		/* DRAM: its traffic's, the idle part as the floor */
		tr[J_DYN] = (double)c->dram_uw * d;
		tr[J_OCC] = tr[J_DYN] + (double)DRAM_IDLE_UW / pk->ncpu * d;
		tr[J_BUSY] = (double)pk->dram_power_uw / pk->nbusy * d;
		to = S.t[c->cur].kind == T_HOST ? S.host_dram_truth :
		     S.vm[S.t[c->cur].vm].dram_truth;
		for (j = 0; j < NTRUTH; j++)
			to[j] += tr[j];
	}
}

/* --mem-uncore: a task's memory traffic in GB/s, by its intensity. */
static double traffic_gbs(u64 base_uw)
{
	if (base_uw == W_MEMORY)
		return 10;
	if (base_uw == W_VECTOR)
		return 2;
	return 3;
}

/* --leakage: the temperature's factor on leakage now. */
static double leak_t(const struct pkg *pk)
{
	double l = 1 + LEAK_PER_K * pk->theta;

	return l > 0.5 ? l : 0.5;
}

/*
 * --leakage: a running core's static part (its runner's), at the package's
 * frequency's voltage and its temperature.
 */
static double core_leak_uw(const struct pkg *pk)
{
	return leakage ? CORE_LEAK_UW * pk->lv * leak_t(pk) : 0;
}

/*
 * The power of core @k of package @pk with --smt: its threads' parts
 * (@part[0], @part[1]), split by each runner's own intensity.
 */
static void smt_core_parts(const struct pkg *pk, int k, u64 part[2])
{
	const struct cpu *c0 = &S.cpu[pk->first + 2 * k];
	u64 a = c0->cur == NOTASK ? 0 : S.t[c0->cur].base_uw;
	u64 b = c0[1].cur == NOTASK ? 0 : S.t[c0[1].cur].base_uw;
	double core;

	part[0] = 0;
	part[1] = 0;
	if (!a && !b)
		return;
	if (a && b)
		core = (double)(a + b) * SMT_PAIR * pk->fscale;
	else
		core = (double)(a + b) * pk->fscale;
	core += core_leak_uw(pk);
	part[0] = (u64)llround(core * (double)a / (double)(a + b));
	part[1] = (u64)llround(core * (double)b / (double)(a + b));
}

/*
 * After a core of package @pi changed what it runs (its truths already
 * integrated up to now): the frequency, every core's power, the package's.
 */
void pkg_retune(int pi)
{
	struct pkg *pk = &S.pk[pi];
	double f;
	u64 uw, dram = DRAM_IDLE_UW, parts[2] = { 0, 0 };
	int i, n = 0, nc = 0;

	for (i = 0; i < pk->ncpu; i++)
		n += S.cpu[pk->first + i].cur != NOTASK;
	/* the frequency follows the active cores, not threads */
	if (smt)
		for (i = 0; i < pk->ncore; i++)
			nc += S.cpu[pk->first + 2 * i].cur != NOTASK ||
			      S.cpu[pk->first + 2 * i + 1].cur != NOTASK;
	else
		nc = n;
	/*
	 * The package C-state: left as a core runs; entered as the last one
	 * idles, or pc6_delay_ns later (pkg_pc6()), or never (--no-pc6).
	 */
	if (n) {
		pk->pc6 = false;
	} else if (pk->nbusy && !no_pc6) {
		if (pc6_delay_ns)
			ev_push(S.now + pc6_delay_ns, EV_PC6, pi,
				++pk->pc6_ver);
		else
			pk->pc6 = true;
	}
	pk->nbusy = n;
	if (nc > 1 && pk->ncore > 1)
		f = pk->m.f_one_mhz - ((double)pk->m.f_one_mhz -
				       pk->m.f_all_mhz) * (nc - 1) /
				      (pk->ncore - 1);
	else
		f = pk->m.f_one_mhz;
	pk->fscale = (f / pk->m.f_all_mhz) * (f / pk->m.f_all_mhz);
	/* --leakage: voltage linear in f, 0.6 + 0.4 f / f_all; idle: 1 */
	pk->lv = nc ? 0.6 + 0.4 * f / pk->m.f_all_mhz : 1;
	pkg_floor_now(pk);
	uw = pk->m.floor_uw + (pk->pc6 ? 0 : pk->m.uncore_uw);
	for (i = 0; i < pk->ncpu; i++) {
		struct cpu *c = &S.cpu[pk->first + i];
		u64 cuw;

		if (smt) {
			if (!(i & 1))
				smt_core_parts(pk, i / 2, parts);
			cuw = parts[i & 1];
		} else {
			cuw = c->cur == NOTASK ? 0 :
			      (u64)llround((double)S.t[c->cur].base_uw *
					   pk->fscale + core_leak_uw(pk));
		}
		/* the core's counter: its threads' sum (--smt: on the first) */
		if (!smt && c->core_ctr.power_uw != cuw)
			ctr_set_power(&c->core_ctr, S.now, cuw);
		else if (smt && (i & 1) &&
			 c[-1].core_ctr.power_uw != parts[0] + parts[1])
			ctr_set_power(&c[-1].core_ctr, S.now,
				      parts[0] + parts[1]);
		c->core_uw = cuw;
		uw += cuw;
		if (mem_uncore) {
			double g = c->cur == NOTASK ? 0 :
				   traffic_gbs(S.t[c->cur].base_uw);

			c->traffic_uw = (u64)llround(g * UNC_UW_PER_GBS);
			c->dram_uw = (u64)llround(g * DRAM_UW_PER_GBS);
			uw += c->traffic_uw;
			dram += c->dram_uw;
		}
	}
	pk->power_uw = uw;
	ctr_set_power(&pk->ctr, S.now, uw);
	if (mem_uncore) {
		pk->dram_power_uw = dram;
		ctr_set_power(&pk->dram, S.now, dram);
	}
}

/*
 * --leakage, every THERM_STEP_NS: the package's temperature follows its
 * mean power over the step (first order, THERM_TAU_S), its leakage
 * follows the temperature.
 */
void pkg_therm(int pi)
{
	struct pkg *pk = &S.pk[pi];
	double dt, w, ss;

	pkg_advance(pi);
	dt = (double)(S.now - pk->therm_t) / SEC;
	if (dt > 0) {
		w = (pk->truth_j - pk->therm_j) / dt;
		ss = THERM_R_K_W * (w - (double)pk->floor0_uw / 1e6);
		pk->theta = ss + (pk->theta - ss) * exp(-dt / THERM_TAU_S);
	}
	pk->therm_t = S.now;
	pk->therm_j = pk->truth_j;
	pkg_retune(pi);
	ev_push(S.now + THERM_STEP_NS, EV_THERM, pi, 0);
}

/* --mem-uncore: package @pk's DRAM counter, at its idle power. */
void dram_ctr_init(struct pkg *pk, u64 seed)
{
	core_ctr_init(&pk->dram, DRAM_ESU, seed * MAXPKG + 0x5eedULL +
		      (u64)(pk - S.pk));
	pk->dram_power_uw = DRAM_IDLE_UW;
	ctr_set_power(&pk->dram, 0, DRAM_IDLE_UW);
}

/*
 * --pc6-delay-us: the delay the last core's idling started on package @pi
 * (@ver) is over.  If no core woke meanwhile, the package enters its
 * C-state: the uncore drawn up to now was idle energy (pkg_advance()
 * gives it to no task), the floor alone from now on.
 */
void pkg_pc6(int pi, u32 ver)
{
	struct pkg *pk = &S.pk[pi];

	if (ver != pk->pc6_ver || pk->nbusy || pk->pc6)
		return;
	pkg_advance(pi);
	pk->pc6 = true;
	pkg_retune(pi);
}

/* ------------------------------------------------------ CPU time */

/* A running task's CPU time up to now (what /proc and schedstat see). */
void task_accrue(struct task *t)
{
	struct cpu *c;
	u64 ran;

	if (t->state != S_RUNNING)
		return;
	c = &S.cpu[t->cpu];
	ran = S.now - t->run_start;
	t->run_start = S.now;
	if (!ran)
		return;
	t->runtime += ran;
	t->runtime_pkg[c->pkg] += ran;
	S.host_busy_ns += ran;
	bw_charge(t, t->cpu, ran);	/* its VM's quota, if it has one */
}

u64 vm_runtime(const struct vm *v)
{
	u64 rt = 0;
	int i;

	for (i = 0; i < v->ntask; i++)
		rt += S.t[v->first_task + i].runtime;
	return rt;
}

void sync_all(void)
{
	int i;

	for (i = 0; i < S.npkg; i++)
		pkg_advance(i);
	for (i = 0; i < S.ntask; i++)
		task_accrue(&S.t[i]);
}

/*
 * The model's own check: the busy-share truths of every task and the
 * energy spent with every core idle add up to the packages' energy, and
 * so does each counter's exact integral (before latching and units); the
 * cores' counters add up to no more than the packages'.  Returns the
 * largest relative error.
 */
double model_check(void)
{
	double pk = 0, parts = S.host_task_truth[J_BUSY], ctr = 0, e;
	double cores = 0, above = 0;
	int i;

	sync_all();
	for (i = 0; i < S.npkg; i++) {
		pk += S.pk[i].truth_j;
		parts += S.pk[i].all_idle_j;
		ctr_read(&S.pk[i].ctr, S.now);
		ctr += (double)S.pk[i].ctr.fj / FJ_PER_J;
	}
	/* the cores' counters hold no floor and no uncore: below */
	for (i = 0; i < S.ncpu_total; i++) {
		ctr_read(&S.cpu[i].core_ctr, S.now);
		cores += (double)S.cpu[i].core_ctr.fj / FJ_PER_J;
	}
	above = cores > ctr && ctr > 0 ? (cores - ctr) / ctr : 0;
	for (i = 0; i < S.nvm; i++)
		parts += S.vm[i].truth[J_BUSY];
	if (pk <= 0)
		return 0;
	e = fabs(parts - pk) / pk;
	e = fmax(fmax(e, fabs(ctr - pk) / pk), above);
	/* --mem-uncore: the DRAM domain's truths and counter, the same */
	if (mem_uncore) {
		double dr = 0, dparts = S.host_dram_truth[J_BUSY], dctr = 0;

		for (i = 0; i < S.npkg; i++) {
			dr += S.pk[i].dram_j;
			dparts += S.pk[i].dram_idle_j;
			ctr_read(&S.pk[i].dram, S.now);
			dctr += (double)S.pk[i].dram.fj / FJ_PER_J;
		}
		for (i = 0; i < S.nvm; i++)
			dparts += S.vm[i].dram_truth[J_BUSY];
		if (dr > 0)
			e = fmax(e, fmax(fabs(dparts - dr) / dr,
					 fabs(dctr - dr) / dr));
	}
	return e;
}
