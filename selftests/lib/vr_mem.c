// SPDX-License-Identifier: GPL-2.0
/* Kernel memory figures of the vmrapl benchmarks. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vr_mem.h"
#include "vr_time.h"

long vr_meminfo_kb(const char *key)
{
	size_t n = strlen(key);
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n))
			v = atol(line + n);
	if (f)
		fclose(f);
	return v;
}

/* Give every SLUB cache's empty and per-CPU slabs back (x/shrink). */
static void vr_slab_shrink(void)
{
	char path[512];
	struct dirent *d;
	DIR *dir;
	int fd;

	dir = opendir("/sys/kernel/slab");
	while (dir && (d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink",
			 d->d_name);
		fd = open(path, O_WRONLY);
		if (fd < 0)
			continue;
		/* Caches that refuse it are simply left as they are. */
		if (write(fd, "1", 1) < 0)
			errno = 0;
		close(fd);
	}
	if (dir)
		closedir(dir);
}

void vr_mem_settle(void)
{
	int fd;

	/* Two grace periods' worth of deferred frees, then the caches. */
	vr_sleep_ms(1000);
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
	if (fd >= 0) {
		if (write(fd, "3", 1) < 0)
			perror("drop_caches");
		close(fd);
	}
	/*
	 * Without a shrink, the per-CPU partial slabs of KVM's caches
	 * (kvm_vcpu, x86_emulator, kvm_mmu_page_header: order-3 slabs) stay
	 * and move SUnreclaim by ~300 kB from one snapshot to the next.  The
	 * guest hangs once blamed on this step were KVM's preempt-notifier
	 * static key being patched under TCG as the last VM went away
	 * (soft lockups at finish_task_switch+0x9f); the rig now keeps a VM
	 * alive (kvm-hold), so the key no longer flips.
	 */
	vr_slab_shrink();
	vr_sleep_ms(500);
}
