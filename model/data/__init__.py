"""Tasks and tokenizers: what a model's input and output text are, and the data it is trained on.

    tasks.py                 the tasks (synthetic and translation) and their training pairs
    prepared.py              what every task hands the model (:class:`Prepared`) and the error for bad input
    seq2seq_task.py          the translation task of a pretrained encoder-decoder (Marian, BART, mBART, T5)
    spm_vocab.py             Marian's tokenizer: SentencePiece pieces, ids from vocab.json
    t5_tokens.py             T5's tokenizer: tokenizer.json, or spiece.model with its sentinels
    lm_task.py               continuing a text: the task of a decoder-only language model
    lm_training.py           the language-modelling tasks our own decoder-only models are trained on
    chat_form.py             the chat form of a prompt, from the model's own chat template
    batches.py               id lists into padded batches
    char_tokenizer.py        a character tokenizer over a fixed alphabet, for the didactic models
    tokenizers.py            tokenizers of pretrained encoders, on Hugging Face ``tokenizers``
    tokenizer_files.py       reading and writing ``tokenizers`` JSON files
    translation_tokenizer.py the shared zh/en subword tokenizer
    byte_tokens.py           byte-level BPE tokens as readable text
    sentencepiece_bpe.py     a SentencePiece BPE tokenizer from a GGUF's pieces and scores (Gemma, Phi-3)
    tatoeba.py               Tatoeba Chinese-English pairs: download, verify, load and split
    zh_script.py             Chinese script helpers: Traditional -> Simplified
"""
