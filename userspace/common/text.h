/* SPDX-License-Identifier: MIT */
/*
 * Strings that come from a VMM (its QEMU -name and -uuid, its comm) on
 * their way out of the tools: every such string goes through these
 * functions and no other code prints one.  A VMM chooses its own name,
 * so it may hold any byte but NUL: invalid UTF-8, control characters,
 * quotes, backslashes, newlines.
 *
 * The canonical form (text_clean()) is valid UTF-8 without control
 * characters: every byte that is not part of a valid UTF-8 character
 * (bad or truncated sequences, overlong forms, surrogates, code points
 * beyond U+10FFFF) and every control character (U+0000-U+001F, U+007F,
 * U+0080-U+009F) becomes U+FFFD, the replacement character; everything
 * else, quotes and backslashes included, is kept.  Each output format
 * then escapes the canonical form by its own rules, so a VM has the same
 * name in the Prometheus labels, in JSON and in CSV.
 */
#ifndef VMRAPL_COMMON_TEXT_H
#define VMRAPL_COMMON_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "libvmrapl-host.h"

/* U+FFFD in UTF-8. */
#define TEXT_REPLACEMENT	"\xef\xbf\xbd"

/*
 * The length (1-4) of the valid UTF-8 character at @s (at most @n bytes),
 * its code point in *@cp; 0 when @s does not start a valid character.
 */
size_t utf8_char(const unsigned char *s, size_t n, uint32_t *cp);

/*
 * The canonical form of @s (see above) into @out (@len bytes, NUL
 * terminated), cut at a character boundary when it does not fit.
 * Returns the length written.
 */
size_t text_clean(const char *s, char *out, size_t len);

/*
 * A VM's name, with its NUL: libvirt's longest domain name, which it keeps
 * in file names (NAME.xml, so at most 251 bytes of UTF-8), whole.
 */
#define TEXT_NAME_LEN	256

/*
 * The name of the VM whose VMM is @pid (vmrapl_host_vm_name(): QEMU's
 * -name, else comm, else "pid<N>") in its canonical form: the one place
 * the tools take a VM's name from.  @len: TEXT_NAME_LEN.
 */
void text_vm_name(pid_t pid, char *out, size_t len);

/*
 * The UUID of the VM whose VMM is @pid (vmrapl_host_vm_uuid(): QEMU's
 * -uuid, canonical and lower case, which needs no cleaning) into @out;
 * "" when it has none.  Returns whether it has one.
 */
int text_vm_uuid(pid_t pid, char out[VMRAPL_HOST_UUID_LEN]);

/*
 * The text-table form of @s into @out (@len bytes, NUL terminated):
 * printable ASCII kept, every other character (each invalid byte, each
 * control character, each non-ASCII character) shown as one '?', so that
 * one byte is one column and printf's field widths line a table up.
 * Returns the length written.
 */
size_t text_ascii(const char *s, char *out, size_t len);

/*
 * @s as a Prometheus label value (text exposition format 0.0.4), without
 * the quotes: the canonical form with '\' as \\, '"' as \" and newline
 * as \n.  Into @out (@len bytes, NUL terminated; 6 * strlen(@s) + 1 is
 * always enough); returns the length written.
 */
size_t text_prom_label(const char *s, char *out, size_t len);

/*
 * @s as one CSV field (RFC 4180 quoting) separated by @sep: the canonical
 * form, in double quotes (with '"' doubled) when it holds @sep, a quote,
 * or starts or ends with a space.
 */
void text_csv(FILE *f, const char *s, const char *sep);

#endif
