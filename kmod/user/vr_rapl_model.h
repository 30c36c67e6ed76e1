/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A simulated RAPL energy counter, for userspace only: the unit tests
 * (selftests/unit/) and the simulator (bench/sim/) both drive the core
 * with it.  Not part of the module.
 *
 * The model.  A piecewise-constant power (set with vrm_set_power() at the
 * instants it changes) is integrated exactly, in fJ (uW x ns).  The
 * hardware latches that energy at its update instants only: the first
 * one step after the start, each next one step - jitter + a uniform draw
 * in [0, 2 x jitter] later (about 1 ms on real parts).  A read shows the
 * last latched energy, floored to the energy status unit (2^-esu J), plus
 * a start offset, in the low @width bits: it wraps.  A reset or resume
 * (the register restarting from some value) can be injected.
 *
 * The jitter draws come from a splitmix64 stream (struct vrm_rng): the
 * counter's own (vrm_seed_jitter()), or one shared with the caller's other
 * random draws (vrm_use_rng(); the simulator does this, so its schedule
 * and its counters draw from one sequence).  One draw is made per update,
 * in time order, even when the jitter is 0.
 *
 * Header-only (static inline): each test stays one program.
 */
#ifndef _VR_RAPL_MODEL_H
#define _VR_RAPL_MODEL_H

#include <math.h>
#include <string.h>

#include "vr_shim.h"

#define VRM_FJ_PER_J	1000000000000000ULL	/* uW * ns per J */

/* ------------------------------------------------- splitmix64 stream */

struct vrm_rng {
	u64 s;
};

static inline u64 vrm_rand(struct vrm_rng *g)
{
	u64 z = (g->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, n) by multiply-shift (bias is irrelevant here); draws once. */
static inline u64 vrm_below(struct vrm_rng *g, u64 n)
{
	return (u64)(((__uint128_t)vrm_rand(g) * n) >> 64);
}

/* Uniform in [0, 1), 53 bits. */
static inline double vrm_unit(struct vrm_rng *g)
{
	return (double)(vrm_rand(g) >> 11) / (double)(1ULL << 53);
}

/* ------------------------------------------------------------ counter */

/**
 * struct vrm_rapl - one simulated counter (one domain of one package)
 * @esu: unit, 1/2^esu J.
 * @width: register bits, 1..64.
 * @step_ns: hardware update interval.
 * @jitter_ns: each interval is @step_ns +- @jitter_ns, uniform.
 * @rng: stream of the jitter draws; NULL: @own.
 * @own: the counter's own stream.
 * @power_uw: current power.
 * @t: the truth is integrated up to here.
 * @next_upd: next hardware update.
 * @truth_fj: exact energy up to @t.
 * @latch_fj: the truth at the last hardware update.
 * @offset: register = @offset + units(@latch_fj), before the mask.
 * @resets: injected resets.
 */
struct vrm_rapl {
	u32 esu;
	u32 width;
	u64 step_ns;
	u64 jitter_ns;
	struct vrm_rng *rng;
	struct vrm_rng own;
	u64 power_uw;
	u64 t;
	u64 next_upd;
	__uint128_t truth_fj;
	__uint128_t latch_fj;
	__int128_t offset;
	u64 resets;
};

static inline u64 vrm_mask(u32 width)
{
	return width >= 64 ? ~0ULL : (1ULL << width) - 1;
}

/* Energy in source units, floor. */
static inline __uint128_t vrm_fj_to_units(__uint128_t fj, u32 esu)
{
	return (fj << esu) / VRM_FJ_PER_J;
}

/* A counter at 0 W from @t0, showing @start_units; own stream, seed 0. */
static inline void vrm_init(struct vrm_rapl *r, u32 esu, u32 width,
			    u64 step_ns, u64 jitter_ns, u64 start_units,
			    u64 t0)
{
	memset(r, 0, sizeof(*r));
	r->esu = esu;
	r->width = width;
	r->step_ns = step_ns;
	r->jitter_ns = jitter_ns;
	r->t = t0;
	r->next_upd = t0 + step_ns;
	r->offset = start_units;
}

static inline void vrm_seed_jitter(struct vrm_rapl *r, u64 seed)
{
	r->rng = NULL;
	r->own.s = seed;
}

static inline void vrm_use_rng(struct vrm_rapl *r, struct vrm_rng *g)
{
	r->rng = g;
}

/*
 * @r latches at the same instants as @leader from now on: the domains of
 * one package are latched by one firmware tick.  @leader must draw from
 * its own stream, and both must be advanced over the same updates.
 */
static inline void vrm_follow(struct vrm_rapl *r,
			      const struct vrm_rapl *leader)
{
	r->step_ns = leader->step_ns;
	r->jitter_ns = leader->jitter_ns;
	r->rng = NULL;
	r->own = leader->own;
	r->next_upd = leader->next_upd;
}

/* Integrate the current power up to @now, latching at hardware updates. */
static inline void vrm_advance(struct vrm_rapl *r, u64 now)
{
	struct vrm_rng *g = r->rng ? r->rng : &r->own;

	if (now <= r->t)
		return;
	while (r->next_upd <= now) {
		r->truth_fj += (__uint128_t)r->power_uw * (r->next_upd - r->t);
		r->t = r->next_upd;
		r->latch_fj = r->truth_fj;
		r->next_upd += r->step_ns - r->jitter_ns +
			       vrm_below(g, 2 * r->jitter_ns + 1);
	}
	r->truth_fj += (__uint128_t)r->power_uw * (now - r->t);
	r->t = now;
}

/* From @now on, the power is @uw. */
static inline void vrm_set_power(struct vrm_rapl *r, u64 now, u64 uw)
{
	vrm_advance(r, now);
	r->power_uw = uw;
}

/* Unbounded register value (before the width mask), in units. */
static inline __int128_t vrm_units(const struct vrm_rapl *r)
{
	return r->offset + (__int128_t)vrm_fj_to_units(r->latch_fj, r->esu);
}

/* What RDMSR returns at @now. */
static inline u64 vrm_read(struct vrm_rapl *r, u64 now)
{
	vrm_advance(r, now);
	return (u64)vrm_units(r) & vrm_mask(r->width);
}

/* The register restarts from @to (a reset or resume), at the last latch. */
static inline void vrm_reset(struct vrm_rapl *r, u64 to)
{
	r->offset = (__int128_t)to -
		    (__int128_t)vrm_fj_to_units(r->latch_fj, r->esu);
	r->resets++;
}

/* Exact energy up to @now, J (the truth, not latched). */
static inline double vrm_truth_j(struct vrm_rapl *r, u64 now)
{
	vrm_advance(r, now);
	return (double)r->truth_fj / 1e15;
}

/* @u register units in J. */
static inline double vrm_units_j(const struct vrm_rapl *r, u64 u)
{
	return ldexp((double)u, -(int)r->esu);
}

/* Units in the register's range (2^width), for width < 64. */
static inline u64 vrm_range_units(const struct vrm_rapl *r)
{
	return 1ULL << r->width;
}

#endif /* _VR_RAPL_MODEL_H */
