// SPDX-License-Identifier: GPL-2.0
/*
 * CPUs coming and going: the CPU hotplug callbacks (vmrapl:online, an
 * AP_ONLINE_DYN state) and the suspend/hibernation notifier.
 *
 * Context: process context, may sleep between the locks: the hotplug
 * thread of the CPU that comes up or goes down (cpus_read_lock() held by
 * the hotplug core), or the PM notifier chain.  Locks: the package's
 * close_lock around its CPU list and the core's online/offline
 * bookkeeping, then (not nested) hp->timer_lock through engine_timer.c.
 * A package's first CPU online queues the timing of its counters' steps
 * (engine_step.c, no lock).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpuhotplug.h>
#include <linux/suspend.h>
#include <linux/sched/clock.h>
#include <linux/sched/isolation.h>
#include <linux/topology.h>

#include "vmrapl.h"

static struct notifier_block vr_pm_nb;
static enum cpuhp_state vr_cpuhp_state;

/*
 * The SMT sibling of @cpu, which shares its core's energy counter (Zen
 * cores run two threads; with more, the others are not counted).
 */
static struct vr_cpu *vr_cpu_sibling(unsigned int cpu)
{
	unsigned int sib;

	for_each_cpu(sib, topology_sibling_cpumask(cpu))
		if (sib != cpu)
			return vr_engine_cpu(sib);
	return NULL;
}

/*
 * Whether @cpu may carry a package's timer, and so the IPIs that close
 * the package for a reader or a release: not one that isolcpus= (domain)
 * or nohz_full= takes out of the kernel's housekeeping.  A package with
 * no other CPU gets its timer there all the same: the wrap guard needs a
 * CPU of the package.
 */
static bool vr_cpu_housekeeping(int cpu)
{
	return housekeeping_cpu(cpu, HK_TYPE_TIMER) &&
	       housekeeping_cpu(cpu, HK_TYPE_DOMAIN);
}

static int vr_cpu_up(unsigned int cpu)
{
	struct vr_cpu *c = vr_engine_cpu(cpu), *sib;
	struct vr_hpkg *hp;
	unsigned long flags;
	bool found = false, first;
	unsigned int i;
	int id;

	id = vr_topo_assign(cpu);
	if (id < 0 || !vr_pkgs[id]) {
		pr_err("CPU %u: no package slot\n", cpu);
		return id < 0 ? id : -ENODEV;
	}
	hp = vr_pkgs[id];
	if (!hp->core.nr_cpus) {
		/* First CPU: the source describes the package. */
		int ret = vr_src->pkg_init(hp, cpu);

		if (ret)
			return ret;
	}

	raw_spin_lock_irqsave(&hp->core.close_lock, flags);
	for (i = 0; i < hp->core.nr_cpus; i++)
		found |= hp->cpus[i] == c;
	if (!found)
		hp->cpus[hp->core.nr_cpus++] = c;
	WRITE_ONCE(c->pkg, &hp->core);
	first = !hp->core.nr_online;
	if (first) {
		/*
		 * Nobody could read the counter meanwhile: the next close is an
		 * unknown interval, judged against the time since the last
		 * sample so that a plausible delta is not taken for a reset.
		 */
		vr_pkg_rebaseline(&hp->core);
	}
	if (hp->core.core.kind == VR_CORE_ENERGY) {
		/* Both ways: the sibling may have come up first, alone. */
		sib = vr_cpu_sibling(cpu);
		vr_cpu_set_sibling(c, sib);
		if (sib && sib->pkg == &hp->core)
			vr_cpu_set_sibling(sib, c);
	}
	vr_cpu_online(c, local_clock(), true);
	raw_spin_unlock_irqrestore(&hp->core.close_lock, flags);

	vr_pkg_timer_start_on(hp, cpu, vr_cpu_housekeeping(cpu));
	/* The package comes online: time its counters' steps. */
	if (first)
		vr_pkg_step_start(hp, cpu);
	return 0;
}

static int vr_cpu_down(unsigned int cpu)
{
	struct vr_cpu *c = vr_engine_cpu(cpu);
	struct vr_hpkg *hp = container_of(c->pkg, struct vr_hpkg, core);
	unsigned long flags;
	int o, t = -1;

	raw_spin_lock_irqsave(&hp->core.close_lock, flags);
	vr_cpu_offline(c, local_clock());
	raw_spin_unlock_irqrestore(&hp->core.close_lock, flags);

	if (READ_ONCE(hp->timer_cpu) != (int)cpu)
		return 0;
	/*
	 * The dying CPU is still in cpu_online_mask at this state.  A
	 * housekeeping CPU of the package first (vr_cpu_housekeeping()).
	 */
	for_each_online_cpu(o) {
		if (o == cpu || vr_topo_pkg_of(o) != hp->id)
			continue;
		if (t < 0 || vr_cpu_housekeeping(o))
			t = o;
		if (vr_cpu_housekeeping(o))
			break;
	}
	vr_pkg_timer_move(hp, t, t >= 0 && vr_cpu_housekeeping(t));
	return 0;
}

/*
 * The counters reset or jump across suspend and hibernation: the interval
 * around it is unknown.  Re-baseline every package so that it is counted
 * as lost and never taken for a wrap.
 */
static int vr_pm_notify(struct notifier_block *nb, unsigned long action,
			void *unused)
{
	unsigned long flags;
	unsigned int i;

	if (action != PM_POST_SUSPEND && action != PM_POST_HIBERNATION &&
	    action != PM_POST_RESTORE)
		return NOTIFY_DONE;
	for (i = 0; i < vr_topo.nr_pkgs; i++) {
		struct vr_pkg *p = &vr_pkgs[i]->core;

		raw_spin_lock_irqsave(&p->close_lock, flags);
		vr_pkg_rebaseline(p);
		raw_spin_unlock_irqrestore(&p->close_lock, flags);
	}
	return NOTIFY_OK;
}

/*
 * Bring every online CPU into its package (vr_cpu_up() runs for each, and
 * for every CPU that comes online later), then follow suspend.
 */
int vr_engine_cpus_start(void)
{
	int ret;

	ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "vmrapl:online",
				vr_cpu_up, vr_cpu_down);
	if (ret < 0)
		goto err_timers;
	vr_cpuhp_state = ret;

	vr_pm_nb.notifier_call = vr_pm_notify;
	ret = register_pm_notifier(&vr_pm_nb);
	if (ret)
		goto err_cpuhp;
	return 0;

err_cpuhp:
	cpuhp_remove_state(vr_cpuhp_state);
err_timers:
	/* The callbacks that did run armed timers and step work: stop. */
	vr_pkg_timers_stop();
	vr_pkg_steps_stop();
	return ret;
}

/* Undo vr_engine_cpus_start(): after the probes are gone. */
void vr_engine_cpus_stop(void)
{
	unregister_pm_notifier(&vr_pm_nb);
	cpuhp_remove_state(vr_cpuhp_state);
	vr_pkg_timers_stop();
	vr_pkg_steps_stop();
}
