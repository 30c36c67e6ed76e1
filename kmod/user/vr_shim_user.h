/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace side of kmod/vr_shim.h: the primitives of the accounting core
 * for single-threaded userspace users (unit and property tests, the
 * trace-driven simulator, the hot-path benchmarks).
 */
#ifndef _VMRAPL_SHIM_USER_H
#define _VMRAPL_SHIM_USER_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/cdefs.h>
#include <linux/types.h>

/* The kernel's names for the uapi's fixed-size types. */
typedef __u64 u64;
typedef __s64 s64;
typedef __u32 u32;
typedef __s32 s32;
typedef __u8 u8;

/* Names as #defines, like the kernel side of vr_shim.h. */
struct vr_user_atomic64 {
	u64 counter;
};

#define vr_atomic64_t		struct vr_user_atomic64

#define vr_atomic64_fetch_add(v, p) \
	__atomic_fetch_add(&(p)->counter, (v), __ATOMIC_RELAXED)
#define vr_atomic64_xchg(p, v) \
	__atomic_exchange_n(&(p)->counter, (v), __ATOMIC_RELAXED)
#define vr_atomic64_read(p) \
	__atomic_load_n(&(p)->counter, __ATOMIC_RELAXED)

/*
 * The userspace users of the core are single-threaded.  With
 * VR_LOCK_CHECK (the unit tests, the simulator) a lock records that it is
 * held, and vr_lock_held() asserts it, as lockdep_assert_held() does in
 * the kernel; without it (hotpath, whose instruction counts stand for
 * the kernel's switch path) locks cost nothing.
 */
#define vr_lock_t		int
#define vr_lock_init(l)		(*(l) = 0)
#ifdef VR_LOCK_CHECK
#define vr_lock(l)		((void)(*(l) = 1))
#define vr_unlock(l)		((void)(*(l) = 0))
#define vr_trylock(l)		(*(l) = 1)
#define vr_lock_held(l)		assert(*(l))
#else
#define vr_lock(l)		((void)(l))
#define vr_unlock(l)		((void)(l))
#define vr_trylock(l)		(1)
#define vr_lock_held(l)		((void)(l))
#endif

#define vr_seq_t		unsigned int
#define vr_seq_init(s)		(*(s) = 0)
#define vr_seq_write_begin(s)	((*(s))++)
#define vr_seq_write_end(s)	((*(s))++)
#define vr_seq_read_begin(s)	(*(s))
#define vr_seq_read_retry(s, v)	(*(s) != (v))

#define vr_cmpxchg_ptr(p, o, n) \
	({ __typeof__(o) __o = (o); \
	   __atomic_compare_exchange_n((p), &__o, (n), false, \
				       __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
	   __o; })

/* One access each, never torn: relaxed atomics, plain moves on x86. */
#ifndef READ_ONCE
#define READ_ONCE(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#endif

#ifndef likely
#define likely(x)		__builtin_expect(!!(x), 1)
#define unlikely(x)		__builtin_expect(!!(x), 0)
#endif

/* Out of line: a rare branch of a hot function (the kernel's noinline). */
#define vr_noinline		__attribute_noinline__	/* glibc's sys/cdefs.h */

#ifndef BIT
#define BIT(n)			(1U << (n))
#define BIT_ULL(n)		(1ULL << (n))
#endif

/* a * b / c; saturated when the quotient does not fit, like the kernel's. */
static inline u64 vr_mul_div(u64 a, u64 b, u64 c)
{
	__uint128_t q;

	if (!c)
		return ~0ULL;
	q = (__uint128_t)a * b / c;
	return q >> 64 ? ~0ULL : (u64)q;
}

#endif /* _VMRAPL_SHIM_USER_H */
