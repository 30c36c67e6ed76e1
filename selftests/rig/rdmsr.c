// SPDX-License-Identifier: GPL-2.0
/*
 * rdmsr CPU MSR: print MSR (hex, or decimal with 0x) of CPU through
 * /dev/cpu/CPU/msr (the msr module) as hex, or "gp" when the read faults
 * (EIO: the CPU raised #GP).  For the rig's nested guest (l2-init), which
 * has busybox only.  Exit 0 on a value, 2 on #GP, 1 on any other error.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char path[64];
	uint64_t val;
	unsigned long cpu;
	uint32_t msr;
	ssize_t n;
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: rdmsr CPU MSR\n");
		return 1;
	}
	cpu = strtoul(argv[1], NULL, 0);
	msr = strtoul(argv[2], NULL, 0);
	snprintf(path, sizeof(path), "/dev/cpu/%lu/msr", cpu);
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "rdmsr: %s: %s\n", path, strerror(errno));
		return 1;
	}
	n = pread(fd, &val, sizeof(val), msr);
	if (n == sizeof(val)) {
		printf("0x%" PRIx64 "\n", val);
		return 0;
	}
	if (n < 0 && errno == EIO) {
		printf("gp\n");
		return 2;
	}
	fprintf(stderr, "rdmsr: %s at 0x%x: %s\n", path, msr,
		n < 0 ? strerror(errno) : "short read");
	return 1;
}
