"""Local image reading with Tesseract OCR (Debian's `tesseract-ocr`), run as a subprocess."""

from __future__ import annotations

import shutil
import subprocess

from csagent.domain.errors import ImageUnreadable


class TesseractReader:
    """`ImageReader` for the local tier. `--psm 6` reads a label as one block of text."""

    def __init__(self, binary: str = "tesseract", timeout_s: float = 10.0) -> None:
        self._binary = binary
        self._timeout = timeout_s

    def read_text(self, image: bytes, media_type: str) -> str:
        path = shutil.which(self._binary)
        if path is None:
            raise ImageUnreadable("the OCR engine (tesseract) is not installed")
        try:
            done = subprocess.run([path, "stdin", "stdout", "--psm", "6"], input=image,
                                  capture_output=True, timeout=self._timeout, check=False)
        except subprocess.TimeoutExpired as exc:
            raise ImageUnreadable("reading the image took too long") from exc
        if done.returncode != 0:
            raise ImageUnreadable("the image could not be decoded")
        return done.stdout.decode("utf-8", errors="replace")
