// SPDX-License-Identifier: MIT
/*
 * LD_PRELOAD shim for the host tools' tests: a regular file whose name ends
 * in "fake-vmrapl", passed as --device, answers GET_INFO, GET_PKG_STATS,
 * LIST_VMS and GET_VM_STATS with made-up books that grow by 1 J per VM and
 * per call.  VM 7 (2 vCPUs, 2:1; a tenth of its energy is overhead)
 * belongs to $FAKE_QEMU_PID (default: the caller), VM 9 (1 vCPU; 0.1 J of
 * overhead, all of it before the first call) to the caller.
 *
 * $FAKE_VMS="ID:PID[ ID:PID...]" (or "@FILE", FILE holding that list,
 * read at every call so that VMs can come and go) adds up to 32 VMs
 * (1 vCPU, attached, 0.25 J per call) owned by the given processes: the
 * tools name a VM after its VMM's /proc/PID/cmdline (QEMU -name) or
 * /proc/PID/comm and take its UUID from QEMU -uuid there, so a test sets a
 * VM's name and UUID by starting a process with that command line or comm.
 *
 * $FAKE_LOAD_BOOT=@FILE: GET_INFO's load_boottime_ns is FILE's number
 * (read at every call: a test "reloads the module" by rewriting it);
 * default 1 s after boot.  $FAKE_REALTIME_DRIFT_US=N: every
 * clock_gettime(CLOCK_REALTIME) of the process returns N us more than the
 * one before it (a wall clock that NTP slews or someone steps).
 *
 * $FAKE_NO_BASE_VMS=1: no VMs 7 and 9 (only those of $FAKE_VMS, if any).
 *
 * $FAKE_LIST_EPERM=1: LIST_VMS fails with EPERM (a caller without
 * CAP_PERFMON).
 *
 * $FAKE_SYSFS=DIR: the process's open() and access() of /sys/module/vmrapl
 * and what is under it go to DIR instead (DIR/version,
 * DIR/parameters/track_all, ...), so a test can have the module "loaded"
 * with parameters it can read back.
 *
 * $FAKE_LIMITS=FILE: the power limits of SET_VM_LIMIT and GET_VM_LIMIT,
 * one line "ID LIMIT_UW WINDOW_US [GUEST_UW GUEST_US]" (decimal, one
 * space) per VM with a limit: the operator's (0 0: none) and the PL1 its
 * guest wrote (GET's guest fields; a SET keeps them); no file is no
 * limits.  It is read at every call and, at every
 * SET that succeeds, written anew to FILE.tmp.PID and renamed over FILE
 * (under flock() of FILE.lock), so a test sets or reads limits through
 * the file and several processes share them.  Both ioctls check their
 * struct as the module does: size, flags, state (SET), reserved fields,
 * the ranges and VMRAPL_LIMIT_F_CLEAR's zeros are EINVAL, a VM id that is
 * not listed (7, 9 and those of $FAKE_VMS) ENOENT.  Without $FAKE_LIMITS
 * GET says no limit and SET fails with EPERM (a caller without
 * CAP_SYS_ADMIN); $FAKE_LIMIT_EPERM=1: SET fails with EPERM all the same;
 * $FAKE_LIMIT_ENOENT=1: SET fails with ENOENT after its checks (the VM
 * went away after the caller listed it).  $FAKE_LIST_EPERM=1 makes GET
 * fail with EPERM too (no CAP_PERFMON).
 *
 * $FAKE_VM_ENERGY=FILE: one line "ID ENERGY_UJ [RUNTIME_NS]" (decimal,
 * spaces between) per VM whose books a test drives, as a "plant" that
 * rewrites FILE: LIST_VMS and GET_VM_STATS report that VM's
 * energy_uj[PKG] and runtime_ns (0 when not given) instead of the
 * made-up growth, with no overhead, no static part and no DRAM energy;
 * GET_VM_STATS splits both evenly among its vCPUs (the first vCPU takes
 * what does not divide).  Read at every call; a VM not listed there
 * keeps the made-up books.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>
#include <linux/vmrapl.h>

static int is_fake(int fd)
{
	char link[64], target[512];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 11)
		return 0;
	target[n] = 0;
	return !strcmp(target + n - 11, "fake-vmrapl");
}

static unsigned int calls;

static uint64_t load_boottime_ns(void)
{
	const char *s = getenv("FAKE_LOAD_BOOT");
	unsigned long long v = 1000000000ull;	/* 1 s after boot */
	FILE *f;

	if (s && s[0] == '@' && (f = fopen(s + 1, "r"))) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 1000000000ull;
		fclose(f);
	}
	return v;
}

int clock_gettime(clockid_t clk, struct timespec *ts)
{
	static int (*real)(clockid_t, struct timespec *);
	static unsigned long long steps;
	const char *s = getenv("FAKE_REALTIME_DRIFT_US");
	unsigned long long add;
	int r;

	if (!real)
		real = (int (*)(clockid_t, struct timespec *))
			dlsym(RTLD_NEXT, "clock_gettime");
	r = real(clk, ts);
	if (r || clk != CLOCK_REALTIME || !s)
		return r;
	add = __atomic_add_fetch(&steps, 1, __ATOMIC_RELAXED) *
	      strtoull(s, NULL, 10) * 1000;
	add += (unsigned long long)ts->tv_nsec;
	ts->tv_sec += (time_t)(add / 1000000000ull);
	ts->tv_nsec = (long)(add % 1000000000ull);
	return 0;
}

#define SYSFS	"/sys/module/vmrapl"

/* @path, or its place under $FAKE_SYSFS (in @buf). */
static const char *sysfs_path(const char *path, char *buf, size_t len)
{
	const char *dir = getenv("FAKE_SYSFS");
	size_t n = strlen(SYSFS);

	if (!dir || !path || strncmp(path, SYSFS, n) ||
	    (path[n] && path[n] != '/'))
		return path;
	snprintf(buf, len, "%s%s", dir, path + n);
	return buf;
}

static int open_fake(const char *sym, const char *path, int flags,
		     va_list ap)
{
	int (*real)(const char *, int, ...) =
		(int (*)(const char *, int, ...))dlsym(RTLD_NEXT, sym);
	mode_t mode = ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) ?
		      va_arg(ap, mode_t) : 0;
	char buf[4096];

	return real(sysfs_path(path, buf, sizeof(buf)), flags, mode);
}

int open(const char *path, int flags, ...)
{
	va_list ap;
	int r;

	va_start(ap, flags);
	r = open_fake("open", path, flags, ap);
	va_end(ap);
	return r;
}

int open64(const char *path, int flags, ...)
{
	va_list ap;
	int r;

	va_start(ap, flags);
	r = open_fake("open64", path, flags, ap);
	va_end(ap);
	return r;
}

int access(const char *path, int mode)
{
	int (*real)(const char *, int) =
		(int (*)(const char *, int))dlsym(RTLD_NEXT, "access");
	char buf[4096];

	return real(sysfs_path(path, buf, sizeof(buf)), mode);
}

#define MAX_EXTRA	32
static struct { uint64_t id; uint32_t pid; } extra[MAX_EXTRA];

/* The VMs of $FAKE_VMS ("@FILE": read from FILE at every call); their count. */
static unsigned int extra_vms(void)
{
	const char *s = getenv("FAKE_VMS");
	static char text[1024];
	unsigned int n = 0;
	char *end;

	if (s && s[0] == '@') {
		FILE *f = fopen(s + 1, "r");
		size_t len = 0;

		if (f) {
			len = fread(text, 1, sizeof(text) - 1, f);
			fclose(f);
		}
		text[len] = 0;
		s = text;
	}

	while (s && *s && n < MAX_EXTRA) {
		unsigned long long id = strtoull(s, &end, 10);

		if (*end != ':')
			break;
		extra[n].id = id;
		extra[n].pid = (uint32_t)strtoul(end + 1, &end, 10);
		n++;
		while (*end == ' ' || *end == ',' || *end == '\n')
			end++;
		s = end;
	}
	return n;
}

static int extra_index(uint64_t id)
{
	unsigned int i, n = extra_vms();

	for (i = 0; i < n; i++)
		if (extra[i].id == id)
			return (int)i;
	return -1;
}

/*
 * The books $FAKE_VM_ENERGY gives VM @id: true, and its PKG energy and
 * runtime, when it lists the VM.
 */
static bool vm_energy(uint64_t id, uint64_t *uj, uint64_t *ns)
{
	const char *path = getenv("FAKE_VM_ENERGY");
	unsigned long long fid, e, r;
	char line[256];
	bool found = false;
	FILE *f;

	if (!path)
		return false;
	f = fopen(path, "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		int n = sscanf(line, "%llu %llu %llu", &fid, &e, &r);

		if (n < 2 || fid != id)
			continue;
		*uj = e;
		*ns = n == 3 ? r : 0;
		found = true;
	}
	fclose(f);
	return found;
}

/*
 * The LIST_VMS entry of VM @id (7, 9, or extra VM @x) at call @c; its
 * GET_VM_STATS totals are the same.
 */
static void vm_entry(struct vmrapl_vm_entry *v, uint64_t id, int x,
		     unsigned int c)
{
	const char *qp = getenv("FAKE_QEMU_PID");

	memset(v, 0, sizeof(*v));
	v->id = id;
	if (id == 7 && x < 0) {
		v->pid = qp ? (uint32_t)atoi(qp) : (uint32_t)getpid();
		v->nr_vcpus = 2;
		v->flags = VMRAPL_VM_F_ATTACHED;
		v->energy_uj[0] = 1000000ull * c;
		v->energy_uj[2] = 10000ull * c;
		v->overhead_uj[0] = 100000ull * c;
		v->static_uj = 250000ull * c;
		v->overhead_static_uj = 25000ull * c;
		v->runtime_ns = 1000000000ull;
	} else if (id == 9 && x < 0) {
		v->pid = getpid();
		v->nr_vcpus = 1;
		v->charge = VMRAPL_CHARGE_GUEST;
		v->energy_uj[0] = 500000ull * c;
		/* overhead early on, none since: its share falls */
		v->overhead_uj[0] = 100000ull;
	} else {
		v->pid = extra[x].pid;
		v->nr_vcpus = 1;
		v->flags = VMRAPL_VM_F_ATTACHED;
		v->energy_uj[0] = 250000ull * c;
		v->energy_uj[2] = 1000ull * c;
		v->overhead_uj[0] = 50000ull * c;
		v->overhead_uj[2] = 100ull * c;
	}
}

/*
 * VM @id's entry as LIST_VMS and GET_VM_STATS report it: vm_entry(), or
 * with the books $FAKE_VM_ENERGY gives it (true then, its PKG energy and
 * runtime in *@uj and *@ns), read once so that the whole and its parts
 * agree: PKG energy and runtime, nothing else.
 */
static bool vm_books(struct vmrapl_vm_entry *v, uint64_t id, int x,
		     unsigned int c, uint64_t *uj, uint64_t *ns)
{
	vm_entry(v, id, x, c);
	if (!vm_energy(id, uj, ns))
		return false;
	memset(v->energy_uj, 0, sizeof(v->energy_uj));
	memset(v->overhead_uj, 0, sizeof(v->overhead_uj));
	v->energy_uj[VMRAPL_DOM_PKG] = *uj;
	v->runtime_ns = *ns;
	v->overhead_ns = 0;
	v->static_uj = 0;
	v->overhead_static_uj = 0;
	return true;
}

/* Is @id a VM LIST_VMS lists (7 and 9 unless $FAKE_NO_BASE_VMS)? */
static bool vm_listed(uint64_t id)
{
	if ((id == 7 || id == 9) && !getenv("FAKE_NO_BASE_VMS"))
		return true;
	return extra_index(id) >= 0;
}

#define MAX_LIMITS	256
static struct { uint64_t id, uw, us, guw, gus; } limits[MAX_LIMITS];

/* The limits of $FAKE_LIMITS (@path) into limits[]; their count. */
static unsigned int limits_read(const char *path)
{
	unsigned long long id, uw, us, guw, gus;
	unsigned int n = 0;
	char line[256];
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	while (n < MAX_LIMITS && fgets(line, sizeof(line), f)) {
		guw = 0;
		gus = 0;
		if (sscanf(line, "%llu %llu %llu %llu %llu", &id, &uw, &us,
			   &guw, &gus) < 3)
			continue;
		limits[n].id = id;
		limits[n].uw = uw;
		limits[n].us = us;
		limits[n].guw = guw;
		limits[n].gus = gus;
		n++;
	}
	fclose(f);
	return n;
}

/* limits[0..@n) into @path: a temporary file renamed over it. */
static int limits_write(const char *path, unsigned int n)
{
	char tmp[4096];
	unsigned int i;
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	for (i = 0; i < n; i++) {
		fprintf(f, "%llu %llu %llu", (unsigned long long)limits[i].id,
			(unsigned long long)limits[i].uw,
			(unsigned long long)limits[i].us);
		if (limits[i].guw)
			fprintf(f, " %llu %llu",
				(unsigned long long)limits[i].guw,
				(unsigned long long)limits[i].gus);
		fputc('\n', f);
	}
	if (fclose(f) || rename(tmp, path)) {
		int err = errno;

		unlink(tmp);
		errno = err;
		return -1;
	}
	return 0;
}

/*
 * A struct vmrapl_limit's common checks, as the module's: a size below
 * the struct's is EINVAL, bytes beyond it must be zero (E2BIG), reserved
 * fields zero (EINVAL).  0 or a negative errno.
 */
static int limit_in(const struct vmrapl_limit *l)
{
	const unsigned char *extra = (const unsigned char *)l;
	unsigned int i;

	if (l->size < sizeof(*l))
		return -EINVAL;
	if (l->size > 4096)
		return -E2BIG;
	for (i = sizeof(*l); i < l->size; i++)
		if (extra[i])
			return -E2BIG;
	if (l->reserved0)
		return -EINVAL;
	for (i = 0; i < sizeof(l->reserved) / sizeof(l->reserved[0]); i++)
		if (l->reserved[i])
			return -EINVAL;
	return 0;
}

static int set_limit(struct vmrapl_limit *l)
{
	const char *path = getenv("FAKE_LIMITS");
	bool clear = l->flags & VMRAPL_LIMIT_F_CLEAR;
	unsigned int i, n;
	char lock[4096];
	int err, lfd;

	if (!path || getenv("FAKE_LIMIT_EPERM"))
		return -EPERM;
	err = limit_in(l);
	if (err)
		return err;
	if ((l->flags & ~VMRAPL_LIMIT_F_CLEAR) || l->state ||
	    l->guest_limit_uw || l->guest_window_us)
		return -EINVAL;
	if (clear ? l->limit_uw || l->window_us :
	    l->limit_uw < VMRAPL_LIMIT_MIN_UW ||
	    l->limit_uw > VMRAPL_LIMIT_MAX_UW ||
	    l->window_us < VMRAPL_LIMIT_MIN_WINDOW_US ||
	    l->window_us > VMRAPL_LIMIT_MAX_WINDOW_US)
		return -EINVAL;
	if (!vm_listed(l->id) || getenv("FAKE_LIMIT_ENOENT"))
		return -ENOENT;

	snprintf(lock, sizeof(lock), "%s.lock", path);
	lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (lfd < 0)
		return -errno;
	flock(lfd, LOCK_EX);
	n = limits_read(path);
	for (i = 0; i < n && limits[i].id != l->id; i++)
		;
	if (clear) {
		/* The guest's limit stays; a line with neither goes. */
		if (i < n && limits[i].guw) {
			limits[i].uw = 0;
			limits[i].us = 0;
		} else if (i < n) {
			limits[i] = limits[--n];
		}
	} else {
		if (i == n && n == MAX_LIMITS) {
			close(lfd);
			return -ENOMEM;
		}
		if (i == n) {
			n++;
			limits[i].guw = 0;
			limits[i].gus = 0;
		}
		limits[i].id = l->id;
		limits[i].uw = l->limit_uw;
		limits[i].us = l->window_us;
	}
	err = limits_write(path, n) ? -errno : 0;
	close(lfd);
	return err;
}

static int get_limit(struct vmrapl_limit *l)
{
	const char *path = getenv("FAKE_LIMITS");
	unsigned int i, n;
	int err;

	if (getenv("FAKE_LIST_EPERM"))
		return -EPERM;
	err = limit_in(l);
	if (err)
		return err;
	if (l->flags)
		return -EINVAL;
	if (!vm_listed(l->id))
		return -ENOENT;
	n = path ? limits_read(path) : 0;
	l->limit_uw = 0;
	l->window_us = 0;
	l->guest_limit_uw = 0;
	l->guest_window_us = 0;
	for (i = 0; i < n; i++)
		if (limits[i].id == l->id) {
			l->limit_uw = limits[i].uw;
			l->window_us = limits[i].us;
			l->guest_limit_uw = limits[i].guw;
			l->guest_window_us = limits[i].gus;
		}
	l->size = sizeof(*l);
	l->state = l->limit_uw ? VMRAPL_LIMIT_S_OPERATOR |
				 VMRAPL_LIMIT_S_LOCKED : 0;
	if (l->guest_limit_uw)
		l->state |= VMRAPL_LIMIT_S_GUEST;
	return 0;
}

static int fake(unsigned long req, void *arg)
{
	unsigned int c = __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);

	if (req == VMRAPL_GET_INFO) {
		struct vmrapl_info *i = arg;

		memset(i, 0, sizeof(*i));
		i->abi_version = VMRAPL_ABI_VERSION;
		i->nr_packages = 2;
		i->features = VMRAPL_INFO_F_ESTIMATED | VMRAPL_INFO_F_TRACK_ALL |
			      VMRAPL_INFO_F_LOAD_TIME |
			      VMRAPL_INFO_F_STATIC_FIT |
			      VMRAPL_INFO_F_STATIC_SPLIT |
			      VMRAPL_INFO_F_STATIC_CORE |
			      VMRAPL_INFO_F_STATIC_HOST |
			      VMRAPL_INFO_F_PKG_V2;
		i->load_boottime_ns = load_boottime_ns();
		i->nr_cpus = 4;
		i->source = VMRAPL_SOURCE_ESTIMATE;
		i->domains = 1u << VMRAPL_DOM_PKG | 1u << VMRAPL_DOM_DRAM;
		i->sample_period_us = 1000;
		i->static_policy = VMRAPL_STATIC_BUSY;
		i->host_esu = 14;
		return 0;
	}
	if (req == VMRAPL_GET_PKG_STATS) {
		struct vmrapl_pkg_list *l = arg;
		struct vmrapl_pkg_stats *p = (void *)(uintptr_t)l->pkgs_ptr;
		struct vmrapl_pkg_static *s = NULL;
		unsigned int i;

		if (l->size >= sizeof(*l) && l->static_ptr) {
			if (l->static_size < VMRAPL_PKG_STATIC_SIZE_V1) {
				errno = EINVAL;
				return -1;
			}
			s = (void *)(uintptr_t)l->static_ptr;
		}
		for (i = 0; i < 2 && i < l->nr_pkgs; i++) {
			memset(&p[i], 0, sizeof(p[i]));
			p[i].tracked_uj[0] = 1000000ull * c;
			p[i].host_uj[0] = 200000ull * c;
			p[i].idle_uj[0] = 300000ull * c;
			p[i].lost_uj[0] = 0;
			p[i].sampled_uj[0] = 1500000ull * c;
			p[i].sampled_uj[2] = 100000ull * c;
			p[i].p_static_uw = 5000000;
			p[i].nr_cpus = 2;
			if (!s)
				continue;
			/* package 0: a fit in use; package 1: idle runs */
			memset(&s[i], 0, sizeof(s[i]));
			s[i].origin = i ? VMRAPL_ORIGIN_IDLE : VMRAPL_ORIGIN_FIT;
			/* FAKE_ORIGIN=N: package 0's origin is N */
			if (!i && getenv("FAKE_ORIGIN"))
				s[i].origin = atoi(getenv("FAKE_ORIGIN"));
			s[i].fit_flags = i ? 0 : VMRAPL_FIT_F_CONDITIONED |
						 VMRAPL_FIT_F_HELD;
			s[i].fit_static_uw = i ? 0 : 5000000;
			s[i].fit_static_sd_uw = i ? 0 : 125000;
			s[i].fit_dyn_uw = i ? 0 : 2500000;
			s[i].fit_held_uw = i ? 0 : 5000000;
			s[i].idle_static_uw = 4800000;
			s[i].fit_blocks = i ? 12 : 128;
			/* package 1's cores have energy counters */
			s[i].core_static_uw = i ? 6200000 : 0;
			s[i].core_blocks = i ? 64 : 0;
			s[i].static_uj = 400000ull * c;
			s[i].tracked_static_uj = 250000ull * c;
			s[i].host_static_uj = 50000ull * c;
			/*
			 * package 0: PKG measured, DRAM not (idle); package
			 * 1: PKG and its per-core counter (CORE) measured
			 */
			s[i].update_flags = 1u << VMRAPL_DOM_PKG |
					    (i ? 1u << VMRAPL_DOM_CORE : 0);
			s[i].update_pkg_ns = i ? 1500000 : 976600;
			s[i].update_pkg_spread_ns = i ? 20000 : 39000;
			s[i].update_core_ns = i ? 1000000 : 0;
			s[i].update_core_spread_ns = i ? 10000 : 0;
		}
		l->nr_pkgs = 2;
		return 0;
	}
	if (req == VMRAPL_LIST_VMS) {
		struct vmrapl_vm_list *l = arg;
		struct vmrapl_vm_entry *v = (void *)(uintptr_t)l->vms_ptr;
		unsigned int i, nx = extra_vms();
		unsigned int nb = getenv("FAKE_NO_BASE_VMS") ? 0 : 2;
		uint64_t uj, ns;

		if (getenv("FAKE_LIST_EPERM")) {
			errno = EPERM;
			return -1;
		}
		/* Ask for more room the first time, as a growing list would. */
		if (l->nr_vms < nb + nx) {
			l->nr_vms = nb + nx;
			return 0;
		}
		if (nb) {
			vm_books(&v[0], 7, -1, c, &uj, &ns);
			vm_books(&v[1], 9, -1, c, &uj, &ns);
		}
		for (i = 0; i < nx; i++)
			vm_books(&v[nb + i], extra[i].id, (int)i, c, &uj, &ns);
		l->nr_vms = nb + nx;
		return 0;
	}
	if (req == VMRAPL_GET_VM_STATS) {
		struct vmrapl_vm_query *q = arg;
		struct vmrapl_stats *st = (void *)(uintptr_t)q->stats_ptr;
		struct vmrapl_vcpu_stats *v;
		struct vmrapl_vm_entry e;
		uint64_t uj, ns;
		uint32_t n, i;
		bool plant;
		int x;

		if (q->size != sizeof(*q) || q->flags || !st ||
		    st->size != sizeof(*st) || (st->nr_vcpus && !st->vcpus_ptr)) {
			errno = EINVAL;
			return -1;
		}
		x = q->id == 7 || q->id == 9 ? -1 : extra_index(q->id);
		if (q->id != 7 && q->id != 9 && x < 0) {
			errno = ENOENT;
			return -1;
		}
		plant = vm_books(&e, q->id, x, c, &uj, &ns);
		v = (void *)(uintptr_t)st->vcpus_ptr;
		n = q->id == 7 ? 2 : 1;
		if (plant) {
			/* The plant's books, split evenly among the vCPUs. */
			for (i = 0; i < n && i < st->nr_vcpus; i++) {
				memset(&v[i], 0, sizeof(v[i]));
				v[i].energy_uj[VMRAPL_DOM_PKG] =
					uj / n + (i ? 0 : uj % n);
				v[i].runtime_ns = ns / n + (i ? 0 : ns % n);
			}
		} else if (st->nr_vcpus >= 1) {
			memset(v, 0, sizeof(*v));
			v[0].energy_uj[0] = (q->id == 7 ? 600000ull : 500000ull) * c;
			v[0].energy_uj[2] = q->id == 7 ? 5000ull * c : 0;
			v[0].runtime_ns = q->id == 7 ? 600000000ull : 0;
			v[0].static_uj = (q->id == 7 ? 150000ull : 0) * c;
		}
		if (n == 2 && st->nr_vcpus >= 2 && !plant) {
			memset(&v[1], 0, sizeof(*v));
			v[1].energy_uj[0] = 300000ull * c;
			v[1].energy_uj[2] = 5000ull * c;
			v[1].runtime_ns = 400000000ull;
			v[1].static_uj = 100000ull * c;
		}
		st->nr_vcpus = n;
		st->nr_vpkgs = 1;
		memcpy(st->energy_uj, e.energy_uj, sizeof(st->energy_uj));
		memcpy(st->overhead_uj, e.overhead_uj, sizeof(st->overhead_uj));
		st->runtime_ns = e.runtime_ns;
		st->static_uj = e.static_uj;
		st->overhead_static_uj = e.overhead_static_uj;
		return 0;
	}
	if (req == VMRAPL_SET_VM_LIMIT || req == VMRAPL_GET_VM_LIMIT) {
		int err = req == VMRAPL_SET_VM_LIMIT ? set_limit(arg) :
			  get_limit(arg);

		if (!err)
			return 0;
		errno = -err;
		return -1;
	}
	errno = ENOTTY;
	return -1;
}

int ioctl(int fd, unsigned long req, ...)
{
	static int (*real)(int, unsigned long, ...);
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (is_fake(fd))
		return fake(req, arg);
	if (!real)
		real = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
	return real(fd, req, arg);
}
