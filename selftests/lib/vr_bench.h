/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the rig benchmark programs (selftests/vmrapl/bench*.c): many
 * small idle KVM guests, the packages' counter reads from debugfs, and the
 * "BENCH key=value ..." lines bench/rig/collect.sh turns into markdown.
 *
 * An idle VM here is what an idle guest looks like to the host: an
 * in-kernel irqchip, vCPU threads blocked inside KVM_RUN (vCPU 0 in HLT
 * with interrupts off, the others waiting for a SIPI), 64 KiB of guest
 * memory.  They wake only when stopped.
 *
 * Everything is static inline: each bench program uses a different part.
 */
#ifndef _VR_BENCH_H
#define _VR_BENCH_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/kvm.h>

#include "vr_kvm.h"

#define VB_GUEST_MEM	(64 * 1024)
#define VB_GUEST_CODE	0x1000
#define VB_MAX_VCPUS	8

struct vb_vm {
	int vm;
	int nr;
	int vrfd;		/* vmrapl VM fd, -1 when not attached */
	void *mem;
	int vcpu[VB_MAX_VCPUS];
	struct kvm_run *run[VB_MAX_VCPUS];
	pthread_t th[VB_MAX_VCPUS];
	volatile int stop;
	bool irqchip;
};

static int vb_kvm_fd = -1;
static int vb_run_size;

static inline void vb_sig(int sig)
{
	(void)sig;
}

static inline int vb_init(void)
{
	struct sigaction sa = { .sa_handler = vb_sig };

	sigaction(SIGUSR1, &sa, NULL);	/* no SA_RESTART: KVM_RUN -> EINTR */
	if (vb_kvm_fd >= 0)
		return 0;
	vb_kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (vb_kvm_fd < 0)
		return -errno;
	vb_run_size = ioctl(vb_kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	return vb_run_size > 0 ? 0 : -EINVAL;
}

/* Create (not start) an idle VM of @nr vCPUs; 0 or -errno. */
static inline int vb_vm_create(struct vb_vm *v, int nr)
{
	static const uint8_t hlt[] = { 0xf4, 0xeb, 0xfd };	/* hlt; jmp */
	struct kvm_userspace_memory_region reg = { 0 };
	int i;

	memset(v, 0, sizeof(*v));
	v->vrfd = -1;
	v->nr = nr;
	for (i = 0; i < VB_MAX_VCPUS; i++)
		v->vcpu[i] = -1;
	v->vm = ioctl(vb_kvm_fd, KVM_CREATE_VM, 0);
	if (v->vm < 0)
		return -errno;
	/* Without an irqchip, HLT exits to userspace; with it, it blocks. */
	v->irqchip = ioctl(v->vm, KVM_CREATE_IRQCHIP, 0) == 0;
	v->mem = mmap(NULL, VB_GUEST_MEM, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (v->mem == MAP_FAILED) {
		v->mem = NULL;
		return -ENOMEM;
	}
	memcpy((char *)v->mem + VB_GUEST_CODE, hlt, sizeof(hlt));
	reg.memory_size = VB_GUEST_MEM;
	reg.userspace_addr = (uintptr_t)v->mem;
	if (ioctl(v->vm, KVM_SET_USER_MEMORY_REGION, &reg))
		return -errno;
	for (i = 0; i < nr; i++) {
		struct kvm_sregs sregs;
		struct kvm_regs regs = { 0 };

		v->vcpu[i] = ioctl(v->vm, KVM_CREATE_VCPU, i);
		if (v->vcpu[i] < 0)
			return -errno;
		v->run[i] = mmap(NULL, vb_run_size, PROT_READ | PROT_WRITE,
				 MAP_SHARED, v->vcpu[i], 0);
		if (v->run[i] == MAP_FAILED) {
			v->run[i] = NULL;
			return -ENOMEM;
		}
		if (ioctl(v->vcpu[i], KVM_GET_SREGS, &sregs))
			return -errno;
		sregs.cs.base = 0;
		sregs.cs.selector = 0;
		if (ioctl(v->vcpu[i], KVM_SET_SREGS, &sregs))
			return -errno;
		regs.rip = VB_GUEST_CODE;
		regs.rsp = 0x8000;
		regs.rflags = 2;
		if (ioctl(v->vcpu[i], KVM_SET_REGS, &regs))
			return -errno;
	}
	return 0;
}

struct vb_arg {
	struct vb_vm *v;
	int i;
};

static inline void *vb_vcpu_thread(void *p)
{
	struct vb_arg a = *(struct vb_arg *)p;
	struct vb_vm *v = a.v;

	free(p);
	while (!v->stop) {
		if (ioctl(v->vcpu[a.i], KVM_RUN, 0) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		/* No irqchip: an HLT exit; stay idle in userspace. */
		if (v->run[a.i]->exit_reason == KVM_EXIT_HLT ||
		    v->run[a.i]->exit_reason == KVM_EXIT_IO)
			while (!v->stop)
				pause();
		else
			break;
	}
	return NULL;
}

static inline int vb_vm_start(struct vb_vm *v)
{
	pthread_attr_t attr;
	int i, ret = 0;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (i = 0; i < v->nr && !ret; i++) {
		struct vb_arg *a = malloc(sizeof(*a));

		if (!a) {
			ret = -ENOMEM;
			break;
		}
		a->v = v;
		a->i = i;
		if (pthread_create(&v->th[i], &attr, vb_vcpu_thread, a)) {
			free(a);
			v->th[i] = 0;
			ret = -EAGAIN;
		}
	}
	pthread_attr_destroy(&attr);
	return ret;
}

static inline void vb_vm_stop(struct vb_vm *v)
{
	int i;

	v->stop = 1;
	for (i = 0; i < v->nr; i++) {
		if (!v->th[i])
			continue;
		v->run[i]->immediate_exit = 1;
		pthread_kill(v->th[i], SIGUSR1);
		pthread_join(v->th[i], NULL);
		v->th[i] = 0;
	}
}

static inline void vb_vm_destroy(struct vb_vm *v)
{
	int i;

	vb_vm_stop(v);
	if (v->vrfd >= 0)
		close(v->vrfd);
	for (i = 0; i < v->nr; i++) {
		if (v->run[i])
			munmap(v->run[i], vb_run_size);
		if (v->vcpu[i] >= 0)
			close(v->vcpu[i]);
	}
	if (v->vm > 0)
		close(v->vm);
	if (v->mem)
		munmap(v->mem, VB_GUEST_MEM);
	v->vm = -1;
	v->vrfd = -1;
	v->mem = NULL;
}

/* Counter reads of package @pkg so far: samples + safety_reads. */
static inline int vb_pkg_reads(int pkg, uint64_t *reads)
{
	char line[1024];
	int p, found = -ENOENT;
	FILE *f;

	f = fopen("/sys/kernel/debug/vmrapl/packages", "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *s, *r;

		if (sscanf(line, "pkg %d source", &p) != 1 || p != pkg)
			continue;
		s = strstr(line, " samples ");
		r = strstr(line, " safety_reads ");
		if (!s || !r)
			continue;
		*reads = strtoull(s + 9, NULL, 10) + strtoull(r + 14, NULL, 10);
		found = 0;
	}
	fclose(f);
	return found;
}

static inline int vb_nr_packages(void)
{
	int cpu, max = -1, n = sysconf(_SC_NPROCESSORS_ONLN);

	for (cpu = 0; cpu < n; cpu++)
		if (vr_cpu_package(cpu) > max)
			max = vr_cpu_package(cpu);
	return max + 1;
}

static inline int vb_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The @pct percentile (nearest rank) of @n values, sorted in place. */
static inline uint64_t vb_pctl(uint64_t *v, int n, int pct)
{
	int k;

	if (n <= 0)
		return 0;
	qsort(v, n, sizeof(*v), vb_cmp_u64);
	k = (n * pct + 99) / 100;
	if (k < 1)
		k = 1;
	return v[k - 1];
}

/* SUnreclaim + VmallocUsed in kB, after letting deferred frees run. */
static inline long vb_kmem_kb(void)
{
	vr_mem_settle();
	return vr_meminfo_kb("SUnreclaim:") + vr_meminfo_kb("VmallocUsed:");
}

#endif /* _VR_BENCH_H */
