// SPDX-License-Identifier: GPL-2.0
/*
 * No user copy under a vmrapl lock: one VMM whose buffer faults forever
 * must not hold up anybody else.
 *
 * Regression test: SET_TOPOLOGY (memdup_user), GET_STATE and SET_STATE
 * used to copy from and to userspace under the VM's lock, and the host's
 * GET_VM_STATS took vr_vm_mutex and then that lock.  A buffer stalled by
 * userfaultfd (or FUSE) therefore parked GET_VM_STATS with vr_vm_mutex
 * held, and every close of any VM fd, ATTACH, LIST_VMS and rmmod hung
 * behind it.  Here one thread stalls each of those ioctls on a
 * userfaultfd page for STALL_S seconds while the test lists the VMs, reads
 * GET_VM_STATS of the stalled VM and closes another VM fd: each must
 * finish within a second.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "libvmrapl.h"
#include "libvmrapl-host.h"
#include "vr_kvm.h"

/*
 * Longer than the 0.3 s before the other calls and their three seconds
 * (FAST_NS each) at most, so that a call blocked behind the stalled one
 * returns only at the release, seconds late, and fails.
 */
#define STALL_S		5
#define FAST_NS		1000000000ull	/* what "finishes at once" means */

struct stall_call {
	int fd;			/* the VM fd */
	unsigned long cmd;
	void *arg;
	long ret;
	int err;
	uint64_t ns;		/* how long the call took */
};

static void *stall_thread(void *p)
{
	struct stall_call *c = p;
	uint64_t t = vr_now_ns();

	c->ret = ioctl(c->fd, c->cmd, c->arg);
	c->err = errno;
	c->ns = vr_now_ns() - t;
	return NULL;
}

/* Two anonymous pages whose first touch waits on @uffd until it closes. */
static void *uffd_area(int *uffd)
{
	long page = sysconf(_SC_PAGESIZE);
	struct uffdio_register reg = { 0 };
	struct uffdio_api api = { .api = UFFD_API };
	void *area;

	*uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (*uffd < 0 || ioctl(*uffd, UFFDIO_API, &api))
		return NULL;
	area = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		return NULL;
	reg.range.start = (unsigned long)area;
	reg.range.len = 2 * page;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(*uffd, UFFDIO_REGISTER, &reg))
		return NULL;
	return area;
}

/* The id of the most recently attached VM. */
static uint64_t newest_vm_id(int devfd)
{
	struct vmrapl_vm_entry *e = NULL;
	uint64_t id = 0;
	int i, n;

	n = vmrapl_host_list_vms(devfd, &e);
	for (i = 0; i < n; i++)
		if (e[i].id > id)
			id = e[i].id;
	free(e);
	return id;
}

FIXTURE(stall) {
	struct vrg *g1, *g2;
	struct vmrapl *dev;
	struct vmrapl_vm *vm1, *vm2;
	uint64_t id1;
	int uffd;
	void *area;
};

FIXTURE_SETUP(stall)
{
	self->g1 = vrg_create(2, VRG_HLT);
	self->g2 = vrg_create(1, VRG_HLT);
	ASSERT_TRUE(self->g1 && self->g2);
	ASSERT_EQ(0, vmrapl_open(NULL, &self->dev));
	ASSERT_EQ(0, vmrapl_attach(self->dev, vrg_kvm_fd(self->g1), 2,
				   VMRAPL_REGSET_INTEL, 0, &self->vm1));
	self->id1 = newest_vm_id(vmrapl_fd(self->dev));
	ASSERT_NE(0, self->id1);
	ASSERT_EQ(0, vmrapl_attach(self->dev, vrg_kvm_fd(self->g2), 1,
				   VMRAPL_REGSET_INTEL, 0, &self->vm2));
	self->area = uffd_area(&self->uffd);
	if (!self->area)
		SKIP(return, "userfaultfd: %s", strerror(errno));
}

FIXTURE_TEARDOWN(stall)
{
	if (self->vm2)
		vmrapl_detach(self->vm2);
	if (self->vm1)
		vmrapl_detach(self->vm1);
	vmrapl_close(self->dev);
	vrg_destroy(self->g2);
	vrg_destroy(self->g1);
}

/* Ends the stall after STALL_S seconds, whatever the test is doing. */
static void *release_thread(void *p)
{
	int *uffd = p;

	sleep(STALL_S);
	close(*uffd);
	return NULL;
}

/*
 * While @c stalls on the userfaultfd page: LIST_VMS, GET_VM_STATS of the
 * stalled VM and the close of the other VM's fd each finish at once.
 * After STALL_S seconds the page is released (the userfaultfd closes)
 * and @c returns.
 */
static void others_go_on(struct __test_metadata *_metadata,
			 FIXTURE_DATA(stall) *self, struct stall_call *c)
{
	struct vmrapl_vcpu_stats *vs = NULL;
	struct vmrapl_vm_entry *e = NULL;
	struct vmrapl_stats st;
	pthread_t th, rel;
	uint64_t t;
	int n;

	c->fd = vmrapl_vm_fd(self->vm1);
	ASSERT_EQ(0, pthread_create(&rel, NULL, release_thread, &self->uffd));
	ASSERT_EQ(0, pthread_create(&th, NULL, stall_thread, c));
	vr_sleep_ms(300);	/* let it reach the fault */

	t = vr_now_ns();
	n = vmrapl_host_list_vms(vmrapl_fd(self->dev), &e);
	t = vr_now_ns() - t;
	free(e);
	EXPECT_EQ(2, n);
	EXPECT_LT(t, FAST_NS) TH_LOG("LIST_VMS took %.1f s", t / 1e9);

	t = vr_now_ns();
	EXPECT_EQ(2, vmrapl_host_vm_stats(vmrapl_fd(self->dev), self->id1,
					  &st, &vs));
	t = vr_now_ns() - t;
	free(vs);
	EXPECT_LT(t, FAST_NS) TH_LOG("GET_VM_STATS took %.1f s", t / 1e9);

	t = vr_now_ns();
	vmrapl_detach(self->vm2);	/* closes the other VM's fd */
	self->vm2 = NULL;
	t = vr_now_ns() - t;
	EXPECT_LT(t, FAST_NS) TH_LOG("closing another VM fd took %.1f s",
				     t / 1e9);

	pthread_join(th, NULL);
	pthread_join(rel, NULL);
	/* The call did wait for the page: the test stalled it. */
	EXPECT_GE(c->ns, (uint64_t)(STALL_S - 1) * 1000000000ull);
	TH_LOG("stalled call returned %ld (%s) after %.1f s", c->ret,
	       c->ret ? strerror(c->err) : "ok", c->ns / 1e9);
}

TEST_F(stall, set_topology)
{
	struct vmrapl_topology t = {
		.size = sizeof(t),
		.nr_vcpus = 2,
		.vpkg_ptr = (uintptr_t)self->area,
	};
	struct stall_call c = { .cmd = VMRAPL_VM_SET_TOPOLOGY, .arg = &t };

	others_go_on(_metadata, self, &c);
}

TEST_F(stall, set_state)
{
	struct vmrapl_state s = {
		.size = sizeof(s),
		.version = VMRAPL_STATE_VERSION,
		.esu = VMRAPL_DEFAULT_ESU,
		.nr_vpkgs = 1,
		.nr_vcpus = 2,
		.vpkgs_ptr = (uintptr_t)self->area,
		.vcpus_ptr = (uintptr_t)self->area + 2048,
	};
	struct stall_call c = { .cmd = VMRAPL_VM_SET_STATE, .arg = &s };

	others_go_on(_metadata, self, &c);
}

TEST_F(stall, get_state)
{
	struct vmrapl_state s = {
		.size = sizeof(s),
		.nr_vpkgs = 1,
		.nr_vcpus = 2,
		.vpkgs_ptr = (uintptr_t)self->area,
		.vcpus_ptr = (uintptr_t)self->area + 2048,
	};
	struct stall_call c = { .cmd = VMRAPL_VM_GET_STATE, .arg = &s };

	others_go_on(_metadata, self, &c);
}

TEST_HARNESS_MAIN
