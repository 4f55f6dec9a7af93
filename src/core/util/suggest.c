/* suggest.c - "did you mean": the candidate a mistyped word most likely meant (suggest.h). */
#include "util/suggest.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

/* Optimal-string-alignment distance (Levenshtein plus adjacent transpositions),
 * ASCII case-insensitive; words longer than 63 bytes are never close. */
static int distance(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	if (na > 63 || nb > 63)
		return 1000;
	int d[64][64];
	for (size_t i = 0; i <= na; i++)
		d[i][0] = (int)i;
	for (size_t j = 0; j <= nb; j++)
		d[0][j] = (int)j;
	for (size_t i = 1; i <= na; i++) {
		for (size_t j = 1; j <= nb; j++) {
			int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
			int best = d[i - 1][j - 1] + (ca != cb);
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == cb && d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	}
	return d[na][nb];
}

const char *tp_suggest(const char *word, const char *const *cands)
{
	const char *best = NULL;
	int bestd = 1000;
	size_t nw = strlen(word);
	for (int i = 0; cands[i]; i++) {
		size_t nc = strlen(cands[i]);
		int d = distance(word, cands[i]);
		/* A typo changes a few characters, fewer than the word has; a prefix of three
		 * or more characters ("dur" for "duration") also counts. */
		int limit = nw <= 4 ? 1 : nw <= 8 ? 2 : 3;
		size_t longest = nw > nc ? nw : nc;
		int close = d <= limit && (size_t)d < longest;
		if (!close && nw >= 3 && nw < nc && !strncasecmp(word, cands[i], nw))
			close = 1, d = limit;
		if (close && d < bestd) {
			best = cands[i];
			bestd = d;
		}
	}
	return best;
}
