/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmrapl accounting core, the counter's lag share (vr_lag.c): called by
 * the close in vr_core.c, under the package's close_lock.  Plain C,
 * shared with the unit tests and the simulator.
 */
#ifndef _VMRAPL_LAG_H
#define _VMRAPL_LAG_H

#include "vr_core.h"

u64 vr_lag_share(struct vr_pkg *p, u64 busy, u64 dyn, u64 *seen);
void vr_lag_give(struct vr_pkg *p, const u64 *amount, u64 *given, u64 busy,
		 bool keep, u64 now);
void vr_lag_merge(struct vr_pkg *p, u64 busy, u64 now);
void vr_lag_join(struct vr_pkg *p, struct vr_acct *a, u64 r);
void vr_lag_keep(struct vr_pkg *p, struct vr_acct *list, u64 busy, u64 wsum,
		 bool keep, u64 now);

#endif /* _VMRAPL_LAG_H */
