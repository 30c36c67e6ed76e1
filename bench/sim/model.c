// SPDX-License-Identifier: GPL-2.0
/*
 * vrsim: the power model: the random stream, the counters and the truth
 * (every task charged its dynamic power and its share of the static power
 * while it runs).
 */
#include "vrsim.h"

/* ---------------------------------------------------- random stream */

/* One stream for the schedule and the counters' jitter, in event order. */
struct vrm_rng sim_rng;

u64 rnd(void)
{
	return vrm_rand(&sim_rng);
}

u64 below(u64 n)
{
	return n ? vrm_below(&sim_rng, n) : 0;
}

static double unif(void)
{
	return vrm_unit(&sim_rng);
}

/* Exponential with mean @m ns, at least 10 us. */
u64 expo(u64 m)
{
	double x = -log(1.0 - unif()) * (double)m;

	return x < 10000 ? 10000 : (u64)x;
}

void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz);

	if (!p) {
		perror("calloc");
		exit(2);
	}
	return p;
}

/* Room for element @n of @p, *@cap long: doubles it (at first, @first). */
void *xgrow(void *p, size_t n, size_t *cap, size_t first, size_t sz)
{
	if (n < *cap)
		return p;
	*cap = *cap ? 2 * *cap : first;
	p = realloc(p, *cap * sz);
	if (!p) {
		perror("realloc");
		exit(2);
	}
	return p;
}

/* ------------------------------------------------------- counters */

/*
 * The PKG counter of a package (kmod/user/vr_rapl_model.h): ESU 14, 32
 * bits, latched every latch_ns +- 2 %, its jitter drawn from the
 * simulation's stream.
 */
void rapl_init(struct vrm_rapl *r, u64 offset)
{
	vrm_init(r, 14, 32, latch_ns, latch_ns / 50, offset, 0);
	vrm_use_rng(r, &sim_rng);
}

/* ------------------------------------------------------------ truth */

void task_accrue(struct task *t)
{
	struct cpu *c;
	struct pkg *pk;
	u64 ran;
	double stat_j, dyn_j;

	if (t->state != S_RUNNING)
		return;
	c = &S.cpu[t->cpu];
	pk = &S.pk[c->pkg];
	ran = S.now - t->run_start;
	t->run_start = S.now;
	if (!ran)
		return;
	t->runtime += ran;
	t->runtime_pkg[c->pkg] += ran;
	S.host_busy_ns += ran;
	dyn_j = (double)t->dyn_uw * (double)ran / FJ_PER_J;
	stat_j = (double)pk->static_uw / pk->ncpu * (double)ran / FJ_PER_J;
	if (t->kind != T_HOST) {
		S.vm[t->vm].truth_j += dyn_j + stat_j;
		S.vm[t->vm].dyn_j += dyn_j;
	}
}

void pkg_power(int pi)
{
	struct pkg *pk = &S.pk[pi];
	u64 uw = pk->static_uw;
	int i;

	for (i = 0; i < pk->ncpu; i++) {
		int cur = S.cpu[pk->first + i].cur;

		if (cur != NOTASK)
			uw += S.t[cur].dyn_uw;
	}
	vrm_set_power(&pk->ctr, S.now, uw);
}

u64 vm_runtime(const struct vm *v)
{
	u64 rt = 0;
	int i;

	for (i = 0; i < v->ntask; i++)
		rt += S.t[v->first_task + i].runtime;
	return rt;
}

void sync_all(void)
{
	int i;

	for (i = 0; i < S.ntask; i++)
		task_accrue(&S.t[i]);
}
