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
/*
 * perf's task-clock of thread @tid (a software event, any CPU): an fd, or
 * -errno.  It runs from the thread's switch in to its switch out, where
 * perf's context switch hooks are, beside the sched_switch tracepoint, so
 * it counts the scheduler's work between a blocking thread's dequeue and
 * its switch, which schedstat leaves out.
 */
int vr_task_clock_open(pid_t tid);
/* Its ns so far, or 0 if it cannot be read. */
uint64_t vr_task_clock_ns(int fd);

#endif /* _VR_TIME_H */
