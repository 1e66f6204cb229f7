"""Where models come from and how they are read.

    bundle.py     the loaded model (:class:`Bundle`) and the errors and readers every format shares
    formats/      one module per file format: this project's checkpoints, BERT-style folders, ...
    sources/      one module per place models come from: shipped, installed packages, the user's own
    registry.py   a model name -> the source that holds it (dispatch only)
    uploads.py    checking and unpacking what a user uploads or opens by path
    shipping.py   a training run -> a model folder in assets/models/
"""
