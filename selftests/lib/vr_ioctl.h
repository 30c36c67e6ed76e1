/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Raw /dev/vmrapl ioctls on plain file descriptors.  The tests keep these
 * on purpose rather than libvmrapl: they close, dup and poke the vmrapl VM
 * fd themselves, send values the library would refuse or correct, and must
 * not get the page mapping vmrapl_attach() adds (the leak and scale tests
 * count what one attach costs).  VMRAPL_TEST_INJECT has no library call.
 */
#ifndef _VR_IOCTL_H
#define _VR_IOCTL_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/vmrapl.h>

/* open("/dev/vmrapl"): the fd, or -1 with errno. */
int vr_open_dev(void);
/* GET_INFO on a fresh fd, no ABI check (vmrapl_open() refuses another ABI). */
int vr_get_info(struct vmrapl_info *info);
/* ATTACH_VM: the vmrapl VM fd, or -errno. */
int vr_attach(int devfd, int kvm_fd, int nr_vcpus, int regset, int esu);
int vr_get_stats(int vmfd, struct vmrapl_stats *st,
		 struct vmrapl_vcpu_stats *vcpus, int nr_vcpus);
/* SET_POLICY with the caller's flags as they are. */
int vr_set_policy(int vmfd, uint32_t flags, uint32_t charge,
		  uint32_t period_us);
/* TEST_INJECT (source=test): add @units to, or with @set set, a counter. */
int vr_inject(int pkg, int dom, uint64_t units, bool set);

#endif /* _VR_IOCTL_H */
