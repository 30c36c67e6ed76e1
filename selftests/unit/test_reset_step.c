// SPDX-License-Identifier: GPL-2.0
/*
 * Regression test (was bugs/bug_false_reset_update_step.c, fixed in
 * 8c8a520): a package drawing more than half of max_power_uw must not
 * have its 1 ms epochs classed as counter resets.
 *
 * vr_dom_delta() treats a delta larger than the package could draw as a
 * backward jump.  The hardware latches the counter only every ~1 ms
 * (1/1024 s on Intel), so an epoch of dt = 1.0-1.9 ms that straddles two
 * latches sees up to 2 x 0.98 ms of energy: a bound of max_power x dt
 * tripped at about half of max_power with the 1 ms period, and each false
 * reset counted the whole register (the energy since boot) as sampled and
 * lost.  The bound now allows two hardware steps beyond dt.
 *
 * Expected: no reset and nothing lost while the counter only moves
 * forward at a power below max_power.
 */
#include "vt_host.h"

int main(void)
{
	static struct bh h;
	struct vr_pkg_stats st;
	const u64 t0 = 0, len = 2 * VT_SEC;

	vt_start("vmrapl core: no false resets from the counter's update "
		 "step");
	vt_seed(2);

	/* 500 W bound (the module default), 300 W drawn, 1 ms period */
	bh_init(&h, t0, 14, 32, 976563, 50000, VT_MS, 500000000ULL,
		260000000ULL, VR_STATIC_PARAM, VR_STATIC_OCCUPIED);
	h.vcpu_uw = 40000000ULL;
	h.ctr.offset = 1ULL << 31;	/* 131 kJ since boot */
	bh_run(&h, t0, t0 + len, true, 20000, 200000);
	vr_pkg_read_stats(&h.p, &st, 1);
	vt_diag("%llu closes, %llu resets, lost %.3f J of %.3f J sampled",
		(unsigned long long)h.p.samples,
		(unsigned long long)h.p.resets, vt_eu_j(st.lost),
		vt_eu_j(st.sampled));
	vt_eq(h.p.resets, 0, "300 W package under a 500 W bound: no resets");
	vt_ok(st.lost <= st.sampled / 1000,
	      "300 W package under a 500 W bound: < 0.1%% lost (lost %.1f%%)",
	      st.sampled ? 100.0 * (double)st.lost / (double)st.sampled : 0);
	vt_near(vt_eu_j(st.sampled), 600.0, 6.0,
		"sampled == 300 W x 2 s within 1%% (got %.0f J)",
		vt_eu_j(st.sampled));
	/* occupied: its 40 W + 260 W / 16 of static, for 2 s */
	vt_near(vt_eu_j(h.vcpu.energy[0]), (40.0 + 260.0 / 16) * 2, 1.2,
		"the lone vCPU is charged 56.25 W x 2 s within 1%% (got %.1f J)",
		vt_eu_j(h.vcpu.energy[0]));

	/* control: 200 W under the same bound never trips */
	bh_init(&h, t0, 14, 32, 976563, 50000, VT_MS, 500000000ULL,
		160000000ULL, VR_STATIC_PARAM, VR_STATIC_OCCUPIED);
	h.vcpu_uw = 40000000ULL;
	h.ctr.offset = 1ULL << 31;
	bh_run(&h, t0, t0 + len, true, 20000, 200000);
	vt_eq(h.p.resets, 0, "control: 200 W package under a 500 W bound: "
	      "no resets");

	/*
	 * Coarse units: with ESU 0 (1 J) and a 50 W bound, max power over
	 * dt + 2 steps is ~0.15 J, below one unit; a package drawing 30 W
	 * steps by one unit every ~33 ms.  The two units of slack keep each
	 * step from reading as a reset.
	 */
	bh_init(&h, t0, 0, 32, 976563, 50000, VT_MS, 50000000ULL,
		30000000ULL, VR_STATIC_PARAM, VR_STATIC_OCCUPIED);
	h.ctr.offset = 1000;
	bh_run(&h, t0, t0 + len, false, 20000, 200000);
	vr_pkg_read_stats(&h.p, &st, 1);
	vt_ok(!h.p.resets && !st.lost,
	      "1 J units, 30 W under a 50 W bound: no resets, nothing lost "
	      "(%llu resets)", (unsigned long long)h.p.resets);
	vt_near(vt_eu_j(st.sampled), 60.0, 2.0,
		"1 J units: sampled == 30 W x 2 s within 2 units (got %.0f J)",
		vt_eu_j(st.sampled));
	return vt_done();
}
