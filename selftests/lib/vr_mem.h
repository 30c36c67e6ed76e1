/* SPDX-License-Identifier: GPL-2.0 */
/* Kernel memory figures of the benchmarks: meminfo, settling. */
#ifndef _VR_MEM_H
#define _VR_MEM_H

/* A /proc/meminfo field in kB ("SUnreclaim:", "VmallocUsed:"), or -1. */
long vr_meminfo_kb(const char *key);
/* Let RCU-deferred frees run and drop the page and slab caches. */
void vr_mem_settle(void);

#endif /* _VR_MEM_H */
