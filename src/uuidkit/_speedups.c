/* uuidkit._speedups: the optional compiled accelerator.
 *
 * It mirrors the pure-Python modules (the reference, and the fallback when this extension
 * is not built or UUIDKIT_PURE=1 is set): same names, same results, same errors. Anything
 * outside a function's fast path is handed to its Python twin unchanged.
 *
 * Objects: every value is an exact uuid.UUID. At bind time the class is checked for the
 * layout of the standard library's pure-Python class (__slots__ with 'int' and 'is_safe'
 * as writable object slots, object.__new__ as constructor); then objects are allocated
 * and their two slots filled directly, as CPython 3.14's own uuid._from_int does through
 * object.__setattr__. Any other class (a future C uuid.UUID, a stand-in in the tests) is
 * called as cls(int=value) instead.
 *
 * The objects are untracked by the cyclic garbage collector: a UUID holds an int and an
 * enum member and cannot be part of a reference cycle.
 *
 * Randomness: a 4 KiB buffer from getrandom(2) (os.urandom where that is missing), handed
 * out 16 bytes at a time with the GIL held, and discarded in a forked child by a
 * pthread_atfork handler so a child never repeats its parent's values (RFC 9562 §6.9).
 *
 * uuid3 and uuid5 (and the MD5 and SHA-1 they compute) are in _speedups_digest.c.
 *
 * References: RFC 9562 §4, §5.4, §5.8, §6.9.
 */
#include "_speedups.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <structmember.h>

#if defined(__linux__)
#include <sys/random.h>
#define UK_HAVE_GETRANDOM 1
#endif

PyObject *uk_fallbacks[UK_FB_COUNT];

static const char *const fallback_names[UK_FB_COUNT] = {
    "uuid8",       "uuid3",         "uuid5",  "parse",    "format_uuid",
    "to_hyphenated", "to_upper",    "to_urn", "to_braced", "to_hex",
    "to_bytes",    "to_bytes_le",   "fields", "timestamp_ns", "timestamp_datetime",
    "uiap_decode",
};

/* The bound class and how its objects are made. */
static PyTypeObject *uuid_type;
static PyObject *safe_unknown;
static Py_ssize_t int_offset = -1; /* -1: constructor path */
static Py_ssize_t safe_offset = -1;
static int gc_new_allocates; /* objects made by PyObject_GC_New, never tracked */
static PyObject *kwnames_int;      /* ("int",) */

/* --- 128-bit integers ------------------------------------------------------------------ */

/* On CPython 3.11 to 3.13 with 30-bit digits (every 64-bit build) an int above 2**64 is
 * written and read through its digits: a 128-bit value is five 30-bit digits, least
 * significant first. That is a third of the cost of the byte-array functions, which loop
 * over bytes. Reading is also done this way on 3.14, whose layout is 3.12's. Anything else
 * goes through the public byte functions. The layout is CPython's (Include/cpython/
 * longintrepr.h): 3.11 keeps the digit count in ob_size; 3.12 on keep it in lv_tag above
 * two sign bits and one reserved bit. */
/* Only on the versions the suite has run on (3.11 to 3.13, and 3.13's free-threaded build,
   whose PyLongObject is the same struct after a larger object header): any other version
   and a build with UK_PUBLIC_API_ONLY (what setup.py makes of UUIDKIT_PUBLIC_API=1, to test
   the path an unknown CPython takes) use the public functions. The byte functions cost a
   free-threaded build a sixth of a uuid4() call. Objects are allocated through the layout
   only with a GIL (UK_OBJECT_LAYOUT): a free-threaded build keeps the class's tp_alloc. */
#if PyLong_SHIFT == 30 && PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030E0000 && \
    !defined(UK_PUBLIC_API_ONLY)
#define UK_WRITE_DIGITS 1
#define UK_READ_DIGITS 1
#define UK_INTERNALS 1
#ifndef Py_GIL_DISABLED
#define UK_OBJECT_LAYOUT 1
#endif
#endif

#define UK_DIGIT_MASK ((uint64_t)0x3FFFFFFF)

/* Whether the digit layout above is in use: the compile-time gate says it may be, and the
   self-test at module initialisation (check_digit_layout) found it agrees with the public
   byte functions on sample values. Cleared otherwise, and by _digit_layout(False). */
static int digit_layout_ok;
static int digit_layout_enabled = 1;
#define UK_DIGITS_IN_USE (digit_layout_ok && digit_layout_enabled)

/* value >= 2**64 through the public byte functions. */
static PyObject *long_from_bytes(uk_u128 value)
{
    unsigned char buffer[16];
    uk_store_u128(buffer, value);
#if PY_VERSION_HEX >= 0x030D0000
    return PyLong_FromUnsignedNativeBytes(buffer, 16,
                                          Py_ASNATIVEBYTES_BIG_ENDIAN |
                                              Py_ASNATIVEBYTES_UNSIGNED_BUFFER);
#else
    return _PyLong_FromByteArray(buffer, 16, 0, 0);
#endif
}

#ifdef UK_WRITE_DIGITS
/* value >= 2**64 written digit by digit: 3 to 5 digits, no leading zero digit. */
static PyObject *long_from_digits(uk_u128 value)
{
    digit digits[5] = {
        (digit)(value.lo & UK_DIGIT_MASK),
        (digit)((value.lo >> 30) & UK_DIGIT_MASK),
        (digit)(((value.lo >> 60) | (value.hi << 4)) & UK_DIGIT_MASK),
        (digit)((value.hi >> 26) & UK_DIGIT_MASK),
        (digit)(value.hi >> 56),
    };
    Py_ssize_t count = digits[4] ? 5 : digits[3] ? 4 : 3;
    PyLongObject *number = _PyLong_New(count);
    if (number == NULL) {
        return NULL;
    }
#if PY_VERSION_HEX < 0x030C0000
    memcpy(number->ob_digit, digits, (size_t)count * sizeof(digit));
#else
    memcpy(number->long_value.ob_digit, digits, (size_t)count * sizeof(digit));
#endif
    return (PyObject *)number;
}
#endif

PyObject *uk_long_from_u128(uk_u128 value)
{
    if (value.hi == 0) {
        return PyLong_FromUnsignedLongLong(value.lo);
    }
#ifdef UK_WRITE_DIGITS
    if (UK_DIGITS_IN_USE) {
        return long_from_digits(value);
    }
#endif
    return long_from_bytes(value);
}

/* The value of an int in [0, 2**128) from its digits; 0 for any other int. */
static int read_digits(PyObject *number, uk_u128 *value)
{
#ifdef UK_READ_DIGITS
    if (!UK_DIGITS_IN_USE) {
        return 0;
    }
    const PyLongObject *n = (const PyLongObject *)number;
#if PY_VERSION_HEX < 0x030C0000
    Py_ssize_t size = Py_SIZE(number);
    const digit *digits = n->ob_digit;
#else
    uintptr_t tag = n->long_value.lv_tag;
    Py_ssize_t size = (tag & 3) == 2 ? -1 : (Py_ssize_t)(tag >> 3); /* sign 2: negative */
    const digit *digits = n->long_value.ob_digit;
#endif
    if (size < 0 || size > 5 || (size == 5 && digits[4] >> 8)) {
        return 0;
    }
    uint64_t high = 0, low = 0;
    for (Py_ssize_t i = size - 1; i >= 0; i--) {
        high = (high << 30) | (low >> 34);
        low = (low << 30) | digits[i];
    }
    value->hi = high;
    value->lo = low;
    return 1;
#else
    (void)number;
    (void)value;
    return 0;
#endif
}

int uk_long_to_u128(PyObject *number, uk_u128 *value)
{
    unsigned char buffer[16];
    if (!PyLong_Check(number)) {
        PyErr_SetString(PyExc_TypeError, "expected an int");
        return -1;
    }
    if (read_digits(number, value)) {
        return 0;
    }
#if PY_VERSION_HEX >= 0x030D0000
    Py_ssize_t needed = PyLong_AsNativeBytes(number, buffer, 16,
                                             Py_ASNATIVEBYTES_BIG_ENDIAN |
                                                 Py_ASNATIVEBYTES_UNSIGNED_BUFFER |
                                                 Py_ASNATIVEBYTES_REJECT_NEGATIVE);
    if (needed < 0) {
        return -1;
    }
    if (needed > 16) {
        PyErr_SetString(PyExc_OverflowError, "int does not fit 128 bits");
        return -1;
    }
#else
    if (_PyLong_AsByteArray((PyLongObject *)number, buffer, 16, 0, 0) < 0) {
        return -1;
    }
#endif
    *value = uk_load_u128(buffer);
    return 0;
}

/* The feature test of the digit layout: every sample written through the digits equals the
   same value made by the public byte functions, and reads back (a negative int does not).
   -1 with an exception set on an allocation failure, else whether the layout agrees. */
static int check_digit_layout(void)
{
#if defined(UK_WRITE_DIGITS) || defined(UK_READ_DIGITS)
    static const uk_u128 samples[] = {
        {1, 0}, {1, 0xFFFFFFFFFFFFFFFFULL}, {0xF, 0x123456789ABCDEF0ULL},
        {0x0123456789ABCDEFULL, 0xFEDCBA9876543210ULL}, {0xFFFFFFFFFFFFFFFFULL, 0},
        {0xFFFFFFFFFFFFFFFFULL, 0xFFFFFFFFFFFFFFFFULL}, {0x8000000000000000ULL, 1},
    };
    digit_layout_ok = 1; /* for the duration of the test, so the digit paths run */
    int agrees = 1;
    for (size_t i = 0; agrees && i < sizeof samples / sizeof samples[0]; i++) {
        PyObject *reference = long_from_bytes(samples[i]);
        PyObject *written = uk_long_from_u128(samples[i]);
        if (reference == NULL || written == NULL) {
            Py_XDECREF(reference);
            Py_XDECREF(written);
            digit_layout_ok = 0;
            return -1;
        }
        int equal = PyObject_RichCompareBool(reference, written, Py_EQ);
        uk_u128 read = {0, 0};
        int readable = read_digits(reference, &read);
        agrees = equal == 1 && (!readable || (read.hi == samples[i].hi &&
                                               read.lo == samples[i].lo));
#ifdef UK_READ_DIGITS
        agrees = agrees && readable;
#endif
        Py_DECREF(reference);
        Py_DECREF(written);
    }
    PyObject *negative = PyLong_FromLong(-5);
    if (negative == NULL) {
        digit_layout_ok = 0;
        return -1;
    }
    uk_u128 ignored;
    agrees = agrees && !read_digits(negative, &ignored);
    Py_DECREF(negative);
    digit_layout_ok = agrees;
    return agrees;
#else
    return 0;
#endif
}

/* _digit_layout(enabled) -> bool: use the digit layout if enabled and its self-test passed
   (tests force the public byte functions with False); whether it is in use now. */
static PyObject *speedups_digit_layout(PyObject *module, PyObject *enabled)
{
    (void)module;
    int flag = PyObject_IsTrue(enabled);
    if (flag < 0) {
        return NULL;
    }
    digit_layout_enabled = flag;
    return PyBool_FromLong(UK_DIGITS_IN_USE);
}

/* --- objects --------------------------------------------------------------------------- */

static PyObject *make_from_long(PyObject *number)
{
    if (number == NULL) {
        return NULL;
    }
    if (uuid_type == NULL) {
        Py_DECREF(number);
        PyErr_SetString(PyExc_RuntimeError, "uuidkit._speedups: bind() was not called");
        return NULL;
    }
    if (int_offset < 0) {
        PyObject *args[1] = {number};
        PyObject *result = PyObject_Vectorcall((PyObject *)uuid_type, args, 0, kwnames_int);
        Py_DECREF(number);
        return result;
    }
    PyObject *object;
    if (gc_new_allocates) {
        /* What PyType_GenericAlloc does for this class, without tracking the object (it
           would be untracked again at once): the body is zeroed (the __weakref__ slot
           among others), the class referenced, the allocation counted by the collector. */
        object = _PyObject_GC_New(uuid_type);
        if (object != NULL) {
            memset((char *)object + sizeof(PyObject), 0,
                   (size_t)uuid_type->tp_basicsize - sizeof(PyObject));
        }
    }
    else {
        object = uuid_type->tp_alloc(uuid_type, 0);
    }
    if (object == NULL) {
        Py_DECREF(number);
        return NULL;
    }
    *(PyObject **)((char *)object + int_offset) = number;
    *(PyObject **)((char *)object + safe_offset) = Py_NewRef(safe_unknown);
    if (!gc_new_allocates && PyObject_IS_GC(object)) {
        PyObject_GC_UnTrack(object);
    }
    return object;
}

PyObject *uk_make_uuid(uk_u128 value)
{
    return make_from_long(uk_long_from_u128(value));
}

int uk_is_exact_uuid(PyObject *u)
{
    return int_offset >= 0 && Py_TYPE(u) == uuid_type;
}

int uk_is_uuid(PyObject *u)
{
    return uuid_type != NULL && PyObject_TypeCheck(u, uuid_type);
}

int uk_read_exact(PyObject *u, uk_u128 *value)
{
    if (!uk_is_exact_uuid(u)) {
        return 0;
    }
    PyObject *number = *(PyObject **)((char *)u + int_offset);
    if (number == NULL || !PyLong_CheckExact(number)) {
        return 0;
    }
    if (uk_long_to_u128(number, value) < 0) {
        PyErr_Clear(); /* out of range: the Python twin reports it */
        return 0;
    }
    return 1;
}

PyObject *uk_delegate(enum uk_fallback which, PyObject *const *args, Py_ssize_t nargs,
                      PyObject *kwnames)
{
    PyObject *fallback = uk_fallbacks[which];
    if (fallback == NULL) {
        PyErr_Format(PyExc_RuntimeError, "uuidkit._speedups: no fallback for %s",
                     fallback_names[which]);
        return NULL;
    }
    return PyObject_Vectorcall(fallback, args, (size_t)nargs, kwnames);
}

Py_ssize_t uk_object_slot_offset(PyTypeObject *cls, const char *name)
{
    if (cls->tp_dict == NULL) {
        return -1;
    }
    PyObject *descriptor = PyDict_GetItemString(cls->tp_dict, name); /* borrowed */
    if (descriptor == NULL || !Py_IS_TYPE(descriptor, &PyMemberDescr_Type)) {
        return -1;
    }
    PyMemberDef *member = ((PyMemberDescrObject *)descriptor)->d_member;
    if (member->type != T_OBJECT_EX || (member->flags & READONLY)) {
        return -1;
    }
    return member->offset;
}

/* Whether cls.__slots__ names both 'int' and 'is_safe'. -1 on error. */
static int slots_name_int_and_is_safe(PyTypeObject *cls)
{
    if (cls->tp_dict == NULL) {
        return 0;
    }
    PyObject *slots = PyDict_GetItemString(cls->tp_dict, "__slots__"); /* borrowed */
    if (slots == NULL) {
        return 0;
    }
    PyObject *int_name = PyUnicode_FromString("int");
    PyObject *safe_name = PyUnicode_FromString("is_safe");
    int found = -1;
    if (int_name != NULL && safe_name != NULL) {
        int has_int = PySequence_Contains(slots, int_name);
        int has_safe = has_int < 0 ? -1 : PySequence_Contains(slots, safe_name);
        found = (has_int < 0 || has_safe < 0) ? -1 : (has_int && has_safe);
    }
    Py_XDECREF(int_name);
    Py_XDECREF(safe_name);
    return found;
}

/* bind(cls, unknown) -> bool: make objects of cls; True when its slots are filled directly. */
static PyObject *speedups_bind(PyObject *module, PyObject *args)
{
    PyObject *cls, *unknown;
    (void)module;
    if (!PyArg_ParseTuple(args, "O!O:bind", &PyType_Type, &cls, &unknown)) {
        return NULL;
    }
    PyTypeObject *type = (PyTypeObject *)cls;
    int slots = slots_name_int_and_is_safe(type);
    if (slots < 0) {
        return NULL;
    }
    Py_ssize_t new_int = -1, new_safe = -1;
    if (slots && type->tp_new == PyBaseObject_Type.tp_new && type->tp_alloc != NULL) {
        new_int = uk_object_slot_offset(type, "int");
        new_safe = uk_object_slot_offset(type, "is_safe");
    }
    if (new_int < 0 || new_safe < 0) {
        new_int = new_safe = -1;
    }
    Py_INCREF(cls);
    Py_INCREF(unknown);
    Py_XSETREF(uuid_type, type);
    Py_XSETREF(safe_unknown, unknown);
    int_offset = new_int;
    safe_offset = new_safe;
    /* PyObject_GC_New allocates as PyType_GenericAlloc does on CPython 3.11 to 3.13 (the
       versions where this was checked) for a collected class of fixed size with no managed
       dict; any other class keeps its own tp_alloc. */
    gc_new_allocates = 0;
#ifdef UK_OBJECT_LAYOUT
    gc_new_allocates = int_offset >= 0 && type->tp_alloc == PyType_GenericAlloc &&
                       PyType_IS_GC(type) && type->tp_itemsize == 0 &&
                       !PyType_HasFeature(type, Py_TPFLAGS_MANAGED_DICT) &&
                       type->tp_basicsize >= (Py_ssize_t)sizeof(PyObject);
#endif
    return PyBool_FromLong(int_offset >= 0);
}

/* set_fallback(name, function): the Python twin of an accelerated function. */
static PyObject *speedups_set_fallback(PyObject *module, PyObject *args)
{
    const char *name;
    PyObject *function;
    (void)module;
    if (!PyArg_ParseTuple(args, "sO:set_fallback", &name, &function)) {
        return NULL;
    }
    for (int i = 0; i < UK_FB_COUNT; i++) {
        if (strcmp(name, fallback_names[i]) == 0) {
            Py_INCREF(function);
            Py_XSETREF(uk_fallbacks[i], function);
            Py_RETURN_TRUE;
        }
    }
    Py_RETURN_FALSE; /* a function without a Python twin (it never delegates) */
}

/* --- randomness ------------------------------------------------------------------------ */

#define POOL_BYTES 4096
#ifdef Py_GIL_DISABLED
/* Free-threaded: every thread has a buffer of its own, so two threads running at once never
   read the same bytes, and the hot path takes no lock. */
static _Thread_local unsigned char pool[POOL_BYTES];
static _Thread_local size_t pool_position = POOL_BYTES;
#else
/* With a GIL, one buffer: the GIL is held from reading the position to advancing it. */
static unsigned char pool[POOL_BYTES];
static size_t pool_position = POOL_BYTES;
#endif

static void discard_pool_in_child(void)
{
    /* A forked child must never hand out what its parent had buffered (RFC 9562 §6.9). The
       child runs only the thread that forked, so its buffer is the only one left. */
    pool_position = POOL_BYTES;
}

static int fill_from_os_urandom(unsigned char *out, size_t size)
{
    PyObject *os = PyImport_ImportModule("os");
    if (os == NULL) {
        return -1;
    }
    PyObject *data = PyObject_CallMethod(os, "urandom", "n", (Py_ssize_t)size);
    Py_DECREF(os);
    if (data == NULL) {
        return -1;
    }
    if (!PyBytes_Check(data) || (size_t)PyBytes_GET_SIZE(data) != size) {
        Py_DECREF(data);
        PyErr_SetString(PyExc_RuntimeError, "os.urandom returned a wrong size");
        return -1;
    }
    memcpy(out, PyBytes_AS_STRING(data), size);
    Py_DECREF(data);
    return 0;
}

static int fill_from_system(unsigned char *out, size_t size)
{
#ifdef UK_HAVE_GETRANDOM
    while (size > 0) {
        ssize_t got = getrandom(out, size, 0);
        if (got < 0) {
            if (errno == EINTR) {
                if (PyErr_CheckSignals() < 0) {
                    return -1;
                }
                continue;
            }
            if (errno == ENOSYS || errno == EPERM) {
                return fill_from_os_urandom(out, size);
            }
            PyErr_SetFromErrno(PyExc_OSError);
            return -1;
        }
        out += got;
        size -= (size_t)got;
    }
    return 0;
#else
    return fill_from_os_urandom(out, size);
#endif
}

int uk_random(unsigned char *out, size_t size)
{
    /* Large requests go straight to the system; small ones come from the buffer: this
       thread's own on a free-threaded build, else the one the GIL guards. */
    if (size > POOL_BYTES / 4) {
        return fill_from_system(out, size);
    }
    if (POOL_BYTES - pool_position < size) {
        if (fill_from_system(pool, POOL_BYTES) < 0) {
            return -1;
        }
        pool_position = 0;
    }
    memcpy(out, pool + pool_position, size);
    pool_position += size;
    return 0;
}

static PyObject *speedups_random_bytes(PyObject *module, PyObject *arg)
{
    (void)module;
    Py_ssize_t size = PyLong_AsSsize_t(arg);
    if (size < 0) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError, "negative size");
        }
        return NULL;
    }
    PyObject *result = PyBytes_FromStringAndSize(NULL, size);
    if (result == NULL) {
        return NULL;
    }
    if (uk_random((unsigned char *)PyBytes_AS_STRING(result), (size_t)size) < 0) {
        Py_DECREF(result);
        return NULL;
    }
    return result;
}

/* --- uuid4, uuid8 ---------------------------------------------------------------------- */

int uk_import_for_effect(const char *module)
{
    PyObject *loaded = PyImport_ImportModule(module);
    if (loaded == NULL) {
        return -1;
    }
    Py_DECREF(loaded);
    return 0;
}

int uk_no_arguments(const char *name, Py_ssize_t nargs, PyObject *kwnames)
{
    /* The wording of the interpreter's own error for a Python function without parameters
       (keywords are reported before positionals), which the pure twins raise. */
    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0) {
        PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", name,
                     PyTuple_GET_ITEM(kwnames, 0));
        return -1;
    }
    if (nargs > 0) {
        PyErr_Format(PyExc_TypeError, "%s() takes 0 positional arguments but %zd %s given",
                     name, nargs, nargs == 1 ? "was" : "were");
        return -1;
    }
    return 0;
}

static PyObject *speedups_uuid4(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames)
{
    unsigned char bytes[16];
    (void)module;
    (void)args;
    if (uk_no_arguments("uuid4", nargs, kwnames) < 0) {
        return NULL;
    }
    if (uk_random(bytes, 16) < 0) {
        return NULL;
    }
    /* RFC 9562 §5.4: 122 random bits, version 4, variant 0b10. */
    return uk_make_uuid(uk_stamp(uk_load_u128(bytes), 4));
}

/* A given uuid8 part as an unsigned value below 2**bits; 0 when absent; -1 to delegate. */
static int uuid8_part(PyObject *part, unsigned bits, uint64_t *out, int *given)
{
    *given = 0;
    if (part == NULL || part == Py_None) {
        return 0;
    }
    if (!PyLong_CheckExact(part)) {
        return -1;
    }
    int overflow = 0;
    long long value = PyLong_AsLongLongAndOverflow(part, &overflow);
    if (value == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return -1;
    }
    if (overflow || value < 0 || (unsigned long long)value >> bits) {
        return -1;
    }
    *out = (uint64_t)value;
    *given = 1;
    return 0;
}

static PyObject *speedups_uuid8(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames)
{
    (void)module;
    if (kwnames != NULL || nargs > 3) {
        return uk_delegate(UK_FB_UUID8, args, nargs, kwnames);
    }
    static const unsigned widths[3] = {48, 12, 62};
    uint64_t parts[3] = {0, 0, 0};
    int given[3] = {0, 0, 0};
    for (Py_ssize_t i = 0; i < nargs; i++) {
        if (uuid8_part(args[i], widths[i], &parts[i], &given[i]) < 0) {
            return uk_delegate(UK_FB_UUID8, args, nargs, kwnames);
        }
    }
    unsigned char bytes[16];
    if (uk_random(bytes, 16) < 0) {
        return NULL;
    }
    uk_u128 value = uk_load_u128(bytes);
    /* RFC 9562 §5.8: custom_a (48) | ver | custom_b (12) | var | custom_c (62). */
    if (given[0]) {
        value.hi = (value.hi & 0xFFFF) | (parts[0] << 16);
    }
    if (given[1]) {
        value.hi = (value.hi & ~(uint64_t)0xFFF) | parts[1];
    }
    if (given[2]) {
        value.lo = (value.lo & ((uint64_t)3 << 62)) | parts[2];
    }
    return uk_make_uuid(uk_stamp(value, 8));
}

/* --- module ---------------------------------------------------------------------------- */

/* from_int_unchecked(value) -> UUID: value is an int in [0, 2**128), which the caller has
   checked. The generators' Python paths make their values here, so that every value of a
   compiled build is the same untracked object, whichever path made it. */
static PyObject *speedups_from_int_unchecked(PyObject *module, PyObject *value)
{
    uk_u128 bits;
    (void)module;
    if (uk_long_to_u128(value, &bits) < 0) {
        return NULL;
    }
    return uk_make_uuid(bits);
}

static PyMethodDef core_methods[] = {
    {"from_int_unchecked", speedups_from_int_unchecked, METH_O,
     "from_int_unchecked(value) -> UUID: an exact, untracked uuid.UUID of a 128-bit int."},
    {"bind", speedups_bind, METH_VARARGS,
     "bind(cls, unknown) -> bool: make values of cls; True when its slots are filled "
     "directly, False when cls(int=value) is called instead."},
    {"set_fallback", speedups_set_fallback, METH_VARARGS,
     "set_fallback(name, function) -> bool: the pure-Python twin an accelerated function "
     "delegates to outside its fast path; False when name never delegates."},
    {"bind_records", uk_bind_records, METH_VARARGS,
     "bind_records(v1, v3, v4, v5, v6, v7, v8): the record classes fields() returns."},
    {"twin", uk_twin, METH_O,
     "twin(function) -> CompiledFunction: function, able to carry its Python twin's "
     "metadata."},
    {"_digit_layout", speedups_digit_layout, METH_O,
     "_digit_layout(enabled) -> bool: write and read 128-bit ints through CPython's digits "
     "when enabled and the layout passed its self-test at import; whether they are used."},
    {"random_bytes", speedups_random_bytes, METH_O,
     "random_bytes(n) -> bytes: n bytes from the fork-safe CSPRNG buffer."},
    {"uuid4", (PyCFunction)(void (*)(void))speedups_uuid4, METH_FASTCALL | METH_KEYWORDS,
     "uuid4($module, /)\n--\n\n"
     "A random UUID: 122 bits from the CSPRNG, version 4, RFC 9562 variant.\n\n"
     "References: RFC 9562 §5.4, §6.9."},
    {"uuid8", (PyCFunction)(void (*)(void))speedups_uuid8, METH_FASTCALL | METH_KEYWORDS,
     "uuid8($module, /, a=None, b=None, c=None)\n--\n\n"
     "A UUIDv8 with custom_a = ``a`` (48 bits), custom_b = ``b`` (12), custom_c = ``c`` (62).\n\n"
     "Each part left as ``None`` is filled from the CSPRNG. As the standard library's, a "
     "part keeps its low bits (a negative one in two's complement); a part that is not an "
     "int raises :class:`~uuidkit.InvalidField`. :func:`~uuidkit.build_v8` refuses "
     "out-of-range parts.\n\n"
     "References: RFC 9562 §5.8."},
    {NULL, NULL, 0, NULL},
};

/* uuidkit._speedups.GregorianCore (_speedups_gregorian.c). */
int uk_gregorian_add(PyObject *module);

static int add_methods(PyObject *module, PyMethodDef *methods)
{
    return PyModule_AddFunctions(module, methods);
}

/* The module's exec slot (PEP 489). The accelerator keeps process-wide C state (the fallbacks,
   the bound UUID class, the published default generators, the entropy buffer), so it runs in
   one interpreter per process, and declares that it needs no GIL (PEP 703): every piece of
   state is set once here, or is per thread, or sits behind its object's critical section. */
static int speedups_exec(PyObject *module)
{
    static int atfork_registered;
    if (!atfork_registered) {
        if (pthread_atfork(NULL, NULL, discard_pool_in_child) != 0) {
            PyErr_SetString(PyExc_OSError, "pthread_atfork failed");
            return -1;
        }
        atfork_registered = 1;
    }
    if (kwnames_int == NULL) {
        kwnames_int = Py_BuildValue("(s)", "int");
        if (kwnames_int == NULL) {
            return -1;
        }
    }
    if (uk_twin_ready() < 0) {
        return -1;
    }
    uk_text_tables_init();
    if (check_digit_layout() < 0) {
        return -1;
    }
    if (add_methods(module, core_methods) < 0 || add_methods(module, uk_text_methods) < 0 ||
        add_methods(module, uk_bulk_methods) < 0 ||
        add_methods(module, uk_uiap_methods) < 0 || uk_v7_init(module) < 0 ||
        uk_nodebound_init(module) < 0 ||
        uk_gregorian_add(module) < 0 || uk_digest_init(module) < 0) {
        return -1;
    }
#ifdef UK_INTERNALS
    int internals = 1;
#else
    int internals = 0;
#endif
    /* Whether ints (and, with a GIL, objects) are made through CPython's internal layouts
       (checked versions only) or only through public functions; the tests read it. */
    return PyModule_AddIntConstant(module, "USES_INTERNALS", internals);
}

static PyModuleDef_Slot speedups_slots[] = {
    {Py_mod_exec, (void *)speedups_exec},
#if PY_VERSION_HEX >= 0x030C0000
    {Py_mod_multiple_interpreters, Py_MOD_MULTIPLE_INTERPRETERS_NOT_SUPPORTED},
#endif
#if PY_VERSION_HEX >= 0x030D0000
    {Py_mod_gil, Py_MOD_GIL_NOT_USED},
#endif
    {0, NULL},
};

static struct PyModuleDef speedups_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "uuidkit._speedups",
    .m_doc = "The optional compiled accelerator of uuidkit; see uuidkit._accel.",
    .m_size = 0,
    .m_slots = speedups_slots,
};

PyMODINIT_FUNC PyInit__speedups(void)
{
    return PyModuleDef_Init(&speedups_module);
}
