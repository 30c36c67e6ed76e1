// SPDX-License-Identifier: GPL-2.0
/*
 * A CPU that was offline when the module loaded: it switches tasks before
 * its hotplug callback gives it a package, then takes part like the rest.
 * The package timer while its package's CPUs go away and come back, and
 * parameter writes while the module unloads.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "libvmrapl-host.h"
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

static volatile int spin_stop;

static void *spin(void *unused)
{
	while (!spin_stop)
		;
	return NULL;
}

/* No state: only for the longer timeout of TEST_F_TIMEOUT(). */
FIXTURE(hp) {
	int unused;
};

FIXTURE_SETUP(hp)
{
	self->unused = 0;
}

FIXTURE_TEARDOWN(hp)
{
}

/*
 * Regression: a package's timer follows an online CPU of the package.
 * When the package's last CPU went away, the pending timer migrated to
 * another package's CPU; when one came back, vr_cpu_up() tested
 * timer_pending() while the callback could be running there, about to
 * move the timer home with add_timer_on(): both added it, which corrupts
 * the timer wheel (a list corruption report, or ODEBUG's "activate
 * active" on the debug kernel).  Arming is now serialized.  Here three
 * threads keep the CPUs busy (10 ms timers, 100 us epochs) while package
 * 1's CPUs go offline and online, again and again (25 times); the books
 * must still conserve and the rig's kernel log stay clean.
 */
TEST_F_TIMEOUT(hp, timer_follows_hotplug, 120)
{
	struct vr_books b[2];
	pthread_t th[3];
	int i;

	ASSERT_EQ(1, vr_cpu_package(2));
	ASSERT_EQ(1, vr_cpu_package(3));
	ASSERT_EQ(0, vr_reload("sample_period_us=100"));
	spin_stop = 0;
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, spin, NULL));
	for (i = 0; i < 25; i++) {
		ASSERT_EQ(0, vr_cpu_set_online(3, false));
		ASSERT_EQ(0, vr_cpu_set_online(2, false));
		/* The timer now waits on package 0's CPUs. */
		usleep(1000 * (i % 15));
		ASSERT_EQ(0, vr_cpu_set_online(2, true));
		ASSERT_EQ(0, vr_cpu_set_online(3, true));
		usleep(1000 * (i % 11));
	}
	spin_stop = 1;
	for (i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	ASSERT_EQ(0, vr_read_books2(b));
	EXPECT_TRUE(vr_books_conserve(&b[0]) && vr_books_conserve(&b[1]));
	EXPECT_EQ(2, b[0].online);
	EXPECT_EQ(2, b[1].online);
	vr_reload(NULL);
}

/*
 * Regression: writing static_policy or sample_period_us while the module
 * unloads walked vr_pkgs as exit() freed it (sysfs goes away only after
 * exit()): a use-after-free, reported by KASAN on the debug kernel.  The
 * packages are now freed under the parameter lock.  Here a child writes
 * both parameters without pause while the module is unloaded and loaded
 * again, 30 times.
 */
TEST_F_TIMEOUT(hp, params_during_unload, 120)
{
	static const char *const pol[] = { "busy", "occupied" };
	pid_t child;
	int i, status;

	ASSERT_EQ(0, vr_reload(NULL));
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		for (i = 0;; i++) {
			/* Fails while the module is away: that is expected. */
			vmrapl_host_param_set("static_policy", pol[i & 1]);
			vmrapl_host_param_set("sample_period_us",
					      i & 1 ? "1000" : "500");
		}
	}
	for (i = 0; i < 30; i++) {
		ASSERT_EQ(0, vr_unload());
		ASSERT_EQ(0, vr_load(NULL));
	}
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	ASSERT_EQ(0, vr_reload(NULL));
}

TEST_HARNESS_MAIN
