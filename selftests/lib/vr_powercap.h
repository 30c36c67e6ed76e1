/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The test kernel's powercap RAPL zones (intel_rapl_msr, which serves
 * AMD's RAPL too): finding a package's zone, reading its counters, and
 * bracketing another reading between two of them.
 */
#ifndef _VR_POWERCAP_H
#define _VR_POWERCAP_H

#include <stddef.h>
#include <stdint.h>

/* Room for a zone's directory, /sys/class/powercap/intel-rapl:N:M. */
#define VR_PC_DIR	300

/*
 * The first number in @dir/@file (energy_uj, max_energy_range_uj, or any
 * sysfs or procfs file), 0 if none.
 */
uint64_t vr_read_u64(const char *dir, const char *file);

/*
 * The zone of package @pkg into @dir: intel-rapl:N named "package-<pkg>",
 * or with @sub ("core", "dram") its subzone intel-rapl:N:M of that name;
 * and, unless @range is NULL, its max_energy_range_uj into @range.
 * 0 or -errno.
 */
int vr_pc_zone(int pkg, const char *sub, char dir[VR_PC_DIR], uint64_t *range);

/* energy_uj's advance from @a to @b; the counter wraps after @range. */
uint64_t vr_pc_delta(uint64_t a, uint64_t b, uint64_t range);

/* energy_uj of each of the @n zones @dir into @uj, in that order. */
void vr_pc_read_all(char (*dir)[VR_PC_DIR], int n, uint64_t *uj);

/*
 * One reading of "the other side", @mid(@i, out), between two energy_uj
 * readings *@a and *@c of the zone @dir, retried for the narrowest
 * bracket; the reading of that bracket is copied into @out (@size
 * bytes).  Returns the bracket's width in uJ (UINT64_MAX: no reading).
 */
uint64_t vr_pc_bracket(const char *dir, uint64_t range,
		       int (*mid)(int i, void *out), int i,
		       void *out, size_t size, uint64_t *a, uint64_t *c);

/*
 * vr_pc_bracket() of each of the @n zones @dir in turn, zone i's reading
 * @mid(i, out) into the i-th of @size bytes of @out, its bracket into
 * @a[i], @c[i] and its width into @w[i]; the calling thread SCHED_FIFO
 * meanwhile (vr_fifo()).
 */
void vr_pc_bracket_all(int n, char (*dir)[VR_PC_DIR], const uint64_t *range,
		       int (*mid)(int i, void *out), void *out, size_t size,
		       uint64_t *a, uint64_t *c, uint64_t *w);

#endif /* _VR_POWERCAP_H */
