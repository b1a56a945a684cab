/* uuidkit._speedups: SHA-1 blocks through the SHA1 instructions of 64-bit ARM.
 *
 * SHA1C, SHA1P and SHA1M each run four steps of FIPS 180-4 §6.1.2 step 3 with the function
 * f_t of their name (§4.1.1: choose for steps 0-19, parity for 20-39 and 60-79, majority
 * for 40-59) on a, b, c, d held in one register (a in lane 0) and e in a scalar; the four
 * message words, with the constant K_t of §4.2.1 already added, come in the lanes of a third
 * register. After four steps e is the a of four steps before, rotated left by 30: SHA1H
 * computes that. SHA1SU0 and SHA1SU1 compute four words of the message schedule (step 1)
 * from the sixteen before them.
 *
 * Only the block function is compiled for these instructions (a target attribute, not a
 * compiler flag for the whole module), and _speedups_digest.c calls it only when the kernel
 * reports them (HWCAP_SHA1 in the auxiliary vector's AT_HWCAP): the module stays runnable on
 * every 64-bit ARM CPU, and the portable function in _speedups_digest.c is what CPUs without
 * them run.
 *
 * References: FIPS 180-4 §4.1.1, §4.2.1, §5.1.1, §6.1.2; Arm Architecture Reference Manual
 * for A-profile architecture (FEAT_SHA1: SHA1C, SHA1P, SHA1M, SHA1H, SHA1SU0, SHA1SU1); Arm
 * C Language Extensions (the SHA1 intrinsics of <arm_neon.h>); the Linux kernel's arm64
 * ELF hwcaps documentation (HWCAP_ASIMD, HWCAP_SHA1).
 */
#include "_speedups_digest.h"

#ifdef UK_SHA1_ARM
#include <arm_neon.h>
#include <sys/auxv.h>

/* The arm64 AT_HWCAP bits (the kernel's uapi asm/hwcap.h), for C libraries that lack them. */
#ifndef HWCAP_ASIMD
#define HWCAP_ASIMD (1UL << 1)
#endif
#ifndef HWCAP_SHA1
#define HWCAP_SHA1 (1UL << 5)
#endif

int uk_sha1_arm_available(void)
{
    unsigned long caps = getauxval(AT_HWCAP);
    return (caps & HWCAP_ASIMD) && (caps & HWCAP_SHA1);
}

/* Words W(4g) .. W(4g+3) of the schedule (g >= 4) in place of W(4g-16) .. W(4g-13):
   W(t) = ROTL1(W(t-3) ^ W(t-8) ^ W(t-14) ^ W(t-16)), FIPS 180-4 §6.1.2 step 1. SHA1SU0
   XORs W(t-16), W(t-14) and W(t-8) lane by lane; SHA1SU1 adds W(t-3) and rotates, taking
   the W(t-3) of the last lane from its own first lane. */
#define SCHEDULE(g)                                                                          \
    w[(g) % 4] = vsha1su1q_u32(vsha1su0q_u32(w[(g) % 4], w[((g) + 1) % 4], w[((g) + 2) % 4]), \
                               w[((g) + 3) % 4])

/* Steps 4g .. 4g+3 through the instruction op (SHA1C, SHA1P or SHA1M) with constant k. */
#define FOUR_STEPS(g, op, k)                                                                 \
    do {                                                                                     \
        if ((g) >= 4) {                                                                      \
            SCHEDULE(g);                                                                     \
        }                                                                                    \
        uint32_t e_next = vsha1h_u32(vgetq_lane_u32(abcd, 0));                               \
        abcd = op(abcd, e, vaddq_u32(w[(g) % 4], vdupq_n_u32(k)));                           \
        e = e_next;                                                                          \
    } while (0)

#define TWENTY_STEPS(g, op, k)                                                               \
    do {                                                                                     \
        FOUR_STEPS((g), op, (k));                                                            \
        FOUR_STEPS((g) + 1, op, (k));                                                        \
        FOUR_STEPS((g) + 2, op, (k));                                                        \
        FOUR_STEPS((g) + 3, op, (k));                                                        \
        FOUR_STEPS((g) + 4, op, (k));                                                        \
    } while (0)

__attribute__((target("+crypto"))) void
uk_sha1_blocks_arm(uint32_t *state, const unsigned char *blocks, size_t count)
{
    /* H0..H3 as a, b, c, d in lanes 0..3; H4 as e. */
    uint32x4_t abcd = vld1q_u32(state);
    uint32_t e = state[4];
    for (; count > 0; count--, blocks += 64) {
        const uint32x4_t abcd_in = abcd;
        const uint32_t e_in = e;
        uint32x4_t w[4];
        /* The block's sixteen big-endian words (§5.2.1): bytes reversed within each word. */
        for (int i = 0; i < 4; i++) {
            w[i] = vreinterpretq_u32_u8(vrev32q_u8(vld1q_u8(blocks + 16 * i)));
        }
        TWENTY_STEPS(0, vsha1cq_u32, 0x5a827999u); /* §4.2.1: the constant of steps 0-19 */
        TWENTY_STEPS(5, vsha1pq_u32, 0x6ed9eba1u);
        TWENTY_STEPS(10, vsha1mq_u32, 0x8f1bbcdcu);
        TWENTY_STEPS(15, vsha1pq_u32, 0xca62c1d6u);
        /* §6.1.2 step 4: H(i) = working variables + H(i-1). */
        abcd = vaddq_u32(abcd, abcd_in);
        e += e_in;
    }
    vst1q_u32(state, abcd);
    state[4] = e;
}

#else
/* Not 64-bit ARM on Linux, or a compiler this path is not built with: the portable SHA-1
   only. ISO C wants a translation unit to declare something. */
typedef int uk_sha1_arm_not_built;
#endif
