// SPDX-License-Identifier: GPL-2.0
/*
 * vrsim: the error statistics of a run, and their markdown and JSON.
 */
#include "vrsim.h"

static const char *const alg_name[NALG] = {
	"vmrapl", "qemu-vmsr", "scaphandre", "kepler"
};
static const char *const own_name[NALG] = {
	"occupied truth", "exact-input vmsr formula",
	"exact-input process share", "exact dynamic energy (no idle)"
};

/* --------------------------------------------------------- results */

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
	static const int wsec[2] = { 1, 60 };
	static const double thr[2] = { 0.05, 3.0 };	/* J */
	int vi, wi, a;

	for (wi = 0; wi < 2; wi++) {
		int w = wsec[wi], k;

		for (k = 0; (k + 1) * w <= S.nsec; k++) {
			for (vi = 0; vi < S.nvm; vi++) {
				const double *s0 = &S.vm[vi].snap[
					(size_t)k * w * SNAPW];
				const double *s1 = &S.vm[vi].snap[
					(size_t)(k + 1) * w * SNAPW];
				double tr = s1[0] - s0[0];

				if (tr < thr[wi])
					continue;
				for (a = 0; a < NALG; a++) {
					double e = s1[2 + a] - s0[2 + a];
					double o = s1[2 + NALG + a] -
						   s0[2 + NALG + a];

					stat_add(&r->err[a][wi],
						 100 * fabs(e - tr) / tr);
					if (o > thr[wi] / 10)
						stat_add(&r->own[a][wi],
							 100 * fabs(e - o) / o);
				}
			}
		}
	}
	for (a = 0; a < NALG; a++) {
		double est = 0, tr = 0;

		for (vi = 0; vi < S.nvm; vi++) {
			const double *s = &S.vm[vi].snap[(size_t)S.nsec *
							 SNAPW];

			est += s[2 + a];
			tr += s[0];
		}
		r->net[a] = tr > 0 ? 100 * (est - tr) / tr : 0;
		r->truth_j = tr;
	}
}

/* ---------------------------------------------------------- output */

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

void print_md(const struct result *res, int n)
{
	int i, a;

	printf("vmrapl: %llu us epochs, counter lag share lag_ns = %llu us%s; "
	       "counter latched every %llu us.\n\n",
	       (unsigned long long)period_ns / 1000,
	       (unsigned long long)lag_used_ns / 1000,
	       lag_ns < 0 ? " (vr_pkg_init() default for hardware counters)" :
	       " (--lag-us)", (unsigned long long)latch_ns / 1000);
	printf("Per-VM energy error, %% of the VM's true energy "
	       "(ground truth: dynamic power of its threads + P_static / "
	       "ncpus per occupied CPU-ns).\n\n");
	printf("| workload | algorithm | 1 s mean | 1 s max | 60 s mean | "
	       "60 s max | net created(+)/lost(-) | own semantics 60 s mean |"
	       "\n|---|---|---:|---:|---:|---:|---:|---:|\n");
	for (i = 0; i < n; i++) {
		const struct result *r = &res[i];

		for (a = 0; a < NALG; a++) {
			char m1[16], x1[16], m6[16], x6[16], nt[16], ow[16];

			fmt_pct(m1, sizeof(m1), stat_mean(&r->err[a][0]));
			fmt_pct(x1, sizeof(x1), r->err[a][0].n ?
				r->err[a][0].max : NAN);
			fmt_pct(m6, sizeof(m6), stat_mean(&r->err[a][1]));
			fmt_pct(x6, sizeof(x6), r->err[a][1].n ?
				r->err[a][1].max : NAN);
			snprintf(nt, sizeof(nt), "%+.2f %%", r->net[a]);
			fmt_pct(ow, sizeof(ow), stat_mean(&r->own[a][1]));
			printf("| %s | %s | %s | %s | %s | %s | %s | %s |\n",
			       a ? "" : r->wl, alg_name[a], m1, x1, m6, x6,
			       nt, ow);
		}
	}
	printf("\nOwn semantics: ");
	for (a = 0; a < NALG; a++)
		printf("%s vs %s%s", alg_name[a], own_name[a],
		       a < NALG - 1 ? "; " : ".\n");
	printf("\nvmrapl conservation (tracked + host + idle + lost == "
	       "sampled, after every close) and counter events:\n\n");
	printf("| workload | sim s | VMs | closes | conservation | lost J | "
	       "host J | idle J | wraps | resets | overruns | vmsr wraps "
	       "zeroed | scaph deltas dropped | wall s |\n"
	       "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|"
	       "---:|---:|\n");
	for (i = 0; i < n; i++) {
		const struct result *r = &res[i];

		printf("| %s | %.0f | %d | %llu | %s | %.3f | %.1f | %.1f | "
		       "%llu | %llu | %llu | %llu | %llu | %.2f |\n", r->wl,
		       r->secs, r->nvm, (unsigned long long)r->closes,
		       r->conservation_bad ? "BROKEN" : "exact",
		       r->vr_lost_j, r->vr_host_j, r->vr_idle_j,
		       (unsigned long long)r->vr_wraps,
		       (unsigned long long)r->vr_resets,
		       (unsigned long long)r->vr_overruns,
		       (unsigned long long)r->qemu_wrap_zero,
		       (unsigned long long)r->scaph_wrap_drop, r->wall);
	}
}

static void json_num(FILE *f, double x)
{
	if (isnan(x))
		fprintf(f, "null");
	else
		fprintf(f, "%.6g", x);
}

int write_json(const char *path, const struct result *res, int n)
{
	FILE *f = fopen(path, "w");
	int i, a, wi;

	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(f, "{\n  \"mode\": \"%s\",\n  \"period_us\": %llu,\n"
		"  \"latch_us\": %llu,\n  \"lag_us\": %llu,\n"
		"  \"results\": [\n", quick ? "quick" : "full",
		(unsigned long long)period_ns / 1000,
		(unsigned long long)latch_ns / 1000,
		(unsigned long long)lag_used_ns / 1000);
	for (i = 0; i < n; i++) {
		const struct result *r = &res[i];

		fprintf(f, "    {\"workload\": \"%s\", \"sim_s\": %.0f, "
			"\"vms\": %d, \"events\": %llu, \"closes\": %llu, "
			"\"conservation_exact\": %s, \"vmrapl_lost_j\": ",
			r->wl, r->secs, r->nvm,
			(unsigned long long)r->events,
			(unsigned long long)r->closes,
			r->conservation_bad ? "false" : "true");
		json_num(f, r->vr_lost_j);
		fprintf(f, ", \"vmrapl_resets\": %llu, \"vmrapl_overruns\": "
			"%llu, \"vmrapl_wraps\": %llu, \"vmsr_wraps_zeroed\":"
			" %llu, \"scaph_deltas_dropped\": %llu, "
			"\"truth_j\": ", (unsigned long long)r->vr_resets,
			(unsigned long long)r->vr_overruns,
			(unsigned long long)r->vr_wraps,
			(unsigned long long)r->qemu_wrap_zero,
			(unsigned long long)r->scaph_wrap_drop);
		json_num(f, r->truth_j);
		fprintf(f, ", \"algorithms\": {");
		for (a = 0; a < NALG; a++) {
			fprintf(f, "%s\"%s\": {", a ? ", " : "", alg_name[a]);
			for (wi = 0; wi < 2; wi++) {
				const char *w = wi ? "60s" : "1s";

				fprintf(f, "\"mean_err_pct_%s\": ", w);
				json_num(f, stat_mean(&r->err[a][wi]));
				fprintf(f, ", \"max_err_pct_%s\": ", w);
				json_num(f, r->err[a][wi].n ?
					 r->err[a][wi].max : NAN);
				fprintf(f, ", \"own_mean_err_pct_%s\": ", w);
				json_num(f, stat_mean(&r->own[a][wi]));
				fprintf(f, ", ");
			}
			fprintf(f, "\"net_pct\": ");
			json_num(f, r->net[a]);
			fprintf(f, ", \"own_semantics\": \"%s\"}",
				own_name[a]);
		}
		fprintf(f, "}}%s\n", i < n - 1 ? "," : "");
	}
	fprintf(f, "  ]\n}\n");
	return fclose(f);
}

