"""CPython's ``random.Random`` for the compiled general replay engine: the generator state as an
array, and (in the extension ``placement/_mtrand.pyx``) MT19937 and the stdlib draws the
``random`` placement makes (``Random.draw``), bit for bit.

The generator state ``mt`` is a uint32 array of 625 entries: CPython's 624 state words followed
by the position index (0 .. 624), exactly ``random.Random(seed).getstate()[1]`` (``mt_state``;
``python_state`` gives the state back to Python). No seeding in the extension: the state comes
from Python.

Mirrored from CPython 3.11 (``Modules/_randommodule.c``, ``Lib/random.py``):

* ``genrand_uint32``: MT19937 (twist of all 624 words when the position reaches 624);
* ``getrandbits(k)``, ``k <= 32``: ``genrand_uint32() >> (32 - k)``; 0 for ``k == 0`` (no draw);
* ``randbelow(n)`` (``_randbelow_with_getrandbits``): ``getrandbits(n.bit_length())`` until the
  value is below ``n``; ``choice(seq)`` is ``seq[randbelow(len(seq))]``;
* ``sample(population, k)``: a pool list when ``n <= setsize`` (``21``, plus
  ``4 ** ceil(log(3 k, 4))`` when ``k > 5``, with the same float ``log``), else a rejection set.

Counts stay below 2 ** 32 (one 32-bit word per ``getrandbits``). Scratch arrays are the
caller's (no allocation per call): an int64 array of at least ``max(n, 128)`` entries, all zeros
on entry and all zeros again on return (``new_scratch``).
"""

from __future__ import annotations

import random

import numpy as np

GPU_OUT = 64  # scratch offset of a single-node job's sampled GPU indices (_mtrand.pxd)


def mt_state(seed: int) -> np.ndarray:
    """The state of ``random.Random(seed)``: uint32[625], 624 words then the position."""
    return state_of(random.Random(seed))


def state_of(rng: random.Random) -> np.ndarray:
    """The current state of the generator ``rng`` as ``mt_state`` lays it out."""
    return np.array(rng.getstate()[1], dtype=np.uint32)


def python_state(mt: np.ndarray) -> tuple:
    """``mt`` as ``random.Random.getstate()`` gives it (for ``setstate``)."""
    return (3, tuple(int(x) for x in mt), None)


def new_scratch(n_nodes: int) -> np.ndarray:
    """A zeroed scratch array for the extension's ``sample_indices`` / ``draw_random`` on
    ``n_nodes`` nodes."""
    return np.zeros(max(n_nodes, 2 * GPU_OUT), dtype=np.int64)
