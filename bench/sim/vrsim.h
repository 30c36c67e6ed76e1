/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vrsim's private header: the simulated host (packages, CPUs, tasks, VMs),
 * the events, the results, and what each part of the simulator gives the
 * others.  vrsim.c says what the simulator does.
 *
 *   model.c       the random stream, the RAPL counters (the shared model
 *                 of kmod/user/vr_rapl_model.h) and the power truth
 *   sched.c       the event queue, the scheduler, VMs and tasks
 *   alg_*.c       one per algorithm: vmrapl, qemu-vmsr, scaphandre, kepler
 *   workloads.c   the workloads
 *   output.c      the error statistics, markdown and JSON
 *   vrsim.c       options, one run (the event loop), main
 */
#ifndef _VRSIM_H
#define _VRSIM_H

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vr_core.h"
#include "user/vr_rapl_model.h"

#define MS		1000000ULL
#define SEC		1000000000ULL
#define FJ_PER_J	1e15
#define MAXPKG		4
#define MAXCPU		64
#define NALG		4
#define NOTASK		(-1)

enum { A_VMRAPL, A_QEMU, A_SCAPH, A_KEPLER };

enum tkind { T_VCPU, T_IO, T_HOST };
enum pattern { P_STEADY, P_BURSTY, P_JITTER, P_PHASE, P_RANDOM };
enum tstate { S_SLEEP, S_QUEUED, S_RUNNING, S_DEAD };

struct task {
	int kind, vm, vidx;
	u64 dyn_uw;
	int pattern;
	u64 on_ns, off_ns, phase_off;
	u64 aff[MAXCPU / 64];		/* allowed CPUs */
	int state, cpu, last_cpu;
	u64 demand;			/* CPU ns left in this burst */
	u64 run_start;
	u64 runtime;			/* exact, cumulative */
	u64 runtime_pkg[MAXPKG];
	u32 wake_ver;
	int qnext;
};

struct cpu {
	int pkg, cur;
	int qhead, qtail, qlen;
	u64 slice_start;
	u32 ev_ver;
	struct vr_cpu vc;
};

struct pkg {
	u64 static_uw;
	int ncpu, first;
	struct vrm_rapl ctr;
	struct vr_pkg p;
	struct vr_cpu *cpus[MAXCPU];
	u64 closes;
	/* anchors: last raw reads */
	u64 scaph_raw, kepler_raw;
	double scaph_truth_j, kepler_truth_j;
};

struct vm {
	int nvcpu, first_task, ntask;	/* vCPUs first, then the I/O thread */
	u64 start, stop;
	bool started, stopped;
	struct vr_acct *acct;		/* (nvcpu + 1) x npkg */
	double truth_j, dyn_j;
	double est[NALG], own[NALG];
	/* qemu vmsr (per VM loop) */
	bool q_have;
	u64 q_raw[MAXPKG];
	double q_truth_pkg[MAXPKG];
	u64 *q_ticks;			/* per task */
	u64 q_rt_pkg[MAXPKG];		/* exact runtime per package */
	/* scaphandre / kepler: per process */
	bool s_have, k_have;
	u64 s_ticks, s_rt, k_rt;
	double k_dyn;
	/* window snapshots, one per second: truth, dyn, est[4], own[4] */
	double *snap;
};

#define SNAPW	(2 + 2 * NALG)

struct workload {
	const char *name, *what;
	void (*setup)(void);
	int npkg, ncpu;
	u64 static_uw;
	bool start_near_wrap;
	u64 full_secs;			/* 0: the default */
};

struct sim {
	const struct workload *w;
	int npkg, ncpu_total;
	struct pkg pk[MAXPKG];
	struct cpu cpu[MAXCPU];
	struct task *t;
	int ntask;
	size_t captask;
	struct vm *vm;
	int nvm;
	size_t capvm;
	u64 now, end;
	int nsec;			/* whole seconds simulated */
	u64 host_busy_ns;		/* all tasks, exact */
	double host_truth_j;
	/* anchors' host-level state */
	bool s_have, k_have;
	u64 s_host_ticks, s_host_rt, k_host_rt;
	/* checks */
	u64 events, switches, closes, conservation_bad;
	u64 vr_lost_eu, vr_host_eu, vr_idle_eu, vr_sampled_eu, vr_resets;
	u64 vr_overruns, vr_wraps, qemu_wrap_zero, scaph_wrap_drop;
};

/* At equal times, the anchors' loops run before a window is read. */
enum { EV_CPU, EV_WAKE, EV_TICK, EV_QEMU, EV_SCAPH, EV_KEPLER, EV_WIN,
       EV_VMSTART, EV_VMSTOP };

struct ev {
	u64 t;
	u32 ver;
	int type, id;
};

struct stat {
	double sum, max;
	u64 n;
};

struct result {
	const char *wl;
	struct stat err[NALG][2];	/* [alg][0: 1 s, 1: 60 s] */
	struct stat own[NALG][2];
	double net[NALG];		/* % created (+) or lost (-) */
	double truth_j, host_lost_j;
	int nvm;
	u64 events, switches, closes, conservation_bad;
	double vr_lost_j, vr_host_j, vr_idle_j, vr_sampled_j;
	u64 vr_resets, vr_overruns, vr_wraps, qemu_wrap_zero;
	u64 scaph_wrap_drop;
	double secs, wall;
};

#define NWL	11		/* workloads[] */

/* vrsim.c: the options and the state of the run. */
extern struct sim S;
extern bool quick;
extern u64 period_ns, latch_ns, lag_used_ns;
extern long long lag_ns;

/* model.c */
extern struct vrm_rng sim_rng;
u64 rnd(void);
u64 below(u64 n);
u64 expo(u64 m);
void *xcalloc(size_t n, size_t sz);
void *xgrow(void *p, size_t n, size_t *cap, size_t first, size_t sz);
void rapl_init(struct vrm_rapl *r, u64 offset);
void task_accrue(struct task *t);
void pkg_power(int pi);
u64 vm_runtime(const struct vm *v);
void sync_all(void);

/* /proc's utime + stime of a thread, in 100 Hz ticks. */
static inline u64 ticks_of(u64 ns)
{
	return ns / (10 * MS);
}

/* sched.c */
void ev_reset(void);
bool ev_empty(void);
void ev_push(u64 t, int type, int id, u32 ver);
struct ev ev_pop(void);
void task_wake(int ti);
void on_cpu_event(int ci);
int new_vm(int nvcpu, u64 dyn_uw, int pattern, u64 on, u64 off, int pkg,
	   u64 io_uw, u64 io_on, u64 io_off, u64 start, u64 stop);
void host_noise(int n);
void vm_start(int vi);
void vm_stop(int vi);

/* alg_*.c */
struct vr_acct *task_acct(const struct task *t, int pkg);
void vmrapl_pkg_init(struct pkg *pk);
void vr_close(int pi);
double vmrapl_vm_j(const struct vm *v);
void on_qemu(int vi);
void on_scaph(void);
void on_kepler(u64 dt);

/* workloads.c */
extern const struct workload workloads[NWL];

/* output.c */
void analyse(struct result *r);
void print_md(const struct result *res, int n);
int write_json(const char *path, const struct result *res, int n);

#endif /* _VRSIM_H */
