/*
 * Which sanitizer this translation unit is built with: STVM_ASAN and STVM_TSAN, from
 * GCC's __SANITIZE_*__ or Clang's __has_feature. The stack switch tells them about
 * every process's stack, and the overflow handler leaves AddressSanitizer's own
 * handler alone; both must agree on which build this is.
 */
#ifndef STVM_VM_SANITIZERS_H
#define STVM_VM_SANITIZERS_H

#if defined(__SANITIZE_ADDRESS__)
#define STVM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STVM_ASAN 1
#endif
#endif

#if defined(__SANITIZE_THREAD__)
#define STVM_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define STVM_TSAN 1
#endif
#endif

#endif
