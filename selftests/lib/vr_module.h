/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Loading and unloading vmrapl inside the rig (VMRAPL_KO names the module
 * file, default /vmrapl.ko).  Runtime parameters: libvmrapl-host's
 * vmrapl_host_param_set().
 */
#ifndef _VR_MODULE_H
#define _VR_MODULE_H

#include <stdbool.h>

/* rmmod (when loaded), then insmod with @params; system()'s status. */
int vr_reload(const char *params);
int vr_unload(void);
int vr_load(const char *params);
/* Is vmrapl loaded (/sys/module/vmrapl)? */
bool vr_module_loaded(void);
/* Does the rig run variant @name (/init's VMRAPL_RIG_VARIANT)? */
bool vr_rig_variant(const char *name);

#endif /* _VR_MODULE_H */
