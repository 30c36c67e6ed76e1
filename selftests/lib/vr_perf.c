// SPDX-License-Identifier: GPL-2.0
/* perf stat on control FIFOs for the vmrapl selftests (see vr_perf.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "vr_cpu.h"
#include "vr_perf.h"
#include "vr_time.h"
#include "vr_truth.h"

static int vr_perf_spawn(struct vr_perf *r, const char *prefix,
			 const char *events)
{
	struct sched_param sp = { .sched_priority = 40 };
	char control[160];
	int in[2], fd;

	snprintf(r->out, sizeof(r->out), "%s.json", prefix);
	snprintf(r->err, sizeof(r->err), "%s.err", prefix);
	snprintf(r->ctl_path, sizeof(r->ctl_path), "%s.ctl", prefix);
	snprintf(r->ack_path, sizeof(r->ack_path), "%s.ack", prefix);
	snprintf(control, sizeof(control), "fifo:%s,%s", r->ctl_path,
		 r->ack_path);
	unlink(r->out);
	unlink(r->ctl_path);
	unlink(r->ack_path);
	if (mkfifo(r->ctl_path, 0600) || mkfifo(r->ack_path, 0600) ||
	    pipe(in))
		return -errno;
	/* O_RDWR: neither open waits for perf, and perf's open neither. */
	r->ctl = open(r->ctl_path, O_RDWR | O_CLOEXEC);
	r->ack = open(r->ack_path, O_RDWR | O_CLOEXEC);
	if (r->ctl < 0 || r->ack < 0)
		return -EIO;
	r->pid = fork();
	if (r->pid < 0)
		return -errno;
	if (!r->pid) {
		fd = open(r->err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(in[0], 0);
		dup2(fd, 1);
		dup2(fd, 2);
		close(in[1]);
		execl(VR_PERF, "perf", "stat", "-a", "--per-socket", "-j",
		      "-o", r->out, "-D", "-1", "--control", control,
		      "-e", events, "--", "/bin/cat", NULL);
		_exit(127);
	}
	close(in[0]);
	r->stdin_w = in[1];
	/*
	 * perf runs SCHED_FIFO too (below the measuring thread), so that
	 * the spinners cannot delay its enable and disable: that narrows
	 * the gap between the windows, nothing more.
	 */
	sched_setscheduler(r->pid, SCHED_FIFO, &sp);
	return 0;
}

int vr_perf_start(struct vr_perf *r, const char *prefix, const char *events)
{
	int rc = vr_perf_spawn(r, prefix, events);

	if (rc)
		return rc;
	rc = vr_perf_cmd(r, "ping\n", 60000);
	if (rc)
		vr_perf_finish(r);
	return rc;
}

int vr_perf_cmd(struct vr_perf *r, const char *cmd, int ms)
{
	char buf[8], c;
	size_t got = 0;
	struct pollfd pfd = { .fd = r->ack, .events = POLLIN };

	if (write(r->ctl, cmd, strlen(cmd)) != (ssize_t)strlen(cmd))
		return -EIO;
	for (;;) {
		if (waitpid(r->pid, NULL, WNOHANG) == r->pid)
			return -ESRCH;
		if (ms <= 0)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, 100) <= 0) {
			ms -= 100;
			continue;
		}
		if (read(r->ack, &c, 1) != 1)
			return -EIO;
		if (c == '\n')
			break;
		if (c && got < sizeof(buf) - 1)
			buf[got++] = c;
	}
	buf[got] = 0;
	return strcmp(buf, "ack") ? -EIO : 0;
}

int vr_perf_finish(struct vr_perf *r)
{
	int st = 0;

	close(r->stdin_w);
	close(r->ctl);
	close(r->ack);
	if (waitpid(r->pid, &st, 0) != r->pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void vr_perf_window(struct vr_perf *r, char (*dir)[VR_PC_DIR], int n,
			   int ms, uint64_t *o0, uint64_t *i0, uint64_t *i1,
			   uint64_t *o1, int *e_on, int *e_off)
{
	vr_pc_read_all(dir, n, o0);
	*e_on = vr_perf_cmd(r, "enable\n", 10000);
	vr_pc_read_all(dir, n, i0);
	vr_sleep_ms(ms);
	vr_pc_read_all(dir, n, i1);
	*e_off = vr_perf_cmd(r, "disable\n", 10000);
	vr_pc_read_all(dir, n, o1);
}

int vr_perf_measure(struct vr_perf *r, const char *prefix, const char *events,
		    int spin, char (*dir)[VR_PC_DIR], int n, int ms,
		    uint64_t *o0, uint64_t *i0, uint64_t *i1, uint64_t *o1,
		    struct vr_perf_res *res)
{
	pthread_t th[8];

	memset(res, 0, sizeof(*res));
	if (spin > 8)
		spin = 8;
	res->start = vr_perf_start(r, prefix, events);
	if (res->start)
		return -EIO;
	res->spin = spin ? vr_spin_start(th, spin) : 0;
	if (res->spin) {
		res->exit = vr_perf_finish(r);
		return -EIO;
	}
	vr_fifo(true);
	vr_perf_window(r, dir, n, ms, o0, i0, i1, o1, &res->on, &res->off);
	vr_fifo(false);
	if (spin)
		vr_spin_stop(th, spin);
	res->exit = vr_perf_finish(r);
	return res->on || res->off || res->exit ? -EIO : 0;
}

int vr_perf_parse(const char *path, const char *const *events, int nev,
		  struct vr_perf_val *pv)
{
	char line[1024], ev[64], *k;
	FILE *f = fopen(path, "r");
	struct vr_perf_val *v;
	int s, d;

	if (!f)
		return -errno;
	memset(pv, 0, sizeof(*pv) * MAX_PKGS * nev);
	while (fgets(line, sizeof(line), f)) {
		k = strstr(line, "\"socket\" : \"S");
		if (!k || sscanf(k, "\"socket\" : \"S%d\"", &s) != 1 ||
		    s < 0 || s >= MAX_PKGS)
			continue;
		k = strstr(line, "\"event\" : \"");
		if (!k || sscanf(k, "\"event\" : \"%63[^\"]\"", ev) != 1)
			continue;
		for (d = 0; d < nev; d++)
			if (strstr(ev, events[d]))
				break;
		if (d == nev)
			continue;
		v = &pv[s * nev + d];
		k = strstr(line, "\"aggregate-number\" : ");
		if (k)
			sscanf(k, "\"aggregate-number\" : %d", &v->nr);
		k = strstr(line, "\"unit\" : \"");
		if (k)
			sscanf(k, "\"unit\" : \"%15[^\"]\"", v->unit);
		k = strstr(line, "\"pcnt-running\" : ");
		if (k)
			sscanf(k, "\"pcnt-running\" : %lf", &v->running);
		k = strstr(line, "\"counter-value\" : \"");
		if (k && sscanf(k, "\"counter-value\" : \"%lf\"", &v->joules) == 1)
			v->seen = 1;
	}
	fclose(f);
	return 0;
}
