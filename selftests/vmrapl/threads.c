// SPDX-License-Identifier: GPL-2.0
/*
 * Under the thread policy a vCPU thread's whole CPU time is its vCPU's,
 * inside KVM_RUN or not; in a process with several VMs, the threads that
 * are not vCPUs are host time.
 *
 * Regression test: a thread counted as its vCPU only while KVM's preempt
 * notifier was registered, i.e. inside KVM_RUN.  Its other time (exit
 * handling in userspace, I/O emulation, the syscalls around a sleep) went
 * to the VM's overhead: runtime_ns was 82-91 % of the thread's schedstat
 * for an exit-heavy VMM.  And in a process that runs several VMs, every
 * other thread went to the first VM's overhead.  Here per-vCPU runtime_ns
 * must match the thread's perf task-clock within 2 % (and its schedstat
 * from below, at least 98 %) for spinning, sleeping and exit-heavy vCPUs
 * (see tvm_check()), with three VMs in one process and with one VM in a
 * process of its own, and a spinning non-vCPU thread of the three-VM
 * process must be nobody's overhead.
 *
 * And a thread registered with ADD_TASK in a process with several VMs
 * (whose mm is then nobody's key) is that VM's overhead, also when it is
 * switched in from another busy untracked task: the switch filter must
 * send it to the lookup by its own key (a filter that only looked at the
 * mm's bit lost all of it).
 *
 * Regression: when a vCPU went to a new thread, its lookup entry was taken
 * out of the old thread's hash chain and put into the new one's at once,
 * with no grace period: a probe walking the old chain then followed it
 * into the new chain, missed the keys after it, and billed that switch to
 * the host.  A vCPU's new thread now gets a new entry; the module counts
 * any entry moved within a grace period (debugfs checks,
 * key_early_moves), which must stay 0 while the vCPUs change threads.
 *
 * Regression: before Linux 6.4 a vhost worker is a kernel thread named
 * "vhost-<owner pid>", and ADD_TASK accepted one by that name alone.  Once
 * the owner exited (its vhost fd kept open by a child), its pid could
 * become another process's, which could then claim the worker.  The worker
 * must also run in the caller's mm.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/vhost.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "libvmrapl.h"
#include "vr_kvm.h"

#define WINDOW_MS	2000

struct tvm {
	const char *what;
	struct vrg *g;
	struct vmrapl_vm *vm;
	uint64_t run0, sched0, sched0b, ovh0;
	int tc;			/* the thread's perf task-clock */
	uint64_t tc0, tc0b;
	uint64_t nsw0;		/* its switches in (schedstat's third) */
};

static int tvm_start(struct tvm *t, struct vmrapl *dev, enum vrg_prog prog,
		     int duty, int cpu)
{
	t->g = vrg_create(1, prog);
	if (!t->g || vmrapl_attach(dev, vrg_kvm_fd(t->g), 1,
				   VMRAPL_REGSET_INTEL, 0, &t->vm))
		return -1;
	/* 1 ms periods: a wake-up outside KVM_RUN every millisecond. */
	if (duty)
		vrg_set_duty(t->g, duty, 1);
	vrg_pin(t->g, 0, cpu);
	return vrg_start(t->g);
}

/* runtime_ns of vCPU 0 and the VM's overhead_ns. */
static int tvm_read(struct tvm *t, uint64_t *run, uint64_t *ovh)
{
	struct vmrapl_vcpu_stats vs;
	struct vmrapl_stats st;

	if (vmrapl_get_stats(t->vm, &st, &vs, 1, NULL, 0))
		return -1;
	*run = vs.runtime_ns;
	*ovh = st.overhead_ns;
	return 0;
}

/* Times the thread was switched in: the third field of its schedstat. */
static uint64_t tvm_switches(struct tvm *t)
{
	unsigned long long run, wait, n = 0;
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", vrg_tid(t->g, 0));
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%llu %llu %llu", &run, &wait, &n) != 3)
		n = 0;
	fclose(f);
	return n;
}

/*
 * The thread's clocks are read just before and just after GET_STATS, so
 * that the time GET_STATS takes (it closes the packages, by IPI under
 * TCG) brackets the comparison instead of skewing it.
 */
static int tvm_mark(struct tvm *t)
{
	t->tc = vr_task_clock_open(vrg_tid(t->g, 0));
	if (t->tc < 0)
		return t->tc;
	t->nsw0 = tvm_switches(t);
	t->tc0 = vr_task_clock_ns(t->tc);
	t->sched0 = vr_task_runtime_ns(vrg_tid(t->g, 0));
	tvm_read(t, &t->run0, &t->ovh0);
	t->sched0b = vr_task_runtime_ns(vrg_tid(t->g, 0));
	t->tc0b = vr_task_clock_ns(t->tc);
	return 0;
}

/*
 * The vCPU's runtime over the window against its thread's perf task-clock
 * (the same span of each switch: see vr_task_clock_open()) and schedstat.
 */
static void tvm_check(struct __test_metadata *_metadata, struct tvm *t,
		      uint64_t *ovh)
{
	uint64_t run, s_a, s_b, c_a, c_b, lo, hi, tlo, thi, nsw, slack;

	c_a = vr_task_clock_ns(t->tc);
	s_a = vr_task_runtime_ns(vrg_tid(t->g, 0));
	ASSERT_EQ(0, tvm_read(t, &run, ovh));
	s_b = vr_task_runtime_ns(vrg_tid(t->g, 0));
	c_b = vr_task_clock_ns(t->tc);
	nsw = tvm_switches(t) - t->nsw0;
	close(t->tc);
	run -= t->run0;
	*ovh -= t->ovh0;
	/* What each clock allows: from the narrowest to the widest window. */
	lo = s_a - t->sched0b;
	hi = s_b - t->sched0;
	tlo = c_a - t->tc0b;
	thi = c_b - t->tc0;
	TH_LOG("%s: runtime %.1f ms, task-clock %.1f .. %.1f ms, schedstat %.1f .. %.1f ms, %llu switches in, overhead %.1f ms",
	       t->what, run / 1e6, tlo / 1e6, thi / 1e6, lo / 1e6, hi / 1e6,
	       (unsigned long long)nsw, *ovh / 1e6);
	EXPECT_GT(lo, 0);
	EXPECT_GT(tlo, 0);
	/* Nothing of the thread's time is missing: at least 98 % of both. */
	EXPECT_GE(run, lo - lo / 50);
	EXPECT_GE(run, tlo - tlo / 50)
		TH_LOG("%s: runtime_ns is %.1f %% of the task-clock",
		       t->what, tlo ? 100.0 * run / tlo : 0);
	/*
	 * Nothing more than the thread's time: at most 2 % above its
	 * task-clock, and 250 us per switch in.  vmrapl starts a thread's
	 * time at the sched_switch that picks it, perf at the end of that
	 * context switch (finish_task_switch()), so vmrapl also counts the
	 * switch itself, once per wake-up: nothing measurable under TCG on
	 * 6.12 (the duty-cycled vCPU read 0.4 % under its task-clock over
	 * 691 switches in), 106 us per switch in on the debug kernel (KASAN
	 * and lockdep in the switch; 30 ms over 280).  Both clocks stop at
	 * the switch out, after the scheduler's work that follows a
	 * blocking thread's dequeue (picking the next task, new-idle
	 * balancing), which schedstat leaves out: that work put the
	 * duty-cycled vCPU 2-25 % above its schedstat, the more the more
	 * loaded the host, so schedstat is no upper bound.  Charging a
	 * sleeping thread its idle time, the bug this is for, is all of its
	 * off-CPU time: 650 ms for that vCPU on 6.12 (the bound allows 200),
	 * 300 ms on the debug kernel (it allows 105).
	 */
	slack = thi / 50 + nsw * 250000;
	EXPECT_LE(run, thi + slack)
		TH_LOG("%s: runtime_ns is %.1f %% of the task-clock",
		       t->what, thi ? 100.0 * run / thi : 0);
}

static void tvm_end(struct tvm *t)
{
	vrg_stop(t->g);
	vmrapl_detach(t->vm);
	vrg_destroy(t->g);
}

static volatile int spin_stop;

static void *spin(void *arg)
{
	vr_pin_self((int)(long)arg);
	while (!spin_stop)
		;
	return NULL;
}

TEST(three_vms_one_process)
{
	struct tvm t[3] = {
		{ .what = "spin" },
		{ .what = "duty 30 % of 1 ms" },
		{ .what = "exit-heavy" },
	};
	uint64_t ovh[3];
	struct vmrapl *dev;
	pthread_t th;
	int i;

	ASSERT_EQ(0, vr_reload(NULL));
	ASSERT_EQ(0, vmrapl_open(NULL, &dev));
	ASSERT_EQ(0, tvm_start(&t[0], dev, VRG_SPIN, 0, 0));
	ASSERT_EQ(0, tvm_start(&t[1], dev, VRG_SPIN, 30, 1));
	ASSERT_EQ(0, tvm_start(&t[2], dev, VRG_PIO, 0, 2));
	spin_stop = 0;
	ASSERT_EQ(0, pthread_create(&th, NULL, spin, (void *)3L));
	/* The vCPU threads are installed by the tracking work: settle. */
	vr_sleep_ms(300);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, tvm_mark(&t[i]));
	vr_sleep_ms(WINDOW_MS);
	for (i = 0; i < 3; i++)
		tvm_check(_metadata, &t[i], &ovh[i]);
	spin_stop = 1;
	pthread_join(th, NULL);
	/*
	 * The spinning thread is none of the three VMs' overhead (the VMM's
	 * own ioctls and the test's polling are a few ms at most).
	 */
	for (i = 0; i < 3; i++) {
		EXPECT_LT(ovh[i], WINDOW_MS * 1000000ull / 10)
			TH_LOG("%s: overhead %.1f ms while another thread of the process spun",
			       t[i].what, ovh[i] / 1e6);
	}
	for (i = 0; i < 3; i++)
		tvm_end(&t[i]);
	vmrapl_close(dev);
}

static volatile pid_t spin_tid;

/* spin(), after telling its thread id. */
static void *spin_told(void *arg)
{
	spin_tid = (pid_t)syscall(SYS_gettid);
	return spin(arg);
}

TEST(registered_task_three_vms)
{
	uint64_t s0, s0b, s1, s1b, ovh, lo, hi;
	struct vmrapl_stats st0, st1;
	struct vmrapl_vm *vm[4];
	struct vmrapl *dev;
	struct vrg *g[4];
	pthread_t th[2];
	int i;

	ASSERT_EQ(0, vr_reload(NULL));
	ASSERT_EQ(0, vmrapl_open(NULL, &dev));
	for (i = 0; i < 4; i++) {
		g[i] = vrg_create(1, VRG_HLT);
		ASSERT_NE(NULL, g[i]);
		ASSERT_EQ(0, vmrapl_attach(dev, vrg_kvm_fd(g[i]), 1,
					   VMRAPL_REGSET_INTEL, 0, &vm[i]));
	}
	/*
	 * The fourth VM's detach rebuilds the switch filter: the process's
	 * mm, key of none of the three left, no longer sets its bit, which
	 * the first attach had set.
	 */
	vmrapl_detach(vm[3]);
	vrg_destroy(g[3]);
	/*
	 * Two spinners share CPU 3, one registered: it is switched in from
	 * the other, a busy untracked task, with nothing else to change on
	 * the CPU, and never from idle (a change the probe always looks at).
	 */
	spin_stop = 0;
	spin_tid = 0;
	ASSERT_EQ(0, pthread_create(&th[0], NULL, spin, (void *)3L));
	ASSERT_EQ(0, pthread_create(&th[1], NULL, spin_told, (void *)3L));
	while (!spin_tid)
		vr_sleep_ms(1);
	ASSERT_EQ(0, vmrapl_add_task(vm[0], spin_tid));
	vr_sleep_ms(100);
	s0 = vr_task_runtime_ns(spin_tid);
	ASSERT_EQ(0, vmrapl_get_stats(vm[0], &st0, NULL, 0, NULL, 0));
	s0b = vr_task_runtime_ns(spin_tid);
	vr_sleep_ms(WINDOW_MS / 2);
	s1 = vr_task_runtime_ns(spin_tid);
	ASSERT_EQ(0, vmrapl_get_stats(vm[0], &st1, NULL, 0, NULL, 0));
	s1b = vr_task_runtime_ns(spin_tid);
	spin_stop = 1;
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);
	ovh = st1.overhead_ns - st0.overhead_ns;
	lo = s1 - s0b;
	hi = s1b - s0;
	TH_LOG("registered thread: overhead %.1f ms, its schedstat %.1f .. %.1f ms",
	       ovh / 1e6, lo / 1e6, hi / 1e6);
	EXPECT_GT(lo, 0);
	/* All of it, within the 2 % of a spinning vCPU in tvm_check(). */
	EXPECT_GE(ovh, lo - lo / 50);
	EXPECT_LE(ovh, hi + hi / 50);
	for (i = 0; i < 3; i++) {
		vmrapl_detach(vm[i]);
		vrg_destroy(g[i]);
	}
	vmrapl_close(dev);
}

TEST(one_vm_own_process)
{
	pid_t pid = fork();
	int status;

	ASSERT_LE(0, pid);
	if (!pid) {
		struct tvm t = { .what = "exit-heavy, alone" };
		struct vmrapl *dev;
		uint64_t ovh;

		if (vmrapl_open(NULL, &dev) || tvm_start(&t, dev, VRG_PIO, 0, 1))
			_exit(2);
		vr_sleep_ms(300);
		if (tvm_mark(&t))
			_exit(2);
		vr_sleep_ms(WINDOW_MS);
		tvm_check(_metadata, &t, &ovh);
		tvm_end(&t);
		vmrapl_close(dev);
		_exit(_metadata->passed ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST(vcpus_change_threads)
{
	struct vmrapl_stats st;
	struct vmrapl_vm *vm;
	struct vmrapl *dev;
	struct vrg *g;
	int i;

	ASSERT_EQ(0, vmrapl_open(NULL, &dev));
	g = vrg_create(2, VRG_PIO);
	ASSERT_NE(NULL, g);
	ASSERT_EQ(0, vmrapl_attach(dev, vrg_kvm_fd(g), 2, VMRAPL_REGSET_INTEL,
				   0, &vm));
	ASSERT_EQ(0, vrg_start(g));
	for (i = 0; i < 20; i++) {
		/* The tracking work installs each new thread meanwhile. */
		vr_sleep_ms(40);
		ASSERT_EQ(0, vrg_restart(g));
	}
	vr_sleep_ms(100);
	EXPECT_EQ(0, vr_debugfs_check("key_early_moves"));
	ASSERT_EQ(0, vmrapl_get_stats(vm, &st, NULL, 0, NULL, 0));
	EXPECT_GT(st.runtime_ns, 0);
	vrg_destroy(g);
	vmrapl_detach(vm);
	vmrapl_close(dev);
}

/* The kernel thread named @comm, or 0. */
static pid_t kthread_named(const char *comm)
{
	char path[64], buf[64];
	pid_t pid;
	FILE *f;

	for (pid = 2; pid < 65536; pid++) {
		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
		f = fopen(path, "r");
		if (!f)
			continue;
		buf[0] = 0;
		if (fgets(buf, sizeof(buf), f))
			buf[strcspn(buf, "\n")] = 0;
		fclose(f);
		if (!strcmp(buf, comm))
			return pid;
	}
	return 0;
}

/* insmod the rig's vhost-net modules (mkinitramfs.sh), if it has them. */
static void load_vhost(void)
{
	char line[512], cmd[600];
	FILE *f = fopen("/etc/rig/modules.vhost", "r");

	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		snprintf(cmd, sizeof(cmd), "insmod %s 2>/dev/null", line);
		if (system(cmd))
			continue;	/* loaded already, or built in */
	}
	if (f)
		fclose(f);
}

TEST(vhost_worker_of_reused_pid)
{
	int hold[2], status, fd;
	char comm[32];
	pid_t a, d, w;
	FILE *f;

	load_vhost();
	if (access("/dev/vhost-net", R_OK | W_OK))
		SKIP(return, "no /dev/vhost-net");
	ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1));
	ASSERT_EQ(0, pipe(hold));
	/* A owns a vhost worker; its child keeps the fd, and so the worker. */
	a = fork();
	ASSERT_LE(0, a);
	if (!a) {
		char x;

		fd = open("/dev/vhost-net", O_RDWR);
		if (fd < 0 || ioctl(fd, VHOST_SET_OWNER))
			_exit(2);
		if (!fork()) {
			close(hold[1]);
			if (read(hold[0], &x, 1) < 0)
				_exit(1);
			_exit(0);
		}
		_exit(0);
	}
	close(hold[0]);
	ASSERT_EQ(a, waitpid(a, &status, 0));
	ASSERT_EQ(0, status);
	snprintf(comm, sizeof(comm), "vhost-%d", a);
	w = kthread_named(comm);
	if (!w) {
		close(hold[1]);
		/* Since 6.4 the worker is a thread of A and went with it. */
		SKIP(return, "no kernel-thread vhost worker (Linux 6.4 or later)");
	}
	/* D gets A's pid: the pid after ns_last_pid. */
	f = fopen("/proc/sys/kernel/ns_last_pid", "w");
	ASSERT_NE(NULL, f);
	fprintf(f, "%d", a - 1);
	fclose(f);
	d = fork();
	ASSERT_LE(0, d);
	if (!d) {
		struct vmrapl_task t = { .tid = w };
		struct vrg *g;
		int dev, vfd;

		if (getpid() != a)
			_exit(3);
		dev = vr_open_dev();
		g = vrg_create(1, VRG_HLT);
		if (dev < 0 || !g)
			_exit(4);
		vfd = vr_attach(dev, vrg_kvm_fd(g), 1, VMRAPL_REGSET_INTEL, 0);
		if (vfd < 0)
			_exit(5);
		if (!ioctl(vfd, VMRAPL_VM_ADD_TASK, &t))
			_exit(6);	/* claimed another mm's worker */
		_exit(errno == EPERM ? 0 : 7);
	}
	ASSERT_EQ(d, waitpid(d, &status, 0));
	close(hold[1]);
	while (waitpid(-1, NULL, 0) > 0)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 3)
		SKIP(return, "pid %d was taken before the test could reuse it",
		     a);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("ADD_TASK of %s (tid %d) from pid %d: exit %d (6: accepted)",
		       comm, w, a, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
