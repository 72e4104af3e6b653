// SPDX-License-Identifier: GPL-2.0-only
// shim/thread_annotations.h: clang thread-safety attributes for the shim's lock types.
//
// The kernel states its lock rules in comments and lockdep checks them at run time; umemcg states
// them as clang capabilities so that -Wthread-safety checks them at compile time (the CI builds
// once with clang and -Werror=thread-safety). Under gcc every macro expands to nothing.
#pragma once

#if defined(__clang__)
#define UMEMCG_TSA(x) __attribute__((x))
#else
#define UMEMCG_TSA(x)
#endif

#define CAPABILITY(x) UMEMCG_TSA(capability(x))
#define SCOPED_CAPABILITY UMEMCG_TSA(scoped_lockable)
#define GUARDED_BY(x) UMEMCG_TSA(guarded_by(x))
#define PT_GUARDED_BY(x) UMEMCG_TSA(pt_guarded_by(x))
#define ACQUIRED_BEFORE(...) UMEMCG_TSA(acquired_before(__VA_ARGS__))
#define ACQUIRED_AFTER(...) UMEMCG_TSA(acquired_after(__VA_ARGS__))
#define REQUIRES(...) UMEMCG_TSA(requires_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) UMEMCG_TSA(requires_shared_capability(__VA_ARGS__))
#define ACQUIRE(...) UMEMCG_TSA(acquire_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) UMEMCG_TSA(acquire_shared_capability(__VA_ARGS__))
#define RELEASE(...) UMEMCG_TSA(release_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) UMEMCG_TSA(release_shared_capability(__VA_ARGS__))
#define RELEASE_GENERIC(...) UMEMCG_TSA(release_generic_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) UMEMCG_TSA(try_acquire_capability(__VA_ARGS__))
#define TRY_ACQUIRE_SHARED(...) UMEMCG_TSA(try_acquire_shared_capability(__VA_ARGS__))
#define EXCLUDES(...) UMEMCG_TSA(locks_excluded(__VA_ARGS__))
#define ASSERT_CAPABILITY(x) UMEMCG_TSA(assert_capability(x))
#define ASSERT_SHARED_CAPABILITY(x) UMEMCG_TSA(assert_shared_capability(x))
#define RETURN_CAPABILITY(x) UMEMCG_TSA(lock_returned(x))
#define NO_THREAD_SAFETY_ANALYSIS UMEMCG_TSA(no_thread_safety_analysis)
