/* SPDX-License-Identifier: GPL-2.0 */
/* CPUs of the rig: their package, hotplug, pinning. */
#ifndef _VR_CPU_H
#define _VR_CPU_H

#include <stdbool.h>

/* Package of @cpu (sysfs physical_package_id), -1 if unknown. */
int vr_cpu_package(int cpu);
/* /sys/devices/system/cpu/cpuN/online: 1, 0, or -errno. */
int vr_cpu_get_online(int cpu);
int vr_cpu_set_online(int cpu, bool on);
/* Pin the calling thread to @cpu (errors ignored). */
void vr_pin_self(int cpu);

#endif /* _VR_CPU_H */
