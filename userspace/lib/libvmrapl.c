// SPDX-License-Identifier: MIT
/*
 * libvmrapl: /dev/vmrapl ioctls, the mapped MSR page, the KVM MSR filter
 * ranges and the RDMSR/WRMSR exit handler.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <linux/kvm.h>

#include "libvmrapl.h"

struct vmrapl {
	int fd;
	struct vmrapl_info info;
};

struct vmrapl_vm {
	int fd;				/* vmrapl VM fd, -1 for a fake handle */
	unsigned int nr_vcpus;
	unsigned int regset;
	uint32_t domains;		/* the guest's view: see reg_in_view() */
	const struct vmrapl_page *page;	/* NULL: ioctl path only */
	size_t map_len;			/* 0 when @page is not ours to unmap */
	uint8_t bitmaps[VMRAPL_MAX_RANGES][VMRAPL_RANGE_BITMAP_BYTES];
	struct vmrapl_exit_counters cnt;	/* updated atomically */
};

#define DEFAULT_SEQ_TRIES	10000u

static int fail(int err)
{
	errno = err;
	return -err;
}

static int sys_fail(void)
{
	return fail(errno ? errno : EIO);
}

static void count(uint64_t *c)
{
	__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* ---- device ------------------------------------------------------------ */

int vmrapl_open(const char *path, struct vmrapl **out)
{
	struct vmrapl *v;
	int err;

	*out = NULL;
	v = calloc(1, sizeof(*v));
	if (!v)
		return fail(ENOMEM);
	v->fd = open(path ? path : VMRAPL_DEFAULT_PATH, O_RDWR | O_CLOEXEC);
	if (v->fd < 0) {
		err = errno;
		free(v);
		return fail(err);
	}
	if (ioctl(v->fd, VMRAPL_GET_INFO, &v->info) < 0) {
		err = errno;
		close(v->fd);
		free(v);
		return fail(err);
	}
	if (v->info.abi_version != VMRAPL_ABI_VERSION) {
		close(v->fd);
		free(v);
		return fail(EPROTO);
	}
	*out = v;
	return 0;
}

void vmrapl_close(struct vmrapl *v)
{
	if (!v)
		return;
	close(v->fd);
	free(v);
}

int vmrapl_fd(const struct vmrapl *v)
{
	return v->fd;
}

const struct vmrapl_info *vmrapl_get_info(const struct vmrapl *v)
{
	return &v->info;
}

/*
 * What blocks /dev/vmrapl, for the VMM's message.  Under libvirt a QEMU
 * has a private /dev holding only the devices of qemu.conf's
 * cgroup_device_acl (ENOENT with the module loaded: /sys is the host's),
 * a device cgroup that allows the same list (EPERM), and an AppArmor
 * profile (EACCES, as the device node's owner and mode).
 */
const char *vmrapl_open_strerror(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case ENOENT:
		if (access("/sys/module/vmrapl", F_OK))
			return "/dev/vmrapl does not exist (is the vmrapl module loaded?)";
		return "/dev/vmrapl is not in this process's /dev, though the "
		       "vmrapl module is loaded: a private /dev (libvirt's "
		       "namespaces) lacks it; list it in qemu.conf's "
		       "cgroup_device_acl";
	case EPERM:
		return "a device cgroup denies /dev/vmrapl (libvirt: list it "
		       "in qemu.conf's cgroup_device_acl)";
	case EACCES:
		return "permission denied on /dev/vmrapl: its owner and mode "
		       "(the udev rule), or an AppArmor or SELinux policy "
		       "(libvirt's AppArmor profile needs \"/dev/vmrapl rw\")";
	case ENXIO:
	case ENODEV:
		return "the vmrapl device has no driver behind it";
	case EPROTO:
		return "the vmrapl module speaks another ABI version than libvmrapl";
	case ENOTTY:
		return "not a vmrapl device (GET_INFO unknown)";
	default:
		return strerror(err);
	}
}

/* ---- register sets ------------------------------------------------------ */

/*
 * The uapi's table of guest-visible registers: every register set, MSR
 * and page field the library knows comes from there.  VMRAPL_MAX_MSRS is
 * public; vmrapl_regset_msrs() answers ENOSPC rather than outgrow it, and
 * the library's tests check that every register set fits.
 */
static const struct vmrapl_reg registers[] = VMRAPL_REGISTERS;

#define NR_REGISTERS	(sizeof(registers) / sizeof(registers[0]))

/*
 * The guest's view: a register is virtualized when it belongs to every
 * view (dom_mask 0) or the VM has one of its domains.  The others are
 * left alone: not in the filter, not answered.
 */
static int reg_in_view(const struct vmrapl_reg *r, uint32_t domains)
{
	return !r->dom_mask || (domains & r->dom_mask);
}

/* The row of MSR @index in @regset, or NULL. */
static const struct vmrapl_reg *find_reg(unsigned int regset, uint32_t index)
{
	size_t i;

	for (i = 0; i < NR_REGISTERS; i++)
		if (registers[i].regset == regset && registers[i].msr == index)
			return &registers[i];
	return NULL;
}

static int regset_known(unsigned int regset)
{
	size_t i;

	for (i = 0; i < NR_REGISTERS; i++)
		if (registers[i].regset == regset)
			return 1;
	return 0;
}

int vmrapl_regset_msrs(unsigned int regset, uint32_t domains, uint32_t *msrs,
		       unsigned int max)
{
	unsigned int n = 0;
	size_t i;

	if (!regset_known(regset))
		return fail(EINVAL);
	/* The table lists each set's MSRs in increasing order. */
	for (i = 0; i < NR_REGISTERS; i++) {
		const struct vmrapl_reg *r = &registers[i];

		if (r->regset != regset || !reg_in_view(r, domains))
			continue;
		if (n == max)
			return fail(ENOSPC);
		msrs[n++] = r->msr;
	}
	return (int)n;
}

unsigned int vmrapl_guest_dram_esu(unsigned int regset, uint32_t cpuid1_eax)
{
	static const uint8_t fixed[] = {
		0x3f, 0x4f, 0x56, 0x55, 0x6a, 0x6c, 0x57, 0x85,
	};
	unsigned int family = (cpuid1_eax >> 8) & 0xf;
	unsigned int model = ((cpuid1_eax >> 4) & 0xf) |
			     (((cpuid1_eax >> 16) & 0xf) << 4);
	size_t i;

	if (regset != VMRAPL_REGSET_INTEL || family != 6)
		return 0;
	for (i = 0; i < sizeof(fixed); i++)
		if (model == fixed[i])
			return 16;
	return 0;
}

/* ---- attach ------------------------------------------------------------- */

size_t vmrapl_page_size(unsigned int nr_vcpus)
{
	long ps = sysconf(_SC_PAGESIZE);
	size_t len = sizeof(struct vmrapl_page) +
		     (size_t)nr_vcpus * sizeof(struct vmrapl_page_vcpu);

	if (ps <= 0)
		ps = 4096;
	return (len + (size_t)ps - 1) & ~((size_t)ps - 1);
}

int vmrapl_attach(struct vmrapl *v, int kvm_vm_fd, unsigned int nr_vcpus,
		  unsigned int regset, unsigned int esu, struct vmrapl_vm **out)
{
	return vmrapl_attach_flags(v, kvm_vm_fd, nr_vcpus, regset, esu, 0, out);
}

int vmrapl_attach_flags(struct vmrapl *v, int kvm_vm_fd,
			unsigned int nr_vcpus, unsigned int regset,
			unsigned int esu, uint32_t flags, struct vmrapl_vm **out)
{
	struct vmrapl_attach a;
	struct vmrapl_vm *vm;
	void *p;
	int fd, err;

	*out = NULL;
	if (kvm_vm_fd < 0 || nr_vcpus == 0 || nr_vcpus > VMRAPL_MAX_VCPUS ||
	    !regset_known(regset) || esu > 31 ||
	    (flags & ~(uint32_t)VMRAPL_ATTACH_F_VCPU_ID))
		return fail(EINVAL);
	/* An older module would say EINVAL: say what is missing. */
	if ((flags & VMRAPL_ATTACH_F_VCPU_ID) &&
	    !(v->info.features & VMRAPL_INFO_F_VCPU_ID))
		return fail(EOPNOTSUPP);

	vm = calloc(1, sizeof(*vm));
	if (!vm)
		return fail(ENOMEM);

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = flags;
	a.kvm_fd = (__u32)kvm_vm_fd;
	a.nr_vcpus = nr_vcpus;
	a.regset = regset;
	a.esu = esu;
	fd = ioctl(v->fd, VMRAPL_ATTACH_VM, &a);
	if (fd < 0) {
		err = errno;
		free(vm);
		return fail(err);
	}
	vm->fd = fd;
	vm->nr_vcpus = nr_vcpus;
	vm->regset = regset;
	vm->domains = v->info.domains;

	/* The page is an optimisation: without it every read is an ioctl. */
	vm->map_len = vmrapl_page_size(nr_vcpus);
	p = mmap(NULL, vm->map_len, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		vm->map_len = 0;
	} else {
		vm->page = p;
		/* The page tells which domains the guest sees. */
		if (__atomic_load_n(&vm->page->abi_version, __ATOMIC_ACQUIRE) ==
		    VMRAPL_ABI_VERSION)
			vm->domains = __atomic_load_n(&vm->page->domains,
						      __ATOMIC_RELAXED);
	}

	*out = vm;
	return 0;
}

int vmrapl_vm_from_page(const struct vmrapl_page *page, unsigned int nr_vcpus,
			unsigned int regset, uint32_t domains,
			struct vmrapl_vm **out)
{
	struct vmrapl_vm *vm;

	*out = NULL;
	if (nr_vcpus == 0 || nr_vcpus > VMRAPL_MAX_VCPUS ||
	    !regset_known(regset))
		return fail(EINVAL);
	vm = calloc(1, sizeof(*vm));
	if (!vm)
		return fail(ENOMEM);
	vm->fd = -1;
	vm->nr_vcpus = nr_vcpus;
	vm->regset = regset;
	vm->domains = domains;
	vm->page = page;
	*out = vm;
	return 0;
}

void vmrapl_detach(struct vmrapl_vm *vm)
{
	if (!vm)
		return;
	if (vm->map_len)
		munmap((void *)vm->page, vm->map_len);
	if (vm->fd >= 0)
		close(vm->fd);
	free(vm);
}

int vmrapl_vm_fd(const struct vmrapl_vm *vm)
{
	return vm->fd;
}

unsigned int vmrapl_vm_nr_vcpus(const struct vmrapl_vm *vm)
{
	return vm->nr_vcpus;
}

unsigned int vmrapl_vm_regset(const struct vmrapl_vm *vm)
{
	return vm->regset;
}

const struct vmrapl_page *vmrapl_vm_page(const struct vmrapl_vm *vm)
{
	return vm->page;
}

/* ---- configuration ----------------------------------------------------- */

static int vm_ioctl(struct vmrapl_vm *vm, unsigned long req, void *arg)
{
	if (vm->fd < 0)
		return fail(ENODEV);
	if (ioctl(vm->fd, req, arg) < 0)
		return sys_fail();
	return 0;
}

int vmrapl_set_topology(struct vmrapl_vm *vm, const uint32_t *vpkg,
			unsigned int nr_vcpus)
{
	struct vmrapl_topology t;

	memset(&t, 0, sizeof(t));
	t.size = sizeof(t);
	t.nr_vcpus = nr_vcpus;
	t.vpkg_ptr = (__u64)(uintptr_t)vpkg;
	return vm_ioctl(vm, VMRAPL_VM_SET_TOPOLOGY, &t);
}

int vmrapl_add_task(struct vmrapl_vm *vm, pid_t tid)
{
	struct vmrapl_task t;

	if (tid <= 0)
		return fail(EINVAL);
	memset(&t, 0, sizeof(t));
	t.tid = (__u32)tid;
	return vm_ioctl(vm, VMRAPL_VM_ADD_TASK, &t);
}

/* Is /proc/<@dir>/<@file>'s first line @want (less its newline)? */
static bool proc_line_is(const char *dir, const char *file, const char *want)
{
	char path[PATH_MAX], line[64];
	bool ret = false;
	FILE *f;

	if (snprintf(path, sizeof(path), "%s/%s", dir, file) >=
	    (int)sizeof(path))
		return false;
	f = fopen(path, "re");
	if (!f)
		return false;
	if (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		ret = !strcmp(line, want);
	}
	fclose(f);
	return ret;
}

/* Is /proc/@name a child of kthreadd (pid 2), as every kernel thread? */
static bool proc_is_kthread(const char *name)
{
	char path[PATH_MAX], line[64];
	bool ret = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/status", name);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "PPid:", 5)) {
			ret = atoi(line + 5) == 2;
			break;
		}
	fclose(f);
	return ret;
}

/*
 * The entries of @dir (/proc/<pid>/task, or /proc) whose comm is @comm,
 * kernel threads only if @kthreads; their tids into @tids up to @max.
 */
static int scan_comm(const char *dir, const char *comm, bool kthreads,
		     pid_t *tids, unsigned int max)
{
	char path[PATH_MAX];
	struct dirent *d;
	int n = 0;
	DIR *dp;

	dp = opendir(dir);
	if (!dp)
		return sys_fail();
	while ((d = readdir(dp))) {
		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, d->d_name) >=
		    (int)sizeof(path))
			continue;
		if (!proc_line_is(path, "comm", comm) ||
		    (kthreads && !proc_is_kthread(d->d_name)))
			continue;
		if ((unsigned int)n < max)
			tids[n] = (pid_t)atoi(d->d_name);
		n++;
	}
	closedir(dp);
	return n;
}

int vmrapl_vhost_workers(pid_t pid, pid_t *tids, unsigned int max)
{
	char comm[32], dir[64];
	int n;

	if (pid < 0 || (max && !tids))
		return fail(EINVAL);
	if (!pid)
		pid = getpid();
	snprintf(comm, sizeof(comm), "vhost-%d", (int)pid);
	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	n = scan_comm(dir, comm, false, tids, max);
	if (n)
		return n;
	/* Before Linux 6.4: kernel threads, working in the process's mm. */
	return scan_comm("/proc", comm, true, tids, max);
}

int vmrapl_set_policy(struct vmrapl_vm *vm, int charge,
		      uint32_t guest_period_us)
{
	struct vmrapl_policy p;

	memset(&p, 0, sizeof(p));
	if (charge >= 0) {
		p.flags |= VMRAPL_POLICY_F_CHARGE;
		p.charge = (__u32)charge;
	}
	if (guest_period_us) {
		p.flags |= VMRAPL_POLICY_F_GUEST_PERIOD;
		p.guest_period_us = guest_period_us;
	}
	if (!p.flags)
		return 0;
	return vm_ioctl(vm, VMRAPL_VM_SET_POLICY, &p);
}

/* ---- statistics and state ---------------------------------------------- */

int vmrapl_get_stats(struct vmrapl_vm *vm, struct vmrapl_stats *st,
		     struct vmrapl_vcpu_stats *vcpus, unsigned int nr_vcpus,
		     struct vmrapl_vpkg_stats *vpkgs, unsigned int nr_vpkgs)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	st->nr_vcpus = vcpus ? nr_vcpus : 0;
	st->nr_vpkgs = vpkgs ? nr_vpkgs : 0;
	st->vcpus_ptr = (__u64)(uintptr_t)vcpus;
	st->vpkgs_ptr = (__u64)(uintptr_t)vpkgs;
	return vm_ioctl(vm, VMRAPL_VM_GET_STATS, st);
}

int vmrapl_get_state(struct vmrapl_vm *vm, struct vmrapl_state *st,
		     struct vmrapl_vpkg_state *vpkgs, unsigned int nr_vpkgs,
		     uint64_t *vcpus, unsigned int nr_vcpus)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	st->version = VMRAPL_STATE_VERSION;
	st->nr_vpkgs = vpkgs ? nr_vpkgs : 0;
	st->nr_vcpus = vcpus ? nr_vcpus : 0;
	st->vpkgs_ptr = (__u64)(uintptr_t)vpkgs;
	st->vcpus_ptr = (__u64)(uintptr_t)vcpus;
	return vm_ioctl(vm, VMRAPL_VM_GET_STATE, st);
}

int vmrapl_set_state(struct vmrapl_vm *vm, uint32_t esu,
		     const struct vmrapl_vpkg_state *vpkgs,
		     unsigned int nr_vpkgs, const uint64_t *vcpus,
		     unsigned int nr_vcpus)
{
	struct vmrapl_state st;

	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	st.version = VMRAPL_STATE_VERSION;
	st.esu = esu;
	st.nr_vpkgs = vpkgs ? nr_vpkgs : 0;
	st.nr_vcpus = vcpus ? nr_vcpus : 0;
	st.vpkgs_ptr = (__u64)(uintptr_t)vpkgs;
	st.vcpus_ptr = (__u64)(uintptr_t)vcpus;
	return vm_ioctl(vm, VMRAPL_VM_SET_STATE, &st);
}

/* ---- MSR values ---------------------------------------------------------- */

int vmrapl_page_read(const struct vmrapl_page *page, unsigned int vcpu,
		     unsigned int max_tries, struct vmrapl_page_snapshot *snap)
{
	const struct vmrapl_page_vcpu *pv;
	uint32_t s1, s2;
	unsigned int tries;

	if (!max_tries)
		max_tries = DEFAULT_SEQ_TRIES;
	if (vcpu >= __atomic_load_n(&page->nr_vcpus, __ATOMIC_RELAXED))
		return fail(EINVAL);
	pv = &page->vcpu[vcpu];

	for (tries = 0; tries < max_tries; tries++) {
		/* Acquire: the data loads below cannot move above this. */
		s1 = __atomic_load_n(&page->seq, __ATOMIC_ACQUIRE);
		if (s1 & 1) {
			cpu_relax();
			continue;	/* a writer is in the middle */
		}
		snap->abi_version = __atomic_load_n(&page->abi_version,
						    __ATOMIC_RELAXED);
		snap->nr_vcpus = __atomic_load_n(&page->nr_vcpus,
						 __ATOMIC_RELAXED);
		snap->regset = __atomic_load_n(&page->regset, __ATOMIC_RELAXED);
		snap->domains = __atomic_load_n(&page->domains,
						__ATOMIC_RELAXED);
		snap->unit = __atomic_load_n(&page->unit, __ATOMIC_RELAXED);
		snap->power_info = __atomic_load_n(&page->power_info,
						   __ATOMIC_RELAXED);
		snap->power_limit = __atomic_load_n(&page->power_limit,
						    __ATOMIC_RELAXED);
		snap->pkg = __atomic_load_n(&pv->pkg, __ATOMIC_RELAXED);
		snap->core = __atomic_load_n(&pv->core, __ATOMIC_RELAXED);
		snap->dram = __atomic_load_n(&pv->dram, __ATOMIC_RELAXED);
		/* Acquire fence: the data loads cannot move below the recheck. */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s2 = __atomic_load_n(&page->seq, __ATOMIC_RELAXED);
		if (s1 == s2)
			return 0;
		cpu_relax();
	}
	return fail(EAGAIN);
}

/*
 * The value of @index from a page snapshot.  Returns 0 and sets *data, or
 * -ENOENT when the page cannot answer (the ioctl decides then): the MSR is
 * not in @regset or not in the view the page describes.
 */
static int snap_value(const struct vmrapl_page_snapshot *s,
		      unsigned int regset, uint32_t index, uint64_t *data)
{
	const struct vmrapl_reg *r = find_reg(regset, index);

	if (!r || !reg_in_view(r, s->domains))
		return -ENOENT;
	switch (r->reg) {
	case VMRAPL_REG_UNIT:
		*data = s->unit;
		return 0;
	case VMRAPL_REG_POWER_INFO:
		*data = s->power_info;
		return 0;
	case VMRAPL_REG_POWER_LIMIT:
		*data = s->power_limit;		/* all 64 bits */
		return 0;
	/* The energy status registers are 32-bit counters. */
	case VMRAPL_REG_PKG:
		*data = (uint32_t)s->pkg;
		return 0;
	case VMRAPL_REG_CORE:
		*data = (uint32_t)s->core;
		return 0;
	case VMRAPL_REG_DRAM:
		*data = (uint32_t)s->dram;
		return 0;
	}
	return -ENOENT;
}

int vmrapl_read_msr_ioctl(struct vmrapl_vm *vm, unsigned int vcpu,
			  uint32_t index, uint64_t *data)
{
	struct vmrapl_msr m;
	int r;

	memset(&m, 0, sizeof(m));
	m.vcpu = vcpu;
	m.index = index;
	r = vm_ioctl(vm, VMRAPL_VM_READ_MSR, &m);
	if (r == 0)
		*data = m.data;
	return r;
}

static int read_msr(struct vmrapl_vm *vm, unsigned int vcpu, uint32_t index,
		    uint64_t *data, int *from_page)
{
	struct vmrapl_page_snapshot s;

	*from_page = 0;
	if (vcpu >= vm->nr_vcpus)
		return fail(EINVAL);
	if (vm->page && vmrapl_page_read(vm->page, vcpu, 0, &s) == 0 &&
	    s.abi_version == VMRAPL_ABI_VERSION && s.regset == vm->regset &&
	    snap_value(&s, vm->regset, index, data) == 0) {
		*from_page = 1;
		return 0;
	}
	return vmrapl_read_msr_ioctl(vm, vcpu, index, data);
}

int vmrapl_read_msr(struct vmrapl_vm *vm, unsigned int vcpu, uint32_t index,
		    uint64_t *data)
{
	int from_page;

	return read_msr(vm, vcpu, index, data, &from_page);
}

int vmrapl_write_msr(struct vmrapl_vm *vm, unsigned int vcpu, uint32_t index,
		     uint64_t data)
{
	struct vmrapl_msr m;
	int r;

	if (vm->fd < 0)
		return fail(ENODEV);
	memset(&m, 0, sizeof(m));
	m.vcpu = vcpu;
	m.index = index;
	m.data = data;
	r = ioctl(vm->fd, VMRAPL_VM_WRITE_MSR, &m);
	if (r < 0)
		return sys_fail();
	return r ? 1 : 0;
}

/* ---- KVM MSR filter ---------------------------------------------------- */

int vmrapl_build_msr_filter(unsigned int regset, uint32_t domains,
			    struct kvm_msr_filter_range *ranges,
			    unsigned int max_ranges, uint8_t *storage,
			    size_t storage_len)
{
	uint32_t msrs[VMRAPL_MAX_MSRS];
	int n, i, nr = 0;

	n = vmrapl_regset_msrs(regset, domains, msrs, VMRAPL_MAX_MSRS);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		struct kvm_msr_filter_range *r;
		uint8_t *bm;

		/* Extend the current range over a consecutive MSR. */
		if (nr && msrs[i] == ranges[nr - 1].base + ranges[nr - 1].nmsrs) {
			ranges[nr - 1].nmsrs++;
			continue;
		}
		if ((unsigned int)nr == max_ranges ||
		    storage_len < (size_t)(nr + 1) * VMRAPL_RANGE_BITMAP_BYTES)
			return fail(ENOSPC);
		bm = storage + (size_t)nr * VMRAPL_RANGE_BITMAP_BYTES;
		/* Every bit 0: reads and writes of the range exit. */
		memset(bm, 0, VMRAPL_RANGE_BITMAP_BYTES);
		r = &ranges[nr++];
		memset(r, 0, sizeof(*r));
		r->flags = KVM_MSR_FILTER_READ | KVM_MSR_FILTER_WRITE;
		r->base = msrs[i];
		r->nmsrs = 1;
		r->bitmap = bm;
	}
	return nr;
}

int vmrapl_msr_filter_ranges(struct vmrapl_vm *vm,
			     struct kvm_msr_filter_range *ranges,
			     unsigned int max_ranges)
{
	return vmrapl_build_msr_filter(vm->regset, vm->domains, ranges,
				       max_ranges, &vm->bitmaps[0][0],
				       sizeof(vm->bitmaps));
}

static int is_our_bitmap(const struct vmrapl_vm *vm, const void *bm)
{
	const uint8_t *p = bm;

	return p >= &vm->bitmaps[0][0] &&
	       p < &vm->bitmaps[0][0] + sizeof(vm->bitmaps);
}

int vmrapl_msr_filter_merge(struct vmrapl_vm *vm, struct kvm_msr_filter *filter)
{
	struct kvm_msr_filter_range ours[VMRAPL_MAX_RANGES];
	struct kvm_msr_filter_range keep[KVM_MSR_FILTER_MAX_RANGES];
	unsigned int i, nkeep = 0;
	int n;

	n = vmrapl_msr_filter_ranges(vm, ours, VMRAPL_MAX_RANGES);
	if (n < 0)
		return n;
	for (i = 0; i < KVM_MSR_FILTER_MAX_RANGES; i++) {
		const struct kvm_msr_filter_range *r = &filter->ranges[i];

		/* KVM skips empty ranges; a second merge replaces ours. */
		if (!r->nmsrs || is_our_bitmap(vm, r->bitmap))
			continue;
		keep[nkeep++] = *r;
	}
	if (nkeep + (unsigned int)n > KVM_MSR_FILTER_MAX_RANGES)
		return fail(ENOSPC);
	memset(filter->ranges, 0, sizeof(filter->ranges));
	memcpy(filter->ranges, ours, (size_t)n * sizeof(ours[0]));
	memcpy(filter->ranges + n, keep, nkeep * sizeof(keep[0]));
	return n + (int)nkeep;
}

int vmrapl_install_msr_filter(struct vmrapl_vm *vm, int kvm_vm_fd)
{
	struct kvm_msr_filter f;
	int n;

	memset(&f, 0, sizeof(f));
	f.flags = KVM_MSR_FILTER_DEFAULT_ALLOW;
	n = vmrapl_msr_filter_merge(vm, &f);
	if (n < 0)
		return n;
	if (ioctl(kvm_vm_fd, KVM_X86_SET_MSR_FILTER, &f) < 0)
		return sys_fail();
	return 0;
}

int vmrapl_enable_user_msr(int kvm_fd, int kvm_vm_fd, uint32_t extra_reasons)
{
	struct kvm_enable_cap cap;
	int fd = kvm_fd >= 0 ? kvm_fd : kvm_vm_fd;

	if (ioctl(fd, KVM_CHECK_EXTENSION, KVM_CAP_X86_USER_SPACE_MSR) <= 0 ||
	    ioctl(fd, KVM_CHECK_EXTENSION, KVM_CAP_X86_MSR_FILTER) <= 0)
		return fail(EOPNOTSUPP);
	memset(&cap, 0, sizeof(cap));
	cap.cap = KVM_CAP_X86_USER_SPACE_MSR;
	cap.args[0] = KVM_MSR_EXIT_REASON_FILTER | extra_reasons;
	if (ioctl(kvm_vm_fd, KVM_ENABLE_CAP, &cap) < 0)
		return sys_fail();
	return 0;
}

/* ---- exit handling ----------------------------------------------------- */

int vmrapl_handle_exit(struct vmrapl_vm *vm, struct kvm_run *run,
		       unsigned int vcpu)
{
	const struct vmrapl_reg *r;
	uint64_t data = 0;
	int from_page, saved_errno;

	if (run->exit_reason != KVM_EXIT_X86_RDMSR &&
	    run->exit_reason != KVM_EXIT_X86_WRMSR)
		return 0;
	/* Only the guest's view is filtered: anything else is the VMM's. */
	r = find_reg(vm->regset, run->msr.index);
	if (!r || !reg_in_view(r, vm->domains))
		return 0;

	saved_errno = errno;
	/*
	 * Writes: the power limit register's go to vmrapl, which keeps them
	 * (a locked register ignores them, as hardware does); the energy,
	 * unit and power info registers are read-only, and a reserved bit
	 * or an older module (ENOTTY) is #GP.  None reaches the host.
	 */
	if (run->exit_reason == KVM_EXIT_X86_WRMSR) {
		int w = r->reg == VMRAPL_REG_POWER_LIMIT ?
			vmrapl_write_msr(vm, vcpu, r->msr, run->msr.data) :
			-EINVAL;

		run->msr.error = w < 0;
		if (w < 0)
			count(&vm->cnt.gp);
		else if (w)
			count(&vm->cnt.wrmsr_dropped);
		errno = saved_errno;
		return 1;
	}

	if (read_msr(vm, vcpu, r->msr, &data, &from_page) == 0) {
		run->msr.data = data;
		run->msr.error = 0;
		count(&vm->cnt.rdmsr);
		if (from_page)
			count(&vm->cnt.rdmsr_page);
	} else {
		/* ENOENT (not virtualized) or no answer at all: #GP. */
		run->msr.data = 0;
		run->msr.error = 1;
		count(&vm->cnt.gp);
	}
	errno = saved_errno;
	return 1;
}

void vmrapl_exit_counters(const struct vmrapl_vm *vm,
			  struct vmrapl_exit_counters *c)
{
	c->rdmsr = __atomic_load_n(&vm->cnt.rdmsr, __ATOMIC_RELAXED);
	c->rdmsr_page = __atomic_load_n(&vm->cnt.rdmsr_page, __ATOMIC_RELAXED);
	c->wrmsr_dropped = __atomic_load_n(&vm->cnt.wrmsr_dropped,
					   __ATOMIC_RELAXED);
	c->gp = __atomic_load_n(&vm->cnt.gp, __ATOMIC_RELAXED);
}
