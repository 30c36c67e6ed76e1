// SPDX-License-Identifier: GPL-2.0
/*
 * Keep one KVM VM (no vCPU) alive for the whole rig run.
 *
 * KVM turns the scheduler's preempt-notifier static key on when the first
 * VM is created and off when the last one goes, which patches
 * finish_task_switch() while every CPU runs it.  Under QEMU's TCG that
 * cross-modifying code ends, now and then, in an "int3" oops or a dead
 * guest after the tests' hundreds of VM creations.  With this VM the key
 * stays on.  It has no vCPU, so it never enters a guest and vmrapl never
 * tracks it.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/kvm.h>

int main(void)
{
	int kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	int vm = kvm < 0 ? -1 : ioctl(kvm, KVM_CREATE_VM, 0);

	if (vm < 0) {
		perror("kvm-hold");
		return 1;
	}
	for (;;)
		pause();
}
