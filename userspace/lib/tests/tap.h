/* SPDX-License-Identifier: MIT */
/*
 * The TAP 13 output of the library's unit tests: one "ok N" / "not ok N"
 * line per check, "# " diagnostics, and the plan and exit status at the
 * end (tap_done()).  Header-only: each test program is one file.
 */
#ifndef VMRAPL_TESTS_TAP_H
#define VMRAPL_TESTS_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int test_nr;
static int failed;

static void __attribute__((format(printf, 2, 3)))
tap(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d ", ok ? "" : "not ", ++test_nr);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		failed++;
}

static void __attribute__((format(printf, 1, 2), unused))
diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

/* The plan line and the exit status: 1 when any check failed. */
static int __attribute__((unused)) tap_done(void)
{
	printf("1..%d\n", test_nr);
	return failed ? 1 : 0;
}

#endif /* VMRAPL_TESTS_TAP_H */
