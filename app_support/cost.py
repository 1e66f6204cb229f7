"""The cost page's time budget (the measurements are ``model/lab/cost.py``'s, cached by the gateway
per model and budget)."""

from __future__ import annotations

import os

#: Seconds of work the page may spend measuring, in all (attention core and whole model together):
#: under the 2 s a page may take to answer, once per model and server (it does not depend on the input).
#: Tests shorten it with the environment variable ``ATTENTION_LENS_COST_BUDGET``.
BUDGET_S = float(os.environ.get("ATTENTION_LENS_COST_BUDGET", "1.5"))
