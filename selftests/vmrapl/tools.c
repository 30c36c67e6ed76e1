// SPDX-License-Identifier: GPL-2.0
/*
 * The host tools in the rig: vmraplctl (info, list, top, stats, set, exit
 * codes) and vmrapl-exporter (static, or dynamic with its libraries, when
 * it was built): /metrics over loopback and the --powercap-tree files.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/*
 * The label the exporter gives the VM of @pid (from vmrapl_vm_info in
 * out[]), "" if none.
 */
static void vm_label(int pid, char *buf, size_t len)
{
	const char *prefix = "vmrapl_vm_info{vm=\"";
	char want[32];
	const char *l;

	buf[0] = 0;
	snprintf(want, sizeof(want), ",pid=\"%d\"", pid);
	for (l = strstr(out, prefix); l; l = strstr(l + 1, prefix)) {
		const char *eol = strchr(l, '\n'), *p = strstr(l, want);
		const char *name = l + strlen(prefix), *q = strchr(name, '"');

		if (p && eol && p < eol && q && (size_t)(q - name) < len) {
			memcpy(buf, name, q - name);
			buf[q - name] = 0;
			return;
		}
	}
}

/* The value of metric line "@series " in out[], -1 if absent. */
static double metric(const char *series)
{
	char k[256];
	const char *s;

	snprintf(k, sizeof(k), "\n%s ", series);
	s = strstr(out, k);
	return s ? atof(s + strlen(k)) : -1;
}

static pid_t start_exporter(const char *tree)
{
	pid_t pid = fork();

	if (!pid) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd >= 0)
			dup2(fd, 2);
		if (tree)
			execl(EXPORTER, "vmrapl-exporter", "--listen",
			      "127.0.0.1:9877", "--powercap-tree", tree,
			      "--powercap-interval", "0.1", NULL);
		else
			execl(EXPORTER, "vmrapl-exporter", "--listen",
			      "127.0.0.1:9877", NULL);
		_exit(127);
	}
	return pid;
}

/* Fetch /metrics into out[], retrying while the exporter starts. */
static int scrape(void)
{
	int i, rc = -1;

	for (i = 0; i < 50; i++) {
		rc = run("wget -q -O - http://127.0.0.1:9877/metrics");
		if (!rc)
			break;
		vr_sleep_ms(200);
	}
	return rc;
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
	/* Its spinning vCPU 0, from the host: energy, runtime and power. */
	s = strstr(out, "\"per_vcpu\": [{\"vcpu\": 0,");
	EXPECT_NE(NULL, s) TH_LOG("%s", out);
	EXPECT_GT(num_after(s, "pkg"), 0) TH_LOG("%s", out);
	EXPECT_GT(num_after(s, "runtime_s"), 0) TH_LOG("%s", out);
	EXPECT_GT(num_after(s, "busy"), 0.2) TH_LOG("%s", out);
	EXPECT_GT(num_after(s ? strstr(s, "\"power_w\"") : NULL, "pkg"), 0)
		TH_LOG("%s", out);
	/* vCPU energy never exceeds the VM's (overhead included). */
	EXPECT_LE(num_after(s, "pkg"),
		  num_after(strstr(out, "\"energy_j\""), "pkg") + 1e-6)
		TH_LOG("%s", out);
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

	/* Text mode: a row per vCPU. */
	EXPECT_EQ(0, run(CTL " --interval 0.2 stats %d", p.pid)) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "  vCPU ")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n  0 ")) TH_LOG("%s", out);

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
	char label[128], series[256];
	double e0, e1;
	struct vrp p;
	pid_t exp;

	if (access(EXPORTER, X_OK))
		SKIP(return, "no vmrapl-exporter in the initramfs");
	ASSERT_EQ(0, vr_reload(NULL));
	/* /init brought lo up: the rig has no NIC. */
	ASSERT_EQ(0, start_vm(&p));
	exp = start_exporter(NULL);
	ASSERT_LE(0, exp);
	ASSERT_EQ(0, scrape()) TH_LOG("%s", out);
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

	/* The busy VM's counter grows between two scrapes. */
	vm_label(p.pid, label, sizeof(label));
	ASSERT_NE(0, label[0]) TH_LOG("no vmrapl_vm_info for pid %d:\n%s",
				       p.pid, out);
	snprintf(series, sizeof(series),
		 "vmrapl_vm_energy_joules_total{vm=\"%s\",domain=\"pkg\"}",
		 label);
	e0 = metric(series);
	EXPECT_GE(e0, 0) TH_LOG("%s missing:\n%s", series, out);
	vr_sleep_ms(1000);
	ASSERT_EQ(0, scrape()) TH_LOG("%s", out);
	e1 = metric(series);
	/* A busy vCPU under the estimate: about 18 W, at least several J. */
	EXPECT_GT(e1 - e0, 2.0) TH_LOG("%s: %.6f then %.6f J", series, e0, e1);
	TH_LOG("%s: %.3f J in 1 s", series, e1 - e0);
	/* The whole body, for the host's "promtool check metrics". */
	printf("### METRICS BEGIN\n%s%s### METRICS END\n", out,
	       out[0] && out[strlen(out) - 1] != '\n' ? "\n" : "");
	fflush(stdout);

	EXPECT_NE(0, run("wget -q -O - http://127.0.0.1:9877/nope"));
	kill(exp, SIGTERM);
	waitpid(exp, NULL, 0);
	vrp_stop(&p);
}

/* The VM's tree counter (uJ) and, right after, LIST_VMS's energy (J). */
static int powercap_pair(const char *file, int pid, double *tree_uj,
			 double *list_j)
{
	char pidkey[64], buf[64];
	double prev = -1;
	FILE *f;
	int i;

	/* Wait for a fresh write of the tree, so both are taken together. */
	for (i = 0; i < 200; i++) {
		f = fopen(file, "r");
		*tree_uj = -1;
		if (f) {
			if (fgets(buf, sizeof(buf), f))
				*tree_uj = atof(buf);
			fclose(f);
		}
		if (prev >= 0 && *tree_uj != prev)
			break;
		prev = *tree_uj;
		vr_sleep_ms(5);
	}
	if (*tree_uj < 0 || run(CTL " --json --interval 0 list"))
		return -1;
	snprintf(pidkey, sizeof(pidkey), "\"pid\": %d,", pid);
	*list_j = num_after(strstr(out, pidkey), "pkg");
	return *list_j < 0 ? -1 : 0;
}

TEST(exporter_powercap_tree)
{
	char label[128], file[256];
	double t0, t1, l0, l1, dt, dl;
	struct vrp p;
	pid_t exp;

	if (access(EXPORTER, X_OK))
		SKIP(return, "no vmrapl-exporter in the initramfs");
	ASSERT_EQ(0, vr_reload(NULL));
	ASSERT_EQ(0, start_vm(&p));
	mkdir("/tmp/powercap", 0755);
	exp = start_exporter("/tmp/powercap");
	ASSERT_LE(0, exp);
	ASSERT_EQ(0, scrape()) TH_LOG("%s", out);
	vm_label(p.pid, label, sizeof(label));
	ASSERT_NE(0, label[0]) TH_LOG("%s", out);
	snprintf(file, sizeof(file), "/tmp/powercap/%s/intel-rapl:0/energy_uj",
		 label);
	vr_sleep_ms(500);
	run("cat /tmp/powercap/%s/intel-rapl:0/name", label);
	EXPECT_STREQ("package-0\n", out);

	/* Warm up, so that both vmraplctl runs below take about as long. */
	run(CTL " --json --interval 0 list");
	ASSERT_EQ(0, powercap_pair(file, p.pid, &t0, &l0)) TH_LOG("%s", out);
	vr_sleep_ms(8000);
	ASSERT_EQ(0, powercap_pair(file, p.pid, &t1, &l1)) TH_LOG("%s", out);
	dt = (t1 - t0) / 1e6;
	dl = l1 - l0;
	TH_LOG("over ~8 s: powercap tree %.3f J, LIST_VMS %.3f J", dt, dl);
	EXPECT_GT(dl, 20.0);
	/*
	 * Each pair is the tree right after a rewrite and vmraplctl's
	 * LIST_VMS right after that: what differs is how long vmraplctl
	 * takes to start, a few percent of 8 s at worst under TCG.
	 */
	EXPECT_LT(dt > dl ? dt - dl : dl - dt, 0.05 * dl)
		TH_LOG("tree %.3f J vs LIST_VMS %.3f J", dt, dl);
	kill(exp, SIGTERM);
	waitpid(exp, NULL, 0);
	vrp_stop(&p);
}

TEST_HARNESS_MAIN
