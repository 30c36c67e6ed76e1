// SPDX-License-Identifier: GPL-2.0
/*
 * vrsim: a naive baseline, no released tool: what anyone would write
 * first.  Every 5 s, each package's energy over the last 5 s (its PKG
 * counter's delta, a wrap unwound with its range) is split by CPU-time
 * share: a VM gets
 *
 *     dE(package) x its threads' CPU time on the package over the 5 s
 *                 / every task's CPU time on the package over the 5 s
 *
 * (the "whole package energy split by CPU-time share": host
 * tasks get their share, idle time none, and a package that ran nothing
 * gives its energy to no one).  No static power, no epochs, no per-core
 * weight: the whole energy, floor included, is split over what ran.  The
 * CPU
 * time is exact, per package (as a cgroup's or schedstat's per-CPU
 * counters give it), so this row differs from vmrapl by the rule, not by
 * coarser inputs.  A VM that stopped in the last 5 s still gets its
 * share of them.
 *
 * It runs at the instants of Kepler's 5 s loop (multiples of 5 s from
 * the windows' start, so the "5 s aligned" windows end where it
 * updates), from that loop's event: an event of its own would reorder
 * the other events at equal times and change every other row.
 *
 * Own semantics: the same rule with the exact package energy.
 */
#include "vrsim.h"

void on_naive(void)
{
	double de[MAXPKG], truth[MAXPKG];
	u64 all[MAXPKG] = { 0 };
	int p, vi, i;

	sync_all();
	/* every task's CPU time on each package since the last loop */
	for (i = 0; i < S.ntask; i++)
		for (p = 0; p < S.npkg; p++)
			all[p] += S.t[i].runtime_pkg[p];
	for (p = 0; p < S.npkg; p++) {
		u64 a = all[p];

		all[p] -= S.n_rt_all[p];
		S.n_rt_all[p] = a;
	}
	for (p = 0; p < S.npkg; p++) {
		struct pkg *pk = &S.pk[p];
		u64 raw = ctr_read(&pk->ctr, S.now);
		u64 du = raw >= pk->naive_raw ? raw - pk->naive_raw :
			 raw + ctr_range(&pk->ctr) - pk->naive_raw;

		de[p] = ctr_units_j(&pk->ctr, du);
		truth[p] = pk->truth_j - pk->naive_truth_j;
		pk->naive_raw = raw;
		pk->naive_truth_j = pk->truth_j;
	}
	for (vi = 0; vi < S.nvm; vi++) {
		struct vm *v = &S.vm[vi];

		for (p = 0; p < S.npkg; p++) {
			double share;
			u64 rt = 0;

			for (i = 0; i < v->ntask; i++)
				rt += S.t[v->first_task + i].runtime_pkg[p];
			if (S.n_have && all[p]) {
				share = (double)(rt - v->n_rt[p]) /
					(double)all[p];
				v->est[R_NAIVE] += share * de[p];
				v->own[R_NAIVE] += share * truth[p];
			}
			v->n_rt[p] = rt;
		}
	}
	S.n_t_last = S.now;
	S.n_have = true;
}
