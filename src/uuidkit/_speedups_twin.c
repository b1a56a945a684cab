/* uuidkit._speedups: CompiledFunction, the compiled functions that carry their Python
 * twin's metadata (name, docstring, __wrapped__) and are called without the builtin
 * function's own argument checks when the arguments fit.
 */
#include "_speedups.h"

#include <stddef.h>

/* A compiled function with an instance dict, so uuidkit._accel can give it the name, the
   docstring and the __wrapped__ of its Python twin (inspect.signature follows __wrapped__,
   pickle finds it by __module__ and __qualname__). Calls go straight to the C function. */
typedef struct {
    PyObject_HEAD
    PyObject *function; /* the builtin function */
    vectorcallfunc call;
    PyObject *dict;
    vectorcallfunc vectorcall;
    /* The C function itself, called directly when the arguments fit its calling convention
       (the builtin function's own vectorcall would check them again, and the recursion
       limit, which a compiled uuidkit function never recurses into); any other call goes
       to the Python twin, or through call when there is none. */
    PyCFunction method;
    PyObject *self;     /* the module, borrowed: function holds it */
    int flags;
} twin_object;

/* A METH_FASTCALL | METH_KEYWORDS function (named PyCFunctionFastWithKeywords from 3.13). */
typedef PyObject *(*fastcall_keywords)(PyObject *, PyObject *const *, Py_ssize_t, PyObject *);
/* A METH_FASTCALL function (PyCFunctionFast from 3.13). */
typedef PyObject *(*fastcall)(PyObject *, PyObject *const *, Py_ssize_t);

static PyObject *twin_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                                 PyObject *kwnames)
{
    twin_object *twin = (twin_object *)self;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    int no_keywords = kwnames == NULL || PyTuple_GET_SIZE(kwnames) == 0;
    switch (twin->flags) {
    case METH_FASTCALL | METH_KEYWORDS:
        return ((fastcall_keywords)(void (*)(void))twin->method)(twin->self, args, nargs,
                                                                 kwnames);
    case METH_FASTCALL:
        if (no_keywords) {
            return ((fastcall)(void (*)(void))twin->method)(twin->self, args, nargs);
        }
        break;
    case METH_O:
        if (nargs == 1 && no_keywords) {
            return twin->method(twin->self, args[0]);
        }
        break;
    case METH_NOARGS:
        if (nargs == 0 && no_keywords) {
            return twin->method(twin->self, NULL);
        }
        break;
    default: /* a convention not called directly: the builtin function checks and calls */
        return twin->call(twin->function, args, nargsf, kwnames);
    }
    /* Arguments the C function does not take (keywords, another count): the Python twin
       (__wrapped__, set by uuidkit._accel) answers, as the pure path would. */
    static PyObject *wrapped_name;
    if (wrapped_name == NULL) {
        wrapped_name = PyUnicode_InternFromString("__wrapped__");
        if (wrapped_name == NULL) {
            return NULL;
        }
    }
    PyObject *wrapped = twin->dict != NULL ? PyDict_GetItemWithError(twin->dict, wrapped_name)
                                           : NULL; /* borrowed */
    if (wrapped != NULL) {
        Py_INCREF(wrapped);
        PyObject *result = PyObject_Vectorcall(wrapped, args, nargsf, kwnames);
        Py_DECREF(wrapped);
        return result;
    }
    if (PyErr_Occurred()) {
        return NULL;
    }
    return twin->call(twin->function, args, nargsf, kwnames);
}

static int twin_traverse(PyObject *self, visitproc visit, void *arg)
{
    twin_object *twin = (twin_object *)self;
    Py_VISIT(twin->function);
    Py_VISIT(twin->dict);
    return 0;
}

static int twin_clear(PyObject *self)
{
    twin_object *twin = (twin_object *)self;
    Py_CLEAR(twin->function);
    Py_CLEAR(twin->dict);
    return 0;
}

static void twin_dealloc(PyObject *self)
{
    PyObject_GC_UnTrack(self);
    twin_clear(self);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *twin_reduce(PyObject *self, PyObject *unused)
{
    (void)unused;
    return PyObject_GetAttrString(self, "__qualname__"); /* pickled by reference */
}

static PyObject *twin_repr(PyObject *self)
{
    PyObject *name = PyObject_GetAttrString(self, "__qualname__");
    if (name == NULL) {
        PyErr_Clear();
        return PyUnicode_FromString("<compiled uuidkit function>");
    }
    PyObject *text = PyUnicode_FromFormat("<compiled function %U>", name);
    Py_DECREF(name);
    return text;
}

static PyMethodDef twin_methods[] = {
    {"__reduce__", twin_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject twin_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "uuidkit._speedups.CompiledFunction",
    .tp_basicsize = sizeof(twin_object),
    .tp_dealloc = twin_dealloc,
    .tp_vectorcall_offset = offsetof(twin_object, vectorcall),
    .tp_repr = twin_repr,
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "A compiled uuidkit function carrying its Python twin's name and docstring.",
    .tp_traverse = twin_traverse,
    .tp_clear = twin_clear,
    .tp_methods = twin_methods,
    .tp_dictoffset = offsetof(twin_object, dict),
};

/* twin(function) -> CompiledFunction: a compiled function that can carry attributes. */
PyObject *uk_twin(PyObject *module, PyObject *function)
{
    (void)module;
    vectorcallfunc call = PyVectorcall_Function(function);
    if (!PyCFunction_Check(function) || call == NULL) {
        PyErr_SetString(PyExc_TypeError, "twin: expected a compiled function");
        return NULL;
    }
    twin_object *twin = PyObject_GC_New(twin_object, &twin_type);
    if (twin == NULL) {
        return NULL;
    }
    twin->function = Py_NewRef(function);
    twin->call = call;
    twin->method = PyCFunction_GET_FUNCTION(function);
    twin->self = PyCFunction_GET_SELF(function);
    /* METH_COEXIST does not change the call; any other flag (METH_METHOD...) matches no
       case of twin_vectorcall, which then uses the function's own vectorcall. */
    twin->flags = PyCFunction_GET_FLAGS(function) & ~METH_COEXIST;
    twin->dict = NULL;
    twin->vectorcall = twin_vectorcall;
    PyObject_GC_Track((PyObject *)twin);
    return (PyObject *)twin;
}

int uk_twin_ready(void)
{
    return PyType_Ready(&twin_type);
}
