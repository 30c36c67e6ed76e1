// SPDX-License-Identifier: MIT
/*
 * Unit tests of cpu.max handling (common/cgquota.c), TAP output.
 *
 * The parser and formatter against the lines the kernel accepts and
 * refuses (cpu_period_quota_parse() and tg_set_cfs_bandwidth()'s range
 * checks); the combination of our quota with the operator's; then a
 * handle on a fake cgroup made with mkdtemp() (regular files cpu.max and
 * cpu.stat, which cannot refuse a bad write: that is what the parser
 * tests are for) and the records of the crash path: a daemon that dies
 * throttled, one that restarts over its own record, a cgroup that went
 * away, a corrupt record.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgquota.h"
#include "tap.h"

#define MS	1000000ULL
/* The test's paths: under base, short. */
#define PLEN	256
#define FLEN	(PLEN + 64)

static char base[64];

static int put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

/* The file's text, "" when it cannot be read. */
static const char *get(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, len - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	return buf;
}

static bool exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* @s with its newlines as "\\n", for one TAP line (test output only). */
static const char *esc(const char *s)
{
	static char out[128];
	size_t n = 0;

	for (; *s && n < sizeof(out) - 3; s++) {
		if (*s == '\n') {
			out[n++] = '\\';
			out[n++] = 'n';
		} else {
			out[n++] = *s;
		}
	}
	out[n] = '\0';
	return out;
}

static void parse_ok(const char *line, uint64_t period_in, uint64_t quota,
		     uint64_t period)
{
	struct cgq_max m = { 0, period_in };
	int err = cgq_max_parse(line, &m);

	tap(!err && m.quota_us == quota && m.period_us == period,
	    "parse \"%s\" (period %" PRIu64 ") = %" PRIu64 " %" PRIu64
	    " (got %d, %" PRIu64 " %" PRIu64 ")", esc(line), period_in, quota,
	    period, err, m.quota_us, m.period_us);
}

static void parse_bad(const char *line)
{
	struct cgq_max m = { 4242, 100000 };
	int err = cgq_max_parse(line, &m);

	tap(err == -EINVAL && m.quota_us == 4242 && m.period_us == 100000,
	    "parse \"%s\" refused, -EINVAL, value untouched (got %d)", esc(line),
	    err);
}

static void test_parse_format(void)
{
	static const char *const shown[] = {
		"max 100000\n", "50000 100000\n", "1000 1000\n",
		"1000000 1000000\n", "max 1000000\n", "17592186044415 1000\n",
		"400000 250000\n",
	};
	char buf[CGQ_LINE_MAX];
	struct cgq_max m;
	size_t i;

	parse_ok("max 100000\n", 0, CGQ_QUOTA_MAX, 100000);
	parse_ok("50000 100000\n", 0, 50000, 100000);
	/* only the quota: the period stays */
	parse_ok("20000", 250000, 20000, 250000);
	parse_ok("max\n", 250000, CGQ_QUOTA_MAX, 250000);
	parse_ok("  1000 \t 1000  \n", 0, 1000, 1000);
	/* the kernel's sscanf: leading digits of the token, of the period */
	parse_ok("1000x 100000", 0, 1000, 100000);
	parse_ok("5000 100000junk", 0, 5000, 100000);
	parse_ok("5000 junk", 200000, 5000, 200000);
	parse_ok("5000 100000 7", 0, 5000, 100000);
	parse_ok("17592186044415 1000000", 0, CGQ_MAX_QUOTA_US, 1000000);

	parse_bad("");
	parse_bad("  \n");
	parse_bad("999 100000");
	parse_bad("0 100000");
	parse_bad("1000 999");
	parse_bad("1000 1000001");
	parse_bad("17592186044416 100000");
	parse_bad("maxx 100000");
	parse_bad("MAX 100000");
	parse_bad("-1 100000");
	parse_bad("+5000 100000");
	parse_bad("abc");
	parse_bad("x5000 100000");
	parse_bad("99999999999999999999 100000");
	/* a token is at most 20 characters: the rest is read as the period */
	parse_ok("00000000000000001000100000", 0, 1000, 100000);

	for (i = 0; i < sizeof(shown) / sizeof(shown[0]); i++) {
		int n;

		m.period_us = 0;
		n = cgq_max_parse(shown[i], &m) ? -1 :
		    cgq_max_format(&m, buf, sizeof(buf));
		tap(n == (int)strlen(shown[i]) && !strcmp(buf, shown[i]),
		    "round trip of \"%.*s\"", (int)strlen(shown[i]) - 1,
		    shown[i]);
	}
	m = (struct cgq_max){ 999, 100000 };
	tap(cgq_max_format(&m, buf, sizeof(buf)) == -EINVAL,
	    "format refuses a quota under 1000 us");
	m = (struct cgq_max){ CGQ_QUOTA_MAX, 1000001 };
	tap(cgq_max_format(&m, buf, sizeof(buf)) == -EINVAL,
	    "format refuses a period over 1 s");
	m = (struct cgq_max){ 50000, 100000 };
	tap(cgq_max_format(&m, buf, 8) == -ENOSPC,
	    "format: -ENOSPC when the buffer is short");
}

static void combine(uint64_t ours, uint64_t period, uint64_t tq,
		    uint64_t tp, uint64_t q, uint64_t p, const char *what)
{
	struct cgq_max theirs = { tq, tp }, out = { 0, 0 };
	int err = cgq_combine(ours, period, &theirs, &out);

	tap(!err && out.quota_us == q && out.period_us == p,
	    "combine: %s (got %d, %" PRIu64 " %" PRIu64 ")", what, err,
	    out.quota_us, out.period_us);
}

static void test_combine(void)
{
	struct cgq_max theirs = { CGQ_QUOTA_MAX, 100000 }, out = { 7, 7 };
	const uint64_t NQ = VR_LIMIT_NO_QUOTA, MAXQ = CGQ_QUOTA_MAX;

	combine(NQ, 100 * MS, MAXQ, 250000, MAXQ, 250000,
		"both max: theirs, with their period");
	combine(NQ, 100 * MS, 20000, 50000, 20000, 50000,
		"no quota of ours: theirs unchanged");
	combine(30 * MS, 100 * MS, MAXQ, 250000, 30000, 100000,
		"theirs max: ours, in our period");
	combine(30 * MS, 100 * MS, 20000, 100000, 20000, 100000,
		"theirs lower, same period: theirs");
	combine(30 * MS, 100 * MS, 50000, 100000, 30000, 100000,
		"ours lower, same period: ours");
	combine(30 * MS, 100 * MS, 100000, 1000000, 10000, 100000,
		"theirs lower (10 % vs 30 %), their 1 s period: scaled to ours");
	combine(30 * MS, 100 * MS, 500000, 1000000, 30000, 100000,
		"ours lower (30 % vs 50 %), their 1 s period: ours");
	combine(200 * MS, 100 * MS, 150000, 50000, 200000, 100000,
		"ours lower (2 vs 3 CPUs), their 50 ms period: ours");
	combine(300 * MS, 100 * MS, 100000, 50000, 200000, 100000,
		"theirs lower (2 vs 3 CPUs), their 50 ms period: scaled");
	combine(40 * MS, 50 * MS, 33333, 100000, 16666, 50000,
		"theirs scaled is rounded down");
	combine(30 * MS, 100 * MS, 1000, 1000000, 1000, 1000000,
		"theirs too small for our period: theirs unchanged");
	combine(500000, 100 * MS, MAXQ, 100000, 1000, 100000,
		"ours under 1000 us: raised to 1000 us");
	combine(1500999, 100 * MS, MAXQ, 100000, 1500, 100000,
		"ours rounded down to whole us");
	tap(cgq_combine(30 * MS, 100 * MS + 500, &theirs, &out) == -EINVAL &&
	    cgq_combine(30 * MS, 2000 * MS, &theirs, &out) == -EINVAL &&
	    cgq_combine(30 * MS, 0, &theirs, &out) == -EINVAL &&
	    out.quota_us == 7,
	    "combine refuses a period that is not whole us in 1 ms .. 1 s");
	theirs.period_us = 0;
	tap(cgq_combine(NQ, 100 * MS, &theirs, &out) == -EINVAL,
	    "combine refuses an original out of range");
}

/* A fake cgroup: base/name with cpu.max holding @max (NULL: none). */
static void mkcg(const char *name, const char *max, char *path, size_t len)
{
	char f[PATH_MAX];

	snprintf(path, len, "%s/%s", base, name);
	mkdir(path, 0755);
	if (max) {
		snprintf(f, sizeof(f), "%s/cpu.max", path);
		put(f, max);
	}
	snprintf(f, sizeof(f), "%s/cpu.stat", path);
	put(f, "usage_usec 0\n");
}

static void rmcg(const char *path)
{
	char f[PATH_MAX];

	snprintf(f, sizeof(f), "%s/cpu.max", path);
	unlink(f);
	snprintf(f, sizeof(f), "%s/cpu.stat", path);
	unlink(f);
	rmdir(path);
}

static const char *cgmax(const char *cg, char *buf, size_t len)
{
	char f[PATH_MAX];

	snprintf(f, sizeof(f), "%s/cpu.max", cg);
	return get(f, buf, len);
}

static void test_handle(void)
{
	char cg[PLEN], f[FLEN], buf[256];
	struct cgq h;
	struct cgq_stat st;
	uint64_t n = 0;
	int err;

	mkcg("nomax", NULL, cg, sizeof(cg));
	tap(cgq_open(&h, cg) == -ENODEV, "open: no cpu.max is -ENODEV");
	rmcg(cg);
	tap(cgq_open(&h, cg) == -ENOENT, "open: no directory is -ENOENT");
	mkcg("badmax", "lots\n", cg, sizeof(cg));
	tap(cgq_open(&h, cg) == -EINVAL, "open: unparseable cpu.max is -EINVAL");
	rmcg(cg);

	mkcg("h", "50000 100000\n", cg, sizeof(cg));
	err = cgq_open(&h, cg);
	tap(!err && h.orig.quota_us == 50000 && h.orig.period_us == 100000,
	    "open reads the original (%d)", err);
	tap(cgq_apply(&h, 30 * MS, 100 * MS) == -EPERM &&
	    !strcmp(cgmax(cg, buf, sizeof(buf)), "50000 100000\n"),
	    "apply before record: -EPERM, nothing written");
	h.recorded = true;	/* the records are tested below */
	tap(cgq_apply(&h, 80 * MS, 100 * MS) == 0 &&
	    !strcmp(cgmax(cg, buf, sizeof(buf)), "50000 100000\n"),
	    "apply above theirs: theirs is in force, nothing written");
	err = cgq_apply(&h, 30 * MS, 100 * MS);
	tap(err == 1 && !strcmp(cgmax(cg, buf, sizeof(buf)), "30000 100000\n"),
	    "apply under theirs writes ours (%d, \"%s\")", err, esc(buf));
	snprintf(f, sizeof(f), "%s/cpu.max", cg);
	put(f, "sentinel\n");
	tap(cgq_apply(&h, 30 * MS, 100 * MS) == 0 &&
	    !strcmp(cgmax(cg, buf, sizeof(buf)), "sentinel\n"),
	    "apply of the same value does not write");
	tap(cgq_apply(&h, VR_LIMIT_NO_QUOTA, 100 * MS) == 1 &&
	    !strcmp(cgmax(cg, buf, sizeof(buf)), "50000 100000\n"),
	    "apply of no quota writes theirs");
	cgq_apply(&h, 20 * MS, 100 * MS);
	tap(!cgq_restore(&h) &&
	    !strcmp(cgmax(cg, buf, sizeof(buf)), "50000 100000\n"),
	    "restore puts the original line back");

	snprintf(f, sizeof(f), "%s/cpu.stat", cg);
	put(f, "usage_usec 123456\nuser_usec 100000\nsystem_usec 23456\n"
	       "core_sched.force_idle_usec 0\nnr_periods 7\nnr_throttled 3\n"
	       "throttled_usec 4567\nnr_bursts 0\nburst_usec 0\n");
	err = cgq_stat(&h, &st);
	tap(!err && st.usage_usec == 123456 && st.nr_periods == 7 &&
	    st.nr_throttled == 3 && st.throttled_usec == 4567,
	    "stat reads the four keys, skips the others (%d)", err);
	put(f, "usage_usec 5\nnr_periods 8\n");
	err = cgq_stat(&h, &st);
	tap(!err && st.usage_usec == 5 && st.nr_periods == 8 &&
	    !st.nr_throttled && !st.throttled_usec,
	    "stat: read again from the open file, missing keys are 0");
	tap(!cgq_nr_periods(&h, &n) && n == 8, "nr_periods alone");
	put(f, "nr_periods lots\n");
	tap(cgq_stat(&h, &st) == -EINVAL, "stat: a bad value is -EINVAL");
	cgq_close(&h);
	rmcg(cg);
}

static struct {
	int calls, bad, gone, ok;
} seen;

static void report(void *arg, const char *vm_id, const char *cgroup, int err)
{
	(void)arg;
	seen.calls++;
	if (!err)
		seen.ok++;
	else if (err == -ENOENT)
		seen.gone++;
	else if (err == -EBADMSG && !cgroup)
		seen.bad++;
	diag("restore_all: %s (%s): %d", vm_id, cgroup ? cgroup : "?", err);
}

/*
 * A cgroup made for its VMM (cgq_make(), cgq_set_moved()): the move is
 * recorded, taken back by a restart, undone by the restore pass; a
 * malformed move line is a corrupt record.  cgq_unmake() against a fake
 * tree: the VMM written back into the nearest cgroup that is left (a
 * plain directory is no cgroup: its rmdir() fails, -ENOTEMPTY).
 */
static void test_moved_records(const char *run)
{
	char cg[PLEN], from[PLEN], rec[FLEN], f[FLEN], buf[PATH_MAX + 256];
	struct cgq h, h2;
	struct cgq_counts c;
	int err;

	snprintf(rec, sizeof(rec), "%s/vm5", run);
	snprintf(from, sizeof(from), "%s/shared", base);
	mkdir(from, 0755);
	snprintf(f, sizeof(f), "%s/cgroup.procs", from);
	put(f, "");
	mkcg("vm5", "max 100000\n", cg, sizeof(cg));
	snprintf(f, sizeof(f), "%s/cgroup.procs", cg);
	put(f, "4242\n");
	err = cgq_open(&h, cg);
	if (!err)
		err = cgq_set_moved(&h, 4242, from);
	if (!err)
		err = cgq_record(run, "vm5", &h);
	snprintf(f, sizeof(f), "\nmoved 4242 %s\n", from);
	tap(!err && strstr(get(rec, buf, sizeof(buf)), f),
	    "a made cgroup's record holds the move (%d)", err);
	cgq_close(&h);
	err = cgq_open(&h2, cg);
	if (!err)
		err = cgq_record(run, "vm5", &h2);
	tap(!err && h2.moved_pid == 4242 && !strcmp(h2.moved_from, from),
	    "restart: the move is taken from the record (%d)", err);
	cgq_close(&h2);
	snprintf(f, sizeof(f), "%s/sub/gone", from);
	tap(cgq_unmake(cg, 4242, f) == -ENOTEMPTY,
	    "unmake: back into the nearest cgroup left, rmdir tried");
	snprintf(f, sizeof(f), "%s/cgroup.procs", from);
	tap(!strcmp(get(f, buf, sizeof(buf)), "4242"),
	    "unmake: the VMM written to %s", f);
	put(f, "");
	snprintf(f, sizeof(f), "%s/cgroup.procs", cg);
	put(f, "17\n");
	tap(cgq_unmake(cg, 4242, from) == -ENOTEMPTY &&
	    !strcmp(get(f, buf, sizeof(buf)), "17\n"),
	    "unmake: a VMM that is no longer there is not moved");
	unlink(f);
	rmcg(cg);
	tap(cgq_unmake(cg, 4242, from) == -ENOENT, "unmake: gone is -ENOENT");

	/* The VM's cgroup went away with the VM: the record is removed. */
	memset(&seen, 0, sizeof(seen));
	err = cgq_restore_all(run, report, NULL, &c);
	tap(!err && c.gone == 1 && !c.failed && !exists(rec),
	    "restore_all: a made cgroup that is gone, removed (%d)", err);
	/* Malformed move lines: corrupt, left in place. */
	snprintf(buf, sizeof(buf),
		 "vmrapl-cgquota 1\ncgroup %s\nino 1\ncpu.max max 100000\ntime 1\nmoved 0 /x\n",
		 cg);
	put(rec, buf);
	snprintf(buf, sizeof(buf),
		 "vmrapl-cgquota 1\ncgroup %s\nino 1\ncpu.max max 100000\ntime 1\nmoved 12\n",
		 cg);
	snprintf(f, sizeof(f), "%s/vm6", run);
	put(f, buf);
	snprintf(buf, sizeof(buf),
		 "vmrapl-cgquota 1\ncgroup %s\nino 1\ncpu.max max 100000\ntime 1\nmoved 12 /x\nmore\n",
		 cg);
	snprintf(f, sizeof(f), "%s/vm7", run);
	put(f, buf);
	memset(&seen, 0, sizeof(seen));
	err = cgq_restore_all(run, report, NULL, &c);
	tap(!err && c.failed == 3 && !c.gone && !c.restored,
	    "restore_all: malformed move lines are corrupt (%d: %u %u %u)",
	    err, c.restored, c.gone, c.failed);
	unlink(rec);
	unlink(f);
	snprintf(f, sizeof(f), "%s/vm6", run);
	unlink(f);
	snprintf(f, sizeof(f), "%s/cgroup.procs", from);
	unlink(f);
	rmdir(from);
}

static void test_records(void)
{
	char run[PLEN], cg[PLEN], cg2[PLEN], rec[FLEN];
	char buf[PATH_MAX + 256], keep[PATH_MAX + 256], f[FLEN];
	struct cgq h, h2;
	struct cgq_counts c;
	struct stat st1, st2;
	int err;

	snprintf(run, sizeof(run), "%s/run", base);
	mkdir(run, 0700);
	snprintf(rec, sizeof(rec), "%s/vm1", run);

	tap(!cgq_restore_all(run, report, NULL, &c) && !c.restored &&
	    !c.gone && !c.failed, "restore_all: nothing recorded");
	tap(cgq_record(run, "", &h) == -EINVAL &&
	    cgq_record(run, ".x", &h) == -EINVAL &&
	    cgq_record(run, "a/b", &h) == -EINVAL, "record: bad VM ids");

	/* a daemon that dies throttled */
	mkcg("vm1", "max 100000\n", cg, sizeof(cg));
	err = cgq_open(&h, cg);
	if (!err)
		err = cgq_record(run, "vm1", &h);
	tap(!err && exists(rec) && !exists(strcat(strcpy(f, run), "/.vm1.tmp")),
	    "record writes the record, no temporary left (%d)", err);
	get(rec, keep, sizeof(keep));
	tap(strstr(keep, "\ncpu.max max 100000\n") && strstr(keep, cg),
	    "the record holds the cgroup and the original line");
	cgq_apply(&h, 30 * MS, 100 * MS);
	cgq_close(&h);		/* SIGKILL: no restore */
	tap(!strcmp(cgmax(cg, buf, sizeof(buf)), "30000 100000\n") &&
	    exists(rec), "crash: throttled, the record stays");

	/* the daemon restarts: the original comes from the record */
	err = cgq_open(&h2, cg);
	tap(!err && h2.orig.quota_us == 30000,
	    "restart: cpu.max holds the dead daemon's throttle");
	err = cgq_record(run, "vm1", &h2);
	tap(!err && h2.orig.quota_us == CGQ_QUOTA_MAX &&
	    h2.orig.period_us == 100000 && h2.recorded,
	    "restart: record takes the original from the record (%d)", err);
	tap(!strcmp(get(rec, buf, sizeof(buf)), keep),
	    "restart: the record is kept as it was");
	tap(cgq_apply(&h2, 30 * MS, 100 * MS) == 0,
	    "restart: the same quota is not written again");
	cgq_apply(&h2, 25 * MS, 100 * MS);
	cgq_close(&h2);		/* killed again */

	/* another cgroup under the same VM id is refused */
	mkcg("other", "max 100000\n", cg2, sizeof(cg2));
	cgq_open(&h2, cg2);
	h2.orig.period_us = 4242;
	tap(cgq_record(run, "vm1", &h2) == -EEXIST && !h2.recorded &&
	    h2.orig.period_us == 4242 &&
	    !strcmp(get(rec, buf, sizeof(buf)), keep),
	    "record of another cgroup under the same id: -EEXIST, untouched");
	cgq_close(&h2);

	/* the restore pass (ExecStopPost=) */
	memset(&seen, 0, sizeof(seen));
	err = cgq_restore_all(run, report, NULL, &c);
	tap(!err && c.restored == 1 && !c.gone && !c.failed && seen.ok == 1,
	    "restore_all: one restored (%d: %u %u %u)", err, c.restored,
	    c.gone, c.failed);
	tap(!strcmp(cgmax(cg, buf, sizeof(buf)), "max 100000\n") &&
	    !exists(rec), "restore_all: the original is back, record removed");

	/* forget after a clean restore */
	cgq_open(&h, cg);
	cgq_record(run, "vm1", &h);
	cgq_apply(&h, 30 * MS, 100 * MS);
	tap(!cgq_restore(&h) && !cgq_forget(run, "vm1") && !exists(rec) &&
	    !cgq_forget(run, "vm1"),
	    "restore, forget: no record left; forget again is 0");
	cgq_close(&h);

	/* a record of a cgroup made again (another inode) is replaced */
	cgq_open(&h, cg);
	snprintf(buf, sizeof(buf),
		 "vmrapl-cgquota 1\ncgroup %s\nino %" PRIu64
		 "\ncpu.max 7000 100000\ntime 1\n", cg, h.ino + 1);
	put(rec, buf);
	snprintf(f, sizeof(f), "%s/oldrec", base);
	tap(!link(rec, f), "a hard link keeps the old record's inode (%s)",
	    strerror(errno));
	stat(rec, &st1);
	err = cgq_record(run, "vm1", &h);
	stat(rec, &st2);
	tap(!err && h.orig.quota_us == CGQ_QUOTA_MAX &&
	    strstr(get(rec, keep, sizeof(keep)), "cpu.max max 100000\n"),
	    "a stale record (another inode) is replaced (%d)", err);
	tap(st1.st_ino != st2.st_ino &&
	    strstr(get(f, buf, sizeof(buf)), "cpu.max 7000 100000\n"),
	    "replaced by rename(), not written in place");
	unlink(f);
	cgq_apply(&h, 30 * MS, 100 * MS);
	cgq_close(&h);

	/* the VM exits while the daemon is dead: its cgroup goes away */
	rmcg(cg);
	/* a corrupt record, and one whose line the kernel would refuse */
	snprintf(f, sizeof(f), "%s/junk", run);
	put(f, "vmrapl-cgquota 1\ncgroup /x\n");
	mkcg("vm3", "max 100000\n", cg2, sizeof(cg2));
	cgq_open(&h, cg2);
	snprintf(buf, sizeof(buf),
		 "vmrapl-cgquota 1\ncgroup %s\nino %" PRIu64
		 "\ncpu.max 999 100000\ntime 1\n", cg2, h.ino);
	cgq_close(&h);
	snprintf(f, sizeof(f), "%s/vm3", run);
	put(f, buf);
	snprintf(f, sizeof(f), "%s/.vm4.tmp", run);
	put(f, "half a record");

	memset(&seen, 0, sizeof(seen));
	err = cgq_restore_all(run, report, NULL, &c);
	tap(!err && !c.restored && c.gone == 1 && c.failed == 2 &&
	    seen.gone == 1 && seen.bad == 2,
	    "restore_all: one gone, two corrupt reported (%d: %u %u %u)", err,
	    c.restored, c.gone, c.failed);
	snprintf(f, sizeof(f), "%s/junk", run);
	tap(!exists(rec) && exists(f), "gone removed, corrupt left in place");
	snprintf(f, sizeof(f), "%s/vm3", run);
	tap(exists(f) && !strcmp(cgmax(cg2, buf, sizeof(buf)), "max 100000\n"),
	    "a refused line in a record is never written to the cgroup");
	snprintf(f, sizeof(f), "%s/.vm4.tmp", run);
	tap(!exists(f), "a leftover temporary is removed");
	cgq_open(&h, cg2);
	tap(cgq_record(run, "vm3", &h) == -EBADMSG && !h.recorded,
	    "record over a corrupt record: -EBADMSG");
	cgq_close(&h);
	snprintf(f, sizeof(f), "%s/vm3", run);
	unlink(f);
	snprintf(f, sizeof(f), "%s/junk", run);
	unlink(f);
	rmcg(cg2);
	test_moved_records(run);
	snprintf(f, sizeof(f), "%s/other", base);
	rmcg(f);
	rmdir(run);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(base, sizeof(base), "%s/test_cgquota.XXXXXX",
		 tmp && strlen(tmp) < 32 ? tmp : "/tmp");
	if (!mkdtemp(base)) {
		perror("mkdtemp");
		return 1;
	}
	printf("TAP version 13\n");
	test_parse_format();
	test_combine();
	test_handle();
	test_records();
	if (rmdir(base))
		diag("%s left behind", base);
	return tap_done();
}
