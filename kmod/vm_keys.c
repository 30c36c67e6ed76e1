// SPDX-License-Identifier: GPL-2.0
/*
 * Who pays for a thread: the writers of the probes' lookup table
 * (vr_keys, read in vm_probe.c).  A VM's entry, its VMM process's entry
 * while that process runs only one tracked VM, the overhead tasks a VMM
 * registers (VMRAPL_VM_ADD_TASK), and the thread that last ran each vCPU
 * (installed by the tracking work from what the kvm_entry probe noted).
 *
 * Context: process context, ioctl or the vr_track_work workqueue, with
 * vr_vm_mutex held for every change to vr_keys.  Task references let go
 * of are put after an RCU grace period, so that no probe still compares
 * a task against a freed one.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hash.h>
#include <linux/pid.h>
#include <linux/rcupdate.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "vm.h"

/* Entries added to another chain within a grace period: struct vr_key. */
unsigned long vr_key_early_moves;

void vr_key_add(struct vr_key *k, const void *key, u32 kind, struct vr_vm *vm)
{
	lockdep_assert_held(&vr_vm_mutex);
	if (k->was_linked &&
	    hash_ptr((void *)key, VR_HASH_BITS) != k->del_bucket &&
	    !poll_state_synchronize_rcu(k->del_gp)) {
		vr_key_early_moves++;
		pr_err_ratelimited("lookup entry moved to another chain within a grace period (%lu)\n",
				   vr_key_early_moves);
	}
	k->key = key;
	k->kind = kind;
	k->vm = vm;
	set_bit(hash_ptr((void *)key, VR_HASH_BITS), vr_filter);
	WRITE_ONCE(vr_filter_used, true);
	hash_add_rcu(vr_keys, &k->node, (unsigned long)key);
	vr_obj_get(VR_OBJ_KEYS);
}

void vr_key_del(struct vr_key *k)
{
	lockdep_assert_held(&vr_vm_mutex);
	hash_del_rcu(&k->node);
	k->del_gp = get_state_synchronize_rcu();
	k->del_bucket = hash_ptr((void *)k->key, VR_HASH_BITS);
	k->was_linked = true;
	vr_obj_put(VR_OBJ_KEYS);
}

/*
 * Take a vCPU's thread entry out of the table and free it after a grace
 * period: a probe may still be walking its chain.  vr_vm_mutex held.
 */
void vr_vcpu_key_drop(struct vr_vcpu_thread *vt)
{
	lockdep_assert_held(&vr_vm_mutex);
	vr_key_del(vt->key);
	kfree_rcu(vt->key, rcu);
	vt->key = NULL;
	WRITE_ONCE(vr_nr_tasks, vr_nr_tasks - 1);
}

/*
 * Clear the filter bits no key uses any more, never a live one, and
 * vr_filter_used with the last.
 */
void vr_filter_rebuild(void)
{
	static unsigned long live[BITS_TO_LONGS(1 << VR_HASH_BITS)];
	struct vr_key *k;
	unsigned int i;

	lockdep_assert_held(&vr_vm_mutex);
	bitmap_zero(live, 1 << VR_HASH_BITS);
	hash_for_each(vr_keys, i, k, node)
		__set_bit(hash_ptr((void *)k->key, VR_HASH_BITS), live);
	for (i = 0; i < ARRAY_SIZE(vr_filter); i++)
		WRITE_ONCE(vr_filter[i], live[i]);
	WRITE_ONCE(vr_filter_used, !bitmap_empty(live, 1 << VR_HASH_BITS));
}

/*
 * The VMM's other threads are the VM's overhead (VR_KEY_MM).  A process
 * that runs several VMs cannot tell whose they are: they are host time,
 * unless registered with ADD_TASK.  Called when a VM of @mm came or went:
 * the one VM of @mm gets the key, none when there are several.
 * vr_vm_mutex held.
 */
void vr_mm_owner_update(struct mm_struct *mm)
{
	struct vr_vm *vm, *only = NULL;
	int n = 0;

	lockdep_assert_held(&vr_vm_mutex);
	if (!mm)
		return;
	list_for_each_entry(vm, &vr_vms, list) {
		if (vm->kvm->mm != mm)
			continue;
		n++;
		only = vm;
		if (vm->k_mm.key) {
			vr_key_del(&vm->k_mm);
			vm->k_mm.key = NULL;
		}
	}
	if (n == 1)
		vr_key_add(&only->k_mm, mm, VR_KEY_MM, only);
}

/*
 * Install the threads the kvm_entry probe saw run @vm's vCPUs
 * (struct vr_vcpu_thread).  The references to let go of are added to
 * @old (room for @max, counted in *@nr) and put after an RCU grace
 * period by the caller, so that no probe still compares against a freed
 * task.  Returns false when @old is full (call again after emptying it).
 * vr_vm_mutex held.
 */
bool vr_vcpu_threads_install(struct vr_vm *vm, struct task_struct **old,
			     int *nr, int max)
{
	struct vr_vcpu_thread *vt;
	struct task_struct *t;
	struct vr_key *k;
	u32 i;

	lockdep_assert_held(&vr_vm_mutex);
	for (i = 0; i < vm->nr_vcpus; i++) {
		/* Each pass may release up to three references. */
		if (*nr + 3 > max)
			return false;
		vt = &vm->threads[i];
		t = xchg(&vt->seen, NULL);
		if (!t)
			continue;
		if (t == vt->task) {
			old[(*nr)++] = t;	/* already installed */
			continue;
		}
		rcu_read_lock();
		k = vr_lookup_key(t);
		rcu_read_unlock();
		if (k && k->kind == VR_KEY_VCPU) {
			/* It ran another vCPU before: it is this one's now. */
			struct vr_vcpu_thread *ot = &k->vm->threads[k->idx];

			old[(*nr)++] = ot->task;
			WRITE_ONCE(ot->task, NULL);
			vr_vcpu_key_drop(ot);
		} else if (k) {
			/* A registered overhead task stays one. */
			old[(*nr)++] = t;
			continue;
		}
		/*
		 * A new entry for the new thread, never the old one moved to
		 * the new thread's chain (struct vr_key).  Without memory the
		 * thread is let go of; a later kvm_entry notes it again.
		 */
		k = kzalloc(sizeof(*k), GFP_KERNEL);
		if (!k) {
			old[(*nr)++] = t;
			continue;
		}
		if (vt->task) {
			old[(*nr)++] = vt->task;
			vr_vcpu_key_drop(vt);
		}
		k->idx = i;
		vr_key_add(k, t, VR_KEY_VCPU, vm);
		vt->key = k;
		WRITE_ONCE(vt->task, t);
		WRITE_ONCE(vr_nr_tasks, vr_nr_tasks + 1);
	}
	return true;
}

/* Put the thread references vr_vcpu_threads_install() let go of. */
void vr_put_threads(struct task_struct **old, int nr)
{
	int i;

	if (!nr)
		return;
	synchronize_rcu();
	for (i = 0; i < nr; i++) {
		put_task_struct(old[i]);
		vr_obj_put(VR_OBJ_TASKS);
	}
}

/* May @t's CPU time be charged to a VM of the calling process? */
static bool vr_task_owned(struct task_struct *t)
{
	char name[TASK_COMM_LEN];
	bool own_mm;

	if (same_thread_group(t, current))
		return true;
	/*
	 * Before v6.4, vhost workers were kernel threads named
	 * "vhost-<owner pid>"; since then they are threads of the owner.
	 */
	if (!(t->flags & PF_KTHREAD))
		return false;
	snprintf(name, sizeof(name), "vhost-%d", task_tgid_nr(current));
	if (strncmp(t->comm, name, sizeof(name)))
		return false;
	/*
	 * The name alone is not proof: after the owner exits (its vhost fd
	 * kept open elsewhere), its pid can become another process's tgid.
	 * Such a worker runs in its owner's mm (kthread_use_mm()), which is
	 * the caller's only if the caller is the owner.
	 */
	task_lock(t);
	own_mm = current->mm && t->mm == current->mm;
	task_unlock(t);
	return own_mm;
}

long vr_vm_add_task(struct vr_vm *vm, void __user *argp)
{
	struct task_struct *t;
	struct vmrapl_task arg;
	struct vr_task *vt;
	struct pid *pid;
	long ret;

	if (copy_from_user(&arg, argp, sizeof(arg)))
		return -EFAULT;
	if (arg.flags || !vr_zero(arg.reserved, ARRAY_SIZE(arg.reserved)))
		return -EINVAL;
	if (!arg.tid || arg.tid > PID_MAX_LIMIT)
		return -ESRCH;
	pid = find_get_pid(arg.tid);
	t = pid ? get_pid_task(pid, PIDTYPE_PID) : NULL;
	put_pid(pid);
	if (!t)
		return -ESRCH;
	if (!vr_task_owned(t)) {
		ret = -EPERM;
		goto out_put_task;
	}
	vt = kzalloc(sizeof(*vt), GFP_KERNEL_ACCOUNT);
	if (!vt) {
		ret = -ENOMEM;
		goto out_put_task;
	}

	mutex_lock(&vr_vm_mutex);
	rcu_read_lock();
	ret = vr_lookup_key(t) ? -EEXIST : 0;
	rcu_read_unlock();
	if (!ret && vm->nr_tasks >= VR_MAX_TASKS)
		ret = -ENOSPC;
	if (!ret) {
		vt->task = t;
		vr_obj_get(VR_OBJ_TASKS);
		list_add(&vt->list, &vm->tasks);
		vm->nr_tasks++;
		WRITE_ONCE(vr_nr_tasks, vr_nr_tasks + 1);
		vr_key_add(&vt->key, t, VR_KEY_TASK, vm);
	}
	mutex_unlock(&vr_vm_mutex);
	if (!ret)
		return 0;
	kfree(vt);
out_put_task:
	put_task_struct(t);
	return ret;
}
