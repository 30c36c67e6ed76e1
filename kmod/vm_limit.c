// SPDX-License-Identifier: GPL-2.0
/*
 * The operator's power limits: VMRAPL_SET_VM_LIMIT and VMRAPL_GET_VM_LIMIT
 * on /dev/vmrapl.  vmrapl keeps a VM's limit and shows it to the guest in
 * its power limit register, locked; holding the VM under it is a
 * controller's, which throttles the VM's threads
 * (Documentation/limits.rst).
 *
 * Context: ioctl (process) context.  SET writes the limit under
 * vr_vm_mutex (then the VM's gv_lock, through vm_guest.c): an attach that
 * replaces a VM tracked by track_all carries its limit over under the
 * same mutex (vm.c), so a limit set meanwhile is either carried over or
 * refused with ENOENT, never written to the replaced VM and lost.  GET
 * pins the VM (vr_vm_get_id()) and reads it under gv_lock alone.  No
 * lock is held across a copy from or to userspace.
 */
#include <linux/capability.h>
#include <linux/uaccess.h>

#include "vm.h"

/* The struct from userspace, its common checks done. */
static int vr_limit_in(struct vmrapl_limit *l, void __user *argp)
{
	int ret = vr_copy_sized(l, sizeof(*l), argp);

	if (ret)
		return ret;
	if (l->reserved0 || !vr_zero(l->reserved, ARRAY_SIZE(l->reserved)))
		return -EINVAL;
	return 0;
}

long vr_set_vm_limit(void __user *argp)
{
	struct vmrapl_limit l;
	struct vr_vm *vm;
	int ret;

	/* A host-wide write: it throttles another user's VM. */
	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	ret = vr_limit_in(&l, argp);
	if (ret)
		return ret;
	if ((l.flags & ~VMRAPL_LIMIT_F_CLEAR) || l.state)
		return -EINVAL;
	if (l.flags & VMRAPL_LIMIT_F_CLEAR) {
		if (l.limit_uw || l.window_us)
			return -EINVAL;
	} else if (l.limit_uw < VMRAPL_LIMIT_MIN_UW ||
		   l.limit_uw > VMRAPL_LIMIT_MAX_UW ||
		   l.window_us < VMRAPL_LIMIT_MIN_WINDOW_US ||
		   l.window_us > VMRAPL_LIMIT_MAX_WINDOW_US) {
		return -EINVAL;
	}

	mutex_lock(&vr_vm_mutex);
	vm = vr_vm_id_locked(l.id);
	if (vm)
		vr_gv_set_limit(vm, l.limit_uw, l.window_us);
	mutex_unlock(&vr_vm_mutex);
	return vm ? 0 : -ENOENT;
}

long vr_get_vm_limit(void __user *argp)
{
	struct vmrapl_limit l;
	struct vr_vm *vm;
	int ret;

	/* limit_uw, window_us and state are output only: a reused request works. */
	ret = vr_limit_in(&l, argp);
	if (ret)
		return ret;
	if (l.flags)
		return -EINVAL;

	vm = vr_vm_get_id(l.id);
	if (!vm)
		return -ENOENT;
	vr_gv_get_limit(vm, &l.limit_uw, &l.window_us);
	vr_vm_put(vm);
	l.size = sizeof(l);
	l.state = l.limit_uw ? VMRAPL_LIMIT_S_OPERATOR : 0;
	if (copy_to_user(argp, &l, sizeof(l)))
		return -EFAULT;
	return 0;
}
