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
 * bits; a random start offset; every CORE_LATCH_NS, ~1 ms, +- 5 %).  The uncore uplift and the floor are not
 * in any core's counter: on Zen the core energy MSR covers the core
 * (its CCX's cores and their L2), not the uncore, the SoC or the I/O die,
 * so the cores' counters add up to less than the package's.  The model
 * has no SMT: one CPU per core, so no CPU shares its counter with a
 * sibling.  These counters draw their latch jitter from a stream of their
 * own, so adding them leaves the schedule and the package counters'
 * instants as they were.  vmrapl reads only the counter registers
 * (ctr_read()), never the exact energy.
 *
 * Breaking the model's assumptions.  By default the model agrees with two
 * of the module's own assumptions: the floor is drawn alone the instant
 * the last core of a package idles (so an all-idle stretch shows the
 * floor exactly, and the occupied truth is then what the module's own
 * split would give with exact inputs), and the counter updates every
 * ~1 ms, the module's VR_HW_STEP_NS (kmod/vr_lag.h).  Options, each off
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

/*
 * --floor-drift: the floor swings as with temperature, changing at the
 * package's scheduling events (the truths, integrated between them,
 * follow the same steps).
 */
static void pkg_floor_now(struct pkg *pk)
{
	if (floor_drift)
		pk->m.floor_uw = (u64)llround(pk->floor0_uw *
			(1 + floor_drift / 100 *
			 sin(2 * M_PI * (double)S.now / (DRIFT_PERIOD_S * SEC) +
			     pk->drift_phase)));
}

/*
 * Every core idle at t = 0, after an idle stretch before the run: in the
 * C-state, drawing the floor (--no-pc6: never in it, floor + uncore).
 */
void pkg_model_init(struct pkg *pk)
{
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
	/* no core runs: the floor, and the uncore before PC6, nobody's */
	if (!pk->nbusy) {
		pk->all_idle_j += (double)pk->power_uw * d;
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
		tr[J_OCC] = tr[J_DYN] + base;
		tr[J_BUSY] = (double)pk->power_uw / pk->nbusy * d;
		to = S.t[c->cur].kind == T_HOST ? S.host_task_truth :
		     S.vm[S.t[c->cur].vm].truth;
		for (j = 0; j < NTRUTH; j++)
			to[j] += tr[j];
	}
}

/*
 * After a core of package @pi changed what it runs (its truths already
 * integrated up to now): the frequency, every core's power, the package's.
 */
void pkg_retune(int pi)
{
	struct pkg *pk = &S.pk[pi];
	double f;
	u64 uw;
	int i, n = 0;

	for (i = 0; i < pk->ncpu; i++)
		n += S.cpu[pk->first + i].cur != NOTASK;
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
	if (n > 1 && pk->ncpu > 1)
		f = pk->m.f_one_mhz - ((double)pk->m.f_one_mhz -
				       pk->m.f_all_mhz) * (n - 1) /
				      (pk->ncpu - 1);
	else
		f = pk->m.f_one_mhz;
	pk->fscale = (f / pk->m.f_all_mhz) * (f / pk->m.f_all_mhz);
	pkg_floor_now(pk);
	uw = pk->m.floor_uw + (pk->pc6 ? 0 : pk->m.uncore_uw);
	for (i = 0; i < pk->ncpu; i++) {
		struct cpu *c = &S.cpu[pk->first + i];

		u64 cuw = c->cur == NOTASK ? 0 :
			  (u64)llround((double)S.t[c->cur].base_uw *
				       pk->fscale);

		if (c->core_ctr.power_uw != cuw)
			ctr_set_power(&c->core_ctr, S.now, cuw);
		c->core_uw = cuw;
		uw += cuw;
	}
	pk->power_uw = uw;
	ctr_set_power(&pk->ctr, S.now, uw);
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
	return fmax(fmax(e, fabs(ctr - pk) / pk), above);
}
