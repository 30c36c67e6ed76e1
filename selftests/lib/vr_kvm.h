/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the vmrapl selftests: tiny real-mode KVM guests run by
 * vCPU threads, module reloads with parameters, debugfs parsing, energy
 * injection through the test source.
 */
#ifndef _VR_KVM_H
#define _VR_KVM_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/vmrapl.h>

enum vrg_prog {
	VRG_SPIN,	/* loop; a PIO exit every few thousand iterations */
	VRG_PIO,	/* an OUT on every iteration: exit-heavy */
	VRG_HLT,	/* idle */
	VRG_RDMSR,	/* read the MSR the VMM names, report it over PIO */
	VRG_WRMSR,	/* write 0 to the MSR the VMM names, report over PIO */
	VRG_RDMSR_SPIN,	/* spin a while, then read and report the MSR */
};

struct vrg;

/* Create a VM with @nr_vcpus vCPUs running @prog; NULL on failure. */
struct vrg *vrg_create(int nr_vcpus, enum vrg_prog prog);
int vrg_kvm_fd(struct vrg *g);
/* Busy @pct percent of every @period_ms (VMM-side sleeps), default 100. */
void vrg_set_duty(struct vrg *g, int pct, int period_ms);
/* Pin vCPU @i to @cpu (before or after start). */
int vrg_pin(struct vrg *g, int i, int cpu);
/* Answer RDMSR/WRMSR exits through libvmrapl (the caller owns @vm). */
struct vmrapl_vm;
int vrg_use_vmrapl(struct vrg *g, struct vmrapl_vm *vm);
int vrg_start(struct vrg *g);
void vrg_stop(struct vrg *g);
void vrg_destroy(struct vrg *g);
pid_t vrg_tid(struct vrg *g, int i);
/* rdmsr guest: set the MSR to read, and what the guest saw. */
void vrg_set_msr(struct vrg *g, uint32_t msr);
struct vrg_msr_log {
	uint64_t reads;
	uint64_t gp;		/* #GP injected */
	uint64_t first;
	uint64_t last;
	uint64_t backwards;	/* 32-bit value went down without a wrap */
	uint64_t wraps;
	uint64_t changes;
	uint64_t writes;	/* wrmsr that did not fault */
};
void vrg_msr_log(struct vrg *g, int i, struct vrg_msr_log *out);
uint64_t vrg_exits(struct vrg *g, int i);

/* /proc/<tid>/schedstat: on-CPU ns. */
uint64_t vr_task_runtime_ns(pid_t tid);
uint64_t vr_now_ns(void);
void vr_sleep_ms(unsigned int ms);

/* /dev/vmrapl */
int vr_open_dev(void);
int vr_get_info(struct vmrapl_info *info);
int vr_attach(int devfd, int kvm_fd, int nr_vcpus, int regset, int esu);
int vr_get_stats(int vmfd, struct vmrapl_stats *st,
		 struct vmrapl_vcpu_stats *vcpus, int nr_vcpus);
int vr_set_policy(int vmfd, uint32_t flags, uint32_t charge,
		  uint32_t period_us);
int vr_inject(int pkg, int dom, uint64_t units, bool set);

/* Module control (inside the rig, VMRAPL_KO names the module file). */
int vr_reload(const char *params);
int vr_unload(void);
int vr_load(const char *params);
int vr_set_param(const char *name, const char *value);

/* debugfs books of one package and domain, in eu (2^-24 J). */
struct vr_books {
	uint64_t sampled, static_e, dynamic, tracked, host, idle, lost;
	uint64_t samples, resets, wraps, overruns, busy_ns;
	int online;
};
int vr_read_books(int pkg, const char *dom, struct vr_books *b);
bool vr_books_conserve(const struct vr_books *b);
void vr_dump_debugfs(void);

/* Package of each CPU in the rig (from sysfs). */
int vr_cpu_package(int cpu);

#endif /* _VR_KVM_H */

/*
 * A VM in its own process, as a real VMM has it (the VMM's other threads
 * are the VM's overhead, found by its mm).  The child attaches through
 * libvmrapl and runs until vrp_stop().
 */
struct vrp {
	pid_t pid;
	pid_t tid;	/* vCPU 0 */
};
struct vrp_opts {
	enum vrg_prog prog;
	int duty;		/* percent, default 100 */
	int cpu;		/* pin vCPU 0, -1 = no */
	int charge;		/* VMRAPL_CHARGE_* */
	bool attach;		/* false: run unattached (track_all) */
};
int vrp_start(struct vrp *p, const struct vrp_opts *o);
void vrp_stop(struct vrp *p);
/* Energy (uJ, PKG, overhead included) and overhead of the VM of @pid. */
int vrp_energy(pid_t pid, double *uj, double *ovh_uj, bool *attached);

/*
 * Helpers of the lifecycle, fuzz and load selftests (appended; the
 * functions above are unchanged).
 */
#ifndef _VR_KVM_LIFECYCLE_H
#define _VR_KVM_LIFECYCLE_H

/* A /proc/meminfo field in kB ("SUnreclaim:", "VmallocUsed:"), or -1. */
long vr_meminfo_kb(const char *key);
/* Let RCU-deferred frees run and drop the page and slab caches. */
void vr_mem_settle(void);
/*
 * The median of three growths: a leak shifts all three alike, while a
 * one-off growth of the kernel's caches (and its later release) moves at
 * most two of them.
 */
long vr_median3(long a, long b, long c);
/*
 * Bytes of allocated slab objects (active objects x object size over
 * /proc/slabinfo), in kB.  Unlike SUnreclaim it does not count the free
 * room of partial slabs, so fragmentation does not move it.
 */
long vr_slab_active_kb(void);
/*
 * Close the KVM VM fd of @g now (its vCPUs keep the VM alive);
 * vrg_destroy() then leaves it alone.  Returns close()'s result.
 */
int vrg_close_vm_fd(struct vrg *g);
/* /sys/devices/system/cpu/cpuN/online: 1, 0, or -errno. */
int vr_cpu_get_online(int cpu);
int vr_cpu_set_online(int cpu, bool on);
/* Is vmrapl loaded (/sys/module/vmrapl)? */
bool vr_module_loaded(void);
/* Lines of /sys/kernel/debug/vmrapl/vms of @kind ("attached", "auto", NULL: all). */
int vr_vms_count(const char *kind);
/* Both packages' PKG books; -errno when one cannot be read. */
int vr_read_books2(struct vr_books b[2]);

#endif /* _VR_KVM_LIFECYCLE_H */

#ifndef _VR_KVM_PLAUSIBLE_H
#define _VR_KVM_PLAUSIBLE_H
/*
 * The most energy, in eu (2^-24 J), that @npkg packages can draw in @ns
 * at the module's default max_power_w (500 W), with a 25 % and 1 J
 * margin.  Anything above it is not energy but an accounting error.
 */
#define VR_MAX_POWER_W	500
uint64_t vr_max_eu(uint64_t ns, int npkg);
#endif

#ifndef _VR_KVM_VMCOUNT_H
#define _VR_KVM_VMCOUNT_H
/*
 * KVM VMs alive in the whole system: KVM keeps a debugfs directory
 * "<pid>-<fd>" per VM under /sys/kernel/debug/kvm from KVM_CREATE_VM
 * until the VM is destroyed.  -errno when debugfs has no kvm directory.
 */
int vr_kvm_vm_count(void);
#endif
