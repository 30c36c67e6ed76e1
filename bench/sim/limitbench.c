// SPDX-License-Identifier: GPL-2.0
/*
 * vrsim --limit-bench: per-VM power limits (issue 40), held by the
 * controller of userspace/common/limit.c through CFS bandwidth control
 * (bandwidth.c), judged against the limit.
 *
 * The host: one package of 16 CPUs (30 W floor +- floor_spread, 15 W
 * uncore, 3.4 GHz with one core busy down to 2.4 GHz with all).  On it:
 *
 *   VM 0, the capped VM: 4 vCPUs at 8 W per core (base frequency), either
 *        always busy (steady: it could use 4 CPUs) or in 300 ms phases,
 *        busy and then 2 ms of every 20 ms (phase), and an I/O thread
 *        (0.2 ms bursts every ~2 ms, about a tenth of a CPU);
 *   VM 1, the uncapped neighbour: 4 vCPUs, 5 ms bursts and 5 ms sleeps
 *        (exponential);
 *   two host tasks.
 *
 * At 4 s (engage) the operator sets VM 0's limit, a percentage of its
 * unthrottled power: what vmrapl's default instance (learned static,
 * occupied policy: what the module reports; V_LEARN) showed for VM 0 over
 * the judged windows of an uncapped run of the same seed (M_NONE).  Then
 * either
 *
 *   M_CTL     the controller: first a quota from the daemon's last 100 ms
 *             of watching the VM (vr_limit_prime()), then every tick
 *             (after a daemon's latency, 0 to 1 ms) it reads VM 0's energy
 *             from that instance (the module's reader closes stale
 *             packages first, as the ioctl does), its cgroup's CPU time
 *             and throttled time (to the microsecond, as cpu.stat has
 *             them), and writes cpu.max when the quota changes;
 *   M_STATIC  the baseline: one write, quota = limit / (VM 0's watts per
 *             CPU, vmrapl's energy over its CPU time in the 2 s before the
 *             limit, uncapped), never corrected (at a limit step it is
 *             computed again for the new limit, with the same watts per
 *             CPU).  Those 2 s start after vmrapl has learned its static
 *             power (about 2 s into a run): the baseline is not charged
 *             with the module's start-up.
 *
 * The controller never sees the model's truths.  Judged per window of
 * 1 s (aligned to the engage instant): VM 0's energy over the window in
 * vmrapl's view (which the controller holds) against the limit in watts
 * x 1 s, or against what VM 0 drew in that window of the uncapped run
 * where that was less (the phase load's light windows: the phases are
 * set at the same instants in both runs): the mean absolute error, and
 * the worst window above the limit, over lb_windows windows after
 * LB_ALLOW windows to settle from engage (or from a step); settling: the
 * end of the first window from which every window of the run is within
 * LB_BAND % of what it is judged against.  The same windows under the
 * occupied truth, against the limit in watts and against the same % of
 * VM 0's uncapped power under that truth.  The neighbour's CPU time and
 * energy over the judged windows against the uncapped run of the same
 * seed, next to their spread over the seeds of the uncapped runs.
 * vmrapl's conservation is checked after every close as in every run; a
 * break fails the bench.
 *
 * Cases: both loads at 20, 30, ... 90 %; a limit step 80 % -> 40 % and a
 * load step (the vCPUs' code goes from 8 to 14 W per core, scalar to
 * vector, at a limit of 50 % of the scalar power) on the steady load,
 * each 6 windows after engage, judged after the step; all with the
 * controller and the baseline.  Then the controller's variants
 * (lvariants[]) on both loads' limits and the steps: other ticks and
 * periods, a term removed or tuned otherwise, the period timer at a
 * random phase to the ticks, the per-core instance (V_CORE) as the feed.
 */
#include <stddef.h>

#include "vrsim.h"
#include "limit.h"

bool limit_bench;
const char *lb_series;			/* --limit-series */
int lb_windows = 10;			/* --limit-windows */
u64 lb_tick_ns = 100 * MS;		/* --limit-tick-ms */
u64 lb_period_ns = 100 * MS;		/* --limit-period-ms */
/* --inject-fault-at: kept for the first controller run (then throttled) */
static u64 lb_inject;

#define LB_WINDOW_NS	SEC		/* the limit's window */
#define LB_SNAP_NS	(100 * MS)	/* the judge's snapshots */
#define LB_ENGAGE_W	4		/* windows before the limit */
#define LB_STEP_W	6		/* windows from engage to a step */
#define LB_ALLOW	3		/* windows allowed to settle */
#define LB_BAND		3.0		/* % of the limit */
#define LB_HEAD_S	2		/* the baseline watches this long */
#define LB_LATENCY_NS	(1 * MS)	/* the daemon's latency, at most */
#define LB_NVCPU	4
#define LB_MAXWIN	64		/* windows a run judges, at most */
#define LB_NLIM		8		/* 20 % .. 90 % */
#define LB_STEP_FROM	80
#define LB_STEP_TO	40
#define LB_LOAD_PCT	50

enum { M_NONE, M_CTL, M_STATIC, NMODE };
enum { ST_NONE, ST_LIMIT, ST_LOAD, NSTEP };
enum { LD_STEADY, LD_PHASE, NLOAD };

static const char *const load_name[NLOAD] = { "steady", "phase" };
static const char *const step_name[NSTEP] = {
	"none", "limit 80 % -> 40 %", "load scalar -> vector at 50 %"
};

/* A controller variant: its tick, period and tunables (limit.h). */
struct lvariant {
	const char *name;
	u64 tick_ns, period_ns;		/* 0: lb_tick_ns, lb_period_ns */
	unsigned int alpha, ki, keep, repay, deadband;
	bool phase;
	int inst;			/* the vmrapl instance it is fed */
};

static const struct lvariant lvariants[] = {
	{ "chosen (defaults)", 0, 0, 2, 2, 2, 0, 63, false, V_LEARN },
	{ "tick 50 ms, period 50 ms", 50 * MS, 50 * MS, 2, 2, 2, 0, 63, false,
	  V_LEARN },
	{ "tick 200 ms", 200 * MS, 100 * MS, 2, 2, 2, 0, 63, false, V_LEARN },
	{ "tick 500 ms", 500 * MS, 100 * MS, 2, 2, 2, 0, 63, false, V_LEARN },
	{ "period 20 ms", 0, 20 * MS, 2, 2, 2, 0, 63, false, V_LEARN },
	{ "no integral", 0, 0, 2, 63, 2, 0, 63, false, V_LEARN },
	{ "no window term", 0, 0, 2, 2, 0, 63, 63, false, V_LEARN },
	{ "savings: half kept", 0, 0, 2, 2, 1, 0, 63, false, V_LEARN },
	{ "savings: 1/8 kept", 0, 0, 2, 2, 3, 0, 63, false, V_LEARN },
	{ "savings spent at once", 0, 0, 2, 2, 63, 0, 63, false, V_LEARN },
	{ "debts over 2 ticks", 0, 0, 2, 2, 2, 1, 63, false, V_LEARN },
	{ "integral 1/8", 0, 0, 2, 3, 2, 0, 63, false, V_LEARN },
	{ "gain weight 1/8", 0, 0, 3, 2, 2, 0, 63, false, V_LEARN },
	{ "deadband 1/128", 0, 0, 2, 2, 2, 0, 7, false, V_LEARN },
	{ "deadband 1/32", 0, 0, 2, 2, 2, 0, 5, false, V_LEARN },
	{ "timer at a random phase", 0, 0, 2, 2, 2, 0, 63, true, V_LEARN },
	{ "random phase, deadband 1/32", 0, 0, 2, 2, 2, 0, 5, true, V_LEARN },
	{ "fed the per-core instance (AMD)", 0, 0, 2, 2, 2, 0, 63, false,
	  V_CORE },
};

#define NVAR	((int)(sizeof(lvariants) / sizeof(lvariants[0])))

/* One snapshot of the judge, every LB_SNAP_NS. */
struct lsnap {
	u64 vr_uj, cpu_ns;		/* VM 0: vmrapl's energy, CPU time */
	u64 core_uj;			/* VM 0: the per-core instance's */
	u64 nb_vr_uj, nb_cpu_ns;	/* VM 1 */
	double truth_j, nb_truth_j;	/* occupied truths */
	u64 quota;			/* in force (BW_NO_QUOTA: none) */
	u64 limit_uw;			/* in force (0: none yet) */
	u64 k_uw;			/* the controller's gain estimate */
	long long plan_uj;		/* its plan for the tick */
};

/* The run in progress. */
static struct {
	const struct lvariant *var;
	u64 tick_ns, period_ns;
	int load, mode, step;
	u64 limit1, limit2, limit;	/* uW: before, after a step; now */
	u64 uw_per_cpu;			/* M_STATIC's W per CPU */
	double tr_scale;		/* uncapped: truth / vmrapl's view */
	u64 engage, tstep, end;
	u64 rs;				/* the daemon's random stream */
	struct vr_limit ctl;
	u64 c_uj, c_cpu, c_thr, c_t;	/* at the controller's last read */
	u64 quota;			/* written last */
	int nsnap;
	struct lsnap *snap;
	u64 writes, nr_periods, nr_throttled;
} L;

/* What one run shows. */
struct ljudge {
	double err_vr, over_vr;		/* judged windows, % of limit */
	double err_tr, over_tr;		/* the same, occupied truth */
	double err_trp, over_trp;	/* the truth against the same % of
					 * its own uncapped power */
	double slide_over;		/* worst sliding window above, % */
	double settle_s;		/* INFINITY: never */
	double p_vr_w, p_tr_w;		/* VM 0's mean power, judged */
	double p_core_w;		/* the same, the per-core instance */
	double head_uw_per_cpu;		/* VM 0's W per CPU, first 2 s */
	double nb_cpu_s, nb_tr_j;	/* VM 1 over the judged windows */
	double writes_s;		/* cpu.max writes per second */
	double win_w[LB_MAXWIN];	/* VM 0's power in each window from
					 * engage, vmrapl's view (uncapped:
					 * what it drew without a limit) */
	double thr_pct;			/* periods throttled, % */
	bool bad;			/* conservation or the model broke */
};

static double pct_of(int li)
{
	return 20 + 10 * li;
}

/* ----------------------------------------------------------- the host */

static void lb_setup(void)
{
	if (L.load == LD_PHASE)
		new_vm(LB_NVCPU, W_NORMAL, P_PHASE, 2 * MS, 18 * MS, 0,
		       W_NORMAL, 200000, 1800000, 0, 0);
	else
		new_vm(LB_NVCPU, W_NORMAL, P_STEADY, 0, 0, 0, W_NORMAL,
		       200000, 1800000, 0, 0);
	new_vm(LB_NVCPU, W_NORMAL, P_RANDOM, 5 * MS, 5 * MS, 0, 0, 0, 0, 0, 0);
	host_noise(2, W_NORMAL);
}

const struct workload limit_workload = {
	"limit", "a 4-vCPU VM under a power limit, an uncapped neighbour",
	lb_setup, 1, 16, false, false, { 30000000, 15000000, 3400, 2400 },
};

/* The daemon's stream (not the schedule's: runs match until engage). */
static u64 lrnd(void)
{
	L.rs ^= L.rs >> 12;
	L.rs ^= L.rs << 25;
	L.rs ^= L.rs >> 27;
	return L.rs * 0x2545f4914f6cdd1dULL;
}

static int snap_at(u64 t);

/* ------------------------------------------------------ the readings */

/* VM @vi's energy as vmrapl's instance @inst has it, uJ. */
static u64 vm_vr_uj(int vi, int inst)
{
	const struct vm *v = &S.vm[vi];
	size_t n = (size_t)(v->nvcpu + 1) * S.npkg, i;
	const struct vr_acct *a = &v->acct[(size_t)inst * n];
	u64 e = 0;

	for (i = 0; i < n; i++)
		e += a[i].energy[VR_DOM_PKG];
	return (u64)(((__uint128_t)e * 1000000) >> VR_EU_SHIFT);
}

/* A reader of the module: the stale packages closed, then the books. */
static void lb_sync(void)
{
	int p;

	for (p = 0; p < S.npkg; p++)
		vr_close(p);
	sync_all();
}

static void lb_write(u64 q)
{
	if (q == L.quota)
		return;
	bw_set(0, q, L.period_ns);
	L.quota = q;
}

static void lb_snap(int k)
{
	struct lsnap *s = &L.snap[k];

	lb_sync();
	s->vr_uj = vm_vr_uj(0, L.var->inst);
	s->core_uj = vm_vr_uj(0, V_CORE);
	s->cpu_ns = vm_runtime(&S.vm[0]);
	s->truth_j = S.vm[0].truth[J_OCC];
	s->nb_vr_uj = vm_vr_uj(1, L.var->inst);
	s->nb_cpu_ns = vm_runtime(&S.vm[1]);
	s->nb_truth_j = S.vm[1].truth[J_OCC];
	s->quota = L.quota;
	s->limit_uw = L.limit;
	s->k_uw = L.mode == M_CTL ? L.ctl.k_uw : 0;
	s->plan_uj = L.mode == M_CTL ? L.ctl.plan_uj : 0;
	if (k + 1 < L.nsnap)
		ev_push((u64)(k + 1) * LB_SNAP_NS, EV_LSNAP, k + 1, 0);
}

/* The daemon reads as cpu.stat shows it: whole microseconds. */
static void lb_read(u64 *uj, u64 *cpu, u64 *thr)
{
	lb_sync();
	*uj = vm_vr_uj(0, L.var->inst);
	*cpu = vm_runtime(&S.vm[0]) / 1000 * 1000;
	*thr = bw_throttled_ns(0) / 1000 * 1000;
}

static void lb_ctl_next(void)
{
	u64 k = (S.now - L.engage) / L.tick_ns + 1;

	ev_push(L.engage + k * L.tick_ns + lrnd() % LB_LATENCY_NS, EV_LCTL, 0,
		0);
}

static void lb_ctl_tick(void)
{
	struct vr_limit_sample s;
	u64 uj, cpu, thr;

	lb_read(&uj, &cpu, &thr);
	s.energy_uj = uj - L.c_uj;
	s.cpu_ns = cpu - L.c_cpu;
	s.throttled_ns = thr - L.c_thr;
	s.dt_ns = S.now - L.c_t;
	L.c_uj = uj;
	L.c_cpu = cpu;
	L.c_thr = thr;
	L.c_t = S.now;
	lb_write(vr_limit_tick(&L.ctl, &s));
	lb_ctl_next();
}

static u64 lb_static(u64 limit)
{
	return vr_limit_static_quota(L.uw_per_cpu, limit, L.period_ns,
				     LB_NVCPU + 1);
}

/*
 * The daemon watched VM 0 before its limit: the first quota comes from
 * its last 100 ms, before the first tick (vr_limit_prime()).
 */
static void lb_prime(void)
{
	const struct lsnap *a = &L.snap[snap_at(L.engage) - 1];
	const struct lsnap *b = &L.snap[snap_at(L.engage)];
	struct vr_limit_sample s = {
		.energy_uj = b->vr_uj - a->vr_uj,
		.cpu_ns = (b->cpu_ns - a->cpu_ns) / 1000 * 1000,
		.dt_ns = LB_SNAP_NS,
		.throttled_ns = 0,
	};

	lb_write(vr_limit_prime(&L.ctl, &s));
}

static void lb_engage(void)
{
	const struct lvariant *v = L.var;
	struct vm *vm = &S.vm[0];

	L.limit = L.limit1;
	if (!vm->bw)
		vm->bw = xcalloc(1, sizeof(*vm->bw));
	/* where the period timer starts against the daemon's ticks */
	vm->bw->phase_ns = v->phase ? lrnd() % L.period_ns : 0;
	if (L.mode == M_CTL) {
		if (vr_limit_init(&L.ctl, L.limit1, LB_WINDOW_NS, L.tick_ns,
				  L.period_ns, LB_NVCPU + 1)) {
			fprintf(stderr, "vrsim: vr_limit_init() refused "
				"%llu uW, tick %llu ns, period %llu ns\n",
				(unsigned long long)L.limit1,
				(unsigned long long)L.tick_ns,
				(unsigned long long)L.period_ns);
			exit(2);
		}
		L.ctl.alpha_shift = v->alpha;
		L.ctl.ki_shift = v->ki;
		L.ctl.keep_shift = v->keep;
		L.ctl.repay_shift = v->repay;
		L.ctl.deadband_shift = v->deadband;
		lb_read(&L.c_uj, &L.c_cpu, &L.c_thr);
		L.c_t = S.now;
		lb_prime();
		lb_ctl_next();
	} else if (L.mode == M_STATIC) {
		lb_write(lb_static(L.limit1));
	}
}

static void lb_step(void)
{
	struct vm *v = &S.vm[0];
	int i, p;

	if (L.step == ST_LIMIT) {
		L.limit = L.limit2;
		if (L.mode == M_CTL) {
			uint64_t q;

			vr_limit_set(&L.ctl, L.limit2, &q);
			lb_write(q);
		} else if (L.mode == M_STATIC) {
			lb_write(lb_static(L.limit2));
		}
		return;
	}
	/* the guest's code turns vector-heavy */
	sync_all();
	for (i = 0; i < v->nvcpu; i++)
		S.t[v->first_task + i].base_uw = W_VECTOR;
	for (p = 0; p < S.npkg; p++)
		pkg_retune(p);
}

/* From run(): the judge's snapshots and the operator's instants. */
void lb_start(void)
{
	L.quota = BW_NO_QUOTA;
	L.limit = 0;
	ev_push(0, EV_LSNAP, 0, 0);
	if (L.mode != M_NONE)
		ev_push(L.engage, EV_LSTEP, 0, 0);
	if (L.step == ST_LOAD || (L.step == ST_LIMIT && L.mode != M_NONE))
		ev_push(L.tstep, EV_LSTEP, 1, 0);
}

void lb_event(const struct ev *e)
{
	switch (e->type) {
	case EV_LSNAP:
		lb_snap(e->id);
		break;
	case EV_LCTL:
		lb_ctl_tick();
		break;
	case EV_LSTEP:
		if (e->id)
			lb_step();
		else
			lb_engage();
		break;
	}
}

/* From run(), before the VMs are freed: cpu.stat's counts. */
void lb_finish(void)
{
	const struct bw *b = S.vm[0].bw;

	L.writes = b ? b->writes : 0;
	L.nr_periods = b ? b->nr_periods : 0;
	L.nr_throttled = b ? b->nr_throttled : 0;
}

/* ----------------------------------------------------------- the judge */

static int snap_at(u64 t)
{
	return (int)(t / LB_SNAP_NS);
}

/* VM 0's mean power between instants @a and @b, W: vmrapl's, the truth. */
static double p_vr(u64 a, u64 b)
{
	return (double)(L.snap[snap_at(b)].vr_uj - L.snap[snap_at(a)].vr_uj) /
	       1e6 / ((double)(b - a) / SEC);
}

static double p_core(u64 a, u64 b)
{
	return (double)(L.snap[snap_at(b)].core_uj -
			L.snap[snap_at(a)].core_uj) / 1e6 /
	       ((double)(b - a) / SEC);
}

static double p_tr(u64 a, u64 b)
{
	return (L.snap[snap_at(b)].truth_j - L.snap[snap_at(a)].truth_j) /
	       ((double)(b - a) / SEC);
}

/*
 * What window @w from @base is judged against: the limit, or less where
 * VM 0 drew less than the limit over that window uncapped (@ref, the
 * uncapped run's windows from engage; NULL: none known).
 */
static double judged_w(const double *ref, u64 base, int w, double lim)
{
	int i = (int)((base - L.engage) / LB_WINDOW_NS) + w;

	if (!ref || i < 0 || i >= LB_MAXWIN || !(ref[i] > 0))
		return lim;
	return fmin(lim, ref[i]);
}

/*
 * The windows of the run from @base (engage, or the step): error and
 * worst window above over the judged ones (the error against what the VM
 * could draw, judged_w(); above: against the limit), the worst sliding
 * window over them, and settling.
 */
static void judge(u64 base, const double *ref, struct ljudge *j)
{
	u64 a = base + LB_ALLOW * LB_WINDOW_NS;
	u64 b = a + (u64)lb_windows * LB_WINDOW_NS, t;
	int w, nwin = (int)((L.end - base) / LB_WINDOW_NS), settled = nwin;

	j->err_vr = 0;
	j->err_tr = 0;
	j->err_trp = 0;
	j->over_vr = -INFINITY;
	j->over_tr = -INFINITY;
	j->over_trp = -INFINITY;
	j->slide_over = -INFINITY;
	for (w = 0; w < lb_windows; w++) {
		u64 t0 = a + (u64)w * LB_WINDOW_NS, t1 = t0 + LB_WINDOW_NS;
		double lim = (double)L.snap[snap_at(t1)].limit_uw / 1e6;
		double tgt = judged_w(ref, base, LB_ALLOW + w, lim);
		double ev = 100 * (p_vr(t0, t1) - tgt) / lim;
		double et = 100 * (p_tr(t0, t1) - lim) / lim;
		double ep = 100 * (p_tr(t0, t1) - lim * L.tr_scale) /
			    (lim * L.tr_scale);

		j->err_vr += fabs(ev) / lb_windows;
		j->err_tr += fabs(et) / lb_windows;
		j->err_trp += fabs(ep) / lb_windows;
		j->over_vr = fmax(j->over_vr, 100 * (p_vr(t0, t1) - lim) /
				  lim);
		j->over_tr = fmax(j->over_tr, et);
		j->over_trp = fmax(j->over_trp, ep);
	}
	for (t = a + LB_WINDOW_NS; t <= b; t += LB_SNAP_NS) {
		double lim = (double)L.snap[snap_at(t)].limit_uw / 1e6;

		j->slide_over = fmax(j->slide_over, 100 * (p_vr(t -
				     LB_WINDOW_NS, t) - lim) / lim);
	}
	/* settled: every window from there on within the band */
	for (w = nwin - 1; w >= 0; w--) {
		u64 t0 = base + (u64)w * LB_WINDOW_NS, t1 = t0 + LB_WINDOW_NS;
		double lim = (double)L.snap[snap_at(t1)].limit_uw / 1e6;

		if (fabs(100 * (p_vr(t0, t1) - judged_w(ref, base, w, lim)) /
			 lim) > LB_BAND)
			break;
		settled = w;
	}
	for (w = 0; w < LB_MAXWIN; w++) {
		u64 t0 = L.engage + (u64)w * LB_WINDOW_NS;

		j->win_w[w] = t0 + LB_WINDOW_NS <= L.end ?
			      p_vr(t0, t0 + LB_WINDOW_NS) : 0;
	}
	j->settle_s = settled < nwin ? (double)(settled + 1) *
		      LB_WINDOW_NS / SEC : INFINITY;
	j->p_vr_w = p_vr(a, b);
	j->p_tr_w = p_tr(a, b);
	j->p_core_w = p_core(a, b);
	t = L.engage - LB_HEAD_S * SEC;
	j->head_uw_per_cpu = (double)(L.snap[snap_at(L.engage)].vr_uj -
				      L.snap[snap_at(t)].vr_uj) * 1e9 /
			     (double)(L.snap[snap_at(L.engage)].cpu_ns -
				      L.snap[snap_at(t)].cpu_ns);
	j->nb_cpu_s = (double)(L.snap[snap_at(b)].nb_cpu_ns -
			       L.snap[snap_at(a)].nb_cpu_ns) / SEC;
	j->nb_tr_j = L.snap[snap_at(b)].nb_truth_j -
		     L.snap[snap_at(a)].nb_truth_j;
	j->writes_s = (double)L.writes / ((double)(L.end - L.engage) / SEC);
	j->thr_pct = L.nr_periods ? 100.0 * (double)L.nr_throttled /
				    (double)L.nr_periods : 0;
}

/* The CSV of one case: the snapshots of the controller's and the static
 * quota's runs.
 */
struct lseries {
	int n;
	struct lsnap *s[NMODE];
};

/*
 * One run: @mode on @load with @step, for @seed; judged from engage (or
 * the step).  @keep: the snapshots are handed back (for the CSV).
 */
static struct ljudge one(const struct lvariant *var, int load, int mode,
			 int step, u64 limit1, u64 limit2, u64 uw_per_cpu,
			 double tr_scale, const double *ref, u64 seed,
			 struct lsnap **keep)
{
	struct ljudge j;
	struct result r;
	u64 secs;

	memset(&L, 0, sizeof(L));
	L.var = var;
	L.tick_ns = var->tick_ns ? var->tick_ns : lb_tick_ns;
	L.period_ns = var->period_ns ? var->period_ns : lb_period_ns;
	L.load = load;
	L.mode = mode;
	L.step = step;
	L.limit1 = limit1;
	L.limit2 = limit2;
	L.uw_per_cpu = uw_per_cpu;
	L.tr_scale = tr_scale;
	L.engage = LB_ENGAGE_W * LB_WINDOW_NS;
	L.tstep = L.engage + LB_STEP_W * LB_WINDOW_NS;
	L.end = (step != ST_NONE ? L.tstep : L.engage) +
		(u64)(LB_ALLOW + lb_windows + 1) * LB_WINDOW_NS;
	L.rs = seed * 0x9e3779b97f4a7c15ULL + 0x243f6a8885a308d3ULL;
	if (!L.rs)
		L.rs = 1;
	L.nsnap = (int)(L.end / LB_SNAP_NS) + 1;
	L.snap = xcalloc((size_t)L.nsnap, sizeof(*L.snap));
	secs = (L.end + SEC - 1) / SEC;
	inject_fault_at = 0;
	if (mode == M_CTL && lb_inject) {
		inject_fault_at = lb_inject;
		lb_inject = 0;
	}
	sim_run(&limit_workload, secs, seed, &r);
	judge(step != ST_NONE ? L.tstep : L.engage, ref, &j);
	/* the uncapped load step: VM 0's power before the step */
	if (mode == M_NONE && step == ST_LOAD) {
		j.p_vr_w = p_vr(L.engage, L.tstep);
		j.p_tr_w = p_tr(L.engage, L.tstep);
		j.p_core_w = p_core(L.engage, L.tstep);
	}
	j.bad = r.conservation_bad || !(r.model_err < 1e-9);
	if (j.bad)
		fprintf(stderr, "limit-bench: %s %s %s seed %llu: %s\n",
			load_name[load], step_name[step],
			mode == M_CTL ? "controller" : mode == M_STATIC ?
			"static" : "uncapped", (unsigned long long)seed,
			r.conservation_bad ? "vmrapl conservation BROKEN" :
			"the truths do not add up");
	if (keep)
		*keep = L.snap;
	else
		free(L.snap);
	return j;
}

/* ---------------------------------------------------------- the bench */

/* mean, min, max over @n values (NAN and INFINITY kept as they come) */
struct agg {
	double mean, min, max;
};

static struct agg agg(const double *x, int n)
{
	struct agg a = { 0, INFINITY, -INFINITY };
	int i;

	for (i = 0; i < n; i++) {
		a.mean += x[i] / n;
		a.min = fmin(a.min, x[i]);
		a.max = fmax(a.max, x[i]);
	}
	return a;
}

static double stdev_pct(const double *x, int n)
{
	double m = 0, s = 0;
	int i;

	if (n < 2)
		return NAN;
	for (i = 0; i < n; i++)
		m += x[i] / n;
	for (i = 0; i < n; i++)
		s += (x[i] - m) * (x[i] - m);
	return 100 * sqrt(s / (n - 1)) / m;
}

static const char *fmt(double x)
{
	static char buf[16][32];
	static int slot;
	char *b = buf[slot++ % 16];

	if (isnan(x))
		snprintf(b, 32, "-");
	else if (isinf(x))
		snprintf(b, 32, "never");
	else if (fabs(x) >= 100)
		snprintf(b, 32, "%.0f", x);
	else
		snprintf(b, 32, "%.2f", x);
	return b;
}

/*
 * Settling over seeds: "mean (worst)" of the seeds that settled, and how
 * many did not; one seed: its figure.
 */
static const char *settlef(const double *x, int n)
{
	static char buf[4][64];
	static int slot;
	char *b = buf[slot++ % 4];
	double sum = 0, worst = 0;
	int i, m = 0;

	for (i = 0; i < n; i++) {
		if (isinf(x[i]))
			continue;
		sum += x[i];
		worst = fmax(worst, x[i]);
		m++;
	}
	if (n < 2)
		snprintf(b, 64, "%s", fmt(x[0]));
	else if (m == n)
		snprintf(b, 64, "%s (%s)", fmt(sum / m), fmt(worst));
	else if (m)
		snprintf(b, 64, "%s (%s), never: %d of %d", fmt(sum / m),
			 fmt(worst), n - m, n);
	else
		snprintf(b, 64, "never");
	return b;
}

/* "mean (min–max)", or "mean" for one seed. */
static const char *cellf(const double *x, int n)
{
	static char buf[8][64];
	static int slot;
	char *b = buf[slot++ % 8];
	struct agg a = agg(x, n);

	if (n < 2)
		snprintf(b, 64, "%s", fmt(a.mean));
	else
		snprintf(b, 64, "%s (%s–%s)", fmt(a.mean), fmt(a.min),
			 fmt(a.max));
	return b;
}

/* Every result of the bench. */
struct lbres {
	int nseed;
	struct ljudge *ref[NLOAD];		/* [seed] uncapped */
	struct ljudge *ref_load;		/* [seed] uncapped load step */
	struct ljudge *sw[NLOAD][LB_NLIM][NMODE];	/* [seed] */
	struct ljudge *st[NSTEP][NMODE];	/* [seed] */
	struct ljudge *vsw[NVAR][NLOAD][LB_NLIM];	/* controller */
	struct ljudge *vst[NVAR][NSTEP];
	int nvar;
	int runs, bad;
};

static struct ljudge *seeds(int n)
{
	return xcalloc((size_t)n, sizeof(struct ljudge));
}

#define PICK(arr, field, n, out) do {					\
	int _k;								\
	for (_k = 0; _k < (n); _k++)					\
		(out)[_k] = (arr)[_k].field;				\
} while (0)

/* The uncapped power a limit is a % of: as @v's instance shows it. */
static double ref_w(const struct lvariant *v, const struct ljudge *ref)
{
	return v->inst == V_CORE ? ref->p_core_w : ref->p_vr_w;
}

/* The uncapped run's truth over @v's view of VM 0. */
static double tr_scale(const struct lvariant *v, const struct ljudge *ref)
{
	return ref->p_tr_w / ref_w(v, ref);
}

/* Runs every case of variant @vi for @seed; the main cases if @vi is 0. */
static void bench_seed(struct lbres *R, int vi, int k, u64 seed,
		       struct lseries *ser)
{
	const struct lvariant *v = &lvariants[vi];
	struct ljudge *j;
	int ld, li, m;
	u64 lim, upc;

	for (ld = 0; ld < NLOAD; ld++) {
		upc = (u64)llround(R->ref[ld][k].head_uw_per_cpu);
		for (li = 0; li < LB_NLIM; li++) {
			lim = (u64)llround(ref_w(v, &R->ref[ld][k]) * 1e6 *
					   pct_of(li) / 100);
			for (m = M_CTL; m <= M_STATIC; m++) {
				if (vi && m != M_CTL)
					continue;
				j = vi ? &R->vsw[vi][ld][li][k] :
				    &R->sw[ld][li][m][k];
				*j = one(v, ld, m, ST_NONE, lim, 0, upc,
					 tr_scale(v, &R->ref[ld][k]),
					 v->inst == V_LEARN ?
					 R->ref[ld][k].win_w : NULL, seed,
					 NULL);
				R->runs++;
				R->bad |= j->bad;
			}
		}
	}
	/* the steps: on the steady load */
	upc = (u64)llround(R->ref[LD_STEADY][k].head_uw_per_cpu);
	for (m = M_CTL; m <= M_STATIC; m++) {
		struct lsnap **keep = ser ? &ser->s[m] : NULL;
		u64 p = (u64)llround(ref_w(v, &R->ref[LD_STEADY][k]) * 1e6);

		if (vi && m != M_CTL)
			continue;
		j = vi ? &R->vst[vi][ST_LIMIT][k] : &R->st[ST_LIMIT][m][k];
		*j = one(v, LD_STEADY, m, ST_LIMIT, p * LB_STEP_FROM / 100,
			 p * LB_STEP_TO / 100, upc,
			 tr_scale(v, &R->ref[LD_STEADY][k]), NULL, seed, keep);
		if (keep)
			ser->n = L.nsnap;
		R->runs++;
		R->bad |= j->bad;
		p = (u64)llround(ref_w(v, &R->ref_load[k]) * 1e6);
		j = vi ? &R->vst[vi][ST_LOAD][k] : &R->st[ST_LOAD][m][k];
		*j = one(v, LD_STEADY, m, ST_LOAD, p * LB_LOAD_PCT / 100, 0,
			 upc, tr_scale(v, &R->ref_load[k]), NULL, seed, NULL);
		R->runs++;
		R->bad |= j->bad;
	}
}

static void print_sweep(const struct lbres *R, int ld, const double *nbc,
			const double *nbe)
{
	int n = R->nseed, li, k, met = 0;
	double x[NSEED_FULL * 10], y[NSEED_FULL * 10];
	double sc = stdev_pct(nbc, n), se = stdev_pct(nbe, n);

	printf("\n### %s load: VM 0's power over each 1 s window against its "
	       "limit (vmrapl's view)\n\n", ld == LD_STEADY ? "Steady" :
	       "Phase");
	printf("| limit %% | limit W | controller: error %% | worst window "
	       "above %% | settled after s (worst) | met | static quota: "
	       "error %% | "
	       "worst window above %% | neighbour CPU Δ %% | neighbour "
	       "energy Δ %% |\n"
	       "|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|\n");
	for (li = 0; li < LB_NLIM; li++) {
		const struct ljudge *c = R->sw[ld][li][M_CTL];
		const struct ljudge *s = R->sw[ld][li][M_STATIC];
		double lw = 0, worst = -INFINITY, sworst = -INFINITY;
		double st[NSEED_FULL * 10];
		bool ok = true;
		char cb[64], eb[64];

		for (k = 0; k < n; k++) {
			lw += R->ref[ld][k].p_vr_w * pct_of(li) / 100 / n;
			worst = fmax(worst, c[k].over_vr);
			sworst = fmax(sworst, s[k].over_vr);
			st[k] = c[k].settle_s;
			if (!(c[k].err_vr <= LB_BAND &&
			      c[k].over_vr <= LB_BAND))
				ok = false;
			x[k] = 100 * (c[k].nb_cpu_s - R->ref[ld][k].nb_cpu_s) /
			       R->ref[ld][k].nb_cpu_s;
			y[k] = 100 * (c[k].nb_tr_j - R->ref[ld][k].nb_tr_j) /
			       R->ref[ld][k].nb_tr_j;
		}
		met += ok;
		snprintf(cb, sizeof(cb), "%s", cellf(x, n));
		snprintf(eb, sizeof(eb), "%s", cellf(y, n));
		printf("| %.0f | %.1f | ", pct_of(li), lw);
		PICK(c, err_vr, n, x);
		printf("%s | %s | %s | %s | ", cellf(x, n), fmt(worst),
		       settlef(st, n), ok ? "yes" : "**no**");
		PICK(s, err_vr, n, x);
		printf("%s | %s | %s | %s |\n", cellf(x, n), fmt(sworst), cb,
		       eb);
	}
	printf("\nControlled: within %.0f %% of the limit on average and "
	       "never more than %.0f %% above it over the judged windows, on "
	       "every seed, at %d of %d limits.  A window in which VM 0 drew "
	       "less than the limit without one (same seed: the phase load's "
	       "light windows) is judged against what it drew; above is "
	       "against the limit.  Settled: the end of the first window after "
	       "the limit is set from which every window of the run is within "
	       "%.0f %% of what it is judged against.  Neighbour: VM 1's CPU "
	       "time and occupied-truth energy over the judged windows against "
	       "the uncapped run of the same seed (controller runs); the "
	       "run-to-run spread of the uncapped runs over the seeds "
	       "(standard deviation): CPU time %s %%, energy %s %%.\n",
	       LB_BAND, LB_BAND, met, LB_NLIM, LB_BAND, fmt(sc), fmt(se));
}

static void print_truth(const struct lbres *R)
{
	int n = R->nseed, ld, li, k;
	double x[NSEED_FULL * 10];

	printf("\n### The same windows under the occupied truth\n\n");
	printf("VM 0's occupied truth (model.c: its cores' power, its share "
	       "of the uncore, the floor per occupied CPU), never shown to the "
	       "controller, against the same limit in watts (what a meter "
	       "under the occupied split would show against the operator's "
	       "figure), and against the same %% of VM 0's uncapped power "
	       "under that truth (the limit as a share).  The first carries "
	       "vmrapl's error on VM 0 at the throttled operating point, the "
	       "second how that error moves between the uncapped and the "
	       "throttled VM; the last column is vmrapl's view over the truth "
	       "in the uncapped run.\n\n");
	printf("| load | limit %% | controller, against the watts: error "
	       "%% | worst window above %% | against the share: error %% | "
	       "worst window above %% | static quota, against the watts: "
	       "error %% | worst window above %% | uncapped: vmrapl / truth "
	       "|\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	for (ld = 0; ld < NLOAD; ld++)
		for (li = 0; li < LB_NLIM; li++) {
			const struct ljudge *c = R->sw[ld][li][M_CTL];
			const struct ljudge *s = R->sw[ld][li][M_STATIC];
			double w = -INFINITY, wp = -INFINITY, sw = -INFINITY;
			char cb[64];

			for (k = 0; k < n; k++) {
				w = fmax(w, c[k].over_tr);
				wp = fmax(wp, c[k].over_trp);
				sw = fmax(sw, s[k].over_tr);
				x[k] = R->ref[ld][k].p_vr_w /
				       R->ref[ld][k].p_tr_w;
			}
			snprintf(cb, sizeof(cb), "%s", cellf(x, n));
			printf("| %s | %.0f | ", li ? "" : load_name[ld],
			       pct_of(li));
			PICK(c, err_tr, n, x);
			printf("%s | %s | ", cellf(x, n), fmt(w));
			PICK(c, err_trp, n, x);
			printf("%s | %s | ", cellf(x, n), fmt(wp));
			PICK(s, err_tr, n, x);
			printf("%s | %s | %s |\n", cellf(x, n), fmt(sw), cb);
		}
}

static void print_steps(const struct lbres *R)
{
	int n = R->nseed, st, k;
	double x[NSEED_FULL * 10];

	printf("\n### Steps\n\n");
	printf("The limit (80 %% -> 40 %% of the uncapped power) or the "
	       "guest's code (8 -> 14 W per core at a limit of 50 %% of the "
	       "scalar power) changes %d windows after engage, at a window's "
	       "edge; settled: the end of the first window after the step "
	       "from which every window is within %.0f %% of the limit; then "
	       "%d windows judged after %d allowed to settle.  Steady "
	       "load.\n\n",
	       LB_STEP_W, LB_BAND, lb_windows, LB_ALLOW);
	printf("| step | controller: settled after s | error after %% | "
	       "worst window above %% | truth: error after %% | static quota: "
	       "settled after s | error after %% | worst window above %% | "
	       "truth: error after %% |\n"
	       "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	for (st = ST_LIMIT; st < NSTEP; st++) {
		const struct ljudge *c = R->st[st][M_CTL];
		const struct ljudge *s = R->st[st][M_STATIC];
		double w = -INFINITY, sw = -INFINITY;

		for (k = 0; k < n; k++) {
			w = fmax(w, c[k].over_vr);
			sw = fmax(sw, s[k].over_vr);
		}
		printf("| %s | ", step_name[st]);
		PICK(c, settle_s, n, x);
		printf("%s | ", settlef(x, n));
		PICK(c, err_vr, n, x);
		printf("%s | %s | ", cellf(x, n), fmt(w));
		PICK(c, err_tr, n, x);
		printf("%s | ", cellf(x, n));
		PICK(s, settle_s, n, x);
		printf("%s | ", settlef(x, n));
		PICK(s, err_vr, n, x);
		printf("%s | %s | ", cellf(x, n), fmt(sw));
		PICK(s, err_tr, n, x);
		printf("%s |\n", cellf(x, n));
	}
}

static void print_variants(const struct lbres *R)
{
	int n = R->nseed, vi, li, k, ld;

	printf("\n### The controller's variants\n\n");
	printf("Both loads, every limit (20-90 %%) and seed, and the two steps "
	       "(steady load); the first row is the controller of the tables "
	       "above.  Error: the mean over limits and seeds, and the worst "
	       "seed x limit; worst sliding window: the worst 1 s window "
	       "ending at any 100 ms snapshot of the judged stretch (both "
	       "loads); met: "
	       "limits where every seed met the target, of both loads; truth: "
	       "the occupied truth against the limit in watts, steady load; "
	       "writes: cpu.max writes per second (each refills the group's "
	       "runtime and forgives its overruns), steady load.\n\n");
	printf("| variant | tick ms | period ms | steady: error %% mean "
	       "(worst) | worst window above %% | phase: error %% mean (worst) "
	       "| worst window above %% | worst sliding window above %% | "
	       "met | settled after s: limit step (worst) | load step (worst) "
	       "| truth: error %% mean, worst window above %% | load step, "
	       "truth: error %% | writes /s |\n"
	       "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	       "---:|---:|\n");
	for (vi = 0; vi < R->nvar; vi++) {
		const struct lvariant *v = &lvariants[vi];
		double em[NLOAD] = { 0 }, ew[NLOAD] = { 0 };
		double ov[NLOAD] = { -INFINITY, -INFINITY };
		double sl = -INFINITY, wr = 0, tm = 0, tw = -INFINITY;
		double s1[NSEED_FULL * 10], s2[NSEED_FULL * 10];
		double lt[NSEED_FULL * 10];
		int met = 0;

		for (ld = 0; ld < NLOAD; ld++)
			for (li = 0; li < LB_NLIM; li++) {
				const struct ljudge *c = vi ?
					R->vsw[vi][ld][li] :
					R->sw[ld][li][M_CTL];
				bool ok = true;

				for (k = 0; k < n; k++) {
					em[ld] += c[k].err_vr / (n * LB_NLIM);
					ew[ld] = fmax(ew[ld], c[k].err_vr);
					ov[ld] = fmax(ov[ld], c[k].over_vr);
					sl = fmax(sl, c[k].slide_over);
					if (!(c[k].err_vr <= LB_BAND &&
					      c[k].over_vr <= LB_BAND))
						ok = false;
					if (ld != LD_STEADY)
						continue;
					wr += c[k].writes_s / (n * LB_NLIM);
					tm += c[k].err_tr / (n * LB_NLIM);
					tw = fmax(tw, c[k].over_tr);
				}
				met += ok;
			}
		for (k = 0; k < n; k++) {
			s1[k] = vi ? R->vst[vi][ST_LIMIT][k].settle_s :
				R->st[ST_LIMIT][M_CTL][k].settle_s;
			s2[k] = vi ? R->vst[vi][ST_LOAD][k].settle_s :
				R->st[ST_LOAD][M_CTL][k].settle_s;
			lt[k] = vi ? R->vst[vi][ST_LOAD][k].err_tr :
				R->st[ST_LOAD][M_CTL][k].err_tr;
		}
		printf("| %s | %llu | %llu | %s (%s) | %s | %s (%s) | %s | "
		       "%s | %d/%d | %s | %s | %s, %s | %s | %.2f |\n",
		       v->name,
		       (unsigned long long)(v->tick_ns ? v->tick_ns :
					    lb_tick_ns) / MS,
		       (unsigned long long)(v->period_ns ? v->period_ns :
					    lb_period_ns) / MS,
		       fmt(em[0]), fmt(ew[0]), fmt(ov[0]), fmt(em[1]),
		       fmt(ew[1]), fmt(ov[1]), fmt(sl), met, NLOAD * LB_NLIM,
		       settlef(s1, n), settlef(s2, n), fmt(tm), fmt(tw),
		       fmt(agg(lt, n).mean), wr);
	}
}

static void write_series(const char *path, const struct lseries *ser,
			 const struct lbres *R)
{
	FILE *f = fopen(path, "w");
	int k, m;

	(void)R;
	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		exit(2);
	}
	fprintf(f, "t_s,limit_w");
	for (m = M_CTL; m <= M_STATIC; m++) {
		const char *p = m == M_CTL ? "ctl" : "static";

		fprintf(f, ",%s_vr_w,%s_truth_w,%s_vr_window_w,%s_cpus,"
			"%s_quota_ms", p, p, p, p, p);
	}
	fprintf(f, ",ctl_k_w_per_cpu,ctl_plan_w\n");
	for (k = 1; k < ser->n; k++) {
		const struct lsnap *c = &ser->s[M_CTL][k];

		fprintf(f, "%.1f,%.3f", (double)k * LB_SNAP_NS / SEC,
			(double)c->limit_uw / 1e6);
		for (m = M_CTL; m <= M_STATIC; m++) {
			const struct lsnap *s = ser->s[m];
			int w = k >= 10 ? k - 10 : 0;
			double dt = (double)LB_SNAP_NS / SEC;

			fprintf(f, ",%.3f,%.3f,%.3f,%.3f,",
				(double)(s[k].vr_uj - s[k - 1].vr_uj) / 1e6 /
				dt, (s[k].truth_j - s[k - 1].truth_j) / dt,
				(double)(s[k].vr_uj - s[w].vr_uj) / 1e6 /
				((double)(k - w) * dt),
				(double)(s[k].cpu_ns - s[k - 1].cpu_ns) /
				LB_SNAP_NS);
			if (s[k].quota != BW_NO_QUOTA)
				fprintf(f, "%.3f", (double)s[k].quota / MS);
		}
		fprintf(f, ",%.3f,%.3f\n", (double)c->k_uw / 1e6,
			(double)c->plan_uj / 1e6 /
			((double)(lvariants[0].tick_ns ? lvariants[0].tick_ns :
				  lb_tick_ns) / SEC));
	}
	fclose(f);
}

static void json_arr(FILE *f, const char *key, const struct ljudge *j,
		     int n, size_t off)
{
	int k;

	fprintf(f, "\"%s\": [", key);
	for (k = 0; k < n; k++) {
		double x = *(const double *)((const char *)&j[k] + off);

		if (isfinite(x))
			fprintf(f, "%s%.4g", k ? ", " : "", x);
		else
			fprintf(f, "%snull", k ? ", " : "");
	}
	fprintf(f, "]");
}

static void json_case(FILE *f, const struct ljudge *j, int n)
{
	fprintf(f, "{");
	json_arr(f, "error_pct", j, n, offsetof(struct ljudge, err_vr));
	fprintf(f, ", ");
	json_arr(f, "worst_above_pct", j, n, offsetof(struct ljudge,
						      over_vr));
	fprintf(f, ", ");
	json_arr(f, "truth_error_pct", j, n, offsetof(struct ljudge, err_tr));
	fprintf(f, ", ");
	json_arr(f, "truth_worst_above_pct", j, n,
		 offsetof(struct ljudge, over_tr));
	fprintf(f, ", ");
	json_arr(f, "settled_s", j, n, offsetof(struct ljudge, settle_s));
	fprintf(f, ", ");
	json_arr(f, "neighbour_cpu_s", j, n, offsetof(struct ljudge,
						      nb_cpu_s));
	fprintf(f, ", ");
	json_arr(f, "neighbour_truth_j", j, n, offsetof(struct ljudge,
							nb_tr_j));
	fprintf(f, "}");
}

/* An uncapped run: VM 0's power, its watts per CPU, the neighbour. */
static void json_ref(FILE *f, const struct ljudge *j, int n)
{
	fprintf(f, "{");
	json_arr(f, "power_w", j, n, offsetof(struct ljudge, p_vr_w));
	fprintf(f, ", ");
	json_arr(f, "truth_power_w", j, n, offsetof(struct ljudge, p_tr_w));
	fprintf(f, ", ");
	json_arr(f, "percore_power_w", j, n, offsetof(struct ljudge,
						     p_core_w));
	fprintf(f, ", ");
	json_arr(f, "uw_per_cpu_before_limit", j, n,
		 offsetof(struct ljudge, head_uw_per_cpu));
	fprintf(f, ", ");
	json_arr(f, "neighbour_cpu_s", j, n, offsetof(struct ljudge,
						      nb_cpu_s));
	fprintf(f, ", ");
	json_arr(f, "neighbour_truth_j", j, n, offsetof(struct ljudge,
							nb_tr_j));
	fprintf(f, "}");
}

static int write_ljson(const char *path, const struct lbres *R)
{
	FILE *f = fopen(path, "w");
	int n = R->nseed, ld, li, m, st;

	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(f, "{\n  \"seeds\": %d, \"tick_ms\": %llu, \"period_ms\": "
		"%llu, \"window_ms\": %llu, \"judged_windows\": %d,\n"
		"  \"conservation_exact\": %s,\n  \"sweep\": {", n,
		(unsigned long long)lb_tick_ns / MS,
		(unsigned long long)lb_period_ns / MS,
		(unsigned long long)LB_WINDOW_NS / MS, lb_windows,
		R->bad ? "false" : "true");
	for (ld = 0; ld < NLOAD; ld++) {
		fprintf(f, "%s\n    \"%s\": {\"uncapped\": ", ld ? "," : "",
			load_name[ld]);
		json_ref(f, R->ref[ld], n);
		for (li = 0; li < LB_NLIM; li++)
			for (m = M_CTL; m <= M_STATIC; m++) {
				fprintf(f, ",\n      \"%s_%.0f\": ",
					m == M_CTL ? "controller" : "static",
					pct_of(li));
				json_case(f, R->sw[ld][li][m], n);
			}
		fprintf(f, "}");
	}
	fprintf(f, "},\n  \"steps\": {\n    \"uncapped_load\": ");
	json_ref(f, R->ref_load, n);
	for (st = ST_LIMIT; st < NSTEP; st++)
		for (m = M_CTL; m <= M_STATIC; m++) {
			fprintf(f, ",\n    \"%s_%s\": ",
				st == ST_LIMIT ? "limit" : "load",
				m == M_CTL ? "controller" : "static");
			json_case(f, R->st[st][m], n);
		}
	fprintf(f, "}\n}\n");
	return fclose(f);
}

/* --limit-bench: every case, every seed; the tables to stdout. */
int lb_main(int nseed, u64 seed0, const char *json)
{
	struct lbres R = { .nseed = nseed };
	struct lseries ser = { 0 };
	double nbc[NLOAD][NSEED_FULL * 10], nbe[NLOAD][NSEED_FULL * 10];
	clock_t c0 = clock();
	int ld, li, m, st, vi, k;

	if (nseed > NSEED_FULL * 10) {
		fprintf(stderr, "vrsim: --limit-bench runs at most %d seeds\n",
			NSEED_FULL * 10);
		return 2;
	}
	R.nvar = quick ? 1 : NVAR;
	lb_inject = inject_fault_at;
	for (ld = 0; ld < NLOAD; ld++) {
		R.ref[ld] = seeds(nseed);
		for (li = 0; li < LB_NLIM; li++)
			for (m = 0; m < NMODE; m++)
				R.sw[ld][li][m] = seeds(nseed);
	}
	R.ref_load = seeds(nseed);
	for (st = 0; st < NSTEP; st++)
		for (m = 0; m < NMODE; m++)
			R.st[st][m] = seeds(nseed);
	for (vi = 0; vi < NVAR; vi++) {
		for (ld = 0; ld < NLOAD; ld++)
			for (li = 0; li < LB_NLIM; li++)
				R.vsw[vi][ld][li] = seeds(nseed);
		for (st = 0; st < NSTEP; st++)
			R.vst[vi][st] = seeds(nseed);
	}
	for (k = 0; k < nseed; k++) {
		u64 seed = seed0 + (u64)k;

		for (ld = 0; ld < NLOAD; ld++) {
			R.ref[ld][k] = one(&lvariants[0], ld, M_NONE, ST_NONE,
					   0, 0, 0, 1, NULL, seed, NULL);
			R.runs++;
			R.bad |= R.ref[ld][k].bad;
			nbc[ld][k] = R.ref[ld][k].nb_cpu_s;
			nbe[ld][k] = R.ref[ld][k].nb_tr_j;
		}
		R.ref_load[k] = one(&lvariants[0], LD_STEADY, M_NONE, ST_LOAD,
				    0, 0, 0, 1, NULL, seed, NULL);
		R.runs++;
		R.bad |= R.ref_load[k].bad;
		for (vi = 0; vi < R.nvar; vi++)
			bench_seed(&R, vi, k, seed,
				   !vi && !k && lb_series ? &ser : NULL);
	}

	printf("## Per-VM power limits (vrsim --limit-bench)\n\n");
	printf("One package of 16 CPUs (30 W floor +- %g %%, 15 W uncore, "
	       "3.4 GHz with one core busy, 2.4 GHz with all).  VM 0 (capped): "
	       "4 vCPUs at 8 W per core, steady (always busy) or phase (300 ms "
	       "busy, 300 ms at 2 ms per 20 ms), and an I/O thread (~0.1 "
	       "CPU); VM 1 (neighbour, uncapped): 4 vCPUs, 5 ms on / 5 ms off; "
	       "2 host tasks.  The limit: a %% of VM 0's uncapped power as "
	       "vmrapl's default instance shows it over the same windows of "
	       "the same seed, set %d s into the run.  The controller "
	       "(userspace/common/limit.c) reads that instance's energy of "
	       "VM 0 every %llu ms (after 0-1 ms of daemon latency) and "
	       "writes cpu.max (period %llu ms) when its quota changes; the "
	       "kernel's enforcement: bench/sim/bandwidth.c.  The static "
	       "quota: limit / (VM 0's W per CPU over the uncapped run's "
	       "first %d s), written once.  Windows of %llu ms from the "
	       "limit's instant; %d judged after %d allowed to settle.  %d "
	       "seed%s (%llu..%llu); %d runs, %.1f s.\n",
	       floor_spread, LB_ENGAGE_W, (unsigned long long)lb_tick_ns / MS,
	       (unsigned long long)lb_period_ns / MS, LB_HEAD_S,
	       (unsigned long long)LB_WINDOW_NS / MS, lb_windows, LB_ALLOW,
	       nseed, nseed > 1 ? "s" : "", (unsigned long long)seed0,
	       (unsigned long long)(seed0 + nseed - 1), R.runs,
	       (double)(clock() - c0) / CLOCKS_PER_SEC);
	for (ld = 0; ld < NLOAD; ld++)
		print_sweep(&R, ld, nbc[ld], nbe[ld]);
	print_truth(&R);
	print_steps(&R);
	if (R.nvar > 1)
		print_variants(&R);
	printf("\nvmrapl's conservation (tracked + host + idle + lost == "
	       "sampled, after every close) and the model's truths: %s in all "
	       "%d runs.\n", R.bad ? "**BROKEN**" : "exact", R.runs);
	if (lb_series && ser.n) {
		write_series(lb_series, &ser, &R);
		for (m = 0; m < NMODE; m++)
			free(ser.s[m]);
	}
	if (json && write_ljson(json, &R))
		return 2;
	return R.bad ? 1 : 0;
}
