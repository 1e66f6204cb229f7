"""Bounds on one upload (no torch: the app's upload page states them through ``model.public``;
:mod:`model.store.upload_files` enforces them)."""

from __future__ import annotations

from dataclasses import dataclass

MB = 2**20



@dataclass(frozen=True)
class UploadLimits:
    """Bounds on one upload; every number is stated in the messages that enforce it."""

    # The zip as uploaded, in bytes (Streamlit's default server.maxUploadSize is 200 MB).
    max_zip_bytes: int = 200 * MB
    # All files taken from one zip together, unpacked, in bytes (declared sizes and bytes written).
    max_unpacked_bytes: int = 512 * MB
    # Entries (files and folders) in one zip's central directory.
    max_entries: int = 64


LIMITS = UploadLimits()
