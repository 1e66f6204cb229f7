"""attention-lens's model side: everything that builds, trains, loads and runs a Transformer, and
nothing that draws (no streamlit, plotly or viz; ``tests/test_layering.py`` checks it).

    public.py     what the app's pages may take from model/: error types, value types, constants (no torch)
    __main__.py   the command line ``python -m model …`` (its commands are in cli/)
    core/         what every package shares: writing files whole, messages to the user, the interfaces
    network/      the Transformer itself: attention, layers, hook points, configuration, shape trace
    data/         tasks and tokenizers: text -> ids -> text, and the training data
    decoding/     decoding strategies: greedy, sampling, beam search, teacher-forced scoring
    run/          running a loaded model: one analysed pass, reversible edits, sentence vectors
    export/       the files of one input: activations.npz and meta.json, and what a file may hold
    store/        where models come from and how they are read
    training/     training runs, evaluation, the shipped models' recipes
    lab/          the experiments the app's pages run on a loaded model
    cli/          the command groups of ``python -m model``

Only ``__init__.py``, ``__main__.py`` and ``public.py`` sit at the top (``tests/test_layering.py``
checks it): every other module belongs to one of the packages.
"""
