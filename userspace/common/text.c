// SPDX-License-Identifier: MIT
/* VMM-supplied strings on their way out of the tools: see text.h. */
#include <string.h>

#include "libvmrapl-host.h"
#include "text.h"

size_t utf8_char(const unsigned char *s, size_t n, uint32_t *cp)
{
	uint32_t c, min;
	size_t len, i;

	if (!n)
		return 0;
	c = s[0];
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		c &= 0x1f;
		min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		c &= 0x0f;
		min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		c &= 0x07;
		min = 0x10000;
	} else {
		return 0;	/* a continuation byte, 0xc0/0xc1, 0xf5.. */
	}
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

static int is_control(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f);
}

/*
 * The next character of the canonical form of @s (@n bytes left): its
 * bytes in *@c (either @s itself or the replacement character) and their
 * count in *@clen; returns how many bytes of @s it stands for.
 */
static size_t next_clean(const char *s, size_t n, const char **c, size_t *clen,
			 uint32_t *cp)
{
	size_t k = utf8_char((const unsigned char *)s, n, cp);

	if (!k || is_control(*cp)) {
		*c = TEXT_REPLACEMENT;
		*clen = 3;
		*cp = 0xfffd;
		return k ? k : 1;
	}
	*c = s;
	*clen = k;
	return k;
}

size_t text_clean(const char *s, char *out, size_t len)
{
	size_t n = strlen(s), o = 0;

	if (!len)
		return 0;
	while (n) {
		const char *c;
		size_t clen;
		uint32_t cp;
		size_t k = next_clean(s, n, &c, &clen, &cp);

		if (o + clen >= len)
			break;
		memcpy(out + o, c, clen);
		o += clen;
		s += k;
		n -= k;
	}
	out[o] = 0;
	return o;
}

void text_vm_name(pid_t pid, char *out, size_t len)
{
	char raw[TEXT_NAME_LEN];

	vmrapl_host_vm_name(pid, raw, sizeof(raw));
	text_clean(raw, out, len);
}

int text_vm_uuid(pid_t pid, char out[VMRAPL_HOST_UUID_LEN])
{
	/* Only hex digits and hyphens get through: canonical already. */
	return vmrapl_host_vm_uuid(pid, out);
}

size_t text_ascii(const char *s, char *out, size_t len)
{
	size_t n = strlen(s), o = 0;

	if (!len)
		return 0;
	while (n && o + 1 < len) {
		const char *c;
		size_t clen;
		uint32_t cp;
		size_t k = next_clean(s, n, &c, &clen, &cp);

		out[o++] = cp >= 0x20 && cp < 0x7f ? (char)cp : '?';
		s += k;
		n -= k;
	}
	out[o] = 0;
	return o;
}

size_t text_prom_label(const char *s, char *out, size_t len)
{
	size_t n = strlen(s), o = 0;

	if (!len)
		return 0;
	while (n) {
		const char *c;
		size_t clen;
		uint32_t cp;
		size_t k = next_clean(s, n, &c, &clen, &cp);

		/* None is left after cleaning, but escape the newline anyway. */
		if (cp == '\\' || cp == '"' || cp == '\n') {
			c = cp == '\\' ? "\\\\" : cp == '"' ? "\\\"" : "\\n";
			clen = 2;
		}
		if (o + clen >= len)
			break;
		memcpy(out + o, c, clen);
		o += clen;
		s += k;
		n -= k;
	}
	out[o] = 0;
	return o;
}

void text_csv(FILE *f, const char *s, const char *sep)
{
	char clean[1024];
	size_t n = text_clean(s, clean, sizeof(clean));
	const char *p;

	if (!strstr(clean, sep) && !strchr(clean, '"') &&
	    !(n && (clean[0] == ' ' || clean[n - 1] == ' '))) {
		fputs(clean, f);
		return;
	}
	fputc('"', f);
	for (p = clean; *p; p++) {
		if (*p == '"')
			fputc('"', f);
		fputc(*p, f);
	}
	fputc('"', f);
}
