/* uuidkit._speedups: the array loops behind uuidkit.bulk.
 *
 * Values travel as packed 16-byte big-endian records (a bytearray, or any buffer on input), the
 * layout of a numpy 'V16'/'S16' array and of pyarrow's arrow.uuid storage. Functions that
 * read untrusted elements return the index of the first bad one instead of raising, so
 * uuidkit.bulk can let the Python twin word the error for that element.
 *
 * References: RFC 9562 §4, §5.4, §5.8, §6.9.
 */
#include "_speedups.h"

#include <string.h>

int uk_read_text(PyObject *text, int strict, uk_u128 *value);
void uk_write_canonical(unsigned char *out, uk_u128 value, const char *digits);

/* random_records(version, n) -> bytearray: n random records stamped with version (4 or 8). */
static PyObject *bulk_random_records(PyObject *module, PyObject *args)
{
    int version;
    Py_ssize_t count;
    (void)module;
    if (!PyArg_ParseTuple(args, "in:random_records", &version, &count)) {
        return NULL;
    }
    if (count < 0 || count > PY_SSIZE_T_MAX / 16 || version < 0 || version > 15) {
        PyErr_SetString(PyExc_ValueError, "random_records: bad version or count");
        return NULL;
    }
    PyObject *result = PyByteArray_FromStringAndSize(NULL, count * 16);
    if (result == NULL) {
        return NULL;
    }
    unsigned char *out = (unsigned char *)PyByteArray_AS_STRING(result);
    if (uk_random(out, (size_t)count * 16) < 0) {
        Py_DECREF(result);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < count; i++, out += 16) {
        out[6] = (unsigned char)((out[6] & 0x0F) | (version << 4));
        out[8] = (unsigned char)((out[8] & 0x3F) | 0x80);
    }
    return result;
}

static int get_records(PyObject *object, Py_buffer *view)
{
    if (PyObject_GetBuffer(object, view, PyBUF_SIMPLE) < 0) {
        return -1;
    }
    if (view->len % 16 != 0) {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_ValueError, "expected whole 16-byte records");
        return -1;
    }
    return 0;
}

/* uuids_from_records(buffer) -> list[UUID] */
static PyObject *bulk_uuids_from_records(PyObject *module, PyObject *buffer)
{
    Py_buffer view;
    (void)module;
    if (get_records(buffer, &view) < 0) {
        return NULL;
    }
    Py_ssize_t count = view.len / 16;
    const unsigned char *in = view.buf;
    PyObject *result = PyList_New(count);
    for (Py_ssize_t i = 0; result != NULL && i < count; i++) {
        PyObject *u = uk_make_uuid(uk_load_u128(in + 16 * i));
        if (u == NULL) {
            Py_CLEAR(result);
            break;
        }
        PyList_SET_ITEM(result, i, u);
    }
    PyBuffer_Release(&view);
    return result;
}

/* The 128-bit value of element (any uuid.UUID, or an int when ints is set); 0 if bad. */
static int element_value(PyObject *element, int ints, uk_u128 *value)
{
    if (!ints && uk_read_exact(element, value)) {
        return 1;
    }
    if (ints ? !PyLong_CheckExact(element) : !uk_is_uuid(element)) {
        return 0;
    }
    PyObject *number = ints ? Py_NewRef(element) : PyObject_GetAttrString(element, "int");
    if (number == NULL) {
        PyErr_Clear();
        return 0;
    }
    int ok = PyLong_CheckExact(number) && uk_long_to_u128(number, value) == 0;
    Py_DECREF(number);
    if (!ok) {
        PyErr_Clear();
    }
    return ok;
}

/* Records of a list of UUIDs (or ints), or the index of the first element that is not one. */
static PyObject *records_of(PyObject *sequence, int ints)
{
    PyObject *fast = PySequence_Fast(sequence, "expected a sequence");
    if (fast == NULL) {
        return NULL;
    }
    Py_ssize_t count = PySequence_Fast_GET_SIZE(fast);
    PyObject *result = PyByteArray_FromStringAndSize(NULL, count * 16);
    if (result == NULL) {
        Py_DECREF(fast);
        return NULL;
    }
    unsigned char *out = (unsigned char *)PyByteArray_AS_STRING(result);
    PyObject **items = PySequence_Fast_ITEMS(fast);
    for (Py_ssize_t i = 0; i < count; i++) {
        uk_u128 value;
        if (!element_value(items[i], ints, &value)) {
            Py_DECREF(result);
            Py_DECREF(fast);
            return PyLong_FromSsize_t(i);
        }
        uk_store_u128(out + 16 * i, value);
    }
    Py_DECREF(fast);
    return result;
}

/* records_of_uuids(list) -> bytearray | int (index of the first element that is not a UUID) */
static PyObject *bulk_records_of_uuids(PyObject *module, PyObject *sequence)
{
    (void)module;
    return records_of(sequence, 0);
}

/* records_of_ints(list) -> bytearray | int (index of the first int outside 0..2**128-1) */
static PyObject *bulk_records_of_ints(PyObject *module, PyObject *sequence)
{
    (void)module;
    return records_of(sequence, 1);
}

/* uuids_from_ints(list[int]) -> list[UUID]; the caller guarantees 128-bit values. */
static PyObject *bulk_uuids_from_ints(PyObject *module, PyObject *sequence)
{
    (void)module;
    PyObject *fast = PySequence_Fast(sequence, "expected a sequence");
    if (fast == NULL) {
        return NULL;
    }
    Py_ssize_t count = PySequence_Fast_GET_SIZE(fast);
    PyObject **items = PySequence_Fast_ITEMS(fast);
    PyObject *result = PyList_New(count);
    for (Py_ssize_t i = 0; result != NULL && i < count; i++) {
        uk_u128 value;
        PyObject *u = NULL;
        if (PyLong_CheckExact(items[i]) && uk_long_to_u128(items[i], &value) == 0) {
            u = uk_make_uuid(value);
        }
        else if (!PyErr_Occurred()) {
            PyErr_Format(PyExc_ValueError, "element %zd is not a 128-bit int", i);
        }
        if (u == NULL) {
            Py_CLEAR(result);
            break;
        }
        PyList_SET_ITEM(result, i, u);
    }
    Py_DECREF(fast);
    return result;
}

/* format_records(buffer, width) -> list[str] (width 0) or bytearray of 36-character cells,
   each character width bytes (1: ASCII, 4: UCS-4 as numpy's '<U36'). */
static PyObject *bulk_format_records(PyObject *module, PyObject *args)
{
    PyObject *buffer;
    int width;
    Py_buffer view;
    (void)module;
    if (!PyArg_ParseTuple(args, "Oi:format_records", &buffer, &width)) {
        return NULL;
    }
    if (width != 0 && width != 1 && width != 4) {
        PyErr_SetString(PyExc_ValueError, "format_records: width must be 0, 1 or 4");
        return NULL;
    }
    if (get_records(buffer, &view) < 0) {
        return NULL;
    }
    Py_ssize_t count = view.len / 16;
    const unsigned char *in = view.buf;
    PyObject *result;
    if (width == 0) {
        result = PyList_New(count);
        for (Py_ssize_t i = 0; result != NULL && i < count; i++) {
            PyObject *text = PyUnicode_New(36, 127);
            if (text == NULL) {
                Py_CLEAR(result);
                break;
            }
            uk_write_canonical(PyUnicode_1BYTE_DATA(text), uk_load_u128(in + 16 * i),
                               "0123456789abcdef");
            PyList_SET_ITEM(result, i, text);
        }
    }
    else if (count > PY_SSIZE_T_MAX / (36 * 4)) {
        result = PyErr_NoMemory();
    }
    else {
        result = PyByteArray_FromStringAndSize(NULL, count * 36 * width);
        if (result != NULL) {
            unsigned char *out = (unsigned char *)PyByteArray_AS_STRING(result);
            unsigned char cell[36];
            for (Py_ssize_t i = 0; i < count; i++) {
                unsigned char *target = width == 1 ? out + 36 * i : cell;
                uk_write_canonical(target, uk_load_u128(in + 16 * i), "0123456789abcdef");
                if (width == 4) {
                    uint32_t *wide = (uint32_t *)(void *)(out + 144 * i);
                    for (int j = 0; j < 36; j++) {
                        wide[j] = cell[j];
                    }
                }
            }
        }
    }
    PyBuffer_Release(&view);
    return result;
}

/* parse_texts(list[str], strict) -> bytearray | int (index of the first element not accepted
   by the fast path; the caller asks the Python twin to explain it). */
static PyObject *bulk_parse_texts(PyObject *module, PyObject *args)
{
    PyObject *sequence;
    int strict;
    (void)module;
    if (!PyArg_ParseTuple(args, "Op:parse_texts", &sequence, &strict)) {
        return NULL;
    }
    PyObject *fast = PySequence_Fast(sequence, "expected a sequence");
    if (fast == NULL) {
        return NULL;
    }
    Py_ssize_t count = PySequence_Fast_GET_SIZE(fast);
    PyObject **items = PySequence_Fast_ITEMS(fast);
    PyObject *result = PyByteArray_FromStringAndSize(NULL, count * 16);
    if (result == NULL) {
        Py_DECREF(fast);
        return NULL;
    }
    unsigned char *out = (unsigned char *)PyByteArray_AS_STRING(result);
    for (Py_ssize_t i = 0; i < count; i++) {
        uk_u128 value;
        if (!uk_read_text(items[i], strict, &value)) {
            Py_DECREF(result);
            Py_DECREF(fast);
            return PyLong_FromSsize_t(i);
        }
        uk_store_u128(out + 16 * i, value);
    }
    Py_DECREF(fast);
    return result;
}

PyMethodDef uk_bulk_methods[] = {
    {"random_records", bulk_random_records, METH_VARARGS,
     "random_records(version, n) -> bytearray: n random 16-byte records stamped with version."},
    {"uuids_from_records", bulk_uuids_from_records, METH_O,
     "uuids_from_records(buffer) -> list[UUID] (not tracked by the cyclic GC)."},
    {"records_of_uuids", bulk_records_of_uuids, METH_O,
     "records_of_uuids(seq) -> bytearray, or the int index of the first non-UUID element."},
    {"records_of_ints", bulk_records_of_ints, METH_O,
     "records_of_ints(seq) -> bytearray, or the int index of the first bad element."},
    {"uuids_from_ints", bulk_uuids_from_ints, METH_O,
     "uuids_from_ints(list[int]) -> list[UUID] (not tracked by the cyclic GC)."},
    {"format_records", bulk_format_records, METH_VARARGS,
     "format_records(buffer, width) -> list[str] (width 0) or packed 36-character cells."},
    {"parse_texts", bulk_parse_texts, METH_VARARGS,
     "parse_texts(seq, strict) -> bytearray, or the int index of the first bad element."},
    {NULL, NULL, 0, NULL},
};
