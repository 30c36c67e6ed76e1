/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The vmrapl accounting core: epochs, wrap extension, unit conversion and the
 * exact split of every sampled energy delta.  Plain C on top of vr_shim.h,
 * so the same code runs in the module and in userspace tests.
 *
 * Energy is kept in "eu", units of 2^-VR_EU_SHIFT J.  A u64 of eu holds
 * 2^40 J: 35 years of a 1 kW package.
 *
 * Model.  Each host package p is sampled at epoch boundaries.  The energy
 * of an epoch, dE, is split into the part owed by busy CPU time (to_busy)
 * and the part owed by unoccupied CPU time (idle), according to the static
 * policy.  to_busy is divided over the busy CPU-ns B of the epoch: an
 * account that ran r of those ns gets to_busy * r / B.  Whatever busy time
 * was not tracked goes to the package's host bucket.  Rounding is
 * cumulative, so the shares of an epoch add up to to_busy exactly.
 *
 * Concurrency (kernel): every entry point runs with interrupts disabled.
 * struct vr_cpu is updated by its own CPU under vr_cpu.lock, and by the
 * closer of its package, which holds vr_pkg.close_lock and takes each
 * vr_cpu.lock in turn.  Lock order: rq lock (probes) -> close_lock ->
 * vr_cpu.lock.  close_lock is only ever taken with trylock from the
 * scheduler probes, so a CPU never waits for another one to close an epoch.
 * The entry points that need close_lock held assert it (vr_lock_held():
 * lockdep_assert_held() in the kernel).
 */
#ifndef _VMRAPL_CORE_H
#define _VMRAPL_CORE_H

#include <linux/vmrapl.h>

#include "vr_shim.h"
#include "vr_step.h"

#define VR_EU_SHIFT	24
/* The domains are the uapi's: PKG, CORE (PP0), DRAM. */
#define VR_NDOM		VMRAPL_NR_DOMAINS
#define VR_DOM_PKG	VMRAPL_DOM_PKG
#define VR_DOM_CORE	VMRAPL_DOM_CORE	/* Intel PP0: every core's energy */

#define VR_NSEC_PER_SEC	1000000000ULL
#define VR_FJ_PER_J	1000000000000000ULL	/* uW * ns = 1e-15 J */

/* The static power policies are the uapi's (vmrapl_info.static_policy). */
enum vr_static_policy {
	VR_STATIC_OCCUPIED = VMRAPL_STATIC_OCCUPIED,	/* per occupied CPU-ns */
	VR_STATIC_BUSY = VMRAPL_STATIC_BUSY,	/* all of dE over busy time */
	VR_STATIC_NONE = VMRAPL_STATIC_NONE,	/* dynamic only; static: idle */
	VR_STATIC_NR,
};

/* Names, as the module parameters and debugfs spell them. */
extern const char *const vr_dom_names[VR_NDOM];
extern const char *const vr_policy_names[VR_STATIC_NR];

/*
 * How vr_pkg.p_static_uw was obtained: the uapi's VMRAPL_ORIGIN_*.
 * Precedence, highest first: PARAM or MODEL (fixed), LEARNED (final),
 * HOST, LEARNED (provisional), CORE, FIT, UNKNOWN; see
 * vr_static_resolve() and Documentation/design.rst.
 */
enum vr_static_origin {
	VR_STATIC_UNKNOWN = VMRAPL_ORIGIN_UNKNOWN,	/* none: 0 W */
	VR_STATIC_PARAM = VMRAPL_ORIGIN_PARAM,		/* administrator */
	VR_STATIC_LEARNED = VMRAPL_ORIGIN_IDLE,		/* idle runs */
	VR_STATIC_MODEL = VMRAPL_ORIGIN_MODEL,		/* the model's own */
	VR_STATIC_FIT = VMRAPL_ORIGIN_FIT,		/* online fit */
	VR_STATIC_CORE = VMRAPL_ORIGIN_CORE,		/* package - cores */
	VR_STATIC_HOST = VMRAPL_ORIGIN_HOST,		/* other packages' floor */
	VR_STATIC_ORIGIN_NR,
};

extern const char *const vr_origin_names[VR_STATIC_ORIGIN_NR];

#include "vr_static.h"

/**
 * struct vr_acct - one charge target on one package
 * @pend: busy ns accrued in the open epoch, indexed by epoch & 1.
 * @pend_e: per-core energy weight accrued with @pend (eu; struct
 *	vr_core_src), indexed like @pend.
 * @pnext: links of the package's pending lists, indexed like @pend.
 * @energy: exact energy in eu per domain; written only by the closer of
 *	the package, read locklessly (monotonic).
 * @static_e: the static part of @energy (P_static's share under the
 *	policy), per domain; the rest is dynamic.  Written by the closer
 *	after @energy, so a lockless reader may see it ahead of @energy for
 *	one close: readers clamp it to @energy.
 * @ns: busy ns resolved into @energy.
 * @pprev: link of the package's list of the previous epoch (close lock).
 * @prev_ns: busy ns of the previous epoch, for the lag share (close lock).
 * @prev_e: its per-core cycles weight, likewise (VR_CORE_CYCLES).
 *
 * A vCPU owns one vr_acct per host package, so that accrual on two packages
 * in the same epoch never mixes.
 */
struct vr_acct {
	vr_atomic64_t pend[2];
	vr_atomic64_t pend_e[2];
	struct vr_acct *pnext[2];
	u64 energy[VR_NDOM];
	u64 static_e[VR_NDOM];
	u64 ns;
	struct vr_acct *pprev;
	u64 prev_ns;
	u64 prev_e;
};

struct vr_pkg;

/**
 * struct vr_cpu - accounting state of one CPU
 * @lock: protects every field below.  Taken by the owning CPU at its
 *	scheduling events and by the closer of its package.
 * @pkg: package of the CPU.
 * @cur: account charged for the running task, NULL for host or idle time.
 * @since: start of the interval not yet folded into @busy_ns / @cur.
 * @turn: when the CPU last went from idle to busy or back (or came
 *	online); @last_run: how long the run before it lasted, 0 after
 *	online.  The closer's busy tail reads them (vr_pkg_close_fold()).
 * @busy_ns: busy ns in the open epoch of @pkg.
 * @seq: the epoch of @pkg that the CPU is accruing into.
 * @busy: the CPU runs something other than its idle task.
 * @online: the CPU takes part in its package's epochs.
 * @core_due: the closer asks this CPU to sample its per-core counter at
 *	its next event (vr_cpu_event() or vr_cpu_poll(), on the CPU itself).
 * @gate: what a switch to a task must find here to change nothing
 *	(vr_cpu_gate_set()): VR_GATE_IDLE while the CPU idles, 0 while it
 *	runs, with VR_GATE_SLOW added while it charges an account or owes a
 *	per-core sample.  Written under @lock with every field it sums up;
 *	the owning CPU's switch path reads it without the lock.
 *
 * Per-core weighting (struct vr_core_src), all under @lock:
 * @core_raw: raw per-core counter at the last sample.
 * @core_carry: unit conversion remainder of the per-core counter.
 * @core_t: time of the last sample.
 * @core_busy: busy ns since the last sample, less @busy_ns: the closer
 *	adds @busy_ns when it folds it, the sample subtracts it (wrapping
 *	u64 arithmetic), so the switch path does not count it twice.
 * @core_w: the core's energy per busy ns over the last window, in
 *	2^-VR_CORE_W_SHIFT eu.
 * @core_wok: @core_w was measured.  A window with busy time and no energy
 *	measures 0, which is a weight like any other: only a CPU never
 *	sampled, or whose counter could not be read, has none.
 * @busy_e: per-core energy weight of the open epoch's busy time before
 *	@core_wns, eu (the weight changed there).
 * @core_wns: @busy_ns at the last change of @core_w in the open epoch.
 * @core_have: @core_raw is a baseline.
 * @busy_done: busy ns folded by the closer so far (monotonic), read
 *	without a lock by an SMT sibling's sample.
 * @sib: the SMT sibling that shares the core's energy counter, or NULL
 *	(vr_cpu_set_sibling()).
 * @core_sib0: @sib's @busy_done at the last sample.
 * @core_cred: per-core energy the weights credited to the busy time since
 *	the last sample, eu, less @busy_e's part at that sample (wrapping u64
 *	arithmetic, as @core_busy): the closer adds what it folds.
 * @core_corr: what the samples measured less what the weights had
 *	credited, eu, not yet folded: each window's energy (this thread's
 *	share of it, with an SMT sibling) minus the window's credit.  The
 *	package's less-its-cores estimate adds it, so that its core energy
 *	is the counters' own, not the weights' (vr_fit_epoch()).
 */
struct vr_cpu {
	vr_lock_t lock;
	struct vr_pkg *pkg;
	struct vr_acct *cur;
	u64 since;
	u64 turn;
	u64 last_run;
	u64 busy_ns;
	u32 seq;
	u32 gate;
	bool busy;
	bool online;
	bool core_due;
	bool core_have;
	bool core_wok;
	u64 core_raw;
	u64 core_carry;
	u64 core_t;
	u64 core_busy;
	u64 core_w;
	u64 busy_e;
	u64 core_wns;
	u64 busy_done;
	struct vr_cpu *sib;
	u64 core_sib0;
	u64 core_cred;
	s64 core_corr;
};

/**
 * struct vr_pkg_stats - cumulative totals of one domain, in eu
 * @sampled: sum of every dE read from the source.
 * @static_e: static part of @sampled (for reporting).
 * @dynamic: dynamic part of @sampled.
 * @tracked: charged to accounts.
 * @host: busy time that no account claimed.
 * @idle: unoccupied time, and epochs with no busy time.
 * @lost: intervals that could not be attributed (re-baselines).
 * @tracked_static: static part of @tracked (the accounts' static_e).
 * @host_static: static part of @host.
 *
 * Invariants: tracked + host + idle + lost == sampled, exactly; the
 * static part of @idle is static_e - tracked_static - host_static.
 */
struct vr_pkg_stats {
	u64 sampled;
	u64 static_e;
	u64 dynamic;
	u64 tracked;
	u64 host;
	u64 idle;
	u64 lost;
	u64 tracked_static;
	u64 host_static;
};

/* Source description of one domain. */
struct vr_dom_src {
	u32 esu;	/* unit: 1/2^esu J */
	u32 width;	/* counter bits, 1..64 */
};

/**
 * typedef vr_core_read_fn - read this CPU's own per-core energy counter
 * @ctx: vr_core_src.ctx.
 * @c: the CPU whose counter is read: always the CPU running the call
 *	(the engine reads the local MSR; tests look @c up in their model).
 * @raw: out: the raw counter, in source units.
 *
 * Context: on the CPU of @c, in its vr_cpu_event() or vr_cpu_core_poll(),
 * interrupts disabled, @c->lock held.  Never called by a closer for
 * another CPU: reading another CPU's MSR would need an IPI.
 * Return: true when @raw was read.
 */
typedef bool (*vr_core_read_fn)(void *ctx, struct vr_cpu *c, u64 *raw);

/*
 * Per-core weighting of the dynamic split.  Each CPU samples its own
 * core's energy counter at its first event after a close that found the
 * last sample VR_CORE_WINDOW_NS old or more; the window's energy divided
 * by the CPU's busy ns in it is the core's energy per busy ns (@core_w),
 * which weights the CPU's busy time until the next sample.  A close
 * charges the weighted time as per-core energy, capped at the epoch's
 * dynamic part, and splits only the rest by time (vr_core.c).
 */
#define VR_CORE_WINDOW_NS	(10 * 1000000ULL)
#define VR_CORE_W_SHIFT		20

/* What a per-core counter counts (struct vr_core_src). */
enum vr_core_kind {
	VR_CORE_NONE,
	VR_CORE_ENERGY,	/* energy: charged, the rest split by time */
	VR_CORE_CYCLES,	/* cycles (APERF): a weight of the dynamic split */
	VR_CORE_KIND_NR,
};

extern const char *const vr_core_kind_names[VR_CORE_KIND_NR];

/**
 * struct vr_core_src - where a package's per-core weight comes from
 * @read: reads the local core's counter; NULL: no per-core weighting.
 * @ctx: passed to @read.
 * @esu: unit of an energy counter, 1/2^esu J.
 * @width: counter bits (32 for AMD's MSR_AMD_CORE_ENERGY_STATUS, 64 for
 *	APERF).
 * @kind: enum vr_core_kind.
 */
struct vr_core_src {
	vr_core_read_fn read;
	void *ctx;
	u32 esu;
	u32 width;
	u32 kind;
};

/**
 * struct vr_pkg - one host energy package
 *
 * Read by every CPU of the package at each event (no lock):
 * @last_close: time of the last closed epoch.
 * @period_ns: epoch length.
 *
 * Protected by @close_lock:
 * @seq: number of the open epoch.
 * @t_last: start of the open epoch.
 * @fold_busy: busy ns of the epoch being closed (from the fold).
 * @raw: last raw counter value per domain.
 * @carry: conversion remainder per domain, in source units.
 * @have_raw: per-domain mask of valid @raw.
 * @rebase: the next close attributes its whole interval to lost.
 * @p_static_uw, @static_origin: static power of the package.
 * @static_rem: remainder of the static energy conversion, carried.
 * @static_debt: static energy owed by earlier epochs whose dE was smaller.
 * @learn_eu, @learn_ns: idle epochs summed so far, to learn from.
 * @learn_skip: idle ns of the current stretch of idle epochs, up to
 *	VR_LEARN_SKIP_NS (its first ones are not learned from).
 * @learn_busy_uw, @learn_busy, @learn_busy_dt: mean power
 *	(vr_busy_power()), busy CPU-ns and length of the last closed epoch
 *	with busy time whose power could be measured; @learn_tail: the
 *	@fold_tail of the last closed epoch with busy time, measured or not;
 *	@learn_lead0: @learn_busy_uw's lead was taken at 0 W, the power
 *	before it being unknown then.
 *	A stretch's first idle epoch is learned less the tail of it that the
 *	counter's lag carries in (vr_busy_tail()).
 * @idle_uw, @idle_known: P_static learned from idle epochs.
 * @idle_prov: @idle_uw is provisional: the mean of fewer than
 *	VR_LEARN_NS of idle epochs, at least VR_LEARN_FIRST_NS.
 * @idle_mem_ns: the idle time @idle_uw is the mean of, at most
 *	VR_LEARN_MEM_NS (vr_learn_static()).
 * @host_floor_uw: the mean idle floor the host's other packages learned,
 *	0 if none (vr_pkg_set_host_floor()), for a package never all idle.
 * @fit: the online fit of P_static.
 * @settle: what idle stretches hold before the package settles
 *	(vr_learn_static()).
 * @lag_ns: how far the source's counter lags a read, on average (0 for
 *	exact ones): from the PKG counter's update interval
 *	(vr_step_lag_ns()), half VR_STEP_DEFAULT_NS until it is measured.
 * @step_ns: the PKG counter's update interval (VR_STEP_DEFAULT_NS until
 *	measured, vr_pkg_set_step()).
 * @step: per domain, the counter's update interval as measured, written
 *	under @close_lock inside @stat_seq, read under @stat_seq
 *	(vr_pkg_read_step()).  The CORE entry is PP0's, or where the cores
 *	have their own energy counters, the measuring CPU's core counter.
 * @prev, @prev_busy, @prev_t: accounts, busy ns and end of the last busy
 *	epoch, which get the lag share of the next closes; with the busy
 *	epochs after it that no read showed, merged in (vr_lag_merge(): an
 *	account's @prev_ns is then its busy ns not shown yet).
 * @prev_busy_e: its per-core weight, which then splits the lag share
 *	(VR_CORE_CYCLES, or VR_CORE_ENERGY when every busy CPU of it had a
 *	weight; 0: by time).
 * @prev_dyn, @prev_seen, @prev_tail: of the last busy epoch split, the
 *	dynamic energy of its delta, the busy CPU-ns that delta showed (the
 *	unseen ones carried in, then its own seen ones), and its busy CPU-ns
 *	not shown yet; they size the lag share of the next busy epoch
 *	(vr_lag.c).  0 once an epoch with no list was idle.
 * @policy: enum vr_static_policy.
 * @nr_online: CPUs taking part.
 * @core: the per-core energy source (vr_pkg_set_core()); set before the
 *	package's CPUs come online, read by them at their events.
 * @fold_busy_e: per-core energy weight of the epoch being closed, eu.
 * @pc_owed: per-core weight that earlier epochs' dynamic energy could
 *	not pay, eu: their own (vr_split_policy()) or their lag list's
 *	(vr_lag_share()), when a delta showed fewer of the package
 *	counter's steps than its time.  Paid first, by the weights of the
 *	next epochs, out of their dynamic energy; at most what the epoch's
 *	weight is over two of the counter's steps (@step_ns).
 * @fold_busy_nw: busy ns of that epoch that had no per-core weight (a
 *	CPU before its first sample, or whose counter could not be read).
 * @fold_core_corr: the CPUs' per-core corrections folded into that epoch
 *	(vr_cpu.core_corr), eu.
 * @fold_tail: how long that epoch's CPUs were busy in the counter's lag
 *	window before its close, weighted (vr_cpu_tail()), ns^2.
 * @fold_idle: how long every online CPU of that epoch idled at once in
 *	it, ns (vr_pkg_close_fold(): from what the CPUs' events recorded, a
 *	lower bound), up to @fold_idle_end.
 * @settle_start, @settle_end, @settle_given: the last all-idle stretch
 *	split: its start and end (0: the last epoch had none), and the
 *	energy beyond the floor given to idle for it so far
 *	(vr_settle_part()).
 *
 * @pending: lock-free lists of accounts with accrual in epoch (seq & 1).
 *
 * Totals, written under @close_lock inside @stat_seq, read under it:
 * @st, @samples, @epochs_idle, @wraps, @resets, @overruns, @over_max,
 * @busy_ns, @percore_e, @percore_clamps.  @percore_e is the PKG energy
 * charged by per-core weight (part of st[PKG].dynamic); @percore_clamps
 * counts the epochs whose per-core weight (of the busy time their read
 * showed) exceeded the dynamic energy there was to give after the lag
 * share.  @over_max counts the deltas larger than @max_power_uw allows
 * (charged all the same): the bound is set too low.  A counter that
 * stepped back by such a delta wrapped if the delta is within
 * VR_OVER_MAX_WRAP times the bound, and was reset otherwise.
 */
#define VR_OVER_MAX_WRAP	4

struct vr_pkg {
	u64 last_close;
	u64 period_ns;

	vr_lock_t close_lock;
	u32 seq;
	u32 domains;
	u64 t_last;
	u64 fold_busy;
	struct vr_dom_src src[VR_NDOM];
	u64 raw[VR_NDOM];
	u64 carry[VR_NDOM];
	u32 have_raw;
	bool rebase;
	bool learn_static;
	u8 static_origin;
	u8 policy;
	u64 max_power_uw;
	u64 p_static_uw;
	u64 static_rem;
	u64 static_debt;
	u64 learn_eu;
	u64 learn_ns;
	u64 learn_skip;
	u64 learn_busy_uw;
	u64 learn_busy;
	u64 learn_busy_dt;
	u64 learn_tail;
	bool learn_lead0;
	u64 idle_uw;
	u64 idle_mem_ns;
	bool idle_known;
	bool idle_prov;
	u64 host_floor_uw;
	u64 lag_ns;
	u64 step_ns;
	struct vr_step step[VR_NDOM];
	struct vr_acct *prev;
	u64 prev_busy;
	u64 prev_busy_e;
	u64 prev_dyn;
	u64 prev_seen;
	u64 prev_tail;
	u64 prev_t;
	unsigned int nr_cpus;
	unsigned int nr_online;
	struct vr_cpu **cpus;
	struct vr_core_src core;
	u64 fold_busy_e;
	u64 pc_owed;
	u64 fold_busy_nw;
	s64 fold_core_corr;
	u64 fold_tail;
	u64 fold_idle;
	u64 fold_idle_end;
	u64 settle_start;
	u64 settle_end;
	u64 settle_given;

	struct vr_acct *pending[2];

	struct vr_fit fit;
	struct vr_settle settle;

	vr_seq_t stat_seq;
	struct vr_pkg_stats st[VR_NDOM];
	u64 samples;
	u64 epochs_idle;
	u64 wraps;
	u64 resets;
	u64 overruns;
	u64 over_max;
	u64 busy_ns;
	u64 percore_e;
	u64 percore_clamps;
};

/* Flags of vr_pkg_close_commit(). */
#define VR_CLOSE_LOST	BIT(0)	/* interval unknown: all to lost */

void vr_pkg_init(struct vr_pkg *p, struct vr_cpu **cpus, unsigned int nr_cpus,
		 u64 period_ns, u64 max_power_uw);
void vr_pkg_set_domain(struct vr_pkg *p, unsigned int dom, u32 esu, u32 width);
void vr_pkg_set_static(struct vr_pkg *p, u64 uw, enum vr_static_origin origin);
void vr_pkg_set_core(struct vr_pkg *p, enum vr_core_kind kind,
		     vr_core_read_fn read, void *ctx, u32 esu, u32 width);
void vr_cpu_init(struct vr_cpu *c, struct vr_pkg *p);

void vr_cpu_set_sibling(struct vr_cpu *c, struct vr_cpu *sib);

/* Under close_lock: a CPU joins or leaves its package's epochs. */
void vr_cpu_online(struct vr_cpu *c, u64 now, bool busy);
void vr_cpu_offline(struct vr_cpu *c, u64 now);

void vr_cpu_event(struct vr_cpu *c, u64 now, bool busy, struct vr_acct *next);
void vr_cpu_core_poll(struct vr_cpu *c, u64 now);

/* A CPU event that changes nothing but may owe a per-core sample. */
static inline void vr_cpu_poll(struct vr_cpu *c, u64 now)
{
	if (unlikely(READ_ONCE(c->core_due)))
		vr_cpu_core_poll(c, now);
}

void vr_cpu_purge(struct vr_cpu *c, u64 now, const struct vr_acct *lo,
		  const struct vr_acct *hi);

/*
 * vr_cpu.gate: a switch to a task whose idle bit (VR_GATE_IDLE: set for
 * an idle task, the value of the kernel's PF_IDLE, so that the engine
 * compares the task's flags with the gate as they are) equals the gate
 * changes nothing on the CPU, unless the task itself is charged.
 * VR_GATE_SLOW is a bit that no task's idle bit has, bool @core_due's
 * value when true.
 */
#define VR_GATE_IDLE	0x00000002U
#define VR_GATE_SLOW	0x00000001U

/* Under c->lock, after any change of @busy, @cur or @core_due. */
static inline void vr_cpu_gate_set(struct vr_cpu *c)
{
	WRITE_ONCE(c->gate, (c->busy ? 0 : VR_GATE_IDLE) |
		   (c->cur ? VR_GATE_SLOW : 0) | (u32)c->core_due);
}

/*
 * Does an event need to touch the CPU state at all?  Yes when it changes
 * the CPU's busy state or charges an account, or the CPU charges one or
 * owes a per-core sample (the closer asked for it under the lock): all
 * of that is in @c->gate, read here without the lock.
 */
static inline bool vr_cpu_event_needed(const struct vr_cpu *c, bool busy,
				       const struct vr_acct *next)
{
	return READ_ONCE(c->gate) != (busy ? 0 : VR_GATE_IDLE) || next;
}

/* Signed: another CPU's clock may be a little behind the last close. */
static inline bool vr_pkg_stale(const struct vr_pkg *p, u64 now)
{
	return (s64)(now - READ_ONCE(p->last_close)) >=
	       (s64)READ_ONCE(p->period_ns);
}

/**
 * typedef vr_read_fn - read the counters of a package at the end of an epoch
 * @ctx: the closer's context (the engine's host package, a test's model).
 * @raw: out: raw counter value per domain, in source units.
 * @dt: length of the epoch being closed, ns.
 * @busy: busy CPU-ns of the epoch.
 *
 * Context: the package's close_lock held, interrupts disabled.
 * Return: mask of the domains read into @raw, with VR_READ_LOST added
 * when the interval cannot be known (the counter is unreadable here).
 */
typedef u32 (*vr_read_fn)(void *ctx, u64 *raw, u64 dt, u64 busy);

#define VR_READ_LOST	BIT(31)

/*
 * Closing an epoch, the one sequence every closer uses: vr_pkg_try_close()
 * takes close_lock with a trylock, folds the CPUs, reads the counters
 * through @read, commits and unlocks.  vr_pkg_close_locked() is the same
 * with close_lock already held.  vr_pkg_close_fold() and
 * vr_pkg_close_commit() are its two halves, for the core's own tests.
 */
void vr_pkg_close_locked(struct vr_pkg *p, u64 now, vr_read_fn read,
			 void *ctx);
bool vr_pkg_try_close(struct vr_pkg *p, u64 now, vr_read_fn read, void *ctx);
u64 vr_pkg_close_fold(struct vr_pkg *p, u64 now);
void vr_pkg_close_commit(struct vr_pkg *p, u64 now, const u64 *raw,
			 u32 valid, unsigned int flags);

void vr_pkg_forget(struct vr_pkg *p, const struct vr_acct *lo,
		   const struct vr_acct *hi);

/* Under close_lock: the next close is an unknown interval (hotplug, resume). */
static inline void vr_pkg_rebaseline(struct vr_pkg *p)
{
	p->rebase = true;
}

void vr_pkg_set_step(struct vr_pkg *p, unsigned int dom,
		     const struct vr_step *st);
void vr_pkg_read_step(struct vr_pkg *p, struct vr_step *st);
void vr_pkg_read_stats(struct vr_pkg *p, struct vr_pkg_stats *st,
		       unsigned int ndom);

/* Unit helpers. */
u64 vr_wrap_delta(u64 old, u64 cur, u32 width);
bool vr_core_delta(u64 old, u64 cur, u32 width, u32 esu, u64 dt,
		   u64 max_uw, u64 *carry, u64 *eu);
u64 vr_core_weight(u64 eu, u64 busy_ns);
u64 vr_units_to_eu(u64 units, u32 esu, u64 *carry);
u64 vr_eu_to_units(u64 eu, u32 esu);
u64 vr_gv_advance(u64 cur, u64 val);
u64 vr_eu_to_uj(u64 eu);
u64 vr_energy_eu(u64 uw, u64 ns, u64 *rem);

/*
 * RAPL register decoding, separate from the MSR reads so that it is unit
 * tested with the reads replaced.
 */
enum vr_rapl_vendor { VR_RAPL_INTEL, VR_RAPL_AMD };

/* What the source read once, at package init. */
struct vr_rapl_regs {
	u64 unit;		/* MSR_RAPL_POWER_UNIT / MSR_AMD_RAPL_POWER_UNIT */
	bool pkg;		/* package counter readable and non-zero */
	bool core;		/* PP0 (Intel) readable and non-zero */
	bool dram;		/* DRAM (Intel) readable and non-zero */
	u32 family;
	u32 model;
};

u32 vr_rapl_decode(enum vr_rapl_vendor v, const struct vr_rapl_regs *r,
		   struct vr_dom_src *src);

/*
 * Linear estimate: idle_uw for the whole package plus busy_uw per busy CPU,
 * integrated exactly from the engine's own busy time.
 */
struct vr_estimate {
	u64 idle_uw;
	u64 busy_uw;
	u64 counter;	/* eu, the source's cumulative counter */
	u64 rem;	/* conversion remainder, carried */
};

u64 vr_estimate_advance(struct vr_estimate *e, u64 dt_ns, u64 busy_ns);

#endif /* _VMRAPL_CORE_H */
