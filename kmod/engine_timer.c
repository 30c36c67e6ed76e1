// SPDX-License-Identifier: GPL-2.0
/*
 * The package timer, one per package: deferrable, pinned to a CPU of its
 * package (hp->timer_cpu).  It closes a package that nothing else closed
 * for a while (freshness while busy, every VR_FIT_BLOCK_NS where only
 * untracked tasks run; the wrap guard while idle), solves
 * the online fit of the static power off the probes, hands it the idle
 * floor the host's other packages learned, and warns of a package drawing
 * more than max_power_w.
 *
 * Context: vr_pkg_timer_fn() runs in softirq context on hp->timer_cpu and
 * takes hp->timer_lock and the close_lock of its package, and of each
 * other package in turn (vr_host_floor_uw()).  The other functions
 * arm, move and stop the timer from process context: the CPU hotplug
 * callbacks (engine_cpu.c), module init and stop (engine.c); they take
 * hp->timer_lock only.  Lock order: never two of these locks at once here.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/math64.h>
#include <linux/sched/clock.h>
#include <linux/smp.h>
#include <linux/timer.h>

#include "vmrapl.h"

/*
 * Timer period while a package is busy: a block of the static-power fit
 * (VR_FIT_BLOCK_NS), or the sampling period if that is longer, at most
 * 1 s.  Switches between tasks no VM pays for never close an epoch
 * (engine.c): on a package where only they run, this is what closes it,
 * as often as the fit sums epochs into blocks anyway.
 */
static unsigned long vr_busy_timer_jiffies(void)
{
	u64 ns = clamp_t(u64, vr_engine_period_ns(), VR_FIT_BLOCK_NS,
			 NSEC_PER_SEC);

	return max_t(unsigned long, 1, nsecs_to_jiffies(ns));
}

/* A quarter of the PKG counter's wrap time at vr_max_power_w. */
static unsigned long vr_safety_jiffies(struct vr_hpkg *hp)
{
	const struct vr_dom_src *s = &hp->core.src[VR_DOM_PKG];
	u64 range_mj, ms;

	if (s->width >= 64 || !vr_max_power_w)
		return 60 * HZ;
	/* 2^width units of 2^-esu J, in mJ, divided by W: ms. */
	range_mj = s->width + 10 > s->esu ?
		   vr_mul_div(1ULL << min_t(u32, s->width, 53), 1000,
			      1ULL << s->esu) : 0;
	ms = div_u64(range_mj, vr_max_power_w) / 4;
	return clamp_t(unsigned long, msecs_to_jiffies(ms), 1, 60 * HZ);
}

/*
 * Arm @hp's timer on @cpu @delay jiffies from now, unless it is pending:
 * hp->timer_lock held, so the timer itself and a CPU coming online never
 * both add it (add_timer_on() of a pending timer corrupts the wheel).
 */
static void vr_timer_arm_on(struct vr_hpkg *hp, int cpu, unsigned long delay)
{
	lockdep_assert_held(&hp->timer_lock);
	if (timer_pending(&hp->timer))
		return;
	hp->timer.expires = jiffies + delay;
	add_timer_on(&hp->timer, cpu);
}

/*
 * The mean idle floor of the packages other than @self that learned one
 * (vr_pkg_floor_uw()), 0 if none did: the static power of a package that
 * is never idle itself, whose own measures (package less cores, the fit)
 * also hold the uncore that switches on with its first busy core.  The
 * packages of a host are alike, one model in every socket; a final
 * floor of the package's own comes first.  Each close_lock is taken
 * alone.
 */
static u64 vr_host_floor_uw(const struct vr_hpkg *self)
{
	unsigned int i, n = 0;
	unsigned long flags;
	u64 sum = 0, uw;

	for (i = 0; i < vr_topo.max_pkgs; i++) {
		struct vr_hpkg *hp = vr_pkgs[i];

		if (hp == self)
			continue;
		raw_spin_lock_irqsave(&hp->core.close_lock, flags);
		uw = vr_pkg_floor_uw(&hp->core);
		raw_spin_unlock_irqrestore(&hp->core.close_lock, flags);
		if (uw) {
			sum += uw;
			n++;
		}
	}
	return n ? div_u64(sum, n) : 0;
}

/* Safety and freshness timer of a package. */
static void vr_pkg_timer_fn(struct timer_list *t)
{
	struct vr_hpkg *hp = vr_timer_container_of(hp, t, timer);
	unsigned long next, flags;
	u64 host_floor;
	bool busy;
	int cpu;

	raw_spin_lock_irqsave(&hp->timer_lock, flags);
	cpu = hp->timer_cpu;
	if (cpu >= 0 && cpu != smp_processor_id())
		/* Migrated away by hotplug: go back to the package. */
		vr_timer_arm_on(hp, cpu, 1);
	raw_spin_unlock_irqrestore(&hp->timer_lock, flags);
	if (cpu != smp_processor_id())
		return;		/* stopping, no CPU of the package, or moved */

	if (vr_pkg_stale(&hp->core, local_clock()))
		vr_close_pkg_local(hp, true);
	/* The online fit of P_static is solved here, off the probes. */
	host_floor = vr_host_floor_uw(hp);
	raw_spin_lock_irqsave(&hp->core.close_lock, flags);
	vr_pkg_set_host_floor(&hp->core, host_floor);
	vr_pkg_fit_update(&hp->core);
	raw_spin_unlock_irqrestore(&hp->core.close_lock, flags);
	if (READ_ONCE(hp->core.over_max) != hp->timer_over_max) {
		hp->timer_over_max = READ_ONCE(hp->core.over_max);
		pr_warn_ratelimited("package %u drew more than max_power_w=%u W (%llu epochs): energy is charged, but raise max_power_w so that counter resets are told apart\n",
				    hp->id, vr_max_power_w,
				    hp->timer_over_max);
	}
	/* Busy packages stay fresh; idle ones only need the wrap guard. */
	busy = READ_ONCE(hp->core.busy_ns) != hp->timer_busy_ns;
	hp->timer_busy_ns = READ_ONCE(hp->core.busy_ns);
	next = vr_safety_jiffies(hp);
	if (busy)
		next = min(next, vr_busy_timer_jiffies());
	raw_spin_lock_irqsave(&hp->timer_lock, flags);
	/* Still ours: hotplug may have moved or stopped it meanwhile. */
	if (hp->timer_cpu == smp_processor_id())
		vr_timer_arm_on(hp, smp_processor_id(), next);
	raw_spin_unlock_irqrestore(&hp->timer_lock, flags);
}

/* Before the package's first CPU comes up: the timer exists, unarmed. */
void vr_pkg_timer_init(struct vr_hpkg *hp)
{
	hp->timer_cpu = -1;
	raw_spin_lock_init(&hp->timer_lock);
	timer_setup(&hp->timer, vr_pkg_timer_fn,
		    TIMER_DEFERRABLE | TIMER_PINNED);
}

/*
 * A CPU of @hp came online: the timer runs there if it ran nowhere, or
 * moves there (at its next expiry) from an isolated CPU if @cpu is a
 * @housekeeping one.
 */
void vr_pkg_timer_start_on(struct vr_hpkg *hp, unsigned int cpu,
			   bool housekeeping)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&hp->timer_lock, flags);
	if (hp->timer_cpu < 0) {
		WRITE_ONCE(hp->timer_cpu, cpu);
		hp->timer_hk = housekeeping;
		vr_timer_arm_on(hp, cpu, vr_busy_timer_jiffies());
	} else if (!hp->timer_hk && housekeeping) {
		WRITE_ONCE(hp->timer_cpu, cpu);
		hp->timer_hk = true;
	}
	raw_spin_unlock_irqrestore(&hp->timer_lock, flags);
}

/*
 * The timer's CPU is going down: the timer follows @cpu, another online
 * CPU of @hp, at its next expiry; -1 stops it until a CPU returns.
 */
void vr_pkg_timer_move(struct vr_hpkg *hp, int cpu, bool housekeeping)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&hp->timer_lock, flags);
	WRITE_ONCE(hp->timer_cpu, cpu);
	hp->timer_hk = housekeeping;
	raw_spin_unlock_irqrestore(&hp->timer_lock, flags);
}

/*
 * Stop every package's timer for good (module stop, or a start that
 * failed): after the CPU hotplug callbacks are gone, so nothing re-arms it.
 */
void vr_pkg_timers_stop(void)
{
	unsigned long flags;
	unsigned int i;

	for (i = 0; i < vr_topo.max_pkgs; i++) {
		struct vr_hpkg *hp = vr_pkgs[i];

		raw_spin_lock_irqsave(&hp->timer_lock, flags);
		WRITE_ONCE(hp->timer_cpu, -1);
		raw_spin_unlock_irqrestore(&hp->timer_lock, flags);
		/* Not under timer_lock: a running callback takes it. */
		timer_delete_sync(&hp->timer);
	}
}

