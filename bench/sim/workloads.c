// SPDX-License-Identifier: GPL-2.0
/*
 * vrsim: the workloads.
 */
#include "vrsim.h"

static int vm_pkg(int i)
{
	return i % S.npkg;
}

/*
 * @n VMs of @nvcpu vCPUs at @uw each, on the packages in turn, no I/O
 * thread, then 2 host tasks; @late: each VM starts within 20 ms.
 */
static void vms_in_turn(int n, int nvcpu, u64 uw, int pattern, u64 on,
			u64 off, bool late)
{
	int i;

	for (i = 0; i < n; i++)
		new_vm(nvcpu, uw, pattern, on, off, vm_pkg(i), 0, 0, 0,
		       late ? below(20 * MS) : 0, 0);
	host_noise(2);
}

static void wl_steady(void)
{
	vms_in_turn(4, 2, 10000000, P_STEADY, 0, 0, false);
}

static void wl_bursty(void)
{
	vms_in_turn(6, 2, 12000000, P_BURSTY, 2 * MS, 18 * MS, true);
}

/* As bursty, but the sleeps vary by +-10 %: no fixed phase between VMs. */
static void wl_bursty_jitter(void)
{
	vms_in_turn(6, 2, 12000000, P_JITTER, 2 * MS, 18 * MS, true);
}

static void wl_phase(void)
{
	vms_in_turn(4, 2, 10000000, P_PHASE, 2 * MS, 18 * MS, false);
}

/* 3 vCPUs per CPU: 16 VMs x 3 vCPUs on 16 CPUs */
static void wl_oversub(void)
{
	vms_in_turn(S.ncpu_total, 3, 8000000, P_STEADY, 0, 0, false);
}

static void wl_floating(void)
{
	int i;

	for (i = 0; i < 4; i++)
		new_vm(4, 10000000, P_RANDOM, 5 * MS, 5 * MS, -1, 0, 0, 0, 0,
		       0);
	host_noise(2);
}

static void wl_vmm_io(void)
{
	int i;

	/* a heavy I/O thread per VM: 0.2 ms bursts, ~40 % of a CPU */
	for (i = 0; i < 4; i++)
		new_vm(2, 10000000, P_RANDOM, 4 * MS, 4 * MS, vm_pkg(i),
		       8000000, 200000, 300000, 0, 0);
	host_noise(2);
}

static void wl_shortlived(void)
{
	u64 t;
	int i = 0;

	/* one VM starts every 2 s and lives 2-10 s */
	for (t = 0; t < S.end; t += 2 * SEC, i++) {
		u64 life = 2 * SEC + below(8) * SEC;

		new_vm(2, 10000000, P_RANDOM, 6 * MS, 4 * MS, vm_pkg(i),
		       3000000, 500000, 2 * MS, t + below(SEC),
		       t + life < S.end ? t + life : 0);
	}
	host_noise(2);
}

static void wl_wrap(void)
{
	int i;

	/* 40 W + 8 x 25 W = 240 W per package */
	for (i = 0; i < 2; i++)
		new_vm(8, 25000000, P_STEADY, 0, 0, vm_pkg(i), 0, 0, 0, 0, 0);
}

static void wl_hetero(void)
{
	/* VM 0 at twice the per-core power of VM 1, on the same package */
	new_vm(4, 20000000, P_STEADY, 0, 0, 0, 0, 0, 0, 0, 0);
	new_vm(4, 10000000, P_STEADY, 0, 0, 0, 0, 0, 0, 0, 0);
	new_vm(4, 20000000, P_RANDOM, 5 * MS, 5 * MS, 1, 0, 0, 0, 0, 0);
	new_vm(4, 10000000, P_RANDOM, 5 * MS, 5 * MS, 1, 0, 0, 0, 0, 0);
}

static void wl_lone(void)
{
	/* one VM busy on one CPU of a 16-CPU package, 40 W static, 5 W */
	new_vm(1, 5000000, P_STEADY, 0, 0, 0, 0, 0, 0, 0, 0);
}

const struct workload workloads[NWL] = {
	{ "steady", "4 VMs x 2 vCPUs always busy", wl_steady, 2, 8,
	  40000000, false, 0 },
	{ "bursty", "6 VMs x 2 vCPUs, 2 ms on / 18 ms off", wl_bursty, 2, 8,
	  40000000, false, 0 },
	{ "bursty-jitter", "as bursty, the 18 ms off time +-10 %",
	  wl_bursty_jitter, 2, 8, 40000000, false, 0 },
	{ "phases", "busy / 10 % phases every 300 ms", wl_phase, 2, 8,
	  40000000, false, 0 },
	{ "oversubscribed", "3 vCPUs per CPU, 3 ms slices", wl_oversub, 2, 8,
	  40000000, false, 0 },
	{ "floating", "4 x 4 vCPUs floating over both packages",
	  wl_floating, 2, 8, 40000000, false, 0 },
	{ "vmm-io", "a heavy VMM I/O thread per VM", wl_vmm_io, 2, 8,
	  40000000, false, 0 },
	{ "short-lived", "a VM started every 2 s, living 2-10 s",
	  wl_shortlived, 2, 8, 40000000, false, 0 },
	{ "wrap", "240 W per package, counter wraps", wl_wrap, 2, 8,
	  40000000, true, 3600 },
	{ "heterogeneous", "one VM at 2x the per-core power of another",
	  wl_hetero, 2, 8, 40000000, false, 0 },
	{ "lone", "one VM busy on 1 CPU of a 16-CPU package", wl_lone, 1,
	  16, 40000000, false, 0 },
};
