"""The SWF file layout kept as table metadata: packed per-row masks (which rows wrote decimals)."""

from __future__ import annotations

import base64
import zlib

import numpy as np


def pack_mask(mask: np.ndarray) -> str:
    """A per-row boolean mask as compact text (zlib-compressed bits, base64)."""
    return base64.b64encode(zlib.compress(np.packbits(mask).tobytes(), 9)).decode()


def unpack_mask(text: str, n: int) -> np.ndarray:
    """Inverse of the layout's packed per-row boolean mask."""
    bits = np.frombuffer(zlib.decompress(base64.b64decode(text)), dtype=np.uint8)
    return np.unpackbits(bits)[:n].astype(bool)
