// SPDX-License-Identifier: GPL-2.0
/*
 * vrsim: a trace-driven comparison of per-VM energy accounting.
 *
 * A simulated host (packages x CPUs, a small round-robin scheduler with
 * 3 ms slices) runs workloads of VMs (vCPU threads, VMM I/O threads) and
 * host tasks.  Every task has a known dynamic power while it runs; each
 * package has a static power, carried in equal parts by its CPUs and
 * charged to whatever task occupies a CPU (unoccupied time is idle).
 * That is the ground truth ("occupied" semantics).  Each package has a
 * RAPL-like PKG counter: ESU 14, 32-bit wrap, latched about every 1 ms.
 *
 * On the same schedule and counters, per-VM energy is computed by:
 *   vmrapl     the real accounting core (kmod/vr_core.c), 1 ms epochs,
 *              driven like the kernel glue drives it;
 *   qemu-vmsr  QEMU's documented vmsr algorithm: 1 s loop per VM, thread
 *              utime+stime in 100 Hz ticks, ratio = ticks / (ticks per s x
 *              CPUs of the package), package = CPU the thread last ran on,
 *              non-vCPU threads split equally over the package's vCPUs, a
 *              wrapped counter gives a delta of 0;
 *   scaphandre its qemu exporter: 5 s loop, the VM process's share of the
 *              host's consumed CPU time (ticks) x the host energy delta (a
 *              wrapped delta is dropped);
 *   kepler     its ratio model: 5 s loop, the process's share of CPU time
 *              (exact, eBPF) x the active energy (dE minus idle power,
 *              idle power known exactly here), wraps unwound, no idle
 *              share.
 * These are written from their documented descriptions, not their code.
 *
 * Reported per algorithm and workload: mean and max absolute error of
 * per-VM energy in % of the VM's true energy over 1 s and 60 s windows,
 * the net energy created (+) or lost (-) over the whole run, and the
 * error against each algorithm's own stated semantics (its formula fed
 * with exact inputs: for kepler, the VM's true dynamic energy).  For
 * vmrapl, the core's conservation (tracked + host + idle + lost ==
 * sampled) is checked after every close.
 *
 *   vrsim [--quick] [--json FILE] [--only NAME] [--seed N] [--secs S]
 *         [--period-us US (vmrapl epoch, 1000)]
 *         [--latch-us US (counter update interval, 976)]
 *         [--lag-us US (vmrapl's counter lag share; default: the one
 *          vr_pkg_init() gives hardware counters, 500)]
 *
 * The parts are listed in vrsim.h.
 */
#include "vrsim.h"

struct sim S;
bool quick;
u64 period_ns = 1000000;		/* vmrapl's epoch */
u64 latch_ns = 976563;			/* the counter's update interval */
long long lag_ns = -1;			/* -1: vr_pkg_init()'s default */
u64 lag_used_ns;			/* what the packages ran with */

/* Every second: close what is stale, snapshot every VM's numbers. */
static void on_window(int k)
{
	int vi, p;

	for (p = 0; p < S.npkg; p++)
		vr_close(p);
	sync_all();
	for (vi = 0; vi < S.nvm; vi++) {
		struct vm *v = &S.vm[vi];
		double *s = &v->snap[(size_t)k * SNAPW];
		int a;

		v->est[A_VMRAPL] = vmrapl_vm_j(v);
		v->own[A_VMRAPL] = v->truth_j;
		s[0] = v->truth_j;
		s[1] = v->dyn_j;
		for (a = 0; a < NALG; a++) {
			s[2 + a] = v->est[a];
			s[2 + NALG + a] = v->own[a];
		}
	}
	if (k < S.nsec)
		ev_push(S.now + SEC, EV_WIN, k + 1, 0);
}

/* ------------------------------------------------------------- run */

static void run(const struct workload *w, u64 secs, struct result *r)
{
	struct vr_pkg_stats st[VR_NDOM];
	clock_t c0 = clock();
	int p, i, vi;

	memset(&S, 0, sizeof(S));
	ev_reset();
	S.w = w;
	S.npkg = w->npkg;
	S.ncpu_total = w->npkg * w->ncpu;
	S.end = secs * SEC;
	S.nsec = (int)secs;
	for (p = 0; p < S.npkg; p++) {
		struct pkg *pk = &S.pk[p];
		u64 off = rnd() & 0xffffffffULL;

		pk->static_uw = w->static_uw;
		pk->ncpu = w->ncpu;
		pk->first = p * w->ncpu;
		if (w->start_near_wrap) {
			/* about 20 s (quick) or 200 s before the first wrap */
			u64 lead = (quick ? 20 : 200) * 240ULL << 14;

			off = (1ULL << 32) - lead - below(1 << 20);
		}
		rapl_init(&pk->ctr, off);
		for (i = 0; i < pk->ncpu; i++) {
			struct cpu *c = &S.cpu[pk->first + i];

			c->pkg = p;
			c->cur = c->qhead = c->qtail = NOTASK;
		}
		vmrapl_pkg_init(pk);
		vrm_set_power(&pk->ctr, 0, pk->static_uw);
		ev_push(4 * MS, EV_TICK, p, 0);
	}
	w->setup();
	for (vi = 0; vi < S.nvm; vi++) {
		S.vm[vi].snap = xcalloc((size_t)(S.nsec + 1) * SNAPW,
					sizeof(double));
		ev_push(S.vm[vi].start, EV_QEMU, vi, 0);
	}
	for (i = 0; i < S.ntask; i++)
		if (S.t[i].kind == T_HOST)
			ev_push(below(20 * MS), EV_WAKE, i, S.t[i].wake_ver);
	ev_push(0, EV_WIN, 0, 0);
	ev_push(5 * SEC + 370 * MS, EV_SCAPH, 0, 0);
	ev_push(2 * SEC + 710 * MS, EV_KEPLER, 0, 0);

	while (!ev_empty()) {
		struct ev e = ev_pop();

		if (e.t > S.end)
			break;
		S.now = e.t;
		S.events++;
		switch (e.type) {
		case EV_CPU:
			if (e.ver == S.cpu[e.id].ev_ver)
				on_cpu_event(e.id);
			break;
		case EV_WAKE:
			if (e.ver == S.t[e.id].wake_ver &&
			    S.t[e.id].state == S_SLEEP)
				task_wake(e.id);
			break;
		case EV_TICK:
			/* the module's timer / the tick: close if stale */
			vr_close(e.id);
			ev_push(S.now + 4 * MS, EV_TICK, e.id, 0);
			break;
		case EV_WIN:
			on_window(e.id);
			break;
		case EV_QEMU:
			on_qemu(e.id);
			break;
		case EV_SCAPH:
			on_scaph();
			break;
		case EV_KEPLER:
			on_kepler(5 * SEC);
			break;
		case EV_VMSTART:
			vm_start(e.id);
			break;
		case EV_VMSTOP:
			vm_stop(e.id);
			break;
		}
	}

	memset(r, 0, sizeof(*r));
	r->wl = w->name;
	r->nvm = S.nvm;
	analyse(r);
	r->events = S.events;
	r->switches = S.switches;
	r->closes = S.closes;
	r->conservation_bad = S.conservation_bad;
	for (p = 0; p < S.npkg; p++) {
		vr_pkg_read_stats(&S.pk[p].p, st, 1);
		r->vr_lost_j += ldexp((double)st[0].lost, -VR_EU_SHIFT);
		r->vr_host_j += ldexp((double)st[0].host, -VR_EU_SHIFT);
		r->vr_idle_j += ldexp((double)st[0].idle, -VR_EU_SHIFT);
		r->vr_sampled_j += ldexp((double)st[0].sampled, -VR_EU_SHIFT);
		r->vr_resets += S.pk[p].p.resets;
		r->vr_overruns += S.pk[p].p.overruns;
		r->vr_wraps += S.pk[p].p.wraps;
	}
	r->qemu_wrap_zero = S.qemu_wrap_zero;
	r->scaph_wrap_drop = S.scaph_wrap_drop;
	r->secs = (double)secs;
	r->wall = (double)(clock() - c0) / CLOCKS_PER_SEC;

	for (vi = 0; vi < S.nvm; vi++) {
		free(S.vm[vi].acct);
		free(S.vm[vi].q_ticks);
		free(S.vm[vi].snap);
	}
	free(S.vm);
	free(S.t);
}

int main(int argc, char **argv)
{
	const char *json = NULL, *only = NULL;
	struct result res[NWL];
	u64 seed = 0x76727369ULL, secs = 0;
	int i, n = 0, bad = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick"))
			quick = true;
		else if (!strcmp(argv[i], "--json") && i + 1 < argc)
			json = argv[++i];
		else if (!strcmp(argv[i], "--only") && i + 1 < argc)
			only = argv[++i];
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--secs") && i + 1 < argc)
			secs = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--period-us") && i + 1 < argc)
			period_ns = strtoull(argv[++i], NULL, 0) * 1000;
		else if (!strcmp(argv[i], "--latch-us") && i + 1 < argc)
			latch_ns = strtoull(argv[++i], NULL, 0) * 1000;
		else if (!strcmp(argv[i], "--lag-us") && i + 1 < argc)
			lag_ns = strtoll(argv[++i], NULL, 0) * 1000;
		else {
			fprintf(stderr, "usage: %s [--quick] [--json FILE] "
				"[--only WORKLOAD] [--seed N] [--secs S] "
				"[--period-us US] [--latch-us US] "
				"[--lag-us US]\n",
				argv[0]);
			return 2;
		}
	}
	for (i = 0; i < (int)NWL; i++) {
		const struct workload *w = &workloads[i];
		u64 s = secs ? secs : quick ? 61 :
			w->full_secs ? w->full_secs : 600;

		if (only && strcmp(only, w->name))
			continue;
		sim_rng.s = seed + (u64)i * 0x1000193ULL;
		run(w, s, &res[n]);
		fprintf(stderr, "# %-14s %5llu s simulated, %9llu events, "
			"%8llu closes, %.2f s\n", w->name,
			(unsigned long long)s,
			(unsigned long long)res[n].events,
			(unsigned long long)res[n].closes, res[n].wall);
		if (res[n].conservation_bad)
			bad = 1;
		n++;
	}
	if (!n) {
		fprintf(stderr, "no such workload\n");
		return 2;
	}
	print_md(res, n);
	if (json && write_json(json, res, n))
		return 2;
	if (bad)
		fprintf(stderr, "vmrapl conservation BROKEN\n");
	return bad;
}
