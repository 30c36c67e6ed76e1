// SPDX-License-Identifier: GPL-2.0
/*
 * KNOWN LIMITATION (kept failing on purpose until it is within 2 %):
 * a bursty vCPU is under-charged with 1 ms epochs on a RAPL counter that
 * the hardware updates every ~1 ms.
 *
 * An epoch's busy time covers [t_last, now), but the counter read at
 * "now" shows the energy up to its last hardware update, on average half
 * a millisecond earlier, so the tail of every burst lands in later epochs.
 * The core gives a lag share of each epoch's dynamic energy to the
 * previous busy epoch's accounts, and keeps that list through idle epochs
 * within 2 ms or while static debt is being repaid (vr_lag_give()).  This
 * took a vCPU running 2 ms every 20 ms at 12 W alone on its package from
 * -52 % to -3.6 % below; the simulator's bursty workload is at 1.95 % mean
 * error.  Expected: within 2 % of the truth (14.5 J over 10 s).
 *
 * Where the rest goes (a trace of the closes, December 4): 0.89 J of the
 * 12.0 J of dynamic energy is given in closes where the vCPU gets nothing,
 * that is to idle.  The closes come 1 to 1.3 ms apart and most see one
 * counter step, so an epoch reads less than P_static x dt plus the static
 * debt carried in, and the static part takes all of it: the three closes
 * over the burst of [5005, 5007) ms read one step each (at 40.6, 50.1 and
 * 49.4 mJ, the burst's power in the last two) and split no dynamic energy.
 * The burst's 24 mJ shows up when later idle epochs see two steps: 16.8
 * mJ at the 5012.2 ms close (to the vCPU: the list is kept while the debt
 * is repaid) and 7.8 mJ at the 5018.9 ms one (to idle: the list was
 * dropped).  The lag share's rule does not reach it.  Keeping P_static x
 * lag_ns of debt after busy epochs (the static energy a read misses on
 * average) was tried: -0.5 to -1.3 % here over seeds 1-7, but the
 * simulator's bursty workload went from 1.95 to 4.26 %; keeping it after
 * every epoch, or tracking it signed over idle epochs, read +2.0 to
 * +2.7 % here (seeds 1, 3, 4 and 5).  None was kept.
 */
#include "vt_host.h"

/* CPU 0: the vCPU runs 2 ms of every 20 ms. */
static u64 burst_event(struct bh *h, u64 now, void *ctx)
{
	bool *on = ctx;

	*on = !*on;
	bh_event(h, 0, now, *on);
	return now + (*on ? 2 : 18) * VT_MS;
}

static double run(u64 latch, u64 jitter)
{
	static struct bh h;
	bool on = false;
	u64 now;

	bh_init(&h, 0, 14, 32, latch, jitter, VT_MS, 500000000ULL,
		40000000ULL, VR_STATIC_PARAM, VR_STATIC_OCCUPIED);
	h.vcpu_uw = 12000000ULL;
	now = bh_drive(&h, 0, 10 * VT_SEC + 5 * VT_MS, 5 * VT_MS,
		       burst_event, &on);
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
