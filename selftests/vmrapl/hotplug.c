// SPDX-License-Identifier: GPL-2.0
/*
 * A CPU that was offline when the module loaded: it switches tasks before
 * its hotplug callback gives it a package, then takes part like the rest.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vr_kvm.h"

TEST(online_after_load)
{
	struct vrp_opts o = { .prog = VRG_SPIN, .duty = 100, .cpu = 3,
			      .attach = true };
	struct vr_books b;
	struct vrp vm;
	double e0 = 0, e1 = 0;

	ASSERT_EQ(0, vr_cpu_set_online(3, false));
	ASSERT_EQ(0, vr_reload(NULL));
	ASSERT_EQ(0, vr_cpu_set_online(3, true));
	vr_sleep_ms(100);

	/* The late CPU accounts like the others. */
	ASSERT_EQ(0, vrp_start(&vm, &o));
	vr_sleep_ms(200);
	vrp_energy(vm.pid, &e0, NULL, NULL);
	vr_sleep_ms(800);
	vrp_energy(vm.pid, &e1, NULL, NULL);
	vrp_stop(&vm);
	EXPECT_GT(e1 - e0, 0) TH_LOG("a vCPU on the late CPU got %.0f uJ",
				     e1 - e0);
	ASSERT_EQ(0, vr_read_books(vr_cpu_package(3), "pkg", &b));
	EXPECT_TRUE(vr_books_conserve(&b));
	EXPECT_EQ(2, b.online);
	vr_reload(NULL);
}

TEST_HARNESS_MAIN
