// SPDX-License-Identifier: GPL-2.0
/*
 * Sources for hosts without readable RAPL.
 *
 * estimate: a linear model per package, est_idle_mw for the package plus
 * est_busy_mw per busy CPU, integrated exactly from the engine's own busy
 * time.  Always reported as estimated.
 *
 * test: a counter that advances only when VMRAPL_TEST_INJECT adds energy
 * to it (or jumps when it sets it), so that tests know the exact energy.
 * Only loaded with source=test.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/uaccess.h>

#include "vmrapl.h"

static int vr_estimate_probe(const char **why)
{
	return 0;
}

static int vr_estimate_pkg_init(struct vr_hpkg *hp, unsigned int cpu)
{
	hp->est.idle_uw = (u64)vr_est_idle_mw * 1000;
	hp->est.busy_uw = (u64)vr_est_busy_mw * 1000;
	vr_pkg_set_domain(&hp->core, VMRAPL_DOM_PKG, VR_EU_SHIFT, 64);
	hp->core.lag_ns = 0;	/* computed at the read: no lag */
	/* The model's idle power is its static power, exactly. */
	vr_pkg_set_static(&hp->core, hp->est.idle_uw, VR_STATIC_MODEL);
	return 0;
}

static u32 vr_estimate_read(struct vr_hpkg *hp, u64 *raw, u64 dt, u64 busy)
{
	raw[VMRAPL_DOM_PKG] = vr_estimate_advance(&hp->est, dt, busy);
	return 1U << VMRAPL_DOM_PKG;
}

const struct vr_source vr_source_estimate = {
	.name = "estimate",
	.id = VMRAPL_SOURCE_ESTIMATE,
	.estimated = true,
	.probe = vr_estimate_probe,
	.pkg_init = vr_estimate_pkg_init,
	.read = vr_estimate_read,
};

static int vr_test_probe(const char **why)
{
	if (vr_test_esu > 31 || vr_test_width < 8 || vr_test_width > 64) {
		*why = "test_esu must be 0..31 and test_width 8..64";
		return -EINVAL;
	}
	return 0;
}

static int vr_test_pkg_init(struct vr_hpkg *hp, unsigned int cpu)
{
	unsigned int d;

	for (d = 0; d < VR_NDOM; d++)
		vr_pkg_set_domain(&hp->core, d, vr_test_esu, vr_test_width);
	hp->core.lag_ns = 0;	/* injected energy is read as it is */
	vr_pkg_set_static(&hp->core, (u64)vr_test_static_mw * 1000,
			  VR_STATIC_MODEL);
	return 0;
}

static u32 vr_test_read(struct vr_hpkg *hp, u64 *raw, u64 dt, u64 busy)
{
	u64 mask = vr_test_width < 64 ? (1ULL << vr_test_width) - 1 : ~0ULL;
	unsigned int d;

	for (d = 0; d < VR_NDOM; d++)
		raw[d] = (u64)atomic64_read(&hp->test[d]) & mask;
	return (1U << VR_NDOM) - 1;
}

const struct vr_source vr_source_test = {
	.name = "test",
	.id = VMRAPL_SOURCE_TEST,
	.estimated = true,
	.probe = vr_test_probe,
	.pkg_init = vr_test_pkg_init,
	.read = vr_test_read,
};

long vr_test_inject(void __user *argp)
{
	struct vmrapl_test_inject inj;
	struct vr_hpkg *hp;

	if (vr_src != &vr_source_test)
		return -ENOTTY;
	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (copy_from_user(&inj, argp, sizeof(inj)))
		return -EFAULT;
	if (inj.flags & ~VMRAPL_INJECT_F_SET || inj.reserved0 ||
	    inj.reserved[0] || inj.reserved[1])
		return -EINVAL;
	if (inj.package >= vr_topo.nr_pkgs || inj.domain >= VR_NDOM)
		return -EINVAL;
	hp = vr_pkgs[inj.package];
	if (inj.flags & VMRAPL_INJECT_F_SET)
		atomic64_set(&hp->test[inj.domain], inj.value);
	else
		atomic64_add(inj.value, &hp->test[inj.domain]);
	return 0;
}
