// SPDX-License-Identifier: MIT
/*
 * vmrapl-vmm: everything this VMM does with libvmrapl.  Read it as the
 * example of adding virtual RAPL to a KVM VMM (Documentation/libvmrapl.rst):
 *
 *   1. vrapl_setup(), after KVM_CREATE_VM and before any vCPU runs: open
 *      /dev/vmrapl, attach the VM, give the topology and the policy, then
 *      make the guest's RAPL MSR accesses exit to userspace;
 *   2. vrapl_add_task() for each helper thread whose CPU time is the VM's;
 *   3. vrapl_handle_exit() in every vCPU thread on an MSR exit.
 *
 * At the end (main.c) the VMM reads VMRAPL_VM_GET_STATS with
 * vmrapl_get_stats() and detaches with vmrapl_detach(): closing the
 * vmrapl VM fd finalizes the VM's accounting.
 *
 * Without the module the VM simply runs with vRAPL off: no MSR filter,
 * and the guest's RAPL reads get KVM's default handling.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <linux/kvm.h>

#include "vmm.h"

void vrapl_fail(const char *what, int err)
{
	die(EXIT_VRAPL, "vRAPL: %s: %s", what, strerror(err < 0 ? -err : err));
}

/* The user-space MSR exits and the filter that makes RAPL MSRs exit. */
static void vrapl_filter(struct vmm *m)
{
	/* Cap first: with a filter but no cap, denied MSRs would #GP. */
	int r = vmrapl_enable_user_msr(m->kvm_fd, m->vm_fd, 0);

	if (r == -EOPNOTSUPP)
		die(EXIT_VRAPL, "vRAPL: KVM lacks KVM_CAP_X86_USER_SPACE_MSR "
		    "or KVM_CAP_X86_MSR_FILTER (Linux >= 5.10 needed)");
	if (r < 0)
		vrapl_fail("KVM_ENABLE_CAP(KVM_CAP_X86_USER_SPACE_MSR)", r);
	/*
	 * This VMM has no MSR filter of its own, so vmrapl's is the filter.
	 * A VMM with ranges of its own merges them with
	 * vmrapl_msr_filter_merge() and installs the result once.
	 */
	r = vmrapl_install_msr_filter(m->vrvm, m->vm_fd);
	if (r < 0)
		vrapl_fail("KVM_X86_SET_MSR_FILTER", r);
}

/* The guest's CPUID leaf 1 EAX (family, model), 0 when it has none. */
static uint32_t vrapl_cpuid1_eax(const struct vmm *m)
{
	uint32_t i;

	for (i = 0; m->cpuid && i < m->cpuid->nent; i++)
		if (m->cpuid->entries[i].function == 1)
			return m->cpuid->entries[i].eax;
	return 0;
}

/*
 * The energy status unit to attach with: --esu, else the fixed DRAM unit
 * of a guest CPU model whose drivers read 0x619 in 2^-16 J (so that its
 * DRAM counter counts in the unit it is read in), else the module's
 * default.  --esu and that fixed unit disagreeing while vmrapl serves
 * DRAM would show the guest a DRAM energy 2^(16 - esu) times off: refused.
 */
static unsigned int vrapl_esu(const struct vmm *m)
{
	uint32_t eax = vrapl_cpuid1_eax(m);
	unsigned int dram_esu = vmrapl_guest_dram_esu(m->o.regset, eax);

	if (!m->o.esu || m->o.esu == dram_esu)
		return dram_esu;
	if (dram_esu && (m->domains & (1u << VMRAPL_DOM_DRAM)))
		die(EXIT_USAGE, "--esu %u: this guest's CPU (family 6, model "
		    "0x%x) reads its DRAM counter in 2^-%u J whatever "
		    "MSR_RAPL_POWER_UNIT says, and vmrapl serves DRAM: leave "
		    "--esu out or give %u", m->o.esu,
		    ((eax >> 4) & 0xf) | (((eax >> 16) & 0xf) << 4),
		    dram_esu, dram_esu);
	return m->o.esu;
}

void vrapl_setup(struct vmm *m)
{
	int r;

	if (!m->o.regset) {
		snprintf(m->vrapl_off_reason, sizeof(m->vrapl_off_reason),
			 "disabled by --rapl=off");
		fprintf(stderr, "vRAPL off: %s\n", m->vrapl_off_reason);
		return;
	}
	/* Tests only: a page of our own stands in for the module. */
	if (m->o.fake_vrapl) {
		r = fake_vrapl_attach(&m->fake, m->o.regset, m->o.nr_vcpus,
				      &m->vrvm);
		if (r < 0)
			vrapl_fail("fake vRAPL", r);
		fprintf(stderr, "vRAPL fake: in-process page, no module\n");
		m->mode = VRAPL_FAKE;
		m->domains = m->fake.page->domains;
		report_fake_info(m);
		m->page_mapped = true;
		vrapl_filter(m);
		return;
	}
	r = vmrapl_open(m->o.dev_path, &m->vr);
	if (r < 0) {
		snprintf(m->vrapl_off_reason, sizeof(m->vrapl_off_reason),
			 "%s", vmrapl_open_strerror(r));
		if (m->o.require_vrapl)
			die(EXIT_VRAPL, "vRAPL required but unavailable: %s",
			    m->vrapl_off_reason);
		fprintf(stderr, "vRAPL off: %s\n", m->vrapl_off_reason);
		return;
	}
	m->domains = vmrapl_get_info(m->vr)->domains;
	report_vrapl_info(m, vmrapl_get_info(m->vr));

	/*
	 * The register set matches the vendor the guest's CPUID shows.  A
	 * vCPU's index is its KVM id (kvm.c gives vCPU i the id i), which a
	 * module without VMRAPL_INFO_F_VCPU_ID gets right too: the vCPUs are
	 * created in id order and never hotplugged.
	 */
	r = vmrapl_attach_flags(m->vr, m->vm_fd, m->o.nr_vcpus, m->o.regset,
				vrapl_esu(m),
				vmrapl_get_info(m->vr)->features &
				VMRAPL_INFO_F_VCPU_ID ? VMRAPL_ATTACH_F_VCPU_ID : 0,
				&m->vrvm);
	if (r < 0)
		vrapl_fail("VMRAPL_ATTACH_VM", r);
	m->mode = VRAPL_KERNEL;
	/* Without the page every read is an ioctl: slower, still right. */
	m->page_mapped = vmrapl_vm_page(m->vrvm) != NULL;
	if (!m->page_mapped)
		fprintf(stderr, "vmrapl-vmm: note: no vmrapl page mapping, "
			"every RAPL read is an ioctl\n");
	if (m->o.nr_vpkgs) {	/* else every vCPU is in virtual package 0 */
		r = vmrapl_set_topology(m->vrvm, m->o.vpkg, m->o.nr_vcpus);
		if (r < 0)
			vrapl_fail("VMRAPL_VM_SET_TOPOLOGY", r);
	}
	r = vmrapl_set_policy(m->vrvm, m->o.charge, m->o.guest_period_ms * 1000);
	if (r < 0)
		vrapl_fail("VMRAPL_VM_SET_POLICY", r);
	vrapl_filter(m);
}

/* A thread working for the VM (I/O, vhost): its energy is the VM's too. */
void vrapl_add_task(struct vmm *m, pid_t tid)
{
	int r;

	if (m->mode != VRAPL_KERNEL)
		return;
	r = vmrapl_add_task(m->vrvm, tid);
	if (r < 0)
		vrapl_fail("VMRAPL_VM_ADD_TASK", r);
}

/*
 * The whole VM's package energy as the host books it now (uJ), to set
 * beside what the guest reads; 0 without the module.
 */
uint64_t vrapl_vm_energy_uj(struct vmm *m)
{
	struct vmrapl_stats st;

	if (m->mode != VRAPL_KERNEL ||
	    vmrapl_get_stats(m->vrvm, &st, NULL, 0, NULL, 0))
		return 0;
	return st.energy_uj[VMRAPL_DOM_PKG];
}

/*
 * vCPU threads, after KVM_RUN: true when the exit was a RAPL MSR access
 * and run->msr is filled in (the value, or #GP); false when it is the
 * VMM's to handle.
 */
bool vrapl_handle_exit(struct vmm *m, struct kvm_run *run, unsigned int vcpu)
{
	return m->vrvm && vmrapl_handle_exit(m->vrvm, run, vcpu);
}
