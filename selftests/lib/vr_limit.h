/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rig's power-limit programs (rapl_limit, bench_limit): a cgroup v2
 * of the test's own with the cpu controller, the rig's vmrapl-limitd,
 * and a VM's power as vmrapl attributes it (VMRAPL_LIST_VMS).
 */
#ifndef _VR_LIMIT_H
#define _VR_LIMIT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define VR_LIM_LIMITD	"/bin/vmrapl-limitd"
#define VR_LIM_CGROOT	"/sys/fs/cgroup"
#define VR_LIM_CG	VR_LIM_CGROOT "/vmrapl-limit-test"
#define VR_LIM_RUNDIR	"/tmp/limitd"
#define VR_LIM_LOG	"/tmp/limitd.log"

/*
 * cgroup v2 at VR_LIM_CGROOT with the cpu controller for its children, and VR_LIM_CG
 * made: 0 or -errno.  vr_lim_cg_undo() removes VR_LIM_CG and undoes what
 * vr_lim_cg_setup() changed (the mount, +cpu), so the programs after it
 * run their VMs in the root cgroup as before.
 */
int vr_lim_cg_setup(void);
void vr_lim_cg_undo(void);
/* VR_LIM_CG's cpu.max line, or "?"; whether it is a quota (not "max"). */
const char *vr_lim_cpu_max(void);
bool vr_lim_throttled(void);
/* The daemon on VR_LIM_RUNDIR, logging to VR_LIM_LOG, ticking every 100 ms. */
pid_t vr_lim_limitd_start(void);
/* Signal it and reap it: its exit status, -1 when a signal killed it. */
int vr_lim_limitd_stop(pid_t pid, int sig);
/* vmrapl-limitd --restore: its exit status. */
int vr_lim_limitd_restore(void);
/* The daemon's log to stderr. */
void vr_lim_log_dump(void);
/* The VM of VMM @pid: its id and PKG energy (uJ); false when not listed. */
bool vr_lim_vm_energy(int fd, pid_t pid, uint64_t *id, uint64_t *uj);
/* The VM's power over @ms, W; < 0 when it is not listed. */
double vr_lim_power_w(int fd, pid_t pid, unsigned int ms);
/* Poll @cond every 50 ms for up to @ms until it is @want. */
bool vr_lim_wait_for(bool (*cond)(void), bool want, unsigned int ms);

#endif /* _VR_LIMIT_H */
