"""Where models come from and how they are read.

    bundle.py        the loaded model (:class:`Bundle`) and the readers every format shares
    problems.py      the errors of a model folder, a user's checkpoint or an upload, and their English
    formats/         one module per file format: this project's checkpoints, BERT-style folders, ...
    sources/         one module per place models come from: shipped, installed packages, the user's own
    registry.py      a model name -> the source that holds it (dispatch only)
    names.py         model names: plain folder names, never paths
    info.py          what a model says about itself before it is loaded
    budget.py        what one analysis may hold, and the longest input that follows
    user_folders.py  a model folder of the user's own
    uploads.py       one owner's uploaded models: checked, unpacked, registered, removed
    upload_files.py  an upload's files: a zip checked and unpacked, or a .gguf file copied
    upload_limits.py the bounds on one upload; no torch
    shipping.py      a training run -> a model folder in assets/models/
"""
