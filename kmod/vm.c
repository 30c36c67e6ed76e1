// SPDX-License-Identifier: GPL-2.0
/*
 * The lifecycle of a tracked VM: VMRAPL_ATTACH_VM and the VM fd it returns,
 * the automatic tracking of every KVM VM (track_all), and the unlink that
 * starts a VM's teardown; the release that hands its energy back to the
 * books is vm_release.c.  Who pays for which thread (the lookup table's
 * writers, ADD_TASK, vCPU threads) is vm_keys.c.
 *
 * Context: process context only, ioctl or the vr_track_work workqueue.
 * vr_vm_mutex serializes attach, detach, tracking and every write to the
 * probes' lookup table (vr_keys, vm_probe.c); a VM's lock (vr_vm.lock)
 * serializes the VM fd's ioctls that read or replace its topology, and is
 * never taken under vr_vm_mutex.  Nothing here runs in the probes: they
 * only read what vr_vm_link() published, under RCU.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/anon_inodes.h>
#include <linux/capability.h>
#include <linux/file.h>
#include <linux/hash.h>
#include <linux/kvm_host.h>
#include <linux/magic.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/pid.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/tracepoint.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>

#include "vm.h"

/* Serializes attach, detach, tracking and every change to vr_keys. */
DEFINE_MUTEX(vr_vm_mutex);
/* Every tracked VM, attached or not: under vr_vm_mutex. */
LIST_HEAD(vr_vms);
/* VM ids are never reused: under vr_vm_mutex. */
static u64 vr_next_id = 1;

static void vr_track_workfn(struct work_struct *w);
DECLARE_DELAYED_WORK(vr_track_work, vr_track_workfn);
/* Set at unload: the probes stop handing VMs to vr_track_work. */
bool vr_vm_stopping;

/*
 * The module that defines KVM's tracepoints, kvm.ko: the one whose
 * kvm_entry vmrapl probes.  Found at load (vr_vm_init()); vmrapl uses
 * kvm.ko's symbols, so it stays loaded while vmrapl is.
 */
static struct module *vr_kvm_mod;

/*
 * The KVM VM behind @f, if @f is a VM fd of the calling process; NULL for
 * anything else.  file_is_kvm() would compare f_op with KVM's own, but
 * upstream "KVM: Export KVM-internal symbols for sub-modules only" (v6.18)
 * exports it to kvm-amd and kvm-intel alone, so on every kernel vmrapl
 * proves it from what KVM_CREATE_VM builds, with exported API only:
 *
 *  - the file is on anon_inodefs: only the kernel makes files there
 *    (anon_inode_getfile() and friends), userspace cannot create, mount,
 *    link or rename one;
 *  - its name is "kvm-vm": the name is the creating caller's string
 *    constant, and only kvm_dev_ioctl_create_vm() passes this one (vCPUs
 *    are "kvm-vcpu:N", devices "kvm-<type>", guest_memfd "[kvm-gmem]",
 *    vmrapl's own VM files "[vmrapl-vm]");
 *  - its file_operations are kvm.ko's (vr_kvm_mod): a file of that name
 *    that some other module or a future part of the kernel makes fails
 *    closed.  Not f_op->owner: KVM leaves it NULL on 6.1 and sets it to
 *    kvm-amd or kvm-intel later; the ops themselves are kvm.ko's static
 *    data on every kernel.  So private_data is its struct kvm;
 *  - the VM belongs to the caller's mm: KVM refuses every VM ioctl from
 *    another mm, so a VMM attaches its own VM, and a VM whose process has
 *    exited (its fd kept alive elsewhere, the VM on its way out) is
 *    refused.
 *
 * Documentation/design.rst has the argument in full.  The caller's
 * reference on @f pins the VM.
 */
static struct kvm *vr_kvm_of_file(struct file *f)
{
	struct kvm *kvm;

	if (file_inode(f)->i_sb->s_magic != ANON_INODE_FS_MAGIC ||
	    strcmp(f->f_path.dentry->d_name.name, "kvm-vm"))
		return NULL;
	if (!vr_kvm_mod || !within_module((unsigned long)f->f_op, vr_kvm_mod))
		return NULL;
	kvm = f->private_data;
	if (!kvm || kvm->mm != current->mm)
		return NULL;
	return kvm;
}

/* Drop a reference on a KVM VM that vmrapl took (kvm_get_kvm_safe()). */
void vr_kvm_put(struct kvm *kvm)
{
	kvm_put_kvm(kvm);
	vr_obj_put(VR_OBJ_KVM_REFS);
}

static long vr_vm_set_policy(struct vr_vm *vm, void __user *argp)
{
	struct vmrapl_policy pol;

	if (copy_from_user(&pol, argp, sizeof(pol)))
		return -EFAULT;
	if (pol.flags & ~(VMRAPL_POLICY_F_CHARGE |
			  VMRAPL_POLICY_F_GUEST_PERIOD) ||
	    pol.reserved0 || !vr_zero(pol.reserved, ARRAY_SIZE(pol.reserved)))
		return -EINVAL;
	if ((pol.flags & VMRAPL_POLICY_F_CHARGE) &&
	    pol.charge != VMRAPL_CHARGE_THREAD &&
	    pol.charge != VMRAPL_CHARGE_GUEST)
		return -EINVAL;
	if ((pol.flags & VMRAPL_POLICY_F_GUEST_PERIOD) &&
	    (pol.guest_period_us < VMRAPL_GUEST_PERIOD_MIN_US ||
	     pol.guest_period_us > VMRAPL_GUEST_PERIOD_MAX_US))
		return -EINVAL;
	/* Finer than unpriv_period_ms takes CAP_PERFMON (security.rst). */
	if ((pol.flags & VMRAPL_POLICY_F_GUEST_PERIOD) && !vm->exact &&
	    (u64)pol.guest_period_us * NSEC_PER_USEC < vr_unpriv_period_ns())
		return -EPERM;
	if (pol.flags & VMRAPL_POLICY_F_CHARGE)
		WRITE_ONCE(vm->charge, pol.charge);
	if (pol.flags & VMRAPL_POLICY_F_GUEST_PERIOD)
		WRITE_ONCE(vm->guest_period_ns,
			   (u64)pol.guest_period_us * NSEC_PER_USEC);
	return 0;
}

static long vr_vm_ioctl(struct file *file, unsigned int cmd,
			unsigned long arg)
{
	struct vr_vm *vm = file->private_data;
	void __user *argp = (void __user *)arg;

	switch (cmd) {
	case VMRAPL_VM_ADD_TASK:
		return vr_vm_add_task(vm, argp);
	case VMRAPL_VM_READ_MSR:
		return vr_vm_read_msr(vm, argp);
	case VMRAPL_VM_WRITE_MSR:
		return vr_vm_write_msr(vm, argp);
	case VMRAPL_VM_SET_POLICY:
		return vr_vm_set_policy(vm, argp);
	case VMRAPL_VM_GET_STATS:
		return vr_vm_get_stats(vm, argp);
	case VMRAPL_VM_SET_TOPOLOGY:
		return vr_vm_set_topology(vm, argp);
	case VMRAPL_VM_GET_STATE:
		return vr_vm_get_state(vm, argp);
	case VMRAPL_VM_SET_STATE:
		return vr_vm_set_state(vm, argp);
	default:
		return -ENOTTY;
	}
}

/* A VM no probe or reader can reach: its memory (vm_release.c). */
void vr_vm_free(struct vr_vm *vm)
{
	vr_gv_free(vm);
	if (vm->acct)
		vr_obj_put(VR_OBJ_ACCTS);
	kvfree(vm->acct);
	kvfree(vm->stats_cache);
	kvfree(vm->threads);
	kfree(vm);
	vr_obj_put(VR_OBJ_VMS);
}

/*
 * @exact: the VM's views are exact (a VMM with CAP_PERFMON, or a VM only
 * the host reads); otherwise they are coarsened (struct vr_vm.exact).
 */
static struct vr_vm *vr_vm_alloc(struct kvm *kvm, u32 nr_vcpus, u32 regset,
				 u32 esu, bool exact)
{
	struct vr_vm *vm;

	vm = kzalloc(sizeof(*vm), GFP_KERNEL_ACCOUNT);
	if (!vm)
		return NULL;
	vr_obj_get(VR_OBJ_VMS);
	kref_init(&vm->ref);
	INIT_LIST_HEAD(&vm->tasks);
	mutex_init(&vm->lock);
	vm->kvm = kvm;
	vm->nr_vcpus = nr_vcpus;
	vm->regset = regset;
	vm->esu = esu;
	vm->exact = exact;
	vm->stats_cache = kvcalloc(nr_vcpus + 1, sizeof(*vm->stats_cache),
				   GFP_KERNEL_ACCOUNT);
	vm->threads = kvcalloc(nr_vcpus, sizeof(*vm->threads),
			       GFP_KERNEL_ACCOUNT);
	vm->acct = kvcalloc((size_t)(nr_vcpus + 1) * vr_npk(),
			    sizeof(*vm->acct), GFP_KERNEL_ACCOUNT);
	if (vm->acct)
		vr_obj_get(VR_OBJ_ACCTS);
	if (!vm->acct || !vm->stats_cache || !vm->threads || vr_gv_init(vm)) {
		vr_vm_free(vm);
		return NULL;
	}
	return vm;
}

/* Make @vm visible to the probes.  vr_vm_mutex held. */
static void vr_vm_link(struct vr_vm *vm)
{
	lockdep_assert_held(&vr_vm_mutex);
	vm->id = vr_next_id++;
	list_add_tail(&vm->list, &vr_vms);
	vr_key_add(&vm->k_kvm, vm->kvm, VR_KEY_KVM, vm);
	vr_mm_owner_update(vm->kvm->mm);
}

/* Hide @vm from the probes and from the list.  vr_vm_mutex held. */
static void vr_vm_unlink(struct vr_vm *vm)
{
	struct vr_task *vt;
	u32 i;

	lockdep_assert_held(&vr_vm_mutex);
	list_del(&vm->list);
	vr_key_del(&vm->k_kvm);
	if (vm->k_mm.key)
		vr_key_del(&vm->k_mm);
	vm->k_mm.key = NULL;
	vr_mm_owner_update(vm->kvm->mm);
	list_for_each_entry(vt, &vm->tasks, list)
		vr_key_del(&vt->key);
	WRITE_ONCE(vr_nr_tasks, vr_nr_tasks - vm->nr_tasks);
	for (i = 0; i < vm->nr_vcpus; i++)
		if (vm->threads[i].task)
			vr_vcpu_key_drop(&vm->threads[i]);
	vr_filter_rebuild();
}

static int vr_vm_release(struct inode *inode, struct file *file)
{
	struct vr_vm *vm = file->private_data;

	mutex_lock(&vr_vm_mutex);
	vr_vm_unlink(vm);
	mutex_unlock(&vr_vm_mutex);
	vr_vm_put(vm);
	return 0;
}

static const struct file_operations vr_vm_fops = {
	.owner = THIS_MODULE,
	.release = vr_vm_release,
	.unlocked_ioctl = vr_vm_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = vr_vm_mmap,
	.llseek = noop_llseek,
};

static struct vr_vm *vr_vm_find(struct kvm *kvm)
{
	struct vr_vm *vm;

	lockdep_assert_held(&vr_vm_mutex);
	list_for_each_entry(vm, &vr_vms, list)
		if (vm->kvm == kvm)
			return vm;
	return NULL;
}

/* The tracked VM @id, or NULL; vr_vm_mutex held. */
struct vr_vm *vr_vm_id_locked(u64 id)
{
	struct vr_vm *vm;

	lockdep_assert_held(&vr_vm_mutex);
	list_for_each_entry(vm, &vr_vms, list)
		if (vm->id == id)
			return vm;
	return NULL;
}

/*
 * The tracked VM @id with a reference (vr_vm_put() it), or NULL.  The
 * host-wide ioctls' lookup: vr_vm_mutex is let go before the caller
 * takes anything of the VM's.
 */
struct vr_vm *vr_vm_get_id(u64 id)
{
	struct vr_vm *vm;

	mutex_lock(&vr_vm_mutex);
	vm = vr_vm_id_locked(id);
	if (vm)
		kref_get(&vm->ref);
	mutex_unlock(&vr_vm_mutex);
	return vm;
}

long vr_attach_vm(void __user *argp)
{
	struct vr_vm *vm, *old = NULL;
	struct vr_limits lim;
	struct vmrapl_attach a;
	struct kvm *kvm;
	struct file *f;
	long ret;
	int fd;

	ret = vr_copy_sized(&a, sizeof(a), argp);
	if (ret)
		return ret;
	if ((a.flags & ~VMRAPL_ATTACH_F_VCPU_ID) ||
	    !vr_zero(a.reserved, ARRAY_SIZE(a.reserved)))
		return -EINVAL;
	if (!a.nr_vcpus || a.nr_vcpus > VMRAPL_MAX_VCPUS)
		return -EINVAL;
	if (a.regset != VMRAPL_REGSET_INTEL && a.regset != VMRAPL_REGSET_AMD)
		return -EINVAL;
	if (!a.esu)
		a.esu = VMRAPL_DEFAULT_ESU;
	if (a.esu > 31)
		return -EINVAL;

	f = fget(a.kvm_fd);
	if (!f)
		return -EBADF;
	vr_obj_get(VR_OBJ_KVM_REFS);
	kvm = vr_kvm_of_file(f);
	if (!kvm) {
		ret = -EINVAL;
		goto err_put_file;
	}
	vm = vr_vm_alloc(kvm, a.nr_vcpus, a.regset, a.esu, perfmon_capable());
	if (!vm) {
		ret = -ENOMEM;
		goto err_put_file;
	}
	vm->kvm_file = f;
	vm->attached = true;
	vm->by_id = a.flags & VMRAPL_ATTACH_F_VCPU_ID;
	vm->pid = task_tgid_nr(current);
	get_task_comm(vm->comm, current->group_leader);

	mutex_lock(&vr_vm_mutex);
	old = vr_vm_find(vm->kvm);
	if (old && old->attached) {
		mutex_unlock(&vr_vm_mutex);
		ret = -EEXIST;
		goto err_free_vm;
	}
	/*
	 * An auto-tracked VM becomes an attached one with fresh counters,
	 * and keeps its power limit: attaching must not lift it.
	 */
	if (old) {
		vr_gv_get_limit(old, &lim);
		vr_gv_set_limit(vm, lim.uw, lim.window_us);
		vr_vm_unlink(old);
	}
	vr_vm_link(vm);
	mutex_unlock(&vr_vm_mutex);
	if (old)
		vr_vm_put(old);

	fd = anon_inode_getfd("[vmrapl-vm]", &vr_vm_fops, vm,
			      O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		mutex_lock(&vr_vm_mutex);
		vr_vm_unlink(vm);
		mutex_unlock(&vr_vm_mutex);
		vr_vm_put(vm);	/* drops the file too */
		return fd;
	}
	return fd;

err_free_vm:
	vr_vm_free(vm);
err_put_file:
	fput(f);
	vr_obj_put(VR_OBJ_KVM_REFS);
	return ret;
}

/* Start tracking a VM seen at kvm_entry; consumes the reference. */
static void vr_track_kvm(struct kvm *kvm)
{
	struct task_struct *t;
	struct vr_vm *vm;
	struct pid *pid;

	mutex_lock(&vr_vm_mutex);
	if (vr_vm_find(kvm) || vr_vm_stopping) {
		mutex_unlock(&vr_vm_mutex);
		vr_kvm_put(kvm);
		return;
	}
	vm = vr_vm_alloc(kvm, max(1, READ_ONCE(kvm->created_vcpus)),
			 VMRAPL_REGSET_INTEL, VMRAPL_DEFAULT_ESU, true);
	if (!vm) {
		mutex_unlock(&vr_vm_mutex);
		vr_kvm_put(kvm);
		return;
	}
	vm->pid = kvm->userspace_pid;
	pid = find_get_pid(vm->pid);
	t = pid ? get_pid_task(pid, PIDTYPE_PID) : NULL;
	put_pid(pid);
	if (t) {
		get_task_comm(vm->comm, t);
		put_task_struct(t);
	}
	vr_vm_link(vm);
	mutex_unlock(&vr_vm_mutex);
}

/*
 * Adopt the VMs the probes saw, and let go of auto-tracked VMs whose last
 * user is gone (only our reference is left).
 */
static void vr_track_workfn(struct work_struct *w)
{
	struct task_struct *old[16];
	struct vr_vm *vm, *tmp;
	bool any = false, done;
	LIST_HEAD(dead);
	int nr;
	struct kvm *kvm;
	int cpu;

	for_each_possible_cpu(cpu) {
		kvm = xchg(per_cpu_ptr(&vr_seen_kvm, cpu), NULL);
		if (kvm)
			vr_track_kvm(kvm);
	}

	/* The threads the probes saw run vCPUs. */
	do {
		done = true;
		nr = 0;
		mutex_lock(&vr_vm_mutex);
		list_for_each_entry(vm, &vr_vms, list)
			if (!vr_vcpu_threads_install(vm, old, &nr,
						     ARRAY_SIZE(old))) {
				done = false;
				break;
			}
		if (nr)
			vr_filter_rebuild();
		mutex_unlock(&vr_vm_mutex);
		vr_put_threads(old, nr);
	} while (!done);

	mutex_lock(&vr_vm_mutex);
	list_for_each_entry_safe(vm, tmp, &vr_vms, list) {
		if (vm->attached)
			continue;
		if (refcount_read(&vm->kvm->users_count) > 1) {
			any = true;
			continue;
		}
		vr_vm_unlink(vm);
		list_add(&vm->list, &dead);
	}
	mutex_unlock(&vr_vm_mutex);
	list_for_each_entry_safe(vm, tmp, &dead, list)
		vr_vm_put(vm);

	/* Let go of a finished VM soon: our reference keeps its memory. */
	if (any && !READ_ONCE(vr_vm_stopping))
		schedule_delayed_work(&vr_track_work, HZ / 5);
}

bool vr_vm_any(void)
{
	return !list_empty(&vr_vms);
}

static int vr_kvm_mod_note(struct notifier_block *nb, unsigned long val,
			   void *data)
{
	struct tp_module *tp_mod = data;

	if (val == MODULE_STATE_COMING &&
	    within_module((unsigned long)&__tracepoint_kvm_entry, tp_mod->mod))
		vr_kvm_mod = tp_mod->mod;
	return NOTIFY_OK;
}

/*
 * Find kvm.ko among the modules that define tracepoints: registering the
 * notifier replays every loaded one.  KVM built into the kernel has no
 * module to prove a VM fd by: ATTACH_VM is refused there (vr_kvm_of_file()),
 * and track_all still accounts every VM.
 */
static int vr_kvm_mod_find(void)
{
	struct notifier_block nb = { .notifier_call = vr_kvm_mod_note };
	int ret;

	vr_kvm_mod = NULL;
	if (!IS_MODULE(CONFIG_KVM)) {
		pr_warn("KVM is built into the kernel: ATTACH_VM cannot prove a VM fd and is refused\n");
		return 0;
	}
	ret = register_tracepoint_module_notifier(&nb);
	if (ret)
		return ret;
	unregister_tracepoint_module_notifier(&nb);
	if (!vr_kvm_mod) {
		pr_err("kvm_entry's module not found among the tracepoint modules\n");
		return -ENODEV;
	}
	return 0;
}

int vr_vm_init(void)
{
	vr_vm_stopping = false;
	vr_vm_release_init();
	return vr_kvm_mod_find();
}

/* Before the probes go: forget every VM (attached ones hold the module). */
void vr_vm_exit(void)
{
	struct vr_vm *vm, *tmp;
	LIST_HEAD(dead);

	WRITE_ONCE(vr_vm_stopping, true);
	cancel_delayed_work_sync(&vr_track_work);
	mutex_lock(&vr_vm_mutex);
	list_for_each_entry_safe(vm, tmp, &vr_vms, list) {
		vr_vm_unlink(vm);
		list_add(&vm->list, &dead);
	}
	mutex_unlock(&vr_vm_mutex);
	list_for_each_entry_safe(vm, tmp, &dead, list)
		vr_vm_put(vm);
	/* Every VM is dead now: release them while the engine runs. */
	vr_vm_release_flush();
}

/* After the probes are gone: drop the references they left behind. */
void vr_vm_drain_seen(void)
{
	struct kvm *kvm;
	int cpu;

	/* A probe may have queued the work after vr_vm_exit() cancelled it. */
	cancel_delayed_work_sync(&vr_track_work);
	for_each_possible_cpu(cpu) {
		kvm = xchg(per_cpu_ptr(&vr_seen_kvm, cpu), NULL);
		if (kvm)
			vr_kvm_put(kvm);
	}
}

