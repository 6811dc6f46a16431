/*
 * piilab._fastmask: an optional compiled core for `piilab.tokenization.mask_text`.
 *
 * The reference implementation is the Python code of `piilab.matching.PatternTable`
 * and `piilab.tokenization` (chapter 03 teaches it). This file computes the same
 * result, steps 2-4 of SPEC section 5, for the same inputs:
 *
 *   mask_core(source, pairs, taken) -> (masked_text, mapping, spans) or None
 *
 * `source` is the NFC source; `pairs` the normalized (label, value) pairs of
 * `normalize_candidates` (labels in LABELS, values NFC, trimmed, nonempty);
 * `taken` the set of token names already in the source, or None. None comes
 * back when nothing matches. `configure(labels, span_type)` must be called
 * once first (`piilab.tokenization` does it on import).
 *
 * The tests run every masking test against both implementations and compare
 * them on generated documents, and `PIILAB_PURE_PYTHON=1` turns this core off.
 *
 * How it works, in the order of the Python code:
 *   1. Patterns: every literal and PERSON variant goes into a hash table of
 *      spellings (content -> best rank: a literal's rank is its label's index
 *      in LABELS, a variant's that plus len(LABELS)); numeric values put their
 *      digit sequence into a second table.
 *   2. For every start position, the end of the longest match starting there:
 *      one walk over the source's digit runs (numeric variants), one walk over
 *      its positions, where the first two characters pick the few spellings
 *      worth comparing (a hash table keyed by the pair).
 *   3. One sweep in source order: the longest match at the leftmost free
 *      position wins; its owner is read off the two tables.
 *   4. Tokens per label in source order, keyed by (label, spelling); names in
 *      `taken` are skipped.
 * Every step is linear in the length of the source plus the size of the
 * candidates. Nothing here prints, logs or puts a value into an error message.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* --- configuration (set once by `configure`) ------------------------------ */

static PyObject *g_labels = NULL;    /* tuple of the labels, priority order */
static PyObject *g_rank_of = NULL;   /* dict label -> index in g_labels */
static PyObject *g_span_type = NULL; /* piilab.tokenization.Span */
static Py_ssize_t g_variant = 0;     /* len(LABELS): rank offset of variants */
static Py_ssize_t g_person = -1;     /* index of PERSON */
static PyObject *g_field_start, *g_field_end, *g_field_type, *g_field_token;
static PyObject *g_empty_str, *g_empty_tuple;

#define NO_PREFIX ((Py_UCS4)0xFFFFFFFFu) /* second key character of one-character spellings */

static inline int is_digit(Py_UCS4 c) { return c >= '0' && c <= '9'; }

/* A numeric separator: whitespace (str.isspace) or one of - . / */
static inline int is_sep(Py_UCS4 c) {
    return c == '-' || c == '.' || c == '/' || Py_UNICODE_ISSPACE(c);
}

static uint64_t hash_chars(const Py_UCS4 *p, Py_ssize_t n) {
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (Py_ssize_t i = 0; i < n; i++) {
        h ^= (uint64_t)p[i];
        h *= 1099511628211ULL;
    }
    return h;
}

/* `[0-9][0-9]*(?:[\s./-]{1,3}[0-9]+)*` matching the whole text (matching.is_numeric_variant) */
static int variant_shape(const Py_UCS4 *p, Py_ssize_t n) {
    if (n == 0 || !is_digit(p[0]) || !is_digit(p[n - 1])) return 0;
    Py_ssize_t gap = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (is_digit(p[i])) gap = 0;
        else if (is_sep(p[i])) {
            if (++gap > 3) return 0;
        } else return 0;
    }
    return 1;
}

/* --- a fixed-capacity hash table of code-point strings -> rank ------------ */

typedef struct {
    const Py_UCS4 *chars;
    Py_ssize_t len;
    uint64_t hash;
    Py_ssize_t rank;
    int searched;       /* looked for in the spelling walk */
    Py_ssize_t next;    /* next searched entry with the same first two characters, -1 */
} Entry;

typedef struct {
    Entry *entries;
    Py_ssize_t count, capacity;
    Py_ssize_t *slots;  /* entry index + 1; 0 is empty */
    size_t mask;
} Table;

static size_t slots_for(Py_ssize_t capacity) {
    size_t size = 8;
    while (size < (size_t)capacity * 2) size <<= 1;
    return size;
}

static int table_init(Table *t, Py_ssize_t capacity) {
    size_t size = slots_for(capacity);
    t->entries = PyMem_Malloc(sizeof(Entry) * (size_t)(capacity > 0 ? capacity : 1));
    t->slots = PyMem_Calloc(size, sizeof(Py_ssize_t));
    t->count = 0;
    t->capacity = capacity;
    t->mask = size - 1;
    if (t->entries == NULL || t->slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static void table_free(Table *t) {
    PyMem_Free(t->entries);
    PyMem_Free(t->slots);
    t->entries = NULL;
    t->slots = NULL;
}

static Entry *table_find(const Table *t, const Py_UCS4 *p, Py_ssize_t n, uint64_t h) {
    for (size_t i = h & t->mask;; i = (i + 1) & t->mask) {
        Py_ssize_t slot = t->slots[i];
        if (slot == 0) return NULL;
        Entry *e = &t->entries[slot - 1];
        if (e->hash == h && e->len == n && memcmp(e->chars, p, (size_t)n * sizeof(Py_UCS4)) == 0)
            return e;
    }
}

/* Add `p` with `rank` (keeping the better, lower, rank of an existing entry). */
static Entry *table_add(Table *t, const Py_UCS4 *p, Py_ssize_t n, Py_ssize_t rank) {
    uint64_t h = hash_chars(p, n);
    size_t i = h & t->mask;
    for (;; i = (i + 1) & t->mask) {
        Py_ssize_t slot = t->slots[i];
        if (slot == 0) break;
        Entry *e = &t->entries[slot - 1];
        if (e->hash == h && e->len == n && memcmp(e->chars, p, (size_t)n * sizeof(Py_UCS4)) == 0) {
            if (rank < e->rank) e->rank = rank;
            return e;
        }
    }
    if (t->count >= t->capacity) { /* cannot happen: capacities are upper bounds */
        PyErr_SetString(PyExc_SystemError, "_fastmask: table capacity exceeded");
        return NULL;
    }
    Entry *e = &t->entries[t->count];
    e->chars = p;
    e->len = n;
    e->hash = h;
    e->rank = rank;
    e->searched = 0;
    e->next = -1;
    t->slots[i] = ++t->count;
    return e;
}

/* --- the index of searched spellings by their first two characters -------- */

typedef struct {
    Py_UCS4 *first, *second; /* key of each slot */
    Py_ssize_t *head;        /* first entry index + 1 for that key; 0 is empty */
    size_t mask;
    uint64_t bloom[16];      /* first characters seen, by their low 10 bits */
} PrefixIndex;

static int prefix_build(PrefixIndex *x, Table *spellings) {
    size_t size = slots_for(spellings->count);
    x->first = PyMem_Malloc(size * sizeof(Py_UCS4));
    x->second = PyMem_Malloc(size * sizeof(Py_UCS4));
    x->head = PyMem_Calloc(size, sizeof(Py_ssize_t));
    x->mask = size - 1;
    memset(x->bloom, 0, sizeof(x->bloom));
    if (x->first == NULL || x->second == NULL || x->head == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t id = 0; id < spellings->count; id++) {
        Entry *e = &spellings->entries[id];
        if (!e->searched) continue;
        Py_UCS4 a = e->chars[0], b = e->len > 1 ? e->chars[1] : NO_PREFIX;
        size_t i = (((uint64_t)a * 1000003u) ^ b) & x->mask;
        while (x->head[i] != 0 && !(x->first[i] == a && x->second[i] == b)) i = (i + 1) & x->mask;
        if (x->head[i] == 0) {
            x->first[i] = a;
            x->second[i] = b;
        }
        e->next = x->head[i] - 1;
        x->head[i] = id + 1;
        x->bloom[(a & 1023) >> 6] |= (uint64_t)1 << (a & 63);
    }
    return 0;
}

static Py_ssize_t prefix_head(const PrefixIndex *x, Py_UCS4 a, Py_UCS4 b) {
    for (size_t i = (((uint64_t)a * 1000003u) ^ b) & x->mask;; i = (i + 1) & x->mask) {
        if (x->head[i] == 0) return -1;
        if (x->first[i] == a && x->second[i] == b) return x->head[i] - 1;
    }
}

static void prefix_free(PrefixIndex *x) {
    PyMem_Free(x->first);
    PyMem_Free(x->second);
    PyMem_Free(x->head);
}

/* --- configure ------------------------------------------------------------ */

static PyObject *configure(PyObject *self, PyObject *args) {
    PyObject *labels, *span_type;
    if (!PyArg_ParseTuple(args, "O!O!:configure", &PyTuple_Type, &labels, &PyType_Type, &span_type))
        return NULL;
    if (PyTuple_GET_SIZE(labels) == 0) {
        PyErr_SetString(PyExc_ValueError, "labels must not be empty");
        return NULL;
    }
    PyObject *rank_of = PyDict_New();
    if (rank_of == NULL) return NULL;
    Py_ssize_t person = -1;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(labels); i++) {
        PyObject *label = PyTuple_GET_ITEM(labels, i);
        PyObject *index = PyLong_FromSsize_t(i);
        if (!PyUnicode_Check(label) || index == NULL || PyDict_SetItem(rank_of, label, index) < 0) {
            Py_XDECREF(index);
            Py_DECREF(rank_of);
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "labels must be strings");
            return NULL;
        }
        Py_DECREF(index);
        if (PyUnicode_CompareWithASCIIString(label, "PERSON") == 0) person = i;
    }
    Py_INCREF(labels);
    Py_INCREF(span_type);
    Py_XSETREF(g_labels, labels);
    Py_XSETREF(g_rank_of, rank_of);
    Py_XSETREF(g_span_type, span_type);
    g_variant = PyTuple_GET_SIZE(labels);
    g_person = person;
    Py_RETURN_NONE;
}

/* --- mask_core ------------------------------------------------------------ */

/* A new Span without running its (frozen dataclass) __init__: the fields go
 * straight into the instance dict, as `tokenization._span` does. */
static PyObject *new_span(PyObject *span_type, Py_ssize_t start, Py_ssize_t end, PyObject *label,
                          PyObject *token) {
    PyObject *span = PyBaseObject_Type.tp_new((PyTypeObject *)span_type, g_empty_tuple, NULL);
    if (span == NULL) return NULL;
    PyObject *fields = PyObject_GenericGetDict(span, NULL);
    PyObject *s = PyLong_FromSsize_t(start), *e = PyLong_FromSsize_t(end);
    int bad = fields == NULL || s == NULL || e == NULL ||
              PyDict_SetItem(fields, g_field_start, s) < 0 ||
              PyDict_SetItem(fields, g_field_end, e) < 0 ||
              PyDict_SetItem(fields, g_field_type, label) < 0 ||
              PyDict_SetItem(fields, g_field_token, token) < 0;
    Py_XDECREF(fields);
    Py_XDECREF(s);
    Py_XDECREF(e);
    if (bad) {
        Py_DECREF(span);
        return NULL;
    }
    return span;
}

static PyObject *mask_core(PyObject *self, PyObject *args) {
    PyObject *source, *pairs_in, *taken;
    if (!PyArg_ParseTuple(args, "UOO:mask_core", &source, &pairs_in, &taken)) return NULL;
    if (g_labels == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "_fastmask.configure() was not called");
        return NULL;
    }
    if (taken != Py_None && !PyAnySet_Check(taken)) {
        PyErr_SetString(PyExc_TypeError, "taken must be a set or None");
        return NULL;
    }
    /* The configuration as it is now, held for the whole call (a `configure`
     * from Python code run by a set look-up cannot pull it away). */
    PyObject *labels = Py_NewRef(g_labels), *rank_of = Py_NewRef(g_rank_of);
    PyObject *span_type = Py_NewRef(g_span_type);
    const Py_ssize_t variant = g_variant, person = g_person;

    PyObject *result = NULL, *pairs = NULL, *token_of = NULL, *mapping = NULL;
    PyObject *pieces = NULL, *spans = NULL;
    Py_UCS4 *src = NULL, *arena = NULL, *digit_buf = NULL;
    Py_ssize_t *best = NULL, *group_start = NULL, *group_end = NULL, *next_number = NULL;
    Table spellings = {0}, digit_keys = {0};
    PrefixIndex prefixes = {0};

    pairs = PySequence_Fast(pairs_in, "pairs must be iterable");
    if (pairs == NULL) goto done;
    Py_ssize_t npairs = PySequence_Fast_GET_SIZE(pairs);
    PyObject **items = PySequence_Fast_ITEMS(pairs);

    /* Sizes first: one arena holds every value, variant and digit key. */
    Py_ssize_t arena_size = 1;
    for (Py_ssize_t k = 0; k < npairs; k++) {
        PyObject *pair = items[k];
        /* Exact str only: a subclass could run Python code (a __hash__ in the label
         * look-up) that changes the pairs after the arena was sized from them. */
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 ||
            !PyUnicode_CheckExact(PyTuple_GET_ITEM(pair, 0)) ||
            !PyUnicode_CheckExact(PyTuple_GET_ITEM(pair, 1))) {
            PyErr_Format(PyExc_TypeError, "pair %zd is not a (label, value) tuple of strings", k);
            goto done;
        }
        /* the value, its digits, and room for four PERSON variants of up to 6 characters */
        arena_size += 2 * PyUnicode_GET_LENGTH(PyTuple_GET_ITEM(pair, 1)) + 4 * 11 + 6;
    }
    arena = PyMem_Malloc((size_t)arena_size * sizeof(Py_UCS4));
    if (arena == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (table_init(&spellings, 5 * npairs + 1) < 0 || table_init(&digit_keys, npairs + 1) < 0)
        goto done;

    /* Step 2: the patterns (PatternTable.build). */
    Py_UCS4 *free_chars = arena;
    Py_ssize_t max_key = 0;
    for (Py_ssize_t k = 0; k < npairs; k++) {
        PyObject *label = PyTuple_GET_ITEM(items[k], 0), *value = PyTuple_GET_ITEM(items[k], 1);
        PyObject *rank_obj = PyDict_GetItemWithError(rank_of, label);
        if (rank_obj == NULL) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_ValueError, "pair %zd: type is not a PII label", k);
            goto done;
        }
        Py_ssize_t rank = PyLong_AsSsize_t(rank_obj);
        Py_ssize_t n = PyUnicode_GET_LENGTH(value);
        if (n == 0) continue; /* (normalize_candidates drops empty values) */
        Py_UCS4 *v = free_chars;
        if (PyUnicode_AsUCS4(value, v, n, 0) == NULL) goto done;
        free_chars += n;
        Entry *literal = table_add(&spellings, v, n, rank);
        if (literal == NULL) goto done;

        if (rank == person) { /* PERSON variants: the letters joined by "", " ", "\t", "\n" */
            Py_UCS4 *letters = free_chars;
            Py_ssize_t m = 0;
            for (Py_ssize_t i = 0; i < n; i++)
                if (!Py_UNICODE_ISSPACE(v[i])) letters[m++] = v[i];
            if (m >= 2 && m <= 6) {
                free_chars += m;
                Entry *e = table_add(&spellings, letters, m, rank + variant);
                if (e == NULL) goto done;
                e->searched = 1;
                static const Py_UCS4 joiners[3] = {' ', '\t', '\n'};
                for (int j = 0; j < 3; j++) {
                    Py_UCS4 *joined = free_chars;
                    for (Py_ssize_t i = 0; i < m; i++) {
                        if (i > 0) *free_chars++ = joiners[j];
                        *free_chars++ = letters[i];
                    }
                    e = table_add(&spellings, joined, 2 * m - 1, rank + variant);
                    if (e == NULL) goto done;
                    e->searched = 1;
                }
            }
        }

        /* A numeric value (digits, whitespace and - . /, at least one digit): its digits. */
        if (is_digit(v[0]) || v[0] == '-' || v[0] == '.' || v[0] == '/') {
            Py_UCS4 *digits = free_chars;
            Py_ssize_t d = 0;
            int numeric = 1;
            for (Py_ssize_t i = 0; i < n && numeric; i++) {
                if (is_digit(v[i])) digits[d++] = v[i];
                else if (!is_sep(v[i])) numeric = 0;
            }
            if (numeric && d > 0) {
                free_chars += d;
                if (table_add(&digit_keys, digits, d, rank + variant) == NULL) goto done;
                if (d > max_key) max_key = d;
                /* Its literal is one of its numeric variants: the digit-run walk finds it. */
                if (variant_shape(v, n)) continue;
            }
        }
        literal->searched = 1;
    }

    /* Step 3a: for every start, the end of the longest match starting there. */
    src = PyUnicode_AsUCS4Copy(source);
    if (src == NULL) goto done;
    Py_ssize_t size = PyUnicode_GET_LENGTH(source);
    best = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(size + 1));
    if (best == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < size; i++) best[i] = -1;

    if (digit_keys.count > 0) { /* numeric variants live in digit runs */
        group_start = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(size / 2 + 1));
        group_end = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(size / 2 + 1));
        digit_buf = PyMem_Malloc(sizeof(Py_UCS4) * (size_t)(max_key + size + 1));
        if (group_start == NULL || group_end == NULL || digit_buf == NULL) {
            PyErr_NoMemory();
            goto done;
        }
        Py_ssize_t i = 0;
        while (i < size) {
            if (!is_digit(src[i])) {
                i++;
                continue;
            }
            /* The run: digit groups joined by gaps of 1-3 separators. */
            Py_ssize_t groups = 0, j = i;
            for (;;) {
                group_start[groups] = j;
                while (j < size && is_digit(src[j])) j++;
                group_end[groups++] = j;
                Py_ssize_t k = j;
                while (k < size && k - j < 4 && is_sep(src[k])) k++;
                if (k - j >= 1 && k - j <= 3 && k < size && is_digit(src[k])) j = k;
                else break;
            }
            /* Every stretch of consecutive groups no longer than the longest key. */
            for (Py_ssize_t first = 0; first < groups; first++) {
                Py_ssize_t d = 0;
                for (Py_ssize_t last = first; last < groups; last++) {
                    Py_ssize_t glen = group_end[last] - group_start[last];
                    if (d + glen > max_key) break;
                    memcpy(digit_buf + d, src + group_start[last], (size_t)glen * sizeof(Py_UCS4));
                    d += glen;
                    if (table_find(&digit_keys, digit_buf, d, hash_chars(digit_buf, d)) != NULL &&
                        group_end[last] > best[group_start[first]])
                        best[group_start[first]] = group_end[last];
                }
            }
            i = j; /* the end of the run's last group */
        }
    }

    if (prefix_build(&prefixes, &spellings) < 0) goto done;
    for (Py_ssize_t i = 0; i < size; i++) {
        Py_UCS4 a = src[i];
        if (!(prefixes.bloom[(a & 1023) >> 6] & ((uint64_t)1 << (a & 63)))) continue;
        for (int pass = 0; pass < 2; pass++) {
            Py_UCS4 b = pass == 0 ? (i + 1 < size ? src[i + 1] : NO_PREFIX) : NO_PREFIX;
            if (pass == 1 && i + 1 >= size) break; /* (already probed with NO_PREFIX) */
            for (Py_ssize_t id = prefix_head(&prefixes, a, b); id >= 0; id = spellings.entries[id].next) {
                const Entry *e = &spellings.entries[id];
                Py_ssize_t end = i + e->len;
                if (end > size || end <= best[i] ||
                    memcmp(src + i, e->chars, (size_t)e->len * sizeof(Py_UCS4)) != 0)
                    continue;
                /* The numeric boundary: no digit may continue a match that starts/ends with one. */
                if (is_digit(e->chars[0]) && i > 0 && is_digit(src[i - 1])) continue;
                if (is_digit(e->chars[e->len - 1]) && end < size && is_digit(src[end])) continue;
                best[i] = end;
            }
        }
    }

    /* Steps 3b and 4: the sweep, the owners, the tokens. */
    token_of = PyDict_New();
    mapping = PyDict_New();
    pieces = PyList_New(0);
    spans = PyList_New(0);
    next_number = PyMem_Calloc((size_t)variant + 1, sizeof(Py_ssize_t));
    if (token_of == NULL || mapping == NULL || pieces == NULL || spans == NULL || next_number == NULL) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t cursor = 0;
    for (Py_ssize_t start = 0; start < size; start++) {
        if (best[start] < 0 || start < cursor) continue;
        Py_ssize_t end = best[start], n = end - start;
        const Entry *e = table_find(&spellings, src + start, n, hash_chars(src + start, n));
        Py_ssize_t rank = e != NULL ? e->rank : 2 * variant;
        /* A variant may still lose to a numeric variant of a higher-priority candidate. */
        if (rank >= variant && digit_keys.count > 0 && variant_shape(src + start, n)) {
            Py_ssize_t d = 0;
            for (Py_ssize_t i = start; i < end; i++)
                if (is_digit(src[i])) digit_buf[d++] = src[i];
            const Entry *key = table_find(&digit_keys, digit_buf, d, hash_chars(digit_buf, d));
            if (key != NULL && key->rank < rank) rank = key->rank;
        }
        if (rank >= 2 * variant) {
            PyErr_SetString(PyExc_SystemError, "_fastmask: a match without an owner");
            goto done;
        }
        Py_ssize_t index = rank % variant;
        PyObject *label = PyTuple_GET_ITEM(labels, index);

        PyObject *spelling = PyUnicode_Substring(source, start, end);
        PyObject *key = spelling ? PyTuple_Pack(2, label, spelling) : NULL;
        if (key == NULL) {
            Py_XDECREF(spelling);
            goto done;
        }
        PyObject *token = PyDict_GetItemWithError(token_of, key); /* borrowed */
        if (token != NULL) {
            Py_INCREF(token);
        } else if (PyErr_Occurred()) {
            Py_DECREF(key);
            Py_DECREF(spelling);
            goto done;
        } else {
            Py_ssize_t number = next_number[index] > 0 ? next_number[index] : 1;
            for (;;) {
                token = PyUnicode_FromFormat("[%U_%zd]", label, number);
                int clash = token == NULL ? -1 : (taken == Py_None ? 0 : PySet_Contains(taken, token));
                if (clash == 0) break;
                Py_XDECREF(token);
                if (clash < 0) {
                    Py_DECREF(key);
                    Py_DECREF(spelling);
                    goto done;
                }
                number++;
            }
            next_number[index] = number + 1;
            if (PyDict_SetItem(token_of, key, token) < 0 || PyDict_SetItem(mapping, token, spelling) < 0) {
                Py_DECREF(token);
                Py_DECREF(key);
                Py_DECREF(spelling);
                goto done;
            }
        }
        Py_DECREF(key);
        Py_DECREF(spelling);
        PyObject *before = PyUnicode_Substring(source, cursor, start);
        PyObject *span = new_span(span_type, start, end, label, token);
        int bad = before == NULL || span == NULL || PyList_Append(pieces, before) < 0 ||
                  PyList_Append(pieces, token) < 0 || PyList_Append(spans, span) < 0;
        Py_XDECREF(before);
        Py_XDECREF(span);
        Py_DECREF(token);
        if (bad) goto done;
        cursor = end;
    }

    if (PyList_GET_SIZE(spans) == 0) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    PyObject *rest = PyUnicode_Substring(source, cursor, size);
    if (rest == NULL || PyList_Append(pieces, rest) < 0) {
        Py_XDECREF(rest);
        goto done;
    }
    Py_DECREF(rest);
    PyObject *masked = PyUnicode_Join(g_empty_str, pieces);
    PyObject *span_tuple = masked ? PyList_AsTuple(spans) : NULL;
    if (span_tuple != NULL) result = PyTuple_Pack(3, masked, mapping, span_tuple);
    Py_XDECREF(masked);
    Py_XDECREF(span_tuple);

done:
    Py_DECREF(labels);
    Py_DECREF(rank_of);
    Py_DECREF(span_type);
    Py_XDECREF(pairs);
    Py_XDECREF(token_of);
    Py_XDECREF(mapping);
    Py_XDECREF(pieces);
    Py_XDECREF(spans);
    PyMem_Free(src);
    PyMem_Free(arena);
    PyMem_Free(digit_buf);
    PyMem_Free(best);
    PyMem_Free(group_start);
    PyMem_Free(group_end);
    PyMem_Free(next_number);
    table_free(&spellings);
    table_free(&digit_keys);
    prefix_free(&prefixes);
    return result;
}

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS,
     "configure(labels, span_type): the labels in priority order and the Span class."},
    {"mask_core", mask_core, METH_VARARGS,
     "mask_core(source, pairs, taken) -> (masked_text, mapping, spans) or None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_fastmask",
    "Optional compiled core of piilab.tokenization.mask_text (same results as the Python code).",
    -1, methods,
};

PyMODINIT_FUNC PyInit__fastmask(void) {
    g_field_start = PyUnicode_InternFromString("start");
    g_field_end = PyUnicode_InternFromString("end");
    g_field_type = PyUnicode_InternFromString("type");
    g_field_token = PyUnicode_InternFromString("token");
    g_empty_str = PyUnicode_FromString("");
    g_empty_tuple = PyTuple_New(0);
    if (g_field_start == NULL || g_field_end == NULL || g_field_type == NULL ||
        g_field_token == NULL || g_empty_str == NULL || g_empty_tuple == NULL)
        return NULL;
    return PyModule_Create(&module);
}
