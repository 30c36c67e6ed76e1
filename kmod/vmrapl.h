/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmrapl internal declarations shared by the kernel-side files.
 */
#ifndef _VMRAPL_H
#define _VMRAPL_H

#include <linux/atomic.h>
#include <linux/cpumask.h>
#include <linux/hash.h>
#include <linux/kvm_host.h>
#include <linux/rcupdate.h>
#include <linux/timer.h>
#include <linux/tracepoint-defs.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <linux/vmrapl.h>

#include "compat.h"
#include "vr_core.h"

/**
 * struct vr_topo - host energy packages
 * @nr_pkgs: number of packages (dies on multi-die Intel parts) found.
 * @max_pkgs: size of the package tables, from the firmware topology.
 *
 * The CPU to package mapping is written at init and from the CPU hotplug
 * callbacks, which the hotplug core serializes.
 */
struct vr_topo {
	unsigned int nr_pkgs;
	unsigned int max_pkgs;
};

extern struct vr_topo vr_topo;

int vr_topo_init(void);
void vr_topo_exit(void);
int vr_topo_assign(unsigned int cpu);
int vr_topo_pkg_of(unsigned int cpu);

/**
 * struct vr_hpkg - a host package: the core's state plus its source
 * @core: accounting core state (locking in vr_core.h).
 * @id: dense package index.
 * @timer: safety/freshness timer, pinned to @timer_cpu.
 * @timer_lock: serializes arming @timer and writing @timer_cpu: the
 *	timer's callback (softirq), CPU hotplug and module stop.  Raw,
 *	taken with interrupts disabled; never held around del_timer_sync().
 * @timer_cpu: CPU the timer runs on, or -1; read locklessly elsewhere.
 * @timer_hk: @timer_cpu is a housekeeping CPU (not isolated); under
 *	@timer_lock.
 * @est: estimate source model, under core.close_lock.
 * @test: test source counters (eu of the test unit), atomic.
 * @timer_busy_ns: core.busy_ns when the timer last ran (timer only).
 * @timer_over_max: core.over_max when the timer last warned (timer only).
 * @safety_reads: closes done by the timer.
 * @remote_closes: closes requested from process context.
 * @last_remote: local clock of the last such request (rate limit).
 * @release_closes: closes forced by a batch of VM releases (vm_release.c), each
 *	one IPI to @timer_cpu at most; only vr_engine_release(), which
 *	vm_release.c's work serializes, writes it.
 * @step_work: times the counters' steps when the package comes online
 *	(engine_step.c).
 * @step_cpu, @step_tries: the CPU it was queued on, and how many times
 *	it ran since; written by the hotplug callback that queues it, when
 *	it is not pending, and by the work itself.
 * @cpus: CPUs of the package ever seen online (core.cpus points here).
 */
struct vr_hpkg {
	struct vr_pkg core;
	unsigned int id;
	struct timer_list timer;
	raw_spinlock_t timer_lock;	/* see @timer_lock above */
	int timer_cpu;
	bool timer_hk;
	struct vr_estimate est;
	atomic64_t test[VR_NDOM];
	u64 timer_busy_ns;
	u64 timer_over_max;
	u64 safety_reads;
	u64 remote_closes;
	u64 last_remote;
	u64 release_closes;
	struct delayed_work step_work;
	unsigned int step_cpu;
	unsigned int step_tries;
	struct vr_cpu *cpus[];
};

extern struct vr_hpkg **vr_pkgs;

/*
 * The kvm_entry/kvm_exit tracepoints of kvm.ko (EXPORT_TRACEPOINT_SYMBOL_GPL
 * in arch/x86/kvm/x86.c); their TRACE_EVENT header is not installed.
 */
extern struct tracepoint __tracepoint_kvm_entry;
extern struct tracepoint __tracepoint_kvm_exit;

/* Energy sources (source_*.c). */
struct vr_source {
	const char *name;
	u32 id;			/* VMRAPL_SOURCE_* */
	bool estimated;
	/* Is the source usable here?  0, or -errno with *why filled. */
	int (*probe)(const char **why);
	/* Describe the domains of @hp; runs in process context. */
	int (*pkg_init)(struct vr_hpkg *hp, unsigned int cpu);
	/*
	 * Read the counters on a CPU of @hp, interrupts disabled, close lock
	 * held.  @dt and @busy are the folded epoch.  Returns the valid mask.
	 */
	u32 (*read)(struct vr_hpkg *hp, u64 *raw, u64 dt, u64 busy);
	/*
	 * Read the counters of the calling CPU's package @hp to time their
	 * steps (engine_step.c): interrupts disabled, no lock held.  Returns
	 * the valid mask.  NULL: the source's counters do not step.
	 */
	u32 (*poll)(struct vr_hpkg *hp, u64 *raw);
};

extern const struct vr_source vr_source_intel;
extern const struct vr_source vr_source_amd;
extern const struct vr_source vr_source_estimate;
extern const struct vr_source vr_source_test;
extern const struct vr_source *vr_src;

/* Module parameters (main.c). */
extern unsigned int vr_max_power_w;
extern unsigned int vr_est_idle_mw;
extern unsigned int vr_est_busy_mw;
extern unsigned int vr_test_esu;
extern unsigned int vr_test_width;
extern unsigned int vr_test_static_mw;
extern unsigned int vr_p_static_mw;
extern bool vr_percore;
extern bool vr_aperf;
extern bool vr_track_all;
extern bool vr_check_release;
extern bool vr_check_stack;
extern atomic_long_t vr_stack_bad[2];	/* engine.c: on entry, in a probe */
extern unsigned int vr_inject_stale;
extern unsigned int vr_unpriv_period_ms;
extern unsigned int vr_unpriv_step_uj;

/* The finest period an unprivileged VMM's books change at, in ns. */
static inline u64 vr_unpriv_period_ns(void)
{
	return (u64)READ_ONCE(vr_unpriv_period_ms) * NSEC_PER_MSEC;
}

/**
 * struct vr_vm_ops - what the engine's probes ask the VM layer
 * @task_acct: the account that pays for @t's CPU time on package @pkg,
 *	or NULL for host time (sched_switch).
 * @guest_entry: @vcpu enters guest mode on this CPU (kvm_entry).
 * @guest_exit: @vcpu left guest mode (kvm_exit).
 *
 * Probe context: interrupts disabled, under RCU-sched; @c is this CPU's
 * state and @now its local clock.  The VM layer (vm_probe.c) provides
 * them and main.c hands them to vr_engine_start(): the engine names no
 * symbol of the VM layer, and the VM layer calls down into the engine
 * only.  The sched_switch probe asks @task_acct only about a busy task
 * that vr_filter does not rule out (vr_task_maybe_charged()).
 */
struct vr_vm_ops {
	struct vr_acct *(*task_acct)(struct task_struct *t, unsigned int pkg);
	void (*guest_entry)(struct kvm_vcpu *vcpu, struct vr_cpu *c, u64 now,
			    unsigned int pkg);
	void (*guest_exit)(struct kvm_vcpu *vcpu, struct vr_cpu *c, u64 now,
			   unsigned int pkg);
};

/*
 * The switch filter, engine.c's: bit hash_ptr(key, VR_FILTER_BITS) is set
 * for the key of every task and mm the VM layer charges (and for its other
 * keys: a bit set in vain only costs a lookup).  The VM layer writes it
 * with its lookup table, under vr_vm_mutex (vm_keys.c), and its lookups go
 * through it too; the sched_switch probe reads it under RCU-sched.
 */
#define VR_FILTER_BITS	10
extern unsigned long vr_filter[BITS_TO_LONGS(1 << VR_FILTER_BITS)];
/*
 * Set with the first bit while the VM layer has a key in its table, and
 * cleared with the bits when the table empties (vm_keys.c, under
 * vr_vm_mutex): until then no task is charged, and the sched_switch probe
 * looks at no task's bits.
 */
extern bool vr_filter_used;

/* Is bit hash_ptr(@key) of vr_filter set? */
static __always_inline bool vr_filter_test(const void *key)
{
	return test_bit(hash_ptr((void *)key, VR_FILTER_BITS), vr_filter);
}

/* engine.c */
int vr_engine_init(void);
void vr_engine_exit(void);
int vr_engine_start(const struct vr_vm_ops *ops);
void vr_engine_stop(void);
void vr_engine_set_period(u64 ns);
void vr_engine_set_policy(unsigned int policy);
u64 vr_engine_period_ns(void);
unsigned int vr_engine_policy(void);
void vr_close_pkg_local(struct vr_hpkg *hp, bool timer);
void vr_close_pkg_wait(struct vr_hpkg *hp);
void vr_pkg_static_read(struct vr_hpkg *hp, struct vr_static_report *r);
struct vr_cpu *vr_engine_cpu(unsigned int cpu);

/* engine_remote.c: closes and releases asked from process context */
void vr_close_all(u64 min_gap_ns);
/* The accounts [@lo, @hi) of one VM, for vr_engine_release(). */
struct vr_acct_range {
	const struct vr_acct *lo;
	const struct vr_acct *hi;
};

void vr_engine_release(const struct vr_acct_range *r, unsigned int n);
/* vr_engine_sweep(): what the debug sweep of a release found. */
enum { VR_SWEEP_CLEAN, VR_SWEEP_REPAIRED, VR_SWEEP_STUCK };

int vr_engine_sweep(const struct vr_acct_range *r, bool inject, char *why,
		    size_t len);

/* engine_timer.c: the package timer */
void vr_pkg_timer_init(struct vr_hpkg *hp);
void vr_pkg_timer_start_on(struct vr_hpkg *hp, unsigned int cpu,
			   bool housekeeping);
void vr_pkg_timer_move(struct vr_hpkg *hp, int cpu, bool housekeeping);
void vr_pkg_timers_stop(void);

/* engine_cpu.c: CPU hotplug and suspend */
void vr_pkg_step_init(struct vr_hpkg *hp);
void vr_pkg_step_start(struct vr_hpkg *hp, unsigned int cpu);
void vr_pkg_steps_stop(void);
int vr_engine_cpus_start(void);
void vr_engine_cpus_stop(void);

/* The package's per-core weight (vr_pkg_set_core()): enum vr_core_kind. */
static inline u32 vr_hpkg_core_kind(const struct vr_hpkg *hp)
{
	return READ_ONCE(hp->core.core.kind);
}

u32 vr_core_kinds(void);

/* The VM layer (vm.h has its private side). */
extern const struct vr_vm_ops vr_vm_probe_ops;		/* vm_probe.c */
long vr_attach_vm(void __user *argp);			/* vm.c */
int vr_vm_init(void);
void vr_vm_exit(void);
bool vr_vm_any(void);
void vr_vm_drain_seen(void);
long vr_list_vms(void __user *argp);			/* vm_stats.c */
long vr_get_vm_stats(void __user *argp);
long vr_set_vm_limit(void __user *argp);		/* vm_limit.c */
long vr_get_vm_limit(void __user *argp);
struct seq_file;
void vr_vm_debugfs_show(struct seq_file *m);
void vr_vm_debugfs_checks(struct seq_file *m);

/*
 * The module's own live objects, by kind, for the leak checks: debugfs
 * "objects" shows them, and module exit reports any that is not zero.
 * Every allocation or reference that outlives a call counts here.
 */
enum vr_obj {
	VR_OBJ_VMS,		/* struct vr_vm */
	VR_OBJ_ACCTS,		/* a VM's account array */
	VR_OBJ_GV_PAGES,	/* a VM's guest-view page (vmalloc) */
	VR_OBJ_TASKS,		/* task references of ADD_TASK */
	VR_OBJ_KEYS,		/* entries of the probes' lookup table */
	VR_OBJ_KVM_REFS,	/* references on a KVM VM or its file */
	VR_OBJ_NR,
};

extern atomic_long_t vr_objects[VR_OBJ_NR];
extern const char *const vr_obj_names[VR_OBJ_NR];

static inline void vr_obj_get(enum vr_obj o)
{
	atomic_long_inc(&vr_objects[o]);
}

static inline void vr_obj_put(enum vr_obj o)
{
	atomic_long_dec(&vr_objects[o]);
}

/* debugfs.c */
void vr_debugfs_init(void);
void vr_debugfs_exit(void);

/* Test source injection (source_model.c). */
long vr_test_inject(void __user *argp);

#endif /* _VMRAPL_H */
