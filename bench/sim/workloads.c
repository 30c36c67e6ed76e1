// SPDX-License-Identifier: GPL-2.0
/*
 * vrsim: the workloads.  "Homogeneous": every task of a package (vCPUs,
 * I/O threads, host tasks) has the same intensity, so a split by CPU time
 * can be exact; the others mix intensities on one package.
 */
#include "vrsim.h"

static int vm_pkg(int i)
{
	return i % S.npkg;
}

/*
 * @n VMs of @nvcpu vCPUs at @uw each, on the packages in turn, no I/O
 * thread, then 2 host tasks at @uw; @late: each VM starts within 20 ms.
 */
static void vms_in_turn(int n, int nvcpu, u64 uw, int pattern, u64 on,
			u64 off, bool late)
{
	int i;

	for (i = 0; i < n; i++)
		new_vm(nvcpu, uw, pattern, on, off, vm_pkg(i), 0, 0, 0,
		       late ? below(20 * MS) : 0, 0);
	host_noise(2, uw);
}

static void wl_steady(void)
{
	vms_in_turn(4, 2, W_NORMAL, P_STEADY, 0, 0, false);
}

static void wl_bursty(void)
{
	vms_in_turn(6, 2, W_NORMAL, P_BURSTY, 2 * MS, 18 * MS, true);
}

/* As bursty, but the sleeps vary by +-10 %: no fixed phase between VMs. */
static void wl_bursty_jitter(void)
{
	vms_in_turn(6, 2, W_NORMAL, P_JITTER, 2 * MS, 18 * MS, true);
}

static void wl_phase(void)
{
	vms_in_turn(4, 2, W_NORMAL, P_PHASE, 2 * MS, 18 * MS, false);
}

/* 3 vCPUs per CPU: 16 VMs x 3 vCPUs on 16 CPUs */
static void wl_oversub(void)
{
	vms_in_turn(S.ncpu_total, 3, W_NORMAL, P_STEADY, 0, 0, false);
}

static void wl_floating(void)
{
	int i;

	for (i = 0; i < 4; i++)
		new_vm(4, W_NORMAL, P_RANDOM, 5 * MS, 5 * MS, -1, 0, 0, 0, 0,
		       0);
	host_noise(2, W_NORMAL);
}

static void wl_vmm_io(void)
{
	int i;

	/* a heavy I/O thread per VM: 0.2 ms bursts, ~40 % of a CPU */
	for (i = 0; i < 4; i++)
		new_vm(2, W_NORMAL, P_RANDOM, 4 * MS, 4 * MS, vm_pkg(i),
		       W_NORMAL, 200000, 300000, 0, 0);
	host_noise(2, W_NORMAL);
}

static void wl_shortlived(void)
{
	u64 t;
	int i = 0;

	/* one VM starts every 2 s and lives 2-10 s */
	for (t = 0; t < S.end; t += 2 * SEC, i++) {
		u64 life = 2 * SEC + below(8) * SEC;

		new_vm(2, W_NORMAL, P_RANDOM, 6 * MS, 4 * MS, vm_pkg(i),
		       W_NORMAL, 500000, 2 * MS, t + below(SEC),
		       t + life < S.end ? t + life : 0);
	}
	host_noise(2, W_NORMAL);
}

static void wl_wrap(void)
{
	int i;

	/* 8 busy cores per package: the counter wraps within the run */
	for (i = 0; i < 2; i++)
		new_vm(8, W_NORMAL, P_STEADY, 0, 0, vm_pkg(i), 0, 0, 0, 0, 0);
}

static void wl_hetero(void)
{
	/* a vector-heavy VM next to a memory-bound one, on each package */
	new_vm(4, W_VECTOR, P_STEADY, 0, 0, 0, 0, 0, 0, 0, 0);
	new_vm(4, W_MEMORY, P_STEADY, 0, 0, 0, 0, 0, 0, 0, 0);
	new_vm(4, W_VECTOR, P_RANDOM, 5 * MS, 5 * MS, 1, 0, 0, 0, 0, 0);
	new_vm(4, W_MEMORY, P_RANDOM, 5 * MS, 5 * MS, 1, 0, 0, 0, 0, 0);
	host_noise(2, W_NORMAL);
}

static void wl_lone(void)
{
	/* one VM busy on one CPU of a 16-CPU package */
	new_vm(1, W_NORMAL, P_STEADY, 0, 0, 0, 0, 0, 0, 0, 0);
}

static void wl_never_idle(void)
{
	int i;

	/* one always-busy vCPU per package, and bursty neighbours */
	for (i = 0; i < 2; i++)
		new_vm(1, W_NORMAL, P_STEADY, 0, 0, i, 0, 0, 0, 0, 0);
	for (i = 0; i < 4; i++)
		new_vm(2, W_NORMAL, P_RANDOM, 3 * MS, 7 * MS, vm_pkg(i), 0, 0,
		       0, 0, 0);
	host_noise(2, W_NORMAL);
}

static void wl_mostly_idle(void)
{
	int i;

	/* 4 single-vCPU VMs at ~2 % duty, one host task */
	for (i = 0; i < 4; i++)
		new_vm(1, W_NORMAL, P_RANDOM, 1 * MS, 50 * MS, vm_pkg(i), 0, 0,
		       0, 0, 0);
	host_noise(1, W_NORMAL);
}

static void wl_turbo(void)
{
	/* concurrency swings on a package with a steep turbo curve */
	vms_in_turn(6, 2, W_NORMAL, P_RANDOM, 4 * MS, 6 * MS, false);
}

static void wl_spread(void)
{
	int i;

	/* two VMs, one per package */
	for (i = 0; i < 2; i++)
		new_vm(4, W_NORMAL, P_RANDOM, 5 * MS, 5 * MS, i, 0, 0, 0, 0,
		       0);
	host_noise(2, W_NORMAL);
}

static void wl_packed(void)
{
	int i;

	/* the same two VMs, both on package 0; package 1 idles */
	for (i = 0; i < 2; i++)
		new_vm(4, W_NORMAL, P_RANDOM, 5 * MS, 5 * MS, 0, 0, 0, 0, 0,
		       0);
	host_noise(2, W_NORMAL);
}

/* floor, uncore uplift, one-core and all-core MHz; 0: the default */
#define PKG8	{ 0, 0, 0, 0 }
#define PKG16	{ 30000000, 15000000, 3400, 2400 }
#define TURBO	{ 18000000, 12000000, 4200, 2000 }

const struct workload workloads[] = {
	{ "steady", "4 VMs x 2 vCPUs always busy", wl_steady, 2, 8,
	  true, false, PKG8 },
	{ "bursty", "6 VMs x 2 vCPUs, 2 ms on / 18 ms off", wl_bursty, 2, 8,
	  true, false, PKG8 },
	{ "bursty-jitter", "as bursty, the 18 ms off time +-10 %",
	  wl_bursty_jitter, 2, 8, true, false, PKG8 },
	{ "phases", "busy / 10 % phases every 300 ms", wl_phase, 2, 8,
	  true, false, PKG8 },
	{ "oversubscribed", "3 vCPUs per CPU, 3 ms slices", wl_oversub, 2, 8,
	  true, false, PKG8 },
	{ "floating", "4 x 4 vCPUs floating over both packages",
	  wl_floating, 2, 8, true, false, PKG8 },
	{ "vmm-io", "a heavy VMM I/O thread per VM", wl_vmm_io, 2, 8,
	  true, false, PKG8 },
	{ "short-lived", "a VM started every 2 s, living 2-10 s",
	  wl_shortlived, 2, 8, true, false, PKG8 },
	{ "wrap", "8 busy cores per package, the counter wraps", wl_wrap, 2,
	  8, true, true, PKG8 },
	{ "never-idle", "a busy vCPU on each package, bursty neighbours",
	  wl_never_idle, 2, 8, true, false, PKG8 },
	{ "mostly-idle", "4 x 1 vCPU at ~2 % duty", wl_mostly_idle, 2, 8,
	  true, false, PKG8 },
	{ "turbo", "6 VMs x 2 vCPUs 4/6 ms, 4.2 -> 2.0 GHz turbo", wl_turbo,
	  2, 8, true, false, TURBO },
	{ "spread", "2 VMs x 4 vCPUs at 50 %, one per package", wl_spread,
	  2, 8, true, false, PKG8 },
	{ "packed", "the same 2 VMs, both on package 0", wl_packed, 2, 8,
	  true, false, PKG8 },
	{ "lone", "one VM busy on 1 CPU of a 16-CPU package", wl_lone, 1,
	  16, true, false, PKG16 },
	{ "heterogeneous", "vector-heavy (14 W/core) and memory-bound "
	  "(4 W/core) VMs on one package", wl_hetero, 2, 8, false, false,
	  PKG8 },
};

const int nworkloads = sizeof(workloads) / sizeof(workloads[0]);
