// SPDX-License-Identifier: GPL-2.0
/*
 * vmrapl accounting core, the package's static power: a fixed value, or
 * learned from idle runs, or fitted online while the package is busy, and
 * the precedence between them.  vr_core.c's close feeds each epoch in
 * (vr_learn_static(), vr_fit_epoch()); the package timer solves the fit
 * (vr_pkg_fit_update()).  Everything here runs under the package's
 * close_lock, as the rest of the core: see vr_core.h.
 */
#include "vr_core.h"

#define VR_LEARN_NS	(100 * 1000000ULL)	/* idle time to learn from */
#define VR_LEARN_FIRST_NS	(5 * 1000000ULL)	/* a provisional floor */
#define VR_LEARN_MEM_NS	(16 * VR_LEARN_NS)	/* the floor's memory */

/*
 * The static power in use, by precedence: a fixed value (PARAM, MODEL)
 * stays; otherwise the idle-run estimate, which measures the package's
 * floor, once final (VR_LEARN_NS of idle time: vr_learn_static()); else
 * the floor the host's other packages learned, one CPU model's
 * (vr_pkg_set_host_floor()); else the provisional idle-run estimate,
 * from as little as VR_LEARN_FIRST_NS; else, where the cores have energy
 * counters, the package's power less its cores' while it is busy,
 * measured (its floor and the uncore that switches on with the first
 * active core); else the last
 * well-conditioned fit, whose intercept estimates the same from a line
 * through (busy CPUs, power), biased where that curve is not straight;
 * else unknown (0 W).  The last two are held when they stop being
 * measured (no per-core sample, a load that stopped varying).  The
 * power that switches on with activity belongs to the runners: when the
 * idle floor is known, it stays in the dynamic split.
 */
static void vr_static_resolve(struct vr_pkg *p)
{
	if (!p->learn_static)
		return;
	if (p->idle_known || (p->idle_prov && !p->host_floor_uw)) {
		p->p_static_uw = p->idle_uw;
		p->static_origin = VR_STATIC_LEARNED;
	} else if (p->host_floor_uw) {
		p->p_static_uw = p->host_floor_uw;
		p->static_origin = VR_STATIC_HOST;
	} else if (p->fit.flags & VR_FIT_CORE) {
		p->p_static_uw = p->fit.core_uw;
		p->static_origin = VR_STATIC_CORE;
	} else if (p->fit.flags & VR_FIT_HAVE) {
		p->p_static_uw = p->fit.good_uw;
		p->static_origin = VR_STATIC_FIT;
	} else {
		p->p_static_uw = 0;
		p->static_origin = VR_STATIC_UNKNOWN;
	}
}

/*
 * PARAM and MODEL fix the static power; UNKNOWN lets the package learn;
 * LEARNED seeds the idle-run estimate with @uw (tests, a restart).
 */
void vr_pkg_set_static(struct vr_pkg *p, u64 uw, enum vr_static_origin origin)
{
	p->learn_static = origin == VR_STATIC_UNKNOWN ||
			  origin == VR_STATIC_LEARNED ||
			  origin == VR_STATIC_FIT;
	if (!p->learn_static) {
		p->p_static_uw = uw;
		p->static_origin = origin;
		return;
	}
	p->idle_known = origin == VR_STATIC_LEARNED;
	p->idle_prov = false;
	p->idle_uw = p->idle_known ? uw : 0;
	/* A value handed in (a restart) stands for a whole memory. */
	p->idle_mem_ns = p->idle_known ? VR_LEARN_MEM_NS : 0;
	vr_static_resolve(p);
}

/* The idle-run estimate so far, provisional or final; 0 before any. */
static u64 vr_idle_est_uw(const struct vr_pkg *p)
{
	return p->idle_known || p->idle_prov ? p->idle_uw : 0;
}

/*
 * The power of the epoch before a busy one, as far as it is known: the
 * floor so far after idle time, else the last busy power; 0 if none.
 */
static u64 vr_busy_before(const struct vr_pkg *p)
{
	return p->learn_skip ? vr_idle_est_uw(p) : p->learn_busy_uw;
}

/*
 * The mean power of a busy epoch of @de over @dt: its reads lag by
 * @lag_ns on average, so @de holds that much of the epoch before it (at
 * vr_busy_before()) and misses as much of its own end.  Context:
 * close_lock held; @dt > @lag_ns.
 */
static u64 vr_busy_power(const struct vr_pkg *p, u64 de, u64 dt)
{
	u64 rem = 0, lead = vr_energy_eu(vr_busy_before(p), p->lag_ns, &rem);

	if (de <= lead)
		return 0;
	return vr_mul_div(de - lead, VR_FJ_PER_J >> VR_EU_SHIFT,
			  dt - p->lag_ns);
}

/*
 * The energy above the floor so far (@est) that the counter's lag carries
 * from the last busy epoch into the idle epoch after it.
 *
 * The counter lags a read by l, uniform over [0, 2 lag_ns): the read
 * that closed the busy epoch missed its last l of energy, which the next
 * read holds.  Take the power above @est as c per busy CPU (the mean over
 * the busy epoch: (P - @est) dt / B, for B busy CPU-ns over dt).  Then
 * the missed part above @est is c times the busy CPU time in the last l,
 * whose mean over l the fold measured (@learn_tail / (4 lag_ns),
 * vr_cpu_tail()): lag_ns for each CPU busy for 2 lag_ns or more up to the
 * close (if the next epoch is all idle, it went idle as the close ended),
 * less for one that went idle before it or had run for less, nothing for
 * one that woke at the close.  Call that T; the tail is (P - @est) k,
 * with k = T dt / B.  k is lag_ns when as many CPUs were busy at the end
 * as on average over the epoch, and less when they went idle one by one:
 * the busy time then ended below its mean power.  When the last busy
 * epoch was too short for its power to be measured, P, dt and B are
 * those of the last one that was, and T is its own.
 *
 * With no estimate yet, the caller passes the idle epoch's own mean
 * power as @est and its length as @idle_dt (0 otherwise).  That power is
 * the floor plus the tail spread over the epoch, so the tail over it is
 * short of the true one, and the estimate it leaves high (the unit
 * tests' four CPUs: 40.14 W for 40 W, over every counter phase).  The
 * tail is linear in the power it is taken over: with the factor f below,
 * it is (P' - e) f, and the estimate e it leaves is (E - (P' - e) f) /
 * @idle_dt, E the idle epoch's energy.  Solved for e, that is the tail
 * over the epoch's own power, @idle_dt / (@idle_dt - f) times larger.
 * Where P' was measured with its lead at 0 W, nothing being known then
 * (@learn_lead0), its lead is taken at the same e too: P' is less
 * e lag_ns / (dt - lag_ns), and f in that ratio is dt / (dt - lag_ns)
 * times larger (39.99 W there; 39.94 W without the lead).  The ratio's
 * f is held to @idle_dt / 2, so a tail from a long epoch is at most
 * doubled.  Over 0 W, the excess would
 * be the floor itself, magnified dt / B times: with a CPU still busy at
 * the close of a long epoch that ran little (a kernel thread on a quiet
 * package) it took the idle epoch after it whole, and the estimate, held
 * at 0 by that, took every later tail at the whole floor too (the rig's
 * idle package read 1.45 W for 8 W).  With no tail at all, the first
 * estimate is high by the whole tail, and the later ones, taken over it,
 * stay high (the simulator's turbo packages: 19.3 W for 18.4 W).
 *
 * P itself was measured by vr_busy_power() as if the read had missed
 * lag_ns of it (@learn_busy_uw, P'); it missed lag_ns of @est and k of
 * P - @est, so (P - @est) (dt - k) = (P' - @est) (dt - lag_ns), and the
 * tail is (P' - @est) f, f = (dt - lag_ns) k / (dt - k).  k is held to
 * dt / 2: it can only pass that with a CPU that became busy just before
 * the close, counted whole, after which the epoch is not idle anyway.
 * Context: close_lock held.
 */
static u64 vr_busy_tail(const struct vr_pkg *p, u64 est, u64 idle_dt)
{
	u64 dt = p->learn_busy_dt, busy_uw = p->learn_busy_uw, rem = 0;
	u64 k, f, h;

	if (!p->lag_ns || !p->learn_busy)
		return 0;
	k = vr_mul_div(vr_mul_div(p->learn_tail, 1, 4 * p->lag_ns), dt,
		       p->learn_busy);
	if (k > dt / 2)
		k = dt / 2;
	f = vr_mul_div(dt - p->lag_ns, k, dt - k);
	if (idle_dt) {
		h = f;
		if (p->learn_lead0) {
			u64 lead = vr_mul_div(est, p->lag_ns, dt - p->lag_ns);

			busy_uw = busy_uw > lead ? busy_uw - lead : 0;
			h = vr_mul_div(f, dt, dt - p->lag_ns);
		}
		f = vr_mul_div(f, idle_dt,
			       idle_dt - (h < idle_dt / 2 ? h : idle_dt / 2));
	}
	if (busy_uw <= est)
		return 0;
	return vr_energy_eu(busy_uw - est, f, &rem);
}

/* Sum @e eu over @t ns of settled idle time into the floor. */
static void vr_learn_sum(struct vr_pkg *p, u64 e, u64 t)
{
	u64 uw, m;

	p->learn_eu += e;
	p->learn_ns += t;
	if (p->learn_ns < VR_LEARN_NS) {
		if (p->idle_known || p->learn_ns < VR_LEARN_FIRST_NS)
			return;
		p->idle_uw = vr_mul_div(p->learn_eu,
					VR_FJ_PER_J >> VR_EU_SHIFT,
					p->learn_ns);
		p->idle_prov = true;
		vr_static_resolve(p);
		return;
	}
	uw = vr_mul_div(p->learn_eu, VR_FJ_PER_J >> VR_EU_SHIFT, p->learn_ns);
	if (!p->idle_known)
		p->idle_mem_ns = 0;
	p->idle_mem_ns += p->learn_ns;
	if (p->idle_mem_ns > VR_LEARN_MEM_NS)
		p->idle_mem_ns = VR_LEARN_MEM_NS;
	m = p->learn_ns < p->idle_mem_ns ? p->learn_ns : p->idle_mem_ns;
	if (uw >= p->idle_uw)
		p->idle_uw += vr_mul_div(uw - p->idle_uw, m, p->idle_mem_ns);
	else
		p->idle_uw -= vr_mul_div(p->idle_uw - uw, m, p->idle_mem_ns);
	p->learn_eu = 0;
	p->learn_ns = 0;
	p->idle_known = true;
	p->idle_prov = false;
	vr_static_resolve(p);
}

/*
 * Learn the package's idle power from the epochs in which no CPU was busy.
 * A single 1 ms epoch reads 0, 1 or 2 hardware steps, so they are summed
 * until VR_LEARN_NS: the step error is then below 1%.  They need not be
 * consecutive: the counter is read at both ends of each stretch of idle
 * epochs, and its latch lags each read by the same up to a step, so a
 * stretch's energy is unbiased, as long as the power just before its
 * first read was idle power too.  Hence the first VR_LEARN_SKIP_NS (two
 * counter steps, if longer: @step_ns) of each stretch are left out:
 * right after busy time its reads still hold energy the busy CPUs spent
 * (the lag of vr_split_policy()).
 *
 * A package that is all idle is not closed again until one of its CPUs
 * wakes (its timer is deferrable and then only guards the wrap), so a
 * stretch is often one epoch, which the skip would take whole: the
 * module learned nothing on a quiet package.  An idle epoch that starts
 * a stretch and is VR_LEARN_SKIP_NS or longer is therefore learned from
 * whole, less the tail the skip stands for: the busy time's last energy
 * above the estimate so far (before the first, the epoch's own power),
 * which the counter's lag carries into it (vr_busy_tail()).  For an
 * exact counter (@lag_ns 0) there is no tail.
 *
 * That first epoch is also learned less what a stretch holds before the
 * package settles (vr_settle_solve(): C, and nothing of an epoch shorter
 * than the shortest settled stretch), and goes into the bins that
 * measure it: a package C-state entered some time after the last core
 * idles would otherwise inflate the floor (the simulator's 1 ms delay:
 * its bursty packages learned 21.4 W for an 18.7 W floor).
 *
 * Until the first sum is complete, the mean so far is the floor, once it
 * holds VR_LEARN_FIRST_NS: a few steps of error, where the alternatives
 * (the package less its cores, the fit) hold the uncore besides the floor
 * (the simulator's turbo packages gathered 100 ms of idle stretches only
 * after two to three minutes, and their fit read 53 W for an 18 W floor).
 * The complete sums are unbiased, so their running mean is too, weighted
 * by their idle time: a sum of t moves the floor by t / T of the
 * difference, up or down, T the idle time learned from so far, with
 * this sum, until it reaches VR_LEARN_MEM_NS (1.6 s), and that after:
 * an exponential mean with a memory of 1.6 s of idle time.  A longer
 * memory would average the sums' noise further on a floor that never
 * changes, but a real floor drifts with temperature: in the simulator,
 * with each floor swinging +-5 % over two minutes (vrsim --floor-drift
 * 5), a memory of 12.8 s read 24.5 % on mostly-idle (1 ms bursts, which
 * carry the floor's error times each stretch they end) and 1.6 s 7.01 %.
 */
void vr_learn_static(struct vr_pkg *p, u64 de, u64 dt, u64 busy, bool lost)
{
	u64 skip = VR_LEARN_SKIP_NS > 2 * p->step_ns ? VR_LEARN_SKIP_NS :
		   2 * p->step_ns;
	u64 c, t_min;

	vr_lock_held(&p->close_lock);
	if (!p->learn_static)
		return;
	if (lost || busy) {
		if (!lost && dt > p->lag_ns && de) {	/* nor too short */
			p->learn_lead0 = !vr_busy_before(p);
			p->learn_busy_uw = vr_busy_power(p, de, dt);
			p->learn_busy = busy;
			p->learn_busy_dt = dt;
		}
		/*
		 * The tail is this epoch's, at the power of the last one that
		 * could be measured: an older epoch's tail (a CPU still busy
		 * at its close) is not what lags into the idle time after
		 * this one.
		 */
		p->learn_tail = lost ? 0 : p->fold_tail;
		p->learn_skip = 0;
		return;
	}
	if (!p->learn_skip && dt >= skip) {
		u64 est = vr_idle_est_uw(p), idle_dt = 0, tail;

		if (!est) {	/* the epoch's own power, the tail solved for */
			est = vr_mul_div(de, VR_FJ_PER_J >> VR_EU_SHIFT, dt);
			idle_dt = dt;
		}
		tail = vr_busy_tail(p, est, idle_dt);

		p->learn_skip = skip;
		de = de > tail ? de - tail : 0;
		/*
		 * Before the package settled: the C and the shortest
		 * length known before this stretch; then it goes into the
		 * bins.
		 */
		c = p->settle.c_eu;
		t_min = p->settle.t_min;
		vr_settle_add(&p->settle, de, dt);
		if (dt < t_min)
			return;
		de = de > c ? de - c : 0;
	} else if (p->learn_skip < skip) {
		p->learn_skip += dt;
		return;
	}
	vr_learn_sum(p, de, dt);
}

/*
 * The idle floor @p offers the host's other packages: a complete idle-run
 * estimate, or 0.  Context: close_lock held.
 */
u64 vr_pkg_floor_uw(const struct vr_pkg *p)
{
	return p->learn_static && p->idle_known ? p->idle_uw : 0;
}

/*
 * @uw: the idle floor the host's other packages learned (their mean; 0:
 * none), the static power of a package that has no idle time of its own.
 * Context: close_lock held.
 */
void vr_pkg_set_host_floor(struct vr_pkg *p, u64 uw)
{
	vr_lock_held(&p->close_lock);
	p->host_floor_uw = uw;
	vr_static_resolve(p);
}

/* floor(sqrt(@x)), bit by bit: no floating point, no division. */
u64 vr_isqrt(u64 x)
{
	u64 r = 0, b = 1ULL << 62;

	while (b > x)
		b >>= 2;
	while (b) {
		if (x >= r + b) {
			x -= r + b;
			r = (r >> 1) + b;
		} else {
			r >>= 1;
		}
		b >>= 2;
	}
	return r;
}

static void vr_fit_block_reset(struct vr_fit *f)
{
	f->blk_dt = 0;
	f->blk_busy = 0;
	f->blk_de = 0;
	f->blk_core = 0;
	f->blk_core_ok = false;
}

/*
 * Add a closed epoch with busy time to the fit's open block; a full block
 * becomes a sample of the ring.  O(1): four additions per epoch, and per
 * block three divisions and the update of six running sums.  A lost epoch
 * drops the open block, whose energy is then unknown.  @core_e is the
 * epoch's per-core energy (its busy time's VR_CORE_ENERGY weights), and
 * @core_ok says that it covers every busy ns: a block of such epochs
 * also measures the package's power less its cores' (@ring_r, over
 * @ring_t).
 * @core_corr is what the cores' samples in the epoch measured beyond what
 * the weights had credited (vr_cpu.core_corr): the weights are rates over
 * earlier windows, and a core's counter also counts what its CPU did
 * outside busy time (the idle task's work, its idle power), so without
 * it the blocks would hold the weights' energy, not the counters'.
 */
void vr_fit_epoch(struct vr_pkg *p, u64 de, u64 dt, u64 busy, u64 core_e,
		  s64 core_corr, bool core_ok, bool lost)
{
	struct vr_fit *f = &p->fit;
	u64 u, y, r = 0, t = 0, ou, oy;
	s64 core;

	if (lost) {
		vr_fit_block_reset(f);
		f->core_carry = 0;
		return;
	}
	f->core_carry += core_corr;
	/*
	 * Only epochs with busy time are samples: P_static only matters
	 * there (an epoch with none is all idle whatever it is), and an
	 * all-idle package may sit in a deeper package C-state than a busy
	 * one ever reaches, which would pull the intercept down to that
	 * floor.  Idle runs are learned on their own (vr_learn_static()).
	 */
	if (!busy)
		return;
	if (!f->blk_dt)
		f->blk_core_ok = true;
	f->blk_dt += dt;
	f->blk_busy += busy;
	f->blk_de += de;
	f->blk_core += (s64)core_e + f->core_carry;
	f->core_carry = 0;
	f->blk_core_ok &= core_ok;
	if (f->blk_dt < VR_FIT_BLOCK_NS)
		return;
	u = vr_mul_div(f->blk_busy, 1ULL << VR_FIT_U_SHIFT, f->blk_dt);
	/* eu/ns -> uW is x 10^15 / 2^24, here in 2^VR_FIT_Y_SHIFT uW */
	y = vr_mul_div(f->blk_de, VR_FJ_PER_J >> VR_EU_SHIFT,
		       f->blk_dt << VR_FIT_Y_SHIFT);
	/*
	 * What no core's counter saw.  A sample's correction lands in the
	 * block where the sample is, not where its window's time was, so a
	 * block can hold less core energy than none or more than the
	 * package's: the part outside [0, de] moves on to the next block,
	 * and the blocks' sum stays the counters'.
	 */
	if (f->blk_core_ok) {
		core = f->blk_core < 0 ? 0 : f->blk_core;
		if (core > (s64)f->blk_de)
			core = f->blk_de;
		f->core_carry += f->blk_core - core;
		r = vr_mul_div(f->blk_de - core, VR_FJ_PER_J >> VR_EU_SHIFT,
			       f->blk_dt << VR_FIT_Y_SHIFT);
		/* at least VR_FIT_BLOCK_NS: never 0, the mark of "none" */
		t = vr_mul_div(f->blk_dt, 1, 1000);
		if (t > VR_FIT_T_MAX)
			t = VR_FIT_T_MAX;
	}
	vr_fit_block_reset(f);
	if (u > VR_FIT_U_MAX || y > VR_FIT_Y_MAX)
		return;		/* outside the bounds of the sums */
	if (f->n == VR_FIT_BLOCKS) {
		ou = f->ring_u[f->head];
		oy = f->ring_y[f->head];
		f->su -= ou;
		f->sy -= oy;
		f->suu -= ou * ou;
		f->suy -= ou * oy;
		f->syy -= oy * oy;
		if (f->ring_t[f->head]) {
			f->sr -= (u64)f->ring_r[f->head] * f->ring_t[f->head];
			f->st -= f->ring_t[f->head];
			f->nr--;
		}
	} else {
		f->n++;
	}
	f->ring_u[f->head] = u;
	f->ring_y[f->head] = y;
	/*
	 * r <= y <= VR_FIT_Y_MAX and t <= VR_FIT_T_MAX: u32s, and sr below
	 * 2^(24 + 31 + 7) for the ring's 2^7 blocks.
	 */
	f->ring_r[f->head] = r;
	f->ring_t[f->head] = t;
	if (t) {
		f->sr += r * t;
		f->st += t;
		f->nr++;
	}
	f->head = (f->head + 1) % VR_FIT_BLOCKS;
	f->su += u;
	f->sy += y;
	f->suu += u * u;
	f->suy += u * y;
	f->syy += y * y;
}

/*
 * Least squares of y = P_static + P_dyn x u over the ring, with n times
 * the centered sums (exact integers):
 *   Sxx = n Suu - Su^2, Sxy = n Suy - Su Sy, Syy = n Syy - Sy^2,
 *   P_dyn = Sxy / Sxx, P_static = Sy / n - P_dyn Su / n,
 *   Var(P_static) = SSE / (n - 2) x Suu / Sxx, with
 *   n SSE = Syy - Sxy^2 / Sxx (SSE: sum of the squared residuals).
 * Well conditioned: at least VR_FIT_MIN_BLOCKS samples, a standard
 * deviation of u of at least VR_FIT_MIN_SPREAD, a positive slope and
 * intercept, and a standard error of P_static within VR_FIT_MAX_SD_UW or
 * 1/VR_FIT_MAX_SD_DIV of it.  Every product stays below 2^64 by the
 * bounds of struct vr_fit; vr_mul_div() saturates where a ratio may not
 * fit, which only makes the uncertainty too large to use.
 */
static bool vr_fit_solve(struct vr_fit *f)
{
	u64 n = f->n, sxx, sxy, syy, a, b, mean, term, sse, var;

	f->blocks = n;
	f->static_uw = 0;
	f->sd_uw = 0;
	f->dyn_uw = 0;
	if (n < VR_FIT_MIN_BLOCKS)
		return false;
	sxx = n * f->suu - f->su * f->su;
	if (sxx < (u64)VR_FIT_MIN_SPREAD * VR_FIT_MIN_SPREAD * n * n)
		return false;
	a = n * f->suy;
	b = f->su * f->sy;
	if (a <= b)
		return false;		/* no positive dynamic power */
	sxy = a - b;
	syy = n * f->syy - f->sy * f->sy;
	f->dyn_uw = vr_mul_div(sxy, 1ULL << (VR_FIT_U_SHIFT + VR_FIT_Y_SHIFT),
			       sxx);
	mean = vr_mul_div(f->sy, 1ULL << VR_FIT_Y_SHIFT, n);
	term = vr_mul_div(sxy, f->su << VR_FIT_Y_SHIFT, n * sxx);
	if (term >= mean)
		return false;		/* no positive intercept */
	f->static_uw = mean - term;
	a = vr_mul_div(sxy, sxy, sxx);
	sse = syy > a ? syy - a : 0;
	var = vr_mul_div(sse, f->suu, sxx);
	var = vr_mul_div(var, 1ULL << (2 * VR_FIT_Y_SHIFT), n * (n - 2));
	f->sd_uw = vr_isqrt(var);
	return f->sd_uw <= VR_FIT_MAX_SD_UW ||
	       f->sd_uw * VR_FIT_MAX_SD_DIV <= f->static_uw;
}

/*
 * What p_static_uw was estimated from (VMRAPL_STATIC_IN_*): each input
 * that went into the value in use.  The idle-run floor is settled idle
 * (less what the stretches hold before the package settles); the
 * package less its cores is the per-core counters' residual or PP0's,
 * whichever fed the blocks; a fit, a host floor, a parameter, each its
 * own.  0: nothing (unknown, 0 W).
 */
static u32 vr_static_inputs(const struct vr_pkg *p)
{
	switch (p->static_origin) {
	case VR_STATIC_PARAM:
		return VMRAPL_STATIC_IN_PARAM;
	case VR_STATIC_MODEL:
		return VMRAPL_STATIC_IN_MODEL;
	case VR_STATIC_LEARNED:
		return VMRAPL_STATIC_IN_SETTLED_IDLE;
	case VR_STATIC_HOST:
		return VMRAPL_STATIC_IN_HOST_FLOOR;
	case VR_STATIC_CORE:
		return p->core.kind == VR_CORE_ENERGY ?
		       VMRAPL_STATIC_IN_CORE_RESIDUAL :
		       VMRAPL_STATIC_IN_PP0_RESIDUAL;
	case VR_STATIC_FIT:
		return VMRAPL_STATIC_IN_FIT;
	default:
		return 0;
	}
}

/* Context: close_lock held. */
void vr_pkg_static_report(const struct vr_pkg *p, struct vr_static_report *r)
{
	const struct vr_fit *f = &p->fit;

	r->p_static_uw = p->p_static_uw;
	r->fit_uw = f->static_uw;
	r->fit_sd_uw = f->sd_uw;
	r->fit_dyn_uw = f->dyn_uw;
	r->fit_good_uw = f->good_uw;
	r->idle_uw = p->idle_uw;
	r->core_uw = f->flags & VR_FIT_CORE ? f->core_uw : 0;
	r->core_blocks = f->core_blocks;
	r->host_floor_uw = p->host_floor_uw;
	r->fit_blocks = f->blocks;
	r->fit_flags = f->flags;
	r->origin = p->static_origin;
	r->idle_known = p->idle_known;
	r->idle_prov = p->idle_prov;
	r->inputs = vr_static_inputs(p);
}

/**
 * vr_pkg_fit_update() - solve the online fit, apply the precedence
 * @p: the package.
 *
 * Context: close_lock held; the package timer, never a scheduler probe.
 */
void vr_pkg_fit_update(struct vr_pkg *p)
{
	struct vr_fit *f = &p->fit;

	vr_lock_held(&p->close_lock);
	f->solves++;
	if (f->nr >= VR_FIT_MIN_BLOCKS) {
		f->core_uw = vr_mul_div(f->sr, 1ULL << VR_FIT_Y_SHIFT, f->st);
		f->core_blocks = f->nr;
		f->flags |= VR_FIT_CORE;
	}
	if (vr_fit_solve(f)) {
		f->flags |= VR_FIT_OK | VR_FIT_HAVE;
		f->good_uw = f->static_uw;
	} else {
		f->flags &= ~VR_FIT_OK;
	}
	vr_static_resolve(p);
}
