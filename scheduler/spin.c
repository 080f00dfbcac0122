/* Adaptive spinning before a sleep (see spin.h). */
#include "spin.h"

#include <time.h>

int64_t stvm__spin_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A spin-wait hint: it lets a sibling hardware thread run and, on x86, avoids the
 * memory-order flush on leaving the loop. aarch64's is `yield` (a hint: a no-op on a core
 * without threads, and under qemu). */
static inline void pause_cpu(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
}

static void learn(stvm_spin *s, int64_t window)
{
    if (window < STVM_SPIN_FLOOR_NS)
        window = STVM_SPIN_FLOOR_NS;
    if (window > s->max_ns)
        window = s->max_ns;
    atomic_store_explicit(&s->window_ns, window, memory_order_relaxed);
}

bool stvm__spin(stvm_spin *s, int64_t limit_ns, bool (*ready)(void *arg), void *arg,
                int64_t *since)
{
    *since = 0;
    int64_t window = atomic_load_explicit(&s->window_ns, memory_order_relaxed);
    if (limit_ns < window)
        window = limit_ns;
    if (window <= 0 || !s->max_ns)
        return ready(arg);
    int64_t start = stvm__spin_now();
    for (int64_t end = start + window; stvm__spin_now() < end;) {
        if (ready(arg)) {
            learn(s, s->max_ns);
            return true;
        }
        pause_cpu();
    }
    if (ready(arg))
        return true;
    *since = start;
    return false;
}

void stvm__spin_waited(stvm_spin *s, int64_t waited_ns)
{
    int64_t window = atomic_load_explicit(&s->window_ns, memory_order_relaxed);
    learn(s, waited_ns <= s->max_ns ? s->max_ns : window / 2);
}

void stvm__spin_woke(stvm_spin *s, int64_t since)
{
    if (since)
        stvm__spin_waited(s, stvm__spin_now() - since);
}
