// SPDX-License-Identifier: MIT
/*
 * vmrapl-exporter - Prometheus metrics of vmrapl (per-VM virtual RAPL).
 *
 *   vmrapl-exporter [--listen ADDR:PORT] [--device PATH] [--vcpu-metrics]
 *                   [--powercap-tree DIR [--powercap-interval S]]
 *
 * Serves /metrics (text exposition format 0.0.4) from the host-wide
 * ioctls of /dev/vmrapl: GET_INFO, GET_PKG_STATS and LIST_VMS, and with
 * --vcpu-metrics GET_VM_STATS of every VM (one series per vCPU and domain:
 * off by default for its cardinality).  The device is opened per scrape,
 * so the exporter never keeps the module busy.
 *
 * --powercap-tree DIR also writes, once per interval, DIR/<vm>/intel-rapl:0/
 * {name,energy_uj,max_energy_range_uj} for every tracked VM: the layout
 * "scaphandre --vm" reads inside a guest that has DIR/<vm> shared with it.
 * The directory of a VM that is gone is removed at the next refresh, and a
 * name taken over by another VM gets a new directory.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "cgquota.h"
#include "libvmrapl-host.h"
#include "text.h"

/* The package's version, from VERSION (the Makefile passes it). */
#ifndef VMRAPL_VERSION
#define VMRAPL_VERSION	"unknown"
#endif

#if MHD_VERSION < 0x00097002
typedef int mhd_result;
#else
typedef enum MHD_Result mhd_result;
#endif

#define NAME_LEN	TEXT_NAME_LEN
/* The powercap counter wraps like RAPL's sysfs one (about 262 kJ). */
#define PC_MAX_RANGE_UJ	262143328850ull

static const char *opt_device = "/dev/" VMRAPL_DEVICE_NAME;
static const char *opt_tree;
static double opt_tree_interval = 1.0;
static bool opt_vcpu;
static double opt_power_interval = 1.0;
/* Power limits: vmrapl-limitd's records, the cgroup mount and /proc. */
static const char *opt_limit_dir = "/run/vmrapl/limit";
static const char *opt_cgroot = "/sys/fs/cgroup";
static const char *opt_proc = "/proc";

/* ---- a growing text buffer --------------------------------------------- */

struct buf {
	char *p;
	size_t len, cap;
	bool oom;
};

static void bprintf(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void bprintf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	for (;;) {
		size_t room = b->cap - b->len;

		va_start(ap, fmt);
		n = vsnprintf(b->p ? b->p + b->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = true;
			return;
		}
		if ((size_t)n < room) {
			b->len += n;
			return;
		}
		{
			size_t cap = b->cap ? b->cap * 2 : 16384;
			char *np;

			while (cap - b->len <= (size_t)n)
				cap *= 2;
			np = realloc(b->p, cap);
			if (!np) {
				b->oom = true;
				return;
			}
			b->p = np;
			b->cap = cap;
		}
	}
}

/* A label value from a VMM: text_prom_label() (text.h) does it all. */
static void blabel(struct buf *b, const char *s)
{
	char esc[6 * NAME_LEN + 1];

	text_prom_label(s, esc, sizeof(esc));
	bprintf(b, "%s", esc);
}

static void header(struct buf *b, const char *name, const char *type,
		   const char *help)
{
	bprintf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* ---- the host's view ----------------------------------------------------- */

/* GET_VM_STATS of one VM (--vcpu-metrics). */
struct vm_detail {
	int nr_vcpus;			/* < 0: no answer (the VM has gone) */
	struct vmrapl_stats st;
	struct vmrapl_vcpu_stats *vcpus;
};

/*
 * A VM's power limit (GET_VM_LIMIT; limit_uw and window_us the one held,
 * the lower of the operator's and the guest's, 0: none, or a module
 * without limits) and, for a VM with one, whether vmrapl-limitd holds it (its
 * record exists) and its cgroup's cpu.stat throttled_usec (-1: no cgroup
 * found, or no cpu.stat).
 */
struct vm_limit {
	struct vmrapl_limit l;
	bool held;
	long long throttled_us;
};

struct snapshot {
	struct vmrapl_info info;
	struct vmrapl_pkg_stats *pkgs;
	struct vmrapl_pkg_static *pstat;	/* NULL: an older module */
	int nr_pkgs;
	struct vmrapl_vm_entry *vms;
	int nr_vms;
	char (*names)[NAME_LEN];	/* each VM's name (text.h form) */
	char (*uuids)[VMRAPL_HOST_UUID_LEN];	/* QEMU's -uuid, or "" */
	struct vm_detail *detail;	/* per VM, only with --vcpu-metrics */
	struct vm_limit *limits;	/* per VM */
};

static void snapshot_free(struct snapshot *s)
{
	int i;

	for (i = 0; s->detail && i < s->nr_vms; i++)
		free(s->detail[i].vcpus);
	free(s->detail);
	free(s->limits);
	free(s->pkgs);
	free(s->pstat);
	free(s->vms);
	free(s->names);
	free(s->uuids);
	memset(s, 0, sizeof(*s));
}

/*
 * GET_VM_STATS of every listed VM.  A VM that went away since LIST_VMS
 * (ENOENT) is simply left out; any other error leaves that VM's vCPUs out
 * too and is reported on stderr, once until it changes.
 */
static void snapshot_details(struct snapshot *s, int fd)
{
	static int reported;
	int i, n, err = 0;

	for (i = 0; i < s->nr_vms; i++) {
		struct vm_detail *d = &s->detail[i];

		n = vmrapl_host_vm_stats(fd, s->vms[i].id, &d->st, &d->vcpus);
		d->nr_vcpus = n;
		if (n >= 0 || n == -ENOENT)
			continue;
		err = n;
		if (n == reported)
			continue;
		reported = n;
		if (n == -ENOTTY)
			fprintf(stderr, "vmrapl-exporter: --vcpu-metrics: the loaded vmrapl module has no VMRAPL_GET_VM_STATS (it is older than this exporter); no per-vCPU series\n");
		else
			fprintf(stderr, "vmrapl-exporter: --vcpu-metrics: VMRAPL_GET_VM_STATS of VM %llu: %s; its per-vCPU series are left out\n",
				(unsigned long long)s->vms[i].id, strerror(-n));
	}
	if (!err)
		reported = 0;
}

/*
 * VM names (QEMU -name, else comm), cleaned (text.h), and UUIDs (QEMU
 * -uuid, when it has a valid one).  Names need not be unique: the id
 * label tells VMs apart, and a VM keeps its name when another VM with the
 * same name starts.
 */
static void label_vms(struct snapshot *s)
{
	int i;

	for (i = 0; i < s->nr_vms; i++) {
		text_vm_name(s->vms[i].pid, s->names[i], NAME_LEN);
		text_vm_uuid(s->vms[i].pid, s->uuids[i]);
	}
}

/* The cpu.stat throttled_usec of the cgroup that holds VM @i, or -1. */
static long long vm_throttled_us(const struct snapshot *s, int i)
{
	char rel[PATH_MAX], why[PATH_MAX + 160], path[PATH_MAX + 64];
	char line[128];
	long long v = -1;
	FILE *f;

	if (cgq_vm_cgroup(opt_proc, opt_cgroot, (pid_t)s->vms[i].pid, rel,
			  sizeof(rel), why, sizeof(why)))
		return -1;
	snprintf(path, sizeof(path), "%s%s/cpu.stat", opt_cgroot, rel);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "throttled_usec %lld", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* Each VM's limit; for one with a limit, held and throttled time. */
static void snapshot_limits(struct snapshot *s, int fd)
{
	char path[PATH_MAX];
	int i;

	for (i = 0; i < s->nr_vms; i++) {
		struct vm_limit *vl = &s->limits[i];

		uint64_t uw = 0, us = 0;

		/* The limit held: the lower of the operator's and the guest's. */
		if (vmrapl_host_vm_limit_get(fd, s->vms[i].id, &vl->l) == 0)
			vmrapl_host_limit_held(&vl->l, &uw, &us);
		vl->l.limit_uw = uw;
		vl->l.window_us = us;
		if (!uw) {
			memset(&vl->l, 0, sizeof(vl->l));
			continue;
		}
		snprintf(path, sizeof(path), "%s/%llu", opt_limit_dir,
			 (unsigned long long)s->vms[i].id);
		vl->held = !access(path, F_OK);
		vl->throttled_us = vm_throttled_us(s, i);
	}
}

static int snapshot_take(struct snapshot *s, bool vcpus)
{
	int fd, n, err = 0;

	memset(s, 0, sizeof(*s));
	fd = open(opt_device, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, VMRAPL_GET_INFO, &s->info) < 0) {
		err = -errno;
		goto out;
	}
	n = vmrapl_host_pkg_static(fd, &s->pkgs, &s->pstat);
	if (n < 0) {
		err = n;
		goto out;
	}
	s->nr_pkgs = n;
	n = vmrapl_host_list_vms(fd, &s->vms);
	if (n < 0) {
		err = n;
		goto out;
	}
	s->nr_vms = n;
	s->names = calloc(n ? n : 1, NAME_LEN);
	s->uuids = calloc(n ? n : 1, VMRAPL_HOST_UUID_LEN);
	if (!s->names || !s->uuids) {
		err = -ENOMEM;
		goto out;
	}
	label_vms(s);
	s->limits = calloc(n ? n : 1, sizeof(*s->limits));
	if (!s->limits) {
		err = -ENOMEM;
		goto out;
	}
	snapshot_limits(s, fd);
	if (vcpus) {
		s->detail = calloc(n ? n : 1, sizeof(*s->detail));
		if (!s->detail) {
			err = -ENOMEM;
			goto out;
		}
		snapshot_details(s, fd);
	}
out:
	close(fd);
	if (err)
		snapshot_free(s);
	return err;
}

/* ---- /metrics ------------------------------------------------------------ */

/*
 * A VM's energy and overhead (uJ): from its GET_VM_STATS when there is
 * one (--vcpu-metrics), so that they and its vCPUs' come from one read of
 * the VM and the vCPUs never add up to more than the VM; else LIST_VMS.
 */
static const __u64 *vm_energy(const struct snapshot *s, int i)
{
	if (s->detail && s->detail[i].nr_vcpus >= 0)
		return s->detail[i].st.energy_uj;
	return s->vms[i].energy_uj;
}

static const __u64 *vm_overhead(const struct snapshot *s, int i)
{
	if (s->detail && s->detail[i].nr_vcpus >= 0)
		return s->detail[i].st.overhead_uj;
	return s->vms[i].overhead_uj;
}

static void vm_labels(struct buf *b, const struct snapshot *s, int i);

/* The static part (uJ) of a VM's PKG energy, from the same read. */
static __u64 vm_static(const struct snapshot *s, int i)
{
	if (s->detail && s->detail[i].nr_vcpus >= 0)
		return s->detail[i].st.static_uj;
	return s->vms[i].static_uj;
}

/*
 * NAME{[vm labels,]LABELSpart="static"|"dynamic",domain="pkg"}: the PKG
 * energy @uj split into its static part @st and the rest; the two add up
 * to the pkg sample of the total.
 */
static void part_samples(struct buf *b, const struct snapshot *s,
			 const char *name, int vm, const char *labels,
			 __u64 uj, __u64 st)
{
	if (st > uj)
		st = uj;
	bprintf(b, "%s{", name);
	vm_labels(b, s, vm);
	bprintf(b, "%spart=\"static\",domain=\"pkg\"} %.6f\n", labels,
		st / 1e6);
	bprintf(b, "%s{", name);
	vm_labels(b, s, vm);
	bprintf(b, "%spart=\"dynamic\",domain=\"pkg\"} %.6f\n", labels,
		(uj - st) / 1e6);
}

/*
 * vm="NAME",id="ID", of VM @i, and uuid="UUID", when its VMM has one: the
 * labels of every per-VM series, written only here.
 */
static void vm_labels(struct buf *b, const struct snapshot *s, int i)
{
	bprintf(b, "vm=\"");
	blabel(b, s->names[i]);
	bprintf(b, "\",id=\"%llu\",", (unsigned long long)s->vms[i].id);
	if (s->uuids[i][0]) {
		bprintf(b, "uuid=\"");
		blabel(b, s->uuids[i]);
		bprintf(b, "\",");
	}
}

/*
 * One sample per domain the host measures:
 * NAME{[vm="VM",id="ID",]LABELSdomain="D"} VALUE, @labels empty or ending
 * in ','; @vm the VM's index or -1.  @uj in microjoules, or @w in watts.
 */
static void dom_samples(struct buf *b, const struct snapshot *s,
			const char *name, int vm, const char *labels,
			const __u64 *uj, const double *w)
{
	unsigned int dom;

	for (dom = 0; dom < VMRAPL_NR_DOMAINS; dom++) {
		if (!(s->info.domains & (1u << dom)))
			continue;
		bprintf(b, "%s{", name);
		if (vm >= 0)
			vm_labels(b, s, vm);
		bprintf(b, "%sdomain=\"%s\"} ", labels,
			vmrapl_host_domain_name(dom));
		if (uj)
			bprintf(b, "%.6f\n", uj[dom] / 1e6);
		else
			bprintf(b, "%.3f\n", w[dom]);
	}
}

/* ---- power over the exporter's own interval (--power-interval) ---------- */

/*
 * A thread reads LIST_VMS every --power-interval seconds; each VM's power
 * is its energy difference over the last interval, published here for
 * the scrapes.  A VM needs two reads (one interval) to have a power.
 */
struct vm_power {
	uint64_t id;
	double w[VMRAPL_NR_DOMAINS];
};
static pthread_mutex_t power_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vm_power *powers;
static int nr_powers;

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* LIST_VMS once; the count, or a negative errno (then *@vms is NULL). */
static int power_read(struct vmrapl_vm_entry **vms, double *t)
{
	int fd, n;

	*vms = NULL;
	fd = open(opt_device, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = vmrapl_host_list_vms(fd, vms);
	*t = mono_s();
	close(fd);
	return n;
}

static void power_update(const struct vmrapl_vm_entry *a, int na,
			 const struct vmrapl_vm_entry *b, int nb, double dt)
{
	struct vm_power *p = calloc(nb > 0 ? nb : 1, sizeof(*p));
	int i, j, n = 0;
	unsigned int dom;

	if (!p)
		return;
	for (i = 0; i < nb && dt > 0; i++) {
		for (j = 0; j < na && a[j].id != b[i].id; j++)
			;
		if (j == na)
			continue;
		for (dom = 0; dom < VMRAPL_NR_DOMAINS; dom++)
			if (b[i].energy_uj[dom] < a[j].energy_uj[dom])
				break;
		if (dom < VMRAPL_NR_DOMAINS)
			continue;	/* not the same counter any more */
		p[n].id = b[i].id;
		for (dom = 0; dom < VMRAPL_NR_DOMAINS; dom++)
			p[n].w[dom] = (double)(b[i].energy_uj[dom] -
					       a[j].energy_uj[dom]) / 1e6 / dt;
		n++;
	}
	pthread_mutex_lock(&power_lock);
	free(powers);
	powers = p;
	nr_powers = n;
	pthread_mutex_unlock(&power_lock);
}

static volatile sig_atomic_t stopping;

static void sleep_s(double s)
{
	struct timespec ts;

	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
}

static void *power_thread(void *arg)
{
	struct vmrapl_vm_entry *prev = NULL, *cur;
	double tp = 0, tc;
	int np, nc;

	(void)arg;
	np = power_read(&prev, &tp);
	while (!stopping) {
		sleep_s(opt_power_interval);
		nc = power_read(&cur, &tc);
		power_update(prev, np > 0 ? np : 0, cur, nc > 0 ? nc : 0,
			     tc - tp);
		free(prev);
		prev = cur;
		np = nc;
		tp = tc;
	}
	free(prev);
	return NULL;
}

/* The power of VM @id into @w; false when it has none yet. */
static bool power_of(uint64_t id, double w[VMRAPL_NR_DOMAINS])
{
	bool found = false;
	int i;

	pthread_mutex_lock(&power_lock);
	for (i = 0; i < nr_powers; i++)
		if (powers[i].id == id) {
			memcpy(w, powers[i].w, sizeof(powers[i].w));
			found = true;
			break;
		}
	pthread_mutex_unlock(&power_lock);
	return found;
}

/* ---- why vmrapl_up is 0 ---------------------------------------------- */

/*
 * Say on stderr why the device cannot be read, once, and again only when
 * the reason changes (or the device is readable again).
 */
static void report_state(int err)
{
	static int last = 1;	/* no state yet */

	if (err == last)
		return;
	if (!err) {
		if (last != 1)
			fprintf(stderr, "vmrapl-exporter: %s can be read again; vmrapl_up is 1\n",
				opt_device);
	} else if (err == -ENOENT && access(VMRAPL_HOST_SYSFS, F_OK)) {
		fprintf(stderr, "vmrapl-exporter: cannot open %s: %s: the vmrapl module is not loaded (no %s); vmrapl_up is 0\n",
			opt_device, strerror(-err), VMRAPL_HOST_SYSFS);
	} else if (err == -ENOENT) {
		fprintf(stderr, "vmrapl-exporter: cannot open %s: %s (the vmrapl module is loaded: check --device and the udev rule); vmrapl_up is 0\n",
			opt_device, strerror(-err));
	} else if (err == -EACCES) {
		fprintf(stderr, "vmrapl-exporter: cannot open %s: permission denied (the exporter needs group kvm or root); vmrapl_up is 0\n",
			opt_device);
	} else if (err == -EPERM) {
		fprintf(stderr, "vmrapl-exporter: %s: permission denied: reading the host's energy books needs CAP_PERFMON (or root); vmrapl_up is 0\n",
			opt_device);
	} else {
		fprintf(stderr, "vmrapl-exporter: cannot read %s: %s; vmrapl_up is 0\n",
			opt_device, strerror(-err));
	}
	last = err;
}

/* Each package's static power, where it comes from, and its online fit. */
static void static_metrics(struct buf *b, const struct snapshot *s)
{
	int i;

	header(b, "vmrapl_package_static_power_watts", "gauge",
	       "The static power a package's split uses; origin: param (p_static_mw), idle (all-idle runs), host (the idle floor the host's other packages learned), core (the package's power less its cores', measured while busy), fit (the online fit), model (the source's own), unknown (0 W).");
	for (i = 0; i < s->nr_pkgs; i++)
		bprintf(b, "vmrapl_package_static_power_watts{package=\"%d\",origin=\"%s\"} %.6f\n",
			i, vmrapl_host_origin_name(s->pstat[i].origin),
			s->pkgs[i].p_static_uw / 1e6);
	header(b, "vmrapl_package_static_fit_watts", "gauge",
	       "The online fit dE = P_static dt + P_dyn busy of a package, last solve: its intercept (P_static), 0 when it had none.");
	for (i = 0; i < s->nr_pkgs; i++)
		bprintf(b, "vmrapl_package_static_fit_watts{package=\"%d\"} %.6f\n",
			i, s->pstat[i].fit_static_uw / 1e6);
	header(b, "vmrapl_package_static_fit_stderr_watts", "gauge",
	       "The standard error of vmrapl_package_static_fit_watts.");
	for (i = 0; i < s->nr_pkgs; i++)
		bprintf(b, "vmrapl_package_static_fit_stderr_watts{package=\"%d\"} %.6f\n",
			i, s->pstat[i].fit_static_sd_uw / 1e6);
	header(b, "vmrapl_package_static_fit_samples", "gauge",
	       "Samples (blocks of epochs, 20 ms or more each) of the last solve of the fit.");
	for (i = 0; i < s->nr_pkgs; i++)
		bprintf(b, "vmrapl_package_static_fit_samples{package=\"%d\"} %u\n",
			i, s->pstat[i].fit_blocks);
	header(b, "vmrapl_package_static_core_watts", "gauge",
	       "Where the cores have energy counters: a package's power less its cores', while busy, over the fit's window (0 until 32 samples).");
	for (i = 0; i < s->nr_pkgs; i++)
		bprintf(b, "vmrapl_package_static_core_watts{package=\"%d\"} %.6f\n",
			i, s->pstat[i].core_static_uw / 1e6);
	header(b, "vmrapl_package_static_fit_conditioned", "gauge",
	       "1 when the last solve of the fit was well conditioned (it then sets the static power unless p_static_mw or the source fixes it).");
	for (i = 0; i < s->nr_pkgs; i++)
		bprintf(b, "vmrapl_package_static_fit_conditioned{package=\"%d\"} %d\n",
			i, !!(s->pstat[i].fit_flags &
			      VMRAPL_FIT_F_CONDITIONED));
}

/* A counter's measured update interval, ns (0: not measured), and spread. */
static __u32 update_ns(const struct vmrapl_pkg_static *p, unsigned int dom,
		       __u32 *spread)
{
	switch (dom) {
	case VMRAPL_DOM_PKG:
		*spread = p->update_pkg_spread_ns;
		return p->update_pkg_ns;
	case VMRAPL_DOM_CORE:
		*spread = p->update_core_spread_ns;
		return p->update_core_ns;
	default:
		*spread = p->update_dram_spread_ns;
		return p->update_dram_ns;
	}
}

/*
 * Each package's counters' update intervals (VMRAPL_INFO_F_PKG_V2), per
 * domain the module reads and the per-core counter where it measured
 * one: the interval the lag correction uses (the 1 ms default when not
 * measured), its spread, and whether it was measured.
 */
static void update_metrics(struct buf *b, const struct snapshot *s)
{
	static const char *const name[] = {
		"vmrapl_package_update_interval_seconds",
		"vmrapl_package_update_interval_spread_seconds",
		"vmrapl_package_update_interval_measured",
	};
	static const char *const help[] = {
		"A package counter's update interval, measured when the package came online (the median of its steps); 0.001 (the default the lag correction then uses) when not measured.",
		"The spread of a package counter's update interval: half the range between the 10th and 90th percentiles of its steps; 0 when not measured.",
		"1 when the package counter's update interval was measured, 0 when the counter did not step enough to measure it (the 1 ms default is used).",
	};
	unsigned int m, dom;
	__u32 ns, spread;
	int i;

	if (!(s->info.features & VMRAPL_INFO_F_PKG_V2))
		return;
	for (m = 0; m < 3; m++) {
		header(b, name[m], "gauge", help[m]);
		for (i = 0; i < s->nr_pkgs; i++) {
			const struct vmrapl_pkg_static *p = &s->pstat[i];

			for (dom = 0; dom < VMRAPL_NR_DOMAINS; dom++) {
				bool meas = p->update_flags & (1u << dom);

				if (!meas && !(s->info.domains & (1u << dom)))
					continue;
				ns = update_ns(p, dom, &spread);
				bprintf(b, "%s{package=\"%d\",domain=\"%s\"} ",
					name[m], i,
					vmrapl_host_domain_name(dom));
				if (m == 0)
					bprintf(b, "%.9f\n",
						meas ? ns / 1e9 : 0.001);
				else if (m == 1)
					bprintf(b, "%.9f\n",
						meas ? spread / 1e9 : 0.0);
				else
					bprintf(b, "%d\n", meas);
			}
		}
	}
}

/*
 * vmrapl_module_load_time_seconds: worked out once per load of the module
 * (wall time now minus the boot-clock time since the load), then kept.
 * Worked out at every scrape it would move with every slew or step of the
 * wall clock, and with the time between the two clock reads, and a
 * changes() over it would count reloads that never happened.
 */
static double load_time_of(const struct vmrapl_info *info)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static __u64 boot_ns;
	static double t;
	double r;

	pthread_mutex_lock(&lock);
	if (!t || info->load_boottime_ns != boot_ns) {
		t = vmrapl_host_load_time(info);
		boot_ns = info->load_boottime_ns;
	}
	r = t;
	pthread_mutex_unlock(&lock);
	return r;
}

/* The VMs with a power limit: the limit held, and how it is held. */
static void limit_metrics(struct buf *b, const struct snapshot *s)
{
	static const char *const name[] = {
		"vmrapl_vm_power_limit_watts",
		"vmrapl_vm_power_limit_window_seconds",
		"vmrapl_vm_power_limit_held",
		"vmrapl_vm_cpu_throttled_seconds_total",
	};
	static const char *const type[] = {
		"gauge", "gauge", "gauge", "counter",
	};
	static const char *const help[] = {
		"A VM's power limit: the lower of the operator's (vmraplctl limit) and the PL1 its guest wrote; its power averaged over the window is held at or under it; only VMs with a limit.",
		"The window a VM's power limit averages over.",
		"Whether vmrapl-limitd holds the VM to its limit now (1), or nothing does (0: the daemon is not running, or it could not take the VM's cgroup; its log says why).",
		"Time the CPUs of a limited VM's cgroup spent throttled by CFS bandwidth control (cpu.stat throttled_usec; a quota the operator set there counts too); absent when the cgroup is not found.",
	};
	unsigned int m;
	int i;

	for (m = 0; m < 4; m++) {
		bool any = false;

		for (i = 0; i < s->nr_vms; i++) {
			const struct vm_limit *vl = &s->limits[i];

			if (!vl->l.limit_uw || (m == 3 && vl->throttled_us < 0))
				continue;
			if (!any)
				header(b, name[m], type[m], help[m]);
			any = true;
			bprintf(b, "%s{", name[m]);
			vm_labels(b, s, i);
			b->len -= b->len && b->p[b->len - 1] == ',';
			bprintf(b, "} ");
			if (m == 0)
				bprintf(b, "%.6f\n", vl->l.limit_uw / 1e6);
			else if (m == 1)
				bprintf(b, "%.6f\n", vl->l.window_us / 1e6);
			else if (m == 2)
				bprintf(b, "%d\n", vl->held);
			else
				bprintf(b, "%.6f\n", vl->throttled_us / 1e6);
		}
	}
}

/*
 * The static and dynamic parts of the pkg energy, of a VM and of a vCPU.
 * Their names said "pkg" beside domain="pkg" until 0.4; the old names
 * are still exported, with the same samples, for one release.
 */
#define VM_PART		"vmrapl_vm_energy_by_part_joules_total"
#define VCPU_PART	"vmrapl_vm_vcpu_energy_by_part_joules_total"
#define DEPRECATED(name) \
	"Deprecated: the old name of " name ", with the same samples; it goes in the next release."
static const char *const vm_part_names[] = {
	VM_PART, "vmrapl_vm_pkg_energy_by_part_joules_total",
};
static const char *const vcpu_part_names[] = {
	VCPU_PART, "vmrapl_vm_vcpu_pkg_energy_by_part_joules_total",
};
#define NR_PART_NAMES	(sizeof(vm_part_names) / sizeof(vm_part_names[0]))

static void metrics(struct buf *b)
{
	char labels[48];
	struct snapshot s;
	unsigned int k;
	int err, i, v;

	err = snapshot_take(&s, opt_vcpu);
	report_state(err);
	header(b, "vmrapl_build_info", "gauge",
	       "The exporter's version and the vmrapl ABI it was built for, always 1.");
	bprintf(b, "vmrapl_build_info{version=\"%s\",abi=\"%d\"} 1\n",
		VMRAPL_VERSION, VMRAPL_ABI_VERSION);
	header(b, "vmrapl_up", "gauge",
	       "Whether /dev/vmrapl could be read (the vmrapl module is loaded and accessible).");
	bprintf(b, "vmrapl_up %d\n", err ? 0 : 1);
	if (err)
		return;

	header(b, "vmrapl_source_info", "gauge",
	       "The host energy source; estimated=\"true\" when it is a model, not a measurement.");
	bprintf(b, "vmrapl_source_info{source=\"%s\",estimated=\"%s\"} 1\n",
		vmrapl_host_source_name(s.info.source),
		(s.info.features & VMRAPL_INFO_F_ESTIMATED) ? "true" : "false");

	header(b, "vmrapl_sample_period_seconds", "gauge",
	       "Host epoch length (sample_period_us).");
	bprintf(b, "vmrapl_sample_period_seconds %.6f\n",
		s.info.sample_period_us / 1e6);

	/* The counters' start time, as process_start_time_seconds is. */
	if (load_time_of(&s.info) > 0) {
		header(b, "vmrapl_module_load_time_seconds", "gauge",
		       "Unix time the vmrapl module was loaded: every energy counter below counts from zero since then.");
		bprintf(b, "vmrapl_module_load_time_seconds %.3f\n",
			load_time_of(&s.info));
	}

	header(b, "vmrapl_vm_energy_joules_total", "counter",
	       "Energy attributed to a VM, overhead included, per RAPL domain (core is part of pkg).");
	for (i = 0; i < s.nr_vms; i++)
		dom_samples(b, &s, "vmrapl_vm_energy_joules_total", i, "",
			    vm_energy(&s, i), NULL);

	header(b, "vmrapl_vm_overhead_energy_joules_total", "counter",
	       "Energy of a VM's overhead (VMM I/O threads, vhost workers) per RAPL domain, included in vmrapl_vm_energy_joules_total.");
	for (i = 0; i < s.nr_vms; i++)
		dom_samples(b, &s, "vmrapl_vm_overhead_energy_joules_total", i,
			    "", vm_overhead(&s, i), NULL);

	if (s.info.features & VMRAPL_INFO_F_STATIC_SPLIT) {
		for (k = 0; k < NR_PART_NAMES; k++) {
			header(b, vm_part_names[k], "counter", k ?
			       DEPRECATED(VM_PART) :
			       "A VM's pkg energy (overhead included) split into its static part (its share of the package's static power under static_policy) and its dynamic part; sum without(part) is vmrapl_vm_energy_joules_total{domain=\"pkg\"}.");
			for (i = 0; i < s.nr_vms; i++)
				part_samples(b, &s, vm_part_names[k], i, "",
					     vm_energy(&s, i)[VMRAPL_DOM_PKG],
					     vm_static(&s, i));
		}
	}

	if (opt_power_interval > 0) {
		header(b, "vmrapl_vm_power_watts", "gauge",
		       "Average power of a VM over the exporter's last --power-interval, per RAPL domain (a convenience: rate() of vmrapl_vm_energy_joules_total is the reference).");
		for (i = 0; i < s.nr_vms; i++) {
			double w[VMRAPL_NR_DOMAINS];

			if (power_of(s.vms[i].id, w))
				dom_samples(b, &s, "vmrapl_vm_power_watts", i,
					    "", NULL, w);
		}
	}

	if (opt_vcpu) {
		header(b, "vmrapl_vm_vcpu_energy_joules_total", "counter",
		       "Energy attributed to one vCPU of a VM, per RAPL domain, overhead excluded (--vcpu-metrics).");
		for (i = 0; i < s.nr_vms; i++)
			for (v = 0; v < s.detail[i].nr_vcpus; v++) {
				snprintf(labels, sizeof(labels), "vcpu=\"%d\",", v);
				dom_samples(b, &s, "vmrapl_vm_vcpu_energy_joules_total",
					    i, labels,
					    s.detail[i].vcpus[v].energy_uj, NULL);
			}
		for (k = 0; (s.info.features & VMRAPL_INFO_F_STATIC_SPLIT) &&
			    k < NR_PART_NAMES; k++) {
			header(b, vcpu_part_names[k], "counter", k ?
			       DEPRECATED(VCPU_PART) :
			       "One vCPU's pkg energy split into static and dynamic parts, as " VM_PART " (--vcpu-metrics).");
			for (i = 0; i < s.nr_vms; i++)
				for (v = 0; v < s.detail[i].nr_vcpus; v++) {
					const struct vmrapl_vcpu_stats *vs =
						&s.detail[i].vcpus[v];

					snprintf(labels, sizeof(labels),
						 "vcpu=\"%d\",", v);
					part_samples(b, &s, vcpu_part_names[k],
						     i, labels,
						     vs->energy_uj[VMRAPL_DOM_PKG],
						     vs->static_uj);
				}
		}
	}

	header(b, "vmrapl_vm_info", "gauge",
	       "A VM tracked by vmrapl: its VMM pid, vCPUs and whether its VMM attached it (else track_all); uuid, on every VM series, is its QEMU -uuid when it has one.");
	for (i = 0; i < s.nr_vms; i++) {
		bprintf(b, "vmrapl_vm_info{");
		vm_labels(b, &s, i);
		bprintf(b, "pid=\"%u\",vcpus=\"%u\",attached=\"%s\"} 1\n",
			s.vms[i].pid, s.vms[i].nr_vcpus,
			(s.vms[i].flags & VMRAPL_VM_F_ATTACHED) ? "true" : "false");
	}

	limit_metrics(b, &s);

	header(b, "vmrapl_package_energy_joules_total", "counter",
	       "Energy read from a host package's counter, per RAPL domain (core is part of pkg).");
	for (i = 0; i < s.nr_pkgs; i++) {
		snprintf(labels, sizeof(labels), "package=\"%d\",", i);
		dom_samples(b, &s, "vmrapl_package_energy_joules_total", -1,
			    labels, s.pkgs[i].sampled_uj, NULL);
	}

	header(b, "vmrapl_package_unattributed_energy_joules_total", "counter",
	       "Package energy charged to no VM, per RAPL domain: host (busy time of tasks that are not VMs), idle (unoccupied CPU time), lost (unknown intervals).");
	for (i = 0; i < s.nr_pkgs; i++)
		for (k = VMRAPL_HOST_BOOK_HOST; k < VMRAPL_HOST_NR_BOOKS; k++) {
			snprintf(labels, sizeof(labels),
				 "package=\"%d\",kind=\"%s\",", i,
				 vmrapl_host_book_name(k));
			dom_samples(b, &s,
				    "vmrapl_package_unattributed_energy_joules_total",
				    -1, labels, vmrapl_host_book(&s.pkgs[i], k),
				    NULL);
		}
	if (s.pstat) {
		static_metrics(b, &s);
		update_metrics(b, &s);
	}
	snapshot_free(&s);
}

static mhd_result reply(struct MHD_Connection *c, unsigned int code,
			const char *type, char *body, size_t len, bool owned)
{
	struct MHD_Response *r;
	mhd_result ret;

	r = MHD_create_response_from_buffer(len, body,
					    owned ? MHD_RESPMEM_MUST_FREE :
						    MHD_RESPMEM_PERSISTENT);
	if (!r) {
		if (owned)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

static mhd_result handler(void *cls, struct MHD_Connection *c, const char *url,
			  const char *method, const char *version,
			  const char *data, size_t *data_size, void **state)
{
	static char index_page[] =
		"<html><head><title>vmrapl exporter</title></head><body>"
		"<h1>vmrapl exporter</h1><p><a href=\"/metrics\">Metrics</a></p>"
		"</body></html>\n";
	static char not_found[] = "not found\n";
	static char bad_method[] = "only GET and HEAD\n";
	static char oom[] = "out of memory\n";
	static int first;
	struct buf b = { 0 };

	(void)cls;
	(void)version;
	(void)data;
	if (!*state) {
		/* Called once for the headers; answer on the second call. */
		*state = &first;
		return MHD_YES;
	}
	if (*data_size)
		return MHD_NO;
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain",
			     bad_method, strlen(bad_method), false);
	if (!strcmp(url, "/"))
		return reply(c, MHD_HTTP_OK, "text/html", index_page,
			     strlen(index_page), false);
	if (strcmp(url, "/metrics"))
		return reply(c, MHD_HTTP_NOT_FOUND, "text/plain", not_found,
			     strlen(not_found), false);
	metrics(&b);
	if (b.oom) {
		free(b.p);
		return reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain",
			     oom, strlen(oom), false);
	}
	return reply(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8",
		     b.p, b.len, true);
}

/* ---- the powercap tree --------------------------------------------------- */

/*
 * The length of @s's longest prefix of at most @max bytes that ends on a
 * character's boundary (@s is valid UTF-8: text_vm_name()).
 */
static int utf8_prefix(const char *s, size_t max)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = 0, len = strlen(s), k;
	uint32_t cp;

	while (n < len && (k = utf8_char(u + n, len - n, &cp)) &&
	       n + k <= max)
		n += k;
	return (int)n;
}

/* A directory name from a VM label: no '/', no leading '.'. */
static void dir_name(const char *label, char *out, size_t len)
{
	size_t i;

	snprintf(out, len, "%s", label);
	for (i = 0; out[i]; i++)
		if (out[i] == '/' || (unsigned char)out[i] < 0x20)
			out[i] = '_';
	if (out[0] == '.' || !out[0])
		out[0] = '_';
}

static int write_atomic(const char *path, const char *text)
{
	char tmp[PATH_MAX];
	FILE *f;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	f = fopen(tmp, "w");
	if (!f)
		return -errno;
	fputs(text, f);
	if (fclose(f)) {
		unlink(tmp);
		return -EIO;
	}
	return rename(tmp, path) ? -errno : 0;
}

/* A VM's files in DIR/<vm>/intel-rapl:0/, each written as NAME.tmp first. */
static const char *const tree_files[] = {
	"name", "max_energy_range_uj", "energy_uj",
};
#define NR_TREE_FILES	(sizeof(tree_files) / sizeof(tree_files[0]))

/* Write DIR/@name/intel-rapl:0/; on failure the path that failed in @where. */
static int tree_vm(const char *name, uint64_t uj, char *where, size_t len)
{
	char dir[PATH_MAX], path[PATH_MAX + 32], text[NR_TREE_FILES][32];
	size_t i;
	int err;

	snprintf(text[0], sizeof(text[0]), "package-0\n");
	snprintf(text[1], sizeof(text[1]), "%llu\n", PC_MAX_RANGE_UJ);
	snprintf(text[2], sizeof(text[2]), "%llu\n",
		 (unsigned long long)(uj % PC_MAX_RANGE_UJ));
	snprintf(dir, sizeof(dir), "%s/%s", opt_tree, name);
	if (mkdir(dir, 0755) && errno != EEXIST)
		goto fail_dir;
	snprintf(dir, sizeof(dir), "%s/%s/intel-rapl:0", opt_tree, name);
	if (mkdir(dir, 0755) && errno != EEXIST)
		goto fail_dir;
	for (i = 0; i < NR_TREE_FILES; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, tree_files[i]);
		err = write_atomic(path, text[i]);
		if (err) {
			snprintf(where, len, "%s", path);
			return err;
		}
	}
	return 0;
fail_dir:
	err = -errno;
	snprintf(where, len, "%s", dir);
	return err;
}

/*
 * Remove DIR/@name: the exporter's files (and leftover .tmp ones), then
 * intel-rapl:0, then the directory.  Nothing is followed through a
 * symlink and nothing else is deleted: a directory that holds other files
 * stays (ENOTEMPTY).  0 when it is gone, or was never there.
 */
static int tree_remove(const char *name)
{
	int top, vd, rd, err = 0;
	char tmp[64];
	size_t i;

	top = open(opt_tree, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (top < 0)
		return -errno;
	vd = openat(top, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (vd < 0) {
		err = errno == ENOENT ? 0 : -errno;
		goto out;
	}
	rd = openat(vd, "intel-rapl:0",
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (rd >= 0) {
		for (i = 0; i < NR_TREE_FILES; i++) {
			snprintf(tmp, sizeof(tmp), "%s.tmp", tree_files[i]);
			if (unlinkat(rd, tree_files[i], 0) && errno != ENOENT)
				err = -errno;
			if (unlinkat(rd, tmp, 0) && errno != ENOENT)
				err = -errno;
		}
		close(rd);
		if (!err && unlinkat(vd, "intel-rapl:0", AT_REMOVEDIR) &&
		    errno != ENOENT)
			err = -errno;
	} else if (errno != ENOENT) {
		err = -errno;
	}
	close(vd);
	if (!err && unlinkat(top, name, AT_REMOVEDIR) && errno != ENOENT)
		err = -errno;
out:
	close(top);
	return err;
}

/* Is DIR/@name a directory with an intel-rapl:0 directory (no symlinks)? */
static bool tree_is_vm_dir(const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", opt_tree, name);
	if (lstat(path, &st) || !S_ISDIR(st.st_mode))
		return false;
	snprintf(path, sizeof(path), "%s/%s/intel-rapl:0", opt_tree, name);
	return !lstat(path, &st) && S_ISDIR(st.st_mode);
}

/*
 * The directories in the tree, and the VM each belongs to, so that a VM
 * that has gone loses its directory and a name another VM takes over gets
 * a new one.  Only the tree thread uses them.
 */
struct tree_dir {
	char name[NAME_LEN];
	uint64_t id;		/* vmrapl's VM id; 0: no VM, to be removed */
	bool warned;		/* its removal failed and was reported */
};
static struct tree_dir *tree_dirs;
static int nr_tree_dirs;

static int tree_find(const char *name)
{
	int j;

	for (j = 0; j < nr_tree_dirs; j++)
		if (!strcmp(tree_dirs[j].name, name))
			return j;
	return -1;
}

static struct tree_dir *tree_add(const char *name, uint64_t id)
{
	struct tree_dir *t;

	t = realloc(tree_dirs, (nr_tree_dirs + 1) * sizeof(*t));
	if (!t)
		return NULL;
	tree_dirs = t;
	t = &tree_dirs[nr_tree_dirs++];
	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->id = id;
	return t;
}

/* tree_remove(), reporting a failure once per directory. */
static int tree_remove_or_warn(struct tree_dir *t)
{
	int err = tree_remove(t->name);

	if (!err || t->warned)
		return err;
	t->warned = true;
	fprintf(stderr, "vmrapl-exporter: powercap tree: cannot remove %s/%s: %s%s; retrying at every refresh\n",
		opt_tree, t->name, strerror(-err),
		err == -ENOTEMPTY ? " (it holds files the exporter did not write)" : "");
	return err;
}

/* The tree entry of VM @id, or -1. */
static int tree_find_id(uint64_t id)
{
	int j;

	for (j = 0; j < nr_tree_dirs; j++)
		if (tree_dirs[j].id == id)
			return j;
	return -1;
}

static int vm_by_dir(const struct snapshot *s, char (*dirs)[NAME_LEN],
		     const char *name)
{
	int i;

	for (i = 0; i < s->nr_vms; i++)
		if (dirs[i][0] && !strcmp(dirs[i], name))
			return i;
	return -1;
}

/* Is @name free for a new VM's directory? */
static bool tree_name_free(const struct snapshot *s, char (*dirs)[NAME_LEN],
			   const char *name)
{
	int j = tree_find(name);

	/* A directory of no VM (id 0, its removal failed) is in the way. */
	return j < 0 && vm_by_dir(s, dirs, name) < 0;
}

/*
 * Directory names of the VMs of @s, stable for each VM: a VM keeps the
 * directory it has (tree_dirs, by id).  A new VM gets its name (dir_name())
 * if no other VM's directory has it, else NAME-ID; new VMs are named in
 * the order of their ids, so of VMs that start together with one name the
 * oldest gets the plain name.  A VM whose NAME-ID is taken too (by a VM
 * called that) gets no directory.
 */
static char (*tree_names(const struct snapshot *s))[NAME_LEN]
{
	int n = s->nr_vms ? s->nr_vms : 1;
	char (*dirs)[NAME_LEN] = calloc(n, NAME_LEN);
	bool *done = calloc(n, sizeof(*done));
	int i, j, k;

	if (!dirs || !done) {
		free(dirs);
		free(done);
		return NULL;
	}
	for (i = 0; i < s->nr_vms; i++) {
		j = tree_find_id(s->vms[i].id);
		if (j >= 0) {
			snprintf(dirs[i], NAME_LEN, "%s", tree_dirs[j].name);
			done[i] = true;
		}
	}
	for (;;) {
		char base[NAME_LEN], cand[NAME_LEN];

		/* The oldest VM without a directory yet. */
		for (i = -1, k = 0; k < s->nr_vms; k++)
			if (!done[k] && (i < 0 || s->vms[k].id < s->vms[i].id))
				i = k;
		if (i < 0)
			break;
		done[i] = true;
		dir_name(s->names[i], base, sizeof(base));
		if (tree_name_free(s, dirs, base)) {
			snprintf(dirs[i], NAME_LEN, "%s", base);
			continue;
		}
		snprintf(cand, sizeof(cand), "%.*s-%llu",
			 utf8_prefix(base, NAME_LEN - 24), base,
			 (unsigned long long)s->vms[i].id);
		if (tree_name_free(s, dirs, cand))
			snprintf(dirs[i], NAME_LEN, "%s", cand);
	}
	free(done);
	return dirs;
}

/*
 * One refresh: drop the directories of VMs that have gone, then those a
 * previous run left for VMs that are not tracked any more, then write
 * every tracked VM's files.
 */
static void tree_refresh(void)
{
	static int read_err, write_err;
	char (*dirs)[NAME_LEN] = NULL;
	char where[PATH_MAX + 32];
	struct snapshot s;
	struct dirent *de;
	int err, i, j;
	DIR *d;

	err = snapshot_take(&s, false);
	if (err && err != -ENOENT && err != -ENODEV && err != -ENXIO) {
		/* Unknown state: leave the tree as it is. */
		if (err != read_err)
			fprintf(stderr, "vmrapl-exporter: powercap tree: cannot read %s: %s; the tree is left as it is\n",
				opt_device, strerror(-err));
		read_err = err;
		return;
	}
	if (err && err != read_err)
		fprintf(stderr, "vmrapl-exporter: powercap tree: %s: %s (vmrapl not loaded): no VM is tracked\n",
			opt_device, strerror(-err));
	read_err = err;
	/* With no device, no VM is tracked: s is empty. */

	/* 1. Directories whose VM has gone (or of no VM: id 0). */
	for (j = nr_tree_dirs - 1; j >= 0; j--) {
		struct tree_dir *t = &tree_dirs[j];

		for (i = 0; i < s.nr_vms && s.vms[i].id != t->id; i++)
			;
		if (t->id && i < s.nr_vms)
			continue;
		if (!tree_remove_or_warn(t)) {
			tree_dirs[j] = tree_dirs[--nr_tree_dirs];
			continue;
		}
		/* Still there (reported): in the way of new VMs' names. */
		t->id = 0;
	}

	dirs = tree_names(&s);
	if (!dirs) {
		fprintf(stderr, "vmrapl-exporter: powercap tree: out of memory\n");
		goto out;
	}

	/* 2. Directories of a previous run, or of no VM the exporter knows. */
	d = opendir(opt_tree);
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.' || tree_find(de->d_name) >= 0)
			continue;
		i = vm_by_dir(&s, dirs, de->d_name);
		if (i >= 0) {
			/* A tracked VM's name: its files are rewritten below. */
			if (!tree_add(de->d_name, s.vms[i].id))
				fprintf(stderr, "vmrapl-exporter: powercap tree: out of memory\n");
		} else if (tree_is_vm_dir(de->d_name)) {
			struct tree_dir *t = tree_add(de->d_name, 0);

			/* The last entry: dropped again once it is gone. */
			if (t && !tree_remove_or_warn(t))
				nr_tree_dirs--;
			else if (!t)
				fprintf(stderr, "vmrapl-exporter: powercap tree: out of memory\n");
		}
	}
	if (d)
		closedir(d);

	/* 3. Every tracked VM's files. */
	err = 0;
	for (i = 0; i < s.nr_vms; i++) {
		int e;

		if (!dirs[i][0])
			continue;
		if (tree_find(dirs[i]) < 0 && !tree_add(dirs[i], s.vms[i].id)) {
			fprintf(stderr, "vmrapl-exporter: powercap tree: out of memory\n");
			continue;
		}
		e = tree_vm(dirs[i], s.vms[i].energy_uj[VMRAPL_DOM_PKG],
			    where, sizeof(where));
		if (e && !err) {
			err = e;
			if (e != write_err)
				fprintf(stderr, "vmrapl-exporter: powercap tree: cannot write %s: %s\n",
					where, strerror(-e));
		}
	}
	write_err = err;
out:
	free(dirs);
	snapshot_free(&s);
}

static void *tree_thread(void *arg)
{
	struct timespec ts;

	(void)arg;
	ts.tv_sec = (time_t)opt_tree_interval;
	ts.tv_nsec = (long)((opt_tree_interval - (double)ts.tv_sec) * 1e9);
	while (!stopping) {
		tree_refresh();
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* ---- main ---------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
"usage: vmrapl-exporter [OPTIONS]\n"
"  -l, --listen HOST:PORT        listen address (default 127.0.0.1:9877); HOST\n"
"                                is an address or a host name (IPv6 as\n"
"                                [ADDR]:PORT, every IPv4 address as *:PORT)\n"
"  -d, --device PATH             the vmrapl device (default /dev/vmrapl)\n"
"  -p, --power-interval S        vmrapl_vm_power_watts over S seconds\n"
"                                (default 1; 0: no power gauge)\n"
"      --vcpu-metrics            also export\n"
"                                vmrapl_vm_vcpu_energy_joules_total{vm,id,[uuid,]vcpu,domain}\n"
"                                (one series per vCPU and domain: off by default)\n"
"  -t, --powercap-tree DIR       also keep DIR/<vm>/intel-rapl:0/energy_uj\n"
"                                (the layout scaphandre --vm reads); a VM's\n"
"                                directory is removed when the VM has gone\n"
"  -i, --powercap-interval S     refresh of the tree (default 1 s)\n"
"      --limit-dir DIR           vmrapl-limitd's records (default\n"
"                                /run/vmrapl/limit): a VM is held while its\n"
"                                record is there\n"
"      --cgroup-root DIR         the cgroup v2 mount (default /sys/fs/cgroup)\n"
"      --proc DIR                where /proc is (default /proc; tests)\n"
"  -h, --help                    this text\n"
"  -V, --version                 print the version\n");
}

/*
 * HOST:PORT, [HOST]:PORT, *:PORT or :PORT into @ss.  HOST is resolved with
 * getaddrinfo(): the first IPv4 address when it has one, else the first
 * IPv6 one.  0, or -1 with the reason in @why.
 */
static int parse_listen(const char *s, struct sockaddr_storage *ss,
			unsigned int *port, const char **why)
{
	struct addrinfo hints, *res, *ai, *pick = NULL;
	char host[256];
	const char *colon;
	char *end;
	unsigned long p;
	size_t hl;
	int err;

	memset(ss, 0, sizeof(*ss));
	*why = "expected HOST:PORT or [ADDR6]:PORT";
	if (s[0] == '[') {
		const char *rb = strchr(s, ']');

		if (!rb || rb[1] != ':')
			return -1;
		hl = rb - s - 1;
		colon = rb + 1;
		if (!hl || hl >= sizeof(host))
			return -1;
		memcpy(host, s + 1, hl);
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return -1;
		hl = colon - s;
		if (hl >= sizeof(host))
			return -1;
		memcpy(host, s, hl);
		if (memchr(host, ':', hl)) {
			*why = "an IPv6 address goes in brackets: [ADDR6]:PORT";
			return -1;
		}
	}
	host[hl] = 0;
	errno = 0;
	p = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || errno || !p || p > 65535) {
		*why = "the port must be a number from 1 to 65535";
		return -1;
	}
	*port = p;
	if (s[0] != '[' && (!host[0] || !strcmp(host, "*"))) {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;

		a->sin_family = AF_INET;	/* INADDR_ANY */
		a->sin_port = htons(p);
		return 0;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = s[0] == '[' ? AF_INET6 : AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	err = getaddrinfo(host, colon + 1, &hints, &res);
	if (err) {
		*why = gai_strerror(err);
		return -1;
	}
	for (ai = res; ai; ai = ai->ai_next)
		if (ai->ai_family == AF_INET) {
			pick = ai;
			break;
		}
	for (ai = res; !pick && ai; ai = ai->ai_next)
		if (ai->ai_family == AF_INET6)
			pick = ai;
	if (pick && pick->ai_addrlen <= sizeof(*ss))
		memcpy(ss, pick->ai_addr, pick->ai_addrlen);
	freeaddrinfo(res);
	if (!pick) {
		*why = "no IPv4 or IPv6 address";
		return -1;
	}
	return 0;
}

/* An address for the log: 127.0.0.1:9877 or [::1]:9877. */
static void addr_text(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)ss;

		inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
		snprintf(buf, len, "[%s]:%u", a, ntohs(s6->sin6_port));
	} else {
		const struct sockaddr_in *s4 = (const void *)ss;

		inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
		snprintf(buf, len, "%s:%u", a, ntohs(s4->sin_port));
	}
}

/*
 * A listening TCP socket on @ss, made here rather than by libmicrohttpd
 * so that a failure can be reported once, with its reason.  The fd, or
 * -errno.
 */
static int listen_on(const struct sockaddr_storage *ss)
{
	socklen_t len = ss->ss_family == AF_INET6 ?
			sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
	int fd, one = 1, err;

	fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* As libmicrohttpd does: a restart need not wait out TIME_WAIT. */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss->ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)ss, len) ||
	    listen(fd, SOMAXCONN)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

static int parse_seconds(const char *opt, const char *arg, double min,
			 double max, bool zero, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (!*arg || *end || errno || !((zero && v == 0) ||
					 (v >= min && v <= max))) {
		fprintf(stderr, "vmrapl-exporter: %s: '%s' is not a number of seconds from %g to %g%s\n",
			opt, arg, min, max, zero ? " (or 0)" : "");
		return -1;
	}
	*out = v;
	return 0;
}

/* Long options without a short form. */
enum { OPT_VCPU_METRICS = 256, OPT_LIMIT_DIR, OPT_CGROUP_ROOT, OPT_PROC };

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "device", required_argument, NULL, 'd' },
		{ "power-interval", required_argument, NULL, 'p' },
		{ "powercap-tree", required_argument, NULL, 't' },
		{ "powercap-interval", required_argument, NULL, 'i' },
		{ "vcpu-metrics", no_argument, NULL, OPT_VCPU_METRICS },
		{ "limit-dir", required_argument, NULL, OPT_LIMIT_DIR },
		{ "cgroup-root", required_argument, NULL, OPT_CGROUP_ROOT },
		{ "proc", required_argument, NULL, OPT_PROC },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *listen = "127.0.0.1:9877", *why;
	struct sockaddr_storage ss;
	struct MHD_Daemon *d;
	unsigned int port, flags;
	pthread_t tree, power;
	char where[INET6_ADDRSTRLEN + 16];
	struct snapshot probe;
	sigset_t set;
	int c, sig, err, lfd;

	/* getopt's messages start with argv[0]: the name, not the path. */
	if (argc > 0)
		argv[0] = (char *)"vmrapl-exporter";
	while ((c = getopt_long(argc, argv, "l:d:p:t:i:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			listen = optarg;
			break;
		case 'd':
			opt_device = optarg;
			break;
		case 'p':
			if (parse_seconds("--power-interval", optarg, 0.01,
					  3600, true, &opt_power_interval))
				return 1;
			break;
		case 't':
			opt_tree = optarg;
			break;
		case 'i':
			if (parse_seconds("--powercap-interval", optarg, 0.01,
					  3600, false, &opt_tree_interval))
				return 1;
			break;
		case OPT_VCPU_METRICS:
			opt_vcpu = true;
			break;
		case OPT_LIMIT_DIR:
			opt_limit_dir = optarg;
			break;
		case OPT_CGROUP_ROOT:
			opt_cgroot = optarg;
			break;
		case OPT_PROC:
			opt_proc = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("vmrapl-exporter %s (vmrapl ABI %d)\n",
			       VMRAPL_VERSION, VMRAPL_ABI_VERSION);
			return 0;
		default:
			/* getopt said what is wrong, in one line. */
			fprintf(stderr, "try 'vmrapl-exporter --help'\n");
			return 1;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "vmrapl-exporter: unexpected argument '%s'\ntry 'vmrapl-exporter --help'\n",
			argv[optind]);
		return 1;
	}
	if (parse_listen(listen, &ss, &port, &why)) {
		fprintf(stderr, "vmrapl-exporter: bad --listen '%s': %s\n",
			listen, why);
		return 1;
	}
	if (opt_tree && mkdir(opt_tree, 0755) && errno != EEXIST) {
		fprintf(stderr, "vmrapl-exporter: %s: %s\n", opt_tree,
			strerror(errno));
		return 1;
	}

	/* Signals are taken by sigwait() below, in no other thread. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);

	/* The address as given, and what it resolved to when that differs. */
	addr_text(&ss, where, sizeof(where));
	lfd = listen_on(&ss);
	if (lfd < 0) {
		fprintf(stderr, "vmrapl-exporter: cannot listen on %s%s%s%s: %s\n",
			listen, strcmp(listen, where) ? " (" : "",
			strcmp(listen, where) ? where : "",
			strcmp(listen, where) ? ")" : "", strerror(-lfd));
		return 1;
	}
	flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	d = MHD_start_daemon(flags, (uint16_t)port, NULL, NULL, handler, NULL,
			     MHD_OPTION_LISTEN_SOCKET, lfd,
			     MHD_OPTION_CONNECTION_LIMIT, 64u,
			     MHD_OPTION_CONNECTION_TIMEOUT, 10u,
			     MHD_OPTION_END);
	if (!d) {
		fprintf(stderr, "vmrapl-exporter: cannot start the HTTP server on %s\n",
			where);
		close(lfd);
		return 1;
	}
	fprintf(stderr, "vmrapl-exporter: serving http://%s/metrics\n", where);
	/* Why vmrapl_up is 0, if it is, without waiting for a scrape. */
	err = snapshot_take(&probe, false);
	if (!err)
		snapshot_free(&probe);
	report_state(err);
	if (opt_tree && pthread_create(&tree, NULL, tree_thread, NULL)) {
		fprintf(stderr, "vmrapl-exporter: cannot start the powercap thread\n");
		opt_tree = NULL;
	}
	if (opt_power_interval > 0 &&
	    pthread_create(&power, NULL, power_thread, NULL)) {
		fprintf(stderr, "vmrapl-exporter: cannot start the power thread; no vmrapl_vm_power_watts\n");
		opt_power_interval = 0;
	}
	sigwait(&set, &sig);
	stopping = 1;
	MHD_stop_daemon(d);
	if (opt_tree)
		pthread_join(tree, NULL);
	if (opt_power_interval > 0)
		pthread_join(power, NULL);
	return 0;
}
