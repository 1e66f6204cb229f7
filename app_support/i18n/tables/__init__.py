"""Interface text, one module per area of the app; each defines ``EN`` and ``ZH`` with the same keys."""
