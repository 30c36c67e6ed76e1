// SPDX-License-Identifier: GPL-2.0
/* CPUs of the vmrapl selftests' rig. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

#include "vr_cpu.h"

int vr_cpu_package(int cpu)
{
	char path[128];
	int id = -1;
	FILE *f;

	snprintf(path, sizeof(path),
		 "/sys/devices/system/cpu/cpu%d/topology/physical_package_id",
		 cpu);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%d", &id) != 1)
		id = -1;
	fclose(f);
	return id;
}

static int vr_cpu_online_path(int cpu, char *path, size_t len)
{
	return snprintf(path, len, "/sys/devices/system/cpu/cpu%d/online",
			cpu);
}

int vr_cpu_get_online(int cpu)
{
	char path[96], c = 0;
	int fd, ret;

	vr_cpu_online_path(cpu, path, sizeof(path));
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	ret = read(fd, &c, 1) == 1 ? c == '1' : -EIO;
	close(fd);
	return ret;
}

int vr_cpu_set_online(int cpu, bool on)
{
	char path[96];
	int fd, ret;

	vr_cpu_online_path(cpu, path, sizeof(path));
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	ret = write(fd, on ? "1" : "0", 1) == 1 ? 0 : -errno;
	close(fd);
	return ret;
}

void vr_pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}
