"""What the app's pages may take from ``model/``: error types, attention kinds, value types and
constants. Nothing here runs a model: pages get results through ``app_support/gateway.py``.

``tests/test_layering.py`` checks that this is the only ``model`` module a page imports.
"""

from __future__ import annotations

from .data.tasks import InputError
from .decoding.results import BeamResult, SampleResult
from .decoding.strategy import GREEDY, Strategy
from .export.scopes import LIMIT_BYTES as ARCHIVE_LIMIT_BYTES
from .lab.atlas_result import ROLE_STAT, ROLES, STATS
from .lab.choices import (
    ABLATION_MODES,
    COST_LENGTHS,
    FAMILY_MAX_TOKENS,
    FAMILY_MODELS,
    Site,
    all_heads,
    format_heads,
    group_heads,
    parse_heads,
    sentence_words,
)
from .lab.choices import ATLAS_NEW_TOKENS as LM_NEW_TOKENS
from .network.config import FUSED_FROM_CELLS, ModelConfig
from .network.kinds import KINDS, AttentionKind, get_kind, hook_name
from .store.names import UnknownModelError
from .store.problems import UserModelError
from .store.upload_limits import LIMITS as UPLOAD_LIMITS
from .training.presets import PITFALLS, PRESETS, VARIANT_AXES

__all__ = [
    "ABLATION_MODES", "COST_LENGTHS", "GREEDY", "KINDS", "PITFALLS", "PRESETS", "ROLES", "ROLE_STAT", "STATS",
    "LM_NEW_TOKENS",
    "FAMILY_MAX_TOKENS", "FAMILY_MODELS", "sentence_words",
    "ARCHIVE_LIMIT_BYTES", "FUSED_FROM_CELLS",
    "UPLOAD_LIMITS", "VARIANT_AXES", "AttentionKind", "BeamResult", "InputError", "ModelConfig",
    "SampleResult", "Site", "Strategy", "UnknownModelError", "UserModelError", "all_heads",
    "format_heads", "get_kind", "group_heads", "hook_name", "parse_heads",
]
