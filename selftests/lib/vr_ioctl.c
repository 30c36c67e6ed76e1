// SPDX-License-Identifier: GPL-2.0
/* Raw /dev/vmrapl ioctls of the vmrapl selftests (see vr_ioctl.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "vr_ioctl.h"

int vr_open_dev(void)
{
	return open("/dev/vmrapl", O_RDWR | O_CLOEXEC);
}

int vr_get_info(struct vmrapl_info *info)
{
	int fd = vr_open_dev(), ret;

	if (fd < 0)
		return -errno;
	ret = ioctl(fd, VMRAPL_GET_INFO, info) ? -errno : 0;
	close(fd);
	return ret;
}

int vr_attach(int devfd, int kvm_fd, int nr_vcpus, int regset, int esu)
{
	struct vmrapl_attach a = {
		.size = sizeof(a),
		.kvm_fd = kvm_fd,
		.nr_vcpus = nr_vcpus,
		.regset = regset,
		.esu = esu,
	};
	int fd = ioctl(devfd, VMRAPL_ATTACH_VM, &a);

	return fd < 0 ? -errno : fd;
}

int vr_get_stats(int vmfd, struct vmrapl_stats *st,
		 struct vmrapl_vcpu_stats *vcpus, int nr_vcpus)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	st->nr_vcpus = vcpus ? nr_vcpus : 0;
	st->vcpus_ptr = (uintptr_t)vcpus;
	return ioctl(vmfd, VMRAPL_VM_GET_STATS, st) ? -errno : 0;
}

int vr_set_policy(int vmfd, uint32_t flags, uint32_t charge,
		  uint32_t period_us)
{
	struct vmrapl_policy p = {
		.flags = flags,
		.charge = charge,
		.guest_period_us = period_us,
	};

	return ioctl(vmfd, VMRAPL_VM_SET_POLICY, &p) ? -errno : 0;
}

int vr_inject(int pkg, int dom, uint64_t units, bool set)
{
	struct vmrapl_test_inject inj = {
		.flags = set ? VMRAPL_INJECT_F_SET : 0,
		.package = pkg,
		.domain = dom,
		.value = units,
	};
	int fd = vr_open_dev(), ret;

	if (fd < 0)
		return -errno;
	ret = ioctl(fd, VMRAPL_TEST_INJECT, &inj) ? -errno : 0;
	close(fd);
	return ret;
}
