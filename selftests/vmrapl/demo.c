// SPDX-License-Identifier: GPL-2.0
/*
 * "make demo": three VMs with different loads on the rig's kernel, each
 * reading its own MSR_PKG_ENERGY_STATUS through a real rdmsr exit, next to
 * what the host attributes to it.  Runs only in rig.mode=demo.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libvmrapl.h"
#include "vr_kvm.h"

#define NVM		3
#define RUN_S		15
#define ESU		14

struct shared {
	volatile uint64_t reads, last, wraps;
	volatile uint64_t guest_units;	/* 64-bit extended guest counter */
	volatile int ready;
};

static const struct {
	const char *name;
	int duty;
	int cpu;
} vms[NVM] = {
	{ "busy-100%", 100, 0 },
	{ "duty-30%", 30, 1 },
	{ "idle", 1, 2 },
};

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static void child(int i, struct shared *sh)
{
	struct sigaction sa = { .sa_handler = on_term };
	struct vmrapl_vm *vm;
	struct vmrapl *dev;
	struct vrg_msr_log log;
	uint64_t prev = 0, ext = 0;
	struct vrg *g;

	sigaction(SIGTERM, &sa, NULL);
	g = vrg_create(1, VRG_RDMSR_SPIN);
	if (!g || vmrapl_open(NULL, &dev) ||
	    vmrapl_attach(dev, vrg_kvm_fd(g), 1, VMRAPL_REGSET_INTEL, ESU,
			  &vm) || vrg_use_vmrapl(g, vm)) {
		fprintf(stderr, "%s: cannot start: %s\n", vms[i].name,
			strerror(errno));
		_exit(1);
	}
	vrg_set_msr(g, 0x611);
	vrg_set_duty(g, vms[i].duty, 20);
	vrg_pin(g, 0, vms[i].cpu);
	vrg_start(g);
	sh->ready = 1;
	while (!stop) {
		vr_sleep_ms(100);
		vrg_msr_log(g, 0, &log);
		if (!log.reads)
			continue;
		/* Extend the 32-bit counter the guest saw, as perf does. */
		if (!ext)
			ext = log.first;
		ext += (uint32_t)(log.last - prev) * (prev != 0);
		prev = log.last;
		sh->reads = log.reads;
		sh->last = log.last;
		sh->wraps = log.wraps;
		sh->guest_units = ext - log.first;
	}
	vrg_stop(g);
	vmrapl_detach(vm);
	vmrapl_close(dev);
	vrg_destroy(g);
	_exit(0);
}

int main(void)
{
	double host0[NVM], host1[NVM], hprev[NVM], gprev[NVM], gstart[NVM];
	double t0, tprev, t;
	struct shared *sh;
	struct vmrapl_info info;
	pid_t pid[NVM];
	int i, s;

	if (vr_get_info(&info)) {
		printf("demo: /dev/vmrapl is not there: is the module loaded?\n");
		return 1;
	}
	printf("\n== vmrapl loaded: ABI %u, %u packages, %u CPUs, source %s%s\n",
	       info.abi_version, info.nr_packages, info.nr_cpus,
	       info.source == VMRAPL_SOURCE_ESTIMATE ? "estimate" :
	       info.source == VMRAPL_SOURCE_TEST ? "test" :
	       info.source == VMRAPL_SOURCE_INTEL ? "intel" : "amd",
	       info.features & VMRAPL_INFO_F_ESTIMATED ?
	       " (estimated: TCG has no RAPL; a linear model of idle + per-busy-CPU power)" :
	       "");
	sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	memset(sh, 0, 4096);
	for (i = 0; i < NVM; i++) {
		pid[i] = fork();
		if (!pid[i])
			child(i, &sh[i]);
	}
	for (i = 0; i < NVM; i++)
		while (!sh[i].ready)
			vr_sleep_ms(10);
	vr_sleep_ms(500);
	printf("== 3 KVM guests running, each reading MSR 0x611 (ESU %d) through real rdmsr exits\n\n",
	       ESU);
	t0 = tprev = vr_now_ns() / 1e9;
	for (i = 0; i < NVM; i++) {
		vrp_energy(pid[i], &host0[i], NULL, NULL);
		hprev[i] = host0[i];
		gprev[i] = sh[i].guest_units;
		gstart[i] = gprev[i];
	}
	for (s = 3; s <= RUN_S; s += 3) {
		vr_sleep_ms(3000);
		t = vr_now_ns() / 1e9;
		printf("t=%4.1fs  %-10s %10s %10s\n", t - t0, "VM", "host W",
		       "guest W");
		for (i = 0; i < NVM; i++) {
			double h = 0, gu = sh[i].guest_units;

			vrp_energy(pid[i], &h, NULL, NULL);
			printf("         %-10s %10.2f %10.2f\n", vms[i].name,
			       (h - hprev[i]) / 1e6 / (t - tprev),
			       (gu - gprev[i]) / (1 << ESU) / (t - tprev));
			hprev[i] = h;
			gprev[i] = gu;
		}
		tprev = t;
	}
	t = vr_now_ns() / 1e9 - t0;
	printf("\n== summary over %.1f s (source: %s)\n", t,
	       info.features & VMRAPL_INFO_F_ESTIMATED ? "estimate" :
	       "measured");
	printf("%-10s %12s %10s %12s %10s\n", "VM", "host J", "host W",
	       "guest J", "diff %");
	for (i = 0; i < NVM; i++) {
		double gj = (sh[i].guest_units - gstart[i]) / (1 << ESU);

		vrp_energy(pid[i], &host1[i], NULL, NULL);
		host1[i] = (host1[i] - host0[i]) / 1e6;
		printf("%-10s %12.3f %10.2f %12.3f %10.1f\n", vms[i].name,
		       host1[i], host1[i] / t, gj,
		       host1[i] > 0 ? (gj - host1[i]) / host1[i] * 100 : 0.0);
	}
	printf("\nThe guest view advances at most once per guest period (100 ms) and in\n"
	       "whole ESU; the host view is exact.  Both come from the same counters.\n");
	for (i = 0; i < NVM; i++) {
		kill(pid[i], SIGTERM);
		waitpid(pid[i], NULL, 0);
	}
	return 0;
}
