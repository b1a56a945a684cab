/* uuidkit._speedups: MD5 and SHA-1 of a namespace and a name, for uuid3() and uuid5().
 *
 * RFC 9562 §5.3 and §5.5 hash the namespace ID (16 bytes, network order) followed by the
 * name: a few 64-byte blocks. Calling hashlib through the interpreter cost more than the hash
 * itself; these compression functions run the blocks in place. Neither is used for security
 * (RFC 9562 §6.5: name-based UUIDs are not secrets), only to reproduce the values.
 *
 * uuid3 and uuid5 take an exact uuid.UUID namespace and a str or bytes name here; any other
 * call goes to their Python twins, which also produce every error.
 *
 * Written from RFC 1321 (MD5, §3.1-§3.5) and FIPS 180-4 (SHA-1, §4.1.1, §5.1.1, §6.1.2).
 * SHA-1 runs through the x86 SHA extensions where CPUID reports them (_speedups_sha1_x86.c),
 * or the SHA1 instructions of 64-bit ARM where the kernel's AT_HWCAP reports them
 * (_speedups_sha1_arm.c), else through the portable function here; _sha1_hardware(False)
 * forces the portable one so the tests compare both with hashlib at lengths around the block
 * boundaries.
 *
 * References: RFC 1321; FIPS 180-4 §6.1; RFC 9562 §5.3, §5.5, §6.5.
 */
#include "_speedups.h"
#include "_speedups_digest.h"

#include <stdatomic.h>
#include <string.h>

static inline uint32_t rotl(uint32_t word, int count)
{
    return (word << count) | (word >> (32 - count));
}

static inline uint32_t load_le(const unsigned char *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static inline uint32_t load_be(const unsigned char *p)
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

/* The auxiliary functions of §3.4: F = XY v not(X) Z, G = XZ v Y not(Z), H = X xor Y xor Z,
   I = Y xor (X v not(Z)). F in a form with one operation fewer; G as a sum (its two terms
   share no bit), so the term without X (the word just computed) joins the step's other
   addends early and one operation on X is left on the chain from step to step. */
#define MD5_F(x, y, z) ((z) ^ ((x) & ((y) ^ (z))))
#define MD5_G(x, y, z) (((x) & (z)) + ((y) & ~(z)))
#define MD5_H(x, y, z) ((x) ^ (y) ^ (z))
#define MD5_I(x, y, z) ((y) ^ ((x) | ~(z)))

/* [abcd k s i] of §3.4: a = b + ((a + g(b,c,d) + X[k] + T[i]) <<< s). Four of them rotate
   the roles of a, b, c, d once around; every index and shift is a constant, so the compiler
   keeps all in registers. */
#define MD5_STEP(g, a, b, c, d, k, s, i) (a) = (b) + rotl((a) + g((b), (c), (d)) + x[k] + md5_sines[i], (s))
#define MD5_FOUR(g, k0, k1, k2, k3, s0, s1, s2, s3, i)                                        \
    do {                                                                                      \
        MD5_STEP(g, a, b, c, d, k0, s0, (i));                                                 \
        MD5_STEP(g, d, a, b, c, k1, s1, (i) + 1);                                             \
        MD5_STEP(g, c, d, a, b, k2, s2, (i) + 2);                                             \
        MD5_STEP(g, b, c, d, a, k3, s3, (i) + 3);                                             \
    } while (0)

static void md5_blocks(uint32_t *state, const unsigned char *blocks, size_t count)
{
    for (; count > 0; count--, blocks += 64) {
        uint32_t x[16];
        for (int i = 0; i < 16; i++) {
            x[i] = load_le(blocks + 4 * i);
        }
        uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
        /* Round 1: X[k] in order. */
        MD5_FOUR(MD5_F, 0, 1, 2, 3, 7, 12, 17, 22, 0);
        MD5_FOUR(MD5_F, 4, 5, 6, 7, 7, 12, 17, 22, 4);
        MD5_FOUR(MD5_F, 8, 9, 10, 11, 7, 12, 17, 22, 8);
        MD5_FOUR(MD5_F, 12, 13, 14, 15, 7, 12, 17, 22, 12);
        /* Round 2: k = (1 + 5j) mod 16. */
        MD5_FOUR(MD5_G, 1, 6, 11, 0, 5, 9, 14, 20, 16);
        MD5_FOUR(MD5_G, 5, 10, 15, 4, 5, 9, 14, 20, 20);
        MD5_FOUR(MD5_G, 9, 14, 3, 8, 5, 9, 14, 20, 24);
        MD5_FOUR(MD5_G, 13, 2, 7, 12, 5, 9, 14, 20, 28);
        /* Round 3: k = (5 + 3j) mod 16. */
        MD5_FOUR(MD5_H, 5, 8, 11, 14, 4, 11, 16, 23, 32);
        MD5_FOUR(MD5_H, 1, 4, 7, 10, 4, 11, 16, 23, 36);
        MD5_FOUR(MD5_H, 13, 0, 3, 6, 4, 11, 16, 23, 40);
        MD5_FOUR(MD5_H, 9, 12, 15, 2, 4, 11, 16, 23, 44);
        /* Round 4: k = 7j mod 16. */
        MD5_FOUR(MD5_I, 0, 7, 14, 5, 6, 10, 15, 21, 48);
        MD5_FOUR(MD5_I, 12, 3, 10, 1, 6, 10, 15, 21, 52);
        MD5_FOUR(MD5_I, 8, 15, 6, 13, 6, 10, 15, 21, 56);
        MD5_FOUR(MD5_I, 4, 11, 2, 9, 6, 10, 15, 21, 60);
        state[0] += a;
        state[1] += b;
        state[2] += c;
        state[3] += d;
    }
}

#undef MD5_FOUR
#undef MD5_STEP

/* --- SHA-1 (FIPS 180-4 §6.1.2) --------------------------------------------------------- */

/* The message schedule (§6.1.2 step 1) in a ring of its last 16 words: W(t) for t >= 16 is
   computed in place of W(t-16), the only earlier word no later step reads. */
#define SHA1_W(t)                                                                             \
    ((t) < 16 ? w[(t)&15]                                                                     \
              : (w[(t)&15] = rotl(w[((t)-3) & 15] ^ w[((t)-8) & 15] ^ w[((t)-14) & 15] ^      \
                                      w[(t)&15],                                              \
                                  1)))

/* §4.1.1, in forms with fewer operations: Ch = (x AND y) XOR (NOT x AND z), Maj = (x AND y)
   XOR (x AND z) XOR (y AND z). */
#define SHA1_CH(x, y, z) ((z) ^ ((x) & ((y) ^ (z))))
#define SHA1_PARITY(x, y, z) ((x) ^ (y) ^ (z))
#define SHA1_MAJ(x, y, z) (((x) & (y)) | ((z) & ((x) | (y))))

/* §6.1.2 step 3, five steps at a time: instead of moving (a, b, c, d, e) to
   (T, a, ROTL30(b), c, d) after every step, each of the five steps names the words in their
   rotated roles, so after five steps every word is back in its own variable. */
#define SHA1_STEP(v, w_, x, y, z, f, k, t)                                                   \
    do {                                                                                     \
        z += rotl(v, 5) + f(w_, x, y) + (k) + SHA1_W(t);                                     \
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
#define SHA1_TWENTY(f, k, t)                                                                 \
    do {                                                                                     \
        SHA1_FIVE(f, k, (t));                                                                \
        SHA1_FIVE(f, k, (t) + 5);                                                            \
        SHA1_FIVE(f, k, (t) + 10);                                                           \
        SHA1_FIVE(f, k, (t) + 15);                                                           \
    } while (0)

static void sha1_blocks(uint32_t *state, const unsigned char *blocks, size_t count)
{
    for (; count > 0; count--, blocks += 64) {
        uint32_t w[16];
        for (int t = 0; t < 16; t++) {
            w[t] = load_be(blocks + 4 * t);
        }
        uint32_t a = state[0], b = state[1], c = state[2], d = state[3], e = state[4];
        SHA1_TWENTY(SHA1_CH, 0x5a827999u, 0); /* §4.2.1: the constant of steps 0-19 */
        SHA1_TWENTY(SHA1_PARITY, 0x6ed9eba1u, 20);
        SHA1_TWENTY(SHA1_MAJ, 0x8f1bbcdcu, 40);
        SHA1_TWENTY(SHA1_PARITY, 0xca62c1d6u, 60);
        state[0] += a;
        state[1] += b;
        state[2] += c;
        state[3] += d;
        state[4] += e;
    }
}

#undef SHA1_TWENTY
#undef SHA1_FIVE
#undef SHA1_STEP
#undef SHA1_W

/* The SHA-1 block function of the CPU's SHA-1 instructions (x86 SHA extensions, ARM SHA1)
   when the CPU reports them, else NULL: set once by uk_digest_init, while the module is
   imported, and only read afterwards. */
static uk_blocks_function sha1_hardware;
/* Cleared by _sha1_hardware(False) (the tests' switch to the portable function). Atomic: a
   free-threaded build may switch while other threads hash; both functions give the same
   digest, so a call sees either and is right with both. */
static atomic_int sha1_hardware_enabled = 1;

static uk_blocks_function sha1_function(void)
{
    if (sha1_hardware != NULL && atomic_load_explicit(&sha1_hardware_enabled, memory_order_relaxed)) {
        return sha1_hardware;
    }
    return sha1_blocks;
}

/* --- the Merkle-Damgard frame: blocks of namespace + name, then the padding --------------- */

/* The 16-byte namespace fills the first quarter of the first block. */
#define FIRST_BLOCK_NAME_BYTES 48

/* v as 8 big-endian bytes at p: one byte swap and one store where the compiler offers them
   (the byte-wise form was compiled into a register built byte by byte, then a 16-byte reload
   of two 8-byte stores that stalled on store forwarding). */
static inline void store_be64(unsigned char *p, uint64_t v)
{
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    v = __builtin_bswap64(v);
    memcpy(p, &v, 8);
#elif defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    memcpy(p, &v, 8);
#else
    for (int i = 0; i < 8; i++) {
        p[i] = (unsigned char)(v >> (56 - 8 * i));
    }
#endif
}

static inline uint32_t swap32(uint32_t word)
{
    return (word >> 24) | ((word >> 8) & 0xFF00u) | ((word << 8) & 0xFF0000u) | (word << 24);
}

/* The first 128 bits of MD5 (sha1 == 0) or SHA-1 of the namespace ID in network byte order
   followed by the name (RFC 9562 §5.3, §5.5).

   Padding (RFC 1321 §3.1-§3.2, FIPS 180-4 §5.1.1): a 1 bit, zeros to 56 mod 64 bytes, then
   the message length in bits as 64 bits (little-endian for MD5, big-endian for SHA-1). The
   whole message of a short name (under 48 bytes: the common case) and the tail of a long one
   are laid out in one zeroed buffer of one or two blocks; the blocks between are hashed in
   place. */
static uk_u128 name_digest(int sha1, uk_u128 namespace_value, const unsigned char *name,
                           size_t length)
{
    /* The initial hash values: RFC 1321 §3.3 (A, B, C, D) and FIPS 180-4 §5.3.1 (H0..H4). */
    uint32_t state[5] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0};
    uk_blocks_function blocks = sha1 ? sha1_function() : md5_blocks;
    unsigned char buffer[128];
    size_t rest; /* bytes of the message in buffer */
    store_be64(buffer, namespace_value.hi);
    store_be64(buffer + 8, namespace_value.lo);
    memset(buffer + 16, 0, sizeof buffer - 16);
    if (length < FIRST_BLOCK_NAME_BYTES) {
        memcpy(buffer + 16, name, length);
        rest = 16 + length;
    }
    else {
        memcpy(buffer + 16, name, FIRST_BLOCK_NAME_BYTES);
        size_t middle = (length - FIRST_BLOCK_NAME_BYTES) / 64;
        const unsigned char *tail = name + FIRST_BLOCK_NAME_BYTES + 64 * middle;
        blocks(state, buffer, 1);
        blocks(state, name + FIRST_BLOCK_NAME_BYTES, middle);
        rest = (length - FIRST_BLOCK_NAME_BYTES) % 64;
        memcpy(buffer, tail, rest);
        memset(buffer + rest, 0, 64);
    }
    size_t end = rest < 56 ? 64 : 128;
    buffer[rest] = 0x80;
    uint64_t bits = ((uint64_t)length + 16) * 8;
    for (int i = 0; i < 8; i++) {
        buffer[end - 8 + (size_t)i] = (unsigned char)(bits >> (sha1 ? 56 - 8 * i : 8 * i));
    }
    blocks(state, buffer, end / 64);
    /* The digest is the state words in order, big-endian for SHA-1 and little-endian for
       MD5; the value is its first 16 bytes read as one big-endian number. */
    if (!sha1) {
        for (int i = 0; i < 4; i++) {
            state[i] = swap32(state[i]);
        }
    }
    uk_u128 value = {((uint64_t)state[0] << 32) | state[1], ((uint64_t)state[2] << 32) | state[3]};
    return value;
}

/* --- uuid3, uuid5 ---------------------------------------------------------------------- */

/* Whether hashlib has md5 and sha1: looked up on the first name-based call (loading OpenSSL
   is a large part of an import). The hashes themselves are computed here; hashlib only gates
   them: a Python without them (FIPS builds) has neither, and the Python twins decide what
   happens, so both paths behave alike there too. One atomic word, written once under the
   module's critical section (a free-threaded build may make the first calls in several
   threads at once); with the GIL the section is empty and the GIL orders them. */
enum { HASHES_LOOKED_UP = 1, HASHES_PRESENT = 2 };
static atomic_int hashes_state;

static int hashes_present(PyObject *module)
{
    int state = atomic_load_explicit(&hashes_state, memory_order_acquire);
    if (state & HASHES_LOOKED_UP) {
        return (state & HASHES_PRESENT) != 0;
    }
    int result = 0;
    (void)module; /* before 3.13 the section is empty */
    Py_BEGIN_CRITICAL_SECTION(module);
    state = atomic_load_explicit(&hashes_state, memory_order_acquire);
    if (state & HASHES_LOOKED_UP) {
        result = (state & HASHES_PRESENT) != 0;
    }
    else {
        PyObject *hashlib = PyImport_ImportModule("hashlib");
        if (hashlib == NULL) {
            result = -1;
        }
        else {
            int present = PyObject_HasAttrString(hashlib, "md5") &&
                          PyObject_HasAttrString(hashlib, "sha1");
            Py_DECREF(hashlib);
            atomic_store_explicit(&hashes_state, HASHES_LOOKED_UP | (present ? HASHES_PRESENT : 0),
                                  memory_order_release);
            result = present;
        }
    }
    Py_END_CRITICAL_SECTION();
    return result;
}

/* The octets of a str (its UTF-8) or bytes name (RFC 9562 §6.5); 0 for anything else, and
   for a str that UTF-8 cannot encode (the Python twin names the position). */
static int name_octets(PyObject *name, const unsigned char **octets, Py_ssize_t *length)
{
    if (PyUnicode_CheckExact(name)) {
        if (PyUnicode_IS_ASCII(name)) { /* the common case: ASCII is its own UTF-8 */
            *octets = (const unsigned char *)PyUnicode_DATA(name);
            *length = PyUnicode_GET_LENGTH(name);
            return 1;
        }
        const char *utf8 = PyUnicode_AsUTF8AndSize(name, length);
        if (utf8 == NULL) {
            PyErr_Clear();
            return 0;
        }
        *octets = (const unsigned char *)utf8;
        return 1;
    }
    if (PyBytes_CheckExact(name)) {
        *octets = (const unsigned char *)PyBytes_AS_STRING(name);
        *length = PyBytes_GET_SIZE(name);
        return 1;
    }
    return 0;
}

static PyObject *name_based(PyObject *module, enum uk_fallback which, unsigned version,
                            PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    uk_u128 namespace_value;
    const unsigned char *name;
    Py_ssize_t length;
    int present = hashes_present(module);
    if (present < 0) {
        return NULL;
    }
    if (kwnames != NULL || nargs != 2 || !present || !uk_read_exact(args[0], &namespace_value) ||
        !name_octets(args[1], &name, &length)) {
        return uk_delegate(which, args, nargs, kwnames);
    }
    /* RFC 9562 §5.3/§5.5: the hash of the namespace ID in network byte order, then the
       name; its first 16 bytes become the value (version 3: MD5, 5: SHA-1). */
    uk_u128 value = name_digest(version == 5, namespace_value, name, (size_t)length);
    return uk_make_uuid(uk_stamp(value, version));
}

static PyObject *digest_uuid3(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames)
{
    return name_based(module, UK_FB_UUID3, 3, args, nargs, kwnames);
}

static PyObject *digest_uuid5(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames)
{
    return name_based(module, UK_FB_UUID5, 5, args, nargs, kwnames);
}

/* _sha1_hardware(enabled) -> bool: whether SHA-1 now runs through the CPU's SHA-1
   instructions. */
static PyObject *digest_sha1_hardware(PyObject *module, PyObject *enabled)
{
    (void)module;
    int flag = PyObject_IsTrue(enabled);
    if (flag < 0) {
        return NULL;
    }
    atomic_store_explicit(&sha1_hardware_enabled, flag, memory_order_relaxed);
    return PyBool_FromLong(sha1_function() != sha1_blocks);
}

static PyMethodDef digest_methods[] = {
    {"uuid3", (PyCFunction)(void (*)(void))digest_uuid3, METH_FASTCALL | METH_KEYWORDS,
     "uuid3(namespace, name) -> UUID: MD5 name-based UUID.\n\n"
     "References: RFC 9562 §5.3, §6.5."},
    {"uuid5", (PyCFunction)(void (*)(void))digest_uuid5, METH_FASTCALL | METH_KEYWORDS,
     "uuid5(namespace, name) -> UUID: SHA-1 name-based UUID.\n\n"
     "References: RFC 9562 §5.5, §6.5."},
    {"_sha1_hardware", digest_sha1_hardware, METH_O,
     "_sha1_hardware(enabled) -> bool: run SHA-1 (uuid5) through the CPU's SHA-1 instructions "
     "(x86 SHA extensions, 64-bit ARM SHA1) when enabled and the CPU has them, else through "
     "the portable code; whether they are used."},
    {NULL, NULL, 0, NULL},
};

int uk_digest_init(PyObject *module)
{
#if defined(UK_SHA1_X86)
    sha1_hardware = uk_sha1_x86_available() ? uk_sha1_blocks_x86 : NULL;
#elif defined(UK_SHA1_ARM)
    sha1_hardware = uk_sha1_arm_available() ? uk_sha1_blocks_arm : NULL;
#endif
    return PyModule_AddFunctions(module, digest_methods);
}
