/* SPDX-License-Identifier: MIT */
/*
 * A VM's cgroup v2 cpu.max under the power-limit controller (limit.h):
 * what to write, how to put the operator's value back, and the records
 * that let a restore pass undo a daemon that died mid-throttle.
 *
 * cpu.max, as the kernel reads and shows it (kernel/sched/core.c,
 * cpu_max_show(), cpu_max_write(), cpu_period_quota_parse() and the range
 * checks of tg_set_cfs_bandwidth()):
 *
 *   shown:    "$MAX $PERIOD\n", $MAX "max" or the quota in us, $PERIOD us.
 *   written:  a first token of at most 20 non-blank characters, then
 *             optionally the period.  The token is "max", or starts with
 *             a decimal digit and its leading digits are the quota ("1000x"
 *             is 1000: the kernel's sscanf stops at the 'x').  A period
 *             that is absent or does not start with a digit leaves the
 *             group's period as it was; anything after it is ignored.
 *   ranges:   period 1000..1000000 us; quota "max" or 1000 us ..
 *             CGQ_MAX_QUOTA_US; the group's cpu.max.burst at most the
 *             quota.  Everything refused is -EINVAL, so is the root
 *             cgroup (which has no cpu.max at all).
 *
 * The one place cgq_max_parse() is stricter than the kernel: a number
 * beyond 64 bits, which the kernel's sscanf wraps silently, is refused.
 *
 * The crash path (issue 40): the daemon records what it found in cpu.max
 * (cgq_record()) before its first write; cgq_restore_all(), run at the
 * daemon's start and by its unit's ExecStopPost=, puts every recorded
 * original back.  A daemon that restarts while a record of its VM exists
 * takes the original from the record, never from cpu.max, which then
 * holds its own throttled value.
 *
 * C99 and POSIX only; no globals, no threads, no allocation (but
 * opendir()'s in cgq_restore_all() and fopen()'s in cgq_vm_cgroup()).  Every function returns 0 or a
 * negative errno unless it says otherwise.
 */
#ifndef VMRAPL_COMMON_CGQUOTA_H
#define VMRAPL_COMMON_CGQUOTA_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "limit.h"

/* struct cgq_max's quota_us for "max" (the kernel's RUNTIME_INF). */
#define CGQ_QUOTA_MAX		UINT64_MAX
/* The kernel's ranges, us (min/max_cfs_quota_period, max_cfs_runtime). */
#define CGQ_MIN_PERIOD_US	1000ULL
#define CGQ_MAX_PERIOD_US	1000000ULL
#define CGQ_MIN_QUOTA_US	1000ULL
#define CGQ_MAX_QUOTA_US	((1ULL << 44) - 1)
/* The kernel's default period, and cgq_max_parse()'s when none is known. */
#define CGQ_DEFAULT_PERIOD_US	100000ULL
/* Room for any line cgq_max_format() writes, NUL included. */
#define CGQ_LINE_MAX		48
/* The longest VM id cgq_record() takes (a file name, with room for the
 * temporary's ".tmp" and leading dot). */
#define CGQ_ID_MAX		200

/**
 * struct cgq_max - one cpu.max value
 * @quota_us: the quota, us per period, or CGQ_QUOTA_MAX ("max").
 * @period_us: the period, us.
 */
struct cgq_max {
	uint64_t quota_us;
	uint64_t period_us;
};

/**
 * struct cgq_stat - the bandwidth fields of cpu.stat
 * @usage_usec: CPU time of the group, us.
 * @nr_periods: periods that elapsed with the group runnable and a quota
 *	(advances at each period edge while the timer runs).
 * @nr_throttled: periods in which the group was throttled.
 * @throttled_usec: time its CPUs spent throttled, us.
 *
 * A key cpu.stat does not show (a kernel without CONFIG_CFS_BANDWIDTH)
 * reads 0.
 */
struct cgq_stat {
	uint64_t usage_usec;
	uint64_t nr_periods;
	uint64_t nr_throttled;
	uint64_t throttled_usec;
};

/**
 * struct cgq - one cgroup's cpu.max, held for a VM
 * @dirfd: the cgroup directory.
 * @statfd: its cpu.stat, kept open (read with pread() at offset 0).
 * @ino: the directory's inode (a cgroup made again at the same path is
 *	another one).
 * @orig: the operator's (or libvirt's) value: what cgq_restore() writes.
 * @cur: what cpu.max holds as far as the handle knows: read at
 *	cgq_open(), then each value written.
 * @recorded: cgq_record() succeeded; cgq_apply() refuses before.
 * @path: the cgroup directory's path, as given to cgq_open().
 * @moved_pid: the VMM moved into this cgroup, made for it (cgq_make(),
 *	cgq_set_moved()); 0 for a cgroup that was there.
 * @moved_from: the cgroup directory it was moved from.
 *
 * Read the fields; change them only through these functions.
 */
struct cgq {
	int dirfd;
	int statfd;
	uint64_t ino;
	struct cgq_max orig;
	struct cgq_max cur;
	bool recorded;
	char path[PATH_MAX];
	pid_t moved_pid;
	char moved_from[PATH_MAX];
};

/* Where cgq_make() makes a VMM's cgroup: CGQ_SLICE/vm-ID under the root. */
#define CGQ_SLICE		"vmrapl.slice"

/**
 * struct cgq_counts - what cgq_restore_all() did
 * @restored: records whose original went back into cpu.max (removed).
 * @gone: records whose cgroup no longer exists, was made again (another
 *	inode) or lost its cpu controller: nothing to restore (removed).
 * @failed: records that could not be parsed, or whose write failed
 *	(left in place, reported).
 */
struct cgq_counts {
	unsigned int restored;
	unsigned int gone;
	unsigned int failed;
};

/**
 * cgq_max_parse() - read a cpu.max line as cpu_max_write() does
 * @s: the line, NUL-terminated ("50000 100000\n", "max", "20000").
 * @m: in: the group's period (used when @s gives none); out: the value.
 *
 * Return: 0, or -EINVAL (@m untouched) for a line the kernel refuses:
 * no token, a token that is neither "max" nor starts with a digit, a
 * period or quota out of range, a number beyond 64 bits.
 */
int cgq_max_parse(const char *s, struct cgq_max *m);

/**
 * cgq_max_format() - the line cpu_max_show() would show for a value
 * @m: the value.
 * @buf: where to write it, "$MAX $PERIOD\n" and a NUL.
 * @len: @buf's size; CGQ_LINE_MAX always suffices.
 *
 * Return: the line's length (without the NUL), -EINVAL for a value the
 * kernel refuses, -ENOSPC when @len is too small.
 */
int cgq_max_format(const struct cgq_max *m, char *buf, size_t len);

/**
 * cgq_combine() - the value to write: the lower share of ours and theirs
 * @ours_ns: the controller's quota, ns per @period_ns, or
 *	VR_LIMIT_NO_QUOTA; rounded down to whole us, raised to 1000 us.
 * @period_ns: the controller's period, ns, whole us in 1 ms .. 1 s.
 * @theirs: the original value (struct cgq's @orig).
 * @out: the value to write.
 *
 * The rule: with no quota of ours, theirs, unchanged (so "max" with their
 * period when both are "max").  Otherwise in our period, with the quota
 * the lower of ours and theirs scaled to our period (rounded down); when
 * theirs scaled falls under the kernel's 1000 us, their value unchanged:
 * it is the lower share and our period cannot express it.  The share of
 * CPU written is therefore never above theirs nor above ours (but for our
 * quota's floor of 1000 us).  Writing in our period keeps the period edges
 * where the daemon's timing expects them.
 *
 * Return: 0, or -EINVAL (@out untouched) for a period or quota out of the
 * kernel's ranges, or @theirs out of them.
 */
int cgq_combine(uint64_t ours_ns, uint64_t period_ns,
		const struct cgq_max *theirs, struct cgq_max *out);

/**
 * cgq_open() - hold a cgroup's cpu.max
 * @h: the handle, filled in.
 * @path: the cgroup's directory (e.g. /sys/fs/cgroup/machine.slice/
 *	machine-qemu\x2d1\x2dvm.scope); kept as given (records compare it
 *	as a string, so pass the same spelling every time).
 *
 * Reads cpu.max into @h->orig and @h->cur and opens cpu.stat.  Nothing is
 * written.  The original is provisional until cgq_record(), which takes
 * it from a record of an earlier run of the daemon when there is one.
 *
 * Return: 0; -ENOENT when @path does not exist; -ENOTDIR when it is not
 * a directory; -ENODEV when it has no cpu.max or cpu.stat (the cpu
 * controller is not enabled for it, or it is the root cgroup);
 * -ENAMETOOLONG, or @path holds a newline: -EINVAL; -EINVAL when cpu.max
 * cannot be parsed; another -errno of open() or read().
 */
int cgq_open(struct cgq *h, const char *path);

/**
 * cgq_close() - let go of a cgroup, cpu.max as it is
 * @h: the handle.
 *
 * Does not restore (cgq_restore() does) nor forget: closing a throttled
 * handle is what a crash does, and its record stays for the restore pass.
 */
void cgq_close(struct cgq *h);

/**
 * cgq_apply() - write the controller's quota, combined with the original
 * @h: the handle, recorded (cgq_record()).
 * @ours_ns: the controller's quota, ns per @period_ns, or
 *	VR_LIMIT_NO_QUOTA.
 * @period_ns: the controller's period, ns.
 *
 * Writes cgq_combine()'s value, only when it differs from @h->cur.
 *
 * Return: 1 when cpu.max was written, 0 when it already held the value;
 * -EPERM before cgq_record(); -EINVAL as cgq_combine(), or from the kernel
 * (e.g. the group's cpu.max.burst is above the quota); -ENODEV once the
 * cgroup was removed; another -errno of open() or write().
 */
int cgq_apply(struct cgq *h, uint64_t ours_ns, uint64_t period_ns);

/**
 * cgq_restore() - write the original value back
 * @h: the handle.
 *
 * Always writes (a restore must not trust @h->cur), exactly the line the
 * kernel showed for the original.  The record stays: cgq_forget() it
 * after a restore that succeeded.
 *
 * Return: 0, or -errno of open() or write().
 */
int cgq_restore(struct cgq *h);

/**
 * cgq_stat() - read cpu.stat's bandwidth fields
 * @h: the handle.
 * @st: the fields; a key cpu.stat lacks reads 0, unknown keys are skipped.
 *
 * One pread() of the open cpu.stat (the kernel makes the text again at
 * offset 0): cheap enough to poll nr_periods for a period edge.
 *
 * Return: 0; -EINVAL when a known key's value is not a number; -EFBIG when
 * cpu.stat is over 4 KiB; another -errno of pread().
 */
int cgq_stat(struct cgq *h, struct cgq_stat *st);

/**
 * cgq_record() - record the original before the first write
 * @rundir: the records' directory (e.g. /run/vmrapl/limit), existing.
 * @vm_id: the VM's id, the record's file name: 1..CGQ_ID_MAX characters,
 *	no '/', not starting with '.'.
 * @h: the handle, open.
 *
 * With no record of @vm_id: writes @rundir/@vm_id (the cgroup's path and
 * inode, the original cpu.max line, the time) through a temporary file,
 * fsync() and rename(), and fsync()s @rundir.
 *
 * With a record of @vm_id for the same cgroup (path and inode): the
 * crash-restart path.  cpu.max may hold the dead daemon's throttled value,
 * so @h->orig is taken from the record, which is kept as it is.
 *
 * With a record of @vm_id for the same path but another inode: the
 * cgroup was made again since, what the record holds belongs to a cgroup
 * that is gone; the record is replaced by @h's.
 *
 * Return: 0 (@h->recorded set); -EINVAL for a bad @vm_id; -EEXIST (@h
 * untouched) when the record is of another cgroup path: restore or forget
 * it first; -EBADMSG (@h untouched) when the record cannot be parsed:
 * left in place for the operator; another -errno of the file operations.
 */
int cgq_record(const char *rundir, const char *vm_id, struct cgq *h);

/**
 * cgq_forget() - remove a VM's record, after cgq_restore()
 * @rundir: the records' directory.
 * @vm_id: the VM's id.
 *
 * Return: 0, also when there was no record; -EINVAL for a bad @vm_id;
 * another -errno of unlink().
 */
int cgq_forget(const char *rundir, const char *vm_id);

/**
 * cgq_restore_all() - the restore pass: every record put back and removed
 * @rundir: the records' directory.
 * @report: if not NULL, called for each record: @err 0 restored, -ENOENT
 *	gone (removed), -EBADMSG unparseable (kept), another -errno of the
 *	write (kept); @cgroup is NULL when the record could not be parsed.
 * @arg: @report's first argument.
 * @counts: what was done.
 *
 * A record whose cgroup still exists (same path and inode) and has a
 * cpu.max gets its original written back and is removed; one whose cgroup
 * is gone is removed.  A record that cannot be parsed, or whose write
 * fails, is left in place: nothing that was not read from a cgroup's own
 * cpu.max is ever written.  Leftover temporaries of cgq_record() (dot
 * files) are removed.
 *
 * Return: 0 (also for a @rundir that does not exist: nothing recorded), or
 * -errno when @rundir cannot be read.
 */
int cgq_restore_all(const char *rundir,
		    void (*report)(void *arg, const char *vm_id,
				   const char *cgroup, int err),
		    void *arg, struct cgq_counts *counts);

/**
 * cgq_nr_periods() - cpu.stat's nr_periods alone (cgq_stat()'s cost)
 * @h: the handle.
 * @n: the count.
 *
 * Return: as cgq_stat().
 */
int cgq_nr_periods(struct cgq *h, uint64_t *n);

/**
 * cgq_vm_cgroup() - the cgroup that holds a VM whose VMM is @pid
 * @proc: where /proc is ("/proc"; a test's fake one).
 * @cgroot: where cgroup v2 is mounted ("/sys/fs/cgroup").
 * @pid: the VMM.
 * @rel: the cgroup, relative to @cgroot ("/machine.slice/...").
 * @len: @rel's size.
 * @why: when there is none, why, for a log line.
 * @wlen: @why's size.
 *
 * The VMM's cgroup v2 (@proc/PID/cgroup, its "0::" line), up to the
 * systemd machine scope it is in (a "machine-*.scope" component:
 * libvirt's, with the vCPUs, the emulator and the I/O threads); without
 * one, the VMM's own cgroup when its cgroup.procs lists no other
 * process (a scope of its own, a cgroup the operator made).
 *
 * Return: 0; -ENODEV for a host without cgroup v2; -EBUSY when its cgroup
 * holds other processes, which a quota would throttle too, or is the root
 * cgroup (no cpu.max): @rel is that cgroup all the same, for cgq_make();
 * -ENAMETOOLONG; another -errno of reading the files.
 */
int cgq_vm_cgroup(const char *proc, const char *cgroot, pid_t pid,
		  char *rel, size_t len, char *why, size_t wlen);

/**
 * cgq_make() - a cgroup of its own for a VMM in a shared one
 * @cgroot: where cgroup v2 is mounted.
 * @vm_id: the VM's id, as cgq_record()'s: the cgroup is
 *	@cgroot/CGQ_SLICE/vm-@vm_id.
 * @pid: the VMM: the whole process moves (its cgroup.procs).
 * @path: out: the cgroup made, the path cgq_open() takes.
 * @len: @path's size.
 *
 * Makes @cgroot/CGQ_SLICE if it is not there, with the cpu controller
 * enabled for its children (and in @cgroot's cgroup.subtree_control when
 * it was not), then the VM's cgroup, and moves @pid into it.  Call
 * cgq_set_moved() on the handle cgq_open() gives for it, before
 * cgq_record(), so that a restore moves it back.
 *
 * Return: 0; -EINVAL for a bad @vm_id; -ENAMETOOLONG; -EEXIST when the
 * VM's cgroup is there already (a restore pass has not run); another
 * -errno of mkdir() or of the writes.  On error the VM's cgroup is not
 * left behind and @pid stays where it was.
 */
int cgq_make(const char *cgroot, const char *vm_id, pid_t pid, char *path,
	     size_t len);

/**
 * cgq_set_moved() - note that @h's cgroup was made for @pid (cgq_make())
 * @h: the handle, open.
 * @pid: the VMM.
 * @from: the cgroup directory it came from (absolute).
 *
 * cgq_record() then records it, and cgq_unmake() and the restore pass
 * move @pid back and remove the cgroup.
 *
 * Return: 0, or -ENAMETOOLONG.
 */
int cgq_set_moved(struct cgq *h, pid_t pid, const char *from);

/**
 * cgq_unmake() - a made cgroup undone: its VMM moved back, it removed
 * @path: the cgroup cgq_make() made.
 * @pid: the VMM it made it for.
 * @from: where that VMM came from.
 *
 * Only while @pid is still in @path (an operator who moved it since is
 * not overruled) is it moved back: to @from, or to its nearest ancestor
 * that still exists.  Then @path is removed.
 *
 * Return: 0; -ENOENT when @path is gone already; -EBUSY when it still
 * holds a process (left, for the operator); another -errno of the writes.
 */
int cgq_unmake(const char *path, pid_t pid, const char *from);

#endif /* VMRAPL_COMMON_CGQUOTA_H */
