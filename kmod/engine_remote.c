// SPDX-License-Identifier: GPL-2.0
/*
 * The engine in process context: what readers and releases ask of every
 * package.  vr_close_all() closes stale packages so that a reader sees
 * everything up to now; vr_engine_release() takes a batch of dead VMs'
 * accounts off every CPU and package before they are freed; and
 * vr_engine_sweep(), the debug check of a release, proves nothing still
 * points at them.
 *
 * Context: process context (ioctls, the VM layer's release work), no
 * vmrapl lock held on entry.  Another package is closed on one of its
 * CPUs by IPI (vr_close_ipi(), vr_force_close_ipi(): interrupts off,
 * that package's close_lock); a CPU's lock (vr_cpu.lock) and a package's
 * close_lock are taken here one at a time, with interrupts off.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/sched/clock.h>
#include <linux/smp.h>

#include "vmrapl.h"

static void vr_close_ipi(void *info)
{
	vr_close_pkg_local(info, false);
}

/*
 * Close every stale package, so that a reader sees everything up to now.
 * Process context; packages other than ours are closed on one of their
 * CPUs by IPI, but not a package that some reader had closed less than
 * @min_gap_ns ago (0: always): a reader without CAP_PERFMON cannot make
 * vmrapl interrupt a package more often than once per unpriv period.
 */
void vr_close_all(u64 min_gap_ns)
{
	unsigned int i;
	u64 now, last;
	int cpu;

	for (i = 0; i < vr_topo.nr_pkgs; i++) {
		struct vr_hpkg *hp = vr_pkgs[i];

		now = local_clock();
		if (!vr_pkg_stale(&hp->core, now))
			continue;
		last = READ_ONCE(hp->last_remote);
		if (min_gap_ns && now - last < min_gap_ns)
			continue;
		cpu = READ_ONCE(hp->timer_cpu);
		if (cpu < 0)
			continue;
		/* Racing readers may both send one: still bounded. */
		WRITE_ONCE(hp->last_remote, now);
		hp->remote_closes++;
		smp_call_function_single(cpu, vr_close_ipi, hp, 1);
	}
}

/* Close @hp even if another CPU holds the lock for a moment (IPI). */
static void vr_force_close_ipi(void *info)
{
	vr_close_pkg_wait(info);
}

/*
 * Before the accounts of @n VMs (@r) are freed: no CPU charges them any
 * more, and no package keeps them on a pending list.  Process context; the
 * caller made sure no probe can find them again (RCU), and batches the
 * VMs that die together (vm_release.c), so that whatever userspace does, a
 * package is interrupted once per batch.
 */
void vr_engine_release(const struct vr_acct_range *r, unsigned int n)
{
	unsigned long flags;
	unsigned int i, j;
	int cpu;

	/* Interrupts off, and each lock held, for one VM at a time. */
	for_each_possible_cpu(cpu) {
		for (j = 0; j < n; j++) {
			local_irq_save(flags);
			vr_cpu_purge(vr_engine_cpu(cpu), local_clock(),
				     r[j].lo, r[j].hi);
			local_irq_restore(flags);
		}
	}
	for (i = 0; i < vr_topo.nr_pkgs; i++) {
		struct vr_hpkg *hp = vr_pkgs[i];

		cpu = READ_ONCE(hp->timer_cpu);
		hp->release_closes++;
		if (cpu < 0 || smp_call_function_single(cpu, vr_force_close_ipi,
							hp, 1)) {
			local_irq_save(flags);
			vr_force_close_ipi(hp);
			local_irq_restore(flags);
		}
		/* The close made them the lag list: take them off it. */
		for (j = 0; j < n; j++) {
			raw_spin_lock_irqsave(&hp->core.close_lock, flags);
			vr_pkg_forget(&hp->core, r[j].lo, r[j].hi);
			raw_spin_unlock_irqrestore(&hp->core.close_lock, flags);
		}
	}
}

static bool vr_in(const struct vr_acct *a, const struct vr_acct_range *r)
{
	return a >= r->lo && a < r->hi;
}

/*
 * The debug sweep of a release (check_release, vm_release.c): after
 * vr_engine_release(), nothing may point at an account of @r any more: no
 * CPU's current account, no package's pending or lag list.  Returns
 * VR_SWEEP_CLEAN, or what was found, named in @why; a CPU or a lag list is
 * put right (purged, forgotten again), a pending list cannot be.
 * @inject: leave a stale pointer to @r on package 0's lag list, as a bug
 * would, just before scanning it (the sweep's own test, inject_stale).
 */
int vr_engine_sweep(const struct vr_acct_range *r, bool inject, char *why,
		    size_t len)
{
	struct vr_acct *a, *first = (struct vr_acct *)r->lo;
	int cpu, ret = VR_SWEEP_CLEAN;
	unsigned long flags;
	unsigned int i, s;

	for_each_possible_cpu(cpu) {
		struct vr_cpu *c = vr_engine_cpu(cpu);

		local_irq_save(flags);
		vr_lock(&c->lock);
		a = c->cur;
		vr_unlock(&c->lock);
		local_irq_restore(flags);
		if (!vr_in(a, r))
			continue;
		snprintf(why, len, "CPU %d still charges it", cpu);
		ret = VR_SWEEP_REPAIRED;
		local_irq_save(flags);
		vr_cpu_purge(c, local_clock(), r->lo, r->hi);
		local_irq_restore(flags);
	}
	for (i = 0; i < vr_topo.nr_pkgs; i++) {
		struct vr_pkg *p = &vr_pkgs[i]->core;
		bool lag = false, pend = false;

		raw_spin_lock_irqsave(&p->close_lock, flags);
		/*
		 * Under the lock that scans for it: a close in between would
		 * clear the lag list and take the stale pointer with it.
		 */
		if (inject && i == 0 && !first->pprev && p->prev != first) {
			first->pprev = p->prev;
			p->prev = first;
		}
		for (a = p->prev; a && !lag; a = a->pprev)
			lag = vr_in(a, r);
		for (s = 0; s < 2; s++)
			for (a = READ_ONCE(p->pending[s]); a && !pend;
			     a = READ_ONCE(a->pnext[s]))
				pend = vr_in(a, r);
		if (lag)
			vr_pkg_forget(p, r->lo, r->hi);
		raw_spin_unlock_irqrestore(&p->close_lock, flags);
		if (pend) {
			snprintf(why, len, "package %u's pending list holds it",
				 i);
			return VR_SWEEP_STUCK;
		}
		if (lag) {
			snprintf(why, len, "package %u's lag list holds it", i);
			ret = VR_SWEEP_REPAIRED;
		}
	}
	return ret;
}
