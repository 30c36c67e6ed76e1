// SPDX-License-Identifier: GPL-2.0
/*
 * vmrapl: per-VM virtual RAPL energy counters for KVM.
 *
 * Module init/exit and the /dev/vmrapl character device.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpumask.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/uaccess.h>

#include "vmrapl.h"

static long vr_dev_get_info(void __user *argp)
{
	struct vmrapl_info info = {
		.abi_version = VMRAPL_ABI_VERSION,
		.nr_packages = vr_topo.nr_pkgs,
		.nr_cpus = num_possible_cpus(),
	};

	if (copy_to_user(argp, &info, sizeof(info)))
		return -EFAULT;
	return 0;
}

static long vr_dev_ioctl(struct file *file, unsigned int cmd,
			 unsigned long arg)
{
	void __user *argp = (void __user *)arg;

	switch (cmd) {
	case VMRAPL_GET_INFO:
		return vr_dev_get_info(argp);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations vr_dev_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = vr_dev_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice vr_miscdev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = VMRAPL_DEVICE_NAME,
	.fops = &vr_dev_fops,
	.mode = 0600,
};

static int __init vmrapl_init(void)
{
	int ret;

	ret = vr_topo_init();
	if (ret)
		return ret;

	ret = misc_register(&vr_miscdev);
	if (ret)
		goto err_topo;

	pr_info("version %s loaded: %u packages\n", VMRAPL_VERSION,
		vr_topo.nr_pkgs);
	return 0;

err_topo:
	vr_topo_exit();
	return ret;
}

static void __exit vmrapl_exit(void)
{
	misc_deregister(&vr_miscdev);
	vr_topo_exit();
}

module_init(vmrapl_init);
module_exit(vmrapl_exit);

MODULE_DESCRIPTION("Per-VM virtual RAPL energy counters for KVM");
MODULE_AUTHOR("The vmrapl developers");
MODULE_LICENSE("GPL");
MODULE_VERSION(VMRAPL_VERSION);
MODULE_INFO(vmrapl_git, VMRAPL_VERSION);
