// SPDX-License-Identifier: GPL-2.0
/* The rapl variant's model truth (vr_truth.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vr_truth.h"

/* The number after @key in @line into *@v; *@v is left alone without @key. */
static void field(const char *line, const char *key, unsigned int *v)
{
	const char *s = strstr(line, key);

	if (s)
		*v = strtoul(s + strlen(key), NULL, 10);
}

int read_truth(struct truth *t)
{
	char buf[4096], *line, *save;
	ssize_t n;
	int fd, got_end = 0;

	memset(t, 0, sizeof(*t));
	fd = open(TRUTH, O_RDONLY);
	if (fd < 0)
		return -errno;
	/* One read: QEMU refreshes the file when the guest selects it. */
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = 0;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long long a, b = 0, c = 0, d = 0, e = 0;
		const char *mhz;
		unsigned int mw;
		int i, p;

		if (sscanf(line, "rapl 1 esu %*d tick_ns %llu start_pj %llu idle_mw %u uncore_mw %u pc6_delay_ns %llu",
			   &d, &a, &t->idle_mw, &t->uncore_mw, &e) >= 4) {
			t->tick_ns = d;
			t->start_pj = a;
			if (!strstr(line, " pc6_delay_ns "))
				e = 0;
			t->pc6_delay_ns = e;
			field(line, "rapl 1 esu ", &t->esu);
			t->intel = !!strstr(line, " vendor intel");
			field(line, " dram_esu ", &t->dram_esu);
			field(line, " dram_idle_mw ", &t->dram_idle_mw);
			field(line, " dram_mw ", &t->dram_mw);
			continue;
		} else if (sscanf(line, "time_ns %llu ticks %llu tick_max_ns %llu",
				  &a, &b, &c) >= 1) {
			t->time_ns = a;
			t->ticks = b;
			t->tick_max_ns = c;
		} else if (sscanf(line, "pkg %d energy_pj %llu idle_pj %llu uncore_pj %llu",
				  &i, &a, &b, &c) == 4 && i >= 0 && i < MAX_PKGS) {
			t->pkg_pj[i] = a;
			t->idle_pj[i] = b;
			t->uncore_pj[i] = c;
			t->npkgs = i + 1 > t->npkgs ? i + 1 : t->npkgs;
		} else if (sscanf(line, "pp0 %d energy_pj %llu start_pj %llu",
				  &i, &a, &b) == 3 && i >= 0 && i < MAX_PKGS) {
			t->pp0_pj[i] = a;
			t->pp0_start_pj = b;
		} else if (sscanf(line, "dram %d energy_pj %llu idle_pj %llu start_pj %llu",
				  &i, &a, &b, &c) == 4 && i >= 0 && i < MAX_PKGS) {
			t->dram_pj[i] = a;
			t->dram_idle_pj[i] = b;
			t->dram_start_pj = c;
		} else if (sscanf(line, "core %d pkg %d mw %u cpu_ns %llu energy_pj %llu",
				  &i, &p, &mw, &d, &e) == 5 && i >= 0 && i < MAX_CORES) {
			t->core_pkg[i] = p;
			t->core_mw[i] = mw;
			t->core_cpu_ns[i] = d;
			t->core_pj[i] = e;
			t->ncores = i + 1 > t->ncores ? i + 1 : t->ncores;
			mhz = strstr(line, " mhz ");
			t->core_mhz[i] = mhz ? (unsigned int)strtoul(mhz + 5, NULL, 10) : 0;
		} else if (!strcmp(line, "end")) {
			got_end = 1;
		}
	}
	return got_end ? 0 : -EIO;
}
