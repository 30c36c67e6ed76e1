// SPDX-License-Identifier: GPL-2.0
/*
 * The ABI header: no implicit padding (sizes and offsets are what the
 * field lists say), every ioctl number unique and of the right direction,
 * and Documentation/uapi.rst documenting exactly the ioctls the header
 * defines (parsed from both files).
 */
#include <regex.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/vmrapl.h>

#include "vr_test.h"

#define OFF(s, f)	offsetof(struct s, f)

static void test_layout(void)
{
	vt_eq(sizeof(struct vmrapl_info), 88, "vmrapl_info is 88 bytes");
	vt_eq(OFF(vmrapl_info, features), 8, "vmrapl_info.features at 8");
	vt_eq(OFF(vmrapl_info, load_boottime_ns), 40, "load_boottime_ns at 40");
	vt_eq(OFF(vmrapl_info, reserved), 48, "vmrapl_info.reserved at 48");
	vt_eq(sizeof(struct vmrapl_attach), 56, "vmrapl_attach is 56 bytes");
	vt_eq(OFF(vmrapl_attach, reserved), 24, "vmrapl_attach.reserved at 24");
	vt_eq(sizeof(struct vmrapl_topology), 40, "vmrapl_topology is 40 bytes");
	vt_eq(OFF(vmrapl_topology, vpkg_ptr), 16, "vpkg_ptr at 16");
	vt_eq(sizeof(struct vmrapl_task), 24, "vmrapl_task is 24 bytes");
	vt_eq(sizeof(struct vmrapl_msr), 24, "vmrapl_msr is 24 bytes");
	vt_eq(OFF(vmrapl_msr, data), 16, "vmrapl_msr.data at 16");
	vt_eq(sizeof(struct vmrapl_vcpu_stats), 48, "vcpu_stats is 48 bytes");
	vt_eq(sizeof(struct vmrapl_vpkg_stats), 64, "vpkg_stats is 64 bytes");
	vt_eq(OFF(vmrapl_vpkg_stats, nr_vcpus), 48, "vpkg nr_vcpus at 48");
	vt_eq(sizeof(struct vmrapl_stats), 128, "vmrapl_stats is 128 bytes");
	vt_eq(OFF(vmrapl_stats, energy_uj), 32, "stats.energy_uj at 32");
	vt_eq(OFF(vmrapl_stats, reserved), 96, "stats.reserved at 96");
	vt_eq(OFF(vmrapl_stats, static_uj), 112, "stats.static_uj at 112");
	vt_eq(OFF(vmrapl_stats, overhead_static_uj), 120,
	      "stats.overhead_static_uj at 120");
	vt_eq(OFF(vmrapl_vcpu_stats, static_uj), 32, "vcpu_stats.static_uj at 32");
	vt_eq(OFF(vmrapl_vpkg_stats, static_uj), 56, "vpkg_stats.static_uj at 56");
	vt_eq(sizeof(struct vmrapl_policy), 32, "vmrapl_policy is 32 bytes");
	vt_eq(sizeof(struct vmrapl_vpkg_state), 32, "vpkg_state is 32 bytes");
	vt_eq(sizeof(struct vmrapl_state), 72, "vmrapl_state is 72 bytes");
	vt_eq(OFF(vmrapl_state, vpkgs_ptr), 24, "state.vpkgs_ptr at 24");
	vt_eq(sizeof(struct vmrapl_page_vcpu), 24, "page_vcpu is 24 bytes");
	vt_eq(sizeof(struct vmrapl_page), 72, "vmrapl_page is 72 bytes");
	vt_eq(OFF(vmrapl_page, vcpu), 72, "page.vcpu[] at 72");
	vt_eq(sizeof(struct vmrapl_test_inject), 40, "test_inject is 40 bytes");
	vt_eq(sizeof(struct vmrapl_pkg_stats), 168, "pkg_stats is 168 bytes");
	vt_eq(sizeof(struct vmrapl_pkg_static), VMRAPL_PKG_STATIC_SIZE_V2,
	      "pkg_static is VMRAPL_PKG_STATIC_SIZE_V2 bytes");
	vt_eq(VMRAPL_PKG_STATIC_SIZE_V2, 144, "VMRAPL_PKG_STATIC_SIZE_V2 is 144");
	vt_eq(OFF(vmrapl_pkg_static, static_inputs), VMRAPL_PKG_STATIC_SIZE_V1,
	      "pkg_static grows after its first 112 bytes");
	vt_eq(OFF(vmrapl_pkg_static, update_pkg_ns), 120, "update_pkg_ns at 120");
	vt_eq(OFF(vmrapl_pkg_static, update_dram_spread_ns), 140,
	      "update_dram_spread_ns at 140");
	vt_eq(VMRAPL_PKG_STATIC_SIZE_V1, 112, "VMRAPL_PKG_STATIC_SIZE_V1 is 112");
	vt_eq(OFF(vmrapl_pkg_static, fit_static_uw), 8, "fit_static_uw at 8");
	vt_eq(OFF(vmrapl_pkg_static, fit_blocks), 48, "fit_blocks at 48");
	vt_eq(OFF(vmrapl_pkg_static, static_uj), 56, "pkg static_uj at 56");
	vt_eq(OFF(vmrapl_pkg_static, core_static_uw), 80,
	      "core_static_uw at 80 (was reserved[0])");
	vt_eq(OFF(vmrapl_pkg_static, core_blocks), 88, "core_blocks at 88");
	vt_eq(OFF(vmrapl_pkg_static, reserved), 96, "pkg_static.reserved at 96");
	vt_eq(OFF(vmrapl_pkg_list, static_ptr), VMRAPL_PKG_LIST_SIZE_V1,
	      "pkg_list grows after its first 40 bytes");
	vt_eq(VMRAPL_PKG_LIST_SIZE_V1, 40, "VMRAPL_PKG_LIST_SIZE_V1 is 40");
	vt_eq(OFF(vmrapl_pkg_list, static_size), 48, "static_size at 48");
	vt_eq(OFF(vmrapl_pkg_stats, nr_cpus), 144, "pkg_stats.nr_cpus at 144");
	vt_eq(sizeof(struct vmrapl_pkg_list), 56, "pkg_list is 56 bytes");
	vt_eq(sizeof(struct vmrapl_vm_entry), 104, "vm_entry is 104 bytes");
	vt_eq(OFF(vmrapl_vm_entry, energy_uj), 24, "vm_entry.energy_uj at 24");
	vt_eq(OFF(vmrapl_vm_entry, static_uj), 88, "vm_entry.static_uj at 88");
	vt_eq(sizeof(struct vmrapl_vm_list), 40, "vm_list is 40 bytes");
	vt_eq(sizeof(struct vmrapl_vm_query), 40, "vm_query is 40 bytes");
	vt_eq(sizeof(struct vmrapl_limit), 72, "vmrapl_limit is 72 bytes");
	vt_eq(OFF(vmrapl_limit, state), 32, "limit.state at 32");
	vt_eq(OFF(vmrapl_limit, guest_limit_uw), 40, "limit.guest_limit_uw at 40");
	vt_eq(OFF(vmrapl_limit, guest_window_us), 48, "limit.guest_window_us at 48");
	vt_eq(OFF(vmrapl_limit, reserved), 56, "limit.reserved at 56");
	vt_eq(OFF(vmrapl_vm_query, id), 8, "vm_query.id at 8");
	vt_eq(OFF(vmrapl_vm_query, stats_ptr), 16, "vm_query.stats_ptr at 16");
	vt_eq(sizeof(struct vmrapl_reg), 16, "vmrapl_reg is 16 bytes");
	vt_eq(OFF(vmrapl_reg, dom_mask), 12, "vmrapl_reg.dom_mask at 12");
}

/*
 * The register table: each register set in increasing MSR order, each
 * register's field and domain valid, the energy registers tied to their
 * domain, and the MSRs the register-set comments name.
 */
static void test_registers(void)
{
	static const struct vmrapl_reg regs[] = VMRAPL_REGISTERS;
	unsigned int i, n_intel = 0, n_amd = 0, bad = 0;

	for (i = 0; i < sizeof(regs) / sizeof(regs[0]); i++) {
		const struct vmrapl_reg *r = &regs[i];

		n_intel += r->regset == VMRAPL_REGSET_INTEL;
		n_amd += r->regset == VMRAPL_REGSET_AMD;
		if (r->regset != VMRAPL_REGSET_INTEL &&
		    r->regset != VMRAPL_REGSET_AMD)
			bad++;
		if (i && regs[i - 1].regset == r->regset &&
		    regs[i - 1].msr >= r->msr)
			bad++;
		if (r->reg > VMRAPL_REG_DRAM ||
		    r->dom_mask >= 1u << VMRAPL_NR_DOMAINS)
			bad++;
		if ((r->reg == VMRAPL_REG_PKG &&
		     r->dom_mask != 1u << VMRAPL_DOM_PKG) ||
		    (r->reg == VMRAPL_REG_CORE &&
		     r->dom_mask != 1u << VMRAPL_DOM_CORE) ||
		    (r->reg == VMRAPL_REG_DRAM &&
		     r->dom_mask != 1u << VMRAPL_DOM_DRAM))
			bad++;
	}
	vt_eq(n_intel, 6, "Intel register set: 0x606 0x610 0x611 0x614 0x619 0x639");
	vt_eq(n_amd, 3, "AMD register set: 0xC0010299 0xC001029A 0xC001029B");
	vt_eq(bad, 0, "register table: ordered, valid fields and domains");
}

static const struct {
	const char *name;
	unsigned long cmd;
	unsigned int dir;
} ioctls[] = {
	{ "VMRAPL_GET_INFO", VMRAPL_GET_INFO, _IOC_READ },
	{ "VMRAPL_ATTACH_VM", VMRAPL_ATTACH_VM, _IOC_WRITE },
	{ "VMRAPL_TEST_INJECT", VMRAPL_TEST_INJECT, _IOC_WRITE },
	{ "VMRAPL_GET_PKG_STATS", VMRAPL_GET_PKG_STATS,
	  _IOC_READ | _IOC_WRITE },
	{ "VMRAPL_LIST_VMS", VMRAPL_LIST_VMS, _IOC_READ | _IOC_WRITE },
	{ "VMRAPL_GET_VM_STATS", VMRAPL_GET_VM_STATS, _IOC_WRITE },
	{ "VMRAPL_SET_VM_LIMIT", VMRAPL_SET_VM_LIMIT, _IOC_WRITE },
	{ "VMRAPL_GET_VM_LIMIT", VMRAPL_GET_VM_LIMIT, _IOC_READ | _IOC_WRITE },
	{ "VMRAPL_VM_SET_TOPOLOGY", VMRAPL_VM_SET_TOPOLOGY, _IOC_WRITE },
	{ "VMRAPL_VM_ADD_TASK", VMRAPL_VM_ADD_TASK, _IOC_WRITE },
	{ "VMRAPL_VM_READ_MSR", VMRAPL_VM_READ_MSR, _IOC_READ | _IOC_WRITE },
	{ "VMRAPL_VM_WRITE_MSR", VMRAPL_VM_WRITE_MSR, _IOC_WRITE },
	{ "VMRAPL_VM_GET_STATS", VMRAPL_VM_GET_STATS,
	  _IOC_READ | _IOC_WRITE },
	{ "VMRAPL_VM_SET_POLICY", VMRAPL_VM_SET_POLICY, _IOC_WRITE },
	{ "VMRAPL_VM_GET_STATE", VMRAPL_VM_GET_STATE, _IOC_READ | _IOC_WRITE },
	{ "VMRAPL_VM_SET_STATE", VMRAPL_VM_SET_STATE, _IOC_WRITE },
};

#define NR_IOCTLS	(sizeof(ioctls) / sizeof(ioctls[0]))

static void test_numbers(void)
{
	unsigned int i, j, dup = 0;

	for (i = 0; i < NR_IOCTLS; i++) {
		vt_eq(_IOC_TYPE(ioctls[i].cmd), VMRAPL_IO, "%s uses VMRAPL_IO",
		      ioctls[i].name);
		vt_eq(_IOC_DIR(ioctls[i].cmd), ioctls[i].dir,
		      "%s has the right direction", ioctls[i].name);
		for (j = 0; j < i; j++)
			dup += _IOC_NR(ioctls[i].cmd) == _IOC_NR(ioctls[j].cmd);
	}
	vt_eq(dup, 0, "no two ioctls share a number");
}

/* Every "#define VMRAPL_X _IO..(" of @path, as a list of names. */
static int header_ioctls(const char *path, char names[][64], int max)
{
	char line[512];
	regex_t re;
	regmatch_t m[2];
	int n = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	regcomp(&re, "^#define[ \t]+(VMRAPL_[A-Z_]+)[ \t]+_IO[RW]*\\(",
		REG_EXTENDED);
	while (fgets(line, sizeof(line), f) && n < max) {
		if (regexec(&re, line, 2, m, 0))
			continue;
		snprintf(names[n++], 64, "%.*s", (int)(m[1].rm_eo - m[1].rm_so),
			 line + m[1].rm_so);
	}
	regfree(&re);
	fclose(f);
	return n;
}

/* Is @name a section title of the document (a line of its own)? */
static int doc_has(const char *doc, const char *name)
{
	char line[512];
	int found = 0;
	FILE *f = fopen(doc, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f) && !found) {
		line[strcspn(line, "\n")] = 0;
		if (strstr(line, name) && line[0] == 'V')
			found = 1;
	}
	fclose(f);
	return found;
}

static void test_documented(void)
{
	char names[64][64];
	unsigned int i;
	int n, j, known;

	n = header_ioctls(VR_TOP "/uapi/linux/vmrapl.h", names, 64);
	vt_ok(n == (int)NR_IOCTLS, "the header defines %d ioctls (%d known)",
	      n, (int)NR_IOCTLS);
	for (j = 0; j < n; j++) {
		known = 0;
		for (i = 0; i < NR_IOCTLS; i++)
			known |= !strcmp(names[j], ioctls[i].name);
		vt_ok(known, "%s is checked here", names[j]);
		vt_ok(doc_has(VR_TOP "/Documentation/uapi.rst", names[j]),
		      "%s is documented in Documentation/uapi.rst", names[j]);
	}
}

int main(void)
{
	vt_start("vmrapl uapi header");
	test_layout();
	test_registers();
	test_numbers();
	test_documented();
	return vt_done();
}
