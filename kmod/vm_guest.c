// SPDX-License-Identifier: GPL-2.0
/*
 * The guest view: what a VM's guest reads from its RAPL MSRs, through
 * VMRAPL_VM_READ_MSR or the read-only mmap page, and how it is carried
 * across a migration (GET_STATE/SET_STATE) and regrouped into virtual
 * packages (SET_TOPOLOGY).
 *
 * Context: the guest-view arrays are only touched under the VM's raw
 * gv_lock, with interrupts disabled; nothing under gv_lock may sleep,
 * allocate or call into the engine.  The kvm_exit probe (vm_probe.c) only
 * calls vr_gv_kick(), which queues vm->gv_work: the publication itself
 * runs in that worker.  The ioctl entry points run in process context:
 * they copy from and to userspace and call vr_close_all() outside
 * gv_lock, and SET_TOPOLOGY, GET_STATE and SET_STATE run under vr_vm.lock
 * (vm.c takes it).
 *
 * The registers come from one table, the uapi's VMRAPL_REGISTERS.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <asm/msr-index.h>
#include <linux/mm.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "vm.h"

/* Every guest-visible register: the uapi's one table. */
static const struct vmrapl_reg vr_regs[] = VMRAPL_REGISTERS;

/* The uapi's numbers are the architectural ones (asm/msr-index.h). */
static void __maybe_unused vr_regs_check(void)
{
	BUILD_BUG_ON(VMRAPL_MSR_RAPL_POWER_UNIT != MSR_RAPL_POWER_UNIT);
	BUILD_BUG_ON(VMRAPL_MSR_PKG_POWER_LIMIT != MSR_PKG_POWER_LIMIT);
	BUILD_BUG_ON(VMRAPL_MSR_PKG_ENERGY_STATUS != MSR_PKG_ENERGY_STATUS);
	BUILD_BUG_ON(VMRAPL_MSR_PKG_POWER_INFO != MSR_PKG_POWER_INFO);
	BUILD_BUG_ON(VMRAPL_MSR_DRAM_ENERGY_STATUS != MSR_DRAM_ENERGY_STATUS);
	BUILD_BUG_ON(VMRAPL_MSR_PP0_ENERGY_STATUS != MSR_PP0_ENERGY_STATUS);
	BUILD_BUG_ON(VMRAPL_MSR_AMD_RAPL_POWER_UNIT != MSR_AMD_RAPL_POWER_UNIT);
	BUILD_BUG_ON(VMRAPL_MSR_AMD_CORE_ENERGY != MSR_AMD_CORE_ENERGY_STATUS);
	BUILD_BUG_ON(VMRAPL_MSR_AMD_PKG_ENERGY != MSR_AMD_PKG_ENERGY_STATUS);
}

/* The register @msr of @vm's register set, if the guest sees it. */
const struct vmrapl_reg *vr_reg_find(struct vr_vm *vm, u64 msr)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(vr_regs); i++) {
		const struct vmrapl_reg *r = &vr_regs[i];

		if (r->regset == vm->regset && r->msr == msr)
			return !r->dom_mask || (vm->domains & r->dom_mask) ?
			       r : NULL;
	}
	return NULL;
}

static inline u64 *vr_gv_pkg(struct vr_vm *vm, u64 *base, u32 v,
			     unsigned int d)
{
	return &base[v * VR_NDOM + d];
}

static inline u64 *vr_gv_core(struct vr_vm *vm, u64 *base, u32 i)
{
	return &base[vm->nr_vpkgs * VR_NDOM + i];
}

static inline u32 vr_gv_len(struct vr_vm *vm)
{
	return vm->nr_vpkgs * VR_NDOM + vm->nr_vcpus;
}

static u64 vr_unit_msr(struct vr_vm *vm)
{
	return VR_UNIT_POWER | (u64)vm->esu << 8 | VR_UNIT_TIME << 16;
}

/* Thermal spec power scaled to the VM's share of the host, 1/8 W units. */
static u64 vr_power_info_msr(struct vr_vm *vm)
{
	u64 w = (u64)vr_max_power_w * vr_topo.nr_pkgs * vm->nr_vcpus /
		max(1U, num_online_cpus());

	return min_t(u64, max_t(u64, w, 1) << VR_UNIT_POWER, 0x7fff);
}

/*
 * The value of register @reg (VMRAPL_REG_*) for vCPU @i, from the guest
 * view: what READ_MSR answers and what the page shows.  gv_lock held.
 */
static u64 vr_gv_reg(struct vr_vm *vm, u32 reg, u32 i)
{
	u32 v = vm->vpkg[i];

	switch (reg) {
	case VMRAPL_REG_UNIT:
		return vr_unit_msr(vm);
	case VMRAPL_REG_POWER_LIMIT:
		return vr_power_limit_msr(vm);
	case VMRAPL_REG_POWER_INFO:
		return vr_power_info_msr(vm);
	case VMRAPL_REG_PKG:
		return *vr_gv_pkg(vm, vm->gv, v, VMRAPL_DOM_PKG) & U32_MAX;
	case VMRAPL_REG_DRAM:
		return *vr_gv_pkg(vm, vm->gv, v, VMRAPL_DOM_DRAM) & U32_MAX;
	case VMRAPL_REG_CORE:
		/* AMD's core counter is per core; Intel's PP0 per package. */
		if (vm->regset == VMRAPL_REGSET_AMD)
			return *vr_gv_core(vm, vm->gv, i) & U32_MAX;
		return *vr_gv_pkg(vm, vm->gv, v, VMRAPL_DOM_CORE) & U32_MAX;
	}
	return 0;
}

/* @eu in the guest's units, in whole steps of gv_quant. */
static u64 vr_gv_units(struct vr_vm *vm, u64 eu)
{
	u64 units = vr_eu_to_units(eu, vm->esu);

	return vm->gv_quant > 1 ? units - units % vm->gv_quant : units;
}

/*
 * Recompute the guest view from the exact accumulators.  Values start at 1
 * so that a counter is never 0 (perf hides those), are quantized to the
 * VM's ESU from cumulative totals (so the remainder carries), and only
 * grow, modulo 2^64 (vr_gv_advance()).  Context: gv_lock held, interrupts
 * disabled.
 */
static void vr_gv_compute(struct vr_vm *vm)
{
	u64 *e = vm->gv_tmp;
	unsigned int d;
	u32 i, v;
	u64 val;

	lockdep_assert_held(&vm->gv_lock);
	memset(e, 0, sizeof(*e) * vm->nr_vpkgs * VR_NDOM);
	for (i = 0; i < vm->nr_vcpus; i++)
		for (d = 0; d < VR_NDOM; d++)
			*vr_gv_pkg(vm, e, vm->vpkg[i], d) +=
				vr_vcpu_energy(vm, i, d);
	for (v = 0; v < vm->nr_vpkgs; v++) {
		for (d = 0; d < VR_NDOM; d++) {
			val = 1 + vr_gv_units(vm, *vr_gv_pkg(vm, e, v, d) +
					      vr_vpkg_ovh(vm, v, d)) +
			      *vr_gv_pkg(vm, vm->gv_off, v, d);
			*vr_gv_pkg(vm, vm->gv, v, d) =
				vr_gv_advance(*vr_gv_pkg(vm, vm->gv, v, d), val);
		}
	}
	for (i = 0; i < vm->nr_vcpus; i++) {
		val = 1 + vr_gv_units(vm, vr_vcpu_energy(vm, i, VR_DOM_PKG)) +
		      *vr_gv_core(vm, vm->gv_off, i);
		*vr_gv_core(vm, vm->gv, i) =
			vr_gv_advance(*vr_gv_core(vm, vm->gv, i), val);
	}
}

/* Copy the guest view into the mmap page under its sequence count. */
static void vr_gv_page_update(struct vr_vm *vm)
{
	struct vmrapl_page *pg = vm->page;
	u32 i;

	lockdep_assert_held(&vm->gv_lock);
	WRITE_ONCE(pg->seq, pg->seq + 1);
	/* Odd sequence before the values: pairs with the reader's rmb. */
	smp_wmb();
	for (i = 0; i < vm->nr_vcpus; i++) {
		pg->vcpu[i].pkg = vr_gv_reg(vm, VMRAPL_REG_PKG, i);
		pg->vcpu[i].dram = vr_gv_reg(vm, VMRAPL_REG_DRAM, i);
		pg->vcpu[i].core = vr_gv_reg(vm, VMRAPL_REG_CORE, i);
	}
	/* Values before the even sequence: pairs with the reader's rmb. */
	smp_wmb();
	WRITE_ONCE(pg->seq, pg->seq + 1);
}

/*
 * The one gate of every publisher (READ_MSR's refresh, the kvm_exit
 * probe, GET_STATE, SET_STATE, and so the mmap page): may the guest view
 * take in the accounts' energy at @now?  Always for the first time, then
 * once per guest period, never finer than unpriv_period_ms for a VM that
 * is not exact, whatever its guest period says (the parameter may have
 * grown since).  @urgent (a migration: the guest is stopped) skips the
 * period, for an exact VM only: a VMM without CAP_PERFMON could otherwise
 * call GET_STATE or SET_STATE in a loop and read its VM's share of the
 * package's power at millisecond grain (PLATYPUS, security.rst).
 * Lockless callers only use it to skip work; the decision is taken again
 * under gv_lock.
 */
static bool vr_gv_due(struct vr_vm *vm, u64 now, bool urgent)
{
	u64 period = READ_ONCE(vm->guest_period_ns);

	if (!READ_ONCE(vm->gv_started))
		return true;
	if (urgent && vm->exact)
		return true;
	if (!vm->exact)
		period = max(period, vr_unpriv_period_ns());
	/*
	 * Signed: local_clock() of another CPU (the page's worker, an ioctl)
	 * may read a little behind the gv_time it is compared with, which an
	 * unsigned difference would take for a very long period.
	 */
	return (s64)(now - READ_ONCE(vm->gv_time)) >= (s64)period;
}

/*
 * Publish if the gate lets it: the only caller of vr_gv_compute().
 * gv_lock held.  Returns whether the view took in new energy.
 */
static bool vr_gv_publish_locked(struct vr_vm *vm, u64 now, bool urgent)
{
	lockdep_assert_held(&vm->gv_lock);
	if (!vr_gv_due(vm, now, urgent))
		return false;
	vr_gv_compute(vm);
	vr_gv_page_update(vm);
	vm->gv_started = true;
	WRITE_ONCE(vm->gv_time, now);
	return true;
}

/*
 * Make the guest view current if its period is over.  Process context
 * (an ioctl, or the page's worker); gives up if another CPU is publishing.
 */
static void vr_gv_publish(struct vr_vm *vm, u64 now)
{
	unsigned long flags;

	if (!vr_gv_due(vm, now, false))
		return;
	if (!raw_spin_trylock_irqsave(&vm->gv_lock, flags))
		return;
	vr_gv_publish_locked(vm, now, false);
	raw_spin_unlock_irqrestore(&vm->gv_lock, flags);
}

/* The page's publication, queued by the kvm_exit probe (vr_gv_kick()). */
static void vr_gv_workfn(struct work_struct *w)
{
	struct vr_vm *vm = container_of(w, struct vr_vm, gv_work);

	vr_gv_publish(vm, local_clock());
}

/*
 * Probe context (kvm_exit): keep the mmap page fresh without a syscall.
 * The publication reads every vCPU's accounts on every package, so it is
 * not done here, with interrupts off in the middle of a vCPU's exit: an
 * unbound worker does it.  O(1) here, whatever the VM's size.
 */
void vr_gv_kick(struct vr_vm *vm, u64 now)
{
	if (vr_gv_due(vm, now, false))
		queue_work(system_unbound_wq, &vm->gv_work);
}

/* Process context: close the stale packages, then publish if due. */
static void vr_gv_refresh(struct vr_vm *vm)
{
	if (!vr_gv_due(vm, local_clock(), false))
		return;
	vr_close_all(vr_vm_close_gap(vm));
	vr_gv_publish(vm, local_clock());
}

/* VMRAPL_VM_READ_MSR. */
long vr_vm_read_msr(struct vr_vm *vm, void __user *argp)
{
	const struct vmrapl_reg *r;
	struct vmrapl_msr m;
	unsigned long flags;

	if (copy_from_user(&m, argp, sizeof(m)))
		return -EFAULT;
	if (m.flags || m.reserved0)
		return -EINVAL;
	if (m.vcpu >= vm->nr_vcpus)
		return -EINVAL;
	r = vr_reg_find(vm, m.index);
	if (!r)
		return -ENOENT;

	vr_gv_refresh(vm);
	raw_spin_lock_irqsave(&vm->gv_lock, flags);
	m.data = vr_gv_reg(vm, r->reg, m.vcpu);
	raw_spin_unlock_irqrestore(&vm->gv_lock, flags);
	if (copy_to_user(argp, &m, sizeof(m)))
		return -EFAULT;
	return 0;
}

/* The arrays of a guest view with some number of virtual packages. */
struct vr_gv_set {
	u64 *gv;	/* per vpkg x domain, then per vCPU core */
	u64 *off;	/* same layout: SET_STATE offsets */
	u64 *tmp;	/* per vpkg x domain: scratch */
	u32 *cnt;	/* vCPUs per vpkg */
};

static void vr_gv_set_free(struct vr_gv_set *g)
{
	kfree(g->gv);
	kfree(g->off);
	kfree(g->tmp);
	kfree(g->cnt);
}

/* All or nothing: on failure nothing is left allocated and @g is as was. */
static int vr_gv_set_alloc(struct vr_vm *vm, u32 nr_vpkgs,
			   struct vr_gv_set *g)
{
	size_t n = (size_t)nr_vpkgs * VR_NDOM + vm->nr_vcpus;
	struct vr_gv_set a;

	a.gv = kcalloc(n, sizeof(u64), GFP_KERNEL_ACCOUNT);
	a.off = kcalloc(n, sizeof(u64), GFP_KERNEL_ACCOUNT);
	a.tmp = kcalloc((size_t)nr_vpkgs * VR_NDOM, sizeof(u64),
			GFP_KERNEL_ACCOUNT);
	a.cnt = kcalloc(nr_vpkgs, sizeof(u32), GFP_KERNEL_ACCOUNT);
	if (!a.gv || !a.off || !a.tmp || !a.cnt) {
		vr_gv_set_free(&a);
		return -ENOMEM;
	}
	*g = a;
	return 0;
}

/*
 * A new VM's guest view: one virtual package, and the page, non-zero
 * before the first publication (perf hides a 0 counter).  Before the VM
 * is visible to anyone.  On failure the caller frees with vr_gv_free(),
 * which frees what was allocated, once.
 */
int vr_gv_init(struct vr_vm *vm)
{
	struct vr_gv_set g;
	u32 i;

	raw_spin_lock_init(&vm->gv_lock);
	INIT_WORK(&vm->gv_work, vr_gv_workfn);
	vm->nr_vpkgs = 1;
	vm->guest_period_ns = (u64)VMRAPL_GUEST_PERIOD_DEF_US * NSEC_PER_USEC;
	vm->gv_quant = 1;
	if (!vm->exact) {
		/* unpriv_step_uj in units of 2^-esu J, rounded up. */
		u64 step = (u64)READ_ONCE(vr_unpriv_step_uj) << vm->esu;

		vm->gv_quant = max_t(u64, 1,
				     DIV_ROUND_UP_ULL(step, USEC_PER_SEC));
		vm->guest_period_ns = max(vm->guest_period_ns,
					  vr_unpriv_period_ns());
	}
	vm->domains = vr_pkgs[0]->core.domains;
	if (vm->regset == VMRAPL_REGSET_AMD)
		vm->domains = BIT(VMRAPL_DOM_PKG) | BIT(VMRAPL_DOM_CORE);
	vm->vpkg = kcalloc(vm->nr_vcpus, sizeof(u32), GFP_KERNEL_ACCOUNT);
	vm->page_size = struct_size(vm->page, vcpu, vm->nr_vcpus);
	vm->page = vmalloc_user(PAGE_ALIGN(vm->page_size));
	if (vm->page)
		vr_obj_get(VR_OBJ_GV_PAGES);
	if (!vm->vpkg || !vm->page || vr_gv_set_alloc(vm, 1, &g))
		return -ENOMEM;
	vm->gv = g.gv;
	vm->gv_off = g.off;
	vm->gv_tmp = g.tmp;
	vm->vpkg_vcpus = g.cnt;
	vm->vpkg_vcpus[0] = vm->nr_vcpus;
	vm->page->abi_version = VMRAPL_ABI_VERSION;
	vm->page->nr_vcpus = vm->nr_vcpus;
	vm->page->regset = vm->regset;
	vm->page->unit = vr_unit_msr(vm);
	vm->page->power_info = vr_power_info_msr(vm);
	vm->page->power_limit = 0;	/* no limit, not locked */
	vm->page->domains = vm->domains;
	for (i = 0; i < vm->nr_vcpus; i++)
		vm->page->vcpu[i] = (struct vmrapl_page_vcpu){ 1, 1, 1 };
	return 0;
}

void vr_gv_free(struct vr_vm *vm)
{
	if (vm->page)
		vr_obj_put(VR_OBJ_GV_PAGES);
	vfree(vm->page);
	kfree(vm->gv);
	kfree(vm->gv_off);
	kfree(vm->gv_tmp);
	kfree(vm->vpkg);
	kfree(vm->vpkg_vcpus);
}

/*
 * VMRAPL_VM_SET_TOPOLOGY: the map is copied in and checked, and the new
 * arrays allocated, before vm->lock is taken.
 */
long vr_vm_set_topology(struct vr_vm *vm, void __user *argp)
{
	struct vmrapl_topology t;
	struct vr_gv_set g, old;
	u32 *map, i, nr = 0;
	unsigned long flags;
	int ret;

	ret = vr_copy_sized(&t, sizeof(t), argp);
	if (ret)
		return ret;
	if (t.flags || t.reserved0 || !vr_zero(t.reserved,
					       ARRAY_SIZE(t.reserved)))
		return -EINVAL;
	if (t.nr_vcpus != vm->nr_vcpus || !t.vpkg_ptr)
		return -EINVAL;
	map = memdup_user(u64_to_user_ptr(t.vpkg_ptr),
			  sizeof(u32) * t.nr_vcpus);
	if (IS_ERR(map))
		return PTR_ERR(map);
	for (i = 0; i < t.nr_vcpus; i++) {
		if (map[i] >= VMRAPL_MAX_VPKGS) {
			ret = -EINVAL;
			goto out_free_map;
		}
		nr = max(nr, map[i] + 1);
	}
	ret = vr_gv_set_alloc(vm, nr, &g);
	if (ret)
		goto out_free_map;
	for (i = 0; i < t.nr_vcpus; i++)
		g.cnt[map[i]]++;

	mutex_lock(&vm->lock);
	raw_spin_lock_irqsave(&vm->gv_lock, flags);
	if (vm->gv_started) {
		/* The guest has seen values: regrouping could lower them. */
		old = g;
		ret = -EBUSY;
	} else {
		old = (struct vr_gv_set){ vm->gv, vm->gv_off, vm->gv_tmp,
					  vm->vpkg_vcpus };
		swap(vm->vpkg, map);
		vm->gv = g.gv;
		vm->gv_off = g.off;
		vm->gv_tmp = g.tmp;
		vm->vpkg_vcpus = g.cnt;
		vm->nr_vpkgs = nr;
	}
	raw_spin_unlock_irqrestore(&vm->gv_lock, flags);
	mutex_unlock(&vm->lock);
	vr_gv_set_free(&old);
out_free_map:
	kfree(map);
	return ret;
}

/* Copy in a struct vmrapl_state and check what GET and SET share. */
static int vr_state_in(struct vmrapl_state *s, void __user *argp)
{
	int ret = vr_copy_sized(s, sizeof(*s), argp);

	if (ret)
		return ret;
	if (s->flags || !vr_zero(s->reserved, ARRAY_SIZE(s->reserved)) ||
	    !s->vpkgs_ptr || !s->vcpus_ptr)
		return -EINVAL;
	return 0;
}

/*
 * VMRAPL_VM_GET_STATE: publish now and snapshot under vm->lock, copy the
 * snapshot out after it.
 */
long vr_vm_get_state(struct vr_vm *vm, void __user *argp)
{
	struct vmrapl_vpkg_state ps;
	struct vmrapl_state s;
	unsigned long flags;
	u32 i, v, nvp, len;
	u64 *snap;
	int ret;

	ret = vr_state_in(&s, argp);
	if (ret)
		return ret;

	vr_close_all(vr_vm_close_gap(vm));
	mutex_lock(&vm->lock);
	nvp = vm->nr_vpkgs;
	if (s.nr_vpkgs < nvp || s.nr_vcpus < vm->nr_vcpus) {
		mutex_unlock(&vm->lock);
		return -EINVAL;
	}
	len = vr_gv_len(vm);
	snap = kcalloc(len, sizeof(*snap), GFP_KERNEL);
	if (!snap) {
		mutex_unlock(&vm->lock);
		return -ENOMEM;
	}
	raw_spin_lock_irqsave(&vm->gv_lock, flags);
	/* Migration: the guest is stopped, publish now (vr_gv_due()). */
	vr_gv_publish_locked(vm, local_clock(), true);
	/*
	 * Modulo VMRAPL_STATE_MAX, which SET_STATE takes: a counter finer
	 * than eu wraps (vr_gv_advance()); the guest sees its low 32 bits.
	 */
	for (i = 0; i < len; i++)
		snap[i] = vm->gv[i] & (VMRAPL_STATE_MAX - 1);
	raw_spin_unlock_irqrestore(&vm->gv_lock, flags);
	mutex_unlock(&vm->lock);

	/* The snapshot's layout: nvp x domains, then one per vCPU. */
	ret = -EFAULT;
	for (v = 0; v < nvp; v++) {
		memset(&ps, 0, sizeof(ps));
		memcpy(ps.energy, &snap[v * VR_NDOM], sizeof(ps.energy));
		if (copy_to_user(u64_to_user_ptr(s.vpkgs_ptr) + v * sizeof(ps),
				 &ps, sizeof(ps)))
			goto out_free;
	}
	for (i = 0; i < vm->nr_vcpus; i++)
		if (put_user(snap[nvp * VR_NDOM + i],
			     (u64 __user *)u64_to_user_ptr(s.vcpus_ptr) + i))
			goto out_free;
	s.size = sizeof(s);
	s.version = VMRAPL_STATE_VERSION;
	s.esu = vm->esu;
	s.nr_vpkgs = nvp;
	s.nr_vcpus = vm->nr_vcpus;
	ret = copy_to_user(argp, &s, sizeof(s)) ? -EFAULT : 0;
out_free:
	kfree(snap);
	return ret;
}

/*
 * VMRAPL_VM_SET_STATE: the saved values are copied in and checked before
 * vm->lock is taken; under it the view continues from them.
 */
long vr_vm_set_state(struct vr_vm *vm, void __user *argp)
{
	struct vmrapl_vpkg_state ps;
	struct vmrapl_state s;
	unsigned long flags;
	u64 *want, *cur, *off;
	u32 i, v, len;
	int ret;

	ret = vr_state_in(&s, argp);
	if (ret)
		return ret;
	/* nr_vpkgs is checked again under vm->lock. */
	if (s.version != VMRAPL_STATE_VERSION || s.esu != vm->esu ||
	    s.nr_vpkgs != READ_ONCE(vm->nr_vpkgs) ||
	    s.nr_vcpus != vm->nr_vcpus)
		return -EINVAL;

	len = s.nr_vpkgs * VR_NDOM + s.nr_vcpus;
	want = kcalloc(len, sizeof(*want), GFP_KERNEL);
	if (!want)
		return -ENOMEM;
	ret = -EFAULT;
	for (v = 0; v < s.nr_vpkgs; v++) {
		if (copy_from_user(&ps, u64_to_user_ptr(s.vpkgs_ptr) +
				   v * sizeof(ps), sizeof(ps)))
			goto out_free;
		if (ps.reserved) {
			ret = -EINVAL;
			goto out_free;
		}
		memcpy(&want[v * VR_NDOM], ps.energy, sizeof(ps.energy));
	}
	for (i = 0; i < s.nr_vcpus; i++)
		if (get_user(want[s.nr_vpkgs * VR_NDOM + i],
			     (u64 __user *)u64_to_user_ptr(s.vcpus_ptr) + i))
			goto out_free;
	/* 1 + units + offset must never wrap: the counter would freeze. */
	ret = -EINVAL;
	for (i = 0; i < len; i++)
		if (want[i] >= VMRAPL_STATE_MAX)
			goto out_free;

	mutex_lock(&vm->lock);
	if (s.nr_vpkgs != vm->nr_vpkgs)
		goto out_unlock;
	raw_spin_lock_irqsave(&vm->gv_lock, flags);
	/*
	 * Take in the accounts only if the gate lets it: otherwise the view
	 * continues from what the guest last saw, and the energy since then
	 * shows at the next publication, on top of the saved values.
	 */
	vr_gv_publish_locked(vm, local_clock(), true);
	cur = vm->gv;
	off = vm->gv_off;
	/* Continue from the saved values; never step a counter back. */
	for (i = 0; i < len; i++) {
		if (vr_gv_advance(cur[i], want[i]) != cur[i]) {
			off[i] += want[i] - cur[i];
			cur[i] = want[i];
		}
	}
	/* The saved values only: nothing of the accounts' energy is new. */
	vr_gv_page_update(vm);
	vm->gv_started = true;
	raw_spin_unlock_irqrestore(&vm->gv_lock, flags);
	ret = 0;
out_unlock:
	mutex_unlock(&vm->lock);
out_free:
	kfree(want);
	return ret;
}

/* mmap() of the VM fd: the read-only guest-view page. */
int vr_vm_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct vr_vm *vm = file->private_data;
	int ret;

	if (vma->vm_pgoff ||
	    vma->vm_end - vma->vm_start > PAGE_ALIGN(vm->page_size))
		return -EINVAL;
	if (vma->vm_flags & VM_WRITE)
		return -EACCES;
	vr_vm_flags_clear(vma, VM_MAYWRITE);
	ret = remap_vmalloc_range(vma, vm->page, 0);
	if (!ret)
		WRITE_ONCE(vm->mapped, true);
	return ret;
}
