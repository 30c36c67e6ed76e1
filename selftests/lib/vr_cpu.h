/* SPDX-License-Identifier: GPL-2.0 */
/* CPUs of the rig: their package, hotplug, pinning, load, MSRs. */
#ifndef _VR_CPU_H
#define _VR_CPU_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* Package of @cpu (sysfs physical_package_id), -1 if unknown. */
int vr_cpu_package(int cpu);
/* The @nth CPU (from 0, in CPU order) of package @pkg, or -1. */
int vr_pkg_cpu(int pkg, int nth);
/* /sys/devices/system/cpu/cpuN/online: 1, 0, or -errno. */
int vr_cpu_get_online(int cpu);
int vr_cpu_set_online(int cpu, bool on);
/* Pin the calling thread to @cpu (errors ignored). */
void vr_pin_self(int cpu);

/*
 * The calling thread SCHED_FIFO (@on) or back to SCHED_OTHER: measuring
 * threads run so, so that spinners cannot preempt them between the two
 * reads of a bracket.
 */
void vr_fifo(bool on);
/* How many spinners: the online CPUs, at most 8. */
int vr_spin_cpus(void);
/*
 * A spinner: pinned to CPU (long)@cpu, it spins while vr_spin_stopped is
 * 0.  vr_spin_start() starts @n of them, the i-th on CPU i (0, or -1 with
 * none left running); vr_spin_stop() stops and joins them.
 */
extern atomic_int vr_spin_stopped;
void *vr_spin(void *cpu);
int vr_spin_start(pthread_t *t, int n);
void vr_spin_stop(pthread_t *t, int n);

/* /dev/cpu/N/msr of the first CPU of package @pkg, opened @flags. */
int vr_msr_open(int pkg, int flags);
int vr_rdmsr(int fd, uint32_t msr, uint64_t *v);
/* The register's low 32 bits, 0 if it could not be read. */
uint32_t vr_rdmsr32(int fd, uint32_t msr);
int vr_wrmsr(int fd, uint32_t msr, uint64_t v);

#endif /* _VR_CPU_H */
