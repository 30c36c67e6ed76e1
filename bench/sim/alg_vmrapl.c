// SPDX-License-Identifier: GPL-2.0
/*
 * vrsim: vmrapl, the real accounting core (kmod/vr_core.c), driven like the
 * kernel glue drives it.
 */
#include "vrsim.h"

/* ----------------------------------------------------------- vmrapl */

struct vr_acct *task_acct(const struct task *t, int pkg)
{
	const struct vm *v;

	if (t->kind == T_HOST)
		return NULL;
	v = &S.vm[t->vm];
	return &v->acct[(t->kind == T_VCPU ? t->vidx : v->nvcpu) * S.npkg +
			pkg];
}

/* The vr_read_fn of a package: its PKG counter, now. */
static u32 pkg_read(void *ctx, u64 *raw, u64 dt, u64 busy)
{
	struct pkg *pk = ctx;

	(void)dt;
	(void)busy;
	raw[VR_DOM_PKG] = vrm_read(&pk->ctr, S.now);
	return BIT(VR_DOM_PKG);
}

void vr_close(int pi)
{
	struct pkg *pk = &S.pk[pi];
	struct vr_pkg_stats st[VR_NDOM];
	unsigned int d;

	if (!vr_pkg_stale(&pk->p, S.now) ||
	    !vr_pkg_try_close(&pk->p, S.now, pkg_read, pk))
		return;
	pk->closes++;
	S.closes++;
	vr_pkg_read_stats(&pk->p, st, VR_NDOM);
	for (d = 0; d < VR_NDOM; d++)
		if (st[d].tracked + st[d].host + st[d].idle + st[d].lost !=
		    st[d].sampled)
			S.conservation_bad++;
}


/* The core's package of @pk, its CPUs online at 0, idle. */
void vmrapl_pkg_init(struct pkg *pk)
{
	int i;

	for (i = 0; i < pk->ncpu; i++)
		pk->cpus[i] = &S.cpu[pk->first + i].vc;
	vr_pkg_init(&pk->p, pk->cpus, pk->ncpu, period_ns, 500000000ULL);
	/*
	 * The counter is hardware-like (latched every ~1 ms): keep the lag
	 * share vr_pkg_init() gives hardware sources, as the kernel's RAPL
	 * source does.
	 */
	if (lag_ns >= 0)
		pk->p.lag_ns = (u64)lag_ns;
	lag_used_ns = pk->p.lag_ns;
	vr_pkg_set_domain(&pk->p, VR_DOM_PKG, pk->ctr.esu, pk->ctr.width);
	vr_pkg_set_static(&pk->p, pk->static_uw, VR_STATIC_PARAM);
	pk->p.policy = VR_STATIC_OCCUPIED;
	for (i = 0; i < pk->ncpu; i++) {
		struct vr_cpu *c = pk->cpus[i];

		vr_cpu_init(c, &pk->p);
		vr_lock(&pk->p.close_lock);
		vr_cpu_online(c, 0, false);
		vr_unlock(&pk->p.close_lock);
	}
}

/* A reader of vmrapl: close what is stale, sum the VM's accounts. */
double vmrapl_vm_j(const struct vm *v)
{
	u64 e = 0;
	int i;

	for (i = 0; i < (v->nvcpu + 1) * S.npkg; i++)
		e += v->acct[i].energy[VR_DOM_PKG];
	return ldexp((double)e, -VR_EU_SHIFT);
}
