// SPDX-License-Identifier: GPL-2.0
/*
 * vrsim: QEMU's vmsr algorithm, as documented (see vrsim.c).
 */
#include "vrsim.h"

/* QEMU vmsr: one loop iteration of VM @vi. */
void on_qemu(int vi)
{
	struct vm *v = &S.vm[vi];
	double de[MAXPKG], tr[MAXPKG], pool[MAXPKG] = {}, own = 0;
	int nv_on[MAXPKG] = {};
	int p, i;

	if (v->stopped)
		return;
	for (i = 0; i < v->ntask; i++)
		task_accrue(&S.t[v->first_task + i]);
	for (p = 0; p < S.npkg; p++) {
		u64 raw = vrm_read(&S.pk[p].ctr, S.now);

		/* a wrapped counter gives 0 */
		if (raw >= v->q_raw[p]) {
			de[p] = vrm_units_j(&S.pk[p].ctr, raw - v->q_raw[p]);
		} else {
			de[p] = 0;
			if (v->q_have)
				S.qemu_wrap_zero++;
		}
		v->q_raw[p] = raw;
		tr[p] = vrm_truth_j(&S.pk[p].ctr, S.now) - v->q_truth_pkg[p];
		v->q_truth_pkg[p] += tr[p];
	}
	for (i = 0; i < v->ntask; i++) {
		struct task *t = &S.t[v->first_task + i];
		u64 tk = ticks_of(t->runtime), d = tk - v->q_ticks[i];
		int pp;
		double e;

		v->q_ticks[i] = tk;
		if (t->last_cpu == NOTASK || !v->q_have)
			continue;
		pp = S.cpu[t->last_cpu].pkg;
		e = (double)d / (100.0 * S.pk[pp].ncpu) * de[pp];
		if (t->kind == T_VCPU) {
			v->est[A_QEMU] += e;
			nv_on[pp]++;
		} else {
			pool[pp] += e;
		}
	}
	/* non-vCPU threads: split over the package's vCPUs (lost if none) */
	for (p = 0; p < S.npkg; p++)
		if (nv_on[p])
			v->est[A_QEMU] += pool[p];
	/* its own semantics with exact inputs */
	for (p = 0; p < S.npkg; p++) {
		u64 rt = 0;

		for (i = 0; i < v->ntask; i++)
			rt += S.t[v->first_task + i].runtime_pkg[p];
		if (v->q_have)
			own += (double)(rt - v->q_rt_pkg[p]) /
			       ((double)SEC * S.pk[p].ncpu) * tr[p];
		v->q_rt_pkg[p] = rt;
	}
	v->own[A_QEMU] += own;
	v->q_have = true;
	ev_push(S.now + SEC, EV_QEMU, vi, 0);
}
