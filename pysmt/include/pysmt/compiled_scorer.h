/* pysmt's compiled-scorer interface: how a plugin's stateful feature hands the compiled search a
 * scorer written in C or C++, which the search calls directly, without Python (no call through the
 * interpreter per batch of requests, and no Python objects per translation option).
 *
 * It is the array interface of docs/writing-a-feature.md (``start`` and ``score_batch``) in C, with
 * the same guarantees: requests come in batches of at most the feature's buffer size, each distinct
 * (state, option, end) once a sentence; state ids are the scorer's own (equal ids: equal states).
 * The search checks what comes back (scores finite or -inf, ids not negative) and reports a fault
 * naming the feature. A scorer must give exactly what its feature's Python ``score_batch`` gives, which
 * stays in use for the Python reference search and when no compiled scorer is offered.
 *
 * The feature's Python class offers it from ``compiled_scorer()``: a PyCapsule named
 * PYSMT_SCORER_CAPSULE holding a ``pysmt_scorer *``, valid while the feature lives. Build against
 * this header with ``pysmt.get_include()`` (as numpy's headers with ``numpy.get_include()``). The
 * search calls the scorer from one thread at a time, without holding Python's GIL: the scorer must
 * not touch Python objects.
 */
#ifndef PYSMT_COMPILED_SCORER_H
#define PYSMT_COMPILED_SCORER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PYSMT_SCORER_CAPSULE "pysmt.compiled_scorer"
#define PYSMT_SCORER_VERSION 1

/* One sentence's translation options, as the scorer's ``start`` sees them. */
typedef struct pysmt_options {
  int32_t count; /* the options (requests name them 0 .. count - 1) */
  /* option k's target words are words[offsets[k]] .. words[offsets[k + 1] - 1], numbers of the decoder's
   * target vocabulary: a number always means the same word while the decoder lives */
  const int64_t *offsets;
  const int32_t *words;
  /* the UTF-8 bytes of a word number (not NUL-terminated: *length bytes), valid while the decoder lives */
  const char *(*word)(const void *vocabulary, int32_t number, size_t *length);
  const void *vocabulary;
} pysmt_options;

typedef struct pysmt_scorer {
  uint32_t version;   /* PYSMT_SCORER_VERSION */
  int32_t num_scores; /* the feature's scores */
  void *self;         /* the scorer's own state, given back to every function */
  /* Begin a sentence over its options: write the empty hypothesis' state id to *initial. 0, or -1 after
   * setting the error message. */
  int (*start)(void *self, const pysmt_options *options, int64_t *initial);
  /* Score ``count`` requests: option options[k] appended to the hypothesis of state states[k], plus the
   * sentence's end when ends[k]; write num_scores scores per request (scores[k * num_scores ...]) and the
   * new states' ids. 0, or -1 after setting the error message. */
  int (*score)(void *self, size_t count, const int64_t *states, const int32_t *options, const uint8_t *ends,
               double *scores, int64_t *new_states);
  /* The last error's message, NUL-terminated. */
  const char *(*error)(void *self);
} pysmt_scorer;

#ifdef __cplusplus
}
#endif

#endif /* PYSMT_COMPILED_SCORER_H */
