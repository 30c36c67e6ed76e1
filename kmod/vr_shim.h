/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few primitives the accounting core needs, for the kernel and for
 * userspace (unit tests, property tests, the trace-driven simulator and
 * benchmarks).  Nothing else in vr_core.c depends on the kernel.
 */
#ifndef _VMRAPL_SHIM_H
#define _VMRAPL_SHIM_H

#ifdef __KERNEL__

#include <linux/atomic.h>
#include <linux/compiler.h>
#include <linux/math64.h>
#include <linux/seqlock.h>
#include <linux/spinlock.h>
#include <linux/types.h>

#define vr_atomic64_t			atomic64_t

#define vr_atomic64_fetch_add(v, p)	((u64)atomic64_fetch_add((s64)(v), (p)))
#define vr_atomic64_xchg(p, v)		((u64)atomic64_xchg((p), (s64)(v)))
#define vr_atomic64_read(p)		((u64)atomic64_read(p))

#define vr_lock_t		raw_spinlock_t
#define vr_lock_init(l)		raw_spin_lock_init(l)
#define vr_lock(l)		raw_spin_lock(l)
#define vr_unlock(l)		raw_spin_unlock(l)
#define vr_trylock(l)		raw_spin_trylock(l)
#define vr_lock_held(l)		lockdep_assert_held(l)

#define vr_seq_t		seqcount_t
#define vr_seq_init(s)		seqcount_init(s)
#define vr_seq_write_begin(s)	write_seqcount_begin(s)
#define vr_seq_write_end(s)	write_seqcount_end(s)
#define vr_seq_read_begin(s)	read_seqcount_begin(s)
#define vr_seq_read_retry(s, v)	read_seqcount_retry((s), (v))

#define vr_cmpxchg_ptr(p, o, n)	cmpxchg((p), (o), (n))

#define vr_noinline		noinline

/*
 * a * b / c, exact when the quotient fits in 64 bits, else saturated:
 * the x86 divide would fault (#DE) on an oversized quotient, and this
 * runs in the scheduler's probes.
 */
static inline u64 vr_mul_div(u64 a, u64 b, u64 c)
{
	if (!c || mul_u64_u64_shr(a, b, 64) >= c)
		return U64_MAX;
	return mul_u64_u64_div_u64(a, b, c);
}

#else /* !__KERNEL__ */

/* Userspace builds (unit tests, simulator, benchmarks): kmod/user/. */
#include "user/vr_shim_user.h"

#endif /* __KERNEL__ */

#endif /* _VMRAPL_SHIM_H */
