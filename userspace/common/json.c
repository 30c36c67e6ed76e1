// SPDX-License-Identifier: MIT
/* JSON output helpers of the userspace programs: see json.h. */
#include <string.h>

#include "json.h"
#include "text.h"

void json_str(FILE *f, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	fputc('"', f);
	while (n) {
		const unsigned char *u = (const unsigned char *)s;
		uint32_t cp;
		size_t k = utf8_char(u, n, &cp);

		if (!k) {
			fputs("\\ufffd", f);
			k = 1;
		} else if (cp == '"') {
			fputs("\\\"", f);
		} else if (cp == '\\') {
			fputs("\\\\", f);
		} else if (cp == '\n') {
			fputs("\\n", f);
		} else if (cp == '\t') {
			fputs("\\t", f);
		} else if (cp == '\r') {
			fputs("\\r", f);
		} else if (cp < 0x20 || cp == 0x7f) {
			fprintf(f, "\\u%04x", (unsigned int)cp);
		} else {
			fwrite(s, 1, k, f);
		}
		s += k;
		n -= k;
	}
	fputc('"', f);
}
