/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmrapl internal declarations shared by the kernel-side files.
 */
#ifndef _VMRAPL_H
#define _VMRAPL_H

#include <linux/types.h>
#include <linux/cpumask.h>
#include <linux/vmrapl.h>

#include "compat.h"

/**
 * struct vr_topo - host energy packages
 * @nr_pkgs: number of packages (dies on multi-die Intel parts) found.
 * @max_pkgs: size of the package tables, from the firmware topology.
 *
 * The mapping from CPU to package index lives in the per-CPU variable
 * vr_cpu_pkg; it is written at init and from the CPU hotplug callbacks,
 * which the hotplug core serializes.
 */
struct vr_topo {
	unsigned int nr_pkgs;
	unsigned int max_pkgs;
};

extern struct vr_topo vr_topo;

int vr_topo_init(void);
void vr_topo_exit(void);
int vr_topo_pkg_of(unsigned int cpu);

#endif /* _VMRAPL_H */
