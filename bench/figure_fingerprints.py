"""What every page sends to the browser, as fingerprints: a check that a restructure changed no figure.

Each page of the registry is opened through ``app.py`` as a link would open it (headless, with
Streamlit's AppTest), on each model given, and the plotly JSON of every chart it sends is hashed
(SHA-256), together with the page's texts. Pages are named by their URL path, which stays when files
and keys move, so two runs on two checkouts compare directly:

    .venv/bin/python bench/figure_fingerprints.py --out before.json       # on the old checkout
    .venv/bin/python bench/figure_fingerprints.py --out after.json        # on the new one
    .venv/bin/python bench/figure_fingerprints.py --compare before.json after.json

``--compare`` prints each page × model × language whose figures or texts differ, and exits 1 if any do.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: (model, text) pairs: a didactic model, the translation model, an encoder and a language model.
CASES = (("reverse", "attention"), ("default", "我吃了一个苹果"), ("minilm", "The cat sat on the mat."),
         ("smollm2", "The capital of France is"))


def _registry():
    """The page registry, wherever this checkout keeps it."""
    for name in ("app_support.pages", "app_support.core.pages"):
        try:
            return importlib.import_module(name)
        except ModuleNotFoundError:
            continue
    raise SystemExit("no page registry found")


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()[:16]


#: Measured times in a page's texts (e.g. "computed in 1.3 s"): they differ from run to run.
SECONDS = re.compile(r"\d+(?:[.,]\d+)?\s*(?:s|ms|秒|毫秒)\b")


def _steady(text: str) -> str:
    return SECONDS.sub("<time>", text.replace(str(ROOT), "<checkout>"))


def page_fingerprint(app: str, registry, spec, model: str, text: str, lang: str) -> dict:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(app, default_timeout=600)
    at.query_params.update({"model": model, "text": text, "lang": lang})
    at.run()
    if spec is not registry.START_PAGE:
        at.switch_page(spec.file).run()
    charts = [_digest(el.proto.spec) for el in at.get("plotly_chart")]
    # the note that an analysis was just computed shows only to the session that computed it first
    shown = [str(el.value) for kind in ("markdown", "info", "warning", "error", "caption")
             for el in getattr(at, kind) if "<time>" not in _steady(str(el.value)) or kind != "caption"]
    return {"charts": charts, "texts": [_steady(t) for t in shown],
            "exception": [e.message for e in at.exception]}


def sweep(models: list[str], langs: list[str]) -> dict:
    registry = _registry()
    app = str(ROOT / "app.py")
    out = {}
    for model, text in CASES:
        if model not in models:
            continue
        for lang in langs:
            for spec in registry.PAGES:
                started = time.perf_counter()
                key = f"/{spec.url_path}|{model}|{lang}"
                out[key] = page_fingerprint(app, registry, spec, model, text, lang)
                seconds = time.perf_counter() - started
                print(f"{key:<40} {len(out[key]['charts']):3d} charts  {seconds:6.1f} s", flush=True)
    return out


#: Pages that measure this machine when opened (their figures are timings): only their chart count and
#: exceptions are compared.
MEASURED = ("/cost|",)


def compare(before: dict, after: dict) -> int:
    differ = 0
    for key in sorted(set(before) | set(after)):
        a, b = before.get(key), after.get(key)
        if key.startswith(MEASURED) and a and b:
            a, b = ({"charts": len(x["charts"]), "exception": x["exception"]} for x in (a, b))
        if a != b:
            differ += 1
            print(f"DIFFERS {key}: {a} -> {b}")
    print(f"{len(before)} page runs before, {len(after)} after, {differ} differ")
    return 1 if differ else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="write the fingerprints here (JSON)")
    parser.add_argument("--models", default=",".join(m for m, _ in CASES))
    parser.add_argument("--langs", default="en,zh")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args()
    if args.compare:
        return compare(*(json.loads(p.read_text()) for p in args.compare))
    result = sweep(args.models.split(","), args.langs.split(","))
    if args.out:
        args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
