// SPDX-License-Identifier: GPL-2.0
/*
 * The engine: host packages and their CPUs' state, the scheduler and KVM
 * probes, lazy epoch closes.  The arithmetic lives in vr_core.c; this file
 * decides when it runs and feeds it.  The package timer is in
 * engine_timer.c, CPU hotplug and suspend in engine_cpu.c, the closes
 * and releases of process context in engine_remote.c.
 *
 * Context: the probes run with interrupts disabled under RCU-sched (the
 * sched_switch one with the runqueue lock held): they take the CPU's own
 * vr_cpu lock and, for a stale package, its close_lock with a trylock.
 * The closes that readers and releases ask of other packages (by IPI)
 * are engine_remote.c's.  Init, start and stop run at module load and
 * unload.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/irq_work.h>
#include <linux/jiffies.h>
#include <linux/kvm_host.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/task_stack.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/tracepoint.h>

#include "vmrapl.h"

struct vr_hpkg **vr_pkgs;

/*
 * Per-CPU accounting state.  Its lock is documented in vr_core.h: taken by
 * the owning CPU at its events and by the closer of its package.
 */
static DEFINE_PER_CPU_SHARED_ALIGNED(struct vr_cpu, vr_pcpu);

/* The switch filter (vmrapl.h): the VM layer's bits only while in use. */
unsigned long vr_filter[BITS_TO_LONGS(1 << VR_FILTER_BITS)];
bool vr_filter_used;

/* @cpu's state, for the hotplug callbacks and engine_remote.c. */
struct vr_cpu *vr_engine_cpu(unsigned int cpu)
{
	return per_cpu_ptr(&vr_pcpu, cpu);
}

static struct tracepoint *vr_tp_sched_switch;
static u64 vr_period_ns = 1000 * NSEC_PER_USEC;
static unsigned int vr_policy = VR_STATIC_OCCUPIED;
/* The VM layer, set before the probes are registered. */
static const struct vr_vm_ops *vr_vmops;

/*
 * vr_read_fn of the engine: the counter can only be read on a CPU of the
 * package; elsewhere, or with none of its CPUs online, what is pending is
 * settled as an unknown interval.  close_lock held, interrupts disabled.
 */
static u32 vr_read_hpkg(void *ctx, u64 *raw, u64 dt, u64 busy)
{
	struct vr_hpkg *hp = ctx;

	if (!hp->core.nr_online ||
	    vr_topo_pkg_of(smp_processor_id()) != hp->id)
		return VR_READ_LOST;
	return vr_src->read(hp, raw, dt, busy);
}

/* Close the package of this CPU if nobody else is; interrupts disabled. */
static void vr_close(struct vr_hpkg *hp, u64 now)
{
	vr_pkg_try_close(&hp->core, now, vr_read_hpkg, hp);
}

/* The static power and its fit, consistent: process or timer context. */
void vr_pkg_static_read(struct vr_hpkg *hp, struct vr_static_report *r)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&hp->core.close_lock, flags);
	vr_pkg_static_report(&hp->core, r);
	raw_spin_unlock_irqrestore(&hp->core.close_lock, flags);
}

void vr_close_pkg_local(struct vr_hpkg *hp, bool timer)
{
	unsigned long flags;

	local_irq_save(flags);
	if (timer)
		hp->safety_reads++;
	vr_close(hp, local_clock());
	local_irq_restore(flags);
}

/*
 * Close @hp on this CPU even if another CPU holds its lock for a moment
 * (a release must not leave it pending).  Interrupts disabled.
 */
void vr_close_pkg_wait(struct vr_hpkg *hp)
{
	raw_spin_lock(&hp->core.close_lock);
	vr_pkg_close_locked(&hp->core, local_clock(), vr_read_hpkg, hp);
	raw_spin_unlock(&hp->core.close_lock);
}

/* The package index of a CPU that has one. */
static inline unsigned int vr_cpu_pkg_id(const struct vr_cpu *c)
{
	return container_of(c->pkg, struct vr_hpkg, core)->id;
}

static inline void vr_maybe_close(struct vr_cpu *c, u64 now)
{
	if (unlikely(vr_pkg_stale(c->pkg, now)))
		vr_close(container_of(c->pkg, struct vr_hpkg, core), now);
}

/*
 * May the VM layer charge busy task @t for its time?  Only while it has a
 * key in its table (vr_filter_used).  A task that vr_vm_ops.task_acct may
 * then give an account to has a preempt notifier (a vCPU thread in
 * KVM_RUN: KVM's), or the filter bit of its own key or of its mm set (the
 * VM layer's lookups go through the same bits).  So "no" is exact; "yes"
 * may be another key's bit, which task_acct settles.
 */
static __always_inline bool vr_task_maybe_charged(const struct task_struct *t)
{
	const struct mm_struct *mm;

	if (!READ_ONCE(vr_filter_used))
		return false;
	mm = READ_ONCE(t->mm);
	return READ_ONCE(t->preempt_notifiers.first) || vr_filter_test(t) ||
	       (mm && vr_filter_test(mm));
}

/* The probe compares a task's flags with the gate as they are. */
static_assert(VR_GATE_IDLE == PF_IDLE, "vr_cpu.gate: VR_GATE_IDLE != PF_IDLE");

/*
 * check_stack (on with KASAN, so in make check-debug): every probe looks
 * at the current task's stack-end marker on entry and on exit.  Found on
 * entry, the damage was done before the probe ran (not by vmrapl); found
 * only on exit, the probe did it.  The first of each is printed, naming
 * the probe; debugfs "checks" counts them.
 */
static DEFINE_STATIC_KEY_FALSE(vr_stack_check);
atomic_long_t vr_stack_bad[2];	/* [0] on entry, [1] made in a probe */

static const char *vr_stack_where[2];

/* printk cannot run under the runqueue lock: the report goes by irq_work. */
static void vr_stack_report(struct irq_work *w)
{
	unsigned int i;

	for (i = 0; i < 2; i++)
		if (READ_ONCE(vr_stack_where[i]))
			pr_emerg("stack end marker corrupted, found %s the %s probe: %s\n",
				 i ? "leaving" : "entering", vr_stack_where[i],
				 i ? "vmrapl's probe did it" :
				 "not vmrapl's doing");
}

static DEFINE_IRQ_WORK(vr_stack_work, vr_stack_report);

static noinline void vr_stack_bad_report(const char *probe, bool exit)
{
	if (atomic_long_inc_return(&vr_stack_bad[exit]) != 1)
		return;
	WRITE_ONCE(vr_stack_where[exit], probe);
	irq_work_queue(&vr_stack_work);
}

static __always_inline void vr_stack_probe(const char *probe, bool exit)
{
	if (static_branch_unlikely(&vr_stack_check) &&
	    unlikely(task_stack_end_corrupted(current)))
		vr_stack_bad_report(probe, exit);
}

/*
 * The sched_switch probe when the switch may change something: the task
 * may be charged, the CPU goes from idle to busy or back, charges an
 * account or owes a per-core sample.  Same context as the probe.
 */
static noinline void vr_switch_slow(struct task_struct *next)
{
	struct vr_cpu *c = this_cpu_ptr(&vr_pcpu);
	bool busy = !is_idle_task(next);
	struct vr_acct *a = NULL;
	u64 now;

	vr_stack_probe("sched_switch", false);
	/* A CPU coming online switches before vr_cpu_up() gave it a package. */
	if (unlikely(!READ_ONCE(c->pkg)))
		goto out;
	if (busy && vr_task_maybe_charged(next))
		a = vr_vmops->task_acct(next, vr_cpu_pkg_id(c));
	/* The filter's bit may have been another key's. */
	if (!vr_cpu_event_needed(c, busy, a))
		goto out;
	now = local_clock();
	vr_cpu_event(c, now, busy, a);
	vr_maybe_close(c, now);
out:
	vr_stack_probe("sched_switch", true);
}

/*
 * sched_switch probe.  Runs with the runqueue lock held and interrupts off:
 * no allocation, no sleeping, no printk, no IPI.  Most switches on a host
 * are between tasks no VM pays for, on a CPU with nothing to change: they
 * are decided here from @next's idle flag and this CPU's gate
 * (vr_cpu.gate), and, while the VM layer has keys, @next's filter bits;
 * nothing else is read, not even the clock (see bench/RESULTS.md for what
 * it costs).  An epoch that only such switches see is closed by the
 * package timer (engine_timer.c).  notrace: a function tracer's hook would
 * cost more than the decision.
 */
static notrace void vr_probe_sched_switch(void *data, bool preempt,
					  struct task_struct *prev,
					  struct task_struct *next,
					  unsigned int prev_state)
{
	/* On a CPU without a package yet the gate is 0: busy and quiet. */
	if (likely((READ_ONCE(next->flags) & PF_IDLE) ==
		   __this_cpu_read(vr_pcpu.gate) &&
		   !vr_task_maybe_charged(next)))
		return;
	vr_switch_slow(next);
}

/* kvm_entry or kvm_exit: tell the VM layer, and close a stale epoch. */
static void vr_probe_guest(struct kvm_vcpu *vcpu,
			   void (*event)(struct kvm_vcpu *vcpu,
					 struct vr_cpu *c, u64 now,
					 unsigned int pkg))
{
	struct vr_cpu *c;
	unsigned long flags;
	u64 now;

	/* The per-CPU lock is also taken from IPIs: keep interrupts off. */
	local_irq_save(flags);
	c = this_cpu_ptr(&vr_pcpu);
	if (unlikely(!READ_ONCE(c->pkg)))
		goto out;
	now = local_clock();
	/*
	 * Close first: the same instant either way for the books, but the
	 * guest view that kvm_exit may publish then sees them up to now,
	 * not up to the package's last event (an idle package's can be a
	 * guest period old).
	 */
	vr_maybe_close(c, now);
	event(vcpu, c, now, vr_cpu_pkg_id(c));
	/*
	 * A vCPU that never leaves its CPU switches nothing, but it exits
	 * (the tick's interrupt at least): its per-core samples come here.
	 */
	vr_cpu_poll(c, now);
out:
	local_irq_restore(flags);
}

/* kvm_entry: the vCPU thread enters guest mode on this CPU. */
static void vr_probe_kvm_entry(VR_KVM_ENTRY_PROTO)
{
	vr_stack_probe("kvm_entry", false);
	vr_probe_guest(vcpu, vr_vmops->guest_entry);
	vr_stack_probe("kvm_entry", true);
}

/* kvm_exit: back from guest mode (entry/exit close stale epochs too). */
static void vr_probe_kvm_exit(void *data, struct kvm_vcpu *vcpu, u32 isa)
{
	vr_stack_probe("kvm_exit", false);
	vr_probe_guest(vcpu, vr_vmops->guest_exit);
	vr_stack_probe("kvm_exit", true);
}

/*
 * The kvm_entry probe's prototype must be the tracepoint's (a probe of
 * another type is called all the same, and kCFI would trap).  The
 * tracepoint's header is not installed; Kbuild chooses from
 * kvm_x86_ops.vcpu_run(), whose second parameter came in the same series
 * (compat.h).  That choice is checked here against the type itself, so a
 * kernel whose vcpu_run() has neither known form fails the build rather
 * than the host.
 */
#ifdef VMRAPL_KVM_ENTRY_HAS_FORCE_EXIT
static_assert(__same_type(((struct kvm_x86_ops *)0)->vcpu_run,
			  enum exit_fastpath_completion (*)(struct kvm_vcpu *,
							    u64)) ||
	      __same_type(((struct kvm_x86_ops *)0)->vcpu_run,
			  enum exit_fastpath_completion (*)(struct kvm_vcpu *,
							    bool)),
	      "kvm_x86_ops.vcpu_run() changed: check kvm_entry's prototype");
#else
static_assert(__same_type(((struct kvm_x86_ops *)0)->vcpu_run,
			  enum exit_fastpath_completion (*)(struct kvm_vcpu *)),
	      "kvm_x86_ops.vcpu_run() changed: check kvm_entry's prototype");
#endif

static void vr_find_sched_switch(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_switch"))
		vr_tp_sched_switch = tp;
}

/* The per-core weights in use, a mask of BIT(enum vr_core_kind). */
u32 vr_core_kinds(void)
{
	unsigned int i;
	u32 kinds = 0;

	for (i = 0; vr_pkgs && i < vr_topo.nr_pkgs; i++)
		kinds |= BIT(vr_hpkg_core_kind(vr_pkgs[i]));
	return kinds & ~BIT(VR_CORE_NONE);
}

u64 vr_engine_period_ns(void)
{
	return READ_ONCE(vr_period_ns);
}

unsigned int vr_engine_policy(void)
{
	return READ_ONCE(vr_policy);
}

void vr_engine_set_period(u64 ns)
{
	unsigned int i;

	WRITE_ONCE(vr_period_ns, ns);
	for (i = 0; vr_pkgs && i < vr_topo.nr_pkgs; i++)
		WRITE_ONCE(vr_pkgs[i]->core.period_ns, ns);
}

void vr_engine_set_policy(unsigned int policy)
{
	unsigned long flags;
	unsigned int i;

	WRITE_ONCE(vr_policy, policy);
	for (i = 0; vr_pkgs && i < vr_topo.nr_pkgs; i++) {
		struct vr_pkg *p = &vr_pkgs[i]->core;

		raw_spin_lock_irqsave(&p->close_lock, flags);
		p->policy = policy;
		raw_spin_unlock_irqrestore(&p->close_lock, flags);
	}
}

int vr_engine_init(void)
{
	unsigned int i;
	int ret, cpu;

	/* No package until vr_cpu_up(): the probes skip such CPUs. */
	for_each_possible_cpu(cpu)
		vr_cpu_init(per_cpu_ptr(&vr_pcpu, cpu), NULL);

	vr_pkgs = kcalloc(vr_topo.max_pkgs, sizeof(*vr_pkgs), GFP_KERNEL);
	if (!vr_pkgs)
		return -ENOMEM;
	for (i = 0; i < vr_topo.max_pkgs; i++) {
		struct vr_hpkg *hp;

		hp = kzalloc(struct_size(hp, cpus, nr_cpu_ids), GFP_KERNEL);
		if (!hp) {
			ret = -ENOMEM;
			goto err_free_pkgs;
		}
		hp->id = i;
		vr_pkg_timer_init(hp);
		vr_pkg_step_init(hp);
		vr_pkg_init(&hp->core, hp->cpus, 0, vr_period_ns,
			    (u64)vr_max_power_w * USEC_PER_SEC);
		hp->core.policy = vr_policy;
		vr_pkgs[i] = hp;
	}
	return 0;

err_free_pkgs:
	while (i--)
		kfree(vr_pkgs[i]);
	kfree(vr_pkgs);
	vr_pkgs = NULL;
	return ret;
}

void vr_engine_exit(void)
{
	unsigned int i;

	for (i = 0; i < vr_topo.max_pkgs; i++)
		kfree(vr_pkgs[i]);
	kfree(vr_pkgs);
	vr_pkgs = NULL;
}

/* Start accounting: CPUs, then the probes, which ask @ops about VMs. */
int vr_engine_start(const struct vr_vm_ops *ops)
{
	int ret;

	vr_vmops = ops;
	if (vr_check_stack)
		static_branch_enable(&vr_stack_check);
	for_each_kernel_tracepoint(vr_find_sched_switch, NULL);
	if (!vr_tp_sched_switch) {
		pr_err("sched_switch tracepoint not found\n");
		return -ENOENT;
	}

	ret = vr_engine_cpus_start();
	if (ret)
		return ret;
	ret = tracepoint_probe_register(vr_tp_sched_switch,
					vr_probe_sched_switch, NULL);
	if (ret)
		goto err_cpus;
	ret = tracepoint_probe_register(&__tracepoint_kvm_entry,
					vr_probe_kvm_entry, NULL);
	if (ret)
		goto err_sched_switch;
	ret = tracepoint_probe_register(&__tracepoint_kvm_exit,
					vr_probe_kvm_exit, NULL);
	if (ret)
		goto err_kvm_entry;
	return 0;

err_kvm_entry:
	tracepoint_probe_unregister(&__tracepoint_kvm_entry,
				    vr_probe_kvm_entry, NULL);
err_sched_switch:
	tracepoint_probe_unregister(vr_tp_sched_switch,
				    vr_probe_sched_switch, NULL);
	tracepoint_synchronize_unregister();
	irq_work_sync(&vr_stack_work);
err_cpus:
	vr_engine_cpus_stop();
	return ret;
}

void vr_engine_stop(void)
{
	tracepoint_probe_unregister(&__tracepoint_kvm_exit,
				    vr_probe_kvm_exit, NULL);
	tracepoint_probe_unregister(&__tracepoint_kvm_entry,
				    vr_probe_kvm_entry, NULL);
	tracepoint_probe_unregister(vr_tp_sched_switch,
				    vr_probe_sched_switch, NULL);
	/* No probe runs past this point, so nothing touches the state. */
	tracepoint_synchronize_unregister();
	irq_work_sync(&vr_stack_work);
	vr_engine_cpus_stop();
}
