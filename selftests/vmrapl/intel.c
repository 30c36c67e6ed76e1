// SPDX-License-Identifier: GPL-2.0
/*
 * The intel variant of the rig (selftests/rig/run.sh --variant intel): the
 * rig's QEMU serves Intel's RAPL registers (MSR_RAPL_POWER_UNIT, PKG,
 * PP0 and DRAM energy status, PKG power info and limit) from its power
 * model on an Ice Lake server CPU model, so vmrapl's Intel source runs
 * against registers that the test kernel's powercap driver
 * (intel_rapl_msr) and perf's power PMU also read.  TCG has no VMX: no
 * KVM, no VMs, only the host's books.  The model's truth comes from the
 * fw_cfg file opt/org.vmrapl/rapl (Documentation/testing.rst).
 *
 * Every comparison brackets, as rapl.c's do: each reading of one side
 * is taken between two readings of the other.  Energies are compared in
 * powercap's microjoules: powercap keeps each domain's unit as a whole
 * number of nanojoules (floor(1e9 / 2^ESU) for PKG and PP0, and 15300 nJ
 * for the fixed DRAM unit of the server models, which is 2^-16 J =
 * 15258.79 nJ rounded), so its energy_uj is the register's count times
 * that unit, not the exact joules.  The test takes the unit from the
 * zone's max_energy_range_uj (2^32 - 1 counts), and the register's own
 * unit from the model's truth.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "libvmrapl-host.h"
#include "vr_kvm.h"
#include "vr_perf.h"
#include "vr_powercap.h"
#include "vr_truth.h"

#define NDOM		3
#define EU_SHIFT	24	/* vmrapl's books: 2^-24 J */

#define MSR_RAPL_POWER_UNIT	0x606
#define MSR_PKG_POWER_LIMIT	0x610
#define MSR_PKG_ENERGY_STATUS	0x611
#define MSR_PKG_POWER_INFO	0x614
#define MSR_DRAM_ENERGY_STATUS	0x619
#define MSR_PP0_ENERGY_STATUS	0x639

/* Per domain: vmrapl's name, powercap's zone, the register, perf's event. */
static const char *const dom_name[NDOM] = { "pkg", "core", "dram" };
static const char *const pc_name[NDOM] = { "package", "core", "dram" };
static const uint32_t dom_msr[NDOM] = {
	MSR_PKG_ENERGY_STATUS, MSR_PP0_ENERGY_STATUS, MSR_DRAM_ENERGY_STATUS,
};
static const char *const perf_event[NDOM] = {
	"energy-pkg", "energy-cores", "energy-ram",
};

/* The register's unit, 1/2^unit J, from the model's truth. */
static unsigned int dom_unit(const struct truth *t, int d)
{
	return d == 2 ? t->dram_esu : t->esu;
}

/* The model's energy of domain @d of package @p so far, in pJ. */
static uint64_t truth_pj(const struct truth *t, int p, int d)
{
	return d == 0 ? t->pkg_pj[p] : d == 1 ? t->pp0_pj[p] : t->dram_pj[p];
}

/* The model's most power for domain @d of package @p, in uW. */
static uint64_t dom_max_uw(const struct truth *t, int p, int d)
{
	uint64_t mw = d == 0 ? t->idle_mw + t->uncore_mw :
		      d == 2 ? t->dram_idle_mw : 0;
	int i;

	for (i = 0; i < t->ncores; i++)
		if (t->core_pkg[i] == p)
			mw += d == 2 ? t->dram_mw : t->core_mw[i];
	return mw * 1000;
}

/* The powercap zone of domain @d of package @pkg (vr_pc_zone()). */
static int pc_zone(int pkg, int d, char *dir, uint64_t *range)
{
	return vr_pc_zone(pkg, d ? pc_name[d] : NULL, dir, range);
}

/*
 * powercap's unit for a zone, in nJ: max_energy_range_uj is 2^32 - 1
 * counts of it, truncated to a uJ.
 */
static double pc_unit_nj(uint64_t range)
{
	return round(range * 1000.0 / 4294967295.0);
}

/* vmrapl's unit for domain @dom of package @pkg (debugfs), or -1. */
static int books_esu(int pkg, const char *dom)
{
	char line[1024], name[16], *s;
	int p, esu = -1;
	FILE *f = fopen("/sys/kernel/debug/vmrapl/packages", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "pkg %d dom %15s ", &p, name) == 2 &&
		    p == pkg && !strcmp(name, dom)) {
			s = strstr(line, " esu ");
			if (s)
				esu = atoi(s + 5);
		}
	fclose(f);
	return esu;
}

static void skip_unless_intel(struct __test_metadata *_metadata,
			      struct truth *t)
{
	ASSERT_EQ(0, read_truth(t)) {
		TH_LOG("no fw_cfg truth %s: not the rig's intel variant", TRUTH);
	}
	ASSERT_TRUE(t->intel) {
		TH_LOG("the model serves AMD's registers: not the intel variant");
	}
	ASSERT_EQ(MAX_PKGS, t->npkgs);
}

/*
 * (1) A wrap of every counter loses nothing.  The rig starts each counter
 * a few hundred joules of its own energy below 2^32 of its units
 * (run.sh: x-rapl-start, x-rapl-start-pp0, x-rapl-start-dram), and /init
 * runs this program first, and this test first in it: with every CPU busy,
 * each of the six counters (PKG, PP0, DRAM of both packages) wraps within
 * the window.  Across it, vmrapl's books advance by the counter's delta
 * modulo 2^32 in the counter's own unit (bracketed by two raw MSR reads
 * at each end, each end allowed the 1 ms epoch and the longest recent
 * model tick its last close may lag the read, at the window's mean
 * power), and lose nothing.
 */
/*
 * Every test is one fixture's, so that they run in this file's order
 * (the harness runs the global TEST()s before other fixtures' tests): the
 * wrap test first, msr_writes last.
 */
FIXTURE(intel) {
	int unused;
};

FIXTURE_SETUP(intel)
{
}

FIXTURE_TEARDOWN(intel)
{
}

/*
 * Each domain's books read between two reads of its register, and each
 * package's wrap count (its pkg books), SCHED_FIFO.  0 or -errno.
 */
static int wrap_snap(const int *fd, uint32_t ra[MAX_PKGS][NDOM],
		     struct vr_books b[MAX_PKGS][NDOM],
		     uint32_t rc[MAX_PKGS][NDOM], uint64_t *wraps)
{
	struct vr_books pb;
	int p, d, ret = 0;

	vr_fifo(true);
	for (p = 0; p < MAX_PKGS; p++) {
		for (d = 0; d < NDOM; d++) {
			ra[p][d] = vr_rdmsr32(fd[p], dom_msr[d]);
			ret = vr_read_books(p, dom_name[d], &b[p][d]);
			rc[p][d] = vr_rdmsr32(fd[p], dom_msr[d]);
			if (ret)
				goto out_fifo;
		}
		ret = vr_read_books(p, "pkg", &pb);
		if (ret)
			goto out_fifo;
		wraps[p] = pb.wraps;
	}
out_fifo:
	vr_fifo(false);
	return ret;
}

TEST_F_TIMEOUT(intel, wrap_every_counter, 300)
{
	struct vr_books b0[MAX_PKGS][NDOM], b1[MAX_PKGS][NDOM];
	uint32_t r0a[MAX_PKGS][NDOM], r0c[MAX_PKGS][NDOM];
	uint32_t r1a[MAX_PKGS][NDOM], r1c[MAX_PKGS][NDOM];
	uint32_t prev[MAX_PKGS][NDOM], r;
	int wrapped[MAX_PKGS][NDOM] = { { 0 } }, nwrapped = 0;
	uint64_t wraps0[MAX_PKGS], wraps1[MAX_PKGS], t0, step_ns, win_ns;
	int fd[MAX_PKGS], p, d, n = vr_spin_cpus(), ret;
	struct truth t;
	pthread_t th[8];

	skip_unless_intel(_metadata, &t);
	for (p = 0; p < MAX_PKGS; p++) {
		fd[p] = vr_msr_open(p, O_RDONLY);
		ASSERT_LE(0, fd[p]) {
			TH_LOG("no /dev/cpu/N/msr for package %d", p);
		}
		for (d = 0; d < NDOM; d++) {
			unsigned int u = dom_unit(&t, d);
			uint64_t start = d == 0 ? t.start_pj :
					 d == 1 ? t.pp0_start_pj : t.dram_start_pj;
			double units = (truth_pj(&t, p, d) + (double)start) *
				       pow(2, u) / 1e12;

			ASSERT_LT(units, 4294967296.0) {
				TH_LOG("package %d's %s counter wrapped before this test (%.0f J after boot): raise RIG_INTEL_WRAP*_J",
				       p, dom_name[d], truth_pj(&t, p, d) / 1e12);
			}
			TH_LOG("package %d's %s counter wraps in %.0f J",
			       p, dom_name[d], (4294967296.0 - units) / pow(2, u));
		}
	}
	ASSERT_EQ(0, vr_reload("source=auto"));
	ASSERT_EQ(0, vr_spin_start(th, n));
	ASSERT_EQ(0, wrap_snap(fd, r0a, b0, r0c, wraps0));
	memcpy(prev, r0c, sizeof(prev));
	t0 = vr_now_ns();
	while (nwrapped < MAX_PKGS * NDOM &&
	       vr_now_ns() - t0 < 240ull * 1000000000) {
		vr_sleep_ms(200);
		for (p = 0; p < MAX_PKGS; p++)
			for (d = 0; d < NDOM; d++) {
				r = vr_rdmsr32(fd[p], dom_msr[d]);
				if (r < prev[p][d] && !wrapped[p][d]) {
					wrapped[p][d] = 1;
					nwrapped++;
					TH_LOG("package %d's %s counter wrapped after %.1f s",
					       p, dom_name[d],
					       (vr_now_ns() - t0) / 1e9);
				}
				prev[p][d] = r;
			}
	}
	vr_sleep_ms(300);
	ret = wrap_snap(fd, r1a, b1, r1c, wraps1);
	win_ns = vr_now_ns() - t0;
	vr_spin_stop(th, n);
	for (p = 0; p < MAX_PKGS; p++)
		close(fd[p]);
	ASSERT_EQ(0, ret);
	step_ns = t.tick_max_ns > t.tick_ns ? t.tick_max_ns : t.tick_ns;
	if (!step_ns)
		step_ns = 1000000;
	for (p = 0; p < MAX_PKGS; p++) {
		for (d = 0; d < NDOM; d++) {
			unsigned int u = dom_unit(&t, d);
			uint64_t lo = (uint32_t)(r1a[p][d] - r0c[p][d]);
			uint64_t hi = (uint32_t)(r1c[p][d] - r0a[p][d]);
			uint64_t de = b1[p][d].sampled - b0[p][d].sampled;
			uint64_t got = de >> (EU_SHIFT - u);
			uint64_t slack = (uint64_t)((double)lo * (1e6 + step_ns) / win_ns);

			lo = lo > slack ? lo - slack : 0;
			hi += slack;
			TH_LOG("package %d %s: counter %u..%u -> %u..%u, books %llu units of 2^-%u J, counter %llu..%llu units, wrapped %d, lost %llu -> %llu",
			       p, dom_name[d], r0a[p][d], r0c[p][d], r1a[p][d],
			       r1c[p][d], (unsigned long long)got, u,
			       (unsigned long long)lo, (unsigned long long)hi,
			       wrapped[p][d],
			       (unsigned long long)b0[p][d].lost,
			       (unsigned long long)b1[p][d].lost);
			EXPECT_EQ(1, wrapped[p][d]) {
				TH_LOG("no wrap within 240 s: were the x-rapl-start* set (run.sh)?");
			}
			/* whole counts of the counter's unit */
			EXPECT_EQ(0, de & ((1ull << (EU_SHIFT - u)) - 1));
			EXPECT_GE(got, lo);
			EXPECT_LE(got, hi);
			EXPECT_EQ(b0[p][d].lost, b1[p][d].lost);
			EXPECT_TRUE(vr_books_conserve(&b1[p][d]));
		}
		/* vmrapl counts the PKG counter's wraps */
		EXPECT_EQ((uint64_t)wrapped[p][0], wraps1[p] - wraps0[p]);
	}
}

/*
 * (2) vmrapl picks the Intel source by itself, with the three domains the
 * model serves and the units it read: the ESU of MSR_RAPL_POWER_UNIT for
 * PKG and PP0, and for DRAM the fixed 2^-16 J of the server model, as the
 * model's truth says (its dram_esu) and as the kernel's own readers took
 * it: powercap's DRAM zone counts in 15.3 uJ, perf's energy-ram event is
 * there.
 */
TEST_F(intel, source)
{
	uint32_t want = (1u << VMRAPL_DOM_PKG) | (1u << VMRAPL_DOM_CORE) |
			(1u << VMRAPL_DOM_DRAM);
	char dir[VR_PC_DIR], path[400];
	struct vmrapl_info info;
	struct truth t;
	int p, d, fd;
	double want_nj;
	uint64_t v;

	skip_unless_intel(_metadata, &t);
	ASSERT_EQ(0, vr_reload("source=auto"));
	ASSERT_EQ(0, vr_get_info(&info));
	EXPECT_EQ(VMRAPL_SOURCE_INTEL, info.source);
	EXPECT_EQ(want, info.domains);
	EXPECT_EQ(t.esu, info.host_esu);
	EXPECT_EQ(MAX_PKGS, info.nr_packages);
	TH_LOG("model: esu %u, dram_esu %u; vmrapl: source %u, domains 0x%x, esu %u",
	       t.esu, t.dram_esu, info.source, info.domains, info.host_esu);
	/* Ice Lake-X: the DRAM counter in 2^-16 J while the ESU is 14 */
	EXPECT_EQ(14, t.esu);
	EXPECT_EQ(16, t.dram_esu);
	for (p = 0; p < MAX_PKGS; p++) {
		fd = vr_msr_open(p, O_RDONLY);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, vr_rdmsr(fd, MSR_RAPL_POWER_UNIT, &v));
		close(fd);
		EXPECT_EQ(t.esu, (v >> 8) & 0x1f);
		for (d = 0; d < NDOM; d++) {
			EXPECT_EQ((int)dom_unit(&t, d), books_esu(p, dom_name[d])) {
				TH_LOG("package %d: vmrapl reads %s in 2^-%d J, the model counts in 2^-%u J",
				       p, dom_name[d], books_esu(p, dom_name[d]),
				       dom_unit(&t, d));
			}
			ASSERT_EQ(0, pc_zone(p, d, dir, NULL)) {
				TH_LOG("no powercap zone %s of package-%d: intel_rapl_msr did not bind it",
				       pc_name[d], p);
			}
			TH_LOG("package %d %s: powercap %s, unit %.0f nJ",
			       p, dom_name[d], dir,
			       pc_unit_nj(vr_read_u64(dir, "max_energy_range_uj")));
			/* the driver's own constant for the fixed DRAM unit */
			want_nj = d == 2 ? 15300 : floor(1e9 / (1 << t.esu));
			EXPECT_EQ(want_nj, pc_unit_nj(vr_read_u64(dir, "max_energy_range_uj")));
		}
	}
	for (d = 0; d < NDOM; d++) {
		snprintf(path, sizeof(path),
			 "/sys/bus/event_source/devices/power/events/%s",
			 perf_event[d]);
		EXPECT_EQ(0, access(path, R_OK)) {
			TH_LOG("perf's power PMU has no %s event", perf_event[d]);
		}
	}
}

/* vmrapl's books of zone @i, [p][d] (vr_pc_bracket()'s @mid). */
static int books_mid(int i, void *out)
{
	return vr_read_books(i / NDOM, dom_name[i % NDOM], out);
}

/*
 * (3) The kernel's powercap driver agrees, per package and domain: over
 * the same window, once with the CPUs idle and once with every CPU
 * spinning, vmrapl's books ("sampled", exact, 2^-24 J) advance by what
 * the zone's energy_uj advances, in the zone's unit.  As in rapl.c's
 * powercap_matches_sampled: each books reading lies between two powercap
 * readings and its last sample is at most one epoch plus the model's
 * longest recent tick old, at the domain's most power; plus a counter
 * unit per end and powercap's rounding to a uJ.
 */
TEST_F(intel, powercap_matches_books)
{
	struct vr_books b0[MAX_PKGS][NDOM], b1[MAX_PKGS][NDOM];
	uint64_t a0[MAX_PKGS][NDOM], c0[MAX_PKGS][NDOM];
	uint64_t a1[MAX_PKGS][NDOM], c1[MAX_PKGS][NDOM];
	uint64_t w0[MAX_PKGS][NDOM], w1[MAX_PKGS][NDOM];
	uint64_t range[MAX_PKGS][NDOM];
	char dir[MAX_PKGS][NDOM][VR_PC_DIR];
	struct vmrapl_info info;
	struct truth t, te0, te1;
	pthread_t th[8];
	int p, d, n = vr_spin_cpus(), round, ret;
	double worst = 0;

	skip_unless_intel(_metadata, &t);
	ASSERT_EQ(0, vr_reload("source=auto"));
	ASSERT_EQ(0, vr_get_info(&info));
	for (p = 0; p < MAX_PKGS; p++)
		for (d = 0; d < NDOM; d++)
			ASSERT_EQ(0, pc_zone(p, d, dir[p][d], &range[p][d]));
	for (round = 0; round < 2; round++) {
		if (round)
			ASSERT_EQ(0, vr_spin_start(th, n));
		vr_pc_bracket_all(MAX_PKGS * NDOM, &dir[0][0], &range[0][0],
				  books_mid, b0, sizeof(b0[0][0]), &a0[0][0],
				  &c0[0][0], &w0[0][0]);
		ASSERT_EQ(0, read_truth(&te0));
		vr_sleep_ms(2000);
		vr_pc_bracket_all(MAX_PKGS * NDOM, &dir[0][0], &range[0][0],
				  books_mid, b1, sizeof(b1[0][0]), &a1[0][0],
				  &c1[0][0], &w1[0][0]);
		ret = read_truth(&te1);
		if (round)
			vr_spin_stop(th, n);
		ASSERT_EQ(0, ret);
		for (p = 0; p < MAX_PKGS; p++) {
			for (d = 0; d < NDOM; d++) {
				double unit_nj = pc_unit_nj(range[p][d]);
				double u_uj = 1e6 / pow(2, dom_unit(&t, d));
				/* books in counts of the register, in powercap's uJ */
				double s = (b1[p][d].sampled - b0[p][d].sampled) /
					   pow(2, EU_SHIFT) * 1e6 / u_uj * unit_nj / 1e3;
				double lo = vr_pc_delta(c0[p][d], a1[p][d], range[p][d]);
				double hi = vr_pc_delta(a0[p][d], c1[p][d], range[p][d]);
				double uj_per_ns = dom_max_uw(&t, p, d) / 1e9;
				double epoch_ns = info.sample_period_us * 1e3;
				double miss0 = uj_per_ns * (epoch_ns + te0.tick_max_ns);
				double miss1 = uj_per_ns * (epoch_ns + te1.tick_max_ns);
				double quant = 2 * unit_nj / 1e3 + 2;
				double mid = (lo + hi) / 2;

				ASSERT_NE(UINT64_MAX, w0[p][d]);
				ASSERT_NE(UINT64_MAX, w1[p][d]);
				if (mid > 0 && fabs(s - mid) / mid > worst)
					worst = fabs(s - mid) / mid;
				TH_LOG("round %d pkg %d %s: books %.0f uJ (in powercap's unit), powercap %.0f..%.0f uJ (brackets %llu, %llu uJ), slack %.0f/%.0f/%.0f uJ, %+.4f %% of the bracket's middle",
				       round, p, dom_name[d], s, lo, hi,
				       (unsigned long long)w0[p][d],
				       (unsigned long long)w1[p][d], miss0,
				       miss1, quant,
				       mid > 0 ? 100 * (s - mid) / mid : 0.0);
				EXPECT_GT(s, 0);
				EXPECT_GE(s, lo - miss1 - quant);
				EXPECT_LE(s, hi + miss0 + quant);
				EXPECT_EQ(b0[p][d].lost, b1[p][d].lost);
				EXPECT_TRUE(vr_books_conserve(&b1[p][d]));
			}
		}
	}
	TH_LOG("books against powercap: at most %.4f %% off the bracket's middle", 100 * worst);
}

/*
 * (4) The registers are the model's: over a window with every CPU busy,
 * each zone advances by the model's energy for the domain, in the
 * zone's unit, within a counter unit per end and powercap's uJ rounding
 * (the truth is bracketed by two powercap reads).  For DRAM this is the
 * fixed unit: the truth's joules at 2^-16 J per count, read by the
 * driver at 15.3 uJ per count.
 */
TEST_F(intel, counters_match_truth)
{
	struct truth t, ta[MAX_PKGS][NDOM], tb[MAX_PKGS][NDOM];
	uint64_t a0[MAX_PKGS][NDOM], c0[MAX_PKGS][NDOM];
	uint64_t a1[MAX_PKGS][NDOM], c1[MAX_PKGS][NDOM];
	uint64_t range[MAX_PKGS][NDOM];
	char dir[MAX_PKGS][NDOM][VR_PC_DIR];
	pthread_t th[8];
	int p, d, i, n = vr_spin_cpus();

	skip_unless_intel(_metadata, &t);
	for (p = 0; p < MAX_PKGS; p++)
		for (d = 0; d < NDOM; d++)
			ASSERT_EQ(0, pc_zone(p, d, dir[p][d], &range[p][d]));
	ASSERT_EQ(0, vr_spin_start(th, n));
	for (i = 0; i < 2; i++) {
		vr_fifo(true);
		for (p = 0; p < MAX_PKGS; p++)
			for (d = 0; d < NDOM; d++) {
				struct truth *tt = i ? &tb[p][d] : &ta[p][d];
				uint64_t *a = i ? &a1[p][d] : &a0[p][d];
				uint64_t *c = i ? &c1[p][d] : &c0[p][d];

				*a = vr_read_u64(dir[p][d], "energy_uj");
				EXPECT_EQ(0, read_truth(tt));
				*c = vr_read_u64(dir[p][d], "energy_uj");
			}
		vr_fifo(false);
		if (!i)
			vr_sleep_ms(2000);
	}
	vr_spin_stop(th, n);
	for (p = 0; p < MAX_PKGS; p++)
		for (d = 0; d < NDOM; d++) {
			double unit_nj = pc_unit_nj(range[p][d]);
			double per_pj = unit_nj * 1e3 / (1e12 / pow(2, dom_unit(&t, d)));
			double e = (truth_pj(&tb[p][d], p, d) - truth_pj(&ta[p][d], p, d)) /
				   1e6 * per_pj;
			double lo = vr_pc_delta(c0[p][d], a1[p][d], range[p][d]);
			double hi = vr_pc_delta(a0[p][d], c1[p][d], range[p][d]);

			TH_LOG("pkg %d %s: model %.0f uJ (in powercap's unit, %.5f of a true uJ), powercap %.0f..%.0f uJ",
			       p, dom_name[d], e, per_pj, lo, hi);
			EXPECT_GT(e, 0);
			EXPECT_GE(e, lo - 2 * unit_nj / 1e3 - 2);
			EXPECT_LE(e, hi + 2 * unit_nj / 1e3 + 2);
		}
}

/*
 * (5) perf agrees with powercap, per socket and event, over the same
 * window: rapl.c's perf_matches_powercap with the three Intel events.
 * perf stat -a --per-socket -j, counters disabled (-D -1), enabled and
 * disabled on a control FIFO: powercap (outer), enable + ack, powercap
 * (inner), 1 s, powercap (inner), disable + ack, powercap (outer), so
 * inner <= perf <= outer in register counts.  perf scales the register
 * to exact joules (2^-32 J steps: it shifts each domain's count by its
 * unit, 16 for DRAM here) and prints them to 1 uJ (-j's "%f"); perf's
 * joules are converted to powercap's unit for the comparison.
 */
#define PERF_PREFIX	"/tmp/intel-perf"

TEST_F_TIMEOUT(intel, perf_matches_powercap, 180)
{
	uint64_t o0[MAX_PKGS][NDOM], o1[MAX_PKGS][NDOM];
	uint64_t i0[MAX_PKGS][NDOM], i1[MAX_PKGS][NDOM];
	uint64_t range[MAX_PKGS][NDOM];
	char dir[MAX_PKGS][NDOM][VR_PC_DIR];
	struct vr_perf_val pv[MAX_PKGS][NDOM];
	struct vr_perf_res res;
	struct vr_perf r;
	struct truth t;
	int p, d, n = vr_spin_cpus(), round, rc;

	skip_unless_intel(_metadata, &t);
	if (access(VR_PERF, X_OK))
		SKIP(return, "no %s in this initramfs (mkinitramfs.sh adds it in the intel variant)",
		     VR_PERF);
	for (p = 0; p < MAX_PKGS; p++)
		for (d = 0; d < NDOM; d++)
			ASSERT_EQ(0, pc_zone(p, d, dir[p][d], &range[p][d]));
	for (round = 0; round < 2; round++) {
		rc = vr_perf_measure(&r, PERF_PREFIX,
				     "power/energy-pkg/,power/energy-cores/,power/energy-ram/",
				     round ? n : 0, &dir[0][0], MAX_PKGS * NDOM, 1000,
				     &o0[0][0], &i0[0][0], &i1[0][0], &o1[0][0], &res);
		if (rc)
			vr_perf_log(_metadata, &r, &res);
		ASSERT_EQ(0, rc);
		ASSERT_EQ(0, vr_perf_parse(r.out, perf_event, NDOM, &pv[0][0]));
		for (p = 0; p < MAX_PKGS; p++) {
			for (d = 0; d < NDOM; d++) {
				double inner = vr_pc_delta(i0[p][d], i1[p][d], range[p][d]);
				double outer = vr_pc_delta(o0[p][d], o1[p][d], range[p][d]);
				double per_uj = pc_unit_nj(range[p][d]) / 1e3 /
						(1e6 / pow(2, dom_unit(&t, d)));
				double perf;

				ASSERT_TRUE(pv[p][d].seen) {
					TH_LOG("no %s value for socket S%d", perf_event[d], p);
					vr_log_file(_metadata, r.out);
				}
				perf = pv[p][d].joules * 1e6 * per_uj;
				TH_LOG("round %d pkg %d %s: powercap inner %.0f uJ <= perf %.1f uJ (%.6f %s, in powercap's unit) <= powercap outer %.0f uJ",
				       round, p, perf_event[d], inner, perf,
				       pv[p][d].joules, pv[p][d].unit, outer);
				EXPECT_STREQ("Joules", pv[p][d].unit);
				EXPECT_TRUE(pv[p][d].running == 100.0);
				EXPECT_GT(inner, 0);
				/* powercap's truncation, perf's printing, the unit ratio */
				EXPECT_GE(perf, inner - 1.5 - per_uj);
				EXPECT_LE(perf, outer + 1.5 + per_uj);
			}
		}
	}
}

/* APERF and MPERF of @cpu, through the msr driver (rdmsr on @cpu). */
static int cpu_perf(int cpu, uint64_t *aperf, uint64_t *mperf)
{
	char path[64];
	int fd, ret;

	snprintf(path, sizeof(path), "/dev/cpu/%d/msr", cpu);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = vr_rdmsr(fd, 0xe8, aperf);
	if (!ret)
		ret = vr_rdmsr(fd, 0xe7, mperf);
	close(fd);
	return ret;
}

/*
 * (6) APERF: the model gives each CPU APERF and MPERF (rapl-core-mhz,
 * run.sh: CPU 3 at 0.76 of the others' frequency), which Linux sees in
 * CPUID.  Over a second of every CPU spinning, each CPU's APERF advances
 * by its frequency's share of MPERF's (within 2 %: the two registers
 * are read one after the other).  With aperf=1 the Intel source weighs
 * its dynamic split by APERF (GET_INFO's VMRAPL_INFO_F_APERF); without
 * it, by time.  What that weighting does to a VM's energy needs VMs,
 * which this variant cannot run: rapl.heterogeneous_percore measures it
 * on the rapl variant, with the same model.
 */
TEST_F(intel, aperf)
{
	uint64_t a0[MAX_CORES], m0[MAX_CORES], a1, m1;
	unsigned int max_mhz = 0;
	int i, n = vr_spin_cpus();
	struct vmrapl_info info;
	pthread_t th[8];
	struct truth t;
	double ratio;

	skip_unless_intel(_metadata, &t);
	if (!t.core_mhz[0])
		SKIP(return, "no APERF in the model (rapl-core-mhz)");
	for (i = 0; i < n; i++)
		max_mhz = t.core_mhz[i] > max_mhz ? t.core_mhz[i] : max_mhz;
	ASSERT_EQ(0, vr_spin_start(th, n));
	vr_sleep_ms(200);
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, cpu_perf(i, &a0[i], &m0[i]));
	vr_sleep_ms(1000);
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, cpu_perf(i, &a1, &m1));
		ASSERT_LT(0, m1 - m0[i]);
		ratio = (double)(a1 - a0[i]) / (double)(m1 - m0[i]);
		TH_LOG("cpu %d: APERF/MPERF %.3f over %.3f Gcycles, the model's %u of %u MHz",
		       i, ratio, (m1 - m0[i]) / 1e9, t.core_mhz[i], max_mhz);
		EXPECT_LT(fabs(ratio - (double)t.core_mhz[i] / max_mhz), 0.02);
	}
	vr_spin_stop(th, n);

	ASSERT_EQ(0, vr_reload("source=auto aperf=1"));
	ASSERT_EQ(0, vr_get_info(&info));
	EXPECT_EQ(VMRAPL_SOURCE_INTEL, info.source);
	EXPECT_TRUE(info.features & VMRAPL_INFO_F_APERF);
	EXPECT_FALSE(info.features & VMRAPL_INFO_F_PERCORE);
	ASSERT_EQ(0, vr_reload("source=auto"));
	ASSERT_EQ(0, vr_get_info(&info));
	EXPECT_FALSE(info.features & VMRAPL_INFO_F_APERF);
}

/*
 * (7) The registers as the hardware treats writes: the energy status
 * registers, MSR_RAPL_POWER_UNIT and MSR_PKG_POWER_INFO are read-only
 * (#GP: the msr driver's EIO); MSR_PKG_POWER_LIMIT reads a plausible
 * limit (PL1 at the power info's thermal spec power), takes a write and
 * reads it back until its lock bit (63) is set, then refuses writes.
 * Last in the program: the lock stays until the machine resets.
 */
TEST_F(intel, msr_writes)
{
	uint32_t ro[] = { MSR_RAPL_POWER_UNIT, MSR_PKG_ENERGY_STATUS,
			  MSR_PP0_ENERGY_STATUS, MSR_DRAM_ENERGY_STATUS,
			  MSR_PKG_POWER_INFO };
	uint64_t info, limit, v, before;
	struct truth t;
	unsigned int i;
	int fd;

	skip_unless_intel(_metadata, &t);
	fd = vr_msr_open(0, O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, vr_rdmsr(fd, MSR_PKG_POWER_INFO, &info));
	ASSERT_EQ(0, vr_rdmsr(fd, MSR_PKG_POWER_LIMIT, &limit));
	TH_LOG("power info 0x%llx (TDP %.3f W), limit 0x%llx (PL1 %.3f W)",
	       (unsigned long long)info, (info & 0x7fff) / 8.0,
	       (unsigned long long)limit, (limit & 0x7fff) / 8.0);
	/* the model's most power for package 0, in 1/8 W */
	EXPECT_EQ((dom_max_uw(&t, 0, 0) + 124999) / 125000, info & 0x7fff);
	EXPECT_EQ(info & 0x7fff, limit & 0x7fff);
	EXPECT_EQ(0, limit >> 63);
	for (i = 0; i < sizeof(ro) / sizeof(ro[0]); i++) {
		ASSERT_EQ(0, vr_rdmsr(fd, ro[i], &before));
		EXPECT_EQ(-EIO, vr_wrmsr(fd, ro[i], 0)) {
			TH_LOG("a write of MSR 0x%x did not fault", ro[i]);
		}
	}
	/* PL1 one 1/8 W lower, then read back */
	v = (limit & ~0x7fffull) | ((limit & 0x7fff) - 1);
	EXPECT_EQ(0, vr_wrmsr(fd, MSR_PKG_POWER_LIMIT, v));
	ASSERT_EQ(0, vr_rdmsr(fd, MSR_PKG_POWER_LIMIT, &before));
	EXPECT_EQ(v, before);
	/* a reserved bit faults */
	EXPECT_EQ(-EIO, vr_wrmsr(fd, MSR_PKG_POWER_LIMIT, v | (1ull << 24)));
	/* locked: the next write faults, the value stays */
	EXPECT_EQ(0, vr_wrmsr(fd, MSR_PKG_POWER_LIMIT, v | (1ull << 63)));
	EXPECT_EQ(-EIO, vr_wrmsr(fd, MSR_PKG_POWER_LIMIT, limit));
	ASSERT_EQ(0, vr_rdmsr(fd, MSR_PKG_POWER_LIMIT, &before));
	EXPECT_EQ(v | (1ull << 63), before);
	close(fd);
}

TEST_HARNESS_MAIN
