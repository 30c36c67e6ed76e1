// SPDX-License-Identifier: GPL-2.0
/*
 * A module that is not KVM making a file that looks like a KVM VM fd: on
 * anon_inodefs, named "kvm-vm", its private_data a struct kvm whose mm is
 * the caller's.  Everything vmrapl checked before it also required the
 * file's operations to be kvm.ko's; ATTACH_VM must refuse it (EINVAL).
 *
 * /dev/vr_fakekvm, ioctl VR_FAKEKVM_CREATE: returns such a file's fd.
 * Test only: the rig loads it for kvmfd.fake_kvm_vm_file and unloads it.
 */
#include <linux/anon_inodes.h>
#include <linux/fs.h>
#include <linux/kvm_host.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>

#define VR_FAKEKVM_CREATE	_IO(0xfe, 0x01)

static int vr_fake_release(struct inode *inode, struct file *file)
{
	kfree(file->private_data);
	return 0;
}

static const struct file_operations vr_fake_vm_fops = {
	.owner = THIS_MODULE,
	.release = vr_fake_release,
	.llseek = noop_llseek,
};

static long vr_fake_ioctl(struct file *file, unsigned int cmd,
			  unsigned long arg)
{
	struct kvm *kvm;
	int fd;

	if (cmd != VR_FAKEKVM_CREATE)
		return -ENOTTY;
	kvm = kzalloc(sizeof(*kvm), GFP_KERNEL);
	if (!kvm)
		return -ENOMEM;
	kvm->mm = current->mm;
	fd = anon_inode_getfd("kvm-vm", &vr_fake_vm_fops, kvm,
			      O_RDWR | O_CLOEXEC);
	if (fd < 0)
		kfree(kvm);
	return fd;
}

static const struct file_operations vr_fake_dev_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = vr_fake_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice vr_fake_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "vr_fakekvm",
	.fops = &vr_fake_dev_fops,
	.mode = 0600,
};

module_misc_device(vr_fake_dev);

MODULE_DESCRIPTION("vmrapl test: a file that looks like a KVM VM fd");
MODULE_LICENSE("GPL");
