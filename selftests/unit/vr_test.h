/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers of the userspace unit tests of the accounting core:
 *
 *  - TAP 13 output: vt_ok() / vt_eq() print "ok N name" or "not ok N name"
 *    plus a "# expected ... got ..." diagnostic; vt_done() prints the plan
 *    ("1..N", at the end, which TAP 13 allows) and returns the exit code.
 *  - A deterministic PRNG (splitmix64).  The seed is printed; VR_SEED in
 *    the environment overrides it, so a failing run can be replayed.
 *  - A simulated RAPL counter (struct vt_rapl): the truth integrates a
 *    piecewise-constant power exactly; the hardware latches the energy
 *    every ~1 ms (optionally jittered), quantized to the energy status
 *    unit, and the register shows the low @width bits.  Resets (a backward
 *    jump) can be injected.
 *
 * Header-only (static inline), so that each test_*.c stays one program.
 */
#ifndef _VR_TEST_H
#define _VR_TEST_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vr_core.h"

/* ---------------------------------------------------------------- TAP */

static int vt_nr;
static int vt_failed;

static inline void vt_diag(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static inline void vt_diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
}

static inline void vt_start(const char *what)
{
	printf("TAP version 13\n");
	if (what)
		vt_diag("%s", what);
	fflush(stdout);
}

static inline int vt_report(int ok, const char *name)
{
	printf("%sok %d %s\n", ok ? "" : "not ", ++vt_nr, name);
	fflush(stdout);
	if (!ok)
		vt_failed++;
	return ok;
}

static inline int vt_ok(int ok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline int vt_ok(int ok, const char *fmt, ...)
{
	char name[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	return vt_report(ok, name);
}

/* got == expected, with the diagnostic on failure. */
static inline int vt_eq(u64 got, u64 exp, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static inline int vt_eq(u64 got, u64 exp, const char *fmt, ...)
{
	char name[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	if (!vt_report(got == exp, name)) {
		vt_diag("expected %llu got %llu", (unsigned long long)exp,
			(unsigned long long)got);
		return 0;
	}
	return 1;
}

/* |got - exp| <= tol, doubles. */
static inline int vt_near(double got, double exp, double tol,
			  const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static inline int vt_near(double got, double exp, double tol,
			  const char *fmt, ...)
{
	char name[256];
	va_list ap;
	double d = got - exp;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	if (!vt_report(d <= tol && d >= -tol, name)) {
		vt_diag("expected %.9g (+-%.3g) got %.9g", exp, tol, got);
		return 0;
	}
	return 1;
}

/* End of the program: the plan, and the exit code. */
static inline int vt_done(void)
{
	printf("1..%d\n", vt_nr);
	if (vt_failed)
		vt_diag("%d of %d failed", vt_failed, vt_nr);
	fflush(stdout);
	return vt_failed ? 1 : 0;
}

/* --------------------------------------------------------------- PRNG */

static u64 vt_rng_state;

static inline u64 vt_rand(void)
{
	u64 z = (vt_rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0 (multiply-shift; bias is irrelevant here). */
static inline u64 vt_below(u64 n)
{
	return (u64)(((unsigned __int128)vt_rand() * n) >> 64);
}

/* Uniform in [lo, hi]. */
static inline u64 vt_range(u64 lo, u64 hi)
{
	return lo + vt_below(hi - lo + 1);
}

static inline double vt_unit(void)
{
	return (double)(vt_rand() >> 11) / (double)(1ULL << 53);
}

/* Seeds the PRNG from VR_SEED or @dflt, and prints the seed. */
static inline u64 vt_seed(u64 dflt)
{
	const char *s = getenv("VR_SEED");
	u64 seed = dflt;

	if (s && *s)
		seed = strtoull(s, NULL, 0);
	vt_rng_state = seed;
	vt_diag("seed %llu (set VR_SEED to replay)", (unsigned long long)seed);
	return seed;
}

/* ------------------------------------------------ simulated RAPL counter */

typedef unsigned __int128 vt_u128;
typedef __int128 vt_s128;

#define VT_FJ_PER_J	1000000000000000ULL	/* uW * ns */
#define VT_MS		1000000ULL
#define VT_SEC		1000000000ULL

struct vt_rapl {
	u32 esu;
	u32 width;
	u64 step_ns;		/* hardware update interval */
	u64 jitter_ns;		/* each interval is step +- jitter */
	u64 jseed;		/* jitter stream: equal seeds latch together */
	u64 nupd;		/* hardware updates so far */
	u64 power_uw;		/* current power */
	u64 t;			/* truth integrated up to here */
	u64 next_upd;		/* next hardware update */
	vt_u128 truth_fj;	/* exact energy up to @t */
	vt_u128 latch_fj;	/* truth at the last hardware update */
	vt_s128 offset;		/* register = offset + units(latch) */
	u64 resets;
};

static inline u64 vt_mask(u32 width)
{
	return width >= 64 ? ~0ULL : (1ULL << width) - 1;
}

/* Energy in source units, floor. */
static inline vt_u128 vt_fj_to_units(vt_u128 fj, u32 esu)
{
	return (fj << esu) / VT_FJ_PER_J;
}

static inline void vt_rapl_init(struct vt_rapl *r, u32 esu, u32 width,
				u64 step_ns, u64 jitter_ns, u64 start_units,
				u64 t0)
{
	memset(r, 0, sizeof(*r));
	r->esu = esu;
	r->width = width;
	r->step_ns = step_ns;
	r->jitter_ns = jitter_ns;
	r->jseed = vt_rand();
	r->t = t0;
	r->next_upd = t0 + step_ns;
	r->offset = start_units;
}

/* A stateless hash, so that the jitter does not consume the PRNG. */
static inline u64 vt_hash(u64 x)
{
	x = (x ^ (x >> 33)) * 0xff51afd7ed558ccdULL;
	x = (x ^ (x >> 33)) * 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

/*
 * The n-th update interval.  Domains of one package are latched by the
 * same firmware tick: give them the same @jseed (vt_rapl_follow()).
 */
static inline u64 vt_rapl_interval(struct vt_rapl *r)
{
	u64 h = vt_hash(r->jseed + r->nupd++);

	if (!r->jitter_ns)
		return r->step_ns;
	return r->step_ns - r->jitter_ns + h % (2 * r->jitter_ns + 1);
}

/* @r latches at the same instants as @leader (same step and jitter). */
static inline void vt_rapl_follow(struct vt_rapl *r,
				  const struct vt_rapl *leader)
{
	r->step_ns = leader->step_ns;
	r->jitter_ns = leader->jitter_ns;
	r->jseed = leader->jseed;
	r->nupd = leader->nupd;
	r->next_upd = leader->next_upd;
}

/* Integrate the current power up to @now, latching at hardware updates. */
static inline void vt_rapl_advance(struct vt_rapl *r, u64 now)
{
	if (now <= r->t)
		return;
	while (r->next_upd <= now) {
		r->truth_fj += (vt_u128)r->power_uw * (r->next_upd - r->t);
		r->t = r->next_upd;
		r->latch_fj = r->truth_fj;
		r->next_upd += vt_rapl_interval(r);
	}
	r->truth_fj += (vt_u128)r->power_uw * (now - r->t);
	r->t = now;
}

static inline void vt_rapl_set_power(struct vt_rapl *r, u64 now, u64 uw)
{
	vt_rapl_advance(r, now);
	r->power_uw = uw;
}

/* Unbounded register value (before the width mask), in units. */
static inline vt_s128 vt_rapl_units(const struct vt_rapl *r)
{
	return r->offset + (vt_s128)vt_fj_to_units(r->latch_fj, r->esu);
}

/* What RDMSR returns at @now. */
static inline u64 vt_rapl_read(struct vt_rapl *r, u64 now)
{
	vt_rapl_advance(r, now);
	return (u64)vt_rapl_units(r) & vt_mask(r->width);
}

/* The register restarts from @to (a reset or resume), at the last latch. */
static inline void vt_rapl_reset(struct vt_rapl *r, u64 to)
{
	r->offset = (vt_s128)to -
		    (vt_s128)vt_fj_to_units(r->latch_fj, r->esu);
	r->resets++;
}

/* eu <-> joules, for reporting. */
static inline double vt_eu_j(u64 eu)
{
	return (double)eu / (double)(1ULL << VR_EU_SHIFT);
}

static inline double vt_fj_j(vt_u128 fj)
{
	return (double)fj / 1e15;
}

/* Checks tracked + host + idle + lost == sampled for every domain. */
static inline int vt_conserved(const struct vr_pkg_stats *st, unsigned int nd)
{
	unsigned int d;

	for (d = 0; d < nd; d++)
		if (st[d].tracked + st[d].host + st[d].idle + st[d].lost !=
		    st[d].sampled)
			return 0;
	return 1;
}

#endif /* _VR_TEST_H */
