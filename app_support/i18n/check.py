"""Re-exports :mod:`strings.check` for the page tests' ``from app_support.i18n.check import untranslated``."""
from strings.check import ALLOWED_WORDS, untranslated  # noqa: F401
