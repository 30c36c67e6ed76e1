// SPDX-License-Identifier: GPL-2.0
/*
 * vrsim: Kepler's ratio model, as its released code behaves (Kepler 0.10:
 * internal/monitor/node.go calculateNodePower(), internal/monitor/vm.go,
 * internal/resource/procfs_reader.go CPUUsageRatio(), default interval
 * 5 s in config/config.go; re-implemented here from reading them).
 *
 * Every 5 s, per zone (here: each package's PKG counter), the energy
 * delta (a wrap unwound with the zone's range) is split into active =
 * delta x the node's CPU usage ratio from /proc/stat (active over total
 * CPU time) and idle = the rest.  A VM gets active energy x its process's
 * CPU time delta (from /proc, ticks) over the sum of every process's CPU
 * time delta.  Idle energy is never attributed.  A process seen for the
 * first time brings its whole CPU time as its delta.
 *
 * Own semantics: the same rule with exact inputs (exact usage ratio,
 * exact CPU time, exact energy).
 */
#include "vrsim.h"

void on_kepler(void)
{
	double active = 0, truth = 0, ratio;
	u64 d_all, d_busy, dt = 5 * SEC;
	int p, vi, i;

	sync_all();
	d_busy = S.host_busy_ns - S.k_busy;
	ratio = (double)d_busy / ((double)dt * S.ncpu_total);
	for (p = 0; p < S.npkg; p++) {
		struct pkg *pk = &S.pk[p];
		u64 raw = ctr_read(&pk->ctr, S.now);
		u64 du = raw >= pk->kepler_raw ? raw - pk->kepler_raw :
			 raw + ctr_range(&pk->ctr) - pk->kepler_raw;

		active += ctr_units_j(&pk->ctr, du) * ratio;
		truth += pk->truth_j - pk->kepler_truth_j;
		pk->kepler_raw = raw;
		pk->kepler_truth_j = pk->truth_j;
	}
	/* every process's CPU time delta: the VMs, and each host task */
	d_all = 0;
	for (vi = 0; vi < S.nvm; vi++) {
		struct vm *v = &S.vm[vi];

		if (v->started && !v->stopped)
			d_all += ticks_of(vm_runtime(v)) - v->k_ticks;
	}
	for (i = 0; i < S.ntask; i++)
		if (S.t[i].kind == T_HOST)
			d_all += ticks_of(S.t[i].runtime);
	d_all -= S.k_ticks_all;
	for (vi = 0; vi < S.nvm; vi++) {
		struct vm *v = &S.vm[vi];
		u64 rt, tk;

		if (!v->started || v->stopped)
			continue;
		rt = vm_runtime(v);
		tk = ticks_of(rt);
		if (S.k_have && d_all)
			v->est[R_KEPLER] += (double)(tk - v->k_ticks) /
					    (double)d_all * active;
		if (S.k_have && d_busy)
			v->own[R_KEPLER] += (double)(rt - v->k_rt) /
					    (double)d_busy * truth * ratio;
		v->k_ticks = tk;
		v->k_rt = rt;
	}
	S.k_ticks_all = 0;
	for (i = 0; i < S.ntask; i++)
		if (S.t[i].kind == T_HOST)
			S.k_ticks_all += ticks_of(S.t[i].runtime);
	S.k_busy = S.host_busy_ns;
	S.k_have = true;
	ev_push(S.now + dt, EV_KEPLER, 0, 0);
}
