// SPDX-License-Identifier: GPL-2.0
/*
 * Rig benchmark (rig.mode=bench only): how vmrapl scales with the number
 * of attached VMs.  VMs are added in steps to 1, 10, 100 and 1000 (idle:
 * 1 vCPU blocked in HLT, 64 KiB of guest memory); at each step:
 *
 *   attach   every new VM's VMRAPL_ATTACH_VM ioctl, timed alone
 *   mem      SUnreclaim + VmallocUsed before and after the step's
 *            attaches (the VMs and vCPUs exist before: only vmrapl's
 *            share is in the delta), cumulated over the steps
 *   reads    samples + safety_reads of each package over READ_WINDOW_MS
 *            (the package counter reads the module makes)
 *   msr      one more VM attached through libvmrapl: ns per
 *            vmrapl_read_msr() (mmap page) and vmrapl_read_msr_ioctl()
 *
 * Then, for the per-vCPU cost, PERVCPU_VMS VMs of VB_MAX_VCPUS vCPUs are
 * attached the same way.  The steps stop early if creating VMs fails or
 * the run would take too long (said in the output).
 *
 * Output: "BENCH scale ..." per step, "BENCH scale_vcpu ..." once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "libvmrapl.h"
#include "vr_bench.h"

#define MAX_VMS		1000
#define READ_WINDOW_MS	3000
#define PAGE_READS	200000
#define IOCTL_READS	20000
#define PERVCPU_VMS	50
#define TIME_BUDGET_S	200

static struct vb_vm vms[MAX_VMS];
static uint64_t lat[MAX_VMS];

/* ns per read through the page and through READ_MSR (best of 3). */
static int msr_paths(int devfd_unused, double *page_ns, double *ioctl_ns)
{
	struct vmrapl_vm *h = NULL;
	struct vmrapl *dev = NULL;
	struct vb_vm probe;
	uint64_t d, t0;
	int i, k, ret;

	(void)devfd_unused;
	*page_ns = *ioctl_ns = -1;
	ret = vb_vm_create(&probe, 1);
	if (!ret)
		ret = vmrapl_open(NULL, &dev);
	if (!ret)
		ret = vmrapl_attach(dev, probe.vm, 1, VMRAPL_REGSET_INTEL, 0,
				    &h);
	if (!ret && !vmrapl_vm_page(h))
		ret = -ENXIO;	/* no page: both paths would be the ioctl */
	for (k = 0; k < 3 && !ret; k++) {
		t0 = vr_now_ns();
		for (i = 0; i < PAGE_READS && !ret; i++)
			ret = vmrapl_read_msr(h, 0, VMRAPL_MSR_PKG_ENERGY_STATUS,
					      &d);
		d = vr_now_ns() - t0;
		if (*page_ns < 0 || d / (double)PAGE_READS < *page_ns)
			*page_ns = d / (double)PAGE_READS;
		t0 = vr_now_ns();
		for (i = 0; i < IOCTL_READS && !ret; i++)
			ret = vmrapl_read_msr_ioctl(h, 0,
						    VMRAPL_MSR_PKG_ENERGY_STATUS,
						    &d);
		d = vr_now_ns() - t0;
		if (*ioctl_ns < 0 || d / (double)IOCTL_READS < *ioctl_ns)
			*ioctl_ns = d / (double)IOCTL_READS;
	}
	if (h)
		vmrapl_detach(h);
	if (dev)
		vmrapl_close(dev);
	vb_vm_destroy(&probe);
	return ret;
}

int main(void)
{
	static const int steps[] = { 1, 10, 100, 1000 };
	struct rlimit rl = { 65536, 65536 };
	int devfd, npkg, s, i, cur = 0, t = 0, fails = 0, nsteps = 0;
	uint64_t start = vr_now_ns();
	long mem_cum_kb = 0;

	printf("TAP version 13\n1..%d\n", 2 + (int)(sizeof(steps) / sizeof(steps[0])));
	setrlimit(RLIMIT_NOFILE, &rl);
	devfd = vr_open_dev();
	if (vb_init() || devfd < 0) {
		printf("ok 1 # SKIP no /dev/kvm or /dev/vmrapl\n");
		return 4;
	}
	npkg = vb_nr_packages();
	printf("BENCH scale_info packages=%d ncpus=%ld window_ms=%d page_reads=%d ioctl_reads=%d\n",
	       npkg, sysconf(_SC_NPROCESSORS_ONLN), READ_WINDOW_MS, PAGE_READS,
	       IOCTL_READS);
	printf("ok %d setup\n", ++t);
	fflush(stdout);

	for (s = 0; s < (int)(sizeof(steps) / sizeof(steps[0])); s++) {
		int n = steps[s], first = cur, created, attached;
		uint64_t r0[8], r1[8], t0, t1, tstep = vr_now_ns(), med, p99;
		char rates[128] = "";
		double page_ns, ioctl_ns;
		long m0, m1;
		int bad = 0, p, len = 0;

		if ((vr_now_ns() - start) / 1000000000ull > TIME_BUDGET_S) {
			printf("BENCH scale_stop vms=%d reason=time_budget_%ds\n",
			       cur, TIME_BUDGET_S);
			printf("ok %d %d VMs # SKIP time budget\n", ++t, n);
			continue;
		}
		/* Create the step's VMs (vCPUs made, not running yet). */
		for (i = first; i < n; i++) {
			int ret = vb_vm_create(&vms[i], 1);

			if (ret) {
				printf("# create VM %d: %s\n", i, strerror(-ret));
				vb_vm_destroy(&vms[i]);
				break;
			}
		}
		created = i;
		if (created < n) {
			printf("BENCH scale_stop vms=%d reason=create_failed\n",
			       created);
			for (i = first; i < created; i++)
				vb_vm_destroy(&vms[i]);
			printf("ok %d %d VMs # SKIP only %d VMs fit\n", ++t, n,
			       created);
			break;
		}
		m0 = vb_kmem_kb();
		for (i = first; i < n; i++) {
			t0 = vr_now_ns();
			vms[i].vrfd = vr_attach(devfd, vms[i].vm, 1,
						VMRAPL_REGSET_INTEL, 0);
			lat[i] = vr_now_ns() - t0;
			if (vms[i].vrfd < 0) {
				printf("# attach VM %d: %s\n", i,
				       strerror(-vms[i].vrfd));
				bad++;
				break;
			}
		}
		m1 = vb_kmem_kb();
		mem_cum_kb += m1 - m0;
		for (i = first; i < n && !bad; i++)
			if (vb_vm_start(&vms[i]))
				bad++;
		cur = n;
		vr_sleep_ms(1000);
		attached = vr_vms_count("attached");

		/* Package counter reads over a fixed window. */
		for (p = 0; p < npkg && p < 8; p++)
			vb_pkg_reads(p, &r0[p]);
		t0 = vr_now_ns();
		vr_sleep_ms(READ_WINDOW_MS);
		t1 = vr_now_ns();
		for (p = 0; p < npkg && p < 8; p++) {
			vb_pkg_reads(p, &r1[p]);
			len += snprintf(rates + len, sizeof(rates) - len,
					"%s%.1f", p ? "," : "",
					(r1[p] - r0[p]) * 1e9 / (t1 - t0));
		}
		if (msr_paths(devfd, &page_ns, &ioctl_ns))
			bad++;
		/* Latencies of every attach so far (all steps). */
		{
			uint64_t *cp = malloc(n * sizeof(*cp));

			memcpy(cp, lat, n * sizeof(*cp));
			med = vb_pctl(cp, n, 50);
			p99 = vb_pctl(cp, n, 99);
			free(cp);
		}
		printf("BENCH scale vms=%d attached=%d reads_per_s=%s mem_kb=%ld mem_b_per_vm=%.0f attach_med_us=%.1f attach_p99_us=%.1f page_ns=%.1f ioctl_ns=%.1f irqchip=%d step_s=%.1f\n",
		       n, attached, rates, mem_cum_kb, mem_cum_kb * 1024.0 / n,
		       med / 1e3, p99 / 1e3, page_ns, ioctl_ns, vms[0].irqchip,
		       (vr_now_ns() - tstep) / 1e9);
		fflush(stdout);
		if (attached != n)
			bad++;
		if (bad)
			fails++;
		printf("%sok %d %d VMs\n", bad ? "not " : "", ++t, n);
		fflush(stdout);
		nsteps++;
	}
	for (i = 0; i < cur; i++)
		vb_vm_destroy(&vms[i]);

	/*
	 * Per vCPU: PERVCPU_VMS VMs of VB_MAX_VCPUS vCPUs against as many of
	 * 1 vCPU, attached the same way.
	 */
	{
		long d[2] = { 0, 0 };
		int k, nv[2] = { 1, VB_MAX_VCPUS }, bad = 0;

		for (k = 0; k < 2 && !bad; k++) {
			long m0, m1;

			for (i = 0; i < PERVCPU_VMS; i++)
				if (vb_vm_create(&vms[i], nv[k]))
					bad++;
			m0 = vb_kmem_kb();
			for (i = 0; i < PERVCPU_VMS; i++) {
				vms[i].vrfd = vr_attach(devfd, vms[i].vm, nv[k],
							VMRAPL_REGSET_INTEL, 0);
				if (vms[i].vrfd < 0)
					bad++;
			}
			m1 = vb_kmem_kb();
			d[k] = m1 - m0;
			for (i = 0; i < PERVCPU_VMS; i++)
				vb_vm_destroy(&vms[i]);
		}
		printf("BENCH scale_vcpu vms=%d vcpus_per_vm=%d mem_kb_1=%ld mem_kb_n=%ld mem_b_per_vm_1=%.0f mem_b_per_vcpu=%.0f\n",
		       PERVCPU_VMS, VB_MAX_VCPUS, d[0], d[1],
		       d[0] * 1024.0 / PERVCPU_VMS,
		       (d[1] - d[0]) * 1024.0 / (PERVCPU_VMS * (VB_MAX_VCPUS - 1)));
		printf("%sok %d per-vCPU memory\n", bad ? "not " : "", ++t);
		if (bad)
			fails++;
	}
	close(devfd);
	printf("BENCH scale_done steps=%d seconds=%.1f\n", nsteps,
	       (vr_now_ns() - start) / 1e9);
	return fails ? 1 : 0;
}
