// SPDX-License-Identifier: MIT
/*
 * vmrapl-vmm: KVM setup.  One VM with one memory slot holding the GDT,
 * the IDT, the guest programs of guest.S and a page per vCPU (mailbox and
 * stack); vCPUs start in 32-bit protected mode without paging (guest.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <linux/kvm.h>

#include "vmm.h"

/* The blob of guest.S. */
extern const unsigned char guest_blob_start[], guest_blob_end[];
extern const unsigned char guest_spin[], guest_idle[], guest_pio[];
extern const unsigned char guest_duty[], guest_rdmsr[];
extern const unsigned char guest_gp_handler[], guest_exc_stubs[];

static int kvm_ioctl_or_die(int fd, unsigned long req, void *arg,
			    const char *what)
{
	int r = ioctl(fd, req, arg);

	if (r < 0)
		die(EXIT_KVM, "%s: %s", what, strerror(errno));
	return r;
}

void setup_kvm(struct vmm *m)
{
	struct kvm_userspace_memory_region region;
	int r, nent = 256;

	m->kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (m->kvm_fd < 0)
		die(EXIT_KVM, "/dev/kvm: %s", strerror(errno));
	r = ioctl(m->kvm_fd, KVM_GET_API_VERSION, 0);
	if (r != KVM_API_VERSION)
		die(EXIT_KVM, "KVM API version %d, expected %d", r,
		    KVM_API_VERSION);
	r = ioctl(m->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_MAX_VCPUS);
	if (r > 0 && m->o.nr_vcpus > (unsigned int)r)
		die(EXIT_KVM, "KVM allows at most %d vCPUs", r);
	r = ioctl(m->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (r <= 0)
		die(EXIT_KVM, "KVM_GET_VCPU_MMAP_SIZE: %s", strerror(errno));
	m->run_size = (size_t)r;

	do {	/* retry on EINTR, as QEMU does */
		m->vm_fd = ioctl(m->kvm_fd, KVM_CREATE_VM, 0);
	} while (m->vm_fd < 0 && errno == EINTR);
	if (m->vm_fd < 0)
		die(EXIT_KVM, "KVM_CREATE_VM: %s", strerror(errno));
	/* Needed by VMX without unrestricted guest; harmless elsewhere. */
	if (ioctl(m->vm_fd, KVM_SET_TSS_ADDR, 0xfffbd000ul) < 0)
		fprintf(stderr, "vmrapl-vmm: warning: KVM_SET_TSS_ADDR: %s\n",
			strerror(errno));

	m->mem_size = GUEST_VCPU_AREA + (size_t)m->o.nr_vcpus * GUEST_VCPU_SIZE;
	m->mem_size = (m->mem_size + 0x1fffff) & ~(size_t)0x1fffff;
	m->mem = mmap(NULL, m->mem_size, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m->mem == MAP_FAILED)
		die(EXIT_KVM, "guest memory: %s", strerror(errno));
	memset(&region, 0, sizeof(region));
	region.slot = 0;
	region.guest_phys_addr = 0;
	region.memory_size = m->mem_size;
	region.userspace_addr = (uintptr_t)m->mem;
	kvm_ioctl_or_die(m->vm_fd, KVM_SET_USER_MEMORY_REGION, &region,
			 "KVM_SET_USER_MEMORY_REGION");

	/* Give the vCPUs what KVM supports, like any VMM would. */
	for (;;) {
		m->cpuid = calloc(1, sizeof(*m->cpuid) +
				     (size_t)nent * sizeof(m->cpuid->entries[0]));
		if (!m->cpuid)
			die(EXIT_KVM, "out of memory");
		m->cpuid->nent = (uint32_t)nent;
		if (ioctl(m->kvm_fd, KVM_GET_SUPPORTED_CPUID, m->cpuid) == 0)
			break;
		free(m->cpuid);
		m->cpuid = NULL;
		if (errno != E2BIG || nent >= 4096) {
			fprintf(stderr, "vmrapl-vmm: warning: "
				"KVM_GET_SUPPORTED_CPUID: %s\n", strerror(errno));
			break;
		}
		nent *= 2;
	}
}

static uint64_t gdt_entry(uint32_t base, uint32_t limit, uint32_t access,
			  uint32_t flags)
{
	return ((uint64_t)(limit & 0xffff)) |
	       ((uint64_t)(base & 0xffffff) << 16) |
	       ((uint64_t)access << 40) |
	       ((uint64_t)((limit >> 16) & 0xf) << 48) |
	       ((uint64_t)flags << 52) |
	       ((uint64_t)(base >> 24) << 56);
}

static uint32_t guest_addr(const unsigned char *sym)
{
	return GUEST_CODE + (uint32_t)(sym - guest_blob_start);
}

void setup_guest_memory(struct vmm *m)
{
	uint64_t *gdt = (uint64_t *)(m->mem + GUEST_GDT);
	uint64_t *idt = (uint64_t *)(m->mem + GUEST_IDT);
	size_t blob = (size_t)(guest_blob_end - guest_blob_start);
	unsigned int v;

	if (blob > GUEST_CODE_MAX)
		die(EXIT_KVM, "guest blob too large (%zu bytes)", blob);
	memcpy(m->mem + GUEST_CODE, guest_blob_start, blob);

	/* Flat 4 GiB, 32-bit, present, accessed: code 0x08, data 0x10. */
	gdt[0] = 0;
	gdt[1] = gdt_entry(0, 0xfffff, 0x9b, 0xc);
	gdt[2] = gdt_entry(0, 0xfffff, 0x93, 0xc);

	/* 32-bit interrupt gates, DPL 0: the #GP handler and fatal stubs. */
	for (v = 0; v < GUEST_NR_VECTORS; v++) {
		uint32_t off = v == 13 ? guest_addr(guest_gp_handler) :
			guest_addr(guest_exc_stubs) + v * GUEST_STUB_SIZE;

		idt[v] = (uint64_t)(off & 0xffff) |
			 ((uint64_t)GUEST_SEL_CODE << 16) |
			 ((uint64_t)0x8e00 << 32) |
			 ((uint64_t)(off >> 16) << 48);
	}
}

void setup_vcpu(struct vmm *m, struct vcpu *v)
{
	struct kvm_segment cs, ds;
	struct kvm_sregs sregs;
	struct kvm_regs regs;
	uint32_t page = GUEST_VCPU_AREA + v->idx * GUEST_VCPU_SIZE;
	const unsigned char *entry;
	int r;

	v->fd = ioctl(m->vm_fd, KVM_CREATE_VCPU, (unsigned long)v->idx);
	if (v->fd < 0)
		die(EXIT_KVM, "KVM_CREATE_VCPU %u: %s", v->idx, strerror(errno));
	v->run = mmap(NULL, m->run_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		      v->fd, 0);
	if (v->run == MAP_FAILED)
		die(EXIT_KVM, "mmap kvm_run: %s", strerror(errno));
	if (m->cpuid)
		kvm_ioctl_or_die(v->fd, KVM_SET_CPUID2, m->cpuid,
				 "KVM_SET_CPUID2");
	if (v->idx == 0) {
		r = ioctl(v->fd, KVM_GET_TSC_KHZ, 0);
		m->tsc_khz = r > 0 ? (uint32_t)r : 1000000;
	}

	kvm_ioctl_or_die(v->fd, KVM_GET_SREGS, &sregs, "KVM_GET_SREGS");
	memset(&cs, 0, sizeof(cs));
	cs.base = 0;
	cs.limit = 0xffffffff;
	cs.selector = GUEST_SEL_CODE;
	cs.type = 0xb;		/* execute/read, accessed */
	cs.present = 1;
	cs.dpl = 0;
	cs.db = 1;
	cs.s = 1;
	cs.g = 1;
	ds = cs;
	ds.selector = GUEST_SEL_DATA;
	ds.type = 0x3;		/* read/write, accessed */
	sregs.cs = cs;
	sregs.ds = sregs.es = sregs.fs = sregs.gs = sregs.ss = ds;
	sregs.gdt.base = GUEST_GDT;
	sregs.gdt.limit = 3 * 8 - 1;
	sregs.idt.base = GUEST_IDT;
	sregs.idt.limit = GUEST_NR_VECTORS * 8 - 1;
	sregs.cr0 = 0x11;	/* PE | ET, no paging */
	sregs.cr4 = 0;
	sregs.efer = 0;
	kvm_ioctl_or_die(v->fd, KVM_SET_SREGS, &sregs, "KVM_SET_SREGS");

	switch (m->o.prog) {
	case PROG_SPIN:
		entry = guest_spin;
		break;
	case PROG_DUTY:
		entry = guest_duty;
		break;
	case PROG_RDMSR:
		entry = guest_rdmsr;
		break;
	case PROG_PIO:
		entry = guest_pio;
		break;
	default:
		entry = guest_idle;
		break;
	}
	memset(&regs, 0, sizeof(regs));
	regs.rip = guest_addr(entry);
	regs.rsp = page + GUEST_VCPU_SIZE;
	regs.rdi = page;
	regs.rflags = 0x2;	/* IF=0: no interrupts ever */
	kvm_ioctl_or_die(v->fd, KVM_SET_REGS, &regs, "KVM_SET_REGS");

	v->page = m->mem + page;
}

/* The uapi's table of guest-visible registers. */
static const struct vmrapl_reg registers[] = VMRAPL_REGISTERS;

/* The VMRAPL_REG_* of @msr in @regset, -1 if none. */
static int msr_reg(unsigned int regset, uint32_t msr)
{
	size_t i;

	for (i = 0; i < sizeof(registers) / sizeof(registers[0]); i++)
		if (registers[i].regset == regset && registers[i].msr == msr)
			return (int)registers[i].reg;
	return -1;
}

/* The MSR of @regset that holds @reg, 0 if none. */
static uint32_t reg_msr(unsigned int regset, unsigned int reg)
{
	size_t i;

	for (i = 0; i < sizeof(registers) / sizeof(registers[0]); i++)
		if (registers[i].regset == regset && registers[i].reg == reg)
			return registers[i].msr;
	return 0;
}

/* Mailbox slot @i: the guest reads @msr of @regset. */
static void mailbox_msr(struct vcpu *v, int i, unsigned int regset,
			uint32_t msr)
{
	struct msr_track *t = &v->msr[i];

	memcpy(v->page + MB_MSR + 4 * i, &msr, sizeof(uint32_t));
	t->index = msr;
	t->reg = msr_reg(regset, msr);
	t->energy = t->reg == VMRAPL_REG_PKG || t->reg == VMRAPL_REG_CORE ||
		    t->reg == VMRAPL_REG_DRAM;
}

/* The mailbox of rdmsr-loop and duty. */
void setup_mailbox(struct vmm *m, struct vcpu *v)
{
	uint32_t msrs[VMRAPL_MAX_MSRS];
	uint64_t chunk;
	int n, i;

	if (m->o.prog == PROG_RDMSR) {
		/* Every MSR of the set, whatever the view: the guest just
		 * faults or reads 0 on those outside it. */
		n = vmrapl_regset_msrs(m->o.rdmsr_regset, ~0u, msrs,
				       VMRAPL_MAX_MSRS);
		if (n < 0 || n > MB_MAX_MSRS)
			die(EXIT_KVM, "internal: register set");
		v->nr_msrs = n;
		memcpy(v->page + MB_NR_MSRS, &n, sizeof(uint32_t));
		for (i = 0; i < n; i++)
			mailbox_msr(v, i, m->o.rdmsr_regset, msrs[i]);
	}
	if (m->o.report_ms) {
		/* The unit MSR (for the ESU) and the package energy counter. */
		unsigned int regset = m->o.regset ? m->o.regset :
						    VMRAPL_REGSET_INTEL;
		uint64_t ticks = (uint64_t)m->tsc_khz * m->o.report_ms;
		uint32_t t;

		msrs[0] = reg_msr(regset, VMRAPL_REG_UNIT);
		msrs[1] = reg_msr(regset, VMRAPL_REG_PKG);
		n = 2;
		/* The guest compares 32-bit TSC deltas. */
		if (ticks == 0 || ticks >= 0x80000000ull)
			die(EXIT_USAGE, "--report-msr=%u: too long for a %u kHz "
			    "TSC (at most %" PRIu64 " ms)", m->o.report_ms,
			    m->tsc_khz, (uint64_t)0x7fffffff / m->tsc_khz);
		t = (uint32_t)ticks;
		v->nr_msrs = n;
		memcpy(v->page + MB_NR_MSRS, &n, sizeof(uint32_t));
		memcpy(v->page + MB_RTICKS, &t, sizeof(t));
		for (i = 0; i < n; i++)
			mailbox_msr(v, i, regset, msrs[i]);
	}
	if (m->o.prog == PROG_DUTY) {
		uint32_t c;

		chunk = (uint64_t)m->tsc_khz * DUTY_CHUNK_US / 1000;
		c = chunk > 0 && chunk < UINT32_MAX / 2 ? (uint32_t)chunk : 100000;
		memcpy(v->page + MB_CHUNK, &c, sizeof(c));
		v->period_ns = (uint64_t)m->o.duty_period_ms * 1000000ull;
		v->busy_ns = v->period_ns * m->o.duty_pct / 100;
	}
}

void close_kvm(struct vmm *m)
{
	unsigned int i;

	for (i = 0; i < m->o.nr_vcpus; i++) {
		munmap(m->vcpus[i].run, m->run_size);
		close(m->vcpus[i].fd);
	}
	close(m->vm_fd);
	close(m->kvm_fd);
	munmap(m->mem, m->mem_size);
}
