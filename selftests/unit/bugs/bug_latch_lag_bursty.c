// SPDX-License-Identifier: GPL-2.0
/*
 * KNOWN BUG (expected to fail until kmod/vr_core.c is fixed):
 * a lone bursty vCPU is under-charged by 26.6 % with 1 ms epochs on a
 * RAPL counter that the hardware updates every ~1 ms, even with the lag
 * share of 8c8a520.
 *
 * A vCPU runs 2 ms every 20 ms at 12 W alone on a 40 W package (16 CPUs,
 * occupied policy): expected 500 x 2 ms x (12 + 40/16) W = 14.5 J over
 * 10 s; charged 10.65 J.  Per close (a private copy of vr_core.c printing
 * vr_split_policy()'s values), of the 12.02 J of dynamic energy the core
 * saw: 2.65 J went to the vCPU in its busy epochs, 1.57 J as the lag
 * share of the next busy epoch, 3.63 J as idle tails (idle epochs while
 * the lag list is kept), and 4.18 J to idle, in 597 idle epochs that
 * closed more than 2 ms after the burst's last busy close, when the list
 * was already cleared.  That 4.18 J (minus 0.30 J more static than due,
 * see below) is the whole deficit.
 *
 * Why so late: the static part of an epoch is P_static x dt (+ debt), as
 * if the counter were current, but it lags by 0-1 step.  An epoch of
 * 1.0-1.6 ms that sees one ~0.98 ms latch reads less than P_static x dt,
 * so the static debt carries the counter's lag (up to P_static x 1 step,
 * 39 mJ at 40 W), and a burst's 24 mJ of dynamic energy is first spent
 * repaying it: dE exceeds P_static x dt + debt only at a read whose lag is
 * small, often 3-8 ms after the burst.  (The debt repaid inside busy
 * epochs is also split over their busy time, +0.30 J of static.)
 *
 * Expected: within 2 % of the truth.  A fix, tried on a private copy:
 * in vr_drain(), keep the lag list across idle closes while the static
 * debt is non-zero (the counter has not caught up yet):
 *
 *	if (busy || !keep || !p->lag_ns ||
 *	    (now - p->prev_t > 2 * VR_HW_STEP_NS && !p->static_debt))
 *		vr_prev_clear(p);
 *
 * gives -4.6 % here (what is left: dynamic energy that surfaces after the
 * debt first returns to 0) and, in bench/sim quick mode, bursty -3.84 %
 * -> -2.42 % net (60 s mean error 7.03 % -> 6.63 %), the other workloads
 * unchanged.
 */
#include "vt_host.h"

static double run(u64 latch, u64 jitter)
{
	static struct bh h;
	u64 next[BH_NCPU], now, burst_end = 0;
	bool on = false;
	int i, cpu;

	bh_init(&h, 0, 14, 32, latch, jitter, VT_MS, 500000000ULL,
		40000000ULL, VR_STATIC_PARAM, VR_STATIC_OCCUPIED);
	h.vcpu_uw = 12000000ULL;
	for (i = 0; i < BH_NCPU; i++)
		next[i] = i ? vt_range(1000, 4000000) : 5 * VT_MS;
	for (;;) {
		cpu = 0;
		for (i = 1; i < BH_NCPU; i++)
			if (next[i] < next[cpu])
				cpu = i;
		now = next[cpu];
		if (now >= 10 * VT_SEC + 5 * VT_MS)
			break;
		if (cpu) {
			bh_event(&h, cpu, now, false);
			next[cpu] = now + vt_range(500000, 4000000);
			continue;
		}
		/* CPU 0: the vCPU runs 2 ms of every 20 ms */
		on = !on;
		bh_event(&h, 0, now, on);
		if (on)
			burst_end = now + 2 * VT_MS;
		next[0] = on ? burst_end : now + 18 * VT_MS;
	}
	/* a reader closes what is stale */
	bh_close(&h, now + 2 * VT_MS);
	return vt_eu_j(h.vcpu.energy[0]);
}

int main(void)
{
	/* 500 bursts of 2 ms at 12 W + 40 W / 16 */
	const double exp_j = 500 * 0.002 * (12.0 + 40.0 / 16);
	double j;

	vt_start("KNOWN BUG: bursty vCPU under-charged by the counter's "
		 "update lag");
	vt_seed(4);
	j = run(976563, 20000);
	vt_near(j, exp_j, exp_j * 0.02, "2 ms / 18 ms bursts at 12 W, ~1 ms "
		"latch: charged within 2%% (got %.1f%%)",
		100 * (j - exp_j) / exp_j);
	j = run(1000, 0);
	vt_near(j, exp_j, exp_j * 0.02, "control: same with a 1 us latch "
		"(got %.1f%%)", 100 * (j - exp_j) / exp_j);
	return vt_done();
}
