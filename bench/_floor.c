/* bench/_floor.c: the least a compiled uuid7() can cost, as a floor for uuidkit's own.
 *
 * Built by bench/floor.py for the running interpreter (never installed, never imported by
 * uuidkit). floor.uuid7() reads CLOCK_REALTIME, takes 10 random bytes from a 4 KiB buffer
 * filled by getrandom(2) (the buffer uuidkit's accelerator keeps), lays out a version 7 value
 * (48-bit Unix milliseconds, 74 random bits; RFC 9562 §5.7) and makes a uuid.UUID as uuidkit
 * does: the object allocated without tracking by the garbage collector and its 'int' and
 * 'is_safe' slots filled directly, the int written digit by digit on CPython 3.11 to 3.13
 * and through the public byte function elsewhere. It keeps no monotonic state, takes no lock
 * and never reseeds a counter: what uuidkit does beyond this is the cost of RFC 9562 §6.2's
 * ordering within a millisecond.
 *
 * bind(cls, unknown) names the class and the value of 'is_safe', as uuidkit's bind() does.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

/* The same gates as uuidkit's UK_WRITE_DIGITS and UK_OBJECT_LAYOUT (src/uuidkit/_speedups.c). */
#if PyLong_SHIFT == 30 && PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030E0000
#define FLOOR_DIGITS 1
#ifndef Py_GIL_DISABLED
#define FLOOR_GC_NEW 1
#endif
#endif

static PyTypeObject *floor_type;
static PyObject *floor_unknown;
static Py_ssize_t floor_int_offset = -1;
static Py_ssize_t floor_safe_offset = -1;

static unsigned char pool[4096];
static size_t pool_used = sizeof pool;

static int take_random(unsigned char *out, size_t size)
{
    if (pool_used + size > sizeof pool) {
        size_t filled = 0;
        while (filled < sizeof pool) {
            ssize_t got = getrandom(pool + filled, sizeof pool - filled, 0);
            if (got < 0) {
                PyErr_SetFromErrno(PyExc_OSError);
                return -1;
            }
            filled += (size_t)got;
        }
        pool_used = 0;
    }
    memcpy(out, pool + pool_used, size);
    pool_used += size;
    return 0;
}

static PyObject *long_from_halves(uint64_t hi, uint64_t lo)
{
#ifdef FLOOR_DIGITS
    const uint64_t mask = 0x3FFFFFFF;
    digit digits[5] = {
        (digit)(lo & mask),
        (digit)((lo >> 30) & mask),
        (digit)(((lo >> 60) | (hi << 4)) & mask),
        (digit)((hi >> 26) & mask),
        (digit)(hi >> 56),
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
#else
    unsigned char buffer[16];
    for (int i = 0; i < 8; i++) {
        buffer[i] = (unsigned char)(hi >> (56 - 8 * i));
        buffer[8 + i] = (unsigned char)(lo >> (56 - 8 * i));
    }
#if PY_VERSION_HEX >= 0x030D0000
    return PyLong_FromUnsignedNativeBytes(
        buffer, 16, Py_ASNATIVEBYTES_BIG_ENDIAN | Py_ASNATIVEBYTES_UNSIGNED_BUFFER);
#else
    return _PyLong_FromByteArray(buffer, 16, 0, 0);
#endif
#endif
}

static Py_ssize_t slot_offset(PyTypeObject *cls, const char *name)
{
    PyObject *descriptor = PyDict_GetItemString(cls->tp_dict, name); /* borrowed */
    if (descriptor == NULL || !Py_IS_TYPE(descriptor, &PyMemberDescr_Type)) {
        return -1;
    }
    return ((PyMemberDescrObject *)descriptor)->d_member->offset;
}

static PyObject *floor_bind(PyObject *module, PyObject *args)
{
    PyObject *cls, *unknown;
    (void)module;
    if (!PyArg_ParseTuple(args, "O!O:bind", &PyType_Type, &cls, &unknown)) {
        return NULL;
    }
    PyTypeObject *type = (PyTypeObject *)cls;
    Py_ssize_t int_offset = slot_offset(type, "int");
    Py_ssize_t safe_offset = slot_offset(type, "is_safe");
    if (int_offset < 0 || safe_offset < 0 || type->tp_new != PyBaseObject_Type.tp_new) {
        PyErr_SetString(PyExc_TypeError, "bind: a class with 'int' and 'is_safe' slots");
        return NULL;
    }
    Py_XSETREF(floor_type, (PyTypeObject *)Py_NewRef(cls));
    Py_XSETREF(floor_unknown, Py_NewRef(unknown));
    floor_int_offset = int_offset;
    floor_safe_offset = safe_offset;
    Py_RETURN_NONE;
}

static PyObject *floor_uuid7(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    if (floor_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "bind() was not called");
        return NULL;
    }
    struct timespec now;
    if (clock_gettime(CLOCK_REALTIME, &now) != 0) {
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    uint64_t ms = (uint64_t)now.tv_sec * 1000u + (uint64_t)now.tv_nsec / 1000000u;
    unsigned char random[10];
    if (take_random(random, sizeof random) < 0) {
        return NULL;
    }
    uint64_t rand_a = ((uint64_t)random[0] << 8 | random[1]) & 0x0FFF;
    uint64_t rand_b = 0;
    for (int i = 2; i < 10; i++) {
        rand_b = rand_b << 8 | random[i];
    }
    uint64_t hi = (ms & 0xFFFFFFFFFFFFu) << 16 | 0x7000u | rand_a;
    uint64_t lo = (rand_b & 0x3FFFFFFFFFFFFFFFu) | 0x8000000000000000u;
    PyObject *number = long_from_halves(hi, lo);
    if (number == NULL) {
        return NULL;
    }
    PyObject *object;
#ifdef FLOOR_GC_NEW
    object = _PyObject_GC_New(floor_type);
    if (object != NULL) {
        memset((char *)object + sizeof(PyObject), 0,
               (size_t)floor_type->tp_basicsize - sizeof(PyObject));
    }
#else
    object = floor_type->tp_alloc(floor_type, 0);
    if (object != NULL && PyObject_IS_GC(object)) {
        PyObject_GC_UnTrack(object);
    }
#endif
    if (object == NULL) {
        Py_DECREF(number);
        return NULL;
    }
    *(PyObject **)((char *)object + floor_int_offset) = number;
    *(PyObject **)((char *)object + floor_safe_offset) = Py_NewRef(floor_unknown);
    return object;
}

/* The two ways a 128-bit int is made on CPython 3.14 and later, each alone on one constant:
   the public byte function (what uuidkit uses there) and the digit writer of PEP 757
   (PyLongWriter), which fills 30-bit digits as uuidkit does on 3.11 to 3.13. */
#if PY_VERSION_HEX >= 0x030E0000
static const uint64_t sample_hi = 0x0123456789ABCDEFu, sample_lo = 0xFEDCBA9876543210u;

static PyObject *floor_long_bytes(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    return long_from_halves(sample_hi, sample_lo);
}

static PyObject *floor_long_writer(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    const PyLongLayout *layout = PyLong_GetNativeLayout();
    if (layout->bits_per_digit != 30 || layout->digit_size != 4 || layout->digits_order != -1) {
        return long_from_halves(sample_hi, sample_lo);
    }
    void *space;
    PyLongWriter *writer = PyLongWriter_Create(0, 5, &space);
    if (writer == NULL) {
        return NULL;
    }
    uint32_t *digits = space;
    digits[0] = (uint32_t)(sample_lo & 0x3FFFFFFF);
    digits[1] = (uint32_t)((sample_lo >> 30) & 0x3FFFFFFF);
    digits[2] = (uint32_t)(((sample_lo >> 60) | (sample_hi << 4)) & 0x3FFFFFFF);
    digits[3] = (uint32_t)((sample_hi >> 26) & 0x3FFFFFFF);
    digits[4] = (uint32_t)(sample_hi >> 56);
    return PyLongWriter_Finish(writer);
}
#endif

static PyMethodDef floor_methods[] = {
#if PY_VERSION_HEX >= 0x030E0000
    {"long_bytes", floor_long_bytes, METH_NOARGS, "a 128-bit int by the byte function"},
    {"long_writer", floor_long_writer, METH_NOARGS, "the same int by PyLongWriter"},
#endif
    {"bind", floor_bind, METH_VARARGS, "bind(cls, unknown): the class of the values made."},
    {"uuid7", floor_uuid7, METH_NOARGS, "uuid7() -> UUID: clock, random bytes, object."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef floor_module = {
    PyModuleDef_HEAD_INIT, "_floor", "A floor for uuid7(): see bench/_floor.c.", -1,
    floor_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__floor(void)
{
    return PyModule_Create(&floor_module);
}
