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
 *    the read-only page obtained by mmap() of the VM fd, and each
 *    KVM_EXIT_X86_WRMSR of the power limit register with
 *    VMRAPL_VM_WRITE_MSR (the others are read-only: #GP).
 * 5. VMRAPL_VM_GET_STATS reports exact per-vCPU and per-virtual-package
 *    energy.  VMRAPL_VM_GET_STATE/SET_STATE carry the guest-visible counters
 *    across a live migration, in the spirit of KVM_GET_CLOCK/KVM_SET_CLOCK.
 * 6. Host tools read the host-wide books with VMRAPL_GET_PKG_STATS,
 *    VMRAPL_LIST_VMS and VMRAPL_GET_VM_STATS, which need CAP_PERFMON (or
 *    CAP_SYS_ADMIN; EPERM otherwise), as perf's power events do.
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

#include <linux/const.h>
#include <linux/ioctl.h>
#include <linux/types.h>

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

/* Where a package's static power comes from (vmrapl_pkg_stats.origin). */
#define VMRAPL_ORIGIN_UNKNOWN	0	/* nothing known yet: 0 W */
#define VMRAPL_ORIGIN_PARAM	1	/* the p_static_mw parameter */
#define VMRAPL_ORIGIN_IDLE	2	/* learned from all-idle runs */
#define VMRAPL_ORIGIN_MODEL	3	/* the estimate/test source's own */
#define VMRAPL_ORIGIN_FIT	4	/* the online fit (VMRAPL_INFO_F_STATIC_FIT) */
/* the package's power less its cores' (VMRAPL_INFO_F_STATIC_CORE) */
#define VMRAPL_ORIGIN_CORE	5
/* the idle floor the host's other packages learned (VMRAPL_INFO_F_STATIC_HOST) */
#define VMRAPL_ORIGIN_HOST	6

/* vmrapl_info.features */
#define VMRAPL_INFO_F_ESTIMATED		_BITULL(0)	/* source is a model */
#define VMRAPL_INFO_F_TEST_INJECT	_BITULL(1)	/* VMRAPL_TEST_INJECT */
#define VMRAPL_INFO_F_TRACK_ALL		_BITULL(2)	/* every KVM VM tracked */
#define VMRAPL_INFO_F_LOAD_TIME		_BITULL(3)	/* @load_boottime_ns set */
/* GET_PKG_STATS fills vmrapl_pkg_list.static_ptr: the P_static fit */
#define VMRAPL_INFO_F_STATIC_FIT	_BITULL(4)
/* GET_STATS, GET_VM_STATS, LIST_VMS fill their static_uj fields */
#define VMRAPL_INFO_F_STATIC_SPLIT	_BITULL(5)
/*
 * The dynamic PKG energy is charged by each core's own energy counter
 * (AMD family 17h+), and only the rest split by time
 */
#define VMRAPL_INFO_F_PERCORE		_BITULL(6)
/* No per-core energy: APERF (actual cycles) weighs the dynamic split */
#define VMRAPL_INFO_F_APERF		_BITULL(7)
/*
 * vmrapl_pkg_static.core_static_uw: with per-core energy, the package's
 * power less its cores', measured while it is busy
 */
#define VMRAPL_INFO_F_STATIC_CORE	_BITULL(8)
/*
 * A package with no final idle floor of its own (a provisional one
 * included) may take the idle floor the host's other packages learned
 * (vmrapl_pkg_static.origin VMRAPL_ORIGIN_HOST)
 */
#define VMRAPL_INFO_F_STATIC_HOST	_BITULL(9)
/*
 * vmrapl_pkg_static is filled up to VMRAPL_PKG_STATIC_SIZE_V2: the static
 * power's inputs and the counters' measured update intervals
 */
#define VMRAPL_INFO_F_PKG_V2		_BITULL(10)
/* VMRAPL_ATTACH_F_VCPU_ID: a VM's vCPUs keyed by their KVM vCPU ids */
#define VMRAPL_INFO_F_VCPU_ID		_BITULL(11)
/*
 * VMRAPL_VM_WRITE_MSR: the guest writes its own power limit register, and
 * VMRAPL_GET_VM_LIMIT reports it (vmrapl_limit.guest_*)
 */
#define VMRAPL_INFO_F_GUEST_LIMIT	_BITULL(12)

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
 * @load_boottime_ns: CLOCK_BOOTTIME when the module was loaded.  Every
 *	energy total starts at zero then and only grows while it stays loaded:
 *	a later load time means the totals started again (exporters publish it
 *	as the counters' start time).
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
	__u64 load_boottime_ns;
	__u64 reserved[5];
};

#define VMRAPL_GET_INFO		_IOR(VMRAPL_IO, 0x00, struct vmrapl_info)

/* Host-wide books of one package, microjoules per domain. */
struct vmrapl_pkg_stats {
	__u64 sampled_uj[VMRAPL_NR_DOMAINS];	/* every dE read */
	__u64 tracked_uj[VMRAPL_NR_DOMAINS];	/* charged to VMs */
	__u64 host_uj[VMRAPL_NR_DOMAINS];	/* untracked busy time */
	__u64 idle_uj[VMRAPL_NR_DOMAINS];	/* unoccupied time */
	__u64 lost_uj[VMRAPL_NR_DOMAINS];	/* unknown intervals */
	__u64 p_static_uw;			/* static power in use */
	__u64 samples;
	__u64 busy_ns;
	__u32 nr_cpus;				/* online */
	__u32 reserved0;
	__u64 reserved[2];
};

/* vmrapl_pkg_static.fit_flags */
#define VMRAPL_FIT_F_CONDITIONED	_BITUL(0)	/* last solve usable */
#define VMRAPL_FIT_F_HELD		_BITUL(1)	/* @fit_held_uw valid */

/*
 * vmrapl_pkg_static.static_inputs: what the static power in use
 * (vmrapl_pkg_stats.p_static_uw) was estimated from, one bit per input
 * that contributed.  Documentation/operations.rst ("Choosing the static
 * policy") says which to expect on which hardware.
 */
/* the package less its cores' own counters (AMD family 17h+), any epoch */
#define VMRAPL_STATIC_IN_CORE_RESIDUAL	_BITUL(0)
/* the package less PP0 (Intel parts that expose MSR_PP0_ENERGY_STATUS) */
#define VMRAPL_STATIC_IN_PP0_RESIDUAL	_BITUL(1)
/* the settled part of all-idle stretches (after the package C-state) */
#define VMRAPL_STATIC_IN_SETTLED_IDLE	_BITUL(2)
/* the idle floor the host's other packages learned */
#define VMRAPL_STATIC_IN_HOST_FLOOR	_BITUL(3)
/* the online fit of power against busy CPUs */
#define VMRAPL_STATIC_IN_FIT		_BITUL(4)
/* the p_static_mw parameter */
#define VMRAPL_STATIC_IN_PARAM		_BITUL(5)
/* the estimate or test source's own value */
#define VMRAPL_STATIC_IN_MODEL		_BITUL(6)

/*
 * vmrapl_pkg_static.update_flags: bit VMRAPL_DOM_* set when that
 * domain's counter update interval was measured; clear: not measured
 * (the counter did not step in the window, or the domain is absent),
 * and the lag correction uses the 1 ms default.
 */

/**
 * struct vmrapl_pkg_static - static power of one package, and its fit
 * @origin: VMRAPL_ORIGIN_* of vmrapl_pkg_stats.p_static_uw.
 * @fit_flags: VMRAPL_FIT_F_*.
 * @fit_static_uw: intercept (P_static) of the last solve of the online
 *	fit dE = P_static x dt + P_dyn x busy (Documentation/design.rst),
 *	0 when it had none.
 * @fit_static_sd_uw: its standard error.
 * @fit_dyn_uw: slope of the last solve (P_dyn), per busy CPU.
 * @fit_held_uw: the last well-conditioned intercept; with
 *	VMRAPL_FIT_F_HELD it is P_static unless p_static_mw or the source
 *	fixes it (origin VMRAPL_ORIGIN_FIT).
 * @idle_static_uw: P_static learned from all-idle time, 0 if none (a
 *	provisional value from its first 5 ms, final from 100 ms).
 * @fit_blocks: samples (blocks of epochs) of the last solve.
 * @reserved0: zero.
 * @static_uj: static part of sampled_uj[VMRAPL_DOM_PKG].
 * @tracked_static_uj: static part of tracked_uj[VMRAPL_DOM_PKG].
 * @host_static_uj: static part of host_uj[VMRAPL_DOM_PKG]; the rest of
 *	@static_uj is in idle_uj.
 * @core_static_uw: (VMRAPL_INFO_F_STATIC_CORE; zero before) where the
 *	cores have energy counters (VMRAPL_INFO_F_PERCORE), the package's
 *	power less its cores' while it is busy, over the fit's window: the
 *	floor and the uncore, measured rather than fitted.  P_static when
 *	no idle run is known (origin VMRAPL_ORIGIN_CORE).  0 until
 *	@core_blocks reached 32.
 * @core_blocks: the samples (blocks of epochs) of @core_static_uw.
 * @reserved1: zero.
 * @reserved: zero.
 *
 * From here on, filled when @static_size covers them
 * (VMRAPL_PKG_STATIC_SIZE_V2):
 * @static_inputs: VMRAPL_STATIC_IN_* of vmrapl_pkg_stats.p_static_uw.
 * @update_flags: bit VMRAPL_DOM_* set for each domain whose counter
 *	update interval was measured.
 * @update_pkg_ns, @update_core_ns, @update_dram_ns: the measured update
 *	interval of the PKG, core (PP0) and DRAM counters, ns (the median
 *	of the steps timed when the package came online); 0: not measured.
 * @update_pkg_spread_ns, @update_core_spread_ns, @update_dram_spread_ns:
 *	the spread of those steps (half the range between their 10th and
 *	90th percentiles), ns.
 */
struct vmrapl_pkg_static {
	__u32 origin;
	__u32 fit_flags;
	__u64 fit_static_uw;
	__u64 fit_static_sd_uw;
	__u64 fit_dyn_uw;
	__u64 fit_held_uw;
	__u64 idle_static_uw;
	__u32 fit_blocks;
	__u32 reserved0;
	__u64 static_uj;
	__u64 tracked_static_uj;
	__u64 host_static_uj;
	__u64 core_static_uw;
	__u32 core_blocks;
	__u32 reserved1;
	__u64 reserved[2];
	/* VMRAPL_PKG_STATIC_SIZE_V1 ends here */
	__u32 static_inputs;
	__u32 update_flags;
	__u32 update_pkg_ns;
	__u32 update_pkg_spread_ns;
	__u32 update_core_ns;
	__u32 update_core_spread_ns;
	__u32 update_dram_ns;
	__u32 update_dram_spread_ns;
};

/**
 * struct vmrapl_pkg_list - VMRAPL_GET_PKG_STATS
 * @size: sizeof(struct vmrapl_pkg_list) as userspace was built: 40 (the
 *	first layout, VMRAPL_PKG_LIST_SIZE_V1) or more.
 * @flags: zero.
 * @nr_pkgs: in: entries at @pkgs_ptr (and at @static_ptr); out: host
 *	packages.
 * @reserved0: zero.
 * @pkgs_ptr: user address of struct vmrapl_pkg_stats[].
 * @reserved: zero.
 * @static_ptr: (VMRAPL_INFO_F_STATIC_FIT) user address of @nr_pkgs
 *	entries of @static_size bytes each, struct vmrapl_pkg_static, or 0.
 * @static_size: sizeof(struct vmrapl_pkg_static) as userspace was built,
 *	a multiple of 8 of at least 112 (VMRAPL_PKG_STATIC_SIZE_V1; 144 with
 *	the inputs and update intervals, VMRAPL_PKG_STATIC_SIZE_V2); 0 when
 *	@static_ptr is 0.  The
 *	kernel fills what it knows of each entry and zeroes the rest.
 * @reserved1: zero.
 *
 * The sums of microjoules are rounded down per field, so they conserve
 * within a few uJ; debugfs has the exact books.
 */
struct vmrapl_pkg_list {
	__u32 size;
	__u32 flags;
	__u32 nr_pkgs;
	__u32 reserved0;
	__u64 pkgs_ptr;
	__u64 reserved[2];
	/* VMRAPL_PKG_LIST_SIZE_V1 ends here */
	__u64 static_ptr;
	__u32 static_size;
	__u32 reserved1;
};

#define VMRAPL_PKG_LIST_SIZE_V1		40
#define VMRAPL_PKG_STATIC_SIZE_V1	112
#define VMRAPL_PKG_STATIC_SIZE_V2	144

#define VMRAPL_GET_PKG_STATS	_IOWR(VMRAPL_IO, 0x02, struct vmrapl_pkg_list)
/*
 * The same command as programs built against the first layout encode it
 * (the ioctl number carries the struct's size): the kernel accepts both.
 */
#define VMRAPL_GET_PKG_STATS_V1	_IOC(_IOC_READ | _IOC_WRITE, VMRAPL_IO, 0x02, \
				     VMRAPL_PKG_LIST_SIZE_V1)

/* vmrapl_vm_entry.flags */
#define VMRAPL_VM_F_ATTACHED	_BITUL(0)	/* else tracked by track_all */

/*
 * One tracked VM, as the host sees it.  The static parts (filled with
 * VMRAPL_INFO_F_STATIC_SPLIT, zero before) are of the PKG domain, under
 * the host's static_policy; energy_uj[VMRAPL_DOM_PKG] - static_uj is the
 * dynamic part, so a tool can re-apply another static policy.
 */
struct vmrapl_vm_entry {
	__u64 id;				/* vmrapl's id, never reused */
	__u32 pid;				/* the VMM process */
	__u32 nr_vcpus;
	__u32 flags;				/* VMRAPL_VM_F_* */
	__u32 charge;				/* VMRAPL_CHARGE_* */
	__u64 energy_uj[VMRAPL_NR_DOMAINS];	/* overhead included */
	__u64 overhead_uj[VMRAPL_NR_DOMAINS];
	__u64 runtime_ns;
	__u64 overhead_ns;
	__u64 static_uj;	/* static part of energy_uj[PKG] (F_STATIC_SPLIT) */
	__u64 overhead_static_uj;	/* static part of overhead_uj[PKG] */
};

/**
 * struct vmrapl_vm_list - VMRAPL_LIST_VMS
 * @size: sizeof(struct vmrapl_vm_list).
 * @flags: zero.
 * @nr_vms: in: entries at @vms_ptr; out: tracked VMs (may exceed what was
 *	filled: call again with more room).
 * @reserved0: zero.
 * @vms_ptr: user address of struct vmrapl_vm_entry[].
 * @reserved: zero.
 */
struct vmrapl_vm_list {
	__u32 size;
	__u32 flags;
	__u32 nr_vms;
	__u32 reserved0;
	__u64 vms_ptr;
	__u64 reserved[2];
};

#define VMRAPL_LIST_VMS		_IOWR(VMRAPL_IO, 0x03, struct vmrapl_vm_list)

/**
 * struct vmrapl_vm_query - VMRAPL_GET_VM_STATS
 * @size: sizeof(struct vmrapl_vm_query).
 * @flags: zero.
 * @id: a VM id from VMRAPL_LIST_VMS.
 * @stats_ptr: user address of a struct vmrapl_stats, used and filled as
 *	VMRAPL_VM_GET_STATS uses and fills it on the VM's own fd (its size,
 *	flags, reserved, counts and array pointers are checked the same way).
 * @reserved: zero.
 *
 * The host's per-vCPU and per-virtual-package view of any tracked VM,
 * attached or auto-tracked, for administration tools.  ENOENT when no
 * tracked VM has @id (it has gone).
 */
struct vmrapl_vm_query {
	__u32 size;
	__u32 flags;
	__u64 id;
	__u64 stats_ptr;
	__u64 reserved[2];
};

#define VMRAPL_GET_VM_STATS	_IOW(VMRAPL_IO, 0x04, struct vmrapl_vm_query)

/* Power limits: the accepted ranges (VMRAPL_SET_VM_LIMIT). */
#define VMRAPL_LIMIT_MIN_UW		1000ULL		/* 1 mW */
#define VMRAPL_LIMIT_MAX_UW		100000000000ULL	/* 100 kW */
#define VMRAPL_LIMIT_MIN_WINDOW_US	10000ULL	/* 10 ms */
#define VMRAPL_LIMIT_MAX_WINDOW_US	3600000000ULL	/* 1 h */

/* vmrapl_limit.flags (VMRAPL_SET_VM_LIMIT) */
#define VMRAPL_LIMIT_F_CLEAR	_BITUL(0)	/* remove the operator's limit */

/* vmrapl_limit.state (VMRAPL_GET_VM_LIMIT) */
#define VMRAPL_LIMIT_S_OPERATOR	_BITUL(0)	/* an operator's limit is set */
#define VMRAPL_LIMIT_S_GUEST	_BITUL(1)	/* the guest enabled its PL1 */
/* the guest's power limit register is locked: its writes are ignored */
#define VMRAPL_LIMIT_S_LOCKED	_BITUL(2)

/**
 * struct vmrapl_limit - VMRAPL_SET_VM_LIMIT / VMRAPL_GET_VM_LIMIT
 * @size: sizeof(struct vmrapl_limit).
 * @flags: SET: VMRAPL_LIMIT_F_*, or zero; GET: zero.
 * @id: a VM id from VMRAPL_LIST_VMS.
 * @limit_uw: the operator's limit on the VM's power averaged over
 *	@window_us, VMRAPL_LIMIT_MIN_UW..VMRAPL_LIMIT_MAX_UW (SET without
 *	VMRAPL_LIMIT_F_CLEAR; zero with it); GET: the limit set, 0 for none
 *	(output only: not checked on input, as @window_us and @state).
 * @window_us: its window, VMRAPL_LIMIT_MIN_WINDOW_US..
 *	VMRAPL_LIMIT_MAX_WINDOW_US, as @limit_uw.
 * @state: GET: VMRAPL_LIMIT_S_*; SET: zero.
 * @reserved0: zero.
 * @guest_limit_uw: GET (VMRAPL_INFO_F_GUEST_LIMIT): the PL1 the guest
 *	wrote to its power limit register (VMRAPL_VM_WRITE_MSR), in uW,
 *	with VMRAPL_LIMIT_S_GUEST; 0 when it did not enable one.  SET: zero.
 * @guest_window_us: GET: its time window in us, brought into
 *	VMRAPL_LIMIT_MIN_WINDOW_US..VMRAPL_LIMIT_MAX_WINDOW_US; SET: zero.
 * @reserved: zero.
 *
 * The limit is the VM's, by its id: the guest reads it from its power
 * limit register (0x610 of the Intel register set) with the lock bit
 * set, and it ends with the VM (a VM attached again, or adopted again by
 * track_all, has a new id).  vmrapl only keeps it: a controller holds the
 * VM under the lower of the operator's limit and the guest's by
 * throttling its threads (Documentation/limits.rst).  SET takes
 * CAP_SYS_ADMIN (EPERM), GET what the other host-wide reads take,
 * CAP_PERFMON.  EINVAL for a value out of range, flags or reserved
 * fields not zero; ENOENT when no tracked VM has @id.
 */
struct vmrapl_limit {
	__u32 size;
	__u32 flags;
	__u64 id;
	__u64 limit_uw;
	__u64 window_us;
	__u32 state;
	__u32 reserved0;
	__u64 guest_limit_uw;
	__u64 guest_window_us;
	__u64 reserved[2];
};

#define VMRAPL_SET_VM_LIMIT	_IOW(VMRAPL_IO, 0x05, struct vmrapl_limit)
#define VMRAPL_GET_VM_LIMIT	_IOWR(VMRAPL_IO, 0x06, struct vmrapl_limit)

/* Guest register sets (vmrapl_attach.regset). */
#define VMRAPL_REGSET_INTEL	1	/* 0x606 0x610 0x611 0x614 0x619 0x639 */
#define VMRAPL_REGSET_AMD	2	/* 0xC0010299 0xC001029A 0xC001029B */

/* The RAPL MSRs the register sets are made of. */
#define VMRAPL_MSR_RAPL_POWER_UNIT	0x00000606
#define VMRAPL_MSR_PKG_POWER_LIMIT	0x00000610
#define VMRAPL_MSR_PKG_ENERGY_STATUS	0x00000611
#define VMRAPL_MSR_PKG_POWER_INFO	0x00000614
#define VMRAPL_MSR_DRAM_ENERGY_STATUS	0x00000619
#define VMRAPL_MSR_PP0_ENERGY_STATUS	0x00000639
#define VMRAPL_MSR_AMD_RAPL_POWER_UNIT	0xc0010299
#define VMRAPL_MSR_AMD_CORE_ENERGY	0xc001029a
#define VMRAPL_MSR_AMD_PKG_ENERGY	0xc001029b

/* Where a guest-visible register's value lives in struct vmrapl_page. */
#define VMRAPL_REG_UNIT		0	/* @unit */
#define VMRAPL_REG_POWER_LIMIT	1	/* @power_limit (64 bits) */
#define VMRAPL_REG_POWER_INFO	2	/* @power_info */
#define VMRAPL_REG_PKG		3	/* @vcpu[i].pkg */
#define VMRAPL_REG_CORE		4	/* @vcpu[i].core */
#define VMRAPL_REG_DRAM		5	/* @vcpu[i].dram */

/**
 * struct vmrapl_reg - one guest-visible register
 * @regset: VMRAPL_REGSET_* it belongs to.
 * @msr: its MSR number (VMRAPL_MSR_*).
 * @reg: the VMRAPL_REG_* field of struct vmrapl_page that holds its value.
 * @dom_mask: the register is part of the guest's view when @dom_mask is 0
 *	or names a domain of vmrapl_page.domains (_BITUL(VMRAPL_DOM_*)); the
 *	others are not virtualized: VMRAPL_VM_READ_MSR answers ENOENT and no
 *	filter range traps them.
 *
 * The energy registers are 32-bit counters; the others read as stored.
 */
struct vmrapl_reg {
	__u32 regset;
	__u32 msr;
	__u32 reg;
	__u32 dom_mask;
};

/*
 * Every guest-visible register, each register set in increasing MSR order:
 * static const struct vmrapl_reg regs[] = VMRAPL_REGISTERS;
 */
#define VMRAPL_REGISTERS {						\
	{ .regset = VMRAPL_REGSET_INTEL, .msr = VMRAPL_MSR_RAPL_POWER_UNIT, \
	  .reg = VMRAPL_REG_UNIT, .dom_mask = 0 },			\
	{ .regset = VMRAPL_REGSET_INTEL, .msr = VMRAPL_MSR_PKG_POWER_LIMIT, \
	  .reg = VMRAPL_REG_POWER_LIMIT, .dom_mask = 0 },		\
	{ .regset = VMRAPL_REGSET_INTEL, .msr = VMRAPL_MSR_PKG_ENERGY_STATUS, \
	  .reg = VMRAPL_REG_PKG, .dom_mask = _BITUL(VMRAPL_DOM_PKG) },	\
	{ .regset = VMRAPL_REGSET_INTEL, .msr = VMRAPL_MSR_PKG_POWER_INFO, \
	  .reg = VMRAPL_REG_POWER_INFO, .dom_mask = 0 },		\
	{ .regset = VMRAPL_REGSET_INTEL, .msr = VMRAPL_MSR_DRAM_ENERGY_STATUS, \
	  .reg = VMRAPL_REG_DRAM, .dom_mask = _BITUL(VMRAPL_DOM_DRAM) }, \
	{ .regset = VMRAPL_REGSET_INTEL, .msr = VMRAPL_MSR_PP0_ENERGY_STATUS, \
	  .reg = VMRAPL_REG_CORE, .dom_mask = _BITUL(VMRAPL_DOM_CORE) }, \
	{ .regset = VMRAPL_REGSET_AMD, .msr = VMRAPL_MSR_AMD_RAPL_POWER_UNIT, \
	  .reg = VMRAPL_REG_UNIT, .dom_mask = 0 },			\
	{ .regset = VMRAPL_REGSET_AMD, .msr = VMRAPL_MSR_AMD_CORE_ENERGY, \
	  .reg = VMRAPL_REG_CORE, .dom_mask = _BITUL(VMRAPL_DOM_CORE) }, \
	{ .regset = VMRAPL_REGSET_AMD, .msr = VMRAPL_MSR_AMD_PKG_ENERGY, \
	  .reg = VMRAPL_REG_PKG, .dom_mask = _BITUL(VMRAPL_DOM_PKG) },	\
}

#define VMRAPL_DEFAULT_ESU	14	/* 61 uJ, the common Intel unit */
#define VMRAPL_MAX_VCPUS	1024
#define VMRAPL_MAX_VPKGS	64

/**
 * struct vmrapl_attach - VMRAPL_ATTACH_VM
 * @size: sizeof(struct vmrapl_attach) as built by userspace.
 * @flags: VMRAPL_ATTACH_F_*, or zero.
 * @kvm_fd: file descriptor of a KVM VM (from KVM_CREATE_VM).
 * @nr_vcpus: vCPU indexes 0..nr_vcpus-1 are accounted, 1..VMRAPL_MAX_VCPUS.
 * @regset: VMRAPL_REGSET_* matching the guest's CPUID vendor.
 * @esu: virtual energy status unit, 1/2^esu J; 0 selects
 *	VMRAPL_DEFAULT_ESU, else 1..31.  It does not depend on the host, so
 *	the guest's counter keeps its scale across migration.
 * @reserved: zero.
 *
 * A vCPU index, in every call on the returned fd and in its page, is the
 * vCPU's KVM vCPU id with VMRAPL_ATTACH_F_VCPU_ID: the id the VMM gave
 * KVM_CREATE_VCPU (QEMU gives x86 vCPUs their APIC ID), so that @nr_vcpus
 * is one more than the largest id, and an index with no vCPU is charged
 * nothing.
 * Without the flag it is the order in which KVM created the vCPUs, which
 * is the id only for VMMs that create vCPUs 0, 1, 2... in that order
 * (not after a hotplug out of slot order, nor with sparse APIC IDs).
 *
 * Returns a new file descriptor (O_CLOEXEC) for the attached VM.
 */
struct vmrapl_attach {
	__u32 size;
	__u32 flags;
	__u32 kvm_fd;
	__u32 nr_vcpus;
	__u32 regset;
	__u32 esu;
	__u64 reserved[4];
};

/* vmrapl_attach.flags (VMRAPL_INFO_F_VCPU_ID) */
#define VMRAPL_ATTACH_F_VCPU_ID	_BITUL(0)	/* index = KVM vCPU id */

#define VMRAPL_ATTACH_VM	_IOW(VMRAPL_IO, 0x01, struct vmrapl_attach)

/**
 * struct vmrapl_topology - VMRAPL_VM_SET_TOPOLOGY
 * @size: sizeof(struct vmrapl_topology).
 * @flags: zero.
 * @nr_vcpus: must equal vmrapl_attach.nr_vcpus.
 * @reserved0: zero.
 * @vpkg_ptr: user address of __u32[nr_vcpus], the virtual package of each
 *	vCPU index, each below VMRAPL_MAX_VPKGS.  Without this call every vCPU
 *	is in virtual package 0.
 * @reserved: zero.
 */
struct vmrapl_topology {
	__u32 size;
	__u32 flags;
	__u32 nr_vcpus;
	__u32 reserved0;
	__u64 vpkg_ptr;
	__u64 reserved[2];
};

#define VMRAPL_VM_SET_TOPOLOGY	_IOW(VMRAPL_IO, 0x10, struct vmrapl_topology)

/**
 * struct vmrapl_task - VMRAPL_VM_ADD_TASK
 * @flags: zero.
 * @tid: a thread of the caller's process, or a kernel worker created on
 *	behalf of it (vhost).  Its CPU time becomes the VM's overhead.
 * @reserved: zero.
 */
struct vmrapl_task {
	__u32 flags;
	__u32 tid;
	__u64 reserved[2];
};

#define VMRAPL_VM_ADD_TASK	_IOW(VMRAPL_IO, 0x11, struct vmrapl_task)

/**
 * struct vmrapl_msr - VMRAPL_VM_READ_MSR / VMRAPL_VM_WRITE_MSR
 * @vcpu: vCPU index that executed rdmsr or wrmsr.
 * @index: MSR number.  ENOENT when vmrapl does not virtualize it (the VMM
 *	should then inject #GP).
 * @flags: zero.
 * @reserved0: zero.
 * @data: READ: out, the value the guest reads; WRITE: the value it wrote.
 *
 * WRITE_MSR (VMRAPL_INFO_F_GUEST_LIMIT) takes the guest's writes of its
 * power limit register (VMRAPL_REG_POWER_LIMIT): PL1 (bits 23:0) and PL2
 * (55:32) in the units of its unit register, and the lock (63); it reads
 * them back as written, and a controller holds the VM under its enabled
 * PL1 (struct vmrapl_limit).  Returns 0, or 1 when the register is
 * locked (an operator's limit, or the guest's own lock bit, which holds
 * until the VM is detached) and the write was ignored, as hardware
 * ignores it.  EINVAL, for which the VMM injects #GP as hardware does:
 * a reserved bit set, or a register the guest may not write (the energy,
 * unit and power info registers).
 */
struct vmrapl_msr {
	__u32 vcpu;
	__u32 index;
	__u32 flags;
	__u32 reserved0;
	__u64 data;
};

#define VMRAPL_VM_READ_MSR	_IOWR(VMRAPL_IO, 0x12, struct vmrapl_msr)
#define VMRAPL_VM_WRITE_MSR	_IOW(VMRAPL_IO, 0x17, struct vmrapl_msr)

/*
 * Exact energy of one vCPU.  energy_uj is indexed by VMRAPL_DOM_*;
 * static_uj is the static part of energy_uj[VMRAPL_DOM_PKG]
 * (VMRAPL_INFO_F_STATIC_SPLIT; zero before), the rest is dynamic.
 */
struct vmrapl_vcpu_stats {
	__u64 energy_uj[VMRAPL_NR_DOMAINS];
	__u64 runtime_ns;
	__u64 static_uj;
	__u64 reserved;
};

/*
 * A virtual package: its vCPUs plus its share of the VM's overhead;
 * static_uj is the static part of energy_uj[VMRAPL_DOM_PKG].
 */
struct vmrapl_vpkg_stats {
	__u64 energy_uj[VMRAPL_NR_DOMAINS];
	__u64 overhead_uj[VMRAPL_NR_DOMAINS];
	__u32 nr_vcpus;
	__u32 reserved0;
	__u64 static_uj;
};

/**
 * struct vmrapl_stats - VMRAPL_VM_GET_STATS
 * @size: sizeof(struct vmrapl_stats).
 * @flags: zero.
 * @nr_vcpus: in: entries available at @vcpus_ptr; out: vCPUs of the VM.
 *	Fewer entries than vCPUs fill what fits.
 * @nr_vpkgs: in: entries available at @vpkgs_ptr; out: virtual packages.
 * @vcpus_ptr: user address of struct vmrapl_vcpu_stats[], or 0.
 * @vpkgs_ptr: user address of struct vmrapl_vpkg_stats[], or 0.
 * @energy_uj: out: whole VM, overhead included.
 * @overhead_uj: out: overhead part of @energy_uj.
 * @runtime_ns: out: CPU time charged to the vCPUs.
 * @overhead_ns: out: CPU time charged to the overhead.
 * @reserved: zero.
 * @static_uj: out only (not checked on input): the static part of
 *	@energy_uj[VMRAPL_DOM_PKG] under the host's static_policy, the rest
 *	being dynamic (VMRAPL_INFO_F_STATIC_SPLIT; zero before).
 * @overhead_static_uj: out only: the static part of
 *	@overhead_uj[VMRAPL_DOM_PKG].
 */
struct vmrapl_stats {
	__u32 size;
	__u32 flags;
	__u32 nr_vcpus;
	__u32 nr_vpkgs;
	__u64 vcpus_ptr;
	__u64 vpkgs_ptr;
	__u64 energy_uj[VMRAPL_NR_DOMAINS];
	__u64 overhead_uj[VMRAPL_NR_DOMAINS];
	__u64 runtime_ns;
	__u64 overhead_ns;
	__u64 reserved[2];
	__u64 static_uj;
	__u64 overhead_static_uj;
};

#define VMRAPL_VM_GET_STATS	_IOWR(VMRAPL_IO, 0x13, struct vmrapl_stats)

/* Charge policies (vmrapl_policy.charge). */
#define VMRAPL_CHARGE_THREAD	0	/* all on-CPU time of vCPU threads */
#define VMRAPL_CHARGE_GUEST	1	/* kvm_entry..kvm_exit only */

/* vmrapl_policy.flags: which fields to apply. */
#define VMRAPL_POLICY_F_CHARGE		_BITUL(0)
#define VMRAPL_POLICY_F_GUEST_PERIOD	_BITUL(1)

#define VMRAPL_GUEST_PERIOD_MIN_US	1000
#define VMRAPL_GUEST_PERIOD_DEF_US	100000
#define VMRAPL_GUEST_PERIOD_MAX_US	10000000

/**
 * struct vmrapl_policy - VMRAPL_VM_SET_POLICY
 * @flags: VMRAPL_POLICY_F_* selecting the fields below.
 * @charge: VMRAPL_CHARGE_*.
 * @guest_period_us: the guest-visible counters advance at most once per
 *	period, VMRAPL_GUEST_PERIOD_MIN_US..VMRAPL_GUEST_PERIOD_MAX_US.
 *	A VMM that attached without CAP_PERFMON gets EPERM for a period
 *	below the module's unpriv_period_ms (see Documentation/security.rst).
 * @reserved0: zero.
 * @reserved: zero.
 */
struct vmrapl_policy {
	__u32 flags;
	__u32 charge;
	__u32 guest_period_us;
	__u32 reserved0;
	__u64 reserved[2];
};

#define VMRAPL_VM_SET_POLICY	_IOW(VMRAPL_IO, 0x14, struct vmrapl_policy)

#define VMRAPL_STATE_VERSION	1
/* SET_STATE takes counter values below this (EINVAL otherwise). */
#define VMRAPL_STATE_MAX	_BITULL(62)

/* Guest-visible counters of one virtual package, 64-bit, in guest ESU. */
struct vmrapl_vpkg_state {
	__u64 energy[VMRAPL_NR_DOMAINS];
	__u64 reserved;
};

/**
 * struct vmrapl_state - VMRAPL_VM_GET_STATE / VMRAPL_VM_SET_STATE
 * @size: sizeof(struct vmrapl_state).
 * @flags: zero.
 * @version: VMRAPL_STATE_VERSION.
 * @esu: the VM's virtual ESU; SET_STATE requires the same ESU.
 * @nr_vpkgs: in: entries at @vpkgs_ptr; GET_STATE writes the count.
 * @nr_vcpus: in: entries at @vcpus_ptr; GET_STATE writes the count.
 * @vpkgs_ptr: user address of struct vmrapl_vpkg_state[].
 * @vcpus_ptr: user address of __u64[], the per-vCPU core counters (AMD).
 * @reserved: zero.
 *
 * SET_STATE makes the guest-visible counters continue from the saved
 * values; call it on the migration destination before any vCPU runs.  It
 * never moves a counter backwards.  A value of VMRAPL_STATE_MAX or more is
 * EINVAL: the counter must have room to grow.
 */
struct vmrapl_state {
	__u32 size;
	__u32 flags;
	__u32 version;
	__u32 esu;
	__u32 nr_vpkgs;
	__u32 nr_vcpus;
	__u64 vpkgs_ptr;
	__u64 vcpus_ptr;
	__u64 reserved[4];
};

#define VMRAPL_VM_GET_STATE	_IOWR(VMRAPL_IO, 0x15, struct vmrapl_state)
#define VMRAPL_VM_SET_STATE	_IOW(VMRAPL_IO, 0x16, struct vmrapl_state)

/*
 * mmap() of the VM fd at offset 0 maps read-only pages holding the values
 * the guest reads, so a VMM can answer an rdmsr exit without a syscall.
 * Read under the sequence count: retry while @seq is odd or changed.
 */
struct vmrapl_page_vcpu {
	__u64 pkg;	/* 0x611 / 0xC001029B */
	__u64 core;	/* 0x639 / 0xC001029A */
	__u64 dram;	/* 0x619 */
};

struct vmrapl_page {
	__u32 seq;
	__u32 abi_version;
	__u32 nr_vcpus;
	__u32 regset;
	__u64 unit;		/* 0x606 / 0xC0010299 */
	__u64 power_info;	/* 0x614 */
	__u64 power_limit;	/* 0x610 */
	__u32 domains;		/* VMRAPL_DOM_* the guest sees */
	__u32 reserved0;
	__u64 reserved[3];
	struct vmrapl_page_vcpu vcpu[];
};

/*
 * Test source only (module parameter source=test, CAP_SYS_ADMIN): make
 * the test energy counter of a package advance by, or jump to, @value in
 * units of the test source.
 */
#define VMRAPL_INJECT_F_SET	_BITUL(0)

struct vmrapl_test_inject {
	__u32 flags;
	__u32 package;
	__u32 domain;
	__u32 reserved0;
	__u64 value;
	__u64 reserved[2];
};

#define VMRAPL_TEST_INJECT	_IOW(VMRAPL_IO, 0x7f, struct vmrapl_test_inject)

#endif /* _UAPI_LINUX_VMRAPL_H */
