/* uuidkit._speedups.NodeGate: the compiled hot path of the node-bound generators.
 *
 * The node-bound generators (generators/nodebound.py) subclass NodeGate, so calling one runs
 * this type's tp_call without a Python frame. The gate holds what one value needs while the
 * generator's lease is known good ("armed"): the lease's end on the generator's clock
 * (expires_ns) and its monotonic deadline, and for v7-node and v8-node the tick, counter and
 * node of the generator. Every call checks the lease as the Python path does, in the same
 * order (the clock reading against expires_ns, then the monotonic clock against the deadline),
 * and makes the value only in the simple cases:
 *
 * - v7-node / v8-node ("counting"): the clock reads the current tick and the counter has room
 *   (counts on by one), or a later tick (a Timeline NEW move at the clock: the counter is
 *   seeded from the next buffered random word, v7, or 0, v8). RFC 9562 §6.2 Method 1/3.
 * - v1-node / v6-node ("delegating"): the lease is good, so the value is the inner V1/V6
 *   generator's next value (its own compiled core, which carries the node).
 *
 * Everything else (no lease yet, an expired lease, an event, an injected monotonic clock, a
 * clock regression, an exhausted counter, a refill of random words, every error) is the
 * generator's Python method _gate_slow(reading), which runs the reference code on the same
 * state and the same random words. The Python side disarms the gate (taking its state back)
 * whenever it touches the lease: on every NodeEvent and at the start of every slow value, and
 * arms it again only when the lease is held. So a node is never used after its lease ended or
 * after an event: the fast path checks the flag, the deadlines and (delegating) an epoch that
 * every disarm bumps, once more after the inner generator returned, dropping that value if the
 * lease changed meanwhile.
 *
 * Interlock: the check and the value are made with no Python code in between, under the GIL or
 * inside the gate's critical section on a free-threaded build (PEP 703); an injected clock is
 * read with the generator's lock held, as on the Python path. The delegating mode is used only
 * with the system clock.
 *
 * References: RFC 9562 §5.1, §5.6, §5.7, §5.8, §6.2, §6.4, §6.9.
 */
#include "_speedups.h"

#include <stddef.h>
#include <string.h>
#include <time.h>

#define GATE_WORDS 512 /* generators._policy.WORD_BLOCK_BYTES / 8 */
#define NODE_BITS 48
#define V7_LOW_COUNTER_BITS 14 /* the v7-node counter bits in rand_b (nodelayouts) */

enum { MODE_SLOW = 0, MODE_DELEGATE = 1, MODE_V7 = 7, MODE_V8 = 8 };

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall; /* inherited by subclasses on 3.12+; tp_call before */
    int mode;
    int armed;
    unsigned long long epoch; /* bumped by every disarm */
    int64_t expires_ns;       /* the lease's end on the generator's clock */
    int64_t deadline_ns;      /* its monotonic deadline, -1: none */
    /* counting */
    int fraction_bits;
    int counter_bits;
    uint64_t seed_mask;
    int64_t max_tick;
    int64_t limit; /* Timeline.trust_tick (at most max_tick): a later tick above it is slow */
    int64_t tick;
    uint64_t counter;
    uint64_t node;
    /* sources */
    PyObject *clock;        /* NULL: the system clock (time.time_ns), read here */
    PyObject *acquire;      /* the generator's lock, taken around an injected clock */
    PyObject *release;
    PyObject *refill;       /* NULL: getrandom; else random_bytes */
    PyObject *inner;        /* delegating: the inner generator's next */
    PyObject *system_dict;  /* uuidkit._system's namespace: its monotonic_ns is the clock */
    PyObject *monotonic;    /* the function read here as CLOCK_MONOTONIC (time.monotonic_ns) */
    unsigned long long slow_calls;
    Py_ssize_t position;
    uint64_t words[GATE_WORDS];
} gate_object;

static PyObject *str_slow;          /* "_gate_slow" */
static PyObject *str_monotonic_ns;  /* "monotonic_ns" */

static int64_t read_clock(clockid_t which)
{
    struct timespec now;
    if (clock_gettime(which, &now) != 0) {
        return -1;
    }
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

/* An injected clock's reading as nanoseconds >= 0, or -1 when only the slow path may use it. */
static int64_t reading_ns(PyObject *reading)
{
    if (reading == NULL || !PyLong_CheckExact(reading)) {
        return -1;
    }
    int overflow = 0;
    long long ns = PyLong_AsLongLongAndOverflow(reading, &overflow);
    if (ns == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return -1;
    }
    return overflow || ns < 0 ? -1 : (int64_t)ns;
}

/* Whether the lease holds at now_ns (gate's critical section held): before expires_ns and, if
   it has one, before its monotonic deadline, read only while uuidkit._system.monotonic_ns is
   the real monotonic clock (a test's fake one is Python code: the slow path reads it). */
static int lease_holds(gate_object *gate, int64_t now_ns)
{
    if (!gate->armed || now_ns < 0 || now_ns >= gate->expires_ns) {
        return 0;
    }
    if (gate->deadline_ns < 0) {
        return 1;
    }
    PyObject *current = PyDict_GetItemWithError(gate->system_dict, str_monotonic_ns);
    if (current != gate->monotonic) {
        PyErr_Clear();
        return 0;
    }
    int64_t mono = read_clock(CLOCK_MONOTONIC);
    return mono >= 0 && mono < gate->deadline_ns;
}

/* The counting layouts' value for now_ns: 1 and *value set, or 0 for the slow path. */
static int count_value(gate_object *gate, int64_t now_ns, uk_u128 *value)
{
    int fraction = gate->fraction_bits;
    int64_t ms = now_ns / UK_NS_PER_MS, sub = now_ns % UK_NS_PER_MS;
    int64_t now_tick = (ms << fraction) + ((sub << fraction) / UK_NS_PER_MS);
    uint64_t counter;
    if (now_tick == gate->tick) {
        /* RFC 9562 §6.1: "MUST NOT knowingly return duplicate values due to a counter
           rollover": an exhausted counter goes to the slow path's overflow policy. */
        counter = gate->counter + 1;
        if (counter >> gate->counter_bits) {
            return 0;
        }
    }
    else if (now_tick > gate->tick && now_tick <= gate->limit) {
        /* RFC 9562 §6.2: a later tick re-initialises the counter; one above the Timeline's
           trust_tick is checked against the monotonic clock by the slow path. */
        if (gate->seed_mask == 0) {
            counter = 0;
        }
        else if (gate->position < GATE_WORDS) {
            counter = gate->words[gate->position++] & gate->seed_mask;
        }
        else {
            return 0; /* a refill may run Python code: the slow path draws */
        }
        gate->tick = now_tick;
    }
    else {
        return 0; /* behind the tick: the Timeline decides */
    }
    gate->counter = counter;
    uint64_t tick = (uint64_t)gate->tick;
    uint64_t unix_ts_ms = tick >> fraction, rand_a, rand_b;
    if (gate->mode == MODE_V7) {
        rand_a = counter >> V7_LOW_COUNTER_BITS;
        rand_b = ((counter & ((1u << V7_LOW_COUNTER_BITS) - 1)) << NODE_BITS) | gate->node;
    }
    else {
        rand_a = tick & (((uint64_t)1 << fraction) - 1);
        rand_b = (counter << NODE_BITS) | gate->node;
    }
    value->hi = (unix_ts_ms << 16) | ((uint64_t)gate->mode << 12) | rand_a;
    value->lo = ((uint64_t)2 << 62) | rand_b; /* RFC 9562 §4.1: variant 0b10 */
    return 1;
}

static PyObject *call_slow(gate_object *gate, PyObject *reading)
{
    Py_BEGIN_CRITICAL_SECTION(gate);
    gate->slow_calls++;
    Py_END_CRITICAL_SECTION();
    return PyObject_CallMethodOneArg((PyObject *)gate, str_slow, reading ? reading : Py_None);
}

/* One value with the lease checked: in C when simple, else the slow path. */
static PyObject *gate_value(gate_object *gate, PyObject *reading)
{
    int64_t now_ns = reading != NULL ? reading_ns(reading) : -1;
    int counted = 0, holds = 0;
    unsigned long long epoch = 0;
    uk_u128 value;
    Py_BEGIN_CRITICAL_SECTION(gate);
    if (reading == NULL) {
        /* A delegated value needs the reading only for a lease with an end: the system clock
           reads below INT64_MAX ns (until 2262), so a lease "forever" holds at any reading. */
        now_ns = gate->mode == MODE_DELEGATE && gate->expires_ns == INT64_MAX
                     ? 0
                     : read_clock(CLOCK_REALTIME);
    }
    holds = lease_holds(gate, now_ns);
    epoch = gate->epoch;
    if (holds && gate->mode != MODE_DELEGATE) {
        counted = count_value(gate, now_ns, &value);
    }
    Py_END_CRITICAL_SECTION();
    if (counted) {
        return uk_make_uuid(value);
    }
    if (!holds || gate->mode != MODE_DELEGATE) {
        return call_slow(gate, reading);
    }
    PyObject *result = PyObject_CallNoArgs(gate->inner);
    if (result == NULL) {
        return NULL;
    }
    Py_BEGIN_CRITICAL_SECTION(gate);
    holds = gate->armed && gate->epoch == epoch;
    Py_END_CRITICAL_SECTION();
    if (holds) {
        return result;
    }
    /* The lease changed while the inner generator ran Python code: that value is dropped
       (it never leaves), and the slow path makes one under the new state. */
    Py_DECREF(result);
    return call_slow(gate, NULL);
}

static PyObject *gate_next(gate_object *gate);

static PyObject *gate_call(PyObject *self, PyObject *args, PyObject *kwargs)
{
    if (PyTuple_GET_SIZE(args) != 0 || (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0)) {
        PyErr_Format(PyExc_TypeError, "%s() takes no arguments", Py_TYPE(self)->tp_name);
        return NULL;
    }
    return gate_next((gate_object *)self);
}

static PyObject *gate_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                                 PyObject *kwnames)
{
    (void)args;
    if (PyVectorcall_NARGS(nargsf) != 0 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames))) {
        PyErr_Format(PyExc_TypeError, "%s() takes no arguments", Py_TYPE(self)->tp_name);
        return NULL;
    }
    return gate_next((gate_object *)self);
}

static PyObject *gate_next(gate_object *gate)
{
    if (gate->mode == MODE_SLOW) {
        return call_slow(gate, NULL);
    }
    if (gate->clock == NULL) {
        return gate_value(gate, NULL);
    }
    /* An injected clock is Python code: read it under the generator's lock, as the Python
       path does, so no other thread comes between the reading and its use. */
    PyObject *acquired = PyObject_CallNoArgs(gate->acquire);
    if (acquired == NULL) {
        return NULL;
    }
    Py_DECREF(acquired);
    PyObject *result = NULL;
    PyObject *reading = PyObject_CallNoArgs(gate->clock);
    if (reading != NULL) {
        result = gate_value(gate, reading);
        Py_DECREF(reading);
    }
    PyObject *type, *error, *traceback;
    PyErr_Fetch(&type, &error, &traceback);
    PyObject *released = PyObject_CallNoArgs(gate->release);
    if (released == NULL) {
        Py_XDECREF(type);
        Py_XDECREF(error);
        Py_XDECREF(traceback);
        Py_CLEAR(result);
        return NULL;
    }
    Py_DECREF(released);
    PyErr_Restore(type, error, traceback);
    return result;
}

/* --- the Python side's methods ------------------------------------------------------------ */

static PyObject *optional(PyObject *object)
{
    return object == Py_None ? NULL : Py_NewRef(object);
}

static PyObject *gate_configure(PyObject *self, PyObject *args)
{
    gate_object *gate = (gate_object *)self;
    int mode, fraction_bits, counter_bits, seed_bits;
    PyObject *clock, *lock, *refill, *inner, *system_dict, *monotonic;
    if (!PyArg_ParseTuple(args, "iiiiOOOOO!O:_gate_configure", &mode, &fraction_bits,
                          &counter_bits, &seed_bits, &clock, &lock, &refill, &inner,
                          &PyDict_Type, &system_dict, &monotonic)) {
        return NULL;
    }
    if ((mode != MODE_SLOW && mode != MODE_DELEGATE && mode != MODE_V7 && mode != MODE_V8) ||
        fraction_bits < 0 || fraction_bits > 12 || counter_bits < 1 || counter_bits > 32 ||
        seed_bits < 0 || seed_bits >= counter_bits) {
        PyErr_SetString(PyExc_ValueError, "_gate_configure: unsupported layout");
        return NULL;
    }
    PyObject *acquire = NULL, *release = NULL;
    if (clock != Py_None) {
        acquire = PyObject_GetAttrString(lock, "acquire");
        release = acquire ? PyObject_GetAttrString(lock, "release") : NULL;
        if (release == NULL) {
            Py_XDECREF(acquire);
            return NULL;
        }
    }
    Py_BEGIN_CRITICAL_SECTION(gate);
    gate->mode = mode;
    gate->armed = 0;
    gate->fraction_bits = fraction_bits;
    gate->counter_bits = counter_bits;
    gate->seed_mask = seed_bits ? (((uint64_t)1 << seed_bits) - 1) : 0;
    gate->max_tick = ((int64_t)1 << (48 + fraction_bits)) - 1;
    Py_XSETREF(gate->clock, optional(clock));
    Py_XSETREF(gate->acquire, acquire);
    Py_XSETREF(gate->release, release);
    Py_XSETREF(gate->refill, optional(refill));
    Py_XSETREF(gate->inner, optional(inner));
    Py_XSETREF(gate->system_dict, Py_NewRef(system_dict));
    Py_XSETREF(gate->monotonic, Py_NewRef(monotonic));
    gate->position = GATE_WORDS;
    Py_END_CRITICAL_SECTION();
    Py_RETURN_NONE;
}

/* An int as int64, clamped at INT64_MAX (a lease "forever" is 2**63 or more). */
static int clamped_ns(PyObject *number, int64_t *out)
{
    int overflow = 0;
    long long value = PyLong_AsLongLongAndOverflow(number, &overflow);
    if (value == -1 && PyErr_Occurred()) {
        return -1;
    }
    *out = overflow > 0 ? INT64_MAX : overflow < 0 ? INT64_MIN : (int64_t)value;
    return 0;
}

static PyObject *gate_arm(PyObject *self, PyObject *args)
{
    gate_object *gate = (gate_object *)self;
    PyObject *expires, *deadline;
    long long tick, limit;
    unsigned long long counter, node;
    if (!PyArg_ParseTuple(args, "O!OLKKL:_gate_arm", &PyLong_Type, &expires, &deadline, &tick,
                          &counter, &node, &limit)) {
        return NULL;
    }
    int64_t expires_ns, deadline_ns = -1;
    if (clamped_ns(expires, &expires_ns) < 0 ||
        (deadline != Py_None && clamped_ns(deadline, &deadline_ns) < 0)) {
        return NULL;
    }
    if (deadline != Py_None && deadline_ns < 0) {
        Py_RETURN_FALSE; /* a deadline this clock never shows: the slow path judges it */
    }
    if (expires_ns < 0 || node >> NODE_BITS || tick < 0 || tick > gate->max_tick ||
        counter >> gate->counter_bits) {
        Py_RETURN_FALSE;
    }
    Py_BEGIN_CRITICAL_SECTION(gate);
    gate->expires_ns = expires_ns;
    gate->deadline_ns = deadline_ns;
    gate->tick = tick;
    gate->limit = limit < gate->max_tick ? limit : gate->max_tick;
    gate->counter = counter;
    gate->node = node;
    gate->armed = gate->mode != MODE_SLOW;
    Py_END_CRITICAL_SECTION();
    Py_RETURN_TRUE;
}

static PyObject *gate_disarm(PyObject *self, PyObject *unused)
{
    (void)unused;
    gate_object *gate = (gate_object *)self;
    int armed;
    long long tick;
    unsigned long long counter;
    Py_BEGIN_CRITICAL_SECTION(gate);
    armed = gate->armed;
    gate->armed = 0;
    gate->epoch++;
    tick = gate->tick;
    counter = gate->counter;
    Py_END_CRITICAL_SECTION();
    if (!armed) {
        Py_RETURN_NONE;
    }
    return Py_BuildValue("(LK)", tick, counter);
}

/* Refill the words as generators._policy.word_stream reads random_bytes: native 64-bit words
   through a memoryview cast, so every odd result fails as it does there. */
static int refill_words(gate_object *gate)
{
    if (gate->refill == NULL) {
        if (uk_random((unsigned char *)gate->words, sizeof gate->words) < 0) {
            return -1;
        }
        gate->position = 0;
        return 0;
    }
    PyObject *data = PyObject_CallFunction(gate->refill, "i", GATE_WORDS * 8);
    PyObject *view = data ? PyMemoryView_FromObject(data) : NULL;
    Py_XDECREF(data);
    PyObject *cast = view ? PyObject_CallMethod(view, "cast", "s", "Q") : NULL;
    Py_XDECREF(view);
    if (cast == NULL) {
        return -1;
    }
    Py_buffer buffer;
    if (PyObject_GetBuffer(cast, &buffer, PyBUF_SIMPLE) < 0) {
        Py_DECREF(cast);
        return -1;
    }
    Py_ssize_t count = buffer.len / 8;
    if (count > GATE_WORDS) {
        count = GATE_WORDS;
    }
    memcpy(gate->words + (GATE_WORDS - count), buffer.buf, (size_t)count * 8);
    PyBuffer_Release(&buffer);
    Py_DECREF(cast);
    gate->position = GATE_WORDS - count;
    if (count == 0) {
        PyErr_SetNone(PyExc_StopIteration); /* what next() on the empty stream raises */
        return -1;
    }
    return 0;
}

static PyObject *gate_draw(PyObject *self, PyObject *unused)
{
    (void)unused;
    gate_object *gate = (gate_object *)self;
    /* Called by the slow path under the generator's lock, with the gate disarmed. */
    if (gate->position >= GATE_WORDS && refill_words(gate) < 0) {
        return NULL;
    }
    return PyLong_FromUnsignedLongLong(gate->words[gate->position++]);
}

static PyObject *gate_forget_words(PyObject *self, PyObject *unused)
{
    (void)unused;
    gate_object *gate = (gate_object *)self;
    Py_BEGIN_CRITICAL_SECTION(gate);
    gate->position = GATE_WORDS; /* RFC 9562 §6.9: a forked child never reuses them */
    Py_END_CRITICAL_SECTION();
    Py_RETURN_NONE;
}

static PyObject *gate_get_slow_calls(PyObject *self, void *unused)
{
    (void)unused;
    return PyLong_FromUnsignedLongLong(((gate_object *)self)->slow_calls);
}

static PyMethodDef gate_methods[] = {
    {"_gate_configure", gate_configure, METH_VARARGS,
     "_gate_configure(mode, fraction_bits, counter_bits, seed_bits, clock, lock, refill, "
     "inner, system_dict, monotonic): what the fast path makes and reads."},
    {"_gate_arm", gate_arm, METH_VARARGS,
     "_gate_arm(expires_ns, deadline_ns, tick, counter, node, limit) -> bool: the lease is "
     "held; a later tick above limit is the slow path's."},
    {"_gate_disarm", gate_disarm, METH_NOARGS,
     "_gate_disarm() -> (tick, counter) | None: stop the fast path, hand back its state."},
    {"_gate_draw", gate_draw, METH_NOARGS, "_gate_draw() -> int: the next random word."},
    {"_gate_forget_words", gate_forget_words, METH_NOARGS,
     "_gate_forget_words(): drop the buffered random words (forked child)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef gate_getset[] = {
    {"_gate_slow_calls", gate_get_slow_calls, NULL, "values made by the slow path", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* --- lifetime ------------------------------------------------------------------------------ */

static PyObject *gate_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    (void)args;
    (void)kwargs;
    gate_object *gate = (gate_object *)type->tp_alloc(type, 0);
    if (gate != NULL) {
        gate->tick = -1;
        gate->deadline_ns = -1;
        gate->position = GATE_WORDS;
        gate->vectorcall = gate_vectorcall;
    }
    return (PyObject *)gate;
}

static int gate_traverse(PyObject *self, visitproc visit, void *arg)
{
    gate_object *gate = (gate_object *)self;
    Py_VISIT(gate->clock);
    Py_VISIT(gate->acquire);
    Py_VISIT(gate->release);
    Py_VISIT(gate->refill);
    Py_VISIT(gate->inner);
    Py_VISIT(gate->system_dict);
    Py_VISIT(gate->monotonic);
    return 0;
}

static int gate_clear(PyObject *self)
{
    gate_object *gate = (gate_object *)self;
    gate->armed = 0;
    Py_CLEAR(gate->clock);
    Py_CLEAR(gate->acquire);
    Py_CLEAR(gate->release);
    Py_CLEAR(gate->refill);
    Py_CLEAR(gate->inner);
    Py_CLEAR(gate->system_dict);
    Py_CLEAR(gate->monotonic);
    return 0;
}

static void gate_dealloc(PyObject *self)
{
    PyObject_GC_UnTrack(self);
    gate_clear(self);
    Py_TYPE(self)->tp_free(self);
}

static PyTypeObject gate_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "uuidkit._speedups.NodeGate",
    .tp_doc = "The compiled hot path of the node-bound generators (their base class).",
    .tp_basicsize = sizeof(gate_object),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC |
                Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(gate_object, vectorcall),
    .tp_new = gate_new,
    .tp_call = gate_call,
    .tp_traverse = gate_traverse,
    .tp_clear = gate_clear,
    .tp_dealloc = gate_dealloc,
    .tp_methods = gate_methods,
    .tp_getset = gate_getset,
};

int uk_nodebound_init(PyObject *module)
{
    str_slow = PyUnicode_InternFromString("_gate_slow");
    str_monotonic_ns = PyUnicode_InternFromString("monotonic_ns");
    if (str_slow == NULL || str_monotonic_ns == NULL || PyType_Ready(&gate_type) < 0) {
        return -1;
    }
    Py_INCREF(&gate_type);
    if (PyModule_AddObject(module, "NodeGate", (PyObject *)&gate_type) < 0) {
        Py_DECREF(&gate_type);
        return -1;
    }
    return 0;
}
