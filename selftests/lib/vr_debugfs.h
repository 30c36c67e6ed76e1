/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What vmrapl and KVM show in debugfs: the packages' books
 * (/sys/kernel/debug/vmrapl/packages), the tracked VMs (.../vmrapl/vms)
 * and KVM's VM directories (/sys/kernel/debug/kvm).
 */
#ifndef _VR_DEBUGFS_H
#define _VR_DEBUGFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* debugfs books of one package and domain, in eu (2^-24 J). */
struct vr_books {
	uint64_t sampled, static_e, dynamic, tracked, host, idle, lost;
	uint64_t samples, resets, wraps, overruns, busy_ns;
	int online;
};
int vr_read_books(int pkg, const char *dom, struct vr_books *b);
/* Both packages' PKG books; -errno when one cannot be read. */
int vr_read_books2(struct vr_books b[2]);
bool vr_books_conserve(const struct vr_books *b);
/* Both vmrapl debugfs files to stderr, "# " before each line. */
void vr_dump_debugfs(void);

/*
 * The most energy, in eu (2^-24 J), that @npkg packages can draw in @ns
 * at the module's default max_power_w (500 W), with a 25 % and 1 J
 * margin.  Anything above it is not energy but an accounting error.
 */
#define VR_MAX_POWER_W	500
uint64_t vr_max_eu(uint64_t ns, int npkg);

/* Energy (uJ, PKG, overhead included) and overhead of the VM of @pid. */
int vrp_energy(pid_t pid, double *uj, double *ovh_uj, bool *attached);
/* Lines of /sys/kernel/debug/vmrapl/vms of @kind ("attached", "auto", NULL: all). */
int vr_vms_count(const char *kind);

/*
 * KVM VMs alive in the whole system: KVM keeps a debugfs directory
 * "<pid>-<fd>" per VM under /sys/kernel/debug/kvm from KVM_CREATE_VM
 * until the VM is destroyed.  -errno when debugfs has no kvm directory.
 */
int vr_kvm_vm_count(void);

/*
 * The module's live objects (/sys/kernel/debug/vmrapl/objects, one
 * "name count" per line).  Returns 0 when every count is zero; else the
 * number of kinds that are not, and @why (of @len bytes) names them, as
 * "vms 2 keys 4".  -errno when the file cannot be read.
 */
int vr_objects_left(char *why, size_t len);
/*
 * vr_objects_left() until it reports nothing left (VMs released by the
 * tracking work or an RCU grace period need a moment), for up to @ms.
 */
int vr_objects_wait_zero(int ms, char *why, size_t len);
/*
 * A figure of debugfs vmrapl/checks ("key_early_moves"): what the
 * module's self-checks counted, 0 unless vmrapl has a bug; -errno when it
 * cannot be read, -ENOENT when the module has no such check.
 */
long long vr_debugfs_check(const char *name);
/*
 * Whether the kernel log holds a line containing @needle (the module
 * reports "vmrapl: leaked ..." at unload when a count is not zero).
 */
bool vr_kmsg_has(const char *needle);
/*
 * The last @last lines of the kernel log that contain @needle, to stderr
 * as "# " comments (a test's diagnosis of what the module said).
 */
void vr_kmsg_print(const char *needle, unsigned int last);

#endif /* _VR_DEBUGFS_H */
