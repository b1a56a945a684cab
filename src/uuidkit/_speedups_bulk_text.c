/* uuidkit._speedups: the text loops behind uuidkit.bulk.format and uuidkit.bulk.parse.
 *
 * Formatting writes the 36 characters of each record straight into the output: ASCII cells
 * (Arrow string data), UCS-4 cells (numpy '<U36', little-endian) or new str objects, through
 * tables of the two characters of every byte value.
 *
 * Parsing reads the input where it lies: the items of a list of str, the fixed-width cells
 * of a numpy 'U'/'S' array, or the offsets and data buffers of an Arrow string array. The
 * canonical 8-4-4-4-12 form is read by a table-driven fast path; every other cell goes
 * through uuidkit.parse's ASCII reader (uk_read_ascii). A function returns the index of the
 * first element it does not accept; uuidkit.bulk then reads that one element with the
 * Python parser (which accepts it, or words the error) and calls again from the next one.
 *
 * References: RFC 9562 §4 (ABNF, Figure 1), RFC 5234 §2.3.
 */
#include "_speedups.h"

#include <string.h>

int uk_read_text(PyObject *text, int strict, uk_u128 *value);
int uk_read_ascii(const unsigned char *s, Py_ssize_t length, int strict, uk_u128 *value);
PyObject *uk_new_buffer(Py_ssize_t size);

#define CANONICAL_CHARS 36
/* The longest accepted form: urn:uuid: and 36 characters. */
#define LONGEST_FORM 45
/* --- formatting ------------------------------------------------------------------------ */

static void write_ascii_cell(unsigned char *out, const unsigned char *record)
{
    for (int i = 0; i < 16; i++) {
        memcpy(out + uk_byte_at[i], uk_lower_pair[record[i]], 2);
    }
    out[8] = out[13] = out[18] = out[23] = '-';
}

static void write_wide_cell(unsigned char *out, const unsigned char *record)
{
    static const unsigned char hyphen[4] = {'-', 0, 0, 0};
    for (int i = 0; i < 16; i++) {
        memcpy(out + 4 * uk_byte_at[i], uk_wide_pair[record[i]], 8);
    }
    memcpy(out + 4 * 8, hyphen, 4);
    memcpy(out + 4 * 13, hyphen, 4);
    memcpy(out + 4 * 18, hyphen, 4);
    memcpy(out + 4 * 23, hyphen, 4);
}

static PyObject *format_list(const unsigned char *in, Py_ssize_t count)
{
    PyObject *result = PyList_New(count);
    for (Py_ssize_t i = 0; result != NULL && i < count; i++) {
        PyObject *text = PyUnicode_New(CANONICAL_CHARS, 127);
        if (text == NULL) {
            Py_CLEAR(result);
            break;
        }
        write_ascii_cell(PyUnicode_1BYTE_DATA(text), in + 16 * i);
        PyList_SET_ITEM(result, i, text);
    }
    return result;
}

static PyObject *format_cells(const unsigned char *in, Py_ssize_t count, int width)
{
    if (count > PY_SSIZE_T_MAX / (CANONICAL_CHARS * 4)) {
        return PyErr_NoMemory();
    }
    Py_ssize_t cell = CANONICAL_CHARS * width;
    PyObject *result = uk_new_buffer(count * cell);
    if (result == NULL) {
        return NULL;
    }
    unsigned char *out = (unsigned char *)PyByteArray_AS_STRING(result);
    PyThreadState *released = uk_release_gil_for(count);
    for (Py_ssize_t i = 0; i < count; i++, out += cell) {
        if (width == 1) {
            write_ascii_cell(out, in + 16 * i);
        }
        else {
            write_wide_cell(out, in + 16 * i);
        }
    }
    uk_reacquire_gil(released);
    return result;
}

/* format_records(buffer, width) -> list[str] (width 0) or bytearray of 36-character cells,
   each character width bytes (1: ASCII, 4: UCS-4 as numpy's '<U36'). */
PyObject *uk_bulk_format_records(PyObject *module, PyObject *args)
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
    if (uk_get_records(buffer, &view) < 0) {
        return NULL;
    }
    Py_ssize_t count = view.len / 16;
    PyObject *result = width == 0 ? format_list(view.buf, count)
                                  : format_cells(view.buf, count, width);
    PyBuffer_Release(&view);
    return result;
}

/* arrow_offsets(n, width) -> bytearray: the n + 1 offsets 0, 36, ..., 36 * n of an Arrow
   string (width 4) or large_string (width 8) array of canonical strings, native order. */
PyObject *uk_bulk_arrow_offsets(PyObject *module, PyObject *args)
{
    Py_ssize_t count;
    int width;
    (void)module;
    if (!PyArg_ParseTuple(args, "ni:arrow_offsets", &count, &width)) {
        return NULL;
    }
    int64_t limit = width == 4 ? INT32_MAX : INT64_MAX;
    if ((width != 4 && width != 8) || count < 0 || count >= PY_SSIZE_T_MAX / 64 ||
        (int64_t)count > limit / CANONICAL_CHARS) {
        PyErr_SetString(PyExc_ValueError, "arrow_offsets: bad count or width");
        return NULL;
    }
    PyObject *result = uk_new_buffer((count + 1) * width);
    if (result == NULL) {
        return NULL;
    }
    char *out = PyByteArray_AS_STRING(result);
    for (Py_ssize_t i = 0; i <= count; i++) {
        if (width == 4) {
            int32_t offset = (int32_t)(i * CANONICAL_CHARS);
            memcpy(out + 4 * i, &offset, 4);
        }
        else {
            int64_t offset = (int64_t)i * CANONICAL_CHARS;
            memcpy(out + 8 * i, &offset, 8);
        }
    }
    return result;
}

/* --- parsing --------------------------------------------------------------------------- */

static inline uint32_t char_at(const unsigned char *s, int width, Py_ssize_t index)
{
    if (width == 1) {
        return s[index];
    }
    const unsigned char *p = s + 4 * index; /* numpy 'U' cells are little-endian UCS-4 */
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

static inline unsigned hex_of(uint32_t c)
{
    return c < 256 ? uk_hex_digit[c] : UK_NOT_HEX;
}

/* RFC 9562 §4: 8-4-4-4-12 hex digits (either case) at s into record; 0 if not that form.
   record may be written to even when the answer is 0. */
static inline int read_canonical_cell(const unsigned char *s, int width, unsigned char *record)
{
    uint32_t hyphens = (char_at(s, width, 8) ^ '-') | (char_at(s, width, 13) ^ '-') |
                       (char_at(s, width, 18) ^ '-') | (char_at(s, width, 23) ^ '-');
    unsigned seen = 0;
    for (int i = 0; i < 16; i++) {
        unsigned high = hex_of(char_at(s, width, uk_digit_at[2 * i]));
        unsigned low = hex_of(char_at(s, width, uk_digit_at[2 * i + 1]));
        seen |= high | low;
        record[i] = (unsigned char)((high << 4) | (low & 0xF));
    }
    return hyphens == 0 && seen < UK_NOT_HEX;
}

/* Any accepted form in length characters at s (plain ASCII only) into record. */
static int read_any_cell(const unsigned char *s, int width, Py_ssize_t length, int strict,
                         unsigned char *record)
{
    unsigned char ascii[LONGEST_FORM];
    if (length > LONGEST_FORM) {
        return 0;
    }
    for (Py_ssize_t i = 0; i < length; i++) {
        uint32_t c = char_at(s, width, i);
        if (c > 127) {
            return 0;
        }
        ascii[i] = (unsigned char)c;
    }
    uk_u128 value;
    if (!uk_read_ascii(ascii, length, strict, &value)) {
        return 0;
    }
    uk_store_u128(record, value);
    return 1;
}

static int get_output(PyObject *out, Py_buffer *view, Py_ssize_t count, Py_ssize_t start)
{
    if (PyObject_GetBuffer(out, view, PyBUF_WRITABLE) < 0) {
        return -1;
    }
    if (view->len / 16 < count || start < 0 || start > count) {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_ValueError, "parse: the output is too small or start is negative");
        return -1;
    }
    return 0;
}

/* parse_texts(list, strict, out, start) -> the first index from start whose element is not
   an exact str in an accepted form (len(list) when every one was read into out). */
PyObject *uk_bulk_parse_texts(PyObject *module, PyObject *args)
{
    PyObject *sequence, *out;
    int strict;
    Py_ssize_t start;
    Py_buffer view;
    (void)module;
    if (!PyArg_ParseTuple(args, "O!pOn:parse_texts", &PyList_Type, &sequence, &strict, &out,
                          &start)) {
        return NULL;
    }
    Py_ssize_t count = PyList_GET_SIZE(sequence);
    if (get_output(out, &view, count, start) < 0) {
        return NULL;
    }
    unsigned char *records = view.buf;
    Py_ssize_t i = start;
    for (; i < count; i++) {
        PyObject *text = PyList_GET_ITEM(sequence, i);
        unsigned char *record = records + 16 * i;
        if (PyUnicode_CheckExact(text) && PyUnicode_IS_COMPACT_ASCII(text) &&
            PyUnicode_GET_LENGTH(text) == CANONICAL_CHARS &&
            read_canonical_cell(PyUnicode_1BYTE_DATA(text), 1, record)) {
            continue;
        }
        uk_u128 value;
        if (!uk_read_text(text, strict, &value)) {
            break;
        }
        uk_store_u128(record, value);
    }
    PyBuffer_Release(&view);
    return PyLong_FromSsize_t(i);
}

/* parse_cells(buffer, char_width, cell_chars, strict, out, start): the same over a numpy
   'U' (char_width 4) or 'S' (char_width 1) array; a cell's text ends before its trailing NULs,
   as numpy reads it. */
PyObject *uk_bulk_parse_cells(PyObject *module, PyObject *args)
{
    Py_buffer cells, view;
    int width, strict;
    Py_ssize_t chars, start;
    PyObject *out;
    (void)module;
    if (!PyArg_ParseTuple(args, "y*inpOn:parse_cells", &cells, &width, &chars, &strict, &out,
                          &start)) {
        return NULL;
    }
    Py_ssize_t cell = chars * width;
    if ((width != 1 && width != 4) || chars <= 0 || chars > PY_SSIZE_T_MAX / 4 ||
        cells.len % cell != 0) {
        PyBuffer_Release(&cells);
        PyErr_SetString(PyExc_ValueError, "parse_cells: bad cell size");
        return NULL;
    }
    Py_ssize_t count = cells.len / cell;
    if (get_output(out, &view, count, start) < 0) {
        PyBuffer_Release(&cells);
        return NULL;
    }
    const unsigned char *in = (const unsigned char *)cells.buf + start * cell;
    unsigned char *record = (unsigned char *)view.buf + 16 * start;
    Py_ssize_t i = start;
    PyThreadState *released = uk_release_gil_for(count - start);
    for (; i < count; i++, in += cell, record += 16) {
        if (chars == CANONICAL_CHARS && (width == 4 ? read_canonical_cell(in, 4, record)
                                                    : read_canonical_cell(in, 1, record))) {
            continue;
        }
        Py_ssize_t length = chars;
        while (length > 0 && char_at(in, width, length - 1) == 0) {
            length--;
        }
        if (!read_any_cell(in, width, length, strict, record)) {
            break;
        }
    }
    uk_reacquire_gil(released);
    PyBuffer_Release(&view);
    PyBuffer_Release(&cells);
    return PyLong_FromSsize_t(i);
}

typedef struct {
    Py_buffer validity, offsets, data;
    int has_validity;
} arrow_buffers;

static void release_arrow(arrow_buffers *buffers)
{
    if (buffers->has_validity) {
        PyBuffer_Release(&buffers->validity);
    }
    PyBuffer_Release(&buffers->offsets);
    PyBuffer_Release(&buffers->data);
}

static int64_t offset_at(const Py_buffer *offsets, int width, Py_ssize_t index)
{
    const char *p = (const char *)offsets->buf + index * width;
    if (width == 4) {
        int32_t narrow;
        memcpy(&narrow, p, 4);
        return narrow;
    }
    int64_t wide;
    memcpy(&wide, p, 8);
    return wide;
}

/* parse_arrow(validity | None, offsets, data, offset, n, offset_width, strict, out, start):
   the same over an Arrow string (offset_width 4) or large_string (8) array's buffers. A null
   element, or text that is not plain ASCII, is left to the caller. Offsets outside the data
   buffer raise ValueError. */
PyObject *uk_bulk_parse_arrow(PyObject *module, PyObject *args)
{
    PyObject *validity, *offsets, *data, *out;
    Py_ssize_t first, count, start;
    int width, strict;
    arrow_buffers b;
    Py_buffer view;
    (void)module;
    if (!PyArg_ParseTuple(args, "OOOnnipOn:parse_arrow", &validity, &offsets, &data, &first,
                          &count, &width, &strict, &out, &start)) {
        return NULL;
    }
    b.has_validity = validity != Py_None;
    if (b.has_validity && PyObject_GetBuffer(validity, &b.validity, PyBUF_SIMPLE) < 0) {
        return NULL;
    }
    if (PyObject_GetBuffer(offsets, &b.offsets, PyBUF_SIMPLE) < 0) {
        if (b.has_validity) {
            PyBuffer_Release(&b.validity);
        }
        return NULL;
    }
    if (PyObject_GetBuffer(data, &b.data, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&b.offsets);
        if (b.has_validity) {
            PyBuffer_Release(&b.validity);
        }
        return NULL;
    }
    if ((width != 4 && width != 8) || first < 0 || count < 0 ||
        first > PY_SSIZE_T_MAX / 16 - count || b.offsets.len / width < first + count + 1 ||
        (b.has_validity && b.validity.len < (first + count + 7) / 8)) {
        release_arrow(&b);
        PyErr_SetString(PyExc_ValueError, "parse_arrow: buffers too small for the array");
        return NULL;
    }
    if (get_output(out, &view, count, start) < 0) {
        release_arrow(&b);
        return NULL;
    }
    const unsigned char *bits = b.validity.buf, *text = b.data.buf;
    Py_ssize_t i = start;
    int outside = 0;
    int64_t end = offset_at(&b.offsets, width, first + i);
    PyThreadState *released = uk_release_gil_for(count - start);
    for (; i < count; i++) {
        Py_ssize_t at = first + i;
        int64_t begin = end;
        end = offset_at(&b.offsets, width, at + 1);
        if (begin < 0 || end < begin || end > (int64_t)b.data.len) {
            outside = 1;
            break;
        }
        if (b.has_validity && !((bits[at >> 3] >> (at & 7)) & 1)) {
            break;
        }
        unsigned char *record = (unsigned char *)view.buf + 16 * i;
        Py_ssize_t length = (Py_ssize_t)(end - begin);
        if (!(length == CANONICAL_CHARS && read_canonical_cell(text + begin, 1, record)) &&
            !read_any_cell(text + begin, 1, length, strict, record)) {
            break;
        }
    }
    uk_reacquire_gil(released);
    if (outside) {
        PyErr_Format(PyExc_ValueError, "element %zd: arrow offsets outside the data", i);
    }
    PyBuffer_Release(&view);
    release_arrow(&b);
    return outside ? NULL : PyLong_FromSsize_t(i);
}
