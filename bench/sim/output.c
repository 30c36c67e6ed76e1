// SPDX-License-Identifier: GPL-2.0
/*
 * vrsim: the error statistics of a run, their spread over seeds, and
 * their markdown and JSON.
 */
#include "vrsim.h"

const char *const row_name[NROW] = {
	"vmrapl (learned static)", "vmrapl p_static +25 %",
	"vmrapl p_static -25 %", "vmrapl per-core (core energy)",
	"qemu-vmsr 10", "scaphandre 1.0 as coded",
	"scaphandre units fixed", "kepler 0.10",
	"naive (5 s CPU-time share)"
};
static const char *const row_key[NROW] = {
	"vmrapl", "vmrapl_static_hi", "vmrapl_static_lo", "vmrapl_percore",
	"qemu_vmsr",
	"scaphandre", "scaphandre_units_fixed", "kepler", "naive"
};
static const char *const judge_name[NJUDGE] = {
	"occupied", "dynamic-only", "busy-share", "own rule"
};
static const char *const judge_key[NJUDGE] = {
	"occupied", "dynamic", "busy", "own"
};
static const char *own_name[NROW] = {
	"the occupied truth", "the occupied truth", "the occupied truth",
	"the occupied truth",
	"its formula with exact CPU time and energy",
	"share of host capacity x host energy, exact inputs",
	"share of host capacity x host energy, exact inputs",
	"usage ratio x CPU-time share x energy, exact inputs",
	"CPU-time share x package energy, exact energy"
};
static const int wsec[NWIN] = { 1, 5, 60 };
static const char *const win_key[NWIN] = { "1s", "5s", "60s" };

/* vmrapl's rows' own rule: the truth of their policy (--policy). */
static void own_names(void)
{
	static const char *const by[NTRUTH] = {
		[J_OCC] = "the occupied truth",
		[J_DYN] = "the dynamic-only truth (policy none)",
		[J_BUSY] = "the busy-share truth (policy busy)",
	};
	int a;

	for (a = R_VR; a <= R_VR_CORE; a++)
		own_name[a] = by[own_truth()];
}

/* --------------------------------------------------------- one run */

static void stat_add(struct stat *s, double x)
{
	s->sum += x;
	if (x > s->max)
		s->max = x;
	s->n++;
}

static double stat_mean(const struct stat *s)
{
	return s->n ? s->sum / (double)s->n : NAN;
}

void analyse(struct result *r)
{
	int vi, wi, a, j;
	double tr = 0;

	for (wi = 0; wi < NWIN; wi++) {
		int w = wsec[wi], k;
		double thr = 0.05 * w;		/* J */

		for (k = 0; (k + 1) * w <= S.nsec; k++) {
			for (vi = 0; vi < S.nvm; vi++) {
				const double *s0 = &S.vm[vi].snap[
					(size_t)k * w * SNAPW];
				const double *s1 = &S.vm[vi].snap[
					(size_t)(k + 1) * w * SNAPW];

				for (a = 0; a < NROW; a++) {
					double e = s1[NTRUTH + a] -
						   s0[NTRUTH + a];

					for (j = 0; j < NJUDGE; j++) {
						int o = j < NTRUTH ? j :
							NTRUTH + NROW + a;
						double ref = s1[o] - s0[o];

						if (ref < thr)
							continue;
						stat_add(&r->err[a][j][wi],
							 100 * fabs(e - ref) /
							 ref);
					}
				}
			}
		}
	}
	/* --mem-uncore: vmrapl's DRAM estimates under the DRAM truths */
	for (wi = 0; mem_uncore && wi < NWIN; wi++) {
		int w = wsec[wi], k;
		double thr = 0.05 * w;		/* J */

		for (k = 0; (k + 1) * w <= S.nsec; k++)
			for (vi = 0; vi < S.nvm; vi++) {
				const double *s0 = &S.vm[vi].snap[
					(size_t)k * w * SNAPW + SNAP_DRAM];
				const double *s1 = &S.vm[vi].snap[
					(size_t)(k + 1) * w * SNAPW + SNAP_DRAM];

				for (a = 0; a < NVR; a++)
					for (j = 0; j < NTRUTH; j++) {
						double e = s1[NTRUTH + a] -
							   s0[NTRUTH + a];
						double ref = s1[j] - s0[j];

						if (ref < thr)
							continue;
						stat_add(&r->dram_err[a][j][wi],
							 100 * fabs(e - ref) /
							 ref);
					}
			}
	}
	for (vi = 0; vi < S.nvm; vi++)
		tr += S.vm[vi].snap[(size_t)S.nsec * SNAPW + J_OCC];
	r->truth_j = tr;
	for (a = 0; a < NROW; a++) {
		double est = 0;

		for (vi = 0; vi < S.nvm; vi++)
			est += S.vm[vi].snap[(size_t)S.nsec * SNAPW + NTRUTH +
					     a];
		r->net[a] = tr > 0 ? 100 * (est - tr) / tr : 0;
	}
}

/* ------------------------------------------------------ over seeds */

struct spread {
	double mean, min, max, wmax;	/* wmax: worst single window */
	int n;
};

static struct spread over_seeds(const struct wres *wr, int a, int j, int wi)
{
	struct spread s = { 0, INFINITY, -INFINITY, 0, 0 };
	int k;

	for (k = 0; k < wr->nseed; k++) {
		const struct stat *st = &wr->r[k].err[a][j][wi];
		double m = stat_mean(st);

		if (isnan(m))
			continue;
		s.mean += m;
		s.min = fmin(s.min, m);
		s.max = fmax(s.max, m);
		s.wmax = fmax(s.wmax, st->max);
		s.n++;
	}
	if (!s.n)
		s.mean = s.min = s.max = s.wmax = NAN;
	else
		s.mean /= s.n;
	return s;
}

static void fmt_pct(char *b, size_t n, double x)
{
	if (isnan(x))
		snprintf(b, n, "-");
	else if (x >= 1000)
		snprintf(b, n, "%.0f", x);
	else if (x >= 10)
		snprintf(b, n, "%.1f", x);
	else
		snprintf(b, n, "%.2f", x);
}

/* "mean (min-max)", or "mean" for one seed. */
static const char *cell(const struct wres *wr, int a, int j, int wi)
{
	static char buf[8][64];
	static int slot;
	struct spread s = over_seeds(wr, a, j, wi);
	char m[16], lo[16], hi[16], *b = buf[slot++ % 8];

	fmt_pct(m, sizeof(m), s.mean);
	if (wr->nseed < 2 || isnan(s.mean)) {
		snprintf(b, 64, "%s", m);
		return b;
	}
	fmt_pct(lo, sizeof(lo), s.min);
	fmt_pct(hi, sizeof(hi), s.max);
	snprintf(b, 64, "%s (%s–%s)", m, lo, hi);
	return b;
}

/* The released tools; the naive baseline is none of them. */
static bool is_anchor(int a)
{
	return a >= R_QEMU && a <= R_KEPLER;
}

/* ---------------------------------------------------------- output */

/* Are the model options (model.c) all off? */
bool model_default(void)
{
	return !pc6_delay_ns && !no_pc6 && core_latch_ns == CORE_LATCH_NS &&
	       update_jitter == 5 && ctr_esu == 14 && !smt && !leakage &&
	       !mem_uncore;
}

/* The DRAM table (--mem-uncore): vmrapl's rows under the DRAM truths. */
static void print_dram(const struct wres *res, int n)
{
	int i, a, j, k;

	printf("\n### DRAM per-VM error over 60 s windows, under each "
	       "truth\n\n");
	printf("vmrapl's rows fed the DRAM domain counter (2^-16 J), which "
	       "the core splits as it splits the package's energy; the DRAM "
	       "truths (model.c): its traffic's part to the task whose "
	       "traffic it is (dynamic-only), plus the DRAM idle part per "
	       "occupied CPU (occupied), or the DRAM power over the busy "
	       "CPUs (busy-share).\n\n");
	printf("| workload | algorithm | occupied | dynamic-only | "
	       "busy-share |\n|---|---|---:|---:|---:|\n");
	for (i = 0; i < n; i++) {
		const struct wres *wr = &res[i];

		for (a = 0; a < NVR; a++) {
			printf("| %s | %s |", a ? "" : wr->wl, row_name[a]);
			for (j = 0; j < NTRUTH; j++) {
				struct spread s = { 0, INFINITY, -INFINITY,
						    0, 0 };
				char m[16], lo[16], hi[16];

				for (k = 0; k < wr->nseed; k++) {
					double x = stat_mean(
						&wr->r[k].dram_err[a][j][W_60]);

					if (isnan(x))
						continue;
					s.mean += x;
					s.min = fmin(s.min, x);
					s.max = fmax(s.max, x);
					s.n++;
				}
				if (!s.n) {
					printf(" - |");
					continue;
				}
				fmt_pct(m, sizeof(m), s.mean / s.n);
				fmt_pct(lo, sizeof(lo), s.min);
				fmt_pct(hi, sizeof(hi), s.max);
				if (wr->nseed < 2)
					printf(" %s |", m);
				else
					printf(" %s (%s–%s) |", m, lo, hi);
			}
			printf("\n");
		}
	}
}

void print_md(const struct wres *res, int n)
{
	int i, a, j, wi, k;

	own_names();
	printf("vmrapl: %llu us epochs, counter lag share lag_ns = %llu us%s "
	       "(update interval %s %llu us +- %llu us); "
	       "counter latched every %llu us +- %g %%.  %d seed%s per "
	       "workload, %.0f s each.\n\n",
	       (unsigned long long)period_ns / 1000,
	       (unsigned long long)lag_used_ns / 1000,
	       lag_ns < 0 ? "" : " (--lag-us)",
	       step_used.measured ? "measured" : "not measured: default",
	       (unsigned long long)step_used.interval_ns / 1000,
	       (unsigned long long)step_used.spread_ns / 1000,
	       (unsigned long long)latch_ns / 1000,
	       update_jitter, res[0].nseed, res[0].nseed > 1 ? "s" : "",
	       res[0].r[0].secs);
	if (!model_default()) {
		printf("The model (options, model.c): ");
		if (no_pc6)
			printf("a package never draws its floor alone "
			       "(--no-pc6)");
		else if (pc6_delay_ns)
			printf("a package draws its uncore %.1f us after its "
			       "last core idles, then the floor alone",
			       (double)pc6_delay_ns / 1000);
		else
			printf("a package draws its floor alone as its last "
			       "core idles");
		printf("; the per-core counters latched every %.1f us; ESU "
		       "%u (2^-%u J)", (double)core_latch_ns / 1000,
		       ctr_esu, ctr_esu);
		if (smt)
			printf("; two threads per core (--smt)");
		if (leakage)
			printf("; leakage with voltage and temperature "
			       "(--leakage)");
		if (mem_uncore)
			printf("; uncore and DRAM with memory traffic "
			       "(--mem-uncore)");
		printf(".\n\n");
	}
	if (vr_policy != VR_STATIC_OCCUPIED)
		printf("vmrapl's rows: static_policy=%s (--policy).\n\n",
		       vr_policy_names[vr_policy]);

	printf("### Per-VM error over 60 s windows, under each truth\n\n");
	printf("Mean absolute error of per-VM energy, %% of the judge's "
	       "energy; each cell is the mean over seeds of each seed's "
	       "mean, with the seeds' min–max.\n\n");
	printf("| workload | algorithm | occupied | dynamic-only | "
	       "busy-share | own rule | net vs occupied |\n"
	       "|---|---|---:|---:|---:|---:|---:|\n");
	for (i = 0; i < n; i++) {
		const struct wres *wr = &res[i];

		for (a = 0; a < NROW; a++) {
			double net = 0;

			for (k = 0; k < wr->nseed; k++)
				net += wr->r[k].net[a] / wr->nseed;
			printf("| %s | %s |", a ? "" : wr->wl, row_name[a]);
			for (j = 0; j < NJUDGE; j++)
				printf(" %s |", cell(wr, a, j, W_60));
			printf(" %+.2f %% |\n", net);
		}
	}
	printf("\nOwn rule: ");
	for (a = 0; a < NROW; a++)
		if (a == R_VR || a >= R_QEMU)
			printf("%s: %s%s", row_name[a], own_name[a],
			       a < NROW - 1 ? "; " : ".\n");

	if (mem_uncore)
		print_dram(res, n);

	printf("\n### Occupied truth, by window\n\n");
	printf("| workload | algorithm | 1 s | 5 s aligned | 60 s | "
	       "worst 1 s window |\n|---|---|---:|---:|---:|---:|\n");
	for (i = 0; i < n; i++) {
		const struct wres *wr = &res[i];

		for (a = 0; a < NROW; a++) {
			char wm[16];

			fmt_pct(wm, sizeof(wm),
				over_seeds(wr, a, J_OCC, W_1).wmax);
			printf("| %s | %s | %s | %s | %s | %s |\n",
			       a ? "" : wr->wl, row_name[a],
			       cell(wr, a, J_OCC, W_1),
			       cell(wr, a, J_OCC, W_5),
			       cell(wr, a, J_OCC, W_60), wm);
		}
	}

	printf("\n### vmrapl's books and the counters\n\n");
	printf("Static power at the end of the run (mean over packages and "
	       "seeds) against the model's idle floor; packages whose "
	       "static power was learned from their own idle time, and "
	       "those on the floor the host's other packages learned; "
	       "conservation of all %d instances after every close.\n\n",
	       NVR);
	printf("| workload | VMs | idle floor W | learned W | packages "
	       "learned | on the others' floor | conservation | "
	       "lost J (%d instances) | host J | ", NVR);
	printf("idle J | wraps | vmsr wraps zeroed | scaph iterations "
	       "skipped | wall s |\n"
	       "|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|"
	       "---:|---:|\n");
	for (i = 0; i < n; i++) {
		const struct wres *wr = &res[i];
		double lw = 0, fl = 0, lost = 0, host = 0, idle = 0, wall = 0;
		u64 wraps = 0, qz = 0, ss = 0, bad = 0;
		int learned = 0, hostfl = 0, pk = 0;

		for (k = 0; k < wr->nseed; k++) {
			const struct result *r = &wr->r[k];

			lw += r->vr_static_w[V_LEARN] / wr->nseed;
			fl += r->floor_w / wr->nseed;
			for (a = 0; a < NVR; a++)
				lost += r->vr_lost_j[a];
			host += r->vr_host_j / wr->nseed;
			idle += r->vr_idle_j / wr->nseed;
			wraps += r->vr_wraps;
			qz += r->qemu_wrap_zero;
			ss += r->scaph_wrap_skip;
			bad += r->conservation_bad;
			learned += r->vr_learned;
			hostfl += r->vr_host_floor;
			pk += wr->w->npkg;
			wall += r->wall;
		}
		printf("| %s | %d | %.1f | %.2f | %d/%d | %d/%d | %s | %.3f | "
		       "%.1f | %.1f | %llu | %llu | %llu | %.1f |\n", wr->wl,
		       wr->r[0].nvm, fl, lw, learned, pk, hostfl, pk,
		       bad ? "BROKEN" : "exact", lost, host, idle,
		       (unsigned long long)wraps, (unsigned long long)qz,
		       (unsigned long long)ss, wall);
	}

	printf("\nThe per-core instance (\"%s\"): the share of its dynamic "
	       "energy (the counter's energy less its static power) charged "
	       "by per-core weight, and the epochs whose per-core sum "
	       "exceeded the dynamic energy and was clamped to it (mean over "
	       "seeds).\n\n", row_name[R_VR_CORE]);
	printf("| workload | learned W | per-core / dynamic | clamped "
	       "epochs |\n|---|---:|---:|---:|\n");
	for (i = 0; i < n; i++) {
		const struct wres *wr = &res[i];
		double pc = 0, dyn = 0, cl = 0, cw = 0;

		for (k = 0; k < wr->nseed; k++) {
			const struct result *r = &wr->r[k];

			pc += r->vr_percore_j;
			dyn += r->vr_dynamic_j;
			cw += r->vr_static_w[V_CORE] / wr->nseed;
			if (r->vr_core_closes)
				cl += 100.0 * (double)r->vr_percore_clamps /
				      (double)r->vr_core_closes / wr->nseed;
		}
		printf("| %s | %.2f | %.1f %% | %.1f %% |\n", wr->wl, cw,
		       dyn > 0 ? 100 * pc / dyn : 0, cl);
	}

	/* ---------------------------------------------- the targets */
	printf("\n### Targets\n\n");
	printf("1. vmrapl with its learned static power (nothing handed "
	       "in), no per-core weighting: at most 2 %% mean error "
	       "under the occupied truth on "
	       "every homogeneous workload and every seed.  Judged on the "
	       "worst seed's mean, in every window.  Judged on the row "
	       "\"%s\"; the per-core row (\"%s\") beside it, not "
	       "judged.\n\n", row_name[R_VR], row_name[R_VR_CORE]);
	printf("| workload | worst seed, 1 s | 5 s | 60 s | mean of seeds, "
	       "60 s | met | per-core row: worst seed 1 s / 60 s, mean 60 s "
	       "|\n|---|---:|---:|---:|---:|---|---:|\n");
	for (i = 0; i < n; i++) {
		const struct wres *wr = &res[i];
		char b[NWIN][16], m[16], c1[16], c60[16], cm[16];
		bool ok = true;

		if (!wr->w->homogeneous)
			continue;
		for (wi = 0; wi < NWIN; wi++) {
			struct spread s = over_seeds(wr, R_VR, J_OCC, wi);

			fmt_pct(b[wi], sizeof(b[wi]), s.max);
			if (!(s.max <= 2))
				ok = false;
		}
		fmt_pct(m, sizeof(m), over_seeds(wr, R_VR, J_OCC, W_60).mean);
		fmt_pct(c1, sizeof(c1),
			over_seeds(wr, R_VR_CORE, J_OCC, W_1).max);
		fmt_pct(c60, sizeof(c60),
			over_seeds(wr, R_VR_CORE, J_OCC, W_60).max);
		fmt_pct(cm, sizeof(cm),
			over_seeds(wr, R_VR_CORE, J_OCC, W_60).mean);
		printf("| %s | %s | %s | %s | %s | %s | %s / %s, %s |\n",
		       wr->wl, b[0], b[1], b[2], m, ok ? "yes" : "NOT met",
		       c1, c60, cm);
	}
	printf("\n2. Heterogeneous intensity, at most 5 %% with per-core "
	       "energy or APERF weighting.  Judged on the row \"%s\" "
	       "(default learning, per-core energy counters), on the worst "
	       "seed's mean in every window; the learned row without "
	       "per-core weighting beside it, not judged:\n\n",
	       row_name[R_VR_CORE]);
	printf("| workload | worst seed, 1 s | 5 s | 60 s | mean of seeds, "
	       "60 s | met | without per-core: worst seed 60 s / mean |\n"
	       "|---|---:|---:|---:|---:|---|---:|\n");
	for (i = 0; i < n; i++) {
		const struct wres *wr = &res[i];
		struct spread l = over_seeds(wr, R_VR, J_OCC, W_60);
		char b[NWIN][16], m[16], lb[16], lm[16];
		bool ok = true;

		if (wr->w->homogeneous)
			continue;
		for (wi = 0; wi < NWIN; wi++) {
			struct spread s = over_seeds(wr, R_VR_CORE, J_OCC, wi);

			fmt_pct(b[wi], sizeof(b[wi]), s.max);
			if (!(s.max <= 5))
				ok = false;
		}
		fmt_pct(m, sizeof(m),
			over_seeds(wr, R_VR_CORE, J_OCC, W_60).mean);
		fmt_pct(lb, sizeof(lb), l.max);
		fmt_pct(lm, sizeof(lm), l.mean);
		printf("| %s | %s | %s | %s | %s | %s | %s / %s |\n", wr->wl,
		       b[0], b[1], b[2], m, ok ? "yes" : "NOT met", lb, lm);
	}
	printf("\n3. Ahead of every anchor (qemu-vmsr, both scaphandre "
	       "rows, kepler) on every workload under every truth: vmrapl "
	       "(learned)'s mean of seeds against the best anchor's, "
	       "60 s windows.\n\n");
	printf("Tied: behind by less than 0.1 point.\n\n");
	printf("| workload | occupied: vmrapl / best anchor | dynamic-only "
	       "| busy-share | ahead under all three |\n"
	       "|---|---|---|---|---|\n");
	for (i = 0; i < n; i++) {
		const struct wres *wr = &res[i];
		bool all = true, tied = false;

		printf("| %s |", wr->wl);
		for (j = 0; j < NTRUTH; j++) {
			double v = over_seeds(wr, R_VR, j, W_60).mean;
			double best = INFINITY;
			int ba = -1;
			char x[16], y[16];

			for (a = 0; a < NROW; a++) {
				double m = over_seeds(wr, a, j, W_60).mean;

				if (is_anchor(a) && !isnan(m) && m < best) {
					best = m;
					ba = a;
				}
			}
			fmt_pct(x, sizeof(x), v);
			fmt_pct(y, sizeof(y), best);
			if (v >= best && v - best < 0.1)
				tied = true;
			else if (!(v < best))
				all = false;
			printf(" %s / %s (%s)%s |", x, y,
			       ba >= 0 ? row_name[ba] : "-",
			       v < best ? "" : v - best < 0.1 ? " tied" :
			       " **behind**");
		}
		printf(" %s |\n", !all ? "NO" : tied ? "tied" : "yes");
	}
	for (wi = 0; wi < W_60; wi++) {
		int behind = 0, total = 0;

		for (i = 0; i < n; i++)
			for (j = 0; j < NTRUTH; j++) {
				double v = over_seeds(&res[i], R_VR, j,
						      wi).mean, best = INFINITY;

				for (a = R_QEMU; a <= R_KEPLER; a++) {
					double m = over_seeds(&res[i], a, j,
							      wi).mean;

					if (!isnan(m) && m < best)
						best = m;
				}
				total++;
				if (!(v < best)) {
					if (!behind)
						printf("\n%s windows, behind "
						       "the best anchor:",
						       win_key[wi]);
					printf(" %s (%s)", res[i].wl,
					       judge_name[j]);
					behind++;
				}
			}
		if (!behind)
			printf("\n%s windows: ahead of every anchor in all "
			       "%d workload x truth cases.", win_key[wi],
			       total);
		else
			printf(" (%d of %d workload x truth cases).", behind,
			       total);
	}
	printf("\n");
}

static void json_num(FILE *f, double x)
{
	if (isnan(x) || isinf(x))
		fprintf(f, "null");
	else
		fprintf(f, "%.6g", x);
}

int write_json(const char *path, const struct wres *res, int n)
{
	FILE *f = fopen(path, "w");
	int i, a, j, wi, k;

	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	own_names();
	fprintf(f, "{\n  \"mode\": \"%s\",\n  \"period_us\": %llu,\n"
		"  \"latch_us\": %llu,\n  \"lag_us\": %llu,\n"
		"  \"seeds\": %d,\n  \"sim_s\": %.0f,\n",
		quick ? "quick" : "full",
		(unsigned long long)period_ns / 1000,
		(unsigned long long)latch_ns / 1000,
		(unsigned long long)lag_used_ns / 1000, res[0].nseed,
		res[0].r[0].secs);
	if (vr_policy != VR_STATIC_OCCUPIED)
		fprintf(f, "  \"policy\": \"%s\",\n",
			vr_policy_names[vr_policy]);
	/* the model's options: only when one is set */
	if (!model_default()) {
		fprintf(f, "  \"model\": {\"pc6_delay_us\": ");
		if (no_pc6)
			fprintf(f, "null");
		else
			json_num(f, (double)pc6_delay_ns / 1000);
		fprintf(f, ", \"no_pc6\": %s, \"update_us\": ",
			no_pc6 ? "true" : "false");
		json_num(f, (double)latch_ns / 1000);
		fprintf(f, ", \"core_update_us\": ");
		json_num(f, (double)core_latch_ns / 1000);
		fprintf(f, ", \"update_jitter_pct\": ");
		json_num(f, update_jitter);
		fprintf(f, ", \"esu\": %u, \"smt\": %s, \"leakage\": %s, "
			"\"mem_uncore\": %s},\n", ctr_esu,
			smt ? "true" : "false", leakage ? "true" : "false",
			mem_uncore ? "true" : "false");
	}
	fprintf(f, "  \"results\": [\n");
	for (i = 0; i < n; i++) {
		const struct wres *wr = &res[i];
		u64 bad = 0;
		double lw = 0, cw = 0, pc = 0, dyn = 0, cl = 0, fl = 0;
		int hostfl = 0;

		for (k = 0; k < wr->nseed; k++) {
			const struct result *r = &wr->r[k];

			bad += r->conservation_bad;
			lw += r->vr_static_w[V_LEARN] / wr->nseed;
			fl += r->floor_w / wr->nseed;
			hostfl += r->vr_host_floor;
			cw += r->vr_static_w[V_CORE] / wr->nseed;
			pc += r->vr_percore_j;
			dyn += r->vr_dynamic_j;
			if (r->vr_core_closes)
				cl += 100.0 * (double)r->vr_percore_clamps /
				      (double)r->vr_core_closes / wr->nseed;
		}
		fprintf(f, "    {\"workload\": \"%s\", \"homogeneous\": %s, "
			"\"vms\": %d, \"conservation_exact\": %s, "
			"\"idle_floor_w\": ", wr->wl,
			wr->w->homogeneous ? "true" : "false", wr->r[0].nvm,
			bad ? "false" : "true");
		json_num(f, fl);
		fprintf(f, ", \"vmrapl_learned_static_w\": ");
		json_num(f, lw);
		fprintf(f, ", \"vmrapl_host_floor_pkgs\": %d", hostfl);
		fprintf(f, ", \"vmrapl_percore_static_w\": ");
		json_num(f, cw);
		fprintf(f, ", \"vmrapl_percore_share_of_dynamic_pct\": ");
		json_num(f, dyn > 0 ? 100 * pc / dyn : NAN);
		fprintf(f, ", \"vmrapl_percore_clamped_epochs_pct\": ");
		json_num(f, cl);
		fprintf(f, ",\n     \"algorithms\": {");
		for (a = 0; a < NROW; a++) {
			fprintf(f, "%s\n      \"%s\": {\"label\": \"%s\", "
				"\"own_rule\": \"%s\"", a ? "," : "",
				row_key[a], row_name[a], own_name[a]);
			for (j = 0; j < NJUDGE; j++) {
				fprintf(f, ", \"%s\": {", judge_key[j]);
				for (wi = 0; wi < NWIN; wi++) {
					struct spread s = over_seeds(wr, a, j,
								     wi);

					fprintf(f, "%s\"%s\": {\"mean\": ",
						wi ? ", " : "", win_key[wi]);
					json_num(f, s.mean);
					fprintf(f, ", \"min\": ");
					json_num(f, s.min);
					fprintf(f, ", \"max\": ");
					json_num(f, s.max);
					fprintf(f, ", \"worst_window\": ");
					json_num(f, s.wmax);
					/* each seed's mean: occupied only */
					if (j == J_OCC) {
						fprintf(f, ", \"per_seed\": [");
						for (k = 0; k < wr->nseed; k++) {
							fprintf(f, "%s", k ?
								", " : "");
							json_num(f, stat_mean(
								&wr->r[k].err[a][j][wi]));
						}
						fprintf(f, "]");
					}
					fprintf(f, "}");
				}
				fprintf(f, "}");
			}
			fprintf(f, ", \"net_pct_per_seed\": [");
			for (k = 0; k < wr->nseed; k++) {
				fprintf(f, "%s", k ? ", " : "");
				json_num(f, wr->r[k].net[a]);
			}
			fprintf(f, "]}");
		}
		fprintf(f, "}}%s\n", i < n - 1 ? "," : "");
	}
	fprintf(f, "  ]\n}\n");
	return fclose(f);
}
