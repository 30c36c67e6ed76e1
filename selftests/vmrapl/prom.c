// SPDX-License-Identifier: GPL-2.0
/*
 * rig.mode=prom only (never in the test suite): one hypervisor of the
 * fleet that a real Prometheus on the host scrapes (scripts/prom-scrape.sh).
 * Starts three VMs (vmrapl-vmm --name busy --guest spin, duty --guest
 * duty:30, idle --guest idle; busy with a 5 W power limit that nothing
 * holds) and vmrapl-exporter on 0.0.0.0:9877, which
 * QEMU forwards to the host over user networking (eth0, 10.0.2.15, set up
 * by /init); checks once over loopback that all three are exported, then
 * stays up for PROM_SECONDS (default 80) so the host's Prometheus can
 * scrape it.
 *
 * PROM_RESTART_AT=S (the kernel command line passes it to /init's
 * environment): S seconds after "PROM READY" this hypervisor restarts
 * everything the way an operator's upgrade would: the VMs and the exporter
 * stop, vmrapl is unloaded and loaded again (every counter starts from 0,
 * vmrapl_module_load_time_seconds moves), then the same VMs and the
 * exporter start again.
 *
 * The verdict on the scraped data is the host script's; this program only
 * reports whether it could serve (TAP).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vr_cmd.h"
#include "vr_module.h"

#define VMM		"/bin/vmrapl-vmm"
#define EXPORTER	"/bin/vmrapl-exporter"
#define CTL		"/bin/vmraplctl"
#define NVM		3

static const char *const vm_name[NVM] = { "busy", "duty", "idle" };
static const char *const vm_guest[NVM] = { "spin", "duty:30", "idle" };

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

/* The last scrape has an energy series of every VM. */
static int all_vms_exported(void)
{
	char want[96];
	int i;

	for (i = 0; i < NVM; i++) {
		snprintf(want, sizeof(want),
			 "vmrapl_vm_energy_joules_total{vm=\"%s\",id=\"",
			 vm_name[i]);
		if (!strstr(out, want))
			return 0;
	}
	return 1;
}

/* The VMs (each for @secs) and the exporter; false when one failed. */
static int start_all(int secs, pid_t vm[NVM], pid_t *exp)
{
	char dur[32];
	int i, ok = 1;

	snprintf(dur, sizeof(dur), "%d", secs);
	for (i = 0; i < NVM; i++) {
		char *argv[] = { VMM, "--name", (char *)vm_name[i], "--guest",
				 (char *)vm_guest[i], "--duration", dur, NULL };

		vm[i] = spawn(argv);
		ok &= vm[i] > 0;
	}
	{
		char *argv[] = { EXPORTER, "--listen", "0.0.0.0:9877", NULL };

		*exp = spawn(argv);
		ok &= *exp > 0;
	}
	return ok;
}

static void stop_all(pid_t vm[NVM], pid_t exp)
{
	int i;

	kill(exp, SIGTERM);
	for (i = 0; i < NVM; i++)
		kill(vm[i], SIGTERM);
	waitpid(exp, NULL, 0);
	for (i = 0; i < NVM; i++)
		waitpid(vm[i], NULL, 0);
}

/*
 * Up to 20 s for the exporter to serve every VM, over loopback; then
 * "busy" gets a power limit of 5 W (no vmrapl-limitd here: it is not
 * held), for the dashboard's power-against-limit panel.
 */
static int wait_served(void)
{
	int i;

	for (i = 0; i < 100; i++) {
		usleep(200 * 1000);
		if (!scrape() && all_vms_exported())
			break;
	}
	if (i == 100) {
		printf("# last scrape:\n%s\n", out);
		return 0;
	}
	if (vr_cmd_output(CTL " limit busy 5W 2>&1", out, sizeof(out))) {
		printf("# vmraplctl limit busy 5W:\n%s\n", out);
		return 0;
	}
	return 1;
}

int main(void)
{
	const char *env = getenv("PROM_SECONDS");
	const char *rs = getenv("PROM_RESTART_AT");
	int secs = env ? atoi(env) : 80, restart_at = rs ? atoi(rs) : 0;
	int plan = restart_at > 0 && restart_at < secs ? 5 : 3, ok;
	pid_t vm[NVM], exp;

	printf("1..%d\n", plan);
	if (access(VMM, X_OK) || access(EXPORTER, X_OK)) {
		printf("ok 1 # SKIP no %s or %s in the initramfs\n", VMM, EXPORTER);
		for (ok = 2; ok <= plan; ok++)
			printf("ok %d # SKIP\n", ok);
		return 4;
	}
	tap(start_all(secs + 30, vm, &exp), "VMs busy, duty and idle and the exporter started");
	tap(wait_served(), "exporter serves vm=\"busy\", vm=\"duty\" and vm=\"idle\"");

	printf("### PROM READY port=9877 seconds=%d\n", secs);
	fflush(stdout);
	if (plan == 5) {
		sleep(restart_at);
		printf("### PROM RESTART\n");
		stop_all(vm, exp);
		ok = !vr_reload(NULL);
		ok &= start_all(secs - restart_at + 30, vm, &exp);
		tap(ok, "VMs, exporter and vmrapl restarted");
		tap(wait_served(), "exporter serves all three VMs again");
		printf("### PROM RESTARTED\n");
		fflush(stdout);
		sleep(secs - restart_at);
	} else {
		sleep(secs);
	}

	ok = !scrape() && all_vms_exported();
	tap(ok, "still serving all three VMs at the end");
	stop_all(vm, exp);
	printf("### PROM DONE\n");
	return test_no == plan && ok ? 0 : 1;
}
