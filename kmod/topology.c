// SPDX-License-Identifier: GPL-2.0
/*
 * Host energy packages.  RAPL counters are per package on AMD and per die on
 * Intel, so a package index here is a (physical package, die) pair.  A NUMA
 * node is never a package: NPS2/NPS4 parts split one package into several
 * nodes that still share one energy counter.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/topology.h>

#include "vmrapl.h"

struct vr_topo vr_topo;

/*
 * Package id of each (physical package, die), dense from 0.  Written only at
 * init and from CPU hotplug callbacks (serialized by the hotplug lock);
 * read locklessly by the probes through vr_cpu_pkg.
 */
static u32 *vr_pkg_keys;
static DEFINE_PER_CPU(int, vr_cpu_pkg) = -1;

static u32 vr_cpu_key(unsigned int cpu)
{
	return (u32)topology_physical_package_id(cpu) << 16 |
	       ((u32)topology_die_id(cpu) & 0xffff);
}

/* Find or assign the dense package index of @cpu. */
static int vr_topo_assign(unsigned int cpu)
{
	u32 key = vr_cpu_key(cpu);
	unsigned int i;

	for (i = 0; i < vr_topo.nr_pkgs; i++)
		if (vr_pkg_keys[i] == key)
			goto found;
	if (vr_topo.nr_pkgs == vr_topo.max_pkgs)
		return -ENOSPC;
	vr_pkg_keys[vr_topo.nr_pkgs++] = key;
found:
	per_cpu(vr_cpu_pkg, cpu) = i;
	return i;
}

int vr_topo_pkg_of(unsigned int cpu)
{
	return per_cpu(vr_cpu_pkg, cpu);
}

int vr_topo_init(void)
{
	unsigned int cpu;
	int ret = 0;

	vr_topo.max_pkgs = topology_max_packages() * vr_max_dies_per_package();
	if (!vr_topo.max_pkgs)
		vr_topo.max_pkgs = 1;
	vr_pkg_keys = kcalloc(vr_topo.max_pkgs, sizeof(*vr_pkg_keys),
			      GFP_KERNEL);
	if (!vr_pkg_keys)
		return -ENOMEM;

	cpus_read_lock();
	for_each_online_cpu(cpu) {
		ret = vr_topo_assign(cpu);
		if (ret < 0)
			break;
	}
	cpus_read_unlock();
	if (ret < 0) {
		pr_err("more packages than the firmware topology announced\n");
		kfree(vr_pkg_keys);
		return ret;
	}
	return 0;
}

void vr_topo_exit(void)
{
	kfree(vr_pkg_keys);
	vr_pkg_keys = NULL;
}
