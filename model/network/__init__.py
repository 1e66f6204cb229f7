"""The Transformer itself, written out so that every weight and step can be hooked and shown.

    config.py           the network's and a training run's configuration, and their bounds
    kinds.py            the attention kinds (encoder, decoder, cross): names and hook names
    transformer.py      the encoder-decoder Transformer, with hook points everywhere
    layers.py           encoder and decoder blocks: attention + feed-forward, residual + norm
    attention.py        multi-head attention, step by step
    norms.py            LayerNorm and RMSNorm, made from the config (blocks, QK-norm)
    dropout.py          dropout that is not called at all where it does nothing
    masking.py          where a query may not look, and the softmax that respects it
    positional.py       sinusoidal, learned and rotary positions
    hooks.py            named hook points and ``run_with_cache``
    recorded.py         what each attention layer's softmax saw, kept to compute any head later
    attention_stack.py  one kind's [layer, head, query, key] weights, computed when indexed
    stack_rows.py       one layer of a stack or an array read a block of query rows at a time (no torch)
    trace.py            the shape trace of one forward pass
    progress.py         how far a long computation has got, for a progress bar
"""
