// SPDX-License-Identifier: MIT
/*
 * vmrapl-vmm: a small reference KVM VMM for vmrapl.
 *
 * It creates a VM with N vCPU threads running one of the built-in guest
 * programs of guest.S, attaches the VM to /dev/vmrapl through libvmrapl
 * (when the module is there), makes the guest's RAPL MSR accesses exit
 * with a KVM MSR filter and answers them through the library.  At the end
 * it prints what the guest saw and what vmrapl charged to the VM.
 *
 * Exit codes: 0 ok, 1 usage, 2 KVM/host setup failed, 3 vmrapl failed
 * (or --require-vrapl without vmrapl), 4 a vCPU failed (unexpected exit,
 * guest exception, KVM_RUN error).
 *
 * This file runs the whole thing; vmm.h says where each part lives, and
 * vrapl.c is the part to read for how a VMM uses libvmrapl.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm.h"

void die(int code, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "vmrapl-vmm: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(code);
}

static void on_kick(int sig)
{
	(void)sig;
}

/* ---- statistics and teardown ------------------------------------------ */

/* After the vCPUs stopped: what libvmrapl answered and vmrapl charged. */
static void collect_stats(struct vmm *m)
{
	if (!m->vrvm)
		return;
	vmrapl_exit_counters(m->vrvm, &m->xc);
	if (m->mode == VRAPL_OFF)
		return;
	m->vstats = calloc(m->o.nr_vcpus, sizeof(*m->vstats));
	if (!m->vstats)
		die(EXIT_VRAPL, "out of memory");
	if (m->mode == VRAPL_FAKE) {
		unsigned int i;

		/* The fake's books, with the vCPU threads' CPU time. */
		fake_vrapl_stats(&m->fake, &m->stats, m->vstats);
		for (i = 0; i < m->o.nr_vcpus; i++) {
			m->vstats[i].runtime_ns = m->vcpus[i].cpu_ns;
			m->stats.runtime_ns += m->vcpus[i].cpu_ns;
		}
		return;
	}
	m->stats_rc = vmrapl_get_stats(m->vrvm, &m->stats, m->vstats,
				       m->o.nr_vcpus, m->vpstats,
				       VMRAPL_MAX_VPKGS);
	if (m->stats_rc < 0)
		fprintf(stderr, "vmrapl-vmm: VMRAPL_VM_GET_STATS: %s\n",
			strerror(-m->stats_rc));
}

static void close_vrapl(struct vmm *m)
{
	vmrapl_detach(m->vrvm);		/* closes the vmrapl VM fd */
	m->vrvm = NULL;
	vmrapl_close(m->vr);
	m->vr = NULL;
	if (m->mode == VRAPL_FAKE)
		fake_vrapl_destroy(&m->fake);
}

/*
 * Default: the vmrapl VM fd first (vmrapl finalizes while KVM's VM is
 * still alive), then the vCPUs and the KVM VM.  kvm-first is the reverse,
 * for lifecycle tests: vmrapl must cope with a KVM VM that is gone (or
 * kept alive only by vmrapl's own reference).
 */
static void teardown(struct vmm *m)
{
	if (!m->o.kvm_first) {
		close_vrapl(m);
		close_kvm(m);
		return;
	}
	close_kvm(m);
	if (m->vrvm && m->mode == VRAPL_KERNEL) {
		struct vmrapl_stats st;

		m->after_close_tried = true;
		m->after_close_rc = vmrapl_get_stats(m->vrvm, &st, NULL, 0,
						     NULL, 0);
	}
	close_vrapl(m);
}

/* ---- main ------------------------------------------------------------- */

/* --fake-vrapl: the page follows the vCPU threads' CPU time. */
static void start_fake_writer(struct vmm *m)
{
	pthread_t *th = calloc(m->o.nr_vcpus, sizeof(*th));
	unsigned int i;
	int r;

	for (i = 0; th && i < m->o.nr_vcpus; i++)
		th[i] = m->vcpus[i].thread;
	r = th ? fake_vrapl_start(&m->fake, th) : -ENOMEM;
	free(th);
	if (r < 0)
		vrapl_fail("fake vRAPL writer", r);
}

static void wait_start(int fd)
{
	char c;
	ssize_t r;

	do {
		r = read(fd, &c, 1);
	} while (r < 0 && errno == EINTR);
	if (r < 0)
		die(EXIT_USAGE, "--wait-start %d: %s", fd, strerror(errno));
}

/* Wait for the duration, a SIGINT/SIGTERM, or a failing vCPU. */
static void wait_run(struct vmm *m, const sigset_t *waitset)
{
	uint64_t end = m->o.duration > 0 ?
		mono_ns() + (uint64_t)(m->o.duration * 1e9) : 0;

	for (;;) {
		struct timespec ts, *tsp = NULL;
		uint64_t t = mono_ns();
		int sig;

		if (end) {
			if (t >= end)
				return;
			ts.tv_sec = (time_t)((end - t) / 1000000000ull);
			ts.tv_nsec = (long)((end - t) % 1000000000ull);
			tsp = &ts;
		}
		sig = sigtimedwait(waitset, NULL, tsp);
		if (sig == SIGINT || sig == SIGTERM) {
			m->interrupted = true;
			return;
		}
		if (sig == FAIL_SIGNAL)
			return;
		/* EAGAIN (timeout) and EINTR: recheck the clock. */
	}
}

int main(int argc, char **argv)
{
	static struct vmm vmm;
	struct vmm *m = &vmm;
	struct sigaction sa;
	sigset_t block, waitset;
	unsigned int i;
	uint64_t t0;
	int code = 0;

	parse_options(&m->o, argc, argv);
	check_options(&m->o);
	m->main_thread = pthread_self();
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (m->o.trace_path) {
		m->trace = fopen(m->o.trace_path, "w");
		if (!m->trace)
			die(EXIT_USAGE, "--trace: cannot create %s: %s",
			    m->o.trace_path, strerror(errno));
		setvbuf(m->trace, NULL, _IOLBF, 0);
	}

	/*
	 * Signals: the kick is blocked everywhere except inside KVM_RUN and
	 * the vCPUs' sleeps; SIGINT/SIGTERM/FAIL are blocked everywhere and
	 * taken synchronously by the main thread.
	 */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_kick;
	sigemptyset(&sa.sa_mask);
	sigaction(KICK_SIGNAL, &sa, NULL);
	sigemptyset(&waitset);
	sigaddset(&waitset, SIGINT);
	sigaddset(&waitset, SIGTERM);
	sigaddset(&waitset, FAIL_SIGNAL);
	block = waitset;
	sigaddset(&block, KICK_SIGNAL);
	pthread_sigmask(SIG_BLOCK, &block, NULL);
	pthread_sigmask(SIG_BLOCK, NULL, &m->run_mask);
	sigdelset(&m->run_mask, KICK_SIGNAL);

	setup_kvm(m);
	setup_guest_memory(m);
	vrapl_setup(m);

	m->vcpus = calloc(m->o.nr_vcpus, sizeof(*m->vcpus));
	if (!m->vcpus)
		die(EXIT_KVM, "out of memory");
	for (i = 0; i < m->o.nr_vcpus; i++) {
		struct vcpu *v = &m->vcpus[i];

		v->m = m;
		v->idx = i;
		v->cpu = i < m->o.nr_pin ? m->o.pin[i] : -1;
		setup_vcpu(m, v);
		setup_mailbox(m, v);
	}

	if (m->trace) {
		fputs("# t_s vcpu host_pkg_uj", m->trace);
		for (i = 0; i < (unsigned int)m->vcpus[0].nr_msrs; i++)
			fprintf(m->trace, " msr_%#x", m->vcpus[0].msr[i].index);
		fputc('\n', m->trace);
	}
	start_vcpus(m);
	pthread_barrier_wait(&m->ready);
	start_overhead_thread(m);
	if (m->mode == VRAPL_FAKE)
		start_fake_writer(m);

	if (m->o.print_tids) {
		printf("tids:");
		for (i = 0; i < m->o.nr_vcpus; i++)
			printf(" %d", (int)m->vcpus[i].tid);
		printf("\n");
		if (m->o.overhead_pct >= 0)
			printf("overhead-tid: %d\n", (int)m->ovh_tid);
		fflush(stdout);
	}
	if (m->o.wait_start_fd >= 0)
		wait_start(m->o.wait_start_fd);

	t0 = mono_ns();
	m->t0_ns = t0;
	pthread_barrier_wait(&m->go);
	wait_run(m, &waitset);
	stop_vcpus(m);
	for (i = 0; i < m->o.nr_vcpus; i++)
		pthread_join(m->vcpus[i].thread, NULL);
	if (m->o.overhead_pct >= 0)
		pthread_join(m->ovh_thread, NULL);
	m->wall_s = (double)(mono_ns() - t0) / 1e9;

	for (i = 0; i < m->o.nr_vcpus; i++)
		if (m->vcpus[i].failed) {
			fprintf(stderr, "vmrapl-vmm: vcpu %u: %s\n", i,
				m->vcpus[i].err);
			code = EXIT_VCPU;
		}
	collect_stats(m);
	if (m->vrvm && m->stats_rc < 0 && !code)
		code = EXIT_VRAPL;
	teardown(m);

	if (m->o.json)
		print_json(m, code);
	else
		print_human(m);
	if (m->trace && fclose(m->trace) && !code) {
		fprintf(stderr, "vmrapl-vmm: --trace: writing %s: %s\n",
			m->o.trace_path, strerror(errno));
		code = EXIT_USAGE;
	}
	free(m->vstats);
	free(m->vcpus);
	free(m->cpuid);
	return code;
}
