"""What every package of model/ shares; standard library only (no torch), so ``viz`` and ``strings`` may
import it too.

    files.py      writing a file whole (atomic_write), hashing and deleting inside a folder
    messages.py   what model/ tells the user, as codes with parameters; the English table
    protocols.py  the interfaces of a tokenizer, a task and a hooked model
"""
