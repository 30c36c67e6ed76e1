// SPDX-License-Identifier: GPL-2.0
/*
 * vrsim: Kepler's ratio model, as documented (see vrsim.c).
 */
#include "vrsim.h"

/*
 * Kepler ratio model, one 5 s iteration: the process's share of CPU time
 * (exact) x the active energy (dE - P_idle x dt per package, wraps
 * unwound); no idle share.  P_idle is the true static power here (its
 * best case).
 */
void on_kepler(u64 dt)
{
	double active = 0;
	u64 d_rt;
	int p, vi;

	sync_all();
	for (p = 0; p < S.npkg; p++) {
		struct pkg *pk = &S.pk[p];
		u64 raw = vrm_read(&pk->ctr, S.now);
		u64 du = raw >= pk->kepler_raw ? raw - pk->kepler_raw :
			 raw + vrm_range_units(&pk->ctr) - pk->kepler_raw;
		double a = vrm_units_j(&pk->ctr, du) -
			   (double)pk->static_uw * (double)dt / FJ_PER_J;

		pk->kepler_raw = raw;
		if (S.k_have && a > 0)
			active += a;
	}
	d_rt = S.host_busy_ns - S.k_host_rt;
	for (vi = 0; vi < S.nvm; vi++) {
		struct vm *v = &S.vm[vi];
		u64 rt = vm_runtime(v);

		if (!v->started)
			continue;
		if (v->stopped) {
			v->k_have = false;
			continue;
		}
		if (v->k_have && S.k_have && d_rt) {
			v->est[A_KEPLER] += (double)(rt - v->k_rt) /
					    (double)d_rt * active;
			v->own[A_KEPLER] += v->dyn_j - v->k_dyn;
		}
		v->k_dyn = v->dyn_j;
		v->k_rt = rt;
		v->k_have = true;
	}
	S.k_host_rt = S.host_busy_ns;
	S.k_have = true;
	ev_push(S.now + 5 * SEC, EV_KEPLER, 0, 0);
}
