// SPDX-License-Identifier: GPL-2.0
/* Clocks of the vmrapl selftests. */
#include <errno.h>
#include <stdio.h>
#include <time.h>

#include "vr_time.h"

uint64_t vr_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

void vr_sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

uint64_t vr_task_runtime_ns(pid_t tid)
{
	unsigned long long ns = 0;
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &ns) != 1)
		ns = 0;
	fclose(f);
	return ns;
}
