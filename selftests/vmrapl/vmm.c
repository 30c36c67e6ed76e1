// SPDX-License-Identifier: GPL-2.0
/*
 * The reference VMM end to end: vmrapl-vmm attaches through libvmrapl,
 * installs the MSR filter and answers its guest's rdmsr exits; its JSON
 * summary says what the guest saw and what the host attributed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "vr_kvm.h"

static char out[65536];

/* Run vmrapl-vmm with @args; its stdout in out[], its exit status back. */
static int vmm(const char *args)
{
	char cmd[512];
	size_t n;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "vmrapl-vmm %s 2>&1", args);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = 0;
	n = pclose(p);
	/* A VMM killed by a signal (a crash) is not a success. */
	return WIFEXITED(n) ? WEXITSTATUS(n) : 128 + WTERMSIG(n);
}

/* The JSON line of MSR @msr, its number in hex of either case. */
static const char *msr_line(uint32_t msr)
{
	char key[64];
	const char *l;

	snprintf(key, sizeof(key), "\"msr\": \"0x%x\"", msr);
	l = strstr(out, key);
	if (l)
		return l;
	snprintf(key, sizeof(key), "\"msr\": \"0x%X\"", msr);
	return strstr(out, key);
}

TEST(intel_rdmsr_loop)
{
	const char *l;

	ASSERT_EQ(0, vr_reload("source=test"));
	ASSERT_EQ(0, vmm("--guest rdmsr-loop:intel --rapl intel --require-vrapl --duration 1 --guest-period-ms 1 --json"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"on\": true"));
	EXPECT_NE(NULL, strstr(out, "\"mode\": \"kernel\"")) TH_LOG("%s", out);
	l = msr_line(VMRAPL_MSR_PKG_ENERGY_STATUS);
	ASSERT_NE(NULL, l) TH_LOG("%s", out);
	EXPECT_GT(vr_json_ll(l, "count"), 10);
	EXPECT_EQ(0, vr_json_ll(l, "faults"));
	EXPECT_EQ(0, vr_json_ll(l, "violations"));
	EXPECT_NE(0, vr_json_ll(l, "first"));
	l = msr_line(VMRAPL_MSR_RAPL_POWER_UNIT);
	EXPECT_EQ(0xA0E03, vr_json_ll(l, "first"));
	vr_reload(NULL);
}

TEST(amd_rdmsr_loop)
{
	const char *l;

	ASSERT_EQ(0, vr_reload("source=test"));
	ASSERT_EQ(0, vmm("--guest rdmsr-loop:amd --rapl amd --require-vrapl --duration 1 --json"))
		TH_LOG("%s", out);
	l = msr_line(VMRAPL_MSR_AMD_PKG_ENERGY);
	ASSERT_NE(NULL, l) TH_LOG("%s", out);
	EXPECT_GT(vr_json_ll(l, "count"), 10);
	EXPECT_EQ(0, vr_json_ll(l, "faults"));
	EXPECT_EQ(0, vr_json_ll(l, "violations"));
	EXPECT_NE(0, vr_json_ll(l, "first"));
	vr_reload(NULL);
}

TEST(spin_is_attributed)
{
	/* The estimate source: a busy vCPU draws its per-CPU power. */
	ASSERT_EQ(0, vr_reload(NULL));
	ASSERT_EQ(0, vmm("--guest spin --rapl intel --require-vrapl --duration 1.5 --pin 1 --json"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"energy_uj\"")) TH_LOG("%s", out);
}

/* "key": {"pkg": N of the first @key after @from. */
static long long pkg_of(const char *from, const char *key)
{
	char k[64];

	/* vr_json_ll() quotes it into "@key": {"pkg": and reads N. */
	snprintf(k, sizeof(k), "%s\": {\"pkg", key);
	return vr_json_ll(from, k);
}

TEST(overhead_task_by_vcpu_count)
{
	const char *v0, *v1;
	long long o0, o1;

	/* An ADD_TASK'd thread burning CPU: the VM's overhead, 2:1. */
	ASSERT_EQ(0, vr_reload(NULL));
	ASSERT_EQ(0, vmm("--vcpus 3 --vpkgs 0,0,1 --guest idle --overhead-thread 60 --duration 1.5 --json"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"added\": true")) TH_LOG("%s", out);
	EXPECT_GT(pkg_of(strstr(out, "\"vm\": {"), "overhead_uj"), 0);
	v0 = strstr(out, "\"vpkg\": 0");
	v1 = strstr(out, "\"vpkg\": 1");
	ASSERT_NE(NULL, v0);
	ASSERT_NE(NULL, v1);
	o0 = pkg_of(v0, "overhead_uj");
	o1 = pkg_of(v1, "overhead_uj");
	EXPECT_GT(o1, 0);
	EXPECT_LE(llabs(o0 - 2 * o1), 2) TH_LOG("vpkg overhead %lld / %lld",
						o0, o1);
}

TEST(charge_policies)
{
	double share[2];
	int i;

	/*
	 * An exit-heavy guest: under "guest" only guest-mode time is the
	 * vCPU's, the exit handling becomes the VM's overhead.
	 */
	ASSERT_EQ(0, vr_reload(NULL));
	for (i = 0; i < 2; i++) {
		const char *vm;
		long long e, o;
		char args[160];

		snprintf(args, sizeof(args),
			 "--guest pio-loop --charge %s --duration 1.5 --pin 1 --json",
			 i ? "guest" : "thread");
		ASSERT_EQ(0, vmm(args)) TH_LOG("%s", out);
		vm = strstr(out, "\"vm\": {");
		e = pkg_of(vm, "energy_uj");
		o = pkg_of(vm, "overhead_uj");
		ASSERT_GT(e, 0) TH_LOG("%s", out);
		share[i] = (double)o / e;
	}
	TH_LOG("overhead share: thread %.3f, guest %.3f", share[0], share[1]);
	EXPECT_GT(share[1], share[0] * 2);
	EXPECT_GT(share[1], 0.05);
}

TEST(without_module)
{
	ASSERT_EQ(0, vr_unload());
	/* vRAPL is off, the VM still runs; --require-vrapl makes it fatal. */
	EXPECT_EQ(0, vmm("--guest spin --duration 0.3"));
	EXPECT_NE(NULL, strstr(out, "vRAPL off")) TH_LOG("%s", out);
	EXPECT_EQ(3, vmm("--guest spin --duration 0.3 --require-vrapl"));
	ASSERT_EQ(0, vr_load(NULL));
}

/*
 * Over the same reads (after the first five: the VMM's start-up), what a
 * guest read from its own 0x611 and what the host booked for its VM agree
 * within how far behind the host's books a read can be, plus one ESU per
 * read: idle, duty-cycled and busy guests alike.  (make demo once showed
 * an idle guest 15 % below the host's average power: it compared the
 * guest's reads with the host's whole run, start-up and teardown
 * included.  The VMM now reports the host's energy at its guest's reports,
 * and the demo compares the same window.)
 *
 * How far behind: the guest's view is published at a kvm_exit at most
 * once per guest period, from the books as the package's last close left
 * them, and the VMM reads the books (GET_STATS, which closes) at the
 * report that follows the read.  With a 1 ms period the view a read shows
 * is newer than the previous report's books: one interval between
 * reports.  With the default 100 ms period and reports 100 ms apart, the
 * view can be the one published at the previous report's exit, before
 * that report's books: two intervals.  (A CI run failed the busy guest
 * when this test allowed one interval at the default period: a trace
 * showed its counter standing still over one report and doubling over
 * the next.)
 */
TEST(guest_agrees_with_host)
{
	static const struct {
		const char *guest;
		unsigned int period_ms;	/* 0: the default, 100 ms */
	} runs[] = {
		{ "idle", 0 }, { "duty:30", 0 }, { "spin", 0 },
		{ "duty:30", 1 }, { "spin", 1 },
	};
	unsigned int i;

	ASSERT_EQ(0, vr_reload(NULL));
	for (i = 0; i < ARRAY_SIZE(runs); i++) {
		double span, host_j, guest_j, reads, step_j, tol;
		char args[200], period[40] = "";
		const char *l;

		if (runs[i].period_ms)
			snprintf(period, sizeof(period), " --guest-period-ms %u",
				 runs[i].period_ms);
		snprintf(args, sizeof(args),
			 "--guest %s%s --report-msr --esu 14 --pin 1 --duration 3 --require-vrapl --json",
			 runs[i].guest, period);
		ASSERT_EQ(0, vmm(args)) TH_LOG("%s", out);
		span = vr_json_num(out, "window_s");
		host_j = vr_json_num(out, "window_host_uj") / 1e6;
		l = msr_line(VMRAPL_MSR_PKG_ENERGY_STATUS);
		ASSERT_NE(NULL, l) TH_LOG("%s", out);
		guest_j = vr_json_num(l, "window_joules");
		step_j = vr_json_num(out, runs[i].period_ms ?
				     "window_max_step_uj" :
				     "window_max_step2_uj") / 1e6;
		reads = vr_json_num(l, "count");
		ASSERT_GT(span, 1.0) TH_LOG("%s", out);
		ASSERT_GT(host_j, 0) TH_LOG("%s", out);
		ASSERT_GT(step_j, 0) TH_LOG("%s", out);
		tol = step_j + reads / 16384;
		TH_LOG("%s, period %u ms: %.0f reads over %.2f s: guest %.4f J, host %.4f J (allowed %.4f)",
		       runs[i].guest, runs[i].period_ms ?: 100, reads, span,
		       guest_j, host_j, tol);
		EXPECT_LE(fabs(guest_j - host_j), tol) TH_LOG("%s", out);
	}
}

TEST_HARNESS_MAIN
