// SPDX-License-Identifier: GPL-2.0
/*
 * vrsim: Scaphandre's qemu exporter, as its released code behaves
 * (Scaphandre 1.0.x: src/exporters/qemu.rs, QemuExporter::iterate(), with
 * src/sensors/mod.rs, Topology::get_records_diff_power_microwatts() and
 * get_process_cpu_usage_percentage(); re-implemented here from reading
 * them).
 *
 * Every ~5 s the exporter refreshes the host's energy record (the
 * packages' energy_uj, summed) and its process records.  The host's power
 * is the difference of the last two records over their time difference,
 * in uW (none when the sum went down: a wrap skips the iteration).  A
 * qemu process with more than two records gets
 *
 *     (cpu_usage / nb_cores) x power_uW / 100
 *
 * added to its energy_uj file, where cpu_usage is the process's CPU time
 * over the last refresh interval in % of one CPU (from /proc ticks) and
 * nb_cores the host's CPUs: its share of the host's capacity, times the
 * host's power, added as if it were energy, once per iteration.
 *
 * The "units fixed" row is the same, multiplied by the interval in
 * seconds (power x time).  Own semantics (both rows): the share of host
 * capacity from exact CPU time, times the exact host energy.
 */
#include "vrsim.h"

/* powercap's energy_uj of every package, summed (each wraps). */
static u64 host_uj(void)
{
	u64 uj = 0;
	int p;

	for (p = 0; p < S.npkg; p++)
		uj += (u64)((__uint128_t)ctr_read(&S.pk[p].ctr, S.now) *
			    1000000 >> S.pk[p].ctr.esu);
	return uj;
}

void on_scaph(void)
{
	u64 uj, dt_ns;
	double power_uw = 0, truth = 0, dt_s;
	bool have_power = false;
	int p, vi;

	sync_all();
	uj = host_uj();
	for (p = 0; p < S.npkg; p++)
		truth += S.pk[p].truth_j;
	dt_ns = S.now - S.s_t_last;
	dt_s = (double)dt_ns / SEC;
	if (S.s_nrec >= 1) {
		if (uj >= S.s_uj_last) {
			power_uw = (double)(u64)((double)(uj - S.s_uj_last) /
						 dt_s);
			have_power = true;
		} else {
			S.scaph_wrap_skip++;
		}
	}
	for (vi = 0; vi < S.nvm; vi++) {
		struct vm *v = &S.vm[vi];
		u64 rt = vm_runtime(v), tk = ticks_of(rt);

		if (!v->started || v->stopped)
			continue;
		/* the process record of this refresh */
		v->s_usage = v->s_nrec ? (double)(tk - v->s_ticks) * 10 * MS /
					 (double)dt_ns * 100 : 0;
		if (v->s_nrec)
			v->own[R_SCAPH] += (double)(rt - v->s_rt) /
					   ((double)dt_ns * S.ncpu_total) *
					   (truth - S.s_truth_last);
		v->own[R_SCAPH_FIX] = v->own[R_SCAPH];
		v->s_nrec++;
		v->s_ticks = tk;
		v->s_rt = rt;
		if (v->s_nrec > 2 && have_power) {
			double uj_add = v->s_usage / S.ncpu_total * power_uw /
					100;

			v->est[R_SCAPH] += (double)(u64)uj_add / 1e6;
			v->est[R_SCAPH_FIX] += uj_add * dt_s / 1e6;
		}
	}
	S.s_uj_last = uj;
	S.s_t_last = S.now;
	S.s_truth_last = truth;
	S.s_nrec++;
	ev_push(S.now + 5 * SEC, EV_SCAPH, 0, 0);
}
