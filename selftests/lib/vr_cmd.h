/* SPDX-License-Identifier: GPL-2.0 */
/* Running a shell command and keeping what it printed. */
#ifndef _VR_CMD_H
#define _VR_CMD_H

#include <stddef.h>

/*
 * Run @cmd with popen(); its stdout in @buf (at most @len - 1 bytes, NUL
 * terminated).  Its exit status, 128 when it did not exit, -1 when it
 * could not be started.
 */
int vr_cmd_output(const char *cmd, char *buf, size_t len);

#endif /* _VR_CMD_H */
