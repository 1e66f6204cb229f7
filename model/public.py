"""What the app's pages may take from ``model/``: error types, attention kinds, value types and
constants. Nothing here runs a model: pages get results through ``app_support/gateway.py``.

``tests/test_layering.py`` checks that this is the only ``model`` module a page imports.
"""

from __future__ import annotations

from .archive import LIMIT_BYTES as ARCHIVE_LIMIT_BYTES
from .data.tasks import InputError
from .decoding import GREEDY, BeamResult, SampleResult, Strategy
from .lab.ablation import ABLATION_MODES, all_heads, format_heads, group_heads, parse_heads
from .lab.atlas import LM_NEW_TOKENS, ROLE_STAT, ROLES, STATS
from .lab.cost import LENGTHS as COST_LENGTHS
from .lab.families import FAMILY_MAX_TOKENS, FAMILY_MODELS, sentence_words
from .lab.patching import Site
from .network.attention import FUSED_FROM_CELLS
from .network.config import ModelConfig
from .network.kinds import KINDS, AttentionKind, get_kind, hook_name
from .store.names import UnknownModelError
from .store.uploads import LIMITS as UPLOAD_LIMITS
from .store.user_folders import UserModelError
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
