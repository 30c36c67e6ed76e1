// SPDX-License-Identifier: GPL-2.0
/*
 * A bounded random ioctl fuzzer.  For FUZZ_SECS, two threads send random
 * commands (the vmrapl ones with random and with almost-valid payloads,
 * vmrapl numbers with random direction and size bits, and arbitrary
 * numbers) with random pointers (valid, unmapped, read-only, kernel,
 * non-canonical) to /dev/vmrapl, attached VM fds, a VM fd being detached
 * and re-attached under them, a closed fd, /dev/null and a KVM VM fd,
 * and map the VM fds with random lengths, offsets and protections.
 *
 * The seed is printed; VR_FUZZ_SEED=0x... replays a thread's sequence of
 * calls (the interleaving of the threads is up to the scheduler).
 *
 * Asserted: unknown commands on vmrapl fds fail with ENOTTY, valid ones
 * only with their documented errors; no writable mapping of a VM page;
 * the attached VMs' counters keep working and never go back or jump; the
 * books conserve; and a third thread reads every VM's and package's books
 * (LIST_VMS, GET_VM_STATS, GET_PKG_STATS) all the while, where no part may
 * exceed its whole in any answer (vr_whole.h).  The rig fails the run on
 * any kernel warning.
 *
 * The module runs its default source, so VMRAPL_TEST_INJECT must fail
 * with ENOTTY; it is never sent with VMRAPL_INJECT_F_SET.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vr_kvm.h"
#include "vr_whole.h"

#define FUZZ_SECS	15
#define NR_THREADS	2
#define NR_STABLE	3
#define ARENA		(64 * 1024)
#define PG		4096

static uint64_t rnd(uint64_t *s)
{
	/* xorshift64* */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

static uint64_t pick(uint64_t *s, uint64_t n)
{
	return n ? rnd(s) % n : 0;
}

enum fd_kind { K_DEV, K_VM, K_CHURN, K_CLOSED, K_NULL, K_KVM, K_EXTRA };

struct shared {
	int dev;
	int vm[NR_STABLE];
	int stable_kvm[NR_STABLE];
	volatile int churn;		/* current churn VM fd, or -1 */
	int churn_kvm;
	int closed;
	int null;
	int kvm;			/* a KVM VM fd, never attached by us */
	int kvm_sys;			/* /dev/kvm */
	volatile int stop;
	pid_t tids[NR_THREADS + 1];
};

struct fuzzer {
	pthread_t th;
	struct shared *sh;
	uint64_t seed;
	uint64_t s;
	int idx;
	char *arena;		/* ARENA bytes RW, then a PROT_NONE page */
	char *ro;		/* 4 pages, read-only, random contents */
	char *none;		/* 4 pages, PROT_NONE */
	int extra[4];		/* VM fds our own ATTACH calls returned */
	uint64_t calls, ok, attached, maps;
	/* The call in progress, for the crash report. */
	volatile unsigned int last_cmd;
	volatile int last_fd;
	void *volatile last_arg;
	uint64_t err[160];
	int bad;
	char first_bad[4][200];
};

static const unsigned int vr_cmds[] = {
	VMRAPL_GET_INFO, VMRAPL_ATTACH_VM, VMRAPL_VM_SET_TOPOLOGY,
	VMRAPL_VM_ADD_TASK, VMRAPL_VM_READ_MSR, VMRAPL_VM_GET_STATS,
	VMRAPL_VM_SET_POLICY, VMRAPL_VM_GET_STATE, VMRAPL_VM_SET_STATE,
	VMRAPL_TEST_INJECT, VMRAPL_GET_PKG_STATS, VMRAPL_GET_PKG_STATS_V1,
	VMRAPL_LIST_VMS, VMRAPL_GET_VM_STATS, VMRAPL_SET_VM_LIMIT,
	VMRAPL_GET_VM_LIMIT, VMRAPL_VM_WRITE_MSR,
};

static bool is_dev_cmd(unsigned int cmd)
{
	return cmd == VMRAPL_GET_INFO || cmd == VMRAPL_ATTACH_VM ||
	       cmd == VMRAPL_TEST_INJECT || cmd == VMRAPL_GET_PKG_STATS ||
	       cmd == VMRAPL_GET_PKG_STATS_V1 || cmd == VMRAPL_LIST_VMS ||
	       cmd == VMRAPL_GET_VM_STATS || cmd == VMRAPL_SET_VM_LIMIT ||
	       cmd == VMRAPL_GET_VM_LIMIT;
}

static bool is_vm_cmd(unsigned int cmd)
{
	return cmd == VMRAPL_VM_SET_TOPOLOGY || cmd == VMRAPL_VM_ADD_TASK ||
	       cmd == VMRAPL_VM_READ_MSR || cmd == VMRAPL_VM_GET_STATS ||
	       cmd == VMRAPL_VM_SET_POLICY || cmd == VMRAPL_VM_GET_STATE ||
	       cmd == VMRAPL_VM_SET_STATE || cmd == VMRAPL_VM_WRITE_MSR;
}

/*
 * Command types the VFS answers itself for any file (FIOCLEX, FIONBIO,
 * FIFREEZE, FIGETBSZ, FS_IOC_*, FICLONE, ...): not the driver's, and some
 * would freeze or change the filesystem holding the node.
 */
static bool vfs_type(unsigned int cmd)
{
	switch (_IOC_TYPE(cmd)) {
	case 0x00: case 0x15: case 'T': case 'X': case 'f': case 0x94:
		return true;
	}
	return false;
}

static void note_bad(struct fuzzer *f, const char *fmt, unsigned int cmd,
		     int fd, long ret, int err)
{
	if (f->bad < 4)
		snprintf(f->first_bad[f->bad], sizeof(f->first_bad[0]),
			 "%s: cmd %#x fd %d ret %ld errno %d (%s)", fmt, cmd,
			 fd, ret, err, strerror(err));
	f->bad++;
}

/* A pointer the kernel may be handed: mostly into our arena. */
static void *pick_ptr(struct fuzzer *f, size_t want)
{
	uint64_t r = pick(&f->s, 100);

	if (r < 55)
		return f->arena + pick(&f->s, ARENA - (want < ARENA ? want : 0));
	if (r < 65)	/* straddles into the guard page */
		return f->arena + ARENA - 1 - pick(&f->s, want ? want : 1);
	if (r < 75)
		return f->ro + pick(&f->s, 4 * PG);
	if (r < 85)
		return f->none + pick(&f->s, 4 * PG);
	switch (r % 5) {
	case 0: return NULL;
	case 1: return (void *)(uintptr_t)pick(&f->s, 4096);
	case 2: return (void *)0xffffffff81000000ULL;
	case 3: return (void *)0xffff888000000000ULL;
	default: return (void *)0x8000000000000000ULL;
	}
}

static uint64_t pick_u64ptr(struct fuzzer *f, size_t want)
{
	return (uintptr_t)pick_ptr(f, want);
}

static int pick_fd(struct fuzzer *f, int *kind)
{
	struct shared *sh = f->sh;
	uint64_t r = pick(&f->s, 100);

	if (r < 25) {
		*kind = K_DEV;
		return sh->dev;
	}
	if (r < 55) {
		*kind = K_VM;
		return sh->vm[pick(&f->s, NR_STABLE)];
	}
	if (r < 70) {
		*kind = K_CHURN;
		return sh->churn;
	}
	if (r < 78) {
		int i = pick(&f->s, 4);

		*kind = K_EXTRA;
		if (f->extra[i] >= 0)
			return f->extra[i];
	}
	switch (r % 4) {
	case 0: *kind = K_CLOSED; return sh->closed;
	case 1: *kind = K_NULL; return sh->null;
	case 2: *kind = K_KVM; return sh->kvm;
	default: *kind = K_CLOSED; return (int)pick(&f->s, 64);
	}
}

static unsigned int pick_cmd(struct fuzzer *f, bool vmrapl_type)
{
	unsigned int cmd;
	uint64_t r = pick(&f->s, 100);

	if (r < 55)
		return vr_cmds[pick(&f->s, sizeof(vr_cmds) / sizeof(vr_cmds[0]))];
	if (r < 85 || vmrapl_type) {
		unsigned int nr = r & 1 ? pick(&f->s, 0x20) :
			(r & 2 ? 0x7f : pick(&f->s, 256));

		return _IOC(pick(&f->s, 4), VMRAPL_IO, nr,
			    pick(&f->s, 100) < 70 ? pick(&f->s, 256) :
			    pick(&f->s, _IOC_SIZEMASK + 1));
	}
	do {
		cmd = (unsigned int)rnd(&f->s);
	} while (vfs_type(cmd));
	return cmd;
}

static int pick_kvm_fd(struct fuzzer *f)
{
	struct shared *sh = f->sh;

	switch (pick(&f->s, 8)) {
	case 0: return sh->kvm;
	case 1: return sh->churn_kvm;
	case 2: return sh->stable_kvm[pick(&f->s, NR_STABLE)];
	case 3: return sh->kvm_sys;
	case 4: return sh->vm[0];
	case 5: return sh->dev;
	case 6: return -1;
	default: return (int)pick(&f->s, 64);
	}
}

static uint32_t pick_size(struct fuzzer *f, uint32_t real)
{
	switch (pick(&f->s, 10)) {
	case 0: return 0;
	case 1: return real - 8;
	case 2: return real + 8;
	case 3: return PG;
	case 4: return PG + 1;
	case 5: return (uint32_t)rnd(&f->s);
	default: return real;
	}
}

/* Fill @len bytes at @p (in the arena) with an almost valid argument. */
static void fill_arg(struct fuzzer *f, unsigned int cmd, char *p, size_t len)
{
	static const uint32_t msrs[] = {
		VMRAPL_MSR_RAPL_POWER_UNIT, VMRAPL_MSR_PKG_POWER_LIMIT,
		VMRAPL_MSR_PKG_ENERGY_STATUS, VMRAPL_MSR_PKG_POWER_INFO,
		VMRAPL_MSR_DRAM_ENERGY_STATUS, VMRAPL_MSR_PP0_ENERGY_STATUS,
		VMRAPL_MSR_AMD_RAPL_POWER_UNIT, VMRAPL_MSR_AMD_CORE_ENERGY,
		VMRAPL_MSR_AMD_PKG_ENERGY,
		0x612, 0, 0xffffffff,	/* not vmrapl's */
	};
	union {
		struct vmrapl_attach a;
		struct vmrapl_topology t;
		struct vmrapl_task k;
		struct vmrapl_msr m;
		struct vmrapl_stats s;
		struct vmrapl_policy p;
		struct vmrapl_state st;
		struct vmrapl_test_inject in;
		struct vmrapl_pkg_list pl;
		struct vmrapl_vm_list vl;
		struct vmrapl_vm_query q;
		struct vmrapl_limit lim;
		char raw[256];
	} u;
	struct vmrapl_stats *qs = NULL;
	size_t n, i;

	memset(&u, 0, sizeof(u));
	switch (cmd) {
	case VMRAPL_ATTACH_VM:
		u.a.size = pick_size(f, sizeof(u.a));
		u.a.kvm_fd = pick_kvm_fd(f);
		u.a.nr_vcpus = pick(&f->s, 4) ? 1 + pick(&f->s, 4) :
			       (uint32_t)pick(&f->s, VMRAPL_MAX_VCPUS + 2);
		u.a.regset = pick(&f->s, 4);
		u.a.esu = pick(&f->s, 34);
		u.a.flags = pick(&f->s, 4) ? 0 : pick(&f->s, 3);
		break;
	case VMRAPL_VM_SET_TOPOLOGY:
		u.t.size = pick_size(f, sizeof(u.t));
		u.t.nr_vcpus = pick(&f->s, 4);
		u.t.vpkg_ptr = pick_u64ptr(f, 16);
		break;
	case VMRAPL_VM_ADD_TASK:
		switch (pick(&f->s, 5)) {
		case 0: u.k.tid = f->sh->tids[pick(&f->s, NR_THREADS + 1)]; break;
		case 1: u.k.tid = getpid(); break;
		case 2: u.k.tid = 1; break;
		case 3: u.k.tid = 0; break;
		default: u.k.tid = (uint32_t)rnd(&f->s); break;
		}
		break;
	case VMRAPL_VM_READ_MSR:
		u.m.vcpu = pick(&f->s, 4);
		u.m.index = msrs[pick(&f->s, sizeof(msrs) / sizeof(msrs[0]))];
		break;
	case VMRAPL_VM_WRITE_MSR:
		u.m.vcpu = pick(&f->s, 4);
		u.m.index = pick(&f->s, 2) ? VMRAPL_MSR_PKG_POWER_LIMIT :
			    msrs[pick(&f->s, sizeof(msrs) / sizeof(msrs[0]))];
		/* Valid fields, the lock now and then, or anything. */
		u.m.data = pick(&f->s, 2) ? rnd(&f->s) & 0x00ffffff00ffffffULL :
			   rnd(&f->s);
		if (!pick(&f->s, 8))
			u.m.data |= 1ULL << 63;
		break;
	case VMRAPL_VM_GET_STATS:
		u.s.size = pick_size(f, sizeof(u.s));
		u.s.nr_vcpus = pick(&f->s, 5);
		u.s.vcpus_ptr = pick_u64ptr(f, 4 * sizeof(struct vmrapl_vcpu_stats));
		u.s.nr_vpkgs = pick(&f->s, 5);
		u.s.vpkgs_ptr = pick_u64ptr(f, 4 * sizeof(struct vmrapl_vpkg_stats));
		break;
	case VMRAPL_VM_SET_POLICY:
		u.p.flags = pick(&f->s, 8);
		u.p.charge = pick(&f->s, 3);
		switch (pick(&f->s, 5)) {
		case 0: u.p.guest_period_us = VMRAPL_GUEST_PERIOD_MIN_US - 1; break;
		case 1: u.p.guest_period_us = VMRAPL_GUEST_PERIOD_MAX_US + 1; break;
		case 2: u.p.guest_period_us = (uint32_t)rnd(&f->s); break;
		default:
			u.p.guest_period_us = VMRAPL_GUEST_PERIOD_MIN_US +
				pick(&f->s, 200000);
		}
		break;
	case VMRAPL_VM_GET_STATE:
	case VMRAPL_VM_SET_STATE:
		u.st.size = pick_size(f, sizeof(u.st));
		u.st.version = pick(&f->s, 3);
		u.st.esu = pick(&f->s, 4) ? VMRAPL_DEFAULT_ESU : pick(&f->s, 32);
		u.st.nr_vpkgs = pick(&f->s, 4);
		u.st.nr_vcpus = pick(&f->s, 4);
		u.st.vpkgs_ptr = pick_u64ptr(f, 4 * sizeof(struct vmrapl_vpkg_state));
		u.st.vcpus_ptr = pick_u64ptr(f, 32);
		break;
	case VMRAPL_GET_PKG_STATS:
	case VMRAPL_GET_PKG_STATS_V1:	/* the first 40 bytes of the same */
		u.pl.size = pick_size(f, sizeof(u.pl));
		u.pl.nr_pkgs = pick(&f->s, 4) ? pick(&f->s, 4) :
			       (uint32_t)rnd(&f->s);
		u.pl.pkgs_ptr = pick_u64ptr(f, 3 * sizeof(struct vmrapl_pkg_stats));
		break;
	case VMRAPL_LIST_VMS:
		u.vl.size = pick_size(f, sizeof(u.vl));
		u.vl.nr_vms = pick(&f->s, 4) ? pick(&f->s, 12) :
			      (uint32_t)rnd(&f->s);
		u.vl.vms_ptr = pick_u64ptr(f, 8 * sizeof(struct vmrapl_vm_entry));
		break;
	case VMRAPL_GET_VM_STATS:
		/* Ids are handed out from 1 up: small ones are live VMs. */
		u.q.size = pick_size(f, sizeof(u.q));
		u.q.id = pick(&f->s, 8) ? pick(&f->s, 64) : rnd(&f->s);
		u.q.stats_ptr = pick_u64ptr(f, sizeof(*qs));
		if (u.q.stats_ptr >= (uintptr_t)f->arena &&
		    u.q.stats_ptr + sizeof(*qs) <= (uintptr_t)f->arena + ARENA &&
		    pick(&f->s, 4))
			qs = (struct vmrapl_stats *)(uintptr_t)u.q.stats_ptr;
		break;
	case VMRAPL_SET_VM_LIMIT:
	case VMRAPL_GET_VM_LIMIT:
		/* Limits and windows around and beyond the accepted ranges. */
		u.lim.size = pick_size(f, sizeof(u.lim));
		u.lim.id = pick(&f->s, 8) ? pick(&f->s, 64) : rnd(&f->s);
		u.lim.flags = pick(&f->s, 8) ? 0 : pick(&f->s, 4);
		u.lim.limit_uw = pick(&f->s, 2) ? pick(&f->s, 200) * 1000000ull :
				 rnd(&f->s);
		u.lim.window_us = pick(&f->s, 2) ? pick(&f->s, 5000) * 1000ull :
				  rnd(&f->s);
		break;
	case VMRAPL_TEST_INJECT:
		/* Never a jump (F_SET), and never a huge value. */
		u.in.package = pick(&f->s, 3);
		u.in.value = pick(&f->s, 1000);
		break;
	default:
		for (i = 0; i < sizeof(u.raw); i++)
			u.raw[i] = rnd(&f->s);
	}
	/*
	 * Mutate a bit or two of the first 16 bytes (size, flags, counts,
	 * fds), now and then.  Not the pointers further on: one bit off an
	 * arena address can land on our own heap or stacks, which the kernel
	 * would then legitimately write to.
	 */
	if (cmd != VMRAPL_TEST_INJECT && pick(&f->s, 4) == 0)
		for (i = 1 + pick(&f->s, 2); i; i--)
			u.raw[pick(&f->s, 16)] ^= 1 << pick(&f->s, 8);
	n = len < sizeof(u) ? len : sizeof(u);
	memcpy(p, &u, n);
	/* GET_VM_STATS: an almost valid struct vmrapl_stats behind it. */
	if (qs) {
		struct vmrapl_stats t = {
			.size = pick_size(f, sizeof(t)),
			.nr_vcpus = pick(&f->s, 5),
			.vcpus_ptr = pick_u64ptr(f, 4 * sizeof(struct vmrapl_vcpu_stats)),
			.nr_vpkgs = pick(&f->s, 5),
			.vpkgs_ptr = pick_u64ptr(f, 4 * sizeof(struct vmrapl_vpkg_stats)),
		};

		memcpy(qs, &t, sizeof(t));
	}
}

static bool err_allowed(unsigned int cmd, int err)
{
	switch (err) {
	case EINVAL: case EFAULT: case E2BIG: case ENOMEM:
		return true;
	case EBADF:
		return cmd == VMRAPL_ATTACH_VM;
	case EEXIST:
		return cmd == VMRAPL_ATTACH_VM || cmd == VMRAPL_VM_ADD_TASK;
	case ENOENT:
		return cmd == VMRAPL_VM_READ_MSR || cmd == VMRAPL_GET_VM_STATS ||
		       cmd == VMRAPL_SET_VM_LIMIT || cmd == VMRAPL_GET_VM_LIMIT ||
		       cmd == VMRAPL_VM_WRITE_MSR;
	case EPERM: case ESRCH: case ENOSPC:
		return cmd == VMRAPL_VM_ADD_TASK;
	case EBUSY:
		return cmd == VMRAPL_VM_SET_TOPOLOGY;
	case ENOTTY:
		return cmd == VMRAPL_TEST_INJECT;
	}
	return false;
}

static void keep_extra(struct fuzzer *f, int fd)
{
	int i = pick(&f->s, 4);

	if (f->extra[i] >= 0)
		close(f->extra[i]);
	f->extra[i] = fd;
}

/* Map a VM fd with random length, offset and protection. */
static void fuzz_mmap(struct fuzzer *f, int fd)
{
	static const int prots[] = {
		PROT_READ, PROT_READ | PROT_WRITE, PROT_WRITE, PROT_NONE,
		PROT_READ | PROT_EXEC,
	};
	int prot = prots[pick(&f->s, 5)];
	int flags = pick(&f->s, 3) ? MAP_SHARED : MAP_PRIVATE;
	size_t len = pick(&f->s, 3) ? PG : pick(&f->s, 4 * PG);
	off_t off = pick(&f->s, 4) ? 0 : (off_t)pick(&f->s, 3) * PG;
	volatile uint32_t *p;

	p = mmap(NULL, len, prot, flags, fd, off);
	f->maps++;
	if (p == MAP_FAILED)
		return;
	if (prot & PROT_WRITE)
		note_bad(f, "writable mapping of a VM page", 0, fd, 0, 0);
	if (prot & PROT_READ)
		(void)p[0];
	if (!mprotect((void *)p, PG, PROT_READ | PROT_WRITE))
		note_bad(f, "VM page made writable by mprotect", 0, fd, 0, 0);
	munmap((void *)p, len);
}

/*
 * Half of the calls are a vmrapl command on an fd that takes it, with an
 * almost valid argument in the arena, so that they get past the first
 * checks; the rest is anything on anything.
 */
static void pick_call(struct fuzzer *f, int *fd, int *kind, unsigned int *cmd,
		      void **arg)
{
	struct shared *sh = f->sh;
	size_t len;

	if (pick(&f->s, 2)) {
		*cmd = vr_cmds[pick(&f->s, sizeof(vr_cmds) / sizeof(vr_cmds[0]))];
		len = _IOC_SIZE(*cmd);
		*arg = pick(&f->s, 5) ? f->arena + pick(&f->s, ARENA - PG) :
		       pick_ptr(f, len);
		if (is_dev_cmd(*cmd)) {
			*kind = K_DEV;
			*fd = sh->dev;
			return;
		}
		switch (pick(&f->s, 4)) {
		case 0:
			*kind = K_CHURN;
			*fd = sh->churn;
			return;
		case 1:
			*kind = K_VM;
			*fd = sh->vm[pick(&f->s, NR_STABLE)];
			return;
		case 2:
			*fd = pick_fd(f, kind);
			return;
		default:
			*kind = K_VM;
			*fd = sh->vm[pick(&f->s, NR_STABLE)];
			return;
		}
	}
	*fd = pick_fd(f, kind);
	*cmd = pick_cmd(f, *kind != K_DEV && *kind != K_VM &&
			*kind != K_CHURN && *kind != K_EXTRA);
	len = _IOC_SIZE(*cmd) ? _IOC_SIZE(*cmd) : 64;
	*arg = pick_ptr(f, len);
}

static void fuzz_one(struct fuzzer *f)
{
	struct shared *sh = f->sh;
	int kind, fd, err;
	unsigned int cmd;
	void *arg;
	size_t len;
	bool vr_fd;
	long ret;

	pick_call(f, &fd, &kind, &cmd, &arg);
	vr_fd = kind == K_DEV || kind == K_VM;
	len = _IOC_SIZE(cmd) ? _IOC_SIZE(cmd) : 64;

	if ((kind == K_VM || kind == K_CHURN) && pick(&f->s, 20) == 0) {
		fuzz_mmap(f, fd);
		return;
	}
	if (cmd == VMRAPL_TEST_INJECT) {
		/* Production source: always a valid, small, non-SET payload. */
		arg = f->arena;
		fill_arg(f, cmd, arg, sizeof(struct vmrapl_test_inject));
	} else if ((char *)arg >= f->arena && (char *)arg < f->arena + ARENA) {
		size_t room = f->arena + ARENA - (char *)arg;

		if (pick(&f->s, 4))
			fill_arg(f, cmd, arg, len < room ? len : room);
		else
			for (size_t i = 0; i < room && i < 256; i++)
				((char *)arg)[i] = rnd(&f->s);
	}

	f->last_cmd = cmd;
	f->last_fd = fd;
	f->last_arg = arg;
	ret = ioctl(fd, cmd, arg);
	err = errno;
	f->calls++;
	if (ret >= 0)
		f->ok++;
	else if (err >= 0 && err < 160)
		f->err[err]++;

	if (cmd == VMRAPL_ATTACH_VM && ret >= 0) {
		f->attached++;
		if (pick(&f->s, 2))
			keep_extra(f, ret);
		else
			close(ret);
	}
	if (!vr_fd)
		return;
	/* /dev/vmrapl and the attached VM fds: check the answer. */
	if ((kind == K_DEV && !is_dev_cmd(cmd)) ||
	    (kind == K_VM && !is_vm_cmd(cmd))) {
		if (ret != -1 || err != ENOTTY)
			note_bad(f, "unknown command not ENOTTY", cmd, fd, ret,
				 err);
		return;
	}
	if (cmd == VMRAPL_TEST_INJECT) {
		if (ret != -1 || err != ENOTTY)
			note_bad(f, "TEST_INJECT on the production source", cmd,
				 fd, ret, err);
		return;
	}
	/* WRITE_MSR's 1: the register is locked, the write ignored. */
	if (ret > 0 && cmd != VMRAPL_ATTACH_VM &&
	    !(cmd == VMRAPL_VM_WRITE_MSR && ret == 1))
		note_bad(f, "positive return", cmd, fd, ret, 0);
	if (ret < 0 && !err_allowed(cmd, err))
		note_bad(f, "undocumented error", cmd, fd, ret, err);
	(void)sh;
}

static struct fuzzer *crash_f;

/* A crash of the fuzzer itself: say where, and what the threads were doing. */
static void on_crash(int sig, siginfo_t *si, void *uc)
{
	char buf[256];
	int i, n;

	n = snprintf(buf, sizeof(buf), "# signal %d at address %p\n", sig,
		     si->si_addr);
	if (write(2, buf, n) < 0)
		_exit(2);
	for (i = 0; crash_f && i < NR_THREADS; i++) {
		n = snprintf(buf, sizeof(buf),
			     "# thread %d: call %llu: ioctl(%d, %#x, %p)\n", i,
			     (unsigned long long)crash_f[i].calls,
			     crash_f[i].last_fd, crash_f[i].last_cmd,
			     crash_f[i].last_arg);
		if (write(2, buf, n) < 0)
			break;
	}
	_exit(2);
}

static void *fuzz_thread(void *arg)
{
	struct fuzzer *f = arg;

	f->sh->tids[f->idx] = syscall(SYS_gettid);
	while (!f->sh->stop)
		fuzz_one(f);
	return NULL;
}

static int fuzzer_init(struct fuzzer *f, struct shared *sh, int idx,
		       uint64_t seed)
{
	size_t i;

	memset(f, 0, sizeof(*f));
	f->sh = sh;
	f->idx = idx;
	f->seed = seed;
	f->s = seed ? seed : 1;
	for (i = 0; i < 4; i++)
		f->extra[i] = -1;
	f->arena = mmap(NULL, ARENA + PG, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	f->ro = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	f->none = mmap(NULL, 4 * PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	if (f->arena == MAP_FAILED || f->ro == MAP_FAILED ||
	    f->none == MAP_FAILED)
		return -1;
	for (i = 0; i < 4 * PG; i++)
		f->ro[i] = rnd(&f->s);
	if (mprotect(f->arena + ARENA, PG, PROT_NONE) ||
	    mprotect(f->ro, 4 * PG, PROT_READ))
		return -1;
	return 0;
}

struct vmsnap {
	struct vmrapl_stats st;
	uint64_t t;
};

FIXTURE(fuzz) {
	struct shared sh;
	struct vrg *stable[NR_STABLE];
	struct vrg *churn;
	struct vrg *idle;
	struct fuzzer f[NR_THREADS];
};

FIXTURE_SETUP(fuzz)
{
	memset(&self->sh, 0, sizeof(self->sh));
	/*
	 * check_stack on every kernel, not only the debug one: the
	 * stack-end panics the rig has seen came in these programs, mostly
	 * on 7.3.4, and a probe that broke the marker would name itself.
	 */
	ASSERT_EQ(0, vr_reload("check_stack=1"));
	self->sh.dev = vr_open_dev();
	ASSERT_LE(0, self->sh.dev);
}

FIXTURE_TEARDOWN(fuzz)
{
	int i, j;

	self->sh.stop = 1;
	for (i = 0; i < NR_THREADS; i++)
		for (j = 0; j < 4; j++)
			if (self->f[i].extra[j] > 0)
				close(self->f[i].extra[j]);
	for (i = 0; i < NR_STABLE; i++) {
		if (self->sh.vm[i] > 0)
			close(self->sh.vm[i]);
		vrg_destroy(self->stable[i]);
	}
	if (self->sh.churn > 0)
		close(self->sh.churn);
	vrg_destroy(self->churn);
	vrg_destroy(self->idle);
	close(self->sh.dev);
	if (self->sh.null > 0)
		close(self->sh.null);
	if (self->sh.kvm_sys > 0)
		close(self->sh.kvm_sys);
	vr_reload(NULL);
}

static void vm_check(struct __test_metadata *_metadata, int i, int fd,
		     struct vmsnap *last, int *bad)
{
	struct vmsnap now;
	uint64_t max_uj;
	int ret;

	ret = vr_get_stats(fd, &now.st, NULL, 0);
	now.t = vr_now_ns();
	if (ret) {
		if ((*bad)++ < 5)
			TH_LOG("VM %d: GET_STATS: %s", i, strerror(-ret));
		return;
	}
	max_uj = vr_max_eu(now.t - last->t, 2) * 1e6 / (1 << 24);
	if ((now.st.energy_uj[0] < last->st.energy_uj[0] ||
	     now.st.runtime_ns < last->st.runtime_ns ||
	     now.st.energy_uj[0] - last->st.energy_uj[0] > max_uj) &&
	    (*bad)++ < 5)
		TH_LOG("VM %d: energy %llu -> %llu uJ (at most +%llu), runtime %llu -> %llu ns",
		       i, (unsigned long long)last->st.energy_uj[0],
		       (unsigned long long)now.st.energy_uj[0],
		       (unsigned long long)max_uj,
		       (unsigned long long)last->st.runtime_ns,
		       (unsigned long long)now.st.runtime_ns);
	*last = now;
}

TEST_F_TIMEOUT(fuzz, random_ioctls, 90)
{
	struct shared *sh = &self->sh;
	struct vmsnap start[NR_STABLE], last[NR_STABLE];
	struct vr_books b0[2], b1[2];
	struct vmrapl_info info;
	uint64_t seed, t0, t_end, next_churn = 0;
	uint64_t calls = 0, ok = 0, att = 0, maps = 0, churns = 0;
	const char *env = getenv("VR_FUZZ_SEED");
	int i, e, bad = 0, fuzz_bad = 0;
	struct vr_whole_reader whole;

	ASSERT_EQ(0, vr_get_info(&info));
	ASSERT_NE(VMRAPL_SOURCE_TEST, info.source);
	ASSERT_FALSE(info.features & VMRAPL_INFO_F_TEST_INJECT)
		TH_LOG("the fuzzer must run on the production source");

	seed = env ? strtoull(env, NULL, 0) : vr_now_ns() ^ ((uint64_t)getpid() << 32);
	TH_LOG("fuzz seed 0x%llx (replay: VR_FUZZ_SEED=0x%llx), %d s, %d threads",
	       (unsigned long long)seed, (unsigned long long)seed, FUZZ_SECS,
	       NR_THREADS);

	/* The VMs whose counters must survive. */
	for (i = 0; i < NR_STABLE; i++) {
		self->stable[i] = vrg_create(2, i == 1 ? VRG_PIO : VRG_SPIN);
		ASSERT_NE(NULL, self->stable[i]);
		vrg_set_duty(self->stable[i], 50, 20);
		sh->stable_kvm[i] = vrg_kvm_fd(self->stable[i]);
		sh->vm[i] = vr_attach(sh->dev, sh->stable_kvm[i], 2,
				      i == 2 ? VMRAPL_REGSET_AMD :
				      VMRAPL_REGSET_INTEL, 0);
		ASSERT_LE(0, sh->vm[i]);
		ASSERT_EQ(0, vrg_start(self->stable[i]));
	}
	/* One detached and re-attached under the fuzzers' feet. */
	self->churn = vrg_create(1, VRG_PIO);
	ASSERT_NE(NULL, self->churn);
	sh->churn_kvm = vrg_kvm_fd(self->churn);
	sh->churn = vr_attach(sh->dev, sh->churn_kvm, 1, VMRAPL_REGSET_INTEL, 0);
	ASSERT_LE(0, sh->churn);
	ASSERT_EQ(0, vrg_start(self->churn));
	/* A KVM VM nobody attached, a closed fd, /dev/null, /dev/kvm. */
	self->idle = vrg_create(1, VRG_HLT);
	ASSERT_NE(NULL, self->idle);
	sh->kvm = vrg_kvm_fd(self->idle);
	sh->null = open("/dev/null", O_RDWR);
	ASSERT_LE(0, sh->null);
	sh->closed = dup(sh->null);
	close(sh->closed);
	sh->kvm_sys = open("/dev/kvm", O_RDWR);
	sh->tids[NR_THREADS] = syscall(SYS_gettid);

	vr_sleep_ms(300);
	for (i = 0; i < NR_STABLE; i++) {
		ASSERT_EQ(0, vr_get_stats(sh->vm[i], &start[i].st, NULL, 0));
		start[i].t = vr_now_ns();
		last[i] = start[i];
	}
	ASSERT_EQ(0, vr_read_books2(b0));

	for (i = 0; i < NR_THREADS; i++) {
		uint64_t s = seed ^ (0x9E3779B97F4A7C15ULL * (i + 1));

		ASSERT_EQ(0, fuzzer_init(&self->f[i], sh, i, s));
	}
	crash_f = self->f;
	{
		struct sigaction sa = { .sa_sigaction = on_crash,
					.sa_flags = SA_SIGINFO };

		sigaction(SIGSEGV, &sa, NULL);
		sigaction(SIGBUS, &sa, NULL);
	}
	for (i = 0; i < NR_THREADS; i++)
		ASSERT_EQ(0, pthread_create(&self->f[i].th, NULL, fuzz_thread,
					    &self->f[i]));
	ASSERT_EQ(0, vr_whole_start(&whole));

	t0 = vr_now_ns();
	t_end = t0 + FUZZ_SECS * 1000000000ULL;
	while (vr_now_ns() < t_end) {
		vr_sleep_ms(100);
		for (i = 0; i < NR_STABLE; i++)
			vm_check(_metadata, i, sh->vm[i], &last[i], &bad);
		if (vr_now_ns() >= next_churn) {
			int old = sh->churn, fd;

			sh->churn = -1;
			close(old);
			/* A fuzzer may have attached it meanwhile: EEXIST. */
			fd = vr_attach(sh->dev, sh->churn_kvm, 1,
				       VMRAPL_REGSET_INTEL, 0);
			sh->churn = fd;
			churns++;
			next_churn = vr_now_ns() + 200000000ULL;
		}
	}
	sh->stop = 1;
	vr_whole_stop(&whole);
	for (i = 0; i < NR_THREADS; i++) {
		struct fuzzer *f = &self->f[i];

		pthread_join(f->th, NULL);
		calls += f->calls;
		ok += f->ok;
		att += f->attached;
		maps += f->maps;
		fuzz_bad += f->bad;
		for (e = 0; e < 4 && e < f->bad; e++)
			TH_LOG("thread %d: %s", i, f->first_bad[e]);
	}
	TH_LOG("%llu ioctls (%llu succeeded, %llu attaches), %llu mmaps, %llu re-attaches in %.1f s",
	       (unsigned long long)calls, (unsigned long long)ok,
	       (unsigned long long)att, (unsigned long long)maps,
	       (unsigned long long)churns, (vr_now_ns() - t0) / 1e9);
	for (e = 1; e < 160; e++) {
		uint64_t n = self->f[0].err[e] + self->f[1].err[e];

		if (n)
			TH_LOG("  errno %d (%s): %llu", e, strerror(e),
			       (unsigned long long)n);
	}
	EXPECT_GT(calls, 1000);
	EXPECT_EQ(0, fuzz_bad) TH_LOG("%d answers broke the ABI", fuzz_bad);
	TH_LOG("%lu answers read for their wholes, %lu broke one",
	       whole.c.answers, whole.c.broken);
	EXPECT_EQ(0, whole.err) TH_LOG("reading the books: %s",
				       strerror(-whole.err));
	EXPECT_GT(whole.c.answers, 100);
	EXPECT_EQ(0, whole.c.broken) TH_LOG("first: %s", whole.c.first);
	/* check_stack (loaded with it above): no probe broke a stack-end marker. */
	EXPECT_EQ(0, vr_debugfs_check("stack_end_made_in_probe"));
	TH_LOG("stack-end markers found broken before a probe ran: %lld",
	       vr_debugfs_check("stack_end_seen_on_entry"));

	/* Every still-attached VM: GET_STATS works, nothing went back. */
	vr_sleep_ms(50);
	for (i = 0; i < NR_STABLE; i++) {
		vm_check(_metadata, i, sh->vm[i], &last[i], &bad);
		EXPECT_GT(last[i].st.runtime_ns, start[i].st.runtime_ns)
			TH_LOG("VM %d: runtime %llu -> %llu ns over the fuzz", i,
			       (unsigned long long)start[i].st.runtime_ns,
			       (unsigned long long)last[i].st.runtime_ns);
		EXPECT_GT(last[i].st.energy_uj[0], start[i].st.energy_uj[0])
			TH_LOG("VM %d: energy %llu -> %llu uJ over the fuzz", i,
			       (unsigned long long)start[i].st.energy_uj[0],
			       (unsigned long long)last[i].st.energy_uj[0]);
	}
	EXPECT_EQ(0, bad) TH_LOG("%d VM counter checks failed", bad);

	ASSERT_EQ(0, vr_read_books2(b1));
	for (i = 0; i < 2; i++) {
		uint64_t ds = b1[i].sampled - b0[i].sampled;
		uint64_t max = vr_max_eu(vr_now_ns() - start[0].t, 1);

		EXPECT_TRUE(vr_books_conserve(&b1[i]))
			TH_LOG("pkg %d does not conserve", i);
		EXPECT_LE(ds, max)
			TH_LOG("pkg %d: sampled grew by %llu eu (%.3g J), at most %.0f J possible",
			       i, (unsigned long long)ds, ds / 16777216.0,
			       max / 16777216.0);
		EXPECT_GE(b1[i].tracked, b0[i].tracked);
	}
	if (!_metadata->passed)
		vr_dump_debugfs();
}

TEST_HARNESS_MAIN
