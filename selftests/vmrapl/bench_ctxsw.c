// SPDX-License-Identifier: GPL-2.0
/*
 * Rig benchmark (rig.mode=bench only): context-switch throughput with
 * vmrapl's sched_switch probe in place.
 *
 * Two threads pinned to one CPU ping-pong a byte over two pipes; every
 * round trip is two context switches.  Configurations, alternated in
 * every round:
 *   U  vmrapl unloaded
 *   L  vmrapl loaded, nothing attached
 *   V  vmrapl loaded, 64 idle VMs (1 vCPU, HLT) attached, in 4 processes
 *   C  control: vmrapl unloaded, the same 64 VMs running unattached
 * C separates what the VMs themselves cost (their threads, timers, KVM)
 * from what vmrapl costs.  TCG timing is emulated: only ratios within a
 * round mean something.
 *
 * Output: "BENCH ctxsw round=R config=X sps=N vms=N" per measurement,
 * "BENCH ctxsw_info ..." once; TAP lines for the rig.
 *
 * Instruction-count mode (the rig's icount variant, VMRAPL_RIG_VARIANT=
 * icount, whose QEMU loads the vr-icount TCG plugin,
 * userspace/qemu/plugins/vr-icount.c): instead of timing, the ping thread
 * executes a marker instruction, exactly ICOUNT_TRIPS round trips, and
 * another marker, for U, L and V in each of ICOUNT_ROUNDS rounds.  The
 * plugin reports every vCPU's instruction count at each marker; the host
 * (bench/rig/collect.sh) divides the difference by the switches this
 * program counted (getrusage of both threads over the window).  Output:
 * "BENCH ctxsw_icount round=R config=X trips=N switches=S ticks=T
 * mark=0xIIII,0xJJJJ vms=N" per window, with the two markers' ids.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libvmrapl.h"
#include "vr_bench.h"

#define ROUNDS		5
#define WINDOW_MS	2000
#define WARMUP_MS	200
#define NR_VMS		64
#define NR_PROCS	4

static int pp_cpu;
static volatile int pp_stop;
static int p1[2], p2[2];
static unsigned long long pp_trips;
static volatile unsigned long long pp_live;	/* trips so far, for sub-windows */
#define SUB_MS		100
#define NR_SUB		(WINDOW_MS / SUB_MS)

static void *pp_pong(void *arg)
{
	char c;

	(void)arg;
	vr_pin_self(pp_cpu);
	for (;;) {
		if (read(p1[0], &c, 1) != 1 || c == 'q')
			break;
		if (write(p2[1], &c, 1) != 1)
			break;
	}
	return NULL;
}

static void *pp_ping(void *arg)
{
	unsigned long long n = 0;
	char c = 'p';

	(void)arg;
	vr_pin_self(pp_cpu);
	while (!pp_stop) {
		if (write(p1[1], &c, 1) != 1 || read(p2[0], &c, 1) != 1)
			break;
		n++;
		pp_live = n;
	}
	pp_trips = n;
	c = 'q';
	if (write(p1[1], &c, 1) != 1)
		perror("write");
	return NULL;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * Context switches per second on pp_cpu over WINDOW_MS; *p90 gets the
 * 90th percentile of the SUB_MS sub-windows' rates.  Interference from
 * outside (the host running other jobs on the CPUs that emulate the
 * rig's) only ever lowers a sub-window, so the upper sub-windows are the
 * less disturbed estimate.
 */
static double pingpong(double *p90)
{
	double sub[NR_SUB];
	unsigned long long c0, c1;
	uint64_t t0, t1, s0, s1;
	pthread_t a, b;
	int k;

	if (pipe(p1) || pipe(p2))
		return -1;
	pp_stop = 0;
	pthread_create(&b, NULL, pp_pong, NULL);
	/* Warm up: a first short run, discarded. */
	pthread_create(&a, NULL, pp_ping, NULL);
	vr_sleep_ms(WARMUP_MS);
	pp_stop = 1;
	pthread_join(a, NULL);
	pthread_join(b, NULL);

	pp_stop = 0;
	pp_live = 0;
	pthread_create(&b, NULL, pp_pong, NULL);
	t0 = vr_now_ns();
	pthread_create(&a, NULL, pp_ping, NULL);
	s0 = t0;
	c0 = 0;
	for (k = 0; k < NR_SUB; k++) {
		vr_sleep_ms(SUB_MS);
		s1 = vr_now_ns();
		c1 = pp_live;
		sub[k] = 2.0 * (c1 - c0) * 1e9 / (double)(s1 - s0);
		s0 = s1;
		c0 = c1;
	}
	pp_stop = 1;
	pthread_join(a, NULL);
	t1 = vr_now_ns();
	pthread_join(b, NULL);
	close(p1[0]);
	close(p1[1]);
	close(p2[0]);
	close(p2[1]);
	qsort(sub, NR_SUB, sizeof(sub[0]), cmp_dbl);
	*p90 = sub[(NR_SUB * 9 + 9) / 10 - 1];
	return 2.0 * pp_trips * 1e9 / (double)(t1 - t0);
}

/*
 * ---- instruction-count mode -------------------------------------------
 *
 * A marker is "nopl 0x5652IIII(%rax)" (0f 1f 80 + disp32): a 7-byte
 * architectural no-op that touches no memory, recognised by the vr-icount
 * plugin, IIII being its id: here the configuration's letter in the high
 * byte and 1 (start) or 2 (end) in the low one.  The id must be an
 * immediate, hence one asm statement per id.
 */
#define ICOUNT_ROUNDS	3
#define ICOUNT_WARMUP	2000
#define ICOUNT_TRIPS	20000

#define VR_MARK(id)							\
	do {								\
		asm volatile(".byte 0x0f, 0x1f, 0x80, (%c0) & 0xff, ((%c0) >> 8) & 0xff, 0x52, 0x56" \
			     : : "i" (id) : "memory");			\
	} while (0)
#define VR_MARK_ID(cfg, end)	(((cfg) << 8) | ((end) ? 2 : 1))

static void icount_mark(char cfg, bool end)
{
	switch (cfg) {
	case 'U':
		if (end)
			VR_MARK(VR_MARK_ID('U', 1));
		else
			VR_MARK(VR_MARK_ID('U', 0));
		break;
	case 'L':
		if (end)
			VR_MARK(VR_MARK_ID('L', 1));
		else
			VR_MARK(VR_MARK_ID('L', 0));
		break;
	case 'V':
		if (end)
			VR_MARK(VR_MARK_ID('V', 1));
		else
			VR_MARK(VR_MARK_ID('V', 0));
		break;
	}
}

static long thread_switches(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		return -1;
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

/* Local timer interrupts of @cpu so far (/proc/interrupts, "LOC:"). */
static long long cpu_ticks(int cpu)
{
	char line[4096];
	long long v = -1;
	FILE *f = fopen("/proc/interrupts", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *end;
		int i;

		while (*p == ' ')
			p++;
		if (strncmp(p, "LOC:", 4))
			continue;
		p += 4;
		for (i = 0; i <= cpu; i++) {
			v = strtoll(p, &end, 10);
			if (end == p) {
				v = -1;
				break;
			}
			p = end;
		}
		break;
	}
	fclose(f);
	return v;
}

/* vmrapl's load address from /proc/modules, to check the plugin's idea of the module area. */
static unsigned long long vmrapl_addr(void)
{
	unsigned long long a = 0;
	char line[512];
	FILE *f = fopen("/proc/modules", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "vmrapl ", 7)) {
			char *p = strstr(line, " 0x");

			if (p)
				a = strtoull(p + 1, NULL, 16);
			break;
		}
	fclose(f);
	return a;
}

/*
 * The kernel's text symbols, sorted, as "vr-icount-sym 0xSTART 0xEND NAME
 * [MODULE]" lines, handed to the vr-icount plugin with its symbol marker
 * (buffer in %rdi, length in %rsi) so that the host can name the
 * addresses of its profile (rig.prof=1 on the kernel command line, which
 * run.sh sets with RIG_ICOUNT_PROF=1).
 */
struct ksym {
	unsigned long long addr;
	char *name;
};

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static bool icount_prof(void)
{
	char line[4096] = "";
	FILE *f = fopen("/proc/cmdline", "r");

	if (!f)
		return false;
	if (!fgets(line, sizeof(line), f))
		line[0] = 0;
	fclose(f);
	return strstr(line, "rig.prof=1") != NULL;
}

static void icount_syms(void)
{
	size_t n = 0, cap = 0, len = 0, i;
	struct ksym *v = NULL;
	char line[512], *buf;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a;
		char type, name[400];

		line[strcspn(line, "\n")] = 0;
		if (sscanf(line, "%llx %c %399[^\n]", &a, &type, name) != 3 || !a ||
		    !strchr("tTwW", type))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 65536;
			v = realloc(v, cap * sizeof(*v));
			if (!v)
				goto out;
		}
		v[n].addr = a;
		v[n].name = strdup(name);
		len += strlen(name) + 64;
		n++;
	}
	qsort(v, n, sizeof(*v), cmp_ksym);
	buf = malloc(len + 1);
	if (buf) {
		size_t off = 0;
		register unsigned long long rdi asm("rdi");
		register unsigned long long rsi asm("rsi");

		for (i = 0; i < n; i++) {
			unsigned long long end = v[i].addr;
			size_t j;

			for (j = i + 1; j < n && end == v[i].addr; j++)
				end = v[j].addr;
			off += sprintf(buf + off, "vr-icount-sym 0x%llx 0x%llx %s\n",
				       v[i].addr, end == v[i].addr ? end + 1 : end, v[i].name);
		}
		rdi = (unsigned long)buf;
		rsi = off;
		asm volatile(".byte 0x0f, 0x1f, 0x80, 0x00, 0x53, 0x52, 0x56"
			     : : "r" (rdi), "r" (rsi) : "memory");
		free(buf);
	}
	for (i = 0; i < n; i++)
		free(v[i].name);
out:
	free(v);
	fclose(f);
}

static char ic_cfg;
static long ic_ping_sw, ic_pong_sw;
static long long ic_ticks;

/*
 * Pong of the counted window: 'w' is a warm-up trip, 's' the window's
 * first trip (the thread's switch count is taken before it replies, so
 * the switch after that reply is inside the window), 'p' the others, 'e'
 * the end (taken again: its N blocking reads since 's' were all in the
 * window), 'q' quit.
 */
static void *ic_pong(void *arg)
{
	long s0 = 0;
	char c;

	(void)arg;
	vr_pin_self(pp_cpu);
	for (;;) {
		if (read(p1[0], &c, 1) != 1 || c == 'q')
			break;
		if (c == 's')
			s0 = thread_switches();
		else if (c == 'e')
			ic_pong_sw = thread_switches() - s0;
		if (write(p2[1], &c, 1) != 1)
			break;
	}
	return NULL;
}

static int ic_trip(char c)
{
	return write(p1[1], &c, 1) == 1 && read(p2[0], &c, 1) == 1 ? 0 : -1;
}

static void *ic_ping(void *arg)
{
	long s0, s1;
	long long t0, t1;
	int i, bad = 0;

	(void)arg;
	vr_pin_self(pp_cpu);
	for (i = 0; i < ICOUNT_WARMUP; i++)
		bad |= ic_trip('w');
	t0 = cpu_ticks(pp_cpu);
	s0 = thread_switches();
	icount_mark(ic_cfg, false);
	bad |= ic_trip('s');
	for (i = 1; i < ICOUNT_TRIPS; i++)
		bad |= ic_trip('p');
	icount_mark(ic_cfg, true);
	s1 = thread_switches();
	t1 = cpu_ticks(pp_cpu);
	bad |= ic_trip('e');
	ic_ping_sw = s1 - s0;
	ic_ticks = t0 >= 0 && t1 >= 0 ? t1 - t0 : -1;
	i = 'q';
	if (write(p1[1], &i, 1) != 1)
		bad = 1;
	return (void *)(long)bad;
}

/* One counted window of @cfg; the switches in it, or -1. */
static long icount_window(char cfg)
{
	pthread_t a, b;
	void *bad;

	if (pipe(p1) || pipe(p2))
		return -1;
	ic_cfg = cfg;
	ic_ping_sw = -1;
	ic_pong_sw = -1;
	pthread_create(&b, NULL, ic_pong, NULL);
	pthread_create(&a, NULL, ic_ping, NULL);
	pthread_join(a, &bad);
	pthread_join(b, NULL);
	close(p1[0]);
	close(p1[1]);
	close(p2[0]);
	close(p2[1]);
	if (bad || ic_ping_sw < 0 || ic_pong_sw < 0)
		return -1;
	return ic_ping_sw + ic_pong_sw;
}

static int icount_main(void);

/* A process holding @n idle VMs; attaches them when @attach. */
struct vmproc {
	pid_t pid;
	int ctl;	/* write end; closing it stops the child */
};

static void vmproc_child(int n, bool attach, int rfd, int wfd)
{
	struct vb_vm *vms = calloc(n, sizeof(*vms));
	int devfd = -1, i, ok = 0;
	char c;

	if (!vms || vb_init())
		_exit(10);
	if (attach) {
		devfd = vr_open_dev();
		if (devfd < 0)
			_exit(11);
	}
	for (i = 0; i < n; i++) {
		if (vb_vm_create(&vms[i], 1))
			_exit(12);
		if (attach) {
			vms[i].vrfd = vr_attach(devfd, vms[i].vm, 1,
						VMRAPL_REGSET_INTEL, 0);
			if (vms[i].vrfd < 0)
				_exit(13);
		}
		if (vb_vm_start(&vms[i]))
			_exit(14);
		ok++;
	}
	c = vms[0].irqchip ? 'i' : 'u';
	if (write(wfd, &c, 1) != 1)
		_exit(15);
	/* Run until the parent closes the control pipe. */
	while (read(rfd, &c, 1) > 0)
		;
	for (i = 0; i < ok; i++)
		vb_vm_destroy(&vms[i]);
	if (devfd >= 0)
		close(devfd);
	_exit(0);
}

static int vms_start(struct vmproc *p, bool attach, char *kind)
{
	int i, per = NR_VMS / NR_PROCS;

	for (i = 0; i < NR_PROCS; i++) {
		int ctl[2], rdy[2];
		char c = 0;

		if (pipe(ctl) || pipe(rdy))
			return -errno;
		p[i].pid = fork();
		if (p[i].pid < 0)
			return -errno;
		if (!p[i].pid) {
			int j;

			/* Only the parent may hold a sibling's control pipe. */
			for (j = 0; j < i; j++)
				close(p[j].ctl);
			close(ctl[1]);
			close(rdy[0]);
			vmproc_child(per, attach, ctl[0], rdy[1]);
		}
		close(ctl[0]);
		close(rdy[1]);
		p[i].ctl = ctl[1];
		if (read(rdy[0], &c, 1) != 1) {
			close(rdy[0]);
			return -ECHILD;
		}
		close(rdy[0]);
		*kind = c;
	}
	/* Let every vCPU reach its HLT and block. */
	vr_sleep_ms(500);
	return 0;
}

static int vms_stop(struct vmproc *p)
{
	int i, status, bad = 0;

	for (i = 0; i < NR_PROCS; i++) {
		if (p[i].pid <= 0)
			continue;
		close(p[i].ctl);
		waitpid(p[i].pid, &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
		p[i].pid = 0;
	}
	return bad ? -ECHILD : 0;
}

/*
 * From the previous configuration (in the order U, L, V, C) to @cfg:
 * U unloads vmrapl, L loads it, V starts the VMs attached, C runs them
 * unattached with vmrapl unloaded.  @nvms: the VMs running.  Returns
 * the number of steps that failed.
 */
static int enter_config(char cfg, struct vmproc *procs, char *kind, int *nvms)
{
	int bad = 0;

	switch (cfg) {
	case 'U':
		if (vr_module_loaded() && vr_unload())
			bad++;
		break;
	case 'L':
		if (!vr_module_loaded() && vr_load(""))
			bad++;
		break;
	case 'V':
		if (vms_start(procs, true, kind))
			bad++;
		*nvms = vr_vms_count("attached");
		if (*nvms != NR_VMS)
			bad++;
		break;
	case 'C':
		if (vms_stop(procs) || vr_unload())
			bad++;
		if (vms_start(procs, false, kind))
			bad++;
		*nvms = NR_VMS;
		break;
	}
	return bad;
}

/* A round's end: its VMs stopped, its TAP line.  1 when it failed. */
static int round_done(struct vmproc *procs, int bad, int t, int r)
{
	if (vms_stop(procs))
		bad++;
	printf("%sok %d round %d\n", bad ? "not " : "", t, r);
	fflush(stdout);
	return bad ? 1 : 0;
}

int main(void)
{
	static const char cfgs[] = "ULVC";
	struct vmproc procs[NR_PROCS] = { 0 };
	int r, c, ncpu = sysconf(_SC_NPROCESSORS_ONLN), fails = 0, t = 0;
	uint64_t start = vr_now_ns();
	char kind = '?';

	if (vr_rig_variant("icount"))
		return icount_main();
	printf("TAP version 13\n1..%d\n", 1 + ROUNDS);
	if (vb_init() || !getenv("VMRAPL_KO")) {
		printf("ok 1 # SKIP no /dev/kvm or no VMRAPL_KO\n");
		for (r = 0; r < ROUNDS; r++)
			printf("ok %d # SKIP\n", r + 2);
		return 4;
	}
	pp_cpu = ncpu - 1;
	vr_pin_self(0);
	printf("BENCH ctxsw_info cpu=%d ncpus=%d vms=%d procs=%d rounds=%d window_ms=%d\n",
	       pp_cpu, ncpu, NR_VMS, NR_PROCS, ROUNDS, WINDOW_MS);
	printf("ok %d setup\n", ++t);
	fflush(stdout);

	for (r = 1; r <= ROUNDS; r++) {
		int bad = 0;

		for (c = 0; cfgs[c]; c++) {
			char cfg = cfgs[c];
			int nvms = 0;
			double sps, p90 = 0;

			bad += enter_config(cfg, procs, &kind, &nvms);
			vr_sleep_ms(300);	/* let the transition settle */
			sps = pingpong(&p90);
			printf("BENCH ctxsw round=%d config=%c sps=%.1f sps_p90=%.1f vms=%d irqchip=%c\n",
			       r, cfg, sps, p90, nvms, cfg == 'V' || cfg == 'C' ? kind : '-');
			fflush(stdout);
		}
		fails += round_done(procs, bad, ++t, r);
	}
	/* /init unloads vmrapl afterwards and expects it loaded. */
	if (!vr_module_loaded())
		vr_load("");
	printf("BENCH ctxsw_done seconds=%.1f\n", (vr_now_ns() - start) / 1e9);
	return fails ? 1 : 0;
}

/*
 * The instruction-count mode: U, L, V in every round, ICOUNT_TRIPS round
 * trips between two markers each.  The counts themselves are the
 * plugin's, on the host.
 */
static int icount_main(void)
{
	static const char cfgs[] = "ULV";
	struct vmproc procs[NR_PROCS] = { 0 };
	int r, c, ncpu = sysconf(_SC_NPROCESSORS_ONLN), fails = 0, t = 0;
	uint64_t start = vr_now_ns();
	bool prof = icount_prof();
	char kind = '?';

	printf("TAP version 13\n1..%d\n", 1 + ICOUNT_ROUNDS);
	if (vb_init() || !getenv("VMRAPL_KO")) {
		printf("ok 1 # SKIP no /dev/kvm or no VMRAPL_KO\n");
		for (r = 0; r < ICOUNT_ROUNDS; r++)
			printf("ok %d # SKIP\n", r + 2);
		return 4;
	}
	pp_cpu = ncpu - 1;
	vr_pin_self(0);
	printf("BENCH ctxsw_icount_info cpu=%d ncpus=%d vms=%d procs=%d rounds=%d trips=%d warmup=%d\n",
	       pp_cpu, ncpu, NR_VMS, NR_PROCS, ICOUNT_ROUNDS, ICOUNT_TRIPS, ICOUNT_WARMUP);
	printf("ok %d setup\n", ++t);
	fflush(stdout);

	for (r = 1; r <= ICOUNT_ROUNDS; r++) {
		int bad = 0;

		for (c = 0; cfgs[c]; c++) {
			char cfg = cfgs[c];
			int nvms = 0;
			long sw;

			bad += enter_config(cfg, procs, &kind, &nvms);
			vr_sleep_ms(300);	/* let the transition settle */
			sw = icount_window(cfg);
			if (sw <= 0)
				bad++;
			if (prof)
				icount_syms();	/* vmrapl moves with every load */
			printf("BENCH ctxsw_icount round=%d config=%c trips=%d switches=%ld ticks=%lld mark=0x%04x,0x%04x vms=%d irqchip=%c vmrapl_at=0x%llx\n",
			       r, cfg, ICOUNT_TRIPS, sw, ic_ticks, VR_MARK_ID(cfg, 0),
			       VR_MARK_ID(cfg, 1), nvms, cfg == 'V' ? kind : '-',
			       vmrapl_addr());
			fflush(stdout);
		}
		fails += round_done(procs, bad, ++t, r);
	}
	/* /init unloads vmrapl afterwards and expects it loaded. */
	if (!vr_module_loaded())
		vr_load("");
	printf("BENCH ctxsw_icount_done seconds=%.1f\n", (vr_now_ns() - start) / 1e9);
	return fails ? 1 : 0;
}
