/*
 * Linked into the ThreadSanitizer test binary only (mk/tsan.mk): lets Criterion's
 * sandbox start under TSan.
 *
 * Criterion 2.4's sandbox (BoxFort) maps its shared arenas at an address it draws with
 * rand_r: 0x200000000000 + (rand_r(&seed) & 0x3fffff) * 16 MiB, three draws at most.
 * Under ThreadSanitizer nearly all of that range is TSan's shadow or reserved by it, so
 * the draws fail and every run aborts with "Could not initialize inheritable arena"
 * (Criterion issue #274). This rand_r takes the place of libc's in the whole binary
 * and draws within 4 GiB below the test binary itself instead: a PIE binary lies in
 * application memory in every TSan layout, and so does the free space just below it
 * (BoxFort still checks that the pages are free). Nothing else here calls rand_r. If a
 * later Criterion or TSan breaks these assumptions the run aborts as before, loudly.
 */
#include <stdint.h>
#include <stdlib.h>

#define ARENA_BASE 0x200000000000ull
#define ARENA_STEP (16ull << 20)

int rand_r(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    uint64_t here = (uint64_t)(uintptr_t)&rand_r / ARENA_STEP;
    uint64_t below = 1 + (*seed >> 16) % 256;   /* 16 MiB .. 4 GiB below */
    return (int)(here - ARENA_BASE / ARENA_STEP - below);
}
