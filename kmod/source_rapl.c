// SPDX-License-Identifier: GPL-2.0
/*
 * Hardware RAPL sources: Intel (MSR_RAPL_POWER_UNIT 0x606, PKG 0x611, PP0
 * 0x639, DRAM 0x619) and AMD/Hygon (0xC0010299 unit, 0xC001029B package).
 * The counters are 32 bits wide; the core extends them.  Reads in the
 * epoch close are local (the closer runs on a CPU of the package) and use
 * a safe MSR read, so a counter that disappears is re-baselined, not fatal.
 *
 * On AMD family 17h and later (Hygon 18h), each core's own energy counter
 * (MSR_AMD_CORE_ENERGY_STATUS 0xC001029A, shared by SMT siblings, same
 * unit) weighs the dynamic split (vr_pkg_set_core()): each CPU reads it
 * locally, at its own scheduling event, at most once per
 * VR_CORE_WINDOW_NS.  The module parameter percore=0 turns that off.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <asm/cpufeature.h>
#include <asm/msr.h>
#include <asm/msr-index.h>
#include <asm/processor.h>

#include "vmrapl.h"

/* MSR of each domain for the selected vendor; 0 = not present. */
static u32 vr_rapl_msr[VR_NDOM];

/* A domain exists when its counter reads without fault and is non-zero. */
static bool vr_rapl_present(u32 msr)
{
	u64 v;

	return !vr_rdmsr_safe(msr, &v) && (v & 0xffffffffULL);
}

static int vr_intel_probe(const char **why)
{
	if (boot_cpu_data.x86_vendor != X86_VENDOR_INTEL) {
		*why = "not an Intel CPU";
		return -ENODEV;
	}
	if (!vr_rapl_present(MSR_RAPL_POWER_UNIT) ||
	    !vr_rapl_present(MSR_PKG_ENERGY_STATUS)) {
		*why = "MSR_RAPL_POWER_UNIT/MSR_PKG_ENERGY_STATUS not readable";
		return -ENODEV;
	}
	vr_rapl_msr[VMRAPL_DOM_PKG] = MSR_PKG_ENERGY_STATUS;
	if (vr_rapl_present(MSR_PP0_ENERGY_STATUS))
		vr_rapl_msr[VMRAPL_DOM_CORE] = MSR_PP0_ENERGY_STATUS;
	if (vr_rapl_present(MSR_DRAM_ENERGY_STATUS))
		vr_rapl_msr[VMRAPL_DOM_DRAM] = MSR_DRAM_ENERGY_STATUS;
	return 0;
}

static int vr_amd_probe(const char **why)
{
	if (boot_cpu_data.x86_vendor != X86_VENDOR_AMD &&
	    boot_cpu_data.x86_vendor != X86_VENDOR_HYGON) {
		*why = "not an AMD or Hygon CPU";
		return -ENODEV;
	}
	if (!boot_cpu_has(X86_FEATURE_RAPL)) {
		*why = "CPUID does not announce RAPL";
		return -ENODEV;
	}
	if (!vr_rapl_present(MSR_AMD_RAPL_POWER_UNIT) ||
	    !vr_rapl_present(MSR_AMD_PKG_ENERGY_STATUS)) {
		*why = "AMD RAPL MSRs not readable";
		return -ENODEV;
	}
	/* The core counters are per core: a weight (below), not a domain. */
	vr_rapl_msr[VMRAPL_DOM_PKG] = MSR_AMD_PKG_ENERGY_STATUS;
	return 0;
}

/* Zen and its Hygon sibling have the per-core energy counter. */
static bool vr_amd_has_core_energy(void)
{
	if (boot_cpu_data.x86_vendor == X86_VENDOR_HYGON)
		return boot_cpu_data.x86 >= 0x18;
	return boot_cpu_data.x86 >= 0x17;
}

/*
 * vr_core_read_fn: the calling CPU's own core counter.  Runs in
 * vr_cpu_event() or vr_cpu_core_poll() on that CPU, or in the step timing
 * (engine_step.c, @c NULL), interrupts disabled, so the MSR is the local
 * one: no IPI.
 */
static bool vr_amd_core_read(void *ctx, struct vr_cpu *c, u64 *raw)
{
	u64 v;

	if (vr_rdmsr_safe(MSR_AMD_CORE_ENERGY_STATUS, &v))
		return false;
	*raw = v & 0xffffffffULL;
	return true;
}

static int vr_rapl_pkg_init(struct vr_hpkg *hp, unsigned int cpu,
			    enum vr_rapl_vendor vendor, u32 unit_msr)
{
	struct vr_dom_src src[VR_NDOM];
	struct vr_rapl_regs regs = {
		.pkg = !!vr_rapl_msr[VMRAPL_DOM_PKG],
		.core = !!vr_rapl_msr[VMRAPL_DOM_CORE],
		.dram = !!vr_rapl_msr[VMRAPL_DOM_DRAM],
		.family = boot_cpu_data.x86,
		.model = boot_cpu_data.x86_model,
	};
	unsigned int d;
	u32 doms;
	int ret;

	ret = vr_rdmsr_safe_on_cpu(cpu, unit_msr, &regs.unit);
	if (ret) {
		pr_err("package %u: cannot read the RAPL unit on CPU %u\n",
		       hp->id, cpu);
		return ret;
	}
	doms = vr_rapl_decode(vendor, &regs, src);
	for (d = 0; d < VR_NDOM; d++)
		if (doms & BIT(d))
			vr_pkg_set_domain(&hp->core, d, src[d].esu,
					  src[d].width);
	if (vr_p_static_mw)
		vr_pkg_set_static(&hp->core, (u64)vr_p_static_mw * 1000,
				  VR_STATIC_PARAM);
	return 0;
}

/*
 * vr_core_read_fn of APERF: the calling CPU's own actual cycles, read in
 * vr_cpu_event() or vr_cpu_core_poll() on that CPU (interrupts
 * disabled): no IPI.
 */
static bool vr_aperf_read(void *ctx, struct vr_cpu *c, u64 *raw)
{
	return !vr_rdmsr_safe(MSR_IA32_APERF, raw);
}

/*
 * No per-core energy: weigh the dynamic split by APERF when the
 * administrator asked for it (aperf=1) and the CPU has it.
 */
static int vr_rapl_aperf_init(struct vr_hpkg *hp, unsigned int cpu)
{
	u64 v;

	if (!vr_aperf || !boot_cpu_has(X86_FEATURE_APERFMPERF) ||
	    vr_rdmsr_safe_on_cpu(cpu, MSR_IA32_APERF, &v)) {
		pr_info("package %u: no per-core weight; dynamic energy split by time\n",
			hp->id);
		return 0;
	}
	vr_pkg_set_core(&hp->core, VR_CORE_CYCLES, vr_aperf_read, NULL, 0, 64);
	pr_info("package %u: dynamic energy weighed by APERF (actual cycles)\n",
		hp->id);
	return 0;
}

static int vr_intel_pkg_init(struct vr_hpkg *hp, unsigned int cpu)
{
	int ret;

	ret = vr_rapl_pkg_init(hp, cpu, VR_RAPL_INTEL, MSR_RAPL_POWER_UNIT);
	return ret ? ret : vr_rapl_aperf_init(hp, cpu);
}

static int vr_amd_pkg_init(struct vr_hpkg *hp, unsigned int cpu)
{
	const struct vr_dom_src *s = &hp->core.src[VMRAPL_DOM_PKG];
	u64 v;
	int ret;

	ret = vr_rapl_pkg_init(hp, cpu, VR_RAPL_AMD, MSR_AMD_RAPL_POWER_UNIT);
	if (ret)
		return ret;
	/*
	 * Per-core weighting only where the counter exists and counts: read
	 * once here, on the package's first CPU (process context).
	 */
	if (!vr_percore || !vr_amd_has_core_energy() ||
	    vr_rdmsr_safe_on_cpu(cpu, MSR_AMD_CORE_ENERGY_STATUS, &v) ||
	    !(v & 0xffffffffULL))
		return vr_rapl_aperf_init(hp, cpu);
	vr_pkg_set_core(&hp->core, VR_CORE_ENERGY, vr_amd_core_read, NULL,
			s->esu, 32);
	pr_info("package %u: dynamic energy weighed by per-core energy (MSR 0xc001029a)\n",
		hp->id);
	return 0;
}

static u32 vr_rapl_read(struct vr_hpkg *hp, u64 *raw, u64 dt, u64 busy)
{
	u32 valid = 0;
	unsigned int d;
	u64 v;

	for (d = 0; d < VR_NDOM; d++) {
		if (!vr_rapl_msr[d] || vr_rdmsr_safe(vr_rapl_msr[d], &v))
			continue;
		raw[d] = v & 0xffffffffULL;
		valid |= 1U << d;
	}
	return valid;
}

/* Poll for the step timing (engine_step.c): the same local reads. */
static u32 vr_rapl_poll(struct vr_hpkg *hp, u64 *raw)
{
	return vr_rapl_read(hp, raw, 0, 0);
}

const struct vr_source vr_source_intel = {
	.name = "intel",
	.id = VMRAPL_SOURCE_INTEL,
	.probe = vr_intel_probe,
	.pkg_init = vr_intel_pkg_init,
	.read = vr_rapl_read,
	.poll = vr_rapl_poll,
};

const struct vr_source vr_source_amd = {
	.name = "amd",
	.id = VMRAPL_SOURCE_AMD,
	.probe = vr_amd_probe,
	.pkg_init = vr_amd_pkg_init,
	.read = vr_rapl_read,
	.poll = vr_rapl_poll,
};
