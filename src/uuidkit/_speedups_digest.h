/* The block functions behind uk_name_digest (_speedups_digest.c, _speedups_sha1_x86.c,
 * _speedups_sha1_arm.c).
 *
 * A block function runs the compression function of MD5 (RFC 1321 §3.4) or SHA-1 (FIPS 180-4
 * §6.1.2) over count consecutive 64-byte blocks, updating state in place. No Python here:
 * _speedups_sha1_x86.c and _speedups_sha1_arm.c are compiled without the Python headers.
 *
 * References: RFC 1321 §3.4; FIPS 180-4 §6.1.2.
 */
#ifndef UUIDKIT_SPEEDUPS_DIGEST_H
#define UUIDKIT_SPEEDUPS_DIGEST_H

#include <stddef.h>
#include <stdint.h>

typedef void (*uk_blocks_function)(uint32_t *state, const unsigned char *blocks, size_t count);

/* The SHA-1 path through the x86 SHA extensions: built on x86 by compilers that accept a
   per-function target attribute (GCC 5 and later, Clang 8 and later), so the rest of the
   module stays portable; taken at run time only when CPUID reports the extensions. */
#if (defined(__x86_64__) || defined(__i386__)) &&                                            \
    ((defined(__clang__) && __clang_major__ >= 8) ||                                          \
     (!defined(__clang__) && defined(__GNUC__) && __GNUC__ >= 5))
#define UK_SHA1_X86 1
/* Nonzero when this CPU has the SHA extensions and the SSSE3 and SSE4.1 the path uses. */
int uk_sha1_x86_available(void);
/* SHA-1 block function through SHA1RNDS4, SHA1NEXTE, SHA1MSG1 and SHA1MSG2. */
void uk_sha1_blocks_x86(uint32_t *state, const unsigned char *blocks, size_t count);
#endif

/* The SHA-1 path through the SHA1 instructions of 64-bit ARM (FEAT_SHA1): built for
   little-endian aarch64 Linux by GCC 8 and later, whose per-function target attribute
   enables them for the one function, so the rest of the module stays portable; taken at run
   time only when the kernel reports them in AT_HWCAP (getauxval). Other compilers and
   systems build the portable SHA-1 only. */
#if defined(__aarch64__) && defined(__linux__) && defined(__BYTE_ORDER__) &&                 \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && !defined(__clang__) && defined(__GNUC__) &&  \
    __GNUC__ >= 8
#define UK_SHA1_ARM 1
/* Nonzero when the kernel reports Advanced SIMD and the SHA1 instructions (HWCAP_SHA1). */
int uk_sha1_arm_available(void);
/* SHA-1 block function through SHA1C, SHA1P, SHA1M, SHA1H, SHA1SU0 and SHA1SU1. */
void uk_sha1_blocks_arm(uint32_t *state, const unsigned char *blocks, size_t count);
#endif

#endif
