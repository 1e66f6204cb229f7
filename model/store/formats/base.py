"""What a model format offers: the one interface every format module implements."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from ...network.config import ModelConfig
from ..bundle import Bundle


class ModelFormat(Protocol):
    """A way a model folder can be stored. Every method checks what it reads and fails with a
    ``CheckpointError`` (or a subclass) naming the file at fault."""

    #: short name: "own", "bert", ... (what an opened user model records as its format)
    name: str
    #: what a folder of this format holds, for the model picker: (English, Chinese)
    what: tuple[str, str]
    #: the task its models do: "translation", "continue" (a language model) or "encode"; "" for our own
    #: checkpoints, whose config says
    task: str
    #: an input worth trying on such a model ("" for our own checkpoints: their config holds one)
    example: str

    def claims(self, config: dict) -> bool:
        """Whether a folder whose ``config.json`` parsed to ``config`` is stored in this format."""
        ...

    def read_config(self, folder: Path) -> ModelConfig:
        """Our network's configuration for the folder, from its config alone (no weights read)."""
        ...

    def check(self, folder: Path) -> None:
        """Compare the weights' names, shapes and dtypes (from their header) with the config,
        allocating nothing."""
        ...

    def load(self, folder: Path, name: str | None = None, example: str | None = None) -> Bundle:
        """The folder as a :class:`Bundle` of our own ``Transformer``."""
        ...
