// SPDX-License-Identifier: GPL-2.0
/*
 * The host tools in the rig: vmraplctl (info, list, top, stats, set, exit
 * codes) and vmrapl-exporter (static, or dynamic with its libraries, when
 * it was built): /metrics over loopback and the --powercap-tree files.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "libvmrapl-host.h"
#include "vr_kvm.h"

#define CTL	"/bin/vmraplctl"
#define EXPORTER "/bin/vmrapl-exporter"

static char out[65536];

/* Run a shell command; stdout and stderr in out[], exit status back. */
static int run(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	strncat(cmd, " 2>&1", sizeof(cmd) - strlen(cmd) - 1);
	return vr_cmd_output(cmd, out, sizeof(out));
}

/*
 * vmraplctl @argv as uid/gid 1000 ("tester") with @ngroups supplementary
 * groups (the rig's kvm is 108), its output in out[]; its exit status, -1
 * when it did not exit.
 */
static int run_as(char *const argv[], const gid_t *groups, int ngroups)
{
	int status, pfd[2];
	ssize_t n, got = 0;
	pid_t pid;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		close(pfd[0]);
		if (setgroups(ngroups, groups) || setgid(1000) || setuid(1000))
			_exit(100);
		execv(CTL, argv);
		_exit(101);
	}
	close(pfd[1]);
	while (got < (ssize_t)sizeof(out) - 1 &&
	       (n = read(pfd[0], out + got, sizeof(out) - 1 - got)) > 0)
		got += n;
	out[got] = 0;
	close(pfd[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* As "tester", outside group kvm. */
static int run_unprivileged(char *const argv[])
{
	return run_as(argv, NULL, 0);
}

/* As a VMM's user: group kvm, no capability. */
static int run_kvm_group(char *const argv[])
{
	static const gid_t kvm = 108;

	return run_as(argv, &kvm, 1);
}


/* A module parameter's value, "" when it cannot be read. */
static void param(const char *name, char *buf, size_t len)
{
	buf[0] = 0;
	vmrapl_host_param_get(name, buf, len);
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

/*
 * The labels that select the VM named @label in out[]: its name and its
 * id (from vmrapl_vm_info), as in 'vm="busy",id="3"'.
 */
static const char *vm_sel(const char *label)
{
	static char sel[192];
	char key[160];
	const char *l;
	long long id = -1;

	snprintf(key, sizeof(key), "vmrapl_vm_info{vm=\"%s\",id=\"", label);
	l = strstr(out, key);
	if (l)
		id = atoll(l + strlen(key));
	snprintf(sel, sizeof(sel), "vm=\"%s\",id=\"%lld\"", label, id);
	return sel;
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

/* The exporter's stderr, for the tests' logs. */
#define EXPORTER_LOG "/tmp/vmrapl-exporter.log"

static pid_t start_exporter(const char *tree, bool vcpu_metrics)
{
	char *argv[10];
	int n = 0;
	pid_t pid;

	argv[n++] = (char *)"vmrapl-exporter";
	argv[n++] = (char *)"--listen";
	argv[n++] = (char *)"127.0.0.1:9877";
	if (vcpu_metrics)
		argv[n++] = (char *)"--vcpu-metrics";
	if (tree) {
		argv[n++] = (char *)"--powercap-tree";
		argv[n++] = (char *)tree;
		argv[n++] = (char *)"--powercap-interval";
		argv[n++] = (char *)"0.1";
	}
	argv[n] = NULL;
	pid = fork();
	if (!pid) {
		int fd = open(EXPORTER_LOG, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd >= 0)
			dup2(fd, 2);
		execv(EXPORTER, argv);
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
	EXPECT_GT(vr_json_num(vm, "pkg"), 0) TH_LOG("%s", out);
	EXPECT_GT(vr_json_num(vm ? strstr(vm, "\"power_w\"") : NULL, "pkg"), 0)
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
	EXPECT_GT(vr_json_num(strstr(out, "\"power_w\""), "sampled"), 0);

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
	EXPECT_GT(vr_json_num(s, "pkg"), 0) TH_LOG("%s", out);
	EXPECT_GT(vr_json_num(s, "runtime_s"), 0) TH_LOG("%s", out);
	EXPECT_GT(vr_json_num(s, "busy"), 0.2) TH_LOG("%s", out);
	EXPECT_GT(vr_json_num(s ? strstr(s, "\"power_w\"") : NULL, "pkg"), 0)
		TH_LOG("%s", out);
	/* vCPU energy never exceeds the VM's (overhead included). */
	EXPECT_LE(vr_json_num(s, "pkg"),
		  vr_json_num(strstr(out, "\"energy_j\""), "pkg") + 1e-6)
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

	/* Group kvm opens the device, but the books need CAP_PERFMON. */
	EXPECT_EQ(0, run_kvm_group(info)) TH_LOG("%s", out);
	EXPECT_EQ(3, run_kvm_group(list)) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "CAP_PERFMON")) TH_LOG("%s", out);
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
	const char *s;
	time_t t_load;
	double e0, e1;
	struct vrp p;
	pid_t exp;

	if (access(EXPORTER, X_OK))
		SKIP(return, "no vmrapl-exporter in the initramfs");
	t_load = time(NULL);
	ASSERT_EQ(0, vr_reload(NULL));
	/* /init brought lo up: the rig has no NIC. */
	ASSERT_EQ(0, start_vm(&p));
	exp = start_exporter(NULL, false);
	ASSERT_LE(0, exp);
	ASSERT_EQ(0, scrape()) TH_LOG("%s", out);
	/* The counters' start time: the reload above, to the second. */
	s = strstr(out, "\nvmrapl_module_load_time_seconds ");
	ASSERT_NE(NULL, s) TH_LOG("%s", out);
	s = strchr(s + 1, ' ');
	EXPECT_TRUE(fabs(atof(s) - (double)t_load) < 3.0)
		TH_LOG("load time %.3f, reloaded at %ld", atof(s), (long)t_load);
	EXPECT_NE(NULL, strstr(out, "# HELP vmrapl_vm_energy_joules_total "))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "# TYPE vmrapl_vm_energy_joules_total counter\n"));
	EXPECT_NE(NULL, strstr(out, "vmrapl_vm_energy_joules_total{vm=\""));
	EXPECT_NE(NULL, strstr(out, "# TYPE vmrapl_vm_overhead_energy_joules_total counter\n"));
	EXPECT_NE(NULL, strstr(out, "# TYPE vmrapl_package_energy_joules_total counter\n"));
	EXPECT_NE(NULL, strstr(out, "vmrapl_package_energy_joules_total{package=\"0\",domain=\"pkg\"}"));
	EXPECT_NE(NULL, strstr(out, "vmrapl_package_unattributed_energy_joules_total{package=\"1\",kind=\"idle\",domain=\"pkg\"}"));
	EXPECT_NE(NULL, strstr(out, "vmrapl_source_info{source=\"estimate\",estimated=\"true\"} 1"));
	EXPECT_NE(NULL, strstr(out, "# TYPE vmrapl_vm_info gauge\n"));
	EXPECT_NE(NULL, strstr(out, ",attached=\"true\"} 1"));
	/* Per-vCPU series only with --vcpu-metrics. */
	EXPECT_EQ(NULL, strstr(out, "vmrapl_vm_vcpu_energy_joules_total"))
		TH_LOG("%s", out);

	/* The busy VM's counter grows between two scrapes. */
	vm_label(p.pid, label, sizeof(label));
	ASSERT_NE(0, label[0]) TH_LOG("no vmrapl_vm_info for pid %d:\n%s",
				       p.pid, out);
	snprintf(series, sizeof(series),
		 "vmrapl_vm_energy_joules_total{%s,domain=\"pkg\"}",
		 vm_sel(label));
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

/* Did the exporter's stderr mention @what?  Its lines in out[]. */
static bool exporter_said(const char *what)
{
	return run("grep -F -e '%s' " EXPORTER_LOG, what) == 0;
}

#define VMM "/bin/vmrapl-vmm"

/* vmrapl-vmm with @argv (argv[0] is VMM), its stdout and stderr dropped. */
static pid_t start_vmm(char *const argv[])
{
	pid_t pid = fork();

	if (!pid) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execv(VMM, argv);
		_exit(127);
	}
	return pid;
}

/*
 * The sum of the per-vCPU series of @label in out[] for @domain (-1 when
 * vCPU 0 has none), and how many vCPUs have one.
 */
static double vcpu_sum(const char *label, const char *domain, int *nr)
{
	char series[256];
	double sum = 0, v;

	for (*nr = 0;; (*nr)++) {
		snprintf(series, sizeof(series),
			 "vmrapl_vm_vcpu_energy_joules_total{%s,vcpu=\"%d\",domain=\"%s\"}",
			 vm_sel(label), *nr, domain);
		v = metric(series);
		if (v < 0)
			return *nr ? sum : -1;
		sum += v;
	}
}

/*
 * One scrape's check of a VM's vCPU series against its VM series: the
 * vCPUs' package energy is the VM's minus its overhead, less at most one
 * uJ per vCPU and one for the VM's own rounding (each value is rounded
 * down to a uJ from the exact books, and all come from one GET_VM_STATS).
 */
static void check_vcpu_sum(struct __test_metadata *_metadata,
			   const char *label, int nr_vcpus, double *vcpus_j)
{
	char series[256];
	double vm, ovh, gap;
	int nr;

	snprintf(series, sizeof(series),
		 "vmrapl_vm_energy_joules_total{%s,domain=\"pkg\"}",
		 vm_sel(label));
	vm = metric(series);
	snprintf(series, sizeof(series),
		 "vmrapl_vm_overhead_energy_joules_total{%s,domain=\"pkg\"}",
		 vm_sel(label));
	ovh = metric(series);
	*vcpus_j = vcpu_sum(label, "pkg", &nr);
	ASSERT_LE(0, vm) TH_LOG("no VM series for %s:\n%s", label, out);
	ASSERT_LE(0, ovh) TH_LOG("no overhead series for %s:\n%s", label, out);
	ASSERT_EQ(nr_vcpus, nr) TH_LOG("%d vCPU series for %s:\n%s", nr,
				       label, out);
	gap = (vm - ovh) - *vcpus_j;
	TH_LOG("%s: VM %.6f J, overhead %.6f J, vCPUs %.6f J, gap %.6f J",
	       label, vm, ovh, *vcpus_j, gap);
	EXPECT_GE(gap, -1e-9) TH_LOG("the vCPUs sum to more than the VM");
	EXPECT_LE(gap, (nr_vcpus + 1) * 1e-6 + 1e-9)
		TH_LOG("the vCPUs sum to less than the VM minus its overhead");
}

TEST(exporter_vcpu_metrics)
{
	char *const vmm_argv[] = { VMM, "--name", "vcpus2", "--vcpus", "2",
				   "--guest", "spin", "--overhead-thread", "20",
				   "--duration", "120", NULL };
	double s0, s1, v0, v1, ovh;
	char label[128], series[256];
	pid_t exp, vmm;
	unsigned int d;
	int i, nr;

	if (access(EXPORTER, X_OK))
		SKIP(return, "no vmrapl-exporter in the initramfs");
	if (access(VMM, X_OK))
		SKIP(return, "no vmrapl-vmm in the initramfs");
	ASSERT_EQ(0, vr_reload(NULL));
	vmm = start_vmm(vmm_argv);
	ASSERT_LT(0, vmm);
	exp = start_exporter(NULL, true);
	ASSERT_LT(0, exp);
	/* Until the VMM has attached its VM. */
	label[0] = 0;
	for (i = 0; i < 50 && !label[0]; i++) {
		ASSERT_EQ(0, scrape()) TH_LOG("%s", out);
		vm_label(vmm, label, sizeof(label));
		if (!label[0])
			vr_sleep_ms(200);
	}
	ASSERT_STREQ("vcpus2", label) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "# HELP vmrapl_vm_vcpu_energy_joules_total "))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "# TYPE vmrapl_vm_vcpu_energy_joules_total counter\n"));
	EXPECT_NE(NULL, strstr(out, "vcpus=\"2\",attached=\"true\"} 1"));

	/* One series per vCPU for each domain the VM series has, no other. */
	for (d = 0; d < VMRAPL_NR_DOMAINS; d++) {
		const char *dom = vmrapl_host_domain_name(d);

		snprintf(series, sizeof(series),
			 "vmrapl_vm_energy_joules_total{%s,domain=\"%s\"}",
			 vm_sel(label), dom);
		vcpu_sum(label, dom, &nr);
		EXPECT_EQ(metric(series) >= 0 ? 2 : 0, nr)
			TH_LOG("domain %s: %d vCPU series:\n%s", dom, nr, out);
	}

	check_vcpu_sum(_metadata, label, 2, &s0);
	snprintf(series, sizeof(series),
		 "vmrapl_vm_vcpu_energy_joules_total{%s,vcpu=\"1\",domain=\"pkg\"}",
		 vm_sel(label));
	v0 = metric(series);
	vr_sleep_ms(1500);
	ASSERT_EQ(0, scrape()) TH_LOG("%s", out);
	check_vcpu_sum(_metadata, label, 2, &s1);
	v1 = metric(series);
	/* Two spinning vCPUs: each well over 1 J in 1.5 s under the estimate. */
	EXPECT_GT(s1 - s0, 2.0) TH_LOG("vCPUs: %.6f then %.6f J", s0, s1);
	EXPECT_GT(v1 - v0, 1.0) TH_LOG("%s: %.6f then %.6f J", series, v0, v1);
	/* The overhead thread makes the subtraction above matter. */
	snprintf(series, sizeof(series),
		 "vmrapl_vm_overhead_energy_joules_total{%s,domain=\"pkg\"}",
		 vm_sel(label));
	ovh = metric(series);
	EXPECT_GT(ovh, 0) TH_LOG("%s: %.6f J", series, ovh);
	/* This body too, for the host's "promtool check metrics". */
	printf("### METRICS BEGIN\n%s%s### METRICS END\n", out,
	       out[0] && out[strlen(out) - 1] != '\n' ? "\n" : "");
	fflush(stdout);
	EXPECT_FALSE(exporter_said("--vcpu-metrics")) TH_LOG("%s", out);

	kill(exp, SIGTERM);
	waitpid(exp, NULL, 0);
	kill(vmm, SIGTERM);
	waitpid(vmm, NULL, 0);
}

/* vmrapl's id of the VM whose VMM is @pid, from VMRAPL_LIST_VMS. */
static int vm_id(int fd, pid_t pid, uint64_t *id)
{
	struct vmrapl_vm_entry *e;
	int i, n = vmrapl_host_list_vms(fd, &e);

	if (n < 0)
		return n;
	for (i = 0; i < n && e[i].pid != (uint32_t)pid; i++)
		;
	if (i < n)
		*id = e[i].id;
	free(e);
	return i < n ? 0 : -ENOENT;
}

/* The VM's package energy (uJ, overhead included) from VMRAPL_GET_VM_STATS. */
static int vm_stats_uj(int fd, uint64_t id, double *uj)
{
	struct vmrapl_vcpu_stats *vcpus;
	struct vmrapl_stats st;
	int n = vmrapl_host_vm_stats(fd, id, &st, &vcpus);

	if (n < 0)
		return n;
	free(vcpus);
	*uj = st.energy_uj[VMRAPL_DOM_PKG];
	return 0;
}

/* A tree file's number, -1 when it cannot be read. */
static double read_uj(const char *file)
{
	char buf[64];
	double v = -1;
	FILE *f = fopen(file, "r");

	if (f) {
		if (fgets(buf, sizeof(buf), f))
			v = atof(buf);
		fclose(f);
	}
	return v;
}

/*
 * The VM's tree counter (uJ) right after the exporter rewrote it, and
 * GET_VM_STATS's energy (uJ) right after that.
 */
static int powercap_pair(const char *file, int fd, uint64_t id,
			 double *tree_uj, double *stats_uj)
{
	double prev = -1;
	int i;

	/* Wait for a fresh write of the tree, so both are taken together. */
	for (i = 0; i < 200; i++) {
		*tree_uj = read_uj(file);
		if (prev >= 0 && *tree_uj != prev)
			break;
		prev = *tree_uj;
		vr_sleep_ms(5);
	}
	if (*tree_uj < 0)
		return -ENOENT;
	return vm_stats_uj(fd, id, stats_uj);
}

/* Wait up to @ms for @path to be gone; 0 when it is. */
static int wait_gone(const char *path, int ms)
{
	struct stat st;

	for (; ms > 0; ms -= 20) {
		if (lstat(path, &st) && errno == ENOENT)
			return 0;
		vr_sleep_ms(20);
	}
	return -EEXIST;
}

#define TREE "/tmp/powercap"

TEST(exporter_powercap_tree)
{
	char label[128], label2[128], dir[192], rapl[224], file[256];
	double t0, t1, g0, g1, dt, dg, e;
	struct stat st0, st1;
	struct vrp p, p2;
	uint64_t id, id2;
	int fd, i;
	pid_t exp;

	if (access(EXPORTER, X_OK))
		SKIP(return, "no vmrapl-exporter in the initramfs");
	ASSERT_EQ(0, vr_reload(NULL));
	/*
	 * What a previous run left: a VM directory of a VM that is not
	 * tracked (removed) and a directory that is not the tree's (kept).
	 */
	ASSERT_EQ(0, run("rm -rf " TREE " && mkdir -p " TREE "/ghost/intel-rapl:0 "
			 TREE "/keep && echo 1 > " TREE "/ghost/intel-rapl:0/energy_uj && "
			 "echo package-0 > " TREE "/ghost/intel-rapl:0/name && "
			 "echo note > " TREE "/keep/note")) TH_LOG("%s", out);
	ASSERT_EQ(0, start_vm(&p));
	fd = vr_open_dev();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, vm_id(fd, p.pid, &id));
	exp = start_exporter(TREE, false);
	ASSERT_LT(0, exp);
	ASSERT_EQ(0, scrape()) TH_LOG("%s", out);
	vm_label(p.pid, label, sizeof(label));
	ASSERT_NE(0, label[0]) TH_LOG("%s", out);
	snprintf(dir, sizeof(dir), TREE "/%s", label);
	snprintf(rapl, sizeof(rapl), "%s/intel-rapl:0", dir);
	snprintf(file, sizeof(file), "%s/energy_uj", rapl);
	vr_sleep_ms(500);
	run("cat %s/name", rapl);
	EXPECT_STREQ("package-0\n", out);
	EXPECT_EQ(0, wait_gone(TREE "/ghost", 2000));
	EXPECT_EQ(0, access(TREE "/keep/note", F_OK));

	/* The tree's delta against GET_VM_STATS's over the same window. */
	ASSERT_EQ(0, powercap_pair(file, fd, id, &t0, &g0));
	vr_sleep_ms(8000);
	ASSERT_EQ(0, powercap_pair(file, fd, id, &t1, &g1));
	dt = (t1 - t0) / 1e6;
	dg = (g1 - g0) / 1e6;
	TH_LOG("over ~8 s: powercap tree %.3f J, GET_VM_STATS %.3f J", dt, dg);
	EXPECT_GT(dg, 20.0);
	/*
	 * Each pair is the tree right after a rewrite (polled every 5 ms)
	 * and GET_VM_STATS right after that: the windows differ only by how
	 * late each rewrite was seen, milliseconds against 8 s.
	 */
	EXPECT_LT(dt > dg ? dt - dg : dg - dt, 0.02 * dg)
		TH_LOG("tree %.3f J vs GET_VM_STATS %.3f J", dt, dg);

	/*
	 * A new VM with the same name while the exporter did not look (it is
	 * stopped): the next refresh must give it a new directory, not the
	 * old VM's.
	 */
	ASSERT_EQ(0, lstat(rapl, &st0));
	e = read_uj(file);
	ASSERT_EQ(0, kill(exp, SIGSTOP));
	vrp_stop(&p);
	ASSERT_EQ(0, start_vm(&p2));
	ASSERT_EQ(0, vm_id(fd, p2.pid, &id2));
	EXPECT_NE(id, id2);
	EXPECT_EQ(-ENOENT, vm_id(fd, p.pid, &id));
	ASSERT_EQ(0, kill(exp, SIGCONT));
	ASSERT_EQ(0, scrape()) TH_LOG("%s", out);
	vm_label(p2.pid, label2, sizeof(label2));
	ASSERT_STREQ(label, label2) TH_LOG("%s", out);
	st1 = st0;
	for (i = 0; i < 100; i++) {
		if (!lstat(rapl, &st1) && st1.st_ino != st0.st_ino &&
		    read_uj(file) >= 0)
			break;
		vr_sleep_ms(20);
	}
	EXPECT_NE(st0.st_ino, st1.st_ino) TH_LOG("%s was kept for the new VM",
						 rapl);
	EXPECT_LT(read_uj(file), e) TH_LOG("%s: old VM's %.0f uJ", file, e);

	/* The VM stops: its directory goes at the next refresh. */
	vrp_stop(&p2);
	EXPECT_EQ(0, wait_gone(dir, 3000)) TH_LOG("%s stayed", dir);
	EXPECT_EQ(0, access(TREE "/keep/note", F_OK));
	EXPECT_FALSE(exporter_said("powercap tree")) TH_LOG("%s", out);
	kill(exp, SIGTERM);
	waitpid(exp, NULL, 0);
	close(fd);
}

TEST_HARNESS_MAIN
