/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The VM layer's private declarations: struct vr_vm, its accounts, and the
 * per-vCPU and per-VM energy sums, written once here.
 *
 * The layer is seven files, one execution context each:
 *
 *   vm_probe.c   probe context: the scheduler and KVM tracepoints, IRQs
 *                off, under RCU-sched.  Lookups only; takes no lock (the
 *                page's publication goes to a worker, vr_gv_kick()).
 *   vm_guest.c   the guest view (MSR values, the mmap page, GET/SET_STATE,
 *                SET_TOPOLOGY): everything under the raw vr_vm.gv_lock,
 *                in ioctl context or the page's worker.
 *   vm_stats.c   the books, read in ioctl and debugfs context: GET_STATS,
 *                LIST_VMS, GET_VM_STATS, debugfs.  vr_vm_mutex, then
 *                vr_vm.lock.
 *   vm_keys.c    who pays for a thread: the lookup table's writers, ADD_TASK,
 *                the vCPU threads; ioctl and workqueue context under
 *                vr_vm_mutex.
 *   vm_limit.c   the power limits: the operator's (SET_VM_LIMIT,
 *                GET_VM_LIMIT) and the guest's power limit register
 *                (WRITE_MSR, and its value for READ_MSR): ioctl context,
 *                vr_vm_mutex for the operator's, the VM's gv_lock
 *                innermost.
 *   vm.c         lifecycle in ioctl and workqueue context: attach,
 *                track_all's adoption, the VM fd.  vr_vm_mutex.
 *   vm_release.c a dead VM's release: the put that queues it, the release
 *                work that takes it off the engine and frees it.  Process
 *                and workqueue context, no VM-layer lock.
 *
 * Locks: vr_vm_mutex and vr_vm.lock are never nested (GET_VM_STATS takes
 * a reference under the first, drops it, then takes the second), and
 * neither is held across a copy from or to userspace.  vr_vm.lock ->
 * vr_vm.gv_lock (raw); vr_vm_mutex -> vr_vm.gv_lock for the power limit
 * (SET_VM_LIMIT, and an attach that carries a replaced VM's over).  The
 * engine's close_lock is only taken through vr_close_all() and
 * vr_engine_release(), never under gv_lock.
 *
 * The engine knows none of this: it calls the layer through the
 * struct vr_vm_ops that vm_probe.c defines (vmrapl.h).
 */
#ifndef _VMRAPL_VM_H
#define _VMRAPL_VM_H

#include <linux/hashtable.h>
#include <linux/kref.h>
#include <linux/kvm_host.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>

#include "vmrapl.h"

/* Most overhead tasks one VM may register (VMRAPL_VM_ADD_TASK). */
#define VR_MAX_TASKS			64

enum vr_key_kind { VR_KEY_KVM, VR_KEY_MM, VR_KEY_TASK, VR_KEY_VCPU };

/**
 * struct vr_key - an entry of the lookup table the probes use
 * @node: in vr_keys; added and removed under vr_vm_mutex, read under RCU.
 * @key: the struct kvm, mm_struct or task_struct it stands for.
 * @vm: the VM that pays.
 * @kind: enum vr_key_kind.
 * @idx: the vCPU (VR_KEY_VCPU).
 * @rcu: a VR_KEY_VCPU entry is freed after a grace period.
 * @del_gp, @del_bucket: when and from which chain the entry was last
 *	removed (vr_key_del()).  An entry added to another chain before a
 *	grace period has passed could take a probe walking the old chain
 *	into the new one, past the keys it looks for: vr_key_add() counts
 *	that in vr_key_early_moves.  No path does it: a vCPU's new thread
 *	gets a new entry (vr_vcpu_threads_install()).
 * @was_linked: @del_gp and @del_bucket are set.
 */
struct vr_key {
	struct hlist_node node;
	const void *key;
	struct vr_vm *vm;
	u32 kind;
	u32 idx;
	struct rcu_head rcu;
	unsigned long del_gp;
	u32 del_bucket;
	bool was_linked;
};

/**
 * struct vr_vcpu_thread - the thread that last ran a vCPU
 * @key: VR_KEY_VCPU entry for @task, in vr_keys while @task is set;
 *	allocated for each thread, freed after a grace period.
 * @task: the thread, reference held; under vr_vm_mutex.
 * @seen: a thread the kvm_entry probe saw run the vCPU, not yet
 *	installed: reference held, handed over with xchg()/cmpxchg().
 *
 * Under the thread policy a vCPU thread is its vCPU's whole time, inside
 * KVM_RUN or not (exit handling, I/O emulation, the syscalls around a
 * sleep), until it runs another vCPU.
 */
struct vr_vcpu_thread {
	struct vr_key *key;
	struct task_struct *task;
	struct task_struct *seen;
};

/* A registered overhead task (VMRAPL_VM_ADD_TASK), on vr_vm.tasks. */
struct vr_task {
	struct vr_key key;
	struct task_struct *task;	/* reference held */
	struct list_head list;
};

/* Columns of a GET_STATS row: energy per domain, busy ns, PKG static. */
#define VR_SNAP_NS	VR_NDOM
#define VR_SNAP_STATIC	(VR_NDOM + 1)
#define VR_SNAP_NR	(VR_NDOM + 2)

/**
 * struct vr_vm - a tracked KVM VM
 * @kvm: the VM.  Attached: @kvm_file pins it.  Auto-tracked: a kvm
 *	reference pins it until the reaper sees that only we hold it.
 * @kvm_file: the VM's file (attached VMs).
 * @k_kvm, @k_mm: lookup entries (the VM's vCPUs, the VMM's threads; @k_mm
 *	only while the VMM's process has no other tracked VM).
 * @ref: the list's reference until vr_vm_unlink(), and those of readers
 *	that looked the VM up under vr_vm_mutex and dropped it
 *	(GET_VM_STATS).  The last vr_vm_put() frees the VM.
 * @list: in vr_vms, under vr_vm_mutex.
 * @dead: on vm_release.c's vr_dead_vms once the last reference is gone.
 * @tasks: registered overhead tasks, under vr_vm_mutex.
 * @charge: VMRAPL_CHARGE_*, read locklessly by the probes.
 * @exact: the VMM that attached it had CAP_PERFMON (perfmon_capable()),
 *	or the VM is only tracked: its views are exact.  Otherwise GET_STATS,
 *	READ_MSR and the page change at most once per unpriv_period_ms and
 *	in steps of unpriv_step_uj.  Set before the VM is visible.
 * @stats_cache, @stats_time: the rows GET_STATS last read for a VM that
 *	is not @exact, and when; under @lock.
 * @domains: VMRAPL_DOM_* bits the guest sees (vmrapl_page.domains).
 * @by_id: the VMM attached with VMRAPL_ATTACH_F_VCPU_ID: a vCPU's index
 *	is its KVM vcpu_id, not its vcpu_idx (vr_vcpu_index()).  Set before
 *	the VM is visible.
 * @acct: (nr_vcpus + 1) x vr_topo.max_pkgs accounts; the last row is the
 *	VM's overhead.
 * @threads: per vCPU, the thread that runs it (struct vr_vcpu_thread).
 * @lock: serializes the ioctls that read or replace the topology arrays
 *	(SET_TOPOLOGY, GET_STATS, GET_STATE, SET_STATE, and the host's
 *	GET_VM_STATS).  Never held across a copy from or to userspace, and
 *	never taken under vr_vm_mutex.
 * @gv_lock: guest view; protects everything below it.  Raw: taken from the
 *	kvm_exit probe with interrupts disabled.
 * @gv_quant: the guest view moves in steps of this many units (1 when
 *	@exact).
 * @gv_work: publishes the page for the kvm_exit probe (vr_gv_kick());
 *	cancelled before the VM is freed, after no probe can reach it.
 * @limit_uw, @limit_window_us: the operator's power limit (0: none) and
 *	its window (VMRAPL_SET_VM_LIMIT), which the guest reads in its power
 *	limit register, locked; under @gv_lock (vm_limit.c).
 * @guest_pl: the guest's power limit register as it last wrote it
 *	(VMRAPL_VM_WRITE_MSR), 0 until it does; under @gv_lock.
 */
struct vr_vm {
	struct kvm *kvm;
	struct file *kvm_file;
	struct kref ref;
	struct vr_key k_kvm;
	struct vr_key k_mm;
	struct list_head list;
	struct llist_node dead;
	struct list_head tasks;
	unsigned int nr_tasks;
	u64 id;
	pid_t pid;
	char comm[TASK_COMM_LEN];
	bool attached;
	bool exact;
	bool by_id;
	u32 charge;
	u32 nr_vcpus;
	u32 regset;
	u32 esu;
	u32 domains;
	struct vr_acct *acct;
	struct vr_vcpu_thread *threads;
	struct mutex lock;		/* see @lock above */
	u64 (*stats_cache)[VR_SNAP_NR];
	u64 stats_time;

	raw_spinlock_t gv_lock;
	struct work_struct gv_work;
	u64 gv_quant;
	u64 guest_period_ns;
	u64 gv_time;
	bool gv_started;
	u32 nr_vpkgs;
	u32 *vpkg;		/* per vCPU */
	u32 *vpkg_vcpus;	/* per vpkg */
	u64 *gv;		/* per vpkg x domain, then per vCPU core */
	u64 *gv_off;		/* same layout: SET_STATE offsets */
	u64 *gv_tmp;		/* per vpkg x domain: scratch */
	struct vmrapl_page *page;
	size_t page_size;
	bool mapped;
	u64 limit_uw;
	u64 limit_window_us;
	u64 guest_pl;
};

/* vm.c: the VMs and the lookup table's writers. */
extern struct mutex vr_vm_mutex;	/* attach, detach, tracking, vr_keys */
extern struct list_head vr_vms;		/* every tracked VM, vr_vm_mutex */
extern struct delayed_work vr_track_work;
extern bool vr_vm_stopping;

/* vm_probe.c: the lookup table and what the probes hand to the work. */
#define VR_HASH_BITS	VR_FILTER_BITS	/* a bucket is its filter bit */
extern struct hlist_head vr_keys[1 << VR_HASH_BITS];
extern unsigned int vr_nr_tasks;	/* VR_KEY_TASK and VR_KEY_VCPU keys */
DECLARE_PER_CPU(struct kvm *, vr_seen_kvm);	/* reference held */
struct vr_vm *vr_lookup(const void *key, u32 kind);
struct vr_key *vr_lookup_key(const void *key);

/* vm_guest.c */
int vr_gv_init(struct vr_vm *vm);
void vr_gv_free(struct vr_vm *vm);
void vr_gv_kick(struct vr_vm *vm, u64 now);
const struct vmrapl_reg *vr_reg_find(struct vr_vm *vm, u64 msr);
long vr_vm_read_msr(struct vr_vm *vm, void __user *argp);
long vr_vm_set_topology(struct vr_vm *vm, void __user *argp);
long vr_vm_get_state(struct vr_vm *vm, void __user *argp);
long vr_vm_set_state(struct vr_vm *vm, void __user *argp);
int vr_vm_mmap(struct file *file, struct vm_area_struct *vma);

/* vm_limit.c: the power limits. */
/* The guest's power unit 1/8 W and time unit 976 us: Intel's common ones. */
#define VR_UNIT_POWER	3
#define VR_UNIT_TIME	10

/* A VM's limits as VMRAPL_GET_VM_LIMIT reports them. */
struct vr_limits {
	u64 uw, window_us;		/* the operator's, 0: none */
	u64 guest_uw, guest_window_us;	/* the guest's enabled PL1, 0: none */
	u32 state;			/* VMRAPL_LIMIT_S_* */
};

u64 vr_power_limit_msr(struct vr_vm *vm);
void vr_gv_set_limit(struct vr_vm *vm, u64 uw, u64 window_us);
void vr_gv_get_limit(struct vr_vm *vm, struct vr_limits *l);
long vr_vm_write_msr(struct vr_vm *vm, void __user *argp);

/* vm_stats.c */
long vr_vm_get_stats(struct vr_vm *vm, void __user *argp);

/* vm_keys.c: the lookup table's writers, vr_vm_mutex held. */
void vr_key_add(struct vr_key *k, const void *key, u32 kind, struct vr_vm *vm);
void vr_key_del(struct vr_key *k);
void vr_vcpu_key_drop(struct vr_vcpu_thread *vt);
extern unsigned long vr_key_early_moves;	/* vr_vm_mutex */
void vr_filter_rebuild(void);
void vr_mm_owner_update(struct mm_struct *mm);
bool vr_vcpu_threads_install(struct vr_vm *vm, struct task_struct **old,
			     int *nr, int max);
void vr_put_threads(struct task_struct **old, int nr);
long vr_vm_add_task(struct vr_vm *vm, void __user *argp);

/* vm.c: references. */
struct vr_vm *vr_vm_id_locked(u64 id);
struct vr_vm *vr_vm_get_id(u64 id);
void vr_kvm_put(struct kvm *kvm);
void vr_vm_free(struct vr_vm *vm);

/* vm_release.c: the last reference and what follows it. */
void vr_vm_put(struct vr_vm *vm);
void vr_vm_release_init(void);
void vr_vm_release_flush(void);
extern unsigned long vr_release_stale;		/* the release work's */

/*
 * Copy a size-versioned struct from userspace (see the uapi header): the
 * ioctls of vm.c, vm_guest.c and vm_stats.c, no lock held.
 */
static inline int vr_copy_sized(void *dst, size_t ksize, void __user *argp)
{
	u32 usize;

	if (get_user(usize, (u32 __user *)argp))
		return -EFAULT;
	if (usize < ksize)
		return -EINVAL;
	if (usize > PAGE_SIZE)
		return -E2BIG;
	return copy_struct_from_user(dst, ksize, argp, usize);
}

static inline bool vr_zero(const u64 *r, unsigned int n)
{
	while (n--)
		if (r[n])
			return false;
	return true;
}

/* How long readers of @vm may leave the packages unclosed (0: always close). */
static inline u64 vr_vm_close_gap(const struct vr_vm *vm)
{
	return vm->exact ? 0 : vr_unpriv_period_ns();
}

static inline unsigned int vr_npk(void)
{
	return vr_topo.max_pkgs;
}

static inline struct vr_acct *vr_vcpu_acct(struct vr_vm *vm, u32 idx,
					   unsigned int pkg)
{
	return &vm->acct[idx * vr_npk() + pkg];
}

static inline struct vr_acct *vr_ovh_acct(struct vr_vm *vm, unsigned int pkg)
{
	return &vm->acct[vm->nr_vcpus * vr_npk() + pkg];
}

/*
 * The sums.  Accounts only grow and are read locklessly: each value is a
 * consistent lower bound, exact once the packages are closed.
 */

/* @field of account row @row's accounts, summed over host packages. */
#define vr_row_sum(vm, row, field) ({					\
	const struct vr_acct *__a = &(vm)->acct[(row) * vr_npk()];	\
	unsigned int __p;						\
	u64 __sum = 0;							\
									\
	for (__p = 0; __p < vr_topo.nr_pkgs; __p++)			\
		__sum += READ_ONCE(__a[__p].field);			\
	__sum;								\
})

/* Energy (eu, domain @d) of account row @row, summed over host packages. */
static inline u64 vr_row_energy(struct vr_vm *vm, u32 row, unsigned int d)
{
	return vr_row_sum(vm, row, energy[d]);
}

/*
 * Static part (eu, PKG domain) of account row @row, summed over host
 * packages.  Read it before the row's energy: the closer writes an
 * account's energy before its static part, so this is then no larger
 * (and the callers clamp it, for weakly ordered CPUs).
 */
static inline u64 vr_row_static(struct vr_vm *vm, u32 row)
{
	return vr_row_sum(vm, row, static_e[VR_DOM_PKG]);
}

/* Busy ns of account row @row, summed over host packages. */
static inline u64 vr_row_ns(struct vr_vm *vm, u32 row)
{
	return vr_row_sum(vm, row, ns);
}

static inline u64 vr_vcpu_energy(struct vr_vm *vm, u32 i, unsigned int d)
{
	return vr_row_energy(vm, i, d);
}

static inline u64 vr_ovh_energy(struct vr_vm *vm, unsigned int d)
{
	return vr_row_energy(vm, vm->nr_vcpus, d);
}

/*
 * No sum of rows here: a total summed apart from its parts can be read
 * smaller than them while the accounts grow (vm_stats.c reads each row
 * once, vr_vm_totals()).
 */

/* The overhead share of virtual package @v: by its vCPU count. */
static inline u64 vr_vpkg_ovh(struct vr_vm *vm, u32 v, unsigned int d)
{
	return vr_mul_div(vr_ovh_energy(vm, d), vm->vpkg_vcpus[v],
			  vm->nr_vcpus);
}

#endif /* _VMRAPL_VM_H */
