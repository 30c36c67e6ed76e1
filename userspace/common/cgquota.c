// SPDX-License-Identifier: MIT
/* A VM's cgroup v2 cpu.max under the power-limit controller: see cgquota.h. */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgquota.h"

#define NSEC_PER_USEC	1000ULL
/* The kernel's "%20s" (char tok[21]). */
#define TOKEN_MAX	20
/* The first line of a record. */
#define REC_MAGIC	"vmrapl-cgquota 1\n"
/* A record: the magic, the path, three short lines, the move's line. */
#define REC_MAX		(2 * PATH_MAX + 256)
#define STAT_MAX	4096

static bool blank(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static bool digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Leading decimal digits of [*sp, end): the kernel's "%llu" but refusing
 * what does not fit 64 bits.  -EINVAL when there is no digit. */
static int scan_u64(const char **sp, const char *end, uint64_t *v)
{
	const char *s = *sp;
	uint64_t n = 0;

	if (s == end || !digit(*s))
		return -EINVAL;
	for (; s != end && digit(*s); s++) {
		unsigned int d = (unsigned int)(*s - '0');

		if (n > (UINT64_MAX - d) / 10)
			return -EINVAL;
		n = n * 10 + d;
	}
	*sp = s;
	*v = n;
	return 0;
}

static bool max_ok(const struct cgq_max *m)
{
	if (m->period_us < CGQ_MIN_PERIOD_US || m->period_us > CGQ_MAX_PERIOD_US)
		return false;
	return m->quota_us == CGQ_QUOTA_MAX ||
	       (m->quota_us >= CGQ_MIN_QUOTA_US &&
		m->quota_us <= CGQ_MAX_QUOTA_US);
}

int cgq_max_parse(const char *s, struct cgq_max *m)
{
	struct cgq_max v = *m;
	const char *tok, *tend, *p;

	while (blank(*s))
		s++;
	tok = s;
	while (*s && !blank(*s) && s - tok < TOKEN_MAX)
		s++;
	tend = s;
	if (tend == tok)
		return -EINVAL;
	p = tok;
	if (digit(*tok)) {
		if (scan_u64(&p, tend, &v.quota_us))
			return -EINVAL;
	} else if (tend - tok == 3 && !memcmp(tok, "max", 3)) {
		v.quota_us = CGQ_QUOTA_MAX;
	} else {
		return -EINVAL;
	}
	/* " %llu": the period, if the rest starts (after blanks) with one */
	while (blank(*s))
		s++;
	if (digit(*s) && scan_u64(&s, s + strlen(s), &v.period_us))
		return -EINVAL;
	if (!max_ok(&v))
		return -EINVAL;
	*m = v;
	return 0;
}

int cgq_max_format(const struct cgq_max *m, char *buf, size_t len)
{
	int n;

	if (!max_ok(m))
		return -EINVAL;
	if (m->quota_us == CGQ_QUOTA_MAX)
		n = snprintf(buf, len, "max %" PRIu64 "\n", m->period_us);
	else
		n = snprintf(buf, len, "%" PRIu64 " %" PRIu64 "\n",
			     m->quota_us, m->period_us);
	if (n < 0)
		return -EINVAL;
	if ((size_t)n >= len)
		return -ENOSPC;
	return n;
}

int cgq_combine(uint64_t ours_ns, uint64_t period_ns,
		const struct cgq_max *theirs, struct cgq_max *out)
{
	struct cgq_max v;
	uint64_t scaled;

	if (!max_ok(theirs))
		return -EINVAL;
	if (ours_ns == VR_LIMIT_NO_QUOTA) {
		*out = *theirs;
		return 0;
	}
	if (period_ns % NSEC_PER_USEC)
		return -EINVAL;
	v.period_us = period_ns / NSEC_PER_USEC;
	v.quota_us = ours_ns / NSEC_PER_USEC;
	if (v.quota_us < CGQ_MIN_QUOTA_US)
		v.quota_us = CGQ_MIN_QUOTA_US;
	if (!max_ok(&v))
		return -EINVAL;
	if (theirs->quota_us != CGQ_QUOTA_MAX) {
		/* < 2^44 x 2^20: no overflow */
		scaled = theirs->quota_us * v.period_us / theirs->period_us;
		if (scaled < CGQ_MIN_QUOTA_US) {
			*out = *theirs;
			return 0;
		}
		if (scaled < v.quota_us)
			v.quota_us = scaled;
	}
	*out = v;
	return 0;
}

/* The whole of a small file at @dirfd/@name (or @fd when @name is NULL,
 * by pread() from 0), NUL-terminated; -EFBIG when it fills @buf. */
static int read_all(int dirfd, const char *name, int fd, char *buf,
		    size_t len)
{
	size_t got = 0;
	int err = 0;
	bool own = name != NULL;

	if (own) {
		fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
	}
	for (;;) {
		ssize_t n = pread(fd, buf + got, len - 1 - got, (off_t)got);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (!n)
			break;
		got += (size_t)n;
		if (got == len - 1) {
			err = -EFBIG;
			break;
		}
	}
	if (own)
		close(fd);
	buf[got] = '\0';
	return err;
}

/* One write of @m's line to @dirfd's cpu.max (O_TRUNC, for a plain file). */
static int write_max(int dirfd, const struct cgq_max *m)
{
	char line[CGQ_LINE_MAX];
	int len = cgq_max_format(m, line, sizeof(line));
	ssize_t n;
	int fd, err = 0;

	if (len < 0)
		return len;
	fd = openat(dirfd, "cpu.max", O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	do {
		n = write(fd, line, (size_t)len);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		err = -errno;
	else if (n != len)
		err = -EIO;
	if (close(fd) && !err)
		err = -errno;
	return err;
}

int cgq_open(struct cgq *h, const char *path)
{
	char line[CGQ_LINE_MAX * 2];
	struct cgq_max m = { CGQ_QUOTA_MAX, CGQ_DEFAULT_PERIOD_US };
	struct stat st;
	size_t len = strlen(path);
	int dirfd, statfd, err;

	if (len >= sizeof(h->path))
		return -ENAMETOOLONG;
	if (!len || strchr(path, '\n'))
		return -EINVAL;
	dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return -errno;
	if (fstat(dirfd, &st)) {
		err = -errno;
		goto out_dir;
	}
	err = read_all(dirfd, "cpu.max", -1, line, sizeof(line));
	if (err == -ENOENT)
		err = -ENODEV;
	if (err)
		goto out_dir;
	if (cgq_max_parse(line, &m)) {
		err = -EINVAL;
		goto out_dir;
	}
	statfd = openat(dirfd, "cpu.stat", O_RDONLY | O_CLOEXEC);
	if (statfd < 0) {
		err = errno == ENOENT ? -ENODEV : -errno;
		goto out_dir;
	}
	h->dirfd = dirfd;
	h->statfd = statfd;
	h->ino = (uint64_t)st.st_ino;
	h->orig = m;
	h->cur = m;
	h->recorded = false;
	h->moved_pid = 0;
	h->moved_from[0] = '\0';
	memcpy(h->path, path, len + 1);
	return 0;

out_dir:
	close(dirfd);
	return err;
}

void cgq_close(struct cgq *h)
{
	if (h->statfd >= 0)
		close(h->statfd);
	if (h->dirfd >= 0)
		close(h->dirfd);
	h->statfd = h->dirfd = -1;
	h->recorded = false;
}

int cgq_apply(struct cgq *h, uint64_t ours_ns, uint64_t period_ns)
{
	struct cgq_max v;
	int err;

	if (!h->recorded)
		return -EPERM;
	err = cgq_combine(ours_ns, period_ns, &h->orig, &v);
	if (err)
		return err;
	if (v.quota_us == h->cur.quota_us && v.period_us == h->cur.period_us)
		return 0;
	err = write_max(h->dirfd, &v);
	if (err)
		return err;
	h->cur = v;
	return 1;
}

int cgq_restore(struct cgq *h)
{
	int err = write_max(h->dirfd, &h->orig);

	if (!err)
		h->cur = h->orig;
	return err;
}

int cgq_stat(struct cgq *h, struct cgq_stat *st)
{
	static const char *const keys[] = {
		"usage_usec", "nr_periods", "nr_throttled", "throttled_usec",
	};
	char buf[STAT_MAX];
	uint64_t val[4] = { 0, 0, 0, 0 };
	const char *s = buf;
	int err = read_all(-1, NULL, h->statfd, buf, sizeof(buf));

	if (err)
		return err;
	while (*s) {
		const char *eol = strchr(s, '\n'), *sp;
		size_t i;

		if (!eol)
			eol = s + strlen(s);
		sp = memchr(s, ' ', (size_t)(eol - s));
		for (i = 0; sp && i < 4; i++) {
			const char *p = sp + 1;

			if (strlen(keys[i]) != (size_t)(sp - s) ||
			    memcmp(s, keys[i], (size_t)(sp - s)))
				continue;
			if (scan_u64(&p, eol, &val[i]) || p != eol)
				return -EINVAL;
			break;
		}
		s = *eol ? eol + 1 : eol;
	}
	st->usage_usec = val[0];
	st->nr_periods = val[1];
	st->nr_throttled = val[2];
	st->throttled_usec = val[3];
	return 0;
}

int cgq_nr_periods(struct cgq *h, uint64_t *n)
{
	struct cgq_stat st;
	int err = cgq_stat(h, &st);

	if (!err)
		*n = st.nr_periods;
	return err;
}

/* --- records --- */

struct record {
	char path[PATH_MAX];
	uint64_t ino;
	struct cgq_max orig;
	int64_t time;
	pid_t moved_pid;
	char moved_from[PATH_MAX];
};

static bool id_ok(const char *id)
{
	size_t len = strlen(id);

	return len && len <= CGQ_ID_MAX && id[0] != '.' && !strchr(id, '/');
}

/* The line of @s that starts with @key and a blank: its value and end. */
static const char *rec_field(const char *s, const char *key,
			     const char **end)
{
	size_t klen = strlen(key);

	if (strncmp(s, key, klen) || s[klen] != ' ')
		return NULL;
	*end = strchr(s + klen + 1, '\n');
	return *end ? s + klen + 1 : NULL;
}

/*
 * A record's text: REC_MAGIC, then "cgroup PATH", "ino N", "cpu.max LINE"
 * (as cpu_max_show() shows it, formatted back identically), "time N", and
 * for a cgroup made for its VMM (cgq_make()) "moved PID FROM", in that
 * order, each line ending in a newline, nothing after.
 */
static int rec_parse(const char *s, struct record *r)
{
	char line[CGQ_LINE_MAX];
	const char *v, *e;
	uint64_t t;
	size_t n;

	if (strncmp(s, REC_MAGIC, strlen(REC_MAGIC)))
		return -EBADMSG;
	s += strlen(REC_MAGIC);
	v = rec_field(s, "cgroup", &e);
	n = v ? (size_t)(e - v) : 0;
	if (!n || n >= sizeof(r->path))
		return -EBADMSG;
	memcpy(r->path, v, n);
	r->path[n] = '\0';
	s = e + 1;
	v = rec_field(s, "ino", &e);
	if (!v || scan_u64(&v, e, &r->ino) || v != e)
		return -EBADMSG;
	s = e + 1;
	v = rec_field(s, "cpu.max", &e);
	n = v ? (size_t)(e - v) + 1 : 0;
	if (!n || n >= sizeof(line))
		return -EBADMSG;
	memcpy(line, v, n);
	line[n] = '\0';
	/* the period must be there: no default may stand in for it */
	r->orig.period_us = 0;
	if (cgq_max_parse(line, &r->orig))
		return -EBADMSG;
	{
		char again[CGQ_LINE_MAX];

		if (cgq_max_format(&r->orig, again, sizeof(again)) < 0 ||
		    strcmp(again, line))
			return -EBADMSG;
	}
	s = e + 1;
	v = rec_field(s, "time", &e);
	if (!v || scan_u64(&v, e, &t) || v != e)
		return -EBADMSG;
	r->time = (int64_t)t;
	r->moved_pid = 0;
	r->moved_from[0] = '\0';
	s = e + 1;
	if (!*s)
		return 0;
	v = rec_field(s, "moved", &e);
	if (!v || scan_u64(&v, e, &t) || !t || t > INT_MAX || *v != ' ' ||
	    e[1])
		return -EBADMSG;
	v++;
	n = (size_t)(e - v);
	if (!n || n >= sizeof(r->moved_from))
		return -EBADMSG;
	r->moved_pid = (pid_t)t;
	memcpy(r->moved_from, v, n);
	r->moved_from[n] = '\0';
	return 0;
}

/* Reads @rundir's record @id: -ENOENT when there is none. */
static int rec_read(int rfd, const char *id, struct record *r)
{
	char buf[REC_MAX];
	int err = read_all(rfd, id, -1, buf, sizeof(buf));

	if (err == -EFBIG)
		return -EBADMSG;
	if (err)
		return err;
	return rec_parse(buf, r);
}

static int write_full(int fd, const char *s, size_t len)
{
	while (len) {
		ssize_t n = write(fd, s, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		s += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Writes @h's record as @rfd/@id: temporary, fsync(), rename(), fsync(). */
static int rec_write(int rfd, const char *id, const struct cgq *h)
{
	char tmp[CGQ_ID_MAX + 8], line[CGQ_LINE_MAX];
	char buf[REC_MAX];
	int fd, n, err;
	time_t now = time(NULL);

	if (cgq_max_format(&h->orig, line, sizeof(line)) < 0)
		return -EINVAL;
	n = snprintf(buf, sizeof(buf),
		     REC_MAGIC "cgroup %s\nino %" PRIu64 "\ncpu.max %stime %"
		     PRIu64 "\n", h->path, h->ino, line,
		     (uint64_t)(now < 0 ? 0 : now));
	if (n >= 0 && (size_t)n < sizeof(buf) && h->moved_pid)
		n += snprintf(buf + n, sizeof(buf) - (size_t)n, "moved %d %s\n",
			      (int)h->moved_pid, h->moved_from);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return -ENAMETOOLONG;
	snprintf(tmp, sizeof(tmp), ".%s.tmp", id);
	fd = openat(rfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	err = write_full(fd, buf, (size_t)n);
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && renameat(rfd, tmp, rfd, id))
		err = -errno;
	if (err) {
		unlinkat(rfd, tmp, 0);
		return err;
	}
	return fsync(rfd) ? -errno : 0;
}

int cgq_record(const char *rundir, const char *vm_id, struct cgq *h)
{
	struct record r;
	int rfd, err;

	if (!id_ok(vm_id))
		return -EINVAL;
	rfd = open(rundir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0)
		return -errno;
	err = rec_read(rfd, vm_id, &r);
	if (!err) {
		if (strcmp(r.path, h->path)) {
			err = -EEXIST;
		} else if (r.ino == h->ino) {
			/* a restart: cpu.max may hold our own throttle */
			h->orig = r.orig;
			h->moved_pid = r.moved_pid;
			memcpy(h->moved_from, r.moved_from,
			       sizeof(h->moved_from));
			h->recorded = true;
		} else {
			/* the cgroup was made again: the record is stale */
			err = rec_write(rfd, vm_id, h);
		}
	} else if (err == -ENOENT) {
		err = rec_write(rfd, vm_id, h);
	}
	if (!err)
		h->recorded = true;
	close(rfd);
	return err;
}

static int rec_remove(int rfd, const char *id)
{
	if (unlinkat(rfd, id, 0) && errno != ENOENT)
		return -errno;
	return fsync(rfd) ? -errno : 0;
}

int cgq_forget(const char *rundir, const char *vm_id)
{
	int rfd, err;

	if (!id_ok(vm_id))
		return -EINVAL;
	rfd = open(rundir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0)
		return -errno;
	err = rec_remove(rfd, vm_id);
	close(rfd);
	return err;
}

/* Puts one record back: 0 restored, -ENOENT gone, else -errno (kept). */
static int restore_one(int rfd, const char *id, const struct record *r)
{
	struct stat st;
	int dfd, err;

	dfd = open(r->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		err = errno == ENOENT || errno == ENOTDIR ? -ENOENT : -errno;
	} else if (fstat(dfd, &st)) {
		err = -errno;
	} else if ((uint64_t)st.st_ino != r->ino) {
		err = -ENOENT;
	} else {
		err = write_max(dfd, &r->orig);
		/*
		 * No cpu.max: the cpu controller was disabled, nothing
		 * throttles.  -ENODEV: the cgroup was removed meanwhile.
		 */
		if (err == -ENODEV)
			err = -ENOENT;
	}
	if (dfd >= 0)
		close(dfd);
	if (err && err != -ENOENT)
		return err;
	/* A cgroup made for its VMM: the VMM back, the cgroup removed. */
	if (r->moved_pid) {
		int uerr = cgq_unmake(r->path, r->moved_pid, r->moved_from);

		if (uerr && uerr != -ENOENT)
			return uerr;
	}
	return rec_remove(rfd, id) ? -EIO : err;
}

int cgq_restore_all(const char *rundir,
		    void (*report)(void *arg, const char *vm_id,
				   const char *cgroup, int err),
		    void *arg, struct cgq_counts *counts)
{
	struct dirent *de;
	DIR *d;
	int rfd;

	counts->restored = counts->gone = counts->failed = 0;
	rfd = open(rundir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0)
		return errno == ENOENT ? 0 : -errno;
	d = fdopendir(rfd);
	if (!d) {
		int err = -errno;

		close(rfd);
		return err;
	}
	while ((de = readdir(d))) {
		struct record r;
		bool parsed;
		int err;

		if (de->d_name[0] == '.') {
			size_t n = strlen(de->d_name);

			if (n > 5 && !strcmp(de->d_name + n - 4, ".tmp"))
				unlinkat(rfd, de->d_name, 0);
			continue;
		}
		err = rec_read(rfd, de->d_name, &r);
		if (err == -ENOENT)
			continue;	/* removed since readdir() */
		parsed = !err;
		if (parsed)
			err = restore_one(rfd, de->d_name, &r);
		if (!err)
			counts->restored++;
		else if (err == -ENOENT)
			counts->gone++;
		else
			counts->failed++;
		if (report)
			report(arg, de->d_name, parsed ? r.path : NULL, err);
	}
	closedir(d);
	return 0;
}

int cgq_vm_cgroup(const char *proc, const char *cgroot, pid_t pid,
		  char *rel, size_t len, char *why, size_t wlen)
{
	char path[PATH_MAX], line[PATH_MAX + 8], *p, *scope, *end;
	char procs[PATH_MAX + 64];
	bool found = false;
	long other = 0, self = 0;
	FILE *f;
	int err;

	snprintf(path, sizeof(path), "%s/%d/cgroup", proc, (int)pid);
	f = fopen(path, "r");
	if (!f) {
		err = -errno;
		snprintf(why, wlen, "cannot read %s: %s", path, strerror(-err));
		return err;
	}
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "0::", 3)) {
			found = true;
			break;
		}
	}
	fclose(f);
	if (!found) {
		snprintf(why, wlen, "%s has no cgroup v2 line (0::): a host without the unified hierarchy",
			 path);
		return -ENODEV;
	}
	p = line + 3;
	p[strcspn(p, "\n")] = 0;
	/* The machine scope (systemd-machined, libvirt): the whole VM. */
	for (scope = strstr(p, "/machine-"); scope;
	     scope = strstr(scope + 1, "/machine-")) {
		end = strchr(scope + 1, '/');
		if (!end)
			end = scope + strlen(scope);
		if (end - scope > 6 && !strncmp(end - 6, ".scope", 6)) {
			*end = 0;
			break;
		}
	}
	if ((size_t)snprintf(rel, len, "%s", p) >= len) {
		snprintf(why, wlen, "cgroup path too long");
		return -ENAMETOOLONG;
	}
	if (scope)
		return 0;
	if (!strcmp(p, "/")) {
		snprintf(why, wlen, "its VMM (pid %d) is in the root cgroup, which has no cpu.max",
			 (int)pid);
		return -EBUSY;
	}
	/* No scope: the VMM's own cgroup, if nothing else runs in it. */
	snprintf(procs, sizeof(procs), "%s%s/cgroup.procs", cgroot, rel);
	f = fopen(procs, "r");
	if (!f) {
		err = -errno;
		snprintf(why, wlen, "cannot read %s: %s", procs,
			 strerror(-err));
		return err;
	}
	while (fgets(line, sizeof(line), f)) {
		if (atol(line) == (long)pid)
			self++;
		else if (line[0] >= '0' && line[0] <= '9')
			other++;
	}
	fclose(f);
	if (other || !self) {
		snprintf(why, wlen, "cgroup %s holds other processes than its VMM (pid %d), which a quota would throttle too: start the VMM in a cgroup of its own (systemd-run --scope, libvirt)",
			 rel, (int)pid);
		return -EBUSY;
	}
	return 0;
}

/* @s, and a newline, into @path: one write; 0 or -errno. */
static int write_line(const char *path, const char *s)
{
	size_t len = strlen(s);
	ssize_t n;
	int fd, err = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	do {
		n = write(fd, s, len);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		err = -errno;
	else if ((size_t)n != len)
		err = -EIO;
	if (close(fd) && !err)
		err = -errno;
	return err;
}

/* Is "cpu" one of @dir's cgroup.subtree_control's words? */
static bool cpu_enabled(const char *dir)
{
	char path[PATH_MAX + 32], buf[512], *w, *save = NULL;

	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", dir);
	if (read_all(AT_FDCWD, path, -1, buf, sizeof(buf)))
		return false;
	for (w = strtok_r(buf, " \n", &save); w; w = strtok_r(NULL, " \n", &save))
		if (!strcmp(w, "cpu"))
			return true;
	return false;
}

/* The cpu controller for @dir's children: 0 or -errno. */
static int enable_cpu(const char *dir)
{
	char path[PATH_MAX + 32];

	if (cpu_enabled(dir))
		return 0;
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", dir);
	return write_line(path, "+cpu");
}

/* Is @pid listed in @dir's cgroup.procs?  -ENOENT when @dir is gone. */
static int procs_has(const char *dir, pid_t pid)
{
	char path[PATH_MAX + 32], line[32];
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ENOENT : -errno;
	while (fgets(line, sizeof(line), f))
		if (atol(line) == (long)pid)
			found = 1;
	fclose(f);
	return found;
}

int cgq_make(const char *cgroot, const char *vm_id, pid_t pid, char *path,
	     size_t len)
{
	char slice[PATH_MAX], procs[PATH_MAX + 32], num[24];
	int err;

	if (!id_ok(vm_id) || pid <= 0)
		return -EINVAL;
	if ((size_t)snprintf(slice, sizeof(slice), "%s/" CGQ_SLICE, cgroot) >=
	    sizeof(slice) ||
	    (size_t)snprintf(path, len, "%s/vm-%s", slice, vm_id) >= len)
		return -ENAMETOOLONG;
	err = enable_cpu(cgroot);
	if (err)
		return err;
	if (mkdir(slice, 0755) && errno != EEXIST)
		return -errno;
	err = enable_cpu(slice);
	if (err)
		return err;
	if (mkdir(path, 0755))
		return -errno;
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", path);
	snprintf(num, sizeof(num), "%d", (int)pid);
	err = write_line(procs, num);
	if (err)
		rmdir(path);
	return err;
}

int cgq_set_moved(struct cgq *h, pid_t pid, const char *from)
{
	size_t n = strlen(from);

	if (n >= sizeof(h->moved_from) || !n || strchr(from, '\n'))
		return n ? -ENAMETOOLONG : -EINVAL;
	h->moved_pid = pid;
	memcpy(h->moved_from, from, n + 1);
	return 0;
}

int cgq_unmake(const char *path, pid_t pid, const char *from)
{
	char to[PATH_MAX], procs[PATH_MAX + 32], num[24], *slash;
	int in, err;

	in = procs_has(path, pid);
	if (in < 0)
		return in;
	if (in) {
		/* Back where it came from, or the nearest that is left. */
		snprintf(to, sizeof(to), "%s", from);
		for (;;) {
			snprintf(procs, sizeof(procs), "%s/cgroup.procs", to);
			if (!access(procs, W_OK))
				break;
			slash = strrchr(to, '/');
			if (!slash || slash == to)
				return -ENOENT;
			*slash = '\0';
		}
		snprintf(num, sizeof(num), "%d", (int)pid);
		err = write_line(procs, num);
		/* ESRCH: it exited meanwhile, and the cgroup empties. */
		if (err && err != -ESRCH)
			return err;
	}
	if (rmdir(path))
		return errno == ENOENT ? -ENOENT : -errno;
	return 0;
}
