/* uuidkit._speedups: MD5 and SHA-1 of a namespace and a name, for uuid3() and uuid5().
 *
 * RFC 9562 §5.3 and §5.5 hash the namespace ID (16 bytes, network order) followed by the
 * name: a few 64-byte blocks. Calling hashlib through the interpreter cost more than the hash
 * itself; these two small compression functions run the blocks in place. Neither is used for
 * security (RFC 9562 §6.5: name-based UUIDs are not secrets), only to reproduce the values.
 *
 * Written from RFC 1321 (MD5, §3.1-§3.5) and FIPS 180-4 (SHA-1, §4.1.1, §5.1.1, §6.1.2).
 * The tests compare both with hashlib at lengths around the block boundaries.
 *
 * References: RFC 1321; FIPS 180-4 §6.1; RFC 9562 §5.3, §5.5.
 */
#include "_speedups.h"

#include <string.h>

typedef void (*compress_function)(uint32_t *state, const unsigned char *block);

typedef struct {
    uint32_t state[5];
    unsigned char block[64];
    size_t filled;
    uint64_t total; /* bytes hashed so far */
    compress_function compress;
    int big_endian; /* SHA-1 reads and writes words big-endian, MD5 little-endian */
} digest;

static uint32_t rotl(uint32_t word, int count)
{
    return (word << count) | (word >> (32 - count));
}

static uint32_t load_le(const unsigned char *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static uint32_t load_be(const unsigned char *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

/* --- MD5 (RFC 1321 §3.4) --------------------------------------------------------------- */

/* T[i] = floor(2**32 * |sin(i + 1)|), RFC 1321 §3.4. */
static const uint32_t md5_sines[64] = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613,
    0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193,
    0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d,
    0x02441453, 0xd8a1e681, 0xe7d3fbc8, 0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed,
    0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122,
    0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa,
    0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665, 0xf4292244,
    0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb,
    0xeb86d391,
};

/* The four rounds' rotation amounts, four per round. */
static const int md5_shifts[4][4] = {{7, 12, 17, 22}, {5, 9, 14, 20}, {4, 11, 16, 23}, {6, 10, 15, 21}};

static void md5_compress(uint32_t *state, const unsigned char *block)
{
    uint32_t x[16];
    for (int i = 0; i < 16; i++) {
        x[i] = load_le(block + 4 * i);
    }
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    /* One step of §3.4: a = b + ((a + g(b,c,d) + X[k] + T[i]) <<< s), then the words rotate
       (a, b, c, d) <- (d, a', b, c); one loop per round and its auxiliary function. */
#define MD5_STEP(g, word)                                                                    \
    do {                                                                                     \
        uint32_t sum = a + (g) + x[(word)] + md5_sines[step];                                \
        a = d;                                                                               \
        d = c;                                                                               \
        c = b;                                                                               \
        b = b + rotl(sum, md5_shifts[step / 16][step % 4]);                                  \
    } while (0)
    int step = 0;
    for (; step < 16; step++) {
        MD5_STEP((b & c) | (~b & d), step); /* F(X,Y,Z) = XY v not(X) Z */
    }
    for (; step < 32; step++) {
        MD5_STEP((b & d) | (c & ~d), (5 * step + 1) % 16); /* G(X,Y,Z) = XZ v Y not(Z) */
    }
    for (; step < 48; step++) {
        MD5_STEP(b ^ c ^ d, (3 * step + 5) % 16); /* H(X,Y,Z) = X xor Y xor Z */
    }
    for (; step < 64; step++) {
        MD5_STEP(c ^ (b | ~d), (7 * step) % 16); /* I(X,Y,Z) = Y xor (X v not(Z)) */
    }
#undef MD5_STEP
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
}

/* --- SHA-1 (FIPS 180-4 §6.1.2) --------------------------------------------------------- */

static void sha1_compress(uint32_t *state, const unsigned char *block)
{
    uint32_t w[80];
    for (int t = 0; t < 16; t++) {
        w[t] = load_be(block + 4 * t);
    }
    for (int t = 16; t < 80; t++) { /* the message schedule, §6.1.2 step 1 */
        w[t] = rotl(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);
    }
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3], e = state[4];
    /* §6.1.2 step 3, five steps at a time: instead of moving (a, b, c, d, e) to
       (T, a, ROTL30(b), c, d) after every step, each of the five steps names the words in
       their rotated roles, so after five steps every word is back in its own variable. */
#define SHA1_STEP(v, w_, x, y, z, f, k, t)                                                  \
    do {                                                                                     \
        z += rotl(v, 5) + f(w_, x, y) + (k) + w[t];                                          \
        w_ = rotl(w_, 30);                                                                   \
    } while (0)
#define SHA1_FIVE(f, k, t)                                                                   \
    do {                                                                                     \
        SHA1_STEP(a, b, c, d, e, f, k, (t));                                                 \
        SHA1_STEP(e, a, b, c, d, f, k, (t) + 1);                                             \
        SHA1_STEP(d, e, a, b, c, f, k, (t) + 2);                                             \
        SHA1_STEP(c, d, e, a, b, f, k, (t) + 3);                                             \
        SHA1_STEP(b, c, d, e, a, f, k, (t) + 4);                                             \
    } while (0)
#define SHA1_CH(x, y, z) (((x) & (y)) ^ (~(x) & (z)))
#define SHA1_PARITY(x, y, z) ((x) ^ (y) ^ (z))
#define SHA1_MAJ(x, y, z) (((x) & (y)) ^ ((x) & (z)) ^ ((y) & (z)))
    for (int t = 0; t < 20; t += 5) {
        SHA1_FIVE(SHA1_CH, 0x5a827999u, t); /* §4.1.1, §4.2.1: 0 <= t <= 19 */
    }
    for (int t = 20; t < 40; t += 5) {
        SHA1_FIVE(SHA1_PARITY, 0x6ed9eba1u, t);
    }
    for (int t = 40; t < 60; t += 5) {
        SHA1_FIVE(SHA1_MAJ, 0x8f1bbcdcu, t);
    }
    for (int t = 60; t < 80; t += 5) {
        SHA1_FIVE(SHA1_PARITY, 0xca62c1d6u, t);
    }
#undef SHA1_CH
#undef SHA1_PARITY
#undef SHA1_MAJ
#undef SHA1_FIVE
#undef SHA1_STEP
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
    state[4] += e;
}

/* --- the shared Merkle-Damgard frame: buffering and padding ----------------------------- */

static void digest_update(digest *ctx, const unsigned char *data, size_t length)
{
    ctx->total += length;
    if (ctx->filled) {
        size_t take = 64 - ctx->filled < length ? 64 - ctx->filled : length;
        memcpy(ctx->block + ctx->filled, data, take);
        ctx->filled += take;
        data += take;
        length -= take;
        if (ctx->filled < 64) {
            return;
        }
        ctx->compress(ctx->state, ctx->block);
        ctx->filled = 0;
    }
    for (; length >= 64; data += 64, length -= 64) {
        ctx->compress(ctx->state, data);
    }
    memcpy(ctx->block, data, length);
    ctx->filled = length;
}

/* Padding (RFC 1321 §3.1-§3.2, FIPS 180-4 §5.1.1): a 1 bit, zeros to 56 mod 64 bytes, then
   the message length in bits as 64 bits (little-endian for MD5, big-endian for SHA-1). */
static void digest_first_16(digest *ctx, unsigned char out[16])
{
    uint64_t bits = ctx->total * 8;
    unsigned char tail[72] = {0x80};
    size_t pad = (ctx->filled < 56 ? 56 : 120) - ctx->filled;
    for (int i = 0; i < 8; i++) {
        int shift = ctx->big_endian ? 56 - 8 * i : 8 * i;
        tail[pad + (size_t)i] = (unsigned char)(bits >> shift);
    }
    uint64_t total = ctx->total;
    digest_update(ctx, tail, pad + 8);
    ctx->total = total;
    for (int i = 0; i < 4; i++) {
        uint32_t word = ctx->state[i];
        for (int j = 0; j < 4; j++) {
            int shift = ctx->big_endian ? 24 - 8 * j : 8 * j;
            out[4 * i + j] = (unsigned char)(word >> shift);
        }
    }
}

void uk_name_digest(int sha1, const unsigned char namespace_bytes[16], const char *name,
                    size_t length, unsigned char out[16])
{
    digest ctx;
    ctx.state[0] = 0x67452301;
    ctx.state[1] = 0xefcdab89;
    ctx.state[2] = 0x98badcfe;
    ctx.state[3] = 0x10325476;
    ctx.state[4] = 0xc3d2e1f0; /* SHA-1's H4; MD5 has four words */
    ctx.filled = 0;
    ctx.total = 0;
    ctx.compress = sha1 ? sha1_compress : md5_compress;
    ctx.big_endian = sha1;
    digest_update(&ctx, namespace_bytes, 16);
    digest_update(&ctx, (const unsigned char *)name, length);
    digest_first_16(&ctx, out);
}
