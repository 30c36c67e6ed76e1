// SPDX-License-Identifier: GPL-2.0
/*
 * vmrapl: per-VM virtual RAPL energy counters for KVM.
 *
 * Module parameters, source selection, init/exit and /dev/vmrapl.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cpumask.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>

#include "vmrapl.h"

static char *source = "auto";
module_param(source, charp, 0444);
MODULE_PARM_DESC(source, "Energy source: auto|intel|amd|estimate|test");

/*
 * The most a package can draw sizes the wrap guard (engine_timer.c) and
 * tells a wrap or a reset from real energy (vr_dom_delta()).  0 would make
 * every wrap a reset; a huge value would make every long epoch one that
 * might have wrapped twice (an overrun).  Today's largest sockets draw
 * about 500 W.
 */
#define VR_MAX_POWER_MIN_W	10
#define VR_MAX_POWER_MAX_W	2000

unsigned int vr_max_power_w = 500;

static int vr_set_max_power(const char *val, const struct kernel_param *kp)
{
	unsigned int w;
	int ret;

	ret = kstrtouint(val, 0, &w);
	if (ret)
		return ret;
	if (w < VR_MAX_POWER_MIN_W || w > VR_MAX_POWER_MAX_W) {
		pr_err("max_power_w=%u: must be %u..%u W\n", w,
		       VR_MAX_POWER_MIN_W, VR_MAX_POWER_MAX_W);
		return -EINVAL;
	}
	vr_max_power_w = w;
	return 0;
}

static const struct kernel_param_ops vr_max_power_ops = {
	.set = vr_set_max_power,
	.get = param_get_uint,
};
module_param_cb(max_power_w, &vr_max_power_ops, &vr_max_power_w, 0444);
MODULE_PARM_DESC(max_power_w,
		 "Most a package can draw (W), 10..2000: sizes the wrap guard, default 500");

unsigned int vr_p_static_mw;
module_param_named(p_static_mw, vr_p_static_mw, uint, 0444);
MODULE_PARM_DESC(p_static_mw,
		 "Static (all idle) package power in mW for RAPL sources; 0 learns it");

bool vr_percore = true;
module_param_named(percore, vr_percore, bool, 0444);
MODULE_PARM_DESC(percore,
		 "Weigh the dynamic split by per-core energy where the host has it (AMD family 17h+), default 1");

bool vr_aperf;
module_param_named(aperf, vr_aperf, bool, 0444);
MODULE_PARM_DESC(aperf,
		 "Where there is no per-core energy, weigh the dynamic split by APERF (actual cycles), default 0");

unsigned int vr_est_idle_mw = 20000;
module_param_named(est_idle_mw, vr_est_idle_mw, uint, 0444);
MODULE_PARM_DESC(est_idle_mw, "estimate source: package idle power (mW)");

unsigned int vr_est_busy_mw = 8000;
module_param_named(est_busy_mw, vr_est_busy_mw, uint, 0444);
MODULE_PARM_DESC(est_busy_mw, "estimate source: power per busy CPU (mW)");

unsigned int vr_test_esu = 14;
module_param_named(test_esu, vr_test_esu, uint, 0444);
MODULE_PARM_DESC(test_esu, "test source: energy unit, 1/2^esu J");

unsigned int vr_test_width = 32;
module_param_named(test_width, vr_test_width, uint, 0444);
MODULE_PARM_DESC(test_width, "test source: counter width in bits");

unsigned int vr_test_static_mw;
module_param_named(test_static_mw, vr_test_static_mw, uint, 0444);
MODULE_PARM_DESC(test_static_mw, "test source: static package power (mW)");

/*
 * What a VMM without CAP_PERFMON sees of its VM (GET_STATS, READ_MSR, the
 * mmap page): nothing finer than this period and this energy step.  The
 * VM's energy follows the package's at fine grain and partly traces its
 * co-tenants (PLATYPUS); see Documentation/security.rst.
 */
unsigned int vr_unpriv_period_ms = 100;
module_param_named(unpriv_period_ms, vr_unpriv_period_ms, uint, 0644);
MODULE_PARM_DESC(unpriv_period_ms,
		 "Without CAP_PERFMON a VM's books change at most once per this period (ms), default 100");

unsigned int vr_unpriv_step_uj = 1000;
module_param_named(unpriv_step_uj, vr_unpriv_step_uj, uint, 0644);
MODULE_PARM_DESC(unpriv_step_uj,
		 "Without CAP_PERFMON a VM's energy moves in steps of this (uJ), default 1000");

/*
 * The debug sweep of every release (vm_release.c, vr_vm_swept()): on by default on
 * a KASAN kernel (make check-debug's), where a late write into a freed
 * account would also be caught; off on production kernels, where it costs
 * a walk of every CPU and package per released VM.
 */
bool vr_check_release = IS_ENABLED(CONFIG_KASAN);
module_param_named(check_release, vr_check_release, bool, 0644);
MODULE_PARM_DESC(check_release,
		 "Check at each VM release that no CPU or package still points at its accounts (debug)");

/* Each probe checks the stack-end marker on entry and exit (engine.c). */
bool vr_check_stack = IS_ENABLED(CONFIG_KASAN);
module_param_named(check_stack, vr_check_stack, bool, 0444);
MODULE_PARM_DESC(check_stack,
		 "Check the current task's stack-end marker in every probe (debug)");

/* The sweep's own test: leave this many stale pointers (with check_release). */
unsigned int vr_inject_stale;
module_param_named(inject_stale, vr_inject_stale, uint, 0644);
MODULE_PARM_DESC(inject_stale,
		 "Test of check_release: make this many releases leave a stale pointer for the sweep to catch");

bool vr_track_all = true;
module_param_named(track_all, vr_track_all, bool, 0644);
MODULE_PARM_DESC(track_all, "Track every KVM VM for host reporting");

static unsigned int sample_period_us = 1000;

static int vr_set_period(const char *val, const struct kernel_param *kp)
{
	unsigned int us;
	int ret;

	ret = kstrtouint(val, 0, &us);
	if (ret)
		return ret;
	if (us < 100 || us > 1000000)
		return -EINVAL;
	sample_period_us = us;
	vr_engine_set_period((u64)us * NSEC_PER_USEC);
	return 0;
}

static const struct kernel_param_ops vr_period_ops = {
	.set = vr_set_period,
	.get = param_get_uint,
};
module_param_cb(sample_period_us, &vr_period_ops, &sample_period_us, 0644);
MODULE_PARM_DESC(sample_period_us, "Epoch length in us, 100..1000000");

static int vr_set_policy(const char *val, const struct kernel_param *kp)
{
	int i = sysfs_match_string(vr_policy_names, val);

	if (i < 0)
		return -EINVAL;
	vr_engine_set_policy(i);
	return 0;
}

static int vr_get_policy(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", vr_policy_names[vr_engine_policy()]);
}

static const struct kernel_param_ops vr_policy_ops = {
	.set = vr_set_policy,
	.get = vr_get_policy,
};
module_param_cb(static_policy, &vr_policy_ops, NULL, 0644);
MODULE_PARM_DESC(static_policy, "Static power policy: occupied|busy|none");

const struct vr_source *vr_src;
/* CLOCK_BOOTTIME at load: the books start at zero then (GET_INFO). */
static u64 vr_load_boottime_ns;

static int vr_select_source(void)
{
	static const struct vr_source *const all[] = {
		&vr_source_intel, &vr_source_amd, &vr_source_estimate,
		&vr_source_test,
	};
	const char *why = "unknown source", *why_intel = "", *why_amd = "";
	unsigned int i;

	if (!strcmp(source, "auto")) {
		if (!vr_source_intel.probe(&why_intel)) {
			vr_src = &vr_source_intel;
			pr_info("source intel: RAPL MSRs readable\n");
		} else if (!vr_source_amd.probe(&why_amd)) {
			vr_src = &vr_source_amd;
			pr_info("source amd: RAPL MSRs readable\n");
		} else {
			vr_src = &vr_source_estimate;
			pr_info("source estimate (estimated, not measured): intel: %s; amd: %s\n",
				why_intel, why_amd);
		}
		return 0;
	}
	for (i = 0; i < ARRAY_SIZE(all); i++) {
		if (strcmp(source, all[i]->name))
			continue;
		if (all[i]->probe(&why))
			break;
		vr_src = all[i];
		pr_info("source %s%s: requested\n", vr_src->name,
			vr_src->estimated ? " (estimated, not measured)" : "");
		return 0;
	}
	pr_err("source=%s cannot be used: %s\n", source, why);
	return -ENODEV;
}

static long vr_dev_get_info(void __user *argp)
{
	struct vmrapl_info info = {
		.abi_version = VMRAPL_ABI_VERSION,
		.nr_packages = vr_topo.nr_pkgs,
		.nr_cpus = num_possible_cpus(),
		.source = vr_src->id,
		.domains = vr_pkgs[0]->core.domains,
		.sample_period_us = div_u64(vr_engine_period_ns(),
					    NSEC_PER_USEC),
		.static_policy = vr_engine_policy(),
		.host_esu = vr_pkgs[0]->core.src[VR_DOM_PKG].esu,
	};

	if (vr_src->estimated)
		info.features |= VMRAPL_INFO_F_ESTIMATED;
	if (vr_src == &vr_source_test)
		info.features |= VMRAPL_INFO_F_TEST_INJECT;
	if (READ_ONCE(vr_track_all))
		info.features |= VMRAPL_INFO_F_TRACK_ALL;
	info.features |= VMRAPL_INFO_F_LOAD_TIME | VMRAPL_INFO_F_STATIC_FIT |
			 VMRAPL_INFO_F_STATIC_SPLIT | VMRAPL_INFO_F_STATIC_CORE |
			 VMRAPL_INFO_F_STATIC_HOST | VMRAPL_INFO_F_PKG_V2 |
			 VMRAPL_INFO_F_VCPU_ID | VMRAPL_INFO_F_GUEST_LIMIT;
	if (vr_core_kinds() & BIT(VR_CORE_ENERGY))
		info.features |= VMRAPL_INFO_F_PERCORE;
	if (vr_core_kinds() & BIT(VR_CORE_CYCLES))
		info.features |= VMRAPL_INFO_F_APERF;
	info.load_boottime_ns = vr_load_boottime_ns;
	if (copy_to_user(argp, &info, sizeof(info)))
		return -EFAULT;
	return 0;
}

/* A measured interval's ns for the uapi's __u32 (0: not measured). */
static u32 vr_step_u32(const u64 *ns, bool measured)
{
	return measured ? (u32)min_t(u64, *ns, U32_MAX) : 0;
}

/* One package's entries of GET_PKG_STATS: the books and the static power. */
static void vr_pkg_entry(struct vr_hpkg *hp, struct vmrapl_pkg_stats *ps,
			 struct vmrapl_pkg_static *pst)
{
	struct vr_pkg_stats st[VR_NDOM];
	struct vr_step step[VR_NDOM];
	struct vr_pkg *p = &hp->core;
	struct vr_static_report sr;
	unsigned int d;

	memset(ps, 0, sizeof(*ps));
	memset(pst, 0, sizeof(*pst));
	vr_pkg_read_stats(p, st, VR_NDOM);
	vr_pkg_static_read(hp, &sr);
	for (d = 0; d < VR_NDOM; d++) {
		ps->sampled_uj[d] = vr_eu_to_uj(st[d].sampled);
		ps->tracked_uj[d] = vr_eu_to_uj(st[d].tracked);
		ps->host_uj[d] = vr_eu_to_uj(st[d].host);
		ps->idle_uj[d] = vr_eu_to_uj(st[d].idle);
		ps->lost_uj[d] = vr_eu_to_uj(st[d].lost);
	}
	ps->p_static_uw = sr.p_static_uw;
	ps->samples = READ_ONCE(p->samples);
	ps->busy_ns = READ_ONCE(p->busy_ns);
	ps->nr_cpus = READ_ONCE(p->nr_online);

	pst->origin = sr.origin;
	if (sr.fit_flags & VR_FIT_OK)
		pst->fit_flags |= VMRAPL_FIT_F_CONDITIONED;
	if (sr.fit_flags & VR_FIT_HAVE) {
		pst->fit_flags |= VMRAPL_FIT_F_HELD;
		pst->fit_held_uw = sr.fit_good_uw;
	}
	pst->fit_static_uw = sr.fit_uw;
	pst->fit_static_sd_uw = sr.fit_sd_uw;
	pst->fit_dyn_uw = sr.fit_dyn_uw;
	pst->idle_static_uw = sr.idle_known || sr.idle_prov ? sr.idle_uw : 0;
	pst->fit_blocks = sr.fit_blocks;
	pst->core_static_uw = sr.core_uw;
	pst->core_blocks = sr.core_blocks;
	pst->static_uj = vr_eu_to_uj(st[VR_DOM_PKG].static_e);
	pst->tracked_static_uj = vr_eu_to_uj(st[VR_DOM_PKG].tracked_static);
	pst->host_static_uj = vr_eu_to_uj(st[VR_DOM_PKG].host_static);
	pst->static_inputs = sr.inputs;
	vr_pkg_read_step(p, step);
	for (d = 0; d < VR_NDOM; d++)
		if (step[d].measured)
			pst->update_flags |= BIT(d);
	pst->update_pkg_ns = vr_step_u32(&step[VMRAPL_DOM_PKG].interval_ns,
					 step[VMRAPL_DOM_PKG].measured);
	pst->update_pkg_spread_ns =
		vr_step_u32(&step[VMRAPL_DOM_PKG].spread_ns,
			    step[VMRAPL_DOM_PKG].measured);
	pst->update_core_ns = vr_step_u32(&step[VMRAPL_DOM_CORE].interval_ns,
					  step[VMRAPL_DOM_CORE].measured);
	pst->update_core_spread_ns =
		vr_step_u32(&step[VMRAPL_DOM_CORE].spread_ns,
			    step[VMRAPL_DOM_CORE].measured);
	pst->update_dram_ns = vr_step_u32(&step[VMRAPL_DOM_DRAM].interval_ns,
					  step[VMRAPL_DOM_DRAM].measured);
	pst->update_dram_spread_ns =
		vr_step_u32(&step[VMRAPL_DOM_DRAM].spread_ns,
			    step[VMRAPL_DOM_DRAM].measured);
}

/*
 * VMRAPL_GET_PKG_STATS: the host's books, per package.  Each entry is
 * built in kernel memory (vr_pkg_static_read() takes and drops the close
 * lock) and copied out with no lock held.  The request grew by its size
 * field: a 40-byte one (VMRAPL_PKG_LIST_SIZE_V1) reads as static_ptr 0,
 * and only as many bytes as userspace passed are written back.
 */
static long vr_dev_get_pkg_stats(void __user *argp)
{
	struct vmrapl_pkg_static pst;
	struct vmrapl_pkg_stats ps;
	struct vmrapl_pkg_list l;
	void __user *ent;
	unsigned int i;
	u32 usize;
	int ret;

	if (get_user(usize, (u32 __user *)argp))
		return -EFAULT;
	if (usize < VMRAPL_PKG_LIST_SIZE_V1)
		return -EINVAL;
	if (usize > PAGE_SIZE)
		return -E2BIG;
	ret = copy_struct_from_user(&l, sizeof(l), argp, usize);
	if (ret)
		return ret;
	if (l.flags || l.reserved0 || l.reserved[0] || l.reserved[1] ||
	    l.reserved1)
		return -EINVAL;
	if (l.nr_pkgs && !l.pkgs_ptr)
		return -EINVAL;
	if (l.static_ptr && (l.static_size < VMRAPL_PKG_STATIC_SIZE_V1 ||
			     l.static_size % sizeof(u64)))
		return -EINVAL;
	if (!l.static_ptr && l.static_size)
		return -EINVAL;
	if (l.static_size > PAGE_SIZE)
		return -E2BIG;

	vr_close_all(0);
	for (i = 0; i < min(l.nr_pkgs, vr_topo.nr_pkgs); i++) {
		vr_pkg_entry(vr_pkgs[i], &ps, &pst);
		if (copy_to_user(u64_to_user_ptr(l.pkgs_ptr) + i * sizeof(ps),
				 &ps, sizeof(ps)))
			return -EFAULT;
		if (!l.static_ptr)
			continue;
		/* Of each entry, what this module knows; zeroes after it. */
		ent = u64_to_user_ptr(l.static_ptr) + (size_t)i * l.static_size;
		if (copy_to_user(ent, &pst,
				 min_t(size_t, l.static_size, sizeof(pst))))
			return -EFAULT;
		if (l.static_size > sizeof(pst) &&
		    clear_user(ent + sizeof(pst), l.static_size - sizeof(pst)))
			return -EFAULT;
	}
	l.nr_pkgs = vr_topo.nr_pkgs;
	l.size = sizeof(l);
	return copy_to_user(argp, &l, min_t(size_t, usize, sizeof(l))) ?
	       -EFAULT : 0;
}

/*
 * The host-wide books (every package, every VM, every vCPU) follow the
 * package counters more finely than powercap's energy_uj, which Linux made
 * root-only after PLATYPUS (CVE-2020-8694).  Reading them takes what perf's
 * power events take, CAP_PERFMON (or CAP_SYS_ADMIN); the device alone lets
 * a VMM attach and read its own VM.
 */
static long vr_dev_host_read(unsigned int cmd, void __user *argp)
{
	if (!perfmon_capable())
		return -EPERM;
	if (cmd == VMRAPL_GET_PKG_STATS || cmd == VMRAPL_GET_PKG_STATS_V1)
		return vr_dev_get_pkg_stats(argp);
	if (cmd == VMRAPL_LIST_VMS)
		return vr_list_vms(argp);
	if (cmd == VMRAPL_GET_VM_LIMIT)
		return vr_get_vm_limit(argp);
	return vr_get_vm_stats(argp);
}

static long vr_dev_ioctl(struct file *file, unsigned int cmd,
			 unsigned long arg)
{
	void __user *argp = (void __user *)arg;

	switch (cmd) {
	case VMRAPL_GET_INFO:
		return vr_dev_get_info(argp);
	case VMRAPL_ATTACH_VM:
		return vr_attach_vm(argp);
	case VMRAPL_GET_PKG_STATS:
	case VMRAPL_GET_PKG_STATS_V1:
	case VMRAPL_LIST_VMS:
	case VMRAPL_GET_VM_STATS:
	case VMRAPL_GET_VM_LIMIT:
		return vr_dev_host_read(cmd, argp);
	case VMRAPL_SET_VM_LIMIT:
		return vr_set_vm_limit(argp);
	case VMRAPL_TEST_INJECT:
		return vr_test_inject(argp);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations vr_dev_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = vr_dev_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice vr_miscdev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = VMRAPL_DEVICE_NAME,
	.fops = &vr_dev_fops,
	.mode = 0600,
};

/*
 * The parameters' sysfs files exist before init() and after exit(): a
 * write to static_policy or sample_period_us walks vr_pkgs, under the
 * parameter lock.  The packages are published and freed under it, so
 * that such a write sees them whole or not at all (vr_pkgs NULL).
 */
static int vr_packages_alloc(void)
{
	int ret;

	kernel_param_lock(THIS_MODULE);
	ret = vr_engine_init();
	kernel_param_unlock(THIS_MODULE);
	return ret;
}

static void vr_packages_free(void)
{
	kernel_param_lock(THIS_MODULE);
	vr_engine_exit();
	kernel_param_unlock(THIS_MODULE);
}

static int __init vmrapl_init(void)
{
	int ret;

	vr_load_boottime_ns = ktime_get_boottime_ns();
	ret = vr_topo_init();
	if (ret)
		return ret;
	ret = vr_select_source();
	if (ret)
		goto err_topo;
	ret = vr_packages_alloc();
	if (ret)
		goto err_topo;
	vr_engine_set_period((u64)sample_period_us * NSEC_PER_USEC);
	ret = vr_vm_init();
	if (ret)
		goto err_engine;
	ret = vr_engine_start(&vr_vm_probe_ops);
	if (ret)
		goto err_vm;
	vr_debugfs_init();
	ret = misc_register(&vr_miscdev);
	if (ret)
		goto err_debugfs;

	pr_info("version %s: %u packages, source %s\n", VMRAPL_VERSION,
		vr_topo.nr_pkgs, vr_src->name);
	return 0;

err_debugfs:
	vr_debugfs_exit();
	vr_vm_exit();
	vr_engine_stop();
	vr_vm_drain_seen();
	goto err_engine;
err_vm:
	vr_vm_exit();
	vr_vm_drain_seen();
err_engine:
	vr_packages_free();
err_topo:
	vr_topo_exit();
	return ret;
}

/* Every VM and every reference is gone: anything left is a leak. */
static void vr_check_objects(void)
{
	unsigned int i;
	long n;

	for (i = 0; i < VR_OBJ_NR; i++) {
		n = atomic_long_read(&vr_objects[i]);
		if (n)
			pr_err("leaked %ld %s at unload\n", n, vr_obj_names[i]);
	}
}

static void __exit vmrapl_exit(void)
{
	misc_deregister(&vr_miscdev);
	vr_debugfs_exit();
	vr_vm_exit();
	vr_engine_stop();
	vr_vm_drain_seen();
	vr_check_objects();
	vr_packages_free();
	vr_topo_exit();
}

module_init(vmrapl_init);
module_exit(vmrapl_exit);

MODULE_DESCRIPTION("Per-VM virtual RAPL energy counters for KVM");
MODULE_AUTHOR("The vmrapl developers");
MODULE_LICENSE("GPL");
MODULE_VERSION(VMRAPL_VERSION);
MODULE_INFO(vmrapl_git, VMRAPL_GIT);
