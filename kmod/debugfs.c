// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/debug/vmrapl/: the engine's books, for operators and for the
 * selftests that check conservation in the real kernel.
 *
 *   packages  per package: source, units, static power and how it was
 *             obtained, samples; the online fit of P_static (intercept,
 *             standard error, slope, blocks, whether it is conditioned and
 *             in use); and per domain the totals in eu (2^-24 J):
 *             sampled = tracked + host + idle + lost, exactly, with the
 *             static parts of tracked and host; the lag correction's
 *             mean counter lag (lag_ns), and per counter its update
 *             interval and spread, measured or the 1 ms default (the
 *             "core" line is PP0's, or the per-core counter's on AMD);
 *             each domain's counter unit (esu: 1/2^esu J, the DRAM
 *             counter's fixed 16 on the server models that have one).
 *   vms       per tracked VM: energy, overhead and runtime.
 *   objects   the module's live objects by kind ("vms 0"), for the leak
 *             checks: all zero once every VM is gone.
 *   checks    what the module's self-checks found: key_early_moves,
 *             release_stale (check_release), stack_end_made_in_probe
 *             (check_stack) are 0 unless vmrapl has a bug;
 *             stack_end_seen_on_entry counts damage found before a probe
 *             ran, someone else's.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "vmrapl.h"

static struct dentry *vr_debugfs_dir;

atomic_long_t vr_objects[VR_OBJ_NR];
const char *const vr_obj_names[VR_OBJ_NR] = {
	[VR_OBJ_VMS] = "vms",
	[VR_OBJ_ACCTS] = "accts",
	[VR_OBJ_GV_PAGES] = "gv_pages",
	[VR_OBJ_TASKS] = "tasks",
	[VR_OBJ_KEYS] = "keys",
	[VR_OBJ_KVM_REFS] = "kvm_refs",
};

static int vr_packages_show(struct seq_file *m, void *unused)
{
	struct vr_pkg_stats st[VR_NDOM];
	struct vr_step step[VR_NDOM];
	struct vr_static_report sr;
	unsigned int i, d;

	vr_close_all(0);
	for (i = 0; i < vr_topo.nr_pkgs; i++) {
		struct vr_hpkg *hp = vr_pkgs[i];
		struct vr_pkg *p = &hp->core;

		vr_pkg_read_stats(p, st, VR_NDOM);
		seq_printf(m, "pkg %u source %s estimated %d esu %u width %u cpus %u online %u period_ns %llu policy %s p_static_uw %llu static_origin %s samples %llu epochs_idle %llu busy_ns %llu wraps %llu resets %llu overruns %llu over_max %llu safety_reads %llu remote_closes %llu release_closes %llu\n",
			   i, vr_src->name, vr_src->estimated,
			   p->src[VR_DOM_PKG].esu, p->src[VR_DOM_PKG].width,
			   p->nr_cpus, READ_ONCE(p->nr_online),
			   READ_ONCE(p->period_ns),
			   vr_policy_names[READ_ONCE(p->policy) % VR_STATIC_NR],
			   READ_ONCE(p->p_static_uw),
			   vr_origin_names[READ_ONCE(p->static_origin) %
					   VR_STATIC_ORIGIN_NR],
			   READ_ONCE(p->samples), READ_ONCE(p->epochs_idle),
			   READ_ONCE(p->busy_ns), READ_ONCE(p->wraps),
			   READ_ONCE(p->resets), READ_ONCE(p->overruns),
			   READ_ONCE(p->over_max),
			   READ_ONCE(hp->safety_reads),
			   READ_ONCE(hp->remote_closes),
			   READ_ONCE(hp->release_closes));
		vr_pkg_static_read(hp, &sr);
		seq_printf(m, "pkg %u fit static_uw %llu sd_uw %llu dyn_uw %llu blocks %u conditioned %d held_uw %llu in_use %d idle_uw %llu idle_known %d idle_provisional %d core_uw %llu core_blocks %u host_floor_uw %llu\n",
			   i, sr.fit_uw, sr.fit_sd_uw, sr.fit_dyn_uw,
			   sr.fit_blocks, !!(sr.fit_flags & VR_FIT_OK),
			   sr.fit_flags & VR_FIT_HAVE ? sr.fit_good_uw : 0,
			   sr.origin == VR_STATIC_FIT, sr.idle_uw,
			   sr.idle_known, sr.idle_prov, sr.core_uw,
			   sr.core_blocks, sr.host_floor_uw);
		seq_printf(m, "pkg %u percore active %d weight %s weighted_eu %llu clamps %llu\n",
			   i, vr_hpkg_core_kind(hp) != VR_CORE_NONE,
			   vr_core_kind_names[vr_hpkg_core_kind(hp) %
					      VR_CORE_KIND_NR],
			   READ_ONCE(p->percore_e),
			   READ_ONCE(p->percore_clamps));
		vr_pkg_read_step(p, step);
		seq_printf(m, "pkg %u lag_ns %llu\n", i, READ_ONCE(p->lag_ns));
		for (d = 0; d < VR_NDOM; d++) {
			if (!(p->domains & BIT(d)) && !step[d].measured)
				continue;
			seq_printf(m, "pkg %u update dom %s interval_ns %llu spread_ns %llu intervals %u measured %d\n",
				   i, vr_dom_names[d], step[d].interval_ns,
				   step[d].spread_ns, step[d].used,
				   step[d].measured);
		}
		for (d = 0; d < VR_NDOM; d++) {
			if (!(p->domains & BIT(d)))
				continue;
			seq_printf(m, "pkg %u dom %s sampled %llu static %llu dynamic %llu tracked %llu host %llu idle %llu lost %llu tracked_static %llu host_static %llu esu %u\n",
				   i, vr_dom_names[d], st[d].sampled,
				   st[d].static_e, st[d].dynamic, st[d].tracked,
				   st[d].host, st[d].idle, st[d].lost,
				   st[d].tracked_static, st[d].host_static,
				   p->src[d].esu);
		}
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(vr_packages);

static int vr_vms_show(struct seq_file *m, void *unused)
{
	vr_close_all(0);
	vr_vm_debugfs_show(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(vr_vms);

static int vr_checks_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "stack_end_made_in_probe %ld\n",
		   atomic_long_read(&vr_stack_bad[1]));
	vr_vm_debugfs_checks(m);
	/* Not vmrapl's: the marker was already broken when a probe ran. */
	seq_printf(m, "stack_end_seen_on_entry %ld\n",
		   atomic_long_read(&vr_stack_bad[0]));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(vr_checks);

static int vr_objects_show(struct seq_file *m, void *unused)
{
	unsigned int i;

	for (i = 0; i < VR_OBJ_NR; i++)
		seq_printf(m, "%s %ld\n", vr_obj_names[i],
			   atomic_long_read(&vr_objects[i]));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(vr_objects);

void vr_debugfs_init(void)
{
	/* debugfs is optional: failures only cost the observability. */
	vr_debugfs_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("packages", 0400, vr_debugfs_dir, NULL,
			    &vr_packages_fops);
	debugfs_create_file("vms", 0400, vr_debugfs_dir, NULL, &vr_vms_fops);
	debugfs_create_file("objects", 0400, vr_debugfs_dir, NULL,
			    &vr_objects_fops);
	debugfs_create_file("checks", 0400, vr_debugfs_dir, NULL,
			    &vr_checks_fops);
}

void vr_debugfs_exit(void)
{
	debugfs_remove_recursive(vr_debugfs_dir);
	vr_debugfs_dir = NULL;
}
