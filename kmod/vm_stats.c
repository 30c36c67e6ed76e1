// SPDX-License-Identifier: GPL-2.0
/*
 * The books of the VMs, as the VMM and the host read them: GET_STATS on a
 * VM fd, LIST_VMS and GET_VM_STATS on /dev/vmrapl, and debugfs's "vms".
 *
 * Context: process context (ioctl, debugfs read).  Each reader closes the
 * stale packages first (vr_close_all(), no lock held), then fills kernel
 * memory under vr_vm_mutex or vr_vm.lock (never both), and copies to
 * userspace only after every lock is dropped.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/sched/clock.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "vm.h"

/*
 * A GET_STATS request and its answer.  The answer is filled in kernel
 * memory under the VM's lock and copied out after every lock is dropped,
 * so a slow or faulting user buffer never holds up another VM.
 */
struct vr_stats_req {
	struct vmrapl_stats st;
	struct vmrapl_vcpu_stats *vs;
	struct vmrapl_vpkg_stats *ps;
	u32 nvs, nps;
};

/* Read and check a struct vmrapl_stats from userspace. */
static int vr_stats_in(struct vr_stats_req *r, void __user *argp)
{
	struct vmrapl_stats *st = &r->st;
	int ret;

	memset(r, 0, sizeof(*r));
	ret = vr_copy_sized(st, sizeof(*st), argp);
	if (ret)
		return ret;
	if (st->flags || !vr_zero(st->reserved, ARRAY_SIZE(st->reserved)))
		return -EINVAL;
	if ((st->nr_vcpus && !st->vcpus_ptr) ||
	    (st->nr_vpkgs && !st->vpkgs_ptr))
		return -EINVAL;
	return 0;
}

/* @eu in uJ, floored to a multiple of @step uJ. */
static u64 vr_stats_uj(u64 eu, u64 step)
{
	u64 uj = vr_eu_to_uj(eu);

	return step > 1 ? uj - uj % step : uj;
}

/*
 * Fill @r from @vm's accounts.  The caller keeps @vm alive (its fd, or a
 * reference); vm->lock keeps the topology still.  The accounts go on
 * growing meanwhile, so each row (a vCPU, or the overhead) is read once,
 * into @snap, and every figure of the answer comes from that one read:
 * the vCPUs add up to their virtual packages, the packages' overhead
 * shares to the VM's overhead, and everything to the VM's total.
 *
 * Unless @exact, the answer is no finer than unpriv_period_ms and
 * unpriv_step_uj: the rows read are kept (vm->stats_cache) and answered
 * again until the period is over, and energies are floored to the step.
 */
static int vr_stats_fill(struct vr_vm *vm, struct vr_stats_req *r,
			 bool exact)
{
	struct vmrapl_stats *st = &r->st;
	u32 i, v, rows = vm->nr_vcpus + 1;
	u64 (*snap)[VR_SNAP_NR], *ovh;
	u64 step = 1, now;
	unsigned int d;

	r->nvs = min(st->nr_vcpus, vm->nr_vcpus);
	r->nps = min_t(u32, st->nr_vpkgs, VMRAPL_MAX_VPKGS);
	if (r->nvs) {
		r->vs = kvcalloc(r->nvs, sizeof(*r->vs), GFP_KERNEL_ACCOUNT);
		if (!r->vs)
			return -ENOMEM;
	}
	if (r->nps) {
		r->ps = kcalloc(r->nps, sizeof(*r->ps), GFP_KERNEL_ACCOUNT);
		if (!r->ps)
			return -ENOMEM;
	}
	/* Per row: the energy of each domain, the busy ns, PKG static. */
	snap = kvcalloc(rows, sizeof(*snap), GFP_KERNEL_ACCOUNT);
	if (!snap)
		return -ENOMEM;
	mutex_lock(&vm->lock);
	now = local_clock();
	/* Signed, as vr_gv_due(): another CPU's clock may read behind. */
	if (!exact && vm->stats_time &&
	    (s64)(now - vm->stats_time) < (s64)vr_unpriv_period_ns()) {
		memcpy(snap, vm->stats_cache, rows * sizeof(*snap));
	} else {
		for (i = 0; i < rows; i++) {
			snap[i][VR_SNAP_STATIC] = vr_row_static(vm, i);
			for (d = 0; d < VR_NDOM; d++)
				snap[i][d] = vr_row_energy(vm, i, d);
			snap[i][VR_SNAP_NS] = vr_row_ns(vm, i);
			snap[i][VR_SNAP_STATIC] = min(snap[i][VR_SNAP_STATIC],
						      snap[i][VR_DOM_PKG]);
		}
		if (!exact) {
			memcpy(vm->stats_cache, snap, rows * sizeof(*snap));
			vm->stats_time = now;
		}
	}
	if (!exact)
		step = max(1U, READ_ONCE(vr_unpriv_step_uj));
	ovh = snap[vm->nr_vcpus];

	r->nps = min(r->nps, vm->nr_vpkgs);
	for (i = 0; i < r->nvs; i++) {
		for (d = 0; d < VR_NDOM; d++)
			r->vs[i].energy_uj[d] = vr_stats_uj(snap[i][d], step);
		r->vs[i].runtime_ns = snap[i][VR_SNAP_NS];
		r->vs[i].static_uj = vr_stats_uj(snap[i][VR_SNAP_STATIC],
						 step);
	}
	for (v = 0; v < r->nps; v++) {
		u64 s = vr_mul_div(ovh[VR_SNAP_STATIC], vm->vpkg_vcpus[v],
				   vm->nr_vcpus);

		r->ps[v].nr_vcpus = vm->vpkg_vcpus[v];
		for (i = 0; i < vm->nr_vcpus; i++)
			if (vm->vpkg[i] == v)
				s += snap[i][VR_SNAP_STATIC];
		r->ps[v].static_uj = vr_stats_uj(s, step);
		for (d = 0; d < VR_NDOM; d++) {
			/* The overhead share of a vpkg: by its vCPU count. */
			u64 e = vr_mul_div(ovh[d], vm->vpkg_vcpus[v],
					   vm->nr_vcpus);

			r->ps[v].overhead_uj[d] = vr_stats_uj(e, step);
			for (i = 0; i < vm->nr_vcpus; i++)
				if (vm->vpkg[i] == v)
					e += snap[i][d];
			r->ps[v].energy_uj[d] = vr_stats_uj(e, step);
		}
	}
	st->runtime_ns = 0;
	st->static_uj = 0;
	for (i = 0; i < vm->nr_vcpus; i++)
		st->runtime_ns += snap[i][VR_SNAP_NS];
	for (i = 0; i < rows; i++)
		st->static_uj += snap[i][VR_SNAP_STATIC];
	st->static_uj = vr_stats_uj(st->static_uj, step);
	st->overhead_static_uj = vr_stats_uj(ovh[VR_SNAP_STATIC], step);
	for (d = 0; d < VR_NDOM; d++) {
		u64 e = 0;

		for (i = 0; i < rows; i++)
			e += snap[i][d];
		st->energy_uj[d] = vr_stats_uj(e, step);
		st->overhead_uj[d] = vr_stats_uj(ovh[d], step);
	}
	st->overhead_ns = ovh[VR_SNAP_NS];
	st->nr_vcpus = vm->nr_vcpus;
	st->nr_vpkgs = vm->nr_vpkgs;
	st->size = sizeof(*st);
	mutex_unlock(&vm->lock);
	kvfree(snap);
	return 0;
}

/* Copy the answer out (after vr_stats_fill() succeeded). */
static int vr_stats_out(struct vr_stats_req *r, void __user *argp)
{
	if (r->nvs && copy_to_user(u64_to_user_ptr(r->st.vcpus_ptr), r->vs,
				   r->nvs * sizeof(*r->vs)))
		return -EFAULT;
	if (r->nps && copy_to_user(u64_to_user_ptr(r->st.vpkgs_ptr), r->ps,
				   r->nps * sizeof(*r->ps)))
		return -EFAULT;
	return copy_to_user(argp, &r->st, sizeof(r->st)) ? -EFAULT : 0;
}

static void vr_stats_free(struct vr_stats_req *r)
{
	kvfree(r->vs);
	kfree(r->ps);
}

/* VMRAPL_VM_GET_STATS on the VM fd. */
long vr_vm_get_stats(struct vr_vm *vm, void __user *argp)
{
	struct vr_stats_req r;
	int ret;

	ret = vr_stats_in(&r, argp);
	if (ret)
		return ret;
	vr_close_all(vr_vm_close_gap(vm));
	ret = vr_stats_fill(vm, &r, vm->exact);
	if (!ret)
		ret = vr_stats_out(&r, argp);
	vr_stats_free(&r);
	return ret;
}

/* A VM's totals from one read of each account row (vr_vm_totals()). */
struct vr_vm_totals {
	u64 energy[VR_NDOM];	/* every row */
	u64 ovh[VR_NDOM];	/* the overhead row */
	u64 runtime_ns;		/* the vCPU rows */
	u64 ovh_ns;
	u64 static_e;		/* PKG static, every row */
	u64 ovh_static;
};

/*
 * The accounts grow while they are read, so each row is read once and
 * every total is built from that one read: no part (the overhead, the
 * static part) can then exceed its whole.  A row's static part is read
 * before its energy and clamped to it (vr_row_static()).
 */
static void vr_vm_totals(struct vr_vm *vm, struct vr_vm_totals *t)
{
	u64 e[VR_NDOM], s, ns;
	unsigned int d;
	u32 i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i <= vm->nr_vcpus; i++) {
		s = vr_row_static(vm, i);
		for (d = 0; d < VR_NDOM; d++)
			e[d] = vr_row_energy(vm, i, d);
		ns = vr_row_ns(vm, i);
		s = min(s, e[VR_DOM_PKG]);
		for (d = 0; d < VR_NDOM; d++)
			t->energy[d] += e[d];
		t->static_e += s;
		if (i < vm->nr_vcpus) {
			t->runtime_ns += ns;
			continue;
		}
		memcpy(t->ovh, e, sizeof(t->ovh));
		t->ovh_ns = ns;
		t->ovh_static = s;
	}
}

static void vr_vm_entry(struct vr_vm *vm, struct vmrapl_vm_entry *e)
{
	struct vr_vm_totals t;
	unsigned int d;

	lockdep_assert_held(&vr_vm_mutex);
	memset(e, 0, sizeof(*e));
	e->id = vm->id;
	e->pid = vm->pid;
	e->nr_vcpus = vm->nr_vcpus;
	e->flags = vm->attached ? VMRAPL_VM_F_ATTACHED : 0;
	e->charge = READ_ONCE(vm->charge);
	vr_vm_totals(vm, &t);
	for (d = 0; d < VR_NDOM; d++) {
		e->energy_uj[d] = vr_eu_to_uj(t.energy[d]);
		e->overhead_uj[d] = vr_eu_to_uj(t.ovh[d]);
	}
	e->runtime_ns = t.runtime_ns;
	e->overhead_ns = t.ovh_ns;
	e->overhead_static_uj = vr_eu_to_uj(t.ovh_static);
	e->static_uj = vr_eu_to_uj(t.static_e);
}

/*
 * VMRAPL_LIST_VMS: every tracked VM, attached or not.  Entries are built
 * under vr_vm_mutex into kernel memory and copied out after it is dropped.
 */
long vr_list_vms(void __user *argp)
{
	struct vmrapl_vm_entry *ents = NULL;
	struct vmrapl_vm_list l;
	u32 n, total, fill, room = 0;
	struct vr_vm *vm;
	int ret;

	ret = vr_copy_sized(&l, sizeof(l), argp);
	if (ret)
		return ret;
	if (l.flags || l.reserved0 || !vr_zero(l.reserved,
					       ARRAY_SIZE(l.reserved)))
		return -EINVAL;
	if (l.nr_vms && !l.vms_ptr)
		return -EINVAL;

	vr_close_all(0);
	for (;;) {
		mutex_lock(&vr_vm_mutex);
		total = 0;
		list_for_each_entry(vm, &vr_vms, list)
			total++;
		fill = min(total, l.nr_vms);
		if (fill <= room)
			break;
		/* More VMs than room: grow outside the lock and count again. */
		mutex_unlock(&vr_vm_mutex);
		kvfree(ents);
		room = fill;
		ents = kvcalloc(room, sizeof(*ents), GFP_KERNEL_ACCOUNT);
		if (!ents)
			return -ENOMEM;
	}
	n = 0;
	list_for_each_entry(vm, &vr_vms, list) {
		if (n >= fill)
			break;
		vr_vm_entry(vm, &ents[n++]);
	}
	mutex_unlock(&vr_vm_mutex);

	if (fill && copy_to_user(u64_to_user_ptr(l.vms_ptr), ents,
				 fill * sizeof(*ents)))
		ret = -EFAULT;
	kvfree(ents);
	if (ret)
		return ret;
	l.nr_vms = total;
	l.size = sizeof(l);
	return copy_to_user(argp, &l, sizeof(l)) ? -EFAULT : 0;
}

/* VMRAPL_GET_VM_STATS: GET_STATS of any tracked VM, by its id. */
long vr_get_vm_stats(void __user *argp)
{
	struct vmrapl_vm_query q;
	struct vr_vm *found;
	struct vr_stats_req r;
	void __user *sp;
	int ret;

	ret = vr_copy_sized(&q, sizeof(q), argp);
	if (ret)
		return ret;
	if (q.flags || !vr_zero(q.reserved, ARRAY_SIZE(q.reserved)) ||
	    !q.stats_ptr)
		return -EINVAL;
	sp = u64_to_user_ptr(q.stats_ptr);
	ret = vr_stats_in(&r, sp);
	if (ret)
		return ret;

	vr_close_all(0);
	/* Pinned, and the list let go before the VM's lock is taken. */
	found = vr_vm_get_id(q.id);
	ret = -ENOENT;
	if (found) {
		ret = vr_stats_fill(found, &r, true);
		vr_vm_put(found);
	}
	if (!ret)
		ret = vr_stats_out(&r, sp);
	vr_stats_free(&r);
	return ret;
}

void vr_vm_debugfs_show(struct seq_file *m)
{
	struct vr_vm *vm;

	mutex_lock(&vr_vm_mutex);
	list_for_each_entry(vm, &vr_vms, list) {
		struct vr_vm_totals t;

		vr_vm_totals(vm, &t);
		seq_printf(m, "vm %llu pid %d comm %s %s vcpus %u charge %s pkg_eu %llu core_eu %llu dram_eu %llu overhead_eu %llu runtime_ns %llu overhead_ns %llu pkg_static_eu %llu\n",
			   vm->id, vm->pid, vm->comm,
			   vm->attached ? "attached" : "auto", vm->nr_vcpus,
			   vm->charge == VMRAPL_CHARGE_GUEST ? "guest" : "thread",
			   t.energy[0], t.energy[1], t.energy[2],
			   t.ovh[VR_DOM_PKG], t.runtime_ns, t.ovh_ns,
			   t.static_e);
	}
	mutex_unlock(&vr_vm_mutex);
}

/* debugfs "checks": what the layer's self-checks counted (vm.h). */
void vr_vm_debugfs_checks(struct seq_file *m)
{
	mutex_lock(&vr_vm_mutex);
	seq_printf(m, "key_early_moves %lu\n", vr_key_early_moves);
	mutex_unlock(&vr_vm_mutex);
	seq_printf(m, "release_stale %lu\n", READ_ONCE(vr_release_stale));
}
