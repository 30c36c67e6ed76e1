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
 * @s as a JSON string (RFC 8259), quotes included, always valid UTF-8:
 * '"' and '\' escaped, newline, tab and carriage return as \n \t \r,
 * other control characters (U+0000-U+001F, U+007F) as \u00XX, and every
 * byte that is not part of a valid UTF-8 character as \ufffd.  NULL
 * prints "".  (A VM's name is in its canonical form, text.h, before it
 * gets here, so it has no control characters left.)
 */
void json_str(FILE *f, const char *s);

#endif
