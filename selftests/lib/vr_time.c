// SPDX-License-Identifier: GPL-2.0
/* Clocks of the vmrapl selftests. */
#include <errno.h>
#include <stdio.h>
#include <time.h>

#include "vr_powercap.h"
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
	char dir[64];

	snprintf(dir, sizeof(dir), "/proc/%d", tid);
	return vr_read_u64(dir, "schedstat");
}
