// SPDX-License-Identifier: GPL-2.0
/*
 * The counters' update interval, measured: when a package comes online
 * (at load, and after all its CPUs were offline), a work item on a CPU of
 * the package polls each of its counters for VR_STEP_WINDOW_NS or until
 * every counter stepped VR_STEP_ENOUGH times, times their steps and hands
 * the interval and spread (vr_step.c) to the core (vr_pkg_set_step()),
 * whose lag correction then uses the PKG counter's.  Until then, and for
 * a counter that does not step enough, the core keeps the 1 ms default
 * and says so (debugfs, GET_PKG_STATS, the kernel log).  Module load does
 * not wait for it.  The poll sleeps VR_STEP_POLL_US between reads: a
 * CPU of a virtual machine that spins on a counter the hypervisor
 * emulates can starve the emulation it measures.  A PKG counter not
 * measured is timed again VR_STEP_RETRY_MS later, then twice as late,
 * VR_STEP_TRIES times in all (1, 2, 4, 8 and 16 s later: 31 s after the
 * first; a package busy with interrupts, or a host that delayed the
 * emulated counter's updates or woke its CPU late from each sleep).
 *
 * Context: vr_step_work() runs in process context (a kworker bound to
 * the CPU that brought the package online); each read is a short
 * interrupts-off section (the source's poll, local MSRs, no lock), and
 * the worker sleeps and may be preempted between reads: a late read
 * loses the steps it did not see, not correctness (vr_step_estimate()).  It takes
 * the package's close_lock once, to hand the result over.  The other
 * functions queue and cancel the work from the CPU hotplug callbacks
 * (engine_cpu.c) and module stop; they take no lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/workqueue.h>

#include "vmrapl.h"

/* The polled counters: the domains, then the per-core counter. */
#define VR_STEP_NCTR	(VR_NDOM + 1)
/* Sleep between reads, us (to twice that). */
#define VR_STEP_POLL_US		10
/* Timings of a PKG counter not measured, and the wait before the 2nd. */
#define VR_STEP_TRIES		6
#define VR_STEP_RETRY_MS	1000

/* One read of every counter of @hp on this CPU; false: not on @hp. */
static bool vr_step_read(struct vr_hpkg *hp, u64 *t, u64 *raw, u32 *valid)
{
	struct vr_pkg *p = &hp->core;
	unsigned long flags;
	bool on_pkg;

	local_irq_save(flags);
	on_pkg = vr_topo_pkg_of(smp_processor_id()) == (int)hp->id;
	if (on_pkg) {
		*t = local_clock();
		*valid = vr_src->poll(hp, raw);
		if (p->core.kind == VR_CORE_ENERGY &&
		    p->core.read(p->core.ctx, NULL, &raw[VR_NDOM]))
			*valid |= BIT(VR_NDOM);
	}
	local_irq_restore(flags);
	return on_pkg;
}

/* Every counter that reads has stepped enough. */
static bool vr_step_all_enough(const struct vr_step_poll *s, u32 valid)
{
	unsigned int i;

	for (i = 0; i < VR_STEP_NCTR; i++)
		if ((valid & BIT(i)) && !vr_step_enough(&s[i]))
			return false;
	return true;
}

static const char *vr_step_ctr_name(unsigned int i)
{
	return i < VR_NDOM ? vr_dom_names[i] : "per-core";
}

static void vr_step_work(struct work_struct *work)
{
	struct vr_hpkg *hp = container_of(to_delayed_work(work),
					  struct vr_hpkg, step_work);
	struct vr_step st[VR_STEP_NCTR];
	u64 raw[VR_STEP_NCTR], t, t0;
	struct vr_step_poll *s;
	unsigned long flags;
	u32 valid, seen = 0;
	unsigned int i;

	/* No memory: the default stands, reported as not measured. */
	s = kmalloc_array(VR_STEP_NCTR, sizeof(*s), GFP_KERNEL);
	if (!s)
		return;
	for (i = 0; i < VR_STEP_NCTR; i++)
		vr_step_poll_init(&s[i]);
	if (!vr_step_read(hp, &t0, raw, &valid))
		goto out_moved;
	t = t0;
	do {
		seen |= valid;
		for (i = 0; i < VR_STEP_NCTR; i++)
			if (valid & BIT(i))
				vr_step_feed(&s[i], t, raw[i]);
		if (vr_step_all_enough(s, seen))
			break;
		usleep_range(VR_STEP_POLL_US, 2 * VR_STEP_POLL_US);
		if (!vr_step_read(hp, &t, raw, &valid))
			goto out_moved;
	} while (t - t0 < VR_STEP_WINDOW_NS);

	for (i = 0; i < VR_STEP_NCTR; i++)
		vr_step_estimate(&s[i], &st[i]);
	raw_spin_lock_irqsave(&hp->core.close_lock, flags);
	for (i = 0; i < VR_NDOM; i++)
		if (hp->core.domains & BIT(i))
			vr_pkg_set_step(&hp->core, i, &st[i]);
	/* The per-core counter stands for CORE where PP0 is absent. */
	if ((seen & BIT(VR_NDOM)) && !(hp->core.domains & BIT(VMRAPL_DOM_CORE)))
		vr_pkg_set_step(&hp->core, VMRAPL_DOM_CORE, &st[VR_NDOM]);
	raw_spin_unlock_irqrestore(&hp->core.close_lock, flags);

	for (i = 0; i < VR_STEP_NCTR; i++) {
		if (!(seen & BIT(i)))
			continue;
		if (st[i].measured)
			pr_info("package %u: %s counter updates every %llu us +- %llu us (measured, %u intervals)\n",
				hp->id, vr_step_ctr_name(i),
				div_u64(st[i].interval_ns, NSEC_PER_USEC),
				div_u64(st[i].spread_ns, NSEC_PER_USEC),
				st[i].used);
		else
			pr_info("package %u: %s counter stepped %u times in %llu ms, %u between consecutive reads: update interval not measured, %llu us assumed\n",
				hp->id, vr_step_ctr_name(i), s[i].n,
				div_u64(t - t0, NSEC_PER_MSEC),
				vr_step_adjacent(&s[i]),
				VR_STEP_DEFAULT_NS / NSEC_PER_USEC);
	}
	/* The PKG counter not measured: again, later, from the same CPU. */
	if (!st[VR_DOM_PKG].measured && ++hp->step_tries < VR_STEP_TRIES)
		schedule_delayed_work_on(hp->step_cpu, &hp->step_work,
					 msecs_to_jiffies(VR_STEP_RETRY_MS <<
							  (hp->step_tries - 1)));
	kfree(s);
	return;

out_moved:
	/* The CPU went offline: the next one online measures again. */
	pr_info("package %u: counter timing interrupted by CPU hotplug; %llu us assumed\n",
		hp->id, VR_STEP_DEFAULT_NS / NSEC_PER_USEC);
	kfree(s);
}

void vr_pkg_step_init(struct vr_hpkg *hp)
{
	INIT_DELAYED_WORK(&hp->step_work, vr_step_work);
}

/*
 * The package comes online on @cpu: time its counters from there, if the
 * source has counters that step (a poll method; the estimate and test
 * sources have none).
 */
void vr_pkg_step_start(struct vr_hpkg *hp, unsigned int cpu)
{
	if (!vr_src->poll || !hp->core.lag_ns)
		return;
	/* A timing still queued or running keeps its CPU. */
	if (delayed_work_pending(&hp->step_work))
		return;
	hp->step_cpu = cpu;
	hp->step_tries = 0;
	schedule_delayed_work_on(cpu, &hp->step_work, 0);
}

/* Module stop, after the hotplug callbacks are gone. */
void vr_pkg_steps_stop(void)
{
	unsigned int i;

	for (i = 0; i < vr_topo.max_pkgs; i++)
		if (vr_pkgs[i])
			cancel_delayed_work_sync(&vr_pkgs[i]->step_work);
}
