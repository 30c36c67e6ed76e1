/* SPDX-License-Identifier: MIT */
/*
 * vmrapl-vmm internals, shared by its source files:
 *
 *   main.c     signals, the run, teardown, exit code
 *   options.c  the command line
 *   kvm.c      KVM: the VM, guest memory and code, vCPUs, mailboxes
 *   vcpu.c     vCPU threads: KVM_RUN and exit handling, the overhead thread
 *   vrapl.c    everything done with libvmrapl (the example for VMM authors)
 *   report.c   the summary, text or JSON
 *   fake-vrapl.c  --fake-vrapl, an in-process stand-in for the module
 */
#ifndef VMRAPL_VMM_H
#define VMRAPL_VMM_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include "libvmrapl.h"
#include "guest.h"
#include "fake-vrapl.h"

#define EXIT_USAGE	1
#define EXIT_KVM	2
#define EXIT_VRAPL	3
#define EXIT_VCPU	4

#define MAX_VCPUS	VMRAPL_MAX_VCPUS
#define KICK_SIGNAL	SIGUSR1		/* main -> vCPU: stop */
#define FAIL_SIGNAL	SIGUSR2		/* vCPU -> main: I failed */
#define DUTY_CHUNK_US	50		/* guest spins this long between polls */
#define DUTY_PERIOD_MS	100

struct kvm_run;
struct kvm_cpuid2;

enum prog { PROG_SPIN, PROG_DUTY, PROG_RDMSR, PROG_PIO, PROG_IDLE };

struct options {
	unsigned int nr_vcpus;
	enum prog prog;
	unsigned int duty_pct;
	unsigned int duty_period_ms;
	unsigned int rdmsr_regset;	/* register set the guest reads */
	unsigned int regset;		/* VMRAPL_REGSET_*, 0: --rapl off */
	int pin[MAX_VCPUS];
	unsigned int nr_pin;
	double duration;		/* seconds, 0 = until SIGINT/SIGTERM */
	unsigned int esu;
	unsigned int guest_period_ms;
	int charge;			/* -1: module default */
	uint32_t vpkg[MAX_VCPUS];
	unsigned int nr_vpkgs;		/* entries given with --vpkgs */
	bool json;
	const char *name;
	bool print_tids;
	int wait_start_fd;
	bool kvm_first;
	bool require_vrapl;
	bool fake_vrapl;
	int overhead_pct;		/* -1: no overhead thread */
	unsigned int report_ms;		/* --report-msr period, 0: off */
	const char *trace_path;		/* --trace: one line per guest read */
	const char *dev_path;
};

/* What the guest saw of one MSR in rdmsr-loop. */
struct msr_track {
	uint32_t index;
	int reg;			/* VMRAPL_REG_*, -1: none */
	bool energy;			/* a 32-bit wrapping energy counter */
	bool seen;
	uint64_t first, last;
	uint64_t count, faults;
	uint64_t wraps, violations;	/* energy: wraps, backward steps */
	uint64_t changes;		/* others: value changed */
	uint64_t delta;			/* energy: counts accumulated */
	uint64_t delta_warm;		/* energy: @delta at the warm report */
};

struct vmm;

/* Reports before the guest-and-host comparison window opens. */
#define REPORT_WARMUP	5
_Static_assert(REPORT_WARMUP >= 2, "max_step2_uj needs two reports before the window");

struct vcpu {
	struct vmm *m;
	unsigned int idx;
	int fd;
	struct kvm_run *run;
	unsigned char *page;		/* host view of its guest page */
	pthread_t thread;
	pid_t tid;
	int cpu;			/* -1: not pinned */

	uint64_t exits, exits_io, exits_hlt, exits_msr, exits_intr;
	uint64_t msr_foreign;		/* MSR exits libvmrapl did not take */
	uint64_t pio, reports;
	uint64_t first_report_ns, last_report_ns;	/* CLOCK_MONOTONIC */
	/* The host's energy for the VM at those reports (uJ). */
	uint64_t first_report_uj, last_report_uj;
	uint64_t prev_report_uj;	/* at the report before the last */
	/*
	 * The report after REPORT_WARMUP ones, where the comparison window
	 * of guest and host starts (the VMM's start-up is behind it).
	 */
	uint64_t warm_report_ns, warm_report_uj;
	/*
	 * The most host energy between two consecutive reports, and across
	 * three (two intervals), from the interval that ends at the window's
	 * first report on (uJ): what bounds how far behind the host's books
	 * a guest's read can be.  The guest's view is published at most once
	 * per guest period, from the books as the package's last close left
	 * them; with the default 100 ms period and reports 100 ms apart a
	 * read can show the view of the report before the last.
	 */
	uint64_t max_step_uj, max_step2_uj;

	int nr_msrs;
	struct msr_track msr[MB_MAX_MSRS];

	uint64_t period_ns, busy_ns;	/* duty */
	uint64_t period_start;		/* CLOCK_MONOTONIC */
	uint64_t period_cpu;		/* thread CPU time then */
	uint64_t halted_ns;

	uint64_t start_ns, end_ns, cpu_ns;
	/*
	 * --report-msr: at the end, how far the guest's TSC moved since its
	 * last read (the guest's own 32-bit arithmetic) against the ticks it
	 * waits between reads; -1: unknown.  A guest that stopped reading
	 * with a TSC that moved less than a period had its clock stall.
	 */
	int64_t tsc_since_read, report_ticks;
	int failed;
	char err[256];
};

enum vrapl_mode { VRAPL_OFF, VRAPL_KERNEL, VRAPL_FAKE };

struct vmm {
	struct options o;
	int kvm_fd, vm_fd;
	size_t run_size;
	unsigned char *mem;
	size_t mem_size;
	struct kvm_cpuid2 *cpuid;
	uint32_t tsc_khz;
	struct vmrapl *vr;
	struct vmrapl_vm *vrvm;
	char vrapl_off_reason[256];
	struct vcpu *vcpus;
	pthread_barrier_t ready, go;
	sigset_t run_mask;		/* mask while in KVM_RUN / sleeping */
	pthread_t main_thread;
	int stats_rc;			/* GET_STATS before teardown */
	struct vmrapl_stats stats;
	struct vmrapl_vcpu_stats *vstats;
	struct vmrapl_vpkg_stats vpstats[VMRAPL_MAX_VPKGS];
	struct vmrapl_exit_counters xc;
	int after_close_rc;		/* kvm-first: GET_STATS after KVM close */
	bool after_close_tried;
	enum vrapl_mode mode;
	uint32_t domains;		/* VMRAPL_DOM_* the source measures */
	bool page_mapped;
	struct fake_vrapl fake;
	double wall_s;
	bool interrupted;
	FILE *trace;			/* --trace, line buffered */
	uint64_t t0_ns;			/* the guests' start, for --trace */
	/* --overhead-thread */
	pthread_t ovh_thread;
	pid_t ovh_tid;
	uint64_t ovh_cpu_ns;
};

static inline uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t mono_ns(void)
{
	return now_ns(CLOCK_MONOTONIC);
}

/* main.c */
void die(int code, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 2, 3)));

/* options.c */
void parse_options(struct options *o, int argc, char **argv);
void check_options(struct options *o);
const char *prog_name(enum prog p);
const char *regset_name(unsigned int regset);

/* kvm.c */
void setup_kvm(struct vmm *m);
void setup_guest_memory(struct vmm *m);
void setup_vcpu(struct vmm *m, struct vcpu *v);
void setup_mailbox(struct vmm *m, struct vcpu *v);
void close_kvm(struct vmm *m);

/* vcpu.c */
void start_vcpus(struct vmm *m);
void start_overhead_thread(struct vmm *m);
void stop_vcpus(struct vmm *m);

/* vrapl.c */
void vrapl_setup(struct vmm *m);
void vrapl_add_task(struct vmm *m, pid_t tid);
bool vrapl_handle_exit(struct vmm *m, struct kvm_run *run, unsigned int vcpu);
void vrapl_collect_stats(struct vmm *m);
uint64_t vrapl_vm_energy_uj(struct vmm *m);
void vrapl_close(struct vmm *m);
void vrapl_fail(const char *what, int err) __attribute__((noreturn));

/* report.c */
void report_vrapl_info(const struct vmm *m, const struct vmrapl_info *info);
void report_fake_info(const struct vmm *m);
void print_json(const struct vmm *m, int code);
void print_human(const struct vmm *m);

#endif
