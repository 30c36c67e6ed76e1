// SPDX-License-Identifier: MIT
/*
 * libvmrapl-host: host-side helpers shared by vmraplctl and
 * vmrapl-exporter.  See libvmrapl-host.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "libvmrapl-host.h"

/*
 * One call of a host-wide ioctl that fills an array: @room entries at
 * @buf; *@count is how many the kernel has (it may exceed @room).
 */
typedef int (*host_fill_fn)(int devfd, void *ctx, void *buf,
			    unsigned int room, unsigned int *count);

/*
 * Call @fill with a malloc'ed array of @elem-sized entries, growing it
 * until everything fits (things come and go between calls; @slack extra
 * entries make a second miss less likely).  The array goes to *@out
 * (NULL when empty); returns the count or a negative errno.
 */
static int host_fill_array(int devfd, host_fill_fn fill, void *ctx,
			   size_t elem, unsigned int room, unsigned int slack,
			   void **out)
{
	unsigned int count = 0;
	void *buf = NULL;
	int tries, err;

	*out = NULL;
	for (tries = 0; tries < 8; tries++) {
		if (room) {
			void *nb = realloc(buf, room * elem);

			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			memset(buf, 0, room * elem);
		}
		err = fill(devfd, ctx, buf, room, &count);
		if (err) {
			free(buf);
			return err;
		}
		if (count <= room) {
			*out = buf;
			return (int)count;
		}
		room = count + slack;
	}
	free(buf);
	return -EAGAIN;
}

/*
 * LIST_VMS and the first layout of GET_PKG_STATS take lists of the same
 * layout (size, flags, count, reserved0, pointer), so one filler serves
 * both: @ctx points at the ioctl request.  GET_PKG_STATS reads a 40-byte
 * request as its first layout (no static_ptr).
 */
_Static_assert(sizeof(struct vmrapl_vm_list) == VMRAPL_PKG_LIST_SIZE_V1 &&
	       offsetof(struct vmrapl_vm_list, nr_vms) ==
	       offsetof(struct vmrapl_pkg_list, nr_pkgs) &&
	       offsetof(struct vmrapl_vm_list, vms_ptr) ==
	       offsetof(struct vmrapl_pkg_list, pkgs_ptr),
	       "LIST_VMS and GET_PKG_STATS lists differ");

static int fill_list(int devfd, void *ctx, void *buf, unsigned int room,
		     unsigned int *count)
{
	const unsigned long *req = ctx;
	struct vmrapl_vm_list l = {
		.size = sizeof(l), .nr_vms = room, .vms_ptr = (uintptr_t)buf,
	};

	if (ioctl(devfd, *req, &l) < 0)
		return -errno;
	*count = l.nr_vms;
	return 0;
}

/* A LIST_VMS or GET_PKG_STATS list (@req) into *@n entries; NULL if none. */
static void *host_list(int devfd, unsigned long req, size_t elem,
		       unsigned int room, unsigned int slack, int *n)
{
	void *p;

	*n = host_fill_array(devfd, fill_list, &req, elem, room, slack, &p);
	return p;
}

int vmrapl_host_list_vms(int devfd, struct vmrapl_vm_entry **out)
{
	int n;

	*out = host_list(devfd, VMRAPL_LIST_VMS, sizeof(**out), 16, 16, &n);
	return n;
}

int vmrapl_host_pkg_stats(int devfd, struct vmrapl_pkg_stats **out)
{
	int n;

	*out = host_list(devfd, VMRAPL_GET_PKG_STATS, sizeof(**out), 8, 0, &n);
	return n;
}

/* GET_PKG_STATS with static_ptr: @ctx is the array of static entries. */
struct pkg_static_ctx {
	struct vmrapl_pkg_static *st;
	unsigned int room;
};

static int fill_pkg_static(int devfd, void *ctx, void *buf, unsigned int room,
			   unsigned int *count)
{
	struct pkg_static_ctx *c = ctx;
	struct vmrapl_pkg_list l = {
		.size = sizeof(l), .nr_pkgs = room, .pkgs_ptr = (uintptr_t)buf,
		.static_size = sizeof(struct vmrapl_pkg_static),
	};

	if (room > c->room) {
		void *n = realloc(c->st, room * sizeof(*c->st));

		if (!n)
			return -ENOMEM;
		c->st = n;
		c->room = room;
	}
	if (room)
		memset(c->st, 0, room * sizeof(*c->st));
	l.static_ptr = (uintptr_t)c->st;
	if (ioctl(devfd, VMRAPL_GET_PKG_STATS, &l) < 0)
		return -errno;
	*count = l.nr_pkgs;
	return 0;
}

int vmrapl_host_pkg_static(int devfd, struct vmrapl_pkg_stats **out,
			   struct vmrapl_pkg_static **st)
{
	struct pkg_static_ctx c = { NULL, 0 };
	void *p;
	int n;

	/* A first call with room for 8 needs a static array too. */
	c.st = calloc(8, sizeof(*c.st));
	if (!c.st)
		return -ENOMEM;
	c.room = 8;
	n = host_fill_array(devfd, fill_pkg_static, &c, sizeof(**out), 8, 0,
			    &p);
	if (n == -E2BIG || n == -EINVAL) {
		/* A module before VMRAPL_INFO_F_STATIC_FIT: the books only. */
		free(c.st);
		*st = NULL;
		return vmrapl_host_pkg_stats(devfd, out);
	}
	if (n <= 0) {
		free(c.st);
		c.st = NULL;
	}
	*out = p;
	*st = c.st;
	return n;
}

/* GET_VM_STATS: @ctx is the struct vmrapl_vm_query, pointing at its stats. */
static int fill_vcpus(int devfd, void *ctx, void *buf, unsigned int room,
		      unsigned int *count)
{
	struct vmrapl_vm_query *q = ctx;
	struct vmrapl_stats *st = (struct vmrapl_stats *)(uintptr_t)q->stats_ptr;

	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	st->nr_vcpus = room;
	st->vcpus_ptr = (uintptr_t)buf;
	if (ioctl(devfd, VMRAPL_GET_VM_STATS, q) < 0)
		return -errno;
	*count = st->nr_vcpus;
	return 0;
}

int vmrapl_host_vm_stats(int devfd, uint64_t id, struct vmrapl_stats *st,
			 struct vmrapl_vcpu_stats **vcpus)
{
	struct vmrapl_vm_query q = {
		.size = sizeof(q), .id = id, .stats_ptr = (uintptr_t)st,
	};

	void *p;
	int n;

	/* The first call learns the vCPU count; a VM's count never changes. */
	n = host_fill_array(devfd, fill_vcpus, &q, sizeof(**vcpus), 0, 0, &p);
	*vcpus = p;
	return n;
}

int vmrapl_host_vm_limit_get(int devfd, uint64_t id, struct vmrapl_limit *out)
{
	struct vmrapl_limit l = { .size = sizeof(l), .id = id };

	if (ioctl(devfd, VMRAPL_GET_VM_LIMIT, &l) < 0)
		return -errno;
	*out = l;
	return 0;
}

uint32_t vmrapl_host_limit_held(const struct vmrapl_limit *l, uint64_t *uw,
				uint64_t *window_us)
{
	bool op = (l->state & VMRAPL_LIMIT_S_OPERATOR) && l->limit_uw;
	bool guest = (l->state & VMRAPL_LIMIT_S_GUEST) && l->guest_limit_uw;

	if (guest && (!op || l->guest_limit_uw < l->limit_uw)) {
		*uw = l->guest_limit_uw;
		*window_us = l->guest_window_us;
		return VMRAPL_LIMIT_S_GUEST;
	}
	*uw = op ? l->limit_uw : 0;
	*window_us = op ? l->window_us : 0;
	return op ? VMRAPL_LIMIT_S_OPERATOR : 0;
}

/* SET_VM_LIMIT of @id: @flags, @limit_uw and @window_us as given. */
static int limit_set(int devfd, uint64_t id, uint32_t flags,
		     uint64_t limit_uw, uint64_t window_us)
{
	struct vmrapl_limit l = {
		.size = sizeof(l), .flags = flags, .id = id,
		.limit_uw = limit_uw, .window_us = window_us,
	};

	if (ioctl(devfd, VMRAPL_SET_VM_LIMIT, &l) < 0)
		return -errno;
	return 0;
}

int vmrapl_host_vm_limit_set(int devfd, uint64_t id, uint64_t limit_uw,
			     uint64_t window_us)
{
	return limit_set(devfd, id, 0, limit_uw, window_us);
}

int vmrapl_host_vm_limit_clear(int devfd, uint64_t id)
{
	return limit_set(devfd, id, VMRAPL_LIMIT_F_CLEAR, 0, 0);
}

/* Copy one QEMU option value up to an unescaped ',' (",," is a comma). */
static void copy_opt(const char *s, const char *end, char *buf, size_t len)
{
	size_t n = 0;

	while (s < end && *s) {
		if (*s == ',') {
			if (s + 1 < end && s[1] == ',') {
				s++;
			} else {
				break;
			}
		}
		if (n + 1 < len)
			buf[n++] = *s;
		s++;
	}
	buf[n] = 0;
}

int vmrapl_host_qemu_name(const char *cmdline, size_t len, char *buf,
			  size_t buflen)
{
	const char *p = cmdline, *end = cmdline + len;

	if (!buflen)
		return 0;
	while (p < end) {
		size_t alen = strnlen(p, end - p);
		const char *next = p + alen + 1;

		if ((!strcmp(p, "-name") || !strcmp(p, "--name")) &&
		    next < end) {
			const char *v = next, *vend = v + strnlen(v, end - v);
			const char *s = v;

			/* guest=NAME anywhere among the options wins. */
			while (s < vend) {
				if (!strncmp(s, "guest=", 6)) {
					copy_opt(s + 6, vend, buf, buflen);
					return buf[0] ? 1 : 0;
				}
				/* skip to the next unescaped comma */
				while (s < vend) {
					if (*s == ',' && s + 1 < vend &&
					    s[1] == ',') {
						s += 2;
						continue;
					}
					if (*s == ',') {
						s++;
						break;
					}
					s++;
				}
			}
			/* Legacy form: the first option is the name. */
			copy_opt(v, vend, buf, buflen);
			if (strchr(buf, '='))
				buf[0] = 0;
			return buf[0] ? 1 : 0;
		}
		p = next;
	}
	return 0;
}

/* Is the command line's argv[0] QEMU's (qemu-system-*, qemu-kvm, ...)? */
int vmrapl_host_cmdline_is_qemu(const char *cmdline, size_t len)
{
	size_t alen = strnlen(cmdline, len);
	const char *base = cmdline, *p;

	for (p = cmdline; p < cmdline + alen; p++)
		if (*p == '/')
			base = p + 1;
	return (size_t)(cmdline + alen - base) >= 4 && !strncmp(base, "qemu", 4);
}

/*
 * Another VMM's name: the first "--name VALUE", "--name=VALUE" or
 * "-name VALUE", as it is (no option syntax inside the value).
 */
static int plain_name(const char *cmdline, size_t len, char *buf,
		      size_t buflen)
{
	const char *p = cmdline, *end = cmdline + len, *v = NULL;

	while (p < end && !v) {
		size_t alen = strnlen(p, end - p);
		const char *next = p + alen + 1;

		if ((!strcmp(p, "-name") || !strcmp(p, "--name")) &&
		    next < end)
			v = next;
		else if (!strncmp(p, "--name=", 7) && p + alen < end)
			v = p + 7;
		p = next;
	}
	if (!v || v >= end)
		return 0;
	snprintf(buf, buflen, "%.*s", (int)strnlen(v, end - v), v);
	return buf[0] ? 1 : 0;
}

int vmrapl_host_cmdline_name(const char *cmdline, size_t len, char *buf,
			     size_t buflen)
{
	if (!buflen)
		return 0;
	buf[0] = 0;
	if (vmrapl_host_cmdline_is_qemu(cmdline, len))
		return vmrapl_host_qemu_name(cmdline, len, buf, buflen);
	return plain_name(cmdline, len, buf, buflen);
}

/*
 * The value of the last "-@opt VALUE" (or "--@opt VALUE") in a command line
 * of @len bytes, as QEMU takes the last of repeated options; NULL when
 * there is none or the value is cut off (no NUL before @end).
 */
static const char *last_opt_value(const char *cmdline, size_t len,
				  const char *opt)
{
	const char *p = cmdline, *end = cmdline + len, *val = NULL;

	while (p < end) {
		size_t alen = strnlen(p, end - p);
		const char *next = p + alen + 1;
		const char *a = p;

		if (p + alen == end)
			break;		/* cut off: no option, no value */
		if (alen >= 2 && a[0] == '-' && a[1] == '-')
			a++;
		if (a[0] == '-' && !strcmp(a + 1, opt) && next < end) {
			if (strnlen(next, end - next) < (size_t)(end - next))
				val = next;
			else
				val = NULL;	/* the last one is cut off */
		}
		p = next;
	}
	return val;
}

int vmrapl_host_uuid_canonical(const char *s, char out[VMRAPL_HOST_UUID_LEN])
{
	static const char hex[] = "0123456789abcdef";
	char u[VMRAPL_HOST_UUID_LEN];
	size_t i;

	if (strlen(s) != VMRAPL_HOST_UUID_LEN - 1)
		return 0;
	for (i = 0; i < VMRAPL_HOST_UUID_LEN - 1; i++) {
		char c = s[i];

		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (c != '-')
				return 0;
			u[i] = c;
			continue;
		}
		if (c >= 'A' && c <= 'F')
			c = c - 'A' + 'a';
		if (!c || !strchr(hex, c))
			return 0;
		u[i] = c;
	}
	u[i] = 0;
	memcpy(out, u, sizeof(u));
	return 1;
}

int vmrapl_host_qemu_uuid(const char *cmdline, size_t len,
			  char buf[VMRAPL_HOST_UUID_LEN])
{
	const char *v = last_opt_value(cmdline, len, "uuid");

	buf[0] = 0;
	return v ? vmrapl_host_uuid_canonical(v, buf) : 0;
}

static ssize_t read_file(const char *path, char *buf, size_t len)
{
	ssize_t n, total = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while ((size_t)total < len) {
		n = read(fd, buf + total, len - total);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			close(fd);
			return n;
		}
		if (!n)
			break;
		total += n;
	}
	close(fd);
	return total;
}

static void chomp(char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
		s[--n] = 0;
}

/*
 * Enough of a command line for QEMU's options: libvirt's can pass 8 KiB
 * with many devices, but it gives -name and -uuid early on.
 */
#define CMDLINE_MAX	65536

/* /proc/@pid/cmdline into a malloc'ed buffer (*@out); its length or -errno. */
static ssize_t read_cmdline(pid_t pid, char **out)
{
	char path[64];
	ssize_t n;

	*out = malloc(CMDLINE_MAX + 1);
	if (!*out)
		return -ENOMEM;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	n = read_file(path, *out, CMDLINE_MAX);
	if (n < 0) {
		free(*out);
		*out = NULL;
		return n;
	}
	(*out)[n] = 0;
	return n;
}

int vmrapl_host_vm_uuid(pid_t pid, char buf[VMRAPL_HOST_UUID_LEN])
{
	ssize_t n;
	char *cmd;
	int found;

	buf[0] = 0;
	n = read_cmdline(pid, &cmd);
	if (n < 0)
		return 0;
	found = vmrapl_host_qemu_uuid(cmd, n, buf);
	free(cmd);
	return found;
}

int vmrapl_host_vm_name(pid_t pid, char *buf, size_t len)
{
	char path[64], comm[64], *cmd;
	ssize_t n;

	if (!len)
		return 0;
	n = read_cmdline(pid, &cmd);
	if (n > 0 && vmrapl_host_cmdline_name(cmd, n, buf, len)) {
		free(cmd);
		return 1;
	}
	free(cmd);
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	n = read_file(path, comm, sizeof(comm) - 1);
	if (n > 0) {
		comm[n] = 0;
		chomp(comm);
		if (comm[0]) {
			snprintf(buf, len, "%s", comm);
			return 0;
		}
	}
	snprintf(buf, len, "pid%d", (int)pid);
	return 0;
}

static int read_line(const char *path, char *buf, size_t len)
{
	ssize_t n;

	if (!len)
		return -EINVAL;
	n = read_file(path, buf, len - 1);
	if (n < 0)
		return (int)n;
	buf[n] = 0;
	chomp(buf);
	return 0;
}

int vmrapl_host_module_version(char *buf, size_t len)
{
	return read_line(VMRAPL_HOST_SYSFS "/version", buf, len);
}

int vmrapl_host_param_get(const char *name, char *buf, size_t len)
{
	char path[256];

	snprintf(path, sizeof(path), VMRAPL_HOST_SYSFS "/parameters/%s", name);
	return read_line(path, buf, len);
}

static int all_digits(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

int vmrapl_host_param_check(const char *name, const char *value,
			    const char **why)
{
	const char *dummy;

	if (!why)
		why = &dummy;
	*why = NULL;
	if (!strcmp(name, "sample_period_us")) {
		unsigned long v;

		if (!all_digits(value) || strlen(value) > 9) {
			*why = "must be a decimal number of microseconds, 100..1000000";
			return -EINVAL;
		}
		v = strtoul(value, NULL, 10);
		if (v < 100 || v > 1000000) {
			*why = "out of range 100..1000000";
			return -EINVAL;
		}
		return 0;
	}
	if (!strcmp(name, "static_policy")) {
		if (vmrapl_host_policy_value(value) < 0) {
			*why = "must be occupied, busy or none";
			return -EINVAL;
		}
		return 0;
	}
	if (!strcmp(name, "track_all")) {
		if (strcmp(value, "0") && strcmp(value, "1")) {
			*why = "must be 0 or 1";
			return -EINVAL;
		}
		return 0;
	}
	*why = "not a runtime parameter (sample_period_us, static_policy, track_all)";
	return -ENOENT;
}

int vmrapl_host_param_set(const char *name, const char *value)
{
	char path[256];
	ssize_t n;
	int fd, err;

	if (access(VMRAPL_HOST_SYSFS, F_OK))
		return -ENOENT;
	snprintf(path, sizeof(path), VMRAPL_HOST_SYSFS "/parameters/%s", name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, value, strlen(value));
	err = n < 0 ? -errno : 0;
	if (close(fd) && !err)
		err = -errno;
	return err;
}

/* A unit of a quantity on the command line: its name, and what one is. */
struct unit {
	const char *name;
	uint64_t value;		/* in the smallest unit (uW, us) */
};

/*
 * "NUMBER[UNIT]" (see vmrapl_host_parse_power()) in the smallest unit:
 * the number is N / 10^k (its digits, the fraction's trailing zeros
 * dropped), so the value is N x unit / 10^k, which must be whole.  N has
 * at most 28 digits and a unit is less than 10^10, so the product fits in
 * 128 bits; so does 10^k for k up to 38.
 */
static int parse_units(const char *s, const struct unit *units,
		       size_t nr_units, uint64_t def, uint64_t *out)
{
	const unsigned __int128 n_max = (unsigned __int128)10000000000000ull *
					1000000000000000ull;	/* 10^28 */
	const char *p = s, *frac = NULL, *frac_end;
	unsigned __int128 n = 0, v, pow10 = 1;
	uint64_t unit = def;
	size_t i;
	int k = 0;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	while (*p >= '0' && *p <= '9') {
		n = n * 10 + (unsigned int)(*p++ - '0');
		if (n > n_max)
			return -EINVAL;
	}
	if (*p == '.') {
		frac = ++p;
		if (*p < '0' || *p > '9')
			return -EINVAL;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p) {
		for (i = 0; i < nr_units; i++)
			if (!strcasecmp(p, units[i].name))
				break;
		if (i == nr_units)
			return -EINVAL;
		unit = units[i].value;
	}
	if (frac) {
		/* The fraction without its trailing zeros: N's last k digits. */
		for (frac_end = frac + strspn(frac, "0123456789");
		     frac_end > frac && frac_end[-1] == '0'; frac_end--)
			;
		for (; frac < frac_end; frac++, k++) {
			if (k == 38)
				return -EINVAL;
			n = n * 10 + (unsigned int)(*frac - '0');
			pow10 *= 10;
			if (n > n_max)
				return -EINVAL;
		}
	}
	v = n * unit;
	if (!v || v % pow10)
		return -EINVAL;	/* zero, or finer than the smallest unit */
	v /= pow10;
	if (v > UINT64_MAX)
		return -EINVAL;
	*out = (uint64_t)v;
	return 0;
}

int vmrapl_host_parse_power(const char *s, uint64_t *uw)
{
	static const struct unit units[] = {
		{ "uw", 1 },
		{ "mw", 1000 },
		{ "w", 1000000 },
		{ "kw", 1000000000 },
	};

	return parse_units(s, units, sizeof(units) / sizeof(units[0]),
			   1000000, uw);
}

int vmrapl_host_parse_duration(const char *s, uint64_t *us)
{
	static const struct unit units[] = {
		{ "us", 1 },
		{ "ms", 1000 },
		{ "s", 1000000 },
		{ "m", 60000000 },
		{ "h", 3600000000ull },
	};

	return parse_units(s, units, sizeof(units) / sizeof(units[0]),
			   1000000, us);
}

double vmrapl_host_load_time(const struct vmrapl_info *info)
{
	struct timespec real, boot;

	if (!(info->features & VMRAPL_INFO_F_LOAD_TIME))
		return 0;
	if (clock_gettime(CLOCK_REALTIME, &real) ||
	    clock_gettime(CLOCK_BOOTTIME, &boot))
		return 0;
	/* Wall time now, minus the boot-clock time since the load. */
	return (double)real.tv_sec + real.tv_nsec / 1e9 -
	       ((double)boot.tv_sec + boot.tv_nsec / 1e9 -
		info->load_boottime_ns / 1e9);
}

/*
 * The names of the ABI's enums, each table once for every tool: indexed
 * by value, a NULL hole is a value without a name.
 */
static const char *const source_names[] = {
	[VMRAPL_SOURCE_INTEL] = "intel",
	[VMRAPL_SOURCE_AMD] = "amd",
	[VMRAPL_SOURCE_ESTIMATE] = "estimate",
	[VMRAPL_SOURCE_TEST] = "test",
};

static const char *const policy_names[] = {
	[VMRAPL_STATIC_OCCUPIED] = "occupied",
	[VMRAPL_STATIC_BUSY] = "busy",
	[VMRAPL_STATIC_NONE] = "none",
};

static const char *const origin_names[] = {
	[VMRAPL_ORIGIN_UNKNOWN] = "unknown",
	[VMRAPL_ORIGIN_PARAM] = "param",
	[VMRAPL_ORIGIN_IDLE] = "idle",
	[VMRAPL_ORIGIN_MODEL] = "model",
	[VMRAPL_ORIGIN_FIT] = "fit",
	[VMRAPL_ORIGIN_CORE] = "core",
	[VMRAPL_ORIGIN_HOST] = "host",
};

static const char *const domain_names[VMRAPL_NR_DOMAINS] = {
	[VMRAPL_DOM_PKG] = "pkg",
	[VMRAPL_DOM_CORE] = "core",
	[VMRAPL_DOM_DRAM] = "dram",
};

static const char *const charge_names[] = {
	[VMRAPL_CHARGE_THREAD] = "thread",
	[VMRAPL_CHARGE_GUEST] = "guest",
};

#define NAMES(t)	t, sizeof(t) / sizeof(t[0])

/* @names[@v], or @unknown when @v has no name. */
static const char *name_of(const char *const *names, size_t n, uint32_t v,
			   const char *unknown)
{
	return v < n && names[v] ? names[v] : unknown;
}

/* The value named @name, or -EINVAL. */
static int value_of(const char *const *names, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (names[i] && !strcmp(names[i], name))
			return (int)i;
	return -EINVAL;
}

const char *vmrapl_host_source_name(uint32_t source)
{
	return name_of(NAMES(source_names), source, "unknown");
}

const char *vmrapl_host_policy_name(uint32_t policy)
{
	return name_of(NAMES(policy_names), policy, "unknown");
}

int vmrapl_host_policy_value(const char *name)
{
	return value_of(NAMES(policy_names), name);
}

const char *vmrapl_host_origin_name(uint32_t origin)
{
	return name_of(NAMES(origin_names), origin, "unknown");
}

const char *vmrapl_host_domain_name(unsigned int dom)
{
	return name_of(NAMES(domain_names), dom, NULL);
}

const char *vmrapl_host_charge_name(uint32_t charge)
{
	return name_of(NAMES(charge_names), charge, "unknown");
}

int vmrapl_host_charge_value(const char *name)
{
	return value_of(NAMES(charge_names), name);
}

size_t vmrapl_host_feature_names(uint64_t features, char *buf, size_t len)
{
	static const struct { uint64_t bit; const char *name; } f[] = {
		{ VMRAPL_INFO_F_ESTIMATED, "estimated" },
		{ VMRAPL_INFO_F_TEST_INJECT, "test_inject" },
		{ VMRAPL_INFO_F_TRACK_ALL, "track_all" },
		{ VMRAPL_INFO_F_LOAD_TIME, "load_time" },
		{ VMRAPL_INFO_F_STATIC_FIT, "static_fit" },
		{ VMRAPL_INFO_F_STATIC_SPLIT, "static_split" },
		{ VMRAPL_INFO_F_PERCORE, "percore" },
		{ VMRAPL_INFO_F_APERF, "aperf" },
		{ VMRAPL_INFO_F_STATIC_CORE, "static_core" },
		{ VMRAPL_INFO_F_STATIC_HOST, "static_host" },
		{ VMRAPL_INFO_F_PKG_V2, "pkg_v2" },
		{ VMRAPL_INFO_F_VCPU_ID, "vcpu_id" },
	};
	uint64_t rest = features;
	size_t i, n = 0;

	if (!len)
		return 0;
	buf[0] = 0;
	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		if (!(rest & f[i].bit))
			continue;
		rest &= ~f[i].bit;
		n += snprintf(buf + n, len - n, "%s%s", n ? " " : "", f[i].name);
		if (n >= len)
			return len - 1;
	}
	if (rest)
		n += snprintf(buf + n, len - n, "%s0x%llx", n ? " " : "",
			      (unsigned long long)rest);
	return n < len ? n : len - 1;
}

size_t vmrapl_host_domain_names(uint32_t domains, char *buf, size_t len)
{
	unsigned int dom;
	size_t n = 0;

	if (!len)
		return 0;
	buf[0] = 0;
	for (dom = 0; dom < VMRAPL_NR_DOMAINS && n < len; dom++)
		if (domains & (1u << dom))
			n += snprintf(buf + n, len - n, "%s%s", n ? " " : "",
				      vmrapl_host_domain_name(dom));
	return n < len ? n : len - 1;
}

static const char *const book_names[VMRAPL_HOST_NR_BOOKS] = {
	[VMRAPL_HOST_BOOK_SAMPLED] = "sampled",
	[VMRAPL_HOST_BOOK_TRACKED] = "tracked",
	[VMRAPL_HOST_BOOK_HOST] = "host",
	[VMRAPL_HOST_BOOK_IDLE] = "idle",
	[VMRAPL_HOST_BOOK_LOST] = "lost",
};

const char *vmrapl_host_book_name(unsigned int book)
{
	return name_of(NAMES(book_names), book, NULL);
}

const __u64 *vmrapl_host_book(const struct vmrapl_pkg_stats *p,
			      unsigned int book)
{
	switch (book) {
	case VMRAPL_HOST_BOOK_SAMPLED:	return p->sampled_uj;
	case VMRAPL_HOST_BOOK_TRACKED:	return p->tracked_uj;
	case VMRAPL_HOST_BOOK_HOST:	return p->host_uj;
	case VMRAPL_HOST_BOOK_IDLE:	return p->idle_uj;
	case VMRAPL_HOST_BOOK_LOST:	return p->lost_uj;
	}
	return NULL;
}
