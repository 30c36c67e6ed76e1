// SPDX-License-Identifier: GPL-2.0
/* powercap's RAPL zones for the vmrapl selftests (see vr_powercap.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vr_cpu.h"
#include "vr_powercap.h"

#define PC_ROOT	"/sys/class/powercap"

uint64_t vr_read_u64(const char *dir, const char *file)
{
	char path[400];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

static int read_name(const char *dir, char *name, size_t len)
{
	char path[400];
	FILE *f;
	int ret = -ENOENT;

	snprintf(path, sizeof(path), "%s/name", dir);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	if (fgets(name, len, f)) {
		name[strcspn(name, "\n")] = 0;
		ret = 0;
	}
	fclose(f);
	return ret;
}

static int vr_pc_find(int pkg, const char *sub, char *dir, size_t len)
{
	char path[VR_PC_DIR], name[64], want[32], top[VR_PC_DIR] = "";
	struct dirent *de;
	DIR *dp;
	int found = -ENOENT;

	snprintf(want, sizeof(want), "package-%d", pkg);
	dp = opendir(PC_ROOT);
	if (!dp)
		return -errno;
	while ((de = readdir(dp)) && !top[0]) {
		if (strncmp(de->d_name, "intel-rapl:", 11) ||
		    strchr(de->d_name + 11, ':'))
			continue;
		snprintf(path, sizeof(path), PC_ROOT "/%s", de->d_name);
		if (!read_name(path, name, sizeof(name)) && !strcmp(name, want))
			snprintf(top, sizeof(top), "%s", de->d_name);
	}
	if (!top[0] || !sub) {
		closedir(dp);
		if (top[0])
			snprintf(dir, len, PC_ROOT "/%s", top);
		return top[0] ? 0 : -ENOENT;
	}
	rewinddir(dp);
	while ((de = readdir(dp)) && found) {
		size_t n = strlen(top);

		if (strncmp(de->d_name, top, n) || de->d_name[n] != ':')
			continue;
		snprintf(path, sizeof(path), PC_ROOT "/%s", de->d_name);
		if (!read_name(path, name, sizeof(name)) && !strcmp(name, sub)) {
			snprintf(dir, len, "%s", path);
			found = 0;
		}
	}
	closedir(dp);
	return found;
}

int vr_pc_zone(int pkg, const char *sub, char dir[VR_PC_DIR], uint64_t *range)
{
	int ret = vr_pc_find(pkg, sub, dir, VR_PC_DIR);

	if (!ret && range)
		*range = vr_read_u64(dir, "max_energy_range_uj");
	return ret;
}

uint64_t vr_pc_delta(uint64_t a, uint64_t b, uint64_t range)
{
	return b >= a ? b - a : b + range + 1 - a;
}

void vr_pc_read_all(char (*dir)[VR_PC_DIR], int n, uint64_t *uj)
{
	int i;

	for (i = 0; i < n; i++)
		uj[i] = vr_read_u64(dir[i], "energy_uj");
}

uint64_t vr_pc_bracket(const char *dir, uint64_t range,
		       int (*mid)(int i, void *out), int i,
		       void *out, size_t size, uint64_t *a, uint64_t *c)
{
	uint64_t best = UINT64_MAX, x, y, w;
	void *scratch = malloc(size);
	int tries;

	if (!scratch)
		return UINT64_MAX;
	for (tries = 0; tries < 20; tries++) {
		x = vr_read_u64(dir, "energy_uj");
		if (mid(i, scratch))
			continue;
		y = vr_read_u64(dir, "energy_uj");
		w = vr_pc_delta(x, y, range);
		if (w < best) {
			best = w;
			*a = x;
			*c = y;
			memcpy(out, scratch, size);
		}
		if (w == 0)
			break;
	}
	free(scratch);
	return best;
}

void vr_pc_bracket_all(int n, char (*dir)[VR_PC_DIR], const uint64_t *range,
		       int (*mid)(int i, void *out), void *out, size_t size,
		       uint64_t *a, uint64_t *c, uint64_t *w)
{
	int i;

	vr_fifo(true);
	for (i = 0; i < n; i++)
		w[i] = vr_pc_bracket(dir[i], range[i], mid, i,
				     (char *)out + i * size, size, &a[i], &c[i]);
	vr_fifo(false);
}
