/* uuidkit._speedups: SHA-1 blocks through the x86 SHA extensions.
 *
 * SHA1RNDS4 runs four steps of FIPS 180-4 §6.1.2 step 3 (its immediate picks the function
 * f_t and constant K_t of the twenty steps, §4.1.1 and §4.2.1); SHA1MSG1 and SHA1MSG2 compute
 * four words of the message schedule (step 1); SHA1NEXTE derives the e that the next four
 * steps start from (the a of four steps before, rotated left by 30) and adds it to their
 * first message word. The instructions keep a, b, c, d in one register, a in the highest 32
 * bits, and e in the highest 32 bits of another; message words are loaded the same way, the
 * first word of four in the highest bits.
 *
 * Only the block function is compiled for these instructions (a target attribute, not a
 * compiler flag for the whole module), and _speedups_digest.c calls it only when CPUID
 * reports them: the module stays runnable on every x86 CPU, and the portable function in
 * _speedups_digest.c is what other CPUs and architectures run.
 *
 * References: FIPS 180-4 §4.1.1, §5.1.1, §6.1.2; Intel 64 and IA-32 Architectures Software
 * Developer's Manual, Vol. 2 (CPUID leaf 1 ECX, leaf 7 EBX; SHA1RNDS4, SHA1NEXTE, SHA1MSG1,
 * SHA1MSG2).
 */
#include "_speedups_digest.h"

#ifdef UK_SHA1_X86
#include <cpuid.h>
#include <immintrin.h>

#define CPUID1_ECX_SSSE3 (1u << 9)
#define CPUID1_ECX_SSE4_1 (1u << 19)
#define CPUID7_EBX_SHA (1u << 29)

int uk_sha1_x86_available(void)
{
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & CPUID1_ECX_SSSE3) ||
        !(ecx & CPUID1_ECX_SSE4_1) || __get_cpuid_max(0, NULL) < 7) {
        return 0;
    }
    __cpuid_count(7, 0, eax, ebx, ecx, edx);
    (void)eax;
    (void)ecx;
    (void)edx;
    return (ebx & CPUID7_EBX_SHA) != 0;
}

/* Words W(4g) .. W(4g+3) of the schedule (g >= 4) in place of W(4g-16) .. W(4g-13):
   W(t) = ROTL1(W(t-3) ^ W(t-8) ^ W(t-14) ^ W(t-16)), FIPS 180-4 §6.1.2 step 1. */
#define SCHEDULE(g)                                                                          \
    w[(g) % 4] = _mm_sha1msg2_epu32(                                                         \
        _mm_xor_si128(_mm_sha1msg1_epu32(w[(g) % 4], w[((g) + 1) % 4]), w[((g) + 2) % 4]),   \
        w[((g) + 3) % 4])

/* Steps 4g .. 4g+3 with function and constant number f (steps 0-19: 0, ..., 60-79: 3). */
#define FOUR_STEPS(g, f)                                                                     \
    do {                                                                                     \
        if ((g) >= 4) {                                                                      \
            SCHEDULE(g);                                                                     \
        }                                                                                    \
        e_and_w = (g) == 0 ? _mm_add_epi32(e, w[0]) : _mm_sha1nexte_epu32(before, w[(g) % 4]); \
        before = abcd;                                                                       \
        abcd = _mm_sha1rnds4_epu32(abcd, e_and_w, (f));                                      \
    } while (0)

#define TWENTY_STEPS(g, f)                                                                   \
    do {                                                                                     \
        FOUR_STEPS((g), (f));                                                                \
        FOUR_STEPS((g) + 1, (f));                                                            \
        FOUR_STEPS((g) + 2, (f));                                                            \
        FOUR_STEPS((g) + 3, (f));                                                            \
        FOUR_STEPS((g) + 4, (f));                                                            \
    } while (0)

__attribute__((target("sha,sse4.1,ssse3"))) void
uk_sha1_blocks_x86(uint32_t *state, const unsigned char *blocks, size_t count)
{
    /* Reverses the 16 bytes: four big-endian words become native words, the first highest. */
    const __m128i reverse = _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    /* H0..H3 with H0 (a) highest; H4 (e) highest, the lower words zero. */
    __m128i abcd = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)state), 0x1B);
    __m128i e = _mm_set_epi32((int)state[4], 0, 0, 0);
    for (; count > 0; count--, blocks += 64) {
        const __m128i abcd_in = abcd, e_in = e;
        __m128i w[4], e_and_w, before = abcd;
        for (int i = 0; i < 4; i++) {
            w[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(blocks + 16 * i)), reverse);
        }
        TWENTY_STEPS(0, 0);
        TWENTY_STEPS(5, 1);
        TWENTY_STEPS(10, 2);
        TWENTY_STEPS(15, 3);
        /* §6.1.2 step 4: H(i) = working variables + H(i-1); the final e is the a of four
           steps before the end, rotated, which SHA1NEXTE adds to H4. */
        abcd = _mm_add_epi32(abcd, abcd_in);
        e = _mm_sha1nexte_epu32(before, e_in);
    }
    _mm_storeu_si128((__m128i *)state, _mm_shuffle_epi32(abcd, 0x1B));
    state[4] = (uint32_t)_mm_extract_epi32(e, 3);
}

#else
/* Not x86, or a compiler without per-function targets: the portable SHA-1 only. ISO C wants
   a translation unit to declare something. */
typedef int uk_sha1_x86_not_built;
#endif
