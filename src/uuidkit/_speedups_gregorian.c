/* uuidkit._speedups.GregorianCore: the compiled hot path of the UUIDv1/v6 generators.
 *
 * A core holds the state of one generator (the Timeline's tick, clock_tick and pending
 * flag; the index within the clock interval; the last 60-bit timestamp; clock_seq, node)
 * as attributes of the names the Python engine (generators/_gregorian_engine.py) uses, so
 * its slow path works on the core directly. The core does the common case: a later clock
 * interval, the same one with timestamps left (RFC 4122 §4.2.1.2), a reading behind an
 * ADVANCEd tick that is no regression, an exhausted interval under ADVANCE within the
 * run-ahead bound or under WAIT by spinning briefly on the system clock. Every other case
 * goes to the slow path unchanged: nothing is committed before the core knows it can
 * finish, and a reading taken under the lock is passed on.
 *
 * Interlock: with the system clock the fast path takes no lock; it runs under the GIL and
 * calls no Python code between reading the clock and committing (objects are allocated
 * afterwards). The slow path takes the lock, then sets busy before reading the state;
 * while busy is set the fast path calls the slow path, which waits for the lock. With an
 * injected clock (a Python call may switch threads) the core takes the lock itself. On a
 * free-threaded build (PEP 703) the fast path runs inside the core's critical section, and
 * so do the writes of busy and the slow path's word draws: once busy is set, no fast path is
 * under way or can start, as with the GIL.
 *
 * Randomness (v6's per-UUID fields): 512-word blocks from getrandom(2), or from the
 * injected source read as the pure path reads it. reset(), called by the Python fork hook,
 * discards them; a fork that bypassed the hooks is counted by pthread_atfork and sends the
 * next call to the slow path, which resets first (RFC 9562 §6.9).
 *
 * Its policy and bound are the Timeline's own (GregorianEngine builds the core from
 * Timeline.overflow_policy and Timeline.ahead_ticks), and a table test compares each of its
 * decisions (decide()) with the Timeline's.
 *
 * References: RFC 9562 §5.1, §5.6, §6.1, §6.2, §6.9, §6.10; RFC 4122 §4.2.1.
 */
#include "_speedups.h"

#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <structmember.h>
#include <time.h>

#define WORDS 512
#define GREGORIAN_OFFSET 0x01B21DD213814000LL /* 1582-10-15 to 1970-01-01, 100 ns */
#define MASK_48 0xFFFFFFFFFFFFULL
#define MULTICAST_BIT (1ULL << 40)
#define VARIANT_BITS (2ULL << 62)

enum { OVERFLOW_WAIT = 0, OVERFLOW_ADVANCE = 1, OVERFLOW_RAISE = 2 };

/* Forks seen by pthread_atfork; a core made or reset before the last one is stale. */
static volatile unsigned long forks_seen;

static void count_fork_in_child(void)
{
    forks_seen++;
}

typedef struct {
    PyObject_HEAD
    /* State, shared with the Python slow path (same names as GregorianState). */
    long long tick, clock_tick, index, last, clock_seq, node, limit;
    char pending, busy;
    /* Configuration. */
    int version, per_uuid, overflow, spin;
    long long budget, resolution, fast_max, ahead;
    PyObject *clock;    /* NULL: the system clock, read here */
    PyObject *refill;   /* NULL: getrandom; else () -> bytes of native 64-bit words */
    PyObject *slow;     /* (now_ns | None) -> int: any case, under the lock */
    PyObject *explicit; /* (node=None, clock_seq=None) -> UUID */
    PyObject *lock, *acquire, *release;
    PyObject *weakrefs;
    unsigned long generation;
    int word_count, word_position;
    uint64_t words[WORDS];
} core_object;

/* --- clocks ---------------------------------------------------------------------------- */

static long long read_ns(clockid_t which)
{
    struct timespec now;
    if (clock_gettime(which, &now) != 0) {
        return -1;
    }
    return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

/* WAIT: spin on the system clock until it reaches an interval after the current tick.
   0 when it has not within the core's spin bound (the slow path then waits with sleeps). */
static int spin_to_next_interval(core_object *core, long long *interval)
{
    long long deadline = read_ns(CLOCK_MONOTONIC) + 2 * core->resolution + 1000;
    for (;;) {
        long long now_ns = read_ns(CLOCK_REALTIME);
        if (now_ns >= 0 && now_ns / core->resolution > core->tick) {
            *interval = now_ns / core->resolution;
            return 1;
        }
        if (read_ns(CLOCK_MONOTONIC) > deadline) {
            return 0;
        }
    }
}

/* --- the step ------------------------------------------------------------------------- */

/* The next 60-bit timestamp for the clock interval now (>= 0), committed to the state; or
   -1, with nothing changed, when the case is the slow path's. Mirrors
   GregorianEngine.advance and Timeline.reading/overflow for the cases it takes. */
static long long step(core_object *core, long long now, int may_spin)
{
    long long tick = core->tick, clock_tick = core->clock_tick, index;
    if (core->pending) {
        return -1;
    }
    if (now > tick) { /* NEW at the clock: now > tick >= clock_tick */
        if (now > core->limit) {
            return -1; /* above the Timeline's trust_tick: checked by its screen */
        }
        tick = clock_tick = now;
        index = 0;
    }
    else if (now == tick || now >= clock_tick) { /* SAME; behind an ADVANCEd tick */
        if (now != tick) {
            clock_tick = now;
        }
        index = core->index + 1;
        if (index >= core->budget) { /* every timestamp of the interval is used */
            if (core->overflow == OVERFLOW_ADVANCE) {
                long long reference = now > clock_tick ? now : clock_tick;
                if (tick + 1 - reference > core->ahead) {
                    return -1; /* beyond the run-ahead bound: the slow path raises */
                }
                tick += 1;
            }
            else if (core->overflow == OVERFLOW_WAIT && may_spin && core->spin) {
                long long later;
                if (!spin_to_next_interval(core, &later)) {
                    return -1;
                }
                tick = later;
                if (later > clock_tick) {
                    clock_tick = later;
                }
            }
            else {
                return -1;
            }
            index = 0;
        }
    }
    else {
        return -1; /* a regression: the Timeline decides */
    }
    if (tick > core->fast_max) {
        return -1; /* at the end of the 60-bit field: the slow path raises */
    }
    long long stamp = tick * core->budget + GREGORIAN_OFFSET + index;
    if (stamp <= core->last) {
        return -1; /* RFC 9562 §6.2 Monotonic Error Checking: the slow path raises */
    }
    core->tick = tick;
    core->clock_tick = clock_tick;
    core->index = index;
    core->last = stamp;
    return stamp;
}

/* --- random words ---------------------------------------------------------------------- */

static int refill_words(core_object *core)
{
    if (core->refill == NULL) {
        if (uk_random((unsigned char *)core->words, sizeof core->words) < 0) {
            return -1;
        }
        core->word_count = WORDS;
        core->word_position = 0;
        return 0;
    }
    PyObject *block = PyObject_CallNoArgs(core->refill);
    if (block == NULL) {
        return -1;
    }
    if (!PyBytes_Check(block)) {
        Py_DECREF(block);
        PyErr_SetString(PyExc_TypeError, "GregorianCore: refill must return bytes");
        return -1;
    }
    Py_ssize_t count = PyBytes_GET_SIZE(block) / 8;
    if (count > WORDS) {
        count = WORDS;
    }
    if (count == 0) {
        Py_DECREF(block);
        PyErr_SetNone(PyExc_StopIteration); /* what the pure path's next() raises */
        return -1;
    }
    memcpy(core->words, PyBytes_AS_STRING(block), (size_t)count * 8);
    Py_DECREF(block);
    core->word_count = (int)count;
    core->word_position = 0;
    return 0;
}

static int have_word(core_object *core)
{
    return core->word_position < core->word_count ? 0 : refill_words(core);
}

/* --- values ---------------------------------------------------------------------------- */

/* RFC 9562 §5.1 (v1: time_low, time_mid, ver, time_high) and §5.6 (v6: time_high,
   time_mid, ver, time_low); clock_seq and node, or a fresh word's bits (§5.6, §6.10). */
static uk_u128 pack(core_object *core, long long stamp)
{
    uint64_t t = (uint64_t)stamp, high;
    if (core->version == 6) {
        high = ((t >> 12) << 16) | (6U << 12) | (t & 0xFFF);
    }
    else {
        high = ((t & 0xFFFFFFFFULL) << 32) | (((t >> 32) & 0xFFFF) << 16) | (1U << 12) |
               (t >> 48);
    }
    uint64_t low;
    if (core->per_uuid) {
        /* clock_seq: the word's bits 48-61; node: bits 0-47, multicast bit set. */
        uint64_t word = core->words[core->word_position++];
        low = (word & ((1ULL << 62) - 1)) | MULTICAST_BIT;
    }
    else {
        low = ((uint64_t)core->clock_seq << 48) | (uint64_t)core->node;
    }
    uk_u128 value = {high, low | VARIANT_BITS};
    return value;
}

static PyObject *uuid_of_int(PyObject *number)
{
    if (number == NULL) {
        return NULL;
    }
    uk_u128 value;
    int failed = uk_long_to_u128(number, &value);
    Py_DECREF(number);
    return failed < 0 ? NULL : uk_make_uuid(value);
}

/* The slow path's value for a reading (a new reference to an int, or NULL). */
static PyObject *slow_value(core_object *core, PyObject *reading)
{
    return PyObject_CallOneArg(core->slow, reading != NULL ? reading : Py_None);
}

static int lock_acquire(core_object *core)
{
    PyObject *result = PyObject_CallNoArgs(core->acquire);
    Py_XDECREF(result);
    return result == NULL ? -1 : 0;
}

/* Release the lock, keeping any exception already set. */
static int lock_release(core_object *core)
{
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyObject *result = PyObject_CallNoArgs(core->release);
    if (result == NULL) {
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(traceback);
        return -1;
    }
    Py_DECREF(result);
    PyErr_Restore(type, value, traceback);
    return type == NULL ? 0 : -1;
}

/* One value with the lock held (the injected clock is called here, the system clock read
   here). A new reference: an int when as_int, else a UUID. */
static PyObject *value_locked(core_object *core, int as_int)
{
    long long now_ns = -1;
    PyObject *reading = NULL;
    if (core->clock == NULL) {
        now_ns = read_ns(CLOCK_REALTIME);
    }
    else {
        reading = PyObject_CallNoArgs(core->clock);
        if (reading == NULL) {
            return NULL;
        }
        if (PyLong_CheckExact(reading)) {
            int overflow = 0;
            now_ns = PyLong_AsLongLongAndOverflow(reading, &overflow);
            if (overflow || (now_ns == -1 && PyErr_Occurred())) {
                PyErr_Clear();
                now_ns = -1;
            }
        }
    }
    long long stamp = now_ns >= 0 ? step(core, now_ns / core->resolution, 1) : -1;
    if (stamp < 0) { /* the slow path, with this reading (the lock is held) */
        if (reading == NULL) {
            reading = now_ns >= 0 ? PyLong_FromLongLong(now_ns) : Py_NewRef(Py_None);
            if (reading == NULL) {
                return NULL;
            }
        }
        PyObject *number = slow_value(core, reading);
        Py_DECREF(reading);
        return number == NULL || as_int ? number : uuid_of_int(number);
    }
    Py_XDECREF(reading);
    /* The word is drawn after the commit, as on the pure path (which it must match). */
    if (core->per_uuid && have_word(core) < 0) {
        return NULL;
    }
    uk_u128 value = pack(core, stamp);
    return as_int ? uk_long_from_u128(value) : uk_make_uuid(value);
}

/* --- the methods ----------------------------------------------------------------------- */

static PyObject *core_next(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames)
{
    core_object *core = (core_object *)self;
    if (nargs != 0 || kwnames != NULL) {
        return PyObject_Vectorcall(core->explicit, args, (size_t)nargs, kwnames);
    }
    if (core->generation != forks_seen) {
        return uuid_of_int(slow_value(core, NULL)); /* the slow path resets first */
    }
    if (core->clock != NULL) {
        if (lock_acquire(core) < 0) {
            return NULL;
        }
        PyObject *result = value_locked(core, 0);
        return lock_release(core) < 0 ? (Py_XDECREF(result), NULL) : result;
    }
    /* The system clock: no lock; nothing below calls Python code before the commit. */
    long long stamp = -1;
    int failed = 0;
    uk_u128 value = {0, 0};
    Py_BEGIN_CRITICAL_SECTION(self);
    if (!core->busy && core->per_uuid && core->word_position >= core->word_count) {
        failed = refill_words(core) < 0;
    }
    if (!failed && !core->busy) { /* busy again: a refill may have run Python code */
        long long now_ns = read_ns(CLOCK_REALTIME);
        stamp = now_ns >= 0 ? step(core, now_ns / core->resolution, 1) : -1;
        if (stamp >= 0) {
            value = pack(core, stamp);
        }
    }
    Py_END_CRITICAL_SECTION();
    if (failed) {
        return NULL;
    }
    if (stamp < 0) {
        return uuid_of_int(slow_value(core, NULL)); /* reads the clock under the lock */
    }
    return uk_make_uuid(value);
}

/* decide(interval) -> int: step() alone for a clock interval, never spinning and never
   calling the slow path: the stamp it committed, or -1 (nothing changed, the slow path's
   case). The tests compare every decision it takes with the Timeline's. */
static PyObject *core_decide(PyObject *self, PyObject *arg)
{
    long long interval = PyLong_AsLongLong(arg);
    if (interval == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (interval < 0) {
        return PyLong_FromLongLong(-1); /* before the epoch: the slow path refuses it */
    }
    return PyLong_FromLongLong(step((core_object *)self, interval, 0));
}

/* block(count, as_uuids) -> list: count values; the caller holds the lock and set busy. */
static PyObject *core_block(PyObject *self, PyObject *args)
{
    core_object *core = (core_object *)self;
    Py_ssize_t count;
    int as_uuids;
    if (!PyArg_ParseTuple(args, "np:block", &count, &as_uuids)) {
        return NULL;
    }
    if (count < 0) {
        PyErr_SetString(PyExc_ValueError, "block: count must be >= 0");
        return NULL;
    }
    PyObject *values = PyList_New(count);
    if (values == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *value = value_locked(core, !as_uuids);
        if (value == NULL) {
            Py_DECREF(values);
            return NULL;
        }
        PyList_SET_ITEM(values, i, value);
    }
    return values;
}

/* word() -> int: the next buffered random word (the slow path's per-UUID fields). */
static PyObject *core_word(PyObject *self, PyObject *unused)
{
    core_object *core = (core_object *)self;
    uint64_t word = 0;
    int failed;
    (void)unused;
    Py_BEGIN_CRITICAL_SECTION(self);
    failed = have_word(core) < 0;
    if (!failed) {
        word = core->words[core->word_position++];
    }
    Py_END_CRITICAL_SECTION();
    return failed ? NULL : PyLong_FromUnsignedLongLong(word);
}

static int set_lock(core_object *core, PyObject *lock)
{
    PyObject *acquire = PyObject_GetAttrString(lock, "acquire");
    PyObject *release = acquire ? PyObject_GetAttrString(lock, "release") : NULL;
    if (release == NULL) {
        Py_XDECREF(acquire);
        return -1;
    }
    Py_INCREF(lock);
    Py_XSETREF(core->lock, lock);
    Py_XSETREF(core->acquire, acquire);
    Py_XSETREF(core->release, release);
    return 0;
}

static void forget(core_object *core)
{
    core->tick = core->clock_tick = core->last = -1;
    core->limit = -2; /* until the engine gives the Timeline's trust_tick */
    core->index = 0;
    core->pending = core->busy = 0;
    core->word_count = core->word_position = 0; /* buffered words are never reused */
    core->generation = forks_seen;
}

/* reset(lock): in a forked child: forget the state and the words, use the new lock. */
static PyObject *core_reset(PyObject *self, PyObject *lock)
{
    core_object *core = (core_object *)self;
    if (set_lock(core, lock) < 0) {
        return NULL;
    }
    forget(core);
    Py_RETURN_NONE;
}

static PyObject *core_forked(PyObject *self, void *unused)
{
    (void)unused;
    return PyBool_FromLong(((core_object *)self)->generation != forks_seen);
}

/* --- the type -------------------------------------------------------------------------- */

static PyObject *optional_callable(PyObject *object)
{
    return object == Py_None ? NULL : Py_NewRef(object);
}

static int core_init(PyObject *self, PyObject *args, PyObject *kwargs)
{
    core_object *core = (core_object *)self;
    PyObject *clock, *refill, *slow, *explicit, *lock;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0) {
        PyErr_SetString(PyExc_TypeError, "GregorianCore takes no keyword arguments");
        return -1;
    }
    if (!PyArg_ParseTuple(args, "(iii)(LLLLi)(LL)OOOOO:GregorianCore", &core->version,
                          &core->per_uuid, &core->overflow, &core->budget, &core->resolution,
                          &core->fast_max, &core->ahead, &core->spin, &core->node,
                          &core->clock_seq, &clock, &refill, &slow, &explicit, &lock)) {
        return -1;
    }
    if (core->budget < 1 || core->resolution < 1 || core->fast_max < 0 ||
        core->fast_max > ((1LL << 60) - GREGORIAN_OFFSET) / core->budget ||
        (core->version != 1 && core->version != 6) || core->node < 0 ||
        core->node > (long long)MASK_48 || core->clock_seq < 0 || core->clock_seq > 0x3FFF) {
        PyErr_SetString(PyExc_ValueError, "GregorianCore: configuration out of range");
        return -1;
    }
    if (!PyCallable_Check(slow) || !PyCallable_Check(explicit) ||
        (clock != Py_None && !PyCallable_Check(clock)) ||
        (refill != Py_None && !PyCallable_Check(refill))) {
        PyErr_SetString(PyExc_TypeError, "GregorianCore: expected callables");
        return -1;
    }
    if (set_lock(core, lock) < 0) {
        return -1;
    }
    Py_XSETREF(core->clock, optional_callable(clock));
    Py_XSETREF(core->refill, optional_callable(refill));
    Py_XSETREF(core->slow, Py_NewRef(slow));
    Py_XSETREF(core->explicit, Py_NewRef(explicit));
    forget(core);
    return 0;
}

static int core_traverse(PyObject *self, visitproc visit, void *arg)
{
    core_object *core = (core_object *)self;
    Py_VISIT(core->clock);
    Py_VISIT(core->refill);
    Py_VISIT(core->slow);
    Py_VISIT(core->explicit);
    Py_VISIT(core->lock);
    Py_VISIT(core->acquire);
    Py_VISIT(core->release);
    return 0;
}

static int core_clear(PyObject *self)
{
    core_object *core = (core_object *)self;
    Py_CLEAR(core->clock);
    Py_CLEAR(core->refill);
    Py_CLEAR(core->slow);
    Py_CLEAR(core->explicit);
    Py_CLEAR(core->lock);
    Py_CLEAR(core->acquire);
    Py_CLEAR(core->release);
    return 0;
}

static void core_dealloc(PyObject *self)
{
    PyObject_GC_UnTrack(self);
    if (((core_object *)self)->weakrefs != NULL) {
        PyObject_ClearWeakRefs(self);
    }
    core_clear(self);
    Py_TYPE(self)->tp_free(self);
}

static PyMemberDef core_members[] = {
    {"tick", T_LONGLONG, offsetof(core_object, tick), 0, "current clock interval, -1: none"},
    {"clock_tick", T_LONGLONG, offsetof(core_object, clock_tick), 0,
     "highest clock interval read"},
    {"index", T_LONGLONG, offsetof(core_object, index), 0, "timestamp within the interval"},
    {"last", T_LONGLONG, offsetof(core_object, last), 0, "last 60-bit timestamp, -1: none"},
    {"limit", T_LONGLONG, offsetof(core_object, limit), 0,
     "last interval a NEW move may reach in C (Timeline.trust_tick)"},
    {"clock_seq", T_LONGLONG, offsetof(core_object, clock_seq), 0, "14-bit clock sequence"},
    {"node", T_LONGLONG, offsetof(core_object, node), 0, "48-bit node"},
    {"pending", T_BOOL, offsetof(core_object, pending), 0, "the next reading restarts"},
    {NULL, 0, 0, 0, NULL},
};

/* busy, read and written inside the core's critical section: setting it waits for a fast
   path under way on another thread (free-threaded builds; the GIL does this otherwise). */
static PyObject *core_get_busy(PyObject *self, void *unused)
{
    int busy;
    (void)unused;
    Py_BEGIN_CRITICAL_SECTION(self);
    busy = ((core_object *)self)->busy;
    Py_END_CRITICAL_SECTION();
    return PyBool_FromLong(busy);
}

static int core_set_busy(PyObject *self, PyObject *value, void *unused)
{
    (void)unused;
    if (value == NULL) {
        PyErr_SetString(PyExc_TypeError, "busy cannot be deleted");
        return -1;
    }
    int busy = PyObject_IsTrue(value);
    if (busy < 0) {
        return -1;
    }
    Py_BEGIN_CRITICAL_SECTION(self);
    ((core_object *)self)->busy = (char)busy;
    Py_END_CRITICAL_SECTION();
    return 0;
}

static PyGetSetDef core_getset[] = {
    {"busy", core_get_busy, core_set_busy,
     "set by the slow path under the lock: the fast path stands aside", NULL},
    {"forked", core_forked, NULL, "True in a child forked since the last reset", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef core_methods[] = {
    {"next", (PyCFunction)(void (*)(void))core_next, METH_FASTCALL | METH_KEYWORDS,
     "next(node=None, clock_seq=None) -> UUID: the next value.\n\n"
     "References: RFC 9562 §5.1, §5.6, §6.2."},
    {"block", core_block, METH_VARARGS,
     "block(count, as_uuids) -> list: count values (lock held, busy set by the caller)."},
    {"word", core_word, METH_NOARGS, "word() -> int: the next buffered random word."},
    {"decide", core_decide, METH_O,
     "decide(interval) -> int: the core's own step for a clock interval: the committed\n"
     "timestamp, or -1 for a case it leaves to the slow path (which the Timeline decides)."},
    {"reset", core_reset, METH_O,
     "reset(lock): forget the state and buffered words; use lock (forked child)."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject core_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "uuidkit._speedups.GregorianCore",
    .tp_basicsize = sizeof(core_object),
    .tp_dealloc = core_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "GregorianCore(kind, sizes, fields, clock, refill, slow, explicit, lock): the "
              "compiled state and hot path of one UUIDv1/v6 generator.",
    .tp_traverse = core_traverse,
    .tp_clear = core_clear,
    .tp_weaklistoffset = offsetof(core_object, weakrefs),
    .tp_methods = core_methods,
    .tp_members = core_members,
    .tp_getset = core_getset,
    .tp_init = core_init,
    .tp_new = PyType_GenericNew,
};

/* --- uuidkit.uuid1, uuidkit.uuid6 ------------------------------------------------------- */

/* The cores of the process-wide default generators (uuidkit.generators.DEFAULT_V1 and
   DEFAULT_V6), set once by _publish_default_gregorian. uuid1 and uuid6 are the module
   functions below: plain builtin functions whose self is this module, so they pickle, copy
   and serialize by name and offer no method that could touch the shared state. */
static PyObject *default_cores[2]; /* [0]: version 1, [1]: version 6 */
/* The Python functions behind uuid1(node, clock_seq) and uuid6(node, clock_seq) with
   arguments: they take the arguments as the standard library's functions do (uuid6 keeps the
   low 48 / 14 bits, uuid1 the low 14 bits of clock_seq) and then call the core's strict
   next(). Published with the core; a call with no arguments never reaches them. */
static PyObject *stdlib_paths[2];

static PyObject *default_next(int which, const char *name, PyObject *const *args,
                              Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *core = default_cores[which];
    if (core == NULL) {
        /* Bound at `import uuidkit` before the generator exists, as uuid7 is: the first call
           imports the module that creates and publishes both default Gregorian generators. */
        if (uk_import_for_effect("uuidkit.generators._default_gregorian") < 0) {
            return NULL;
        }
        core = default_cores[which];
    }
    if (core == NULL || stdlib_paths[which] == NULL) {
        PyErr_Format(PyExc_RuntimeError, "%s: the default generator is not published", name);
        return NULL;
    }
    if (nargs != 0 || kwnames != NULL) {
        return PyObject_Vectorcall(stdlib_paths[which], args, (size_t)nargs, kwnames);
    }
    return core_next(core, args, nargs, kwnames);
}

static PyObject *speedups_uuid1(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames)
{
    (void)module;
    return default_next(0, "uuid1", args, nargs, kwnames);
}

static PyObject *speedups_uuid6(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames)
{
    (void)module;
    return default_next(1, "uuid6", args, nargs, kwnames);
}

/* _publish_default_gregorian(core, stdlib_path): the core behind uuid1() or uuid6() (by its
   version) and the function their calls with arguments go to; once per process, never
   replaced. */
static PyObject *publish_default_gregorian(PyObject *module, PyObject *args)
{
    PyObject *object, *path;
    (void)module;
    if (!PyArg_ParseTuple(args, "OO:_publish_default_gregorian", &object, &path)) {
        return NULL;
    }
    if (!PyCallable_Check(path)) {
        PyErr_SetString(PyExc_TypeError, "_publish_default_gregorian: stdlib_path is not callable");
        return NULL;
    }
    if (!Py_IS_TYPE(object, &core_type)) {
        PyErr_SetString(PyExc_TypeError, "_publish_default_gregorian: expected a GregorianCore");
        return NULL;
    }
    int version = ((core_object *)object)->version;
    if (version != 1 && version != 6) {
        PyErr_SetString(PyExc_ValueError, "_publish_default_gregorian: not a v1 or v6 core");
        return NULL;
    }
    PyObject **slot = &default_cores[version == 6];
    if (*slot != NULL && *slot != object) {
        PyErr_SetString(PyExc_RuntimeError, "_publish_default_gregorian: already published");
        return NULL;
    }
    Py_XSETREF(*slot, Py_NewRef(object));
    Py_XSETREF(stdlib_paths[version == 6], Py_NewRef(path));
    Py_RETURN_NONE;
}

static PyMethodDef default_methods[] = {
    {"uuid1", (PyCFunction)(void (*)(void))speedups_uuid1, METH_FASTCALL | METH_KEYWORDS,
     "uuid1($module, /, node=None, clock_seq=None)\n--\n\n"
     "A new UUIDv1, as :func:`uuid.uuid1` but with a random multicast node by default.\n\n"
     "``node`` (48 bits) and ``clock_seq`` (14 bits) replace the default generator's own "
     "for this value; the timestamp still comes from the shared generator, so it never "
     "repeats. As the standard library's, a clock_seq keeps its low 14 bits and a node "
     "outside 0 <= node < 2**48 is an error.\n\n"
     "References: RFC 9562 §5.1, §6.10; RFC 4122 §4.2.1."},
    {"uuid6", (PyCFunction)(void (*)(void))speedups_uuid6, METH_FASTCALL | METH_KEYWORDS,
     "uuid6($module, /, node=None, clock_seq=None)\n--\n\n"
     "A new UUIDv6 with a fresh pseudorandom clock_seq and node unless given.\n\n"
     "As the standard library's, a given node keeps its low 48 bits and a clock_seq its "
     "low 14 bits.\n\n"
     "References: RFC 9562 §5.6, §6.10."},
    {"_publish_default_gregorian", publish_default_gregorian, METH_VARARGS,
     "_publish_default_gregorian(core, stdlib_path): the core behind uuid1() (version 1) or "
     "uuid6() (version 6), and the function their calls with arguments go to; set once per "
     "process."},
    {NULL, NULL, 0, NULL},
};

int uk_gregorian_add(PyObject *module)
{
    static int atfork_registered;
    if (!atfork_registered) {
        if (pthread_atfork(NULL, NULL, count_fork_in_child) != 0) {
            PyErr_SetString(PyExc_OSError, "pthread_atfork failed");
            return -1;
        }
        atfork_registered = 1;
    }
    if (PyType_Ready(&core_type) < 0) {
        return -1;
    }
    Py_INCREF(&core_type);
    if (PyModule_AddObject(module, "GregorianCore", (PyObject *)&core_type) < 0) {
        Py_DECREF(&core_type);
        return -1;
    }
    return PyModule_AddFunctions(module, default_methods);
}
