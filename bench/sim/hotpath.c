// SPDX-License-Identifier: GPL-2.0
/*
 * hotpath: cost of the accounting core's entry points, per event.
 *
 * Each event type runs in its own non-inlined function, called N times:
 *   ev_untracked   a switch between untracked tasks: only the
 *                  vr_cpu_event_needed() check, which is false;
 *   ev_switch_in   host -> vCPU on a busy CPU (vr_cpu_event);
 *   ev_switch_out  vCPU -> host (vr_cpu_event, the vCPU's time accrued);
 *   ev_close       an epoch close of an 8-CPU package with 8 vCPU accounts
 *                  pending: stale check, then vr_pkg_try_close() (trylock,
 *                  fold, the counter read through its callback,
 *                  commit, unlock).
 * Under valgrind --tool=callgrind, the inclusive instruction count of each
 * function divided by N is instructions per event (callgrind.sh does
 * that).  Without valgrind, ns per event from a tight loop of each are
 * printed as a secondary number (timings vary; nothing asserts on them).
 *
 *   hotpath [--quick] [--callgrind]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vr_core.h"

#define NCPU	8
#define NOINLINE __attribute__((noinline, noclone))

static struct vr_pkg pkg;
static struct vr_cpu cpu[NCPU];
static struct vr_cpu *cpus[NCPU];
static struct vr_acct acct[NCPU];
static u64 counter = 12345;
static u64 now = 1;

/* The RDMSR of the source, as the core's vr_read_fn. */
static NOINLINE u32 read_counter(void *ctx, u64 *raw, u64 dt, u64 busy)
{
	(void)ctx;
	(void)dt;
	(void)busy;
	counter += 700;		/* ~43 mJ a millisecond at ESU 14 */
	raw[VR_DOM_PKG] = counter & 0xffffffffULL;
	return 1U << VR_DOM_PKG;
}

NOINLINE void ev_untracked(struct vr_cpu *c, u64 t)
{
	if (vr_cpu_event_needed(c, true, NULL))
		vr_cpu_event(c, t, true, NULL);
}

NOINLINE void ev_switch_in(struct vr_cpu *c, u64 t, struct vr_acct *a)
{
	if (vr_cpu_event_needed(c, true, a))
		vr_cpu_event(c, t, true, a);
}

NOINLINE void ev_switch_out(struct vr_cpu *c, u64 t)
{
	if (vr_cpu_event_needed(c, true, NULL))
		vr_cpu_event(c, t, true, NULL);
}

NOINLINE void ev_close(struct vr_pkg *p, u64 t)
{
	if (vr_pkg_stale(p, t))
		vr_pkg_try_close(p, t, read_counter, NULL);
}

static void setup(void)
{
	int i;

	memset(&pkg, 0, sizeof(pkg));
	memset(cpu, 0, sizeof(cpu));
	memset(acct, 0, sizeof(acct));
	for (i = 0; i < NCPU; i++)
		cpus[i] = &cpu[i];
	vr_pkg_init(&pkg, cpus, NCPU, 1000000, 500000000ULL);
	vr_pkg_set_domain(&pkg, VR_DOM_PKG, 14, 32);
	vr_pkg_set_static(&pkg, 40000000, VR_STATIC_PARAM);
	pkg.policy = VR_STATIC_OCCUPIED;
	for (i = 0; i < NCPU; i++) {
		vr_cpu_init(&cpu[i], &pkg);
		vr_lock(&pkg.close_lock);
		vr_cpu_online(&cpu[i], now, true);	/* busy, host task */
		vr_unlock(&pkg.close_lock);
	}
	now += 1000000;
	ev_close(&pkg, now);		/* the baseline */
}

static double ns_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* The four loops; returns ns per event of each in @ns (may be NULL). */
static void run(long n, double *ns)
{
	double t0;
	long i;
	int k;

	setup();
	/* untracked: CPU 0 runs host tasks only */
	t0 = ns_now();
	for (i = 0; i < n; i++)
		ev_untracked(&cpu[0], now += 1000);
	if (ns)
		ns[0] = (ns_now() - t0) / n;

	/* vCPU in / out pairs on CPU 1, no close in between */
	t0 = ns_now();
	for (i = 0; i < n; i++) {
		ev_switch_in(&cpu[1], now += 1000, &acct[1]);
		ev_switch_out(&cpu[1], now += 1000);
	}
	if (ns)
		ns[1] = ns[2] = (ns_now() - t0) / n / 2;

	/* closes: every CPU ran its vCPU in the epoch (8 accounts pending) */
	/*
	 * Each close is timed on its own, clock reads included: taking an
	 * estimate of the clock's cost off made the figure negative on a
	 * noisy machine.
	 */
	if (ns)
		ns[3] = 0;
	for (i = 0; i < n / 16 + 1; i++) {
		for (k = 0; k < NCPU; k++) {
			ev_switch_in(&cpu[k], now += 1000, &acct[k]);
			ev_switch_out(&cpu[k], now += 1000);
		}
		now += 1000000;
		t0 = ns_now();
		ev_close(&pkg, now);
		if (ns)
			ns[3] += ns_now() - t0;
	}
	if (ns)
		ns[3] /= n / 16 + 1;
}

int main(int argc, char **argv)
{
	static const char *const name[4] = {
		"untracked switch (needed() false)", "vCPU switch in",
		"vCPU switch out", "epoch close, 8 CPUs (fold + commit)"
	};
	bool quick = false, cg = false;
	double ns[4], best[4] = { 1e30, 1e30, 1e30, 1e30 };
	struct vr_pkg_stats st;
	long n;
	int i, r;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick"))
			quick = true;
		else if (!strcmp(argv[i], "--callgrind"))
			cg = true;
		else {
			fprintf(stderr, "usage: %s [--quick] [--callgrind]\n",
				argv[0]);
			return 2;
		}
	}
	if (cg) {
		/* callgrind.sh divides by these */
		n = 160000;
		run(n, NULL);
		printf("calls ev_untracked %ld\ncalls ev_switch_in %ld\n"
		       "calls ev_switch_out %ld\ncalls ev_close %ld\n", n,
		       n + (n / 16 + 1) * NCPU, n + (n / 16 + 1) * NCPU,
		       n / 16 + 2);	/* + the baseline close of setup() */
	} else {
		n = quick ? 200000 : 4000000;
		for (r = 0; r < (quick ? 2 : 5); r++) {
			run(n, ns);
			for (i = 0; i < 4; i++)
				if (ns[i] < best[i])
					best[i] = ns[i];
		}
		printf("| event | ns/event (best of %d, %ld iterations) |\n"
		       "|---|---:|\n", quick ? 2 : 5, n);
		for (i = 0; i < 4; i++)
			printf("| %s | %.1f |\n", name[i], best[i]);
	}
	/* the run was sound: conservation held */
	vr_pkg_read_stats(&pkg, &st, 1);
	if (st.tracked + st.host + st.idle + st.lost != st.sampled ||
	    !st.tracked) {
		fprintf(stderr, "hotpath: conservation broken\n");
		return 1;
	}
	return 0;
}
