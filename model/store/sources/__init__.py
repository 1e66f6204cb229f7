"""Where models come from: one module per kind of source.

    shipped.py    folders of checkpoints: assets/models/ (ATTENTION_LENS_MODELS), or any models folder
    packages.py   pretrained models inside installed Python packages (MiniLM)
    hf_cache.py   models already in the local Hugging Face cache, under their hub names (never downloads)
    user.py       models a user opened or uploaded, registered in this process under made-up names

Every source answers the same questions: the names it holds, a name's folder, what a model says
about itself (without loading it) and the loaded model.
"""
