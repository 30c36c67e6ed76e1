// SPDX-License-Identifier: GPL-2.0
/* The uapi's answers against their own wholes: see vr_whole.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "vr_ioctl.h"
#include "vr_time.h"
#include "vr_whole.h"

#define ND	VMRAPL_NR_DOMAINS
#define LIST_MAX	256
#define VCPU_MAX	64
#define VPKG_MAX	VMRAPL_MAX_VPKGS

static int broke(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (why && len) {
		va_start(ap, fmt);
		vsnprintf(why, len, fmt, ap);
		va_end(ap);
	}
	return -1;
}

#define RULE(cond, ...)						\
	do {							\
		if (!(cond))					\
			return broke(why, len, __VA_ARGS__);	\
	} while (0)

#define U(x)	((unsigned long long)(x))

int vr_whole_entry(const struct vmrapl_vm_entry *e, char *why, size_t len)
{
	int d;

	for (d = 0; d < ND; d++)
		RULE(e->overhead_uj[d] <= e->energy_uj[d],
		     "LIST_VMS vm %llu dom %d: overhead %llu > energy %llu uJ",
		     U(e->id), d, U(e->overhead_uj[d]), U(e->energy_uj[d]));
	RULE(e->static_uj <= e->energy_uj[VMRAPL_DOM_PKG],
	     "LIST_VMS vm %llu: static %llu > energy %llu uJ", U(e->id),
	     U(e->static_uj), U(e->energy_uj[VMRAPL_DOM_PKG]));
	RULE(e->overhead_static_uj <= e->overhead_uj[VMRAPL_DOM_PKG],
	     "LIST_VMS vm %llu: overhead static %llu > overhead %llu uJ",
	     U(e->id), U(e->overhead_static_uj),
	     U(e->overhead_uj[VMRAPL_DOM_PKG]));
	RULE(e->overhead_static_uj <= e->static_uj,
	     "LIST_VMS vm %llu: overhead static %llu > static %llu uJ",
	     U(e->id), U(e->overhead_static_uj), U(e->static_uj));
	return 0;
}

int vr_whole_stats(const struct vmrapl_stats *st,
		   const struct vmrapl_vcpu_stats *vs, uint32_t nvs,
		   const struct vmrapl_vpkg_stats *ps, uint32_t nps,
		   char *why, size_t len)
{
	uint64_t sum[ND] = { 0 }, psum[ND] = { 0 }, ns = 0;
	uint32_t i;
	int d;

	for (d = 0; d < ND; d++)
		RULE(st->overhead_uj[d] <= st->energy_uj[d],
		     "GET_STATS dom %d: overhead %llu > energy %llu uJ", d,
		     U(st->overhead_uj[d]), U(st->energy_uj[d]));
	RULE(st->static_uj <= st->energy_uj[VMRAPL_DOM_PKG],
	     "GET_STATS: static %llu > energy %llu uJ", U(st->static_uj),
	     U(st->energy_uj[VMRAPL_DOM_PKG]));
	RULE(st->overhead_static_uj <= st->overhead_uj[VMRAPL_DOM_PKG] &&
	     st->overhead_static_uj <= st->static_uj,
	     "GET_STATS: overhead static %llu > overhead %llu or static %llu uJ",
	     U(st->overhead_static_uj), U(st->overhead_uj[VMRAPL_DOM_PKG]),
	     U(st->static_uj));
	for (i = 0; i < nvs; i++) {
		RULE(vs[i].static_uj <= vs[i].energy_uj[VMRAPL_DOM_PKG],
		     "GET_STATS vcpu %u: static %llu > energy %llu uJ", i,
		     U(vs[i].static_uj), U(vs[i].energy_uj[VMRAPL_DOM_PKG]));
		for (d = 0; d < ND; d++)
			sum[d] += vs[i].energy_uj[d];
		ns += vs[i].runtime_ns;
	}
	for (i = 0; i < nps; i++) {
		RULE(ps[i].static_uj <= ps[i].energy_uj[VMRAPL_DOM_PKG],
		     "GET_STATS vpkg %u: static %llu > energy %llu uJ", i,
		     U(ps[i].static_uj), U(ps[i].energy_uj[VMRAPL_DOM_PKG]));
		for (d = 0; d < ND; d++) {
			RULE(ps[i].overhead_uj[d] <= ps[i].energy_uj[d],
			     "GET_STATS vpkg %u dom %d: overhead %llu > energy %llu uJ",
			     i, d, U(ps[i].overhead_uj[d]),
			     U(ps[i].energy_uj[d]));
			psum[d] += ps[i].energy_uj[d];
		}
	}
	/* Each figure is floored on its own: parts sum to at most the VM. */
	for (d = 0; d < ND; d++) {
		RULE(sum[d] + st->overhead_uj[d] <= st->energy_uj[d],
		     "GET_STATS dom %d: vCPUs %llu + overhead %llu > energy %llu uJ",
		     d, U(sum[d]), U(st->overhead_uj[d]), U(st->energy_uj[d]));
		RULE(psum[d] <= st->energy_uj[d],
		     "GET_STATS dom %d: vpkgs %llu > energy %llu uJ", d,
		     U(psum[d]), U(st->energy_uj[d]));
	}
	RULE(ns <= st->runtime_ns,
	     "GET_STATS: vCPUs' runtime %llu > the VM's %llu ns", U(ns),
	     U(st->runtime_ns));
	return 0;
}

int vr_whole_pkg(const struct vmrapl_pkg_stats *p,
		 const struct vmrapl_pkg_static *s, char *why, size_t len)
{
	int d;

	for (d = 0; d < ND; d++) {
		uint64_t parts = p->tracked_uj[d] + p->host_uj[d] +
				 p->idle_uj[d] + p->lost_uj[d];

		/* Each part is floored to uJ on its own: up to 3 uJ less. */
		RULE(parts <= p->sampled_uj[d] && parts + 4 >= p->sampled_uj[d],
		     "GET_PKG_STATS dom %d: tracked + host + idle + lost %llu against sampled %llu uJ",
		     d, U(parts), U(p->sampled_uj[d]));
	}
	if (!s)
		return 0;
	RULE(s->static_uj <= p->sampled_uj[VMRAPL_DOM_PKG],
	     "GET_PKG_STATS: static %llu > sampled %llu uJ", U(s->static_uj),
	     U(p->sampled_uj[VMRAPL_DOM_PKG]));
	RULE(s->tracked_static_uj <= p->tracked_uj[VMRAPL_DOM_PKG],
	     "GET_PKG_STATS: tracked static %llu > tracked %llu uJ",
	     U(s->tracked_static_uj), U(p->tracked_uj[VMRAPL_DOM_PKG]));
	RULE(s->host_static_uj <= p->host_uj[VMRAPL_DOM_PKG],
	     "GET_PKG_STATS: host static %llu > host %llu uJ",
	     U(s->host_static_uj), U(p->host_uj[VMRAPL_DOM_PKG]));
	return 0;
}

static void count(struct vr_whole_count *c, int bad, const char *why)
{
	c->answers++;
	if (!bad)
		return;
	if (!c->broken++)
		snprintf(c->first, sizeof(c->first), "%s", why);
}

int vr_whole_sweep(int dev, struct vr_whole_count *c)
{
	static __thread struct vmrapl_vm_entry ents[LIST_MAX];
	static __thread struct vmrapl_vcpu_stats vs[VCPU_MAX];
	static __thread struct vmrapl_vpkg_stats ps[VPKG_MAX];
	struct vmrapl_pkg_static pst[8];
	struct vmrapl_pkg_stats pk[8];
	struct vmrapl_vm_list l = {
		.size = sizeof(l), .nr_vms = LIST_MAX,
		.vms_ptr = (uintptr_t)ents,
	};
	struct vmrapl_pkg_list pl = {
		.size = sizeof(pl), .nr_pkgs = 8,
		.pkgs_ptr = (uintptr_t)pk, .static_ptr = (uintptr_t)pst,
		.static_size = sizeof(pst[0]),
	};
	char why[256];
	uint32_t i, n;

	if (ioctl(dev, VMRAPL_LIST_VMS, &l))
		return -errno;
	n = l.nr_vms < LIST_MAX ? l.nr_vms : LIST_MAX;
	for (i = 0; i < n; i++)
		count(c, vr_whole_entry(&ents[i], why, sizeof(why)), why);
	for (i = 0; i < n; i++) {
		struct vmrapl_stats st = {
			.size = sizeof(st), .nr_vcpus = VCPU_MAX,
			.vcpus_ptr = (uintptr_t)vs, .nr_vpkgs = VPKG_MAX,
			.vpkgs_ptr = (uintptr_t)ps,
		};
		struct vmrapl_vm_query q = {
			.size = sizeof(q), .id = ents[i].id,
			.stats_ptr = (uintptr_t)&st,
		};

		if (ioctl(dev, VMRAPL_GET_VM_STATS, &q)) {
			if (errno == ENOENT)
				continue;	/* gone meanwhile */
			return -errno;
		}
		count(c, vr_whole_stats(&st, vs, st.nr_vcpus < VCPU_MAX ?
					st.nr_vcpus : VCPU_MAX,
					ps, st.nr_vpkgs < VPKG_MAX ?
					st.nr_vpkgs : VPKG_MAX,
					why, sizeof(why)), why);
	}
	if (ioctl(dev, VMRAPL_GET_PKG_STATS, &pl))
		return -errno;
	n = pl.nr_pkgs < 8 ? pl.nr_pkgs : 8;
	for (i = 0; i < n; i++)
		count(c, vr_whole_pkg(&pk[i], &pst[i], why, sizeof(why)), why);
	return 0;
}

static void *vr_whole_thread(void *arg)
{
	struct vr_whole_reader *w = arg;
	int dev = vr_open_dev(), ret;

	if (dev < 0) {
		w->err = -errno;
		return NULL;
	}
	while (!w->stop) {
		ret = vr_whole_sweep(dev, &w->c);
		if (ret && !w->err)
			w->err = ret;
		vr_sleep_ms(5);
	}
	close(dev);
	return NULL;
}

int vr_whole_start(struct vr_whole_reader *w)
{
	memset(w, 0, sizeof(*w));
	return pthread_create(&w->th, NULL, vr_whole_thread, w) ? -1 : 0;
}

void vr_whole_stop(struct vr_whole_reader *w)
{
	w->stop = 1;
	pthread_join(w->th, NULL);
}
