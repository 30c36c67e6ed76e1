// SPDX-License-Identifier: MIT
/*
 * Unit tests of libvmrapl-host's command-line parsing: QEMU's -uuid
 * (vmrapl_host_qemu_uuid(), vmrapl_host_uuid_canonical()) on command
 * lines the tools' shell tests cannot make, such as ones cut off where
 * /proc stops reading, and a VM's name (vmrapl_host_cmdline_name()):
 * QEMU's -name rules for QEMU only; the names of domain and feature
 * masks; the powers and durations of "vmraplctl limit"
 * (vmrapl_host_parse_power(), vmrapl_host_parse_duration()).  Output:
 * TAP version 13.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "libvmrapl-host.h"

#define U1	"8f6c1a34-1c2d-4e5f-9a0b-1c2d3e4f5a6b"
#define U2	"0d2a6b7c-3e4f-4a5b-8c9d-0e1f2a3b4c5d"

/*
 * A command line from @args ("a|b|c": '|' separates the arguments, as
 * NUL does in /proc/PID/cmdline), its last @cut bytes dropped (with the
 * last argument's NUL: a read that stopped there); the UUID found in
 * @uuid, whether one was.
 */
static int parse(const char *args, size_t cut,
		 char uuid[VMRAPL_HOST_UUID_LEN])
{
	char cmd[512];
	size_t i, n = strlen(args) + 1;	/* the last argument's NUL too */

	memcpy(cmd, args, n);
	for (i = 0; i < n; i++)
		if (cmd[i] == '|')
			cmd[i] = 0;
	/* A NUL past the end, as the tools' reader leaves one. */
	cmd[n - cut] = 0;
	memset(uuid, 'x', VMRAPL_HOST_UUID_LEN);
	return vmrapl_host_qemu_uuid(cmd, n - cut, uuid);
}

static void expect(const char *what, const char *args, size_t cut,
		   const char *want)
{
	char got[VMRAPL_HOST_UUID_LEN];
	int found = parse(args, cut, got);

	if (want)
		tap(found == 1 && !strcmp(got, want), "%s", what);
	else
		tap(found == 0 && !got[0], "%s", what);
	if (found && (!want || strcmp(got, want)))
		printf("# got '%.*s'\n", VMRAPL_HOST_UUID_LEN - 1, got);
}

/* The name vmrapl_host_cmdline_name() finds in @args (as parse()). */
static void expect_name(const char *what, const char *args, const char *want)
{
	char cmd[512], got[128];
	size_t i, n = strlen(args) + 1;
	int found;

	memcpy(cmd, args, n);
	for (i = 0; i < n; i++)
		if (cmd[i] == '|')
			cmd[i] = 0;
	memset(got, 'x', sizeof(got));
	found = vmrapl_host_cmdline_name(cmd, n, got, sizeof(got));
	if (want)
		tap(found == 1 && !strcmp(got, want), "name: %s", what);
	else
		tap(found == 0 && !got[0], "name: %s", what);
	if (found && (!want || strcmp(got, want)))
		printf("# got '%s'\n", got);
}

/*
 * vmrapl_host_parse_power() (@dur false) or vmrapl_host_parse_duration()
 * of @s: 0 and @want, or -EINVAL with the output untouched (@want 0).
 */
static void expect_parse(bool dur, const char *s, uint64_t want)
{
	const char *what = dur ? "duration" : "power";
	uint64_t got = 12345;
	int r;

	r = dur ? vmrapl_host_parse_duration(s, &got) :
		  vmrapl_host_parse_power(s, &got);
	bool ok = want ? r == 0 && got == want : r == -EINVAL && got == 12345;

	if (want)
		tap(ok, "%s '%s' is %llu", what, s, (unsigned long long)want);
	else
		tap(ok, "%s '%s' is refused", what, s);
	if (!ok)
		printf("# got %d, %llu\n", r, (unsigned long long)got);
}

#define POWER(s, uw)	expect_parse(false, s, uw)
#define DURATION(s, us)	expect_parse(true, s, us)

static void parse_tests(void)
{
	POWER("40W", 40000000);
	POWER("40", 40000000);
	POWER("1.5kW", 1500000000);
	POWER("500mW", 500000);
	POWER("250uW", 250);
	POWER("40w", 40000000);
	POWER("1.5KW", 1500000000);
	POWER("500MW", 500000);		/* m is milli in any case */
	POWER("1mw", 1000);
	POWER("0.000001", 1);
	POWER("1.000001W", 1000001);
	POWER("1.0000010W", 1000001);	/* zeros below the uW are no digits */
	POWER("0.5mW", 500);
	POWER("007W", 7000000);
	POWER("100000W", 100000000000ull);
	POWER("18446744073709.551615W", UINT64_MAX);
	POWER("", 0);
	POWER("W", 0);
	POWER("junk", 0);
	POWER("40 W", 0);
	POWER("2.25 W", 0);
	POWER(" 40W", 0);
	POWER("40W ", 0);
	POWER("-5W", 0);
	POWER("+5W", 0);
	POWER("0", 0);
	POWER("0W", 0);
	POWER("0.0kW", 0);
	POWER("0.0000001W", 0);		/* 0.1 uW: below the microwatt */
	POWER("1.0000005W", 0);
	POWER("1.5uW", 0);
	POWER("18446744073709.551616W", 0);	/* 2^64 uW */
	POWER("99999999999999999999999999999999999999999W", 0);
	POWER("1e3W", 0);
	POWER(".5W", 0);
	POWER("5.W", 0);
	POWER("5..0W", 0);
	POWER("5WW", 0);
	POWER("5J", 0);
	POWER("5 ", 0);
	POWER("0x10W", 0);

	DURATION("1s", 1000000);
	DURATION("1", 1000000);
	DURATION("250ms", 250000);
	DURATION("500us", 500);
	DURATION("2m", 120000000);
	DURATION("1h", 3600000000ull);
	DURATION("1.5", 1500000);
	DURATION("0.5h", 1800000000);
	DURATION("1.5MS", 1500);
	DURATION("10MS", 10000);
	DURATION("1S", 1000000);
	DURATION("2H", 7200000000ull);
	DURATION("0.000001m", 60);
	DURATION("0.00000001m", 0);	/* 0.6 us: not whole */
	DURATION("0", 0);
	DURATION("0s", 0);
	DURATION("0.0h", 0);
	DURATION("-1s", 0);
	DURATION("", 0);
	DURATION("s", 0);
	DURATION("1 s", 0);
	DURATION("1sec", 0);
	DURATION("1d", 0);
	DURATION("1.5us", 0);
	DURATION("junk", 0);
	DURATION("5124095576.031h", 0);	/* just over 2^64 us */
	DURATION("5124095576.030431h", 18446744073709551600ull);
	DURATION("18446744073709551615us", UINT64_MAX);
	DURATION("18446744073709551616us", 0);
}

int main(void)
{
	char out[VMRAPL_HOST_UUID_LEN] = "untouched";

	printf("TAP version 13\n");
	expect("-uuid", "qemu-system-x86_64|-name|guest=web|-uuid|" U1 "|-S",
	       0, U1);
	expect("--uuid", "qemu|--uuid|" U1, 0, U1);
	expect("upper case becomes lower case",
	       "qemu|-uuid|8F6C1A34-1C2D-4E5F-9A0B-1C2D3E4F5A6B", 0, U1);
	expect("the last -uuid wins, as in QEMU",
	       "qemu|-uuid|" U2 "|-m|1G|-uuid|" U1, 0, U1);
	expect("no -uuid", "qemu|-name|web|-m|1G", 0, NULL);
	expect("-uuid without a value", "qemu|-name|web|-uuid", 0, NULL);
	expect("-uuid=VALUE is no QEMU syntax", "qemu|-uuid=" U1, 0, NULL);
	expect("a value that is not a UUID", "qemu|-uuid|not-a-uuid", 0, NULL);
	expect("35 characters",
	       "qemu|-uuid|8f6c1a34-1c2d-4e5f-9a0b-1c2d3e4f5a6", 0, NULL);
	expect("37 characters", "qemu|-uuid|" U1 "0", 0, NULL);
	expect("braces", "qemu|-uuid|{" U1 "}", 0, NULL);
	expect("no hyphens (32 hex digits)",
	       "qemu|-uuid|8f6c1a341c2d4e5f9a0b1c2d3e4f5a6b", 0, NULL);
	expect("a hyphen out of place",
	       "qemu|-uuid|8f6c1a3-41c2d-4e5f-9a0b-1c2d3e4f5a6b", 0, NULL);
	expect("a non-hex digit",
	       "qemu|-uuid|8f6c1a34-1c2d-4e5f-9a0b-1c2d3e4f5a6g", 0, NULL);
	expect("a space inside",
	       "qemu|-uuid|8f6c1a34-1c2d-4e5f-9a0b 1c2d3e4f5a6b", 0, NULL);
	expect("a later invalid -uuid hides an earlier valid one",
	       "qemu|-uuid|" U1 "|-uuid|junk", 0, NULL);
	expect("-uuid followed by an option",
	       "qemu|-name|-uuid|-m|1G", 0, NULL);
	/* /proc/PID/cmdline read into a buffer that ends mid-argument. */
	expect("the value cut off by the buffer",
	       "qemu|-uuid|" U1, 1, NULL);
	expect("the value cut off after 36 characters of a longer one",
	       "qemu|-uuid|" U1 "ff", 3, NULL);
	expect("-uuid cut off before its value", "qemu|-m|1G|-uuid|",
	       1, NULL);
	expect("a complete -uuid before a cut-off argument",
	       "qemu|-uuid|" U1 "|-device|virtio-net-pci", 5, U1);

	tap(vmrapl_host_uuid_canonical(U1, out) == 1 && !strcmp(out, U1),
	    "canonical: a lower-case UUID as it is");
	tap(vmrapl_host_uuid_canonical("", out) == 0 && !strcmp(out, U1),
	    "canonical: the empty string is none, the output untouched");
	tap(vmrapl_host_uuid_canonical("00000000-0000-0000-0000-000000000000",
				       out) == 1,
	    "canonical: the nil UUID has the form (QEMU accepts it)");

	expect_name("QEMU -name guest=NAME,...: ,, is a comma",
		    "qemu-system-x86_64|-name|guest=web,,1,debug-threads=on",
		    "web,1");
	expect_name("QEMU by path, legacy -name NAME,...",
		    "/usr/libexec/qemu-kvm|-name|web,process=w", "web");
	expect_name("QEMU: guest= after another option",
		    "qemu-system-aarch64|-name|process=p,guest=g", "g");
	expect_name("QEMU without -name", "qemu-system-x86_64|-m|1G", NULL);
	expect_name("another VMM: --name as it is",
		    "/usr/lib/vmrapl/vmrapl-vmm|--name|my vm, \"quoted\"",
		    "my vm, \"quoted\"");
	expect_name("another VMM: --name=VALUE",
		    "vmrapl-vmm|--vcpus|2|--name=a,,b", "a,,b");
	expect_name("another VMM: guest= is no option of its",
		    "bash|-c|sleep 1|qemu-system-x86_64|-name|guest=a,b",
		    "guest=a,b");
	expect_name("another VMM: the first --name",
		    "vmm|--name|one|--name|two", "one");
	expect_name("another VMM without --name", "vmm|--vcpus|2", NULL);
	expect_name("another VMM: --name without a value", "vmm|--name", NULL);
	expect_name("a program called qemuish is QEMU's, by its base name",
		    "/opt/x/qemu-wrapper|-name|a,b", "a");
	expect_name("a directory called qemu is not", "/qemu/bin/vmm|-name|a,b",
		    "a,b");

	{
		char b[128];

		vmrapl_host_domain_names(1u << VMRAPL_DOM_PKG |
					 1u << VMRAPL_DOM_DRAM, b, sizeof(b));
		tap(!strcmp(b, "pkg dram"), "domain names: pkg dram");
		vmrapl_host_domain_names(0, b, sizeof(b));
		tap(!strcmp(b, ""), "domain names: none is empty");
		vmrapl_host_feature_names(VMRAPL_INFO_F_ESTIMATED |
					  VMRAPL_INFO_F_TRACK_ALL |
					  (1ull << 62), b, sizeof(b));
		tap(!strcmp(b, "estimated track_all 0x4000000000000000"),
		    "feature names: named bits, the rest in hex");
		vmrapl_host_feature_names(VMRAPL_INFO_F_ESTIMATED |
					  VMRAPL_INFO_F_TRACK_ALL, b, 12);
		tap(strlen(b) == 11, "feature names: cut to the buffer");
	}

	parse_tests();

	return tap_done();
}
