/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every difference between the kernels vmrapl supports lives here.  Each
 * branch names the upstream change it follows.  Supported window: Linux 6.1
 * up to and including 7.3 (Debian 12's kernel, its 6.12 backport, and
 * trixie-backports' 7.x kernels).
 */
#ifndef _VMRAPL_COMPAT_H
#define _VMRAPL_COMPAT_H

#include <linux/topology.h>

/*
 * The window itself: Kbuild matches the kernel's version against
 * dkms.conf's BUILD_EXCLUSIVE_KERNEL, the one place the window is written,
 * and defines VMRAPL_KERNEL_SUPPORTED inside it.
 */
#ifndef VMRAPL_KERNEL_SUPPORTED
#error "vmrapl supports Linux 6.1 to 7.3; this kernel is outside that window"
#endif

/*
 * Dies per package.  The v6.9 x86 topology rework ("x86/cpu/topology:
 * Rename topology_max_die_per_package()") renamed the helper; Kbuild
 * probes asm/topology.h for the new name.
 */
#ifdef VMRAPL_HAVE_MAX_DIES_PER_PACKAGE
#define vr_max_dies_per_package()	topology_max_dies_per_package()
#else
#define vr_max_dies_per_package()	topology_max_die_per_package()
#endif

/*
 * kvm_entry tracepoint.  Upstream "KVM: x86: Plumb "force_immediate_exit"
 * into kvm_entry() tracepoint" (v6.9) added a second argument, in the same
 * series that gave kvm_x86_ops.vcpu_run() a second parameter.  Both were
 * backported to the 6.1 stable series (Debian's 6.1.0 kernels have them, with
 * vcpu_run() taking "u64 run_flags"), so the kernel version cannot tell.
 * Kbuild looks at vcpu_run() in asm/kvm_host.h and defines
 * VMRAPL_KVM_ENTRY_HAS_FORCE_EXIT when it takes a second parameter.
 */
#ifdef VMRAPL_KVM_ENTRY_HAS_FORCE_EXIT
#define VR_KVM_ENTRY_PROTO	void *data, struct kvm_vcpu *vcpu, \
				bool force_immediate_exit
#else
#define VR_KVM_ENTRY_PROTO	void *data, struct kvm_vcpu *vcpu
#endif

/*
 * VMA flags.  Upstream "mm: introduce vma->vm_flags wrapper functions"
 * (v6.3) made vm_flags read-only outside the helpers; Kbuild probes
 * linux/mm.h for vm_flags_clear().
 */
#ifdef VMRAPL_HAVE_VM_FLAGS_CLEAR
#define vr_vm_flags_clear(vma, flags)	vm_flags_clear(vma, flags)
#else
#define vr_vm_flags_clear(vma, flags)	((vma)->vm_flags &= ~(flags))
#endif

/*
 * Timer callbacks.  Upstream "treewide, timers: Rename from_timer() to
 * timer_container_of()" (v6.16) removed the old name; Kbuild probes
 * linux/timer.h for the new one.  (timer_delete_sync(), from "timers:
 * Rename del_timer_sync() to timer_delete_sync()" in v6.2, is in Debian's
 * 6.1 too and needs no branch.)
 */
#ifdef VMRAPL_HAVE_TIMER_CONTAINER_OF
#define vr_timer_container_of(var, t, field)	timer_container_of(var, t, field)
#else
#define vr_timer_container_of(var, t, field)	from_timer(var, t, field)
#endif

/*
 * 64-bit MSR reads.  Upstream "x86/msr: Rename 'rdmsrl_safe()' to
 * 'rdmsrq_safe()'" and "x86/msr: Rename 'rdmsrl_safe_on_cpu()' to
 * 'rdmsrq_safe_on_cpu()'" (v6.16) removed the old names; Kbuild probes
 * asm/msr.h for rdmsrq_safe.
 */
#ifdef VMRAPL_HAVE_RDMSRQ
#define vr_rdmsr_safe(msr, p)			rdmsrq_safe(msr, p)
#define vr_rdmsr_safe_on_cpu(cpu, msr, p)	rdmsrq_safe_on_cpu(cpu, msr, p)
#else
#define vr_rdmsr_safe(msr, p)			rdmsrl_safe(msr, p)
#define vr_rdmsr_safe_on_cpu(cpu, msr, p)	rdmsrl_safe_on_cpu(cpu, msr, p)
#endif

#endif /* _VMRAPL_COMPAT_H */
