// SPDX-License-Identifier: MIT
/*
 * Unit tests of libvmrapl that need neither the vmrapl module nor KVM:
 * register sets, filter ranges and merging, the page reader under its
 * sequence count, and the RDMSR/WRMSR exit handler against a fake page.
 * Output: TAP version 13.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/kvm.h>

#include "tap.h"
#include "libvmrapl.h"



#define CHECK(cond) do { if (!(cond)) { diag("%s:%d: %s", __FILE__, \
	__LINE__, #cond); return 0; } } while (0)

#define DOMS(...) dom_mask((int[]){ __VA_ARGS__, -1 })
static uint32_t dom_mask(const int *d)
{
	uint32_t m = 0;

	for (; *d >= 0; d++)
		m |= 1u << *d;
	return m;
}

/* A fake vmrapl page for NR vCPUs, laid out like the kernel's. */
#define NR 4
struct fake {
	struct vmrapl_page page;
	struct vmrapl_page_vcpu vcpu[NR];
};

static void fake_init(struct fake *f, unsigned int regset, uint32_t domains)
{
	unsigned int i;

	memset(f, 0, sizeof(*f));
	f->page.abi_version = VMRAPL_ABI_VERSION;
	f->page.nr_vcpus = NR;
	f->page.regset = regset;
	f->page.unit = 0xA0E03;		/* ESU 14 */
	f->page.power_info = 0x3C0;
	f->page.power_limit = 0x8000;
	f->page.domains = domains;
	for (i = 0; i < NR; i++) {
		f->page.vcpu[i].pkg = 1000 + i;
		f->page.vcpu[i].core = 2000 + i;
		f->page.vcpu[i].dram = 3000 + i;
	}
}

static void run_exit(struct kvm_run *run, uint32_t reason, uint32_t index,
		     uint64_t data)
{
	memset(run, 0, sizeof(*run));
	run->exit_reason = reason;
	run->msr.reason = KVM_MSR_EXIT_REASON_FILTER;
	run->msr.index = index;
	run->msr.data = data;
	run->msr.error = 0x55;	/* must be overwritten */
}

/* A fake page (fake_init()) and the VM that reads it. */
static int fake_vm(struct fake *f, unsigned int regset, uint32_t domains,
		   struct vmrapl_vm **vm)
{
	fake_init(f, regset, domains);
	return vmrapl_vm_from_page(&f->page, NR, regset, domains, vm);
}

/*
 * Hand @vm the exit (@reason, @msr, @data) of @vcpu: it returns @handled
 * and leaves run.msr.error at @err (0x55: untouched).
 */
static int exit_is(struct vmrapl_vm *vm, uint32_t reason, uint32_t msr,
		   uint64_t data, unsigned int vcpu, int handled, uint8_t err)
{
	struct kvm_run run;

	run_exit(&run, reason, msr, data);
	return vmrapl_handle_exit(vm, &run, vcpu) == handled &&
	       run.msr.error == err;
}

/* The guest's rdmsr of @msr on @vcpu is ours and reads @want. */
static int rdmsr_is(struct vmrapl_vm *vm, uint32_t msr, unsigned int vcpu,
		    uint64_t want)
{
	struct kvm_run run;

	run_exit(&run, KVM_EXIT_X86_RDMSR, msr, 0);
	return vmrapl_handle_exit(vm, &run, vcpu) == 1 &&
	       run.msr.error == 0 && run.msr.data == want;
}

/* ---- tests ---------------------------------------------------------------- */

static int t_regset_intel(void)
{
	uint32_t m[VMRAPL_MAX_MSRS];
	int n;

	n = vmrapl_regset_msrs(VMRAPL_REGSET_INTEL, DOMS(VMRAPL_DOM_PKG,
			       VMRAPL_DOM_CORE), m, VMRAPL_MAX_MSRS);
	CHECK(n == 5);
	CHECK(m[0] == 0x606 && m[1] == 0x610 && m[2] == 0x611 &&
	      m[3] == 0x614 && m[4] == 0x639);
	/* The view rule: 0x639 (PP0) only with the CORE domain. */
	n = vmrapl_regset_msrs(VMRAPL_REGSET_INTEL, DOMS(VMRAPL_DOM_PKG,
			       VMRAPL_DOM_DRAM), m, VMRAPL_MAX_MSRS);
	CHECK(n == 5 && m[4] == 0x619);
	n = vmrapl_regset_msrs(VMRAPL_REGSET_INTEL, ~0u, m, VMRAPL_MAX_MSRS);
	CHECK(n == 6 && m[4] == 0x619 && m[5] == 0x639);
	CHECK(vmrapl_regset_msrs(VMRAPL_REGSET_INTEL, ~0u, m, 5) == -ENOSPC);
	/* Registers of every view stay without any domain. */
	n = vmrapl_regset_msrs(VMRAPL_REGSET_INTEL, 0, m, VMRAPL_MAX_MSRS);
	CHECK(n == 3 && m[0] == 0x606 && m[1] == 0x610 && m[2] == 0x614);
	return 1;
}

/* CPUID leaf 1 EAX of family 6, model @m, stepping @st. */
static uint32_t fam6(unsigned int m, unsigned int st)
{
	return (6u << 8) | ((m & 0xf) << 4) | ((m >> 4) << 16) | st;
}

static int t_dram_unit(void)
{
	static const unsigned int fixed[] = {
		0x3f, 0x4f, 0x56, 0x55, 0x6a, 0x6c, 0x57, 0x85,
	};
	/* Client parts, Sapphire/Emerald Rapids: 0x606's unit. */
	static const unsigned int esu_unit[] = {
		0x3c, 0x4e, 0x5e, 0x8c, 0x97, 0x8f, 0xcf, 0x86, 0x7e,
	};
	size_t i;

	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		CHECK(vmrapl_guest_dram_esu(VMRAPL_REGSET_INTEL,
					    fam6(fixed[i], 4)) == 16);
		/* The AMD register set has no DRAM register. */
		CHECK(vmrapl_guest_dram_esu(VMRAPL_REGSET_AMD,
					    fam6(fixed[i], 4)) == 0);
	}
	for (i = 0; i < sizeof(esu_unit) / sizeof(esu_unit[0]); i++)
		CHECK(vmrapl_guest_dram_esu(VMRAPL_REGSET_INTEL,
					    fam6(esu_unit[i], 0)) == 0);
	/* QEMU's Skylake-Server: 0x00050654. */
	CHECK(vmrapl_guest_dram_esu(VMRAPL_REGSET_INTEL, 0x00050654) == 16);
	/* Another family with model 0x55's low bits, an AMD Zen 4. */
	CHECK(vmrapl_guest_dram_esu(VMRAPL_REGSET_INTEL,
				    (0xfu << 8) | (5u << 4) | (5u << 16)) == 0);
	CHECK(vmrapl_guest_dram_esu(VMRAPL_REGSET_INTEL, 0x00a10f11) == 0);
	CHECK(vmrapl_guest_dram_esu(VMRAPL_REGSET_INTEL, 0) == 0);
	return 1;
}

static int t_regset_amd(void)
{
	uint32_t m[VMRAPL_MAX_MSRS];
	int n = vmrapl_regset_msrs(VMRAPL_REGSET_AMD, ~0u, m, VMRAPL_MAX_MSRS);

	CHECK(n == 3);
	CHECK(m[0] == 0xC0010299 && m[1] == 0xC001029A && m[2] == 0xC001029B);
	n = vmrapl_regset_msrs(VMRAPL_REGSET_AMD, DOMS(VMRAPL_DOM_PKG), m,
			       VMRAPL_MAX_MSRS);
	CHECK(n == 2 && m[0] == 0xC0010299 && m[1] == 0xC001029B);
	CHECK(vmrapl_regset_msrs(0, 0, m, 6) == -EINVAL && errno == EINVAL);
	CHECK(vmrapl_regset_msrs(99, 0, m, 6) == -EINVAL);
	return 1;
}

static int range_ok(const struct kvm_msr_filter_range *r, uint32_t base,
		    uint32_t nmsrs)
{
	unsigned int i;

	if (r->base != base || r->nmsrs != nmsrs ||
	    r->flags != (KVM_MSR_FILTER_READ | KVM_MSR_FILTER_WRITE))
		return 0;
	/* KVM copies whole longs: every byte of 8 must be readable and 0. */
	for (i = 0; i < VMRAPL_RANGE_BITMAP_BYTES; i++)
		if (r->bitmap[i] != 0)
			return 0;
	return 1;
}

static int t_filter_intel_nodram(void)
{
	struct kvm_msr_filter_range r[VMRAPL_MAX_RANGES];
	uint8_t st[VMRAPL_MAX_RANGES * VMRAPL_RANGE_BITMAP_BYTES];
	int n;

	memset(st, 0xff, sizeof(st));
	n = vmrapl_build_msr_filter(VMRAPL_REGSET_INTEL, DOMS(VMRAPL_DOM_PKG,
				    VMRAPL_DOM_CORE), r, VMRAPL_MAX_RANGES,
				    st, sizeof(st));
	CHECK(n == 4);
	CHECK(range_ok(&r[0], 0x606, 1));
	CHECK(range_ok(&r[1], 0x610, 2));
	CHECK(range_ok(&r[2], 0x614, 1));
	CHECK(range_ok(&r[3], 0x639, 1));
	/* Distinct bitmaps inside the caller's storage. */
	CHECK(r[0].bitmap == st && r[3].bitmap == st + 3 * 8);
	return 1;
}

static int t_filter_intel_dram(void)
{
	struct kvm_msr_filter_range r[VMRAPL_MAX_RANGES];
	uint8_t st[VMRAPL_MAX_RANGES * VMRAPL_RANGE_BITMAP_BYTES];
	int n;

	n = vmrapl_build_msr_filter(VMRAPL_REGSET_INTEL, DOMS(VMRAPL_DOM_PKG,
				    VMRAPL_DOM_CORE, VMRAPL_DOM_DRAM), r,
				    VMRAPL_MAX_RANGES, st, sizeof(st));
	CHECK(n == 5 && n <= VMRAPL_MAX_RANGES);
	CHECK(range_ok(&r[3], 0x619, 1));
	CHECK(range_ok(&r[4], 0x639, 1));
	return 1;
}

static int t_filter_amd(void)
{
	struct kvm_msr_filter_range r[VMRAPL_MAX_RANGES];
	uint8_t st[VMRAPL_RANGE_BITMAP_BYTES];
	int n;

	n = vmrapl_build_msr_filter(VMRAPL_REGSET_AMD, ~0u, r, 1, st,
				    sizeof(st));
	CHECK(n == 1);
	CHECK(range_ok(&r[0], 0xC0010299, 3));
	return 1;
}

static int t_filter_nospace(void)
{
	struct kvm_msr_filter_range r[VMRAPL_MAX_RANGES];
	uint8_t st[VMRAPL_MAX_RANGES * VMRAPL_RANGE_BITMAP_BYTES];

	uint32_t doms = DOMS(VMRAPL_DOM_PKG, VMRAPL_DOM_CORE);	/* 4 ranges */

	CHECK(vmrapl_build_msr_filter(VMRAPL_REGSET_INTEL, doms, r, 3, st,
				      sizeof(st)) == -ENOSPC);
	CHECK(vmrapl_build_msr_filter(VMRAPL_REGSET_INTEL, doms, r, 5, st,
				      3 * 8 + 7) == -ENOSPC);
	CHECK(vmrapl_build_msr_filter(VMRAPL_REGSET_INTEL, doms, r, 5, st,
				      4 * 8) == 4);
	return 1;
}

static int t_filter_merge(void)
{
	static uint8_t vmm_bm[2][8] = { { 0xff }, { 0 } };
	struct kvm_msr_filter f;
	struct vmrapl_vm *vm;
	struct fake fk;
	int n;

	CHECK(fake_vm(&fk, VMRAPL_REGSET_INTEL, DOMS(VMRAPL_DOM_PKG), &vm) == 0);
	/* A VMM filter with a hole at slot 0 and two real ranges. */
	memset(&f, 0, sizeof(f));
	f.ranges[1] = (struct kvm_msr_filter_range){
		.flags = KVM_MSR_FILTER_READ, .nmsrs = 8, .base = 0x10,
		.bitmap = vmm_bm[0] };
	f.ranges[5] = (struct kvm_msr_filter_range){
		.flags = KVM_MSR_FILTER_WRITE, .nmsrs = 1, .base = 0x4b564d00,
		.bitmap = vmm_bm[1] };
	n = vmrapl_msr_filter_merge(vm, &f);
	/* PKG only: no 0x619, and no 0x639 without the CORE domain. */
	CHECK(n == 5);
	CHECK(range_ok(&f.ranges[0], 0x606, 1));
	CHECK(range_ok(&f.ranges[2], 0x614, 1));
	CHECK(f.ranges[3].base == 0x10 && f.ranges[3].bitmap == vmm_bm[0]);
	CHECK(f.ranges[4].base == 0x4b564d00);
	CHECK(f.ranges[5].nmsrs == 0 && f.ranges[15].nmsrs == 0);
	/* Merging twice does not duplicate vmrapl's ranges. */
	CHECK(vmrapl_msr_filter_merge(vm, &f) == 5);
	CHECK(f.ranges[3].base == 0x10 && f.ranges[5].nmsrs == 0);
	/* A full filter is left alone. */
	for (n = 0; n < KVM_MSR_FILTER_MAX_RANGES; n++)
		f.ranges[n] = (struct kvm_msr_filter_range){
			.flags = KVM_MSR_FILTER_READ, .nmsrs = 1,
			.base = 0x100 + (uint32_t)n, .bitmap = vmm_bm[1] };
	CHECK(vmrapl_msr_filter_merge(vm, &f) == -ENOSPC);
	CHECK(f.ranges[0].base == 0x100 && f.ranges[15].base == 0x10f);
	vmrapl_detach(vm);
	return 1;
}

static int t_page_size(void)
{
	long ps = sysconf(_SC_PAGESIZE);

	CHECK(sizeof(struct vmrapl_page) == 72);
	CHECK(sizeof(struct vmrapl_page_vcpu) == 24);
	CHECK(vmrapl_page_size(1) == (size_t)ps);
	CHECK(vmrapl_page_size(167) == (size_t)ps);	/* 72 + 167*24 = 4080 */
	CHECK(vmrapl_page_size(168) == 2 * (size_t)ps);
	CHECK(vmrapl_page_size(VMRAPL_MAX_VCPUS) == 7 * (size_t)ps);
	return 1;
}

static int t_page_read(void)
{
	struct vmrapl_page_snapshot s;
	struct fake fk;

	fake_init(&fk, VMRAPL_REGSET_INTEL, 7);
	CHECK(vmrapl_page_read(&fk.page, 2, 0, &s) == 0);
	CHECK(s.pkg == 1002 && s.core == 2002 && s.dram == 3002);
	CHECK(s.unit == 0xA0E03 && s.power_limit == 0x8000 &&
	      s.power_info == 0x3C0 && s.domains == 7 && s.nr_vcpus == NR);
	CHECK(vmrapl_page_read(&fk.page, NR, 0, &s) == -EINVAL);
	/* A writer that never finishes: bounded retries, no hang. */
	fk.page.seq = 5;
	CHECK(vmrapl_page_read(&fk.page, 0, 100, &s) == -EAGAIN);
	CHECK(errno == EAGAIN);
	fk.page.seq = 6;
	CHECK(vmrapl_page_read(&fk.page, 0, 1, &s) == 0);
	return 1;
}

/* Writer thread: updates the page like the kernel would. */
struct race {
	struct fake fk;
	int stop;
	unsigned long writes;
};

static void *writer(void *arg)
{
	struct race *r = arg;
	uint64_t k = 1;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		uint32_t s = __atomic_load_n(&r->fk.page.seq, __ATOMIC_RELAXED);
		struct vmrapl_page_vcpu *v = &r->fk.page.vcpu[1];

		__atomic_store_n(&r->fk.page.seq, s + 1, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_RELEASE);
		k++;
		__atomic_store_n(&v->pkg, k, __ATOMIC_RELAXED);
		__atomic_store_n(&r->fk.page.unit, k, __ATOMIC_RELAXED);
		__atomic_store_n(&v->core, k, __ATOMIC_RELAXED);
		__atomic_store_n(&r->fk.page.power_limit, k, __ATOMIC_RELAXED);
		__atomic_store_n(&v->dram, k, __ATOMIC_RELAXED);
		__atomic_store_n(&r->fk.page.seq, s + 2, __ATOMIC_RELEASE);
		__atomic_fetch_add(&r->writes, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static int t_page_race(void)
{
	static struct race r;
	struct vmrapl_page_snapshot s;
	pthread_t th;
	unsigned long i, torn = 0, busy = 0;
	uint64_t last = 0;
	int back = 0;

	fake_init(&r.fk, VMRAPL_REGSET_INTEL, 7);
	r.fk.page.vcpu[1].pkg = r.fk.page.vcpu[1].core = 1;
	r.fk.page.vcpu[1].dram = r.fk.page.unit = 1;
	r.fk.page.power_limit = 1;
	CHECK(pthread_create(&th, NULL, writer, &r) == 0);
	while (!__atomic_load_n(&r.writes, __ATOMIC_RELAXED))
		;
	/* Enough reads, and enough of them racing with writes. */
	for (i = 0; i < 300000 ||
	     (__atomic_load_n(&r.writes, __ATOMIC_RELAXED) < 100000 &&
	      i < 100000000); i++) {
		if (vmrapl_page_read(&r.fk.page, 1, 0, &s) < 0) {
			busy++;
			continue;
		}
		if (s.pkg != s.core || s.pkg != s.dram || s.pkg != s.unit ||
		    s.pkg != s.power_limit)
			torn++;
		if (s.pkg < last)
			back = 1;
		last = s.pkg;
	}
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	diag("page race: %lu reads, %lu writes, %lu torn, %lu gave up",
	     i, __atomic_load_n(&r.writes, __ATOMIC_RELAXED), torn, busy);
	CHECK(torn == 0);
	CHECK(!back);
	return 1;
}

static int t_exit_intel(void)
{
	struct vmrapl_exit_counters c;
	struct vmrapl_vm *vm;
	struct fake fk;
	uint32_t doms = DOMS(VMRAPL_DOM_PKG, VMRAPL_DOM_CORE, VMRAPL_DOM_DRAM);

	CHECK(fake_vm(&fk, VMRAPL_REGSET_INTEL, doms, &vm) == 0);
	CHECK(rdmsr_is(vm, 0x611, 1, 1001));
	CHECK(rdmsr_is(vm, 0x639, 3, 2003));
	CHECK(rdmsr_is(vm, 0x619, 0, 3000));
	CHECK(rdmsr_is(vm, 0x606, 0, 0xA0E03));
	CHECK(rdmsr_is(vm, 0x610, 0, 0x8000));
	CHECK(rdmsr_is(vm, 0x614, 0, 0x3C0));
	/* Energy registers are 32-bit counters; 0x610 keeps all 64 bits. */
	fk.page.vcpu[2].pkg = 0x100000005ull;
	fk.page.power_limit = 0x8000000000008000ull;
	CHECK(rdmsr_is(vm, 0x611, 2, 5));
	CHECK(rdmsr_is(vm, 0x610, 0, 0x8000000000008000ull));
	vmrapl_exit_counters(vm, &c);
	CHECK(c.rdmsr == 8 && c.rdmsr_page == 8 && c.gp == 0);
	vmrapl_detach(vm);
	return 1;
}

static int t_exit_writes(void)
{
	struct vmrapl_exit_counters c;
	struct vmrapl_vm *vm;
	struct kvm_run run;
	struct fake fk;

	CHECK(fake_vm(&fk, VMRAPL_REGSET_INTEL, 3, &vm) == 0);
	/*
	 * 0x610 goes to the module (VMRAPL_VM_WRITE_MSR, the rig's msr
	 * tests): a VM with only a page has no fd to take it, so #GP; the
	 * page untouched.
	 */
	run_exit(&run, KVM_EXIT_X86_WRMSR, 0x610, 0x12345);
	CHECK(vmrapl_handle_exit(vm, &run, 0) == 1);
	CHECK(run.msr.error == 1 && fk.page.power_limit == 0x8000);
	CHECK(vmrapl_write_msr(vm, 0, 0x610, 0x12345) == -ENODEV);
	/* Any other RAPL MSR: #GP. */
	CHECK(exit_is(vm, KVM_EXIT_X86_WRMSR, 0x611, 1, 0, 1, 1));
	CHECK(exit_is(vm, KVM_EXIT_X86_WRMSR, 0x606, 1, 0, 1, 1));
	vmrapl_exit_counters(vm, &c);
	CHECK(c.wrmsr_dropped == 0 && c.gp == 3);
	vmrapl_detach(vm);
	return 1;
}

static int t_exit_not_ours(void)
{
	struct vmrapl_vm *vm;
	struct kvm_run run;
	struct fake fk;

	CHECK(fake_vm(&fk, VMRAPL_REGSET_INTEL, 3, &vm) == 0);
	/* Another MSR, another exit reason, an AMD MSR on an Intel VM. */
	run_exit(&run, KVM_EXIT_X86_RDMSR, 0x10, 7);
	CHECK(vmrapl_handle_exit(vm, &run, 0) == 0);
	CHECK(run.msr.error == 0x55 && run.msr.data == 7);
	CHECK(exit_is(vm, KVM_EXIT_X86_RDMSR, 0xC001029B, 7, 0, 0, 0x55));
	CHECK(exit_is(vm, KVM_EXIT_IO, 0x611, 7, 0, 0, 0x55));
	/* 0x619 is not filtered without the DRAM domain: not ours either. */
	CHECK(exit_is(vm, KVM_EXIT_X86_RDMSR, 0x619, 7, 0, 0, 0x55));
	vmrapl_detach(vm);
	return 1;
}

static int t_exit_gp(void)
{
	struct vmrapl_vm *vm;
	struct kvm_run run;
	struct fake fk;

	/* PKG only: 0x639 is outside the view, so not ours (not filtered). */
	CHECK(fake_vm(&fk, VMRAPL_REGSET_INTEL, DOMS(VMRAPL_DOM_PKG), &vm) == 0);
	CHECK(exit_is(vm, KVM_EXIT_X86_RDMSR, 0x639, 0, 0, 0, 0x55));
	/* vCPU index out of range. */
	CHECK(exit_is(vm, KVM_EXIT_X86_RDMSR, 0x611, 0, NR, 1, 1));
	/* A page stuck in a write: no hang, #GP (a real VM uses the ioctl). */
	fk.page.seq = 1;
	CHECK(exit_is(vm, KVM_EXIT_X86_RDMSR, 0x611, 0, 0, 1, 1));
	fk.page.seq = 2;
	/* A page from another ABI or register set is not trusted. */
	fk.page.abi_version = 2;
	CHECK(exit_is(vm, KVM_EXIT_X86_RDMSR, 0x611, 0, 0, 1, 1));
	fk.page.abi_version = VMRAPL_ABI_VERSION;
	fk.page.regset = VMRAPL_REGSET_AMD;
	CHECK(exit_is(vm, KVM_EXIT_X86_RDMSR, 0x611, 0, 0, 1, 1));
	fk.page.regset = VMRAPL_REGSET_INTEL;
	run_exit(&run, KVM_EXIT_X86_RDMSR, 0x611, 0);
	CHECK(vmrapl_handle_exit(vm, &run, 0) == 1 && run.msr.error == 0 &&
	      run.msr.data == 1000);
	vmrapl_detach(vm);
	return 1;
}

static int t_exit_amd(void)
{
	struct vmrapl_vm *vm;
	struct kvm_run run;
	struct fake fk;
	uint32_t doms = DOMS(VMRAPL_DOM_PKG, VMRAPL_DOM_CORE);

	fake_init(&fk, VMRAPL_REGSET_AMD, doms);
	fk.page.unit = 0xA1003;	/* ESU 16 */
	CHECK(vmrapl_vm_from_page(&fk.page, NR, VMRAPL_REGSET_AMD, doms,
				  &vm) == 0);
	CHECK(rdmsr_is(vm, 0xC0010299, 0, 0xA1003));
	CHECK(rdmsr_is(vm, 0xC001029A, 2, 2002));
	CHECK(rdmsr_is(vm, 0xC001029B, 3, 1003));
	/* No 0x610 on AMD: neither reads nor writes are ours. */
	run_exit(&run, KVM_EXIT_X86_WRMSR, 0x610, 0);
	CHECK(vmrapl_handle_exit(vm, &run, 0) == 0);
	CHECK(exit_is(vm, KVM_EXIT_X86_WRMSR, 0xC001029B, 0, 0, 1, 1));
	vmrapl_detach(vm);
	return 1;
}

static int t_open_missing(void)
{
	struct vmrapl *v = (struct vmrapl *)&v;

	errno = 0;
	CHECK(vmrapl_open("/nonexistent/vmrapl", &v) == -ENOENT);
	CHECK(errno == ENOENT && v == NULL);
	CHECK(strstr(vmrapl_open_strerror(-ENOENT), "module") != NULL);
	/* Each block named, with what to change under libvirt. */
	if (access("/sys/module/vmrapl", F_OK))
		CHECK(strstr(vmrapl_open_strerror(ENOENT), "is the vmrapl module loaded?"));
	CHECK(strstr(vmrapl_open_strerror(EPERM), "device cgroup"));
	CHECK(strstr(vmrapl_open_strerror(EPERM), "cgroup_device_acl"));
	CHECK(strstr(vmrapl_open_strerror(-EACCES), "owner and mode"));
	CHECK(strstr(vmrapl_open_strerror(EACCES), "AppArmor"));
	/* A device that is not vmrapl: GET_INFO is refused. */
	CHECK(vmrapl_open("/dev/null", &v) < 0 && v == NULL);
	return 1;
}

/* A thread that names itself, reports its tid, and waits to be let go. */
struct named {
	pthread_t th;
	char name[16];
	pid_t tid;
	int go[2];	/* the test closes go[1] to end it */
	int ready[2];
};

static void *named_fn(void *p)
{
	struct named *t = p;
	char c;

	prctl(PR_SET_NAME, t->name);
	t->tid = (pid_t)syscall(SYS_gettid);
	if (write(t->ready[1], "x", 1) != 1)
		return NULL;
	while (read(t->go[0], &c, 1) > 0)
		;
	return NULL;
}

static int named_start(struct named *t, const char *name)
{
	char c;

	snprintf(t->name, sizeof(t->name), "%s", name);
	if (pipe(t->go) || pipe(t->ready))
		return -1;
	if (pthread_create(&t->th, NULL, named_fn, t))
		return -1;
	return read(t->ready[0], &c, 1) == 1 ? 0 : -1;
}

static void named_stop(struct named *t)
{
	close(t->go[1]);
	pthread_join(t->th, NULL);
	close(t->go[0]);
	close(t->ready[0]);
	close(t->ready[1]);
}

/*
 * The caller's vhost workers are its threads named "vhost-<pid>" (Linux
 * 6.4 and later): two such threads here, and one named for another pid,
 * which is not one.
 */
static int t_vhost_workers(void)
{
	struct named t[3];
	char name[16];
	pid_t tids[4] = { 0 };
	int n, ok = 0;

	snprintf(name, sizeof(name), "vhost-%d", (int)getpid());
	if (named_start(&t[0], name) || named_start(&t[1], name) ||
	    named_start(&t[2], "vhost-1"))
		return 0;
	n = vmrapl_vhost_workers(0, tids, 4);
	if (n != 2) {
		diag("found %d", n);
		goto out;
	}
	if (!((tids[0] == t[0].tid && tids[1] == t[1].tid) ||
	      (tids[0] == t[1].tid && tids[1] == t[0].tid))) {
		diag("tids %d %d, want %d %d", tids[0], tids[1], t[0].tid,
		     t[1].tid);
		goto out;
	}
	/* Too small an array: the count, and only what fits. */
	tids[1] = 0;
	if (vmrapl_vhost_workers(getpid(), tids, 1) != 2 || tids[1])
		goto out;
	if (vmrapl_vhost_workers(0, NULL, 0) != 2)
		goto out;
	if (vmrapl_vhost_workers(-1, tids, 4) != -EINVAL ||
	    vmrapl_vhost_workers(0, NULL, 4) != -EINVAL)
		goto out;
	ok = 1;
out:
	named_stop(&t[2]);
	named_stop(&t[1]);
	named_stop(&t[0]);
	return ok;
}

/* No thread and no kernel thread of that name: none. */
static int t_vhost_none(void)
{
	pid_t tids[4];

	return vmrapl_vhost_workers(0, tids, 4) == 0;
}

int main(void)
{
	static const struct {
		const char *name;
		int (*fn)(void);
	} tests[] = {
		{ "regset: intel MSRs follow the view (0x619 DRAM, 0x639 CORE)", t_regset_intel },
		{ "regset: amd MSRs follow the view, unknown regset", t_regset_amd },
		{ "dram unit: fixed 2^-16 J on the Intel server models Linux lists", t_dram_unit },
		{ "filter: intel without DRAM is 4 exact ranges", t_filter_intel_nodram },
		{ "filter: intel with DRAM adds 0x619", t_filter_intel_dram },
		{ "filter: amd is one range of 3", t_filter_amd },
		{ "filter: short ranges or storage is ENOSPC", t_filter_nospace },
		{ "filter: merge prepends, keeps VMM ranges, idempotent", t_filter_merge },
		{ "page: mapping size", t_page_size },
		{ "page: snapshot, bounds, stuck writer", t_page_read },
		{ "page: no torn reads against a concurrent writer", t_page_race },
		{ "exit: intel reads answered from the page", t_exit_intel },
		{ "exit: every write #GP, 0x610's too (locked)", t_exit_writes },
		{ "exit: foreign MSRs and exits untouched", t_exit_not_ours },
		{ "exit: unavailable values inject #GP", t_exit_gp },
		{ "exit: amd reads", t_exit_amd },
		{ "open: missing device is ENOENT", t_open_missing },
		{ "vhost: the caller's threads named vhost-<pid>", t_vhost_workers },
		{ "vhost: none without such threads", t_vhost_none },
	};
	unsigned int i, n = sizeof(tests) / sizeof(tests[0]);

	printf("TAP version 13\n1..%u\n", n);
	for (i = 0; i < n; i++)
		tap(tests[i].fn(), "%s", tests[i].name);
	return failed ? 1 : 0;
}
