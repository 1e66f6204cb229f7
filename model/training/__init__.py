"""Training our own models, and measuring them.

    presets.py       named training recipes (``python -m model train --preset NAME``)
    train.py         the training loop
    snapshots.py     weight snapshots taken during training
    average.py       checkpoint averaging
    evaluate.py      batched translation and BLEU / chrF
    lm_evaluate.py   next-token loss and perplexity of a decoder-only model
    significance.py  paired bootstrap: is a new model really better?
"""
