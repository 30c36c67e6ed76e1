// SPDX-License-Identifier: GPL-2.0
/*
 * Regression test: a package that draws more than max_power_w keeps its
 * energy.
 *
 * vr_dom_delta() used to class any delta larger than max_power_w could
 * draw in the epoch as a counter reset: the whole raw register was then
 * counted as sampled and lost, and the VMs were charged nothing for the
 * epoch.  With 100 ms epochs (a legal sample_period_us, and what the busy
 * timer gives an exit-less nohz_full CPU) and a 600 W package under the
 * default 500 W bound, 18 of 19 closes were "resets" and the vCPU got 0 J.
 * A step back by half the range, or past the top by more than
 * VR_OVER_MAX_WRAP times the bound, is a reset; a delta above the bound is
 * split and charged like any other, and counted in over_max (the engine
 * warns about it, naming max_power_w).
 */
#include "vt_host.h"
#include "vr_lag.h"

/* A register that reads @raw_now (PKG only). */
static u64 raw_now;

static u32 read_raw(void *ctx, u64 *raw, u64 dt, u64 busy)
{
	(void)ctx;
	(void)dt;
	(void)busy;
	raw[VR_DOM_PKG] = raw_now;
	return BIT(VR_DOM_PKG);
}

static void close_raw(struct bh *h, u64 now, u64 raw)
{
	raw_now = raw;
	vr_lock(&h->p.close_lock);
	vr_pkg_close_locked(&h->p, now, read_raw, NULL);
	vr_unlock(&h->p.close_lock);
}

int main(void)
{
	static struct bh h;
	struct vr_pkg_stats st;
	const u64 t0 = 0, len = 2 * VT_SEC;
	double span;
	u64 t_first;

	vt_start("vmrapl core: a package above max_power_w keeps its energy");
	vt_seed(3);

	/* 500 W bound, 560 W static + a 40 W vCPU, 100 ms epochs */
	bh_init(&h, t0, 14, 32, 976563, 50000, 100 * VT_MS, 500000000ULL,
		560000000ULL, VR_STATIC_PARAM, VR_STATIC_OCCUPIED);
	h.vcpu_uw = 40000000ULL;
	h.ctr.offset = 1ULL << 31;	/* 131 kJ since boot */
	/* The first close only takes the baseline. */
	bh_run(&h, t0, t0 + 150 * VT_MS, true, 20000, 200000);
	t_first = h.p.t_last;
	bh_run(&h, t0 + 150 * VT_MS, t0 + len, true, 20000, 200000);
	span = (double)(h.p.t_last - t_first) / VT_SEC;
	vr_pkg_read_stats(&h.p, &st, 1);
	vt_diag("%llu closes, %llu resets, %llu over max_power, lost %.3f J "
		"of %.3f J sampled, vCPU %.3f J",
		(unsigned long long)h.p.samples,
		(unsigned long long)h.p.resets,
		(unsigned long long)h.p.over_max, vt_eu_j(st.lost),
		vt_eu_j(st.sampled), vt_eu_j(h.vcpu.energy[0]));
	vt_eq(h.p.resets, 0, "600 W under a 500 W bound: no resets");
	vt_ok(h.p.over_max > 0, "the epochs above the bound are counted");
	vt_near(vt_eu_j(st.sampled), 600.0 * span, 6.0 * span,
		"sampled == 600 W over the %.1f s sampled within 1%% (got "
		"%.0f J)", span, vt_eu_j(st.sampled));
	vt_eq(st.lost, 0, "nothing lost");
	/* occupied: its 40 W + 560 W / 16 of static */
	vt_near(vt_eu_j(h.vcpu.energy[0]), 75.0 * span, 0.75 * span,
		"the vCPU is charged 40 W + 560 W / 16 within 1%% (got "
		"%.1f J)", vt_eu_j(h.vcpu.energy[0]));

	/* a counter that steps back is still a reset */
	bh_init(&h, t0, 14, 32, 976563, 50000, 100 * VT_MS, 500000000ULL,
		100000000ULL, VR_STATIC_PARAM, VR_STATIC_OCCUPIED);
	h.ctr.offset = 1ULL << 31;
	bh_run(&h, t0, t0 + len / 2, false, 20000, 200000);
	vrm_reset(&h.ctr, 0);	/* the register restarts from zero */
	bh_run(&h, t0 + len / 2, t0 + len, false, 20000, 200000);
	vt_eq(h.p.resets, 1, "a backward step is one reset");
	vt_eq(h.p.over_max, 0, "and not an epoch above the bound");

	/*
	 * The bound's rounding: max_power_w over dt and two hardware steps,
	 * plus two counter units.  A delta one unit (61 us of 500 W at ESU
	 * 14) above the rest is at the bound, not above it: a counter read at
	 * full power may round up that far.
	 */
	{
		u64 rem = 0, unit = 1ULL << (VR_EU_SHIFT - 14), n;

		bh_init(&h, t0, 14, 32, 976563, 50000, 10 * VT_MS,
			500000000ULL, 100000000ULL, VR_STATIC_PARAM,
			VR_STATIC_OCCUPIED);
		n = vr_energy_eu(500000000ULL, 10 * VT_MS + 2 * VR_STEP_DEFAULT_NS,
				 &rem) / unit + 1;
		close_raw(&h, t0 + 10 * VT_MS, 1000);
		close_raw(&h, t0 + 20 * VT_MS, 1000 + n);
		vt_eq(h.p.over_max, 0,
		      "a delta of %llu units, one above 500 W x (10 + 2) ms: "
		      "within the bound's rounding", (unsigned long long)n);
		close_raw(&h, t0 + 30 * VT_MS, 1000 + 2 * n + 2);
		vt_eq(h.p.over_max, 1,
		      "%llu units, three above it: over the bound",
		      (unsigned long long)n + 2);
	}

	/*
	 * Regression: a wrap in an epoch above the bound was a reset, and
	 * everything the register counted in it went to lost.  A 32-bit
	 * register 1000 units below its top, then 1.5 times the bound
	 * later past it: a wrap above the bound, charged.  The same step
	 * back by more than VR_OVER_MAX_WRAP times the bound is a reset.
	 */
	{
		u64 rem = 0, unit = 1ULL << (VR_EU_SHIFT - 14), n, top;
		struct vr_pkg_stats st2;

		bh_init(&h, t0, 14, 32, 976563, 50000, 10 * VT_MS,
			500000000ULL, 100000000ULL, VR_STATIC_PARAM,
			VR_STATIC_OCCUPIED);
		n = vr_energy_eu(500000000ULL, 10 * VT_MS + 2 * VR_STEP_DEFAULT_NS,
				 &rem) / unit;
		top = (1ULL << 32) - 1000;
		close_raw(&h, t0 + 10 * VT_MS, top);
		close_raw(&h, t0 + 20 * VT_MS, top + n * 3 / 2 - (1ULL << 32));
		vr_pkg_read_stats(&h.p, &st2, 1);
		vt_eq(h.p.resets, 0,
		      "a wrap 1.5 times above the bound is not a reset");
		vt_eq(h.p.over_max, 1, "it is counted above the bound");
		vt_eq(h.p.wraps, 1, "and as a wrap");
		vt_eq(st2.lost, 0, "nothing of it is lost");
		vt_eq(st2.sampled, n * 3 / 2 * unit,
		      "all %llu units of it are sampled",
		      (unsigned long long)n * 3 / 2);
		bh_init(&h, t0, 14, 32, 976563, 50000, 10 * VT_MS,
			500000000ULL, 100000000ULL, VR_STATIC_PARAM,
			VR_STATIC_OCCUPIED);
		close_raw(&h, t0 + 10 * VT_MS, top);
		close_raw(&h, t0 + 20 * VT_MS,
			  (VR_OVER_MAX_WRAP + 1) * n);
		vt_eq(h.p.resets, 1, "a step back %d times the bound past "
		      "the top is a reset", VR_OVER_MAX_WRAP + 1);
	}
	return vt_done();
}
