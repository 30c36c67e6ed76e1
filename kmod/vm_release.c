// SPDX-License-Identifier: GPL-2.0
/*
 * The release of a VM whose last reference is gone: the dead list, the
 * release work that takes a batch of VMs off every CPU and package at
 * once, the debug sweep that checks nothing still points at them
 * (check_release), and the free.
 *
 * Context: vr_vm_put() and vr_vm_release_flush() in process context with
 * no vmrapl lock held (the put may wait for the work); the rest in the
 * release work (system_wq), which takes no VM-layer lock: a dead VM is
 * unreachable (unlinked under vr_vm_mutex, out of every probe's reach
 * after synchronize_rcu()).  The engine's close_lock and per-CPU locks
 * are taken only inside vr_engine_release() and vr_engine_sweep().
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/file.h>
#include <linux/jiffies.h>
#include <linux/llist.h>
#include <linux/poison.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "vm.h"

/*
 * VMs whose last reference is gone wait on vr_dead_vms for the release
 * work, which takes the whole batch off every CPU and package at once
 * (vr_engine_release()) and frees it.  One batch per VR_RELEASE_GAP_MS at
 * most: however fast userspace creates and closes VMs, or attaches and
 * closes them from many threads, a package's timer CPU gets at most one
 * release IPI per gap (security.rst).
 */
#define VR_RELEASE_GAP_MS	20
/*
 * Back-pressure: past this many dead VMs not yet freed, the put that adds
 * one waits until the work has freed half of them.  Without it, a storm
 * of attach/close faster than the work frees would pile up dead VMs (and
 * their memory) without bound, as a slow (KASAN) kernel showed.
 */
#define VR_RELEASE_MAX_DEAD	256
static LLIST_HEAD(vr_dead_vms);
static atomic_t vr_nr_dead;
static DECLARE_WAIT_QUEUE_HEAD(vr_release_wq);
/* jiffies before which no batch starts: the release work writes it. */
static unsigned long vr_release_next;
static void vr_release_workfn(struct work_struct *w);
static DECLARE_DELAYED_WORK(vr_release_work, vr_release_workfn);

/*
 * The VM's last reference is gone: queue it for the release work.
 * Process context, no vmrapl lock held (vr_vm_put()): it may wait.
 */
static void vr_vm_finish(struct kref *ref)
{
	struct vr_vm *vm = container_of(ref, struct vr_vm, ref);
	long delay = (long)(READ_ONCE(vr_release_next) - jiffies);
	int dead;

	llist_add(&vm->dead, &vr_dead_vms);
	dead = atomic_inc_return(&vr_nr_dead);
	/* Already pending: it takes this VM too.  Never more than the gap. */
	queue_delayed_work(system_wq, &vr_release_work,
			   clamp_t(long, delay, 0,
				   msecs_to_jiffies(VR_RELEASE_GAP_MS)));
	if (dead > VR_RELEASE_MAX_DEAD)
		wait_event(vr_release_wq, atomic_read(&vr_nr_dead) <=
			   VR_RELEASE_MAX_DEAD / 2);
}

/* The references a released VM held, and the VM itself. */
static void vr_vm_free_dead(struct vr_vm *vm)
{
	struct vr_task *vt, *tmp;
	u32 i;

	list_for_each_entry_safe(vt, tmp, &vm->tasks, list) {
		put_task_struct(vt->task);
		vr_obj_put(VR_OBJ_TASKS);
		kfree(vt);
	}
	/* No probe reaches the VM any more: nothing is noted meanwhile. */
	for (i = 0; i < vm->nr_vcpus; i++) {
		struct task_struct *t[2] = { vm->threads[i].task,
					     xchg(&vm->threads[i].seen, NULL) };
		int j;

		for (j = 0; j < 2; j++) {
			if (!t[j])
				continue;
			put_task_struct(t[j]);
			vr_obj_put(VR_OBJ_TASKS);
		}
	}
	if (vm->kvm_file) {
		fput(vm->kvm_file);
		vr_obj_put(VR_OBJ_KVM_REFS);
	} else {
		vr_kvm_put(vm->kvm);
	}
	vr_vm_free(vm);
}

static struct vr_acct_range vr_vm_accts(const struct vr_vm *vm)
{
	return (struct vr_acct_range){
		vm->acct, vm->acct + (size_t)(vm->nr_vcpus + 1) * vr_npk()
	};
}

/* Releases the debug sweep found wrong (vr_vm_swept()); the work's. */
unsigned long vr_release_stale;

/*
 * check_release: after vr_engine_release(), nothing may point at the VM's
 * accounts any more.  What the sweep finds is reported and put right where
 * it can be; a VM still on a pending list is leaked rather than freed (the
 * unload then reports it).  The accounts are poisoned before they are
 * freed, so that a late reader sees garbage, not plausible energy.
 */
static bool vr_vm_swept(struct vr_vm *vm)
{
	struct vr_acct_range r = vr_vm_accts(vm);
	unsigned int n = READ_ONCE(vr_inject_stale);
	char why[64] = "";
	bool inject;
	int ret;

	inject = n && cmpxchg(&vr_inject_stale, n, n - 1) == n;
	ret = vr_engine_sweep(&r, inject, why, sizeof(why));
	if (ret != VR_SWEEP_CLEAN) {
		vr_release_stale++;
		pr_err("release of VM %llu: %s; %s\n", vm->id, why,
		       ret == VR_SWEEP_STUCK ? "leaked rather than freed" :
		       "put right");
		if (ret == VR_SWEEP_STUCK)
			return false;
	}
	memset(vm->acct, POISON_FREE,
	       (size_t)(vm->nr_vcpus + 1) * vr_npk() * sizeof(*vm->acct));
	return true;
}

/*
 * Finish the dead VMs: wait until no probe can reach them, take their
 * accounts off every CPU, close each package once so that nothing of
 * them stays pending, then free them.  Their energy stays in the package
 * totals.  Workqueue context, no vmrapl lock held.
 */
static void vr_release_workfn(struct work_struct *w)
{
	struct llist_node *batch = llist_del_all(&vr_dead_vms);
	struct vr_acct_range one, *r;
	struct vr_vm *vm, *tmp;
	unsigned int n = 0;

	if (!batch)
		return;
	WRITE_ONCE(vr_release_next,
		   jiffies + msecs_to_jiffies(VR_RELEASE_GAP_MS));
	llist_for_each_entry(vm, batch, dead)
		n++;
	synchronize_rcu();
	/* No probe can queue the page's work again: let it finish first. */
	llist_for_each_entry(vm, batch, dead)
		cancel_work_sync(&vm->gv_work);
	r = kmalloc_array(n, sizeof(*r), GFP_KERNEL);
	if (r) {
		n = 0;
		llist_for_each_entry(vm, batch, dead)
			r[n++] = vr_vm_accts(vm);
		vr_engine_release(r, n);
		kfree(r);
	} else {
		/* Without memory, one VM at a time: more IPIs, same books. */
		llist_for_each_entry(vm, batch, dead) {
			one = vr_vm_accts(vm);
			vr_engine_release(&one, 1);
		}
	}
	llist_for_each_entry_safe(vm, tmp, batch, dead)
		if (!READ_ONCE(vr_check_release) || vr_vm_swept(vm))
			vr_vm_free_dead(vm);
	atomic_sub(n, &vr_nr_dead);
	wake_up_all(&vr_release_wq);
}

/*
 * Drop a reference: the list's (after vr_vm_unlink()) or a reader's
 * (vr_get_vm_stats()).  The last one queues the VM for the release work.
 * Process context, no vmrapl lock held.
 */
void vr_vm_put(struct vr_vm *vm)
{
	kref_put(&vm->ref, vr_vm_finish);
}

/* vr_vm_init(): no batch is held back at load. */
void vr_vm_release_init(void)
{
	/* jiffies does not start at 0 (INITIAL_JIFFIES). */
	vr_release_next = jiffies;
}

/* vr_vm_exit(): release every dead VM now, while the engine runs. */
void vr_vm_release_flush(void)
{
	mod_delayed_work(system_wq, &vr_release_work, 0);
	flush_delayed_work(&vr_release_work);
}
