// SPDX-License-Identifier: GPL-2.0
/*
 * Host energy packages.  RAPL counters are per package on AMD and per die on
 * Intel, so a package index here is a (physical package, die) pair.  A NUMA
 * node is never a package: NPS2/NPS4 parts split one package into several
 * nodes that still share one energy counter.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/topology.h>

#include <asm/processor.h>

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
	u32 die = 0;

	/* Intel RAPL counts per die; AMD and Hygon per package. */
	if (boot_cpu_data.x86_vendor == X86_VENDOR_INTEL)
		die = (u32)topology_die_id(cpu) & 0xffff;
	return (u32)topology_physical_package_id(cpu) << 16 | die;
}

/* Find or assign the dense package index of @cpu; hotplug-serialized. */
int vr_topo_assign(unsigned int cpu)
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
	vr_topo.nr_pkgs = 0;
	vr_topo.max_pkgs = topology_max_packages() * vr_max_dies_per_package();
	if (!vr_topo.max_pkgs)
		vr_topo.max_pkgs = 1;
	vr_pkg_keys = kcalloc(vr_topo.max_pkgs, sizeof(*vr_pkg_keys),
			      GFP_KERNEL);
	return vr_pkg_keys ? 0 : -ENOMEM;
}

void vr_topo_exit(void)
{
	kfree(vr_pkg_keys);
	vr_pkg_keys = NULL;
}
