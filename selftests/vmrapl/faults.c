// SPDX-License-Identifier: GPL-2.0
/*
 * Allocation failures, injected one at a time (failslab's fail-nth): for
 * each ioctl and path of vmrapl that allocates, the call is repeated with
 * the Nth fault-injection point of the calling thread failing, N = 1, 2,
 * 3, ... until a call runs to its end without reaching the Nth point.
 * Every injected failure must come back as ENOMEM (or be absorbed: the
 * call still succeeded, e.g. kvmalloc's vmalloc fallback or a failed
 * kmemleak metadata allocation), and the same call right after it, without
 * injection, must work.  Module load goes through the same loop around
 * init_module(); track_all's adoption, which allocates in a kworker, gets
 * random failures in kworkers instead.  vmrapl's live-object counters
 * (debugfs vmrapl/objects) must be back to zero (to where they were, for
 * the adoption) once everything is closed; KASAN (double frees, use after
 * free on the error paths) and kmemleak (the rig scans at the end) catch
 * the rest.
 *
 * Needs a kernel with CONFIG_FAULT_INJECTION and CONFIG_FAILSLAB (the
 * debug rig's); on other kernels every test SKIPs.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "libvmrapl.h"
#include "libvmrapl-host.h"
#include "vr_kvm.h"

#define FAIL_NTH	"/proc/thread-self/fail-nth"
#define FAILSLAB	"/sys/kernel/debug/failslab"
#define OBJECTS		"/sys/kernel/debug/vmrapl/objects"
#define TEST_ESU	14
#define NR_VCPUS	2
/* Far more than any of these calls makes: a loop that gets here is stuck. */
#define MAX_N		4000
#define MAX_OBJ		32

/* ---- small file helpers --------------------------------------------- */

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -EIO;
}

static int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

static bool have_fail_nth(void)
{
	return access(FAIL_NTH, F_OK) == 0;
}

#define NEED_FAIL_NTH()							\
	do {								\
		if (!have_fail_nth())					\
			SKIP(return, "no " FAIL_NTH ": kernel without " \
			     "CONFIG_FAULT_INJECTION (runs in the debug rig)"); \
	} while (0)

/* ---- fail-nth ---------------------------------------------------------- */

/* Opened by the thread that makes the calls: thread-self is that thread. */
static int nth_fd = -1;

static void nth_arm(unsigned int n)
{
	char b[16];
	int l = snprintf(b, sizeof(b), "%u", n);

	if (pwrite(nth_fd, b, l, 0) != l)
		abort();
}

/*
 * What is left of the count, then disarm: 0 means the Nth point was
 * reached and failed, > 0 that the call ended before it.
 */
static unsigned int nth_left(void)
{
	char b[16] = "";

	if (pread(nth_fd, b, sizeof(b) - 1, 0) <= 0)
		abort();
	nth_arm(0);
	return (unsigned int)strtoul(b, NULL, 10);
}

/*
 * failslab: sleeping allocations too (by default it fails only atomic
 * ones), and no stack dump per failure.  The probability stays 0: only
 * fail-nth injects.
 */
static char old_gfp_wait[8], old_verbose[8];

static int failslab_setup(void)
{
	if (read_file(FAILSLAB "/ignore-gfp-wait", old_gfp_wait,
		      sizeof(old_gfp_wait)) ||
	    read_file(FAILSLAB "/verbose", old_verbose, sizeof(old_verbose)))
		return -ENOENT;
	if (write_file(FAILSLAB "/ignore-gfp-wait", "N") ||
	    write_file(FAILSLAB "/verbose", "0"))
		return -EIO;
	nth_fd = open(FAIL_NTH, O_RDWR);
	return nth_fd < 0 ? -errno : 0;
}

static void failslab_restore(void)
{
	if (old_gfp_wait[0])
		write_file(FAILSLAB "/ignore-gfp-wait", old_gfp_wait);
	if (old_verbose[0])
		write_file(FAILSLAB "/verbose", old_verbose);
	if (nth_fd >= 0)
		close(nth_fd);
	nth_fd = -1;
}

/* ---- the module ------------------------------------------------------ */

/* Load vmrapl with track_all on or off, unless it already is. */
static int module_with_track_all(bool on)
{
	char v[8] = "";

	if (vr_module_loaded() &&
	    vmrapl_host_param_get("track_all", v, sizeof(v)) == 0 &&
	    (v[0] == 'Y') == on)
		return 0;
	return vr_reload(on ? NULL : "track_all=0");
}

/* ---- vmrapl's live objects ------------------------------------------ */

struct objs {
	int nr;
	char name[MAX_OBJ][32];
	long count[MAX_OBJ];
};

/* -ENOENT when the module has no objects file (yet). */
static int objs_read(struct objs *o)
{
	char line[128];
	FILE *f = fopen(OBJECTS, "r");

	o->nr = 0;
	if (!f)
		return -ENOENT;
	while (o->nr < MAX_OBJ && fgets(line, sizeof(line), f))
		if (sscanf(line, "%31s %ld", o->name[o->nr],
			   &o->count[o->nr]) == 2)
			o->nr++;
	fclose(f);
	return 0;
}

static long objs_get(const struct objs *o, const char *name)
{
	int i;

	for (i = 0; i < o->nr; i++)
		if (!strcmp(o->name[i], name))
			return o->count[i];
	return 0;
}

/* Does every count of @o equal @base's (zero when @base is NULL)? */
static bool objs_match(const struct objs *o, const struct objs *base)
{
	int i;

	for (i = 0; i < o->nr; i++)
		if (o->count[i] != (base ? objs_get(base, o->name[i]) : 0))
			return false;
	return true;
}

/*
 * After everything of the test is closed: every live-object count back
 * to @base (NULL: zero), allowing 5 s for deferred frees.  Without the
 * objects file only this check is skipped (said in the log).
 */
static void objs_check(struct __test_metadata *_metadata, const char *what,
		       const struct objs *base)
{
	struct objs o;
	int ms = 5000, i;

	if (objs_read(&o) == -ENOENT) {
		ksft_print_msg("%s: no %s: live-object check skipped\n", what,
			       OBJECTS);
		return;
	}
	while (!objs_match(&o, base) && ms > 0) {
		vr_sleep_ms(100);
		ms -= 100;
		objs_read(&o);
	}
	for (i = 0; i < o.nr; i++)
		EXPECT_EQ(base ? objs_get(base, o.name[i]) : 0, o.count[i])
			TH_LOG("%s: %s %ld left behind", what, o.name[i],
			       o.count[i]);
	ksft_print_msg("%s: %d live-object counts %s\n", what, o.nr,
		       objs_match(&o, base) ? (base ? "as before" : "all 0") :
		       "NOT back");
}

/* ---- the loop ---------------------------------------------------------- */

struct op {
	const char *name;
	int (*prep)(void *ctx);		/* before arming; may be NULL */
	int (*call)(void *ctx);		/* 0 or -errno */
	void (*undo)(void *ctx);	/* after a successful call; may be NULL */
};

struct loop_res {
	unsigned int n_ok;	/* the N at which the call ran to its end */
	unsigned int injected, enomem, absorbed, other;
};

static int run_call(struct __test_metadata *_metadata, const struct op *op,
		    void *ctx, unsigned int arm, unsigned int *left)
{
	int ret;

	if (op->prep) {
		ret = op->prep(ctx);
		if (ret)
			return ret;
	}
	if (arm)
		nth_arm(arm);
	ret = op->call(ctx);
	*left = arm ? nth_left() : 1;
	if (!ret && op->undo)
		op->undo(ctx);
	return ret;
}

static void inject_loop(struct __test_metadata *_metadata, const struct op *op,
			void *ctx, struct loop_res *r)
{
	unsigned int n, left;
	int ret;

	memset(r, 0, sizeof(*r));
	/* The call works at all. */
	ret = run_call(_metadata, op, ctx, 0, &left);
	ASSERT_EQ(0, ret) TH_LOG("%s without injection: %s", op->name,
				 strerror(-ret));
	for (n = 1; n <= MAX_N; n++) {
		ret = run_call(_metadata, op, ctx, n, &left);
		if (left) {
			/* The call ended before its Nth injection point. */
			EXPECT_EQ(0, ret) TH_LOG("%s, N=%u, nothing injected: %s",
						 op->name, n, strerror(-ret));
			r->n_ok = n;
			break;
		}
		r->injected++;
		if (!ret) {
			r->absorbed++;
		} else if (ret == -ENOMEM) {
			r->enomem++;
		} else {
			r->other++;
			EXPECT_EQ(-ENOMEM, ret)
				TH_LOG("%s: injected failure N=%u returned %s",
				       op->name, n, strerror(-ret));
		}
		/* The same call right after, without injection, works. */
		ret = run_call(_metadata, op, ctx, 0, &left);
		EXPECT_EQ(0, ret) TH_LOG("%s: the call after failure N=%u: %s",
					 op->name, n, strerror(-ret));
		if (ret)
			break;
	}
	EXPECT_NE(0, r->n_ok) TH_LOG("%s: no success within N <= %u",
				     op->name, MAX_N);
	ksft_print_msg("FAULTS %s: succeeded at N=%u; %u injected: %u ENOMEM, %u absorbed, %u other\n",
		       op->name, r->n_ok, r->injected, r->enomem, r->absorbed,
		       r->other);
}

/* ---- the calls ---------------------------------------------------------- */

struct fctx {
	struct vmrapl *v;
	int devfd;
	struct vrg *g;
	struct vmrapl_vm *vm;
	int vmfd;		/* ATTACH_VM's result */
	void *map;
	size_t map_len;
	unsigned int topo;	/* SET_TOPOLOGY alternates two maps */
	uint64_t id;		/* GET_VM_STATS: our VM */
	struct vmrapl_vpkg_state ps[2];
	uint64_t vc[NR_VCPUS];
	/* ADD_TASK: threads that wait on @pipe until the end */
	int pipe[2];
	pthread_t thr[128];
	pid_t tids[128];
	int nthr;
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

static int attach_call(void *p)
{
	struct fctx *c = p;
	struct vmrapl_attach a = {
		.size = sizeof(a), .kvm_fd = (uint32_t)vrg_kvm_fd(c->g),
		.nr_vcpus = NR_VCPUS, .regset = VMRAPL_REGSET_INTEL,
		.esu = TEST_ESU,
	};

	c->vmfd = ioctl(c->devfd, VMRAPL_ATTACH_VM, &a);
	return c->vmfd < 0 ? -errno : 0;
}

static void attach_undo(void *p)
{
	struct fctx *c = p;

	close(c->vmfd);
	c->vmfd = -1;
}

static int topology_call(void *p)
{
	static const uint32_t maps[2][NR_VCPUS] = { { 0, 1 }, { 0, 0 } };
	struct fctx *c = p;

	return vmrapl_set_topology(c->vm, maps[c->topo++ & 1], NR_VCPUS);
}

static void *task_thread(void *p)
{
	struct fctx *c = p;
	char b;

	pthread_mutex_lock(&c->lock);
	c->tids[c->nthr] = (pid_t)syscall(SYS_gettid);
	pthread_cond_signal(&c->cond);
	pthread_mutex_unlock(&c->lock);
	while (read(c->pipe[0], &b, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

/* A fresh thread for every ADD_TASK: a thread is added once. */
static int task_prep(void *p)
{
	struct fctx *c = p;

	if (c->nthr >= (int)(sizeof(c->thr) / sizeof(c->thr[0])))
		return -ENOSPC;
	pthread_mutex_lock(&c->lock);
	c->tids[c->nthr] = 0;
	if (pthread_create(&c->thr[c->nthr], NULL, task_thread, c)) {
		pthread_mutex_unlock(&c->lock);
		return -EAGAIN;
	}
	while (!c->tids[c->nthr])
		pthread_cond_wait(&c->cond, &c->lock);
	c->nthr++;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

static int task_call(void *p)
{
	struct fctx *c = p;

	return vmrapl_add_task(c->vm, c->tids[c->nthr - 1]);
}

static void tasks_end(struct fctx *c)
{
	int i;

	if (c->pipe[1] >= 0)
		close(c->pipe[1]);
	c->pipe[1] = -1;
	for (i = 0; i < c->nthr; i++)
		pthread_join(c->thr[i], NULL);
	c->nthr = 0;
}

static int stats_call(void *p)
{
	struct fctx *c = p;
	struct vmrapl_vcpu_stats vcpus[NR_VCPUS];
	struct vmrapl_vpkg_stats vpkgs[2];
	struct vmrapl_stats st;

	return vmrapl_get_stats(c->vm, &st, vcpus, NR_VCPUS, vpkgs, 2);
}

static int mmap_call(void *p)
{
	struct fctx *c = p;

	c->map_len = vmrapl_page_size(NR_VCPUS);
	c->map = mmap(NULL, c->map_len, PROT_READ, MAP_SHARED,
		      vmrapl_vm_fd(c->vm), 0);
	return c->map == MAP_FAILED ? -errno : 0;
}

static void mmap_undo(void *p)
{
	struct fctx *c = p;

	munmap(c->map, c->map_len);
}

static int get_state_call(void *p)
{
	struct fctx *c = p;
	struct vmrapl_state st;

	return vmrapl_get_state(c->vm, &st, c->ps, 2, c->vc, NR_VCPUS);
}

static int set_state_call(void *p)
{
	struct fctx *c = p;

	/* SET_TOPOLOGY's loop left two virtual packages. */
	return vmrapl_set_state(c->vm, TEST_ESU, c->ps, 2, c->vc, NR_VCPUS);
}

static int list_call(void *p)
{
	struct fctx *c = p;
	struct vmrapl_vm_entry *e = NULL;
	int i, n = vmrapl_host_list_vms(c->devfd, &e);

	for (i = 0; i < n; i++)
		if (e[i].pid == (uint32_t)getpid() &&
		    (e[i].flags & VMRAPL_VM_F_ATTACHED))
			c->id = e[i].id;
	free(e);
	return n < 0 ? n : 0;
}

static int vm_stats_call(void *p)
{
	struct fctx *c = p;
	struct vmrapl_vcpu_stats *vcpus = NULL;
	struct vmrapl_stats st;
	int n = vmrapl_host_vm_stats(c->devfd, c->id, &st, &vcpus);

	free(vcpus);
	return n < 0 ? n : 0;
}

static int pkg_stats_call(void *p)
{
	struct fctx *c = p;
	struct vmrapl_pkg_stats *ps = NULL;
	int n = vmrapl_host_pkg_stats(c->devfd, &ps);

	free(ps);
	return n < 0 ? n : 0;
}

/* ---- the fixture ----------------------------------------------------------- */

FIXTURE(faults) {
	struct fctx c;
	bool ready;
};

FIXTURE_SETUP(faults)
{
	memset(&self->c, 0, sizeof(self->c));
	self->c.vmfd = -1;
	self->c.pipe[0] = self->c.pipe[1] = -1;
	if (!have_fail_nth())
		return;		/* each test SKIPs */
	ASSERT_EQ(0, failslab_setup()) TH_LOG("no usable %s", FAILSLAB);
	self->ready = true;
}

FIXTURE_TEARDOWN(faults)
{
	struct fctx *c = &self->c;

	if (nth_fd >= 0)
		nth_arm(0);
	tasks_end(c);
	if (c->vmfd >= 0)
		close(c->vmfd);
	if (c->vm)
		vmrapl_detach(c->vm);
	if (c->g)
		vrg_destroy(c->g);
	if (c->v)
		vmrapl_close(c->v);
	if (c->pipe[0] >= 0)
		close(c->pipe[0]);
	failslab_restore();
}

/* Module loaded with track_all off, /dev/vmrapl open, a VM of 2 vCPUs. */
static void open_vm(struct __test_metadata *_metadata, struct fctx *c,
		    bool attach)
{
	int ret;

	ASSERT_EQ(0, module_with_track_all(false));
	ret = vmrapl_open(NULL, &c->v);
	ASSERT_EQ(0, ret) TH_LOG("vmrapl_open: %s", strerror(-ret));
	c->devfd = vmrapl_fd(c->v);
	c->g = vrg_create(NR_VCPUS, VRG_HLT);
	ASSERT_NE(NULL, c->g);
	if (attach) {
		ret = vmrapl_attach(c->v, vrg_kvm_fd(c->g), NR_VCPUS,
				    VMRAPL_REGSET_INTEL, TEST_ESU, &c->vm);
		ASSERT_EQ(0, ret) TH_LOG("attach: %s", strerror(-ret));
	}
}

static void close_vm(struct fctx *c)
{
	tasks_end(c);
	if (c->vm)
		vmrapl_detach(c->vm);
	c->vm = NULL;
	if (c->g)
		vrg_destroy(c->g);
	c->g = NULL;
	if (c->v)
		vmrapl_close(c->v);
	c->v = NULL;
}

/*
 * ATTACH_VM: every allocation of an attach (the VM, its accounts, the
 * guest view's arrays and page, the fd) failed in turn.  An attach that
 * freed the guest view's arrays on a failure but left them in the VM (and
 * vr_vm_free() freed them again) is a double free KASAN reports.
 */
TEST_F_TIMEOUT(faults, attach_vm, 240)
{
	static const struct op op = {
		"ATTACH_VM", NULL, attach_call, attach_undo,
	};
	struct loop_res r;

	NEED_FAIL_NTH();
	open_vm(_metadata, &self->c, false);
	inject_loop(_metadata, &op, &self->c, &r);
	EXPECT_GT(r.enomem, 0);
	close_vm(&self->c);
	objs_check(_metadata, "attach_vm", NULL);
}

/*
 * The ioctls of an attached VM's fd, and its mmap, in the order their
 * rules allow: SET_TOPOLOGY before the guest view started, SET_STATE
 * after GET_STATE.
 */
TEST_F_TIMEOUT(faults, vm_ioctls, 240)
{
	static const struct op ops[] = {
		{ "SET_TOPOLOGY", NULL, topology_call, NULL },
		{ "ADD_TASK", task_prep, task_call, NULL },
		{ "GET_STATS", NULL, stats_call, NULL },
		{ "mmap", NULL, mmap_call, mmap_undo },
		{ "GET_STATE", NULL, get_state_call, NULL },
		{ "SET_STATE", NULL, set_state_call, NULL },
	};
	struct fctx *c = &self->c;
	struct loop_res r;
	unsigned int i;

	NEED_FAIL_NTH();
	ASSERT_EQ(0, pipe(c->pipe));
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->cond, NULL);
	open_vm(_metadata, c, true);
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		inject_loop(_metadata, &ops[i], c, &r);
		/* GET/SET_STATE below pass two virtual packages: { 0, 1 }. */
		if (i == 0 && !(c->topo & 1))
			ASSERT_EQ(0, topology_call(c));
	}
	close_vm(c);
	objs_check(_metadata, "vm_ioctls", NULL);
}

/* The host-wide reads of /dev/vmrapl. */
TEST_F_TIMEOUT(faults, host_ioctls, 240)
{
	static const struct op ops[] = {
		{ "LIST_VMS", NULL, list_call, NULL },
		{ "GET_VM_STATS", NULL, vm_stats_call, NULL },
		{ "GET_PKG_STATS", NULL, pkg_stats_call, NULL },
	};
	struct fctx *c = &self->c;
	struct loop_res r;
	unsigned int i;

	NEED_FAIL_NTH();
	open_vm(_metadata, c, true);
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		inject_loop(_metadata, &ops[i], c, &r);
		if (i == 0)
			ASSERT_NE(0, c->id) TH_LOG("LIST_VMS did not list our VM");
	}
	close_vm(c);
	objs_check(_metadata, "host_ioctls", NULL);
}

/*
 * Module load: the same loop around init_module(), every injection point
 * of the load (the loader's own, then vmrapl's init) failed in turn.  A
 * failed load must leave no module behind.  The loader makes hundreds of
 * allocations before vmrapl's init runs, so the loop runs from the last
 * point backwards (vmrapl's init and what follows it first) and stops
 * after its time budget, saying where.
 */
#define LOAD_BUDGET_S	240

TEST_F_TIMEOUT(faults, module_load, LOAD_BUDGET_S + 60)
{
	const char *ko = getenv("VMRAPL_KO") ?: "/vmrapl.ko";
	const char *params = "track_all=0";
	unsigned int n, left, total, injected = 0, absorbed = 0, other = 0;
	uint64_t t0;
	struct stat sb;
	void *img;
	int fd, ret;

	NEED_FAIL_NTH();
	fd = open(ko, O_RDONLY);
	ASSERT_LE(0, fd) TH_LOG("%s: %s", ko, strerror(errno));
	ASSERT_EQ(0, fstat(fd, &sb));
	img = malloc(sb.st_size);
	ASSERT_NE(NULL, img);
	ASSERT_EQ(sb.st_size, read(fd, img, sb.st_size));
	close(fd);
	if (vr_module_loaded())
		ASSERT_EQ(0, vr_unload());

	/* How many injection points a load passes. */
	nth_arm(1000000);
	ret = syscall(SYS_init_module, img, sb.st_size, params);
	total = 1000000 - nth_left();
	ASSERT_EQ(0, ret) TH_LOG("init_module: %s", strerror(errno));
	ASSERT_EQ(0, syscall(SYS_delete_module, "vmrapl", O_NONBLOCK));
	ksft_print_msg("module load: %u injection points\n", total);

	t0 = vr_now_ns();
	for (n = total + 2; n >= 1; n--) {
		if (vr_now_ns() - t0 > LOAD_BUDGET_S * 1000000000ULL) {
			ksft_print_msg("module load: time budget spent at N=%u\n", n);
			break;
		}
		nth_arm(n);
		ret = syscall(SYS_init_module, img, sb.st_size, params);
		ret = ret ? -errno : 0;
		left = nth_left();
		if (!left)
			injected++;
		if (!ret) {
			if (!left)
				absorbed++;
			ASSERT_EQ(0, syscall(SYS_delete_module, "vmrapl",
					     O_NONBLOCK));
			continue;
		}
		EXPECT_EQ(0, left) TH_LOG("load failed at N=%u without injection: %s",
					  n, strerror(-ret));
		if (ret != -ENOMEM)
			other++;
		EXPECT_FALSE(vr_module_loaded())
			TH_LOG("a failed load (N=%u, %s) left the module",
			       n, strerror(-ret));
		if (vr_module_loaded())
			break;
	}
	ksft_print_msg("FAULTS module load: %u points, tried N=%u..%u, %u injected: %u failed cleanly (%u not ENOMEM), %u absorbed\n",
		       total, n + 1, total + 2, injected, injected - absorbed,
		       other, absorbed);
	free(img);
	/* And a plain load works. */
	ASSERT_EQ(0, vr_load(params));
	objs_check(_metadata, "module_load", NULL);
}

/*
 * track_all's adoption of an unattached VM allocates in a kworker, where
 * fail-nth cannot reach: instead every kworker fails 25 % of its slab
 * allocations (failslab's task filter) while unattached VMs come and go.
 * Some adoptions fail part way, some succeed; once the VMs are gone and
 * injection is off, vmrapl's live objects are all 0 again (the rig's
 * kvm-hold VM has no vCPU and is never tracked).
 */
static int kworkers_make_fail(const char *v)
{
	char path[300], comm[32];
	struct dirent *d;
	DIR *dir = opendir("/proc");
	int n = 0;

	while (dir && (d = readdir(dir))) {
		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", d->d_name);
		if (read_file(path, comm, sizeof(comm)) ||
		    strncmp(comm, "kworker/", 8))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/make-it-fail", d->d_name);
		if (!write_file(path, v))
			n++;
	}
	if (dir)
		closedir(dir);
	return n;
}

#define ADOPT_ROUNDS	16
#define TIMES_START	1000000

TEST_F_TIMEOUT(faults, adoption, 240)
{
	int i, workers, auto0, adopted = 0;
	char times[32], times0[32] = "";
	struct vrg *g;

	NEED_FAIL_NTH();
	ASSERT_EQ(0, module_with_track_all(true));
	auto0 = vr_vms_count("auto");
	ASSERT_LE(0, auto0);

	read_file(FAILSLAB "/times", times0, sizeof(times0));
	ASSERT_EQ(0, write_file(FAILSLAB "/task-filter", "Y"));
	ASSERT_EQ(0, write_file(FAILSLAB "/interval", "1"));
	ASSERT_EQ(0, write_file(FAILSLAB "/times", "1000000"));	/* TIMES_START */
	workers = kworkers_make_fail("1");
	ASSERT_EQ(0, write_file(FAILSLAB "/probability", "25"));
	for (i = 0; i < ADOPT_ROUNDS; i++) {
		int ms;

		g = vrg_create(1, VRG_SPIN);
		if (!g)
			continue;	/* the VM's own kworker work failed */
		vrg_start(g);
		for (ms = 0; ms < 600; ms += 50) {
			if (vr_vms_count("auto") > auto0) {
				adopted++;
				break;
			}
			vr_sleep_ms(50);
		}
		vrg_destroy(g);
	}
	write_file(FAILSLAB "/probability", "0");
	kworkers_make_fail("0");
	write_file(FAILSLAB "/task-filter", "N");
	read_file(FAILSLAB "/times", times, sizeof(times));
	write_file(FAILSLAB "/times", times0[0] ? times0 : "1");
	ksft_print_msg("FAULTS adoption: %d rounds, %d adopted, %ld failures injected in %d kworkers\n",
		       ADOPT_ROUNDS, adopted, TIMES_START - atol(times), workers);

	for (i = 0; i < 100 && vr_vms_count("auto") > auto0; i++)
		vr_sleep_ms(100);
	EXPECT_EQ(auto0, vr_vms_count("auto"));
	/* Adoption still works. */
	g = vrg_create(1, VRG_SPIN);
	ASSERT_NE(NULL, g);
	vrg_start(g);
	for (i = 0; i < 100 && vr_vms_count("auto") <= auto0; i++)
		vr_sleep_ms(50);
	EXPECT_EQ(auto0 + 1, vr_vms_count("auto"));
	vrg_destroy(g);
	for (i = 0; i < 100 && vr_vms_count("auto") > auto0; i++)
		vr_sleep_ms(100);
	objs_check(_metadata, "adoption", NULL);
}

/*
 * Leave the module as the rig loads it, for the programs after this one
 * (last: the harness runs a fixture's tests in the order written).
 */
TEST_F(faults, restore_module)
{
	NEED_FAIL_NTH();
	ASSERT_EQ(0, module_with_track_all(true));
}

TEST_HARNESS_MAIN
