"""Cached model loading and per-input analysis for the app.

* Models are loaded once per process with ``st.cache_resource`` (keyed by name and the weight
  file's modification time, so a re-shipped model is picked up without a restart).
* One input's analysis (``model.analysis.analyze``) is cached with ``st.cache_data`` keyed by
  (model, text, direction, target, decoding strategy). Only the attention activations are kept in the cached
  copy: every page reads attention, and dropping q/k/v/MLP/residual tensors keeps each cache
  entry small (it is pickled on every hit).
"""

from __future__ import annotations

import os

import numpy as np
import streamlit as st
import torch

from model.analysis import Analysis, analyze, model_summary
from model.decoding import Strategy
from model.network.positional import sinusoidal_table
from model.registry import (
    DEFAULT_MODEL,
    ModelInfo,
    UnknownModelError,
    load_model,
    model_dir,
    model_info,
    model_infos,
)
from model.training.checkpoint import Bundle, CheckpointError

__all__ = [
    "DEFAULT_MODEL",
    "MAX_INPUT_CHARS",
    "attention_hooks_only",
    "get_analysis",
    "get_bundle",
    "get_summary",
    "list_models",
    "model_description",
    "model_label",
]

#: Longest input the text box accepts (the model reads far fewer tokens and says so).
MAX_INPUT_CHARS = 1000

_ATTENTION_SUFFIXES = (".hook_pattern", ".hook_scores")

#: Torch threads for the app's forward passes. The models are small and one input runs at a
#: time, so extra threads buy little; on a busy machine (e.g. while a model trains) a second
#: OpenMP thread waiting for a core made greedy decoding ~50x slower in our measurements.
TORCH_THREADS = int(os.environ.get("ATTENTION_LENS_TORCH_THREADS", "1") or 1)


def configure_torch() -> None:
    if torch.get_num_threads() != TORCH_THREADS:
        torch.set_num_threads(max(1, TORCH_THREADS))


configure_torch()

def list_models() -> list[str]:
    """Models the picker offers, in menu order (not cached: new models appear at once).

    Listed models first; a model whose config cannot be read is still offered, last, so choosing
    it shows what is wrong with it instead of it silently missing.
    """
    broken: list[tuple[str, str]] = []
    names = [i.name for i in model_infos(broken) if i.listed]
    return names + sorted(name for name, _ in broken)


def _stamp(name: str) -> int:
    """Modification time of a model's weights; part of every cache key."""
    try:
        return (model_dir(name) / "model.safetensors").stat().st_mtime_ns
    except (OSError, UnknownModelError):
        return 0


@st.cache_resource(max_entries=8, show_spinner="Loading the model …")
def _load(name: str, stamp: int) -> Bundle:
    return load_model(name)


def get_bundle(name: str) -> Bundle:
    """The loaded model ``name`` (cached for the whole server process)."""
    return _load(name, _stamp(name))


def attention_hooks_only(result: Analysis) -> Analysis:
    """Drop every activation except attention patterns and scores (in place); returns it."""
    result.activations = {k: v for k, v in result.activations.items() if k.endswith(_ATTENTION_SUFFIXES)}
    return result


@st.cache_data(max_entries=64, show_spinner=False)
def _analysis(name: str, stamp: int, text: str, direction: str | None, target: str | None,
              strategy: str = "greedy") -> Analysis:
    return attention_hooks_only(analyze(get_bundle(name), text, direction, target,
                                        strategy=Strategy.parse(strategy)))


def get_analysis(name: str, text: str, direction: str | None = None, target: str | None = None,
                 strategy: Strategy | str | None = None) -> Analysis:
    """``analyze(load_model(name), text, direction, target, strategy=strategy)``, cached per input.

    ``direction`` "auto" means None (let the task detect it). ``strategy`` (a Strategy or its URL
    word; greedy when None) is part of the cache key; a teacher-forced analysis ignores it. Raises
    ``model.tasks.InputError`` with a user-facing message for unusable input (never cached).
    """
    if direction == "auto":
        direction = None
    word = "greedy" if strategy is None or target is not None else str(strategy)
    return _analysis(name, _stamp(name), text, direction, target, word)


@st.cache_data(max_entries=16, show_spinner=False)
def _summary(name: str, stamp: int) -> dict:
    return model_summary(get_bundle(name))


def get_summary(name: str) -> dict:
    """``model.analysis.model_summary`` of a model (config, parameter counts, metrics)."""
    return _summary(name, _stamp(name))


def _info(name: str) -> ModelInfo | None:
    try:
        return model_info(name)
    except (CheckpointError, UnknownModelError):
        return None


def model_description(name: str, lang: str = "en") -> str:
    """One line saying what a model does (from its config.json, without loading weights)."""
    info = _info(name)
    return info.text("description", lang) if info else ""


def model_example(name: str) -> str:
    """The example input stored with a model ("" if none)."""
    info = _info(name)
    return info.example if info else ""


def model_label(name: str, lang: str = "en") -> str:
    """Short menu label (the sidebar shows the full description under the menu)."""
    info = _info(name)
    return info.text("label", lang) if info else name


def position_table(bundle: Bundle, n_pos: int, d_model: int) -> tuple[np.ndarray, bool]:
    """(table [pos, d_model], whether it is the model's own) for the positional-encoding lab.

    The model's own learned table when the model learns its positions and the size asked for is
    the model's; otherwise the sinusoidal table of the 2017 paper at that size.
    """
    cfg = bundle.cfg
    if cfg.pos_encoding == "learned" and (n_pos, d_model) == (cfg.max_len, cfg.d_model):
        positions = getattr(bundle.model.encoder.embed, "positions", None)
        if positions is not None and hasattr(positions, "table"):
            return positions.table.detach().float().numpy(), True
    own = cfg.pos_encoding == "sinusoidal" and d_model == cfg.d_model
    return sinusoidal_table(int(n_pos), int(d_model)).numpy().astype(np.float32), own
