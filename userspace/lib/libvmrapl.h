/* SPDX-License-Identifier: MIT */
/*
 * libvmrapl - userspace helper library for /dev/vmrapl (per-VM virtual RAPL).
 *
 * A VMM uses it to attach a KVM VM to vmrapl, to make the guest's RAPL MSR
 * accesses exit to userspace, and to answer those exits.  See
 * Documentation/libvmrapl.rst for the full description and the QEMU notes.
 *
 * Conventions
 *   - Functions returning int return 0 (or a count) on success and a
 *     negative errno value on failure; errno is set to the same (positive)
 *     value, so perror()/strerror(errno) work as well.
 *   - Handles are opaque.  A struct vmrapl_vm keeps no reference to the
 *     struct vmrapl it was attached through: they may be released in any
 *     order.
 *   - A vCPU index is KVM's vcpu_idx: the order in which the VMM created
 *     the vCPUs (0..nr_vcpus-1), not the APIC ID.
 *   - Thread safety: vmrapl_handle_exit() and vmrapl_read_msr() may be
 *     called concurrently from every vCPU thread.  Everything else is meant
 *     for the VMM's setup/teardown thread.
 *
 * !!! KVM_X86_SET_MSR_FILTER REPLACES THE WHOLE FILTER OF THE VM. !!!
 * A VMM that has MSR filter ranges of its own (QEMU does) must MERGE the
 * ranges built by vmrapl_msr_filter_ranges() into its own struct
 * kvm_msr_filter (vmrapl_msr_filter_merge() does that) and install the
 * result with a single KVM_X86_SET_MSR_FILTER.  Calling
 * vmrapl_install_msr_filter() in such a VMM silently drops the VMM's own
 * ranges (and the VMM's own later call drops vmrapl's).
 */
#ifndef LIBVMRAPL_H
#define LIBVMRAPL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/vmrapl.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define VMRAPL_API __attribute__((visibility("default")))
#else
#define VMRAPL_API
#endif

struct kvm_run;
struct kvm_msr_filter;
struct kvm_msr_filter_range;

struct vmrapl;		/* an open /dev/vmrapl */
struct vmrapl_vm;	/* one attached KVM VM */

#define VMRAPL_DEFAULT_PATH	"/dev/" VMRAPL_DEVICE_NAME

/*
 * The RAPL MSR numbers (VMRAPL_MSR_*) and the register table
 * VMRAPL_REGISTERS are in the uapi; the library follows that table.  The
 * guest's view: a register is virtualized when its dom_mask is 0 (unit,
 * power info and limit) or names one of the VM's domains (the page's
 * domains); the others are neither filtered nor answered.
 */
/* Most MSRs in a register set, and most filter ranges one set needs. */
#define VMRAPL_MAX_MSRS		6
#define VMRAPL_MAX_RANGES	5
/*
 * Bytes of bitmap storage per range.  KVM copies BITS_TO_LONGS(nmsrs) longs
 * from each bitmap, so a bitmap is never shorter than 8 bytes.
 */
#define VMRAPL_RANGE_BITMAP_BYTES	8

/* ---- device ------------------------------------------------------------ */

/*
 * Open the vmrapl device (@path NULL means /dev/vmrapl) and read its
 * VMRAPL_GET_INFO.  -ENOENT means the device node does not exist, which
 * almost always means the vmrapl module is not loaded; -EPROTO means the
 * module speaks another ABI version than this library.
 */
VMRAPL_API int vmrapl_open(const char *path, struct vmrapl **out);
VMRAPL_API void vmrapl_close(struct vmrapl *v);
VMRAPL_API int vmrapl_fd(const struct vmrapl *v);
/* The GET_INFO answer read by vmrapl_open(). */
VMRAPL_API const struct vmrapl_info *vmrapl_get_info(const struct vmrapl *v);
/* A short human explanation of an error returned by vmrapl_open(). */
VMRAPL_API const char *vmrapl_open_strerror(int err);

/* ---- attaching a VM ---------------------------------------------------- */

/*
 * VMRAPL_ATTACH_VM: attach the KVM VM @kvm_vm_fd (from KVM_CREATE_VM).
 * @regset is VMRAPL_REGSET_INTEL or VMRAPL_REGSET_AMD, @esu 0 for the
 * default or 1..31.  On success the new handle owns the returned vmrapl VM
 * fd and, when the kernel allows it, a read-only mapping of its
 * struct vmrapl_page used by the fast read path.  Call before the vCPUs run.
 */
VMRAPL_API int vmrapl_attach(struct vmrapl *v, int kvm_vm_fd,
			     unsigned int nr_vcpus, unsigned int regset,
			     unsigned int esu, struct vmrapl_vm **out);
/*
 * vmrapl_attach() with VMRAPL_ATTACH_F_* @flags.  With
 * VMRAPL_ATTACH_F_VCPU_ID every vCPU index of the handle (reads, exits,
 * topology, stats, state) is the vCPU's KVM id, the one the VMM gave
 * KVM_CREATE_VCPU (QEMU's x86 APIC ID), and @nr_vcpus is one more than the
 * largest id: right whatever order the vCPUs are created or hotplugged in.
 * -EOPNOTSUPP when the module does not have it (VMRAPL_INFO_F_VCPU_ID),
 * -EINVAL for an unknown flag.  (libvmrapl 1.3)
 */
VMRAPL_API int vmrapl_attach_flags(struct vmrapl *v, int kvm_vm_fd,
				   unsigned int nr_vcpus, unsigned int regset,
				   unsigned int esu, uint32_t flags,
				   struct vmrapl_vm **out);
/*
 * Unmap the page and close the vmrapl VM fd (this detaches the VM and
 * finalizes its accounting in the kernel), then free the handle.
 */
VMRAPL_API void vmrapl_detach(struct vmrapl_vm *vm);
VMRAPL_API int vmrapl_vm_fd(const struct vmrapl_vm *vm);
VMRAPL_API unsigned int vmrapl_vm_nr_vcpus(const struct vmrapl_vm *vm);
VMRAPL_API unsigned int vmrapl_vm_regset(const struct vmrapl_vm *vm);
/* The mapped page, or NULL when the slow ioctl path is used. */
VMRAPL_API const struct vmrapl_page *vmrapl_vm_page(const struct vmrapl_vm *vm);

/*
 * A handle with no kernel behind it, reading from @page (which the caller
 * owns and keeps alive).  For unit tests and for VMMs that want to inject
 * their own page; its ioctl fallback fails with -ENODEV.  @domains is the
 * VMRAPL_DOM_* mask of the guest's view (which MSRs are filtered).
 */
VMRAPL_API int vmrapl_vm_from_page(const struct vmrapl_page *page,
				   unsigned int nr_vcpus, unsigned int regset,
				   uint32_t domains, struct vmrapl_vm **out);

/* Bytes to map for a VM of @nr_vcpus vCPUs (page aligned). */
VMRAPL_API size_t vmrapl_page_size(unsigned int nr_vcpus);

/* ---- configuration ----------------------------------------------------- */

/* VMRAPL_VM_SET_TOPOLOGY: @vpkg[i] is the virtual package of vCPU i. */
VMRAPL_API int vmrapl_set_topology(struct vmrapl_vm *vm, const uint32_t *vpkg,
				   unsigned int nr_vcpus);
/* VMRAPL_VM_ADD_TASK: charge thread @tid (I/O thread, vhost) as overhead. */
VMRAPL_API int vmrapl_add_task(struct vmrapl_vm *vm, pid_t tid);
/*
 * The vhost workers of process @pid (0: the caller's), which the kernel
 * names "vhost-<pid>": threads of the process since Linux 6.4, kernel
 * threads before.  Up to @max tids into @tids; returns how many there
 * are (more than @max when they did not fit), or -errno.  Each one can
 * be given to vmrapl_add_task() (the kernel checks that it is the
 * caller's).
 */
VMRAPL_API int vmrapl_vhost_workers(pid_t pid, pid_t *tids, unsigned int max);
/*
 * VMRAPL_VM_SET_POLICY.  @charge is VMRAPL_CHARGE_* or -1 to leave it,
 * @guest_period_us 0 to leave it.
 */
VMRAPL_API int vmrapl_set_policy(struct vmrapl_vm *vm, int charge,
				 uint32_t guest_period_us);

/* ---- statistics and migration state ----------------------------------- */

/*
 * VMRAPL_VM_GET_STATS.  @vcpus/@vpkgs may be NULL (with 0 entries).  On
 * return st->nr_vcpus / st->nr_vpkgs hold the VM's counts (which may be
 * more than the entries provided).
 */
VMRAPL_API int vmrapl_get_stats(struct vmrapl_vm *vm, struct vmrapl_stats *st,
				struct vmrapl_vcpu_stats *vcpus,
				unsigned int nr_vcpus,
				struct vmrapl_vpkg_stats *vpkgs,
				unsigned int nr_vpkgs);
/* VMRAPL_VM_GET_STATE / SET_STATE (live migration). */
VMRAPL_API int vmrapl_get_state(struct vmrapl_vm *vm, struct vmrapl_state *st,
				struct vmrapl_vpkg_state *vpkgs,
				unsigned int nr_vpkgs, uint64_t *vcpus,
				unsigned int nr_vcpus);
VMRAPL_API int vmrapl_set_state(struct vmrapl_vm *vm, uint32_t esu,
				const struct vmrapl_vpkg_state *vpkgs,
				unsigned int nr_vpkgs, const uint64_t *vcpus,
				unsigned int nr_vcpus);

/* ---- MSR values -------------------------------------------------------- */

/* VMRAPL_VM_READ_MSR (always a syscall).  -ENOENT: not virtualized. */
VMRAPL_API int vmrapl_read_msr_ioctl(struct vmrapl_vm *vm, unsigned int vcpu,
				     uint32_t index, uint64_t *data);
/*
 * The value the guest reads: from the mapped page under its sequence
 * count when possible, else through VMRAPL_VM_READ_MSR.
 */
VMRAPL_API int vmrapl_read_msr(struct vmrapl_vm *vm, unsigned int vcpu,
			       uint32_t index, uint64_t *data);

/*
 * VMRAPL_VM_WRITE_MSR: the guest's write of @data to its power limit
 * register (since 1.4, VMRAPL_INFO_F_GUEST_LIMIT).  Returns 0 when
 * vmrapl took it, 1 when the register is locked and the write was
 * ignored (as hardware ignores it), -EINVAL for a reserved bit or a
 * read-only register and -ENOTTY from an older module (inject #GP for
 * both), -ENOENT when not virtualized.
 */
VMRAPL_API int vmrapl_write_msr(struct vmrapl_vm *vm, unsigned int vcpu,
				uint32_t index, uint64_t data);

/* A consistent copy of one vCPU's view of the page. */
struct vmrapl_page_snapshot {
	uint32_t abi_version;
	uint32_t nr_vcpus;
	uint32_t regset;
	uint32_t domains;
	uint64_t unit;
	uint64_t power_info;
	uint64_t power_limit;
	uint64_t pkg;
	uint64_t core;
	uint64_t dram;
};

/*
 * Read @page for @vcpu under its sequence count.  Gives up with -EAGAIN
 * after @max_tries attempts that saw a writer (0 means a default), and
 * -EINVAL when @vcpu is not below the page's nr_vcpus.
 */
VMRAPL_API int vmrapl_page_read(const struct vmrapl_page *page,
				unsigned int vcpu, unsigned int max_tries,
				struct vmrapl_page_snapshot *snap);

/*
 * The unit in which the guest's own drivers read MSR_DRAM_ENERGY_STATUS
 * when it is not 0x606's: 16 (2^-16 J, whatever 0x606 says) for an Intel
 * register set on the server models Linux's intel_rapl_common and perf's
 * rapl driver treat so (family 6: Haswell-X 0x3f, Broadwell-X 0x4f,
 * Broadwell-D 0x56, Skylake-X/Cascade Lake/Cooper Lake 0x55, Ice Lake-X
 * 0x6a, Ice Lake-D 0x6c, Knights Landing 0x57, Knights Mill 0x85), from
 * the guest's CPUID leaf 1 EAX @cpuid1_eax; 0 for any other guest.  A VMM
 * attaches such a guest with that ESU, so that its DRAM counter counts in
 * the unit it is read in, or leaves 0x619 out of the guest's view.
 */
VMRAPL_API unsigned int vmrapl_guest_dram_esu(unsigned int regset,
					      uint32_t cpuid1_eax);

/* ---- KVM MSR filter ---------------------------------------------------- */

/*
 * The MSRs of @regset in the guest's view, in increasing order, into @msrs
 * (up to @max).  An energy status MSR is included only when @domains has
 * its domain: 0x611 and 0xC001029B VMRAPL_DOM_PKG, 0x639 (PP0) and
 * 0xC001029A VMRAPL_DOM_CORE, 0x619 VMRAPL_DOM_DRAM; the unit, power info
 * and power limit MSRs always are.  (Earlier versions left out only 0x619;
 * 0x639 without VMRAPL_DOM_CORE is now left out too.)  Returns the number
 * of MSRs, -EINVAL for an unknown regset, -ENOSPC if @max is short.
 */
VMRAPL_API int vmrapl_regset_msrs(unsigned int regset, uint32_t domains,
				  uint32_t *msrs, unsigned int max);

/*
 * Fill @ranges with KVM filter ranges that make reads and writes of every
 * MSR of @regset exit (bitmap bits 0), one range per run of consecutive
 * MSRs, covering no other MSR.  @storage provides the bitmaps,
 * VMRAPL_RANGE_BITMAP_BYTES per range.  Returns the number of ranges
 * (at most VMRAPL_MAX_RANGES), or -ENOSPC.
 */
VMRAPL_API int vmrapl_build_msr_filter(unsigned int regset, uint32_t domains,
				       struct kvm_msr_filter_range *ranges,
				       unsigned int max_ranges, uint8_t *storage,
				       size_t storage_len);
/*
 * The same for an attached VM, bitmaps owned by the handle (valid until
 * vmrapl_detach()).  The view is the page's domains, or GET_INFO's when
 * there is no page.
 */
VMRAPL_API int vmrapl_msr_filter_ranges(struct vmrapl_vm *vm,
					struct kvm_msr_filter_range *ranges,
					unsigned int max_ranges);
/*
 * Merge: insert the VM's ranges at the front of @filter (KVM uses the
 * first range that contains an MSR, so vmrapl's must come first), keeping
 * every non-empty range already there.  -ENOSPC if the 16 slots are not
 * enough; @filter is unchanged then.  @filter->flags is not touched; it
 * should be KVM_MSR_FILTER_DEFAULT_ALLOW.
 */
VMRAPL_API int vmrapl_msr_filter_merge(struct vmrapl_vm *vm,
				       struct kvm_msr_filter *filter);
/*
 * For VMMs with no MSR filter of their own only: install a
 * KVM_MSR_FILTER_DEFAULT_ALLOW filter holding just vmrapl's ranges.
 * REPLACES any filter the VM had.
 */
VMRAPL_API int vmrapl_install_msr_filter(struct vmrapl_vm *vm, int kvm_vm_fd);

/*
 * Enable KVM_CAP_X86_USER_SPACE_MSR with KVM_MSR_EXIT_REASON_FILTER plus
 * @extra_reasons (KVM keeps one mask per VM, so a VMM that also wants
 * KVM_MSR_EXIT_REASON_UNKNOWN passes it here).  @kvm_fd (the /dev/kvm fd)
 * is used for KVM_CHECK_EXTENSION; -1 checks on the VM fd.  -EOPNOTSUPP
 * when KVM lacks KVM_CAP_X86_USER_SPACE_MSR or KVM_CAP_X86_MSR_FILTER.
 */
VMRAPL_API int vmrapl_enable_user_msr(int kvm_fd, int kvm_vm_fd,
				      uint32_t extra_reasons);

/* ---- exit handling ----------------------------------------------------- */

/*
 * Handle a KVM_RUN exit of vCPU @vcpu.  Returns 1 when it was a
 * KVM_EXIT_X86_RDMSR/WRMSR of an MSR in the VM's view (run->msr.data and
 * run->msr.error are filled: reads answer the virtual value, writes to
 * the power limit register go to vmrapl_write_msr(), other writes, a
 * write vmrapl refuses and unavailable values get error = 1, i.e. #GP),
 * and 0 when the exit is not vmrapl's (untouched).
 */
VMRAPL_API int vmrapl_handle_exit(struct vmrapl_vm *vm, struct kvm_run *run,
				  unsigned int vcpu);

/* Per-handle counters, e.g. for a VMM's statistics. */
struct vmrapl_exit_counters {
	uint64_t rdmsr;		/* reads answered */
	uint64_t rdmsr_page;	/* ... of which from the page */
	uint64_t wrmsr_dropped;	/* 0x610 writes ignored: locked (1.4) */
	uint64_t gp;		/* #GP injected */
};
VMRAPL_API void vmrapl_exit_counters(const struct vmrapl_vm *vm,
				     struct vmrapl_exit_counters *c);

#ifdef __cplusplus
}
#endif

#endif /* LIBVMRAPL_H */
