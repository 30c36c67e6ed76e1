// SPDX-License-Identifier: GPL-2.0
/* Running a shell command for the vmrapl selftests. */
#include <stdio.h>
#include <sys/wait.h>

#include "vr_cmd.h"

int vr_cmd_output(const char *cmd, char *buf, size_t len)
{
	size_t n;
	FILE *p;
	int st;

	p = popen(cmd, "r");
	if (!p)
		return -1;
	n = fread(buf, 1, len - 1, p);
	buf[n] = 0;
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}
