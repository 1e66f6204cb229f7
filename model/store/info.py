"""What a model says about itself before it is loaded: :class:`ModelInfo`, read from its config."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

from ..network.kinds import kinds_present

#: Model groups, in menu order: what kind of model it is, for the picker and the pages.
GROUPS = ("main", "didactic", "pitfall", "variant", "user")


@dataclass(frozen=True)
class ModelInfo:
    name: str  # plain name (the folder's), used in links and on the command line
    label: str  # short menu label
    description: str  # one line: what the model does
    example: str  # an input worth trying
    task: str  # "translation", or the didactic task ("reverse", "copy", "sort")
    group: str  # one of GROUPS
    listed: bool  # shown in the picker by default (variants may be hidden until asked for)
    order: int  # position in menus within its group
    kinds: tuple[str, ...]  # attention kinds the network has (a model without decoder has no decoder kinds)
    source: str  # the ModelSource it came from
    directory: Path
    # (language, field, text): the label/description in other interface languages (config "i18n")
    translations: tuple[tuple[str, str, str], ...] = ()

    def text(self, field: str, lang: str = "en") -> str:
        """``label`` or ``description`` in ``lang``, falling back to the config's own (English) text."""
        for lang_, field_, value in self.translations:
            if (lang_, field_) == (lang, field):
                return value
        return getattr(self, field)


def _text(value: object, default: str = "") -> str:
    return value if isinstance(value, str) else default


def info_from_config(name: str, config: dict, source: str, directory: Path) -> ModelInfo:
    """What a checkpoint's config.json says about the model (``source`` names where it came from)."""
    task = config.get("task") if isinstance(config.get("task"), dict) else {}
    task_name = (
        _text(task.get("kind")) if task.get("type") == "synthetic" else _text(task.get("type"), "unknown")
    )
    group = _text(config.get("group"), "user")
    layers = config.get("model") if isinstance(config.get("model"), dict) else {}
    sizes = SimpleNamespace(
        n_enc_layers=layers.get("n_enc_layers", 0), n_dec_layers=layers.get("n_dec_layers", 0)
    )
    try:
        kinds = tuple(kinds_present(sizes))
    except TypeError:  # sizes that are not numbers: loading will say what is wrong
        kinds = ()
    order = config.get("order")
    i18n = config.get("i18n") if isinstance(config.get("i18n"), dict) else {}
    translations = tuple(
        (lang, field, value)
        for lang, fields in sorted(i18n.items())
        if isinstance(fields, dict)
        for field, value in sorted(fields.items())
        if field in ("label", "description") and isinstance(value, str)
    )
    return ModelInfo(
        name=name,
        label=_text(config.get("label"), name),
        description=_text(config.get("description")),
        example=_text(config.get("example")),
        task=task_name,
        group=group if group in GROUPS else "user",
        listed=config.get("listed", True) is not False,
        order=order if isinstance(order, int) and not isinstance(order, bool) else 99,
        kinds=kinds,
        source=source,
        directory=directory,
        translations=translations,
    )
