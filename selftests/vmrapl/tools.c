// SPDX-License-Identifier: GPL-2.0
/*
 * The host tools in the rig: vmraplctl (info, list, top, stats, set, exit
 * codes) and, when its static build made it into the initramfs,
 * vmrapl-exporter's /metrics.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vr_kvm.h"

#define CTL	"/bin/vmraplctl"
#define EXPORTER "/bin/vmrapl-exporter"

static char out[65536];

/* Run a shell command; stdout and stderr in out[], exit status back. */
static int run(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;
	size_t n;
	FILE *p;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	strncat(cmd, " 2>&1", sizeof(cmd) - strlen(cmd) - 1);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = 0;
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* vmraplctl as uid/gid 1000 ("tester", not in group kvm). */
static int run_unprivileged(char *const argv[])
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		if (setgroups(0, NULL) || setgid(1000) || setuid(1000))
			_exit(100);
		execv(CTL, argv);
		_exit(101);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static void param(const char *name, char *buf, size_t len)
{
	char path[128];
	FILE *f;

	buf[0] = 0;
	snprintf(path, sizeof(path), "/sys/module/vmrapl/parameters/%s", name);
	f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(buf, len, f))
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

/* The number after "key": in the object that follows @from. */
static double num_after(const char *from, const char *key)
{
	char k[64];
	const char *s;

	if (!from)
		return -1;
	snprintf(k, sizeof(k), "\"%s\": ", key);
	s = strstr(from, k);
	return s ? atof(s + strlen(k)) : -1;
}

static int start_vm(struct vrp *p)
{
	struct vrp_opts o = {
		.prog = VRG_SPIN, .duty = 100, .cpu = -1, .attach = true,
	};

	return vrp_start(p, &o);
}

TEST(info)
{
	ASSERT_EQ(0, vr_reload(NULL));
	ASSERT_EQ(0, run(CTL " --json info")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"abi_version\": 1")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"source\": \"estimate\""));
	EXPECT_NE(NULL, strstr(out, "\"estimated\": true"));
	EXPECT_NE(NULL, strstr(out, "\"packages\": 2"));
	EXPECT_NE(NULL, strstr(out, "\"sample_period_us\": 1000"));
	EXPECT_NE(NULL, strstr(out, "\"static_policy\": \"occupied\""));
	EXPECT_NE(NULL, strstr(out, "\"track_all\": true"));
	EXPECT_NE(NULL, strstr(out, "\"module_version\": \""));
	EXPECT_EQ(NULL, strstr(out, "\"module_version\": \"unknown\""));
	ASSERT_EQ(0, run(CTL " info")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "*estimated*")) TH_LOG("%s", out);
	TH_LOG("%s", out);
}

TEST(list_and_top_with_vm)
{
	char pidkey[64];
	const char *vm;
	struct vrp p;

	ASSERT_EQ(0, vr_reload(NULL));
	ASSERT_EQ(0, start_vm(&p));
	vr_sleep_ms(300);
	snprintf(pidkey, sizeof(pidkey), "\"pid\": %d,", p.pid);

	EXPECT_EQ(0, run(CTL " --json --interval 0.5 list")) TH_LOG("%s", out);
	vm = strstr(out, pidkey);
	EXPECT_NE(NULL, vm) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"attached\": true"));
	EXPECT_NE(NULL, strstr(out, "\"estimated\": true"));
	EXPECT_GT(num_after(vm, "pkg"), 0) TH_LOG("%s", out);
	EXPECT_GT(num_after(vm ? strstr(vm, "\"power_w\"") : NULL, "pkg"), 0)
		TH_LOG("%s", out);

	EXPECT_EQ(0, run(CTL " list --interval 0.3")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "pkg_W")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "attached"));

	EXPECT_EQ(0, run(CTL " --json top --iterations 1 --interval 0.5"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"packages\": [{\"package\": 0"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"package\": 1"));
	EXPECT_NE(NULL, strstr(out, "\"idle\": "));
	EXPECT_NE(NULL, strstr(out, "\"lost\": "));
	EXPECT_NE(NULL, strstr(out, pidkey));
	EXPECT_GT(num_after(strstr(out, "\"power_w\""), "sampled"), 0);

	EXPECT_EQ(0, run(CTL " top --iterations 2 --interval 0.3"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "pkg 0:")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "idle")) TH_LOG("%s", out);
	TH_LOG("%s", out);
	vrp_stop(&p);
}

TEST(stats)
{
	char arg[32], idkey[64];
	struct vrp p;
	const char *s;
	long long id;

	ASSERT_EQ(0, vr_reload(NULL));
	ASSERT_EQ(0, start_vm(&p));
	vr_sleep_ms(200);

	/* By pid. */
	EXPECT_EQ(0, run(CTL " --json --interval 0.3 stats %d", p.pid))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"note\": \"per-vCPU")) TH_LOG("%s", out);
	s = strstr(out, "\"id\": ");
	ASSERT_NE(NULL, s);
	id = atoll(s + 6);
	snprintf(idkey, sizeof(idkey), "\"id\": %lld,", id);

	/* By id, and by name (the VMM's comm: this program's name). */
	snprintf(arg, sizeof(arg), "%lld", id);
	EXPECT_EQ(0, run(CTL " --json --interval 0 stats %s", arg))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, idkey)) TH_LOG("%s", out);
	EXPECT_EQ(0, run(CTL " --json --interval 0 stats tools"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, idkey)) TH_LOG("%s", out);

	/* Text mode says where per-vCPU detail lives. */
	EXPECT_EQ(0, run(CTL " --interval 0.2 stats %d", p.pid)) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "VMRAPL_VM_GET_STATS")) TH_LOG("%s", out);

	/* Unknown VMs. */
	EXPECT_EQ(4, run(CTL " stats 987654321")) TH_LOG("%s", out);
	EXPECT_EQ(4, run(CTL " --json stats no-such-vm")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "no VM matches"));
	EXPECT_EQ(1, run(CTL " stats")) TH_LOG("%s", out);
	vrp_stop(&p);
}

TEST(set_params)
{
	char old[64], now[64];

	ASSERT_EQ(0, vr_reload(NULL));
	param("static_policy", old, sizeof(old));
	ASSERT_STREQ("occupied", old);

	EXPECT_EQ(1, run(CTL " set static_policy=bogus")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "occupied, busy or none")) TH_LOG("%s", out);
	param("static_policy", now, sizeof(now));
	EXPECT_STREQ(old, now);

	EXPECT_EQ(0, run(CTL " set static_policy=busy")) TH_LOG("%s", out);
	param("static_policy", now, sizeof(now));
	EXPECT_STREQ("busy", now);
	EXPECT_EQ(0, run(CTL " --json info"));
	EXPECT_NE(NULL, strstr(out, "\"static_policy\": \"busy\"")) TH_LOG("%s", out);
	EXPECT_EQ(0, run(CTL " set static_policy=%s", old)) TH_LOG("%s", out);
	param("static_policy", now, sizeof(now));
	EXPECT_STREQ(old, now);

	EXPECT_EQ(1, run(CTL " set sample_period_us=50")) TH_LOG("%s", out);
	EXPECT_EQ(1, run(CTL " set sample_period_us=0x100")) TH_LOG("%s", out);
	EXPECT_EQ(0, run(CTL " set sample_period_us=2000")) TH_LOG("%s", out);
	param("sample_period_us", now, sizeof(now));
	EXPECT_STREQ("2000", now);
	EXPECT_EQ(0, run(CTL " set sample_period_us=1000"));

	EXPECT_EQ(1, run(CTL " set track_all=yes")) TH_LOG("%s", out);
	EXPECT_EQ(0, run(CTL " set track_all=0")) TH_LOG("%s", out);
	param("track_all", now, sizeof(now));
	EXPECT_STREQ("N", now);
	EXPECT_EQ(0, run(CTL " set track_all=1"));
	param("track_all", now, sizeof(now));
	EXPECT_STREQ("Y", now);

	EXPECT_EQ(1, run(CTL " set max_power_w=100")) TH_LOG("%s", out);
	EXPECT_EQ(1, run(CTL " set static_policy")) TH_LOG("%s", out);
	EXPECT_EQ(1, run(CTL " frobnicate")) TH_LOG("%s", out);
}

TEST(unprivileged)
{
	char *const list[] = { "vmraplctl", "list", NULL };
	char *const info[] = { "vmraplctl", "--json", "info", NULL };
	char *const set[] = { "vmraplctl", "set", "static_policy=busy", NULL };
	char now[64];

	ASSERT_EQ(0, vr_reload(NULL));
	EXPECT_EQ(3, run_unprivileged(list));
	EXPECT_EQ(3, run_unprivileged(info));
	EXPECT_EQ(3, run_unprivileged(set));
	param("static_policy", now, sizeof(now));
	EXPECT_STREQ("occupied", now);
}

TEST(no_module)
{
	ASSERT_EQ(0, vr_unload());
	EXPECT_EQ(2, run(CTL " info")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "vmrapl module not loaded")) TH_LOG("%s", out);
	EXPECT_EQ(2, run(CTL " --json list")) TH_LOG("%s", out);
	EXPECT_EQ(2, run(CTL " top --iterations 1")) TH_LOG("%s", out);
	EXPECT_EQ(2, run(CTL " stats 1")) TH_LOG("%s", out);
	EXPECT_EQ(2, run(CTL " set static_policy=busy")) TH_LOG("%s", out);
	ASSERT_EQ(0, vr_load(NULL));
	EXPECT_EQ(0, run(CTL " info")) TH_LOG("%s", out);
}

TEST(exporter_metrics)
{
	struct vrp p;
	pid_t exp;
	int i, rc = -1;

	if (access(EXPORTER, X_OK))
		SKIP(return, "no static vmrapl-exporter in the initramfs");
	ASSERT_EQ(0, vr_reload(NULL));
	run("ip link set lo up");
	ASSERT_EQ(0, start_vm(&p));
	exp = fork();
	ASSERT_LE(0, exp);
	if (!exp) {
		execl(EXPORTER, "vmrapl-exporter", "--listen", "127.0.0.1:9877",
		      NULL);
		_exit(127);
	}
	for (i = 0; i < 50; i++) {
		vr_sleep_ms(200);
		rc = run("wget -q -O - http://127.0.0.1:9877/metrics");
		if (!rc)
			break;
	}
	EXPECT_EQ(0, rc) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "# HELP vmrapl_vm_energy_joules_total "))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "# TYPE vmrapl_vm_energy_joules_total counter\n"));
	EXPECT_NE(NULL, strstr(out, "vmrapl_vm_energy_joules_total{vm=\""));
	EXPECT_NE(NULL, strstr(out, "# TYPE vmrapl_vm_overhead_energy_joules_total counter\n"));
	EXPECT_NE(NULL, strstr(out, "# TYPE vmrapl_package_energy_joules_total counter\n"));
	EXPECT_NE(NULL, strstr(out, "vmrapl_package_energy_joules_total{package=\"0\",domain=\"pkg\"}"));
	EXPECT_NE(NULL, strstr(out, "vmrapl_package_unattributed_energy_joules_total{package=\"1\",kind=\"idle\"}"));
	EXPECT_NE(NULL, strstr(out, "vmrapl_source_info{source=\"estimate\",estimated=\"true\"} 1"));
	EXPECT_NE(NULL, strstr(out, "# TYPE vmrapl_vm_info gauge\n"));
	EXPECT_NE(NULL, strstr(out, ",attached=\"true\"} 1"));
	EXPECT_NE(0, run("wget -q -O - http://127.0.0.1:9877/nope"));
	kill(exp, SIGTERM);
	waitpid(exp, NULL, 0);
	vrp_stop(&p);
}

TEST_HARNESS_MAIN
