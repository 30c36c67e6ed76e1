// SPDX-License-Identifier: GPL-2.0
/*
 * vrsim: Scaphandre's qemu exporter, as documented (see vrsim.c).
 */
#include "vrsim.h"

/*
 * Scaphandre qemu exporter, one 5 s iteration: the VM process's share of
 * the host's consumed CPU time (/proc ticks) x the host energy delta.
 */
void on_scaph(void)
{
	double de = 0, tr = 0;
	u64 host_ticks = ticks_of(S.host_busy_ns), d_ticks, d_rt;
	int p, vi;

	sync_all();
	host_ticks = ticks_of(S.host_busy_ns);
	d_ticks = host_ticks - S.s_host_ticks;
	d_rt = S.host_busy_ns - S.s_host_rt;
	for (p = 0; p < S.npkg; p++) {
		struct pkg *pk = &S.pk[p];
		u64 raw = vrm_read(&pk->ctr, S.now);
		double t = vrm_truth_j(&pk->ctr, S.now);

		if (raw >= pk->scaph_raw)
			de += vrm_units_j(&pk->ctr, raw - pk->scaph_raw);
		else if (S.s_have)
			S.scaph_wrap_drop++;	/* no wrap handling */
		pk->scaph_raw = raw;
		tr += t - pk->scaph_truth_j;
		pk->scaph_truth_j = t;
	}
	for (vi = 0; vi < S.nvm; vi++) {
		struct vm *v = &S.vm[vi];
		u64 rt = vm_runtime(v), tk = ticks_of(rt);

		if (!v->started)
			continue;
		if (v->stopped) {
			/* the process is gone, and its last interval */
			v->s_have = false;
			continue;
		}
		if (v->s_have && S.s_have) {
			if (d_ticks)
				v->est[A_SCAPH] += (double)(tk - v->s_ticks) /
						   (double)d_ticks * de;
			if (d_rt)
				v->own[A_SCAPH] += (double)(rt - v->s_rt) /
						   (double)d_rt * tr;
		}
		v->s_ticks = tk;
		v->s_rt = rt;
		v->s_have = true;
	}
	S.s_host_ticks = host_ticks;
	S.s_host_rt = S.host_busy_ns;
	S.s_have = true;
	ev_push(S.now + 5 * SEC, EV_SCAPH, 0, 0);
}
