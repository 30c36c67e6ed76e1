// SPDX-License-Identifier: GPL-2.0
/*
 * Per-VM power limits held by vmrapl-limitd on real cgroups (issue 40):
 * a KVM guest whose vCPUs spin on every CPU of the rig, in a cgroup v2 of
 * its own, a limit set with VMRAPL_SET_VM_LIMIT, the daemon (the rig's
 * /bin/vmrapl-limitd) writing its cpu.max.  The power judged is the VM's
 * as vmrapl attributes it (what the controller holds, and what the guest
 * reads as its package energy), over whole 1 s windows of the test's
 * own clock, not the daemon's.
 *
 *  - held: at 60 % of its unlimited power, after 3 s to settle, 5
 *    windows: their mean within 3 % of the limit, none more than 5 % over
 *    it (the 3 %: measured, logged, the bound a rig's noise
 *    allows; bench/RESULTS.md has the simulator's figures); both
 *    packages' books add up exactly meanwhile;
 *  - a step to 30 %: from the third window on, their mean within 3 %,
 *    each within 7 %;
 *  - removed: cpu.max back to the original within a window and a scan,
 *    power back to at least 85 % of the unlimited;
 *  - the guest's own PL1 at 40 % (written through its VMM, as the exit
 *    handler does for its wrmsr), under an operator's limit above it:
 *    GET_VM_LIMIT reports it, three windows' mean within 3 % of it;
 *    disabled by the guest: released;
 *  - the daemon killed mid-throttle: the quota and the record stay,
 *    "vmrapl-limitd --restore" (the unit's ExecStopPost) puts them back;
 *  - the VM exits while held: its record removed, cpu.max restored, the
 *    cgroup removable;
 *  - a VMM in the root cgroup, shared with the rig: moved into a cgroup
 *    the daemon makes for it, held (three windows' mean within 5 %); the
 *    limit removed, back in the root cgroup, the made one gone.
 *
 * Runs in the rapl variant (emulated AMD RAPL, whose model's power
 * follows the CPUs' load); the rig's /init mounts no cgroup v2, the test
 * does.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "libvmrapl-host.h"
#include "vr_debugfs.h"
#include "vr_guest.h"
#include "vr_ioctl.h"
#include "vr_kvm.h"
#include "vr_limit.h"
#include "vr_module.h"
#include "vr_time.h"

/* The VMM's cgroup v2 line of /proc/PID/cgroup, or "?". */
static const char *proc_cgroup(pid_t pid)
{
	static char line[256];
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "r");
	snprintf(line, sizeof(line), "?");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3))
			break;
	if (f)
		fclose(f);
	line[strcspn(line, "\n")] = 0;
	return line;
}

static bool record_exists(uint64_t id)
{
	char path[64];

	snprintf(path, sizeof(path), VR_LIM_RUNDIR "/%llu", (unsigned long long)id);
	return !access(path, F_OK);
}

FIXTURE(lim)
{
	int fd;
	pid_t d;
	struct vrp vm;
};

FIXTURE_SETUP(lim)
{
	self->fd = -1;
	self->d = 0;
	self->vm.pid = 0;
}

/* Whatever an early failure left: the daemon, the VM, the cgroup. */
FIXTURE_TEARDOWN(lim)
{
	if (!_metadata->passed)
		vr_lim_log_dump();
	if (self->d > 0)
		vr_lim_limitd_stop(self->d, SIGTERM);
	vrp_stop(&self->vm);
	vr_lim_limitd_restore();
	vr_lim_cg_undo();
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F_TIMEOUT(lim, held_by_limitd, 120)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct vrp_opts o = { .prog = VRG_SPIN, .duty = 100, .cpu = -1,
			      .attach = true, .cgroup = VR_LIM_CG };
	double p0, w[8], mean, lim, worst;
	char made[128], want[128];
	struct vmrapl_limit got;
	struct vr_books books[2];
	uint64_t id = 0, uj, pl1;
	int fd, i, err;

	if (access(VR_LIM_LIMITD, X_OK))
		SKIP(return, "no " VR_LIM_LIMITD " in the rig");
	err = vr_lim_cg_setup();
	if (err)
		SKIP(return, "no cgroup v2 cpu controller: %s", strerror(-err));
	ASSERT_EQ(0, vr_reload(NULL));
	fd = self->fd = vr_open_dev();
	ASSERT_LE(0, fd);
	unlink(VR_LIM_LOG);
	o.nr_vcpus = (int)ncpu;
	ASSERT_EQ(0, vrp_start(&self->vm, &o));
	ASSERT_TRUE(vr_lim_vm_energy(fd, self->vm.pid, &id, &uj));
	self->d = vr_lim_limitd_start();
	ASSERT_LT(0, self->d);
	/* Unlimited. */
	vr_sleep_ms(1000);
	p0 = vr_lim_power_w(fd, self->vm.pid, 2000);
	TH_LOG("%ld vCPUs, unlimited: %.3f W, cpu.max \"%s\"", ncpu, p0,
	       vr_lim_cpu_max());
	ASSERT_LT(0.5, p0);

	/* 60 % over 1 s: 3 s to settle, then 5 windows. */
	lim = 0.6 * p0;
	ASSERT_EQ(0, vmrapl_host_vm_limit_set(fd, id, (uint64_t)(lim * 1e6),
					      1000000));
	vr_sleep_ms(3000);
	mean = 0;
	worst = 0;
	for (i = 0; i < 5; i++) {
		w[i] = vr_lim_power_w(fd, self->vm.pid, 1000);
		mean += w[i] / 5;
		if (w[i] / lim - 1 > worst)
			worst = w[i] / lim - 1;
	}
	TH_LOG("limit %.3f W: windows %.3f %.3f %.3f %.3f %.3f W, mean %+.2f %%, worst %+.2f %%, cpu.max \"%s\"",
	       lim, w[0], w[1], w[2], w[3], w[4], 100 * (mean / lim - 1),
	       100 * worst, vr_lim_cpu_max());
	EXPECT_TRUE(vr_lim_throttled());
	EXPECT_LE(fabs(mean / lim - 1), 0.03);
	EXPECT_LE(worst, 0.05);
	/* The books still add up exactly while the VM is throttled. */
	ASSERT_EQ(0, vr_read_books(0, "pkg", &books[0]));
	for (i = 0; i < 2; i++)
		if (!vr_read_books(i, "pkg", &books[i]))
			EXPECT_TRUE(vr_books_conserve(&books[i]))
				TH_LOG("package %d's books do not add up", i);

	/* A step to 30 %. */
	lim = 0.3 * p0;
	ASSERT_EQ(0, vmrapl_host_vm_limit_set(fd, id, (uint64_t)(lim * 1e6),
					      1000000));
	for (i = 0; i < 6; i++)
		w[i] = vr_lim_power_w(fd, self->vm.pid, 1000);
	TH_LOG("step to %.3f W: windows %.3f %.3f %.3f %.3f %.3f %.3f W", lim,
	       w[0], w[1], w[2], w[3], w[4], w[5]);
	/*
	 * From the third window on: their mean within 3 %, each within 7 %
	 * (1 s windows on this TCG rig spread by about +-4 % around a held
	 * limit: seen -3.5 to +5.1 %).
	 */
	mean = (w[2] + w[3] + w[4] + w[5]) / 4;
	EXPECT_LE(fabs(mean / lim - 1), 0.03) TH_LOG("mean %+.2f %%",
						       100 * (mean / lim - 1));
	for (i = 2; i < 6; i++)
		EXPECT_LE(fabs(w[i] / lim - 1), 0.07) TH_LOG("window %d", i);

	/* Removed: back to "max" within a window and a scan. */
	ASSERT_EQ(0, vmrapl_host_vm_limit_clear(fd, id));
	EXPECT_TRUE(vr_lim_wait_for(vr_lim_throttled, false, 1500));
	EXPECT_STREQ("max 100000", vr_lim_cpu_max());
	vr_sleep_ms(100);	/* restored, then the record removed */
	EXPECT_FALSE(record_exists(id));
	vr_sleep_ms(500);
	w[0] = vr_lim_power_w(fd, self->vm.pid, 2000);
	TH_LOG("limit removed: %.3f W (%.0f %% of unlimited)", w[0],
	       100 * w[0] / p0);
	EXPECT_LE(0.85 * p0, w[0]);

	/*
	 * The guest's own PL1 (its VMM's exit handler hands the wrmsr to
	 * vmrapl_write_msr()) at 40 % over 1 s: held alone, and still held
	 * under an operator's limit above it; removed (PL1 disabled): back.
	 */
	pl1 = (uint64_t)(0.4 * p0 * 8 + 0.5);	/* 1/8 W units */
	lim = pl1 / 8.0;
	ASSERT_EQ(0, vrp_write_pl(&self->vm, pl1 | 1ULL << 15 | 10ULL << 17));
	ASSERT_EQ(0, vmrapl_host_vm_limit_get(fd, id, &got));
	EXPECT_EQ((uint64_t)(lim * 1e6), got.guest_limit_uw);
	EXPECT_EQ(1000000, got.guest_window_us);
	ASSERT_EQ(0, vmrapl_host_vm_limit_set(fd, id, (uint64_t)(p0 * 1e6),
					      1000000));
	vr_sleep_ms(3000);
	mean = 0;
	for (i = 0; i < 3; i++) {
		w[i] = vr_lim_power_w(fd, self->vm.pid, 1000);
		mean += w[i] / 3;
	}
	TH_LOG("the guest's %.3f W under the operator's %.3f W: windows %.3f %.3f %.3f W, mean %+.2f %%",
	       lim, p0, w[0], w[1], w[2], 100 * (mean / lim - 1));
	EXPECT_TRUE(vr_lim_throttled());
	EXPECT_LE(fabs(mean / lim - 1), 0.03);
	ASSERT_EQ(0, vmrapl_host_vm_limit_clear(fd, id));
	ASSERT_EQ(0, vrp_write_pl(&self->vm, pl1));	/* PL1 disabled */
	EXPECT_TRUE(vr_lim_wait_for(vr_lim_throttled, false, 1500));
	EXPECT_STREQ("max 100000", vr_lim_cpu_max());

	/* The daemon killed mid-throttle: --restore puts it back. */
	ASSERT_EQ(0, vmrapl_host_vm_limit_set(fd, id,
					      (uint64_t)(0.4 * p0 * 1e6),
					      1000000));
	EXPECT_TRUE(vr_lim_wait_for(vr_lim_throttled, true, 2000));
	EXPECT_EQ(-1, vr_lim_limitd_stop(self->d, SIGKILL));
	self->d = 0;
	vr_sleep_ms(300);
	EXPECT_TRUE(vr_lim_throttled()) TH_LOG("cpu.max \"%s\"", vr_lim_cpu_max());
	EXPECT_TRUE(record_exists(id));
	EXPECT_EQ(0, vr_lim_limitd_restore());
	EXPECT_STREQ("max 100000", vr_lim_cpu_max());
	EXPECT_FALSE(record_exists(id));

	/* Held again; the VM exits while held. */
	self->d = vr_lim_limitd_start();
	ASSERT_LT(0, self->d);
	EXPECT_TRUE(vr_lim_wait_for(vr_lim_throttled, true, 2000));
	EXPECT_TRUE(record_exists(id));
	vrp_stop(&self->vm);
	EXPECT_TRUE(vr_lim_wait_for(vr_lim_throttled, false, 2000));
	vr_sleep_ms(200);
	EXPECT_FALSE(record_exists(id));
	EXPECT_EQ(0, rmdir(VR_LIM_CG)) TH_LOG("rmdir %s: %s", VR_LIM_CG, strerror(errno));

	/*
	 * A VMM in a shared cgroup (the root one, with the rest of the rig):
	 * the daemon makes it a cgroup of its own, moves it there and holds
	 * it; the limit removed, the VMM goes back and the cgroup away.
	 */
	o.cgroup = NULL;
	ASSERT_EQ(0, vrp_start(&self->vm, &o));
	ASSERT_TRUE(vr_lim_vm_energy(fd, self->vm.pid, &id, &uj));
	snprintf(made, sizeof(made), VR_LIM_CGROOT "/vmrapl.slice/vm-%llu",
		 (unsigned long long)id);
	vr_sleep_ms(500);
	p0 = vr_lim_power_w(fd, self->vm.pid, 2000);
	lim = 0.5 * p0;
	ASSERT_EQ(0, vmrapl_host_vm_limit_set(fd, id, (uint64_t)(lim * 1e6),
					      1000000));
	vr_sleep_ms(3000);
	snprintf(want, sizeof(want), "0::/vmrapl.slice/vm-%llu",
		 (unsigned long long)id);
	EXPECT_STREQ(want, proc_cgroup(self->vm.pid));
	mean = 0;
	for (i = 0; i < 3; i++) {
		w[i] = vr_lim_power_w(fd, self->vm.pid, 1000);
		mean += w[i] / 3;
	}
	TH_LOG("moved from the root cgroup into %s: limit %.3f W: windows %.3f %.3f %.3f W, mean %+.2f %%",
	       made, lim, w[0], w[1], w[2], 100 * (mean / lim - 1));
	EXPECT_LE(fabs(mean / lim - 1), 0.05);
	ASSERT_EQ(0, vmrapl_host_vm_limit_clear(fd, id));
	for (i = 0; i < 30 && !access(made, F_OK); i++)
		vr_sleep_ms(100);
	EXPECT_NE(0, access(made, F_OK)) TH_LOG("%s is still there", made);
	EXPECT_STREQ("0::/", proc_cgroup(self->vm.pid));
	vrp_stop(&self->vm);
	EXPECT_EQ(0, vr_lim_limitd_stop(self->d, SIGTERM));
	self->d = 0;
}

TEST_HARNESS_MAIN
