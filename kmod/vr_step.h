/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmrapl accounting core, the counters' update interval (vr_step.c): the
 * steps of a counter timed by polling it, and the interval and spread
 * they show.  Plain C, shared with the unit tests and the simulator; the
 * poll is the caller's (kmod/engine_step.c in the module).  No locks:
 * the poll state is the poller's own; vr_pkg_set_step() (vr_core.c)
 * hands the result to the package under its close_lock.
 */
#ifndef _VMRAPL_STEP_H
#define _VMRAPL_STEP_H

#include "vr_shim.h"

/* Update interval assumed for a counter whose interval is not measured. */
#define VR_STEP_DEFAULT_NS	1000000ULL

/* Step-to-step intervals needed to measure (fewer: not measured). */
#define VR_STEP_MIN		8
/* Steps kept per counter; a poll may stop once it has VR_STEP_ENOUGH. */
#define VR_STEP_MAX		40
#define VR_STEP_ENOUGH		32
/* How long a poll watches a counter that does not step enough. */
#define VR_STEP_WINDOW_NS	32000000ULL

/*
 * The steps seen by a poll: step i happened after the read at @lo[i]
 * (which still showed the old value) and by the read at @hi[i].
 */
struct vr_step_poll {
	u64 last_t;
	u64 last_raw;
	bool have;
	unsigned int n;
	u64 lo[VR_STEP_MAX];
	u64 hi[VR_STEP_MAX];
};

/**
 * struct vr_step - a counter's update interval
 * @interval_ns: median step-to-step interval, ns (VR_STEP_DEFAULT_NS
 *	when not measured).
 * @spread_ns: half the range between the 10th and 90th percentiles of
 *	the intervals, ns (0 when not measured).
 * @used: intervals the estimate is made of.
 * @measured: the counter stepped at least VR_STEP_MIN times regularly.
 */
struct vr_step {
	u64 interval_ns;
	u64 spread_ns;
	u32 used;
	bool measured;
};

void vr_step_poll_init(struct vr_step_poll *s);
void vr_step_feed(struct vr_step_poll *s, u64 t, u64 raw);
bool vr_step_enough(const struct vr_step_poll *s);
unsigned int vr_step_adjacent(const struct vr_step_poll *s);
void vr_step_estimate(const struct vr_step_poll *s, struct vr_step *out);
void vr_step_default(struct vr_step *out);
u64 vr_step_lag_ns(const struct vr_step *st);

#endif /* _VMRAPL_STEP_H */
