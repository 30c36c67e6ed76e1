// SPDX-License-Identifier: GPL-2.0
/*
 * The rig's power-limit benchmark (make bench-limit, bench/RESULTS.md):
 * on one package of the rapl variant's emulated AMD RAPL, VM A (one vCPU
 * on the package's first CPU, in a cgroup of its own) is held to 30 % and
 * 70 % of its unlimited power, once by vmrapl-limitd and once by the
 * naive baseline, a quota computed once from A's watts per CPU and never
 * corrected; VM B (one vCPU on the package's second CPU, no limit) is
 * the neighbour.  Each phase settles for 3 s, then 8 windows of 1 s on
 * the benchmark's clock: A's power against its limit, B's power and its
 * vCPU's CPU time against the same windows without any limit, whose
 * spread is the run-to-run noise they are judged by.  The limit comes
 * from A's measured power, never from the model's truth.
 *
 * One "BENCH limit..." line per phase; bench/rig/limit.py turns the
 * lines of several boots into RESULTS.md's table.  Outside the rapl
 * variant (no power that follows the load) it says so and does nothing.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libvmrapl-host.h"
#include "vr_cpu.h"
#include "vr_guest.h"
#include "vr_ioctl.h"
#include "vr_limit.h"
#include "vr_module.h"
#include "vr_time.h"

#define SETTLE_MS	3000
#define WINDOWS		8

struct win {
	double a_w, b_w, b_cpu;	/* W, W, share of a CPU */
};

/* One 1 s window of both VMs; false when one is not listed. */
static bool window(int fd, const struct vrp *a, const struct vrp *b,
		   struct win *w)
{
	uint64_t id, a0, a1, b0, b1, r0, r1, t0, t1;

	r0 = vr_task_runtime_ns(b->tid);
	t0 = vr_now_ns();
	if (!vr_lim_vm_energy(fd, a->pid, &id, &a0) ||
	    !vr_lim_vm_energy(fd, b->pid, &id, &b0))
		return false;
	vr_sleep_ms(1000);
	if (!vr_lim_vm_energy(fd, a->pid, &id, &a1) ||
	    !vr_lim_vm_energy(fd, b->pid, &id, &b1))
		return false;
	t1 = vr_now_ns();
	r1 = vr_task_runtime_ns(b->tid);
	w->a_w = (double)(a1 - a0) / ((double)(t1 - t0) / 1e3);
	w->b_w = (double)(b1 - b0) / ((double)(t1 - t0) / 1e3);
	w->b_cpu = (double)(r1 - r0) / (double)(t1 - t0);
	return true;
}

static void mean_sd(const double *x, int n, double *mean, double *sd)
{
	double m = 0, v = 0;
	int i;

	for (i = 0; i < n; i++)
		m += x[i] / n;
	for (i = 0; i < n; i++)
		v += (x[i] - m) * (x[i] - m) / (n > 1 ? n - 1 : 1);
	*mean = m;
	*sd = sqrt(v);
}

static bool windows(int fd, const struct vrp *a, const struct vrp *b,
		    double *aw, double *bw, double *bc)
{
	struct win w;
	int i;

	for (i = 0; i < WINDOWS; i++) {
		if (!window(fd, a, b, &w))
			return false;
		aw[i] = w.a_w;
		bw[i] = w.b_w;
		bc[i] = w.b_cpu;
	}
	return true;
}

static int write_cpu_max(const char *v)
{
	FILE *f = fopen(VR_LIM_CG "/cpu.max", "w");
	int ok;

	if (!f)
		return -errno;
	ok = fputs(v, f) >= 0;
	return fclose(f) == 0 && ok ? 0 : -EIO;
}

/* One phase: A held by @policy at @level of @p0 W; its BENCH line. */
static int phase(int fd, const struct vrp *a, const struct vrp *b,
		 uint64_t id, const char *policy, double level, double p0,
		 double a_cpu)
{
	double aw[WINDOWS], bw[WINDOWS], bc[WINDOWS], lim = level * p0;
	double err[WINDOWS], mean, sd, worst = -1, b_w, b_sd, b_cpu, b_csd;
	char q[64];
	pid_t d = 0;
	int i, ret;

	if (!strcmp(policy, "limitd")) {
		d = vr_lim_limitd_start();
		if (d <= 0)
			return -ECHILD;
		ret = vmrapl_host_vm_limit_set(fd, id, (uint64_t)(lim * 1e6),
					       1000000);
		if (ret)
			goto out;
	} else {
		/* Once, from A's unlimited watts per CPU: lim / (W/CPU). */
		snprintf(q, sizeof(q), "%.0f 100000",
			 lim / (p0 / a_cpu) * 100000);
		ret = write_cpu_max(q);
		if (ret)
			return ret;
	}
	vr_sleep_ms(SETTLE_MS);
	ret = windows(fd, a, b, aw, bw, bc) ? 0 : -ENOENT;
	if (ret)
		goto out;
	for (i = 0; i < WINDOWS; i++) {
		err[i] = aw[i] / lim - 1;
		if (err[i] > worst)
			worst = err[i];
	}
	mean_sd(err, WINDOWS, &mean, &sd);
	mean_sd(bw, WINDOWS, &b_w, &b_sd);
	mean_sd(bc, WINDOWS, &b_cpu, &b_csd);
	printf("BENCH limit_phase policy=%s level=%.2f limit_w=%.3f mean_err=%+.4f worst_err=%+.4f sd_err=%.4f b_w=%.4f b_w_sd=%.4f b_cpu=%.4f b_cpu_sd=%.4f cpu_max=\"%s\" n=%d\n",
	       policy, level, lim, mean, worst, sd, b_w, b_sd, b_cpu, b_csd,
	       vr_lim_cpu_max(), WINDOWS);
	fflush(stdout);
out:
	if (d > 0) {
		vmrapl_host_vm_limit_clear(fd, id);
		vr_lim_limitd_stop(d, SIGTERM);
	} else {
		write_cpu_max("max 100000");
	}
	vr_sleep_ms(1000);
	return ret;
}

int main(void)
{
	const char *variant = getenv("VMRAPL_RIG_VARIANT");
	static const double levels[] = { 0.3, 0.7 };
	struct vrp_opts oa = { .prog = VRG_SPIN, .duty = 100, .attach = true,
			       .nr_vcpus = 1, .cgroup = VR_LIM_CG };
	struct vrp_opts ob = { .prog = VRG_SPIN, .duty = 100, .attach = true,
			       .nr_vcpus = 1 };
	double aw[WINDOWS], bw[WINDOWS], bc[WINDOWS], p0, psd, b_w, b_sd;
	double b_cpu, b_csd, a_cpu;
	struct vrp a = { 0 }, b = { 0 };
	uint64_t id, uj, r0, r1, t0, t1;
	int fd = -1, rc = 1, err;
	unsigned int i;

	if (!variant || strcmp(variant, "rapl")) {
		printf("# bench_limit: the rapl variant only (its power follows the load)\n");
		return 0;
	}
	if (access(VR_LIM_LIMITD, X_OK)) {
		printf("# bench_limit: no %s in the rig\n", VR_LIM_LIMITD);
		return 1;
	}
	err = vr_lim_cg_setup();
	if (err) {
		printf("# bench_limit: no cgroup v2 cpu controller: %s\n",
		       strerror(-err));
		return 1;
	}
	if (vr_reload(NULL))
		goto out;
	fd = vr_open_dev();
	oa.cpu = vr_pkg_cpu(0, 0);
	ob.cpu = vr_pkg_cpu(0, 1);
	if (fd < 0 || oa.cpu < 0 || ob.cpu < 0 || vrp_start(&a, &oa) ||
	    vrp_start(&b, &ob) || !vr_lim_vm_energy(fd, a.pid, &id, &uj))
		goto out;
	vr_sleep_ms(1000);

	/* Unlimited: A's power and CPU share, B's with their spread. */
	r0 = vr_task_runtime_ns(a.tid);
	t0 = vr_now_ns();
	if (!windows(fd, &a, &b, aw, bw, bc))
		goto out;
	r1 = vr_task_runtime_ns(a.tid);
	t1 = vr_now_ns();
	a_cpu = (double)(r1 - r0) / (double)(t1 - t0);
	mean_sd(aw, WINDOWS, &p0, &psd);
	mean_sd(bw, WINDOWS, &b_w, &b_sd);
	mean_sd(bc, WINDOWS, &b_cpu, &b_csd);
	printf("BENCH limit_free a_w=%.4f a_w_sd=%.4f a_cpu=%.4f b_w=%.4f b_w_sd=%.4f b_cpu=%.4f b_cpu_sd=%.4f n=%d\n",
	       p0, psd, a_cpu, b_w, b_sd, b_cpu, b_csd, WINDOWS);
	fflush(stdout);
	if (p0 < 0.5 || a_cpu < 0.2)
		goto out;

	rc = 0;
	for (i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
		if (phase(fd, &a, &b, id, "limitd", levels[i], p0, a_cpu) ||
		    phase(fd, &a, &b, id, "static", levels[i], p0, a_cpu))
			rc = 1;
	}
out:
	if (rc)
		vr_lim_log_dump();
	vrp_stop(&a);
	vrp_stop(&b);
	vr_lim_limitd_restore();
	vr_lim_cg_undo();
	if (fd >= 0)
		close(fd);
	printf("# bench_limit: %s\n", rc ? "FAILED" : "done");
	return rc;
}
