// SPDX-License-Identifier: GPL-2.0
/* debugfs parsing of the vmrapl selftests. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>

#include "vr_debugfs.h"
#include "vr_time.h"

/* The number after @key in @line into *@v; *@v is left alone without @key. */
static void vr_field_u64(const char *line, const char *key, uint64_t *v)
{
	const char *s = strstr(line, key);

	if (s)
		*v = strtoull(s + strlen(key), NULL, 10);
}

int vr_read_books(int pkg, const char *dom, struct vr_books *b)
{
	char line[1024], name[16];
	int p, found = 0;
	FILE *f;

	memset(b, 0, sizeof(*b));
	f = fopen("/sys/kernel/debug/vmrapl/packages", "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v[7];
		char *s;

		if (sscanf(line, "pkg %d dom %15s sampled %llu static %llu dynamic %llu tracked %llu host %llu idle %llu lost %llu",
			   &p, name, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
			   &v[6]) == 9) {
			if (p != pkg || strcmp(name, dom))
				continue;
			b->sampled = v[0];
			b->static_e = v[1];
			b->dynamic = v[2];
			b->tracked = v[3];
			b->host = v[4];
			b->idle = v[5];
			b->lost = v[6];
			found = 1;
		} else if (sscanf(line, "pkg %d source", &p) == 1 && p == pkg) {
			vr_field_u64(line, " samples ", &b->samples);
			vr_field_u64(line, " resets ", &b->resets);
			vr_field_u64(line, " wraps ", &b->wraps);
			vr_field_u64(line, " overruns ", &b->overruns);
			vr_field_u64(line, " busy_ns ", &b->busy_ns);
			s = strstr(line, " online ");
			if (s)
				b->online = atoi(s + 8);
		}
	}
	fclose(f);
	return found ? 0 : -ENOENT;
}

bool vr_books_conserve(const struct vr_books *b)
{
	return b->tracked + b->host + b->idle + b->lost == b->sampled;
}

void vr_dump_debugfs(void)
{
	char line[1024];
	FILE *f;

	f = fopen("/sys/kernel/debug/vmrapl/packages", "r");
	while (f && fgets(line, sizeof(line), f))
		fprintf(stderr, "# %s", line);
	if (f)
		fclose(f);
	f = fopen("/sys/kernel/debug/vmrapl/vms", "r");
	while (f && fgets(line, sizeof(line), f))
		fprintf(stderr, "# %s", line);
	if (f)
		fclose(f);
}

int vr_read_books2(struct vr_books b[2])
{
	int ret = vr_read_books(0, "pkg", &b[0]);

	return ret ? ret : vr_read_books(1, "pkg", &b[1]);
}

uint64_t vr_max_eu(uint64_t ns, int npkg)
{
	double j = 1.25 * VR_MAX_POWER_W * npkg * (double)ns / 1e9 + 1.0;

	return (uint64_t)(j * (1 << 24));
}

int vrp_energy(pid_t pid, double *uj, double *ovh_uj, bool *attached)
{
	unsigned long long pkg, core, dram, ovh, ns, ons, id;
	char line[512], comm[32], kind[16], charge[16];
	unsigned int vcpus;
	int vpid, found = -ENOENT;
	FILE *f;

	f = fopen("/sys/kernel/debug/vmrapl/vms", "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "vm %llu pid %d comm %31s %15s vcpus %u charge %15s pkg_eu %llu core_eu %llu dram_eu %llu overhead_eu %llu runtime_ns %llu overhead_ns %llu",
			   &id, &vpid, comm, kind, &vcpus, charge, &pkg, &core,
			   &dram, &ovh, &ns, &ons) != 12 || vpid != pid)
			continue;
		*uj = pkg * 1e6 / (1 << 24);
		if (ovh_uj)
			*ovh_uj = ovh * 1e6 / (1 << 24);
		if (attached)
			*attached = !strcmp(kind, "attached");
		found = 0;
	}
	fclose(f);
	return found;
}

int vr_vms_count(const char *kind)
{
	char line[512], k[16];
	unsigned long long id;
	int pid, n = 0;
	FILE *f;

	f = fopen("/sys/kernel/debug/vmrapl/vms", "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "vm %llu pid %d comm %*s %15s", &id, &pid,
			   k) != 3)
			continue;
		if (!kind || !strcmp(kind, k))
			n++;
	}
	fclose(f);
	return n;
}

int vr_kvm_vm_count(void)
{
	struct dirent *d;
	int n = 0, a, b;
	DIR *dir;

	dir = opendir("/sys/kernel/debug/kvm");
	if (!dir)
		return -errno;
	while ((d = readdir(dir)))
		if (sscanf(d->d_name, "%d-%d", &a, &b) == 2)
			n++;
	closedir(dir);
	return n;
}

int vr_objects_left(char *why, size_t len)
{
	char name[32];
	long count;
	size_t used = 0;
	int left = 0, lines = 0;
	FILE *f;

	if (len)
		why[0] = 0;
	f = fopen("/sys/kernel/debug/vmrapl/objects", "r");
	if (!f)
		return -errno;
	while (fscanf(f, "%31s %ld", name, &count) == 2) {
		lines++;
		if (!count)
			continue;
		left++;
		if (used < len)
			used += snprintf(why + used, len - used, "%s%s %ld",
					 used ? " " : "", name, count);
	}
	fclose(f);
	return lines ? left : -ENODATA;
}

long long vr_debugfs_check(const char *name)
{
	char n[64];
	long long v;
	FILE *f;

	f = fopen("/sys/kernel/debug/vmrapl/checks", "r");
	if (!f)
		return -errno;
	while (fscanf(f, "%63s %lld", n, &v) == 2) {
		if (!strcmp(n, name)) {
			fclose(f);
			return v;
		}
	}
	fclose(f);
	return -ENOENT;
}

int vr_objects_wait_zero(int ms, char *why, size_t len)
{
	int left;

	for (;;) {
		left = vr_objects_left(why, len);
		if (left <= 0 || ms <= 0)
			return left;
		vr_sleep_ms(50);
		ms -= 50;
	}
}

/* The kernel log, NUL-terminated (free() it), or NULL. */
static char *vr_kmsg_read(void)
{
	int n = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
	char *buf;

	if (n <= 0)
		return NULL;
	buf = malloc(n + 1);
	if (!buf)
		return NULL;
	n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, n);
	if (n < 0) {
		free(buf);
		return NULL;
	}
	buf[n] = 0;
	return buf;
}

void vr_kmsg_print(const char *needle, unsigned int last)
{
	char *buf = vr_kmsg_read(), *line, *end;
	unsigned int n = 0, skip;

	if (!buf)
		return;
	for (line = buf; (line = strstr(line, needle)); line++)
		n++;
	skip = n > last ? n - last : 0;
	for (line = buf; line; line = end ? end + 1 : NULL) {
		end = strchr(line, '\n');
		if (end)
			*end = 0;
		if (!strstr(line, needle))
			continue;
		if (skip) {
			skip--;
			continue;
		}
		fprintf(stderr, "# %s\n", line);
	}
	free(buf);
}

bool vr_kmsg_has(const char *needle)
{
	char *buf = vr_kmsg_read();
	bool found;

	if (!buf)
		return false;
	found = strstr(buf, needle) != NULL;
	free(buf);
	return found;
}
