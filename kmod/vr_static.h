/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmrapl accounting core, the static power of a package: the online fit
 * and its ring, the idle-run estimate and the package less its cores
 * (vr_static.c).  Everything here runs under the package's close_lock:
 * the epoch side from the closer (vr_learn_static(), vr_fit_epoch()),
 * the solve from the package timer (vr_pkg_fit_update()), never from a
 * scheduler probe.  Plain C, shared with the unit tests and the
 * simulator; included by vr_core.h, whose struct vr_pkg embeds the fit.
 */
#ifndef _VMRAPL_STATIC_H
#define _VMRAPL_STATIC_H

#include "vr_shim.h"

struct vr_pkg;

/*
 * Online fit of dE = P_static x dt + P_dyn x busy (struct vr_fit).
 *
 * Closed epochs are summed into blocks of at least VR_FIT_BLOCK_NS; each
 * block is one sample (u, y): its utilization u = busy / dt in 1/2^
 * VR_FIT_U_SHIFT CPUs, its power y = dE / dt in 2^VR_FIT_Y_SHIFT uW.  The
 * last VR_FIT_BLOCKS samples are kept in a ring with their running sums
 * (exact integers: adding the new sample and taking the old one out never
 * drifts), so that a block costs O(1).  The bounds keep every sum and
 * every centered sum of vr_pkg_fit_update() within 63 bits.
 */
#define VR_FIT_BLOCKS		128
#define VR_FIT_BLOCK_NS		(20 * 1000000ULL)
#define VR_FIT_U_SHIFT		10
#define VR_FIT_U_MAX		((1U << 21) - 1)	/* 2047 CPUs */
#define VR_FIT_Y_SHIFT		6
#define VR_FIT_Y_MAX		((1U << 24) - 1)	/* 1073 W */
#define VR_FIT_T_MAX		((1U << 31) - 1)	/* us: 35 min */
/* Well conditioned: enough samples, spread of u, small uncertainty. */
#define VR_FIT_MIN_BLOCKS	32
#define VR_FIT_MIN_SPREAD	(1U << (VR_FIT_U_SHIFT - 3))	/* 1/8 CPU */
#define VR_FIT_MAX_SD_UW	500000ULL		/* 0.5 W, or */
#define VR_FIT_MAX_SD_DIV	20			/* 5 % of P_static */

/* vr_fit.flags */
#define VR_FIT_OK	BIT(0)	/* the last solve was well conditioned */
#define VR_FIT_HAVE	BIT(1)	/* @good_uw holds a well-conditioned fit */
#define VR_FIT_CORE	BIT(2)	/* @core_uw holds a package - cores mean */

/**
 * struct vr_fit - the online fit of a package (close_lock)
 * @blk_dt, @blk_busy, @blk_de: the open block: ns, busy CPU-ns, PKG eu.
 * @blk_core: the open block's per-core energy (VR_CORE_ENERGY weights and
 *	the samples' corrections), eu; negative while corrections lead.
 * @blk_core_ok: every busy ns of the open block had a per-core weight.
 * @core_carry: per-core energy for the next busy epoch, eu: the
 *	corrections of epochs without busy time, and what a block's core
 *	energy had beyond [0, its package energy]; moved on, not dropped, so
 *	that the blocks' sum stays the counters' sum.
 * @head: next ring slot; @n: samples in the ring.
 * @su, @sy, @suu, @suy, @syy: running sums of u, y, u^2, u*y, y^2.
 * @ring_u, @ring_y: the samples.
 * @ring_r: each sample's package power less its cores' (dE - per-core
 *	energy) / dt, in 2^VR_FIT_Y_SHIFT uW.
 * @ring_t: each sample's dt in us (at most VR_FIT_T_MAX), for @ring_r;
 *	0 when the block had no complete per-core energy.
 * @sr, @st, @nr: the sums of @ring_r x @ring_t and of @ring_t over the
 *	blocks that have them, and how many blocks.
 * @core_uw: the last @sr / @st over at least VR_FIT_MIN_BLOCKS samples,
 *	uW (VR_FIT_CORE): the package's power that no core's counter sees,
 *	measured while it is busy.  Energy over time, not a mean of the
 *	blocks' powers: blocks last from VR_FIT_BLOCK_NS to that plus an
 *	epoch, and a sample's correction lands in one block for a window
 *	that may span several, so that an equal-weight mean moved with
 *	where they landed (rapl.static_busy_package in the rig: +4.4 % and
 *	-11.9 % on runs of the same test).
 * @core_blocks: samples of that mean.
 * @static_uw: intercept of the last solve, uW (0 when it had none).
 * @sd_uw: its standard error, uW.
 * @dyn_uw: slope of the last solve, uW per busy CPU.
 * @good_uw: the last well-conditioned intercept, uW.
 * @blocks: samples of the last solve.
 * @flags: VR_FIT_*.
 * @solves: solves run.
 */
struct vr_fit {
	u64 blk_dt;
	u64 blk_busy;
	u64 blk_de;
	s64 blk_core;
	bool blk_core_ok;
	s64 core_carry;
	u32 head;
	u32 n;
	u64 su, sy, suu, suy, syy;
	u32 ring_u[VR_FIT_BLOCKS];
	u32 ring_y[VR_FIT_BLOCKS];
	u32 ring_r[VR_FIT_BLOCKS];
	u32 ring_t[VR_FIT_BLOCKS];
	u64 sr;
	u64 st;
	u32 nr;
	u32 core_blocks;
	u64 core_uw;
	u64 static_uw;
	u64 sd_uw;
	u64 dyn_uw;
	u64 good_uw;
	u32 blocks;
	u32 flags;
	u64 solves;
};

/*
 * The settle of idle stretches (struct vr_settle, vr_settle.c): the
 * energy and length of each stretch's first epoch, when it is learned
 * from whole (vr_learn_static()), go into a bin by length, from
 * VR_LEARN_SKIP_NS up, each bin twice as long as the one before, the
 * last open-ended; a bin's sums are halved when it reaches
 * 2 x VR_SETTLE_MEM stretches (a memory of that many).  A bin counts
 * once it holds VR_SETTLE_MIN.
 */
/* Idle time left out after busy time, at least; the first settle bin. */
#define VR_LEARN_SKIP_NS	(2 * 1000000ULL)
#define VR_SETTLE_BINS	6
#define VR_SETTLE_MIN	16
#define VR_SETTLE_MEM	64
#define VR_SETTLE_TOL	6	/* a slope 1/64 above the last: unsettled */
/* a stretch's power, mW, at most 2^24 (16 kW): its square sums in a u64 */
#define VR_SETTLE_MW_MAX	((1ULL << 24) - 1)

/**
 * struct vr_settle - what idle stretches hold before the package settles
 * @n, @e, @t: per bin, stretches, their energy (eu) and length (ns).
 * @p, @p2: per bin, the sums of their powers (mW) and of their squares:
 *	C's standard error.
 * @c_eu: the energy a settled stretch holds beyond the floor's (the
 *	intercept of vr_settle_solve()), eu; taken off each stretch.
 * @t_min: the shortest stretch learned from, ns (2 @c_eu / the floor).
 */
struct vr_settle {
	u32 n[VR_SETTLE_BINS];
	u64 e[VR_SETTLE_BINS];
	u64 t[VR_SETTLE_BINS];
	u64 p[VR_SETTLE_BINS];
	u64 p2[VR_SETTLE_BINS];
	u64 c_eu;
	u64 t_min;
};

/*
 * Under close_lock: solve the online fit and apply the P_static precedence.
 * Runs off the scheduler probes (the package timer); a close only adds
 * the epoch to the open block, and a full block to the ring.
 */
void vr_pkg_fit_update(struct vr_pkg *p);
u64 vr_pkg_floor_uw(const struct vr_pkg *p);
void vr_pkg_set_host_floor(struct vr_pkg *p, u64 uw);
u64 vr_isqrt(u64 x);

/*
 * vr_static.c's side of a close, under close_lock: each closed epoch's
 * PKG energy @de over @dt with @busy CPU-ns, for the idle-run estimate
 * (the epochs with none) and for the fit's blocks (those with some);
 * @lost: the interval is unknown, and so is @de.
 */
void vr_learn_static(struct vr_pkg *p, u64 de, u64 dt, u64 busy, bool lost);
void vr_settle_add(struct vr_settle *st, u64 e, u64 t);
u64 vr_settle_idle(const struct vr_pkg *p, u64 t);
void vr_fit_epoch(struct vr_pkg *p, u64 de, u64 dt, u64 busy, u64 core_e,
		  s64 core_corr, bool core_ok, bool lost);

/* What the fit and the static power are, copied out under close_lock. */
struct vr_static_report {
	u64 p_static_uw;	/* in use */
	u64 fit_uw;		/* intercept of the last solve */
	u64 fit_sd_uw;		/* its standard error */
	u64 fit_dyn_uw;		/* slope, per busy CPU */
	u64 fit_good_uw;	/* the last well-conditioned intercept */
	u64 idle_uw;		/* the idle-run estimate */
	u64 core_uw;		/* package - cores, while busy */
	u64 host_floor_uw;	/* the other packages' floor (0: none) */
	u32 core_blocks;	/* its samples */
	u32 fit_blocks;
	u32 fit_flags;		/* VR_FIT_* */
	u8 origin;		/* enum vr_static_origin */
	bool idle_known;	/* idle_uw holds VR_LEARN_NS or more */
	bool idle_prov;		/* idle_uw is provisional (less) */
	u32 inputs;		/* VMRAPL_STATIC_IN_* of p_static_uw */
};

void vr_pkg_static_report(const struct vr_pkg *p, struct vr_static_report *r);

#endif /* _VMRAPL_STATIC_H */
