// SPDX-License-Identifier: GPL-2.0
/* CPUs of the vmrapl selftests' rig. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
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

int vr_pkg_cpu(int pkg, int nth)
{
	int cpu;

	for (cpu = 0; cpu < 64; cpu++)
		if (vr_cpu_package(cpu) == pkg && !nth--)
			return cpu;
	return -1;
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

void vr_fifo(bool on)
{
	struct sched_param sp = { .sched_priority = on ? 50 : 0 };

	sched_setscheduler(0, on ? SCHED_FIFO : SCHED_OTHER, &sp);
}

int vr_spin_cpus(void)
{
	int n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 8 ? 8 : n;
}

atomic_int vr_spin_stopped;

void *vr_spin(void *cpu)
{
	vr_pin_self((int)(long)cpu);
	while (!atomic_load(&vr_spin_stopped))
		;
	return NULL;
}

int vr_spin_start(pthread_t *t, int n)
{
	int i;

	atomic_store(&vr_spin_stopped, 0);
	for (i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, vr_spin, (void *)(long)i)) {
			vr_spin_stop(t, i);
			return -1;
		}
	return 0;
}

void vr_spin_stop(pthread_t *t, int n)
{
	int i;

	atomic_store(&vr_spin_stopped, 1);
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

int vr_msr_open(int pkg, int flags)
{
	char path[64];
	int cpu;

	for (cpu = 0; cpu < 64; cpu++)
		if (vr_cpu_package(cpu) == pkg) {
			snprintf(path, sizeof(path), "/dev/cpu/%d/msr", cpu);
			return open(path, flags);
		}
	return -ENOENT;
}

int vr_rdmsr(int fd, uint32_t msr, uint64_t *v)
{
	return pread(fd, v, sizeof(*v), msr) == sizeof(*v) ? 0 : -errno;
}

uint32_t vr_rdmsr32(int fd, uint32_t msr)
{
	uint64_t v = 0;

	if (vr_rdmsr(fd, msr, &v))
		return 0;
	return (uint32_t)v;
}

int vr_wrmsr(int fd, uint32_t msr, uint64_t v)
{
	return pwrite(fd, &v, sizeof(v), msr) == sizeof(v) ? 0 : -errno;
}
