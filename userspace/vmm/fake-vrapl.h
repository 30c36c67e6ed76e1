/* SPDX-License-Identifier: MIT */
/*
 * --fake-vrapl: a stand-in for the vmrapl module, for developing and
 * testing the VMM side where the module cannot be loaded.  An in-process
 * struct vmrapl_page is updated like the kernel would (sequence count,
 * 1 ms period) from the vCPU threads' CPU time at a fixed power, and
 * libvmrapl reads it through vmrapl_vm_from_page().  The KVM MSR filter,
 * the user-space MSR exits and the exit handler are all real.
 */
#ifndef VMRAPL_VMM_FAKE_VRAPL_H
#define VMRAPL_VMM_FAKE_VRAPL_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "libvmrapl.h"

#define FAKE_ESU		14
#define FAKE_WATTS_PER_VCPU	10
/*
 * Counters start this close to 2^32 so that a short run sees a wrap:
 * 4096 counts, 12.5 ms of CPU time for two vCPUs at 10 W each, which a
 * vCPU thread gets even on a loaded machine (0xFFFF0000, 200 ms, did not
 * always in 1.5 s).
 */
#define FAKE_START		0xFFFFF000u

struct fake_vrapl {
	struct vmrapl_page *page;
	size_t len;
	unsigned int nr_vcpus;
	clockid_t *clocks;		/* CPU clocks of the vCPU threads */
	uint64_t *core;			/* energy so far per vCPU, counts */
	pthread_t writer;
	int running;
	int stop;
};

/* Allocate and fill the page; the writer is not running yet. */
int fake_vrapl_init(struct fake_vrapl *f, unsigned int regset,
		    unsigned int nr_vcpus);
/* fake_vrapl_init() and a libvmrapl handle that reads the fake's page. */
int fake_vrapl_attach(struct fake_vrapl *f, unsigned int regset,
		      unsigned int nr_vcpus, struct vmrapl_vm **out);
/* Start updating from the CPU time of @threads (the vCPU threads). */
int fake_vrapl_start(struct fake_vrapl *f, const pthread_t *threads);
/*
 * Stop updating, and book what the fake charged as the module would
 * answer VMRAPL_VM_GET_STATS: each vCPU's energy per measured domain
 * (pkg and core its own, DRAM a quarter of it) in @v (f->nr_vcpus
 * entries) and their sum in @st; runtimes are the caller's.
 */
void fake_vrapl_stats(struct fake_vrapl *f, struct vmrapl_stats *st,
		      struct vmrapl_vcpu_stats *v);
void fake_vrapl_destroy(struct fake_vrapl *f);

#endif
