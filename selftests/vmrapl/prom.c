// SPDX-License-Identifier: GPL-2.0
/*
 * rig.mode=prom only (never in the test suite): the target of a real
 * Prometheus scrape from the host (scripts/prom-scrape.sh).  Starts a busy
 * VM (vmrapl-vmm --name busy --guest spin) and an idle one (--name idle
 * --guest idle) and vmrapl-exporter on 0.0.0.0:9877, which QEMU forwards
 * to the host over user networking (eth0, 10.0.2.15, set up by /init);
 * checks once over loopback that both VMs are exported, then stays up
 * for PROM_SECONDS (default 80) so the host's Prometheus can scrape it.
 * The verdict on the scraped data is the host script's; this program
 * only reports whether it could serve (TAP, 3 tests).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vr_cmd.h"

#define VMM		"/bin/vmrapl-vmm"
#define EXPORTER	"/bin/vmrapl-exporter"

static char out[65536];
static int test_no;

static void tap(int ok, const char *what)
{
	printf("%sok %d %s\n", ok ? "" : "not ", ++test_no, what);
	fflush(stdout);
}

static pid_t spawn(char *const argv[])
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (!pid) {
		FILE *f = freopen("/dev/null", "w", stdout);

		(void)f;
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

static int scrape(void)
{
	return vr_cmd_output("wget -q -O - http://127.0.0.1:9877/metrics 2>&1",
			     out, sizeof(out));
}

int main(void)
{
	const char *env = getenv("PROM_SECONDS");
	int secs = env ? atoi(env) : 80, i, ok;
	char dur[32];
	pid_t busy, idle, exp;

	snprintf(dur, sizeof(dur), "%d", secs + 30);
	printf("1..3\n");
	if (access(VMM, X_OK) || access(EXPORTER, X_OK)) {
		printf("ok 1 # SKIP no %s or %s in the initramfs\n", VMM, EXPORTER);
		printf("ok 2 # SKIP\nok 3 # SKIP\n");
		return 4;
	}
	{
		char *b[] = { VMM, "--name", "busy", "--guest", "spin",
			      "--duration", dur, NULL };
		char *d[] = { VMM, "--name", "idle", "--guest", "idle",
			      "--duration", dur, NULL };
		char *e[] = { EXPORTER, "--listen", "0.0.0.0:9877", NULL };

		busy = spawn(b);
		idle = spawn(d);
		exp = spawn(e);
	}
	tap(busy > 0 && idle > 0 && exp > 0, "VMs and exporter started");

	/* Both VMs in the exporter's output, over loopback. */
	ok = 0;
	for (i = 0; i < 100 && !ok; i++) {
		usleep(200 * 1000);
		ok = !scrape() &&
		     strstr(out, "vmrapl_vm_energy_joules_total{vm=\"busy\",id=\"") &&
		     strstr(out, "vmrapl_vm_energy_joules_total{vm=\"idle\",id=\"");
	}
	tap(ok, "exporter serves vm=\"busy\" and vm=\"idle\"");
	if (!ok)
		printf("# last scrape:\n%s\n", out);

	printf("### PROM READY port=9877 seconds=%d\n", secs);
	fflush(stdout);
	sleep(secs);

	ok = !scrape() && strstr(out, "vm=\"busy\"") && strstr(out, "vm=\"idle\"");
	tap(ok, "still serving both VMs at the end");
	kill(exp, SIGTERM);
	kill(busy, SIGTERM);
	kill(idle, SIGTERM);
	waitpid(exp, NULL, 0);
	waitpid(busy, NULL, 0);
	waitpid(idle, NULL, 0);
	printf("### PROM DONE\n");
	return test_no == 3 && ok ? 0 : 1;
}
