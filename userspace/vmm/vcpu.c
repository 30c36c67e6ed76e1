// SPDX-License-Identifier: MIT
/*
 * vmrapl-vmm: the vCPU threads (KVM_RUN and its exits: port I/O of the
 * guest programs, HLT, RDMSR/WRMSR) and the --overhead-thread.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/kvm.h>

#include "vmm.h"

static volatile int stop_flag;

static bool stopping(void)
{
	return __atomic_load_n(&stop_flag, __ATOMIC_ACQUIRE);
}

static void vcpu_fail(struct vcpu *v, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void vcpu_fail(struct vcpu *v, const char *fmt, ...)
{
	va_list ap;

	if (v->failed)
		return;
	v->failed = 1;
	va_start(ap, fmt);
	vsnprintf(v->err, sizeof(v->err), fmt, ap);
	va_end(ap);
}

/*
 * Sleep until @deadline (CLOCK_MONOTONIC ns) or a kick.  KICK_SIGNAL is
 * blocked in vCPU threads except inside KVM_RUN and here, so a kick sent
 * at any moment is either taken here or makes the next KVM_RUN return.
 */
static void vcpu_sleep_until(struct vmm *m, struct vcpu *v, uint64_t deadline)
{
	uint64_t t0 = mono_ns(), t = t0;

	while (!stopping() && (deadline == 0 || t < deadline)) {
		struct timespec ts, *tsp = NULL;

		if (deadline) {
			ts.tv_sec = (time_t)((deadline - t) / 1000000000ull);
			ts.tv_nsec = (long)((deadline - t) % 1000000000ull);
			tsp = &ts;
		}
		ppoll(NULL, 0, tsp, &m->run_mask);
		t = mono_ns();
	}
	v->halted_ns += t - t0;
}

static void track_msr(struct msr_track *t, uint64_t val)
{
	t->count++;
	if (!t->seen) {
		t->seen = true;
		t->first = t->last = val;
		return;
	}
	if (t->energy) {
		uint32_t old = (uint32_t)t->last, now = (uint32_t)val;
		uint32_t d = now - old;

		if (d >= 0x80000000u) {
			t->violations++;	/* perf would see negative energy */
		} else if (d) {
			if (now < old)
				t->wraps++;
			t->delta += d;
		}
	} else if (val != t->last) {
		t->changes++;
	}
	t->last = val;
}

static void on_report(struct vcpu *v)
{
	uint64_t prev_uj = v->last_report_uj, prev2_uj = v->prev_report_uj;
	/* 3 numbers and MB_MAX_MSRS values of at most 20 digits each */
	char line[64 + MB_MAX_MSRS * 22];
	uint32_t faults;
	size_t len;
	int i;

	v->reports++;
	v->last_report_ns = mono_ns();
	v->last_report_uj = vrapl_vm_energy_uj(v->m);
	v->prev_report_uj = prev_uj;
	/* From the window's first report on: REPORT_WARMUP >= 2. */
	if (v->reports > REPORT_WARMUP) {
		if (v->last_report_uj - prev_uj > v->max_step_uj)
			v->max_step_uj = v->last_report_uj - prev_uj;
		if (v->last_report_uj - prev2_uj > v->max_step2_uj)
			v->max_step2_uj = v->last_report_uj - prev2_uj;
	}
	if (!v->first_report_ns) {
		v->first_report_ns = v->last_report_ns;
		v->first_report_uj = v->last_report_uj;
	}
	memcpy(&faults, v->page + MB_FAULTS, sizeof(faults));
	/* --trace: the line is built here and written whole (vCPU threads). */
	len = snprintf(line, sizeof(line), "%.6f %u %" PRIu64,
		       (double)(v->last_report_ns - v->m->t0_ns) / 1e9, v->idx,
		       v->last_report_uj);
	for (i = 0; i < v->nr_msrs; i++) {
		uint64_t val;

		if (faults & (1u << i)) {
			v->msr[i].faults++;
			len += snprintf(line + len, sizeof(line) - len, " -");
			continue;
		}
		memcpy(&val, v->page + MB_VALUE + 8 * i, sizeof(val));
		track_msr(&v->msr[i], val);
		len += snprintf(line + len, sizeof(line) - len, " %" PRIu64, val);
	}
	if (v->m->trace)
		fprintf(v->m->trace, "%s\n", line);
	if (v->reports == REPORT_WARMUP + 1) {
		v->warm_report_ns = v->last_report_ns;
		v->warm_report_uj = v->last_report_uj;
		for (i = 0; i < v->nr_msrs; i++)
			v->msr[i].delta_warm = v->msr[i].delta;
	}
}

static void on_fatal(struct vmm *m, struct vcpu *v)
{
	struct kvm_regs regs;
	uint32_t w[3] = { 0, 0, 0 };

	if (ioctl(v->fd, KVM_GET_REGS, &regs) == 0 &&
	    regs.rsp + sizeof(w) + 4 <= m->mem_size)
		memcpy(w, m->mem + regs.rsp + 4, sizeof(w));
	vcpu_fail(v, "guest exception %u (stack after vector: %#x %#x %#x)",
		  (unsigned int)regs.rax, w[0], w[1], w[2]);
}

static int handle_io(struct vmm *m, struct vcpu *v)
{
	struct kvm_run *run = v->run;
	unsigned char *data = (unsigned char *)run + run->io.data_offset;

	switch (run->io.port) {
	case PORT_PIO:
		v->pio++;
		return 0;
	case PORT_REPORT:
		on_report(v);
		return 0;
	case PORT_DUTY:
		if (run->io.direction == KVM_EXIT_IO_IN) {
			/* Busy time is this thread's CPU time (what schedstat
			 * and vmrapl see), not wall time, so that steal or
			 * preemption does not shorten the busy part. */
			uint32_t halt = now_ns(CLOCK_THREAD_CPUTIME_ID) -
					v->period_cpu >= v->busy_ns;

			memset(data, 0, run->io.size);
			memcpy(data, &halt, run->io.size < 4 ? run->io.size : 4);
		}
		return 0;
	case PORT_FATAL:
		on_fatal(m, v);
		return -1;
	default:
		vcpu_fail(v, "unexpected %s of port %#x",
			  run->io.direction == KVM_EXIT_IO_IN ? "in" : "out",
			  run->io.port);
		return -1;
	}
}

static int handle_hlt(struct vmm *m, struct vcpu *v)
{
	uint64_t next;

	switch (m->o.prog) {
	case PROG_IDLE:
		/* --report-msr: wake the guest for its next read. */
		vcpu_sleep_until(m, v, m->o.report_ms ? mono_ns() +
				 m->o.report_ms * 1000000ull : 0);
		return 0;
	case PROG_DUTY:
		/* Sleep out the period, then start the next one. */
		next = v->period_start + v->period_ns;
		vcpu_sleep_until(m, v, next);
		v->period_start = next;
		if (mono_ns() >= next + v->period_ns)
			v->period_start = mono_ns();	/* fell behind: resync */
		v->period_cpu = now_ns(CLOCK_THREAD_CPUTIME_ID);
		return 0;
	default:
		vcpu_fail(v, "unexpected HLT");
		return -1;
	}
}

static int handle_msr(struct vmm *m, struct vcpu *v)
{
	struct kvm_run *run = v->run;

	v->exits_msr++;
	if (vrapl_handle_exit(m, run, v->idx))
		return 0;
	/* Not vmrapl's: this VMM filters nothing else, so just #GP. */
	v->msr_foreign++;
	run->msr.error = 1;
	return 0;
}

static void internal_error(struct vcpu *v)
{
	struct kvm_run *run = v->run;
	struct kvm_regs regs;
	char data[128] = "";
	size_t len = 0;
	unsigned int i;

	for (i = 0; i < run->internal.ndata && i < 4; i++)
		len += (size_t)snprintf(data + len, sizeof(data) - len, " %#llx",
					(unsigned long long)run->internal.data[i]);
	if (ioctl(v->fd, KVM_GET_REGS, &regs) < 0)
		memset(&regs, 0, sizeof(regs));
	vcpu_fail(v, "KVM internal error, suberror %u, rip %#llx, data:%s",
		  run->internal.suberror, (unsigned long long)regs.rip, data);
}

static void vcpu_loop(struct vmm *m, struct vcpu *v)
{
	struct kvm_run *run = v->run;

	v->period_start = mono_ns();
	v->period_cpu = now_ns(CLOCK_THREAD_CPUTIME_ID);
	while (!stopping()) {
		int r = ioctl(v->fd, KVM_RUN, 0);

		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN) {
				v->exits_intr++;
				continue;
			}
			vcpu_fail(v, "KVM_RUN: %s", strerror(errno));
			return;
		}
		v->exits++;
		switch (run->exit_reason) {
		case KVM_EXIT_IO:
			v->exits_io++;
			r = handle_io(m, v);
			break;
		case KVM_EXIT_HLT:
			v->exits_hlt++;
			r = handle_hlt(m, v);
			break;
		case KVM_EXIT_X86_RDMSR:
		case KVM_EXIT_X86_WRMSR:
			r = handle_msr(m, v);
			break;
		case KVM_EXIT_INTR:
			v->exits_intr++;
			r = 0;
			break;
		case KVM_EXIT_SHUTDOWN:
			vcpu_fail(v, "guest shutdown (triple fault)");
			r = -1;
			break;
		case KVM_EXIT_FAIL_ENTRY:
			vcpu_fail(v, "VM entry failed, reason %#llx",
				  (unsigned long long)
				  run->fail_entry.hardware_entry_failure_reason);
			r = -1;
			break;
		case KVM_EXIT_INTERNAL_ERROR:
			internal_error(v);
			r = -1;
			break;
		default:
			vcpu_fail(v, "unexpected exit reason %u",
				  run->exit_reason);
			r = -1;
			break;
		}
		if (r < 0)
			return;
	}
}

/* --report-msr: the guest's TSC now against the one of its last read. */
static void note_guest_tsc(struct vmm *m, struct vcpu *v)
{
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry e;
	} msrs;
	uint32_t last, ticks;

	v->tsc_since_read = v->report_ticks = -1;
	if (!m->o.report_ms)
		return;
	memset(&msrs, 0, sizeof(msrs));
	msrs.hdr.nmsrs = 1;
	msrs.e.index = 0x10;			/* MSR_IA32_TSC */
	if (ioctl(v->fd, KVM_GET_MSRS, &msrs) != 1)
		return;
	memcpy(&last, v->page + MB_RLAST, sizeof(last));
	memcpy(&ticks, v->page + MB_RTICKS, sizeof(ticks));
	v->tsc_since_read = (uint32_t)((uint32_t)msrs.e.data - last);
	v->report_ticks = ticks;
}

static void *vcpu_thread(void *p)
{
	struct vcpu *v = p;
	struct vmm *m = v->m;
	struct {
		struct kvm_signal_mask hdr;
		uint8_t set[8];
	} km;
	char name[16];

	v->tid = (pid_t)syscall(SYS_gettid);
	snprintf(name, sizeof(name), "vcpu%u", v->idx);
	prctl(PR_SET_NAME, name, 0, 0, 0);
	if (v->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(v->cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set) < 0)
			vcpu_fail(v, "pinning to CPU %d: %s", v->cpu,
				  strerror(errno));
	}
	/* Inside KVM_RUN the kick signal is unblocked (kernel sigset: 8 B). */
	km.hdr.len = 8;
	memcpy(km.set, &m->run_mask, 8);
	if (ioctl(v->fd, KVM_SET_SIGNAL_MASK, &km) < 0)
		vcpu_fail(v, "KVM_SET_SIGNAL_MASK: %s", strerror(errno));

	pthread_barrier_wait(&m->ready);
	pthread_barrier_wait(&m->go);

	v->start_ns = mono_ns();
	if (!v->failed)
		vcpu_loop(m, v);
	v->end_ns = mono_ns();
	v->cpu_ns = now_ns(CLOCK_THREAD_CPUTIME_ID);
	note_guest_tsc(m, v);
	if (v->failed)
		pthread_kill(m->main_thread, FAIL_SIGNAL);	/* wake main */
	return NULL;
}

/*
 * --overhead-thread: stands for an I/O thread or vhost worker.  Burns P%
 * of each 10 ms in CPU time and sleeps the rest, until stopped.
 */
static void *overhead_thread(void *p)
{
	struct vmm *m = p;
	uint64_t period = 10000000ull;
	uint64_t busy = period * (uint64_t)m->o.overhead_pct / 100;
	struct timespec next;

	__atomic_store_n(&m->ovh_tid, (pid_t)syscall(SYS_gettid),
			 __ATOMIC_RELEASE);
	prctl(PR_SET_NAME, "overhead", 0, 0, 0);
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!stopping()) {
		uint64_t c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);

		while (now_ns(CLOCK_THREAD_CPUTIME_ID) - c0 < busy && !stopping())
			;
		next.tv_nsec += (long)period;
		while (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	m->ovh_cpu_ns = now_ns(CLOCK_THREAD_CPUTIME_ID);
	return NULL;
}

void start_overhead_thread(struct vmm *m)
{
	int r;

	if (m->o.overhead_pct < 0)
		return;
	r = pthread_create(&m->ovh_thread, NULL, overhead_thread, m);
	if (r)
		die(EXIT_KVM, "pthread_create: %s", strerror(r));
	while (!__atomic_load_n(&m->ovh_tid, __ATOMIC_ACQUIRE))
		sched_yield();
	vrapl_add_task(m, m->ovh_tid);
}

/* Stop every vCPU: flag, immediate_exit, and a kick out of KVM_RUN/sleep. */
void stop_vcpus(struct vmm *m)
{
	unsigned int i;

	__atomic_store_n(&stop_flag, 1, __ATOMIC_RELEASE);
	for (i = 0; i < m->o.nr_vcpus; i++) {
		__atomic_store_n(&m->vcpus[i].run->immediate_exit, 1,
				 __ATOMIC_RELEASE);
		pthread_kill(m->vcpus[i].thread, KICK_SIGNAL);
	}
}

/* Create the vCPU threads; they wait at m->ready, then at m->go. */
void start_vcpus(struct vmm *m)
{
	unsigned int i;
	int r;

	pthread_barrier_init(&m->ready, NULL, m->o.nr_vcpus + 1);
	pthread_barrier_init(&m->go, NULL, m->o.nr_vcpus + 1);
	for (i = 0; i < m->o.nr_vcpus; i++) {
		r = pthread_create(&m->vcpus[i].thread, NULL, vcpu_thread,
				   &m->vcpus[i]);
		if (r)
			die(EXIT_KVM, "pthread_create: %s", strerror(r));
	}
}
