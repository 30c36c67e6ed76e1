// SPDX-License-Identifier: MIT
/*
 * vmraplctl - inspect and tune vmrapl (per-VM virtual RAPL) on a host.
 *
 *   vmraplctl [--json] info
 *   vmraplctl [--json] [--interval S] list
 *   vmraplctl [--json] [--interval S] [--iterations N] top
 *   vmraplctl [--json] [--interval S] stats VM
 *   vmraplctl [--json] stat [--] COMMAND [ARGS...]
 *   vmraplctl set NAME=VALUE...
 *   vmraplctl [--json] limit [VM]
 *   vmraplctl limit VM POWER [--window DURATION] | off
 *
 * -x SEP gives CSV instead of the table, -o FILE writes to FILE.
 *
 * Exit codes: 0 ok, 1 usage or other error, 2 module not loaded,
 * 3 permission denied, 4 no such VM; stat exits with its command's
 * status.  See Documentation/man/vmraplctl.8.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>

#include "libvmrapl-host.h"
#include "json.h"
#include "text.h"

/* The package's version, from VERSION (the Makefile passes it). */
#ifndef VMRAPL_VERSION
#define VMRAPL_VERSION	"unknown"
#endif

enum {
	EXIT_OK = 0,
	EXIT_USAGE = 1,		/* also: any other failure */
	EXIT_NOMOD = 2,
	EXIT_PERM = 3,
	EXIT_NOVM = 4,
};

#define NAME_LEN	TEXT_NAME_LEN
/* stats: the most VMs an ambiguous VM argument's error lists. */
#define MAX_MATCH	16
/* limit: the window of a limit set without --window, 1 s. */
#define LIMIT_WINDOW_US	1000000ull

static bool opt_json;
static const char *opt_sep;	/* -x: CSV with this separator */
static double opt_interval = 1.0;
static long opt_iterations;	/* top: 0 = until interrupted */
static const char *opt_window;	/* limit: --window, checked there */
static const char *opt_device = "/dev/" VMRAPL_DEVICE_NAME;

static const char *prog = "vmraplctl";
/* With -o FILE: the original stdout, for the command stat runs. */
static int orig_stdout = -1;

static void msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void msg(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: vmraplctl [OPTIONS] COMMAND [ARGS]\n"
"\n"
"commands:\n"
"  info                      module version, energy source, parameters\n"
"  list                      every tracked VM: energy (J) and power (W)\n"
"  top                       refreshing table of VMs sorted by power (q quits)\n"
"  stats VM                  what the host knows of one VM (id, pid, name\n"
"                            or UUID)\n"
"  stat [--] CMD [ARGS]      run CMD, then the VMs' energy over its run time\n"
"  set NAME=VALUE...         set sample_period_us (us), static_policy\n"
"                            (occupied, busy, none), track_all (on, off)\n"
"  limit [VM]                every VM's power limit (or VM's)\n"
"  limit VM POWER|off        set VM's power limit, 1mW to 100kW (40W, 1.5kW,\n"
"                            500mW), averaged over --window; off removes it\n"
"\n"
"options:\n"
"  -j, --json                machine-readable output (info, list, top, stats,\n"
"                            stat, limit; top: one JSON object per line)\n"
"  -x, --field-separator SEP CSV-like output, fields separated by SEP (list,\n"
"                            top, stats, stat, limit), like perf stat -x\n"
"  -o, --output FILE         write the output to FILE instead of stdout\n"
"  -i, --interval SECONDS    power sampling interval, 0 to 86400 (default 1;\n"
"                            0: no power; top needs more than 0)\n"
"  -n, --iterations N        top: refresh N times, then exit (default: forever)\n"
"  -w, --window DURATION     limit: the window the power is averaged over,\n"
"                            10ms to 1h (250ms, 1s, 2m; default 1s)\n"
"  -d, --device PATH         the vmrapl device (default /dev/vmrapl)\n"
"  -h, --help                this text\n"
"  -V, --version             print the version\n"
"\n"
"A VM is its vmrapl id, its VMM's pid, its name or its UUID (QEMU's -uuid,\n"
"libvirt's domain UUID), as virsh takes a domain: a number that is an id is\n"
"that VM; a name or UUID several VMs have is an error that lists their ids.\n"
"\n"
"exit codes: 0 ok, 1 usage/error, 2 module not loaded, 3 permission denied,\n"
"4 no such VM; stat: its command's exit status\n");
}

/* After a one-line error about the command line: where to look. */
static int usage_hint(void)
{
	fprintf(stderr, "try '%s --help'\n", prog);
	return EXIT_USAGE;
}

/* ---- small helpers ------------------------------------------------------ */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_s(double s)
{
	struct timespec ts;

	if (s <= 0)
		return;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Wall-clock time, Unix seconds. */
static double wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- device -------------------------------------------------------------- */

struct dev {
	int fd;
	struct vmrapl_info info;
};

static int dev_open(struct dev *d)
{
	int err;

	d->fd = open(opt_device, O_RDWR | O_CLOEXEC);
	if (d->fd < 0) {
		err = errno;
		if (err == ENOENT) {
			if (access(VMRAPL_HOST_SYSFS, F_OK))
				msg("%s: no such device: vmrapl module not loaded (no %s)",
				    opt_device, VMRAPL_HOST_SYSFS);
			else
				msg("%s: no such device, but the vmrapl module is loaded (check --device and the udev rule)",
				    opt_device);
			return EXIT_NOMOD;
		}
		if (err == EACCES || err == EPERM) {
			msg("permission denied opening %s (root or group kvm needed)",
			    opt_device);
			return EXIT_PERM;
		}
		msg("cannot open %s: %s", opt_device, strerror(err));
		return EXIT_USAGE;
	}
	memset(&d->info, 0, sizeof(d->info));
	if (ioctl(d->fd, VMRAPL_GET_INFO, &d->info) < 0) {
		msg("VMRAPL_GET_INFO: %s", strerror(errno));
		close(d->fd);
		return EXIT_USAGE;
	}
	if (d->info.abi_version != VMRAPL_ABI_VERSION) {
		msg("the module speaks ABI %u, this tool ABI %u",
		    d->info.abi_version, VMRAPL_ABI_VERSION);
		close(d->fd);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

static bool estimated(const struct dev *d)
{
	return d->info.features & VMRAPL_INFO_F_ESTIMATED;
}

static bool dom_on(const struct dev *d, unsigned int dom)
{
	return d->info.domains & (1u << dom);
}

/* ---- samples ------------------------------------------------------------- */

struct sample {
	double t;
	double wall;		/* the same instant, Unix time */
	struct vmrapl_vm_entry *vms;
	int nr_vms;
	struct vmrapl_pkg_stats *pkgs;
	int nr_pkgs;
};

static void sample_free(struct sample *s)
{
	free(s->vms);
	free(s->pkgs);
	memset(s, 0, sizeof(*s));
}

/* A failed host-wide read: EPERM is the missing capability. */
static int host_read_err(const char *what, int n)
{
	if (n == -EPERM || n == -EACCES) {
		msg("%s: permission denied: reading the host's energy books needs root or CAP_PERFMON",
		    what);
		return EXIT_PERM;
	}
	msg("%s: %s", what, strerror(-n));
	return EXIT_USAGE;
}

static int sample_take(const struct dev *d, struct sample *s, bool pkgs)
{
	int n;

	memset(s, 0, sizeof(*s));
	if (pkgs) {
		n = vmrapl_host_pkg_stats(d->fd, &s->pkgs);
		if (n < 0)
			return host_read_err("VMRAPL_GET_PKG_STATS", n);
		s->nr_pkgs = n;
	}
	n = vmrapl_host_list_vms(d->fd, &s->vms);
	if (n < 0) {
		sample_free(s);
		return host_read_err("VMRAPL_LIST_VMS", n);
	}
	s->nr_vms = n;
	s->t = now_s();
	s->wall = wall_s();
	return EXIT_OK;
}

static const struct vmrapl_vm_entry *find_id(const struct sample *s,
					     uint64_t id)
{
	int i;

	for (i = 0; i < s->nr_vms; i++)
		if (s->vms[i].id == id)
			return &s->vms[i];
	return NULL;
}

struct row {
	struct vmrapl_vm_entry e;
	char name[NAME_LEN];
	char uuid[VMRAPL_HOST_UUID_LEN];	/* QEMU's -uuid, or "" */
	bool have_power;
	double power_w[VMRAPL_NR_DOMAINS];
	/* The overhead's share of the pkg energy over the interval, or -1. */
	double iv_ovh;
};

static double delta_w(uint64_t a, uint64_t b, double dt)
{
	if (b < a || dt <= 0)
		return 0;
	return (double)(b - a) / 1e6 / dt;
}

/* Rows for the VMs of @cur, with power against @prev (may be NULL). */
static struct row *make_rows(const struct sample *prev,
			     const struct sample *cur)
{
	struct row *rows = calloc(cur->nr_vms ? cur->nr_vms : 1, sizeof(*rows));
	int i, dom;

	if (!rows)
		return NULL;
	for (i = 0; i < cur->nr_vms; i++) {
		const struct vmrapl_vm_entry *p;
		struct row *r = &rows[i];

		r->e = cur->vms[i];
		r->iv_ovh = -1;
		text_vm_name(r->e.pid, r->name, sizeof(r->name));
		text_vm_uuid(r->e.pid, r->uuid);
		p = prev ? find_id(prev, r->e.id) : NULL;
		if (!p)
			continue;
		r->have_power = true;
		for (dom = 0; dom < VMRAPL_NR_DOMAINS; dom++) {
			if (r->e.energy_uj[dom] < p->energy_uj[dom] ||
			    r->e.overhead_uj[dom] < p->overhead_uj[dom])
				r->have_power = false;
			r->power_w[dom] = delta_w(p->energy_uj[dom],
						  r->e.energy_uj[dom],
						  cur->t - prev->t);
		}
		if (r->have_power &&
		    r->e.energy_uj[VMRAPL_DOM_PKG] > p->energy_uj[VMRAPL_DOM_PKG])
			r->iv_ovh = (double)(r->e.overhead_uj[VMRAPL_DOM_PKG] -
					     p->overhead_uj[VMRAPL_DOM_PKG]) /
				    (double)(r->e.energy_uj[VMRAPL_DOM_PKG] -
					     p->energy_uj[VMRAPL_DOM_PKG]);
	}
	return rows;
}

static int cmp_power(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	double px = x->have_power ? x->power_w[VMRAPL_DOM_PKG] : -1;
	double py = y->have_power ? y->power_w[VMRAPL_DOM_PKG] : -1;

	if (px != py)
		return px < py ? 1 : -1;
	return x->e.id < y->e.id ? -1 : x->e.id > y->e.id;
}

static double ovh_share(const struct vmrapl_vm_entry *e)
{
	if (!e->energy_uj[VMRAPL_DOM_PKG])
		return 0;
	return (double)e->overhead_uj[VMRAPL_DOM_PKG] /
	       (double)e->energy_uj[VMRAPL_DOM_PKG];
}

/* ---- output of VMs ------------------------------------------------------- */

static void json_dom_obj(const struct dev *d, const char *key,
			 const __u64 *uj)
{
	unsigned int dom;
	bool first = true;

	printf("\"%s\": {", key);
	for (dom = 0; dom < VMRAPL_NR_DOMAINS; dom++) {
		if (!dom_on(d, dom))
			continue;
		printf("%s\"%s\": %.6f", first ? "" : ", ",
		       vmrapl_host_domain_name(dom), uj[dom] / 1e6);
		first = false;
	}
	printf("}");
}

/* Does the module report the static part of each VM and vCPU? */
static bool static_split(const struct dev *d)
{
	return d->info.features & VMRAPL_INFO_F_STATIC_SPLIT;
}

/* The dynamic part of a PKG energy: the rest after its static part. */
static uint64_t dyn_uj(uint64_t energy_uj, uint64_t static_uj)
{
	return energy_uj > static_uj ? energy_uj - static_uj : 0;
}

/*
 * The overhead's share of a row's pkg energy shows over one of two
 * windows: that of its energy (list and stats: since vmrapl first
 * tracked the VM; stat: the command's run), or the interval of its power
 * (top).  OVH_TOTAL or OVH_INTERVAL picks the table's OVH% column.
 */
enum ovh_window { OVH_TOTAL, OVH_INTERVAL };

static void json_row(const struct dev *d, const struct row *r,
		     enum ovh_window ovh)
{
	unsigned int dom;
	bool first = true;

	printf("{\"id\": %llu, \"pid\": %u, \"name\": ",
	       (unsigned long long)r->e.id, r->e.pid);
	json_str(stdout, r->name);
	printf(", \"uuid\": ");
	if (r->uuid[0])
		json_str(stdout, r->uuid);
	else
		printf("null");
	printf(", \"vcpus\": %u, \"attached\": %s, \"mode\": \"%s\", \"charge\": \"%s\", ",
	       r->e.nr_vcpus,
	       (r->e.flags & VMRAPL_VM_F_ATTACHED) ? "true" : "false",
	       (r->e.flags & VMRAPL_VM_F_ATTACHED) ? "attached" : "auto",
	       vmrapl_host_charge_name(r->e.charge));
	json_dom_obj(d, "energy_j", r->e.energy_uj);
	printf(", ");
	json_dom_obj(d, "overhead_j", r->e.overhead_uj);
	printf(", \"power_w\": ");
	if (r->have_power) {
		printf("{");
		for (dom = 0; dom < VMRAPL_NR_DOMAINS; dom++) {
			if (!dom_on(d, dom))
				continue;
			printf("%s\"%s\": %.3f", first ? "" : ", ",
			       vmrapl_host_domain_name(dom), r->power_w[dom]);
			first = false;
		}
		printf("}");
	} else {
		printf("null");
	}
	/* overhead_share: the same as a fraction, kept for older readers. */
	printf(", \"overhead_pct\": %.3f, \"overhead_share\": %.4f, \"runtime_s\": %.3f, \"overhead_runtime_s\": %.3f",
	       100.0 * ovh_share(&r->e), ovh_share(&r->e),
	       r->e.runtime_ns / 1e9, r->e.overhead_ns / 1e9);
	if (ovh == OVH_INTERVAL) {
		printf(", \"interval_overhead_pct\": ");
		if (r->iv_ovh >= 0)
			printf("%.3f", 100.0 * r->iv_ovh);
		else
			printf("null");
	}
	/* The PKG energy's static part under the host's policy, and the rest. */
	if (static_split(d))
		printf(", \"static_j\": %.6f, \"dynamic_j\": %.6f",
		       r->e.static_uj / 1e6,
		       dyn_uj(r->e.energy_uj[VMRAPL_DOM_PKG], r->e.static_uj) /
		       1e6);
	printf("}");
}

/*
 * The text table's NAME column: as wide as the longest name (its table
 * form, text_ascii()), at least 4 and at most NAME_COL_MAX columns; a
 * longer name is cut to fit and ends in "..." (the ID column beside it
 * tells VMs apart; --json, -x and stats show it whole).
 */
#define NAME_COL_MAX	40

static void table_name(const char *name, char *out, size_t len)
{
	text_ascii(name, out, len);
	if (strlen(out) > NAME_COL_MAX)
		strcpy(out + NAME_COL_MAX - 3, "...");
}

static int name_width(const struct row *rows, int n)
{
	char name[NAME_LEN];
	int i, w = 4;

	for (i = 0; i < n; i++) {
		table_name(rows[i].name, name, sizeof(name));
		if ((int)strlen(name) > w)
			w = (int)strlen(name);
	}
	return w;
}

static void table_header(const struct dev *d, int name_w)
{
	unsigned int dom;
	char h[32];

	printf("%-6s %-7s %-*s %5s %-8s", "ID", "PID", name_w, "NAME", "VCPUS",
	       "MODE");
	for (dom = 0; dom < VMRAPL_NR_DOMAINS; dom++) {
		if (!dom_on(d, dom))
			continue;
		snprintf(h, sizeof(h), "%s_J", vmrapl_host_domain_name(dom));
		printf(" %12s", h);
	}
	for (dom = 0; dom < VMRAPL_NR_DOMAINS; dom++) {
		if (!dom_on(d, dom))
			continue;
		snprintf(h, sizeof(h), "%s_W", vmrapl_host_domain_name(dom));
		printf(" %9s", h);
	}
	printf(" %6s\n", "OVH%");
}

static void table_row(const struct dev *d, const struct row *r, int name_w,
		      enum ovh_window ovh)
{
	char name[NAME_LEN];
	unsigned int dom;

	table_name(r->name, name, sizeof(name));
	printf("%-6llu %-7u %-*s %5u %-8s", (unsigned long long)r->e.id,
	       r->e.pid, name_w, name, r->e.nr_vcpus,
	       (r->e.flags & VMRAPL_VM_F_ATTACHED) ? "attached" : "auto");
	for (dom = 0; dom < VMRAPL_NR_DOMAINS; dom++)
		if (dom_on(d, dom))
			printf(" %12.3f", r->e.energy_uj[dom] / 1e6);
	for (dom = 0; dom < VMRAPL_NR_DOMAINS; dom++) {
		if (!dom_on(d, dom))
			continue;
		if (r->have_power)
			printf(" %9.2f", r->power_w[dom]);
		else
			printf(" %9s", "-");
	}
	if (ovh == OVH_TOTAL)
		printf(" %6.1f\n", 100.0 * ovh_share(&r->e));
	else if (r->iv_ovh >= 0)
		printf(" %6.1f\n", 100.0 * r->iv_ovh);
	else
		printf(" %6s\n", "-");
}

/*
 * -x SEP: a header line of field names, then one line per VM, with the
 * fields the text and the JSON have.  @pre_names and @pre (the values of
 * the fields before the VM's, each followed by SEP) lead each line.  The
 * VM's fields come first, in the order they have always had, then:
 *
 *   list, stats, stat:  source, estimated, timestamp
 *   top:                interval_overhead_pct, source, estimated, kind,
 *                       package, then the package's power by book and its
 *                       static power; a VM's line has kind "vm" and no
 *                       package fields, a package's line (kind "package")
 *                       no VM fields.
 */
struct csv_ctx {
	const struct dev *d;
	const char *pre;
	bool top;
	double timestamp;	/* list, stats, stat */
};

static void csv_header(const struct dev *d, const char *pre_names, bool top)
{
	unsigned int dom, k;

	printf("%s", pre_names);
	printf("id%spid%sname%suuid%svcpus%smode%scharge", opt_sep, opt_sep,
	       opt_sep, opt_sep, opt_sep, opt_sep);
	for (dom = 0; dom < VMRAPL_NR_DOMAINS; dom++)
		if (dom_on(d, dom))
			printf("%s%s_j", opt_sep, vmrapl_host_domain_name(dom));
	for (dom = 0; dom < VMRAPL_NR_DOMAINS; dom++)
		if (dom_on(d, dom))
			printf("%s%s_w", opt_sep, vmrapl_host_domain_name(dom));
	printf("%soverhead_share%soverhead_pct", opt_sep, opt_sep);
	if (top)
		printf("%sinterval_overhead_pct", opt_sep);
	printf("%ssource%sestimated", opt_sep, opt_sep);
	if (!top) {
		printf("%stimestamp\n", opt_sep);
		return;
	}
	printf("%skind%spackage", opt_sep, opt_sep);
	for (k = 0; k < VMRAPL_HOST_NR_BOOKS; k++)
		printf("%s%s_w", opt_sep, vmrapl_host_book_name(k));
	printf("%sstatic_w\n", opt_sep);
}

/* source SEP estimated */
static void csv_source(const struct dev *d)
{
	printf("%s%s%s%s", opt_sep, vmrapl_host_source_name(d->info.source),
	       opt_sep, estimated(d) ? "true" : "false");
}

static void csv_row(const struct csv_ctx *c, const struct row *r)
{
	const struct dev *d = c->d;
	unsigned int dom, k;

	printf("%s%llu%s%u%s", c->pre, (unsigned long long)r->e.id, opt_sep,
	       r->e.pid, opt_sep);
	text_csv(stdout, r->name, opt_sep);
	printf("%s", opt_sep);
	text_csv(stdout, r->uuid, opt_sep);
	printf("%s%u%s%s%s%s", opt_sep, r->e.nr_vcpus, opt_sep,
	       (r->e.flags & VMRAPL_VM_F_ATTACHED) ? "attached" : "auto",
	       opt_sep, vmrapl_host_charge_name(r->e.charge));
	for (dom = 0; dom < VMRAPL_NR_DOMAINS; dom++)
		if (dom_on(d, dom))
			printf("%s%.6f", opt_sep, r->e.energy_uj[dom] / 1e6);
	for (dom = 0; dom < VMRAPL_NR_DOMAINS; dom++) {
		if (!dom_on(d, dom))
			continue;
		printf("%s", opt_sep);
		if (r->have_power)
			printf("%.3f", r->power_w[dom]);
	}
	printf("%s%.4f%s%.3f", opt_sep, ovh_share(&r->e), opt_sep,
	       100.0 * ovh_share(&r->e));
	if (c->top) {
		printf("%s", opt_sep);
		if (r->iv_ovh >= 0)
			printf("%.3f", 100.0 * r->iv_ovh);
	}
	csv_source(d);
	if (!c->top) {
		printf("%s%.3f\n", opt_sep, c->timestamp);
		return;
	}
	printf("%svm%s", opt_sep, opt_sep);
	for (k = 0; k <= VMRAPL_HOST_NR_BOOKS; k++)
		printf("%s", opt_sep);
	printf("\n");
}

/* top: a package's line: its power by book @w over the refresh. */
static void csv_pkg_row(const struct csv_ctx *c, int p,
			const struct vmrapl_pkg_stats *ps,
			const double w[VMRAPL_HOST_NR_BOOKS])
{
	const struct dev *d = c->d;
	/* The empty VM fields: id..charge, the three shares, _j and _w. */
	unsigned int dom, k, empty = 7 + 3;

	for (dom = 0; dom < VMRAPL_NR_DOMAINS; dom++)
		if (dom_on(d, dom))
			empty += 2;
	printf("%s", c->pre);
	for (k = 1; k < empty; k++)
		printf("%s", opt_sep);
	csv_source(d);
	printf("%spackage%s%d", opt_sep, opt_sep, p);
	for (k = 0; k < VMRAPL_HOST_NR_BOOKS; k++)
		printf("%s%.3f", opt_sep, w[k]);
	printf("%s%.3f\n", opt_sep, ps->p_static_uw / 1e6);
}

static void csv_rows(const struct csv_ctx *c, const struct row *rows, int n)
{
	int i;

	for (i = 0; i < n; i++)
		csv_row(c, &rows[i]);
}

/* The rows as a JSON array's elements, and the closing "]}". */
static void json_rows(const struct dev *d, const struct row *rows, int n,
		      enum ovh_window ovh)
{
	int i;

	for (i = 0; i < n; i++) {
		printf("%s", i ? ", " : "");
		json_row(d, &rows[i], ovh);
	}
	printf("]}\n");
}

static void table_rows(const struct dev *d, const struct row *rows, int n,
		       enum ovh_window ovh)
{
	int i, name_w = name_width(rows, n);

	table_header(d, name_w);
	for (i = 0; i < n; i++)
		table_row(d, &rows[i], name_w, ovh);
}


/* ---- commands ------------------------------------------------------------ */

static void features_list(const struct dev *d, char *buf, size_t len)
{
	vmrapl_host_feature_names(d->info.features, buf, len);
}

static int track_all_value(const struct dev *d)
{
	char v[16];

	if (!vmrapl_host_param_get("track_all", v, sizeof(v)))
		return v[0] == 'Y' || v[0] == 'y' || v[0] == '1';
	return !!(d->info.features & VMRAPL_INFO_F_TRACK_ALL);
}

/* A counter's measured update interval of @s, ns, and its spread. */
static __u32 update_ns(const struct vmrapl_pkg_static *s, unsigned int dom,
		       __u32 *spread)
{
	switch (dom) {
	case VMRAPL_DOM_PKG:
		*spread = s->update_pkg_spread_ns;
		return s->update_pkg_ns;
	case VMRAPL_DOM_CORE:
		*spread = s->update_core_spread_ns;
		return s->update_core_ns;
	default:
		*spread = s->update_dram_spread_ns;
		return s->update_dram_ns;
	}
}

/*
 * info: each package's counters' update intervals (VMRAPL_INFO_F_PKG_V2):
 * per domain the module has, and the per-core counter where it measured
 * one, the interval and spread, or "not measured" when the lag correction
 * uses the 1 ms default.  JSON: "update_us" and "update_spread_us" per
 * domain, null when not measured.
 */
static void info_update(const struct dev *d, const struct vmrapl_pkg_static *s)
{
	unsigned int dom, n = 0;
	__u32 ns, spread;

	for (dom = 0; dom < VMRAPL_NR_DOMAINS; dom++) {
		bool have = d->info.domains & (1u << dom);
		bool meas = s->update_flags & (1u << dom);

		if (!have && !meas)
			continue;
		ns = update_ns(s, dom, &spread);
		if (opt_json) {
			printf("%s\"%s\": ", n ? ", " : "",
			       vmrapl_host_domain_name(dom));
			if (meas)
				printf("{\"update_us\": %.1f, "
				       "\"update_spread_us\": %.1f}",
				       ns / 1e3, spread / 1e3);
			else
				printf("{\"update_us\": null, "
				       "\"update_spread_us\": null}");
		} else if (meas) {
			printf("%s%s %.1f +- %.1f us", n ? ", " : "",
			       vmrapl_host_domain_name(dom), ns / 1e3,
			       spread / 1e3);
		} else {
			printf("%s%s not measured (1000 us assumed)",
			       n ? ", " : "", vmrapl_host_domain_name(dom));
		}
		n++;
	}
}

/*
 * info: each package's static power, where it comes from and the online
 * fit, when the module has them and the caller may read the host's books
 * (CAP_PERFMON); nothing otherwise.  Then its counters' update intervals
 * (info_update()).
 */
static void info_static(const struct dev *d)
{
	struct vmrapl_pkg_static *st = NULL;
	struct vmrapl_pkg_stats *p = NULL;
	int i, n;

	if (!(d->info.features & VMRAPL_INFO_F_STATIC_FIT))
		return;
	n = vmrapl_host_pkg_static(d->fd, &p, &st);
	if (n <= 0 || !st)
		goto out;
	if (opt_json)
		printf(", \"static_power\": [");
	for (i = 0; i < n; i++) {
		const struct vmrapl_pkg_static *s = &st[i];
		bool cond = s->fit_flags & VMRAPL_FIT_F_CONDITIONED;

		if (opt_json) {
			printf("%s{\"package\": %d, \"p_static_w\": %.3f, "
			       "\"origin\": \"%s\", \"fit_w\": %.3f, "
			       "\"fit_sd_w\": %.3f, \"fit_dyn_w_per_cpu\": %.3f, "
			       "\"fit_blocks\": %u, \"fit_conditioned\": %s, "
			       "\"idle_w\": %.3f, \"core_w\": %.3f, "
			       "\"core_blocks\": %u", i ? ", " : "", i,
			       p[i].p_static_uw / 1e6,
			       vmrapl_host_origin_name(s->origin),
			       s->fit_static_uw / 1e6,
			       s->fit_static_sd_uw / 1e6, s->fit_dyn_uw / 1e6,
			       s->fit_blocks, cond ? "true" : "false",
			       s->idle_static_uw / 1e6,
			       s->core_static_uw / 1e6, s->core_blocks);
			if (d->info.features & VMRAPL_INFO_F_PKG_V2) {
				printf(", \"counters\": {");
				info_update(d, s);
				printf("}");
			}
			printf("}");
			continue;
		}
		printf("static power %-3d %.2f W (%s); fit %.2f +- %.2f W, "
		       "%.2f W/busy CPU, %u blocks, %s", i,
		       p[i].p_static_uw / 1e6,
		       vmrapl_host_origin_name(s->origin),
		       s->fit_static_uw / 1e6, s->fit_static_sd_uw / 1e6,
		       s->fit_dyn_uw / 1e6, s->fit_blocks,
		       cond ? "conditioned" : "not conditioned");
		/* Only with per-core energy counters (VMRAPL_INFO_F_PERCORE). */
		if (s->core_blocks)
			printf("; package less cores %.2f W, %u blocks",
			       s->core_static_uw / 1e6, s->core_blocks);
		printf("\n");
		if (d->info.features & VMRAPL_INFO_F_PKG_V2) {
			printf("counter update %-3d ", i);
			info_update(d, s);
			printf("\n");
		}
	}
	if (opt_json)
		printf("]");
out:
	free(p);
	free(st);
}

/*
 * info: the VMs attached by their VMMs, which hold the module (each
 * attached VM keeps a vmrapl fd open): why "rmmod vmrapl" fails.  VMs
 * that track_all follows do not hold it.  LIST_VMS needs CAP_PERFMON;
 * without it they are unknown, and info still answers.
 */
static void info_attached(const struct dev *d)
{
	struct vmrapl_vm_entry *vms = NULL;
	int i, n, nr = 0;

	n = vmrapl_host_list_vms(d->fd, &vms);
	for (i = 0; i < n; i++)
		nr += !!(vms[i].flags & VMRAPL_VM_F_ATTACHED);
	if (opt_json) {
		bool first = true;

		printf(", \"attached_vms\": ");
		if (n < 0) {
			printf("null");
			goto out;
		}
		printf("[");
		for (i = 0; i < n; i++) {
			char name[NAME_LEN];

			if (!(vms[i].flags & VMRAPL_VM_F_ATTACHED))
				continue;
			text_vm_name(vms[i].pid, name, sizeof(name));
			printf("%s{\"id\": %llu, \"pid\": %u, \"name\": ",
			       first ? "" : ", ",
			       (unsigned long long)vms[i].id, vms[i].pid);
			json_str(stdout, name);
			printf("}");
			first = false;
		}
		printf("]");
		goto out;
	}
	if (n == -EPERM || n == -EACCES) {
		printf("attached VMs     unknown (listing VMs needs root or CAP_PERFMON)\n");
		goto out;
	}
	if (n < 0) {
		printf("attached VMs     unknown (VMRAPL_LIST_VMS: %s)\n",
		       strerror(-n));
		goto out;
	}
	if (!nr) {
		printf("attached VMs     none\n");
		goto out;
	}
	printf("attached VMs     %d (they hold the module: rmmod fails while one is attached)\n",
	       nr);
	for (i = 0; i < n; i++) {
		char name[NAME_LEN], ascii[NAME_LEN];

		if (!(vms[i].flags & VMRAPL_VM_F_ATTACHED))
			continue;
		text_vm_name(vms[i].pid, name, sizeof(name));
		text_ascii(name, ascii, sizeof(ascii));
		printf("                 id %llu, pid %u, %s\n",
		       (unsigned long long)vms[i].id, vms[i].pid, ascii);
	}
out:
	free(vms);
}

static int cmd_info(int argc, char **argv)
{
	char version[64], feats[128], doms[32];
	const char *src;
	double loaded;
	struct dev d;
	unsigned int dom;
	int rc;

	(void)argv;
	if (argc) {
		msg("info takes no arguments");
		return EXIT_USAGE;
	}
	if (opt_sep) {
		msg("info has no CSV form (-x); use --json");
		return EXIT_USAGE;
	}
	rc = dev_open(&d);
	if (rc)
		return rc;
	if (vmrapl_host_module_version(version, sizeof(version)))
		snprintf(version, sizeof(version), "unknown");
	features_list(&d, feats, sizeof(feats));
	vmrapl_host_domain_names(d.info.domains, doms, sizeof(doms));
	src = vmrapl_host_source_name(d.info.source);
	loaded = vmrapl_host_load_time(&d.info);

	if (opt_json) {
		bool first = true;

		printf("{\"module_version\": ");
		json_str(stdout, version);
		printf(", \"abi_version\": %u, \"source\": \"%s\", \"estimated\": %s, "
		       "\"packages\": %u, \"cpus\": %u, \"domains\": [",
		       d.info.abi_version, src, estimated(&d) ? "true" : "false",
		       d.info.nr_packages, d.info.nr_cpus);
		for (dom = 0; dom < VMRAPL_NR_DOMAINS; dom++) {
			if (!dom_on(&d, dom))
				continue;
			printf("%s\"%s\"", first ? "" : ", ",
			       vmrapl_host_domain_name(dom));
			first = false;
		}
		printf("], \"host_esu\": %u, \"host_esu_uj\": %.3f, "
		       "\"sample_period_us\": %u, \"static_policy\": \"%s\", "
		       "\"track_all\": %s, \"features\": [",
		       d.info.host_esu, 1e6 / (double)(1ull << (d.info.host_esu & 63)),
		       d.info.sample_period_us,
		       vmrapl_host_policy_name(d.info.static_policy),
		       track_all_value(&d) ? "true" : "false");
		{
			char *save = NULL, *tok;

			first = true;
			for (tok = strtok_r(feats, " ", &save); tok;
			     tok = strtok_r(NULL, " ", &save)) {
				printf("%s\"%s\"", first ? "" : ", ", tok);
				first = false;
			}
		}
		printf("]");
		if (loaded > 0)
			printf(", \"load_time\": %.3f", loaded);
		info_attached(&d);
		info_static(&d);
		printf("}\n");
	} else {
		printf("module version   %s\n", version);
		printf("ABI version      %u\n", d.info.abi_version);
		printf("source           %s%s\n", src,
		       estimated(&d) ? "  *estimated* (a model, not a measurement)" : "");
		printf("packages         %u\n", d.info.nr_packages);
		printf("CPUs             %u\n", d.info.nr_cpus);
		printf("domains          %s\n", doms[0] ? doms : "none");
		printf("host ESU         %u (1/%llu J)\n", d.info.host_esu,
		       1ull << (d.info.host_esu & 63));
		printf("sample period    %u us\n", d.info.sample_period_us);
		printf("static policy    %s\n",
		       vmrapl_host_policy_name(d.info.static_policy));
		printf("track_all        %s\n", track_all_value(&d) ? "on" : "off");
		printf("features         %s\n", feats[0] ? feats : "none");
		if (loaded > 0) {
			time_t t = (time_t)loaded;
			char when[64];

			strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S %Z",
				 localtime(&t));
			printf("loaded           %s (totals count from then)\n",
			       when);
		}
		info_attached(&d);
		info_static(&d);
	}
	close(d.fd);
	return EXIT_OK;
}

/* The text of list and top when no VM is tracked: why there may be none. */
static void no_vms(const struct dev *d)
{
	if (track_all_value(d))
		printf("no VMs: no VMM has attached one and no KVM VM is running (track_all is on)\n");
	else
		printf("no VMs: no VMM has attached one (track_all is off: other KVM VMs are not tracked)\n");
}

static int cmd_list(int argc, char **argv)
{
	struct sample s0 = { 0 }, s1;
	struct row *rows;
	struct dev d;
	int rc;

	(void)argv;
	if (argc) {
		msg("list takes no arguments");
		return EXIT_USAGE;
	}
	rc = dev_open(&d);
	if (rc)
		return rc;
	if (opt_interval > 0) {
		rc = sample_take(&d, &s0, false);
		if (rc)
			goto out;
		sleep_s(opt_interval);
	}
	rc = sample_take(&d, &s1, false);
	if (rc)
		goto out;
	rows = make_rows(opt_interval > 0 ? &s0 : NULL, &s1);
	if (!rows) {
		msg("out of memory");
		rc = EXIT_USAGE;
		goto out1;
	}
	if (opt_json) {
		printf("{\"timestamp\": %.3f, \"source\": \"%s\", \"estimated\": %s, \"interval_s\": %.3f, \"vms\": [",
		       s1.wall, vmrapl_host_source_name(d.info.source),
		       estimated(&d) ? "true" : "false",
		       opt_interval > 0 ? s1.t - s0.t : 0.0);
		json_rows(&d, rows, s1.nr_vms, OVH_TOTAL);
	} else if (opt_sep) {
		struct csv_ctx c = { .d = &d, .pre = "", .timestamp = s1.wall };

		csv_header(&d, "", false);
		csv_rows(&c, rows, s1.nr_vms);
	} else if (!s1.nr_vms) {
		no_vms(&d);
	} else {
		printf("J and OVH%% since each VM was first tracked; ");
		if (opt_interval > 0)
			printf("W over the last %.1f s\n", s1.t - s0.t);
		else
			printf("no W (--interval 0)\n");
		table_rows(&d, rows, s1.nr_vms, OVH_TOTAL);
		if (estimated(&d))
			printf("(source %s: *estimated*, not measured)\n",
			       vmrapl_host_source_name(d.info.source));
	}
	free(rows);
out1:
	sample_free(&s1);
out:
	sample_free(&s0);
	close(d.fd);
	return rc;
}

/*
 * top on a terminal: keys are read as they are pressed and not echoed,
 * so that q quits.  The terminal is put back at exit and on a signal.
 * Only for a foreground process whose standard input is the terminal.
 */
static struct termios tty_saved;
static volatile sig_atomic_t tty_keys;

static void tty_restore(void)
{
	if (tty_keys) {
		tcsetattr(STDIN_FILENO, TCSANOW, &tty_saved);
		tty_keys = 0;
	}
}

static void tty_restore_and_die(int sig)
{
	tty_restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void tty_keys_on(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	struct termios t;
	size_t i;

	if (!isatty(STDIN_FILENO) || tcgetpgrp(STDIN_FILENO) != getpgrp() ||
	    tcgetattr(STDIN_FILENO, &tty_saved))
		return;
	t = tty_saved;
	t.c_lflag &= ~(ICANON | ECHO);
	t.c_cc[VMIN] = 1;
	t.c_cc[VTIME] = 0;
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], tty_restore_and_die);
	if (tcsetattr(STDIN_FILENO, TCSANOW, &t))
		return;
	tty_keys = 1;
	atexit(tty_restore);
}

/* Wait @s seconds: true when q was pressed meanwhile (with tty_keys). */
static bool wait_or_quit(double s)
{
	double end = now_s() + s;

	if (!tty_keys) {
		sleep_s(s);
		return false;
	}
	for (;;) {
		struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
		double left = end - now_s();
		char c;
		int r;

		if (left <= 0)
			return false;
		r = poll(&p, 1, (int)ceil(left * 1000));
		if (r < 0 && errno == EINTR)
			continue;
		if (!r)
			continue;
		if (r < 0 || !(p.revents & POLLIN) ||
		    read(STDIN_FILENO, &c, 1) != 1) {
			/* No keys any more (the terminal went): just wait. */
			sleep_s(end - now_s());
			return false;
		}
		if (c == 'q' || c == 'Q')
			return true;
	}
}

/* Package power of each book (VMRAPL_HOST_BOOK_*) from @a to @b. */
static void pkg_power(const struct vmrapl_pkg_stats *a,
		      const struct vmrapl_pkg_stats *b, double dt,
		      double w[VMRAPL_HOST_NR_BOOKS])
{
	int k;

	for (k = 0; k < VMRAPL_HOST_NR_BOOKS; k++)
		w[k] = delta_w(vmrapl_host_book(a, k)[VMRAPL_DOM_PKG],
			       vmrapl_host_book(b, k)[VMRAPL_DOM_PKG], dt);
}

static void fmt_power(char *buf, size_t len, uint64_t uw);
static void fmt_window(char *buf, size_t len, uint64_t us);

/* vmrapl-limitd's records: a VM is held while its record is there. */
#define LIMITD_RUN_DIR	"/run/vmrapl/limit"

/*
 * top, table view: a line for each VM with a power limit, its power over
 * the interval against it, and whether vmrapl-limitd holds it.
 */
static void top_limits(const struct dev *d, const struct row *rows, int n)
{
	char name[NAME_LEN], p[64], w[64], rec[64];
	struct vmrapl_limit l;
	bool first = true;
	uint64_t uw, us;
	uint32_t src;
	int i;

	for (i = 0; i < n; i++) {
		if (vmrapl_host_vm_limit_get(d->fd, rows[i].e.id, &l))
			continue;
		src = vmrapl_host_limit_held(&l, &uw, &us);
		if (!src)
			continue;
		l.limit_uw = uw;
		l.window_us = us;
		if (first)
			printf("\n");
		first = false;
		snprintf(rec, sizeof(rec), LIMITD_RUN_DIR "/%llu",
			 (unsigned long long)rows[i].e.id);
		text_ascii(rows[i].name, name, sizeof(name));
		fmt_power(p, sizeof(p), l.limit_uw);
		fmt_window(w, sizeof(w), l.window_us);
		printf("capped: VM %llu \"%s\" ",
		       (unsigned long long)rows[i].e.id, name);
		if (rows[i].have_power)
			printf("%.2f W, ", rows[i].power_w[VMRAPL_DOM_PKG]);
		printf("limit %s over %s%s, %s\n", p, w,
		       src == VMRAPL_LIMIT_S_GUEST ? " (guest's)" : "",
		       access(rec, F_OK) ? "NOT HELD (vmrapl-limitd)" : "held");
	}
}

static int cmd_top(int argc, char **argv)
{
	struct sample prev, cur;
	bool tty = isatty(STDOUT_FILENO);
	double interval = opt_interval;
	struct dev d;
	long it;
	int rc, p, k;

	(void)argv;
	if (argc) {
		msg("top takes no arguments");
		return EXIT_USAGE;
	}
	if (interval <= 0) {
		msg("top: --interval must be more than 0 seconds (it is how often top refreshes)");
		return EXIT_USAGE;
	}
	rc = dev_open(&d);
	if (rc)
		return rc;
	rc = sample_take(&d, &prev, true);
	if (rc)
		goto out;
	tty_keys_on();
	for (it = 0; !opt_iterations || it < opt_iterations; it++) {
		struct row *rows;
		double dt, ts;

		if (wait_or_quit(interval))
			break;
		rc = sample_take(&d, &cur, true);
		if (rc)
			break;
		dt = cur.t - prev.t;
		ts = wall_s();
		rows = make_rows(&prev, &cur);
		if (!rows) {
			msg("out of memory");
			rc = EXIT_USAGE;
			sample_free(&cur);
			break;
		}
		qsort(rows, cur.nr_vms, sizeof(*rows), cmp_power);
		if (opt_json) {
			printf("{\"timestamp\": %.3f, \"iteration\": %ld, \"interval_s\": %.3f, \"source\": \"%s\", \"estimated\": %s, \"packages\": [",
			       ts, it + 1, dt, vmrapl_host_source_name(d.info.source),
			       estimated(&d) ? "true" : "false");
			for (p = 0; p < cur.nr_pkgs; p++) {
				double w[VMRAPL_HOST_NR_BOOKS] = { 0 };

				if (p < prev.nr_pkgs)
					pkg_power(&prev.pkgs[p], &cur.pkgs[p], dt, w);
				printf("%s{\"package\": %d, \"cpus\": %u, \"p_static_w\": %.3f, \"power_w\": {",
				       p ? ", " : "", p, cur.pkgs[p].nr_cpus,
				       cur.pkgs[p].p_static_uw / 1e6);
				for (k = 0; k < VMRAPL_HOST_NR_BOOKS; k++)
					printf("%s\"%s\": %.3f", k ? ", " : "",
					       vmrapl_host_book_name(k), w[k]);
				printf("}}");
			}
			printf("], \"vms\": [");
			json_rows(&d, rows, cur.nr_vms, OVH_INTERVAL);
		} else if (opt_sep) {
			struct csv_ctx c = { .d = &d, .top = true };
			char pre[64];

			if (!it) {
				snprintf(pre, sizeof(pre), "timestamp%siteration%s",
					 opt_sep, opt_sep);
				csv_header(&d, pre, true);
			}
			snprintf(pre, sizeof(pre), "%.3f%s%ld%s", ts, opt_sep,
				 it + 1, opt_sep);
			c.pre = pre;
			for (p = 0; p < cur.nr_pkgs; p++) {
				double w[VMRAPL_HOST_NR_BOOKS] = { 0 };

				if (p < prev.nr_pkgs)
					pkg_power(&prev.pkgs[p], &cur.pkgs[p], dt, w);
				csv_pkg_row(&c, p, &cur.pkgs[p], w);
			}
			csv_rows(&c, rows, cur.nr_vms);
		} else {
			if (tty)
				printf("\033[H\033[2J");
			printf("vmraplctl top - source %s%s - interval %.1f s - %d VMs\n",
			       vmrapl_host_source_name(d.info.source),
			       estimated(&d) ? " *estimated*" : "", dt,
			       cur.nr_vms);
			for (p = 0; p < cur.nr_pkgs; p++) {
				double w[VMRAPL_HOST_NR_BOOKS] = { 0 };

				if (p < prev.nr_pkgs)
					pkg_power(&prev.pkgs[p], &cur.pkgs[p], dt, w);
				printf("pkg %d: %7.2f W  VMs %7.2f W  host %7.2f W  idle %7.2f W  lost %6.2f W  (%u CPUs, static %.2f W)\n",
				       p, w[VMRAPL_HOST_BOOK_SAMPLED],
				       w[VMRAPL_HOST_BOOK_TRACKED],
				       w[VMRAPL_HOST_BOOK_HOST],
				       w[VMRAPL_HOST_BOOK_IDLE],
				       w[VMRAPL_HOST_BOOK_LOST],
				       cur.pkgs[p].nr_cpus,
				       cur.pkgs[p].p_static_uw / 1e6);
			}
			printf("\n");
			if (!cur.nr_vms) {
				no_vms(&d);
			} else {
				printf("W and OVH%% over the last %.1f s; J since each VM was first tracked\n",
				       dt);
				table_rows(&d, rows, cur.nr_vms, OVH_INTERVAL);
				top_limits(&d, rows, cur.nr_vms);
			}
		}
		fflush(stdout);
		free(rows);
		sample_free(&prev);
		prev = cur;
	}
	sample_free(&prev);
	tty_restore();
out:
	close(d.fd);
	return rc;
}

/* One more VM that matches: its index kept while there is room. */
static void add_match(int *match, int room, int *n, int i)
{
	if (*n < room)
		match[*n] = i;
	(*n)++;
}

/*
 * The VMs @what names in @s, as virsh takes a domain: a number is an id
 * (ids are unique), else a pid; a UUID (either case) is the VM whose QEMU
 * -uuid it is; else a name, as the JSON shows it or as the table does.
 * The first kind that matches decides.  Their indexes go to @match (room
 * for @room); returns how many VMs match, 0 when none does.
 */
static int resolve_vm(const struct sample *s, const char *what, int *match,
		      int room)
{
	char uuid[VMRAPL_HOST_UUID_LEN], *end;
	unsigned long long v;
	int i, n = 0;

	errno = 0;
	v = strtoull(what, &end, 10);
	if (*what && !*end && !errno) {
		for (i = 0; i < s->nr_vms; i++)
			if (s->vms[i].id == v) {
				add_match(match, room, &n, i);
				return n;
			}
		for (i = 0; i < s->nr_vms; i++)
			if (s->vms[i].pid == v)
				add_match(match, room, &n, i);
		if (n)
			return n;
	}
	if (vmrapl_host_uuid_canonical(what, uuid)) {
		char vu[VMRAPL_HOST_UUID_LEN];

		for (i = 0; i < s->nr_vms; i++)
			if (text_vm_uuid(s->vms[i].pid, vu) && !strcmp(vu, uuid))
				add_match(match, room, &n, i);
		if (n)
			return n;
	}
	for (i = 0; i < s->nr_vms; i++) {
		char name[NAME_LEN], ascii[NAME_LEN];

		text_vm_name(s->vms[i].pid, name, sizeof(name));
		text_ascii(name, ascii, sizeof(ascii));
		if (!strcmp(name, what) || !strcmp(ascii, what))
			add_match(match, room, &n, i);
	}
	return n;
}

/*
 * The one VM @what names in @s (resolve_vm()): its index in *@idx, or the
 * exit status after saying why there is none: no VM matches (EXIT_NOVM),
 * or several do (EXIT_USAGE; their ids listed).
 */
static int pick_vm(const struct sample *s, const char *what, int *idx)
{
	int i, nmatch, match[MAX_MATCH];

	nmatch = resolve_vm(s, what, match, MAX_MATCH);
	if (!nmatch) {
		msg("no VM matches '%s' (an id, a pid, a name or a UUID)",
		    what);
		return EXIT_NOVM;
	}
	if (nmatch > 1) {
		char ids[MAX_MATCH * 24];
		size_t n = 0;

		ids[0] = 0;
		for (i = 0; i < nmatch && i < MAX_MATCH; i++)
			n += snprintf(ids + n, sizeof(ids) - n, "%s%llu",
				      i ? ", " : "",
				      (unsigned long long)s->vms[match[i]].id);
		msg("'%s' is ambiguous: it matches %d VMs, ids %s%s; give the id",
		    what, nmatch, ids, nmatch > MAX_MATCH ? ", ..." : "");
		return EXIT_USAGE;
	}
	*idx = match[0];
	return EXIT_OK;
}

/* Per-vCPU detail of one VM (VMRAPL_GET_VM_STATS), at one instant. */
struct vcpu_snap {
	struct vmrapl_stats st;
	struct vmrapl_vcpu_stats *v;
	int n;
};

static int vcpu_snap_take(const struct dev *d, uint64_t id,
			  struct vcpu_snap *vs)
{
	vs->n = vmrapl_host_vm_stats(d->fd, id, &vs->st, &vs->v);
	if (vs->n == -ENOENT) {
		msg("VM %llu went away", (unsigned long long)id);
		return EXIT_NOVM;
	}
	if (vs->n < 0)
		return host_read_err("VMRAPL_GET_VM_STATS", vs->n);
	return 0;
}

/*
 * The VM's totals from the same GET_VM_STATS call as its vCPUs, so the
 * whole and its parts are read at one instant.
 */
static void entry_set_totals(struct vmrapl_vm_entry *e,
			     const struct vmrapl_stats *st)
{
	memcpy(e->energy_uj, st->energy_uj, sizeof(e->energy_uj));
	memcpy(e->overhead_uj, st->overhead_uj, sizeof(e->overhead_uj));
	e->runtime_ns = st->runtime_ns;
	e->overhead_ns = st->overhead_ns;
	e->static_uj = st->static_uj;
	e->overhead_static_uj = st->overhead_static_uj;
}

/* Power of vCPU @i between @a and @b (NULL: no interval), else -1. */
static double vcpu_power(const struct vcpu_snap *a, const struct vcpu_snap *b,
			 int i, unsigned int dom, double dt)
{
	if (!a || dt <= 0 || i >= a->n)
		return -1;
	return (double)(b->v[i].energy_uj[dom] - a->v[i].energy_uj[dom]) /
	       1e6 / dt;
}

static double vcpu_busy(const struct vcpu_snap *a, const struct vcpu_snap *b,
			int i, double dt)
{
	if (!a || dt <= 0 || i >= a->n)
		return -1;
	return (double)(b->v[i].runtime_ns - a->v[i].runtime_ns) / 1e9 / dt;
}

static void json_vcpus(const struct dev *d, const struct vcpu_snap *a,
		       const struct vcpu_snap *b, double dt)
{
	unsigned int dom;
	int i;

	printf("[");
	for (i = 0; i < b->n; i++) {
		printf("%s{\"vcpu\": %d, \"energy_j\": {", i ? ", " : "", i);
		for (dom = 0; dom < VMRAPL_NR_DOMAINS; dom++)
			if (dom_on(d, dom))
				printf("%s\"%s\": %.6f", dom ? ", " : "",
				       vmrapl_host_domain_name(dom),
				       b->v[i].energy_uj[dom] / 1e6);
		printf("}, \"runtime_s\": %.6f", b->v[i].runtime_ns / 1e9);
		if (static_split(d))
			printf(", \"static_j\": %.6f, \"dynamic_j\": %.6f",
			       b->v[i].static_uj / 1e6,
			       dyn_uj(b->v[i].energy_uj[VMRAPL_DOM_PKG],
				      b->v[i].static_uj) / 1e6);
		if (vcpu_busy(a, b, i, dt) >= 0) {
			printf(", \"busy\": %.4f, \"power_w\": {",
			       vcpu_busy(a, b, i, dt));
			for (dom = 0; dom < VMRAPL_NR_DOMAINS; dom++)
				if (dom_on(d, dom))
					printf("%s\"%s\": %.3f", dom ? ", " : "",
					       vmrapl_host_domain_name(dom),
					       vcpu_power(a, b, i, dom, dt));
			printf("}");
		}
		printf("}");
	}
	printf("]");
}

static void text_vcpus(const struct dev *d, const struct vcpu_snap *a,
		       const struct vcpu_snap *b, double dt)
{
	unsigned int dom;
	int i;

	printf("  %-5s", "vCPU");
	for (dom = 0; dom < VMRAPL_NR_DOMAINS; dom++)
		if (dom_on(d, dom))
			printf(" %12s J", vmrapl_host_domain_name(dom));
	printf(" %11s", "runtime s");
	if (a && dt > 0) {
		printf(" %6s", "busy");
		for (dom = 0; dom < VMRAPL_NR_DOMAINS; dom++)
			if (dom_on(d, dom))
				printf(" %7s W", vmrapl_host_domain_name(dom));
	}
	if (static_split(d))
		printf(" %12s %12s", "static J", "dynamic J");
	printf("\n");
	for (i = 0; i < b->n; i++) {
		printf("  %-5d", i);
		for (dom = 0; dom < VMRAPL_NR_DOMAINS; dom++)
			if (dom_on(d, dom))
				printf(" %14.3f", b->v[i].energy_uj[dom] / 1e6);
		printf(" %11.3f", b->v[i].runtime_ns / 1e9);
		if (vcpu_busy(a, b, i, dt) >= 0) {
			printf(" %5.1f%%", 100.0 * vcpu_busy(a, b, i, dt));
			for (dom = 0; dom < VMRAPL_NR_DOMAINS; dom++)
				if (dom_on(d, dom))
					printf(" %9.2f",
					       vcpu_power(a, b, i, dom, dt));
		}
		if (static_split(d))
			printf(" %12.3f %12.3f", b->v[i].static_uj / 1e6,
			       dyn_uj(b->v[i].energy_uj[VMRAPL_DOM_PKG],
				      b->v[i].static_uj) / 1e6);
		printf("\n");
	}
}

static int cmd_stats(int argc, char **argv)
{
	struct vcpu_snap v0 = { 0 }, v1 = { 0 };
	struct sample s0 = { 0 }, s1 = { 0 };
	struct row *rows = NULL;
	double dt = 0;
	struct dev d;
	int rc, idx, i;
	unsigned int dom;

	if (argc != 1) {
		msg("usage: vmraplctl stats <vm-id|pid|name|uuid>");
		return EXIT_USAGE;
	}
	rc = dev_open(&d);
	if (rc)
		return rc;
	rc = sample_take(&d, &s0, false);
	if (rc)
		goto out;
	rc = pick_vm(&s0, argv[0], &idx);
	if (rc)
		goto out;
	if (opt_interval > 0) {
		uint64_t id = s0.vms[idx].id;

		rc = vcpu_snap_take(&d, id, &v0);
		if (rc)
			goto out;
		entry_set_totals(&s0.vms[idx], &v0.st);
		sleep_s(opt_interval);
		rc = sample_take(&d, &s1, false);
		if (rc)
			goto out;
		rc = vcpu_snap_take(&d, id, &v1);
		if (rc)
			goto out;
		for (idx = -1, i = 0; i < s1.nr_vms; i++)
			if (s1.vms[i].id == id)
				idx = i;
		if (idx < 0) {
			msg("VM %llu went away", (unsigned long long)id);
			rc = EXIT_NOVM;
			goto out;
		}
		entry_set_totals(&s1.vms[idx], &v1.st);
		dt = s1.t - s0.t;
		rows = make_rows(&s0, &s1);
		if (!rows) {
			rc = EXIT_USAGE;
			goto out;
		}
	} else {
		rc = vcpu_snap_take(&d, s0.vms[idx].id, &v1);
		if (rc)
			goto out;
		entry_set_totals(&s0.vms[idx], &v1.st);
		rows = make_rows(NULL, &s0);
		if (!rows) {
			rc = EXIT_USAGE;
			goto out;
		}
	}

	if (opt_json) {
		printf("{\"timestamp\": %.3f, \"source\": \"%s\", \"estimated\": %s, \"interval_s\": %.3f, \"vm\": ",
		       opt_interval > 0 ? s1.wall : s0.wall,
		       vmrapl_host_source_name(d.info.source),
		       estimated(&d) ? "true" : "false",
		       opt_interval > 0 ? s1.t - s0.t : 0.0);
		json_row(&d, &rows[idx], OVH_INTERVAL);
		printf(", \"per_vcpu\": ");
		json_vcpus(&d, dt > 0 ? &v0 : NULL, &v1, dt);
		printf("}\n");
	} else if (opt_sep) {
		struct csv_ctx c = {
			.d = &d, .pre = "",
			.timestamp = opt_interval > 0 ? s1.wall : s0.wall,
		};

		csv_header(&d, "", false);
		csv_row(&c, &rows[idx]);
	} else {
		const struct row *r = &rows[idx];
		char name[NAME_LEN];

		text_ascii(r->name, name, sizeof(name));
		printf("VM %llu \"%s\"\n", (unsigned long long)r->e.id, name);
		if (r->uuid[0])
			printf("  uuid              %s\n", r->uuid);
		printf("  pid               %u\n", r->e.pid);
		printf("  mode              %s\n",
		       (r->e.flags & VMRAPL_VM_F_ATTACHED) ? "attached" :
		       "auto (track_all)");
		printf("  vCPUs             %u\n", r->e.nr_vcpus);
		printf("  charge            %s\n",
		       vmrapl_host_charge_name(r->e.charge));
		printf("  energy           ");
		for (dom = 0; dom < VMRAPL_NR_DOMAINS; dom++)
			if (dom_on(&d, dom))
				printf(" %s %.3f J", vmrapl_host_domain_name(dom),
				       r->e.energy_uj[dom] / 1e6);
		printf("\n  overhead         ");
		for (dom = 0; dom < VMRAPL_NR_DOMAINS; dom++)
			if (dom_on(&d, dom))
				printf(" %s %.3f J", vmrapl_host_domain_name(dom),
				       r->e.overhead_uj[dom] / 1e6);
		printf("\n  overhead share    %.1f %% since first tracked",
		       100.0 * ovh_share(&r->e));
		if (r->iv_ovh >= 0)
			printf("; %.1f %% over the last %.1f s",
			       100.0 * r->iv_ovh, s1.t - s0.t);
		printf("\n");
		if (static_split(&d)) {
			printf("  static (pkg)      %.3f J (policy %s; overhead %.3f J)\n",
			       r->e.static_uj / 1e6,
			       vmrapl_host_policy_name(d.info.static_policy),
			       r->e.overhead_static_uj / 1e6);
			printf("  dynamic (pkg)     %.3f J\n",
			       dyn_uj(r->e.energy_uj[VMRAPL_DOM_PKG],
				      r->e.static_uj) / 1e6);
		}
		if (r->have_power) {
			printf("  power            ");
			for (dom = 0; dom < VMRAPL_NR_DOMAINS; dom++)
				if (dom_on(&d, dom))
					printf(" %s %.2f W",
					       vmrapl_host_domain_name(dom),
					       r->power_w[dom]);
			printf(" (over %.1f s)\n", s1.t - s0.t);
		}
		printf("  vCPU runtime      %.3f s\n", r->e.runtime_ns / 1e9);
		printf("  overhead runtime  %.3f s\n", r->e.overhead_ns / 1e9);
		printf("  source            %s%s\n",
		       vmrapl_host_source_name(d.info.source),
		       estimated(&d) ? " *estimated*" : "");
		text_vcpus(&d, dt > 0 ? &v0 : NULL, &v1, dt);
	}
out:
	free(v0.v);
	free(v1.v);
	free(rows);
	sample_free(&s0);
	sample_free(&s1);
	close(d.fd);
	return rc;
}

/*
 * stat: run a command, then every VM's energy over its run time (like
 * perf stat -- CMD).  A VM that started meanwhile counts from its start;
 * one that ended meanwhile cannot be read any more and is only counted.
 */
static int cmd_stat(int argc, char **argv)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_int, old_quit;
	struct sample s0, s1;
	struct row *rows = NULL;
	double t0, dt;
	int rc, i, p, k, status, ended = 0, crc, exec_err = 0, pfd[2];
	unsigned int dom;
	struct dev d;
	ssize_t n;
	pid_t pid;

	if (argc < 1) {
		msg("usage: vmraplctl stat [--] COMMAND [ARGS...]");
		return EXIT_USAGE;
	}
	rc = dev_open(&d);
	if (rc)
		return rc;
	rc = sample_take(&d, &s0, true);
	if (rc) {
		close(d.fd);
		return rc;
	}
	/*
	 * A pipe that exec closes: the child writes errno to it when the
	 * command cannot be run, and then there is nothing to report.
	 */
	if (pipe2(pfd, O_CLOEXEC)) {
		msg("pipe: %s", strerror(errno));
		sample_free(&s0);
		close(d.fd);
		return EXIT_USAGE;
	}
	fflush(NULL);
	/* Like perf stat and time: ^C is the command's, the report still comes. */
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	t0 = wall_s();
	pid = fork();
	if (pid == 0) {
		int err;

		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		close(d.fd);
		close(pfd[0]);
		if (orig_stdout >= 0)
			dup2(orig_stdout, STDOUT_FILENO);
		execvp(argv[0], argv);
		err = errno;
		msg("cannot run '%s': %s", argv[0], strerror(err));
		if (write(pfd[1], &err, sizeof(err)) != sizeof(err))
			_exit(126);
		_exit(err == ENOENT ? 127 : 126);
	}
	close(pfd[1]);
	if (pid < 0) {
		msg("fork: %s", strerror(errno));
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		close(pfd[0]);
		sample_free(&s0);
		close(d.fd);
		return EXIT_USAGE;
	}
	do {
		n = read(pfd[0], &exec_err, sizeof(exec_err));
	} while (n < 0 && errno == EINTR);
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	crc = WIFEXITED(status) ? WEXITSTATUS(status) :
	      WIFSIGNALED(status) ? 128 + WTERMSIG(status) : EXIT_USAGE;
	if (n == sizeof(exec_err)) {
		/* The child said why; there was no run to report. */
		sample_free(&s0);
		close(d.fd);
		return crc;
	}
	rc = sample_take(&d, &s1, true);
	if (rc)
		goto out;
	dt = s1.t - s0.t;
	rows = make_rows(NULL, &s1);
	if (!rows) {
		msg("out of memory");
		rc = EXIT_USAGE;
		goto out1;
	}
	/* Each VM's energy over the run, its power the average over it. */
	for (i = 0; i < s1.nr_vms; i++) {
		const struct vmrapl_vm_entry *a = find_id(&s0, rows[i].e.id);
		struct vmrapl_vm_entry *e = &rows[i].e;

		for (dom = 0; dom < VMRAPL_NR_DOMAINS; dom++) {
			uint64_t e0 = a ? a->energy_uj[dom] : 0;
			uint64_t o0 = a ? a->overhead_uj[dom] : 0;

			e->energy_uj[dom] = e->energy_uj[dom] >= e0 ?
					    e->energy_uj[dom] - e0 : 0;
			e->overhead_uj[dom] = e->overhead_uj[dom] >= o0 ?
					      e->overhead_uj[dom] - o0 : 0;
			rows[i].power_w[dom] = dt > 0 ?
				e->energy_uj[dom] / 1e6 / dt : 0;
		}
		if (a) {
			e->runtime_ns -= e->runtime_ns >= a->runtime_ns ?
					 a->runtime_ns : e->runtime_ns;
			e->overhead_ns -= e->overhead_ns >= a->overhead_ns ?
					  a->overhead_ns : e->overhead_ns;
		}
		rows[i].have_power = dt > 0;
	}
	for (i = 0; i < s0.nr_vms; i++)
		if (!find_id(&s1, s0.vms[i].id))
			ended++;
	qsort(rows, s1.nr_vms, sizeof(*rows), cmp_power);

	if (opt_json) {
		printf("{\"command\": [");
		for (i = 0; i < argc; i++) {
			printf("%s", i ? ", " : "");
			json_str(stdout, argv[i]);
		}
		printf("], \"exit_status\": %d, \"timestamp\": %.3f, \"elapsed_s\": %.3f, \"source\": \"%s\", \"estimated\": %s, \"vms_ended\": %d, \"packages\": [",
		       crc, t0, dt, vmrapl_host_source_name(d.info.source),
		       estimated(&d) ? "true" : "false", ended);
		for (p = 0; p < s1.nr_pkgs; p++) {
			printf("%s{\"package\": %d, \"energy_j\": {", p ? ", " : "", p);
			for (k = 0; k < VMRAPL_HOST_NR_BOOKS; k++) {
				uint64_t a = p < s0.nr_pkgs ?
					vmrapl_host_book(&s0.pkgs[p], k)[VMRAPL_DOM_PKG] : 0;
				uint64_t b = vmrapl_host_book(&s1.pkgs[p], k)[VMRAPL_DOM_PKG];

				printf("%s\"%s\": %.6f", k ? ", " : "",
				       vmrapl_host_book_name(k),
				       b >= a ? (b - a) / 1e6 : 0.0);
			}
			printf("}}");
		}
		printf("], \"vms\": [");
		json_rows(&d, rows, s1.nr_vms, OVH_TOTAL);
	} else if (opt_sep) {
		struct csv_ctx c = { .d = &d, .pre = "", .timestamp = t0 };

		csv_header(&d, "", false);
		csv_rows(&c, rows, s1.nr_vms);
	} else {
		printf("vmraplctl stat: '");
		for (i = 0; i < argc; i++) {
			char a[256];

			text_ascii(argv[i], a, sizeof(a));
			printf("%s%s", i ? " " : "", a);
		}
		printf("' ran %.3f s, exit status %d; VMs' energy (J), average power (W) and OVH%% over it:\n\n",
		       dt, crc);
		table_rows(&d, rows, s1.nr_vms, OVH_TOTAL);
		if (ended)
			printf("(%d VM%s ended during the command and %s not shown)\n",
			       ended, ended > 1 ? "s" : "", ended > 1 ? "are" : "is");
		printf("\n");
		for (p = 0; p < s1.nr_pkgs; p++) {
			double w[VMRAPL_HOST_NR_BOOKS] = { 0 };

			if (p < s0.nr_pkgs)
				pkg_power(&s0.pkgs[p], &s1.pkgs[p], dt, w);
			printf("pkg %d: %9.3f J  VMs %9.3f J  host %9.3f J  idle %9.3f J  lost %8.3f J\n",
			       p, w[VMRAPL_HOST_BOOK_SAMPLED] * dt,
			       w[VMRAPL_HOST_BOOK_TRACKED] * dt,
			       w[VMRAPL_HOST_BOOK_HOST] * dt,
			       w[VMRAPL_HOST_BOOK_IDLE] * dt,
			       w[VMRAPL_HOST_BOOK_LOST] * dt);
		}
		if (estimated(&d))
			printf("(source %s: *estimated*, not measured)\n",
			       vmrapl_host_source_name(d.info.source));
	}
	fflush(stdout);
	rc = crc;
	free(rows);
out1:
	sample_free(&s1);
out:
	sample_free(&s0);
	close(d.fd);
	return rc;
}

static bool have_cap_sys_admin(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
		.pid = 0,
	};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data))
		return geteuid() == 0;
	return data[CAP_TO_INDEX(CAP_SYS_ADMIN)].effective &
	       CAP_TO_MASK(CAP_SYS_ADMIN);
}

/* Module parameters that are booleans: shown and taken as on/off. */
static bool param_is_bool(const char *name)
{
	return !strcmp(name, "track_all");
}

/* A boolean parameter's value as the kernel prints it (Y/N, 1/0): on/off. */
static const char *bool_word(const char *v)
{
	if (!strcmp(v, "Y") || !strcmp(v, "y") || !strcmp(v, "1"))
		return "on";
	if (!strcmp(v, "N") || !strcmp(v, "n") || !strcmp(v, "0"))
		return "off";
	return v;
}

/*
 * The value to write for NAME=@value: a boolean's on/off as 1/0 (the
 * module parameter takes 0 or 1); else @value itself.
 */
static const char *param_value(const char *name, const char *value)
{
	if (param_is_bool(name)) {
		if (!strcmp(value, "on"))
			return "1";
		if (!strcmp(value, "off"))
			return "0";
	}
	return value;
}

static int cmd_set(int argc, char **argv)
{
	int i, err;

	if (argc < 1) {
		msg("usage: vmraplctl set sample_period_us=N | static_policy=occupied|busy|none | track_all=on|off");
		return EXIT_USAGE;
	}
	/* Check everything before changing anything. */
	for (i = 0; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		const char *why;

		if (!eq || eq == argv[i]) {
			msg("'%s': expected NAME=VALUE", argv[i]);
			return EXIT_USAGE;
		}
		*eq = 0;
		err = vmrapl_host_param_check(argv[i],
					      param_value(argv[i], eq + 1),
					      &why);
		if (err && param_is_bool(argv[i]))
			why = "must be on or off (or 1 or 0)";
		*eq = '=';
		if (err) {
			msg("'%s': %s", argv[i], why);
			return EXIT_USAGE;
		}
	}
	if (access(VMRAPL_HOST_SYSFS, F_OK)) {
		msg("vmrapl module not loaded");
		return EXIT_NOMOD;
	}
	if (!have_cap_sys_admin()) {
		msg("permission denied: changing module parameters needs root (CAP_SYS_ADMIN)");
		return EXIT_PERM;
	}
	for (i = 0; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		const char *name = argv[i], *value;
		char old[64], now[64];

		*eq = 0;
		value = param_value(name, eq + 1);
		if (vmrapl_host_param_get(name, old, sizeof(old)))
			snprintf(old, sizeof(old), "?");
		err = vmrapl_host_param_set(name, value);
		if (err == -EACCES || err == -EPERM) {
			msg("permission denied writing %s: %s", name, strerror(-err));
			return EXIT_PERM;
		}
		if (err == -ENOENT) {
			if (access(VMRAPL_HOST_SYSFS, F_OK))
				msg("vmrapl module not loaded");
			else
				msg("%s: no such parameter in this module", name);
			return access(VMRAPL_HOST_SYSFS, F_OK) ? EXIT_NOMOD : EXIT_USAGE;
		}
		if (err == -EINVAL) {
			msg("the kernel rejected %s=%s (EINVAL: invalid value)",
			    name, value);
			return EXIT_USAGE;
		}
		if (err) {
			msg("writing %s=%s: %s", name, value, strerror(-err));
			return EXIT_USAGE;
		}
		if (vmrapl_host_param_get(name, now, sizeof(now)))
			snprintf(now, sizeof(now), "?");
		if (param_is_bool(name))
			printf("%s: %s -> %s\n", name, bool_word(old),
			       bool_word(now));
		else
			printf("%s: %s -> %s\n", name, old, now);
	}
	return EXIT_OK;
}

/* ---- power limits -------------------------------------------------------- */

/*
 * @v / @scale with its fraction's trailing zeros dropped ("1.5", "40"),
 * exact: @scale is a power of ten up to 10^9.
 */
static void fmt_scaled(char *buf, size_t len, uint64_t v, uint64_t scale)
{
	int digits = 0, n;
	uint64_t s, frac = v % scale;

	for (s = scale; s > 1; s /= 10)
		digits++;
	n = snprintf(buf, len, "%llu", (unsigned long long)(v / scale));
	if (!frac || n < 0 || (size_t)n >= len)
		return;
	while (!(frac % 10)) {
		frac /= 10;
		digits--;
	}
	snprintf(buf + n, len - n, ".%0*llu", digits, (unsigned long long)frac);
}

/* A power, exactly, in the largest unit it has whole: "1.5 kW", "40 W". */
static void fmt_power(char *buf, size_t len, uint64_t uw)
{
	static const struct { uint64_t scale; const char *unit; } u[] = {
		{ 1000000000, "kW" }, { 1000000, "W" }, { 1000, "mW" },
		{ 1, "uW" },
	};
	char num[32];
	size_t i;

	for (i = 0; i < sizeof(u) / sizeof(u[0]) - 1; i++)
		if (uw >= u[i].scale)
			break;
	if (!uw)
		i = 1;		/* "0 W" */
	fmt_scaled(num, sizeof(num), uw, u[i].scale);
	snprintf(buf, len, "%s %s", num, u[i].unit);
}

/* A window, exactly: in seconds from 1 s on, else in ms ("250 ms"). */
static void fmt_window(char *buf, size_t len, uint64_t us)
{
	bool s = us >= 1000000 || !us;	/* "0 s" */
	char num[32];

	fmt_scaled(num, sizeof(num), us, s ? 1000000 : 1000);
	snprintf(buf, len, "%s %s", num, s ? "s" : "ms");
}

/* vmrapl_host_parse_power() or _duration(), and fmt_power() or fmt_window(). */
typedef int (*parse_fn)(const char *s, uint64_t *v);
typedef void (*fmt_fn)(char *buf, size_t len, uint64_t v);

/*
 * Is @s a number the parser @parse refuses only for its value: zero
 * ("0", "0.0kW") or negative ("-5W")?  Then true, and its value as
 * @fmt prints it (a '-' before a negative one) in @buf.
 */
static bool parsed_but_out(const char *s, parse_fn parse, fmt_fn fmt,
			   char *buf, size_t len)
{
	char one[64];
	uint64_t v;
	size_t n;

	if (s[0] == '-' && !parse(s + 1, &v)) {
		buf[0] = '-';
		fmt(buf + 1, len - 1, v);
		return true;
	}
	/* A zero: its digits as 1 parse, with its unit. */
	n = strspn(s, "0");
	if (!n)
		return false;
	if (s[n] == '.' && s[n + 1] == '0')
		n += 1 + strspn(s + n + 1, "0");
	if (snprintf(one, sizeof(one), "1%s", s + n) >= (int)sizeof(one) ||
	    parse(one, &v))
		return false;
	fmt(buf, len, 0);
	return true;
}

/* limit's POWER: in range, in microwatts; or the exit status, said why. */
static int limit_power_arg(const char *s, uint64_t *uw)
{
	char v[64];

	if (vmrapl_host_parse_power(s, uw)) {
		if (parsed_but_out(s, vmrapl_host_parse_power, fmt_power, v,
				   sizeof(v)))
			msg("power limit %s: must be 1 mW to 100 kW", v);
		else
			msg("power limit '%s': not a power (a number and W, kW, mW or uW, no spaces: 40W, 1.5kW, 500mW; or off)",
			    s);
		return EXIT_USAGE;
	}
	if (*uw < VMRAPL_LIMIT_MIN_UW || *uw > VMRAPL_LIMIT_MAX_UW) {
		fmt_power(v, sizeof(v), *uw);
		msg("power limit %s: must be 1 mW to 100 kW", v);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

/* limit's --window: in range, in microseconds; or the exit status. */
static int limit_window_arg(const char *s, uint64_t *us)
{
	char v[64];

	if (vmrapl_host_parse_duration(s, us)) {
		if (parsed_but_out(s, vmrapl_host_parse_duration, fmt_window,
				   v, sizeof(v)))
			msg("window %s: must be 10 ms to 1 h", v);
		else
			msg("window '%s': not a duration (a number and us, ms, s, m or h, no spaces: 250ms, 1s, 2m)",
			    s);
		return EXIT_USAGE;
	}
	if (*us < VMRAPL_LIMIT_MIN_WINDOW_US || *us > VMRAPL_LIMIT_MAX_WINDOW_US) {
		fmt_window(v, sizeof(v), *us);
		msg("window %s: must be 10 ms to 1 h", v);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

/* A failed GET_VM_LIMIT or SET_VM_LIMIT (@what) of VM @id: said, exit status. */
static int limit_err(const char *what, uint64_t id, int err)
{
	switch (-err) {
	case EPERM:
	case EACCES:
		if (!strcmp(what, "VMRAPL_GET_VM_LIMIT"))
			return host_read_err(what, err);
		msg("permission denied: changing a VM's power limit needs CAP_SYS_ADMIN (root)");
		return EXIT_PERM;
	case ENOENT:
		if (!strcmp(what, "VMRAPL_GET_VM_LIMIT"))
			msg("VM %llu went away", (unsigned long long)id);
		else
			msg("VM %llu went away; nothing was changed",
			    (unsigned long long)id);
		return EXIT_NOVM;
	case ENOTTY:
		msg("this vmrapl module has no power limits (%s: not supported; it is older than vmraplctl)",
		    what);
		return EXIT_USAGE;
	}
	msg("%s: %s", what, strerror(-err));
	return EXIT_USAGE;
}

/* A VM and its limit, as limit lists them. */
/*
 * @l: GET_VM_LIMIT's answer, with limit_uw and window_us the limit held
 * (the lower of the operator's and the guest's); @src whose it is
 * (VMRAPL_LIMIT_S_OPERATOR or _GUEST), 0 for none.
 */
struct limit_row {
	struct row r;
	struct vmrapl_limit l;
	uint32_t src;
};

/*
 * The limits of the VMs of @s, or of VM @only (an index, -1: all) into a
 * malloc'ed array (*@out); their count, or the negative exit status.  A
 * VM that goes meanwhile is left out (an error when it is @only).
 */
static int limit_rows(const struct dev *d, const struct sample *s, int only,
		      struct limit_row **out)
{
	struct row *rows = make_rows(NULL, s);
	struct limit_row *lr;
	uint64_t uw, us;
	int i, n = 0, err;

	*out = NULL;
	lr = calloc(s->nr_vms ? s->nr_vms : 1, sizeof(*lr));
	if (!rows || !lr) {
		free(rows);
		free(lr);
		msg("out of memory");
		return -EXIT_USAGE;
	}
	for (i = 0; i < s->nr_vms; i++) {
		if (only >= 0 && i != only)
			continue;
		err = vmrapl_host_vm_limit_get(d->fd, rows[i].e.id, &lr[n].l);
		if (err == -ENOENT && only < 0)
			continue;	/* gone since LIST_VMS */
		if (err) {
			free(rows);
			free(lr);
			return -limit_err("VMRAPL_GET_VM_LIMIT", rows[i].e.id,
					  err);
		}
		lr[n].src = vmrapl_host_limit_held(&lr[n].l, &uw, &us);
		lr[n].l.limit_uw = uw;
		lr[n].l.window_us = us;
		lr[n++].r = rows[i];
	}
	free(rows);
	*out = lr;
	return n;
}

static bool has_limit(const struct limit_row *x)
{
	return x->src && x->l.limit_uw;
}

/* Whose the limit held is, for the STATE column. */
static const char *limit_src(const struct limit_row *x)
{
	return x->src == VMRAPL_LIMIT_S_GUEST ? "guest" : "operator";
}

static void limit_json(const struct limit_row *lr, int n, double wall)
{
	int i;

	printf("{\"timestamp\": %.3f, \"vms\": [", wall);
	for (i = 0; i < n; i++) {
		const struct limit_row *x = &lr[i];

		printf("%s{\"id\": %llu, \"pid\": %u, \"name\": ", i ? ", " : "",
		       (unsigned long long)x->r.e.id, x->r.e.pid);
		json_str(stdout, x->r.name);
		printf(", \"uuid\": ");
		if (x->r.uuid[0])
			json_str(stdout, x->r.uuid);
		else
			printf("null");
		if (has_limit(x))
			printf(", \"limit_w\": %.6f, \"limit_uw\": %llu, \"window_s\": %.6f, \"window_us\": %llu, \"state\": \"%s\"}",
			       x->l.limit_uw / 1e6,
			       (unsigned long long)x->l.limit_uw,
			       x->l.window_us / 1e6,
			       (unsigned long long)x->l.window_us,
			       limit_src(x));
		else
			printf(", \"limit_w\": null, \"limit_uw\": null, \"window_s\": null, \"window_us\": null, \"state\": null}");
	}
	printf("]}\n");
}

static void limit_csv(const struct limit_row *lr, int n, double wall)
{
	const char *sep = opt_sep;
	int i;

	printf("id%spid%sname%suuid%slimit_w%slimit_uw%swindow_s%swindow_us%sstate%stimestamp\n",
	       sep, sep, sep, sep, sep, sep, sep, sep, sep);
	for (i = 0; i < n; i++) {
		const struct limit_row *x = &lr[i];

		printf("%llu%s%u%s", (unsigned long long)x->r.e.id, sep,
		       x->r.e.pid, sep);
		text_csv(stdout, x->r.name, sep);
		printf("%s", sep);
		text_csv(stdout, x->r.uuid, sep);
		if (has_limit(x))
			printf("%s%.6f%s%llu%s%.6f%s%llu%s%s", sep,
			       x->l.limit_uw / 1e6, sep,
			       (unsigned long long)x->l.limit_uw, sep,
			       x->l.window_us / 1e6, sep,
			       (unsigned long long)x->l.window_us, sep,
			       limit_src(x));
		else
			printf("%s%s%s%s%s", sep, sep, sep, sep, sep);
		printf("%s%.3f\n", sep, wall);
	}
}

static void limit_table(const struct limit_row *lr, int n)
{
	char name[NAME_LEN], w[48];
	int i, name_w = 4, win_w = 6;

	for (i = 0; i < n; i++) {
		table_name(lr[i].r.name, name, sizeof(name));
		if ((int)strlen(name) > name_w)
			name_w = (int)strlen(name);
		fmt_window(w, sizeof(w), lr[i].l.window_us);
		if (has_limit(&lr[i]) && (int)strlen(w) > win_w)
			win_w = (int)strlen(w);
	}
	printf("%-6s %-*s %12s %*s  %s\n", "ID", name_w, "NAME", "LIMIT_W",
	       win_w, "WINDOW", "STATE");
	for (i = 0; i < n; i++) {
		const struct limit_row *x = &lr[i];

		table_name(x->r.name, name, sizeof(name));
		printf("%-6llu %-*s ", (unsigned long long)x->r.e.id, name_w,
		       name);
		if (has_limit(x)) {
			fmt_window(w, sizeof(w), x->l.window_us);
			printf("%12.3f %*s  %s\n", x->l.limit_uw / 1e6,
			       win_w, w, limit_src(x));
		} else {
			printf("%12s %*s  -\n", "-", win_w, "-");
		}
	}
}

/*
 * limit: the operator's power limits (VMRAPL_GET_VM_LIMIT,
 * VMRAPL_SET_VM_LIMIT; Documentation/limits.rst).  Without arguments
 * every VM's, with a VM that VM's.  "VM POWER" sets one, averaged over
 * --window (default 1 s), "VM off" removes it; then the line of what is
 * in force, read back (--json, -x: that VM's limit as "limit VM" shows
 * it).  The power and window are checked before the device is opened;
 * nothing is changed on any error.
 */
/*
 * Whether a process named vmrapl-limitd runs (its /proc/PID/comm): the
 * module only stores a limit, the daemon holds the VM to it.
 */
static bool limitd_running(void)
{
	char path[64], comm[32];
	struct dirent *de;
	bool found = false;
	DIR *dir = opendir("/proc");
	FILE *f;

	if (!dir)
		return true;	/* cannot tell: say nothing */
	while (!found && (de = readdir(dir))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%.20s/comm", de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		found = fgets(comm, sizeof(comm), f) &&
			!strcmp(comm, "vmrapl-limitd\n");
		fclose(f);
	}
	closedir(dir);
	return found;
}

static int cmd_limit(int argc, char **argv)
{
	bool set = argc == 2, off = set && !strcmp(argv[1], "off");
	uint64_t uw = 0, us = LIMIT_WINDOW_US, id;
	struct limit_row *lr = NULL;
	struct sample s = { 0 };
	int rc, n, idx = -1;
	struct dev d;

	if (argc > 2) {
		msg("usage: vmraplctl limit [VM [POWER [--window DURATION] | off]]");
		return EXIT_USAGE;
	}
	if (opt_window && !(set && !off)) {
		msg("--window goes with a power: vmraplctl limit VM POWER --window DURATION");
		return EXIT_USAGE;
	}
	if (set && !off) {
		rc = limit_power_arg(argv[1], &uw);
		if (!rc && opt_window)
			rc = limit_window_arg(opt_window, &us);
		if (rc)
			return rc;
	}
	rc = dev_open(&d);
	if (rc)
		return rc;
	rc = sample_take(&d, &s, false);
	if (rc)
		goto out;
	if (argc) {
		rc = pick_vm(&s, argv[0], &idx);
		if (rc)
			goto out;
	}
	if (set) {
		int err;

		id = s.vms[idx].id;
		err = off ? vmrapl_host_vm_limit_clear(d.fd, id) :
			    vmrapl_host_vm_limit_set(d.fd, id, uw, us);
		if (err) {
			rc = limit_err("VMRAPL_SET_VM_LIMIT", id, err);
			goto out;
		}
	}
	n = limit_rows(&d, &s, idx, &lr);
	if (n < 0) {
		rc = -n;
		goto out;
	}
	if (opt_json) {
		limit_json(lr, n, s.wall);
	} else if (opt_sep) {
		limit_csv(lr, n, s.wall);
	} else if (set) {
		char name[NAME_LEN], p[64], w[64];

		text_ascii(lr[0].r.name, name, sizeof(name));
		printf("VM %llu \"%s\": ", (unsigned long long)lr[0].r.e.id,
		       name);
		if (has_limit(&lr[0])) {
			fmt_power(p, sizeof(p), lr[0].l.limit_uw);
			fmt_window(w, sizeof(w), lr[0].l.window_us);
			printf("power limit %s over %s now in force%s\n", p, w,
			       lr[0].src == VMRAPL_LIMIT_S_GUEST ?
			       " (the guest's own, lower)" : "");
			if (!limitd_running())
				msg("warning: vmrapl-limitd is not running: the limit is stored and the guest sees it, but nothing holds the VM to it (systemctl start vmrapl-limitd)");
		} else {
			printf("no power limit now\n");
		}
	} else if (!n) {
		no_vms(&d);
	} else {
		limit_table(lr, n);
	}
out:
	free(lr);
	sample_free(&s);
	close(d.fd);
	return rc;
}

/* ---- main ---------------------------------------------------------------- */

/* The largest --interval: a day. */
#define MAX_INTERVAL_S	86400

/*
 * Does the option argument @a take the next argument as its value?  By
 * main()'s option table, whose short options are their @val.
 */
static bool takes_next(const struct option *opts, const char *a)
{
	const struct option *o;
	const char *p;
	size_t n;

	if (a[1] == '-') {
		if (strchr(a, '='))
			return false;
		n = strlen(a + 2);
		for (o = opts; o->name; o++)
			if (!strncmp(o->name, a + 2, n))
				return o->has_arg == required_argument;
		return false;
	}
	for (p = a + 1; *p; p++)
		for (o = opts; o->name; o++)
			if (o->val == *p && o->has_arg == required_argument)
				return !p[1];
	return false;
}

/*
 * A negative number among the arguments ("limit VM -5W") is an argument
 * for its command to refuse, not the options -5 and -W: each is hidden
 * from getopt_long() (its '-' skipped, the pointer kept in @neg, room for
 * @room) and put back afterwards (unhide_negative()).  Up to "--"; an
 * option's own value ("--window -1s") is left to getopt_long(), which
 * takes it whole.  Returns how many were hidden.
 */
static int hide_negative(int argc, char **argv, const struct option *opts,
			 char **neg, int room)
{
	int i, n = 0;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		const char *a = argv[i];

		if (a[0] != '-' || !a[1])
			continue;
		if ((a[1] >= '0' && a[1] <= '9') || a[1] == '.') {
			if (n < room) {
				neg[n++] = argv[i];
				argv[i]++;
			}
			continue;
		}
		if (takes_next(opts, a))
			i++;
	}
	return n;
}

/* The arguments hide_negative() hid, wherever getopt_long() put them. */
static void unhide_negative(int argc, char **argv, char **neg, int n)
{
	int i, k;

	for (i = 1; i < argc; i++)
		for (k = 0; k < n; k++)
			if (argv[i] == neg[k] + 1)
				argv[i] = neg[k];
}

/* 0, -1 when @s is no number, -2 when it is out of 0..MAX_INTERVAL_S. */
static int parse_double(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (!*s || *end || (errno && errno != ERANGE) || isnan(v))
		return -1;
	if (errno || v < 0 || v > MAX_INTERVAL_S)
		return -2;
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "field-separator", required_argument, NULL, 'x' },
		{ "output", required_argument, NULL, 'o' },
		{ "interval", required_argument, NULL, 'i' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "device", required_argument, NULL, 'd' },
		{ "window", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct {
		const char *name;
		int (*fn)(int argc, char **argv);
	} cmds[] = {
		{ "info", cmd_info },
		{ "list", cmd_list },
		{ "top", cmd_top },
		{ "stats", cmd_stats },
		{ "stat", cmd_stat },
		{ "set", cmd_set },
		{ "limit", cmd_limit },
	};
	const char *output = NULL;
	char *neg[16];
	int c, nneg;
	size_t i;

	/* getopt's messages start with argv[0]: the name, not the path. */
	if (argc > 0)
		argv[0] = (char *)prog;
	/* GNU getopt permutes: options may also follow the command. */
	nneg = hide_negative(argc, argv, opts, neg, 16);
	while ((c = getopt_long(argc, argv, "jx:o:i:n:d:w:hV", opts, NULL)) != -1) {
		char *end;

		switch (c) {
		case 'j':
			opt_json = true;
			break;
		case 'x':
			if (!*optarg || strpbrk(optarg, "\"\r\n")) {
				msg("-x: the separator must be a non-empty string without quotes or newlines");
				return EXIT_USAGE;
			}
			opt_sep = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 'i':
			switch (parse_double(optarg, &opt_interval)) {
			case -1:
				msg("--interval: '%s' is not a number of seconds", optarg);
				return EXIT_USAGE;
			case -2:
				msg("--interval: '%s' is out of range: 0 to %d seconds (a day)",
				    optarg, MAX_INTERVAL_S);
				return EXIT_USAGE;
			}
			break;
		case 'n':
			errno = 0;
			opt_iterations = strtol(optarg, &end, 10);
			if (!*optarg || *end || errno || opt_iterations < 0) {
				msg("--iterations: '%s' is not a count", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'd':
			opt_device = optarg;
			break;
		case 'w':
			opt_window = optarg;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case 'V':
			printf("vmraplctl %s (vmrapl ABI %d)\n", VMRAPL_VERSION,
			       VMRAPL_ABI_VERSION);
			return EXIT_OK;
		default:
			/* getopt said what is wrong, in one line. */
			return usage_hint();
		}
	}
	unhide_negative(argc, argv, neg, nneg);
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (opt_json && opt_sep) {
		msg("--json and -x exclude each other");
		return EXIT_USAGE;
	}
	if (output)
		orig_stdout = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	if (output && !freopen(output, "w", stdout)) {
		msg("-o %s: %s", output, strerror(errno));
		return EXIT_USAGE;
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strcmp(argv[optind], cmds[i].name))
			continue;
		return cmds[i].fn(argc - optind - 1, argv + optind + 1);
	}
	msg("unknown command '%s'", argv[optind]);
	return usage_hint();
}
