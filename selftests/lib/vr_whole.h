/* SPDX-License-Identifier: GPL-2.0 */
/*
 * "No part exceeds its whole", for every answer of the uapi that has parts:
 * a VM's overhead and static part within its energy (LIST_VMS,
 * GET_STATS, GET_VM_STATS), each vCPU and virtual package within the VM,
 * a package's books within what it sampled (GET_PKG_STATS).  The fuzz and
 * load programs check every answer they get against these while they
 * churn VMs, so that an answer read from live counters without one
 * snapshot is caught.
 */
#ifndef _VR_WHOLE_H
#define _VR_WHOLE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/vmrapl.h>

/* 0 if consistent; else -1 and the first broken rule in @why. */
int vr_whole_entry(const struct vmrapl_vm_entry *e, char *why, size_t len);
int vr_whole_stats(const struct vmrapl_stats *st,
		   const struct vmrapl_vcpu_stats *vs, uint32_t nvs,
		   const struct vmrapl_vpkg_stats *ps, uint32_t nps,
		   char *why, size_t len);
int vr_whole_pkg(const struct vmrapl_pkg_stats *p,
		 const struct vmrapl_pkg_static *s, char *why, size_t len);

/* What vr_whole_sweep() read and found. */
struct vr_whole_count {
	unsigned long answers;	/* answers checked */
	unsigned long broken;	/* answers that broke a rule */
	char first[256];	/* the first broken rule */
};

/*
 * One sweep over /dev/vmrapl fd @dev (CAP_PERFMON): LIST_VMS, GET_VM_STATS
 * of every VM listed (with its vCPUs and virtual packages), and
 * GET_PKG_STATS, each answer checked.  VMs that go away meanwhile are not
 * an error.  Returns -errno if an ioctl failed otherwise, else 0.
 */
int vr_whole_sweep(int dev, struct vr_whole_count *c);

/*
 * A thread of sweeps on a device fd of its own, 5 ms apart (each sweep
 * closes the packages by IPI), from vr_whole_start() to vr_whole_stop().
 * @err: the first -errno of a sweep (or of opening the device).
 */
struct vr_whole_reader {
	volatile int stop;
	int err;
	struct vr_whole_count c;
	pthread_t th;
};

int vr_whole_start(struct vr_whole_reader *w);
void vr_whole_stop(struct vr_whole_reader *w);

#endif /* _VR_WHOLE_H */
