/* uuidkit._speedups: the compiled hot path of uuidkit.generators.V7Generator.
 *
 * A V7Core is the front of one V7Generator. It holds a copy of the generator's state
 * (tick, counter, prefix, last value) and its buffer of random words, and produces the common
 * cases itself: the clock reads the current tick and the counter has room, or the clock reads
 * a later tick (Timeline's NEW move at the clock: new prefix, counter reseeded from two random
 * words as V7Layout.seed does). Everything else (the first value, a clock regression, an
 * exhausted counter, the policies, every error) is the pure-Python generator's, called as the
 * "slow path"; it runs the reference code on the same state and the same random words, so both
 * paths give the same values. enter() hands the slow path the tick the core moved to, and the
 * generator replays that reading through its Timeline, so the timeline agrees as well.
 *
 * Interlock: the slow path takes the generator's lock, then the state (enter(): sets busy and
 * returns the counter and last value the fast path advanced), and gives it back before it
 * releases the lock (leave(): clears busy). While busy, the fast path never reads or writes the
 * state: it calls the slow path, which waits for the lock. The fast path itself runs without a
 * Python lock: between reading the state and writing it back it calls no Python code, so under
 * the GIL it is atomic. On a free-threaded build (PEP 703) every read and write of the state
 * happens inside the core's critical section (the same span the GIL covers otherwise), and the
 * slow path is always called outside it.
 *
 * Clock: with the system clock, clock_gettime(CLOCK_REALTIME), which is what time.time_ns()
 * reads. An injected clock is called from here, with the generator's lock held around the whole
 * value (as the pure path does); a reading the fast path cannot use is handed to the slow path
 * (read_clock()), so an injected clock is read exactly as often as on the pure path.
 *
 * Randomness: 512 words of 64 bits from getrandom(2), or from the injected random_bytes(4096),
 * handed out in the pure path's order; the slow path draws from the same buffer (draw()).
 * reset() discards the buffer; the generator calls it in a forked child. The core is not an
 * iterator, so nothing that iterates a callable's default (Django) can spin on it.
 *
 * References: RFC 9562 §5.7, §6.1, §6.2, §6.9.
 */
#include "_speedups.h"

#include <limits.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

#define V7_WORDS 512        /* generators._policy.WORD_BLOCK_BYTES / 8 */
#define V7_MASK_62 (((uint64_t)1 << 62) - 1)

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *dict;
    /* the bit plan (V7Layout) */
    int fraction_bits;
    int counter_bits; /* 1..74 */
    int tail_bits;    /* 0..62 */
    uint64_t tail_mask;
    uint64_t increment_mask;
    int seed_bits;    /* 0..74: V7Layout.seed_mask's width */
    int64_t max_tick; /* V7Layout.max_tick */
    /* sources: NULL means the system's */
    PyObject *clock;
    PyObject *random_bytes;
    /* the generator: its slow path, and its lock's methods when the clock is injected */
    PyObject *slow;
    PyObject *acquire;
    PyObject *release;
    PyObject *pending; /* a clock reading for the slow path */
    unsigned long long slow_calls; /* values handed to the slow path, for the tests */
    /* state, valid while ready and not busy */
    int ready;
    int busy;
    int has_last;
    int64_t tick;
    int64_t limit; /* Timeline.trust_tick: a later tick above it is the slow path's */
    uk_u128 counter;
    uk_u128 prefix;
    uk_u128 last;
    /* random words */
    Py_ssize_t position;
    uint64_t words[V7_WORDS];
} v7_core;

static PyTypeObject v7_core_type;

/* --- randomness ------------------------------------------------------------------------ */

/* Refill the words from random_bytes(4096), as generators._policy.word_stream does: through a
   memoryview cast to native 64-bit words, so every odd result fails as it does there. */
static int refill_injected(v7_core *core)
{
    PyObject *data = PyObject_CallFunction(core->random_bytes, "i", V7_WORDS * 8);
    if (data == NULL) {
        return -1;
    }
    PyObject *view = PyMemoryView_FromObject(data);
    Py_DECREF(data);
    if (view == NULL) {
        return -1;
    }
    PyObject *cast = PyObject_CallMethod(view, "cast", "s", "Q");
    Py_DECREF(view);
    if (cast == NULL) {
        return -1;
    }
    Py_buffer buffer;
    if (PyObject_GetBuffer(cast, &buffer, PyBUF_SIMPLE) < 0) {
        Py_DECREF(cast);
        return -1;
    }
    Py_ssize_t count = buffer.len / 8;
    if (count > V7_WORDS) {
        count = V7_WORDS; /* the pure path would use them all; never more than asked for */
    }
    memcpy(core->words + (V7_WORDS - count), buffer.buf, (size_t)count * 8);
    PyBuffer_Release(&buffer);
    Py_DECREF(cast);
    core->position = V7_WORDS - count;
    if (count == 0) {
        PyErr_SetNone(PyExc_StopIteration); /* what next() on the empty stream raises */
        return -1;
    }
    return 0;
}

static int draw(v7_core *core, uint64_t *word)
{
    if (core->position >= V7_WORDS) {
        if (core->random_bytes != NULL) {
            if (refill_injected(core) < 0) {
                return -1;
            }
        }
        else {
            if (uk_random((unsigned char *)core->words, sizeof core->words) < 0) {
                return -1;
            }
            core->position = 0;
        }
    }
    *word = core->words[core->position++];
    return 0;
}

/* --- the fast path --------------------------------------------------------------------- */

static int64_t system_clock_ns(void)
{
    struct timespec now;
    if (clock_gettime(CLOCK_REALTIME, &now) != 0) {
        return -1;
    }
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

/* V7Layout.ticks_of for now_ns >= 0: floor(now_ns * 2**F / 10**6), exactly. */
static int64_t ticks_of(const v7_core *core, int64_t now_ns)
{
    int64_t ms = now_ns / UK_NS_PER_MS, sub = now_ns % UK_NS_PER_MS;
    return (ms << core->fraction_bits) + ((sub << core->fraction_bits) / UK_NS_PER_MS);
}

static int u128_greater(uk_u128 a, uk_u128 b)
{
    return a.hi > b.hi || (a.hi == b.hi && a.lo > b.lo);
}

/* Run the generator's slow path (the pure-Python reference) for this value. */
static PyObject *call_slow(v7_core *core)
{
    if (core->slow == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "V7Core: attach() was not called");
        return NULL;
    }
    Py_BEGIN_CRITICAL_SECTION(core);
    core->slow_calls++;
    Py_END_CRITICAL_SECTION();
    PyObject *result = PyObject_CallNoArgs(core->slow);
    Py_CLEAR(core->pending);
    return result;
}

/* The words left in the buffer without a refill (a refill may run Python code). */
static Py_ssize_t words_left(const v7_core *core)
{
    return V7_WORDS - core->position;
}

/* V7Layout.seed: a fresh counter from the next two words (high, then low), its top guard bits
   zero. RFC 9562 §6.2: "randomly initialize the counter with each new timestamp tick". */
static uk_u128 seed_counter(v7_core *core)
{
    uk_u128 seed = {0, 0};
    int bits = core->seed_bits;
    if (bits == 0) {
        return seed; /* no seed bits: the pure path draws nothing either */
    }
    seed.hi = core->words[core->position++];
    seed.lo = core->words[core->position++];
    if (bits < 64) {
        seed.hi = 0;
        seed.lo &= ((uint64_t)1 << bits) - 1;
    }
    else {
        seed.hi &= bits == 64 ? 0 : (((uint64_t)1 << (bits - 64)) - 1);
    }
    return seed;
}

/* V7Layout.prefix: unix_ts_ms, version 7, variant and the Method 3 fraction bits of a tick. */
static uk_u128 prefix_of(const v7_core *core, int64_t tick)
{
    int fraction = core->fraction_bits;
    uint64_t ms = (uint64_t)tick >> fraction;
    uint64_t part = (uint64_t)tick & (((uint64_t)1 << fraction) - 1);
    uk_u128 prefix;
    prefix.hi = (ms << 16) | ((uint64_t)7 << 12) | (part << (12 - fraction));
    prefix.lo = (uint64_t)2 << 62; /* the RFC 9562 variant, 0b10 */
    return prefix;
}

/* The counter for this value: the same tick with room left (bumped), or a later tick at the
   clock (reseeded). Returns 0 and sets *counter, or 1 when the slow path must decide. */
static int next_counter(v7_core *core, int64_t now_tick, uint64_t word, uk_u128 *counter,
                        uk_u128 *prefix)
{
    if (now_tick != core->tick) {
        /* Timeline.reading: a later tick is NEW at the clock (the clock is ahead of every
           earlier reading, as the stamped tick is never behind the highest one). Only when
           both seed words are in the buffer: a refill may run Python code. */
        /* Above the Timeline's trust_tick the reading is checked against the monotonic clock
           (a wall clock that jumped ahead): the slow path's. */
        if (now_tick < core->tick || now_tick > core->limit || now_tick > core->max_tick ||
            (core->seed_bits && words_left(core) < 2)) {
            return 1;
        }
        *counter = seed_counter(core);
        *prefix = prefix_of(core, now_tick);
        return 0;
    }
    /* RFC 9562 §6.2 Method 2: the counter "MUST be incremented in the least significant
       position", by a random amount; Method 1 by one (increment_mask 0). */
    uk_u128 bumped = core->counter;
    uint64_t add = word & core->increment_mask;
    bumped.lo += add;
    bumped.hi += bumped.lo < add;
    bumped.lo += 1;
    bumped.hi += bumped.lo == 0;
    int bits = core->counter_bits;
    /* RFC 9562 §6.1: "MUST NOT knowingly return duplicate values due to a counter rollover":
       an exhausted counter goes to the overflow policy. */
    if (bits >= 64 ? (bumped.hi >> (bits - 64)) != 0 : (bumped.hi != 0 || bumped.lo >> bits)) {
        return 1;
    }
    *counter = bumped;
    *prefix = core->prefix;
    return 0;
}

/* One value at the clock's tick now_tick, with word as its increment and tail: V7Generator's
   inlined common case and its NEW move, in C. Returns 0 and sets *value, or 1 when the slow
   path must decide (the words this call took are then given back). */
static int next_value(v7_core *core, int64_t now_tick, uint64_t word, uk_u128 *value)
{
    Py_ssize_t position = core->position;
    uk_u128 counter, prefix;
    if (next_counter(core, now_tick, word, &counter, &prefix)) {
        return 1;
    }
    uk_u128 low = counter;
    int tail = core->tail_bits;
    if (tail) {
        low.hi = (low.hi << tail) | (low.lo >> (64 - tail));
        low.lo = (low.lo << tail) | (word & core->tail_mask);
    }
    uk_u128 result = prefix;
    result.hi |= (low.hi << 2) | (low.lo >> 62); /* rand_a: bits 62.. of the 74 */
    result.lo |= low.lo & V7_MASK_62;            /* rand_b */
    /* RFC 9562 §6.2 "Monotonic Error Checking": the slow path raises when this fails. */
    if (core->has_last && !u128_greater(result, core->last)) {
        core->position = position;
        return 1;
    }
    core->tick = now_tick;
    core->prefix = prefix;
    core->counter = counter;
    core->last = result;
    *value = result;
    return 0;
}

/* The reading of an injected clock as nanoseconds >= 0, or -1 when the slow path must see it. */
static int64_t injected_ns(PyObject *reading)
{
    if (!PyLong_CheckExact(reading)) {
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

/* Outcomes of a fast-path attempt, decided inside the core's critical section. */
enum { FAST_VALUE, FAST_SLOW, FAST_ERROR };

/* now_ns is a reading taken before the state was: when another thread has since moved the
   state to a later tick, the clock is read again, so a value never stands on a reading older
   than the state it follows (what reading the clock here would give). */
static int attempt_system(v7_core *core, int64_t now_ns, uk_u128 *value)
{
    uint64_t word;
    /* Draw first: a refill may run Python code (signal handlers, os.urandom), so the state is
       read only afterwards, with nothing in between that could let another thread in. */
    if (draw(core, &word) < 0) {
        return FAST_ERROR;
    }
    if (now_ns >= 0 && ticks_of(core, now_ns) < core->tick) {
        now_ns = system_clock_ns();
    }
    if (!core->ready || core->busy || now_ns < 0 ||
        next_value(core, ticks_of(core, now_ns), word, value)) {
        core->position--; /* the slow path draws this word itself */
        return FAST_SLOW;
    }
    return FAST_VALUE;
}

static PyObject *fast_system(v7_core *core)
{
    uk_u128 value;
    int outcome;
    /* The clock is read before the critical section, which then lasts a third less: on a
       free-threaded build, two threads calling uuid7() wait for each other less often. */
    int64_t now_ns = system_clock_ns();
    Py_BEGIN_CRITICAL_SECTION(core);
    outcome = attempt_system(core, now_ns, &value);
    Py_END_CRITICAL_SECTION();
    if (outcome == FAST_ERROR) {
        return NULL;
    }
    return outcome == FAST_SLOW ? call_slow(core) : uk_make_uuid(value);
}

static PyObject *fast_injected(v7_core *core)
{
    uint64_t word;
    uk_u128 value;
    PyObject *reading = PyObject_CallNoArgs(core->clock);
    if (reading == NULL) {
        return NULL;
    }
    int64_t now_ns = injected_ns(reading);
    int outcome = FAST_VALUE;
    PyObject *previous = NULL;
    Py_BEGIN_CRITICAL_SECTION(core);
    if (draw(core, &word) < 0) {
        outcome = FAST_ERROR;
    }
    else if (now_ns < 0 || !core->ready || core->busy ||
             next_value(core, ticks_of(core, now_ns), word, &value)) {
        core->position--;
        previous = core->pending;
        core->pending = reading; /* read_clock() hands it to the slow path */
        reading = NULL;
        outcome = FAST_SLOW;
    }
    Py_END_CRITICAL_SECTION();
    Py_XDECREF(previous);
    Py_XDECREF(reading);
    if (outcome == FAST_ERROR) {
        return NULL;
    }
    return outcome == FAST_SLOW ? call_slow(core) : uk_make_uuid(value);
}

static PyObject *core_next(v7_core *core)
{
#ifndef Py_GIL_DISABLED
    /* A shortcut the GIL makes safe; without one, the critical section decides below. */
    if (!core->ready || core->busy) {
        return call_slow(core);
    }
#endif
    if (core->acquire == NULL) {
        /* No lock: the system clock, read in C (an injected clock only in the interlock's
           test, which checks that the busy flag alone keeps this path off taken state). */
        return core->clock == NULL ? fast_system(core) : fast_injected(core);
    }
    /* An injected clock runs Python code: hold the generator's lock around the value, as the
       pure path does, so no other thread reads the clock between this reading and its use. */
    PyObject *acquired = PyObject_CallNoArgs(core->acquire);
    if (acquired == NULL) {
        return NULL;
    }
    Py_DECREF(acquired);
    PyObject *result = fast_injected(core);
    PyObject *type, *error, *traceback;
    PyErr_Fetch(&type, &error, &traceback);
    PyObject *released = PyObject_CallNoArgs(core->release);
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

static PyObject *core_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                                 PyObject *kwnames)
{
    (void)args;
    if (uk_no_arguments("uuid7", PyVectorcall_NARGS(nargsf), kwnames) < 0) {
        return NULL;
    }
    return core_next((v7_core *)self);
}

/* --- the slow path's side -------------------------------------------------------------- */

/* enter() -> (tick, counter, last_value) | None: take the state (busy); None when already
   taken. The tick is the core's: a later one than the generator's when the core made a NEW
   move, which the generator then replays through its Timeline. */
static PyObject *enter_locked(PyObject *self, PyObject *unused)
{
    v7_core *core = (v7_core *)self;
    (void)unused;
    if (core->busy) {
        Py_RETURN_NONE;
    }
    PyObject *counter = uk_long_from_u128(core->counter);
    PyObject *last = core->has_last ? uk_long_from_u128(core->last) : PyLong_FromLong(-1);
    if (counter == NULL || last == NULL) {
        Py_XDECREF(counter);
        Py_XDECREF(last);
        return NULL;
    }
    PyObject *tick = PyLong_FromLongLong(core->tick);
    PyObject *state = tick == NULL ? NULL : PyTuple_Pack(3, tick, counter, last);
    Py_XDECREF(tick);
    Py_DECREF(counter);
    Py_DECREF(last);
    if (state != NULL) {
        core->busy = 1;
    }
    return state;
}

/* leave(tick, counter, prefix, last_value, limit): give the state back (clears busy). */
static PyObject *leave_locked(PyObject *self, PyObject *args)
{
    v7_core *core = (v7_core *)self;
    long long tick, limit;
    PyObject *counter, *prefix, *last;
    core->busy = 0;
    core->ready = 0; /* until every part below is read */
    if (!PyArg_ParseTuple(args, "LO!O!O!L:leave", &tick, &PyLong_Type, &counter, &PyLong_Type,
                          &prefix, &PyLong_Type, &last, &limit)) {
        return NULL;
    }
    PyObject *zero = PyLong_FromLong(0);
    int has_last = zero == NULL ? -1 : PyObject_RichCompareBool(last, zero, Py_GE);
    Py_XDECREF(zero);
    if (has_last < 0 || uk_long_to_u128(counter, &core->counter) < 0 ||
        uk_long_to_u128(prefix, &core->prefix) < 0 ||
        (has_last && uk_long_to_u128(last, &core->last) < 0)) {
        return NULL;
    }
    core->has_last = has_last;
    core->tick = (int64_t)tick;
    core->limit = (int64_t)limit;
    core->ready = tick >= 0; /* before the first tick, every value is the slow path's */
    Py_RETURN_NONE;
}

/* read_clock() -> int: the reading the fast path took and could not use, else the clock. */
static PyObject *core_read_clock(PyObject *self, PyObject *unused)
{
    v7_core *core = (v7_core *)self;
    (void)unused;
    PyObject *reading;
    Py_BEGIN_CRITICAL_SECTION(core);
    reading = core->pending;
    core->pending = NULL;
    Py_END_CRITICAL_SECTION();
    if (reading != NULL) {
        return reading;
    }
    if (core->clock != NULL) {
        return PyObject_CallNoArgs(core->clock);
    }
    int64_t now_ns = system_clock_ns();
    if (now_ns < 0) {
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    return PyLong_FromLongLong(now_ns);
}

/* draw() -> int: the next random word (a whole refill's error if one fails). The core is
   not an iterator: it is a generator's next(), which frameworks that iterate anything
   iterable (Django's migration writer) must not mistake for a sequence. */
static PyObject *core_draw(PyObject *self, PyObject *unused)
{
    uint64_t word;
    int failed;
    (void)unused;
    Py_BEGIN_CRITICAL_SECTION(self);
    failed = draw((v7_core *)self, &word) < 0;
    Py_END_CRITICAL_SECTION();
    return failed ? NULL : PyLong_FromUnsignedLongLong(word);
}

/* attach(slow, acquire, release): the generator's slow path and (injected clock) lock. */
static PyObject *attach_locked(PyObject *self, PyObject *args)
{
    v7_core *core = (v7_core *)self;
    PyObject *slow, *acquire, *release;
    if (!PyArg_ParseTuple(args, "OOO:attach", &slow, &acquire, &release)) {
        return NULL;
    }
    Py_INCREF(slow);
    Py_XSETREF(core->slow, slow);
    Py_XSETREF(core->acquire, acquire == Py_None ? NULL : Py_NewRef(acquire));
    Py_XSETREF(core->release, release == Py_None ? NULL : Py_NewRef(release));
    Py_RETURN_NONE;
}

/* reset(): forget the state and every buffered word (a forked child, RFC 9562 §6.9). */
static PyObject *reset_locked(PyObject *self, PyObject *unused)
{
    v7_core *core = (v7_core *)self;
    (void)unused;
    core->ready = core->busy = core->has_last = 0;
    core->tick = core->limit = -1;
    core->counter.hi = core->counter.lo = 0;
    core->prefix = core->last = core->counter;
    core->position = V7_WORDS;
    Py_CLEAR(core->pending);
    Py_RETURN_NONE;
}

/* The methods above, each inside the core's critical section (PEP 703; empty with a GIL). */
#define UK_LOCKED(name, body)                                                                \
    static PyObject *name(PyObject *self, PyObject *argument)                                \
    {                                                                                        \
        PyObject *result;                                                                    \
        Py_BEGIN_CRITICAL_SECTION(self);                                                     \
        result = body(self, argument);                                                       \
        Py_END_CRITICAL_SECTION();                                                           \
        return result;                                                                       \
    }
UK_LOCKED(core_enter, enter_locked)
UK_LOCKED(core_leave, leave_locked)
UK_LOCKED(core_attach, attach_locked)
UK_LOCKED(core_reset, reset_locked)
#undef UK_LOCKED

/* --- the type -------------------------------------------------------------------------- */

static PyObject *core_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"clock",     "random_bytes",   "fraction_bits", "counter_bits",
                               "tail_bits", "increment_bits", "seed_bits",     NULL};
    PyObject *clock, *random_bytes;
    int fraction_bits, counter_bits, tail_bits, increment_bits, seed_bits;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOiiiii:V7Core", keywords, &clock,
                                     &random_bytes, &fraction_bits, &counter_bits, &tail_bits,
                                     &increment_bits, &seed_bits)) {
        return NULL;
    }
    if (fraction_bits < 0 || fraction_bits > 12 || counter_bits < 1 || seed_bits < 0 ||
        seed_bits > counter_bits ||
        counter_bits + tail_bits + fraction_bits > 74 || tail_bits < 0 || tail_bits > 62 ||
        increment_bits < 0 || increment_bits > 64 || increment_bits >= counter_bits) {
        PyErr_SetString(PyExc_ValueError, "V7Core: a bit plan it does not handle");
        return NULL;
    }
    v7_core *core = (v7_core *)type->tp_alloc(type, 0);
    if (core == NULL) {
        return NULL;
    }
    core->vectorcall = core_vectorcall;
    core->fraction_bits = fraction_bits;
    core->counter_bits = counter_bits;
    core->tail_bits = tail_bits;
    core->seed_bits = seed_bits;
    core->max_tick = ((int64_t)1 << (48 + fraction_bits)) - 1;
    core->tail_mask = tail_bits ? (((uint64_t)1 << tail_bits) - 1) : 0;
    core->increment_mask = increment_bits == 64 ? ~(uint64_t)0
                                                : (((uint64_t)1 << increment_bits) - 1);
    core->clock = clock == Py_None ? NULL : Py_NewRef(clock);
    core->random_bytes = random_bytes == Py_None ? NULL : Py_NewRef(random_bytes);
    PyObject *done = core_reset((PyObject *)core, NULL);
    Py_XDECREF(done);
    return (PyObject *)core;
}

static int core_traverse(PyObject *self, visitproc visit, void *arg)
{
    v7_core *core = (v7_core *)self;
    Py_VISIT(core->dict);
    Py_VISIT(core->clock);
    Py_VISIT(core->random_bytes);
    Py_VISIT(core->slow);
    Py_VISIT(core->acquire);
    Py_VISIT(core->release);
    Py_VISIT(core->pending);
    return 0;
}

static int core_clear(PyObject *self)
{
    v7_core *core = (v7_core *)self;
    Py_CLEAR(core->dict);
    Py_CLEAR(core->clock);
    Py_CLEAR(core->random_bytes);
    Py_CLEAR(core->slow);
    Py_CLEAR(core->acquire);
    Py_CLEAR(core->release);
    Py_CLEAR(core->pending);
    return 0;
}

static void core_dealloc(PyObject *self)
{
    PyObject_GC_UnTrack(self);
    core_clear(self);
    Py_TYPE(self)->tp_free(self);
}

/* ready, busy and slow_calls, for the tests that prove which path made a value; read inside
   the critical section that guards their writes (ThreadSanitizer found the unguarded read of
   busy racing with enter() on a free-threaded build). */
static PyObject *core_get_ready(PyObject *self, void *closure)
{
    (void)closure;
    int ready;
    Py_BEGIN_CRITICAL_SECTION(self);
    ready = ((v7_core *)self)->ready;
    Py_END_CRITICAL_SECTION();
    return PyBool_FromLong(ready);
}

static PyObject *core_get_busy(PyObject *self, void *closure)
{
    (void)closure;
    int busy;
    Py_BEGIN_CRITICAL_SECTION(self);
    busy = ((v7_core *)self)->busy;
    Py_END_CRITICAL_SECTION();
    return PyBool_FromLong(busy);
}

static PyObject *core_get_slow_calls(PyObject *self, void *closure)
{
    (void)closure;
    unsigned long long calls;
    Py_BEGIN_CRITICAL_SECTION(self);
    calls = ((v7_core *)self)->slow_calls;
    Py_END_CRITICAL_SECTION();
    return PyLong_FromUnsignedLongLong(calls);
}

static PyGetSetDef core_getset[] = {
    {"slow_calls", core_get_slow_calls, NULL, "How many calls the slow path made.", NULL},
    {"ready", core_get_ready, NULL, "True when the fast path may make the next value.", NULL},
    {"busy", core_get_busy, NULL, "True while the slow path holds the state.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef core_methods[] = {
    {"enter", core_enter, METH_NOARGS,
     "enter() -> (counter, last_value) | None: take the state for the slow path (sets busy); "
     "None when it is already taken."},
    {"leave", core_leave, METH_VARARGS,
     "leave(tick, counter, prefix, last_value, limit): give the state back (clears busy); "
     "a later tick above limit is the slow path's."},
    {"read_clock", core_read_clock, METH_NOARGS,
     "read_clock() -> int: the reading the fast path handed over, else the clock's."},
    {"draw", core_draw, METH_NOARGS, "draw() -> int: the next random 64-bit word."},
    {"attach", core_attach, METH_VARARGS,
     "attach(slow, acquire, release): the generator's slow path and, for an injected clock, "
     "its lock's acquire and release (else None)."},
    {"reset", core_reset, METH_NOARGS,
     "reset(): forget the state and the buffered random words (in a forked child)."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject v7_core_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "uuidkit._speedups.V7Core",
    .tp_basicsize = sizeof(v7_core),
    .tp_dealloc = core_dealloc,
    .tp_vectorcall_offset = offsetof(v7_core, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "The compiled hot path of one V7Generator (see uuidkit.generators.v7).",
    .tp_traverse = core_traverse,
    .tp_clear = core_clear,
    .tp_methods = core_methods,
    .tp_getset = core_getset,
    .tp_dictoffset = offsetof(v7_core, dict),
    .tp_new = core_new,
};

/* --- blocks (uuidkit.generators._v7bulk) ------------------------------------------------ */

#define BLOCK_START_BITS 60           /* rand_b of the first value is below 2**60 */
#define BLOCK_INCREMENT_BITS 33       /* increments are 2**32 + r, r < 2**32 */
#define BLOCK_MAX ((Py_ssize_t)1 << 28)
#define BLOCK_CHUNK 4096              /* increments drawn at a time from the system */

enum { KIND_INTS, KIND_UUIDS, KIND_RECORDS };

/* n bytes from random_bytes(n) (injected) into out, refusing a result of another size. */
static int injected_bytes(PyObject *random_bytes, unsigned char *out, Py_ssize_t n)
{
    PyObject *data = PyObject_CallFunction(random_bytes, "n", n);
    if (data == NULL) {
        return -1;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0) {
        Py_DECREF(data);
        return -1;
    }
    int ok = view.len == n;
    if (ok) {
        memcpy(out, view.buf, (size_t)n);
    }
    else {
        PyErr_Format(PyExc_ValueError, "random_bytes(%zd) returned %zd bytes", n, view.len);
    }
    PyBuffer_Release(&view);
    Py_DECREF(data);
    return ok ? 0 : -1;
}

/* Where a block's values go: a list of ints or UUIDs, or packed records. */
typedef struct {
    int kind;
    PyObject *result;
    unsigned char *records;
} block_sink;

static int sink_put(block_sink *sink, Py_ssize_t index, uk_u128 value)
{
    if (sink->kind == KIND_RECORDS) {
        uk_store_u128(sink->records + 16 * index, value);
        return 0;
    }
    PyObject *item = sink->kind == KIND_UUIDS ? uk_make_uuid(value) : uk_long_from_u128(value);
    if (item == NULL) {
        return -1;
    }
    PyList_SET_ITEM(sink->result, index, item);
    return 0;
}

/* Fill the sink with count values: prefix | rand_a, then rand_b = start + running sum of
   2**32 + r, r the little-endian 32-bit words of the random bytes (as _v7bulk's
   increment_words lays them out). Sets rand_b of the first and the last value. */
static int fill_block(block_sink *sink, uk_u128 base, uint64_t start, Py_ssize_t count,
                      PyObject *random_bytes, uint64_t *first_rand_b, uint64_t *last_rand_b)
{
    unsigned char chunk[4 * BLOCK_CHUNK];
    unsigned char *bytes = chunk;
    unsigned char *owned = NULL;
    /* Records of a large block are written without the GIL: every random byte is drawn
       first (drawing may run Python code), then the loop touches only the two buffers. */
    int gil_free = sink->kind == KIND_RECORDS && count > UK_GIL_FREE_ABOVE;
    if (random_bytes != NULL || gil_free) {
        /* One call for the whole block, as the pure path makes. */
        owned = PyMem_Malloc((size_t)count * 4);
        if (owned == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        if (random_bytes != NULL ? injected_bytes(random_bytes, owned, count * 4) < 0
                                 : uk_random(owned, (size_t)count * 4) < 0) {
            PyMem_Free(owned);
            return -1;
        }
        bytes = owned;
    }
    PyThreadState *released = gil_free ? uk_release_gil_for(count) : NULL;
    uint64_t rand_b = start;
    int status = 0;
    /* The objects are untracked, but each allocation still counts towards a collection of
       the youngest generation: no collection while the block is made (as the pure path). */
    int collecting = sink->kind == KIND_UUIDS && PyGC_Disable();
    for (Py_ssize_t i = 0; i < count && status == 0; i++) {
        Py_ssize_t at = owned != NULL ? i : i % BLOCK_CHUNK;
        if (owned == NULL && at == 0) {
            Py_ssize_t left = count - i;
            size_t n = (size_t)(left < BLOCK_CHUNK ? left : BLOCK_CHUNK) * 4;
            if (uk_random(chunk, n) < 0) {
                status = -1;
                break;
            }
        }
        const unsigned char *r = bytes + 4 * at;
        rand_b += ((uint64_t)1 << 32) + ((uint64_t)r[0] | (uint64_t)r[1] << 8 |
                                         (uint64_t)r[2] << 16 | (uint64_t)r[3] << 24);
        uk_u128 value = {base.hi, base.lo | rand_b};
        if (i == 0) {
            *first_rand_b = rand_b;
        }
        status = sink_put(sink, i, value);
    }
    uk_reacquire_gil(released);
    if (collecting) {
        PyGC_Enable();
    }
    PyMem_Free(owned);
    *last_rand_b = rand_b;
    return status;
}

/* v7_bulk_block(prefix, counter, counter_bits, increment_bits, count, random_bytes, kind)
   -> (block, first, last, new_counter) | None: the twin of _v7bulk._bulk_block. */
static int int_argument(PyObject *argument, int *out)
{
    long value = PyLong_AsLong(argument);
    if (value == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (value < INT_MIN || value > INT_MAX) {
        PyErr_SetString(PyExc_OverflowError, "v7_bulk_block: argument out of range");
        return -1;
    }
    *out = (int)value;
    return 0;
}

static PyObject *v7_bulk_block(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    int counter_bits, increment_bits, kind;
    Py_ssize_t count;
    uk_u128 prefix, counter;
    (void)module;
    if (nargs != 7) {
        PyErr_SetString(PyExc_TypeError, "v7_bulk_block() takes 7 arguments");
        return NULL;
    }
    PyObject *prefix_object = args[0], *counter_object = args[1], *random_bytes = args[5];
    if (int_argument(args[2], &counter_bits) < 0 || int_argument(args[3], &increment_bits) < 0 ||
        int_argument(args[6], &kind) < 0) {
        return NULL;
    }
    count = PyLong_AsSsize_t(args[4]);
    if (count == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (kind < KIND_INTS || kind > KIND_RECORDS) {
        PyErr_SetString(PyExc_ValueError, "v7_bulk_block: unknown kind");
        return NULL;
    }
    if (uk_long_to_u128(prefix_object, &prefix) < 0 ||
        uk_long_to_u128(counter_object, &counter) < 0) {
        return NULL;
    }
    /* rand_a one above the counter's, so the block is above every earlier value of the
       tick; None (one value at a time, under the overflow policy) when it does not fit. */
    int rand_a_bits = counter_bits - 62;
    uint64_t rand_a = ((counter.hi << 2) | (counter.lo >> 62)) + 1;
    if (count < 1 || rand_a_bits <= 0 || rand_a_bits > 12 || rand_a >> rand_a_bits ||
        increment_bits < BLOCK_INCREMENT_BITS || count > BLOCK_MAX) {
        Py_RETURN_NONE;
    }
    PyObject *source = random_bytes == Py_None ? NULL : random_bytes;
    unsigned char start_bytes[8];
    if (source != NULL ? injected_bytes(source, start_bytes, 8) : uk_random(start_bytes, 8)) {
        return NULL;
    }
    uint64_t start = uk_load_be64(start_bytes) >> (64 - BLOCK_START_BITS);
    block_sink sink = {kind, NULL, NULL};
    sink.result = kind == KIND_RECORDS ? PyByteArray_FromStringAndSize(NULL, count * 16)
                                       : PyList_New(count);
    if (sink.result == NULL) {
        return NULL;
    }
    if (kind == KIND_RECORDS) {
        sink.records = (unsigned char *)PyByteArray_AS_STRING(sink.result);
    }
    uk_u128 base = {prefix.hi | rand_a, prefix.lo};
    uint64_t first_rand_b = 0, last_rand_b = 0;
    if (fill_block(&sink, base, start, count, source, &first_rand_b, &last_rand_b) < 0) {
        Py_DECREF(sink.result);
        return NULL;
    }
    uk_u128 first = {base.hi, base.lo | first_rand_b}, last = {base.hi, base.lo | last_rand_b};
    uk_u128 next_counter = {rand_a >> 2, (rand_a << 62) | last_rand_b};
    PyObject *first_object = uk_long_from_u128(first);
    PyObject *last_object = uk_long_from_u128(last);
    PyObject *counter_out = uk_long_from_u128(next_counter);
    PyObject *answer = NULL;
    if (first_object != NULL && last_object != NULL && counter_out != NULL) {
        answer = PyTuple_Pack(4, sink.result, first_object, last_object, counter_out);
    }
    Py_XDECREF(first_object);
    Py_XDECREF(last_object);
    Py_XDECREF(counter_out);
    Py_DECREF(sink.result);
    return answer;
}

/* --- uuidkit.uuid7 ----------------------------------------------------------------------- */

/* The V7Core of the process-wide default generator (uuidkit.generators.DEFAULT_V7), set once
   by _publish_default_v7. uuidkit.uuid7 is the module function below, a plain builtin
   function whose self is this module: it pickles, copies and serializes by its name, is not
   iterable and has no method that could touch the shared state. `import uuidkit` binds it
   before the generator exists (so that `uuidkit.uuid7` is a plain attribute from the start);
   the first call imports the module that creates and publishes the generator. The import
   system runs that module once per process, and its lock makes racing first calls wait. */
static PyObject *default_v7_core;

static PyObject *speedups_uuid7(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames)
{
    (void)module;
    (void)args;
    if (uk_no_arguments("uuid7", nargs, kwnames) < 0) {
        return NULL;
    }
    if (default_v7_core == NULL && uk_import_for_effect("uuidkit.generators._default_v7") < 0) {
        return NULL;
    }
    if (default_v7_core == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "uuid7: the default generator is not published");
        return NULL;
    }
    return core_next((v7_core *)default_v7_core);
}

/* _publish_default_v7(core): the core behind uuid7(); once per process, never replaced, so
   no caller can swap the shared generator for one whose values go backwards. */
static PyObject *publish_default_v7(PyObject *module, PyObject *core)
{
    (void)module;
    if (!Py_IS_TYPE(core, &v7_core_type)) {
        PyErr_SetString(PyExc_TypeError, "_publish_default_v7: expected a V7Core");
        return NULL;
    }
    if (default_v7_core != NULL && default_v7_core != core) {
        PyErr_SetString(PyExc_RuntimeError, "_publish_default_v7: already published");
        return NULL;
    }
    Py_XSETREF(default_v7_core, Py_NewRef(core));
    Py_RETURN_NONE;
}

static PyMethodDef v7_methods[] = {
    {"uuid7", (PyCFunction)(void (*)(void))speedups_uuid7, METH_FASTCALL | METH_KEYWORDS,
     "uuid7($module, /)\n--\n\n"
     "A new UUIDv7 from the process-wide default generator, greater than every earlier value "
     "of it.\n\n"
     "Thread-safe and fork-safe; in steady state the timestamp is the clock's millisecond.\n\n"
     "References: RFC 9562 §5.7, §6.2."},
    {"_publish_default_v7", publish_default_v7, METH_O,
     "_publish_default_v7(core): the V7Core behind uuid7(), set once per process."},
    {"v7_bulk_block", (PyCFunction)(void (*)(void))v7_bulk_block, METH_FASTCALL,
     "v7_bulk_block(prefix, counter, counter_bits, increment_bits, count, random_bytes, kind) "
     "-> (block, first, last, new_counter) | None: count increasing UUIDv7 values of one "
     "tick above counter, as ints (kind 0), UUIDs (1) or 16-byte records (2); random_bytes "
     "None is the system CSPRNG.\n\nReferences: RFC 9562 §5.7, §6.2."},
    {NULL, NULL, 0, NULL},
};

int uk_v7_init(PyObject *module)
{
    if (PyType_Ready(&v7_core_type) < 0) {
        return -1;
    }
    Py_INCREF(&v7_core_type);
    if (PyModule_AddObject(module, "V7Core", (PyObject *)&v7_core_type) < 0) {
        Py_DECREF(&v7_core_type);
        return -1;
    }
    return PyModule_AddFunctions(module, v7_methods);
}
