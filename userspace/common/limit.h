/* SPDX-License-Identifier: MIT */
/*
 * A per-VM power limit held through CFS bandwidth control: the controller
 * of "vmraplctl limit VM 40W --window 1s".
 *
 * At each tick its caller reads the VM's energy as vmrapl attributes it
 * (the VM's energy_uj, never a wattmeter's truth), the CPU time of the
 * VM's cgroup and its throttled time (cpu.stat usage_usec and
 * throttled_usec), and hands the deltas to vr_limit_tick(), which returns
 * the quota to write into the cgroup's cpu.max for the next tick: CPU ns
 * per period, or VR_LIMIT_NO_QUOTA ("max").  The caller writes cpu.max
 * only when the value changes, and right after a period starts: each
 * write refills the group's runtime to the quota and forgives every CPU's
 * overrun (tg_set_cfs_bandwidth()) without moving the period timer, so a
 * write late in a period, after the group was throttled, hands it up to
 * a second quota in that period.  The timer starts at the first write
 * with a quota, so ticks of whole periods from that write stay at the
 * period's start; a group that idles a whole period stops the timer, and
 * the kernel restarts it at the group's next run, at a phase of its own
 * (bench/sim's "timer at a random phase" shows what that costs).
 *
 * The goal: the VM's power averaged over each window (the last
 * window_ns, sliding) at the limit while the VM could draw more, within a
 * few %, and never much above it.
 *
 * The plant, as the controller assumes it: over a tick, the VM's energy
 * is roughly proportional to the CPU time it gets (under vmrapl's
 * occupied policy the static share also goes by occupied time), with a
 * gain, joules per CPU-second, that moves with the frequency (itself set
 * by how many cores of the package are busy), the guest's code and its
 * neighbours; and the CPU time it gets is roughly the quota, give or take
 * the kernel's enforcement (runtime handed out in 5 ms slices per CPU,
 * checked at the scheduler tick, so a group overruns its quota a little
 * and repays it the next period).  Neither is trusted to be exact.  Each
 * tick:
 *
 *   - the window: a ring of the last window's per-tick energies.  What
 *     its last window_ns / tick_ns - 1 ticks (the ones still in the window
 *     after the next) saved against the limit is spent, three quarters of
 *     it in the next tick (the rest kept for the ticks after); what they
 *     overspent is repaid in the next tick, so no tick is planned above
 *     what the sliding window has left.  That sets the next tick's target
 *     energy.  Spending the savings at once too would leave the sliding
 *     window exactly at the limit but let any error repeat, unchanged, a
 *     window later (what a tick spends leaves the window then, and is
 *     spent again); keeping a quarter back damps that, at the price of a
 *     little energy left unspent when a light phase and a busy one
 *     alternate with the window's own period;
 *   - integral action on the model's error: the energy drawn against the
 *     target the tick was given (not against the limit: spending what the
 *     window saved is no error), integrated only while the quota binds
 *     (the group was throttled) or the VM drew more than its target, and
 *     frozen while released, so a VM whose own demand keeps it under the
 *     limit does not wind it up.  It removes what the gain does not see:
 *     the quota's overrun, the refill of a write, a gain that is an
 *     average of a curve;
 *   - feedforward: the target and the integral, divided by the gain
 *     estimate, an exponentially weighted mean of the measured energy per
 *     CPU-second (a quarter per tick).  Under a quota it learns only from
 *     ticks the quota bound (the only ones where the gain sets the VM's
 *     power; a light tick's energy per CPU-second is inflated by whatever
 *     part of the power does not follow CPU time); released, a tick weighs
 *     by the share of the VM's CPUs it used; never from a tick where the
 *     VM ran less than 1/64 of a CPU, so an idle VM cannot divide by ~0;
 *   - the quota released ("max") when the plan, at the gain, is above
 *     what all of the VM's CPUs could draw: its own demand keeps it under
 *     the limit, and a released group pays nothing for bandwidth control.
 *     It is taken back as soon as the plan falls under that again (an
 *     eighth of hysteresis).
 *
 * The first quota comes from a sample taken before the limit
 * (vr_limit_prime()), so the VM does not run a tick unlimited; a new
 * limit (vr_limit_set()) starts a window of its own and is planned at
 * once.
 *
 * Integer arithmetic only (a 64 x 64 / 64 division with a 128-bit
 * intermediate where a product can overflow); no I/O, no allocation, no
 * globals: one struct vr_limit per VM.
 */
#ifndef VMRAPL_COMMON_LIMIT_H
#define VMRAPL_COMMON_LIMIT_H

#include <stdbool.h>
#include <stdint.h>

/* vr_limit_tick()'s "no quota": cpu.max's "max". */
#define VR_LIMIT_NO_QUOTA	UINT64_MAX

/* The ring's size: a window holds at most this many ticks. */
#define VR_LIMIT_RING		256

/*
 * Accepted ranges (vr_limit_init(), vr_limit_set()):
 *
 *   limit:   1 mW .. 100 kW.  Far beyond any host at the top; the products
 *            of the arithmetic stay within 64 bits up to there.
 *   period:  1 ms .. 1 s, whole microseconds: cpu.max's own range
 *            (min_cfs_quota_period, max_cfs_quota_period) and unit.
 *   tick:    a whole number of periods, so every tick holds whole
 *            periods and a throttled VM's energy per tick does not depend
 *            on where the period edges fall (within a period the VM runs
 *            first and is throttled after).
 *   window:  a whole number of ticks, 2 .. VR_LIMIT_RING of them, at most
 *            an hour.  Hardware's PL1 windows go from about 1 ms to tens
 *            of seconds; a cap averaged over more than an hour is an
 *            energy budget, not a power limit.  Windows shorter than about
 *            ten periods are accepted but held loosely: the kernel's own
 *            enforcement (a scheduler tick of overrun per CPU and period)
 *            is then a large part of each window.
 *   max_cpus: 1 .. 65536, the CPUs the VM's threads could use at once.
 */
#define VR_LIMIT_MIN_UW		1000ULL			/* 1 mW */
#define VR_LIMIT_MAX_UW		100000000000ULL	/* 100 kW */
#define VR_LIMIT_MIN_PERIOD_NS	1000000ULL		/* 1 ms */
#define VR_LIMIT_MAX_PERIOD_NS	1000000000ULL		/* 1 s */
#define VR_LIMIT_MAX_WINDOW_NS	3600000000000ULL	/* 1 h */
#define VR_LIMIT_MAX_CPUS	65536U
/* cpu.max's smallest quota (min_cfs_quota_period). */
#define VR_LIMIT_MIN_QUOTA_NS	1000000ULL

/**
 * struct vr_limit_sample - what the caller measured over one tick
 * @energy_uj: the VM's energy over the tick, as vmrapl attributes it
 *	(delta of its energy_uj, overhead threads included), uJ.
 * @cpu_ns: CPU time of the VM's cgroup over the tick (delta of cpu.stat
 *	usage_usec, times 1000), ns.
 * @dt_ns: the tick's length as measured (CLOCK_MONOTONIC), ns.
 * @throttled_ns: time the group spent throttled over the tick (delta of
 *	cpu.stat throttled_usec, times 1000), ns; VR_LIMIT_NO_QUOTA when the
 *	caller cannot read it: the controller then takes a tick whose CPU
 *	time reached 15/16 of the quota as throttled.
 */
struct vr_limit_sample {
	uint64_t energy_uj;
	uint64_t cpu_ns;
	uint64_t dt_ns;
	uint64_t throttled_ns;
};

/**
 * struct vr_limit - one VM's power-limit controller
 * @limit_uw: the limit, uW.
 * @window_ns: the window the limit averages over, ns.
 * @tick_ns: the controller's tick (how often the caller samples and calls
 *	vr_limit_tick()), ns.
 * @period_ns: the cgroup's cpu.max period, ns.
 * @max_cpus: the CPUs the VM's threads could use at once (its vCPUs and
 *	VMM threads); the largest quota is max_cpus periods per period.
 * @nticks: window_ns / tick_ns, the ticks of a window (2..VR_LIMIT_RING).
 * @ring_uj: the energy of each of the last @nticks ticks, uJ; before
 *	the first ticks, the limit's energy of a nominal tick (a window that
 *	was exactly at the limit: nothing saved, nothing owed).
 * @ring_us: the length of each of those ticks, us.
 * @head: the ring's next slot (its oldest entry).
 * @k_uw: the gain estimate: the VM's energy per CPU-second, uJ/s, i.e.
 *	uW per fully used CPU; 0 until a tick has shown it.
 * @integ_uj: the integral term, uJ added to each tick's target; within
 *	+-one tick's energy at the limit.
 * @quota_ns: the quota returned last (in force during the tick that ends
 *	at the next call), ns per period, or VR_LIMIT_NO_QUOTA.
 * @target_uj: the energy the tick in progress should draw, uJ: the
 *	limit's, and the window's savings spent or its debt repaid.
 * @plan_uj: the energy the quota of the tick in progress was computed
 *	for, uJ: the target and the integral term.
 * @alpha_shift: the gain estimate's weight of a new sample, 2^-alpha_shift
 *	(default 2: a quarter).
 * @ki_shift: the integral gain, 2^-ki_shift of each tick's error (default
 *	2); 63: no integral action.
 * @keep_shift: of the window's savings, 2^-keep_shift is kept back for
 *	the ticks after the next, the rest spent in it (default 2: a quarter
 *	kept); 0: all kept (the savings ignored), 63: none.
 * @repay_shift: what the window overspent is repaid over 2^repay_shift
 *	ticks (default 0: at once, no tick planned above what the sliding
 *	window has left); 63: never (debts ignored).
 * @deadband_shift: a new quota within 2^-deadband_shift of the one in
 *	force is not returned, to save the caller a write (default 63: none;
 *	in the simulator a deadband of 1/128 saved 5 % of the writes and
 *	cost accuracy, bench/sim/results-why.md).
 *
 * The fields after @nticks are the controller's state: read them for
 * diagnostics, change only the tunables (@alpha_shift to
 * @deadband_shift), and those only between vr_limit_init() and the first
 * vr_limit_tick().
 */
struct vr_limit {
	uint64_t limit_uw;
	uint64_t window_ns;
	uint64_t tick_ns;
	uint64_t period_ns;
	uint32_t max_cpus;
	uint32_t nticks;
	uint64_t ring_uj[VR_LIMIT_RING];
	uint32_t ring_us[VR_LIMIT_RING];
	uint32_t head;
	uint64_t k_uw;
	int64_t integ_uj;
	uint64_t quota_ns;
	int64_t target_uj;
	int64_t plan_uj;
	unsigned int alpha_shift;
	unsigned int ki_shift;
	unsigned int keep_shift;
	unsigned int repay_shift;
	unsigned int deadband_shift;
};

/**
 * vr_limit_init() - set up a VM's controller, released (no quota)
 * @l: the controller.
 * @limit_uw: the limit, uW.
 * @window_ns: the window, ns.
 * @tick_ns: the tick, ns.
 * @period_ns: the cpu.max period the caller writes with every quota, ns.
 * @max_cpus: the CPUs the VM's threads could use at once.
 *
 * Return: 0, or -EINVAL (@l untouched) for a value out of the ranges
 * above: a limit of 0 W, a window of 0, a tick that is not a whole
 * number of periods or does not divide the window into 2..VR_LIMIT_RING
 * ticks, a period cpu.max refuses, no CPUs.
 */
int vr_limit_init(struct vr_limit *l, uint64_t limit_uw, uint64_t window_ns,
		  uint64_t tick_ns, uint64_t period_ns, uint32_t max_cpus);

/**
 * vr_limit_set() - change the limit of a running controller
 * @l: the controller.
 * @limit_uw: the new limit, uW.
 * @quota_ns: if not NULL, the quota to write now (as vr_limit_tick()'s).
 *
 * The new limit starts a window of its own: the last window is taken to
 * have been exactly at it, so a lower limit is not paid for with a window
 * of repaying what was spent under the old one, and a higher one does
 * not let the VM burst with "savings" the old limit made.  The integral
 * term is scaled with the limit, the gain kept, and the quota computed
 * again at once: the rest of the tick in progress runs at the new limit.
 *
 * Return: 0, or -EINVAL (@l untouched) when @limit_uw is out of range.
 */
int vr_limit_set(struct vr_limit *l, uint64_t limit_uw, uint64_t *quota_ns);

/**
 * vr_limit_prime() - the first quota, before the first tick
 * @l: the controller, just set up (vr_limit_init()).
 * @s: the VM as the caller saw it over its last tick before the limit
 *	was set (it watches the VM anyway).
 *
 * The gain is learned from @s, and the quota returned is the one that
 * holds the limit at that gain, so the VM does not run a tick unlimited
 * first.  The window is not charged with @s: the energy the VM drew
 * before it had a limit is not repaid under it.  Without a call, the
 * controller starts released and learns from its first tick.
 *
 * Return: as vr_limit_tick().
 */
uint64_t vr_limit_prime(struct vr_limit *l, const struct vr_limit_sample *s);

/**
 * vr_limit_tick() - one tick: what the last one measured, the next quota
 * @l: the controller.
 * @s: the deltas measured over the tick that just ended.
 *
 * Return: the quota for the next tick, ns per @l->period_ns (a whole
 * number of microseconds, at least VR_LIMIT_MIN_QUOTA_NS, at most
 * @l->max_cpus periods), or VR_LIMIT_NO_QUOTA ("max").  A tick of length
 * 0 changes nothing and returns the quota in force.
 */
uint64_t vr_limit_tick(struct vr_limit *l, const struct vr_limit_sample *s);

/**
 * vr_limit_static_quota() - the baseline without feedback
 * @uw_per_cpu: the VM's observed power per fully used CPU (its energy
 *	over its CPU time, uncapped), uW.
 * @limit_uw: the limit, uW.
 * @period_ns: the cpu.max period, ns.
 * @max_cpus: the CPUs the VM's threads could use at once.
 *
 * Return: limit / uw_per_cpu periods per period, computed once and never
 * corrected (clamped and rounded as vr_limit_tick()'s), or
 * VR_LIMIT_NO_QUOTA when that is all of @max_cpus or @uw_per_cpu is 0.
 */
uint64_t vr_limit_static_quota(uint64_t uw_per_cpu, uint64_t limit_uw,
			       uint64_t period_ns, uint32_t max_cpus);

#endif /* VMRAPL_COMMON_LIMIT_H */
