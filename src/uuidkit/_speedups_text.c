/* uuidkit._speedups: parsing, formatting, fields() and timestamps.
 *
 * Twins of uuidkit.parse.parse, uuidkit.format.* and uuidkit.fields.fields/timestamp_ns.
 * Each handles the common case (an exact uuid.UUID; an ASCII str of an accepted form) and
 * hands everything else, including every error, to its Python twin, so messages and
 * positions are the reference's by construction.
 *
 * References: RFC 9562 §4 (ABNF, Figures 1-4), §5.1-§5.8, RFC 8141.
 */
#include "_speedups.h"

#include <string.h>

/* Tables of the text code (this file and the bulk loops), filled once by
   uk_text_tables_init when the module is initialised. */
uint16_t uk_hex_digit[256];            /* the value of hex digit c (either case), or UK_NOT_HEX */
unsigned char uk_lower_pair[256][2];   /* the two lower-case hex digits of a byte */
unsigned char uk_wide_pair[256][8];    /* the same as two little-endian UCS-4 characters */
static unsigned char upper_pair[256][2];

/* Where the two digits of byte i, and where digit i, of a canonical string are. */
const unsigned char uk_byte_at[16] = {0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34};
const unsigned char uk_digit_at[32] = {0,  1,  2,  3,  4,  5,  6,  7,  9,  10, 11,
                                       12, 14, 15, 16, 17, 19, 20, 21, 22, 24, 25,
                                       26, 27, 28, 29, 30, 31, 32, 33, 34, 35};

void uk_text_tables_init(void)
{
    static const char lower[] = "0123456789abcdef";
    static const char upper[] = "0123456789ABCDEF";
    for (unsigned c = 0; c < 256; c++) {
        uk_hex_digit[c] = UK_NOT_HEX;
    }
    for (unsigned v = 0; v < 16; v++) {
        uk_hex_digit[(unsigned char)lower[v]] = (uint16_t)v;
        uk_hex_digit[(unsigned char)upper[v]] = (uint16_t)v;
    }
    for (unsigned b = 0; b < 256; b++) {
        uk_lower_pair[b][0] = (unsigned char)lower[b >> 4];
        uk_lower_pair[b][1] = (unsigned char)lower[b & 0xF];
        upper_pair[b][0] = (unsigned char)upper[b >> 4];
        upper_pair[b][1] = (unsigned char)upper[b & 0xF];
        memset(uk_wide_pair[b], 0, 8);
        uk_wide_pair[b][0] = uk_lower_pair[b][0];
        uk_wide_pair[b][4] = uk_lower_pair[b][1];
    }
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* Hex digits are read eight at a time from one 64-bit word (SWAR), first character in the
   lowest byte, as a little-endian load puts it. */
#define UK_ONES 0x0101010101010101ull
#define UK_HIGHS 0x8080808080808080ull

static inline uint64_t load64(const unsigned char *p)
{
    uint64_t word;
    memcpy(&word, p, 8);
    return word;
}

static inline uint64_t load32(const unsigned char *p)
{
    uint32_t word;
    memcpy(&word, p, 4);
    return word;
}

/* The high bit of each byte of word that lies in [low, high] (bytes below 0x80 only: then
   no sum carries into the next byte). */
static inline uint64_t bytes_in(uint64_t word, unsigned low, unsigned high)
{
    uint64_t at_least = word + (0x80 - low) * UK_ONES;
    uint64_t above = word + (0x7F - high) * UK_ONES;
    return at_least & ~above & UK_HIGHS;
}

/* The value of eight hex digits (either case); *bad gets a high bit when one is not. */
static inline uint32_t hex8(uint64_t word, uint64_t *bad)
{
    uint64_t digits = bytes_in(word, '0', '9');
    uint64_t letters = bytes_in(word | 0x20 * UK_ONES, 'a', 'f'); /* 'A'-'F' folded */
    *bad |= (word & UK_HIGHS) | (~(digits | letters) & UK_HIGHS);
    /* '0'-'9' are 0x30-0x39, 'a'-'f' 0x61-0x66 and 'A'-'F' 0x41-0x46: the low nibble, plus
       9 for the letters, which have bit 6 set. */
    uint64_t value = (word & 0x0F * UK_ONES) + 9 * ((word >> 6) & UK_ONES);
    /* Pair the nibbles into bytes, then gather the four bytes, first character highest. */
    value = ((value & 0x000F000F000F000Full) << 4) | ((value >> 8) & 0x000F000F000F000Full);
    return (uint32_t)(((value & 0xFF) << 24) | (((value >> 16) & 0xFF) << 16) |
                      (((value >> 32) & 0xFF) << 8) | ((value >> 48) & 0xFF));
}

static inline int read_canonical_digits(const unsigned char *s, uk_u128 *value)
{
    uint64_t bad = 0;
    uint64_t time_low = hex8(load64(s), &bad);
    uint64_t mid_high = hex8(load32(s + 9) | (load32(s + 14) << 32), &bad);
    uint64_t clock_node = hex8(load32(s + 19) | (load32(s + 24) << 32), &bad);
    uint64_t node_rest = hex8(load64(s + 28), &bad);
    value->hi = (time_low << 32) | mid_high;
    value->lo = (clock_node << 32) | node_rest;
    return bad == 0;
}

static int read_bare(const unsigned char *s, uk_u128 *value)
{
    uint64_t bad = 0;
    uint64_t first = hex8(load64(s), &bad), second = hex8(load64(s + 8), &bad);
    uint64_t third = hex8(load64(s + 16), &bad), fourth = hex8(load64(s + 24), &bad);
    value->hi = (first << 32) | second;
    value->lo = (third << 32) | fourth;
    return bad == 0;
}
#else
/* The 32 hex digits at s + position[i] into *value; 0 when one is not a hex digit. A bad
   digit sets bit 8 in seen: every digit is looked up, with no branch per character. */
static inline int read_32_digits(const unsigned char *s, const unsigned char *position,
                                 uk_u128 *value)
{
    uint64_t high = 0, low = 0;
    unsigned seen = 0;
    for (int i = 0; i < 16; i++) {
        unsigned digit = uk_hex_digit[s[position[i]]];
        seen |= digit;
        high = (high << 4) | digit;
    }
    for (int i = 16; i < 32; i++) {
        unsigned digit = uk_hex_digit[s[position[i]]];
        seen |= digit;
        low = (low << 4) | digit;
    }
    value->hi = high;
    value->lo = low;
    return seen < UK_NOT_HEX;
}

static inline int read_canonical_digits(const unsigned char *s, uk_u128 *value)
{
    return read_32_digits(s, uk_digit_at, value);
}

static int read_bare(const unsigned char *s, uk_u128 *value)
{
    static const unsigned char in_order[32] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10,
                                               11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
                                               22, 23, 24, 25, 26, 27, 28, 29, 30, 31};
    return read_32_digits(s, in_order, value);
}
#endif

/* RFC 9562 §4: UUID = 4hexOctet "-" 2hexOctet "-" 2hexOctet "-" 2hexOctet "-" 6hexOctet */
static int read_canonical(const unsigned char *s, uk_u128 *value)
{
    if ((s[8] ^ '-') | (s[13] ^ '-') | (s[18] ^ '-') | (s[23] ^ '-')) {
        return 0;
    }
    return read_canonical_digits(s, value);
}

static int read_urn_prefix(const unsigned char *s)
{
    static const char prefix[] = "urn:uuid:";
    for (int i = 0; i < 9; i++) {
        unsigned char c = s[i];
        if (c >= 'A' && c <= 'Z') {
            c |= 0x20;
        }
        if (c != (unsigned char)prefix[i]) {
            return 0;
        }
    }
    return 1;
}

int uk_read_ascii(const unsigned char *s, Py_ssize_t length, int strict, uk_u128 *value);

/* The value of text in one accepted form; 0 when text is not one (or not plain ASCII). */
int uk_read_text(PyObject *text, int strict, uk_u128 *value)
{
    if (!PyUnicode_CheckExact(text)) {
        return 0;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(text) < 0) {
        PyErr_Clear();
        return 0;
    }
#endif
    if (!PyUnicode_IS_ASCII(text)) {
        return 0;
    }
    return uk_read_ascii(PyUnicode_1BYTE_DATA(text), PyUnicode_GET_LENGTH(text), strict, value);
}

/* The value of the length ASCII characters at s in one accepted form; 0 when not one. */
int uk_read_ascii(const unsigned char *s, Py_ssize_t length, int strict, uk_u128 *value)
{
    if (length == 36) {
        return read_canonical(s, value);
    }
    if (strict) {
        return 0;
    }
    if (length == 32) {
        return read_bare(s, value);
    }
    if (length == 38 && s[0] == '{' && s[37] == '}') {
        return read_canonical(s + 1, value);
    }
    if (length == 45 && read_urn_prefix(s)) {
        return read_canonical(s + 9, value);
    }
    return 0;
}

static PyObject *speedups_parse(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames)
{
    (void)module;
    int strict = 0;
    if (nargs != 1) {
        return uk_delegate(UK_FB_PARSE, args, nargs, kwnames);
    }
    if (kwnames != NULL) {
        /* Keyword names from Python code are interned: one pointer compare is the common
         * case; anything else is compared by value. */
        static PyObject *strict_name;
        if (strict_name == NULL && (strict_name = PyUnicode_InternFromString("strict")) == NULL) {
            return NULL;
        }
        PyObject *name = PyTuple_GET_SIZE(kwnames) == 1 ? PyTuple_GET_ITEM(kwnames, 0) : NULL;
        if (name == NULL ||
            (name != strict_name && PyUnicode_CompareWithASCIIString(name, "strict") != 0)) {
            return uk_delegate(UK_FB_PARSE, args, nargs, kwnames);
        }
        strict = PyObject_IsTrue(args[1]);
        if (strict < 0) {
            return NULL;
        }
    }
    uk_u128 value;
    if (uk_read_text(args[0], strict, &value)) {
        return uk_make_uuid(value);
    }
    return uk_delegate(UK_FB_PARSE, args, nargs, kwnames);
}

/* --- formatting ------------------------------------------------------------------------ */

/* The 36 characters of the 8-4-4-4-12 form of value at out. */
static void write_canonical(unsigned char *out, uk_u128 value, unsigned char (*pair)[2])
{
    for (int i = 0; i < 8; i++) {
        memcpy(out + uk_byte_at[i], pair[(value.hi >> (56 - 8 * i)) & 0xFF], 2);
        memcpy(out + uk_byte_at[8 + i], pair[(value.lo >> (56 - 8 * i)) & 0xFF], 2);
    }
    out[8] = out[13] = out[18] = out[23] = '-';
}

static PyObject *canonical_text(uk_u128 value, unsigned char (*pair)[2], const char *before,
                                const char *after)
{
    size_t before_length = strlen(before), after_length = strlen(after);
    PyObject *text = PyUnicode_New((Py_ssize_t)(36 + before_length + after_length), 127);
    if (text == NULL) {
        return NULL;
    }
    unsigned char *out = PyUnicode_1BYTE_DATA(text);
    memcpy(out, before, before_length);
    write_canonical(out + before_length, value, pair);
    memcpy(out + before_length + 36, after, after_length);
    return text;
}

static PyObject *hex_text(uk_u128 value)
{
    PyObject *text = PyUnicode_New(32, 127);
    if (text == NULL) {
        return NULL;
    }
    unsigned char *out = PyUnicode_1BYTE_DATA(text);
    for (int i = 0; i < 8; i++) {
        memcpy(out + 2 * i, uk_lower_pair[(value.hi >> (56 - 8 * i)) & 0xFF], 2);
        memcpy(out + 16 + 2 * i, uk_lower_pair[(value.lo >> (56 - 8 * i)) & 0xFF], 2);
    }
    return text;
}

static PyObject *octets(uk_u128 value, int guid_order)
{
    unsigned char bytes[16];
    uk_store_u128(bytes, value);
    if (guid_order) { /* RFC 9562 §4: Microsoft's first three fields little-endian */
        unsigned char swapped[8] = {bytes[3], bytes[2], bytes[1], bytes[0],
                                    bytes[5], bytes[4], bytes[7], bytes[6]};
        memcpy(bytes, swapped, 8);
    }
    return PyBytes_FromStringAndSize((const char *)bytes, 16);
}

enum style { STYLE_HYPHENATED, STYLE_UPPER, STYLE_URN, STYLE_BRACED, STYLE_HEX };

static PyObject *formatted(uk_u128 value, enum style style)
{
    switch (style) {
    case STYLE_UPPER:
        return canonical_text(value, upper_pair, "", "");
    case STYLE_URN:
        return canonical_text(value, uk_lower_pair, "urn:uuid:", "");
    case STYLE_BRACED:
        return canonical_text(value, uk_lower_pair, "{", "}");
    case STYLE_HEX:
        return hex_text(value);
    case STYLE_HYPHENATED:
    default:
        return canonical_text(value, uk_lower_pair, "", "");
    }
}

#define ONE_ARGUMENT_FORMATTER(NAME, FALLBACK, EXPRESSION)                                    \
    static PyObject *speedups_##NAME(PyObject *module, PyObject *u)                           \
    {                                                                                         \
        uk_u128 value;                                                                        \
        (void)module;                                                                         \
        if (!uk_read_exact(u, &value)) {                                                      \
            return uk_delegate(FALLBACK, &u, 1, NULL);                                        \
        }                                                                                     \
        return EXPRESSION;                                                                    \
    }

ONE_ARGUMENT_FORMATTER(to_hyphenated, UK_FB_TO_HYPHENATED, formatted(value, STYLE_HYPHENATED))
ONE_ARGUMENT_FORMATTER(to_upper, UK_FB_TO_UPPER, formatted(value, STYLE_UPPER))
ONE_ARGUMENT_FORMATTER(to_urn, UK_FB_TO_URN, formatted(value, STYLE_URN))
ONE_ARGUMENT_FORMATTER(to_braced, UK_FB_TO_BRACED, formatted(value, STYLE_BRACED))
ONE_ARGUMENT_FORMATTER(to_hex, UK_FB_TO_HEX, formatted(value, STYLE_HEX))
ONE_ARGUMENT_FORMATTER(to_bytes, UK_FB_TO_BYTES, octets(value, 0))
ONE_ARGUMENT_FORMATTER(to_bytes_le, UK_FB_TO_BYTES_LE, octets(value, 1))

static int style_of(PyObject *name, enum style *style)
{
    static const char *const names[] = {"hyphenated", "upper", "urn", "braced", "hex"};
    if (!PyUnicode_CheckExact(name)) {
        return 0;
    }
    for (int i = 0; i < 5; i++) {
        if (PyUnicode_CompareWithASCIIString(name, names[i]) == 0) {
            *style = (enum style)i;
            return 1;
        }
    }
    return 0;
}

static PyObject *speedups_format_uuid(PyObject *module, PyObject *const *args,
                                      Py_ssize_t nargs, PyObject *kwnames)
{
    (void)module;
    uk_u128 value;
    enum style style = STYLE_HYPHENATED;
    if (kwnames != NULL || nargs < 1 || nargs > 2 || !uk_read_exact(args[0], &value) ||
        (nargs == 2 && !style_of(args[1], &style))) {
        return uk_delegate(UK_FB_FORMAT_UUID, args, nargs, kwnames);
    }
    return formatted(value, style);
}

/* --- fields() and timestamps ----------------------------------------------------------- */

#define MAX_RECORD_FIELDS 5
/* The record classes of versions 1-8 (uuidkit._record.Record: tuple subclasses); index 0 and
   2 unused (v2 and the rest go to the Python twin). tuple_made: the class is a tuple
   subclass, filled as tuple.__new__ fills one (as Record._make does, skipping the argument
   checks of its __new__); otherwise the class is called with the values. */
typedef struct {
    PyTypeObject *cls;
    Py_ssize_t count;
    int tuple_made;
} record_layout;

static record_layout records[9];

static int bind_record(record_layout *layout, PyObject *cls)
{
    if (!PyType_Check(cls)) {
        PyErr_SetString(PyExc_TypeError, "bind_records: expected classes");
        return -1;
    }
    PyObject *names = PyObject_GetAttrString(cls, "__match_args__");
    if (names == NULL) {
        return -1;
    }
    if (!PyTuple_Check(names) || PyTuple_GET_SIZE(names) > MAX_RECORD_FIELDS) {
        Py_DECREF(names);
        PyErr_SetString(PyExc_TypeError, "bind_records: __match_args__ must be a short tuple");
        return -1;
    }
    layout->count = PyTuple_GET_SIZE(names);
    Py_DECREF(names);
    layout->tuple_made = PyType_IsSubtype((PyTypeObject *)cls, &PyTuple_Type);
    Py_INCREF(cls);
    Py_XSETREF(layout->cls, (PyTypeObject *)cls);
    return 0;
}

PyObject *uk_bind_records(PyObject *module, PyObject *args)
{
    static const int versions[7] = {1, 3, 4, 5, 6, 7, 8};
    (void)module;
    if (!PyTuple_Check(args) || PyTuple_GET_SIZE(args) != 7) {
        PyErr_SetString(PyExc_TypeError, "bind_records: expected 7 classes (v1, v3-v8)");
        return NULL;
    }
    for (int i = 0; i < 7; i++) {
        if (bind_record(&records[versions[i]], PyTuple_GET_ITEM(args, i)) < 0) {
            return NULL;
        }
    }
    Py_RETURN_NONE;
}

static PyObject *make_record(const record_layout *layout, const uint64_t *values)
{
    PyObject *numbers[MAX_RECORD_FIELDS];
    for (Py_ssize_t i = 0; i < layout->count; i++) {
        numbers[i] = PyLong_FromUnsignedLongLong(values[i]);
        if (numbers[i] == NULL) {
            for (Py_ssize_t j = 0; j < i; j++) {
                Py_DECREF(numbers[j]);
            }
            return NULL;
        }
    }
    if (!layout->tuple_made) {
        PyObject *record = PyObject_Vectorcall((PyObject *)layout->cls, numbers,
                                               (size_t)layout->count, NULL);
        for (Py_ssize_t i = 0; i < layout->count; i++) {
            Py_DECREF(numbers[i]);
        }
        return record;
    }
    /* What tuple.__new__(cls, numbers) does for a subclass, without the temporary tuple. */
    PyObject *record = layout->cls->tp_alloc(layout->cls, layout->count);
    if (record == NULL) {
        for (Py_ssize_t i = 0; i < layout->count; i++) {
            Py_DECREF(numbers[i]);
        }
        return NULL;
    }
#if PY_VERSION_HEX >= 0x030E0000
    ((PyTupleObject *)record)->ob_hash = -1; /* the tuple's hash cache: not computed yet */
#endif
    for (Py_ssize_t i = 0; i < layout->count; i++) { /* references move into the tuple */
        PyTuple_SET_ITEM(record, i, numbers[i]);
    }
    if (PyObject_GC_IsTracked(record)) {
        PyObject_GC_UnTrack(record); /* ints only: cannot be part of a cycle */
    }
    return record;
}

#define MASK(bits) ((((uint64_t)1) << (bits)) - 1)

/* Version of an RFC 9562-variant value; -1 for the other variants. */
static int rfc_version(uk_u128 value)
{
    return (value.lo >> 62) == 2 ? (int)((value.hi >> 12) & 0xF) : -1;
}

/* fields(u, *, layout=None): a call with any keyword (layout=...) or another number of
   arguments is the Python twin's, which reads the node-bearing layouts and words every error. */
static PyObject *speedups_fields(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames)
{
    (void)module;
    uk_u128 value;
    int version = -1;
    if (nargs == 1 && kwnames == NULL && uk_read_exact(args[0], &value)) {
        version = rfc_version(value);
    }
    if (version < 1 || version > 8 || version == 2 || records[version].cls == NULL) {
        return uk_delegate(UK_FB_FIELDS, args, nargs, kwnames);
    }
    uint64_t high48 = value.hi >> 16, mid12 = value.hi & MASK(12), low62 = value.lo & MASK(62);
    uint64_t numbers[MAX_RECORD_FIELDS] = {high48, mid12, low62, 0, 0};
    if (version == 1 || version == 6) {
        /* RFC 9562 §5.1 / §5.6: 32 + 16 time bits, 12 time bits, clock_seq, node */
        numbers[0] = high48 >> 16;
        numbers[1] = high48 & MASK(16);
        numbers[2] = mid12;
        numbers[3] = low62 >> 48;
        numbers[4] = low62 & MASK(48);
    }
    return make_record(&records[version], numbers);
}

/* RFC 9562 §5.1: 100 ns intervals between 1582-10-15 and 1970-01-01. */
#define GREGORIAN_OFFSET_100NS 0x01B21DD213814000LL

/* The embedded time of a v1, v6 or v7 value in ns since the Unix epoch: 1 and sets *ns, or 0
   for every other value (which the Python twins decide). RFC 9562 §5.1, §5.6, §5.7. */
int uk_time_ns(PyObject *u, long long *ns)
{
    uk_u128 value;
    if (!uk_read_exact(u, &value)) {
        return 0;
    }
    int version = rfc_version(value);
    uint64_t high48 = value.hi >> 16, mid12 = value.hi & MASK(12);
    if (version == 7) {
        return !__builtin_mul_overflow((long long)high48, (long long)UK_NS_PER_MS, ns);
    }
    if (version == 1 || version == 6) {
        uint64_t ticks = version == 1 ? (mid12 << 48) | ((high48 & MASK(16)) << 32) |
                                            (high48 >> 16)
                                      : (high48 << 12) | mid12;
        return !__builtin_mul_overflow((long long)ticks - GREGORIAN_OFFSET_100NS, 100LL, ns);
    }
    return 0;
}

static PyObject *speedups_timestamp_ns(PyObject *module, PyObject *u)
{
    (void)module;
    long long result;
    if (!uk_time_ns(u, &result)) {
        return uk_delegate(UK_FB_TIMESTAMP_NS, &u, 1, NULL);
    }
    return PyLong_FromLongLong(result);
}

PyMethodDef uk_text_methods[] = {
    {"parse", (PyCFunction)(void (*)(void))speedups_parse, METH_FASTCALL | METH_KEYWORDS,
     "parse(text, *, strict=False) -> UUID: the UUID written in text.\n\n"
     "References: RFC 9562 §4."},
    {"format_uuid", (PyCFunction)(void (*)(void))speedups_format_uuid,
     METH_FASTCALL | METH_KEYWORDS,
     "format_uuid(u, style='hyphenated') -> str: u as text in style.\n\n"
     "References: RFC 9562 §4."},
    {"to_hyphenated", speedups_to_hyphenated, METH_O,
     "The lower-case 8-4-4-4-12 form.\n\nReferences: RFC 9562 §4 (Figure 1)."},
    {"to_upper", speedups_to_upper, METH_O,
     "The upper-case 8-4-4-4-12 form.\n\nReferences: RFC 9562 §4."},
    {"to_urn", speedups_to_urn, METH_O,
     "urn:uuid: and the 8-4-4-4-12 form.\n\nReferences: RFC 9562 §4 (Figure 4), RFC 8141."},
    {"to_braced", speedups_to_braced, METH_O,
     "The 8-4-4-4-12 form in braces.\n\nReferences: RFC 9562 §4."},
    {"to_hex", speedups_to_hex, METH_O, "32 lower-case hex digits.\n\nReferences: RFC 9562 §4."},
    {"to_bytes", speedups_to_bytes, METH_O,
     "The 16 octets in network byte order.\n\nReferences: RFC 9562 §4."},
    {"to_bytes_le", speedups_to_bytes_le, METH_O,
     "The 16 octets in Microsoft GUID order.\n\nReferences: RFC 9562 §4."},
    {"fields", (PyCFunction)(void (*)(void))speedups_fields, METH_FASTCALL | METH_KEYWORDS,
     "fields(u, *, layout=None): every field of u under the RFC's names; with layout, the "
     "fields of that node-bearing layout.\n\nReferences: RFC 9562 §5.1-§5.10, §6.4."},
    {"timestamp_datetime", uk_timestamp_datetime, METH_O,
     "timestamp_datetime(u): the embedded time as an aware UTC datetime, or None.\n\n"
     "References: RFC 9562 §5.1, §5.6, §5.7, §6.1."},
    {"timestamp_ns", speedups_timestamp_ns, METH_O,
     "timestamp_ns(u): the embedded time in nanoseconds since the Unix epoch, or None.\n\n"
     "References: RFC 9562 §5.1, §5.6, §5.7."},
    {NULL, NULL, 0, NULL},
};
