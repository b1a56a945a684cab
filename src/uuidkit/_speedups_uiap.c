/* uuidkit._speedups: uiap_decode, the compiled twin of uuidkit.uiap.codec.decode.
 *
 * A datagram is untrusted network input. The whole header and both UIDs are validated on
 * the octets first (every read inside the buffer: the length is checked before any field
 * is read), and only a datagram that passes every check of the pure decoder becomes a
 * Message. Anything else goes to the pure twin unchanged: a malformed datagram (which the
 * twin rejects with its DecodeError, naming the field and offset), another argument type
 * (bytearray, memoryview, a bytes subclass), or a domains mapping. So the errors are the
 * twin's own, by construction, and the compiled path only ever returns what the twin would.
 *
 * The Message, UIDSpace and UID objects are made as the pure decoder's _unchecked
 * constructors make them: object.__new__ of the class, then each slot set. Here that is the
 * class's tp_alloc and a store at each slot's offset, found at bind time from the member
 * descriptors that dataclass(slots=True) creates; a class of any other layout is not bound
 * and the pure decoder stays in use. The Domain ID is the codec's own cached
 * DomainID.from_wire, called with the 8 octets, so both paths share one bounded cache.
 *
 * State: the bound classes, enum members and the cache function are set once, by the first
 * bind_uiap; a later call with other objects is refused. Nothing else is shared, so the
 * decoder needs no lock on a free-threaded build (the bytes it reads are immutable).
 *
 * References: UIAP §2.2, §3.2.1.1, §3.2.2, §3.2.3, §4.1, §4.1.1.
 */
#include "_speedups.h"

#include <string.h>

/* UIAP §4.1: "This is version 0x01"; the fixed header is nine 32-bit rows (36 octets). */
#define UIAP_VERSION 0x01
#define HEADER_OCTETS 36
#define OFFSET_LIFETIME 4
#define OFFSET_DEVICE_ID 8
#define OFFSET_SEQUENCE 16
#define OFFSET_CLAIM_REFERENCE 20
#define OFFSET_DOMAIN_ID 24
#define OFFSET_DOMAIN_FLAGS 31
#define OFFSET_FORMAT 33
#define OFFSET_UID_LEN 34
#define OFFSET_UID_LEN2 35
/* Octet 1: Type (high 4 bits), 0 0, X, R (UIAP §4.1). */
#define TYPE_SHIFT 4
#define X_BIT 0x02
#define R_BIT 0x01
/* Octet 33: BA (3 bits), BA2 (3 bits), Fmt (2 bits) (UIAP §4.1). */
#define BA_SHIFT 5
#define BA2_SHIFT 2
#define THREE_BITS 0x07
#define FMT_MASK 0x03
/* The flags octet of the Domain ID: J is its most significant bit (UIAP §4.1). */
#define J_FLAG 0x80
#define FULL_OCTET_BITS 8

enum { FMT_UNIQUE, FMT_PREFIX, FMT_RANGE, FMT_COUNT };
enum { TYPE_COUNT = 2 }; /* UIAP §4.1.1: Claim-Attempt (0), Claim-Deny (1) */

/* A class made with dataclass(slots=True) and the offsets of the named slots. */
#define MAX_FIELDS 11
typedef struct {
    PyTypeObject *type;
    Py_ssize_t offset[MAX_FIELDS];
} slot_class;

static const char *const message_fields[] = {
    "type", "device_id", "sequence", "domain", "space", "lifetime",
    "hop_limit", "claim_reference", "proxy", "reclaim", "version",
};
enum {
    M_TYPE, M_DEVICE_ID, M_SEQUENCE, M_DOMAIN, M_SPACE, M_LIFETIME,
    M_HOP_LIMIT, M_CLAIM_REFERENCE, M_PROXY, M_RECLAIM, M_VERSION, M_COUNT
};
static const char *const space_fields[] = {"fmt", "first", "second"};
enum { S_FMT, S_FIRST, S_SECOND, S_COUNT };
static const char *const uid_fields[] = {"data", "bits"};
enum { U_DATA, U_BITS, U_COUNT };

/* Set once by bind_uiap (see the file comment); read-only afterwards. */
static slot_class message_class, space_class, uid_class;
static PyObject *message_types[TYPE_COUNT];
static PyObject *formats[FMT_COUNT];
static PyObject *domain_from_wire;
static PyObject *domains_keyword;
static int bound;

/* One UID of a datagram: where its octets are and its significant bits (1 to 8). */
typedef struct {
    Py_ssize_t start;
    Py_ssize_t length;
    int bits;
} wire_uid;

/* Whether the octets of a UID satisfy BA (UIAP §4.1, §3.2.3); then *bits is set. */
static int read_uid(const unsigned char *octets, Py_ssize_t start, Py_ssize_t length, int ba,
                    int right_justified, wire_uid *uid)
{
    uid->start = start;
    uid->length = length;
    if (ba == 0) {
        /* BA 0: every bit of every octet is significant (UIAP §4.1). */
        uid->bits = FULL_OCTET_BITS;
        return 1;
    }
    if (length == 0) {
        return 0; /* a BA with no octet to qualify: the twin names it */
    }
    /* UIAP §3.2.3: "Insignificant bits in the last octet MUST be set 0"; the partial octet
       is on the unjustified side (§3.2.1.1): the last if left-, the first if right-justified. */
    unsigned partial = right_justified
                           ? (unsigned)octets[start] >> ba
                           : (unsigned)octets[start + length - 1] & ((1u << (8 - ba)) - 1u);
    uid->bits = ba;
    return partial == 0;
}

/* The fields of a valid datagram, read from its octets. */
typedef struct {
    int type;
    int fmt;
    wire_uid first;
    wire_uid second;
} wire_message;

/* Whether octets[0:length] is a datagram the pure decoder accepts; every check of
   codec.decode in its order, reading only inside the buffer. */
static int read_datagram(const unsigned char *octets, Py_ssize_t length, wire_message *message)
{
    /* The Version first (a future version may have another layout), then the length. */
    if (length < HEADER_OCTETS || octets[0] != UIAP_VERSION) {
        return 0;
    }
    message->type = octets[1] >> TYPE_SHIFT;
    if (message->type >= TYPE_COUNT) {
        return 0;
    }
    /* UIAP §4.1: device ID 0 "MUST NOT appear in a message". */
    if (uk_load_be64(octets + OFFSET_DEVICE_ID) == 0) {
        return 0;
    }
    int format_byte = octets[OFFSET_FORMAT];
    int right_justified = (octets[OFFSET_DOMAIN_FLAGS] & J_FLAG) != 0;
    message->fmt = format_byte & FMT_MASK;
    if (message->fmt >= FMT_COUNT) {
        return 0; /* Fmt 3 is undefined (UIAP §4.1) */
    }
    if (message->fmt == FMT_PREFIX && right_justified) {
        return 0; /* UIAP §3.2.2: prefixes only in "left justified" spaces */
    }
    Py_ssize_t uid_len = octets[OFFSET_UID_LEN];
    /* UID Len 2: "If not a range, ... ignored by receiver" (UIAP §4.1). */
    Py_ssize_t uid_len2 = message->fmt == FMT_RANGE ? octets[OFFSET_UID_LEN2] : 0;
    Py_ssize_t first_end = HEADER_OCTETS + uid_len;
    if (length != first_end + uid_len2) {
        return 0; /* truncated or over-long: both UIDs end exactly at the datagram's end */
    }
    if (!read_uid(octets, HEADER_OCTETS, uid_len, format_byte >> BA_SHIFT, right_justified,
                  &message->first)) {
        return 0;
    }
    if (message->fmt != FMT_RANGE) {
        return 1;
    }
    return read_uid(octets, first_end, uid_len2, (format_byte >> BA2_SHIFT) & THREE_BITS,
                    right_justified, &message->second);
}

/* An instance of a bound class with every slot empty, as object.__new__(cls) makes it. */
static PyObject *new_instance(const slot_class *cls)
{
    return cls->type->tp_alloc(cls->type, 0);
}

/* Store value (a new reference, stolen) in a slot of a fresh instance; -1 if value is NULL. */
static int set_slot(PyObject *object, const slot_class *cls, int field, PyObject *value)
{
    if (value == NULL) {
        return -1;
    }
    *(PyObject **)((char *)object + cls->offset[field]) = value;
    return 0;
}

static PyObject *new_uid(const unsigned char *octets, const wire_uid *wire)
{
    PyObject *uid = new_instance(&uid_class);
    if (uid == NULL) {
        return NULL;
    }
    PyObject *data = PyBytes_FromStringAndSize((const char *)octets + wire->start, wire->length);
    if (set_slot(uid, &uid_class, U_DATA, data) < 0 ||
        set_slot(uid, &uid_class, U_BITS, PyLong_FromLong(wire->bits)) < 0) {
        Py_DECREF(uid);
        return NULL;
    }
    return uid;
}

static PyObject *new_space(const unsigned char *octets, const wire_message *wire)
{
    PyObject *space = new_instance(&space_class);
    if (space == NULL) {
        return NULL;
    }
    if (set_slot(space, &space_class, S_FMT, Py_NewRef(formats[wire->fmt])) < 0 ||
        set_slot(space, &space_class, S_FIRST, new_uid(octets, &wire->first)) < 0 ||
        set_slot(space, &space_class, S_SECOND,
                 wire->fmt == FMT_RANGE ? new_uid(octets, &wire->second) : Py_NewRef(Py_None)) <
            0) {
        Py_DECREF(space);
        return NULL;
    }
    return space;
}

static PyObject *unsigned_at(const unsigned char *octets, Py_ssize_t offset)
{
    uint32_t value = ((uint32_t)octets[offset] << 24) | ((uint32_t)octets[offset + 1] << 16) |
                     ((uint32_t)octets[offset + 2] << 8) | (uint32_t)octets[offset + 3];
    return PyLong_FromUnsignedLong(value);
}

/* The Message of a datagram that read_datagram accepted, as codec.decode builds it. */
static PyObject *new_message(PyObject *data, const wire_message *wire)
{
    const unsigned char *octets = (const unsigned char *)PyBytes_AS_STRING(data);
    PyObject *domain_octets =
        PyBytes_FromStringAndSize((const char *)octets + OFFSET_DOMAIN_ID, 8);
    if (domain_octets == NULL) {
        return NULL;
    }
    PyObject *domain = PyObject_CallOneArg(domain_from_wire, domain_octets);
    Py_DECREF(domain_octets);
    if (domain == NULL) {
        return NULL;
    }
    PyObject *message = new_instance(&message_class);
    if (message == NULL) {
        Py_DECREF(domain);
        return NULL;
    }
    const slot_class *cls = &message_class;
    if (set_slot(message, cls, M_DOMAIN, domain) < 0 ||
        set_slot(message, cls, M_TYPE, Py_NewRef(message_types[wire->type])) < 0 ||
        set_slot(message, cls, M_DEVICE_ID,
                 PyLong_FromUnsignedLongLong(uk_load_be64(octets + OFFSET_DEVICE_ID))) < 0 ||
        set_slot(message, cls, M_SEQUENCE, unsigned_at(octets, OFFSET_SEQUENCE)) < 0 ||
        set_slot(message, cls, M_SPACE, new_space(octets, wire)) < 0 ||
        set_slot(message, cls, M_LIFETIME, unsigned_at(octets, OFFSET_LIFETIME)) < 0 ||
        set_slot(message, cls, M_HOP_LIMIT, PyLong_FromLong(octets[3])) < 0 ||
        set_slot(message, cls, M_CLAIM_REFERENCE, unsigned_at(octets, OFFSET_CLAIM_REFERENCE)) <
            0 ||
        set_slot(message, cls, M_PROXY, PyBool_FromLong(octets[1] & X_BIT)) < 0 ||
        set_slot(message, cls, M_RECLAIM, PyBool_FromLong(octets[1] & R_BIT)) < 0 ||
        set_slot(message, cls, M_VERSION, PyLong_FromLong(octets[0])) < 0) {
        Py_DECREF(message);
        return NULL;
    }
    return message;
}

/* Whether the keywords leave the fast path open: none, or domains=None. */
static int plain_keywords(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (kwnames == NULL || PyTuple_GET_SIZE(kwnames) == 0) {
        return 1;
    }
    if (PyTuple_GET_SIZE(kwnames) != 1 || args[nargs] != Py_None) {
        return 0;
    }
    PyObject *name = PyTuple_GET_ITEM(kwnames, 0);
    return name == domains_keyword ||
           (PyUnicode_Check(name) && PyUnicode_Compare(name, domains_keyword) == 0);
}

/* uiap_decode(data, *, domains=None): see codec.decode, the twin. */
static PyObject *uiap_decode(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames)
{
    (void)module;
    wire_message wire;
    if (!bound || nargs != 1 || !plain_keywords(args, nargs, kwnames) ||
        !PyBytes_CheckExact(args[0]) ||
        !read_datagram((const unsigned char *)PyBytes_AS_STRING(args[0]),
                       PyBytes_GET_SIZE(args[0]), &wire)) {
        return uk_delegate(UK_FB_UIAP_DECODE, args, nargs, kwnames);
    }
    return new_message(args[0], &wire);
}

/* Whether cls is a class whose instances object.__new__ makes with every listed slot at a
   known offset, and nothing else to set up (no instance dict); then *out describes it. */
static int bind_class(PyObject *cls, const char *const *names, int count, slot_class *out)
{
    if (!PyType_Check(cls)) {
        return 0;
    }
    PyTypeObject *type = (PyTypeObject *)cls;
    if (type->tp_new != PyBaseObject_Type.tp_new || type->tp_alloc != PyType_GenericAlloc ||
        type->tp_itemsize != 0 || type->tp_dictoffset != 0) {
        return 0;
    }
#ifdef Py_TPFLAGS_MANAGED_DICT
    if (PyType_HasFeature(type, Py_TPFLAGS_MANAGED_DICT)) {
        return 0;
    }
#endif
    for (int i = 0; i < count; i++) {
        out->offset[i] = uk_object_slot_offset(type, names[i]);
        if (out->offset[i] < 0) {
            return 0;
        }
    }
    out->type = type;
    return 1;
}

/* Whether members is a tuple of count enum members whose values are 0, 1, ... in order. */
static int members_in_order(PyObject *members, Py_ssize_t count)
{
    if (!PyTuple_Check(members) || PyTuple_GET_SIZE(members) != count) {
        return 0;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *member = PyTuple_GET_ITEM(members, i);
        if (!PyLong_Check(member) || PyLong_AsLong(member) != i) {
            PyErr_Clear();
            return 0;
        }
    }
    return 1;
}

/* bind_uiap(Message, UIDSpace, UID, message_types, formats, domain_from_wire) -> bool */
static PyObject *bind_uiap(PyObject *module, PyObject *args)
{
    PyObject *message, *space, *uid, *types, *fmts, *from_wire;
    (void)module;
    if (!PyArg_ParseTuple(args, "OOOOOO:bind_uiap", &message, &space, &uid, &types, &fmts,
                          &from_wire)) {
        return NULL;
    }
    if (bound) {
        /* Bound once for the process: the same objects again are accepted, others refused,
           so what a running decoder reads never changes. */
        int same = (PyObject *)message_class.type == message &&
                   (PyObject *)space_class.type == space && (PyObject *)uid_class.type == uid &&
                   domain_from_wire == from_wire;
        return PyBool_FromLong(same);
    }
    slot_class new_message_class, new_space_class, new_uid_class;
    if (!bind_class(message, message_fields, M_COUNT, &new_message_class) ||
        !bind_class(space, space_fields, S_COUNT, &new_space_class) ||
        !bind_class(uid, uid_fields, U_COUNT, &new_uid_class) ||
        !members_in_order(types, TYPE_COUNT) || !members_in_order(fmts, FMT_COUNT) ||
        !PyCallable_Check(from_wire)) {
        Py_RETURN_FALSE;
    }
    domains_keyword = PyUnicode_InternFromString("domains");
    if (domains_keyword == NULL) {
        return NULL;
    }
    message_class = new_message_class;
    space_class = new_space_class;
    uid_class = new_uid_class;
    Py_INCREF(message_class.type);
    Py_INCREF(space_class.type);
    Py_INCREF(uid_class.type);
    for (int i = 0; i < TYPE_COUNT; i++) {
        message_types[i] = Py_NewRef(PyTuple_GET_ITEM(types, i));
    }
    for (int i = 0; i < FMT_COUNT; i++) {
        formats[i] = Py_NewRef(PyTuple_GET_ITEM(fmts, i));
    }
    domain_from_wire = Py_NewRef(from_wire);
    bound = 1;
    Py_RETURN_TRUE;
}

PyMethodDef uk_uiap_methods[] = {
    {"uiap_decode", (PyCFunction)(void (*)(void))uiap_decode, METH_FASTCALL | METH_KEYWORDS,
     "uiap_decode(data, *, domains=None) -> Message: uuidkit.uiap.codec.decode, compiled.\n\n"
     "References: UIAP §4.1."},
    {"bind_uiap", bind_uiap, METH_VARARGS,
     "bind_uiap(Message, UIDSpace, UID, message_types, formats, domain_from_wire) -> bool: "
     "the classes uiap_decode makes; False (the pure decoder stays) for another layout."},
    {NULL, NULL, 0, NULL},
};
