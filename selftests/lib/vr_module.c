// SPDX-License-Identifier: GPL-2.0
/* Module loading of the vmrapl selftests. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vr_module.h"

static int vr_system(const char *fmt, const char *a, const char *b)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), fmt, a, b);
	return system(cmd);
}

int vr_unload(void)
{
	return vr_system("rmmod vmrapl%s%s", "", "");
}

int vr_load(const char *params)
{
	const char *ko = getenv("VMRAPL_KO");
	int ret;

	ret = vr_system("insmod %s %s", ko ? ko : "/vmrapl.ko",
			params ? params : "");
	/* No udev in the rig: give the device its group as the rule does. */
	if (!ret)
		vr_system("chgrp kvm /dev/vmrapl%s%s && chmod 0660 /dev/vmrapl",
			  "", "");
	/*
	 * In the rig, where this load's text is, for the watchdog's dump of
	 * a wedged guest (selftests/rig/hangdump.py).
	 */
	if (!ret && getenv("VMRAPL_RIG_VARIANT"))
		vr_system("echo \"### MODTEXT vmrapl %s\" > /dev/kmsg%s",
			  "$(cat /sys/module/vmrapl/sections/.text)", "");
	return ret;
}

int vr_reload(const char *params)
{
	if (access("/sys/module/vmrapl", F_OK) == 0 && vr_unload())
		return -1;
	return vr_load(params);
}

bool vr_module_loaded(void)
{
	return access("/sys/module/vmrapl", F_OK) == 0;
}

bool vr_rig_variant(const char *name)
{
	const char *v = getenv("VMRAPL_RIG_VARIANT");

	return v && !strcmp(v, name);
}
