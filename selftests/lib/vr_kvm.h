/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Everything the vmrapl selftests share, one header per concern:
 *
 *   vr_guest.h    tiny KVM guests (vrg_*) and a VM in its own process (vrp_*)
 *   vr_ioctl.h    raw /dev/vmrapl ioctls on plain fds (why not libvmrapl: there)
 *   vr_module.h   insmod / rmmod of vmrapl in the rig
 *   vr_debugfs.h  vmrapl's and KVM's debugfs: books, VMs, plausible energy
 *   vr_mem.h      meminfo, slabinfo and settling for the leak tests
 *   vr_cpu.h      a CPU's package, CPU hotplug, pinning
 *   vr_time.h     clocks, sleeps, a task's CPU time
 *   vr_cmd.h      run a command and keep its output
 *   vr_json.h     numbers out of the tools' JSON output
 *
 * Every test also links libvmrapl (libvmrapl.h) and libvmrapl-host
 * (libvmrapl-host.h: runtime parameters, names of the ABI's enums, the
 * host-wide reads).
 */
#ifndef _VR_KVM_H
#define _VR_KVM_H

#include <linux/vmrapl.h>

#include "vr_cmd.h"
#include "vr_cpu.h"
#include "vr_debugfs.h"
#include "vr_guest.h"
#include "vr_ioctl.h"
#include "vr_json.h"
#include "vr_mem.h"
#include "vr_module.h"
#include "vr_time.h"

#endif /* _VR_KVM_H */
