"""Running a loaded model: what the app, the command line and the experiments of ``lab/`` call.

    analysis.py      one request end to end: text -> tokens -> decoded output -> one hooked, traced pass
    one_pass.py      an analysis in one pass: the recorded prompt (or source) pass is the decoding's prefill
    interventions.py labelled, reversible changes to the forward pass (always undone)
    embeddings.py    sentence vectors of an encoder-only model, and their cosine
    token_losses.py  per-token loss of a teacher-forced analysis
    runtime.py       how the process runs the models: torch threads and the C library's memory
"""
