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
 *    allows; bench/RESULTS.md has the simulator's figures);
 *  - a step to 30 %: from the third window on, their mean within 3 %,
 *    each within 7 %;
 *  - removed: cpu.max back to the original within a window and a scan,
 *    power back to at least 85 % of the unlimited;
 *  - the daemon killed mid-throttle: the quota and the record stay,
 *    "vmrapl-limitd --restore" (the unit's ExecStopPost) puts them back;
 *  - the VM exits while held: its record removed, cpu.max restored, the
 *    cgroup removable.
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
#include "vr_guest.h"
#include "vr_ioctl.h"
#include "vr_kvm.h"
#include "vr_module.h"
#include "vr_time.h"

#define LIMITD	"/bin/vmrapl-limitd"
#define CGROOT	"/sys/fs/cgroup"
#define CG	CGROOT "/vmrapl-limit-test"
#define RUNDIR	"/tmp/limitd"
#define LOG	"/tmp/limitd.log"

/* What cg_setup() changed, for cg_undo(). */
static bool cg_mounted, cg_cpu_on;

/* cgroup v2 at CGROOT with the cpu controller for its children. */
static int cg_setup(void)
{
	char buf[256];
	int fd, ok;

	if (access(CGROOT "/cgroup.controllers", F_OK)) {
		if (mount("none", CGROOT, "cgroup2", 0, NULL))
			return -errno;
		cg_mounted = true;
	}
	fd = open(CGROOT "/cgroup.subtree_control", O_RDONLY);
	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof(buf) - 1);

		buf[n > 0 ? n : 0] = 0;
		close(fd);
		cg_cpu_on = !strstr(buf, "cpu");
	}
	fd = open(CGROOT "/cgroup.subtree_control", O_WRONLY);
	if (fd < 0)
		return -errno;
	ok = write(fd, "+cpu", 4) == 4;
	close(fd);
	if (!ok)
		return -EIO;
	if (mkdir(CG, 0755) && errno != EEXIST)
		return -errno;
	return access(CG "/cpu.max", F_OK) ? -ENODEV : 0;
}

/*
 * The rig as the test found it: the test's cgroup gone, the cpu
 * controller off again and cgroup v2 unmounted if the test did either
 * (the programs after it run their VMs in the root cgroup).
 */
static void cg_undo(void)
{
	int fd;

	rmdir(CG);
	if (cg_cpu_on) {
		fd = open(CGROOT "/cgroup.subtree_control", O_WRONLY);
		if (fd >= 0) {
			if (write(fd, "-cpu", 4) != 4)
				perror("-cpu");
			close(fd);
		}
		cg_cpu_on = false;
	}
	if (cg_mounted && !umount(CGROOT))
		cg_mounted = false;
}

static int read_file(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return 0;
}

/* cpu.max's line, or "?" */
static const char *cpu_max(void)
{
	static char buf[64];

	if (read_file(CG "/cpu.max", buf, sizeof(buf)))
		return "?";
	buf[strcspn(buf, "\n")] = 0;
	return buf;
}

static bool throttled(void)
{
	return strncmp(cpu_max(), "max", 3) != 0;
}

static pid_t limitd_start(void)
{
	pid_t pid = fork();
	int fd;

	if (pid)
		return pid;
	fd = open(LOG, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd >= 0)
		dup2(fd, 2);
	execl(LIMITD, LIMITD, "--tick-ms", "100", "--scan-ms", "200",
	      "--run-dir", RUNDIR, (char *)NULL);
	_exit(127);
}

/* Signal the daemon; its exit status, -1 when killed by a signal. */
static int limitd_stop(pid_t pid, int sig)
{
	int status;

	kill(pid, sig);
	if (waitpid(pid, &status, 0) != pid)
		return -2;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int limitd_restore(void)
{
	int status;
	pid_t pid = fork();

	if (!pid) {
		execl(LIMITD, LIMITD, "--restore", "--run-dir", RUNDIR,
		      (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void log_dump(void)
{
	char buf[16384];

	if (!read_file(LOG, buf, sizeof(buf)))
		fprintf(stderr, "# limitd's log:\n%s", buf);
}

/* The VM of VMM @pid: its id and PKG energy (uJ); false when not listed. */
static bool vm_energy(int fd, pid_t pid, uint64_t *id, uint64_t *uj)
{
	struct vmrapl_vm_entry *e = NULL;
	bool found = false;
	int n, i;

	n = vmrapl_host_list_vms(fd, &e);
	for (i = 0; i < n; i++) {
		if (e[i].pid != (uint32_t)pid)
			continue;
		*id = e[i].id;
		*uj = e[i].energy_uj[VMRAPL_DOM_PKG];
		found = true;
	}
	free(e);
	return found;
}

/* The VM's power over @ms, W; < 0 when it is not listed. */
static double power_w(int fd, pid_t pid, unsigned int ms)
{
	uint64_t id, e0, e1, t0, t1;

	if (!vm_energy(fd, pid, &id, &e0))
		return -1;
	t0 = vr_now_ns();
	vr_sleep_ms(ms);
	if (!vm_energy(fd, pid, &id, &e1))
		return -1;
	t1 = vr_now_ns();
	return (double)(e1 - e0) / ((double)(t1 - t0) / 1e3);
}

static bool wait_for(bool (*cond)(void), bool want, unsigned int ms)
{
	unsigned int i;

	for (i = 0; i < ms / 50; i++) {
		if (cond() == want)
			return true;
		vr_sleep_ms(50);
	}
	return cond() == want;
}

static bool record_exists(uint64_t id)
{
	char path[64];

	snprintf(path, sizeof(path), RUNDIR "/%llu", (unsigned long long)id);
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
		log_dump();
	if (self->d > 0)
		limitd_stop(self->d, SIGTERM);
	vrp_stop(&self->vm);
	limitd_restore();
	cg_undo();
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F_TIMEOUT(lim, held_by_limitd, 120)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct vrp_opts o = { .prog = VRG_SPIN, .duty = 100, .cpu = -1,
			      .attach = true, .cgroup = CG };
	double p0, w[8], mean, lim, worst;
	uint64_t id, uj;
	int fd, i, err;

	if (access(LIMITD, X_OK))
		SKIP(return, "no " LIMITD " in the rig");
	err = cg_setup();
	if (err)
		SKIP(return, "no cgroup v2 cpu controller: %s", strerror(-err));
	ASSERT_EQ(0, vr_reload(NULL));
	fd = self->fd = vr_open_dev();
	ASSERT_LE(0, fd);
	unlink(LOG);
	o.nr_vcpus = (int)ncpu;
	ASSERT_EQ(0, vrp_start(&self->vm, &o));
	ASSERT_TRUE(vm_energy(fd, self->vm.pid, &id, &uj));
	self->d = limitd_start();
	ASSERT_LT(0, self->d);
	/* Unlimited. */
	vr_sleep_ms(1000);
	p0 = power_w(fd, self->vm.pid, 2000);
	TH_LOG("%ld vCPUs, unlimited: %.3f W, cpu.max \"%s\"", ncpu, p0,
	       cpu_max());
	ASSERT_LT(0.5, p0);

	/* 60 % over 1 s: 3 s to settle, then 5 windows. */
	lim = 0.6 * p0;
	ASSERT_EQ(0, vmrapl_host_vm_limit_set(fd, id, (uint64_t)(lim * 1e6),
					      1000000));
	vr_sleep_ms(3000);
	mean = 0;
	worst = 0;
	for (i = 0; i < 5; i++) {
		w[i] = power_w(fd, self->vm.pid, 1000);
		mean += w[i] / 5;
		if (w[i] / lim - 1 > worst)
			worst = w[i] / lim - 1;
	}
	TH_LOG("limit %.3f W: windows %.3f %.3f %.3f %.3f %.3f W, mean %+.2f %%, worst %+.2f %%, cpu.max \"%s\"",
	       lim, w[0], w[1], w[2], w[3], w[4], 100 * (mean / lim - 1),
	       100 * worst, cpu_max());
	EXPECT_TRUE(throttled());
	EXPECT_LE(fabs(mean / lim - 1), 0.03);
	EXPECT_LE(worst, 0.05);

	/* A step to 30 %. */
	lim = 0.3 * p0;
	ASSERT_EQ(0, vmrapl_host_vm_limit_set(fd, id, (uint64_t)(lim * 1e6),
					      1000000));
	for (i = 0; i < 6; i++)
		w[i] = power_w(fd, self->vm.pid, 1000);
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
	EXPECT_TRUE(wait_for(throttled, false, 1500));
	EXPECT_STREQ("max 100000", cpu_max());
	vr_sleep_ms(100);	/* restored, then the record removed */
	EXPECT_FALSE(record_exists(id));
	vr_sleep_ms(500);
	w[0] = power_w(fd, self->vm.pid, 2000);
	TH_LOG("limit removed: %.3f W (%.0f %% of unlimited)", w[0],
	       100 * w[0] / p0);
	EXPECT_LE(0.85 * p0, w[0]);

	/* The daemon killed mid-throttle: --restore puts it back. */
	ASSERT_EQ(0, vmrapl_host_vm_limit_set(fd, id,
					      (uint64_t)(0.4 * p0 * 1e6),
					      1000000));
	EXPECT_TRUE(wait_for(throttled, true, 2000));
	EXPECT_EQ(-1, limitd_stop(self->d, SIGKILL));
	self->d = 0;
	vr_sleep_ms(300);
	EXPECT_TRUE(throttled()) TH_LOG("cpu.max \"%s\"", cpu_max());
	EXPECT_TRUE(record_exists(id));
	EXPECT_EQ(0, limitd_restore());
	EXPECT_STREQ("max 100000", cpu_max());
	EXPECT_FALSE(record_exists(id));

	/* Held again; the VM exits while held. */
	self->d = limitd_start();
	ASSERT_LT(0, self->d);
	EXPECT_TRUE(wait_for(throttled, true, 2000));
	EXPECT_TRUE(record_exists(id));
	vrp_stop(&self->vm);
	EXPECT_TRUE(wait_for(throttled, false, 2000));
	vr_sleep_ms(200);
	EXPECT_FALSE(record_exists(id));
	EXPECT_EQ(0, rmdir(CG)) TH_LOG("rmdir %s: %s", CG, strerror(errno));
	EXPECT_EQ(0, limitd_stop(self->d, SIGTERM));
	self->d = 0;
}

TEST_HARNESS_MAIN
