/* The block functions behind uk_name_digest (_speedups_digest.c, _speedups_sha1_x86.c).
 *
 * A block function runs the compression function of MD5 (RFC 1321 §3.4) or SHA-1 (FIPS 180-4
 * §6.1.2) over count consecutive 64-byte blocks, updating state in place. No Python here:
 * _speedups_sha1_x86.c is compiled without the Python headers.
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

#endif
