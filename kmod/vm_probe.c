// SPDX-License-Identifier: GPL-2.0
/*
 * The VM layer in probe context: which account pays for a task, and what
 * happens at kvm_entry and kvm_exit.
 *
 * Context: every function here runs from the sched_switch, kvm_entry or
 * kvm_exit probe, with interrupts disabled and under RCU-sched.  Nothing
 * here sleeps, allocates or waits: the lookup table is read under RCU, and
 * no lock is taken here (vr_gv_kick() queues the page's publication on a
 * worker).  The table's writers are in vm.c, under vr_vm_mutex.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hash.h>
#include <linux/kvm_host.h>
#include <linux/preempt.h>
#include <linux/sched.h>

#include "vm.h"

/* Lookup table: written under vr_vm_mutex (vm.c), read under RCU here. */
DEFINE_HASHTABLE(vr_keys, VR_HASH_BITS);
/* Registered overhead tasks on the host, under vr_vm_mutex; read here. */
unsigned int vr_nr_tasks;
/* A VM seen at kvm_entry that is not tracked yet, for vr_track_work. */
DEFINE_PER_CPU(struct kvm *, vr_seen_kvm);

/* KVM's preempt notifier ops, learned at the first kvm_entry. */
static struct preempt_ops *vr_kvm_pn_ops;

/* The entry for @key, of any kind.  Same context as vr_lookup(). */
struct vr_key *vr_lookup_key(const void *key)
{
	struct vr_key *k;

	if (!vr_filter_test(key))
		return NULL;
	hash_for_each_possible_rcu(vr_keys, k, node, (unsigned long)key)
		if (k->key == key)
			return k;
	return NULL;
}

/* RCU-sched read side (the probes), or vr_vm_mutex held. */
struct vr_vm *vr_lookup(const void *key, u32 kind)
{
	struct vr_key *k;

	if (!vr_filter_test(key))
		return NULL;
	hash_for_each_possible_rcu(vr_keys, k, node, (unsigned long)key)
		if (k->key == key && k->kind == kind)
			return k->vm;
	return NULL;
}

/*
 * vr_task_vcpu() relies on KVM's layout: a task's preempt notifiers are an
 * hlist, and a vCPU embeds its notifier.  A kernel that changes either
 * fails the build here, not the host.  Which notifier is KVM's is checked
 * at run time (its ops, learned from a vCPU at kvm_entry).
 */
static_assert(__same_type(((struct task_struct *)0)->preempt_notifiers,
			  struct hlist_head),
	      "task_struct.preempt_notifiers changed: check vr_task_vcpu()");
static_assert(__same_type(((struct kvm_vcpu *)0)->preempt_notifier,
			  struct preempt_notifier),
	      "kvm_vcpu.preempt_notifier changed: check vr_task_vcpu()");

/* The vCPU whose thread @t is, when @t is in KVM_RUN (KVM's own state). */
static struct kvm_vcpu *vr_task_vcpu(struct task_struct *t)
{
	struct preempt_ops *ops = READ_ONCE(vr_kvm_pn_ops);
	struct hlist_node *n = READ_ONCE(t->preempt_notifiers.first);
	struct preempt_notifier *pn;

	if (!n || !ops)
		return NULL;
	pn = hlist_entry(n, struct preempt_notifier, link);
	if (READ_ONCE(pn->ops) != ops)
		return NULL;
	return container_of(pn, struct kvm_vcpu, preempt_notifier);
}

/* @vcpu's index in @vm: its KVM id or its creation order (@vm->by_id). */
static u32 vr_vcpu_index(const struct vr_vm *vm, const struct kvm_vcpu *vcpu)
{
	return vm->by_id ? (u32)vcpu->vcpu_id : (u32)vcpu->vcpu_idx;
}

/* The account of vCPU @idx of @vm under its policy, on package @pkg. */
static struct vr_acct *vr_vcpu_or_ovh(struct vr_vm *vm, u32 idx,
				      unsigned int pkg)
{
	if (idx < vm->nr_vcpus &&
	    READ_ONCE(vm->charge) == VMRAPL_CHARGE_THREAD)
		return vr_vcpu_acct(vm, idx, pkg);
	return vr_ovh_acct(vm, pkg);
}

/*
 * Which account pays for @t on package @pkg?  O(1): at most three hash
 * lookups, each behind a one-bit filter.  A vCPU thread in KVM_RUN is
 * found by KVM's own state; outside it, by its VR_KEY_VCPU entry (the
 * last vCPU it ran); the VMM's other threads by their process, or as a
 * registered task.
 */
static struct vr_acct *vr_task_acct(struct task_struct *t, unsigned int pkg)
{
	struct kvm_vcpu *vcpu = vr_task_vcpu(t);
	struct vr_key *k;
	struct vr_vm *vm;

	if (vcpu) {
		vm = vr_lookup(vcpu->kvm, VR_KEY_KVM);
		return vm ? vr_vcpu_or_ovh(vm, vr_vcpu_index(vm, vcpu), pkg) :
			    NULL;
	}
	if (READ_ONCE(vr_nr_tasks)) {
		k = vr_lookup_key(t);
		if (k && k->kind == VR_KEY_VCPU)
			return vr_vcpu_or_ovh(k->vm, k->idx, pkg);
		if (k && k->kind == VR_KEY_TASK)
			return vr_ovh_acct(k->vm, pkg);
	}
	if (t->mm) {
		vm = vr_lookup(t->mm, VR_KEY_MM);
		if (vm)
			return vr_ovh_acct(vm, pkg);
	}
	return NULL;
}

/*
 * The vCPU @idx of @vm runs on this thread: if that is news, hand the
 * thread (a reference) to the tracking work, which installs its
 * VR_KEY_VCPU entry.  One pending thread per vCPU; a later one is noted
 * at a later entry.
 */
static void vr_vcpu_thread_note(struct vr_vm *vm, u32 idx)
{
	struct vr_vcpu_thread *vt = &vm->threads[idx];

	if (likely(READ_ONCE(vt->task) == current) || READ_ONCE(vt->seen) ||
	    READ_ONCE(vr_vm_stopping))
		return;
	get_task_struct(current);
	if (cmpxchg(&vt->seen, NULL, current)) {
		/* Not the last reference: current is running. */
		put_task_struct(current);
		return;
	}
	vr_obj_get(VR_OBJ_TASKS);
	mod_delayed_work(system_wq, &vr_track_work, 0);
}

/* Note an untracked VM for the tracking work (vm.c). */
static void vr_vm_note(struct kvm *kvm)
{
	if (!READ_ONCE(vr_track_all) || READ_ONCE(vr_vm_stopping) ||
	    this_cpu_read(vr_seen_kvm))
		return;
	if (!kvm_get_kvm_safe(kvm))
		return;
	vr_obj_get(VR_OBJ_KVM_REFS);
	this_cpu_write(vr_seen_kvm, kvm);
	mod_delayed_work(system_wq, &vr_track_work, 0);
}

static void vr_vm_guest_entry(struct kvm_vcpu *vcpu, struct vr_cpu *c,
			      u64 now, unsigned int pkg)
{
	struct vr_acct *a;
	struct vr_vm *vm;
	u32 idx;

	if (unlikely(!READ_ONCE(vr_kvm_pn_ops)))
		WRITE_ONCE(vr_kvm_pn_ops, vcpu->preempt_notifier.ops);
	vm = vr_lookup(vcpu->kvm, VR_KEY_KVM);
	if (!vm) {
		vr_vm_note(vcpu->kvm);
		return;
	}
	idx = vr_vcpu_index(vm, vcpu);
	if (idx >= vm->nr_vcpus)
		return;
	vr_vcpu_thread_note(vm, idx);
	/* Both policies charge guest time to the vCPU. */
	a = vr_vcpu_acct(vm, idx, pkg);
	if (c->cur != a)
		vr_cpu_event(c, now, true, a);
}

static void vr_vm_guest_exit(struct kvm_vcpu *vcpu, struct vr_cpu *c,
			     u64 now, unsigned int pkg)
{
	struct vr_vm *vm = vr_lookup(vcpu->kvm, VR_KEY_KVM);
	struct vr_acct *a;

	if (!vm)
		return;
	if (READ_ONCE(vm->charge) == VMRAPL_CHARGE_GUEST) {
		a = vr_ovh_acct(vm, pkg);
		if (c->cur != a)
			vr_cpu_event(c, now, true, a);
	}
	/* Keep the mmap page fresh without a syscall, once per period. */
	if (READ_ONCE(vm->mapped))
		vr_gv_kick(vm, now);
}

/* What the engine's probes call (vmrapl.h). */
const struct vr_vm_ops vr_vm_probe_ops = {
	.task_acct = vr_task_acct,
	.guest_entry = vr_vm_guest_entry,
	.guest_exit = vr_vm_guest_exit,
};
