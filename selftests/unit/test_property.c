// SPDX-License-Identifier: GPL-2.0
/*
 * Property tests of the accounting core under random schedules.
 *
 * A simulated host of 2 packages x 8 CPUs runs VMs (several vCPUs each,
 * migrating between CPUs and packages), untracked host tasks and idle,
 * with a simulated RAPL counter per package and domain (ESU quantization,
 * ~1 ms jittered hardware updates, 32- or 64-bit wrap).  The core is
 * driven exactly like the kernel glue drives it: an event per switch,
 * epochs closed lazily by fold + read + commit, hotplug with offline /
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
 *  - the split: static / dynamic by the documented rule (P_static x dt
 *    plus the carried debt), to_busy by the policy (occupied: each busy
 *    CPU-ns carries P_static / online CPUs), other domains following PKG,
 *    and each account's share == to_busy x r / B within 1 eu.
 *
 * 32 runs, one per ESU 0..31 of package 0 (package 1 random), random
 * policy each, then one long run; well over 10^6 events in all.
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
	E_HOST, E_NEEDED, E_NR
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
	[E_LOST] = "lost epochs attribute nothing; clean ones lose nothing",
	[E_STATIC] = "static / dynamic split: P_static x dt + carried debt",
	[E_TO_BUSY] = "to_busy by the static policy",
	[E_DOMS] = "other domains follow the PKG split",
	[E_SHARE] = "each share == to_busy x r / B within 1 eu",
	[E_HOST] = "host bucket == to_busy x untracked ns / B within 1 eu",
	[E_NEEDED] = "event_needed() false only when nothing changes",
};

struct task {
	bool vcpu;
	int cpu;			/* global CPU it runs on, -1 */
	u64 dyn_uw, core_uw, dram_uw;
	struct vr_acct acct[NPKG];
	u64 truth_ns[NPKG];		/* in the open epoch */
	u64 prev_e[NPKG][VR_NDOM], prev_ns[NPKG];
};

struct scpu {
	int pkg;
	int task;			/* -1 idle */
	bool online;
	u64 last;			/* truth folded up to here */
	u64 next;			/* next event (or online time) */
};

struct spkg {
	struct vr_pkg p;
	struct vr_cpu cpu[NCPU];
	struct vr_cpu *cpus[NCPU];
	struct vt_rapl ctr[VR_NDOM];
	u32 doms;
	u64 static_uw, core_static_uw, dram_static_uw;
	u64 truth_busy;			/* in the open epoch */
	u64 srem;			/* shadow of the static split */
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
	u64 now;
	u64 events, closes, lost_epochs, resets, overruns, wraps, hotplugs;
	u64 gaps;
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

static u64 range_units_j(const struct vt_rapl *r)
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
	vt_rapl_set_power(&pk->ctr[0], S.now, p);
	vt_rapl_set_power(&pk->ctr[1], S.now, c);
	vt_rapl_set_power(&pk->ctr[2], S.now, d);
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

/* |got * B - T * r| < B: the share is within 1 eu of the exact one. */
static bool within_1eu(u64 got, u64 T, u64 r, u64 B)
{
	vt_u128 lhs = (vt_u128)got * B, rhs = (vt_u128)T * r;

	return (lhs > rhs ? lhs - rhs : rhs - lhs) < B;
}

static void check_close(int pi, u64 B, u64 dt, const u64 *raw, u32 valid,
			u64 static_uw, u64 debt_in)
{
	struct spkg *pk = &S.pk[pi];
	struct vr_pkg *p = &pk->p;
	struct vr_pkg_stats st[VR_NDOM], dl[VR_NDOM];
	u64 dwraps = p->wraps - pk->prev_wraps;
	u64 dresets = p->resets - pk->prev_resets;
	u64 doverruns = p->overruns - pk->prev_overruns;
	u64 to_busy[VR_NDOM], sum[VR_NDOM] = {}, R = 0;
	bool lost, expect_reset = false, injected = false;
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
		struct vt_rapl *r = &pk->ctr[d];
		vt_s128 u = vt_rapl_units(r), du = u - pk->last_units[d];
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
			/* could max power over dt wrap the register twice? */
			long double maxj = (long double)MAX_POWER_UW * dt /
					   1e15L;
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

	lost = pk->rebase_pending || dresets || doverruns;
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

	/* the split, for clean epochs */
	if (!lost) {
		u64 de = dl[0].sampled, want, stat, exp_tb, cap;

		/*
		 * The debt carried in is read from the core (its cap is a
		 * tuning choice); what is checked is the rule: static =
		 * min(de, P_static x dt + debt), and the shortfall (at most)
		 * is carried out.
		 */
		want = vr_energy_eu(static_uw, dt, &pk->srem) + debt_in;
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
		if (dl[0].static_e != stat || dl[0].dynamic != de - stat)
			fail(E_STATIC, "pkg %d: static %llu dynamic %llu, "
			     "expected %llu %llu", pi,
			     (unsigned long long)dl[0].static_e,
			     (unsigned long long)dl[0].dynamic,
			     (unsigned long long)stat,
			     (unsigned long long)(de - stat));
		cap = (u64)pk->online * dt;
		if (!B)
			exp_tb = 0;
		else if (S.policy == VR_STATIC_BUSY)
			exp_tb = de;
		else if (S.policy == VR_STATIC_NONE)
			exp_tb = de - stat;
		else
			exp_tb = de - stat + (cap ? mul_div_floor(stat,
					B < cap ? B : cap, cap) : 0);
		if (to_busy[0] != exp_tb)
			fail(E_TO_BUSY, "pkg %d policy %u: to_busy %llu "
			     "expected %llu (de %llu stat %llu B %llu cap "
			     "%llu)", pi, S.policy,
			     (unsigned long long)to_busy[0],
			     (unsigned long long)exp_tb,
			     (unsigned long long)de,
			     (unsigned long long)stat,
			     (unsigned long long)B, (unsigned long long)cap);
		for (d = 1; d < VR_NDOM; d++) {
			u64 e = de ? mul_div_floor(dl[d].sampled, to_busy[0],
						   de) : 0;

			if (to_busy[d] != e)
				fail(E_DOMS, "pkg %d dom %u: to_busy %llu "
				     "expected %llu", pi, d,
				     (unsigned long long)to_busy[d],
				     (unsigned long long)e);
			if (dl[d].static_e || dl[d].dynamic)
				fail(E_DOMS, "pkg %d dom %u has a static "
				     "split", pi, d);
		}
	}

	/* the accounts of this package */
	for (i = 0; i < S.ntask; i++) {
		struct task *t = &S.t[i];
		struct vr_acct *a = &t->acct[pi];
		u64 r = a->ns - t->prev_ns[pi];

		if (!t->vcpu)
			continue;
		if (a->ns < t->prev_ns[pi])
			fail(E_MONO, "task %d ns went back", i);
		if (r != t->truth_ns[pi])
			fail(E_ACCT_NS, "task %d pkg %d: ns %llu truth %llu", i,
			     pi, (unsigned long long)r,
			     (unsigned long long)t->truth_ns[pi]);
		R += r;
		for (d = 0; d < VR_NDOM; d++) {
			u64 e = a->energy[d] - t->prev_e[pi][d];

			if (a->energy[d] < t->prev_e[pi][d])
				fail(E_MONO, "task %d energy went back", i);
			if (B ? !within_1eu(e, to_busy[d], r, B) : e != 0)
				fail(E_SHARE, "task %d pkg %d dom %u: %llu eu "
				     "for %llu of %llu ns of %llu eu", i, pi,
				     d, (unsigned long long)e,
				     (unsigned long long)r,
				     (unsigned long long)B,
				     (unsigned long long)to_busy[d]);
			sum[d] += a->energy[d];
			t->prev_e[pi][d] = a->energy[d];
		}
		t->prev_ns[pi] = a->ns;
		t->truth_ns[pi] = 0;
	}
	for (d = 0; d < VR_NDOM; d++) {
		if (sum[d] != st[d].tracked)
			fail(E_ACCT_SUM, "pkg %d dom %u: accounts %llu tracked "
			     "%llu", pi, d, (unsigned long long)sum[d],
			     (unsigned long long)st[d].tracked);
		if (B && R <= B &&
		    !within_1eu(dl[d].host, to_busy[d], B - R, B))
			fail(E_HOST, "pkg %d dom %u: host %llu for %llu of "
			     "%llu ns of %llu", pi, d,
			     (unsigned long long)dl[d].host,
			     (unsigned long long)(B - R),
			     (unsigned long long)B,
			     (unsigned long long)to_busy[d]);
		pk->prev[d] = st[d];
	}

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

static void close_pkg(int pi)
{
	struct spkg *pk = &S.pk[pi];
	u64 raw[VR_NDOM] = {}, B, dt, static_uw, debt_in;
	u32 valid = pk->doms;
	unsigned int d;
	int i;

	if (!vr_pkg_stale(&pk->p, S.now) || !vr_trylock(&pk->p.close_lock))
		return;
	for (i = 0; i < NCPU; i++)
		truth_fold(pi * NCPU + i);
	B = vr_pkg_close_fold(&pk->p, S.now);
	for (d = 0; d < VR_NDOM; d++)
		if (pk->doms & (1U << d))
			raw[d] = vt_rapl_read(&pk->ctr[d], S.now);
	/* now and then a domain cannot be read */
	if ((pk->doms & 4) && !vt_below(2000))
		valid &= ~4U;
	dt = S.now - pk->p.t_last;
	static_uw = pk->p.p_static_uw;
	debt_in = pk->p.static_debt;
	vr_pkg_close_commit(&pk->p, S.now, raw, valid, 0);
	vr_unlock(&pk->p.close_lock);
	check_close(pi, B, dt, raw, valid, static_uw, debt_in);
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
	bool busy;
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
	if (sc->task >= 0 && sc->task != nt)
		S.t[sc->task].cpu = -1;
	if (nt >= 0)
		S.t[nt].cpu = g;
	sc->task = nt;
	pkg_power(pk, sc->pkg);

	busy = nt >= 0;
	a = busy && S.t[nt].vcpu ? &S.t[nt].acct[sc->pkg] : NULL;
	if (vr_cpu_event_needed(c, busy, a))
		vr_cpu_event(c, S.now, busy, a);
	else if (c->busy != busy || c->cur || a)
		fail(E_NEEDED, "cpu %d", g);
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
	struct vt_rapl *r = &pk->ctr[d];
	u64 bound = 3 * VT_MS, range, m, k, cur;
	vt_u128 mu;

	if (!(pk->doms & (1U << d)) || pk->reset_dom >= 0 || pk->base_next[d])
		return;
	range = r->width >= 64 ? ~0ULL : 1ULL << r->width;
	/* units the package could count over @bound, plus slack */
	mu = vt_fj_to_units((vt_u128)MAX_POWER_UW * bound, r->esu) + 4;
	if (r->width < 64 && mu >= range / 8)
		return;
	m = (u64)mu;
	cur = (u64)vt_rapl_units(r) & vt_mask(r->width);
	/*
	 * Back by more than what can accrue before the next read (so that
	 * the register cannot pass its old value again), and by at most half
	 * the range (so that the wrap delta is larger than max power allows).
	 */
	if (r->width >= 64) {
		/* a software counter restarts near 0 */
		if (cur < 4 * m)
			return;
		vt_rapl_reset(r, vt_below(cur - 2 * m));
	} else {
		k = vt_range(2 * m, range / 2);
		vt_rapl_reset(r, (cur - k) & vt_mask(r->width));
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
	u64 near = (u64)vt_fj_to_units((vt_u128)100000000ULL * VT_SEC, esu);

	if (width >= 64)
		return vt_below(1ULL << 32);
	if (vt_below(2))
		return vt_mask(width) - vt_below(near + 1);
	return vt_rand() & vt_mask(width);
}

static void setup(u32 esu0, u8 policy, unsigned int nvm, u64 *period)
{
	int pi, i, v, k;

	memset(&S, 0, sizeof(S));
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
		/*
		 * The per-epoch split checks below model the split without
		 * the lag share; test_epoch and the simulator cover it.
		 */
		pk->p.lag_ns = 0;
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
		vt_rapl_follow(&pk->ctr[1], &pk->ctr[0]);
		vt_rapl_follow(&pk->ctr[2], &pk->ctr[0]);
		vr_pkg_set_domain(&pk->p, 0, esu, width);
		if (pk->doms & 2)
			vr_pkg_set_domain(&pk->p, 1, esu, width);
		if (pk->doms & 4)
			vr_pkg_set_domain(&pk->p, 2, 16, 32);
		vr_pkg_set_static(&pk->p, pk->static_uw, VR_STATIC_PARAM);
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
		const struct vt_rapl *r = &S.pk[pi].ctr[0];
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

static void run(const char *name, u32 esu0, u64 nev)
{
	u64 period;
	u8 policy = vt_below(VR_STATIC_NR);
	unsigned int nvm = vt_range(2, MAXVM), e, g;
	u64 err_before = 0;

	for (e = 0; e < E_NR; e++)
		err_before += S.err[e];
	setup(esu0, policy, nvm, &period);

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
		sched_event(best);
	}
	vt_diag("%s: esu %u/%u w %u/%u policy %u period %llu us, %d tasks: "
		"%llu events, %llu closes, %llu lost, %llu wraps, %llu resets,"
		" %llu overruns, %llu hotplugs, %llu gaps, %.1f s simulated",
		name, S.pk[0].ctr[0].esu, S.pk[1].ctr[0].esu,
		S.pk[0].ctr[0].width, S.pk[1].ctr[0].width, policy,
		(unsigned long long)period / 1000, S.ntask,
		(unsigned long long)S.events, (unsigned long long)S.closes,
		(unsigned long long)S.lost_epochs,
		(unsigned long long)S.wraps, (unsigned long long)S.resets,
		(unsigned long long)S.overruns,
		(unsigned long long)S.hotplugs, (unsigned long long)S.gaps,
		(double)S.now / 1e9);
	(void)err_before;
}

int main(int argc, char **argv)
{
	static u64 total_err[E_NR];
	static char first[E_NR][260];
	u64 events = 0, closes = 0, resets = 0, overruns = 0, wraps = 0;
	u64 lost = 0, hotplugs = 0, gaps = 0;
	u64 per_esu = 100000, long_run = 3000000;
	unsigned int esu, e;

	if (argc > 1)	/* scale, for a quick look: test_property 0.1 */
		per_esu = (u64)(per_esu * atof(argv[1])),
		long_run = (u64)(long_run * atof(argv[1]));
	vt_start("vmrapl core: properties under random schedules");
	vt_seed(0x70726f70ULL);

	for (esu = 0; esu <= 32; esu++) {
		char name[32];

		snprintf(name, sizeof(name), esu < 32 ? "esu %u" : "long run",
			 esu);
		run(name, esu < 32 ? esu : 14, esu < 32 ? per_esu : long_run);
		for (e = 0; e < E_NR; e++) {
			if (S.err[e] && !total_err[e])
				snprintf(first[e], sizeof(first[e]), "%s: %s",
					 name, S.first[e]);
			total_err[e] += S.err[e];
		}
		events += S.events;
		closes += S.closes;
		resets += S.resets;
		overruns += S.overruns;
		wraps += S.wraps;
		lost += S.lost_epochs;
		hotplugs += S.hotplugs;
		gaps += S.gaps;
	}
	vt_diag("total: %llu events, %llu closes, %llu lost epochs, %llu "
		"wraps, %llu resets, %llu overruns, %llu hotplugs, %llu gaps",
		(unsigned long long)events, (unsigned long long)closes,
		(unsigned long long)lost, (unsigned long long)wraps,
		(unsigned long long)resets, (unsigned long long)overruns,
		(unsigned long long)hotplugs, (unsigned long long)gaps);

	for (e = 0; e < E_NR; e++) {
		if (!vt_eq(total_err[e], 0, "%s", e_name[e]))
			vt_diag("first: %s", first[e]);
	}
	/* the injections did happen, or the checks above proved little */
	vt_ok(events >= 1000000, "at least 10^6 events (%llu)",
	      (unsigned long long)events);
	vt_ok(wraps > 0, "counters wrapped (%llu)", (unsigned long long)wraps);
	vt_ok(resets > 0, "resets injected and seen (%llu)",
	      (unsigned long long)resets);
	vt_ok(overruns > 0, "multi-wrap gaps injected and seen (%llu)",
	      (unsigned long long)overruns);
	vt_ok(hotplugs > 0, "hotplug exercised (%llu)",
	      (unsigned long long)hotplugs);
	return vt_done();
}
