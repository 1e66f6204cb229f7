"""The command line ``python -m model …``, one module per command group.

    common.py     what every group shares: error exit, argparse types, --model/--model-dir, decoding flags
    models.py     list, translate, inspect
    training.py   train, train-pitfalls, train-variants, export, average, significance, evaluate
    atlas.py      atlas
    main.py       the parser assembled from the groups, and ``main(argv)`` with its error handling
"""
