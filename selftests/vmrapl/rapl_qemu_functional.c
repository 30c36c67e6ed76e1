// SPDX-License-Identifier: GPL-2.0
/*
 * The QEMU series' own functional test, in QEMU's tree and style
 * (tests/functional/test_x86_64_vmrapl.py, patch 0023), run here against
 * the real module: in the rig's rapl variant, /usr/bin/qemu-system-x86_64
 * is the QEMU of "make qemu", /usr/bin/python3 is Debian's, and
 * /qemu-functional holds that QEMU's python/ and tests/functional/
 * (selftests/rig/mkinitramfs.sh).  Each TEST runs one of its tests with
 * Python's unittest; a test that skips fails here, since this rig has
 * everything it needs (KVM, /dev/vmrapl, a powercap package zone).
 *
 *   guest_reads_its_energy   rapl=on,rapl-backend=vmrapl: a guest of its
 *                  own firmware reads its RAPL unit, package and core
 *                  counters with rdmsr, and they advance while it spins
 *   vm_within_host_package   the VM's package energy over 3 s is within
 *                  what the host's powercap package zones counted
 *   without_rapl_no_registers   -accel kvm alone: #GP for the unit MSR
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "kselftest_harness.h"

#define QEMU		"/usr/bin/qemu-system-x86_64"
#define PYTHON		"/usr/bin/python3"
#define TREE		"/qemu-functional"
#define SCRATCH		"/tmp/qemu-functional"
#define CLASS		"test_x86_64_vmrapl.VmraplTest"

static const char *missing(void)
{
	if (access(QEMU, X_OK))
		return QEMU " (make qemu)";
	if (access(PYTHON, X_OK))
		return PYTHON;
	if (access(TREE "/tests/functional/test_x86_64_vmrapl.py", R_OK))
		return TREE " (QEMU's functional tests)";
	return NULL;
}

/*
 * One of the test's logs: its tail for a failure (@info false), or its
 * INFO lines (what the guest printed, what the test measured) for a pass.
 */
static void show(struct __test_metadata *_metadata, const char *test,
		 const char *log, bool info)
{
	char path[512], line[512];
	FILE *f;

	snprintf(path, sizeof(path), SCRATCH "/tests/functional/x86_64/%s.%s/%s",
		 CLASS, test, log);
	f = fopen(path, "r");
	if (!f)
		return;
	if (!info && fseek(f, -4095, SEEK_END))
		rewind(f);
	TH_LOG("%s%s:", path, info ? " (INFO)" : "");
	while (fgets(line, sizeof(line), f)) {
		if (!info || strstr(line, " - INFO: "))
			fprintf(stderr, "#   %s", line);
	}
	fclose(f);
}

/*
 * Run CLASS.@test; pass only if unittest says "ok" for it (not skipped,
 * not failed), within @secs.
 */
static void run(struct __test_metadata *_metadata, const char *test, int secs)
{
	char id[128], out[8192], want[160];
	size_t len = 0;
	int pipefd[2], status;
	const char *miss = missing();
	ssize_t n;
	pid_t pid;

	if (miss)
		SKIP(return, "no %s in this rig", miss);
	snprintf(id, sizeof(id), CLASS ".%s", test);
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		char *const argv[] = { PYTHON, "-m", "unittest", "-v", id, NULL };
		char *const envp[] = {
			"PATH=/usr/bin:/bin:/usr/sbin:/sbin",
			"PYTHONPATH=" TREE "/python:" TREE "/tests/functional",
			"QEMU_TEST_QEMU_BINARY=" QEMU,
			"QEMU_BUILD_ROOT=" SCRATCH,
			"PYTHONDONTWRITEBYTECODE=1",
			NULL,
		};

		dup2(pipefd[1], 1);
		dup2(pipefd[1], 2);
		close(pipefd[0]);
		close(pipefd[1]);
		if (chdir(TREE "/tests/functional"))
			_exit(126);
		alarm(secs);
		execve(PYTHON, argv, envp);
		_exit(127);
	}
	close(pipefd[1]);
	/* The first 8 KiB are kept; the rest is read, so Python never blocks. */
	for (;;) {
		char rest[1024];

		if (len < sizeof(out) - 1)
			n = read(pipefd[0], out + len, sizeof(out) - 1 - len);
		else
			n = read(pipefd[0], rest, sizeof(rest));
		if (n <= 0)
			break;
		if (len < sizeof(out) - 1)
			len += n;
	}
	out[len] = '\0';
	close(pipefd[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	/* unittest -v: "test_x (module.Class.test_x) ... ok" */
	snprintf(want, sizeof(want), "%s) ... ok", id);
	if (!WIFEXITED(status) || WEXITSTATUS(status) || !strstr(out, want)) {
		TH_LOG("%s (status 0x%x):\n%s", id, status, out);
		show(_metadata, test, "base.log", false);
		show(_metadata, test, "console.log", false);
	} else {
		show(_metadata, test, "base.log", true);
	}
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_NE(NULL, strstr(out, want));
}

/* No state: a fixture only for TEST_F_TIMEOUT (QEMU boots under TCG). */
FIXTURE(qf) {
};

FIXTURE_SETUP(qf)
{
}

FIXTURE_TEARDOWN(qf)
{
}

TEST_F_TIMEOUT(qf, guest_reads_its_energy, 300)
{
	run(_metadata, "test_guest_reads_its_energy", 280);
}

TEST_F_TIMEOUT(qf, vm_within_host_package, 300)
{
	run(_metadata, "test_vm_within_host_package", 280);
}

TEST_F_TIMEOUT(qf, without_rapl_no_registers, 300)
{
	run(_metadata, "test_without_rapl_no_registers", 280);
}

TEST_HARNESS_MAIN
