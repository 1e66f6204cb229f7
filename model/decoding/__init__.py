"""Decoding: how the decoder picks each output token.

    strategy.py   :class:`Strategy` (greedy, beam search or sampling) and its bounds; no torch
    results.py    what sampling and beam search return with their traces; no torch
    decoders.py   greedy decoding, sampling, teacher-forced scoring, and ``decode(strategy)``
    beam.py       beam search, batched, with a trace of every step
"""
