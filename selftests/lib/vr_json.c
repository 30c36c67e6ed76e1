// SPDX-License-Identifier: GPL-2.0
/* JSON number scraping of the vmrapl selftests. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vr_json.h"

const char *vr_json_value(const char *from, const char *key)
{
	char k[64];
	const char *s;

	if (!from)
		return NULL;
	snprintf(k, sizeof(k), "\"%s\": ", key);
	s = strstr(from, k);
	return s ? s + strlen(k) : NULL;
}

double vr_json_num(const char *from, const char *key)
{
	const char *s = vr_json_value(from, key);

	return s ? atof(s) : -1;
}

long long vr_json_ll(const char *from, const char *key)
{
	const char *s = vr_json_value(from, key);

	return s ? atoll(s) : -1;
}
