// SPDX-License-Identifier: GPL-2.0
/*
 * A VM's power limits: the operator's (VMRAPL_SET_VM_LIMIT and
 * VMRAPL_GET_VM_LIMIT on /dev/vmrapl) and the guest's own, written to its
 * power limit register (VMRAPL_VM_WRITE_MSR on the VM fd).  vmrapl keeps
 * them and shows them to the guest in that register; holding the VM
 * under the lower one is a controller's, which throttles the VM's threads
 * (Documentation/limits.rst).
 *
 * Context: ioctl (process) context.  SET writes the operator's limit
 * under vr_vm_mutex, then the VM's gv_lock: an attach that replaces a VM
 * tracked by track_all carries its limit over under the same mutex
 * (vm.c), so a limit set meanwhile is either carried over or refused with
 * ENOENT, never written to the replaced VM and lost.  GET pins the VM
 * (vr_vm_get_id()) and reads it under gv_lock alone; WRITE_MSR runs on
 * the VM fd, which holds the VM, under gv_lock alone.  gv_lock is raw and
 * innermost: nothing under it sleeps.  No lock is held across a copy from
 * or to userspace.
 */
#include <linux/capability.h>
#include <linux/uaccess.h>

#include "vm.h"

/*
 * MSR_PKG_POWER_LIMIT (Intel SDM, "RAPL Interfaces"): PL1 in bits 23:0,
 * PL2 in 55:32, each a power in the power unit (14:0), an enable (15), a
 * clamp (16) and a time window (23:17: Y in 4:0, Z in 6:5); the lock in
 * 63.  The other bits are reserved: a write that sets one #GPs.
 */
#define VR_PL_POWER_MASK	0x7fffULL
#define VR_PL1_ENABLE		BIT_ULL(15)
#define VR_PL1_CLAMP		BIT_ULL(16)
#define VR_PL1_TIME_SHIFT	17
#define VR_PL_TIME_MASK		0x7fULL
#define VR_POWER_LIMIT_LOCK	BIT_ULL(63)
#define VR_POWER_LIMIT_WRITABLE	(GENMASK_ULL(23, 0) | GENMASK_ULL(55, 32) | \
				 VR_POWER_LIMIT_LOCK)

/*
 * PL1's time window field for @us: 2^Y * (1 + Z/4) time units, the
 * longest such window not longer than @us (the shortest, one unit, for
 * less).
 */
static u64 vr_pl1_window(u64 us)
{
	u64 units = div_u64(us << VR_UNIT_TIME, USEC_PER_SEC);
	u64 best = 0, w;
	u32 y, z;

	for (y = 0; y < 32; y++) {
		for (z = 0; z < 4; z++) {
			w = (4ULL + z) << y;	/* four times the window */
			if (w <= units * 4)
				best = (u64)z << 5 | y;
		}
	}
	return best;
}

/*
 * The window of a time window field, in us, brought into the range an
 * operator's limit takes: a guest may write one time unit (976 us) or
 * 2^31 of them (24 days).
 */
static u64 vr_pl1_window_us(u64 field)
{
	u32 y = field & 0x1f, z = (field >> 5) & 3;
	u64 us = div_u64(((4ULL + z) << y) * USEC_PER_SEC,
			 4U << VR_UNIT_TIME);

	return clamp_t(u64, us, VMRAPL_LIMIT_MIN_WINDOW_US,
		       VMRAPL_LIMIT_MAX_WINDOW_US);
}

/*
 * MSR_PKG_POWER_LIMIT as the guest reads it: with an operator's limit,
 * locked, its PL1 enabled and clamped at the limit (in the guest's power
 * unit, at most what the field holds) over its window; without, what the
 * guest last wrote.  gv_lock held.
 */
u64 vr_power_limit_msr(struct vr_vm *vm)
{
	u64 units;

	lockdep_assert_held(&vm->gv_lock);
	if (!vm->limit_uw)
		return vm->guest_pl;
	units = div_u64((vm->limit_uw << VR_UNIT_POWER) + USEC_PER_SEC / 2,
			USEC_PER_SEC);
	units = clamp_t(u64, units, 1, VR_PL_POWER_MASK);
	return VR_POWER_LIMIT_LOCK | units | VR_PL1_ENABLE | VR_PL1_CLAMP |
	       vr_pl1_window(vm->limit_window_us) << VR_PL1_TIME_SHIFT;
}

/* The register's new value into the page, under its sequence count. */
static void vr_limit_page_update(struct vr_vm *vm)
{
	struct vmrapl_page *pg = vm->page;

	lockdep_assert_held(&vm->gv_lock);
	WRITE_ONCE(pg->seq, pg->seq + 1);
	/* Odd sequence before the value: pairs with the reader's rmb. */
	smp_wmb();
	pg->power_limit = vr_power_limit_msr(vm);
	/* The value before the even sequence: pairs with the reader's rmb. */
	smp_wmb();
	WRITE_ONCE(pg->seq, pg->seq + 1);
}

/*
 * Set @vm's operator limit (@uw 0: none) and publish it: READ_MSR and the
 * page answer the guest's reads of its power limit register with it.
 */
void vr_gv_set_limit(struct vr_vm *vm, u64 uw, u64 window_us)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&vm->gv_lock, flags);
	vm->limit_uw = uw;
	vm->limit_window_us = uw ? window_us : 0;
	vr_limit_page_update(vm);
	raw_spin_unlock_irqrestore(&vm->gv_lock, flags);
}

void vr_gv_get_limit(struct vr_vm *vm, struct vr_limits *l)
{
	unsigned long flags;
	u64 pl;

	raw_spin_lock_irqsave(&vm->gv_lock, flags);
	l->uw = vm->limit_uw;
	l->window_us = vm->limit_window_us;
	pl = vm->guest_pl;
	raw_spin_unlock_irqrestore(&vm->gv_lock, flags);

	l->state = l->uw ? VMRAPL_LIMIT_S_OPERATOR : 0;
	if (l->uw || (pl & VR_POWER_LIMIT_LOCK))
		l->state |= VMRAPL_LIMIT_S_LOCKED;
	l->guest_uw = 0;
	l->guest_window_us = 0;
	if (pl & VR_PL1_ENABLE) {
		/* A PL1 of 0 is held at the least the field says, one unit. */
		l->guest_uw = max_t(u64, pl & VR_PL_POWER_MASK, 1) *
			      USEC_PER_SEC >> VR_UNIT_POWER;
		l->guest_window_us = vr_pl1_window_us(pl >> VR_PL1_TIME_SHIFT &
						      VR_PL_TIME_MASK);
		l->state |= VMRAPL_LIMIT_S_GUEST;
	}
}

/* VMRAPL_VM_WRITE_MSR: 0 taken, 1 ignored (locked), or -errno. */
long vr_vm_write_msr(struct vr_vm *vm, void __user *argp)
{
	const struct vmrapl_reg *r;
	struct vmrapl_msr m;
	unsigned long flags;
	long ret = 0;

	if (copy_from_user(&m, argp, sizeof(m)))
		return -EFAULT;
	if (m.flags || m.reserved0 || m.vcpu >= vm->nr_vcpus)
		return -EINVAL;
	r = vr_reg_find(vm, m.index);
	if (!r)
		return -ENOENT;
	/* Read-only registers and reserved bits: the VMM injects #GP. */
	if (r->reg != VMRAPL_REG_POWER_LIMIT ||
	    (m.data & ~VR_POWER_LIMIT_WRITABLE))
		return -EINVAL;

	raw_spin_lock_irqsave(&vm->gv_lock, flags);
	if (vm->limit_uw || (vm->guest_pl & VR_POWER_LIMIT_LOCK)) {
		ret = 1;
	} else {
		vm->guest_pl = m.data;
		vr_limit_page_update(vm);
	}
	raw_spin_unlock_irqrestore(&vm->gv_lock, flags);
	return ret;
}

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
	if ((l.flags & ~VMRAPL_LIMIT_F_CLEAR) || l.state ||
	    l.guest_limit_uw || l.guest_window_us)
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
	struct vr_limits v;
	struct vr_vm *vm;
	int ret;

	/* The values and state are output only: a reused request works. */
	ret = vr_limit_in(&l, argp);
	if (ret)
		return ret;
	if (l.flags)
		return -EINVAL;

	vm = vr_vm_get_id(l.id);
	if (!vm)
		return -ENOENT;
	vr_gv_get_limit(vm, &v);
	vr_vm_put(vm);
	l.size = sizeof(l);
	l.limit_uw = v.uw;
	l.window_us = v.window_us;
	l.guest_limit_uw = v.guest_uw;
	l.guest_window_us = v.guest_window_us;
	l.state = v.state;
	if (copy_to_user(argp, &l, sizeof(l)))
		return -EFAULT;
	return 0;
}
