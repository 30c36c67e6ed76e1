// SPDX-License-Identifier: GPL-2.0
/*
 * Property tests of the accounting core under random schedules.
 *
 * A simulated host of 2 packages x 8 CPUs runs VMs (several vCPUs each,
 * migrating between CPUs and packages), untracked host tasks and idle,
 * with a simulated RAPL counter per package and domain (ESU quantization,
 * ~1 ms jittered hardware updates, 32- or 64-bit wrap).  The core is
 * driven exactly like the kernel glue drives it: an event per switch,
 * epochs closed lazily by vr_pkg_try_close(), hotplug with offline /
 * online + re-baseline.  Injected: CPU hotplug (down to the last CPU of a
 * package), counter resets (backward jumps), and gaps long enough for the
 * counter to wrap more than once.
 *
 * Checked after every close, exactly (no tolerance unless stated):
 *  - conservation: tracked + host + idle + lost == sampled per domain, and
 *    the package's accounts add up to tracked;
 *  - monotonicity of every account's energy and ns and of every total;
 *  - busy ns of the epoch and each account's ns == the simulated truth;
 *  - the sampled delta == the counter's true delta (floor or ceil of the
 *    unit conversion), or the epoch is lost;
 *  - wraps counted when the register wrapped; a backward jump counted in
 *    resets and lost; a gap over the wrap range counted in overruns and
 *    lost, never attributed;
 *  - lost epochs: re-baselines, resets, overruns, an unreadable PKG and
 *    the first PKG sample after one (a baseline: unknown interval) split
 *    nothing, owe no static debt and learn nothing;
 *  - the split: static / dynamic by the documented rule (P_static x dt
 *    plus the carried debt), the busy part by the policy (occupied: each
 *    busy CPU-ns carries P_static / online CPUs; busy: all of it but the
 *    part of the epoch's all-idle time, the intersection of each online
 *    CPU's last known idle stretch with the epoch), other domains following
 *    PKG; each account's share and the host bucket by cumulative rounding,
 *    the static part (P_static's share of the busy part) and the dynamic
 *    part each rounded on its own;
 *  - static / dynamic per account: each account's static part is the
 *    floor or ceiling of its share of the static part, never more than
 *    its energy; the accounts' static parts add up to tracked_static, the
 *    rest of the static busy part is host_static, exactly, and
 *    tracked_static + host_static <= static (PKG);
 *  - P_static, when learned: only from idle, non-lost epochs, each
 *    stretch of them less its first 2 ms (the counter's lag after busy
 *    time), summed until 100 ms (energy / time), each moving it by
 *    (uw - P_static) x t / T, for t ns of idle time in the sum and T the
 *    time summed so far, at most 1.6 s (the first: taken); a busy or lost
 *    epoch starts a new stretch, the sums go on;
 *  - the lag share (default-lag mode): the last busy epoch's unseen
 *    busy ns U (its tail measure T / (4 lag_ns), floored, at most half
 *    its busy ns B; an idle epoch since, with the list kept, lowers it to
 *    its own tail measure's) at the dynamic power of what its delta
 *    showed (its dynamic energy over the unseen ns carried into it, if
 *    it had a list, plus B - U), at most the busy epoch's dynamic
 *    energy, goes to the accounts of the previous busy epoch, weighted
 *    by their busy ns in it; all of an idle epoch's dynamic energy goes
 *    there while that list is kept (idle closes within 2 ms of the busy
 *    close that made it); the test keeps its own copy of that list and
 *    compares it with the core's after every close.
 *
 * Packages go quiet now and then (every CPU idle for 1-6 ms or 150-500
 * ms), for idle tails and learning runs.  Two modes: lag_ns = 0 (the
 * test and estimate sources), and the default lag of vr_pkg_init()
 * (hardware counters).  In each, 32 runs, one per ESU 0..31 of package 0
 * (package 1 random), random policy and static origin each, then one
 * long run; well over 10^6 events per mode.
 */
#include "vr_test.h"

#define NPKG		2
#define NCPU		8		/* per package */
#define MAXVM		6
#define MAXVCPU		4
#define MAXTASK		(MAXVM * MAXVCPU + 8)
#define MAX_POWER_UW	400000000ULL	/* > 2.1 x the highest true power */
#define GAP_MAX_NS	(3000 * VT_SEC)

enum {
	E_CONS, E_ACCT_SUM, E_MONO, E_BUSY_NS, E_ACCT_NS, E_DELTA, E_WRAPS,
	E_RESET, E_OVERRUN, E_LOST, E_STATIC, E_TO_BUSY, E_DOMS, E_SHARE,
	E_HOST, E_LEARN, E_LAG, E_NEEDED, E_SPLIT, E_NR
};

static const char *const e_name[E_NR] = {
	[E_CONS] = "conservation: tracked + host + idle + lost == sampled",
	[E_ACCT_SUM] = "sum of account energies == tracked",
	[E_MONO] = "accounts and totals never decrease",
	[E_BUSY_NS] = "busy ns of each epoch == simulated busy time",
	[E_ACCT_NS] = "each account's ns == its simulated run time",
	[E_DELTA] = "sampled delta == true counter delta (or lost)",
	[E_WRAPS] = "wraps counted exactly when the register wrapped",
	[E_RESET] = "backward jump: counted in resets and lost, not a wrap",
	[E_OVERRUN] = "multi-wrap gap: counted in overruns and lost",
	[E_LOST] = "lost epochs (baselines too) attribute nothing; clean "
		   "ones lose nothing",
	[E_STATIC] = "static / dynamic split: P_static x dt + carried debt; "
		     "none in lost epochs",
	[E_TO_BUSY] = "to_busy by the static policy, plus the lag share",
	[E_DOMS] = "other domains follow the PKG split",
	[E_SHARE] = "each share == cur x r / B + lag x r' / B' (floor or "
		    "ceil of each)",
	[E_HOST] = "host bucket == what the rounded shares left, exactly",
	[E_LEARN] = "learned P_static: idle stretches, provisional from 5 ms, then a running mean of 100 ms sums",
	[E_LAG] = "lag list (accounts, their ns, busy ns, time) == the model",
	[E_NEEDED] = "event_needed() false only when nothing changes; "
		     "the gate sums up busy, cur and core_due",
	[E_SPLIT] = "static + dynamic per account == its energy; static "
		    "parts add up to tracked_static, the rest host_static",
};

struct task {
	bool vcpu;
	int cpu;			/* global CPU it runs on, -1 */
	u64 dyn_uw, core_uw, dram_uw;
	struct vr_acct acct[NPKG];
	u64 truth_ns[NPKG];		/* in the open epoch */
	u64 prev_e[NPKG][VR_NDOM], prev_ns[NPKG];
	u64 prev_s[NPKG][VR_NDOM];	/* static part of prev_e */
	u64 lag_ns[NPKG];		/* model: on the lag list with these ns */
};

struct scpu {
	int pkg;
	int task;			/* -1 idle */
	bool online;
	u64 last;			/* truth folded up to here */
	u64 turn;			/* its last idle <-> busy change, online */
	u64 run;			/* the run before @turn, 0 after online */
	u64 next;			/* next event (or online time) */
};

struct spkg {
	struct vr_pkg p;
	struct vr_cpu cpu[NCPU];
	struct vr_cpu *cpus[NCPU];
	struct vrm_rapl ctr[VR_NDOM];
	u32 doms;
	u64 static_uw, core_static_uw, dram_static_uw;
	u64 truth_busy;			/* in the open epoch */
	u64 srem;			/* shadow of the static split */
	/* model of P_static and of its learning */
	bool learn;
	u8 m_origin;
	bool m_known;
	u64 m_mem_ns;		/* the idle time m_static is the mean of */
	u64 m_static, m_run_eu, m_run_ns, m_skip_ns, m_busy_uw;
	u64 m_busy_ns, m_busy_dt, m_tail;	/* the last busy epoch's */
	bool m_lead0;				/* its lead taken at 0 W */
	/* model of the lag list (accounts in task.lag_ns) */
	u64 lag, m_prev_busy, m_prev_t;
	/* the last busy epoch split's: dynamic energy, ns shown, unseen */
	u64 m_prev_dyn, m_prev_seen, m_prev_tail;
	/* the core's settle before the close, and the model's stretch */
	u64 s_c, s_tmin, m_set_start, m_set_end, m_set_given;
	u64 quiet_until;		/* every CPU idles until then */
	unsigned int online;
	bool rebase_pending;
	bool base_next[VR_NDOM];	/* next valid read is a baseline */
	vt_s128 last_units[VR_NDOM];
	u64 last_raw[VR_NDOM];
	int reset_dom;			/* injected reset pending, -1 */
	u64 reset_bound;		/* assert it only if dt <= this */
	bool gap_pending;
	struct vr_pkg_stats prev[VR_NDOM];
	u64 prev_wraps, prev_resets, prev_overruns;
	u64 closes;
};

struct sim {
	struct spkg pk[NPKG];
	struct scpu cpu[NPKG * NCPU];
	struct task t[MAXTASK];
	int ntask;
	u8 policy;
	bool lag_mode;			/* default lag_ns, else 0 */
	u64 now;
	u64 events, closes, lost_epochs, resets, overruns, wraps, hotplugs;
	u64 gaps, unread, quiets, learns, lag_busy, lag_tail, lag_kept;
	u64 lag_merged;
	u64 settles;
	u64 err[E_NR];
	char first[E_NR][200];
};

static struct sim S;

static void fail(int kind, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void fail(int kind, const char *fmt, ...)
{
	va_list ap;

	if (!S.err[kind]++) {
		va_start(ap, fmt);
		vsnprintf(S.first[kind], sizeof(S.first[kind]), fmt, ap);
		va_end(ap);
	}
}

static u64 range_units_j(const struct vrm_rapl *r)
{
	/* the register's range, in joules (may be huge) */
	return r->width >= 64 ? ~0ULL : (u64)(((vt_u128)1 << r->width) >>
					      r->esu);
}

static void pkg_power(struct spkg *pk, int pi)
{
	u64 p = pk->static_uw, c = pk->core_static_uw, d = pk->dram_static_uw;
	int i;

	for (i = 0; i < NCPU; i++) {
		struct scpu *sc = &S.cpu[pi * NCPU + i];

		if (sc->online && sc->task >= 0) {
			p += S.t[sc->task].dyn_uw;
			c += S.t[sc->task].core_uw;
			d += S.t[sc->task].dram_uw;
		}
	}
	vrm_set_power(&pk->ctr[0], S.now, p);
	vrm_set_power(&pk->ctr[1], S.now, c);
	vrm_set_power(&pk->ctr[2], S.now, d);
}

/* Fold the truth of CPU @g up to now. */
static void truth_fold(int g)
{
	struct scpu *sc = &S.cpu[g];
	u64 d = S.now - sc->last;

	sc->last = S.now;
	if (!sc->online || sc->task < 0)
		return;
	S.pk[sc->pkg].truth_busy += d;
	if (S.t[sc->task].vcpu)
		S.t[sc->task].truth_ns[sc->pkg] += d;
}

static u64 mul_div_floor(u64 a, u64 b, u64 c)
{
	return (u64)((vt_u128)a * b / c);
}

/*
 * floor(A x r / T); its ceiling is added to *hi.  The core's cumulative
 * rounding gives an account of r ns the floor or the ceiling of that.
 */
static u64 share_floor(u64 A, u64 r, u64 T, u64 *hi)
{
	vt_u128 x = (vt_u128)A * r;
	u64 q;

	if (!T)
		return 0;
	q = (u64)(x / T);
	*hi += q + (x % T != 0);
	return q;
}

/*
 * The learning rule of P_static, after the split of each close: idle
 * (B == 0), non-lost epochs, but not the first 2 ms of epochs of a
 * stretch of them (a busy or a lost epoch ends a stretch), unless the
 * stretch's first epoch is 2 ms or longer: that one counts whole, less
 * the busy tail.  P' is the last non-lost busy epoch's power (de - lag x
 * the power before it) / (dt - lag), taken when dt > lag and de > 0 (the
 * power before it: the estimate after idle epochs, else the last busy
 * power), with B its busy ns and dt its length; T is the tail measure
 * of the last non-lost busy epoch's close, measured or not
 * (read_pkg(): for each CPU, with win = 2 lag, e = win and d its run so
 * far if busy at the close, e = its change to idle - (close - win) and d
 * its run before that if the change came after close - win, else
 * nothing; e^2 if d >= e, else d (2 e - d)).  k = floor(floor(T / (4
 * lag)) x dt / B), at most dt / 2, and the tail is (P' - the estimate so
 * far) x f in eu, f = floor((dt - lag) x k / (dt - k)), floored (none
 * if P' is not above the estimate; with no estimate yet, the epoch's own
 * power, floor(de x (1e15 >> 24) / dt), stands for it, and f becomes
 * floor(f x dt' / (dt' - min(h, floor(dt' / 2)))), dt' the idle epoch's
 * length, h = f: the tail solved for the estimate it leaves; where P'
 * had its lead at 0 W (the power before it: 0), P' is less floor(the
 * own power x lag / (dt - lag)) and h = floor(f x dt / (dt - lag))).
 * Their energy and time are summed; while nothing is known, their
 * energy / time is P_static
 * from 5 ms on (provisional); at 100 ms or more it is taken if nothing
 * was known, else P_static moves by floor(difference x t / T), up or
 * down, for t ns in the sum and T the ns summed so far with it, at most
 * 1.6 s (a value handed in counts as 1.6 s; t at most T).
 * (1e15 >> 24 truncated, like the core: a 1.3e-8 relative bias,
 * harmless.)
 */
static void learn_model(struct spkg *pk, bool lost, u64 B, u64 de, u64 dt,
			u64 T)
{
	u64 uw, est, before, lead, tail, k, f, h, buw, bdt;
	bool own;

	if (!pk->learn)
		return;
	est = pk->m_origin == VR_STATIC_LEARNED ? pk->m_static : 0;
	if (lost || B) {
		if (!lost && de && dt > pk->lag) {
			before = pk->m_skip_ns ? est : pk->m_busy_uw;
			pk->m_lead0 = !before;
			lead = (u64)((vt_u128)(before << VR_EU_SHIFT) *
				     pk->lag / VT_FJ_PER_J);
			pk->m_busy_uw = de <= lead ? 0 :
				(u64)((vt_u128)(de - lead) *
				      (VT_FJ_PER_J >> VR_EU_SHIFT) /
				      (dt - pk->lag));
			pk->m_busy_ns = B;
			pk->m_busy_dt = dt;
		}
		pk->m_tail = lost ? 0 : T;
		pk->m_skip_ns = 0;
		return;
	}
	if (!pk->m_skip_ns && dt >= 2 * VT_MS) {
		tail = 0;
		bdt = pk->m_busy_dt;
		own = !est;
		if (own)
			est = (u64)((vt_u128)de * (VT_FJ_PER_J >> VR_EU_SHIFT) /
				    dt);
		buw = pk->m_busy_uw;
		if (buw > est && pk->lag && pk->m_busy_ns) {
			k = mul_div_floor(mul_div_floor(pk->m_tail, 1,
							4 * pk->lag),
					  bdt, pk->m_busy_ns);
			if (k > bdt / 2)
				k = bdt / 2;
			f = mul_div_floor(bdt - pk->lag, k, bdt - k);
			h = f;
			if (own && pk->m_lead0) {
				lead = mul_div_floor(est, pk->lag,
						     bdt - pk->lag);
				buw = buw > lead ? buw - lead : 0;
				h = mul_div_floor(f, bdt, bdt - pk->lag);
			}
			if (own)
				f = mul_div_floor(f, dt, dt - (h < dt / 2 ?
							       h : dt / 2));
			if (buw > est)
				tail = (u64)((vt_u128)((buw - est) <<
						       VR_EU_SHIFT) * f /
					     VT_FJ_PER_J);
		}
		de = de > tail ? de - tail : 0;
		pk->m_skip_ns = 2 * VT_MS;
		/* before the settle: the core's C and shortest stretch */
		if (dt < pk->s_tmin)
			return;
		de = de > pk->s_c ? de - pk->s_c : 0;
	} else if (pk->m_skip_ns < 2 * VT_MS) {
		pk->m_skip_ns += dt;
		return;
	}
	pk->m_run_eu += de;
	pk->m_run_ns += dt;
	if (pk->m_run_ns < (pk->m_known ? 100 : 5) * VT_MS)
		return;
	uw = (u64)((vt_u128)pk->m_run_eu * (VT_FJ_PER_J >> VR_EU_SHIFT) /
		   pk->m_run_ns);
	if (pk->m_run_ns < 100 * VT_MS) {
		pk->m_static = uw;	/* provisional */
		pk->m_origin = VR_STATIC_LEARNED;
		return;
	}
	if (!pk->m_known)
		pk->m_mem_ns = 0;
	pk->m_mem_ns += pk->m_run_ns;
	if (pk->m_mem_ns > 16 * 100 * VT_MS)
		pk->m_mem_ns = 16 * 100 * VT_MS;
	k = pk->m_run_ns < pk->m_mem_ns ? pk->m_run_ns : pk->m_mem_ns;
	if (uw >= pk->m_static)
		pk->m_static += mul_div_floor(uw - pk->m_static, k,
					      pk->m_mem_ns);
	else
		pk->m_static -= mul_div_floor(pk->m_static - uw, k,
					      pk->m_mem_ns);
	pk->m_run_eu = 0;
	pk->m_run_ns = 0;
	pk->m_known = true;
	pk->m_origin = VR_STATIC_LEARNED;
	S.learns++;
}

/* The core's lag list of package @pi against the model's. */
static void check_lag_list(int pi)
{
	struct spkg *pk = &S.pk[pi];
	const struct vr_acct *a;
	int i, n = 0, nm = 0;

	for (a = pk->p.prev; a && n <= S.ntask; a = a->pprev, n++) {
		for (i = 0; i < S.ntask; i++)
			if (a == &S.t[i].acct[pi])
				break;
		if (i == S.ntask || !S.t[i].vcpu) {
			fail(E_LAG, "pkg %d: foreign account on the lag list",
			     pi);
			return;
		}
		if (a->prev_ns != S.t[i].lag_ns[pi] || !a->prev_ns)
			fail(E_LAG, "pkg %d task %d: lag ns %llu, model %llu",
			     pi, i, (unsigned long long)a->prev_ns,
			     (unsigned long long)S.t[i].lag_ns[pi]);
	}
	for (i = 0; i < S.ntask; i++) {
		if (S.t[i].lag_ns[pi])
			nm++;
		else if (S.t[i].acct[pi].prev_ns)
			fail(E_LAG, "pkg %d task %d: off the list with lag ns "
			     "%llu", pi, i,
			     (unsigned long long)S.t[i].acct[pi].prev_ns);
	}
	if (n != nm || pk->p.prev_busy != pk->m_prev_busy ||
	    (pk->m_prev_busy && pk->p.prev_t != pk->m_prev_t))
		fail(E_LAG, "pkg %d: list of %d (busy %llu ns, t %llu), model "
		     "%d (busy %llu ns, t %llu)", pi, n,
		     (unsigned long long)pk->p.prev_busy,
		     (unsigned long long)pk->p.prev_t, nm,
		     (unsigned long long)pk->m_prev_busy,
		     (unsigned long long)pk->m_prev_t);
}

static void check_close(int pi, u64 B, u64 dt, const u64 *raw, u32 valid,
			u64 debt_in, u64 tail, u64 idle, u64 idle_end)
{
	struct spkg *pk = &S.pk[pi];
	struct vr_pkg *p = &pk->p;
	struct vr_pkg_stats st[VR_NDOM], dl[VR_NDOM];
	u64 dwraps = p->wraps - pk->prev_wraps;
	u64 dresets = p->resets - pk->prev_resets;
	u64 doverruns = p->overruns - pk->prev_overruns;
	u64 to_busy[VR_NDOM], sum[VR_NDOM] = {}, R = 0, RL = 0;
	u64 cur[VR_NDOM] = {}, lag[VR_NDOM] = {}, scur[VR_NDOM] = {};
	u64 ssum[VR_NDOM] = {};
	/* an unreadable PKG, or its first sample after one: no interval */
	bool pkg_base = !(valid & 1) || pk->base_next[0];
	bool lost, expect_reset = false, injected = false, clear, relist;
	bool merge = false;
	u64 unseen = 0;
	unsigned int exp_over = 0;
	bool over_unsure = false;
	unsigned int d;
	int i;

	vr_pkg_read_stats(p, st, VR_NDOM);
	for (d = 0; d < VR_NDOM; d++) {
		const u64 *a = (const u64 *)&st[d], *b = (const u64 *)&pk->prev[d];
		u64 *o = (u64 *)&dl[d];
		unsigned int k;

		for (k = 0; k < sizeof(st[d]) / sizeof(u64); k++) {
			if (a[k] < b[k])
				fail(E_MONO, "pkg %d dom %u stat field %u went"
				     " from %llu to %llu", pi, d, k,
				     (unsigned long long)b[k],
				     (unsigned long long)a[k]);
			o[k] = a[k] - b[k];
		}
	}
	if (!vt_conserved(st, VR_NDOM))
		fail(E_CONS, "pkg %d close %llu", pi,
		     (unsigned long long)pk->closes);

	/* busy ns == truth */
	if (B != pk->truth_busy)
		fail(E_BUSY_NS, "pkg %d: B %llu truth %llu", pi,
		     (unsigned long long)B,
		     (unsigned long long)pk->truth_busy);

	/* per domain: the delta against the counter's truth */
	for (d = 0; d < VR_NDOM; d++) {
		struct vrm_rapl *r = &pk->ctr[d];
		vt_s128 u = vrm_units(r), du = u - pk->last_units[d];
		u64 lo, hi, prev_raw = pk->last_raw[d];

		if (!(pk->doms & (1U << d)))
			continue;
		if (pk->reset_dom == (int)d &&
		    (!(valid & (1U << d)) || pk->base_next[d])) {
			/* unread or re-baselined: the jump is not seen */
			pk->reset_dom = -1;
			injected = true;
		}
		if (!(valid & (1U << d))) {
			pk->base_next[d] = true;
			if (dl[d].sampled)
				fail(E_DELTA, "pkg %d dom %u unread but sampled"
				     " %llu", pi, d,
				     (unsigned long long)dl[d].sampled);
			continue;
		}
		pk->last_units[d] = u;
		pk->last_raw[d] = raw[d];
		if (r->width < 64) {
			/*
			 * Could max power wrap the register twice?  The core
			 * allows two 1 ms hardware steps beyond dt.
			 */
			long double maxj = (long double)MAX_POWER_UW *
					   (dt + 2 * VT_MS) / 1e15L;
			long double rj = (long double)range_units_j(r);

			if (pk->base_next[d]) {
				/* a baseline is never an overrun */
			} else if (maxj >= rj * 1.000001L) {
				exp_over++;
				if (pk->reset_dom == (int)d) {
					pk->reset_dom = -1;
					injected = true;
				}
				continue;	/* its delta means nothing */
			} else if (maxj >= rj * 0.999999L) {
				over_unsure = true;
				pk->reset_dom = -1;
				injected = true;
				continue;
			}
		}
		if (pk->base_next[d]) {
			pk->base_next[d] = false;
			if (dl[d].sampled)
				fail(E_DELTA, "pkg %d dom %u baseline sampled"
				     " %llu", pi, d,
				     (unsigned long long)dl[d].sampled);
			continue;
		}
		if (pk->reset_dom == (int)d) {
			expect_reset = dt <= pk->reset_bound;
			injected = true;
			pk->reset_dom = -1;
			if (expect_reset) {
				u64 e = (u64)(((vt_u128)raw[d] <<
					       VR_EU_SHIFT) >> r->esu);

				if (!dresets)
					fail(E_RESET, "pkg %d dom %u: reset "
					     "from %llu to %llu not counted",
					     pi, d,
					     (unsigned long long)prev_raw,
					     (unsigned long long)raw[d]);
				if (d == 0 && dwraps)
					fail(E_RESET, "pkg %d: reset counted "
					     "as a wrap", pi);
				if (dl[d].sampled != e ||
				    dl[d].lost != dl[d].sampled)
					fail(E_RESET, "pkg %d dom %u: reset "
					     "sampled %llu lost %llu, expected "
					     "%llu lost", pi, d,
					     (unsigned long long)dl[d].sampled,
					     (unsigned long long)dl[d].lost,
					     (unsigned long long)e);
			}
			continue;
		}
		if (du < 0) {
			fail(E_DELTA, "pkg %d dom %u: test counter went back "
			     "without a reset", pi, d);
			continue;
		}
		/* floor or floor + 1 (the carried remainder) */
		lo = (u64)((((vt_u128)du) << VR_EU_SHIFT) >> r->esu);
		hi = r->esu > VR_EU_SHIFT ? lo + 1 : lo;
		if (dl[d].sampled < lo || dl[d].sampled > hi)
			fail(E_DELTA, "pkg %d dom %u esu %u w %u: sampled %llu"
			     " eu, true delta %llu units = %llu eu (dt %llu)",
			     pi, d, r->esu, r->width,
			     (unsigned long long)dl[d].sampled,
			     (unsigned long long)du, (unsigned long long)lo,
			     (unsigned long long)dt);
		if (d == 0 && r->width < 64 &&
		    dwraps != (raw[d] < prev_raw))
			fail(E_WRAPS, "pkg %d: raw %#llx -> %#llx, wraps +%llu"
			     " (dt %llu, overruns +%llu, resets +%llu)",
			     pi, (unsigned long long)prev_raw,
			     (unsigned long long)raw[d],
			     (unsigned long long)dwraps,
			     (unsigned long long)dt,
			     (unsigned long long)doverruns,
			     (unsigned long long)dresets);
	}
	if (dresets && !injected)
		fail(E_RESET, "pkg %d: %llu unexpected resets (dt %llu)", pi,
		     (unsigned long long)dresets, (unsigned long long)dt);
	if (!over_unsure && doverruns != exp_over)
		fail(E_OVERRUN, "pkg %d: %llu overruns, expected %u (dt %llu)",
		     pi, (unsigned long long)doverruns, exp_over,
		     (unsigned long long)dt);

	lost = pk->rebase_pending || dresets || doverruns || pkg_base;
	for (d = 0; d < VR_NDOM; d++) {
		if (lost && (dl[d].lost != dl[d].sampled || dl[d].tracked ||
			     dl[d].host || dl[d].idle))
			fail(E_LOST, "pkg %d dom %u: lost epoch split: lost "
			     "%llu of %llu", pi, d,
			     (unsigned long long)dl[d].lost,
			     (unsigned long long)dl[d].sampled);
		if (!lost && dl[d].lost)
			fail(E_LOST, "pkg %d dom %u: clean epoch lost %llu", pi,
			     d, (unsigned long long)dl[d].lost);
		to_busy[d] = dl[d].tracked + dl[d].host;
	}

	/*
	 * The split of a clean epoch, from the model: cur[] for the accounts
	 * of this epoch, lag[] for those of the lag list.  A lost epoch
	 * splits nothing, owes nothing and drops any debt (the interval that
	 * owed it is unknown).
	 */
	if (lost) {
		if (dl[0].static_e || dl[0].dynamic || p->static_debt)
			fail(E_STATIC, "pkg %d: lost epoch: static %llu dynamic"
			     " %llu, debt %llu -> %llu", pi,
			     (unsigned long long)dl[0].static_e,
			     (unsigned long long)dl[0].dynamic,
			     (unsigned long long)debt_in,
			     (unsigned long long)p->static_debt);
	} else {
		u64 de = dl[0].sampled, want, stat, dyn, stat_busy, cap, settle;
		u64 dlag = 0, ut;

		/*
		 * The debt carried in is read from the core (its cap is a
		 * tuning choice); what is checked is the rule: static =
		 * min(de, P_static x dt + debt), and the shortfall (at most)
		 * is carried out.  P_static is the model's.
		 */
		want = vr_energy_eu(pk->m_static, dt, &pk->srem) + debt_in;
		if (de >= want) {
			stat = want;
			if (p->static_debt)
				fail(E_STATIC, "pkg %d: debt %llu carried after "
				     "a full epoch", pi,
				     (unsigned long long)p->static_debt);
		} else {
			stat = de;
			if (!p->static_debt || p->static_debt > want - de)
				fail(E_STATIC, "pkg %d: debt %llu carried for a "
				     "shortfall of %llu", pi,
				     (unsigned long long)p->static_debt,
				     (unsigned long long)(want - de));
		}
		dyn = de - stat;
		/*
		 * The all-idle stretch's energy beyond the floor (C from the
		 * core's bins, read before the close; all of it from half the
		 * shortest settled stretch up, less by length below), once
		 * per stretch over the epochs it spans, is idle's.
		 */
		settle = 0;
		if (!idle) {
			pk->m_set_end = 0;
		} else {
			if (idle_end - idle != S.now - dt ||
			    pk->m_set_end != S.now - dt) {
				pk->m_set_start = idle_end - idle;
				pk->m_set_given = 0;
			}
			pk->m_set_end = idle_end;
			if (pk->s_c && 2 * (idle_end - pk->m_set_start) >=
			    pk->s_tmin)
				settle = pk->s_c;
			else if (pk->s_c)
				settle = mul_div_floor(pk->s_c, 2 * (idle_end -
						       pk->m_set_start),
						       pk->s_tmin);
			settle = settle > pk->m_set_given ?
				 settle - pk->m_set_given : 0;
			pk->m_set_given += settle;
		}
		if (settle > dyn)
			settle = dyn;
		dyn -= settle;
		S.settles += settle != 0;
		if (dl[0].static_e != stat + settle || dl[0].dynamic != dyn)
			fail(E_STATIC, "pkg %d: static %llu dynamic %llu, "
			     "expected %llu %llu", pi,
			     (unsigned long long)dl[0].static_e,
			     (unsigned long long)dl[0].dynamic,
			     (unsigned long long)stat,
			     (unsigned long long)dyn);
		cap = (u64)pk->online * dt;
		if (!B || S.policy == VR_STATIC_NONE)
			stat_busy = 0;
		else if (S.policy == VR_STATIC_BUSY)
			stat_busy = idle < dt ? mul_div_floor(stat, dt - idle,
							      dt) : 0;
		else
			stat_busy = cap ? mul_div_floor(stat, B < cap ? B : cap,
							cap) : 0;
		ut = pk->lag ? tail / (4 * pk->lag) : 0;
		/*
		 * A busy epoch whose read showed nothing joins the list
		 * whole; the list keeps its unseen ns, and the share
		 * waits for a read that shows them.
		 */
		merge = B && !de && pk->lag;
		/* the lag share, to the list of the previous busy epoch */
		if (merge) {
			S.lag_merged++;
		} else if (pk->m_prev_busy && B && pk->m_prev_seen) {
			dlag = mul_div_floor(pk->m_prev_dyn, pk->m_prev_tail,
					     pk->m_prev_seen);
			if (dlag > dyn)
				dlag = dyn;
			S.lag_busy += dlag != 0;
		} else if (pk->m_prev_busy && B && pk->m_prev_tail) {
			/* merged with no delta before: by time */
			dlag = mul_div_floor(dyn, pk->m_prev_tail,
					     pk->m_prev_tail + B -
					     (ut > B / 2 ? B / 2 : ut));
			S.lag_busy += dlag != 0;
		} else if (pk->m_prev_busy && !B) {
			dlag = dyn;
			S.lag_tail += dlag != 0;
		}
		cur[0] = stat_busy + (B ? dyn - dlag : 0);
		scur[0] = stat_busy;
		if (merge) {
			if (pk->m_prev_busy) {
				unseen = pk->m_prev_tail < pk->m_prev_busy ?
					 pk->m_prev_tail : pk->m_prev_busy;
			} else {
				pk->m_prev_dyn = 0;
				pk->m_prev_seen = 0;
			}
			pk->m_prev_tail = unseen + B;
		} else if (B) {
			if (ut > B / 2)
				ut = B / 2;
			pk->m_prev_dyn = dyn;
			pk->m_prev_seen = (pk->m_prev_busy ? pk->m_prev_tail :
					   0) + B - ut;
			pk->m_prev_tail = ut;
		} else if (pk->m_prev_busy) {
			if (ut < pk->m_prev_tail)
				pk->m_prev_tail = ut;
		} else {
			pk->m_prev_dyn = 0;
			pk->m_prev_seen = 0;
			pk->m_prev_tail = 0;
		}
		lag[0] = dlag;
		if (to_busy[0] != cur[0] + lag[0])
			fail(E_TO_BUSY, "pkg %d policy %u: to_busy %llu "
			     "expected %llu + lag %llu (de %llu stat %llu B "
			     "%llu cap %llu)", pi, S.policy,
			     (unsigned long long)to_busy[0],
			     (unsigned long long)cur[0],
			     (unsigned long long)lag[0],
			     (unsigned long long)de,
			     (unsigned long long)stat,
			     (unsigned long long)B, (unsigned long long)cap);
		for (d = 1; d < VR_NDOM; d++) {
			cur[d] = de ? mul_div_floor(dl[d].sampled, cur[0], de) :
				 0;
			lag[d] = de ? mul_div_floor(dl[d].sampled, lag[0], de) :
				 0;
			scur[d] = de ? mul_div_floor(dl[d].sampled, stat_busy,
						     de) : 0;
			if (to_busy[d] != cur[d] + lag[d])
				fail(E_DOMS, "pkg %d dom %u: to_busy %llu "
				     "expected %llu + %llu", pi, d,
				     (unsigned long long)to_busy[d],
				     (unsigned long long)cur[d],
				     (unsigned long long)lag[d]);
			if (dl[d].static_e || dl[d].dynamic)
				fail(E_DOMS, "pkg %d dom %u has a static "
				     "split", pi, d);
		}
	}
	learn_model(pk, lost, B, dl[0].sampled, dt, tail);
	if (p->p_static_uw != pk->m_static || p->static_origin != pk->m_origin)
		fail(E_LEARN, "pkg %d: P_static %llu uW origin %u, model %llu "
		     "uW origin %u (run %llu ns)", pi,
		     (unsigned long long)p->p_static_uw, p->static_origin,
		     (unsigned long long)pk->m_static, pk->m_origin,
		     (unsigned long long)pk->m_run_ns);

	/*
	 * The lag list after this close: a busy clean epoch replaces it (when
	 * there is a lag); an idle clean close within 2 ms of the busy close
	 * that made it, or while static debt is still being repaid, keeps it
	 * (after giving to it); anything else clears it.
	 */
	clear = !merge && (lost || B || !pk->lag ||
			   (S.now - pk->m_prev_t > 2 * VT_MS &&
			    !p->static_debt));
	relist = !merge && !lost && B && pk->lag;
	if (!lost && !B && pk->m_prev_busy && !clear)
		S.lag_kept++;

	/* the accounts of this package */
	for (i = 0; i < S.ntask; i++) {
		struct task *t = &S.t[i];
		struct vr_acct *a = &t->acct[pi];
		u64 r = a->ns - t->prev_ns[pi], rl = t->lag_ns[pi];

		if (!t->vcpu)
			continue;
		if (a->ns < t->prev_ns[pi])
			fail(E_MONO, "task %d ns went back", i);
		if (r != t->truth_ns[pi])
			fail(E_ACCT_NS, "task %d pkg %d: ns %llu truth %llu", i,
			     pi, (unsigned long long)r,
			     (unsigned long long)t->truth_ns[pi]);
		R += r;
		RL += rl;
		for (d = 0; d < VR_NDOM; d++) {
			u64 e = a->energy[d] - t->prev_e[pi][d], lo, hi = 0;
			u64 es = a->static_e[d] - t->prev_s[pi][d], slo, shi = 0;

			if (a->energy[d] < t->prev_e[pi][d] ||
			    a->static_e[d] < t->prev_s[pi][d])
				fail(E_MONO, "task %d energy went back", i);
			/*
			 * Cumulative rounding gives each account the floor or
			 * the ceiling of its exact share, in each list, of
			 * the static and of the dynamic part of this epoch's.
			 */
			slo = share_floor(scur[d], r, B, &shi);
			lo = share_floor(scur[d], r, B, &hi);
			lo += share_floor(cur[d] - scur[d], r, B, &hi);
			lo += share_floor(lag[d], rl, pk->m_prev_busy, &hi);
			if (es < slo || es > shi || es > e ||
			    a->static_e[d] > a->energy[d])
				fail(E_SPLIT, "task %d pkg %d dom %u: static %llu"
				     " eu of %llu for %llu of %llu ns of %llu "
				     "static eu", i, pi, d,
				     (unsigned long long)es,
				     (unsigned long long)e,
				     (unsigned long long)r,
				     (unsigned long long)B,
				     (unsigned long long)scur[d]);
			ssum[d] += a->static_e[d];
			t->prev_s[pi][d] = a->static_e[d];
			if (e < lo || e > hi)
				fail(E_SHARE, "task %d pkg %d dom %u: %llu eu "
				     "for %llu of %llu ns of %llu eu and %llu "
				     "of %llu ns of %llu eu (lag)", i, pi, d,
				     (unsigned long long)e,
				     (unsigned long long)r,
				     (unsigned long long)B,
				     (unsigned long long)cur[d],
				     (unsigned long long)rl,
				     (unsigned long long)pk->m_prev_busy,
				     (unsigned long long)lag[d]);
			sum[d] += a->energy[d];
			t->prev_e[pi][d] = a->energy[d];
		}
		/* the model's list after the close */
		if (merge) {
			/* scaled to the list's unseen ns; 0: off it */
			if (rl && pk->m_prev_busy)
				rl = mul_div_floor(rl, unseen,
						   pk->m_prev_busy);
			t->lag_ns[pi] = rl + r;
		} else {
			t->lag_ns[pi] = relist ? r : clear ? 0 : rl;
		}
		t->prev_ns[pi] = a->ns;
		t->truth_ns[pi] = 0;
	}
	for (d = 0; d < VR_NDOM; d++) {
		u64 given, hi = 0;

		if (sum[d] != st[d].tracked)
			fail(E_ACCT_SUM, "pkg %d dom %u: accounts %llu tracked "
			     "%llu", pi, d, (unsigned long long)sum[d],
			     (unsigned long long)st[d].tracked);
		if (ssum[d] != st[d].tracked_static)
			fail(E_SPLIT, "pkg %d dom %u: accounts' static %llu "
			     "tracked_static %llu", pi, d,
			     (unsigned long long)ssum[d],
			     (unsigned long long)st[d].tracked_static);
		if (d == 0 && st[d].tracked_static + st[d].host_static >
			      st[d].static_e)
			fail(E_SPLIT, "pkg %d: tracked_static %llu + "
			     "host_static %llu > static %llu", pi,
			     (unsigned long long)st[d].tracked_static,
			     (unsigned long long)st[d].host_static,
			     (unsigned long long)st[d].static_e);
		/*
		 * Each list gives floor(amount x its tracked ns / its busy),
		 * this epoch's static and dynamic parts each.
		 */
		if (R <= B && RL <= pk->m_prev_busy) {
			u64 gs = share_floor(scur[d], R, B, &hi);

			given = gs + share_floor(cur[d] - scur[d], R, B, &hi) +
				share_floor(lag[d], RL, pk->m_prev_busy, &hi);
			if (!lost && (dl[d].tracked_static != gs ||
				      dl[d].host_static != scur[d] - gs))
				fail(E_SPLIT, "pkg %d dom %u: tracked_static "
				     "%llu host_static %llu, expected %llu "
				     "%llu", pi, d,
				     (unsigned long long)dl[d].tracked_static,
				     (unsigned long long)dl[d].host_static,
				     (unsigned long long)gs,
				     (unsigned long long)(scur[d] - gs));
			if (dl[d].tracked != given ||
			    dl[d].host != cur[d] + lag[d] - given)
				fail(E_HOST, "pkg %d dom %u: tracked %llu host "
				     "%llu, expected %llu %llu (%llu of %llu "
				     "ns, lag %llu of %llu ns)", pi, d,
				     (unsigned long long)dl[d].tracked,
				     (unsigned long long)dl[d].host,
				     (unsigned long long)given,
				     (unsigned long long)(cur[d] + lag[d] -
							  given),
				     (unsigned long long)R,
				     (unsigned long long)B,
				     (unsigned long long)RL,
				     (unsigned long long)pk->m_prev_busy);
		}
		pk->prev[d] = st[d];
	}
	if (merge) {
		pk->m_prev_busy = unseen + B;
		pk->m_prev_t = S.now;
	} else if (relist) {
		pk->m_prev_busy = B;
		pk->m_prev_t = S.now;
	} else if (clear) {
		pk->m_prev_busy = 0;
	}
	check_lag_list(pi);

	S.lost_epochs += lost;
	S.resets += dresets;
	S.overruns += doverruns;
	S.wraps += dwraps;
	pk->prev_wraps = p->wraps;
	pk->prev_resets = p->resets;
	pk->prev_overruns = p->overruns;
	pk->truth_busy = 0;
	pk->rebase_pending = false;
	pk->gap_pending = false;
	pk->closes++;
	S.closes++;
}

/* What the read of a close saw, for check_close(). */
struct close_read {
	int pi;
	u64 raw[VR_NDOM];
	u64 B, dt, debt_in, tail, idle, idle_end;
	u32 valid;
};

/* The vr_read_fn of a package: its counters, after the fold. */
static u32 read_pkg(void *ctx, u64 *raw, u64 dt, u64 busy)
{
	struct close_read *cr = ctx;
	struct spkg *pk = &S.pk[cr->pi];
	u64 win = 2 * pk->lag, lo = S.now - win, e, r;
	u64 ilo = S.now - dt, ihi = S.now, s0, s1;
	unsigned int d;
	int i;

	cr->tail = 0;
	for (i = 0; i < NCPU; i++) {
		const struct scpu *sc = &S.cpu[cr->pi * NCPU + i];

		truth_fold(cr->pi * NCPU + i);
		if (!sc->online)
			continue;
		/* its last known idle stretch: since its turn, or before */
		s0 = sc->task >= 0 ? sc->turn - sc->run : sc->turn;
		s1 = sc->task >= 0 ? (sc->run ? sc->turn : s0) : S.now;
		if ((int64_t)(s0 - ilo) > 0)
			ilo = s0;
		if ((int64_t)(s1 - ihi) < 0)
			ihi = s1;
		if (sc->task >= 0) {
			e = win;
			r = S.now - sc->turn;
		} else if ((int64_t)(sc->turn - lo) > 0 && sc->turn <= S.now) {
			e = sc->turn - lo;
			r = sc->run;
		} else {
			continue;
		}
		cr->tail += r >= e ? e * e : r * (2 * e - r);
	}
	for (d = 0; d < VR_NDOM; d++)
		if (pk->doms & (1U << d))
			raw[d] = vrm_read(&pk->ctr[d], S.now);
	cr->valid = pk->doms;
	/* now and then a domain cannot be read, the PKG one too */
	if ((pk->doms & 4) && !vt_below(2000))
		cr->valid &= ~4U;
	if (!vt_below(5000)) {
		cr->valid &= ~1U;
		S.unread++;
	}
	memcpy(cr->raw, raw, sizeof(cr->raw));
	cr->B = busy;
	cr->dt = dt;
	cr->idle = (int64_t)(ihi - ilo) > 0 ? ihi - ilo : 0;
	cr->idle_end = ihi;
	cr->debt_in = pk->p.static_debt;
	return cr->valid;
}

static void close_pkg(int pi)
{
	struct close_read cr = { .pi = pi };

	/* read before the close: its split uses them, its learning sets */
	S.pk[pi].s_c = S.pk[pi].p.settle.c_eu;
	S.pk[pi].s_tmin = S.pk[pi].p.settle.t_min;
	if (vr_pkg_stale(&S.pk[pi].p, S.now) &&
	    vr_pkg_try_close(&S.pk[pi].p, S.now, read_pkg, &cr))
		check_close(pi, cr.B, cr.dt, cr.raw, cr.valid, cr.debt_in,
			    cr.tail, cr.idle, cr.idle_end);
}

static u64 next_interval(void)
{
	u64 x = vt_below(100);

	if (x < 2)
		return vt_below(3);		/* back-to-back switches */
	if (x < 60)
		return vt_range(5000, 200000);
	return vt_range(200000, 2000000);
}

/* A scheduling event on global CPU @g. */
static void sched_event(int g)
{
	struct scpu *sc = &S.cpu[g];
	struct spkg *pk = &S.pk[sc->pkg];
	struct vr_cpu *c = &pk->cpu[g % NCPU];
	struct vr_acct *a;
	int nt = -1;
	bool busy, was_busy = sc->task >= 0;
	u64 x = vt_below(100);

	truth_fold(g);
	if (x < 40 && sc->task >= 0) {
		nt = sc->task;			/* exit + re-entry */
	} else if (x < 70) {
		nt = -1;			/* idle */
	} else {
		int k = vt_below(S.ntask);

		nt = S.t[k].cpu < 0 ? k : -1;	/* busy elsewhere: idle */
	}
	if (S.now < pk->quiet_until)
		nt = -1;			/* a quiet package */
	if (sc->task >= 0 && sc->task != nt)
		S.t[sc->task].cpu = -1;
	if (nt >= 0)
		S.t[nt].cpu = g;
	sc->task = nt;
	pkg_power(pk, sc->pkg);

	busy = nt >= 0;
	a = busy && S.t[nt].vcpu ? &S.t[nt].acct[sc->pkg] : NULL;
	/* The gate sums up the fields (the closer may have set core_due). */
	if (c->gate != ((c->busy ? 0 : VR_GATE_IDLE) |
			(c->cur || c->core_due ? VR_GATE_SLOW : 0)))
		fail(E_NEEDED, "cpu %d: gate %#x", g, c->gate);
	if (vr_cpu_event_needed(c, busy, a)) {
		vr_cpu_event(c, S.now, busy, a);
		if (busy != was_busy) {
			sc->run = S.now - sc->turn;
			sc->turn = S.now;
		}
	} else if (c->busy != busy || c->cur || a || c->core_due) {
		fail(E_NEEDED, "cpu %d", g);
	}
	S.events++;
	sc->next = S.now + next_interval();
	close_pkg(sc->pkg);
}

static void cpu_offline(int g)
{
	struct scpu *sc = &S.cpu[g];
	struct spkg *pk = &S.pk[sc->pkg];

	truth_fold(g);
	if (!vr_trylock(&pk->p.close_lock))
		return;
	vr_cpu_offline(&pk->cpu[g % NCPU], S.now);
	vr_pkg_rebaseline(&pk->p);
	vr_unlock(&pk->p.close_lock);
	pk->rebase_pending = true;
	pk->online--;
	sc->online = false;
	if (sc->task >= 0)
		S.t[sc->task].cpu = -1;
	sc->task = -1;
	pkg_power(pk, sc->pkg);
	sc->next = S.now + vt_range(VT_MS, 50 * VT_MS);	/* back online */
	S.hotplugs++;
}

static void cpu_online(int g)
{
	struct scpu *sc = &S.cpu[g];
	struct spkg *pk = &S.pk[sc->pkg];

	vr_lock(&pk->p.close_lock);
	vr_cpu_online(&pk->cpu[g % NCPU], S.now, false);
	sc->turn = S.now;
	sc->run = 0;
	vr_pkg_rebaseline(&pk->p);
	vr_unlock(&pk->p.close_lock);
	pk->rebase_pending = true;
	pk->online++;
	sc->online = true;
	sc->last = S.now;
	sc->next = S.now + next_interval();
	close_pkg(sc->pkg);
}

/* Jump the register of one domain backwards (a reset), if detectable. */
static void inject_reset(int pi)
{
	struct spkg *pk = &S.pk[pi];
	unsigned int d = vt_below(3);
	struct vrm_rapl *r = &pk->ctr[d];
	u64 bound = 3 * VT_MS, range, m, k, cur;
	vt_u128 mu;

	if (!(pk->doms & (1U << d)) || pk->reset_dom >= 0 || pk->base_next[d])
		return;
	range = r->width >= 64 ? ~0ULL : 1ULL << r->width;
	/* units the package could count over @bound, plus slack */
	mu = vrm_fj_to_units((vt_u128)MAX_POWER_UW * bound, r->esu) + 4;
	if (r->width < 64 && mu >= range / 8)
		return;
	m = (u64)mu;
	cur = (u64)vrm_units(r) & vrm_mask(r->width);
	/*
	 * Back by more than what can accrue before the next read (so that
	 * the register cannot pass its old value again), and by at most half
	 * the range (so that the wrap delta is larger than max power allows).
	 */
	if (r->width >= 64) {
		/* a software counter restarts near 0 */
		if (cur < 4 * m)
			return;
		vrm_reset(r, vt_below(cur - 2 * m));
	} else {
		k = vt_range(2 * m, range / 2);
		vrm_reset(r, (cur - k) & vrm_mask(r->width));
	}
	pk->reset_dom = d;
	pk->reset_bound = bound;
}

/*
 * Where a register starts: a 32-bit one anywhere, half of the time just
 * below its wrap point (within ~1 s at 100 W) so that low ESUs wrap too;
 * a 64-bit one (a software source) from a small value.
 */
static u64 start_units(u32 esu, u32 width)
{
	u64 near = (u64)vrm_fj_to_units((vt_u128)100000000ULL * VT_SEC, esu);

	if (width >= 64)
		return vt_below(1ULL << 32);
	if (vt_below(2))
		return vrm_mask(width) - vt_below(near + 1);
	return vt_rand() & vrm_mask(width);
}

static void setup(bool lag_mode, u32 esu0, u8 policy, unsigned int nvm,
		  u64 *period)
{
	int pi, i, v, k;
	u64 k64 = 0;

	memset(&S, 0, sizeof(S));
	S.lag_mode = lag_mode;
	S.policy = policy;
	*period = vt_below(4) ? VT_MS : vt_below(2) ? 2 * VT_MS : 10 * VT_MS;
	for (pi = 0; pi < NPKG; pi++) {
		struct spkg *pk = &S.pk[pi];
		u32 esu = pi == 0 ? esu0 : vt_below(32);
		u32 width = vt_below(8) ? 32 : 64;
		u64 step = 976563, jit = vt_below(2) ? 50000 : 0;

		for (i = 0; i < NCPU; i++)
			pk->cpus[i] = &pk->cpu[i];
		vr_pkg_init(&pk->p, pk->cpus, NCPU, *period, MAX_POWER_UW);
		/* the default lag of a hardware counter, or none */
		if (!S.lag_mode)
			pk->p.lag_ns = 0;
		pk->lag = pk->p.lag_ns;
		pk->doms = 1 | (vt_below(2) ? 2 : 0) | (vt_below(2) ? 4 : 0);
		pk->static_uw = vt_range(20, 60) * 1000000ULL;
		pk->core_static_uw = pk->static_uw / 4;
		pk->dram_static_uw = vt_range(1, 6) * 1000000ULL;
		vt_rapl_init(&pk->ctr[0], esu, width, step, jit,
			     start_units(esu, width), 0);
		vt_rapl_init(&pk->ctr[1], esu, width, step, jit,
			     start_units(esu, width), 0);
		vt_rapl_init(&pk->ctr[2], 16, 32, step, jit,
			     start_units(16, 32), 0);
		vrm_follow(&pk->ctr[1], &pk->ctr[0]);
		vrm_follow(&pk->ctr[2], &pk->ctr[0]);
		vr_pkg_set_domain(&pk->p, 0, esu, width);
		if (pk->doms & 2)
			vr_pkg_set_domain(&pk->p, 1, esu, width);
		if (pk->doms & 4)
			vr_pkg_set_domain(&pk->p, 2, 16, 32);
		/* P_static: given, unknown, or learned (from 0.5-1.5x) */
		pk->m_known = false;
		switch (vt_below(3)) {
		case 0:
			pk->m_origin = VR_STATIC_PARAM;
			pk->m_static = pk->static_uw;
			break;
		case 1:
			pk->m_origin = VR_STATIC_UNKNOWN;
			pk->m_static = 0;
			break;
		default:
			pk->m_origin = VR_STATIC_LEARNED;
			pk->m_static = pk->static_uw / 100 * vt_range(50, 150);
			pk->m_known = true;
			pk->m_mem_ns = 16 * 100 * VT_MS;
			break;
		}
		pk->learn = pk->m_origin != VR_STATIC_PARAM;
		vr_pkg_set_static(&pk->p, pk->m_static, pk->m_origin);
		/*
		 * Half the learning packages start with a settle measured:
		 * 32 stretches of 5 ms and 32 of 100 ms, each 0.1-10 mJ
		 * above the floor's, as a delayed package C-state leaves
		 * them, so that the split and the learning take C off from
		 * the first stretch (the rule reads it from the core).
		 */
		if (pk->learn && vt_below(2)) {
			u64 c = vt_range(1677, 167772);	/* 0.1-10 mJ in eu */
			u64 f5 = vr_energy_eu(pk->static_uw, 5 * VT_MS, &k64);

			k64 = 0;
			pk->p.settle.n[1] = 32;
			pk->p.settle.t[1] = 32 * 5 * VT_MS;
			pk->p.settle.e[1] = 32 * (f5 + c);
			pk->p.settle.n[5] = 32;
			pk->p.settle.t[5] = 32 * 100 * VT_MS;
			pk->p.settle.e[5] = 32 * (20 * f5 + c);
			pk->p.settle.c_eu = c;
			pk->p.settle.t_min = f5 ? mul_div_floor(2 * c,
								5 * VT_MS,
								f5) : 0;
		}
		pk->p.policy = policy;
		pk->reset_dom = -1;
		for (k = 0; k < VR_NDOM; k++)
			pk->base_next[k] = true;
		for (i = 0; i < NCPU; i++) {
			int g = pi * NCPU + i;

			S.cpu[g].pkg = pi;
			S.cpu[g].task = -1;
			S.cpu[g].online = true;
			S.cpu[g].next = vt_range(1, VT_MS);
			vr_cpu_init(&pk->cpu[i], &pk->p);
			vr_lock(&pk->p.close_lock);
			vr_cpu_online(&pk->cpu[i], 0, false);
			vr_unlock(&pk->p.close_lock);
		}
		pk->online = NCPU;
		S.now = 0;
		pkg_power(pk, pi);
	}
	for (v = 0; v < (int)nvm; v++) {
		int nv = vt_range(1, MAXVCPU);

		for (k = 0; k < nv; k++) {
			struct task *t = &S.t[S.ntask++];

			t->vcpu = true;
			t->dyn_uw = vt_range(1000, 12000) * 1000ULL;
		}
	}
	for (k = vt_range(2, 4); k > 0; k--) {	/* host tasks, VMM threads */
		struct task *t = &S.t[S.ntask++];

		t->dyn_uw = vt_range(500, 8000) * 1000ULL;
	}
	for (k = 0; k < S.ntask; k++) {
		S.t[k].cpu = -1;
		S.t[k].core_uw = S.t[k].dyn_uw * 4 / 5;
		S.t[k].dram_uw = vt_range(100, 2000) * 1000ULL;
	}
}

/* A gap without any event, long enough to wrap some counter twice. */
static void inject_gap(void)
{
	u64 g = 0;
	int pi, i;

	for (pi = 0; pi < NPKG; pi++) {
		const struct vrm_rapl *r = &S.pk[pi].ctr[0];
		long double need;

		if (r->width >= 64)
			continue;
		need = (long double)range_units_j(r) * 1e9L * 1.2L /
		       ((long double)MAX_POWER_UW / 1e6L);
		if (need <= GAP_MAX_NS && (u64)need > g)
			g = (u64)need;
	}
	if (!g)
		return;
	for (i = 0; i < NPKG * NCPU; i++)
		S.cpu[i].next += g;
	for (pi = 0; pi < NPKG; pi++)
		S.pk[pi].gap_pending = true;
	S.gaps++;
}

static void run(const char *name, bool lag_mode, u32 esu0, u64 nev)
{
	u64 period;
	u8 policy = vt_below(VR_STATIC_NR);
	unsigned int nvm = vt_range(2, MAXVM), g;

	setup(lag_mode, esu0, policy, nvm, &period);

	while (S.events < nev) {
		int best = 0;
		struct scpu *sc;

		for (g = 1; g < NPKG * NCPU; g++)
			if (S.cpu[g].next < S.cpu[best].next)
				best = g;
		sc = &S.cpu[best];
		S.now = sc->next;
		if (!sc->online) {
			cpu_online(best);
			continue;
		}
		/* hotplug: sometimes one CPU, sometimes a whole package */
		if (!vt_below(20000)) {
			cpu_offline(best);
			continue;
		}
		if (!vt_below(200000)) {
			int pi = sc->pkg, i;

			for (i = 0; i < NCPU; i++)
				if (S.cpu[pi * NCPU + i].online)
					cpu_offline(pi * NCPU + i);
			continue;
		}
		if (!vt_below(5000))
			inject_reset(vt_below(NPKG));
		if (!vt_below(100000))
			inject_gap();
		if (!vt_below(20000)) {
			/* a package goes quiet: idle tails, learning runs */
			struct spkg *pk = &S.pk[vt_below(NPKG)];

			pk->quiet_until = S.now + (vt_below(2) ?
				vt_range(VT_MS, 6 * VT_MS) :
				vt_range(150 * VT_MS, 500 * VT_MS));
			S.quiets++;
		}
		sched_event(best);
	}
	vt_diag("%s: esu %u/%u w %u/%u policy %u origin %u/%u period %llu "
		"us, %d tasks: %llu events, %llu closes, %llu lost, %llu "
		"wraps, %llu resets, %llu overruns, %llu hotplugs, %llu gaps, "
		"%llu unread, %llu quiet, %llu learned, lag %llu/%llu/%llu, "
		"%llu settles, %.1f s simulated",
		name, S.pk[0].ctr[0].esu, S.pk[1].ctr[0].esu,
		S.pk[0].ctr[0].width, S.pk[1].ctr[0].width, policy,
		S.pk[0].p.static_origin, S.pk[1].p.static_origin,
		(unsigned long long)period / 1000, S.ntask,
		(unsigned long long)S.events, (unsigned long long)S.closes,
		(unsigned long long)S.lost_epochs,
		(unsigned long long)S.wraps, (unsigned long long)S.resets,
		(unsigned long long)S.overruns,
		(unsigned long long)S.hotplugs, (unsigned long long)S.gaps,
		(unsigned long long)S.unread, (unsigned long long)S.quiets,
		(unsigned long long)S.learns, (unsigned long long)S.lag_busy,
		(unsigned long long)S.lag_tail, (unsigned long long)S.lag_kept,
		(unsigned long long)S.settles, (double)S.now / 1e9);
}

/* Totals of one mode; what the injections and models exercised. */
struct totals {
	u64 err[E_NR];
	char first[E_NR][260];
	u64 events, closes, resets, overruns, wraps, lost, hotplugs, gaps;
	u64 unread, quiets, learns, lag_busy, lag_tail, lag_kept;
	u64 lag_merged, lag_ns;
};

static void run_mode(struct totals *T, bool lag_mode, u64 per_esu,
		     u64 long_run)
{
	unsigned int esu, e;

	for (esu = 0; esu <= 32; esu++) {
		char name[48];

		snprintf(name, sizeof(name), esu < 32 ? "%s esu %u" :
			 "%s long run", lag_mode ? "lag" : "no lag", esu);
		run(name, lag_mode, esu < 32 ? esu : 14,
		    esu < 32 ? per_esu : long_run);
		for (e = 0; e < E_NR; e++) {
			if (S.err[e] && !T->err[e])
				snprintf(T->first[e], sizeof(T->first[e]),
					 "%s: %s", name, S.first[e]);
			T->err[e] += S.err[e];
		}
		T->events += S.events;
		T->closes += S.closes;
		T->resets += S.resets;
		T->overruns += S.overruns;
		T->wraps += S.wraps;
		T->lost += S.lost_epochs;
		T->hotplugs += S.hotplugs;
		T->gaps += S.gaps;
		T->unread += S.unread;
		T->quiets += S.quiets;
		T->learns += S.learns;
		T->lag_busy += S.lag_busy;
		T->lag_tail += S.lag_tail;
		T->lag_kept += S.lag_kept;
		T->lag_merged += S.lag_merged;
		T->lag_ns = S.pk[0].lag;
	}
}

static void report(const struct totals *T, bool lag_mode)
{
	const char *m = lag_mode ? "default lag" : "lag_ns 0";
	unsigned int e;

	vt_diag("%s: %llu events, %llu closes, %llu lost epochs, %llu wraps, "
		"%llu resets, %llu overruns, %llu hotplugs, %llu gaps, %llu "
		"unread PKG, %llu quiet periods, %llu learned, lag share in "
		"%llu busy and %llu idle epochs, list kept %llu times, %llu "
		"unseen busy epochs merged into it", m,
		(unsigned long long)T->events, (unsigned long long)T->closes,
		(unsigned long long)T->lost, (unsigned long long)T->wraps,
		(unsigned long long)T->resets, (unsigned long long)T->overruns,
		(unsigned long long)T->hotplugs, (unsigned long long)T->gaps,
		(unsigned long long)T->unread, (unsigned long long)T->quiets,
		(unsigned long long)T->learns,
		(unsigned long long)T->lag_busy,
		(unsigned long long)T->lag_tail,
		(unsigned long long)T->lag_kept,
		(unsigned long long)T->lag_merged);
	for (e = 0; e < E_NR; e++) {
		if (!vt_eq(T->err[e], 0, "%s: %s", m, e_name[e]))
			vt_diag("first: %s", T->first[e]);
	}
	/* the injections did happen, or the checks above proved little */
	vt_ok(T->events >= 1000000, "%s: at least 10^6 events (%llu)", m,
	      (unsigned long long)T->events);
	vt_ok(T->wraps > 0, "%s: counters wrapped (%llu)", m,
	      (unsigned long long)T->wraps);
	vt_ok(T->resets > 0, "%s: resets injected and seen (%llu)", m,
	      (unsigned long long)T->resets);
	vt_ok(T->overruns > 0, "%s: multi-wrap gaps injected and seen (%llu)",
	      m, (unsigned long long)T->overruns);
	vt_ok(T->hotplugs > 0, "%s: hotplug exercised (%llu)", m,
	      (unsigned long long)T->hotplugs);
	vt_ok(T->unread > 0, "%s: unreadable PKG, then a baseline (%llu)", m,
	      (unsigned long long)T->unread);
	vt_ok(T->learns > 0, "%s: P_static learned from idle runs (%llu)", m,
	      (unsigned long long)T->learns);
	if (!lag_mode) {
		vt_ok(!T->lag_busy && !T->lag_tail && !T->lag_kept &&
		      !T->lag_merged, "%s: no lag share", m);
		return;
	}
	vt_eq(T->lag_ns, 500000, "%s: vr_pkg_init() lag is half a 1 ms step",
	      m);
	vt_ok(T->lag_busy > 0, "%s: lag share given in busy epochs (%llu)", m,
	      (unsigned long long)T->lag_busy);
	vt_ok(T->lag_tail > 0, "%s: idle tails given to the last busy epoch "
	      "(%llu)", m, (unsigned long long)T->lag_tail);
	vt_ok(T->lag_kept > 0, "%s: lag list kept across idle closes (%llu)",
	      m, (unsigned long long)T->lag_kept);
	vt_ok(T->lag_merged > 0, "%s: busy epochs no read showed merged into "
	      "the list (%llu)", m, (unsigned long long)T->lag_merged);
}

int main(int argc, char **argv)
{
	static struct totals T[2];
	u64 per_esu = 100000, long_run = 3000000;
	int mode;

	if (argc > 1)	/* scale, for a quick look: test_property 0.1 */
		per_esu = (u64)(per_esu * atof(argv[1])),
		long_run = (u64)(long_run * atof(argv[1]));
	vt_start("vmrapl core: properties under random schedules");
	vt_seed(0x70726f70ULL);

	for (mode = 0; mode < 2; mode++)
		run_mode(&T[mode], mode, per_esu, long_run);
	for (mode = 0; mode < 2; mode++)
		report(&T[mode], mode);
	return vt_done();
}
