// SPDX-License-Identifier: GPL-2.0
/*
 * vrsim: vmrapl, the real accounting core (kmod/vr_core.c), driven like the
 * kernel glue drives it, through vr_core.h only.  Four instances run side
 * by side on the same schedule and counter:
 *
 *   V_LEARN  the module's default (p_static_mw=0): nothing is handed in,
 *            the core learns the static power by itself
 *   V_HI     p_static_mw set 25 % above the package's idle floor
 *   V_LO     p_static_mw set 25 % below it
 *   V_CORE   the default learning as V_LEARN, plus per-core energy
 *            weighting (VR_CORE_ENERGY) from the model's AMD-like per-core
 *            counters (model.c): as the module on AMD family 17h+ does
 *
 * No instance is given the model's exact static power.
 *
 * The counter's update interval is measured, as the module measures it
 * when a package comes online (kmod/engine_step.c): its steps timed by
 * polling the register, fed to the core's estimator (kmod/vr_step.c),
 * whose result sets the lag share (vr_pkg_set_step()); --lag-us
 * overrides the lag share after that.
 *
 * V_CORE reads its counters as the kernel does: the closer marks the CPUs
 * whose last sample is VR_CORE_WINDOW_NS old or more (core_due), and each
 * marked CPU reads its own core's counter in vr_cpu_event() at its next
 * scheduling event (sched.c's cpu_switch(), the sched_switch probe's
 * place), through core_read(): the latched, quantized, wrapping register,
 * never the exact energy.  A CPU with no switch (one task running alone)
 * is not sampled, as in the kernel.  With --smt, siblings (adjacent
 * CPUs) read their core's one counter, and V_CORE's CPUs are told their
 * sibling (vr_cpu_set_sibling(), both ways), as the module does on AMD
 * with SMT (engine_cpu.c).  With --mem-uncore the read fn also returns
 * the package's DRAM domain counter (VMRAPL_DOM_DRAM, 2^-16 J), which
 * the core splits as it splits the package's energy.
 */
#include "vrsim.h"

struct vr_acct *task_acct(const struct task *t, int pkg, int v)
{
	const struct vm *vm;

	if (t->kind == T_HOST)
		return NULL;
	vm = &S.vm[t->vm];
	return &vm->acct[((size_t)v * (vm->nvcpu + 1) +
			  (t->kind == T_VCPU ? t->vidx : vm->nvcpu)) *
			 S.npkg + pkg];
}

/* The vr_read_fn of a package: its PKG counter, now. */
static u32 pkg_read(void *ctx, u64 *raw, u64 dt, u64 busy)
{
	struct pkg *pk = ctx;

	(void)dt;
	(void)busy;
	raw[VR_DOM_PKG] = ctr_read(&pk->ctr, S.now);
	if (!mem_uncore)
		return BIT(VR_DOM_PKG);
	raw[VMRAPL_DOM_DRAM] = ctr_read(&pk->dram, S.now);
	return BIT(VR_DOM_PKG) | BIT(VMRAPL_DOM_DRAM);
}

/*
 * The vr_core_read_fn of V_CORE: called by the core inside vr_cpu_event()
 * of CPU @c, at that CPU's event; reads that CPU's own core counter.
 */
static bool core_read(void *ctx, struct vr_cpu *c, u64 *raw)
{
	struct pkg *pk = ctx;
	int i;

	for (i = 0; i < pk->ncpu; i++)
		if (pk->cpus[V_CORE][i] == c) {
			*raw = ctr_read(&S.cpu[S.cpu[pk->first + i].core]
					.core_ctr, S.now);
			return true;
		}
	return false;
}

/* The module's timer / a switch: each instance closes its stale epoch. */
void vr_close(int pi)
{
	struct pkg *pk = &S.pk[pi];
	struct vr_pkg_stats st[VR_NDOM];
	unsigned int d;
	int v;

	for (v = 0; v < NVR; v++) {
		struct vr_pkg *p = &pk->p[v];

		if (!vr_pkg_stale(p, S.now) ||
		    !vr_pkg_try_close(p, S.now, pkg_read, pk))
			continue;
		if (v == V_LEARN) {
			pk->closes++;
			S.closes++;
		} else if (v == V_CORE) {
			S.core_closes++;
		}
		vr_pkg_read_stats(p, st, VR_NDOM);
		for (d = 0; d < VR_NDOM; d++)
			if (st[d].tracked + st[d].host + st[d].idle +
			    st[d].lost != st[d].sampled)
				S.conservation_bad++;
	}
}

/*
 * The module's package timer, every 100 epochs while the package is busy
 * (engine.c): it solves the online fit of the static power, as the
 * module does for every instance whose static power is not a parameter.
 */
void vr_fit_tick(int pi)
{
	struct pkg *pk = &S.pk[pi];
	int v, q;

	for (v = 0; v < NVR; v++) {
		u64 sum = 0, uw;
		int n = 0;

		for (q = 0; q < S.npkg && !no_host_floor; q++) {
			if (q == pi)
				continue;
			vr_lock(&S.pk[q].p[v].close_lock);
			uw = vr_pkg_floor_uw(&S.pk[q].p[v]);
			vr_unlock(&S.pk[q].p[v].close_lock);
			if (uw) {
				sum += uw;
				n++;
			}
		}
		vr_lock(&pk->p[v].close_lock);
		vr_pkg_set_host_floor(&pk->p[v], n ? sum / n : 0);
		vr_pkg_fit_update(&pk->p[v]);
		vr_unlock(&pk->p[v].close_lock);
	}
}

/*
 * The module's measure of @pk's PKG counter (engine_step.c): its register
 * polled every 1 to 3 us from t = 0 for VR_STEP_WINDOW_NS or until
 * vr_step_enough().  The poll reads a copy of the counter, drawing at the
 * package's floor (what it draws idle; the instants of the steps do not
 * depend on the power), with an update jitter stream of its own, so that
 * the run's random draws are those of an unmeasured run.
 */
static void vmrapl_measure_step(const struct pkg *pk, struct vr_step *st)
{
	struct vr_step_poll *s = xcalloc(1, sizeof(*s));
	struct ctr c = pk->ctr;
	u64 t = S.now, rs = 0x6a09e667f3bcc909ULL ^ (u64)(pk - S.pk);

	c.power_uw = pk->m.floor_uw;
	c.rs = (u64)(pk - S.pk) * 0x9e3779b97f4a7c15ULL + 0x3c6ef372fe94f82bULL;
	vr_step_poll_init(s);
	while (t - S.now < VR_STEP_WINDOW_NS && !vr_step_enough(s)) {
		vr_step_feed(s, t, ctr_read(&c, t));
		rs ^= rs >> 12;
		rs ^= rs << 25;
		rs ^= rs >> 27;
		t += 1000 + (rs * 0x2545f4914f6cdd1dULL) % 2001;
	}
	vr_step_estimate(s, st);
	free(s);
}

/* The core's packages of @pk, one per instance, CPUs online at 0, idle. */
void vmrapl_pkg_init(struct pkg *pk)
{
	struct vr_step st;
	int i, v;

	vmrapl_measure_step(pk, &st);

	for (v = 0; v < NVR; v++) {
		struct vr_pkg *p = &pk->p[v];

		for (i = 0; i < pk->ncpu; i++)
			pk->cpus[v][i] = &S.cpu[pk->first + i].vc[v];
		vr_pkg_init(p, pk->cpus[v], pk->ncpu, period_ns,
			    500000000ULL);
		/* hardware-like counter: the lag of its measured step */
		vr_lock(&p->close_lock);
		vr_pkg_set_step(p, VR_DOM_PKG, &st);
		vr_unlock(&p->close_lock);
		step_used = st;
		if (lag_ns >= 0)
			p->lag_ns = (u64)lag_ns;
		lag_used_ns = p->lag_ns;
		p->policy = vr_policy;
		vr_pkg_set_domain(p, VR_DOM_PKG, pk->ctr.esu, pk->ctr.width);
		if (mem_uncore)
			vr_pkg_set_domain(p, VMRAPL_DOM_DRAM, pk->dram.esu,
					  pk->dram.width);
		/*
		 * V_LEARN, V_CORE: as the module with p_static_mw=0, no call:
		 * they learn from idle runs and the online fit
		 * (vr_fit_tick()).
		 */
		if (v == V_CORE)
			vr_pkg_set_core(p, VR_CORE_ENERGY, core_read, pk,
					S.cpu[pk->first].core_ctr.esu,
					S.cpu[pk->first].core_ctr.width);
		else if (v == V_HI)
			vr_pkg_set_static(p, pk->m.floor_uw * 5 / 4,
					  VR_STATIC_PARAM);
		else if (v == V_LO)
			vr_pkg_set_static(p, pk->m.floor_uw * 3 / 4,
					  VR_STATIC_PARAM);
		for (i = 0; i < pk->ncpu; i++) {
			struct vr_cpu *c = pk->cpus[v][i];

			vr_cpu_init(c, p);
			vr_lock(&p->close_lock);
			/* --smt: both ways, the sibling came up first */
			if (smt && v == V_CORE && (i & 1)) {
				vr_cpu_set_sibling(c, pk->cpus[v][i - 1]);
				vr_cpu_set_sibling(pk->cpus[v][i - 1], c);
			}
			vr_cpu_online(c, 0, false);
			vr_unlock(&p->close_lock);
		}
	}
}

/* A reader of vmrapl: the VM's accounts of instance @var in @dom, summed. */
double vmrapl_vm_j(const struct vm *v, int var, unsigned int dom)
{
	size_t n = (size_t)(v->nvcpu + 1) * S.npkg, i;
	const struct vr_acct *a = &v->acct[(size_t)var * n];
	u64 e = 0;

	for (i = 0; i < n; i++)
		e += a[i].energy[dom];
	return ldexp((double)e, -VR_EU_SHIFT);
}
