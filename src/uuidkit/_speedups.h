/* Shared declarations of the optional compiled accelerator (uuidkit._speedups).
 *
 * The pure-Python modules are the reference: every function here either produces exactly
 * what its Python twin produces, or hands its arguments to that twin (the "fallback",
 * registered by uuidkit._accel), which also produces every error message.
 */
#ifndef UUIDKIT_SPEEDUPS_H
#define UUIDKIT_SPEEDUPS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

/* Free-threaded CPython (PEP 703, 3.13t and later): state an object's calls read and write is
   guarded by the object's critical section. CPython 3.13 and later define the macros (empty
   with a GIL, which already serialises the calls); before 3.13 they are empty here too. */
#ifndef Py_BEGIN_CRITICAL_SECTION
#define Py_BEGIN_CRITICAL_SECTION(op) {
#define Py_END_CRITICAL_SECTION() }
#endif

/* A ThreadSanitizer build (tools/tsan-check.sh) runs on an interpreter that is not
   instrumented, so TSan cannot see the critical section's mutex being taken and would report
   every access it guards. There, each critical section also tells TSan that it acquires the
   mutex on entry and releases it on exit. Only the TSan build; the macros are otherwise
   CPython's. */
#if defined(__SANITIZE_THREAD__) && defined(Py_GIL_DISABLED)
#include <sanitizer/tsan_interface.h>
#undef Py_BEGIN_CRITICAL_SECTION
#undef Py_END_CRITICAL_SECTION
#define Py_BEGIN_CRITICAL_SECTION(op)                                                          \
    {                                                                                          \
        PyCriticalSection _py_cs;                                                              \
        PyCriticalSection_Begin(&_py_cs, _PyObject_CAST(op));                                  \
        __tsan_acquire(_py_cs._cs_mutex)
#define Py_END_CRITICAL_SECTION()                                                              \
    __tsan_release(_py_cs._cs_mutex);                                                          \
    PyCriticalSection_End(&_py_cs);                                                            \
    }
#endif

/* A 128-bit UUID value as two big-endian halves: hi holds bits 127..64. */
typedef struct {
    uint64_t hi;
    uint64_t lo;
} uk_u128;

/* Fallbacks: the pure-Python function each accelerated function delegates to. */
enum uk_fallback {
    UK_FB_UUID8,
    UK_FB_UUID3,
    UK_FB_UUID5,
    UK_FB_PARSE,
    UK_FB_FORMAT_UUID,
    UK_FB_TO_HYPHENATED,
    UK_FB_TO_UPPER,
    UK_FB_TO_URN,
    UK_FB_TO_BRACED,
    UK_FB_TO_HEX,
    UK_FB_TO_BYTES,
    UK_FB_TO_BYTES_LE,
    UK_FB_FIELDS,
    UK_FB_TIMESTAMP_NS,
    UK_FB_TIMESTAMP_DATETIME,
    UK_FB_UIAP_DECODE,
    UK_FB_COUNT
};

extern PyObject *uk_fallbacks[UK_FB_COUNT];

/* Call the pure-Python twin with the arguments of a METH_FASTCALL | METH_KEYWORDS call. */
PyObject *uk_delegate(enum uk_fallback which, PyObject *const *args, Py_ssize_t nargs,
                      PyObject *kwnames);

/* -1 with the interpreter's TypeError for name() when any argument was given, else 0. */
int uk_no_arguments(const char *name, Py_ssize_t nargs, PyObject *kwnames);
/* Import module (by its dotted name) for its side effects: 0, or -1 with an exception set. */
int uk_import_for_effect(const char *module);

/* A new uuid.UUID holding value (the caller guarantees 0 <= value < 2**128). */
PyObject *uk_make_uuid(uk_u128 value);
/* Nonzero when u is exactly uuid.UUID with the slot layout; then *value is its int. */
int uk_read_exact(PyObject *u, uk_u128 *value);
/* Nonzero when object has exactly the bound uuid.UUID type and the slot layout is in use. */
int uk_is_exact_uuid(PyObject *u);
/* Nonzero when u is an instance of the bound class (or a subclass). */
int uk_is_uuid(PyObject *u);

/* 128-bit values <-> Python ints. uk_long_to_u128 returns -1 with an exception set. */
PyObject *uk_long_from_u128(uk_u128 value);
int uk_long_to_u128(PyObject *number, uk_u128 *value);

/* Offset of a writable object slot named name in cls's own dict (a __slots__ member), or -1. */
Py_ssize_t uk_object_slot_offset(PyTypeObject *cls, const char *name);

/* Random bytes from the fork-safe CSPRNG buffer; -1 with an exception set on failure. */
int uk_random(unsigned char *out, size_t size);
/* A buffer of whole 16-byte records (released again on error); -1 with an exception set. */
int uk_get_records(PyObject *object, Py_buffer *view);

/* Bulk loops over more than this many values release the GIL while they read and write only
   buffers they hold (a Py_buffer export pins the input; the output is not yet published), so
   other threads run during a million-value call. */
#define UK_GIL_FREE_ABOVE 1000

static inline PyThreadState *uk_release_gil_for(Py_ssize_t count)
{
    return count > UK_GIL_FREE_ABOVE ? PyEval_SaveThread() : NULL;
}

static inline void uk_reacquire_gil(PyThreadState *state)
{
    if (state != NULL) {
        PyEval_RestoreThread(state);
    }
}

static inline uint64_t uk_load_be64(const unsigned char *p)
{
    return ((uint64_t)p[0] << 56) | ((uint64_t)p[1] << 48) | ((uint64_t)p[2] << 40) |
           ((uint64_t)p[3] << 32) | ((uint64_t)p[4] << 24) | ((uint64_t)p[5] << 16) |
           ((uint64_t)p[6] << 8) | (uint64_t)p[7];
}

static inline void uk_store_be64(unsigned char *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--) {
        p[i] = (unsigned char)(v & 0xFF);
        v >>= 8;
    }
}

static inline void uk_store_u128(unsigned char *p, uk_u128 value)
{
    uk_store_be64(p, value.hi);
    uk_store_be64(p + 8, value.lo);
}

static inline uk_u128 uk_load_u128(const unsigned char *p)
{
    uk_u128 value = {uk_load_be64(p), uk_load_be64(p + 8)};
    return value;
}

/* RFC 9562 §4.1/§4.2: version in bits 76..79, variant 0b10 in bits 62..63. */
static inline uk_u128 uk_stamp(uk_u128 value, unsigned version)
{
    value.hi = (value.hi & ~(uint64_t)0xF000) | ((uint64_t)version << 12);
    value.lo = (value.lo & ~((uint64_t)3 << 62)) | ((uint64_t)2 << 62);
    return value;
}

/* Nanoseconds per millisecond: the unit of unix_ts_ms (RFC 9562 §5.7); uuidkit.timestamps
   .NS_PER_MS in Python. */
#define UK_NS_PER_MS 1000000LL

/* Text tables (_speedups_text.c), filled by uk_text_tables_init at module initialisation. */
#define UK_NOT_HEX 0x100u
extern uint16_t uk_hex_digit[256];
extern unsigned char uk_lower_pair[256][2];
extern unsigned char uk_wide_pair[256][8];
extern const unsigned char uk_byte_at[16];
extern const unsigned char uk_digit_at[32];
void uk_text_tables_init(void);

/* CompiledFunction (_speedups_twin.c): twin(function) and its type's PyType_Ready. */
PyObject *uk_twin(PyObject *module, PyObject *function);
int uk_twin_ready(void);

/* Method tables of the other translation units. */
extern PyMethodDef uk_text_methods[];
extern PyMethodDef uk_bulk_methods[];
extern PyMethodDef uk_uiap_methods[];

/* Adds uuid3, uuid5 (MD5 and SHA-1 computed in place) and _sha1_hardware, choosing the SHA-1
   block function for this CPU (_speedups_digest.c). References: RFC 9562 §5.3, §5.5. */
int uk_digest_init(PyObject *module);

/* The time of a v1/v6/v7 value in Unix ns (1), or 0 for the Python twin (_speedups_text.c);
   timestamp_datetime's twin (_speedups_datetime.c). References: RFC 9562 §5.1, §5.6, §5.7. */
int uk_time_ns(PyObject *u, long long *ns);
PyObject *uk_timestamp_datetime(PyObject *module, PyObject *u);

/* Adds the V7Core type (uuidkit.generators.v7's compiled hot path) to the module. */
int uk_v7_init(PyObject *module);

/* Adds the NodeGate type (the node-bound generators' compiled base) (_speedups_nodebound.c). */
int uk_nodebound_init(PyObject *module);

/* Record classes of uuidkit.fields, bound by uk_bind_records. */
PyObject *uk_bind_records(PyObject *module, PyObject *args);

#endif
