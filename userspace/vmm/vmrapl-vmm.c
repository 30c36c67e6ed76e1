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
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/kvm.h>

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

/* The blob of guest.S. */
extern const unsigned char guest_blob_start[], guest_blob_end[];
extern const unsigned char guest_spin[], guest_idle[], guest_pio[];
extern const unsigned char guest_duty[], guest_rdmsr[];
extern const unsigned char guest_gp_handler[], guest_exc_stubs[];

enum prog { PROG_SPIN, PROG_DUTY, PROG_RDMSR, PROG_PIO, PROG_IDLE };
static const char *const prog_names[] = {
	"spin", "duty", "rdmsr-loop", "pio-loop", "idle",
};

enum rapl_mode { RAPL_OFF, RAPL_INTEL, RAPL_AMD };

struct options {
	unsigned int nr_vcpus;
	enum prog prog;
	unsigned int duty_pct;
	unsigned int duty_period_ms;
	unsigned int rdmsr_regset;	/* register set the guest reads */
	enum rapl_mode rapl;
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
};

struct vcpu {
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

	int nr_msrs;
	struct msr_track msr[MB_MAX_MSRS];

	uint64_t period_ns, busy_ns;	/* duty */
	uint64_t period_start;		/* CLOCK_MONOTONIC */
	uint64_t period_cpu;		/* thread CPU time then */
	uint64_t halted_ns;

	uint64_t start_ns, end_ns, cpu_ns;
	int failed;
	char err[256];
};

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
	enum { VRAPL_OFF, VRAPL_KERNEL, VRAPL_FAKE } mode;
	bool page_mapped;
	struct fake_vrapl fake;
	double wall_s;
	bool interrupted;
	/* --overhead-thread */
	pthread_t ovh_thread;
	pid_t ovh_tid;
	uint64_t ovh_cpu_ns;
	int ovh_add_rc;
};

static volatile int stop_flag;

static bool stopping(void)
{
	return __atomic_load_n(&stop_flag, __ATOMIC_ACQUIRE);
}

static void on_kick(int sig)
{
	(void)sig;
}

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t mono_ns(void)
{
	return now_ns(CLOCK_MONOTONIC);
}

static void die(int code, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "vmrapl-vmm: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(code);
}

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

/* ---- options ------------------------------------------------------------ */

static void usage(FILE *f)
{
	fprintf(f,
"usage: vmrapl-vmm [options]\n"
"  --vcpus N              vCPUs (default 1)\n"
"  --guest PROG           spin | duty:P[:PERIOD_MS] | rdmsr-loop[:intel|:amd]\n"
"                         | pio-loop | idle   (default spin)\n"
"  --duration SECONDS     run time, fractions ok (default: until SIGINT/TERM)\n"
"  --rapl intel|amd|off   vRAPL register set, or no vRAPL (default intel)\n"
"  --require-vrapl        fail (exit 3) instead of running with vRAPL off\n"
"  --fake-vrapl           test mode without the module: an in-process page\n"
"                         (10 W per busy vCPU) behind the real MSR exits\n"
"  --device PATH          vmrapl device (default /dev/vmrapl)\n"
"  --esu N                virtual energy status unit, 1..31 (default module's)\n"
"  --guest-period-ms N    guest-visible counter update period\n"
"  --charge thread|guest  what vmrapl charges to the vCPUs\n"
"  --vpkgs P0,P1,...      virtual package of each vCPU\n"
"  --pin CPU[,CPU...]     pin vCPU thread i to the i-th CPU (fewer CPUs than\n"
"                         vCPUs: the others are not pinned)\n"
"  --overhead-thread P    an extra thread burning P%% of a CPU, registered\n"
"                         with VMRAPL_VM_ADD_TASK as the VM's overhead\n"
"  --name NAME            VM name in the summary\n"
"  --print-tids           print 'tids: T0 T1 ...' once the vCPUs exist\n"
"  --wait-start FD        read one byte (or EOF) from FD before running\n"
"  --close-order vmrapl-first|kvm-first   teardown order (default vmrapl-first)\n"
"  --report-msr[=MS]      spin, duty and idle guests also read the package\n"
"                         energy MSR (and the unit MSR) every MS ms (default\n"
"                         100) while running their load; the summary shows\n"
"                         what they read (first, last, delta, joules)\n"
"  --json                 machine-readable summary on stdout\n"
"Exit codes: 0 ok, 1 usage, 2 KVM setup, 3 vmrapl, 4 vCPU/guest failure.\n");
}

static unsigned long parse_ulong(const char *opt, const char *s,
				 unsigned long min, unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || v < min || v > max || *s == '-')
		die(EXIT_USAGE, "%s: '%s' is not a number in %lu..%lu", opt, s,
		    min, max);
	return v;
}

/* "0,0,1,1" -> values; returns the count. */
static unsigned int parse_list(const char *opt, const char *s, int *out,
			       unsigned int max, unsigned long vmax)
{
	char *copy = strdup(s), *save = NULL, *tok;
	unsigned int n = 0;

	if (!copy)
		die(EXIT_USAGE, "out of memory");
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (n == max)
			die(EXIT_USAGE, "%s: more than %u entries", opt, max);
		out[n++] = (int)parse_ulong(opt, tok, 0, vmax);
	}
	free(copy);
	if (!n)
		die(EXIT_USAGE, "%s: empty list", opt);
	return n;
}

static void parse_guest(struct options *o, const char *s)
{
	const char *arg = strchr(s, ':');
	size_t len = arg ? (size_t)(arg - s) : strlen(s);
	unsigned int i;

	for (i = 0; i < sizeof(prog_names) / sizeof(prog_names[0]); i++)
		if (strlen(prog_names[i]) == len && !strncmp(s, prog_names[i], len))
			break;
	if (i == sizeof(prog_names) / sizeof(prog_names[0]))
		die(EXIT_USAGE, "--guest: unknown program '%s'", s);
	o->prog = (enum prog)i;
	if (o->prog == PROG_DUTY) {
		char buf[64], *colon;

		if (!arg)
			die(EXIT_USAGE, "--guest duty needs a percentage: duty:P");
		snprintf(buf, sizeof(buf), "%s", arg + 1);
		colon = strchr(buf, ':');
		if (colon) {
			*colon = 0;
			o->duty_period_ms = (unsigned int)parse_ulong(
				"--guest duty period", colon + 1, 1, 10000);
		}
		o->duty_pct = (unsigned int)parse_ulong("--guest duty", buf, 0, 100);
	} else if (o->prog == PROG_RDMSR && arg) {
		if (!strcmp(arg + 1, "intel"))
			o->rdmsr_regset = VMRAPL_REGSET_INTEL;
		else if (!strcmp(arg + 1, "amd"))
			o->rdmsr_regset = VMRAPL_REGSET_AMD;
		else
			die(EXIT_USAGE, "--guest rdmsr-loop:%s: intel or amd", arg + 1);
	} else if (arg) {
		die(EXIT_USAGE, "--guest %.*s takes no argument", (int)len, s);
	}
}

static char *option_value(int argc, char **argv, int *a, char *val,
			  const char *name)
{
	if (val)
		return val;
	if (*a + 1 >= argc)
		die(EXIT_USAGE, "%s needs a value", name);
	return argv[++*a];
}

static void parse_options(struct options *o, int argc, char **argv)
{
	static int tmp[MAX_VCPUS];
	unsigned int i, n;
	int a;

	memset(o, 0, sizeof(*o));
	o->nr_vcpus = 1;
	o->prog = PROG_SPIN;
	o->duty_period_ms = DUTY_PERIOD_MS;
	o->rapl = RAPL_INTEL;
	o->charge = -1;
	o->name = "vmrapl-vmm";
	o->wait_start_fd = -1;
	o->overhead_pct = -1;

	for (a = 1; a < argc; a++) {
		char *opt = argv[a], *val = NULL, *eq;

		if (!strcmp(opt, "-h") || !strcmp(opt, "--help")) {
			usage(stdout);
			exit(0);
		}
		if (strncmp(opt, "--", 2))
			die(EXIT_USAGE, "unexpected argument '%s' (try --help)", opt);
		/* --opt=value or --opt value */
		eq = strchr(opt, '=');
		if (eq) {
			*eq = 0;
			val = eq + 1;
		}
/* FLAG: an option without value; VAL: one with (--opt=V or --opt V). */
#define FLAG(name) (!strcmp(opt, name) && !val)
#define VAL(name) (!strcmp(opt, name) && \
		   (val = option_value(argc, argv, &a, val, name)) != NULL)
		if (FLAG("--json")) {
			o->json = true;
		} else if (FLAG("--print-tids")) {
			o->print_tids = true;
		} else if (FLAG("--require-vrapl")) {
			o->require_vrapl = true;
		} else if (FLAG("--fake-vrapl")) {
			o->fake_vrapl = true;
		} else if (!strcmp(opt, "--report-msr")) {
			/* Optional value: only as --report-msr=MS. */
			o->report_ms = val ? (unsigned int)parse_ulong(opt, val,
						1, 1000) : 100;
		} else if (VAL("--vcpus")) {
			o->nr_vcpus = (unsigned int)parse_ulong(opt, val, 1, MAX_VCPUS);
		} else if (VAL("--guest")) {
			parse_guest(o, val);
		} else if (VAL("--duration")) {
			char *end;

			o->duration = strtod(val, &end);
			if (end == val || *end || !(o->duration >= 0) ||
			    o->duration > 1e7)
				die(EXIT_USAGE, "--duration: bad value '%s'", val);
		} else if (VAL("--rapl")) {
			if (!strcmp(val, "intel"))
				o->rapl = RAPL_INTEL;
			else if (!strcmp(val, "amd"))
				o->rapl = RAPL_AMD;
			else if (!strcmp(val, "off"))
				o->rapl = RAPL_OFF;
			else
				die(EXIT_USAGE, "--rapl: intel, amd or off");
		} else if (VAL("--device")) {
			o->dev_path = val;
		} else if (VAL("--esu")) {
			o->esu = (unsigned int)parse_ulong(opt, val, 1, 31);
		} else if (VAL("--guest-period-ms")) {
			o->guest_period_ms = (unsigned int)parse_ulong(opt, val,
				VMRAPL_GUEST_PERIOD_MIN_US / 1000,
				VMRAPL_GUEST_PERIOD_MAX_US / 1000);
		} else if (VAL("--charge")) {
			if (!strcmp(val, "thread"))
				o->charge = VMRAPL_CHARGE_THREAD;
			else if (!strcmp(val, "guest"))
				o->charge = VMRAPL_CHARGE_GUEST;
			else
				die(EXIT_USAGE, "--charge: thread or guest");
		} else if (VAL("--vpkgs")) {
			n = parse_list(opt, val, tmp, MAX_VCPUS,
				       VMRAPL_MAX_VPKGS - 1);
			for (i = 0; i < n; i++)
				o->vpkg[i] = (uint32_t)tmp[i];
			o->nr_vpkgs = n;
		} else if (VAL("--pin")) {
			o->nr_pin = parse_list(opt, val, o->pin, MAX_VCPUS,
					       CPU_SETSIZE - 1);
		} else if (VAL("--overhead-thread")) {
			o->overhead_pct = (int)parse_ulong(opt, val, 0, 100);
		} else if (VAL("--name")) {
			o->name = val;
		} else if (VAL("--wait-start")) {
			o->wait_start_fd = (int)parse_ulong(opt, val, 0, INT_MAX);
		} else if (VAL("--close-order")) {
			if (!strcmp(val, "kvm-first"))
				o->kvm_first = true;
			else if (!strcmp(val, "vmrapl-first"))
				o->kvm_first = false;
			else
				die(EXIT_USAGE, "--close-order: vmrapl-first or kvm-first");
		} else {
			die(EXIT_USAGE, "unknown option '%s' (try --help)", opt);
		}
#undef FLAG
#undef VAL
	}
}

static void check_options(struct options *o)
{
	if (o->nr_vpkgs && o->nr_vpkgs != o->nr_vcpus)
		die(EXIT_USAGE, "--vpkgs has %u entries for %u vCPUs",
		    o->nr_vpkgs, o->nr_vcpus);
	if (o->fake_vrapl && o->rapl == RAPL_OFF)
		die(EXIT_USAGE, "--fake-vrapl needs --rapl intel or amd");
	if (o->report_ms && o->prog != PROG_SPIN && o->prog != PROG_DUTY &&
	    o->prog != PROG_IDLE)
		die(EXIT_USAGE, "--report-msr: only with --guest spin, duty or "
		    "idle (rdmsr-loop reads the MSRs anyway)");
	if (o->nr_pin > o->nr_vcpus)
		die(EXIT_USAGE, "--pin has %u CPUs for %u vCPUs", o->nr_pin,
		    o->nr_vcpus);
	if (!o->rdmsr_regset)
		o->rdmsr_regset = o->rapl == RAPL_AMD ? VMRAPL_REGSET_AMD :
							VMRAPL_REGSET_INTEL;
	if (o->rapl != RAPL_OFF && o->prog == PROG_RDMSR &&
	    o->rdmsr_regset != (o->rapl == RAPL_AMD ? VMRAPL_REGSET_AMD :
						      VMRAPL_REGSET_INTEL))
		fprintf(stderr, "vmrapl-vmm: note: the guest reads the %s MSRs "
			"of a VM attached with the other register set\n",
			o->rdmsr_regset == VMRAPL_REGSET_AMD ? "AMD" : "Intel");
}

/* ---- KVM setup ---------------------------------------------------------- */

static int kvm_ioctl_or_die(int fd, unsigned long req, void *arg,
			    const char *what)
{
	int r = ioctl(fd, req, arg);

	if (r < 0)
		die(EXIT_KVM, "%s: %s", what, strerror(errno));
	return r;
}

static void setup_kvm(struct vmm *m)
{
	struct kvm_userspace_memory_region region;
	int r, nent = 256;

	m->kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (m->kvm_fd < 0)
		die(EXIT_KVM, "/dev/kvm: %s", strerror(errno));
	r = ioctl(m->kvm_fd, KVM_GET_API_VERSION, 0);
	if (r != KVM_API_VERSION)
		die(EXIT_KVM, "KVM API version %d, expected %d", r,
		    KVM_API_VERSION);
	r = ioctl(m->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_MAX_VCPUS);
	if (r > 0 && m->o.nr_vcpus > (unsigned int)r)
		die(EXIT_KVM, "KVM allows at most %d vCPUs", r);
	r = ioctl(m->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (r <= 0)
		die(EXIT_KVM, "KVM_GET_VCPU_MMAP_SIZE: %s", strerror(errno));
	m->run_size = (size_t)r;

	do {	/* retry on EINTR, as QEMU does */
		m->vm_fd = ioctl(m->kvm_fd, KVM_CREATE_VM, 0);
	} while (m->vm_fd < 0 && errno == EINTR);
	if (m->vm_fd < 0)
		die(EXIT_KVM, "KVM_CREATE_VM: %s", strerror(errno));
	/* Needed by VMX without unrestricted guest; harmless elsewhere. */
	if (ioctl(m->vm_fd, KVM_SET_TSS_ADDR, 0xfffbd000ul) < 0)
		fprintf(stderr, "vmrapl-vmm: warning: KVM_SET_TSS_ADDR: %s\n",
			strerror(errno));

	m->mem_size = GUEST_VCPU_AREA + (size_t)m->o.nr_vcpus * GUEST_VCPU_SIZE;
	m->mem_size = (m->mem_size + 0x1fffff) & ~(size_t)0x1fffff;
	m->mem = mmap(NULL, m->mem_size, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m->mem == MAP_FAILED)
		die(EXIT_KVM, "guest memory: %s", strerror(errno));
	memset(&region, 0, sizeof(region));
	region.slot = 0;
	region.guest_phys_addr = 0;
	region.memory_size = m->mem_size;
	region.userspace_addr = (uintptr_t)m->mem;
	kvm_ioctl_or_die(m->vm_fd, KVM_SET_USER_MEMORY_REGION, &region,
			 "KVM_SET_USER_MEMORY_REGION");

	/* Give the vCPUs what KVM supports, like any VMM would. */
	for (;;) {
		m->cpuid = calloc(1, sizeof(*m->cpuid) +
				     (size_t)nent * sizeof(m->cpuid->entries[0]));
		if (!m->cpuid)
			die(EXIT_KVM, "out of memory");
		m->cpuid->nent = (uint32_t)nent;
		if (ioctl(m->kvm_fd, KVM_GET_SUPPORTED_CPUID, m->cpuid) == 0)
			break;
		free(m->cpuid);
		m->cpuid = NULL;
		if (errno != E2BIG || nent >= 4096) {
			fprintf(stderr, "vmrapl-vmm: warning: "
				"KVM_GET_SUPPORTED_CPUID: %s\n", strerror(errno));
			break;
		}
		nent *= 2;
	}
}

static uint64_t gdt_entry(uint32_t base, uint32_t limit, uint32_t access,
			  uint32_t flags)
{
	return ((uint64_t)(limit & 0xffff)) |
	       ((uint64_t)(base & 0xffffff) << 16) |
	       ((uint64_t)access << 40) |
	       ((uint64_t)((limit >> 16) & 0xf) << 48) |
	       ((uint64_t)flags << 52) |
	       ((uint64_t)(base >> 24) << 56);
}

static uint32_t guest_addr(const unsigned char *sym)
{
	return GUEST_CODE + (uint32_t)(sym - guest_blob_start);
}

static void setup_guest_memory(struct vmm *m)
{
	uint64_t *gdt = (uint64_t *)(m->mem + GUEST_GDT);
	uint64_t *idt = (uint64_t *)(m->mem + GUEST_IDT);
	size_t blob = (size_t)(guest_blob_end - guest_blob_start);
	unsigned int v;

	if (blob > GUEST_CODE_MAX)
		die(EXIT_KVM, "guest blob too large (%zu bytes)", blob);
	memcpy(m->mem + GUEST_CODE, guest_blob_start, blob);

	/* Flat 4 GiB, 32-bit, present, accessed: code 0x08, data 0x10. */
	gdt[0] = 0;
	gdt[1] = gdt_entry(0, 0xfffff, 0x9b, 0xc);
	gdt[2] = gdt_entry(0, 0xfffff, 0x93, 0xc);

	/* 32-bit interrupt gates, DPL 0: the #GP handler and fatal stubs. */
	for (v = 0; v < GUEST_NR_VECTORS; v++) {
		uint32_t off = v == 13 ? guest_addr(guest_gp_handler) :
			guest_addr(guest_exc_stubs) + v * GUEST_STUB_SIZE;

		idt[v] = (uint64_t)(off & 0xffff) |
			 ((uint64_t)GUEST_SEL_CODE << 16) |
			 ((uint64_t)0x8e00 << 32) |
			 ((uint64_t)(off >> 16) << 48);
	}
}

static void setup_vcpu(struct vmm *m, struct vcpu *v)
{
	struct kvm_segment cs, ds;
	struct kvm_sregs sregs;
	struct kvm_regs regs;
	uint32_t page = GUEST_VCPU_AREA + v->idx * GUEST_VCPU_SIZE;
	const unsigned char *entry;
	int r;

	v->fd = ioctl(m->vm_fd, KVM_CREATE_VCPU, (unsigned long)v->idx);
	if (v->fd < 0)
		die(EXIT_KVM, "KVM_CREATE_VCPU %u: %s", v->idx, strerror(errno));
	v->run = mmap(NULL, m->run_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		      v->fd, 0);
	if (v->run == MAP_FAILED)
		die(EXIT_KVM, "mmap kvm_run: %s", strerror(errno));
	if (m->cpuid)
		kvm_ioctl_or_die(v->fd, KVM_SET_CPUID2, m->cpuid,
				 "KVM_SET_CPUID2");
	if (v->idx == 0) {
		r = ioctl(v->fd, KVM_GET_TSC_KHZ, 0);
		m->tsc_khz = r > 0 ? (uint32_t)r : 1000000;
	}

	kvm_ioctl_or_die(v->fd, KVM_GET_SREGS, &sregs, "KVM_GET_SREGS");
	memset(&cs, 0, sizeof(cs));
	cs.base = 0;
	cs.limit = 0xffffffff;
	cs.selector = GUEST_SEL_CODE;
	cs.type = 0xb;		/* execute/read, accessed */
	cs.present = 1;
	cs.dpl = 0;
	cs.db = 1;
	cs.s = 1;
	cs.g = 1;
	ds = cs;
	ds.selector = GUEST_SEL_DATA;
	ds.type = 0x3;		/* read/write, accessed */
	sregs.cs = cs;
	sregs.ds = sregs.es = sregs.fs = sregs.gs = sregs.ss = ds;
	sregs.gdt.base = GUEST_GDT;
	sregs.gdt.limit = 3 * 8 - 1;
	sregs.idt.base = GUEST_IDT;
	sregs.idt.limit = GUEST_NR_VECTORS * 8 - 1;
	sregs.cr0 = 0x11;	/* PE | ET, no paging */
	sregs.cr4 = 0;
	sregs.efer = 0;
	kvm_ioctl_or_die(v->fd, KVM_SET_SREGS, &sregs, "KVM_SET_SREGS");

	switch (m->o.prog) {
	case PROG_SPIN:
		entry = guest_spin;
		break;
	case PROG_DUTY:
		entry = guest_duty;
		break;
	case PROG_RDMSR:
		entry = guest_rdmsr;
		break;
	case PROG_PIO:
		entry = guest_pio;
		break;
	default:
		entry = guest_idle;
		break;
	}
	memset(&regs, 0, sizeof(regs));
	regs.rip = guest_addr(entry);
	regs.rsp = page + GUEST_VCPU_SIZE;
	regs.rdi = page;
	regs.rflags = 0x2;	/* IF=0: no interrupts ever */
	kvm_ioctl_or_die(v->fd, KVM_SET_REGS, &regs, "KVM_SET_REGS");

	v->page = m->mem + page;
}

/* The VMRAPL_REG_* of @msr in @regset (VMRAPL_REGISTERS), -1 if none. */
static int msr_reg(unsigned int regset, uint32_t msr)
{
#define MSR_REG(set, index, reg, dom_mask) \
	if ((set) == regset && (index) == msr) \
		return (reg);
	VMRAPL_REGISTERS(MSR_REG)
#undef MSR_REG
	return -1;
}

/* The MSR of @regset that holds @reg (VMRAPL_REGISTERS), 0 if none. */
static uint32_t reg_msr(unsigned int regset, unsigned int reg)
{
#define REG_MSR(set, index, r, dom_mask) \
	if ((set) == regset && (r) == reg) \
		return (index);
	VMRAPL_REGISTERS(REG_MSR)
#undef REG_MSR
	return 0;
}

/* Mailbox slot @i: the guest reads @msr of @regset. */
static void mailbox_msr(struct vcpu *v, int i, unsigned int regset,
			uint32_t msr)
{
	struct msr_track *t = &v->msr[i];

	memcpy(v->page + MB_MSR + 4 * i, &msr, sizeof(uint32_t));
	t->index = msr;
	t->reg = msr_reg(regset, msr);
	t->energy = t->reg == VMRAPL_REG_PKG || t->reg == VMRAPL_REG_CORE ||
		    t->reg == VMRAPL_REG_DRAM;
}

/* The mailbox of rdmsr-loop and duty. */
static void setup_mailbox(struct vmm *m, struct vcpu *v)
{
	uint32_t msrs[VMRAPL_MAX_MSRS];
	uint64_t chunk;
	int n, i;

	if (m->o.prog == PROG_RDMSR) {
		/* Every MSR of the set, whatever the view: the guest just
		 * faults or reads 0 on those outside it. */
		n = vmrapl_regset_msrs(m->o.rdmsr_regset, ~0u, msrs,
				       VMRAPL_MAX_MSRS);
		if (n < 0 || n > MB_MAX_MSRS)
			die(EXIT_KVM, "internal: register set");
		v->nr_msrs = n;
		memcpy(v->page + MB_NR_MSRS, &n, sizeof(uint32_t));
		for (i = 0; i < n; i++)
			mailbox_msr(v, i, m->o.rdmsr_regset, msrs[i]);
	}
	if (m->o.report_ms) {
		/* The unit MSR (for the ESU) and the package energy counter. */
		unsigned int regset = m->o.rapl == RAPL_AMD ?
				      VMRAPL_REGSET_AMD : VMRAPL_REGSET_INTEL;
		uint64_t ticks = (uint64_t)m->tsc_khz * m->o.report_ms;
		uint32_t t;

		msrs[0] = reg_msr(regset, VMRAPL_REG_UNIT);
		msrs[1] = reg_msr(regset, VMRAPL_REG_PKG);
		n = 2;
		/* The guest compares 32-bit TSC deltas. */
		if (ticks == 0 || ticks >= 0x80000000ull)
			die(EXIT_USAGE, "--report-msr=%u: too long for a %u kHz "
			    "TSC (at most %" PRIu64 " ms)", m->o.report_ms,
			    m->tsc_khz, (uint64_t)0x7fffffff / m->tsc_khz);
		t = (uint32_t)ticks;
		v->nr_msrs = n;
		memcpy(v->page + MB_NR_MSRS, &n, sizeof(uint32_t));
		memcpy(v->page + MB_RTICKS, &t, sizeof(t));
		for (i = 0; i < n; i++)
			mailbox_msr(v, i, regset, msrs[i]);
	}
	if (m->o.prog == PROG_DUTY) {
		uint32_t c;

		chunk = (uint64_t)m->tsc_khz * DUTY_CHUNK_US / 1000;
		c = chunk > 0 && chunk < UINT32_MAX / 2 ? (uint32_t)chunk : 100000;
		memcpy(v->page + MB_CHUNK, &c, sizeof(c));
		v->period_ns = (uint64_t)m->o.duty_period_ms * 1000000ull;
		v->busy_ns = v->period_ns * m->o.duty_pct / 100;
	}
}

/* ---- vRAPL ------------------------------------------------------------- */

static const char *source_name(uint32_t s)
{
	switch (s) {
	case VMRAPL_SOURCE_INTEL: return "intel";
	case VMRAPL_SOURCE_AMD: return "amd";
	case VMRAPL_SOURCE_ESTIMATE: return "estimate";
	case VMRAPL_SOURCE_TEST: return "test";
	default: return "unknown";
	}
}

static void vrapl_fail(struct vmm *m, const char *what, int err)
{
	(void)m;
	die(EXIT_VRAPL, "vRAPL: %s: %s", what, strerror(err < 0 ? -err : err));
}

/* Attach and configure; runs after KVM_CREATE_VM, before the vCPUs. */
static void setup_vrapl(struct vmm *m)
{
	const struct vmrapl_info *info;
	unsigned int regset;
	int r;

	if (m->o.rapl == RAPL_OFF) {
		snprintf(m->vrapl_off_reason, sizeof(m->vrapl_off_reason),
			 "disabled by --rapl=off");
		fprintf(stderr, "vRAPL off: %s\n", m->vrapl_off_reason);
		return;
	}
	regset = m->o.rapl == RAPL_AMD ? VMRAPL_REGSET_AMD : VMRAPL_REGSET_INTEL;
	if (m->o.fake_vrapl) {
		r = fake_vrapl_init(&m->fake, regset, m->o.nr_vcpus);
		if (r == 0)
			r = vmrapl_vm_from_page(m->fake.page, m->o.nr_vcpus,
						regset, m->fake.page->domains,
						&m->vrvm);
		if (r < 0)
			vrapl_fail(m, "fake vRAPL", r);
		fprintf(stderr, "vRAPL fake: in-process page, no module\n");
		m->mode = VRAPL_FAKE;
		m->page_mapped = true;
		goto filter;
	}
	r = vmrapl_open(m->o.dev_path, &m->vr);
	if (r < 0) {
		snprintf(m->vrapl_off_reason, sizeof(m->vrapl_off_reason),
			 "%s", vmrapl_open_strerror(r));
		if (m->o.require_vrapl)
			die(EXIT_VRAPL, "vRAPL required but unavailable: %s",
			    m->vrapl_off_reason);
		fprintf(stderr, "vRAPL off: %s\n", m->vrapl_off_reason);
		return;
	}
	info = vmrapl_get_info(m->vr);
	if (!m->o.json)
		printf("vRAPL: abi %u, source %s, %u package(s), domains 0x%x, "
		       "host esu %u, features 0x%" PRIx64 "\n",
		       info->abi_version, source_name(info->source),
		       info->nr_packages, info->domains, info->host_esu,
		       (uint64_t)info->features);

	r = vmrapl_attach(m->vr, m->vm_fd, m->o.nr_vcpus, regset, m->o.esu,
			  &m->vrvm);
	if (r < 0)
		vrapl_fail(m, "VMRAPL_ATTACH_VM", r);
	m->mode = VRAPL_KERNEL;
	m->page_mapped = vmrapl_vm_page(m->vrvm) != NULL;
	if (!m->page_mapped)
		fprintf(stderr, "vmrapl-vmm: note: no vmrapl page mapping, "
			"every RAPL read is an ioctl\n");
	if (m->o.nr_vpkgs) {
		r = vmrapl_set_topology(m->vrvm, m->o.vpkg, m->o.nr_vcpus);
		if (r < 0)
			vrapl_fail(m, "VMRAPL_VM_SET_TOPOLOGY", r);
	}
	r = vmrapl_set_policy(m->vrvm, m->o.charge, m->o.guest_period_ms * 1000);
	if (r < 0)
		vrapl_fail(m, "VMRAPL_VM_SET_POLICY", r);

filter:
	/* Cap first: with a filter but no cap, denied MSRs would #GP. */
	r = vmrapl_enable_user_msr(m->kvm_fd, m->vm_fd, 0);
	if (r == -EOPNOTSUPP)
		die(EXIT_VRAPL, "vRAPL: KVM lacks KVM_CAP_X86_USER_SPACE_MSR "
		    "or KVM_CAP_X86_MSR_FILTER (Linux >= 5.10 needed)");
	if (r < 0)
		vrapl_fail(m, "KVM_ENABLE_CAP(KVM_CAP_X86_USER_SPACE_MSR)", r);
	/* This VMM has no MSR filter of its own, so vmrapl's is the filter. */
	r = vmrapl_install_msr_filter(m->vrvm, m->vm_fd);
	if (r < 0)
		vrapl_fail(m, "KVM_X86_SET_MSR_FILTER", r);
}

/* ---- vCPU threads ------------------------------------------------------- */

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
	uint32_t faults;
	int i;

	v->reports++;
	v->last_report_ns = mono_ns();
	if (!v->first_report_ns)
		v->first_report_ns = v->last_report_ns;
	memcpy(&faults, v->page + MB_FAULTS, sizeof(faults));
	for (i = 0; i < v->nr_msrs; i++) {
		uint64_t val;

		if (faults & (1u << i)) {
			v->msr[i].faults++;
			continue;
		}
		memcpy(&val, v->page + MB_VALUE + 8 * i, sizeof(val));
		track_msr(&v->msr[i], val);
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
	if (m->vrvm && vmrapl_handle_exit(m->vrvm, run, v->idx))
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

struct vcpu_arg {
	struct vmm *m;
	struct vcpu *v;
};

static void *vcpu_thread(void *p)
{
	struct vcpu_arg *a = p;
	struct vmm *m = a->m;
	struct vcpu *v = a->v;
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

static void start_overhead_thread(struct vmm *m)
{
	int r;

	if (m->o.overhead_pct < 0)
		return;
	r = pthread_create(&m->ovh_thread, NULL, overhead_thread, m);
	if (r)
		die(EXIT_KVM, "pthread_create: %s", strerror(r));
	while (!__atomic_load_n(&m->ovh_tid, __ATOMIC_ACQUIRE))
		sched_yield();
	if (m->mode == VRAPL_KERNEL) {
		m->ovh_add_rc = vmrapl_add_task(m->vrvm, m->ovh_tid);
		if (m->ovh_add_rc < 0)
			vrapl_fail(m, "VMRAPL_VM_ADD_TASK", m->ovh_add_rc);
	}
}

/* Stop every vCPU: flag, immediate_exit, and a kick out of KVM_RUN/sleep. */
static void stop_vcpus(struct vmm *m)
{
	unsigned int i;

	__atomic_store_n(&stop_flag, 1, __ATOMIC_RELEASE);
	for (i = 0; i < m->o.nr_vcpus; i++) {
		__atomic_store_n(&m->vcpus[i].run->immediate_exit, 1,
				 __ATOMIC_RELEASE);
		pthread_kill(m->vcpus[i].thread, KICK_SIGNAL);
	}
}

/* ---- statistics and teardown ------------------------------------------ */

static void collect_stats(struct vmm *m)
{
	if (!m->vrvm)
		return;
	vmrapl_exit_counters(m->vrvm, &m->xc);
	if (m->mode != VRAPL_KERNEL)
		return;
	m->vstats = calloc(m->o.nr_vcpus, sizeof(*m->vstats));
	if (!m->vstats)
		die(EXIT_VRAPL, "out of memory");
	m->stats_rc = vmrapl_get_stats(m->vrvm, &m->stats, m->vstats,
				       m->o.nr_vcpus, m->vpstats,
				       VMRAPL_MAX_VPKGS);
	if (m->stats_rc < 0)
		fprintf(stderr, "vmrapl-vmm: VMRAPL_VM_GET_STATS: %s\n",
			strerror(-m->stats_rc));
}

static void close_kvm(struct vmm *m)
{
	unsigned int i;

	for (i = 0; i < m->o.nr_vcpus; i++) {
		munmap(m->vcpus[i].run, m->run_size);
		close(m->vcpus[i].fd);
	}
	close(m->vm_fd);
	close(m->kvm_fd);
	munmap(m->mem, m->mem_size);
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

/* ---- summary ---------------------------------------------------------- */

static void json_str(const char *s)
{
	putchar('"');
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static const char *regset_name(unsigned int r)
{
	return r == VMRAPL_REGSET_AMD ? "amd" : "intel";
}

static const char *guest_desc(const struct options *o, char *buf, size_t len)
{
	if (o->prog == PROG_DUTY)
		snprintf(buf, len, "duty:%u:%u", o->duty_pct, o->duty_period_ms);
	else if (o->prog == PROG_RDMSR)
		snprintf(buf, len, "rdmsr-loop:%s", regset_name(o->rdmsr_regset));
	else
		snprintf(buf, len, "%s", prog_names[o->prog]);
	return buf;
}

/* ESU from the unit MSR the guest read, -1 if it never read one. */
static int guest_esu(const struct vcpu *v)
{
	int i;

	for (i = 0; i < v->nr_msrs; i++)
		if (v->msr[i].reg == VMRAPL_REG_UNIT && v->msr[i].seen)
			return (int)((v->msr[i].last >> 8) & 0x1f);
	return -1;
}

/* Seconds between the guest's first and last MSR report. */
static double report_span_s(const struct vcpu *v)
{
	return (double)(v->last_report_ns - v->first_report_ns) / 1e9;
}

static void json_energy(const char *key, const __u64 *e)
{
	printf("\"%s\": {\"pkg\": %" PRIu64 ", \"core\": %" PRIu64
	       ", \"dram\": %" PRIu64 "}", key, (uint64_t)e[VMRAPL_DOM_PKG],
	       (uint64_t)e[VMRAPL_DOM_CORE], (uint64_t)e[VMRAPL_DOM_DRAM]);
}

static bool have_stats(const struct vmm *m)
{
	return m->vstats && m->stats_rc == 0;
}

static void print_json(const struct vmm *m, int code)
{
	char buf[64];
	unsigned int i, nvp;
	int j;

	printf("{\n  \"name\": ");
	json_str(m->o.name);
	printf(",\n  \"guest\": \"%s\",\n", guest_desc(&m->o, buf, sizeof(buf)));
	printf("  \"nr_vcpus\": %u,\n  \"duration_s\": %.6f,\n",
	       m->o.nr_vcpus, m->wall_s);
	printf("  \"interrupted\": %s,\n", m->interrupted ? "true" : "false");
	printf("  \"vrapl\": {\"on\": %s, \"mode\": \"%s\", ",
	       m->mode != VRAPL_OFF ? "true" : "false",
	       m->mode == VRAPL_KERNEL ? "kernel" :
	       m->mode == VRAPL_FAKE ? "fake" : "off");
	if (m->mode != VRAPL_OFF) {
		printf("\"regset\": \"%s\", \"page_mapped\": %s, ",
		       regset_name(m->o.rapl == RAPL_AMD ? VMRAPL_REGSET_AMD :
					VMRAPL_REGSET_INTEL),
		       m->page_mapped ? "true" : "false");
		printf("\"rdmsr\": %" PRIu64 ", \"rdmsr_page\": %" PRIu64
		       ", \"wrmsr_dropped\": %" PRIu64 ", \"gp\": %" PRIu64
		       ", \"stats_error\": ", m->xc.rdmsr, m->xc.rdmsr_page,
		       m->xc.wrmsr_dropped, m->xc.gp);
		if (m->stats_rc)
			json_str(strerror(-m->stats_rc));
		else if (m->mode == VRAPL_FAKE)
			printf("\"no kernel stats in fake mode\"");
		else
			printf("null");
	} else {
		printf("\"reason\": ");
		json_str(m->vrapl_off_reason);
	}
	printf("},\n  \"vcpus\": [\n");
	for (i = 0; i < m->o.nr_vcpus; i++) {
		const struct vcpu *v = &m->vcpus[i];
		double wall = (double)(v->end_ns - v->start_ns) / 1e9;
		double cpu = (double)v->cpu_ns / 1e9;
		int esu = guest_esu(v);

		printf("    {\"index\": %u, \"tid\": %d, \"cpu\": %d, "
		       "\"wall_s\": %.6f, \"cpu_s\": %.6f, \"util\": %.4f,\n",
		       v->idx, (int)v->tid, v->cpu, wall, cpu,
		       wall > 0 ? cpu / wall : 0.0);
		printf("     \"exits\": %" PRIu64 ", \"exits_io\": %" PRIu64
		       ", \"exits_hlt\": %" PRIu64 ", \"exits_msr\": %" PRIu64
		       ", \"exits_intr\": %" PRIu64 ", \"msr_foreign\": %" PRIu64
		       ", \"pio\": %" PRIu64 ", \"reports\": %" PRIu64
		       ", \"halted_s\": %.6f, \"report_span_s\": %.6f,\n",
		       v->exits, v->exits_io, v->exits_hlt, v->exits_msr,
		       v->exits_intr, v->msr_foreign, v->pio, v->reports,
		       (double)v->halted_ns / 1e9, report_span_s(v));
		printf("     \"guest_esu\": %d, \"msrs\": [", esu);
		for (j = 0; j < v->nr_msrs; j++) {
			const struct msr_track *t = &v->msr[j];

			printf("%s\n       {\"msr\": \"%#x\", \"energy\": %s, "
			       "\"count\": %" PRIu64 ", \"faults\": %" PRIu64,
			       j ? "," : "", t->index,
			       t->energy ? "true" : "false", t->count, t->faults);
			if (t->seen)
				printf(", \"first\": %" PRIu64 ", \"last\": %"
				       PRIu64, t->first, t->last);
			else
				printf(", \"first\": null, \"last\": null");
			if (t->energy) {
				printf(", \"wraps\": %" PRIu64 ", \"violations\": %"
				       PRIu64 ", \"delta\": %" PRIu64, t->wraps,
				       t->violations, t->delta);
				if (esu >= 0)
					printf(", \"joules\": %.6f",
					       ldexp((double)t->delta, -esu));
			} else {
				printf(", \"changes\": %" PRIu64, t->changes);
			}
			printf("}");
		}
		printf("%s],\n     \"host\": ", v->nr_msrs ? "\n     " : "");
		if (have_stats(m) && i < m->stats.nr_vcpus) {
			printf("{");
			json_energy("energy_uj", m->vstats[i].energy_uj);
			printf(", \"runtime_ns\": %" PRIu64 "}",
			       (uint64_t)m->vstats[i].runtime_ns);
		} else {
			printf("null");
		}
		printf(",\n     \"error\": ");
		if (v->failed)
			json_str(v->err);
		else
			printf("null");
		printf("}%s\n", i + 1 < m->o.nr_vcpus ? "," : "");
	}
	printf("  ],\n  \"vm\": ");
	if (have_stats(m)) {
		const struct vmrapl_stats *st = &m->stats;

		printf("{");
		json_energy("energy_uj", st->energy_uj);
		printf(", ");
		json_energy("overhead_uj", st->overhead_uj);
		printf(", \"runtime_ns\": %" PRIu64 ", \"overhead_ns\": %" PRIu64
		       ", \"vpkgs\": [", (uint64_t)st->runtime_ns,
		       (uint64_t)st->overhead_ns);
		nvp = st->nr_vpkgs < VMRAPL_MAX_VPKGS ? st->nr_vpkgs :
							VMRAPL_MAX_VPKGS;
		for (i = 0; i < nvp; i++) {
			printf("%s\n    {\"vpkg\": %u, \"nr_vcpus\": %u, ",
			       i ? "," : "", i, m->vpstats[i].nr_vcpus);
			json_energy("energy_uj", m->vpstats[i].energy_uj);
			printf(", ");
			json_energy("overhead_uj", m->vpstats[i].overhead_uj);
			printf("}");
		}
		printf("%s]}", nvp ? "\n  " : "");
	} else {
		printf("null");
	}
	printf(",\n  \"overhead_thread\": ");
	if (m->o.overhead_pct >= 0)
		printf("{\"tid\": %d, \"pct\": %d, \"cpu_s\": %.6f, "
		       "\"added\": %s}", (int)m->ovh_tid, m->o.overhead_pct,
		       (double)m->ovh_cpu_ns / 1e9,
		       m->mode == VRAPL_KERNEL ? "true" : "false");
	else
		printf("null");
	printf(",\n  \"close_order\": \"%s\",\n  \"stats_after_kvm_close\": ",
	       m->o.kvm_first ? "kvm-first" : "vmrapl-first");
	if (!m->after_close_tried)
		printf("null");
	else if (m->after_close_rc == 0)
		printf("\"ok\"");
	else
		json_str(strerror(-m->after_close_rc));
	printf(",\n  \"exit_code\": %d\n}\n", code);
}

static void print_human(const struct vmm *m)
{
	char buf[64];
	unsigned int i;
	int j;

	printf("%s: guest %s, %u vCPU(s), %.3f s, vRAPL %s%s\n", m->o.name,
	       guest_desc(&m->o, buf, sizeof(buf)), m->o.nr_vcpus, m->wall_s,
	       m->mode == VRAPL_KERNEL ? "on" :
	       m->mode == VRAPL_FAKE ? "fake" : "off: ",
	       m->mode != VRAPL_OFF ? "" : m->vrapl_off_reason);
	if (m->mode != VRAPL_OFF)
		printf("MSR exits: %" PRIu64 " reads (%" PRIu64 " from the page), "
		       "%" PRIu64 " writes dropped, %" PRIu64 " #GP\n",
		       m->xc.rdmsr, m->xc.rdmsr_page, m->xc.wrmsr_dropped,
		       m->xc.gp);
	for (i = 0; i < m->o.nr_vcpus; i++) {
		const struct vcpu *v = &m->vcpus[i];
		double wall = (double)(v->end_ns - v->start_ns) / 1e9;
		double cpu = (double)v->cpu_ns / 1e9;

		printf("vcpu %u tid %d: cpu %.3f s (%.1f%%), exits %" PRIu64
		       " (io %" PRIu64 ", hlt %" PRIu64 ", msr %" PRIu64 ")",
		       v->idx, (int)v->tid, cpu,
		       wall > 0 ? 100.0 * cpu / wall : 0.0, v->exits,
		       v->exits_io, v->exits_hlt, v->exits_msr);
		if (have_stats(m) && i < m->stats.nr_vcpus)
			printf(", host pkg %" PRIu64 " uJ",
			       (uint64_t)m->vstats[i].energy_uj[VMRAPL_DOM_PKG]);
		printf("\n");
		for (j = 0; j < v->nr_msrs; j++) {
			const struct msr_track *t = &v->msr[j];

			printf("  msr %#x: reads %" PRIu64 ", faults %" PRIu64,
			       t->index, t->count, t->faults);
			if (t->seen)
				printf(", first %#" PRIx64 ", last %#" PRIx64,
				       t->first, t->last);
			if (t->energy)
				printf(", wraps %" PRIu64 ", violations %" PRIu64,
				       t->wraps, t->violations);
			if (t->energy && guest_esu(v) >= 0 &&
			    report_span_s(v) > 0)
				printf(", %.3f J in %.3f s: %.2f W",
				       ldexp((double)t->delta, -guest_esu(v)),
				       report_span_s(v),
				       ldexp((double)t->delta, -guest_esu(v)) /
				       report_span_s(v));
			printf("\n");
		}
		if (v->failed)
			printf("  error: %s\n", v->err);
	}
	if (have_stats(m))
		printf("vm: pkg %" PRIu64 " uJ (overhead %" PRIu64 " uJ), "
		       "core %" PRIu64 " uJ, dram %" PRIu64 " uJ, runtime %.3f s\n",
		       (uint64_t)m->stats.energy_uj[VMRAPL_DOM_PKG],
		       (uint64_t)m->stats.overhead_uj[VMRAPL_DOM_PKG],
		       (uint64_t)m->stats.energy_uj[VMRAPL_DOM_CORE],
		       (uint64_t)m->stats.energy_uj[VMRAPL_DOM_DRAM],
		       (double)m->stats.runtime_ns / 1e9);
	if (m->after_close_tried)
		printf("GET_STATS after KVM close: %s\n", m->after_close_rc ?
		       strerror(-m->after_close_rc) : "ok");
}

/* ---- main ------------------------------------------------------------- */

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
	struct vcpu_arg *args;
	unsigned int i;
	uint64_t t0;
	int code = 0;

	parse_options(&m->o, argc, argv);
	check_options(&m->o);
	m->main_thread = pthread_self();
	setvbuf(stdout, NULL, _IOLBF, 0);

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
	setup_vrapl(m);

	m->vcpus = calloc(m->o.nr_vcpus, sizeof(*m->vcpus));
	args = calloc(m->o.nr_vcpus, sizeof(*args));
	if (!m->vcpus || !args)
		die(EXIT_KVM, "out of memory");
	for (i = 0; i < m->o.nr_vcpus; i++) {
		struct vcpu *v = &m->vcpus[i];

		v->idx = i;
		v->cpu = i < m->o.nr_pin ? m->o.pin[i] : -1;
		setup_vcpu(m, v);
		setup_mailbox(m, v);
	}

	pthread_barrier_init(&m->ready, NULL, m->o.nr_vcpus + 1);
	pthread_barrier_init(&m->go, NULL, m->o.nr_vcpus + 1);
	for (i = 0; i < m->o.nr_vcpus; i++) {
		int r;

		args[i].m = m;
		args[i].v = &m->vcpus[i];
		r = pthread_create(&m->vcpus[i].thread, NULL, vcpu_thread,
				   &args[i]);
		if (r)
			die(EXIT_KVM, "pthread_create: %s", strerror(r));
	}
	pthread_barrier_wait(&m->ready);
	start_overhead_thread(m);
	if (m->mode == VRAPL_FAKE) {
		pthread_t *th = calloc(m->o.nr_vcpus, sizeof(*th));
		int r;

		for (i = 0; th && i < m->o.nr_vcpus; i++)
			th[i] = m->vcpus[i].thread;
		r = th ? fake_vrapl_start(&m->fake, th) : -ENOMEM;
		free(th);
		if (r < 0)
			vrapl_fail(m, "fake vRAPL writer", r);
	}

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
	free(args);
	free(m->vstats);
	free(m->vcpus);
	free(m->cpuid);
	return code;
}
