/* SPDX-License-Identifier: MIT */
/*
 * libvmrapl-host - host-side helpers for the vmrapl tools (vmraplctl,
 * vmrapl-exporter): the host-wide ioctls (GET_PKG_STATS, LIST_VMS,
 * GET_VM_STATS, SET_VM_LIMIT, GET_VM_LIMIT), VM names and UUIDs from
 * /proc, the runtime module parameters, powers and durations from the
 * command line and names of the ABI's enums.  Built as a static archive
 * (libvmrapl-host.a) next to libvmrapl, also linked into vmrapl-vmm for
 * the names; it is not part of libvmrapl.so's ABI.
 *
 * Conventions as libvmrapl: int returns are 0 (or a count) on success and
 * a negative errno value on failure.  The host-wide reads need CAP_PERFMON
 * (or root), setting a limit CAP_SYS_ADMIN: -EPERM otherwise.
 */
#ifndef LIBVMRAPL_HOST_H
#define LIBVMRAPL_HOST_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/vmrapl.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VMRAPL_HOST_SYSFS	"/sys/module/vmrapl"

/*
 * VMRAPL_LIST_VMS into a malloc'ed array (*out, free() it), growing the
 * buffer until every tracked VM fits.  Returns the number of VMs.
 */
int vmrapl_host_list_vms(int devfd, struct vmrapl_vm_entry **out);

/*
 * VMRAPL_GET_VM_STATS of the VM with @id (from LIST_VMS): the whole VM in
 * *@st and its vCPUs in a malloc'ed array (*@vcpus, free() it; NULL when
 * the VM has none).  Returns the number of vCPUs; -ENOENT when the VM has
 * gone.
 */
int vmrapl_host_vm_stats(int devfd, uint64_t id, struct vmrapl_stats *st,
			 struct vmrapl_vcpu_stats **vcpus);

/*
 * VMRAPL_GET_VM_LIMIT of the VM with @id into *@out (untouched on
 * failure): limit_uw and window_us of the operator's limit, 0 for none,
 * guest_limit_uw and guest_window_us of the PL1 its guest wrote, and
 * state (VMRAPL_LIMIT_S_*).  0, or -ENOENT when the VM has gone, -EPERM
 * without CAP_PERFMON, -ENOTTY from a module without limits.
 */
int vmrapl_host_vm_limit_get(int devfd, uint64_t id,
			     struct vmrapl_limit *out);

/*
 * The limit @l's VM is held to: the lower of the operator's and the
 * guest's (the operator's when they are equal), in *@uw over *@window_us,
 * both 0 for none.  Returns whose it is, VMRAPL_LIMIT_S_OPERATOR or
 * VMRAPL_LIMIT_S_GUEST, or 0.
 */
uint32_t vmrapl_host_limit_held(const struct vmrapl_limit *l, uint64_t *uw,
				uint64_t *window_us);

/*
 * VMRAPL_SET_VM_LIMIT: the VM with @id held to @limit_uw averaged over
 * @window_us, replacing any limit it had.  The values go to the kernel as
 * they are: out of VMRAPL_LIMIT_MIN_UW..VMRAPL_LIMIT_MAX_UW or
 * VMRAPL_LIMIT_MIN_WINDOW_US..VMRAPL_LIMIT_MAX_WINDOW_US is -EINVAL from
 * it (a caller checks the ranges first to say which).  0, or -EPERM
 * without CAP_SYS_ADMIN, -ENOENT when the VM has gone (nothing changes on
 * any error).
 */
int vmrapl_host_vm_limit_set(int devfd, uint64_t id, uint64_t limit_uw,
			     uint64_t window_us);

/*
 * VMRAPL_SET_VM_LIMIT with VMRAPL_LIMIT_F_CLEAR: the VM with @id has no
 * limit any more (0 too when it had none).  Errors as
 * vmrapl_host_vm_limit_set().
 */
int vmrapl_host_vm_limit_clear(int devfd, uint64_t id);

/* VMRAPL_GET_PKG_STATS into a malloc'ed array; returns the count. */
int vmrapl_host_pkg_stats(int devfd, struct vmrapl_pkg_stats **out);

/*
 * The same, with each package's static power and its online fit in a
 * second malloc'ed array (*@st, free() it; entry i is package i).  A module
 * without VMRAPL_INFO_F_STATIC_FIT answers the books only: *@st is NULL.
 */
int vmrapl_host_pkg_static(int devfd, struct vmrapl_pkg_stats **out,
			   struct vmrapl_pkg_static **st);

/*
 * The name of the VM whose VMM is @pid: vmrapl_host_cmdline_name() of
 * /proc/<pid>/cmdline, else /proc/<pid>/comm, else "pid<N>".  Always
 * fills @buf (NUL terminated); returns 1 when the name came from the
 * command line, 0 otherwise.
 */
int vmrapl_host_vm_name(pid_t pid, char *buf, size_t len);

/*
 * Parse a QEMU command line (NUL-separated arguments, @len bytes) for
 * -name, by QEMU's rules ("guest=NAME,..." or "NAME[,...]", ",," a
 * comma); 1 and @buf filled when found, 0 otherwise.
 */
int vmrapl_host_qemu_name(const char *cmdline, size_t len, char *buf,
			  size_t buflen);

/* Is the command line's argv[0] QEMU's: its base name starts "qemu"? */
int vmrapl_host_cmdline_is_qemu(const char *cmdline, size_t len);

/*
 * A VM's name from its VMM's command line: for QEMU (argv[0]'s base name
 * starts with "qemu": qemu-system-x86_64, qemu-kvm) its -name by QEMU's
 * rules (vmrapl_host_qemu_name()); for any other VMM the first
 * "--name VALUE", "--name=VALUE" or "-name VALUE" as it is, commas and
 * all.  1 and @buf filled when found, 0 and "" otherwise.
 */
int vmrapl_host_cmdline_name(const char *cmdline, size_t len, char *buf,
			     size_t buflen);

/* A UUID in its canonical text form: 36 characters and the NUL. */
#define VMRAPL_HOST_UUID_LEN	37

/*
 * Is @s a UUID in the canonical 8-4-4-4-12 form of hex digits (RFC 9562),
 * either case?  1 and its lower-case form in @out; 0 otherwise (@out
 * untouched).
 */
int vmrapl_host_uuid_canonical(const char *s, char out[VMRAPL_HOST_UUID_LEN]);

/*
 * QEMU's "-uuid UUID" from a command line (NUL-separated arguments, @len
 * bytes; the last -uuid, as QEMU takes it; libvirt passes its domain's
 * UUID so): 1 and its canonical lower-case form in @buf, 0 and "" when
 * there is none or it is not a canonical UUID.
 */
int vmrapl_host_qemu_uuid(const char *cmdline, size_t len,
			  char buf[VMRAPL_HOST_UUID_LEN]);

/*
 * The UUID of the VM whose VMM is @pid: vmrapl_host_qemu_uuid() of
 * /proc/<pid>/cmdline.  1 and @buf filled, else 0 and "".
 */
int vmrapl_host_vm_uuid(pid_t pid, char buf[VMRAPL_HOST_UUID_LEN]);

/* /sys/module/vmrapl/version without the newline (-ENOENT if absent). */
int vmrapl_host_module_version(char *buf, size_t len);

/* Read /sys/module/vmrapl/parameters/@name, newline stripped. */
int vmrapl_host_param_get(const char *name, char *buf, size_t len);

/*
 * Is @name a runtime parameter (sample_period_us, static_policy,
 * track_all) and @value acceptable for it?  0, or -ENOENT for an unknown
 * or read-only parameter, -EINVAL for a bad value (with a reason in @why,
 * when @why is not NULL).
 */
int vmrapl_host_param_check(const char *name, const char *value,
			    const char **why);

/*
 * Write @value to a runtime parameter (after vmrapl_host_param_check()).
 * -ENOENT: module not loaded; -EACCES/-EPERM: not allowed; -EINVAL: the
 * kernel refused the value.
 */
int vmrapl_host_param_set(const char *name, const char *value);

/*
 * A power from the command line, in microwatts: a decimal number (digits,
 * optionally a point and more digits; no sign, no spaces, no exponent)
 * and a unit, W, kW, mW or uW in any case ("mw" and "MW" are milliwatts),
 * W when there is none: "40W", "40", "1.5kW", "500mW".  0 and *@uw set,
 * or -EINVAL (*@uw untouched) for anything else, for 0, for more than
 * fits in 64 bits and for a value that is no whole number of microwatts
 * (a digit other than 0 below the microwatt: "1.0000005W").  The
 * module's range (VMRAPL_LIMIT_MIN_UW..VMRAPL_LIMIT_MAX_UW) is the
 * caller's to check.
 */
int vmrapl_host_parse_power(const char *s, uint64_t *uw);

/*
 * A duration from the command line, in microseconds: a decimal number as
 * vmrapl_host_parse_power() takes it and a unit, us, ms, s, m (minutes)
 * or h in any case, seconds when there is none: "1s", "250ms", "500us",
 * "2m", "1h", "1.5".  0 and *@us set, or -EINVAL (*@us untouched) for
 * anything else, for 0, for more than fits in 64 bits and for a value
 * that is no whole number of microseconds.  The module's window range is
 * the caller's to check.
 */
int vmrapl_host_parse_duration(const char *s, uint64_t *us);

/*
 * When the module was loaded (VMRAPL_INFO_F_LOAD_TIME), as Unix time in
 * seconds: every energy total counts from then.  0 when not announced.
 */
double vmrapl_host_load_time(const struct vmrapl_info *info);

/*
 * Names of the ABI's enums: every tool prints and parses them through
 * these, so each name table exists once.  The *_value() functions map a
 * name back to its value, -EINVAL for a name they do not know.
 */
/* VMRAPL_SOURCE_*: "intel", "amd", "estimate", "test", "unknown". */
const char *vmrapl_host_source_name(uint32_t source);
/* VMRAPL_ORIGIN_* (vmrapl_pkg_static.origin): "unknown", "param", "idle",
 * "model", "fit", "core", "host". */
const char *vmrapl_host_origin_name(uint32_t origin);

/* VMRAPL_STATIC_* (static_policy): "occupied", "busy", "none", "unknown". */
const char *vmrapl_host_policy_name(uint32_t policy);
int vmrapl_host_policy_value(const char *name);
/* "pkg", "core", "dram" for VMRAPL_DOM_*, NULL beyond. */
const char *vmrapl_host_domain_name(unsigned int dom);
/* VMRAPL_CHARGE_*: "thread", "guest", "unknown". */
const char *vmrapl_host_charge_name(uint32_t charge);
int vmrapl_host_charge_value(const char *name);

/*
 * The names of the VMRAPL_INFO_F_* bits in @features ("estimated
 * track_all ..."; a bit without a name as 0xN) and of the domains in the
 * VMRAPL_DOM_* mask @domains ("pkg dram"), separated by spaces, into
 * @buf (@len bytes, NUL terminated; "" for none).  Return the length.
 */
size_t vmrapl_host_feature_names(uint64_t features, char *buf, size_t len);
size_t vmrapl_host_domain_names(uint32_t domains, char *buf, size_t len);

/*
 * The books of struct vmrapl_pkg_stats, in its order: sampled (every dE
 * read), tracked (charged to VMs), host, idle and lost (the unattributed
 * kinds, from VMRAPL_HOST_BOOK_HOST on).
 */
enum {
	VMRAPL_HOST_BOOK_SAMPLED,
	VMRAPL_HOST_BOOK_TRACKED,
	VMRAPL_HOST_BOOK_HOST,
	VMRAPL_HOST_BOOK_IDLE,
	VMRAPL_HOST_BOOK_LOST,
	VMRAPL_HOST_NR_BOOKS
};
/* "sampled", "tracked", "host", "idle", "lost"; NULL beyond. */
const char *vmrapl_host_book_name(unsigned int book);
/* The per-domain microjoules of @book in @p, NULL beyond. */
const __u64 *vmrapl_host_book(const struct vmrapl_pkg_stats *p,
			      unsigned int book);

#ifdef __cplusplus
}
#endif

#endif /* LIBVMRAPL_HOST_H */
