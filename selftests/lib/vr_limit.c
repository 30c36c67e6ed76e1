// SPDX-License-Identifier: GPL-2.0
/*
 * The rig's power-limit programs' shared parts (vr_limit.h): the test's
 * cgroup v2, vmrapl-limitd started, stopped and restoring, and a VM's
 * power as vmrapl attributes it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libvmrapl-host.h"
#include "vr_limit.h"
#include "vr_time.h"

/* What vr_lim_cg_setup() changed, for vr_lim_cg_undo(). */
static bool cg_mounted, cg_cpu_on;

/* cgroup v2 at VR_LIM_CGROOT with the cpu controller for its children. */
int vr_lim_cg_setup(void)
{
	char buf[256];
	int fd, ok;

	if (access(VR_LIM_CGROOT "/cgroup.controllers", F_OK)) {
		if (mount("none", VR_LIM_CGROOT, "cgroup2", 0, NULL))
			return -errno;
		cg_mounted = true;
	}
	fd = open(VR_LIM_CGROOT "/cgroup.subtree_control", O_RDONLY);
	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof(buf) - 1);

		buf[n > 0 ? n : 0] = 0;
		close(fd);
		cg_cpu_on = !strstr(buf, "cpu");
	}
	fd = open(VR_LIM_CGROOT "/cgroup.subtree_control", O_WRONLY);
	if (fd < 0)
		return -errno;
	ok = write(fd, "+cpu", 4) == 4;
	close(fd);
	if (!ok)
		return -EIO;
	if (mkdir(VR_LIM_CG, 0755) && errno != EEXIST)
		return -errno;
	return access(VR_LIM_CG "/cpu.max", F_OK) ? -ENODEV : 0;
}

/*
 * The rig as the test found it: the test's cgroup gone, the cpu
 * controller off again and cgroup v2 unmounted if the test did either
 * (the programs after it run their VMs in the root cgroup).
 */
void vr_lim_cg_undo(void)
{
	struct dirent *de;
	DIR *d;
	int fd;

	rmdir(VR_LIM_CG);
	/* What a daemon that failed left of the cgroups it made. */
	d = opendir(VR_LIM_CGROOT "/vmrapl.slice");
	while (d && (de = readdir(d))) {
		char path[512];

		if (strncmp(de->d_name, "vm-", 3))
			continue;
		snprintf(path, sizeof(path), VR_LIM_CGROOT "/vmrapl.slice/%s",
			 de->d_name);
		rmdir(path);
	}
	if (d)
		closedir(d);
	rmdir(VR_LIM_CGROOT "/vmrapl.slice");
	if (cg_cpu_on) {
		fd = open(VR_LIM_CGROOT "/cgroup.subtree_control", O_WRONLY);
		if (fd >= 0) {
			if (write(fd, "-cpu", 4) != 4)
				perror("-cpu");
			close(fd);
		}
		cg_cpu_on = false;
	}
	if (cg_mounted && !umount(VR_LIM_CGROOT))
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
const char *vr_lim_cpu_max(void)
{
	static char buf[64];

	if (read_file(VR_LIM_CG "/cpu.max", buf, sizeof(buf)))
		return "?";
	buf[strcspn(buf, "\n")] = 0;
	return buf;
}

bool vr_lim_throttled(void)
{
	return strncmp(vr_lim_cpu_max(), "max", 3) != 0;
}

pid_t vr_lim_limitd_start(void)
{
	pid_t pid = fork();
	int fd;

	if (pid)
		return pid;
	fd = open(VR_LIM_LOG, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd >= 0)
		dup2(fd, 2);
	execl(VR_LIM_LIMITD, VR_LIM_LIMITD, "--tick-ms", "100", "--scan-ms", "200",
	      "--run-dir", VR_LIM_RUNDIR, (char *)NULL);
	_exit(127);
}

/* Signal the daemon; its exit status, -1 when killed by a signal. */
int vr_lim_limitd_stop(pid_t pid, int sig)
{
	int status;

	kill(pid, sig);
	if (waitpid(pid, &status, 0) != pid)
		return -2;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int vr_lim_limitd_restore(void)
{
	int status;
	pid_t pid = fork();

	if (!pid) {
		execl(VR_LIM_LIMITD, VR_LIM_LIMITD, "--restore", "--run-dir", VR_LIM_RUNDIR,
		      (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void vr_lim_log_dump(void)
{
	char buf[16384];

	if (!read_file(VR_LIM_LOG, buf, sizeof(buf)))
		fprintf(stderr, "# limitd's log:\n%s", buf);
}

/* The VM of VMM @pid: its id and PKG energy (uJ); false when not listed. */
bool vr_lim_vm_energy(int fd, pid_t pid, uint64_t *id, uint64_t *uj)
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
double vr_lim_power_w(int fd, pid_t pid, unsigned int ms)
{
	uint64_t id, e0, e1, t0, t1;

	if (!vr_lim_vm_energy(fd, pid, &id, &e0))
		return -1;
	t0 = vr_now_ns();
	vr_sleep_ms(ms);
	if (!vr_lim_vm_energy(fd, pid, &id, &e1))
		return -1;
	t1 = vr_now_ns();
	return (double)(e1 - e0) / ((double)(t1 - t0) / 1e3);
}

bool vr_lim_wait_for(bool (*cond)(void), bool want, unsigned int ms)
{
	unsigned int i;

	for (i = 0; i < ms / 50; i++) {
		if (cond() == want)
			return true;
		vr_sleep_ms(50);
	}
	return cond() == want;
}

