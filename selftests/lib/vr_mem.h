/* SPDX-License-Identifier: GPL-2.0 */
/* Kernel memory figures of the leak tests: meminfo, slabinfo, settling. */
#ifndef _VR_MEM_H
#define _VR_MEM_H

/* A /proc/meminfo field in kB ("SUnreclaim:", "VmallocUsed:"), or -1. */
long vr_meminfo_kb(const char *key);
/*
 * Bytes of allocated slab objects (active objects x object size over
 * /proc/slabinfo), in kB.  Unlike SUnreclaim it does not count the free
 * room of partial slabs, so fragmentation does not move it.
 */
long vr_slab_active_kb(void);
/* Let RCU-deferred frees run and drop the page and slab caches. */
void vr_mem_settle(void);
/*
 * The median of three growths: a leak shifts all three alike, while a
 * one-off growth of the kernel's caches (and its later release) moves at
 * most two of them.
 */
long vr_median3(long a, long b, long c);

#endif /* _VR_MEM_H */
