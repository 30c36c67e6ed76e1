// SPDX-License-Identifier: MIT
/*
 * LD_PRELOAD shim for the host tools' tests: a regular file whose name ends
 * in "fake-vmrapl", passed as --device, answers GET_INFO, GET_PKG_STATS,
 * LIST_VMS and GET_VM_STATS with made-up books that grow by 1 J per VM and
 * per call.  VM 7 (2 vCPUs, 2:1) belongs to $FAKE_QEMU_PID (default: the
 * caller), VM 9 (1 vCPU) to the caller.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/vmrapl.h>

static int is_fake(int fd)
{
	char link[64], target[512];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 11)
		return 0;
	target[n] = 0;
	return !strcmp(target + n - 11, "fake-vmrapl");
}

static unsigned int calls;

static int fake(unsigned long req, void *arg)
{
	unsigned int c = __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);

	if (req == VMRAPL_GET_INFO) {
		struct vmrapl_info *i = arg;

		memset(i, 0, sizeof(*i));
		i->abi_version = VMRAPL_ABI_VERSION;
		i->nr_packages = 2;
		i->features = VMRAPL_INFO_F_ESTIMATED | VMRAPL_INFO_F_TRACK_ALL |
			      VMRAPL_INFO_F_LOAD_TIME;
		i->load_boottime_ns = 1000000000ull;	/* 1 s after boot */
		i->nr_cpus = 4;
		i->source = VMRAPL_SOURCE_ESTIMATE;
		i->domains = 1u << VMRAPL_DOM_PKG | 1u << VMRAPL_DOM_DRAM;
		i->sample_period_us = 1000;
		i->static_policy = VMRAPL_STATIC_BUSY;
		i->host_esu = 14;
		return 0;
	}
	if (req == VMRAPL_GET_PKG_STATS) {
		struct vmrapl_pkg_list *l = arg;
		struct vmrapl_pkg_stats *p = (void *)(uintptr_t)l->pkgs_ptr;
		unsigned int i;

		for (i = 0; i < 2 && i < l->nr_pkgs; i++) {
			memset(&p[i], 0, sizeof(p[i]));
			p[i].tracked_uj[0] = 1000000ull * c;
			p[i].host_uj[0] = 200000ull * c;
			p[i].idle_uj[0] = 300000ull * c;
			p[i].lost_uj[0] = 0;
			p[i].sampled_uj[0] = 1500000ull * c;
			p[i].sampled_uj[2] = 100000ull * c;
			p[i].p_static_uw = 5000000;
			p[i].nr_cpus = 2;
		}
		l->nr_pkgs = 2;
		return 0;
	}
	if (req == VMRAPL_LIST_VMS) {
		struct vmrapl_vm_list *l = arg;
		struct vmrapl_vm_entry *v = (void *)(uintptr_t)l->vms_ptr;
		const char *qp = getenv("FAKE_QEMU_PID");

		/* Ask for more room the first time, as a growing list would. */
		if (l->nr_vms < 2) {
			l->nr_vms = 2;
			return 0;
		}
		memset(v, 0, 2 * sizeof(*v));
		v[0].id = 7;
		v[0].pid = qp ? (uint32_t)atoi(qp) : (uint32_t)getpid();
		v[0].nr_vcpus = 2;
		v[0].flags = VMRAPL_VM_F_ATTACHED;
		v[0].energy_uj[0] = 1000000ull * c;
		v[0].energy_uj[2] = 10000ull * c;
		v[0].overhead_uj[0] = 100000ull * c;
		v[0].runtime_ns = 1000000000ull;
		v[1].id = 9;
		v[1].pid = getpid();
		v[1].nr_vcpus = 1;
		v[1].charge = VMRAPL_CHARGE_GUEST;
		v[1].energy_uj[0] = 500000ull * c;
		l->nr_vms = 2;
		return 0;
	}
	if (req == VMRAPL_GET_VM_STATS) {
		struct vmrapl_vm_query *q = arg;
		struct vmrapl_stats *st = (void *)(uintptr_t)q->stats_ptr;
		struct vmrapl_vcpu_stats *v;
		uint32_t n;

		if (q->size != sizeof(*q) || q->flags || !st ||
		    st->size != sizeof(*st) || (st->nr_vcpus && !st->vcpus_ptr)) {
			errno = EINVAL;
			return -1;
		}
		if (q->id != 7 && q->id != 9) {
			errno = ENOENT;
			return -1;
		}
		v = (void *)(uintptr_t)st->vcpus_ptr;
		n = q->id == 7 ? 2 : 1;
		if (st->nr_vcpus >= 1) {
			memset(v, 0, sizeof(*v));
			v[0].energy_uj[0] = (q->id == 7 ? 600000ull : 500000ull) * c;
			v[0].energy_uj[2] = q->id == 7 ? 5000ull * c : 0;
			v[0].runtime_ns = q->id == 7 ? 600000000ull : 0;
		}
		if (n == 2 && st->nr_vcpus >= 2) {
			memset(&v[1], 0, sizeof(*v));
			v[1].energy_uj[0] = 300000ull * c;
			v[1].energy_uj[2] = 5000ull * c;
			v[1].runtime_ns = 400000000ull;
		}
		st->nr_vcpus = n;
		st->nr_vpkgs = 1;
		return 0;
	}
	errno = ENOTTY;
	return -1;
}

int ioctl(int fd, unsigned long req, ...)
{
	static int (*real)(int, unsigned long, ...);
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (is_fake(fd))
		return fake(req, arg);
	if (!real)
		real = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
	return real(fd, req, arg);
}
