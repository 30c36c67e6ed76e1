// SPDX-License-Identifier: MIT
/*
 * LD_PRELOAD shim for smoke.sh: a fake /dev/vmrapl, so that QEMU's
 * -accel kvm,vmrapl=on runs where KVM works but the module cannot be
 * loaded.  ATTACH_VM returns a memfd holding a struct vmrapl_page (unit
 * ESU << 8 | 3 | 10 << 16, vCPU i: package 1000 + i, core 2000 + i) that
 * libvmrapl maps as it would the module's.  Every vmrapl ioctl is logged
 * on stderr ("fakevmrapl: ..."), and so are KVM_SET_CPUID2 (leaf
 * 0x80000007) and KVM_X86_SET_MSR_FILTER (the ranges).
 *
 * FAKE_OPEN_ERR=N       open() of /dev/vmrapl fails with errno N
 * FAKE_ATTACH_ERR=N     ATTACH_VM fails with errno N
 * FAKE_MIN_PERIOD_US=N  SET_POLICY of a guest period below N us: EPERM
 * FAKE_STATE_BASE=N     GET_STATE answers N + 100 * vpkg + domain for the
 *                       packages, N + 7 + i for vCPU i (default 5000)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/kvm.h>
#include <linux/vmrapl.h>

static int dev_fd = -1, vm_fd = -1;
static unsigned int nr_vcpus, regset, esu, nr_vpkgs = 1;
static struct vmrapl_page *page;

#define LOG(...) fprintf(stderr, "fakevmrapl: " __VA_ARGS__)

static int envint(const char *name, int def)
{
	const char *s = getenv(name);

	return s ? atoi(s) : def;
}

static int fake_open(const char *path)
{
	int err = envint("FAKE_OPEN_ERR", 0);

	if (err) {
		LOG("open %s -> errno %d\n", path, err);
		errno = err;
		return -1;
	}
	dev_fd = memfd_create("fake-vmrapl-dev", MFD_CLOEXEC);
	LOG("open %s -> fd %d\n", path, dev_fd);
	return dev_fd;
}

/* open() and open64() (@name): /dev/vmrapl is the fake, the rest real. */
static int open_any(const char *name, const char *path, int flags,
		    va_list ap)
{
	int (*real)(const char *, int, ...);
	mode_t mode = va_arg(ap, mode_t);

	if (!strcmp(path, "/dev/vmrapl"))
		return fake_open(path);
	real = dlsym(RTLD_NEXT, name);
	return real(path, flags, mode);
}

int open(const char *path, int flags, ...)
{
	va_list ap;
	int r;

	va_start(ap, flags);
	r = open_any("open", path, flags, ap);
	va_end(ap);
	return r;
}

int open64(const char *path, int flags, ...)
{
	va_list ap;
	int r;

	va_start(ap, flags);
	r = open_any("open64", path, flags, ap);
	va_end(ap);
	return r;
}

static int fail(int e)
{
	errno = e;
	return -1;
}

static int dev_ioctl(unsigned long req, void *arg)
{
	if (req == VMRAPL_GET_INFO) {
		struct vmrapl_info *i = arg;

		memset(i, 0, sizeof(*i));
		i->abi_version = VMRAPL_ABI_VERSION;
		i->nr_packages = 1;
		i->nr_cpus = 2;
		i->source = VMRAPL_SOURCE_ESTIMATE;
		i->domains = (1u << VMRAPL_DOM_PKG) | (1u << VMRAPL_DOM_CORE);
		i->features = VMRAPL_INFO_F_ESTIMATED;
		i->sample_period_us = 1000;
		i->host_esu = 14;
		LOG("GET_INFO\n");
		return 0;
	}
	if (req == VMRAPL_ATTACH_VM) {
		struct vmrapl_attach *a = arg;
		int err = envint("FAKE_ATTACH_ERR", 0);
		size_t len;
		unsigned int i;

		LOG("ATTACH_VM kvm_fd %u nr_vcpus %u regset %u esu %u\n",
		    a->kvm_fd, a->nr_vcpus, a->regset, a->esu);
		if (err)
			return fail(err);
		nr_vcpus = a->nr_vcpus;
		regset = a->regset;
		esu = a->esu ? a->esu : VMRAPL_DEFAULT_ESU;
		vm_fd = memfd_create("fake-vmrapl-vm", MFD_CLOEXEC);
		len = sizeof(*page) + nr_vcpus * sizeof(page->vcpu[0]);
		len = (len + 4095) & ~4095ul;
		if (ftruncate(vm_fd, len))
			return -1;
		page = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
			    vm_fd, 0);
		if (page == MAP_FAILED)
			return -1;
		page->abi_version = VMRAPL_ABI_VERSION;
		page->nr_vcpus = nr_vcpus;
		page->regset = regset;
		page->unit = (uint64_t)esu << 8 | 3 | 10 << 16;
		page->domains = (1u << VMRAPL_DOM_PKG) | (1u << VMRAPL_DOM_CORE);
		for (i = 0; i < nr_vcpus; i++)
			page->vcpu[i] = (struct vmrapl_page_vcpu){ 1000 + i,
								   2000 + i, 0 };
		return vm_fd;
	}
	return fail(ENOTTY);
}

static int vm_ioctl(unsigned long req, void *arg)
{
	unsigned int i, d;

	switch (req) {
	case VMRAPL_VM_SET_TOPOLOGY: {
		struct vmrapl_topology *t = arg;
		const uint32_t *map = (const uint32_t *)(uintptr_t)t->vpkg_ptr;

		LOG("SET_TOPOLOGY nr_vcpus %u map", t->nr_vcpus);
		nr_vpkgs = 0;
		for (i = 0; i < t->nr_vcpus; i++) {
			fprintf(stderr, " %u", map[i]);
			if (map[i] + 1 > nr_vpkgs)
				nr_vpkgs = map[i] + 1;
		}
		fprintf(stderr, " (vpkgs %u)\n", nr_vpkgs);
		return t->nr_vcpus == nr_vcpus ? 0 : fail(EINVAL);
	}
	case VMRAPL_VM_ADD_TASK: {
		struct vmrapl_task *t = arg;
		char path[64], comm[64] = "?";
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/task/%u/comm", t->tid);
		f = fopen(path, "r");
		if (f) {
			if (fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = 0;
			fclose(f);
		}
		LOG("ADD_TASK tid %u (%s)%s\n", t->tid, comm,
		    t->tid == (unsigned int)getpid() ? " = the process's main thread" : "");
		return f ? 0 : fail(ESRCH);
	}
	case VMRAPL_VM_SET_POLICY: {
		struct vmrapl_policy *p = arg;

		LOG("SET_POLICY flags %u guest_period_us %u\n", p->flags,
		    p->guest_period_us);
		if ((p->flags & VMRAPL_POLICY_F_GUEST_PERIOD) &&
		    p->guest_period_us < (unsigned int)envint("FAKE_MIN_PERIOD_US", 0))
			return fail(EPERM);
		return 0;
	}
	case VMRAPL_VM_GET_STATE: {
		struct vmrapl_state *s = arg;
		struct vmrapl_vpkg_state *vp = (void *)(uintptr_t)s->vpkgs_ptr;
		uint64_t *vc = (void *)(uintptr_t)s->vcpus_ptr;
		uint64_t base = envint("FAKE_STATE_BASE", 5000);

		if (!vp || !vc || s->nr_vpkgs < nr_vpkgs || s->nr_vcpus < nr_vcpus)
			return fail(EINVAL);
		for (i = 0; i < nr_vpkgs; i++) {
			memset(&vp[i], 0, sizeof(vp[i]));
			for (d = 0; d < VMRAPL_NR_DOMAINS; d++)
				vp[i].energy[d] = base + 100 * i + d;
		}
		for (i = 0; i < nr_vcpus; i++)
			vc[i] = base + 7 + i;
		s->esu = esu;
		s->nr_vpkgs = nr_vpkgs;
		s->nr_vcpus = nr_vcpus;
		LOG("GET_STATE esu %u vpkgs %u vcpus %u (base %llu)\n", esu,
		    nr_vpkgs, nr_vcpus, (unsigned long long)base);
		return 0;
	}
	case VMRAPL_VM_SET_STATE: {
		struct vmrapl_state *s = arg;
		struct vmrapl_vpkg_state *vp = (void *)(uintptr_t)s->vpkgs_ptr;
		uint64_t *vc = (void *)(uintptr_t)s->vcpus_ptr;

		LOG("SET_STATE esu %u vpkgs %u vcpus %u:", s->esu, s->nr_vpkgs,
		    s->nr_vcpus);
		for (i = 0; i < s->nr_vpkgs; i++)
			for (d = 0; d < VMRAPL_NR_DOMAINS; d++)
				fprintf(stderr, " %llu", (unsigned long long)vp[i].energy[d]);
		fprintf(stderr, " |");
		for (i = 0; i < s->nr_vcpus; i++)
			fprintf(stderr, " %llu", (unsigned long long)vc[i]);
		fprintf(stderr, "\n");
		if (s->esu != esu || s->nr_vpkgs != nr_vpkgs ||
		    s->nr_vcpus != nr_vcpus)
			return fail(EINVAL);
		return 0;
	}
	case VMRAPL_VM_READ_MSR: {
		struct vmrapl_msr *m = arg;

		LOG("READ_MSR vcpu %u msr %#x\n", m->vcpu, m->index);
		m->data = 42;
		return 0;
	}
	case VMRAPL_VM_WRITE_MSR: {
		struct vmrapl_msr *m = arg;

		LOG("WRITE_MSR vcpu %u msr %#x data %#llx\n", m->vcpu, m->index,
		    (unsigned long long)m->data);
		/* As the module: only 0x610, and none of its reserved bits. */
		if (m->index != VMRAPL_MSR_PKG_POWER_LIMIT ||
		    (m->data & 0x7f000000ff000000ull))
			return fail(EINVAL);
		__atomic_store_n(&page->power_limit, m->data, __ATOMIC_RELAXED);
		return 0;
	}
	}
	LOG("VM ioctl %#lx unknown\n", req);
	return fail(ENOTTY);
}

int ioctl(int fd, unsigned long req, ...)
{
	static int (*real)(int, unsigned long, ...);
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (fd >= 0 && fd == dev_fd)
		return dev_ioctl(req, arg);
	if (fd >= 0 && fd == vm_fd)
		return vm_ioctl(req, arg);
	if (req == KVM_SET_CPUID2) {
		struct kvm_cpuid2 *c = arg;
		unsigned int i;

		for (i = 0; i < c->nent; i++)
			if (c->entries[i].function == 0x80000007)
				LOG("KVM_SET_CPUID2 fd %d: 0x80000007 edx %#x (bit 14 %s)\n",
				    fd, c->entries[i].edx,
				    c->entries[i].edx & (1u << 14) ? "set" : "clear");
	}
	if (req == KVM_X86_SET_MSR_FILTER) {
		struct kvm_msr_filter *f = arg;
		unsigned int i;

		LOG("KVM_X86_SET_MSR_FILTER flags %#x:", f->flags);
		for (i = 0; i < KVM_MSR_FILTER_MAX_RANGES; i++)
			if (f->ranges[i].nmsrs)
				fprintf(stderr, " %#x/%u/%s%s", f->ranges[i].base,
					f->ranges[i].nmsrs,
					f->ranges[i].flags & KVM_MSR_FILTER_READ ? "r" : "",
					f->ranges[i].flags & KVM_MSR_FILTER_WRITE ? "w" : "");
		fprintf(stderr, "\n");
	}
	if (!real)
		real = dlsym(RTLD_NEXT, "ioctl");
	return real(fd, req, arg);
}
