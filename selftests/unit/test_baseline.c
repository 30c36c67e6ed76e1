// SPDX-License-Identifier: GPL-2.0
/*
 * Regression test (was bugs/bug_baseline_static_debt.c, fixed in 8c8a520):
 * a baseline close (no previous sample) splits nothing and owes nothing.
 *
 * vr_pkg_init() takes no time, so p->t_last == 0.  The first
 * vr_pkg_close_commit() at uptime T has dt = T and only records the
 * baseline.  It used to run the static split anyway, with de = 0: want =
 * P_static x T, so the static debt went to its cap and the following
 * epochs classed their energy as static until it was paid (with
 * P_static = 40 W and the 10 ms cap, 0.4 J misfiled, ~1 % of the first
 * 5 s; with the earlier 1 s cap, 8 s of a lone busy vCPU charged 2.8 W
 * instead of 7.5 W).  A first PKG sample now makes the epoch lost.
 *
 * kmod/engine.c also makes the load-time close lost, but the core API as
 * documented does not require that.
 */
#include "vt_host.h"

static double vcpu_j(u8 policy, u64 t0, u64 len, u64 *debt_after_first)
{
	static struct bh h;

	bh_init(&h, t0, 24, 64, 1000, 0, VT_MS, 200000000ULL, 40000000ULL,
		VR_STATIC_PARAM, policy);
	h.vcpu_uw = 5000000ULL;
	/* the first close, with the vCPU already running */
	bh_run(&h, t0, t0 + VT_MS + 1000, true, 100000, 900000);
	*debt_after_first = h.p.static_debt;
	bh_run(&h, t0 + VT_MS + 1000, t0 + len, true, 100000, 900000);
	return vt_eu_j(h.vcpu.energy[0]);
}

int main(void)
{
	const u64 t0 = 1000 * VT_SEC, len = 5 * VT_SEC;
	u64 debt;
	double j;

	vt_start("vmrapl core: the baseline epoch owes no static debt");
	vt_seed(1);

	j = vcpu_j(VR_STATIC_OCCUPIED, t0, len, &debt);
	vt_eq(debt, 0, "first close (a baseline, de unknown) owes no static "
	      "energy (module loaded at uptime 1000 s)");
	vt_near(j, 7.5 * 5, 0.05, "occupied: lone vCPU charged 7.5 W x 5 s "
		"right after load (got %.2f W)", j / 5);

	j = vcpu_j(VR_STATIC_NONE, t0, len, &debt);
	vt_near(j, 5.0 * 5, 0.05, "none: lone vCPU charged 5 W x 5 s right "
		"after load (got %.2f W)", j / 5);

	/* the same at uptime 0 is right within 40 mJ: dt of the baseline */
	j = vcpu_j(VR_STATIC_OCCUPIED, 0, len, &debt);
	vt_near(j, 7.5 * 5, 0.05, "control: loaded at uptime 0, occupied "
		"7.5 W x 5 s (got %.3f W)", j / 5);
	return vt_done();
}
