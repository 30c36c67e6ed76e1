// SPDX-License-Identifier: GPL-2.0
/*
 * ATTACH_VM takes a KVM VM fd of the caller's own process, and nothing
 * else.  Since upstream restricted file_is_kvm() to kvm-amd and kvm-intel
 * (v6.18), vmrapl proves it without that export (kmod/vm.c,
 * vr_kvm_of_file(); Documentation/design.rst): these tests run on every
 * kernel of the window and show each rejection.  Every rejected fd gets
 * EINVAL, and nothing of it is attached (LIST_VMS does not grow).
 *
 * Rejected: files that are not KVM's (a regular file, a pipe, a memfd,
 * /dev/null, another anon-inode file such as an eventfd, vmrapl's own VM
 * fd, /dev/vmrapl), /dev/kvm itself, a vCPU fd, a KVM device fd, a
 * guest_memfd (where the kernel offers one), and the VM fd of another
 * process: alive, and after that process has exited (the VM on its way
 * out, kept only by the fd passed over a socket).
 *
 * Regression: any anon-inode file named "kvm-vm" passed, so another
 * module (or a future part of the kernel) making such a file would have
 * had its private_data taken for a struct kvm.  The file's operations must
 * now be kvm.ko's: the rig's vr_fakekvm.ko (selftests/fakekvm) makes one
 * with a struct kvm of the caller's mm, and it is refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/kvm.h>

#include "kselftest_harness.h"
#include "libvmrapl-host.h"
#include "vr_ioctl.h"
#include "vr_module.h"

/* From Linux 6.8's uapi (the host's headers may be older). */
#ifndef KVM_CAP_GUEST_MEMFD
#define KVM_CAP_GUEST_MEMFD	234
#endif
#ifndef KVM_CREATE_GUEST_MEMFD
struct kvm_create_guest_memfd {
	__u64 size;
	__u64 flags;
	__u64 reserved[6];
};
#define KVM_CREATE_GUEST_MEMFD	_IOWR(KVMIO, 0xd4, struct kvm_create_guest_memfd)
#endif
#define VR_GUEST_MEMFD_FLAG_MMAP	(1ULL << 0)

static int attach_raw(int dev, int fd)
{
	struct vmrapl_attach a = {
		.size = sizeof(a), .kvm_fd = fd, .nr_vcpus = 1,
		.regset = VMRAPL_REGSET_INTEL,
	};
	int vfd = ioctl(dev, VMRAPL_ATTACH_VM, &a);

	if (vfd >= 0) {
		close(vfd);
		return vfd;
	}
	return -errno;
}

/* Tracked VMs (attached or by track_all), from LIST_VMS. */
static int nr_vms(int dev)
{
	struct vmrapl_vm_entry *e = NULL;
	int n = vmrapl_host_list_vms(dev, &e);

	free(e);
	return n;
}

static int new_vm(int kvm)
{
	return ioctl(kvm, KVM_CREATE_VM, 0);
}

FIXTURE(kvmfd) {
	int dev, kvm, vm;
};

FIXTURE_SETUP(kvmfd)
{
	/* track_all off: only an attach could add to LIST_VMS. */
	ASSERT_EQ(0, vr_reload("track_all=0"));
	self->dev = vr_open_dev();
	ASSERT_LE(0, self->dev);
	self->kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->kvm);
	self->vm = new_vm(self->kvm);
	ASSERT_LE(0, self->vm);
}

FIXTURE_TEARDOWN(kvmfd)
{
	close(self->vm);
	close(self->kvm);
	close(self->dev);
}

/* The positive control: the VM fd itself attaches. */
TEST_F(kvmfd, vm_fd_attaches)
{
	EXPECT_LE(0, attach_raw(self->dev, self->vm));
}

TEST_F(kvmfd, files_that_are_not_kvm)
{
	int pipefd[2], efd, mfd, tfd, nfd, vfd;
	struct vmrapl_attach a = {
		.size = sizeof(a), .kvm_fd = self->vm, .nr_vcpus = 1,
		.regset = VMRAPL_REGSET_INTEL,
	};
	char tmpl[] = "/tmp/vmrapl-kvmfd.XXXXXX";

	ASSERT_EQ(0, pipe(pipefd));
	efd = eventfd(0, EFD_CLOEXEC);	/* an anon-inode file, not KVM's */
	ASSERT_LE(0, efd);
	mfd = memfd_create("kvm-vm", MFD_CLOEXEC);	/* a name userspace chose */
	ASSERT_LE(0, mfd);
	tfd = mkstemp(tmpl);
	ASSERT_LE(0, tfd);
	unlink(tmpl);
	nfd = open("/dev/null", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, nfd);

	EXPECT_EQ(-EINVAL, attach_raw(self->dev, pipefd[0]));
	EXPECT_EQ(-EINVAL, attach_raw(self->dev, efd));
	EXPECT_EQ(-EINVAL, attach_raw(self->dev, mfd));
	EXPECT_EQ(-EINVAL, attach_raw(self->dev, tfd));
	EXPECT_EQ(-EINVAL, attach_raw(self->dev, nfd));
	EXPECT_EQ(-EINVAL, attach_raw(self->dev, self->dev));
	EXPECT_EQ(-EINVAL, attach_raw(self->dev, self->kvm));	/* /dev/kvm */
	/* vmrapl's own VM fd is an anon-inode file too. */
	vfd = ioctl(self->dev, VMRAPL_ATTACH_VM, &a);
	ASSERT_LE(0, vfd);
	EXPECT_EQ(-EINVAL, attach_raw(self->dev, vfd));
	close(vfd);
	EXPECT_EQ(0, nr_vms(self->dev));

	close(pipefd[0]);
	close(pipefd[1]);
	close(efd);
	close(mfd);
	close(tfd);
	close(nfd);
}

TEST_F(kvmfd, vcpu_fd)
{
	int vcpu = ioctl(self->vm, KVM_CREATE_VCPU, 0);

	ASSERT_LE(0, vcpu);
	EXPECT_EQ(-EINVAL, attach_raw(self->dev, vcpu));
	EXPECT_EQ(0, nr_vms(self->dev));
	close(vcpu);
}

TEST_F(kvmfd, device_fd)
{
	struct kvm_create_device cd = { .type = KVM_DEV_TYPE_VFIO };

	if (ioctl(self->vm, KVM_CREATE_DEVICE, &cd))
		SKIP(return, "KVM_CREATE_DEVICE(VFIO): %s (no KVM device on this kernel)",
		     strerror(errno));
	EXPECT_EQ(-EINVAL, attach_raw(self->dev, cd.fd));
	EXPECT_EQ(0, nr_vms(self->dev));
	close(cd.fd);
}

TEST_F(kvmfd, guest_memfd)
{
	struct kvm_create_guest_memfd gm = { .size = 1 << 20 };
	int fd;

	if (ioctl(self->vm, KVM_CHECK_EXTENSION, KVM_CAP_GUEST_MEMFD) <= 0)
		SKIP(return, "no guest_memfd for this VM type on this kernel");
	fd = ioctl(self->vm, KVM_CREATE_GUEST_MEMFD, &gm);
	if (fd < 0) {
		/* A non-CoCo VM's guest_memfd must be mappable. */
		gm.flags = VR_GUEST_MEMFD_FLAG_MMAP;
		fd = ioctl(self->vm, KVM_CREATE_GUEST_MEMFD, &gm);
	}
	ASSERT_LE(0, fd) TH_LOG("KVM_CREATE_GUEST_MEMFD: %s", strerror(errno));
	EXPECT_EQ(-EINVAL, attach_raw(self->dev, fd));
	EXPECT_EQ(0, nr_vms(self->dev));
	close(fd);
}

/* A child makes a VM and sends its fd over @sock; it exits when told. */
static void vm_sender(int sock, int go)
{
	char buf[CMSG_SPACE(sizeof(int))] = { 0 }, c = 'v';
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = buf, .msg_controllen = sizeof(buf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
	int kvm = open("/dev/kvm", O_RDWR), vm = kvm < 0 ? -1 : new_vm(kvm);

	if (vm < 0)
		_exit(2);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &vm, sizeof(int));
	if (sendmsg(sock, &msg, 0) != 1)
		_exit(3);
	/* Wait for the word to exit (or for the parent to go). */
	if (read(go, &c, 1) < 0)
		_exit(4);
	_exit(0);
}

static int recv_fd(int sock)
{
	char buf[CMSG_SPACE(sizeof(int))] = { 0 }, c;
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = buf, .msg_controllen = sizeof(buf),
	};
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &msg, 0) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

TEST_F(kvmfd, vm_of_another_process)
{
	int sv[2], go[2], fd, status;
	pid_t pid;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(sv[0]);
		close(go[1]);
		vm_sender(sv[1], go[0]);
	}
	close(sv[1]);
	close(go[0]);
	fd = recv_fd(sv[0]);
	ASSERT_LE(0, fd);

	/* Its process is alive: KVM would refuse our ioctls on it. */
	EXPECT_EQ(-EIO, ioctl(fd, KVM_CHECK_EXTENSION, KVM_CAP_USER_MEMORY) < 0 ? -errno : 0);
	EXPECT_EQ(-EINVAL, attach_raw(self->dev, fd));

	/* Its process has exited: our fd is all that keeps the VM. */
	close(go[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ(-EINVAL, attach_raw(self->dev, fd));
	EXPECT_EQ(0, nr_vms(self->dev));
	close(fd);
	close(sv[0]);
}

TEST_F(kvmfd, fake_kvm_vm_file)
{
	int fake, fd;

	if (access("/vr_fakekvm.ko", R_OK))
		SKIP(return, "no /vr_fakekvm.ko in this rig (make testmod)");
	ASSERT_EQ(0, system("insmod /vr_fakekvm.ko"));
	fake = open("/dev/vr_fakekvm", O_RDWR);
	ASSERT_LE(0, fake);
	fd = ioctl(fake, _IO(0xfe, 0x01));
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, attach_raw(self->dev, fd));
	EXPECT_EQ(0, nr_vms(self->dev));
	close(fd);
	close(fake);
	EXPECT_EQ(0, system("rmmod vr_fakekvm"));
}

TEST_HARNESS_MAIN
