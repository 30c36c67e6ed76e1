/* SPDX-License-Identifier: GPL-2.0 */
/*
 * perf stat of the power PMU's energy events for the vmrapl selftests:
 * perf stat -a --per-socket -j, counters disabled (-D -1) until enabled
 * and disabled on its control FIFOs, its workload a cat of a pipe that
 * ends when vr_perf_finish() closes the pipe.
 */
#ifndef _VR_PERF_H
#define _VR_PERF_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "vr_powercap.h"

#define VR_PERF		"/usr/bin/perf"

struct vr_perf {
	pid_t pid;
	int ctl, ack, stdin_w;
	/* <prefix>.json (perf's -o), .err (its stdout and stderr), FIFOs */
	char out[64], err[64], ctl_path[64], ack_path[64];
};

/*
 * Start perf with the events @events ("power/energy-pkg/,...") and its
 * files named from @prefix, and wait (up to 60 s) for its first ack: its
 * counters are then open, and disabled.  0, or -errno with perf ended.
 */
int vr_perf_start(struct vr_perf *r, const char *prefix, const char *events);

/*
 * One control command ("enable\n"), and perf's "ack" (perf alive, up to
 * @ms).  perf writes the ack with its string's NUL, "ack\n\0": NULs are
 * skipped.
 */
int vr_perf_cmd(struct vr_perf *r, const char *cmd, int ms);

/* End the workload; perf prints and exits.  Its exit status. */
int vr_perf_finish(struct vr_perf *r);

/* What each step of vr_perf_measure() returned (0: it went well). */
struct vr_perf_res {
	int start, spin, on, off, exit;
};

/*
 * One perf run (vr_perf_start() with @prefix and @events) whose counting
 * window is bracketed by powercap, over the @n zones @dir: with @spin
 * spinners (vr_spin_start(), at most 8) and the calling thread
 * SCHED_FIFO, outer readings @o0, enable, inner @i0, @ms of sleep,
 * inner @i1, disable, outer @o1; so inner <= perf <= outer.  Then the
 * spinners stop and perf ends (its output in @r->out).  Each step's
 * result into @res; 0 if every step went well, else -EIO.
 */
int vr_perf_measure(struct vr_perf *r, const char *prefix, const char *events,
		    int spin, char (*dir)[VR_PC_DIR], int n, int ms,
		    uint64_t *o0, uint64_t *i0, uint64_t *i1, uint64_t *o1,
		    struct vr_perf_res *res);

struct vr_perf_val {
	double joules, running;
	int nr, seen;
	char unit[16];
};

/*
 * perf stat -j --per-socket's lines into @pv[socket * @nev + event], the
 * event the first of @events its name contains; @pv has MAX_PKGS * @nev
 * entries.
 */
int vr_perf_parse(const char *path, const char *const *events, int nev,
		  struct vr_perf_val *pv);

/* Each line of @path into the test's log (kselftest_harness.h's TH_LOG). */
#ifdef TH_LOG
static inline void vr_log_file(struct __test_metadata *_metadata,
			       const char *path)
{
	char line[512];
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		TH_LOG("%s: %s", path, line);
	}
	fclose(f);
}

/* A failed vr_perf_measure() into the test's log: its steps, perf's output. */
static inline void vr_perf_log(struct __test_metadata *_metadata,
			       const struct vr_perf *r,
			       const struct vr_perf_res *res)
{
	TH_LOG("perf: start %d, spinners %d, enable %d, disable %d, exit %d",
	       res->start, res->spin, res->on, res->off, res->exit);
	vr_log_file(_metadata, r->err);
}
#endif

#endif /* _VR_PERF_H */
