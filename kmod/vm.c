// SPDX-License-Identifier: GPL-2.0
/*
 * VMs: attach through the uapi, automatic tracking of every KVM VM, the
 * lookups the probes use, the guest view and the VM fd.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/hash.h>
#include <linux/hashtable.h>
#include <linux/kvm_host.h>
#include <linux/mm.h>
#include <linux/pid.h>
#include <linux/sched/clock.h>
#include <linux/sched/task.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#include "vmrapl.h"

#define VR_MSR_RAPL_POWER_UNIT		0x606
#define VR_MSR_PKG_POWER_LIMIT		0x610
#define VR_MSR_PKG_ENERGY_STATUS	0x611
#define VR_MSR_PKG_POWER_INFO		0x614
#define VR_MSR_DRAM_ENERGY_STATUS	0x619
#define VR_MSR_PP0_ENERGY_STATUS	0x639
#define VR_MSR_AMD_RAPL_POWER_UNIT	0xc0010299
#define VR_MSR_AMD_CORE_ENERGY_STATUS	0xc001029a
#define VR_MSR_AMD_PKG_ENERGY_STATUS	0xc001029b

/* Power unit 1/8 W, time unit 976 us: the common Intel values. */
#define VR_UNIT_POWER			3
#define VR_UNIT_TIME			10
#define VR_MAX_TASKS			64

enum vr_key_kind { VR_KEY_KVM, VR_KEY_MM, VR_KEY_TASK };

/* An entry of the lookup table the probes use. */
struct vr_key {
	struct hlist_node node;
	const void *key;
	struct vr_vm *vm;
	u32 kind;
};

struct vr_task {
	struct vr_key key;
	struct task_struct *task;	/* reference held */
	struct list_head list;
};

/*
 * struct vr_vm - a tracked KVM VM
 * @kvm: the VM.  Attached: @kvm_file pins it.  Auto-tracked: a kvm
 *	reference pins it until the reaper sees that only we hold it.
 * @kvm_file: the VM's file (attached VMs).
 * @k_kvm, @k_mm: lookup entries (the VM's vCPUs, the VMM's threads).
 * @list: in vr_vms, under vr_vm_mutex.
 * @tasks: registered overhead tasks, under vr_vm_mutex.
 * @charge: VMRAPL_CHARGE_*, read locklessly by the probes.
 * @acct: (nr_vcpus + 1) x vr_topo.max_pkgs accounts; the last row is the
 *	VM's overhead.
 * @lock: serializes the ioctls that read or replace the topology arrays
 *	(SET_TOPOLOGY, GET_STATS, GET_STATE, SET_STATE, and the host's
 *	GET_VM_STATS, which takes it inside vr_vm_mutex).
 * @gv_lock: guest view; protects everything below it.  Raw: taken from the
 *	kvm_exit probe with interrupts disabled.
 */
struct vr_vm {
	struct kvm *kvm;
	struct file *kvm_file;
	struct vr_key k_kvm;
	struct vr_key k_mm;
	struct list_head list;
	struct list_head tasks;
	unsigned int nr_tasks;
	u64 id;
	pid_t pid;
	char comm[TASK_COMM_LEN];
	bool attached;
	u32 charge;
	u32 nr_vcpus;
	u32 regset;
	u32 esu;
	struct vr_acct *acct;
	struct mutex lock;		/* see @lock above */

	raw_spinlock_t gv_lock;
	u64 guest_period_ns;
	u64 gv_time;
	bool gv_started;
	u32 nr_vpkgs;
	u32 *vpkg;		/* per vCPU */
	u32 *vpkg_vcpus;	/* per vpkg */
	u64 *gv;		/* per vpkg x domain, then per vCPU core */
	u64 *gv_off;		/* same layout: SET_STATE offsets */
	u64 *gv_tmp;		/* per vpkg x domain: scratch */
	struct vmrapl_page *page;
	size_t page_size;
	bool mapped;
};

/* Lookup table: written under vr_vm_mutex, read under RCU by the probes. */
#define VR_HASH_BITS	10
static DEFINE_HASHTABLE(vr_keys, VR_HASH_BITS);
/* Cheap negative filter in front of vr_keys; bits only set while in use. */
static unsigned long vr_filter[BITS_TO_LONGS(1 << VR_HASH_BITS)];
static struct preempt_ops *vr_kvm_pn_ops;
/* Registered overhead tasks on the host, under vr_vm_mutex; read by probes. */
static unsigned int vr_nr_tasks;

/* Serializes attach, detach, tracking and every change to vr_keys. */
static DEFINE_MUTEX(vr_vm_mutex);
static LIST_HEAD(vr_vms);
static u64 vr_next_id = 1;

/* A VM seen at kvm_entry that is not tracked yet (reference held). */
static DEFINE_PER_CPU(struct kvm *, vr_seen_kvm);
static void vr_track_workfn(struct work_struct *w);
static DECLARE_DELAYED_WORK(vr_track_work, vr_track_workfn);
static bool vr_vm_stopping;

static inline unsigned int vr_npk(void)
{
	return vr_topo.max_pkgs;
}

static inline struct vr_acct *vr_vcpu_acct(struct vr_vm *vm, u32 idx,
					   unsigned int pkg)
{
	return &vm->acct[idx * vr_npk() + pkg];
}

static inline struct vr_acct *vr_ovh_acct(struct vr_vm *vm, unsigned int pkg)
{
	return &vm->acct[vm->nr_vcpus * vr_npk() + pkg];
}

/* Probe context: RCU-sched read side (preemption disabled). */
static struct vr_vm *vr_lookup(const void *key, u32 kind)
{
	struct vr_key *k;

	if (!test_bit(hash_ptr((void *)key, VR_HASH_BITS), vr_filter))
		return NULL;
	hash_for_each_possible_rcu(vr_keys, k, node, (unsigned long)key)
		if (k->key == key && k->kind == kind)
			return k->vm;
	return NULL;
}

static void vr_key_add(struct vr_key *k, const void *key, u32 kind,
		       struct vr_vm *vm)
{
	lockdep_assert_held(&vr_vm_mutex);
	k->key = key;
	k->kind = kind;
	k->vm = vm;
	set_bit(hash_ptr((void *)key, VR_HASH_BITS), vr_filter);
	hash_add_rcu(vr_keys, &k->node, (unsigned long)key);
}

/* Clear the filter bits no key uses any more, never a live one. */
static void vr_filter_rebuild(void)
{
	static unsigned long live[BITS_TO_LONGS(1 << VR_HASH_BITS)];
	struct vr_key *k;
	unsigned int i;

	lockdep_assert_held(&vr_vm_mutex);
	bitmap_zero(live, 1 << VR_HASH_BITS);
	hash_for_each(vr_keys, i, k, node)
		__set_bit(hash_ptr((void *)k->key, VR_HASH_BITS), live);
	for (i = 0; i < ARRAY_SIZE(vr_filter); i++)
		WRITE_ONCE(vr_filter[i], live[i]);
}

/* The vCPU whose thread @t is, when @t is in KVM_RUN (KVM's own state). */
static struct kvm_vcpu *vr_task_vcpu(struct task_struct *t)
{
	struct preempt_ops *ops = READ_ONCE(vr_kvm_pn_ops);
	struct hlist_node *n = READ_ONCE(t->preempt_notifiers.first);
	struct preempt_notifier *pn;

	if (!n || !ops)
		return NULL;
	pn = hlist_entry(n, struct preempt_notifier, link);
	if (READ_ONCE(pn->ops) != ops)
		return NULL;
	return container_of(pn, struct kvm_vcpu, preempt_notifier);
}

/*
 * Which account pays for @t on package @pkg?  Probe context, O(1): at most
 * three hash lookups, each behind a one-bit filter.
 */
struct vr_acct *vr_task_acct(struct task_struct *t, unsigned int pkg)
{
	struct kvm_vcpu *vcpu = vr_task_vcpu(t);
	struct vr_vm *vm;

	if (vcpu) {
		vm = vr_lookup(vcpu->kvm, VR_KEY_KVM);
		if (!vm)
			return NULL;
		if ((u32)vcpu->vcpu_idx < vm->nr_vcpus &&
		    READ_ONCE(vm->charge) == VMRAPL_CHARGE_THREAD)
			return vr_vcpu_acct(vm, vcpu->vcpu_idx, pkg);
		return vr_ovh_acct(vm, pkg);
	}
	if (t->mm) {
		vm = vr_lookup(t->mm, VR_KEY_MM);
		if (vm)
			return vr_ovh_acct(vm, pkg);
	}
	if (!READ_ONCE(vr_nr_tasks))
		return NULL;
	vm = vr_lookup(t, VR_KEY_TASK);
	return vm ? vr_ovh_acct(vm, pkg) : NULL;
}

/* kvm_entry probe: note an untracked VM for the tracking work. */
static void vr_vm_note(struct kvm *kvm)
{
	if (!READ_ONCE(vr_track_all) || READ_ONCE(vr_vm_stopping) ||
	    this_cpu_read(vr_seen_kvm))
		return;
	if (!kvm_get_kvm_safe(kvm))
		return;
	this_cpu_write(vr_seen_kvm, kvm);
	mod_delayed_work(system_wq, &vr_track_work, 0);
}

void vr_vm_guest_entry(struct kvm_vcpu *vcpu, struct vr_cpu *c, u64 now,
		       unsigned int pkg)
{
	struct vr_acct *a;
	struct vr_vm *vm;

	if (unlikely(!READ_ONCE(vr_kvm_pn_ops)))
		WRITE_ONCE(vr_kvm_pn_ops, vcpu->preempt_notifier.ops);
	vm = vr_lookup(vcpu->kvm, VR_KEY_KVM);
	if (!vm) {
		vr_vm_note(vcpu->kvm);
		return;
	}
	if ((u32)vcpu->vcpu_idx >= vm->nr_vcpus)
		return;
	/* Both policies charge guest time to the vCPU. */
	a = vr_vcpu_acct(vm, vcpu->vcpu_idx, pkg);
	if (c->cur != a)
		vr_cpu_event(c, now, true, a);
}

static void vr_vm_publish(struct vr_vm *vm, u64 now);

void vr_vm_guest_exit(struct kvm_vcpu *vcpu, struct vr_cpu *c, u64 now,
		      unsigned int pkg)
{
	struct vr_vm *vm = vr_lookup(vcpu->kvm, VR_KEY_KVM);
	struct vr_acct *a;

	if (!vm)
		return;
	if (READ_ONCE(vm->charge) == VMRAPL_CHARGE_GUEST) {
		a = vr_ovh_acct(vm, pkg);
		if (c->cur != a)
			vr_cpu_event(c, now, true, a);
	}
	/* Keep the mmap page fresh without a syscall, once per period. */
	if (READ_ONCE(vm->mapped) && now - READ_ONCE(vm->gv_time) >=
	    READ_ONCE(vm->guest_period_ns))
		vr_vm_publish(vm, now);
}

/* Exact energy of vCPU @i (domain @d, eu), summed over host packages. */
static u64 vr_vcpu_energy(struct vr_vm *vm, u32 i, unsigned int d)
{
	unsigned int p;
	u64 e = 0;

	for (p = 0; p < vr_topo.nr_pkgs; p++)
		e += READ_ONCE(vr_vcpu_acct(vm, i, p)->energy[d]);
	return e;
}

static u64 vr_vcpu_ns(struct vr_vm *vm, u32 i)
{
	unsigned int p;
	u64 ns = 0;

	for (p = 0; p < vr_topo.nr_pkgs; p++)
		ns += READ_ONCE(vr_vcpu_acct(vm, i, p)->ns);
	return ns;
}

static u64 vr_ovh_energy(struct vr_vm *vm, unsigned int d)
{
	unsigned int p;
	u64 e = 0;

	for (p = 0; p < vr_topo.nr_pkgs; p++)
		e += READ_ONCE(vr_ovh_acct(vm, p)->energy[d]);
	return e;
}

static u64 vr_ovh_ns(struct vr_vm *vm)
{
	unsigned int p;
	u64 ns = 0;

	for (p = 0; p < vr_topo.nr_pkgs; p++)
		ns += READ_ONCE(vr_ovh_acct(vm, p)->ns);
	return ns;
}

/* The overhead share of virtual package @v: by its vCPU count. */
static u64 vr_vpkg_ovh(struct vr_vm *vm, u32 v, unsigned int d)
{
	return vr_mul_div(vr_ovh_energy(vm, d), vm->vpkg_vcpus[v],
			  vm->nr_vcpus);
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

/*
 * Recompute the guest view from the exact accumulators.  Values start at 1
 * so that a counter is never 0 (perf hides those), are quantized to the
 * VM's ESU from cumulative totals (so the remainder carries), and only
 * grow.  Context: gv_lock held, interrupts disabled.
 */
static void vr_vm_compute(struct vr_vm *vm)
{
	u64 *e = vm->gv_tmp;
	unsigned int d;
	u32 i, v;
	u64 val;

	memset(e, 0, sizeof(*e) * vm->nr_vpkgs * VR_NDOM);
	for (i = 0; i < vm->nr_vcpus; i++)
		for (d = 0; d < VR_NDOM; d++)
			*vr_gv_pkg(vm, e, vm->vpkg[i], d) +=
				vr_vcpu_energy(vm, i, d);
	for (v = 0; v < vm->nr_vpkgs; v++) {
		for (d = 0; d < VR_NDOM; d++) {
			val = 1 + vr_eu_to_units(*vr_gv_pkg(vm, e, v, d) +
						 vr_vpkg_ovh(vm, v, d),
						 vm->esu) +
			      *vr_gv_pkg(vm, vm->gv_off, v, d);
			if (val > *vr_gv_pkg(vm, vm->gv, v, d))
				*vr_gv_pkg(vm, vm->gv, v, d) = val;
		}
	}
	for (i = 0; i < vm->nr_vcpus; i++) {
		val = 1 + vr_eu_to_units(vr_vcpu_energy(vm, i, VR_DOM_PKG),
					 vm->esu) +
		      *vr_gv_core(vm, vm->gv_off, i);
		if (val > *vr_gv_core(vm, vm->gv, i))
			*vr_gv_core(vm, vm->gv, i) = val;
	}
}

/* Copy the guest view into the mmap page under its sequence count. */
static void vr_vm_page_update(struct vr_vm *vm)
{
	struct vmrapl_page *pg = vm->page;
	u32 i, v;

	if (!pg)
		return;
	WRITE_ONCE(pg->seq, pg->seq + 1);
	/* Odd sequence before the values: pairs with the reader's rmb. */
	smp_wmb();
	for (i = 0; i < vm->nr_vcpus; i++) {
		v = vm->vpkg[i];
		pg->vcpu[i].pkg = *vr_gv_pkg(vm, vm->gv, v, VMRAPL_DOM_PKG) &
				  0xffffffffULL;
		pg->vcpu[i].dram = *vr_gv_pkg(vm, vm->gv, v, VMRAPL_DOM_DRAM) &
				   0xffffffffULL;
		if (vm->regset == VMRAPL_REGSET_AMD)
			pg->vcpu[i].core = *vr_gv_core(vm, vm->gv, i) &
					   0xffffffffULL;
		else
			pg->vcpu[i].core = *vr_gv_pkg(vm, vm->gv, v,
						      VMRAPL_DOM_CORE) &
					   0xffffffffULL;
	}
	/* Values before the even sequence: pairs with the reader's rmb. */
	smp_wmb();
	WRITE_ONCE(pg->seq, pg->seq + 1);
}

static void vr_vm_publish(struct vr_vm *vm, u64 now)
{
	unsigned long flags;

	if (!raw_spin_trylock_irqsave(&vm->gv_lock, flags))
		return;
	if (!vm->gv_started || now - vm->gv_time >= vm->guest_period_ns) {
		vr_vm_compute(vm);
		vr_vm_page_update(vm);
		vm->gv_started = true;
		WRITE_ONCE(vm->gv_time, now);
	}
	raw_spin_unlock_irqrestore(&vm->gv_lock, flags);
}

/* Process context: make the guest view current if its period is over. */
static void vr_vm_refresh(struct vr_vm *vm)
{
	u64 now = local_clock();

	if (vm->gv_started && now - READ_ONCE(vm->gv_time) <
	    READ_ONCE(vm->guest_period_ns))
		return;
	vr_close_all();
	vr_vm_publish(vm, local_clock());
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

static bool vr_vm_has_dom(unsigned int d)
{
	const struct vr_hpkg *hp = vr_pkgs[0];

	return hp->core.domains & (1U << d);
}

static long vr_vm_read_msr(struct vr_vm *vm, void __user *argp)
{
	struct vmrapl_msr m;
	unsigned long flags;
	u32 v;

	if (copy_from_user(&m, argp, sizeof(m)))
		return -EFAULT;
	if (m.flags || m.reserved0)
		return -EINVAL;
	if (m.vcpu >= vm->nr_vcpus)
		return -EINVAL;

	vr_vm_refresh(vm);
	raw_spin_lock_irqsave(&vm->gv_lock, flags);
	v = vm->vpkg[m.vcpu];
	switch (vm->regset == VMRAPL_REGSET_AMD ? m.index | 1ULL << 32 :
		m.index) {
	case VR_MSR_RAPL_POWER_UNIT:
	case VR_MSR_AMD_RAPL_POWER_UNIT | 1ULL << 32:
		m.data = vr_unit_msr(vm);
		break;
	case VR_MSR_PKG_ENERGY_STATUS:
	case VR_MSR_AMD_PKG_ENERGY_STATUS | 1ULL << 32:
		m.data = *vr_gv_pkg(vm, vm->gv, v, VMRAPL_DOM_PKG);
		break;
	case VR_MSR_PP0_ENERGY_STATUS:
		if (!vr_vm_has_dom(VMRAPL_DOM_CORE))
			goto enoent;
		m.data = *vr_gv_pkg(vm, vm->gv, v, VMRAPL_DOM_CORE);
		break;
	case VR_MSR_DRAM_ENERGY_STATUS:
		if (!vr_vm_has_dom(VMRAPL_DOM_DRAM))
			goto enoent;
		m.data = *vr_gv_pkg(vm, vm->gv, v, VMRAPL_DOM_DRAM);
		break;
	case VR_MSR_AMD_CORE_ENERGY_STATUS | 1ULL << 32:
		m.data = *vr_gv_core(vm, vm->gv, m.vcpu);
		break;
	case VR_MSR_PKG_POWER_INFO:
		m.data = vr_power_info_msr(vm);
		break;
	case VR_MSR_PKG_POWER_LIMIT:
		/* Locked, no limit enabled: harmless to read. */
		m.data = 1ULL << 63;
		break;
	default:
		goto enoent;
	}
	raw_spin_unlock_irqrestore(&vm->gv_lock, flags);
	m.data &= m.index == VR_MSR_PKG_POWER_LIMIT ? ~0ULL : 0xffffffffULL;
	if (copy_to_user(argp, &m, sizeof(m)))
		return -EFAULT;
	return 0;

enoent:
	raw_spin_unlock_irqrestore(&vm->gv_lock, flags);
	return -ENOENT;
}

/* Copy a size-versioned struct from userspace (see the uapi header). */
static int vr_copy_sized(void *dst, size_t ksize, void __user *argp)
{
	u32 usize;

	if (get_user(usize, (u32 __user *)argp))
		return -EFAULT;
	if (usize < ksize)
		return -EINVAL;
	if (usize > PAGE_SIZE)
		return -E2BIG;
	return copy_struct_from_user(dst, ksize, argp, usize);
}

static bool vr_zero(const u64 *r, unsigned int n)
{
	while (n--)
		if (r[n])
			return false;
	return true;
}

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

/*
 * Fill @r from @vm's accounts.  The caller keeps @vm alive (its fd, or
 * vr_vm_mutex); vm->lock keeps the topology still.
 */
static int vr_stats_fill(struct vr_vm *vm, struct vr_stats_req *r)
{
	struct vmrapl_stats *st = &r->st;
	unsigned int d;
	u32 i, v;

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

	mutex_lock(&vm->lock);
	r->nps = min(r->nps, vm->nr_vpkgs);
	for (i = 0; i < r->nvs; i++) {
		for (d = 0; d < VR_NDOM; d++)
			r->vs[i].energy_uj[d] =
				vr_eu_to_uj(vr_vcpu_energy(vm, i, d));
		r->vs[i].runtime_ns = vr_vcpu_ns(vm, i);
	}
	for (v = 0; v < r->nps; v++) {
		r->ps[v].nr_vcpus = vm->vpkg_vcpus[v];
		for (d = 0; d < VR_NDOM; d++) {
			u64 e = vr_vpkg_ovh(vm, v, d);

			r->ps[v].overhead_uj[d] = vr_eu_to_uj(e);
			for (i = 0; i < vm->nr_vcpus; i++)
				if (vm->vpkg[i] == v)
					e += vr_vcpu_energy(vm, i, d);
			r->ps[v].energy_uj[d] = vr_eu_to_uj(e);
		}
	}
	st->runtime_ns = 0;
	for (d = 0; d < VR_NDOM; d++) {
		u64 e = 0, ovh = vr_ovh_energy(vm, d);

		for (i = 0; i < vm->nr_vcpus; i++)
			e += vr_vcpu_energy(vm, i, d);
		st->energy_uj[d] = vr_eu_to_uj(e + ovh);
		st->overhead_uj[d] = vr_eu_to_uj(ovh);
	}
	for (i = 0; i < vm->nr_vcpus; i++)
		st->runtime_ns += vr_vcpu_ns(vm, i);
	st->overhead_ns = vr_ovh_ns(vm);
	st->nr_vcpus = vm->nr_vcpus;
	st->nr_vpkgs = vm->nr_vpkgs;
	st->size = sizeof(*st);
	mutex_unlock(&vm->lock);
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
static long vr_vm_get_stats(struct vr_vm *vm, void __user *argp)
{
	struct vr_stats_req r;
	int ret;

	ret = vr_stats_in(&r, argp);
	if (ret)
		return ret;
	vr_close_all();
	ret = vr_stats_fill(vm, &r);
	if (!ret)
		ret = vr_stats_out(&r, argp);
	vr_stats_free(&r);
	return ret;
}

static long vr_vm_set_policy(struct vr_vm *vm, void __user *argp)
{
	struct vmrapl_policy pol;

	if (copy_from_user(&pol, argp, sizeof(pol)))
		return -EFAULT;
	if (pol.flags & ~(VMRAPL_POLICY_F_CHARGE |
			  VMRAPL_POLICY_F_GUEST_PERIOD) ||
	    pol.reserved0 || !vr_zero(pol.reserved, ARRAY_SIZE(pol.reserved)))
		return -EINVAL;
	if ((pol.flags & VMRAPL_POLICY_F_CHARGE) &&
	    pol.charge != VMRAPL_CHARGE_THREAD &&
	    pol.charge != VMRAPL_CHARGE_GUEST)
		return -EINVAL;
	if ((pol.flags & VMRAPL_POLICY_F_GUEST_PERIOD) &&
	    (pol.guest_period_us < VMRAPL_GUEST_PERIOD_MIN_US ||
	     pol.guest_period_us > VMRAPL_GUEST_PERIOD_MAX_US))
		return -EINVAL;
	if (pol.flags & VMRAPL_POLICY_F_CHARGE)
		WRITE_ONCE(vm->charge, pol.charge);
	if (pol.flags & VMRAPL_POLICY_F_GUEST_PERIOD)
		WRITE_ONCE(vm->guest_period_ns,
			   (u64)pol.guest_period_us * NSEC_PER_USEC);
	return 0;
}

/* Guest view arrays for @nr_vpkgs virtual packages. */
static int vr_gv_alloc(struct vr_vm *vm, u32 nr_vpkgs, u64 **gv, u64 **off,
		       u64 **tmp, u32 **cnt)
{
	size_t n = (size_t)nr_vpkgs * VR_NDOM + vm->nr_vcpus;

	*gv = kcalloc(n, sizeof(u64), GFP_KERNEL_ACCOUNT);
	*off = kcalloc(n, sizeof(u64), GFP_KERNEL_ACCOUNT);
	*tmp = kcalloc((size_t)nr_vpkgs * VR_NDOM, sizeof(u64),
		       GFP_KERNEL_ACCOUNT);
	*cnt = kcalloc(nr_vpkgs, sizeof(u32), GFP_KERNEL_ACCOUNT);
	if (*gv && *off && *tmp && *cnt)
		return 0;
	kfree(*gv);
	kfree(*off);
	kfree(*tmp);
	kfree(*cnt);
	return -ENOMEM;
}

static long vr_vm_set_topology(struct vr_vm *vm, void __user *argp)
{
	u64 *gv, *off, *tmp, *ogv, *ooff, *otmp;
	struct vmrapl_topology t;
	u32 *map, *omap, *cnt, *ocnt, i, nr = 0;
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
	ret = vr_gv_alloc(vm, nr, &gv, &off, &tmp, &cnt);
	if (ret)
		goto out_free_map;
	for (i = 0; i < t.nr_vcpus; i++)
		cnt[map[i]]++;

	raw_spin_lock_irqsave(&vm->gv_lock, flags);
	if (vm->gv_started) {
		/* The guest has seen values: regrouping could lower them. */
		raw_spin_unlock_irqrestore(&vm->gv_lock, flags);
		kfree(gv);
		kfree(off);
		kfree(tmp);
		kfree(cnt);
		ret = -EBUSY;
		goto out_free_map;
	}
	swap(vm->vpkg, map);
	omap = map;
	ogv = vm->gv;
	ooff = vm->gv_off;
	otmp = vm->gv_tmp;
	ocnt = vm->vpkg_vcpus;
	vm->gv = gv;
	vm->gv_off = off;
	vm->gv_tmp = tmp;
	vm->vpkg_vcpus = cnt;
	vm->nr_vpkgs = nr;
	raw_spin_unlock_irqrestore(&vm->gv_lock, flags);
	kfree(ogv);
	kfree(ooff);
	kfree(otmp);
	kfree(ocnt);
	map = omap;
	ret = 0;
out_free_map:
	kfree(map);
	return ret;
}

/* May @t's CPU time be charged to a VM of the calling process? */
static bool vr_task_owned(struct task_struct *t)
{
	char name[TASK_COMM_LEN];

	if (same_thread_group(t, current))
		return true;
	/*
	 * Before v6.4, vhost workers were kernel threads named
	 * "vhost-<owner pid>"; since then they are threads of the owner.
	 */
	if (!(t->flags & PF_KTHREAD))
		return false;
	snprintf(name, sizeof(name), "vhost-%d", task_tgid_nr(current));
	return !strncmp(t->comm, name, sizeof(name));
}

static long vr_vm_add_task(struct vr_vm *vm, void __user *argp)
{
	struct task_struct *t;
	struct vmrapl_task arg;
	struct vr_task *vt;
	struct pid *pid;
	long ret;

	if (copy_from_user(&arg, argp, sizeof(arg)))
		return -EFAULT;
	if (arg.flags || !vr_zero(arg.reserved, ARRAY_SIZE(arg.reserved)))
		return -EINVAL;
	if (!arg.tid || arg.tid > PID_MAX_LIMIT)
		return -ESRCH;
	pid = find_get_pid(arg.tid);
	t = pid ? get_pid_task(pid, PIDTYPE_PID) : NULL;
	put_pid(pid);
	if (!t)
		return -ESRCH;
	if (!vr_task_owned(t)) {
		ret = -EPERM;
		goto out_put_task;
	}
	vt = kzalloc(sizeof(*vt), GFP_KERNEL_ACCOUNT);
	if (!vt) {
		ret = -ENOMEM;
		goto out_put_task;
	}

	mutex_lock(&vr_vm_mutex);
	rcu_read_lock();
	ret = vr_lookup(t, VR_KEY_TASK) ? -EEXIST : 0;
	rcu_read_unlock();
	if (!ret && vm->nr_tasks >= VR_MAX_TASKS)
		ret = -ENOSPC;
	if (!ret) {
		vt->task = t;
		list_add(&vt->list, &vm->tasks);
		vm->nr_tasks++;
		WRITE_ONCE(vr_nr_tasks, vr_nr_tasks + 1);
		vr_key_add(&vt->key, t, VR_KEY_TASK, vm);
	}
	mutex_unlock(&vr_vm_mutex);
	if (!ret)
		return 0;
	kfree(vt);
out_put_task:
	put_task_struct(t);
	return ret;
}

static long vr_vm_get_state(struct vr_vm *vm, void __user *argp)
{
	struct vmrapl_vpkg_state ps;
	struct vmrapl_state s;
	unsigned long flags;
	u64 *snap;
	u32 i, v, len;
	int ret;

	ret = vr_copy_sized(&s, sizeof(s), argp);
	if (ret)
		return ret;
	if (s.flags || !vr_zero(s.reserved, ARRAY_SIZE(s.reserved)))
		return -EINVAL;
	if (s.nr_vpkgs < vm->nr_vpkgs || s.nr_vcpus < vm->nr_vcpus ||
	    !s.vpkgs_ptr || !s.vcpus_ptr)
		return -EINVAL;

	vr_close_all();
	len = vr_gv_len(vm);
	snap = kcalloc(len, sizeof(*snap), GFP_KERNEL);
	if (!snap)
		return -ENOMEM;
	raw_spin_lock_irqsave(&vm->gv_lock, flags);
	/* Migration: the guest is stopped, publish now whatever the period. */
	vr_vm_compute(vm);
	vr_vm_page_update(vm);
	vm->gv_started = true;
	vm->gv_time = local_clock();
	memcpy(snap, vm->gv, len * sizeof(*snap));
	raw_spin_unlock_irqrestore(&vm->gv_lock, flags);

	ret = -EFAULT;
	for (v = 0; v < vm->nr_vpkgs; v++) {
		memset(&ps, 0, sizeof(ps));
		memcpy(ps.energy, vr_gv_pkg(vm, snap, v, 0), sizeof(ps.energy));
		if (copy_to_user(u64_to_user_ptr(s.vpkgs_ptr) + v * sizeof(ps),
				 &ps, sizeof(ps)))
			goto out_free;
	}
	for (i = 0; i < vm->nr_vcpus; i++)
		if (put_user(*vr_gv_core(vm, snap, i),
			     (u64 __user *)u64_to_user_ptr(s.vcpus_ptr) + i))
			goto out_free;
	s.size = sizeof(s);
	s.version = VMRAPL_STATE_VERSION;
	s.esu = vm->esu;
	s.nr_vpkgs = vm->nr_vpkgs;
	s.nr_vcpus = vm->nr_vcpus;
	ret = copy_to_user(argp, &s, sizeof(s)) ? -EFAULT : 0;
out_free:
	kfree(snap);
	return ret;
}

static long vr_vm_set_state(struct vr_vm *vm, void __user *argp)
{
	struct vmrapl_vpkg_state ps;
	struct vmrapl_state s;
	unsigned long flags;
	u64 *want, *cur, *off;
	u32 i, v, len;
	int ret;

	ret = vr_copy_sized(&s, sizeof(s), argp);
	if (ret)
		return ret;
	if (s.flags || !vr_zero(s.reserved, ARRAY_SIZE(s.reserved)) ||
	    s.version != VMRAPL_STATE_VERSION || s.esu != vm->esu ||
	    s.nr_vpkgs != vm->nr_vpkgs || s.nr_vcpus != vm->nr_vcpus ||
	    !s.vpkgs_ptr || !s.vcpus_ptr)
		return -EINVAL;

	len = vr_gv_len(vm);
	want = kcalloc(len, sizeof(*want), GFP_KERNEL);
	if (!want)
		return -ENOMEM;
	ret = -EFAULT;
	for (v = 0; v < vm->nr_vpkgs; v++) {
		if (copy_from_user(&ps, u64_to_user_ptr(s.vpkgs_ptr) +
				   v * sizeof(ps), sizeof(ps)))
			goto out_free;
		if (ps.reserved) {
			ret = -EINVAL;
			goto out_free;
		}
		memcpy(vr_gv_pkg(vm, want, v, 0), ps.energy, sizeof(ps.energy));
	}
	for (i = 0; i < vm->nr_vcpus; i++)
		if (get_user(*vr_gv_core(vm, want, i),
			     (u64 __user *)u64_to_user_ptr(s.vcpus_ptr) + i))
			goto out_free;

	raw_spin_lock_irqsave(&vm->gv_lock, flags);
	vr_vm_compute(vm);
	cur = vm->gv;
	off = vm->gv_off;
	/* Continue from the saved values; never step a counter back. */
	for (i = 0; i < len; i++) {
		if (want[i] > cur[i]) {
			off[i] += want[i] - cur[i];
			cur[i] = want[i];
		}
	}
	vr_vm_page_update(vm);
	vm->gv_started = true;
	vm->gv_time = local_clock();
	raw_spin_unlock_irqrestore(&vm->gv_lock, flags);
	ret = 0;
out_free:
	kfree(want);
	return ret;
}

static long vr_vm_ioctl(struct file *file, unsigned int cmd,
			unsigned long arg)
{
	struct vr_vm *vm = file->private_data;
	void __user *argp = (void __user *)arg;
	long ret;

	switch (cmd) {
	case VMRAPL_VM_ADD_TASK:
		return vr_vm_add_task(vm, argp);
	case VMRAPL_VM_READ_MSR:
		return vr_vm_read_msr(vm, argp);
	case VMRAPL_VM_SET_POLICY:
		return vr_vm_set_policy(vm, argp);
	case VMRAPL_VM_GET_STATS:
		return vr_vm_get_stats(vm, argp);
	case VMRAPL_VM_SET_TOPOLOGY:
	case VMRAPL_VM_GET_STATE:
	case VMRAPL_VM_SET_STATE:
		break;
	default:
		return -ENOTTY;
	}

	mutex_lock(&vm->lock);
	if (cmd == VMRAPL_VM_SET_TOPOLOGY)
		ret = vr_vm_set_topology(vm, argp);
	else if (cmd == VMRAPL_VM_GET_STATE)
		ret = vr_vm_get_state(vm, argp);
	else
		ret = vr_vm_set_state(vm, argp);
	mutex_unlock(&vm->lock);
	return ret;
}

static int vr_vm_mmap(struct file *file, struct vm_area_struct *vma)
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

static void vr_vm_free(struct vr_vm *vm)
{
	vfree(vm->page);
	kfree(vm->gv);
	kfree(vm->gv_off);
	kfree(vm->gv_tmp);
	kfree(vm->vpkg);
	kfree(vm->vpkg_vcpus);
	kvfree(vm->acct);
	kfree(vm);
}

static struct vr_vm *vr_vm_alloc(struct kvm *kvm, u32 nr_vcpus, u32 regset,
				 u32 esu)
{
	struct vr_vm *vm;
	u32 i;

	vm = kzalloc(sizeof(*vm), GFP_KERNEL_ACCOUNT);
	if (!vm)
		return NULL;
	INIT_LIST_HEAD(&vm->tasks);
	mutex_init(&vm->lock);
	raw_spin_lock_init(&vm->gv_lock);
	vm->kvm = kvm;
	vm->nr_vcpus = nr_vcpus;
	vm->regset = regset;
	vm->esu = esu;
	vm->nr_vpkgs = 1;
	vm->guest_period_ns = (u64)VMRAPL_GUEST_PERIOD_DEF_US * NSEC_PER_USEC;
	vm->acct = kvcalloc((size_t)(nr_vcpus + 1) * vr_npk(),
			    sizeof(*vm->acct), GFP_KERNEL_ACCOUNT);
	vm->vpkg = kcalloc(nr_vcpus, sizeof(u32), GFP_KERNEL_ACCOUNT);
	vm->page_size = struct_size(vm->page, vcpu, nr_vcpus);
	vm->page = vmalloc_user(PAGE_ALIGN(vm->page_size));
	if (!vm->acct || !vm->vpkg || !vm->page ||
	    vr_gv_alloc(vm, 1, &vm->gv, &vm->gv_off, &vm->gv_tmp,
			&vm->vpkg_vcpus)) {
		vr_vm_free(vm);
		return NULL;
	}
	vm->vpkg_vcpus[0] = nr_vcpus;
	vm->page->abi_version = VMRAPL_ABI_VERSION;
	vm->page->nr_vcpus = nr_vcpus;
	vm->page->regset = regset;
	vm->page->unit = vr_unit_msr(vm);
	vm->page->power_info = vr_power_info_msr(vm);
	vm->page->power_limit = 1ULL << 63;
	vm->page->domains = vr_pkgs[0]->core.domains;
	if (regset == VMRAPL_REGSET_AMD)
		vm->page->domains = BIT(VMRAPL_DOM_PKG) | BIT(VMRAPL_DOM_CORE);
	/* Non-zero before the first publication: perf hides a 0 counter. */
	for (i = 0; i < nr_vcpus; i++)
		vm->page->vcpu[i] = (struct vmrapl_page_vcpu){ 1, 1, 1 };
	return vm;
}

/* Make @vm visible to the probes.  vr_vm_mutex held. */
static void vr_vm_link(struct vr_vm *vm)
{
	lockdep_assert_held(&vr_vm_mutex);
	vm->id = vr_next_id++;
	list_add_tail(&vm->list, &vr_vms);
	vr_key_add(&vm->k_kvm, vm->kvm, VR_KEY_KVM, vm);
	/*
	 * The VMM's other threads are the VM's overhead.  A process that
	 * runs several VMs cannot tell whose they are: they stay host time.
	 */
	rcu_read_lock();
	if (vm->kvm->mm && !vr_lookup(vm->kvm->mm, VR_KEY_MM))
		vr_key_add(&vm->k_mm, vm->kvm->mm, VR_KEY_MM, vm);
	rcu_read_unlock();
}

/* Hide @vm from the probes and from the list.  vr_vm_mutex held. */
static void vr_vm_unlink(struct vr_vm *vm)
{
	struct vr_task *vt;

	lockdep_assert_held(&vr_vm_mutex);
	list_del(&vm->list);
	hash_del_rcu(&vm->k_kvm.node);
	if (vm->k_mm.key)
		hash_del_rcu(&vm->k_mm.node);
	vm->k_mm.key = NULL;
	list_for_each_entry(vt, &vm->tasks, list)
		hash_del_rcu(&vt->key.node);
	WRITE_ONCE(vr_nr_tasks, vr_nr_tasks - vm->nr_tasks);
	vr_filter_rebuild();
}

/*
 * Finish an unlinked VM: wait until no probe can reach it, take its
 * accounts off every CPU, close each package once so that nothing of it
 * stays pending, then free it.  Its energy stays in the package totals.
 */
static void vr_vm_finish(struct vr_vm *vm)
{
	struct vr_task *vt, *tmp;

	synchronize_rcu();
	vr_engine_release(vm->acct,
			  vm->acct + (size_t)(vm->nr_vcpus + 1) * vr_npk());
	list_for_each_entry_safe(vt, tmp, &vm->tasks, list) {
		put_task_struct(vt->task);
		kfree(vt);
	}
	if (vm->kvm_file)
		fput(vm->kvm_file);
	else
		kvm_put_kvm(vm->kvm);
	vr_vm_free(vm);
}

static int vr_vm_release(struct inode *inode, struct file *file)
{
	struct vr_vm *vm = file->private_data;

	mutex_lock(&vr_vm_mutex);
	vr_vm_unlink(vm);
	mutex_unlock(&vr_vm_mutex);
	vr_vm_finish(vm);
	return 0;
}

static const struct file_operations vr_vm_fops = {
	.owner = THIS_MODULE,
	.release = vr_vm_release,
	.unlocked_ioctl = vr_vm_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = vr_vm_mmap,
	.llseek = noop_llseek,
};

static struct vr_vm *vr_vm_find(struct kvm *kvm)
{
	struct vr_vm *vm;

	lockdep_assert_held(&vr_vm_mutex);
	list_for_each_entry(vm, &vr_vms, list)
		if (vm->kvm == kvm)
			return vm;
	return NULL;
}

long vr_attach_vm(void __user *argp)
{
	struct vr_vm *vm, *old = NULL;
	struct vmrapl_attach a;
	struct file *f;
	long ret;
	int fd;

	ret = vr_copy_sized(&a, sizeof(a), argp);
	if (ret)
		return ret;
	if (a.flags || !vr_zero(a.reserved, ARRAY_SIZE(a.reserved)))
		return -EINVAL;
	if (!a.nr_vcpus || a.nr_vcpus > VMRAPL_MAX_VCPUS)
		return -EINVAL;
	if (a.regset != VMRAPL_REGSET_INTEL && a.regset != VMRAPL_REGSET_AMD)
		return -EINVAL;
	if (!a.esu)
		a.esu = VMRAPL_DEFAULT_ESU;
	if (a.esu > 31)
		return -EINVAL;

	f = fget(a.kvm_fd);
	if (!f)
		return -EBADF;
	if (!file_is_kvm(f)) {
		ret = -EINVAL;
		goto err_put_file;
	}
	vm = vr_vm_alloc(f->private_data, a.nr_vcpus, a.regset, a.esu);
	if (!vm) {
		ret = -ENOMEM;
		goto err_put_file;
	}
	vm->kvm_file = f;
	vm->attached = true;
	vm->pid = task_tgid_nr(current);
	get_task_comm(vm->comm, current->group_leader);

	mutex_lock(&vr_vm_mutex);
	old = vr_vm_find(vm->kvm);
	if (old && old->attached) {
		mutex_unlock(&vr_vm_mutex);
		ret = -EEXIST;
		goto err_free_vm;
	}
	/* An auto-tracked VM becomes an attached one with fresh counters. */
	if (old)
		vr_vm_unlink(old);
	vr_vm_link(vm);
	mutex_unlock(&vr_vm_mutex);
	if (old)
		vr_vm_finish(old);

	fd = anon_inode_getfd("[vmrapl-vm]", &vr_vm_fops, vm,
			      O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		mutex_lock(&vr_vm_mutex);
		vr_vm_unlink(vm);
		mutex_unlock(&vr_vm_mutex);
		vr_vm_finish(vm);	/* drops the file too */
		return fd;
	}
	return fd;

err_free_vm:
	vr_vm_free(vm);
err_put_file:
	fput(f);
	return ret;
}

/* Start tracking a VM seen at kvm_entry; consumes the reference. */
static void vr_track_kvm(struct kvm *kvm)
{
	struct task_struct *t;
	struct vr_vm *vm;
	struct pid *pid;

	mutex_lock(&vr_vm_mutex);
	if (vr_vm_find(kvm) || vr_vm_stopping) {
		mutex_unlock(&vr_vm_mutex);
		kvm_put_kvm(kvm);
		return;
	}
	vm = vr_vm_alloc(kvm, max(1, READ_ONCE(kvm->created_vcpus)),
			 VMRAPL_REGSET_INTEL, VMRAPL_DEFAULT_ESU);
	if (!vm) {
		mutex_unlock(&vr_vm_mutex);
		kvm_put_kvm(kvm);
		return;
	}
	vm->pid = kvm->userspace_pid;
	pid = find_get_pid(vm->pid);
	t = pid ? get_pid_task(pid, PIDTYPE_PID) : NULL;
	put_pid(pid);
	if (t) {
		get_task_comm(vm->comm, t);
		put_task_struct(t);
	}
	vr_vm_link(vm);
	mutex_unlock(&vr_vm_mutex);
}

/*
 * Adopt the VMs the probes saw, and let go of auto-tracked VMs whose last
 * user is gone (only our reference is left).
 */
static void vr_track_workfn(struct work_struct *w)
{
	struct vr_vm *vm, *tmp;
	LIST_HEAD(dead);
	bool any = false;
	struct kvm *kvm;
	int cpu;

	for_each_possible_cpu(cpu) {
		kvm = xchg(per_cpu_ptr(&vr_seen_kvm, cpu), NULL);
		if (kvm)
			vr_track_kvm(kvm);
	}

	mutex_lock(&vr_vm_mutex);
	list_for_each_entry_safe(vm, tmp, &vr_vms, list) {
		if (vm->attached)
			continue;
		if (refcount_read(&vm->kvm->users_count) > 1) {
			any = true;
			continue;
		}
		vr_vm_unlink(vm);
		list_add(&vm->list, &dead);
	}
	mutex_unlock(&vr_vm_mutex);
	list_for_each_entry_safe(vm, tmp, &dead, list)
		vr_vm_finish(vm);

	/* Let go of a finished VM soon: our reference keeps its memory. */
	if (any && !READ_ONCE(vr_vm_stopping))
		schedule_delayed_work(&vr_track_work, HZ / 5);
}

static void vr_vm_entry(struct vr_vm *vm, struct vmrapl_vm_entry *e)
{
	unsigned int d;
	u32 i;

	memset(e, 0, sizeof(*e));
	e->id = vm->id;
	e->pid = vm->pid;
	e->nr_vcpus = vm->nr_vcpus;
	e->flags = vm->attached ? VMRAPL_VM_F_ATTACHED : 0;
	e->charge = READ_ONCE(vm->charge);
	for (d = 0; d < VR_NDOM; d++) {
		u64 ovh = vr_ovh_energy(vm, d), all = ovh;

		for (i = 0; i < vm->nr_vcpus; i++)
			all += vr_vcpu_energy(vm, i, d);
		e->energy_uj[d] = vr_eu_to_uj(all);
		e->overhead_uj[d] = vr_eu_to_uj(ovh);
	}
	for (i = 0; i < vm->nr_vcpus; i++)
		e->runtime_ns += vr_vcpu_ns(vm, i);
	e->overhead_ns = vr_ovh_ns(vm);
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

	vr_close_all();
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
	struct vr_stats_req r;
	void __user *sp;
	struct vr_vm *vm;
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

	vr_close_all();
	ret = -ENOENT;
	/* Listed VMs stay alive while vr_vm_mutex is held. */
	mutex_lock(&vr_vm_mutex);
	list_for_each_entry(vm, &vr_vms, list) {
		if (vm->id == q.id) {
			ret = vr_stats_fill(vm, &r);
			break;
		}
	}
	mutex_unlock(&vr_vm_mutex);
	if (!ret)
		ret = vr_stats_out(&r, sp);
	vr_stats_free(&r);
	return ret;
}

bool vr_vm_any(void)
{
	return !list_empty(&vr_vms);
}

int vr_vm_init(void)
{
	vr_vm_stopping = false;
	return 0;
}

/* Before the probes go: forget every VM (attached ones hold the module). */
void vr_vm_exit(void)
{
	struct vr_vm *vm, *tmp;
	LIST_HEAD(dead);

	WRITE_ONCE(vr_vm_stopping, true);
	cancel_delayed_work_sync(&vr_track_work);
	mutex_lock(&vr_vm_mutex);
	list_for_each_entry_safe(vm, tmp, &vr_vms, list) {
		vr_vm_unlink(vm);
		list_add(&vm->list, &dead);
	}
	mutex_unlock(&vr_vm_mutex);
	list_for_each_entry_safe(vm, tmp, &dead, list)
		vr_vm_finish(vm);
}

/* After the probes are gone: drop the references they left behind. */
void vr_vm_drain_seen(void)
{
	struct kvm *kvm;
	int cpu;

	/* A probe may have queued the work after vr_vm_exit() cancelled it. */
	cancel_delayed_work_sync(&vr_track_work);
	for_each_possible_cpu(cpu) {
		kvm = xchg(per_cpu_ptr(&vr_seen_kvm, cpu), NULL);
		if (kvm)
			kvm_put_kvm(kvm);
	}
}

void vr_vm_debugfs_show(struct seq_file *m)
{
	struct vr_vm *vm;
	unsigned int d;
	u32 i;

	mutex_lock(&vr_vm_mutex);
	list_for_each_entry(vm, &vr_vms, list) {
		u64 e[VR_NDOM], ns = 0;

		for (d = 0; d < VR_NDOM; d++) {
			e[d] = vr_ovh_energy(vm, d);
			for (i = 0; i < vm->nr_vcpus; i++)
				e[d] += vr_vcpu_energy(vm, i, d);
		}
		for (i = 0; i < vm->nr_vcpus; i++)
			ns += vr_vcpu_ns(vm, i);
		seq_printf(m, "vm %llu pid %d comm %s %s vcpus %u charge %s pkg_eu %llu core_eu %llu dram_eu %llu overhead_eu %llu runtime_ns %llu overhead_ns %llu\n",
			   vm->id, vm->pid, vm->comm,
			   vm->attached ? "attached" : "auto", vm->nr_vcpus,
			   vm->charge == VMRAPL_CHARGE_GUEST ? "guest" : "thread",
			   e[0], e[1], e[2], vr_ovh_energy(vm, VR_DOM_PKG),
			   ns, vr_ovh_ns(vm));
	}
	mutex_unlock(&vr_vm_mutex);
}
