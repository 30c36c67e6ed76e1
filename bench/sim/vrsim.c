// SPDX-License-Identifier: GPL-2.0
/*
 * vrsim: a trace-driven comparison of per-VM energy accounting.
 *
 * A simulated host (packages x CPUs, a small round-robin scheduler with
 * 3 ms slices) runs workloads of VMs (vCPU threads, VMM I/O threads) and
 * host tasks.  Power comes from a physical model of each package that is
 * written here and shares nothing with kmod/ (model.c): an idle floor
 * reached only when every core is idle, an uncore uplift while any core
 * runs, per-core power by the running task's intensity, scaled by a
 * frequency that falls as more cores are active.  Each package has a
 * RAPL-like PKG counter: ESU 14, 32-bit wrap, latched about every 1 ms
 * with jitter, and each core an AMD-like energy counter of its own core
 * power (no uncore), latched, quantized and wrapping the same way.
 * Three truths are integrated exactly from the model:
 * occupied, dynamic-only and busy-share (model.c defines them).  Model
 * options, off by default, break two assumptions the default model
 * shares with the module (model.c: "Breaking the model's assumptions"):
 * a package that reaches its idle floor late or never (--pc6-delay-us,
 * --no-pc6), a counter updated at another interval (--update-us,
 * --update-jitter), in other units (--esu); and three that make the
 * physics richer: SMT siblings sharing a core and its counter (--smt),
 * leakage that follows voltage and temperature (--leakage), an uncore and
 * a DRAM domain that follow memory traffic (--mem-uncore).
 *
 * On the same schedule and counters, per-VM energy is computed by:
 *   vmrapl       the real accounting core (kmod/vr_core.c), 1 ms epochs,
 *                driven like the kernel glue drives it, with its default
 *                static-power learning (nothing handed in), and in two
 *                labelled rows with p_static_mw 25 % above and below the
 *                package's idle floor, and in one with per-core energy
 *                weighting fed from AMD-like per-core counters (model.c,
 *                alg_vmrapl.c);
 *   qemu-vmsr    QEMU 10's vmsr loop as released (alg_qemu.c);
 *   scaphandre   Scaphandre 1.0's qemu exporter as released, and the same
 *                with its units fixed (alg_scaph.c);
 *   kepler       Kepler 0.10's ratio model (alg_kepler.c);
 *   naive        a baseline, no release: each package's energy split by
 *                the VMs' CPU-time share every 5 s (alg_naive.c).
 * Each anchor is re-implemented from reading its released code; the
 * header of its file says what it does and where that comes from.
 *
 * Reported per workload, algorithm and judge (each truth, and the
 * algorithm's own rule fed with exact inputs): the mean absolute error of
 * per-VM energy, in % of the judge's energy, over 1 s, 5 s (aligned to
 * multiples of 5 s) and 60 s windows; each run gives one mean, and the
 * seeds give their mean, min and max.  For every vmrapl instance the
 * core's conservation (tracked + host + idle + lost == sampled) is checked
 * after every close; a break fails the run.
 *
 * With --limit-bench it runs no workload but per-VM power limits: a VM
 * held at a power limit through its CPU quota by the controller of
 * userspace/common/limit.c (fed vmrapl's estimate, never a truth), with
 * the kernel's CFS bandwidth control modelled in bandwidth.c, against a
 * static quota (limitbench.c says what it runs and how it judges).
 *
 *   vrsim [--quick] [--json FILE] [--only NAME[,NAME...]] [--seeds N]
 *         [--seed0 N]
 *         [--secs S] [--period-us US (vmrapl epoch, 1000)]
 *         [--latch-us US (the package counter's update interval, 976;
 *          the per-core counters keep CORE_LATCH_NS)]
 *         [--lag-us US (vmrapl's counter lag share; default: from the
 *          update interval measured on the counter, vr_step_lag_ns())]
 *         [--inject-fault-at S (break package 0's books at S s: the
 *          check's own test; the run must then fail)]
 *         [--switches-only (a comparison: per-core samples at task
 *          switches only, not also at a vCPU's exits at the 4 ms tick,
 *          as the module did before it polled at kvm_exit/kvm_entry)]
 *         [--floor-spread PCT (each package's idle floor is the
 *          workload's times 1 + u, u uniform in +-PCT %, per seed and
 *          package; 10)]
 *         [--no-host-floor (a comparison: no package takes the idle
 *          floor the others learned, as the module did before)]
 *         [--floor-drift PCT (a comparison: each package's floor swings
 *          +-PCT % over two minutes, as with temperature, each at its
 *          own phase; 0)]
 *         [--idle-lead S (a comparison: the host idles S s, its own
 *          tasks only, before the VMs start, as after a boot that loads
 *          the module; the windows start with the VMs; 0)]
 *         [--pc6-delay-us D (the model: a package draws its uncore D us
 *          more after its last core idles, then the floor alone; 0)]
 *         [--no-pc6 (the model: a package never draws its floor alone:
 *          floor + uncore while every core idles)]
 *         [--update-us U (the model: the package and per-core counters
 *          update every U us; 976.6)]
 *         [--update-jitter PCT (the model: their update interval varies
 *          +-PCT %, uniform; 5)]
 *         [--esu N (the model: the counters count 2^-N J; 14, AMD Zen
 *          16)]
 *         [--smt (the model: two hardware threads per core, one core
 *          counter per core)]
 *         [--leakage (the model: the floor and the cores' static part
 *          grow with voltage and temperature)]
 *         [--mem-uncore (the model: the uncore grows with memory
 *          traffic; a DRAM domain counter)]
 *         [--policy occupied|busy|none (vmrapl's rows' static policy)]
 *         [--limit-bench (instead of the workloads: per-VM power limits
 *          held through a CPU quota, limitbench.c; --seeds, --seed0,
 *          --quick (one seed, no variants), --json and --inject-fault-at
 *          (in the first controller run: books broken while throttled)
 *          apply, and --limit-series FILE (a CSV of one run),
 *          --limit-windows N (windows judged, 10, at most 50),
 *          --limit-tick-ms MS (the controller's tick, 100),
 *          --limit-period-ms MS (cpu.max's period, 100))]
 *         [-h, --help (the options, one line each)]
 *
 * The parts are listed in vrsim.h.
 */
#include <getopt.h>

#include "vrsim.h"

struct sim S;
bool quick;
u64 period_ns = 1000000;		/* vmrapl's epoch */
u64 latch_ns = 976563;			/* the counter's update interval */
long long lag_ns = -1;			/* -1: vr_pkg_init()'s default */
u64 inject_fault_at;			/* s; 0: never */
bool switches_only;			/* no per-core poll at exits */
double floor_spread = 10;		/* +- % between packages */
double floor_drift;			/* +- % over DRIFT_PERIOD_S, 0: none */
bool no_host_floor;			/* no vr_pkg_set_host_floor() */
int vr_policy = VR_STATIC_OCCUPIED;	/* --policy: vmrapl's rows' policy */
u64 idle_lead_s;			/* --idle-lead */
u64 lag_used_ns;			/* what the packages ran with */
struct vr_step step_used;		/* the last package's measured step */
u64 pc6_delay_ns;			/* --pc6-delay-us; 0: at once */
bool no_pc6;				/* --no-pc6 */
u64 core_latch_ns = CORE_LATCH_NS;	/* per-core counters' update */
double update_jitter = 5;		/* +- % of the update interval */
u32 ctr_esu = 14;			/* the counters' energy status unit */
bool smt;				/* --smt: two threads per core */
bool leakage;				/* --leakage */
bool mem_uncore;			/* --mem-uncore */

/* Does a CPU of package @p run something? */
static bool pkg_busy(int p)
{
	const struct pkg *pk = &S.pk[p];
	int i;

	for (i = 0; i < pk->ncpu; i++)
		if (S.cpu[pk->first + i].cur != NOTASK)
			return true;
	return false;
}

/* The truth vmrapl's policy means to compute: its own rule. */
int own_truth(void)
{
	return vr_policy == VR_STATIC_BUSY ? J_BUSY :
	       vr_policy == VR_STATIC_NONE ? J_DYN : J_OCC;
}

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

		for (a = 0; a < NVR; a++) {
			v->est[R_VR + a] = vmrapl_vm_j(v, a, VR_DOM_PKG);
			v->own[R_VR + a] = v->truth[own_truth()];
		}
		for (a = 0; a < NTRUTH; a++)
			s[a] = v->truth[a];
		for (a = 0; a < NROW; a++) {
			s[NTRUTH + a] = v->est[a];
			s[NTRUTH + NROW + a] = v->own[a];
		}
		if (!mem_uncore)
			continue;
		for (a = 0; a < NTRUTH; a++)
			s[SNAP_DRAM + a] = v->dram_truth[a];
		for (a = 0; a < NVR; a++)
			s[SNAP_DRAM + NTRUTH + a] =
				vmrapl_vm_j(v, a, VMRAPL_DOM_DRAM);
	}
	if (k < S.nsec)
		ev_push(S.now + SEC, EV_WIN, k + 1, 0);
}

/* ------------------------------------------------------------- run */

void sim_run(const struct workload *w, u64 secs, u64 seed,
	     struct result *r)
{
	static const struct pmodel def = { 18000000, 12000000, 3400, 2600 };
	struct vr_pkg_stats st[VR_NDOM];
	clock_t c0 = clock();
	int p, i, vi, v;

	memset(&S, 0, sizeof(S));
	ev_reset();
	rng_seed(seed);
	S.w = w;
	S.npkg = w->npkg;
	S.ncpu_total = w->npkg * w->ncpu;
	S.end = secs * SEC;
	S.lead = idle_lead_s * SEC;
	S.nsec = (int)secs;
	for (p = 0; p < S.npkg; p++) {
		struct pkg *pk = &S.pk[p];
		u64 off = rnd() & 0xffffffffULL;

		pk->m = w->m.floor_uw ? w->m : def;
		pk->m.floor_uw = pkg_floor_uw(pk->m.floor_uw, seed, p);
		pk->floor0_uw = pk->m.floor_uw;
		pk->drift_phase = pkg_drift_phase(seed, p);
		pk->ncpu = w->ncpu;
		pk->ncore = smt ? w->ncpu / 2 : w->ncpu;
		pk->first = p * w->ncpu;
		if (w->start_near_wrap) {
			/* about 20 s (quick) or 100 s before the first wrap,
			 * at the ~100 W this workload draws */
			u64 lead = (quick ? 20 : 100) * 100ULL << ctr_esu;

			off = (1ULL << 32) - lead - below(1 << 20);
		}
		ctr_init(&pk->ctr, off);
		for (i = 0; i < pk->ncpu; i++) {
			struct cpu *c = &S.cpu[pk->first + i];

			c->pkg = p;
			/* --smt: siblings adjacent, the first's counter */
			c->core = pk->first + (smt ? i & ~1 : i);
			c->cur = c->qhead = c->qtail = NOTASK;
		}
		core_ctrs_init(p, seed);
		if (mem_uncore)
			dram_ctr_init(pk, seed);
		vmrapl_pkg_init(pk);
		pkg_model_init(pk);
		ev_push(4 * MS, EV_TICK, p, 0);
		if (leakage)
			ev_push(THERM_STEP_NS, EV_THERM, p, 0);
	}
	w->setup();
	S.end += S.lead;
	/*
	 * --idle-lead: the module loads with the host (t = 0), and the
	 * package timer's first expiry, 100 epochs later (engine_timer.c),
	 * closes each package whether busy or not: the baseline.  The idle
	 * time after it is then an epoch to learn from, also where no host
	 * task wakes a CPU before the VMs start.
	 */
	if (S.lead)
		for (p = 0; p < S.npkg; p++)
			ev_push(100 * period_ns, EV_LOAD, p, 0);
	for (vi = 0; vi < S.nvm; vi++) {
		S.vm[vi].snap = xcalloc((size_t)(S.nsec + 1) * SNAPW,
					sizeof(double));
		ev_push(S.vm[vi].start, EV_QEMU, vi, 0);
	}
	for (i = 0; i < S.ntask; i++)
		if (S.t[i].kind == T_HOST)
			ev_push(below(20 * MS), EV_WAKE, i, S.t[i].wake_ver);
	if (limit_bench)
		lb_start();
	ev_push(S.lead, EV_WIN, 0, 0);
	/* the 5 s loops, at multiples of 5 s (the 5 s windows' edges) */
	ev_push(S.lead, EV_SCAPH, 0, 0);
	ev_push(S.lead, EV_KEPLER, 0, 0);

	while (!ev_empty()) {
		struct ev e = ev_pop();

		if (e.t > S.end)
			break;
		S.now = e.t;
		S.events++;
		switch (e.type) {
		case EV_PC6:
			pkg_pc6(e.id, e.ver);
			break;
		case EV_THERM:
			pkg_therm(e.id);
			break;
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
			/*
			 * The tick and the module's timer: close if stale,
			 * where a CPU of the package is busy.  An all-idle
			 * package has neither (NO_HZ idle; the timer is
			 * deferrable and then only guards the wrap): it is
			 * closed next when one of its CPUs wakes.
			 */
			if (inject_fault_at && S.now >= inject_fault_at * SEC &&
			    !e.id) {
				/* the self-test of the check below: a book
				 * that no longer adds up */
				S.pk[0].p[V_LEARN].st[VR_DOM_PKG].tracked++;
				inject_fault_at = 0;
			}
			if (pkg_busy(e.id))
				vr_close(e.id);
			if (S.now >= S.pk[e.id].fit_at) {
				vr_fit_tick(e.id);
				S.pk[e.id].fit_at = S.now + 100 * MS;
			}
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
			on_kepler();
			on_naive();	/* its loop: Kepler's instants */
			break;
		case EV_VMSTART:
			vm_start(e.id);
			break;
		case EV_VMSTOP:
			vm_stop(e.id);
			break;
		case EV_LOAD:
			vr_close(e.id);
			break;
		case EV_BWPERIOD:
			bw_period(e.id, e.ver);
			break;
		case EV_BWSLACK:
			bw_slack(e.id, e.ver);
			break;
		case EV_LSNAP:
		case EV_LCTL:
		case EV_LSTEP:
			lb_event(&e);
			break;
		}
	}
	if (limit_bench)
		lb_finish();

	memset(r, 0, sizeof(*r));
	r->nvm = S.nvm;
	analyse(r);
	r->events = S.events;
	r->switches = S.switches;
	r->closes = S.closes;
	r->vr_core_closes = S.core_closes;
	r->conservation_bad = S.conservation_bad;
	r->model_err = model_check();
	for (p = 0; p < S.npkg; p++) {
		for (v = 0; v < NVR; v++) {
			struct vr_pkg *pp = &S.pk[p].p[v];

			vr_pkg_read_stats(pp, st, 1);
			r->vr_lost_j[v] += ldexp((double)st[0].lost,
						 -VR_EU_SHIFT);
			r->vr_static_w[v] += (double)pp->p_static_uw / 1e6 /
					     S.npkg;
			if (v == V_CORE) {
				r->vr_percore_j += ldexp((double)pp->percore_e,
							 -VR_EU_SHIFT);
				r->vr_dynamic_j += ldexp((double)st[0].dynamic,
							 -VR_EU_SHIFT);
				r->vr_percore_clamps += pp->percore_clamps;
			}
			if (v != V_LEARN)
				continue;
			r->vr_host_j += ldexp((double)st[0].host,
					      -VR_EU_SHIFT);
			r->vr_idle_j += ldexp((double)st[0].idle,
					      -VR_EU_SHIFT);
			r->vr_sampled_j += ldexp((double)st[0].sampled,
						 -VR_EU_SHIFT);
			r->vr_resets += pp->resets;
			r->vr_overruns += pp->overruns;
			r->vr_wraps += pp->wraps;
			if (pp->static_origin == VR_STATIC_LEARNED)
				r->vr_learned++;
			if (pp->static_origin == VR_STATIC_HOST)
				r->vr_host_floor++;
		}
		r->floor_w += (double)S.pk[p].floor0_uw / 1e6 / S.npkg;
	}
	r->qemu_wrap_zero = S.qemu_wrap_zero;
	r->scaph_wrap_skip = S.scaph_wrap_skip;
	r->secs = (double)secs;
	r->wall = (double)(clock() - c0) / CLOCKS_PER_SEC;

	for (vi = 0; vi < S.nvm; vi++) {
		free(S.vm[vi].acct);
		free(S.vm[vi].snap);
		free(S.vm[vi].bw);
	}
	free(S.vm);
	free(S.t);
}

/* @name is one of the comma-separated names of @list. */
static bool in_list(const char *list, const char *name)
{
	size_t n = strlen(name);

	while (*list) {
		if (!strncmp(list, name, n) && (list[n] == ',' || !list[n]))
			return true;
		list = strchr(list, ',');
		if (!list)
			break;
		list++;
	}
	return false;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: vrsim [OPTIONS]\n"
"      --quick                 1 seed x 61 s per workload (default 10 x 300 s)\n"
"      --json FILE             also write the results as JSON to FILE\n"
"      --only NAME[,NAME...]   only these workloads (default every one)\n"
"      --seeds N               seeds per workload (default 10; --quick 1)\n"
"      --seed0 N               the first seed (default 1)\n"
"      --secs S                simulated seconds a run (default 300; --quick 61)\n"
"      --period-us US          vmrapl's epoch (default 1000)\n"
"      --latch-us US           package counter update interval (default 976)\n"
"      --lag-us US             vmrapl's counter lag share (default: from\n"
"                              the counter's measured update interval)\n"
"      --inject-fault-at S     break package 0's books at S s (then fails)\n"
"      --switches-only         per-core samples at switches only, not at exits\n"
"      --floor-spread PCT      package idle floors spread +-PCT %% (default 10)\n"
"      --floor-drift PCT       each floor swings +-PCT %% over 2 min (default 0)\n"
"      --no-host-floor         no package takes a floor the others learned\n"
"      --idle-lead S           host idle S s before the VMs (a multiple of 5)\n"
"      --policy P              vmrapl's static policy: occupied (default),\n"
"                              busy or none\n"
"      --limit-bench           per-VM power limits instead of the workloads\n"
"      --limit-series FILE     --limit-bench: a CSV of one run to FILE\n"
"      --limit-windows N       --limit-bench: windows judged (default 10)\n"
"      --limit-tick-ms MS      --limit-bench: controller tick (default 100)\n"
"      --limit-period-ms MS    --limit-bench: cpu.max period (default 100)\n"
"  the model (each off by default):\n"
"      --pc6-delay-us D        package draws its uncore D us after its last\n"
"                              core idles, then the floor alone (default 0)\n"
"      --no-pc6                package never draws its floor alone\n"
"      --update-us U           package and per-core counters update every\n"
"                              U us (default 976.6)\n"
"      --update-jitter PCT     their update interval +-PCT %% (default 5)\n"
"      --esu N                 the counters count 2^-N J (default 14)\n"
"      --smt                   two hardware threads per core, one core\n"
"                              counter per core\n"
"      --leakage               floor and core static power grow with\n"
"                              voltage and temperature (tau 5 s)\n"
"      --mem-uncore            uncore grows with memory traffic; a DRAM\n"
"                              domain counter (2^-16 J)\n"
"  -h, --help                  this text\n");
}

/*
 * @s in full as a number, read as the options always read theirs
 * (strtoull or strtoll with base 0, --seeds in decimal, strtod); exits 2
 * with the option's name otherwise.
 */
static u64 arg_u64(const char *opt, const char *s)
{
	char *end;
	u64 v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (!*s || *end || errno || *s == '-') {
		fprintf(stderr, "vrsim: --%s: '%s' is not a number\n", opt, s);
		exit(2);
	}
	return v;
}

static long long arg_s64(const char *opt, const char *s, int base)
{
	long long v;
	char *end;

	errno = 0;
	v = strtoll(s, &end, base);
	if (!*s || *end || errno) {
		fprintf(stderr, "vrsim: --%s: '%s' is not a number\n", opt, s);
		exit(2);
	}
	return v;
}

static double arg_double(const char *opt, const char *s)
{
	char *end;
	double v;

	v = strtod(s, &end);
	if (!*s || *end || !isfinite(v)) {
		fprintf(stderr, "vrsim: --%s: '%s' is not a number\n", opt, s);
		exit(2);
	}
	return v;
}

/* A number out of the option's range: exits 2 with its name. */
static void arg_range(const char *opt, const char *s)
{
	fprintf(stderr, "vrsim: --%s: '%s' is out of range\n", opt, s);
	exit(2);
}

/* Options without a short form. */
enum {
	OPT_QUICK = 256, OPT_JSON, OPT_ONLY, OPT_SEEDS, OPT_SEED0, OPT_SECS,
	OPT_PERIOD_US, OPT_LATCH_US, OPT_LAG_US, OPT_INJECT_FAULT_AT,
	OPT_SWITCHES_ONLY, OPT_FLOOR_SPREAD, OPT_FLOOR_DRIFT,
	OPT_NO_HOST_FLOOR, OPT_IDLE_LEAD, OPT_PC6_DELAY_US, OPT_NO_PC6,
	OPT_UPDATE_US, OPT_UPDATE_JITTER, OPT_ESU, OPT_POLICY, OPT_SMT,
	OPT_LEAKAGE, OPT_MEM_UNCORE, OPT_LIMIT_BENCH, OPT_LIMIT_SERIES,
	OPT_LIMIT_WINDOWS, OPT_LIMIT_TICK_MS, OPT_LIMIT_PERIOD_MS,
};

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "quick", no_argument, NULL, OPT_QUICK },
		{ "json", required_argument, NULL, OPT_JSON },
		{ "only", required_argument, NULL, OPT_ONLY },
		{ "seeds", required_argument, NULL, OPT_SEEDS },
		{ "seed0", required_argument, NULL, OPT_SEED0 },
		{ "secs", required_argument, NULL, OPT_SECS },
		{ "period-us", required_argument, NULL, OPT_PERIOD_US },
		{ "latch-us", required_argument, NULL, OPT_LATCH_US },
		{ "lag-us", required_argument, NULL, OPT_LAG_US },
		{ "inject-fault-at", required_argument, NULL,
		  OPT_INJECT_FAULT_AT },
		{ "switches-only", no_argument, NULL, OPT_SWITCHES_ONLY },
		{ "floor-spread", required_argument, NULL, OPT_FLOOR_SPREAD },
		{ "floor-drift", required_argument, NULL, OPT_FLOOR_DRIFT },
		{ "no-host-floor", no_argument, NULL, OPT_NO_HOST_FLOOR },
		{ "idle-lead", required_argument, NULL, OPT_IDLE_LEAD },
		{ "pc6-delay-us", required_argument, NULL, OPT_PC6_DELAY_US },
		{ "no-pc6", no_argument, NULL, OPT_NO_PC6 },
		{ "update-us", required_argument, NULL, OPT_UPDATE_US },
		{ "update-jitter", required_argument, NULL, OPT_UPDATE_JITTER },
		{ "esu", required_argument, NULL, OPT_ESU },
		{ "policy", required_argument, NULL, OPT_POLICY },
		{ "smt", no_argument, NULL, OPT_SMT },
		{ "leakage", no_argument, NULL, OPT_LEAKAGE },
		{ "mem-uncore", no_argument, NULL, OPT_MEM_UNCORE },
		{ "limit-bench", no_argument, NULL, OPT_LIMIT_BENCH },
		{ "limit-series", required_argument, NULL, OPT_LIMIT_SERIES },
		{ "limit-windows", required_argument, NULL,
		  OPT_LIMIT_WINDOWS },
		{ "limit-tick-ms", required_argument, NULL, OPT_LIMIT_TICK_MS },
		{ "limit-period-ms", required_argument, NULL,
		  OPT_LIMIT_PERIOD_MS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *json = NULL, *only = NULL;
	struct wres *res;
	u64 seed0 = 1, secs = 0;
	int i, n = 0, bad = 0, nseed = 0, k, c, idx;
	double d;

	/* getopt's messages start with argv[0]: the name, not the path. */
	if (argc > 0)
		argv[0] = (char *)"vrsim";
	while ((c = getopt_long(argc, argv, "h", opts, &idx)) != -1) {
		const char *name = c >= OPT_QUICK ? opts[idx].name : "";

		switch (c) {
		case OPT_QUICK:
			quick = true;
			break;
		case OPT_JSON:
			json = optarg;
			break;
		case OPT_ONLY:
			only = optarg;
			break;
		case OPT_SEEDS:
			/* 0 or less: the default */
			nseed = (int)arg_s64(name, optarg, 10);
			break;
		case OPT_SEED0:
			seed0 = arg_u64(name, optarg);
			break;
		case OPT_SECS:
			secs = arg_u64(name, optarg);
			break;
		case OPT_PERIOD_US:
			period_ns = arg_u64(name, optarg) * 1000;
			break;
		case OPT_LATCH_US:
			latch_ns = arg_u64(name, optarg) * 1000;
			break;
		case OPT_LAG_US:
			/* below 0: vr_pkg_init()'s default */
			lag_ns = arg_s64(name, optarg, 0) * 1000;
			break;
		case OPT_INJECT_FAULT_AT:
			inject_fault_at = arg_u64(name, optarg);
			break;
		case OPT_SWITCHES_ONLY:
			switches_only = true;
			break;
		case OPT_FLOOR_SPREAD:
			floor_spread = arg_double(name, optarg);
			break;
		case OPT_FLOOR_DRIFT:
			floor_drift = arg_double(name, optarg);
			break;
		case OPT_NO_HOST_FLOOR:
			no_host_floor = true;
			break;
		case OPT_IDLE_LEAD:
			idle_lead_s = arg_u64(name, optarg);
			break;
		case OPT_POLICY:
			for (k = 0; k < VR_STATIC_NR; k++)
				if (!strcmp(optarg, vr_policy_names[k]))
					break;
			if (k == VR_STATIC_NR)
				arg_range(name, optarg);
			vr_policy = k;
			break;
		case OPT_PC6_DELAY_US:
			d = arg_double(name, optarg);
			if (d < 0 || d > 1e9)
				arg_range(name, optarg);
			pc6_delay_ns = (u64)llround(d * 1000);
			break;
		case OPT_NO_PC6:
			no_pc6 = true;
			break;
		case OPT_UPDATE_US:
			d = arg_double(name, optarg);
			if (d < 1 || d > 1e9)
				arg_range(name, optarg);
			latch_ns = (u64)llround(d * 1000);
			core_latch_ns = latch_ns;
			break;
		case OPT_UPDATE_JITTER:
			update_jitter = arg_double(name, optarg);
			if (update_jitter < 0 || update_jitter >= 100)
				arg_range(name, optarg);
			break;
		case OPT_ESU:
			ctr_esu = (u32)arg_u64(name, optarg);
			if (ctr_esu > 31)
				arg_range(name, optarg);
			break;
		case OPT_SMT:
			smt = true;
			break;
		case OPT_LEAKAGE:
			leakage = true;
			break;
		case OPT_MEM_UNCORE:
			mem_uncore = true;
			break;
		case OPT_LIMIT_BENCH:
			limit_bench = true;
			break;
		case OPT_LIMIT_SERIES:
			lb_series = optarg;
			break;
		case OPT_LIMIT_WINDOWS:
			lb_windows = (int)arg_s64(name, optarg, 10);
			if (lb_windows < 1 || lb_windows > 50)
				arg_range(name, optarg);
			break;
		case OPT_LIMIT_TICK_MS:
			lb_tick_ns = arg_u64(name, optarg) * MS;
			if (!lb_tick_ns || lb_tick_ns > SEC / 2)
				arg_range(name, optarg);
			break;
		case OPT_LIMIT_PERIOD_MS:
			lb_period_ns = arg_u64(name, optarg) * MS;
			if (!lb_period_ns || lb_period_ns > SEC)
				arg_range(name, optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "vrsim: unexpected argument '%s'\n",
			argv[optind]);
		usage(stderr);
		return 2;
	}
	if (idle_lead_s % 5) {
		/* the 5 s windows and loops are aligned to multiples of 5 s */
		fprintf(stderr, "%s: --idle-lead must be a multiple of 5 s\n",
			argv[0]);
		return 2;
	}
	if (nseed <= 0)
		nseed = quick ? 1 : NSEED_FULL;
	if (limit_bench)
		return lb_main(nseed, seed0, json);
	if (!secs)
		secs = quick ? 61 : 300;
	res = xcalloc(nworkloads, sizeof(*res));
	for (i = 0; i < nworkloads; i++) {
		const struct workload *w = &workloads[i];
		struct wres *wr = &res[n];
		double wall = 0;

		if (only && !in_list(only, w->name))
			continue;
		wr->wl = w->name;
		wr->w = w;
		wr->nseed = nseed;
		wr->r = xcalloc(nseed, sizeof(*wr->r));
		for (k = 0; k < nseed; k++) {
			sim_run(w, secs, seed0 + k, &wr->r[k]);
			wall += wr->r[k].wall;
			if (wr->r[k].conservation_bad)
				bad = 1;
			if (!(wr->r[k].model_err < 1e-9)) {
				fprintf(stderr, "%s seed %llu: the truths do "
					"not add up to the model's energy "
					"(%.3g)\n", w->name,
					(unsigned long long)(seed0 + k),
					wr->r[k].model_err);
				bad = 2;
			}
		}
		fprintf(stderr, "# %-14s %d x %llu s simulated, %9llu events "
			"(seed %llu), %.2f s\n", w->name, nseed,
			(unsigned long long)secs,
			(unsigned long long)wr->r[0].events,
			(unsigned long long)seed0, wall);
		n++;
	}
	if (!n) {
		fprintf(stderr, "no such workload\n");
		return 2;
	}
	print_md(res, n);
	if (json && write_json(json, res, n))
		return 2;
	if (bad == 1)
		fprintf(stderr, "vmrapl conservation BROKEN\n");
	return bad;
}
