"""What the patching page needs beyond what it asks the gateway for (``lab.patching``): the hand-off
from the compare page, and which positions of B take A's activation (shown before the patch runs)."""

from __future__ import annotations

from model.lab.patching import Alignment, align

#: Session key the compare page fills (sentence A, sentence B, token) before opening the patching page.
FROM_COMPARE = "_patch_from_compare"


def alignment(tokens_a: list[str], tokens_b: list[str], side: str, token: str | None) -> Alignment:
    """The positions of B paired with positions of A on one side (model.lab.patching.align)."""
    return align(tokens_a, tokens_b, side, token or None)
