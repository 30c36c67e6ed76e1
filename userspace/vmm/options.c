// SPDX-License-Identifier: MIT
/*
 * vmrapl-vmm: the command line.  --help lists the options; parsing
 * errors exit with EXIT_USAGE.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libvmrapl-host.h"
#include "vmm.h"

static const char *const prog_names[] = {
	[PROG_SPIN] = "spin",
	[PROG_DUTY] = "duty",
	[PROG_RDMSR] = "rdmsr-loop",
	[PROG_PIO] = "pio-loop",
	[PROG_IDLE] = "idle",
};

#define NR_PROGS	(sizeof(prog_names) / sizeof(prog_names[0]))

/* Register set names: --rapl, --guest rdmsr-loop:SET and the summary. */
static const char *const regset_names[] = {
	[VMRAPL_REGSET_INTEL] = "intel",
	[VMRAPL_REGSET_AMD] = "amd",
};

#define NR_REGSETS	(sizeof(regset_names) / sizeof(regset_names[0]))

const char *prog_name(enum prog p)
{
	return prog_names[p];
}

const char *regset_name(unsigned int regset)
{
	return regset < NR_REGSETS && regset_names[regset] ?
	       regset_names[regset] : "intel";
}

/* VMRAPL_REGSET_* of @s, 0 when it names none. */
static unsigned int regset_by_name(const char *s)
{
	unsigned int i;

	for (i = 0; i < NR_REGSETS; i++)
		if (regset_names[i] && !strcmp(s, regset_names[i]))
			return i;
	return 0;
}

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
"  --esu N                virtual energy status unit, 1..31 (default: 16 on\n"
"                         the Intel server CPUs whose DRAM unit is fixed,\n"
"                         else the module's)\n"
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
"  --trace FILE           with --report-msr: one line per guest read, \"T VCPU\n"
"                         HOST_UJ MSR...\": seconds since the guests started,\n"
"                         the vCPU, the VM's pkg energy as the host books it\n"
"                         then (uJ), and the raw values the guest read (- for\n"
"                         a #GP), in the --report-msr order\n"
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

	for (i = 0; i < NR_PROGS; i++)
		if (strlen(prog_names[i]) == len && !strncmp(s, prog_names[i], len))
			break;
	if (i == NR_PROGS)
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
		o->rdmsr_regset = regset_by_name(arg + 1);
		if (!o->rdmsr_regset)
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

void parse_options(struct options *o, int argc, char **argv)
{
	static int tmp[MAX_VCPUS];
	unsigned int i, n;
	int a;

	memset(o, 0, sizeof(*o));
	o->nr_vcpus = 1;
	o->prog = PROG_SPIN;
	o->duty_period_ms = DUTY_PERIOD_MS;
	o->regset = VMRAPL_REGSET_INTEL;
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
			o->regset = regset_by_name(val);
			if (!o->regset && strcmp(val, "off"))
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
			o->charge = vmrapl_host_charge_value(val);
			if (o->charge < 0)
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
		} else if (VAL("--trace")) {
			o->trace_path = val;
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

void check_options(struct options *o)
{
	if (o->nr_vpkgs && o->nr_vpkgs != o->nr_vcpus)
		die(EXIT_USAGE, "--vpkgs has %u entries for %u vCPUs",
		    o->nr_vpkgs, o->nr_vcpus);
	if (o->fake_vrapl && !o->regset)
		die(EXIT_USAGE, "--fake-vrapl needs --rapl intel or amd");
	if (o->report_ms && o->prog != PROG_SPIN && o->prog != PROG_DUTY &&
	    o->prog != PROG_IDLE)
		die(EXIT_USAGE, "--report-msr: only with --guest spin, duty or "
		    "idle (rdmsr-loop reads the MSRs anyway)");
	if (o->trace_path && !o->report_ms)
		die(EXIT_USAGE, "--trace: only with --report-msr (it traces the guest's reads)");
	if (o->nr_pin > o->nr_vcpus)
		die(EXIT_USAGE, "--pin has %u CPUs for %u vCPUs", o->nr_pin,
		    o->nr_vcpus);
	if (!o->rdmsr_regset)
		o->rdmsr_regset = o->regset ? o->regset : VMRAPL_REGSET_INTEL;
	if (o->regset && o->prog == PROG_RDMSR &&
	    o->rdmsr_regset != o->regset)
		fprintf(stderr, "vmrapl-vmm: note: the guest reads the %s MSRs "
			"of a VM attached with the other register set\n",
			o->rdmsr_regset == VMRAPL_REGSET_AMD ? "AMD" : "Intel");
}
