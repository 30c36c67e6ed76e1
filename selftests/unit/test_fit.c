// SPDX-License-Identifier: GPL-2.0
/*
 * The online fit of P_static (vr_fit_epoch(), vr_pkg_fit_update()), its
 * precedence, and the static / dynamic split of each account.
 *
 * A 16-CPU package whose true power is P_static + P_dyn x (busy CPUs),
 * with noise (each ms the power is off by up to +-NOISE), read through a
 * hardware-like counter (ESU 14, 32 bits, latched every ~1 ms with
 * jitter).  CPU i runs account i when it is busy; the number of busy CPUs
 * follows a load profile.  Epochs close lazily every 1 ms, the package
 * timer solves the fit every 100 ms, as in the kernel.
 *
 *  1. Recovery: with a load that varies, the fit finds P_static and P_dyn
 *     within 2 %, is used (origin fit), and its standard error covers the
 *     true error.  Also a load that stays between 4 and 12 CPUs and a
 *     mostly idle one.
 *     A package C-state floor (lower power when every CPU is idle) does
 *     not pull P_static down: only epochs with busy time are samples.
 *  2. Ill-conditioned input falls back: always busy, always idle (idle
 *     learning takes over), a constant partial load.
 *  3. Precedence: p_static_mw (PARAM) and MODEL > idle runs (final) >
 *     the host's other packages' floor > idle runs (provisional) > fit >
 *     unknown; a fit no longer conditioned
 *     is held.  A package offers its floor to the others only once it is
 *     final (not provisional), and only a learned one.
 *  4. Always busy: 'occupied' and 'busy' give every account the same
 *     energy whatever P_static is (within the rounding of one eu per
 *     epoch), so an unidentifiable intercept loses nothing.
 *  5. Each account's static part: P_static x its busy time / N under
 *     'occupied', the accounts' static parts add up to tracked_static.
 */
#include "vr_test.h"

#define NC		16
#define P_STATIC	40000000ULL	/* uW */
#define P_DYN		6000000ULL	/* uW per busy CPU */
#define TICK		250000ULL	/* ns between event checks */

struct fh {
	struct vr_pkg p;
	struct vr_cpu cpu[NC];
	struct vr_cpu *cpus[NC];
	struct vr_acct acct[NC];
	struct vrm_rapl ctr;
	u64 now, next_load, next_noise, next_fit;
	unsigned int k;		/* busy CPUs */
	double noise;		/* relative amplitude */
	u64 floor_uw;		/* power with every CPU idle, 0: P_STATIC */
	u64 closes;
};

/* Load profile: the next number of busy CPUs and how long it holds. */
typedef unsigned int (*load_fn)(u64 *hold);

static unsigned int load_vary(u64 *hold)
{
	*hold = vt_range(5 * VT_MS, 60 * VT_MS);
	return vt_below(NC + 1);
}

static unsigned int load_mid(u64 *hold)
{
	*hold = vt_range(5 * VT_MS, 60 * VT_MS);
	return 4 + vt_below(9);
}

static unsigned int load_low(u64 *hold)
{
	*hold = vt_range(5 * VT_MS, 60 * VT_MS);
	return vt_below(10) < 7 ? 0 : 1 + vt_below(2);
}

static unsigned int load_full(u64 *hold)
{
	*hold = 50 * VT_MS;
	return NC;
}

static unsigned int load_idle(u64 *hold)
{
	*hold = 50 * VT_MS;
	return 0;
}

static unsigned int load_half(u64 *hold)
{
	*hold = 50 * VT_MS;
	return NC / 2;
}

static void fh_init(struct fh *h, u64 static_uw, enum vr_static_origin o,
		    u8 policy, bool lag, double noise)
{
	int i;

	memset(h, 0, sizeof(*h));
	for (i = 0; i < NC; i++)
		h->cpus[i] = &h->cpu[i];
	vr_pkg_init(&h->p, h->cpus, NC, VT_MS, 1000000000ULL);
	vr_pkg_set_domain(&h->p, 0, 14, 32);
	vr_pkg_set_static(&h->p, static_uw, o);
	h->p.policy = policy;
	if (!lag)
		h->p.lag_ns = 0;
	h->noise = noise;
	vt_rapl_init(&h->ctr, 14, 32, 976563, 50000, 12345, 0);
	vrm_set_power(&h->ctr, 0, P_STATIC);
	for (i = 0; i < NC; i++) {
		vr_cpu_init(&h->cpu[i], &h->p);
		vr_lock(&h->p.close_lock);
		vr_cpu_online(&h->cpu[i], 0, false);
		vr_unlock(&h->p.close_lock);
	}
	h->next_fit = 100 * VT_MS;
}

static u32 fh_read(void *ctx, u64 *raw, u64 dt, u64 busy)
{
	struct fh *h = ctx;

	(void)dt;
	(void)busy;
	raw[0] = vrm_read(&h->ctr, h->now);
	return BIT(0);
}

static void fh_power(struct fh *h)
{
	double w = (double)(P_STATIC + P_DYN * h->k);

	if (!h->k && h->floor_uw)
		w = (double)h->floor_uw;	/* a package C-state */

	w *= 1.0 + h->noise * (2.0 * vt_unit() - 1.0);
	vrm_set_power(&h->ctr, h->now, (u64)w);
}

/* Run until @to with the load of @load. */
static void fh_run(struct fh *h, u64 to, load_fn load)
{
	u64 hold;
	int i;

	for (; h->now < to; h->now += TICK) {
		if (h->now >= h->next_load) {
			h->k = load(&hold);
			h->next_load = h->now + hold;
			for (i = 0; i < NC; i++) {
				bool busy = (unsigned int)i < h->k;
				struct vr_acct *a = busy ? &h->acct[i] : NULL;

				if (vr_cpu_event_needed(&h->cpu[i], busy, a))
					vr_cpu_event(&h->cpu[i], h->now, busy,
						     a);
			}
			fh_power(h);
		}
		if (h->now >= h->next_noise) {
			fh_power(h);
			h->next_noise = h->now + VT_MS;
		}
		if (vr_pkg_stale(&h->p, h->now) &&
		    vr_pkg_try_close(&h->p, h->now, fh_read, h))
			h->closes++;
		if (h->now >= h->next_fit) {
			vr_lock(&h->p.close_lock);
			vr_pkg_fit_update(&h->p);
			vr_unlock(&h->p.close_lock);
			h->next_fit = h->now + 100 * VT_MS;
		}
	}
}

static double w(u64 uw)
{
	return (double)uw / 1e6;
}

static void recovery(const char *what, load_fn load, double noise,
		     double tol_rel, double tol_dyn)
{
	static struct fh h;
	const struct vr_fit *f = &h.p.fit;
	double es, ed;

	fh_init(&h, 0, VR_STATIC_UNKNOWN, VR_STATIC_OCCUPIED, true, noise);
	fh_run(&h, 10 * VT_SEC, load);
	es = w(f->static_uw) - w(P_STATIC);
	ed = w(f->dyn_uw) - w(P_DYN);
	vt_diag("%s, noise %.0f%%: P_static %.3f W (error %+.3f W, %+.2f%%, "
		"standard error %.3f W), P_dyn %.3f W/CPU (%+.2f%%), %u blocks",
		what, noise * 100, w(f->static_uw), es,
		100 * es / w(P_STATIC), w(f->sd_uw), w(f->dyn_uw),
		100 * ed / w(P_DYN), f->blocks);
	/* in use, unless an idle run measured the floor (it comes first) */
	vt_ok((f->flags & VR_FIT_OK) &&
	      (h.p.idle_known || h.p.idle_prov ?
				h.p.static_origin == VR_STATIC_LEARNED &&
				h.p.p_static_uw == h.p.idle_uw :
				h.p.static_origin == VR_STATIC_FIT &&
				h.p.p_static_uw == f->good_uw),
	      "%s: the fit is well conditioned and in use (or the idle runs' %.3f W)",
	      what, w(h.p.idle_uw));
	vt_near(w(f->static_uw), w(P_STATIC), tol_rel * w(P_STATIC),
		"%s: P_static within %.0f%%", what, tol_rel * 100);
	vt_near(w(f->dyn_uw), w(P_DYN), tol_dyn * w(P_DYN),
		"%s: P_dyn within %.0f%%", what, tol_dyn * 100);
	vt_ok(es <= 4 * w(f->sd_uw) + 0.05 && es >= -4 * w(f->sd_uw) - 0.05,
	      "%s: the error is within 4 standard errors (+ 50 mW)", what);
}

/*
 * A package that drops to a 25 W floor when every CPU is idle (package
 * C-state) and draws 40 W + 6 W per busy CPU otherwise.  Blocks with no
 * busy time are not samples, so the floor does not pull the intercept
 * down: the fit finds the active baseline, 40 W.  The load is all idle
 * now and then for 5 to 60 ms, never 100 ms on end, and those stretches
 * measure the floor, which comes first: what switches on with the first
 * busy CPU is theirs, through the dynamic split.
 */
static void cstate_floor(void)
{
	static struct fh h;
	const struct vr_fit *f = &h.p.fit;

	fh_init(&h, 0, VR_STATIC_UNKNOWN, VR_STATIC_OCCUPIED, true, 0.05);
	h.floor_uw = 25000000;
	fh_run(&h, 10 * VT_SEC, load_vary);
	vt_diag("package C-state floor 25 W, active 40 W + 6 W/CPU: fit %.3f W "
		"(standard error %.3f W), P_dyn %.3f W/CPU, idle runs %.3f W",
		w(f->static_uw), w(f->sd_uw), w(f->dyn_uw), w(h.p.idle_uw));
	vt_ok(f->flags & VR_FIT_OK, "C-state floor: the fit is conditioned");
	vt_near(w(f->static_uw), w(P_STATIC), 0.05 * w(P_STATIC),
		"C-state floor: the fit's intercept is the active baseline "
		"(5%%), not the floor");
	vt_ok(h.p.static_origin == VR_STATIC_LEARNED && h.p.idle_known,
	      "C-state floor: short idle stretches learned the floor, in use");
	vt_near(w(h.p.idle_uw), 25.0, 0.5, "C-state floor: 25 W within 2%%");
}

static void ill(const char *what, load_fn load, u8 origin, double want_w)
{
	static struct fh h;

	fh_init(&h, 0, VR_STATIC_UNKNOWN, VR_STATIC_OCCUPIED, true, 0.05);
	fh_run(&h, 5 * VT_SEC, load);
	vt_diag("%s: fit flags %u, %u blocks, P_static %.3f W origin %s",
		what, h.p.fit.flags, h.p.fit.blocks, w(h.p.p_static_uw),
		vr_origin_names[h.p.static_origin]);
	vt_ok(!(h.p.fit.flags & (VR_FIT_OK | VR_FIT_HAVE)),
	      "%s: the fit is not conditioned", what);
	vt_eq(h.p.static_origin, origin, "%s: falls back to origin %s", what,
	      vr_origin_names[origin]);
	/* idle runs learn the running mean of their sums */
	vt_near(w(h.p.p_static_uw), want_w, want_w / 50 + 1e-9,
		"%s: P_static %.1f W (2%%)", what, want_w);
}

static void precedence(void)
{
	static struct fh h;

	/* p_static_mw wins; the fit is still computed and reported */
	fh_init(&h, 30000000, VR_STATIC_PARAM, VR_STATIC_OCCUPIED, true,
		0.05);
	fh_run(&h, 10 * VT_SEC, load_vary);
	vt_ok(h.p.static_origin == VR_STATIC_PARAM &&
	      h.p.p_static_uw == 30000000 && (h.p.fit.flags & VR_FIT_OK),
	      "param > fit: P_static stays 30 W, the fit (%.3f W) is reported",
	      w(h.p.fit.static_uw));
	/* so does a model's own idle power */
	fh_init(&h, 35000000, VR_STATIC_MODEL, VR_STATIC_OCCUPIED, true,
		0.05);
	fh_run(&h, 10 * VT_SEC, load_vary);
	vt_ok(h.p.static_origin == VR_STATIC_MODEL &&
	      h.p.p_static_uw == 35000000,
	      "model > fit: P_static stays 35 W");

	/* a package never all idle: the fit; idle time then takes over */
	fh_init(&h, 0, VR_STATIC_UNKNOWN, VR_STATIC_OCCUPIED, true, 0.05);
	fh_run(&h, 10 * VT_SEC, load_mid);
	vt_ok(h.p.static_origin == VR_STATIC_FIT &&
	      h.p.p_static_uw == h.p.fit.good_uw,
	      "fit > unknown: %.3f W from the fit", w(h.p.p_static_uw));
	/* a load that stops varying: the last good fit is held */
	fh_run(&h, 20 * VT_SEC, load_half);
	vt_ok(!(h.p.fit.flags & VR_FIT_OK) &&
	      h.p.static_origin == VR_STATIC_FIT &&
	      h.p.p_static_uw == h.p.fit.good_uw,
	      "constant load: the fit is no longer conditioned, the last "
	      "good one (%.3f W) is held", w(h.p.p_static_uw));
	/* the floor measured by an idle run comes before the fit */
	fh_run(&h, 22 * VT_SEC, load_idle);
	vt_ok(h.p.static_origin == VR_STATIC_LEARNED && h.p.idle_known &&
	      h.p.p_static_uw == h.p.idle_uw,
	      "idle runs > fit: %.3f W (the fit held %.3f W)",
	      w(h.p.p_static_uw), w(h.p.fit.good_uw));
	/* and stays when the load varies again */
	fh_run(&h, 32 * VT_SEC, load_vary);
	vt_ok(h.p.static_origin == VR_STATIC_LEARNED &&
	      (h.p.fit.flags & VR_FIT_OK),
	      "idle runs > a conditioned fit (%.3f W in use)",
	      w(h.p.p_static_uw));
}

static void host_set(struct fh *h, u64 uw)
{
	vr_lock(&h->p.close_lock);
	vr_pkg_set_host_floor(&h->p, uw);
	vr_unlock(&h->p.close_lock);
}

static u64 floor_of(struct fh *h)
{
	u64 uw;

	vr_lock(&h->p.close_lock);
	uw = vr_pkg_floor_uw(&h->p);
	vr_unlock(&h->p.close_lock);
	return uw;
}

/*
 * The floor the host's other packages learned: the static power of a
 * package that has no idle time of its own, above its fit, below its own
 * idle runs; what a package offers the others.
 */
static void host_floor(void)
{
	static struct fh h;

	fh_init(&h, 0, VR_STATIC_UNKNOWN, VR_STATIC_OCCUPIED, true, 0.05);
	host_set(&h, 25000000);
	fh_run(&h, 10 * VT_SEC, load_mid);
	vt_ok(h.p.static_origin == VR_STATIC_HOST &&
	      h.p.p_static_uw == 25000000 && (h.p.fit.flags & VR_FIT_OK),
	      "host floor > fit: P_static 25 W, the fit (%.3f W) reported",
	      w(h.p.fit.static_uw));
	vt_eq(floor_of(&h), 0, "a package never idle offers no floor");
	host_set(&h, 0);
	vt_ok(h.p.static_origin == VR_STATIC_FIT &&
	      h.p.p_static_uw == h.p.fit.good_uw,
	      "no host floor any more: back to the fit (%.3f W)",
	      w(h.p.p_static_uw));
	host_set(&h, 25000000);
	/* the package's own idle time: provisional from 5 ms, then final */
	fh_run(&h, 10 * VT_SEC + 50 * VT_MS, load_idle);
	vt_ok(h.p.static_origin == VR_STATIC_HOST && h.p.idle_prov &&
	      !h.p.idle_known && h.p.p_static_uw == 25000000,
	      "the host's floor > its own provisional one (%.3f W)",
	      w(h.p.idle_uw));
	vt_eq(floor_of(&h), 0, "a provisional floor is not offered");
	fh_run(&h, 11 * VT_SEC, load_idle);
	vt_ok(h.p.static_origin == VR_STATIC_LEARNED && h.p.idle_known,
	      "its own final floor > the host's (%.3f W)",
	      w(h.p.p_static_uw));
	vt_eq(floor_of(&h), h.p.idle_uw, "a final floor is offered");
	vt_near(w(floor_of(&h)), w(P_STATIC), w(P_STATIC) / 50,
		"the offered floor is the package's (2%%)");

	/* p_static_mw fixes the static power; it is not a floor to offer */
	fh_init(&h, 30000000, VR_STATIC_PARAM, VR_STATIC_OCCUPIED, true,
		0.05);
	host_set(&h, 25000000);
	fh_run(&h, 2 * VT_SEC, load_idle);
	vt_ok(h.p.static_origin == VR_STATIC_PARAM &&
	      h.p.p_static_uw == 30000000,
	      "param > host floor: P_static stays 30 W");
	vt_eq(floor_of(&h), 0, "a fixed static power is not offered");
}

/* Per account energy (PKG), for the policies and static powers below. */
static void always_busy(bool lag)
{
	static struct fh h;
	static const struct {
		u8 policy;
		u64 uw;
		enum vr_static_origin o;
	} c[] = {
		{ VR_STATIC_OCCUPIED, 0, VR_STATIC_UNKNOWN },
		{ VR_STATIC_OCCUPIED, P_STATIC, VR_STATIC_PARAM },
		{ VR_STATIC_OCCUPIED, 20000000, VR_STATIC_PARAM },
		{ VR_STATIC_BUSY, 0, VR_STATIC_UNKNOWN },
		{ VR_STATIC_BUSY, P_STATIC, VR_STATIC_PARAM },
	};
	u64 ref[NC], maxd = 0, ssum, closes = 0;
	unsigned int i, j;
	struct vr_pkg_stats st;

	for (j = 0; j < sizeof(c) / sizeof(c[0]); j++) {
		vt_seed(7);
		fh_init(&h, c[j].uw, c[j].o, c[j].policy, lag, 0.05);
		fh_run(&h, 3 * VT_SEC, load_full);
		closes = h.closes;
		ssum = 0;
		for (i = 0; i < NC; i++) {
			u64 e = h.acct[i].energy[0];

			if (!j)
				ref[i] = e;
			else if ((e > ref[i] ? e - ref[i] : ref[i] - e) > maxd)
				maxd = e > ref[i] ? e - ref[i] : ref[i] - e;
			ssum += h.acct[i].static_e[0];
		}
		vr_pkg_read_stats(&h.p, &st, 1);
		vt_ok(ssum == st.tracked_static &&
		      st.tracked_static + st.host_static <= st.static_e,
		      "always busy%s, policy %s, %.0f W: the accounts' static "
		      "parts add up to tracked_static", lag ? " (lag)" : "",
		      vr_policy_names[c[j].policy], w(c[j].uw));
	}
	vt_diag("always busy%s: largest difference of an account's energy "
		"between policies and static powers: %llu eu over %llu epochs",
		lag ? " (lag)" : "", (unsigned long long)maxd,
		(unsigned long long)closes);
	vt_ok(maxd <= 2 * closes,
	      "always busy%s: occupied and busy, 0, 20 or 40 W: every account "
	      "gets the same energy (within 2 eu per epoch)",
	      lag ? " (lag)" : "");
}

static void account_split(void)
{
	static struct fh h;
	double exp_s, got_s, rel, worst = 0;
	unsigned int i;

	fh_init(&h, P_STATIC, VR_STATIC_PARAM, VR_STATIC_OCCUPIED, true,
		0.05);
	fh_run(&h, 5 * VT_SEC, load_vary);
	for (i = 0; i < NC; i++) {
		if (!h.acct[i].ns)
			continue;
		exp_s = w(P_STATIC) / NC * (double)h.acct[i].ns / 1e9;
		got_s = vt_eu_j(h.acct[i].static_e[0]);
		rel = (got_s - exp_s) / exp_s;
		if (rel < 0)
			rel = -rel;
		if (rel > worst)
			worst = rel;
	}
	vt_diag("occupied: worst account static part off by %.3f%% of "
		"P_static / N x its busy time", worst * 100);
	vt_ok(worst < 0.01,
	      "occupied: each account's static part is P_static / N x its "
	      "busy time (1%%)");
}

int main(void)
{
	vt_start("vmrapl core: online fit of P_static, precedence, "
		 "static / dynamic per account");
	vt_seed(11);

	recovery("load 0-16 CPUs", load_vary, 0.05, 0.02, 0.02);
	recovery("load 0-16 CPUs", load_vary, 0.20, 0.03, 0.03);
	/* less spread: a standard error of ~1.8 %, as the fit reports */
	recovery("load 4-12 CPUs", load_mid, 0.05, 0.04, 0.04);
	/* the slope of a load of 0-2 CPUs is known less well */
	recovery("mostly idle", load_low, 0.05, 0.02, 0.08);

	cstate_floor();

	ill("always busy", load_full, VR_STATIC_UNKNOWN, 0);
	ill("always idle", load_idle, VR_STATIC_LEARNED, w(P_STATIC));
	ill("8 of 16 CPUs always busy", load_half, VR_STATIC_UNKNOWN, 0);

	precedence();
	host_floor();
	always_busy(false);
	always_busy(true);
	account_split();
	return vt_done();
}
