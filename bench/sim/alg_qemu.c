// SPDX-License-Identifier: GPL-2.0
/*
 * vrsim: QEMU's vmsr, as its released code behaves (QEMU 10:
 * target/i386/kvm/kvm.c, kvm_msr_energy_thread(), and
 * target/i386/kvm/vmsr_energy.c; re-implemented here from reading it).
 *
 * One loop per VM.  Each iteration: read every thread's utime + stime
 * (100 Hz ticks) and the CPU it last ran on from /proc; read the package
 * counter of each host package some thread last ran on; sleep 1 s; read
 * the counters again (a lower value, i.e. a wrap, gives a delta of 0) and
 * the threads' ticks.  A thread's share of a package is its ticks over
 * (1 s x 100 ticks x the package's CPUs), times the package delta, in
 * counter units rounded to an integer.  Its package is the one of the CPU
 * read at the start of the iteration.
 *
 * Two per-package values live across iterations and are never reset:
 * the number of vCPU threads seen on the package (incremented by every
 * vCPU thread every iteration) and the non-vCPU energy "ratio" (the
 * non-vCPU threads' energy is added to it, then it is divided by that
 * cumulative count).  Every vCPU thread that ran in the iteration gets
 * its own share plus that ratio.  So the I/O threads' energy is divided
 * by a count that grows every second: it decays towards zero.
 */
#include "vrsim.h"

static int task_pkg(const struct task *t)
{
	/* /proc's "processor" field: where it last ran (CPU 0 if never) */
	return t->last_cpu == NOTASK ? 0 : S.cpu[t->last_cpu].pkg;
}

/* End of an iteration of VM @vi's loop. */
static void q_finish(struct vm *v)
{
	u64 delta[MAXPKG] = {};
	double own = 0;
	int p, i;

	for (p = 0; p < S.npkg; p++) {
		u64 end;

		if (!(S.pk[p].q_read))
			continue;
		end = ctr_read(&S.pk[p].ctr, S.now);
		if (end > v->q_e_start[p]) {
			delta[p] = end - v->q_e_start[p];
		} else if (end < v->q_e_start[p]) {
			S.qemu_wrap_zero++;
		}
	}
	/* vCPU threads per package: counted again every iteration */
	for (i = 0; i < v->ntask; i++) {
		const struct task *t = &S.t[v->first_task + i];

		if (t->kind == T_VCPU)
			v->q_nb_vcpu[t->q_pkg]++;
	}
	for (i = 0; i < v->ntask; i++) {
		const struct task *t = &S.t[v->first_task + i];
		u64 d = ticks_of(t->runtime) - t->q_ticks0;
		double max = 100.0 * S.pk[t->q_pkg].ncpu;

		if (t->kind != T_VCPU && d)
			v->q_e_ratio[t->q_pkg] += (u64)lround(
				(double)delta[t->q_pkg] * (double)d / max);
	}
	for (p = 0; p < S.npkg; p++)
		if (v->q_nb_vcpu[p])
			v->q_e_ratio[p] /= v->q_nb_vcpu[p];
	for (i = 0; i < v->ntask; i++) {
		const struct task *t = &S.t[v->first_task + i];
		u64 d = ticks_of(t->runtime) - t->q_ticks0;
		double max = 100.0 * S.pk[t->q_pkg].ncpu;

		if (t->kind != T_VCPU || !d)
			continue;
		v->q_vpkg += (u64)lround((double)delta[t->q_pkg] *
					 (double)d / max) +
			     v->q_e_ratio[t->q_pkg];
	}
	v->est[R_QEMU] = ctr_units_j(&S.pk[0].ctr, v->q_vpkg);

	/* its rule with exact inputs: exact CPU time share x exact energy */
	for (p = 0; p < S.npkg; p++) {
		u64 rt = 0;

		for (i = 0; i < v->ntask; i++)
			rt += S.t[v->first_task + i].runtime_pkg[p];
		own += (double)(rt - v->q_rt0[p]) /
		       ((double)SEC * S.pk[p].ncpu) *
		       (S.pk[p].truth_j - v->q_truth0[p]);
	}
	v->own[R_QEMU] += own;
}

/* Start of an iteration: the /proc reads, then the counters. */
static void q_start(struct vm *v)
{
	int p, i;

	for (p = 0; p < S.npkg; p++)
		S.pk[p].q_read = false;
	for (i = 0; i < v->ntask; i++) {
		struct task *t = &S.t[v->first_task + i];

		t->q_ticks0 = ticks_of(t->runtime);
		t->q_pkg = task_pkg(t);
		S.pk[t->q_pkg].q_read = true;
	}
	for (p = 0; p < S.npkg; p++) {
		if (S.pk[p].q_read)
			v->q_e_start[p] = ctr_read(&S.pk[p].ctr, S.now);
		v->q_truth0[p] = S.pk[p].truth_j;
		v->q_rt0[p] = 0;
		for (i = 0; i < v->ntask; i++)
			v->q_rt0[p] += S.t[v->first_task + i].runtime_pkg[p];
	}
}

/* QEMU vmsr: VM @vi's loop, once a second. */
void on_qemu(int vi)
{
	struct vm *v = &S.vm[vi];

	/* a VM that stopped took its loop with it: no last iteration */
	if (v->stopped)
		return;
	sync_all();
	if (v->q_have) {
		/* q_read is per package; restore this VM's reads */
		int p, i;

		for (p = 0; p < S.npkg; p++)
			S.pk[p].q_read = false;
		for (i = 0; i < v->ntask; i++)
			S.pk[S.t[v->first_task + i].q_pkg].q_read = true;
		q_finish(v);
	}
	q_start(v);
	v->q_have = true;
	ev_push(S.now + SEC, EV_QEMU, vi, 0);
}
