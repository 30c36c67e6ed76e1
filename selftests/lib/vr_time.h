/* SPDX-License-Identifier: GPL-2.0 */
/* Clocks of the vmrapl selftests: now, sleeping, a task's CPU time. */
#ifndef _VR_TIME_H
#define _VR_TIME_H

#include <stdint.h>
#include <sys/types.h>

/* CLOCK_MONOTONIC in ns. */
uint64_t vr_now_ns(void);
/* Sleep @ms, resumed across signals. */
void vr_sleep_ms(unsigned int ms);
/* /proc/<tid>/schedstat: on-CPU ns. */
uint64_t vr_task_runtime_ns(pid_t tid);

#endif /* _VR_TIME_H */
