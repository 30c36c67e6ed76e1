/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Numbers out of the tools' JSON output by plain string search (the tools
 * print "key": value with one space; no parser needed or wanted).
 */
#ifndef _VR_JSON_H
#define _VR_JSON_H

/*
 * Where the value of the first "@key": in the text from @from starts;
 * NULL when there is none or @from is NULL.
 */
const char *vr_json_value(const char *from, const char *key);
/* That value as a double (atof), -1 when there is none. */
double vr_json_num(const char *from, const char *key);
/* That value as a long long (atoll), -1 when there is none. */
long long vr_json_ll(const char *from, const char *key);

#endif /* _VR_JSON_H */
