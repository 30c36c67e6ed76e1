// SPDX-License-Identifier: MIT
/* --fake-vrapl: see fake-vrapl.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake-vrapl.h"

/*
 * The fake measures every domain its register set has a register for
 * (VMRAPL_REGISTERS): Intel pkg, core and DRAM, AMD pkg and core.
 */
static uint32_t regset_domains(unsigned int regset)
{
	static const struct vmrapl_reg registers[] = VMRAPL_REGISTERS;
	uint32_t doms = 0;
	size_t i;

	for (i = 0; i < sizeof(registers) / sizeof(registers[0]); i++)
		if (registers[i].regset == regset)
			doms |= registers[i].dom_mask;
	return doms;
}

int fake_vrapl_init(struct fake_vrapl *f, unsigned int regset,
		    unsigned int nr_vcpus)
{
	struct vmrapl_page *p;
	unsigned int i;

	memset(f, 0, sizeof(*f));
	f->nr_vcpus = nr_vcpus;
	f->len = vmrapl_page_size(nr_vcpus);
	f->clocks = calloc(nr_vcpus, sizeof(*f->clocks));
	f->core = calloc(nr_vcpus, sizeof(*f->core));
	p = aligned_alloc((size_t)sysconf(_SC_PAGESIZE), f->len);
	if (!p || !f->clocks || !f->core) {
		free(p);
		free(f->clocks);
		free(f->core);
		return -ENOMEM;
	}
	memset(p, 0, f->len);
	p->abi_version = VMRAPL_ABI_VERSION;
	p->nr_vcpus = nr_vcpus;
	p->regset = regset;
	/* Power unit 1/8 W, energy unit 2^-14 J, time unit 2^-10 s. */
	p->unit = (10u << 16) | (FAKE_ESU << 8) | 3u;
	p->power_info = 8u * 100;		/* "TDP" 100 W */
	p->power_limit = (1u << 15) | 8u * 100;	/* enabled, 100 W */
	p->domains = regset_domains(regset);
	for (i = 0; i < nr_vcpus; i++)
		p->vcpu[i].pkg = p->vcpu[i].core = p->vcpu[i].dram = FAKE_START;
	f->page = p;
	return 0;
}

int fake_vrapl_attach(struct fake_vrapl *f, unsigned int regset,
		      unsigned int nr_vcpus, struct vmrapl_vm **out)
{
	int r = fake_vrapl_init(f, regset, nr_vcpus);

	if (r == 0)
		r = vmrapl_vm_from_page(f->page, nr_vcpus, regset,
					f->page->domains, out);
	return r;
}

/* Energy in counts of 2^-FAKE_ESU J for @ns of CPU time at @watts. */
static uint64_t counts(uint64_t ns, unsigned int watts)
{
	return (uint64_t)((double)ns * watts / 1e9 * (double)(1u << FAKE_ESU));
}

static void *writer(void *arg)
{
	struct fake_vrapl *f = arg;
	struct vmrapl_page *p = f->page;
	struct timespec next;
	unsigned int i;

	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!__atomic_load_n(&f->stop, __ATOMIC_ACQUIRE)) {
		uint64_t total = 0;
		uint32_t s;

		for (i = 0; i < f->nr_vcpus; i++) {
			struct timespec ts;

			/* A thread that is gone keeps its last value. */
			if (clock_gettime(f->clocks[i], &ts) == 0)
				f->core[i] = counts((uint64_t)ts.tv_sec *
						    1000000000ull +
						    (uint64_t)ts.tv_nsec,
						    FAKE_WATTS_PER_VCPU);
			total += f->core[i];
		}
		/* The kernel's writer side: odd, data, even, with barriers. */
		s = __atomic_load_n(&p->seq, __ATOMIC_RELAXED);
		__atomic_store_n(&p->seq, s + 1, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_RELEASE);
		for (i = 0; i < f->nr_vcpus; i++) {
			struct vmrapl_page_vcpu *v = &p->vcpu[i];

			/* 32-bit counters: the guest sees them wrap. */
			__atomic_store_n(&v->pkg, (uint32_t)(FAKE_START + total),
					 __ATOMIC_RELAXED);
			__atomic_store_n(&v->core,
					 (uint32_t)(FAKE_START + f->core[i]),
					 __ATOMIC_RELAXED);
			__atomic_store_n(&v->dram,
					 (uint32_t)(FAKE_START + total / 4),
					 __ATOMIC_RELAXED);
		}
		__atomic_store_n(&p->seq, s + 2, __ATOMIC_RELEASE);

		next.tv_nsec += 1000000;
		if (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	return NULL;
}

int fake_vrapl_start(struct fake_vrapl *f, const pthread_t *threads)
{
	unsigned int i;
	int r;

	for (i = 0; i < f->nr_vcpus; i++) {
		r = pthread_getcpuclockid(threads[i], &f->clocks[i]);
		if (r)
			return -r;
	}
	r = pthread_create(&f->writer, NULL, writer, f);
	if (r)
		return -r;
	f->running = 1;
	return 0;
}

static void fake_vrapl_stop(struct fake_vrapl *f)
{
	if (f->running) {
		__atomic_store_n(&f->stop, 1, __ATOMIC_RELEASE);
		pthread_join(f->writer, NULL);
		f->running = 0;
	}
}

void fake_vrapl_stats(struct fake_vrapl *f, struct vmrapl_stats *st,
		      struct vmrapl_vcpu_stats *v)
{
	uint32_t doms = f->page->domains;
	unsigned int i, d;

	fake_vrapl_stop(f);
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	st->nr_vcpus = f->nr_vcpus;
	for (i = 0; i < f->nr_vcpus; i++) {
		/* counts of 2^-FAKE_ESU J in uJ */
		uint64_t uj = (uint64_t)((double)f->core[i] * 1e6 /
					 (double)(1u << FAKE_ESU));

		memset(&v[i], 0, sizeof(v[i]));
		v[i].energy_uj[VMRAPL_DOM_PKG] = uj;
		v[i].energy_uj[VMRAPL_DOM_CORE] = uj;
		v[i].energy_uj[VMRAPL_DOM_DRAM] = uj / 4;
		for (d = 0; d < VMRAPL_NR_DOMAINS; d++) {
			if (!(doms & (1u << d)))
				v[i].energy_uj[d] = 0;
			st->energy_uj[d] += v[i].energy_uj[d];
		}
	}
}

void fake_vrapl_destroy(struct fake_vrapl *f)
{
	fake_vrapl_stop(f);
	free(f->page);
	free(f->clocks);
	free(f->core);
	f->page = NULL;
	f->clocks = NULL;
	f->core = NULL;
}
