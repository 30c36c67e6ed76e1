/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers of the userspace unit tests of the accounting core:
 *
 *  - TAP 13 output: vt_ok() / vt_eq() print "ok N name" or "not ok N name"
 *    plus a "# expected ... got ..." diagnostic; vt_done() prints the plan
 *    ("1..N", at the end, which TAP 13 allows) and returns the exit code.
 *  - A deterministic PRNG (splitmix64).  The seed is printed; VR_SEED in
 *    the environment overrides it, so a failing run can be replayed.
 *  - The simulated RAPL counter of kmod/user/vr_rapl_model.h (shared with
 *    bench/sim), its jitter seeded from the PRNG: vt_rapl_init().
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
#include "user/vr_rapl_model.h"

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

static struct vrm_rng vt_rng;

static inline u64 vt_rand(void)
{
	return vrm_rand(&vt_rng);
}

/* Uniform in [0, n), n > 0. */
static inline u64 vt_below(u64 n)
{
	return vrm_below(&vt_rng, n);
}

/* Uniform in [lo, hi]. */
static inline u64 vt_range(u64 lo, u64 hi)
{
	return lo + vt_below(hi - lo + 1);
}

static inline double vt_unit(void)
{
	return vrm_unit(&vt_rng);
}

/* Seeds the PRNG from VR_SEED or @dflt, and prints the seed. */
static inline u64 vt_seed(u64 dflt)
{
	const char *s = getenv("VR_SEED");
	u64 seed = dflt;

	if (s && *s)
		seed = strtoull(s, NULL, 0);
	vt_rng.s = seed;
	vt_diag("seed %llu (set VR_SEED to replay)", (unsigned long long)seed);
	return seed;
}

/* ------------------------------------------------ simulated RAPL counter */

typedef __uint128_t vt_u128;
typedef __int128_t vt_s128;

#define VT_FJ_PER_J	VRM_FJ_PER_J	/* uW * ns */
#define VT_MS		1000000ULL
#define VT_SEC		1000000000ULL

/*
 * A counter of kmod/user/vr_rapl_model.h whose jitter comes from its own
 * stream, seeded from the PRNG (one draw): counters of one test do not
 * consume each other's draws, nor the test's.
 */
static inline void vt_rapl_init(struct vrm_rapl *r, u32 esu, u32 width,
				u64 step_ns, u64 jitter_ns, u64 start_units,
				u64 t0)
{
	vrm_init(r, esu, width, step_ns, jitter_ns, start_units, t0);
	vrm_seed_jitter(r, vt_rand());
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
