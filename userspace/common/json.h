/* SPDX-License-Identifier: MIT */
/*
 * JSON output shared by the userspace programs (vmraplctl, vmrapl-vmm):
 * userspace/common/ is compiled into each program that uses it and is no
 * part of any library's ABI.
 */
#ifndef VMRAPL_COMMON_JSON_H
#define VMRAPL_COMMON_JSON_H

#include <stdio.h>

/*
 * @s as a JSON string, quotes included: '"' and '\' escaped, newline, tab
 * and carriage return as \n \t \r, other control characters as \u00XX.
 * NULL prints "".
 */
void json_str(FILE *f, const char *s);

#endif
