// SPDX-License-Identifier: GPL-2.0
/*
 * NUMA is not a package.  The rig's numa variant splits each of its two
 * packages into two NUMA nodes (like AMD's NPS2): energy must still be
 * attributed per physical package, never per node.  vCPU threads are
 * placed on nodes with libnuma.
 */
#include <numa.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vr_kvm.h"

#define ESU	14

/* The first CPU of NUMA node @node. */
static int node_cpu(int node)
{
	struct bitmask *m = numa_allocate_cpumask();
	int cpu, found = -1;

	if (!numa_node_to_cpus(node, m))
		for (cpu = 0; cpu < (int)m->size && found < 0; cpu++)
			if (numa_bitmask_isbitset(m, cpu))
				found = cpu;
	numa_free_cpumask(m);
	return found;
}

static void inject_for(int pkg, double watts, int ms)
{
	uint64_t start = vr_now_ns(), now, total = 0, want;

	while ((now = vr_now_ns()) < start + ms * 1000000ull) {
		want = (uint64_t)(watts * (now - start) / 1e9 * (1 << ESU));
		if (want > total) {
			vr_inject(pkg, VMRAPL_DOM_PKG, want - total, false);
			total = want;
		}
		vr_sleep_ms(5);
	}
}

TEST(per_package_not_per_node)
{
	struct vrp_opts o = { .prog = VRG_SPIN, .duty = 100, .attach = true };
	struct vmrapl_info info;
	struct vrp vm[3];
	double e0[3], e1[3];
	int i, cpu[3];

	if (numa_available() < 0 || numa_max_node() < 3)
		SKIP(return, "needs 4 NUMA nodes (rig variant numa)");
	ASSERT_EQ(0, vr_reload("source=test sample_period_us=20000"));
	ASSERT_EQ(0, vr_get_info(&info));
	/* Four nodes, two packages: the module counts packages. */
	EXPECT_EQ(2, info.nr_packages);
	EXPECT_EQ(4, numa_max_node() + 1);

	/* Nodes 0 and 1 are package 0, node 2 is package 1. */
	for (i = 0; i < 3; i++) {
		cpu[i] = node_cpu(i);
		ASSERT_LE(0, cpu[i]);
	}
	EXPECT_EQ(vr_cpu_package(cpu[0]), vr_cpu_package(cpu[1]));
	EXPECT_NE(vr_cpu_package(cpu[0]), vr_cpu_package(cpu[2]));
	/* We inject from node 3 (package 1's second CPU). */
	ASSERT_EQ(0, numa_run_on_node(3));

	for (i = 0; i < 3; i++) {
		o.cpu = cpu[i];
		ASSERT_EQ(0, vrp_start(&vm[i], &o));
	}
	vr_sleep_ms(300);
	for (i = 0; i < 3; i++)
		vrp_energy(vm[i].pid, &e0[i], NULL, NULL);
	inject_for(vr_cpu_package(cpu[0]), 20.0, 1500);
	vr_sleep_ms(60);
	for (i = 0; i < 3; i++) {
		vrp_energy(vm[i].pid, &e1[i], NULL, NULL);
		vrp_stop(&vm[i]);
	}
	TH_LOG("node 0: %.0f uJ, node 1: %.0f uJ, node 2: %.0f uJ",
	       e1[0] - e0[0], e1[1] - e0[1], e1[2] - e0[2]);
	/* Both nodes of package 0 share its energy, about evenly. */
	EXPECT_GT(e1[0] - e0[0], 0);
	EXPECT_GT(e1[1] - e0[1], 0);
	EXPECT_LT(abs((int)((e1[0] - e0[0]) - (e1[1] - e0[1]))),
		  (int)((e1[0] - e0[0] + e1[1] - e0[1]) * 0.25));
	/* Package 1 got nothing of package 0's energy. */
	EXPECT_EQ(0, e1[2] - e0[2]);
	vr_reload(NULL);
}

TEST_HARNESS_MAIN
