/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A one-package host for scenario tests (test_baseline, test_reset_step,
 * test_learn_static) and the known-bug demonstrations in bugs/: BH_NCPU
 * CPUs, one vCPU account, a simulated RAPL counter, driven like the kernel
 * glue (vr_pkg_init without a time, events, lazy vr_pkg_try_close()).
 */
#ifndef _VT_HOST_H
#define _VT_HOST_H

#include "vr_test.h"

#define BH_NCPU	16

struct bh {
	struct vr_pkg p;
	struct vr_cpu cpu[BH_NCPU];
	struct vr_cpu *cpus[BH_NCPU];
	struct vr_acct vcpu;
	struct vrm_rapl ctr;
	u64 static_uw, vcpu_uw;
	bool running;
	u64 closes;
};

static inline void bh_init(struct bh *h, u64 t0, u32 esu, u32 width,
			   u64 step, u64 jitter, u64 period, u64 max_uw,
			   u64 static_uw, enum vr_static_origin origin,
			   u8 policy)
{
	int i;

	memset(h, 0, sizeof(*h));
	for (i = 0; i < BH_NCPU; i++)
		h->cpus[i] = &h->cpu[i];
	vr_pkg_init(&h->p, h->cpus, BH_NCPU, period, max_uw);
	vr_pkg_set_domain(&h->p, 0, esu, width);
	vr_pkg_set_static(&h->p, origin == VR_STATIC_UNKNOWN ? 0 : static_uw,
			  origin);
	h->p.policy = policy;
	h->static_uw = static_uw;
	vt_rapl_init(&h->ctr, esu, width, step, jitter, 12345, t0);
	vrm_set_power(&h->ctr, t0, static_uw);
	for (i = 0; i < BH_NCPU; i++) {
		vr_cpu_init(&h->cpu[i], &h->p);
		vr_lock(&h->p.close_lock);
		vr_cpu_online(&h->cpu[i], t0, false);
		vr_unlock(&h->p.close_lock);
	}
}

/* The vr_read_fn of the host: its PKG counter at the close's @now. */
struct bh_read {
	struct bh *h;
	u64 now;
};

static inline u32 bh_read_ctr(void *ctx, u64 *raw, u64 dt, u64 busy)
{
	struct bh_read *r = ctx;

	(void)dt;
	(void)busy;
	raw[0] = vrm_read(&r->h->ctr, r->now);
	return BIT(0);
}

static inline void bh_close(struct bh *h, u64 now)
{
	struct bh_read r = { h, now };

	if (vr_pkg_stale(&h->p, now) &&
	    vr_pkg_try_close(&h->p, now, bh_read_ctr, &r))
		h->closes++;
}

/* Event on @cpu; CPU 0 runs the vCPU when @vcpu, everything else idles. */
static inline void bh_event(struct bh *h, int cpu, u64 now, bool vcpu)
{
	struct vr_cpu *c = &h->cpu[cpu];
	struct vr_acct *a = vcpu ? &h->vcpu : NULL;

	if (cpu == 0) {
		h->running = vcpu;
		vrm_set_power(&h->ctr, now, h->static_uw +
				  (vcpu ? h->vcpu_uw : 0));
	}
	if (vr_cpu_event_needed(c, vcpu, a))
		vr_cpu_event(c, now, vcpu, a);
	bh_close(h, now);
}

/* CPU 0's event at @now (see bh_drive()); returns the time of its next. */
typedef u64 (*bh_cpu0_fn)(struct bh *h, u64 now, void *ctx);

/*
 * Runs [from, to): CPU 0 has its first event at @first0 and then what
 * @cpu0 says, the other CPUs idle events every 0.5-4 ms (the first within
 * 4 ms of @from).  Returns the time of the first event not run (>= @to).
 */
static inline u64 bh_drive(struct bh *h, u64 from, u64 to, u64 first0,
			   bh_cpu0_fn cpu0, void *ctx)
{
	u64 next[BH_NCPU], now;
	int i, cpu;

	for (i = 0; i < BH_NCPU; i++)
		next[i] = i ? from + vt_range(1000, 4000000) : first0;
	for (;;) {
		cpu = 0;
		for (i = 1; i < BH_NCPU; i++)
			if (next[i] < next[cpu])
				cpu = i;
		now = next[cpu];
		if (now >= to)
			return now;
		if (cpu) {
			bh_event(h, cpu, now, false);
			next[cpu] = now + vt_range(500000, 4000000);
		} else {
			next[0] = cpu0(h, now, ctx);
		}
	}
}

/* bh_run()'s CPU 0: the vCPU (or idle), events @lo..@hi ns apart. */
struct bh_gaps {
	bool vcpu;
	u64 lo, hi;
};

static inline u64 bh_gap_event(struct bh *h, u64 now, void *ctx)
{
	const struct bh_gaps *g = ctx;

	bh_event(h, 0, now, g->vcpu);
	return now + vt_range(g->lo, g->hi);
}

/*
 * Runs [from, to): CPU 0 (the vCPU if @vcpu, else idle) has an event every
 * @gap_lo..@gap_hi ns, the other CPUs idle events every 0.5-4 ms.
 */
static inline void bh_run(struct bh *h, u64 from, u64 to, bool vcpu,
			  u64 gap_lo, u64 gap_hi)
{
	struct bh_gaps g = { vcpu, gap_lo, gap_hi };

	bh_drive(h, from, to, from, bh_gap_event, &g);
}

#endif /* _VT_HOST_H */
