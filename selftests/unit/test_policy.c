// SPDX-License-Identifier: GPL-2.0
/*
 * The static policies against their own truths, where an epoch holds an
 * all-idle stretch (vr_split_policy(), vr_pkg_close_fold()).
 *
 * An all-idle package is not closed until one of its CPUs has an event,
 * so an epoch that ends a short burst can run on through the quiet
 * stretch after it: a lazy epoch.  Under VR_STATIC_BUSY (the package's
 * power over whatever runs, nobody's while nothing runs) the stretch's
 * static energy is idle energy; charging the epoch's whole delta to its
 * busy time gave a 0.5 ms burst every 50 ms the floor of the whole 50 ms
 * (the simulator's mostly-idle: 501 % against busy-share).  The fold
 * measures the stretch from what the CPUs' events already recorded: the
 * intersection of their last known idle stretches.
 */
#include "vt_host.h"

/* One CPU's event at @now, the others silent; closes when stale. */
static void ev(struct bh *h, int cpu, u64 now, bool busy)
{
	struct vr_cpu *c = &h->cpu[cpu];
	struct vr_acct *a = busy && !cpu ? &h->vcpu : NULL;

	vrm_set_power(&h->ctr, now, h->static_uw + (busy ? h->vcpu_uw : 0));
	if (vr_cpu_event_needed(c, busy, a))
		vr_cpu_event(c, now, busy, a);
	bh_close(h, now);
}

/*
 * The fold's all-idle time: CPU 1 runs [1, 3) ms, CPU 0 [2, 5) ms of an
 * epoch closed at 20 ms, after CPU 0 woke again at 18 ms (@wake) or not.
 */
static void fold_idle(bool wake)
{
	static struct bh h;
	const u64 t0 = 10 * VT_SEC, ms = VT_MS;
	u64 exp = wake ? 13 * ms : 15 * ms;

	bh_init(&h, t0, 24, 64, 1000, 0, 30 * ms, 200000000ULL, 40000000ULL,
		VR_STATIC_PARAM, VR_STATIC_BUSY);
	h.vcpu_uw = 20000000ULL;
	ev(&h, 0, t0 + 100000, false);	/* the baseline close (period 30 ms) */
	h.p.period_ns = 30 * ms;
	ev(&h, 1, t0 + 31 * ms, true);
	ev(&h, 0, t0 + 32 * ms, true);
	ev(&h, 1, t0 + 33 * ms, false);
	ev(&h, 0, t0 + 35 * ms, false);
	if (wake)
		ev(&h, 0, t0 + 48 * ms, true);
	h.p.period_ns = ms;
	ev(&h, 2, t0 + 50 * ms, false);
	vt_eq(h.p.fold_idle, exp, "fold: every CPU idle for %llu ms of the "
	      "epoch%s", (unsigned long long)(exp / ms),
	      wake ? ", a wake after the stretch" : "");
}

/*
 * CPU 0 runs the vCPU for @on ns every @cycle ns, nothing else runs, and
 * only its own events close the package: each burst's epoch runs on
 * through the idle time after it.  Returns the vCPU's joules.
 */
static double bursts(u8 policy, u64 on, u64 cycle, int n)
{
	static struct bh h;
	const u64 t0 = 10 * VT_SEC;
	u64 now = t0;
	int i;

	bh_init(&h, t0, 24, 64, 1000, 0, VT_MS, 200000000ULL, 40000000ULL,
		VR_STATIC_PARAM, policy);
	h.vcpu_uw = 20000000ULL;
	ev(&h, 0, now, false);
	for (i = 0; i < n; i++) {
		now += cycle - on;
		ev(&h, 0, now, true);
		now += on;
		ev(&h, 0, now, false);
	}
	/* the last burst's lag share */
	ev(&h, 0, now + cycle, false);
	return vt_eu_j(h.vcpu.energy[0]);
}

/*
 * PP0 (Intel client parts): the package less PP0 is what no core's
 * counter sees, floor and uncore, measured while busy.  Four CPUs, CPU 0
 * never idle, CPUs 1-3 on and off; 10 W floor, 6 W uncore while any
 * core runs, 5 W per busy core, which PP0 counts.  The package is never
 * idle: the static power is the residual, 16 W (the floor and the uncore
 * are one level here, inseparable), reported as PP0's.  Before, PP0 fed
 * nothing: the fit's intercept, reported as a fit.
 */
struct ph {
	struct vr_pkg p;
	struct vr_cpu cpu[4];
	struct vr_cpu *cpus[4];
	struct vr_acct acct[4];
	struct vrm_rapl pkg, pp0;
	u64 now;
};

static u32 ph_read(void *ctx, u64 *raw, u64 dt, u64 busy)
{
	struct ph *h = ctx;

	(void)dt;
	(void)busy;
	raw[VR_DOM_PKG] = vrm_read(&h->pkg, h->now);
	raw[VR_DOM_CORE] = vrm_read(&h->pp0, h->now);
	return BIT(VR_DOM_PKG) | BIT(VR_DOM_CORE);
}

static void pp0_residual(void)
{
	static struct ph h;
	struct vr_static_report r;
	u64 next_fit = 100 * VT_MS, next_load = 0;
	int i, k = 1;

	memset(&h, 0, sizeof(h));
	for (i = 0; i < 4; i++)
		h.cpus[i] = &h.cpu[i];
	vr_pkg_init(&h.p, h.cpus, 4, VT_MS, 1000000000ULL);
	vr_pkg_set_domain(&h.p, VR_DOM_PKG, 14, 32);
	vr_pkg_set_domain(&h.p, VR_DOM_CORE, 14, 32);
	vt_rapl_init(&h.pkg, 14, 32, 976563, 50000, 12345, 0);
	vt_rapl_init(&h.pp0, 14, 32, 976563, 50000, 777, 0);
	vrm_follow(&h.pp0, &h.pkg);
	for (i = 0; i < 4; i++) {
		vr_cpu_init(&h.cpu[i], &h.p);
		vr_lock(&h.p.close_lock);
		vr_cpu_online(&h.cpu[i], 0, false);
		vr_unlock(&h.p.close_lock);
	}
	for (; h.now < 10 * VT_SEC; h.now += 100000) {
		if (h.now >= next_load) {
			k = 1 + vt_below(4);
			next_load = h.now + vt_range(2 * VT_MS, 30 * VT_MS);
			for (i = 0; i < 4; i++) {
				bool busy = i < k;
				struct vr_acct *a = busy ? &h.acct[i] : NULL;

				if (vr_cpu_event_needed(&h.cpu[i], busy, a))
					vr_cpu_event(&h.cpu[i], h.now, busy,
						     a);
			}
			vrm_set_power(&h.pkg, h.now, 16000000ULL + 5000000ULL * k);
			vrm_set_power(&h.pp0, h.now, 5000000ULL * k);
		}
		if (vr_pkg_stale(&h.p, h.now))
			vr_pkg_try_close(&h.p, h.now, ph_read, &h);
		if (h.now >= next_fit) {
			vr_lock(&h.p.close_lock);
			vr_pkg_fit_update(&h.p);
			vr_unlock(&h.p.close_lock);
			next_fit += 100 * VT_MS;
		}
	}
	vr_lock(&h.p.close_lock);
	vr_pkg_static_report(&h.p, &r);
	vr_unlock(&h.p.close_lock);
	vt_eq(r.inputs, VMRAPL_STATIC_IN_PP0_RESIDUAL, "PP0: the static power "
	      "is the package less PP0, reported so (origin %s)",
	      vr_origin_names[r.origin]);
	vt_near((double)r.p_static_uw / 1e6, 16.0, 0.16, "PP0: the residual, "
		"floor and uncore, 16 W +- 1 %% (got %.3f W)",
		(double)r.p_static_uw / 1e6);
}

int main(void)
{
	const u64 on = 500000, cycle = 50 * VT_MS;
	const int n = 200;
	double j, busy_share = 60.0 * on * n / VT_SEC;

	vt_start("vmrapl core: busy and none against their own truths");
	vt_seed(1);

	fold_idle(false);
	fold_idle(true);

	j = bursts(VR_STATIC_BUSY, on, cycle, n);
	vt_near(j, busy_share, busy_share * 0.02, "busy: 0.5 ms bursts every "
		"50 ms get the package's 60 W while they run, %.3f J (got "
		"%.3f J)", busy_share, j);
	j = bursts(VR_STATIC_NONE, on, cycle, n);
	vt_near(j, 20.0 * on * n / VT_SEC, 0.02 * 20.0 * on * n / VT_SEC,
		"none: the same bursts get their 20 W above the floor (got "
		"%.3f J)", j);
	j = bursts(VR_STATIC_OCCUPIED, on, cycle, n);
	vt_near(j, 22.5 * on * n / VT_SEC, 0.02 * 22.5 * on * n / VT_SEC,
		"occupied: 20 W and the floor's 40/16 W (got %.3f J)", j);
	pp0_residual();
	return vt_done();
}
