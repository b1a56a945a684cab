/* uuidkit._speedups: the array loops behind uuidkit.bulk (generation and conversions; the
 * text loops are in _speedups_bulk_text.c).
 *
 * Values travel as packed 16-byte big-endian records (a bytearray, or any buffer on input), the
 * layout of a numpy 'V16'/'S16' array and of pyarrow's arrow.uuid storage. Functions that
 * read untrusted elements return the index of the first bad one instead of raising, so
 * uuidkit.bulk can let the Python twin word the error for that element.
 *
 * Random records come from getrandom(2) directly, never from a userspace generator: the
 * buffer is filled in cache-sized chunks, each stamped with the version and variant while it
 * is still in cache, without the GIL, and split between two threads when it is large (the
 * kernel's generator is per-CPU, so two requests run in parallel). Large outputs are advised
 * onto transparent huge pages: on a virtual machine a first-touch page fault can cost as much
 * as generating the 4 KiB it maps.
 *
 * References: RFC 9562 §4, §5.4, §5.8, §6.9.
 */
#include "_speedups.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#if defined(__linux__)
#include <sys/mman.h>
#include <sys/random.h>
#define UK_BULK_GETRANDOM 1
#endif

/* Bytes per getrandom(2) request: big enough that the per-call cost vanishes, small enough
   that the chunk is still in the L2 cache when its version and variant bits are written. */
#define FILL_CHUNK ((size_t)64 * 1024)
/* From this size on, a second thread fills half of the buffer. */
#define PARALLEL_BYTES ((size_t)1 << 20)
#define HUGE_PAGE ((uintptr_t)2 << 20)

/* Advise the whole huge pages inside [start, start + size) onto transparent huge pages. A
   refused advice (no THP in this kernel) only costs speed, so its result is not checked. */
static void advise_huge_pages(void *start, size_t size)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    uintptr_t first = ((uintptr_t)start + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    uintptr_t last = ((uintptr_t)start + size) & ~(HUGE_PAGE - 1);
    if (last > first) {
        (void)madvise((void *)first, last - first, MADV_HUGEPAGE);
    }
#else
    (void)start;
    (void)size;
#endif
}

/* A new bytearray of size bytes, uninitialised (every byte is written before it is read). */
PyObject *uk_new_buffer(Py_ssize_t size)
{
    PyObject *result = PyByteArray_FromStringAndSize(NULL, size);
    if (result != NULL && size >= (Py_ssize_t)(2 * HUGE_PAGE)) {
        advise_huge_pages(PyByteArray_AS_STRING(result), (size_t)size);
    }
    return result;
}

/* RFC 9562 §5.4/§5.8: version in the high nibble of octet 6, variant 0b10 in octet 8. */
static void stamp_records(unsigned char *out, size_t count, int version)
{
    for (size_t i = 0; i < count; i++, out += 16) {
        out[6] = (unsigned char)((out[6] & 0x0F) | (version << 4));
        out[8] = (unsigned char)((out[8] & 0x3F) | 0x80);
    }
}

/* One thread's share: out[0:size] from getrandom(2), stamped unless version < 0. Runs
   without the GIL; done counts the bytes finished, error is errno when it stopped early. */
typedef struct {
    unsigned char *out;
    size_t size;
    size_t done;
    int version;
    int error;
} fill_job;

static void *fill_from_kernel(void *argument)
{
    fill_job *job = argument;
#ifdef UK_BULK_GETRANDOM
    while (job->done < job->size) {
        unsigned char *chunk = job->out + job->done;
        size_t size = job->size - job->done < FILL_CHUNK ? job->size - job->done : FILL_CHUNK;
        for (size_t got = 0; got < size;) {
            ssize_t more = getrandom(chunk + got, size - got, 0);
            if (more < 0) {
                /* EINTR included: the caller checks for signals with the GIL and finishes. */
                job->error = errno;
                return NULL;
            }
            got += (size_t)more;
        }
        if (job->version >= 0) {
            stamp_records(chunk, size / 16, job->version);
        }
        job->done += size;
    }
#else
    job->error = ENOSYS;
#endif
    return NULL;
}

static int parallel_threads(size_t size)
{
    if (size < PARALLEL_BYTES) {
        return 1;
    }
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online >= 2 ? 2 : 1;
}

/* Fill out[0:size] (whole records) from the OS CSPRNG, stamped with version unless it is < 0,
   using threads threads. -1 with an exception set on failure. */
static int fill_random(unsigned char *out, size_t size, int version, int threads)
{
    size_t half = threads > 1 ? size / 32 * 16 : 0;
    fill_job jobs[2] = {{out, size - half, 0, version, 0}, {out + size - half, half, 0, version, 0}};
    Py_BEGIN_ALLOW_THREADS
    pthread_t helper;
    int started = half > 0 && pthread_create(&helper, NULL, fill_from_kernel, &jobs[1]) == 0;
    fill_from_kernel(&jobs[0]);
    if (started) {
        /* pthread_join of a thread this function created and has not detached cannot fail. */
        (void)pthread_join(helper, NULL);
    }
    else {
        fill_from_kernel(&jobs[1]);
    }
    Py_END_ALLOW_THREADS
    for (int i = 0; i < 2; i++) {
        /* A share that stopped early (a signal, no getrandom(2)) is finished through the
           module's CSPRNG path, which checks signals and falls back to os.urandom. */
        size_t left = jobs[i].size - jobs[i].done;
        if (left > 0) {
            if (PyErr_CheckSignals() < 0 || uk_random(jobs[i].out + jobs[i].done, left) < 0) {
                return -1;
            }
            if (version >= 0) {
                stamp_records(jobs[i].out + jobs[i].done, left / 16, version);
            }
        }
    }
    return 0;
}

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
    PyObject *result = uk_new_buffer(count * 16);
    if (result == NULL) {
        return NULL;
    }
    size_t size = (size_t)count * 16;
    unsigned char *out = (unsigned char *)PyByteArray_AS_STRING(result);
    if (fill_random(out, size, version, parallel_threads(size)) < 0) {
        Py_DECREF(result);
        return NULL;
    }
    return result;
}

/* getrandom_into(buffer, threads): fill a writable buffer exactly as random_records does,
   without the version stamp: the benchmark's measure of the CSPRNG floor. */
static PyObject *bulk_getrandom_into(PyObject *module, PyObject *args)
{
    Py_buffer view;
    int threads;
    (void)module;
    if (!PyArg_ParseTuple(args, "w*i:getrandom_into", &view, &threads)) {
        return NULL;
    }
    int failed = fill_random(view.buf, (size_t)view.len / 16 * 16, -1, threads > 1 ? 2 : 1);
    PyBuffer_Release(&view);
    if (failed) {
        return NULL;
    }
    Py_RETURN_NONE;
}

/* A buffer of whole 16-byte records (released again on error). */
int uk_get_records(PyObject *object, Py_buffer *view)
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
    if (uk_get_records(buffer, &view) < 0) {
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
    if (ints) {
        if (PyLong_CheckExact(element) && uk_long_to_u128(element, value) == 0) {
            return 1;
        }
        PyErr_Clear(); /* negative or too large: the caller reports the element */
        return 0;
    }
    if (uk_read_exact(element, value)) {
        return 1;
    }
    if (!uk_is_uuid(element)) {
        return 0;
    }
    /* A subclass, or a class bound through its constructor: read its int attribute. */
    PyObject *number = PyObject_GetAttrString(element, "int");
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
        if (PyLong_CheckExact(items[i]) &&
            uk_long_to_u128(items[i], &value) == 0) {
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

/* new_records(n) -> bytearray of n uninitialised records (the caller writes each one). */
static PyObject *bulk_new_records(PyObject *module, PyObject *number)
{
    (void)module;
    Py_ssize_t count = PyNumber_AsSsize_t(number, PyExc_OverflowError);
    if (count == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (count < 0 || count > PY_SSIZE_T_MAX / 16) {
        PyErr_SetString(PyExc_ValueError, "new_records: bad count");
        return NULL;
    }
    return uk_new_buffer(count * 16);
}

/* RFC 9562 §5.1/§5.6: 100 ns intervals since 1582-10-15; §5.7: Unix milliseconds. */
#define GREGORIAN_TICKS_AT_UNIX 0x01B21DD213814000LL

/* The Unix nanoseconds of one record, or 0 when it has no time that fits int64. */
static int record_time_ns(const unsigned char *record, int64_t *ns)
{
    uint64_t high = uk_load_be64(record), high48 = high >> 16, mid12 = high & 0xFFF;
    unsigned version = (unsigned)(high >> 12) & 0xF;
    if ((record[8] >> 6) != 2) {
        return 0;
    }
    if (version == 7) {
        if (high48 > (uint64_t)(INT64_MAX / UK_NS_PER_MS)) {
            return 0;
        }
        *ns = (int64_t)high48 * UK_NS_PER_MS;
        return 1;
    }
    uint64_t ticks;
    if (version == 1) {
        ticks = (mid12 << 48) | ((high48 & 0xFFFF) << 32) | (high48 >> 16);
    }
    else if (version == 6) {
        ticks = (high48 << 12) | mid12;
    }
    else {
        return 0;
    }
    /* int64 nanoseconds span 1677-09-21 to 2262-04-11 around the Unix epoch. */
    int64_t since = (int64_t)ticks - GREGORIAN_TICKS_AT_UNIX; /* ticks < 2**60 */
    if (since < -(INT64_MAX / 100) || since > INT64_MAX / 100) {
        return 0;
    }
    *ns = since * 100;
    return 1;
}

/* timestamps_of_records(buffer) -> bytearray of native int64 Unix nanoseconds, or the int
   index of the first record that is not a v1/v6/v7 UUID with a time inside int64 ns. */
static PyObject *bulk_timestamps_of_records(PyObject *module, PyObject *buffer)
{
    Py_buffer view;
    (void)module;
    if (uk_get_records(buffer, &view) < 0) {
        return NULL;
    }
    Py_ssize_t count = view.len / 16;
    const unsigned char *in = view.buf;
    PyObject *result = uk_new_buffer(count * 8);
    if (result == NULL) {
        PyBuffer_Release(&view);
        return NULL;
    }
    char *out = PyByteArray_AS_STRING(result);
    Py_ssize_t i = 0;
    PyThreadState *released = uk_release_gil_for(count);
    for (; i < count; i++) {
        int64_t ns;
        if (!record_time_ns(in + 16 * i, &ns)) {
            break;
        }
        memcpy(out + 8 * i, &ns, 8);
    }
    uk_reacquire_gil(released);
    PyBuffer_Release(&view);
    if (i < count) {
        Py_SETREF(result, PyLong_FromSsize_t(i));
    }
    return result;
}

/* The text loops, in _speedups_bulk_text.c. */
PyObject *uk_bulk_format_records(PyObject *module, PyObject *args);
PyObject *uk_bulk_arrow_offsets(PyObject *module, PyObject *args);
PyObject *uk_bulk_parse_texts(PyObject *module, PyObject *args);
PyObject *uk_bulk_parse_cells(PyObject *module, PyObject *args);
PyObject *uk_bulk_parse_arrow(PyObject *module, PyObject *args);

PyMethodDef uk_bulk_methods[] = {
    {"random_records", bulk_random_records, METH_VARARGS,
     "random_records(version, n) -> bytearray: n random 16-byte records stamped with version."},
    {"getrandom_into", bulk_getrandom_into, METH_VARARGS,
     "getrandom_into(buffer, threads): fill buffer from getrandom(2) as random_records does."},
    {"uuids_from_records", bulk_uuids_from_records, METH_O,
     "uuids_from_records(buffer) -> list[UUID] (not tracked by the cyclic GC)."},
    {"records_of_uuids", bulk_records_of_uuids, METH_O,
     "records_of_uuids(seq) -> bytearray, or the int index of the first non-UUID element."},
    {"records_of_ints", bulk_records_of_ints, METH_O,
     "records_of_ints(seq) -> bytearray, or the int index of the first bad element."},
    {"uuids_from_ints", bulk_uuids_from_ints, METH_O,
     "uuids_from_ints(list[int]) -> list[UUID] (not tracked by the cyclic GC)."},
    {"timestamps_of_records", bulk_timestamps_of_records, METH_O,
     "timestamps_of_records(buffer) -> bytearray of int64 ns, or the index of the first bad one."},
    {"new_records", bulk_new_records, METH_O,
     "new_records(n) -> bytearray of n uninitialised 16-byte records."},
    {"format_records", uk_bulk_format_records, METH_VARARGS,
     "format_records(buffer, width) -> list[str] (width 0) or packed 36-character cells."},
    {"arrow_offsets", uk_bulk_arrow_offsets, METH_VARARGS,
     "arrow_offsets(n, width) -> bytearray: n + 1 offsets 0, 36, 72, ... of width 4 or 8."},
    {"parse_texts", uk_bulk_parse_texts, METH_VARARGS,
     "parse_texts(seq, strict, out, start) -> index of the first element left to the caller."},
    {"parse_cells", uk_bulk_parse_cells, METH_VARARGS,
     "parse_cells(buffer, char_width, cell_chars, strict, out, start) -> index, as parse_texts."},
    {"parse_arrow", uk_bulk_parse_arrow, METH_VARARGS,
     "parse_arrow(validity, offsets, data, offset, n, offset_width, strict, out, start) -> "
     "index, as parse_texts."},
    {NULL, NULL, 0, NULL},
};
