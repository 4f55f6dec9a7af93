/*
 * suggest.h - "did you mean": for the scene loader's unknown keys and names, and the
 * command line's unknown solvers and commands.
 */
#ifndef TP_UTIL_SUGGEST_H
#define TP_UTIL_SUGGEST_H

/* The closest of the NULL-terminated candidates to word (case-insensitive edit distance;
 * a prefix of three or more characters also counts), or NULL if none is close enough to
 * be a plausible typo. */
const char *tp_suggest(const char *word, const char *const *cands);

#endif
