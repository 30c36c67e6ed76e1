/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * vmrapl: per-VM virtual RAPL energy counters for KVM.
 *
 * Protocol
 * --------
 * 1. A VMM opens /dev/vmrapl and may call VMRAPL_GET_INFO to learn the ABI
 *    version, the feature flags, the host's packages and the energy source.
 *    New capabilities are announced through VMRAPL_INFO_F_* bits, never by
 *    bumping the ABI version.
 * 2. VMRAPL_ATTACH_VM takes the fd of a KVM VM (from KVM_CREATE_VM) and
 *    returns a new "VM fd".  A KVM VM can be attached once; closing the VM
 *    fd detaches it, finalizes its accounting and drops every reference.
 * 3. On the VM fd, the VMM describes its virtual topology
 *    (VMRAPL_VM_SET_TOPOLOGY), optionally registers overhead tasks such as
 *    I/O threads or vhost workers (VMRAPL_VM_ADD_TASK), and chooses the
 *    charge policy and guest view (VMRAPL_VM_SET_POLICY).
 * 4. The VMM installs a KVM userspace MSR filter (KVM_X86_SET_MSR_FILTER,
 *    KVM_CAP_X86_USER_SPACE_MSR with KVM_MSR_EXIT_REASON_FILTER) that makes
 *    guest accesses to the RAPL MSRs exit, and answers each
 *    KVM_EXIT_X86_RDMSR with VMRAPL_VM_READ_MSR or, without a syscall, from
 *    the read-only page obtained by mmap() of the VM fd.
 * 5. VMRAPL_VM_GET_STATS reports exact per-vCPU and per-virtual-package
 *    energy.  VMRAPL_VM_GET_STATE/SET_STATE carry the guest-visible counters
 *    across a live migration, in the spirit of KVM_GET_CLOCK/KVM_SET_CLOCK.
 *
 * Conventions: every struct has only __u32/__u64 fields and no implicit
 * padding.  Every "flags" and "reserved" field must be zero unless a flag is
 * defined for it; unknown flags are rejected with EINVAL.  Structs that may
 * grow start with a "size" field that userspace sets to sizeof() of the
 * struct it was built with: a smaller size than the first published layout
 * is EINVAL, a larger one is accepted only when the extra bytes are zero
 * (E2BIG otherwise).  Unknown ioctls fail with ENOTTY.
 *
 * Energy reported by GET_STATS is in microjoules; internally vmrapl keeps
 * exact accumulators in units of 2^-24 J and converts with the remainder
 * carried, so nothing is lost to rounding.
 */
#ifndef _UAPI_LINUX_VMRAPL_H
#define _UAPI_LINUX_VMRAPL_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define VMRAPL_ABI_VERSION	1
#define VMRAPL_DEVICE_NAME	"vmrapl"

/* Documentation/userspace-api/ioctl/ioctl-number.rst has 0xE6-0xEB free. */
#define VMRAPL_IO		0xE7

/* Energy sources (vmrapl_info.source). */
#define VMRAPL_SOURCE_INTEL	1
#define VMRAPL_SOURCE_AMD	2
#define VMRAPL_SOURCE_ESTIMATE	3
#define VMRAPL_SOURCE_TEST	4

/* Energy domains, as bit numbers of vmrapl_info.domains. */
#define VMRAPL_DOM_PKG		0
#define VMRAPL_DOM_CORE		1	/* Intel PP0, AMD core */
#define VMRAPL_DOM_DRAM		2
#define VMRAPL_NR_DOMAINS	3

/* Host-wide static power policy (vmrapl_info.static_policy). */
#define VMRAPL_STATIC_OCCUPIED	0
#define VMRAPL_STATIC_BUSY	1
#define VMRAPL_STATIC_NONE	2

/* vmrapl_info.features */
#define VMRAPL_INFO_F_ESTIMATED		(1ULL << 0)	/* source is a model */
#define VMRAPL_INFO_F_TEST_INJECT	(1ULL << 1)	/* VMRAPL_TEST_INJECT */
#define VMRAPL_INFO_F_TRACK_ALL		(1ULL << 2)	/* every KVM VM tracked */

/**
 * struct vmrapl_info - VMRAPL_GET_INFO
 * @abi_version: VMRAPL_ABI_VERSION of the module.
 * @nr_packages: host energy packages (dies on multi-die Intel parts).
 * @features: VMRAPL_INFO_F_*.
 * @nr_cpus: possible host CPUs.
 * @source: VMRAPL_SOURCE_*.
 * @domains: bit VMRAPL_DOM_* set for each domain the source measures.
 * @sample_period_us: host epoch length (lazy sampling period).
 * @static_policy: VMRAPL_STATIC_*.
 * @host_esu: energy status unit of the host source (1/2^esu J).
 * @reserved: zero.
 */
struct vmrapl_info {
	__u32 abi_version;
	__u32 nr_packages;
	__u64 features;
	__u32 nr_cpus;
	__u32 source;
	__u32 domains;
	__u32 sample_period_us;
	__u32 static_policy;
	__u32 host_esu;
	__u64 reserved[6];
};

#define VMRAPL_GET_INFO		_IOR(VMRAPL_IO, 0x00, struct vmrapl_info)

#endif /* _UAPI_LINUX_VMRAPL_H */
