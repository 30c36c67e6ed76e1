// SPDX-License-Identifier: GPL-2.0
/*
 * The rapl variant of the rig (selftests/rig/run.sh --variant rapl): the
 * rig's QEMU emulates AMD RAPL counters from a power model (the patches in
 * userspace/qemu/patches/), so vmrapl's AMD source runs against registers
 * that two readers nobody here wrote also read: the test kernel's powercap
 * driver (amd_rapl, in intel_rapl_msr) and perf's power PMU.  The model's
 * own running totals (its truth) come from QEMU through the fw_cfg file
 * opt/org.vmrapl/rapl; Documentation/testing.rst has the format.
 *
 * Every comparison brackets: each reading of one side is taken between two
 * readings of the other, so the windows are the same to within the time
 * of one read, and the bounds need no guessed slack beyond the counter's
 * own granularity (one ESU, one counter update).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "kselftest_harness.h"
#include "libvmrapl-host.h"
#include "vr_kvm.h"
#include "vr_perf.h"
#include "vr_powercap.h"
#include "vr_truth.h"

#define ESU		16
#define UJ_PER_UNIT	(1e6 / (1 << ESU))	/* 15.26 uJ */
#define EU_PER_UJ	((double)(1 << 24) / 1e6)
/*
 * powercap (intel_rapl_common) keeps its energy unit as an integer number
 * of nanojoules, 1e9 >> ESU = 15258 instead of 15258.789: its energy_uj
 * runs slow by that ratio.  Energies compared with it are scaled so.
 */
#define PC_SCALE	((double)(1000000000 >> ESU) / (1e9 / (1 << ESU)))
/* The other sides bracketed by powercap (vr_pc_bracket()'s @mid). */
static int books_mid(int pkg, void *out)
{
	return vr_read_books(pkg, "pkg", out);
}

static int truth_mid(int pkg, void *out)
{
	return read_truth(out);
}

/* The model's most power for package @pkg, in uW (from the truth). */
static uint64_t pkg_max_uw(const struct truth *t, int pkg)
{
	uint64_t mw = t->idle_mw + t->uncore_mw;
	int i;

	for (i = 0; i < t->ncores; i++)
		if (t->core_pkg[i] == pkg)
			mw += t->core_mw[i];
	return mw * 1000;
}

TEST(amd_source)
{
	struct vmrapl_info info;
	char line[4096];
	FILE *f;
	int rapl_flag = 0, npk = 0;

	/* CPUID 0x80000007 EDX bit 14, as the kernel shows it */
	f = fopen("/proc/cpuinfo", "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "flags", 5) && strstr(line, " rapl"))
			rapl_flag = 1;
	fclose(f);
	EXPECT_EQ(1, rapl_flag);
	/* Asked for by name, the source loads; auto finds it too. */
	ASSERT_EQ(0, vr_reload("source=amd"));
	ASSERT_EQ(0, vr_reload("source=auto"));
	ASSERT_EQ(0, vr_get_info(&info));
	EXPECT_EQ(VMRAPL_SOURCE_AMD, info.source);
	EXPECT_FALSE(info.features & VMRAPL_INFO_F_ESTIMATED);
	EXPECT_EQ(ESU, info.host_esu);
	EXPECT_EQ(MAX_PKGS, info.nr_packages);
	/*
	 * The per-core counters weigh the dynamic split (basic.percore_state
	 * checks the same on the rig's other machines, which have none).
	 */
	EXPECT_TRUE(info.features & VMRAPL_INFO_F_PERCORE);
	EXPECT_FALSE(info.features & VMRAPL_INFO_F_APERF);
	f = fopen("/sys/kernel/debug/vmrapl/packages", "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		char weight[16];
		int p, active;

		if (sscanf(line, "pkg %d percore active %d weight %15s", &p,
			   &active, weight) != 3)
			continue;
		EXPECT_EQ(1, active) TH_LOG("%s", line);
		EXPECT_STREQ("energy", weight);
		npk++;
	}
	fclose(f);
	EXPECT_EQ(MAX_PKGS, npk);
}

TEST(kernel_drivers_bind)
{
	char dir[VR_PC_DIR];
	int p;

	for (p = 0; p < MAX_PKGS; p++) {
		ASSERT_EQ(0, vr_pc_zone(p, NULL, dir, NULL)) {
			TH_LOG("no powercap zone package-%d: amd_rapl did not bind", p);
		}
		/* 2^32 units of 2^-16 J: 65536 J (powercap's unit is 15 uJ) */
		EXPECT_GE(vr_read_u64(dir, "max_energy_range_uj"), 65500000000ull);
		EXPECT_LE(vr_read_u64(dir, "max_energy_range_uj"), 65536000000ull);
		EXPECT_LT(0, vr_read_u64(dir, "energy_uj"));
	}
	EXPECT_EQ(0, access("/sys/bus/event_source/devices/power/events/energy-pkg", R_OK)) {
		TH_LOG("perf's power PMU has no energy-pkg event");
	}
	EXPECT_EQ(0, access(TRUTH, R_OK)) {
		TH_LOG("no fw_cfg truth file %s", TRUTH);
	}
}

/*
 * (1) The kernel's own driver agrees: over the same window, the powercap
 * zone of each package and vmrapl's books ("sampled", exact, in 2^-24 J)
 * advance by the same energy.  A read of vmrapl's debugfs books closes
 * every package's epoch whose last sample is older than one epoch
 * (sample_period_us), so each books reading sits between two powercap
 * readings, and its last sample is at most one epoch old.  The counter
 * moves once per model tick, by the whole tick's energy, and a tick can
 * be longer than its 1 ms (the model's timer runs late on a loaded host):
 * what the books miss at one end is the energy from the tick before
 * their last sample to the reading, at most one epoch plus the longest
 * recent tick (the truth's tick_max_ns, read right after that end) at
 * the model's most power.  Books that miss energy at the start of the
 * window advance by more, at its end by less; add one ESU per end and
 * powercap's rounding to a microjoule.
 */
TEST(powercap_matches_sampled)
{
	struct vr_books b0[MAX_PKGS], b1[MAX_PKGS];
	uint64_t a0[MAX_PKGS], c0[MAX_PKGS], a1[MAX_PKGS], c1[MAX_PKGS];
	uint64_t range[MAX_PKGS], w0[MAX_PKGS], w1[MAX_PKGS];
	char dir[MAX_PKGS][VR_PC_DIR];
	struct vmrapl_info info;
	struct truth t, te0, te1;
	pthread_t th[8];
	int p, n = vr_spin_cpus(), round, ret;

	ASSERT_EQ(0, vr_reload("source=auto"));
	ASSERT_EQ(0, vr_get_info(&info));
	ASSERT_EQ(0, read_truth(&t)) {
		TH_LOG("no fw_cfg truth %s: the model's powers bound the test", TRUTH);
	}
	for (p = 0; p < MAX_PKGS; p++)
		ASSERT_EQ(0, vr_pc_zone(p, NULL, dir[p], &range[p]));
	/* Once idle-ish, once with every CPU busy. */
	for (round = 0; round < 2; round++) {
		if (round)
			ASSERT_EQ(0, vr_spin_start(th, n));
		vr_pc_bracket_all(MAX_PKGS, dir, range, books_mid, b0,
				  sizeof(b0[0]), a0, c0, w0);
		ASSERT_EQ(0, read_truth(&te0));
		vr_sleep_ms(2000);
		vr_pc_bracket_all(MAX_PKGS, dir, range, books_mid, b1,
				  sizeof(b1[0]), a1, c1, w1);
		ret = read_truth(&te1);
		if (round)
			vr_spin_stop(th, n);
		ASSERT_EQ(0, ret);
		ASSERT_TRUE(te0.tick_max_ns && te1.tick_max_ns) {
			TH_LOG("the truth has no tick_max_ns: QEMU without the project's patch 0002");
		}
		for (p = 0; p < MAX_PKGS; p++) {
			double s = (b1[p].sampled - b0[p].sampled) / EU_PER_UJ *
				   PC_SCALE;
			double lo = vr_pc_delta(c0[p], a1[p], range[p]);
			double hi = vr_pc_delta(a0[p], c1[p], range[p]);
			/* an epoch and a tick at most power, an ESU, rounding */
			double uj_per_ns = pkg_max_uw(&t, p) / 1e9;
			double epoch_ns = info.sample_period_us * 1e3;
			double miss0 = uj_per_ns * (epoch_ns + te0.tick_max_ns);
			double miss1 = uj_per_ns * (epoch_ns + te1.tick_max_ns);
			double quant = 2 * UJ_PER_UNIT + 2;

			ASSERT_NE(UINT64_MAX, w0[p]);
			ASSERT_NE(UINT64_MAX, w1[p]);
			TH_LOG("round %d pkg %d: sampled %.0f uJ (in powercap's unit), powercap %.0f..%.0f uJ (brackets %llu, %llu uJ), slack %.0f uJ at the start, %.0f at the end, %.0f either way (longest ticks %.3f, %.3f ms), %llu samples",
			       round, p, s, lo, hi, (unsigned long long)w0[p],
			       (unsigned long long)w1[p], miss0, miss1, quant,
			       te0.tick_max_ns / 1e6, te1.tick_max_ns / 1e6,
			       (unsigned long long)(b1[p].samples - b0[p].samples));
			EXPECT_GT(s, 0);
			EXPECT_GE(s, lo - miss1 - quant);
			EXPECT_LE(s, hi + miss0 + quant);
			EXPECT_EQ(b0[p].lost, b1[p].lost);
			EXPECT_TRUE(vr_books_conserve(&b1[p]));
		}
	}
}

/*
 * The registers are the model's: over a window, each package's powercap
 * energy advances by the model's package energy, within the counter's
 * update and one ESU (the truth is bracketed by two powercap reads).
 */
TEST(counters_match_truth)
{
	struct truth t0[MAX_PKGS], t1[MAX_PKGS];
	uint64_t a0[MAX_PKGS], c0[MAX_PKGS], a1[MAX_PKGS], c1[MAX_PKGS];
	uint64_t range[MAX_PKGS], w0[MAX_PKGS], w1[MAX_PKGS];
	char dir[MAX_PKGS][VR_PC_DIR];
	pthread_t th[8];
	int p, n = vr_spin_cpus();

	if (access(TRUTH, R_OK))
		SKIP(return, "no fw_cfg truth (%s)", TRUTH);
	for (p = 0; p < MAX_PKGS; p++)
		ASSERT_EQ(0, vr_pc_zone(p, NULL, dir[p], &range[p]));
	ASSERT_EQ(0, vr_spin_start(th, n));
	vr_pc_bracket_all(MAX_PKGS, dir, range, truth_mid, t0, sizeof(t0[0]),
			  a0, c0, w0);
	vr_sleep_ms(2000);
	vr_pc_bracket_all(MAX_PKGS, dir, range, truth_mid, t1, sizeof(t1[0]),
			  a1, c1, w1);
	vr_spin_stop(th, n);
	for (p = 0; p < MAX_PKGS; p++) {
		double e, lo, hi;

		ASSERT_NE(UINT64_MAX, w0[p]);
		ASSERT_NE(UINT64_MAX, w1[p]);
		ASSERT_EQ(MAX_PKGS, t1[p].npkgs);
		/*
		 * The truth and the register are the same tick's state,
		 * so only the ESU floor and powercap's uJ rounding remain.
		 */
		e = (t1[p].pkg_pj[p] - t0[p].pkg_pj[p]) / 1e6 * PC_SCALE;
		lo = vr_pc_delta(c0[p], a1[p], range[p]);
		hi = vr_pc_delta(a0[p], c1[p], range[p]);
		TH_LOG("pkg %d: model %.0f uJ (in powercap's unit) over %.3f s, powercap %.0f..%.0f uJ (brackets %llu, %llu uJ)",
		       p, e, (t1[p].time_ns - t0[p].time_ns) / 1e9, lo, hi,
		       (unsigned long long)w0[p], (unsigned long long)w1[p]);
		EXPECT_GT(e, 0);
		EXPECT_GE(e, lo - 2 * UJ_PER_UNIT - 2);
		EXPECT_LE(e, hi + 2 * UJ_PER_UNIT + 2);
	}
}

#define MSR_AMD_PKG_ENERGY_STATUS	0xc001029b

/*
 * (4) A wrap of the 32-bit package counter loses nothing.  The rig starts
 * the counters RIG_RAPL_WRAP_J (1700 J) below 2^32 (x-rapl-start), and
 * /init runs this program first in the rapl variant, so package 0's
 * counter wraps during this test: across a window that holds the wrap,
 * vmrapl's books advance by the counter's delta modulo 2^32 (bracketed
 * by two raw MSR reads, each end allowed the 2 ms its last close may lag
 * the read), count one more wrap and lose nothing.
 */
FIXTURE(wrap) {
	int unused;
};

FIXTURE_SETUP(wrap)
{
}

FIXTURE_TEARDOWN(wrap)
{
}

TEST_F_TIMEOUT(wrap, pkg_counter_wraps, 240)
{
	struct truth t;
	struct vr_books b0, b1;
	uint32_t r0a, r0c, r1a, r1c, r, prev;
	uint64_t lo, hi, got, t0, slack, step_ns;
	pthread_t th[8];
	int fd, n = vr_spin_cpus(), wrapped = 0;

	fd = vr_msr_open(0, O_RDONLY);
	if (fd < 0)
		SKIP(return, "no /dev/cpu/N/msr");
	/* Counter units since boot, from the truth: past 2^32, too late. */
	if (!read_truth(&t)) {
		double units = (t.pkg_pj[0] + (double)t.start_pj) * (1 << ESU) / 1e12;

		ASSERT_LT(units, 4294967296.0) {
			TH_LOG("package 0's counter wrapped before this test (%.0f J after boot): raise RIG_RAPL_WRAP_J",
			       t.pkg_pj[0] / 1e12);
		}
		TH_LOG("package 0's counter wraps in %.0f J", (4294967296.0 - units) / (1 << ESU));
	}
	ASSERT_EQ(0, vr_reload("source=auto"));
	ASSERT_EQ(0, vr_spin_start(th, n));
	vr_fifo(true);
	r0a = vr_rdmsr32(fd, MSR_AMD_PKG_ENERGY_STATUS);
	ASSERT_EQ(0, vr_read_books(0, "pkg", &b0));
	r0c = vr_rdmsr32(fd, MSR_AMD_PKG_ENERGY_STATUS);
	vr_fifo(false);
	prev = r0c;
	t0 = vr_now_ns();
	while (!wrapped && vr_now_ns() - t0 < 200ull * 1000000000) {
		vr_sleep_ms(200);
		r = vr_rdmsr32(fd, MSR_AMD_PKG_ENERGY_STATUS);
		wrapped = r < prev;
		prev = r;
	}
	vr_sleep_ms(300);
	vr_fifo(true);
	r1a = vr_rdmsr32(fd, MSR_AMD_PKG_ENERGY_STATUS);
	ASSERT_EQ(0, vr_read_books(0, "pkg", &b1));
	r1c = vr_rdmsr32(fd, MSR_AMD_PKG_ENERGY_STATUS);
	vr_fifo(false);
	vr_spin_stop(th, n);
	close(fd);
	TH_LOG("counter %u..%u -> %u..%u after %.1f s, wrapped %d",
	       r0a, r0c, r1a, r1c, (vr_now_ns() - t0) / 1e9, wrapped);
	ASSERT_EQ(1, wrapped) {
		TH_LOG("no wrap within 200 s: was x-rapl-start set (run.sh)?");
	}
	/*
	 * 32-bit deltas: the window holds one wrap, far less than 2^32.  The
	 * books are as of the package's last close, which debugfs's read
	 * only makes if the epoch is stale: it may be up to a period (1 ms)
	 * before the read, and its raw value a counter step older (the
	 * model's tick: rapl-update-us, or the longest recent one).  Each
	 * end may therefore lag its bracket by that much of the window's
	 * mean power (one run read 1506 units, 1.0 ms at 91 W, above a
	 * bracket of the raw reads alone, with 1 ms ticks).
	 */
	step_ns = t.tick_max_ns > t.tick_ns ? t.tick_max_ns : t.tick_ns;
	if (!step_ns)
		step_ns = 1000000;
	lo = (uint32_t)(r1a - r0c);
	hi = (uint32_t)(r1c - r0a);
	slack = (uint64_t)((double)lo * (1e6 + step_ns) / (vr_now_ns() - t0));
	lo = lo > slack ? lo - slack : 0;
	hi += slack;
	got = (b1.sampled - b0.sampled) >> (24 - ESU);
	TH_LOG("sampled %llu units, counter %llu..%llu units (%.1f ms of slack each side), wraps %llu -> %llu, lost %llu -> %llu",
	       (unsigned long long)got, (unsigned long long)lo,
	       (unsigned long long)hi, (1e6 + step_ns) / 1e6,
	       (unsigned long long)b0.wraps,
	       (unsigned long long)b1.wraps, (unsigned long long)b0.lost,
	       (unsigned long long)b1.lost);
	EXPECT_EQ(0, (b1.sampled - b0.sampled) & ((1 << (24 - ESU)) - 1));
	EXPECT_GE(got, lo);
	EXPECT_LE(got, hi);
	EXPECT_LT(b0.wraps, b1.wraps);
	EXPECT_EQ(b0.lost, b1.lost);
	EXPECT_TRUE(vr_books_conserve(&b1));
}

/* Do the cores of package @pkg all draw the same power in the model? */
static bool pkg_homogeneous(const struct truth *t, int pkg)
{
	unsigned int mw = 0;
	int i;

	for (i = 0; i < t->ncores; i++) {
		if (t->core_pkg[i] != pkg)
			continue;
		if (mw && t->core_mw[i] != mw)
			return false;
		mw = t->core_mw[i];
	}
	return true;
}

/*
 * One spinning VM on each CPU of @cpus (@n of them), after a second's
 * warm-up, over 5 s: each VM's energy (@got, uJ) and the model's truth
 * for it (@truth, uJ): its core's own energy plus its share of its
 * package's idle and uncore energy, split evenly over the package's VMs
 * (vmrapl splits static power by occupancy), and, unless NULL, its core's
 * energy alone (@core, uJ) and the cycles its core's APERF counted in
 * the model (@cyc, millions: the vCPU thread's CPU time at the model's
 * frequency for the core, rapl-core-mhz).  The books of every package
 * must be conserved exactly.
 */
static int vms_vs_truth(struct __test_metadata *_metadata, const int *cpus,
			int n, double *got, double *truth, double *core,
			double *cyc)
{
	struct vrp_opts o = { .prog = VRG_SPIN, .duty = 100, .attach = true };
	struct vr_books b0[MAX_PKGS], b1[MAX_PKGS], b[MAX_PKGS];
	struct truth t0, t1;
	struct vrp vm[4];
	double e0[4], e1[4];
	int i, j, per_pkg[MAX_PKGS] = { 0 };

	for (i = 0; i < n; i++) {
		o.cpu = cpus[i];
		if (vrp_start(&vm[i], &o)) {
			while (i--)
				vrp_stop(&vm[i]);
			return -1;
		}
	}
	vr_sleep_ms(1000);
	for (i = 0; i < n; i++)
		EXPECT_EQ(0, vrp_energy(vm[i].pid, &e0[i], NULL, NULL));
	EXPECT_EQ(0, read_truth(&t0));
	for (i = 0; i < MAX_PKGS; i++)
		EXPECT_EQ(0, vr_read_books(i, "pkg", &b0[i]));
	vr_sleep_ms(5000);
	for (i = 0; i < n; i++)
		EXPECT_EQ(0, vrp_energy(vm[i].pid, &e1[i], NULL, NULL));
	EXPECT_EQ(0, read_truth(&t1));
	for (i = 0; i < MAX_PKGS; i++)
		EXPECT_EQ(0, vr_read_books(i, "pkg", &b1[i]));
	for (i = 0; i < n; i++)
		vrp_stop(&vm[i]);
	for (i = 0; i < MAX_PKGS; i++) {
		EXPECT_EQ(0, vr_read_books(i, "pkg", &b[i]));
		EXPECT_TRUE(vr_books_conserve(&b[i]));
	}
	for (i = 0; i < n; i++)
		per_pkg[t1.core_pkg[cpus[i]]]++;
	/*
	 * What the VMs' shares rest on: vmrapl's static energy (split by
	 * occupancy) against the model's idle and uncore, per package.
	 */
	for (i = 0; i < MAX_PKGS && i < t1.npkgs; i++)
		if (per_pkg[i])
			TH_LOG("package %d: vmrapl's static %.0f uJ, the model's idle and uncore %.0f uJ, over the window",
			       i, (b1[i].static_e - b0[i].static_e) * 1e6 / (1 << 24),
			       (double)(t1.idle_pj[i] - t0.idle_pj[i] +
					t1.uncore_pj[i] - t0.uncore_pj[i]) / 1e6);
	for (i = 0; i < n; i++) {
		int c = cpus[i], p = t1.core_pkg[c];

		j = per_pkg[p];
		truth[i] = (t1.core_pj[c] - t0.core_pj[c] +
			    (double)(t1.idle_pj[p] - t0.idle_pj[p] +
				     t1.uncore_pj[p] - t0.uncore_pj[p]) / j) / 1e6;
		got[i] = e1[i] - e0[i];
		if (core)
			core[i] = (t1.core_pj[c] - t0.core_pj[c]) / 1e6;
		if (cyc)
			cyc[i] = (t1.core_cpu_ns[c] - t0.core_cpu_ns[c]) / 1e9 *
				 t1.core_mhz[c];
		TH_LOG("vm on cpu %d (pkg %d, %u mW): %.0f uJ, model %.0f uJ (core %.0f uJ, cpu %.3f s), %+.2f %%",
		       c, p, t1.core_mw[c], got[i], truth[i],
		       (t1.core_pj[c] - t0.core_pj[c]) / 1e6,
		       (t1.core_cpu_ns[c] - t0.core_cpu_ns[c]) / 1e9,
		       100 * (got[i] - truth[i]) / truth[i]);
	}
	return 0;
}

/*
 * (2) Attribution against the emulated counters: one spinning VM per CPU,
 * books conserved exactly, and each VM on a homogeneous package (all its
 * cores at one power) within 2 % of the model's truth for it.  The rig's
 * package 1 is heterogeneous (test 3); its VMs are only logged here.
 */
TEST(attribution_vs_truth)
{
	int cpus[4] = { 0, 1, 2, 3 }, i, n = vr_spin_cpus();
	double got[4], truth[4];
	struct truth t;

	if (read_truth(&t))
		SKIP(return, "no fw_cfg truth");
	ASSERT_EQ(4, n);
	ASSERT_EQ(0, vr_reload("source=auto"));
	ASSERT_EQ(0, vms_vs_truth(_metadata, cpus, n, got, truth, NULL, NULL));
	for (i = 0; i < n; i++) {
		EXPECT_GT(truth[i], 0);
		if (!pkg_homogeneous(&t, t.core_pkg[i]))
			continue;
		EXPECT_LE(got[i], truth[i] * 1.02);
		EXPECT_GE(got[i], truth[i] * 0.98);
	}
}

/*
 * (3) Heterogeneous power: the rig's core 3 draws half of core 2's power
 * (run.sh: rapl-core-mw=12000:12000:12000:6000), both in package 1.  A
 * spinning VM on each of the two.  Split by time alone (percore=0), both
 * get the mean of the two cores' energy: on an idle build machine, with
 * 8 W idle and 4 W uncore, the truth is about 18 W and 12 W and a time
 * split gives 15 W each, -17 % and +25 %.  How much CPU the vCPU threads
 * get from the machine sets the cores' energy, so the error to expect is
 * computed from the run's own truth; the time split must show at least
 * half of it, in the right direction.  With the per-core energy counters
 * (the default), each VM gets its own core's energy: within 5 % of the
 * truth.
 *
 * The vCPU threads here still switch now and then (kworkers, this
 * test's reads), so the per-core samples come from those switches and
 * from the exits (kvm_exit/kvm_entry) alike; the unit tests cover a vCPU
 * that only exits.
 */
TEST(heterogeneous_percore)
{
	int cpus[2] = { -1, -1 }, i, k = 0, pkg = -1;
	double got[2], truth[2], core[2], cyc[2], err_time[2], err, want;
	struct vmrapl_info info;
	struct truth t;

	if (read_truth(&t))
		SKIP(return, "no fw_cfg truth");
	for (i = 0; i < t.ncores && pkg < 0; i++)
		if (!pkg_homogeneous(&t, t.core_pkg[i]))
			pkg = t.core_pkg[i];
	if (pkg < 0)
		SKIP(return, "no package with unequal core powers (rapl-core-mw)");
	for (i = 0; i < t.ncores && k < 2; i++)
		if (t.core_pkg[i] == pkg)
			cpus[k++] = i;
	ASSERT_EQ(2, k);
	ASSERT_NE(t.core_mw[cpus[0]], t.core_mw[cpus[1]]);

	/* By time alone: the mean core energy for both. */
	ASSERT_EQ(0, vr_reload("source=auto percore=0"));
	ASSERT_EQ(0, vms_vs_truth(_metadata, cpus, 2, got, truth, core, NULL));
	for (i = 0; i < 2; i++) {
		err = (got[i] - truth[i]) / truth[i];
		want = ((core[0] + core[1]) / 2 - core[i]) / truth[i];
		err_time[i] = err;
		TH_LOG("time split, cpu %d: %+.1f %%, a time split of these cores' energy: %+.1f %%",
		       cpus[i], 100 * err, 100 * want);
		EXPECT_GT(fabs(want), 0.02);
		EXPECT_GT(err / want, 0.5);
	}

	/*
	 * Weighed by APERF (aperf=1, what an Intel package gets): the cores'
	 * energy split by their cycles.  The model's frequencies are its own
	 * (rapl-core-mhz), not its powers: a core at 0.76 of the frequency
	 * for half the power (run.sh) has cycles that weigh it less than
	 * time does, not as much as its energy.  The error to expect is the
	 * cycle split of the run's own core energy; the APERF split must
	 * show it in the right direction, at least half of it and at most
	 * half again, and stay nearer the truth than the time split.
	 */
	if (!t.core_mhz[cpus[0]] || !t.core_mhz[cpus[1]]) {
		TH_LOG("no APERF in the model (rapl-core-mhz): not weighed by cycles");
	} else {
		ASSERT_EQ(0, vr_reload("source=auto percore=0 aperf=1"));
		ASSERT_EQ(0, vr_get_info(&info));
		ASSERT_TRUE(info.features & VMRAPL_INFO_F_APERF)
			TH_LOG("aperf=1 with the model's APERF: not in use");
		EXPECT_FALSE(info.features & VMRAPL_INFO_F_PERCORE);
		ASSERT_EQ(0, vms_vs_truth(_metadata, cpus, 2, got, truth, core,
					  cyc));
		for (i = 0; i < 2; i++) {
			err = (got[i] - truth[i]) / truth[i];
			want = ((core[0] + core[1]) * cyc[i] / (cyc[0] + cyc[1]) -
				core[i]) / truth[i];
			TH_LOG("APERF split, cpu %d (%u MHz): %+.1f %%, a cycle split of these cores' energy: %+.1f %% (time split %+.1f %%)",
			       cpus[i], t.core_mhz[cpus[i]], 100 * err,
				100 * want, 100 * err_time[i]);
			EXPECT_GT(err / want, 0.5);
			EXPECT_LT(err / want, 1.5);
			EXPECT_LT(fabs(err), fabs(err_time[i]));
		}
	}

	/* Per-core energy weighting: each VM its own core's energy. */
	ASSERT_EQ(0, vr_reload("source=auto"));
	ASSERT_EQ(0, vms_vs_truth(_metadata, cpus, 2, got, truth, NULL, NULL));
	for (i = 0; i < 2; i++) {
		EXPECT_GT(truth[i], 0);
		EXPECT_LE(got[i], truth[i] * 1.05);
		EXPECT_GE(got[i], truth[i] * 0.95);
	}
}

/*
 * (5) Static power on a busy package: where the cores have energy
 * counters, vmrapl measures the package's power less its cores' while it
 * is busy (vmrapl_pkg_static.core_static_uw), which in the model is its
 * idle floor plus its uncore; it must come within 10 % of what the model
 * drew as those over the last 3 s, about the fit's window (its own
 * record, not rapl-idle-mw + rapl-uncore-mw: the model charges uncore
 * for the host CPU time of the package's busiest vCPU thread, which
 * gets less than the whole tick when the machine running the rig is
 * loaded, and 10.5 W against the nominal 12 W was seen once).  The
 * package is kept busy (one CPU always spins, so it is never all idle
 * and the idle-run learning has nothing to learn from) while its second
 * CPU spins on and off every 100 ms.  Package 1, whose cores draw 12 W
 * and 6 W, is used where the rig has it: there even the time split
 * would be wrong, and the estimate must not care.
 *
 * The online linear fit of the same blocks is logged beside it: the model
 * charges a core by the host CPU time of its vCPU thread, and the
 * machine running the rig has two cores, so two busy vCPUs (with QEMU's
 * own threads) get less than a core each; the power per busy CPU falls
 * as the load grows, and the line's intercept lands about 3 W high
 * (15.06 W for 12 W was measured).  That fit is why this estimate exists.
 *
 * The static power in use is neither: the other package idles, learns
 * its floor from its all-idle time, and offers it to the busy one
 * (origin VMRAPL_ORIGIN_HOST), which must use it: within 2 % of what the
 * other package reports as its idle estimate, read 150 ms before and at
 * the end, since the busy package's timer hands it over every 100 ms
 * and it moves when the idle package completes a sum, by the sum's share
 * of the last 1.6 s of idle time (a quiet package's sums are single idle
 * epochs of up to a second, so a step can be a third of the difference;
 * until December 4 it was a 16th, and one read was compared).  The floor
 * so learned is the other package's power with no task running, which
 * the model draws as its floor plus whatever its emulated cores spend in
 * the idle task (interrupts, page poisoning; 10.10 W was read for the
 * 8 W floor, December 3).  It must be at least 90 % of the model's floor,
 * and at most what the package drew, task or not, taken through the same
 * running mean: the model's power of that package over each 100 ms since
 * the module was loaded, the n-th moving it by 1/n of the difference, up
 * to a 16th; 20 % above that, plus its largest step after the 16th.
 * That package's 100 ms powers range over 8 to 14 W on this rig (the
 * idle vCPUs' interrupts cost host CPU time, more or less as the
 * machine is loaded), so its mean over the last 3 s is no bound for a
 * mean whose weight lies on the last 1.6 s: 105 % of it failed once
 * (10.51 W against 9.54 W).  Nor is the replica exact: the module learns
 * from the package's idle epochs only, and a quiet package has few (5
 * of 27 closes in 3 s), each between two wakes, each one sum of its own
 * length (weighed by it), where the replica takes every 100 ms of the
 * clock, busy or not.  Fifteen runs of
 * December 3-4 read -16 % to +9.5 % against it.  What the bound is for:
 * an estimate that took busy time's power in (that package's cores draw
 * 12 W each, and its uncore 4 W while one is busy) or the busy
 * package's reads well above 13 W.
 */
#define SBP_SAMPLES	60
#define SBP_SAMPLE_MS	100

static void *spin_toggle(void *arg)
{
	vr_pin_self((int)(long)arg);
	while (!atomic_load(&vr_spin_stopped)) {
		uint64_t end = vr_now_ns() + 100 * 1000000ull;

		while (vr_now_ns() < end && !atomic_load(&vr_spin_stopped))
			;
		vr_sleep_ms(100);
	}
	return NULL;
}

TEST(static_busy_package)
{
	struct vmrapl_pkg_stats *ps = NULL, *ps0 = NULL, *psa = NULL;
	struct vmrapl_pkg_static *st = NULL, *st0 = NULL, *sta = NULL;
	int cpus[2] = { -1, -1 }, i, k = 0, pkg, fd, ret, npkgs = 0;
	int npkgs0 = 0, npkgsa = 0;
	struct vmrapl_info info;
	struct truth t, t0, t1;
	double core, want, nominal, floor, used, other_floor, other_mean;
	double other_before, lo, hi;
	double other_busy, tick_ms, run_mean = 0, pw, pw_min = 1e9, pw_max = 0;
	double step, max_step = 0;
	static struct truth ts[SBP_SAMPLES + 1];
	int other, n;
	pthread_t on, tog;

	if (read_truth(&t))
		SKIP(return, "no fw_cfg truth");
	pkg = t.core_pkg[t.ncores - 1];
	for (i = 0; i < t.ncores && k < 2; i++)
		if (t.core_pkg[i] == pkg)
			cpus[k++] = i;
	ASSERT_EQ(2, k);
	other = !pkg;		/* the rig has two packages */
	/* Our own reads of the truth stay off the idle package. */
	vr_pin_self(cpus[1]);
	ASSERT_EQ(0, vr_reload("source=auto"));
	fd = vr_open_dev();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, VMRAPL_GET_INFO, &info));
	ASSERT_TRUE(info.features & VMRAPL_INFO_F_PERCORE);
	ASSERT_TRUE(info.features & VMRAPL_INFO_F_STATIC_CORE);
	ASSERT_TRUE(info.features & VMRAPL_INFO_F_STATIC_HOST);

	atomic_store(&vr_spin_stopped, 0);
	ASSERT_EQ(0, pthread_create(&on, NULL, vr_spin,
				    (void *)(long)cpus[0]));
	ASSERT_EQ(0, pthread_create(&tog, NULL, spin_toggle,
				    (void *)(long)cpus[1]));
	/*
	 * The fit's ring: 128 blocks of 20 ms of busy epochs, about the last
	 * 2.6 s of the 6; the model's truth over the last 3 s, and the idle
	 * package's every 100 ms since the module was loaded.
	 */
	ret = read_truth(&ts[0]);
	for (n = 1; !ret && n <= SBP_SAMPLES; n++) {
		vr_sleep_ms(SBP_SAMPLE_MS);
		ret = read_truth(&ts[n]);
		if (!ret && n == SBP_SAMPLES / 2)
			npkgs0 = vmrapl_host_pkg_static(fd, &ps0, &st0);
	}
	/*
	 * The busy package's timer hands it the idle one's estimate every
	 * 100 ms; that estimate moves when a sum completes, a quiet
	 * package's one idle epoch of 100 ms or more.  Read it 150 ms
	 * apart: the value handed at the last timer is one of the two.
	 */
	if (!ret) {
		npkgsa = vmrapl_host_pkg_static(fd, &psa, &sta);
		vr_sleep_ms(150);
		npkgs = vmrapl_host_pkg_static(fd, &ps, &st);
	}
	atomic_store(&vr_spin_stopped, 1);
	pthread_join(on, NULL);
	pthread_join(tog, NULL);
	close(fd);
	ASSERT_EQ(0, ret);
	ASSERT_EQ(2, npkgs0);
	ASSERT_EQ(2, npkgsa);
	ASSERT_EQ(2, npkgs);
	ASSERT_TRUE(st0 && sta && st);
	t0 = ts[SBP_SAMPLES / 2];
	t1 = ts[SBP_SAMPLES];
	ASSERT_GT(t1.time_ns, t0.time_ns);
	/*
	 * What the idle package's estimate should read: its power over each
	 * 100 ms, run through the same mean (the n-th moving it by 1/n of
	 * the difference, up to a 16th: 1.6 s).  It idles (its busy CPU-ns
	 * are logged), so its 100 ms of idle time are about 100 ms of the
	 * clock.  Its largest step is taken once the mean holds 1.6 s.
	 */
	for (n = 1; n <= SBP_SAMPLES; n++) {
		ASSERT_GT(ts[n].time_ns, ts[n - 1].time_ns);
		pw = (double)(ts[n].pkg_pj[other] - ts[n - 1].pkg_pj[other]) /
		     (ts[n].time_ns - ts[n - 1].time_ns) / 1e3;
		step = (pw - run_mean) / (n < 16 ? n : 16);
		run_mean += step;
		if (n > 16 && fabs(step) > max_step)
			max_step = fabs(step);
		pw_min = pw < pw_min ? pw : pw_min;
		pw_max = pw > pw_max ? pw : pw_max;
	}

	core = st[pkg].core_static_uw / 1e6;
	/* pJ per ns is mW */
	want = (double)(t1.idle_pj[pkg] - t0.idle_pj[pkg] +
			t1.uncore_pj[pkg] - t0.uncore_pj[pkg]) /
	       (t1.time_ns - t0.time_ns) / 1e3;
	nominal = (t.idle_mw + t.uncore_mw) / 1e3;
	floor = (double)(t1.idle_pj[pkg] - t0.idle_pj[pkg]) /
		(t1.time_ns - t0.time_ns) / 1e3;
	used = ps[pkg].p_static_uw / 1e6;
	other_floor = st[other].idle_static_uw / 1e6;
	other_before = sta[other].idle_static_uw / 1e6;
	lo = other_floor < other_before ? other_floor : other_before;
	hi = other_floor > other_before ? other_floor : other_before;
	other_mean = (double)(t1.pkg_pj[other] - t0.pkg_pj[other]) /
		     (t1.time_ns - t0.time_ns) / 1e3;
	TH_LOG("package %d, CPUs %d (%.1f W) and %d (%.1f W): package less cores %.2f W over %u blocks; the model's idle floor + uncore over the last 3 s %.2f W (%+.1f %%; nominal %.2f W); the linear fit %.2f +- %.2f W, %.2f W per busy CPU, %u blocks; P_static in use %.2f W (%s)",
	       pkg, cpus[0], t.core_mw[cpus[0]] / 1e3, cpus[1],
	       t.core_mw[cpus[1]] / 1e3, core, st[pkg].core_blocks, want,
	       want ? 100 * (core - want) / want : 0, nominal,
	       st[pkg].fit_static_uw / 1e6, st[pkg].fit_static_sd_uw / 1e6,
	       st[pkg].fit_dyn_uw / 1e6, st[pkg].fit_blocks,
	       ps[pkg].p_static_uw / 1e6,
	       st[pkg].origin == VMRAPL_ORIGIN_IDLE ? "idle runs" :
	       st[pkg].origin == VMRAPL_ORIGIN_CORE ? "package less cores" :
	       st[pkg].origin == VMRAPL_ORIGIN_FIT ? "fit" :
	       st[pkg].origin == VMRAPL_ORIGIN_HOST ? "the other package's floor" :
	       "other");
	other_busy = (double)(ps[other].busy_ns - ps0[other].busy_ns) /
		     (t1.time_ns - t0.time_ns);
	tick_ms = t1.ticks > t0.ticks ?
		  (t1.time_ns - t0.time_ns) / 1e6 / (t1.ticks - t0.ticks) : 0;
	TH_LOG("the model's floor there over the last 3 s %.2f W (nominal %.2f W): P_static in use %.2f W, %+.1f %%; package %d's idle estimate %.2f W (%.2f W 150 ms before, %.2f W 3 s before), its mean power %.2f W, its busy CPU-ns %.3f of the time; the model's tick %.3f ms on average",
	       floor, t.idle_mw / 1e3, used,
	       floor ? 100 * (used - floor) / floor : 0, other, other_floor,
	       other_before, st0[other].idle_static_uw / 1e6, other_mean,
	       other_busy, tick_ms);
	TH_LOG("package %d's power over %d x %d ms: %.2f to %.2f W, their running mean %.2f W (the estimate %+.1f %%), its largest step %.2f W",
	       other, SBP_SAMPLES, SBP_SAMPLE_MS, pw_min, pw_max, run_mean,
	       100 * (other_floor - run_mean) / run_mean, max_step);
	EXPECT_GE(st[pkg].core_blocks, 32);
	EXPECT_GT(want, 0.5 * nominal);
	EXPECT_LE(fabs(core - want), 0.10 * want);
	EXPECT_EQ(VMRAPL_ORIGIN_HOST, st[pkg].origin);
	EXPECT_GE(used, 0.98 * lo);
	EXPECT_LE(used, 1.02 * hi);
	EXPECT_GE(other_floor, 0.9 * t.idle_mw / 1e3);
	EXPECT_LE(other_floor, 1.2 * run_mean + max_step);
	free(ps);
	free(st);
	free(ps0);
	free(st0);
	free(psa);
	free(sta);
}

/*
 * (7) The counters' update interval, measured: when a package comes
 * online (here, at the module's load) vmrapl times its counters' steps
 * (kmod/engine_step.c; again 1, 2, 4, 8 and 16 s later while the PKG
 * counter's could not be measured) and reports each in GET_PKG_STATS
 * (update_pkg_ns, and update_core_ns: the measuring CPU's per-core
 * counter).  The rig's model updates every rapl-update-us (run.sh: 1.5
 * ms, not the 1 ms the module assumes until it has measured), its timer
 * never early and now and then late on a loaded machine: the interval
 * to find is rapl-update-us or more, widened by the measure's own spread
 * and 2 %, and at most the model's mean tick over a window around the
 * load widened by twice the spread and 5 % (the ticks of the measure's
 * own 32 ms ran 2.07 ms apart on average once, against 1.82 ms over the
 * 1.8 s window: a starved emulation is slower in some windows than
 * others; what this bound still catches is a multiple of the interval).
 * The lag correction must use it (debugfs's lag_ns: half the interval,
 * a little more with the spread).
 */
/* debugfs's "pkg P lag_ns L" of package @pkg (0: none). */
static unsigned long long debugfs_lag_ns(int pkg)
{
	FILE *f = fopen("/sys/kernel/debug/vmrapl/packages", "r");
	unsigned long long lag = 0, v;
	char line[1024];
	int p;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "pkg %d lag_ns %llu", &p, &v) == 2 &&
		    p == pkg)
			lag = v;
	fclose(f);
	return lag;
}

/*
 * A measured update interval @ns (spread @sd) against the model's: at
 * least its configured tick, at most its mean tick @tick over the test.
 * Under TCG the model's ticks run late when the host is busy, in bursts:
 * the window vmrapl timed can be slower than that mean.  The upper bound
 * is then the longest of the model's ticks while vmrapl timed them
 * (@tick_max: the truth's tick_max_ns, its last 100 to 200 ticks, read
 * every 100 ms from the load on), how late they ran: a median of steps
 * is no longer than the longest step.
 */
static bool interval_fits(const struct truth *t, double tick,
			  double tick_max, double ns, double sd)
{
	double lo = 0.98 * t->tick_ns - sd, hi = 1.05 * tick + 2.0 * sd;

	if (hi < tick_max)
		hi = tick_max;
	if (ns >= lo && ns <= hi)
		return true;
	fprintf(stderr, "# interval %.0f ns outside [%.0f, %.0f]\n", ns, lo, hi);
	return false;
}

/*
 * A fixture for TEST_F_TIMEOUT only: the module times a counter it could
 * not measure again 1, 2, 4, 8 and 16 s later (kmod/engine_step.c), 31 s
 * after its first try, past the harness's default 30 s.
 */
FIXTURE(step) {
	int unused;
};

FIXTURE_SETUP(step)
{
}

FIXTURE_TEARDOWN(step)
{
}

TEST_F_TIMEOUT(step, update_interval_measured, 75)
{
	unsigned long long lag;
	struct vmrapl_pkg_stats *ps = NULL;
	struct vmrapl_pkg_static *st = NULL;
	struct truth t0, t1, tt;
	double tick, tick_max = 0;
	int fd, n = 0, p, i;

	if (read_truth(&t0))
		SKIP(return, "no fw_cfg truth");
	ASSERT_EQ(0, vr_reload("source=auto"));
	fd = vr_open_dev();
	ASSERT_LE(0, fd);
	/*
	 * The timing runs after the load, and up to 31 s later (a try polls
	 * for tens of ms); the model's longest tick meanwhile is read every
	 * 100 ms, for at least 40 s.
	 */
	for (i = 0; i < 400; i++) {
		ASSERT_EQ(0, read_truth(&tt));
		if (tick_max < tt.tick_max_ns)
			tick_max = tt.tick_max_ns;
		free(ps);
		free(st);
		ps = NULL;
		st = NULL;
		n = vmrapl_host_pkg_static(fd, &ps, &st);
		ASSERT_LT(0, n);
		ASSERT_TRUE(st != NULL);
		for (p = 0; p < n; p++)
			if (!(st[p].update_flags & (1u << VMRAPL_DOM_PKG)))
				break;
		if (p == n)
			break;
		vr_sleep_ms(100);
	}
	close(fd);
	ASSERT_EQ(0, read_truth(&t1));
	if (tick_max < t1.tick_max_ns)
		tick_max = t1.tick_max_ns;
	ASSERT_GT(t1.ticks, t0.ticks);
	tick = (double)(t1.time_ns - t0.time_ns) / (t1.ticks - t0.ticks);
	TH_LOG("the model: rapl-update-us %.3f ms, its mean tick %.3f ms over %.1f s (longest %.3f ms), pc6 delay %.3f ms",
	       t1.tick_ns / 1e6, tick / 1e6, (t1.time_ns - t0.time_ns) / 1e9,
	       tick_max / 1e6, t1.pc6_delay_ns / 1e6);
	ASSERT_NE(0, t1.tick_ns) {
		TH_LOG("the truth has no tick_ns: QEMU without the project's patch 0010");
	}
	/* What the module said of its timings (the last tries'). */
	vr_kmsg_print("counter updates every", 4);
	vr_kmsg_print("update interval not measured", 8);
	for (p = 0; p < n; p++) {
		TH_LOG("package %d: flags %#x, pkg %.3f +- %.3f ms, core %.3f +- %.3f ms",
		       p, st[p].update_flags, st[p].update_pkg_ns / 1e6,
		       st[p].update_pkg_spread_ns / 1e6,
		       st[p].update_core_ns / 1e6,
		       st[p].update_core_spread_ns / 1e6);
		EXPECT_TRUE(st[p].update_flags & (1u << VMRAPL_DOM_PKG));
		EXPECT_TRUE(interval_fits(&t1, tick, tick_max,
					  st[p].update_pkg_ns,
					  st[p].update_pkg_spread_ns));
		/* The per-core counters move at the same tick. */
		EXPECT_TRUE(st[p].update_flags & (1u << VMRAPL_DOM_CORE));
		EXPECT_TRUE(interval_fits(&t1, tick, tick_max,
					  st[p].update_core_ns,
					  st[p].update_core_spread_ns));
		/* The lag: (m^2 + sd^2) / (2 m), at least half of m. */
		lag = debugfs_lag_ns(p);
		TH_LOG("package %d: lag_ns %llu", p, lag);
		EXPECT_GE(lag, st[p].update_pkg_ns / 2);
		EXPECT_LE(lag, st[p].update_pkg_ns * 0.6);
	}
	free(ps);
	free(st);
}

/*
 * (6) perf agrees: over the same window, perf stat's power/energy-pkg/
 * (Debian's linux-perf, which mkinitramfs.sh copies into the rapl
 * variant's initramfs only) counts what powercap counts, per package.
 *
 * perf stat -a starts with its counters disabled (-D -1) and takes
 * "enable" and "disable" on a control FIFO, answering "ack" once its
 * ioctls returned (the power PMU reads the register in them, on a CPU of
 * the package).  So: powercap read (outer), enable, ack, powercap read
 * (inner), 1 s, powercap read (inner), disable, ack, powercap read
 * (outer): perf's window lies inside the outer one and holds the inner
 * one, by causality.  All of them read the same package register, which
 * only grows (modulo its wrap, which both perf and vr_pc_delta() undo), so
 * inner <= perf <= outer holds exactly in register units, and only the
 * readers' own rounding remains:
 *
 * - powercap truncates each reading to a whole uJ, so each of its deltas
 *   is within 1 uJ of the exact one;
 * - perf counts in units of 2^-32 J (the event's .scale; the kernel
 *   shifts the register's 2^-16 J up) and scales to Joules exactly, but
 *   prints: -x prints "%.2f" Joules, a 10 mJ step; -j prints "%f", a
 *   1 uJ step, rounded: 0.5 uJ.  Hence -j.
 *
 * --per-socket gives one value per package, each from the one CPU of the
 * power PMU's cpumask in that package ("aggregate-number" 1), compared
 * with that package's own zone; -a alone prints the sum of both
 * packages, which would only be compared with the sum of two zones.
 * perf's sockets and powercap's package-N zones both number by
 * physical_package_id.  perf's value is scaled to powercap's slow unit
 * (PC_SCALE) like every other energy here.
 *
 * Taking the inner reads in perf's workload instead (perf stat -a -- sh
 * -c "cat energy_uj; sleep 1; cat energy_uj") brackets too, but then the
 * outer window also holds perf's own start and exit: under TCG it was
 * 2.2 to 2.8 times the inner one idle and 3.8 to 4.3 times with every
 * CPU busy, an upper bound too loose to catch perf counting twice.
 */
#define PERF_PREFIX	"/tmp/rapl-perf"
#define PERF_EVENT	"/sys/bus/event_source/devices/power/events/energy-pkg"

/* A fixture for TEST_F_TIMEOUT only: perf's start under TCG is slow. */
FIXTURE(perf) {
	int unused;
};

FIXTURE_SETUP(perf)
{
}

FIXTURE_TEARDOWN(perf)
{
}

TEST_F_TIMEOUT(perf, matches_powercap, 180)
{
	uint64_t o0[MAX_PKGS], o1[MAX_PKGS], i0[MAX_PKGS], i1[MAX_PKGS];
	uint64_t range[MAX_PKGS];
	char dir[MAX_PKGS][VR_PC_DIR], unit[32] = "";
	static const char *const event = "energy-pkg";
	struct vr_perf_val pp[MAX_PKGS];
	struct vr_perf_res res;
	struct vr_perf r;
	double scale = 0;
	int p, n = vr_spin_cpus(), round, rc;
	FILE *f;

	if (access(VR_PERF, X_OK))
		SKIP(return, "no %s in this initramfs (mkinitramfs.sh adds it in the rapl variant)",
		     VR_PERF);
	for (p = 0; p < MAX_PKGS; p++)
		ASSERT_EQ(0, vr_pc_zone(p, NULL, dir[p], &range[p]));
	/* What perf multiplies the count by, and the unit it prints. */
	f = fopen(PERF_EVENT ".scale", "r");
	ASSERT_NE(NULL, f);
	EXPECT_EQ(1, fscanf(f, "%lf", &scale));
	fclose(f);
	f = fopen(PERF_EVENT ".unit", "r");
	ASSERT_NE(NULL, f);
	EXPECT_EQ(1, fscanf(f, "%31s", unit));
	fclose(f);
	TH_LOG("energy-pkg: scale %.10g (2^-32 = %.10g), unit %s",
	       scale, 1.0 / 4294967296.0, unit);
	EXPECT_TRUE(scale == 1.0 / 4294967296.0);
	EXPECT_STREQ("Joules", unit);

	/* Once idle-ish, once with every CPU busy: one perf run each. */
	for (round = 0; round < 2; round++) {
		rc = vr_perf_measure(&r, PERF_PREFIX, "power/energy-pkg/",
				     round ? n : 0, dir, MAX_PKGS, 1000,
				     o0, i0, i1, o1, &res);
		if (rc)
			vr_perf_log(_metadata, &r, &res);
		ASSERT_EQ(0, rc);
		ASSERT_EQ(0, vr_perf_parse(r.out, &event, 1, pp));
		for (p = 0; p < MAX_PKGS; p++) {
			double inner = vr_pc_delta(i0[p], i1[p], range[p]);
			double outer = vr_pc_delta(o0[p], o1[p], range[p]);
			double perf;

			ASSERT_TRUE(pp[p].seen) {
				TH_LOG("no energy-pkg value for socket S%d", p);
				vr_log_file(_metadata, r.out);
			}
			perf = pp[p].joules * 1e6 * PC_SCALE;
			TH_LOG("round %d pkg %d: powercap inner %.0f uJ <= perf %.1f uJ (%.6f %s, in powercap's unit) <= powercap outer %.0f uJ; perf-inner %.0f uJ, outer-perf %.0f uJ",
			       round, p, inner, perf, pp[p].joules, pp[p].unit,
			       outer, perf - inner, outer - perf);
			EXPECT_STREQ("Joules", pp[p].unit);
			/* one event per package, counting all the time */
			EXPECT_EQ(1, pp[p].nr);
			EXPECT_TRUE(pp[p].running == 100.0);
			EXPECT_GT(inner, 0);
			/* powercap's truncation (1 uJ), perf's printing (0.5 uJ) */
			EXPECT_GE(perf, inner - 1.5);
			EXPECT_LE(perf, outer + 1.5);
		}
	}
}

TEST_HARNESS_MAIN
