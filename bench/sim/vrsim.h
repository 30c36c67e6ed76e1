/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vrsim's private header: the simulated host (packages, CPUs, tasks, VMs),
 * the events, the results, and what each part of the simulator gives the
 * others.  vrsim.c says what the simulator does.
 *
 *   model.c       the random stream, the physical power model of a
 *                 package, its RAPL-like counter and the three truths
 *                 (none of it shared with kmod/)
 *   sched.c       the event queue, the scheduler, VMs and tasks
 *   alg_*.c       one per algorithm: vmrapl (three static-power settings,
 *                 and per-core energy weighting),
 *                 qemu-vmsr, scaphandre (as coded, units fixed), kepler,
 *                 and a naive baseline (5 s CPU-time share)
 *   workloads.c   the workloads
 *   output.c      the error statistics over seeds, markdown and JSON
 *   bandwidth.c   CFS bandwidth control (cpu.max) of a VM's threads, as
 *                 the kernel enforces it
 *   limitbench.c  --limit-bench: per-VM power limits held by the
 *                 controller of userspace/common/limit.c through
 *                 bandwidth.c, against a static quota; the scenarios, the
 *                 judgement and its markdown, CSV and JSON
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

#define MS		1000000ULL
#define SEC		1000000000ULL
#define DRIFT_PERIOD_S	120	/* --floor-drift's period */
#define FJ_PER_J	1e15
#define MAXPKG		4
#define MAXCPU		64
#define NOTASK		(-1)
#define NSEED_FULL	10
#define CORE_LATCH_NS	976563ULL	/* per-core counters' update */
#define THERM_STEP_NS	(10 * MS)	/* --leakage: temperature's step */

/* vmrapl instances run side by side on the same trace and counters. */
enum { V_LEARN, V_HI, V_LO, V_CORE, NVR };

/* The rows of the tables: an algorithm, or one setting of one. */
enum { R_VR, R_VR_HI, R_VR_LO, R_VR_CORE, R_QEMU, R_SCAPH, R_SCAPH_FIX,
       R_KEPLER, R_NAIVE, NROW };

/* What an estimate is judged against: three truths, then its own rule. */
enum { J_OCC, J_DYN, J_BUSY, J_OWN, NJUDGE };
#define NTRUTH	3

/* Windows: 1 s, 5 s aligned to multiples of 5 s, 60 s. */
enum { W_1, W_5, W_60, NWIN };

enum tkind { T_VCPU, T_IO, T_HOST };
enum pattern { P_STEADY, P_BURSTY, P_JITTER, P_PHASE, P_RANDOM };
/* S_THROTTLED: runnable, held off by its VM's CPU quota (bandwidth.c). */
enum tstate { S_SLEEP, S_QUEUED, S_RUNNING, S_DEAD, S_THROTTLED };

/* Per-core power of a task at the all-core frequency, by its intensity. */
#define W_VECTOR	14000000ULL	/* AVX-heavy */
#define W_NORMAL	8000000ULL
#define W_MEMORY	4000000ULL	/* memory-bound, stalls */

struct task {
	int kind, vm, vidx;
	u64 base_uw;			/* core power at the base frequency */
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
	u64 thr_at;			/* S_THROTTLED since */
	/* qemu vmsr: /proc reads at the start of its loop iteration */
	u64 q_ticks0;
	int q_pkg;
};

/*
 * A RAPL-like counter (model.c): exact energy in fJ, latched at update
 * instants about 1 ms apart (with jitter), shown in ESU units, wrapping.
 */
struct ctr {
	u32 esu, width;
	u64 step_ns, jitter_ns;
	u64 power_uw;
	u64 t, next_upd;
	__uint128_t fj, latch_fj;
	u64 offset;
	u64 rs;				/* own jitter stream (0: shared) */
};

struct cpu {
	int pkg, cur;
	int core;			/* CPU index of its core's counter */
	int qhead, qtail, qlen;
	u64 slice_start;
	u64 norm_at;			/* the scheduler's own next event; an
					 * earlier one checks a quota */
	u32 ev_ver;
	u64 core_uw;			/* its runner's part of its core's
					 * power now (0: idle) */
	u64 traffic_uw;			/* --mem-uncore: its runner's uncore
					 * uplift now */
	u64 dram_uw;			/* --mem-uncore: its runner's DRAM
					 * traffic power now */
	struct ctr core_ctr;		/* its core's energy (AMD-like) */
	struct vr_cpu vc[NVR];
};

/*
 * The physical model of one package (model.c): idle floor when every
 * core is idle (in its C-state: at once, after --pc6-delay-us, or never
 * with --no-pc6), an uncore uplift while any is active, per-core power by
 * intensity scaled by a frequency that falls with the active cores.
 */
struct pmodel {
	u64 floor_uw;			/* package C-state, all cores idle */
	u64 uncore_uw;			/* added while any core is active */
	u32 f_one_mhz;			/* one core active (turbo) */
	u32 f_all_mhz;			/* every core active (base) */
};

struct pkg {
	struct pmodel m;		/* m.floor_uw: the floor now */
	u64 floor0_uw;			/* the floor drift swings around */
	double drift_phase;		/* rad, per seed and package */
	int ncpu, first, nbusy;
	bool pc6;			/* in the C-state: floor alone */
	u32 pc6_ver;			/* the pending EV_PC6's */
	double fscale;			/* (f / f_all)^2 at nbusy */
	int ncore;			/* cores (--smt: ncpu / 2) */
	/* --leakage */
	double theta;			/* K above the idle steady state */
	double lv;			/* voltage factor now */
	double therm_j;			/* truth_j at the last step */
	u64 therm_t;
	/* --mem-uncore: the DRAM domain */
	struct ctr dram;
	u64 dram_power_uw;
	double dram_j, dram_idle_j;	/* exact; with every core idle */
	u64 t_truth;			/* truths integrated up to here */
	u64 power_uw;			/* package power now */
	double truth_j;			/* exact package energy */
	double all_idle_j;		/* of it, with every core idle */
	struct ctr ctr;
	struct vr_pkg p[NVR];
	struct vr_cpu *cpus[NVR][MAXCPU];
	u64 closes;
	u64 fit_at;			/* next run of the package timer's fit */
	/* anchors: last raw reads */
	u64 kepler_raw;
	double kepler_truth_j;
	u64 naive_raw;			/* the naive baseline's */
	double naive_truth_j;
	bool q_read;			/* qemu: read at this iteration */
};

struct vm {
	int nvcpu, first_task, ntask;	/* vCPUs first, then the I/O thread */
	u64 start, stop;
	bool started, stopped;
	struct vr_acct *acct;		/* NVR x (nvcpu + 1) x npkg */
	double truth[NTRUTH];
	double dram_truth[NTRUTH];	/* --mem-uncore */
	double est[NROW], own[NROW];
	/* qemu vmsr, its state kept across iterations as the real code */
	bool q_have;
	u64 q_nb_vcpu[MAXPKG];
	u64 q_e_ratio[MAXPKG];
	u64 q_e_start[MAXPKG];
	u64 q_vpkg;			/* the guest's package counter, units */
	double q_truth0[MAXPKG];
	u64 q_rt0[MAXPKG];
	/* scaphandre: records of the process */
	int s_nrec;
	u64 s_ticks;
	double s_usage;			/* % of one CPU, last refresh */
	u64 s_rt;
	/* kepler */
	bool k_seen;
	u64 k_ticks, k_rt;
	/* the naive baseline: CPU time per package at its last loop */
	u64 n_rt[MAXPKG];
	/* window snapshots, one per second */
	double *snap;
	struct bw *bw;			/* its cpu.max (bandwidth.c); NULL:
					 * never limited */
};

/* a second's snapshot: truths, estimates, own rules, then DRAM's */
#define SNAPW	(NTRUTH + 2 * NROW + NTRUTH + NVR)
#define SNAP_DRAM	(NTRUTH + 2 * NROW)

struct workload {
	const char *name, *what;
	void (*setup)(void);
	int npkg, ncpu;
	bool homogeneous;		/* every task of a package: one power */
	bool start_near_wrap;
	struct pmodel m;		/* 0s: the default package */
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
	u64 lead;			/* --idle-lead: VMs and windows start */
	int nsec;			/* whole seconds simulated */
	u64 host_busy_ns;		/* all tasks, exact */
	double host_task_truth[NTRUTH];	/* host tasks' share */
	double host_dram_truth[NTRUTH];	/* --mem-uncore */
	/* scaphandre's host records */
	int s_nrec;
	u64 s_uj_last;
	u64 s_t_last;
	bool s_uj_ok;
	double s_truth_last;
	u64 s_rt_last;
	/* kepler's node state */
	bool k_have;
	u64 k_busy, k_ticks_all;
	/* the naive baseline's loop */
	bool n_have;
	u64 n_t_last;
	u64 n_rt_all[MAXPKG];		/* every task's CPU time, per package */
	/* checks */
	u64 events, switches, closes, conservation_bad;
	u64 core_closes;			/* V_CORE's */
	u64 qemu_wrap_zero, scaph_wrap_skip;
};

/*
 * At equal times, the anchors' loops run before a window is read, and a
 * package enters its C-state (--pc6-delay-us) before anything else.
 */
enum { EV_PC6, EV_THERM, EV_CPU, EV_WAKE, EV_TICK, EV_QEMU, EV_SCAPH, EV_KEPLER, EV_WIN,
       EV_VMSTART, EV_VMSTOP, EV_LOAD, EV_BWPERIOD, EV_BWSLACK, EV_LSNAP,
       EV_LCTL, EV_LSTEP };

struct ev {
	u64 t;
	u32 ver;
	int type, id;
};

struct stat {
	double sum, max;
	u64 n;
};

/* One run (one workload, one seed). */
struct result {
	struct stat err[NROW][NJUDGE][NWIN];
	struct stat dram_err[NVR][NTRUTH][NWIN];	/* --mem-uncore */
	double net[NROW];		/* % of the occupied truth, whole run */
	double truth_j;
	int nvm;
	u64 events, switches, closes, conservation_bad;
	double model_err;
	double vr_lost_j[NVR], vr_host_j, vr_idle_j, vr_sampled_j;
	double vr_static_w[NVR];	/* p_static at the end, per package avg */
	double vr_percore_j;		/* V_CORE: charged by per-core weight */
	double vr_dynamic_j;		/* V_CORE: its dynamic energy */
	u64 vr_percore_clamps, vr_core_closes;
	int vr_learned;			/* packages whose static was learned */
	int vr_host_floor;		/* packages on the others' floor */
	u64 vr_resets, vr_overruns, vr_wraps, qemu_wrap_zero;
	u64 scaph_wrap_skip;
	double floor_w;
	double secs, wall;
};

/* All seeds of one workload. */
struct wres {
	const char *wl;
	const struct workload *w;
	int nseed;
	struct result *r;		/* nseed */
};

/* vrsim.c: the options and the state of the run. */
extern struct sim S;
extern bool quick;
extern u64 period_ns, latch_ns;
extern long long lag_ns;
extern u64 lag_used_ns;
extern struct vr_step step_used;
extern u64 inject_fault_at;
extern bool switches_only;
extern double floor_spread;
extern double floor_drift;
extern bool no_host_floor;
extern int vr_policy;
extern u64 idle_lead_s;
extern u64 pc6_delay_ns;
extern bool no_pc6;
extern u64 core_latch_ns;
extern double update_jitter;
extern u32 ctr_esu;
extern bool smt, leakage, mem_uncore;
int own_truth(void);
void sim_run(const struct workload *w, u64 secs, u64 seed, struct result *r);

/* model.c */
void rng_seed(u64 s);
u64 pkg_floor_uw(u64 nominal, u64 seed, int p);
double pkg_drift_phase(u64 seed, int p);
u64 rnd(void);
u64 below(u64 n);
u64 expo(u64 m);
void *xcalloc(size_t n, size_t sz);
void *xgrow(void *p, size_t n, size_t *cap, size_t first, size_t sz);
void ctr_init(struct ctr *c, u64 offset);
void core_ctr_init(struct ctr *c, u32 esu, u64 seed);
u64 ctr_read(struct ctr *c, u64 now);
double ctr_units_j(const struct ctr *c, u64 u);
u64 ctr_range(const struct ctr *c);
void pkg_model_init(struct pkg *pk);
void core_ctrs_init(int pi, u64 seed);
void pkg_advance(int pi);
void pkg_retune(int pi);
void pkg_pc6(int pi, u32 ver);
void pkg_therm(int pi);
void dram_ctr_init(struct pkg *pk, u64 seed);
void task_accrue(struct task *t);
u64 vm_runtime(const struct vm *v);
void sync_all(void);
double model_check(void);

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
void task_place(int ti);
void cpu_arm(struct cpu *c);
void on_cpu_event(int ci);
int new_vm(int nvcpu, u64 base_uw, int pattern, u64 on, u64 off, int pkg,
	   u64 io_uw, u64 io_on, u64 io_off, u64 start, u64 stop);
void host_noise(int n, u64 base_uw);
void vm_start(int vi);
void vm_stop(int vi);

/* bandwidth.c */
#define BW_NO_QUOTA	(~0ULL)		/* cpu.max "max" */
#define HZ_TICK_NS	(4 * MS)	/* the host's scheduler tick, HZ=250 */

/* The cpu.max of a VM's cgroup and its runtime (struct cfs_bandwidth). */
struct bw {
	bool on;			/* a quota in force */
	u64 quota_ns, period_ns;
	u64 pool_ns;			/* the group's runtime this period */
	long long local[MAXCPU];	/* per CPU: runtime_remaining */
	u64 period_end;			/* the period timer's next expiry */
	u32 timer_ver, slack_ver;
	bool slack_armed;
	u64 phase_ns;			/* the timer's offset at its start */
	/* cpu.stat */
	u64 nr_periods, nr_throttled, throttled_ns;
	u64 writes;			/* cpu.max writes */
};

void bw_set(int vi, u64 quota_ns, u64 period_ns);
bool bw_on(const struct task *t);
void bw_charge(const struct task *t, int ci, u64 ran);
u64 bw_check_at(const struct cpu *c);
bool bw_runnable(int ti, int ci);
void bw_park(int ti);
void bw_left(int ci, int vi);
void bw_period(int vi, u32 ver);
void bw_slack(int vi, u32 ver);
u64 bw_throttled_ns(int vi);

/* limitbench.c */
extern bool limit_bench;
extern const char *lb_series;
extern int lb_windows;
extern u64 lb_tick_ns, lb_period_ns;
extern const struct workload limit_workload;
void lb_start(void);
void lb_event(const struct ev *e);
void lb_finish(void);
int lb_main(int nseed, u64 seed0, const char *json);

/* alg_*.c */
struct vr_acct *task_acct(const struct task *t, int pkg, int v);
void vmrapl_pkg_init(struct pkg *pk);
void vr_close(int pi);
void vr_fit_tick(int pi);
double vmrapl_vm_j(const struct vm *v, int var, unsigned int dom);
void on_qemu(int vi);
void on_scaph(void);
void on_kepler(void);
void on_naive(void);

/* workloads.c */
extern const struct workload workloads[];
extern const int nworkloads;

/* output.c */
extern const char *const row_name[NROW];
void analyse(struct result *r);
bool model_default(void);
void print_md(const struct wres *res, int n);
int write_json(const char *path, const struct wres *res, int n);

#endif /* _VRSIM_H */
