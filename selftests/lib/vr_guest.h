/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tiny real-mode KVM guests run by vCPU threads (struct vrg), and a VM in
 * its own process as a real VMM has it (struct vrp).
 */
#ifndef _VR_GUEST_H
#define _VR_GUEST_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

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
/*
 * The same, vCPU i created i-th with KVM id @ids[i] (vrg_create(): i).
 * RDMSR/WRMSR exits go to libvmrapl with the vCPU's id.
 */
struct vrg *vrg_create_ids(int nr_vcpus, const int *ids, enum vrg_prog prog);
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
/* Stop, then run every vCPU again on a new thread. */
int vrg_restart(struct vrg *g);
void vrg_destroy(struct vrg *g);
/*
 * Close the KVM VM fd of @g now (its vCPUs keep the VM alive);
 * vrg_destroy() then leaves it alone.  Returns close()'s result.
 */
int vrg_close_vm_fd(struct vrg *g);
pid_t vrg_tid(struct vrg *g, int i);
/* rdmsr guest: set the MSR to read, and what the guest saw. */
void vrg_set_msr(struct vrg *g, uint32_t msr);
/* wrmsr guest: the value it writes to that MSR (0 until set). */
void vrg_set_msr_value(struct vrg *g, uint64_t val);
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

/*
 * A VM in its own process, as a real VMM has it (the VMM's other threads
 * are the VM's overhead, found by its mm).  The child attaches through
 * libvmrapl and runs until vrp_stop().  vrp_energy() (vr_debugfs.h) reads
 * what vmrapl charged it.
 */
struct vrp {
	pid_t pid;
	pid_t tid;	/* vCPU 0 */
	int rfd;	/* the child's answers */
	int cfd;	/* requests to the child */
};
struct vrp_opts {
	enum vrg_prog prog;
	int duty;		/* percent, default 100 */
	int cpu;		/* pin vCPU 0, -1 = no */
	int charge;		/* VMRAPL_CHARGE_* */
	bool attach;		/* false: run unattached (track_all) */
	int nr_vcpus;		/* default 1 */
	const char *cgroup;	/* a cgroup v2 directory to run in, or NULL */
};
int vrp_start(struct vrp *p, const struct vrp_opts *o);
void vrp_stop(struct vrp *p);
/*
 * The child VMM writes @val to its guest's power limit register, as its
 * exit handler does for the guest's wrmsr (vmrapl_write_msr()): its
 * result, or -ECHILD / -ESRCH when the child cannot be asked.
 */
int vrp_write_pl(struct vrp *p, uint64_t val);

#endif /* _VR_GUEST_H */
