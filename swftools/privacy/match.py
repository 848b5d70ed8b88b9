"""What the leak audit searches for, and one compiled pattern that finds all of it in one pass.

Matching policy (documented in the README; a sane maintainer should not drown in false hits):

* The text is compared case-insensitively (ASCII letters; other characters exactly).
* A name of 3 or more characters is found anywhere, also inside a longer word ("substring"),
  except inside a run of 16 or more hexadecimal digits: such runs are digests and pseudonyms
  (``u3fa9...``, SHA256SUMS), and a hex-only name like ``abe`` would otherwise hit them at random.
* A name found only inside a longer word of the archive's own text (the schemas, site presets
  and templates: ``chem`` in ``schemas``) is part of that word and not reported.
* A name of 1 or 2 characters is found only as a whole token (not next to a letter, digit,
  underscore or non-ASCII character).
* Names that cannot be told apart from ordinary data are *unsearchable* and listed as such in the
  report instead of failing every archive: numeric-only names (SWF user numbers, uids: every
  number column would hit) and the archive's own vocabulary (``user``, ``group``, ``queue``,
  ``job``, queue names, job-table column words, ``root``, ``test``, ...).
* Host and node names follow the rules of user names (a host list's prefix such as ``secrethost``
  of ``secrethost[07-12]`` is a name of its own; ``localhost`` is vocabulary).
* Job names are free words users choose (``train``, ``eval``, ``python``): one is searched only
  as a whole token, and only when it cannot be ordinary text: at least 4 characters, not letters
  only (``train_resnet50``, ``run-42.sh`` are searched; ``analysis`` is listed as unsearchable),
  and not a common command (``python3``, ``run.sh``, ...).
* A name with non-ASCII characters is also searched in its JSON ``\\uXXXX`` escaped form.
* The key is searched as its raw bytes, lowercase hex and base64 (standard and URL-safe, with
  and without padding); hits never print the key.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from swftools.resources import load_json

MIN_SUBSTRING_CHARS = 3
MIN_JOB_NAME_CHARS = 4
TOKEN_KINDS = frozenset({"job"})  # kinds searched as whole tokens only, whatever their length
MIN_HEX_RUN = 16
_HEX = frozenset(b"0123456789abcdef")
_PREFIXES = frozenset(b"ugh")  # pseudonym prefixes (swftools.privacy.pseudonyms.NAMESPACE_PREFIXES)
_TOKEN_CLASS = rb"a-z0-9_\x80-\xff"
_TOKEN_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789_") | frozenset(range(0x80, 0x100))
# Words the writers put in every archive besides the schema and template text.
_WRITER_WORDS = frozenset("""
    tableschema datapackage frictionless swftools sha256sums parquet zenodo schemas citation
    validation readme license licenses telemetry profiles
""".split())
# Job names that are commands or file names common to every site (not identifying).
COMMON_JOB_NAMES = frozenset("""
    python2 python3 python3.8 python3.9 python3.10 python3.11 python3.12 run.sh job.sh
    script.sh test.sh train.sh submit.sh batch.sh start.sh main.py train.py run.py test.py
    jupyter-notebook jupyter-lab sys/dashboard ood-jupyter vnc-desktop
""".split())
# Words every swftools archive contains by construction (besides schema and site vocabulary).
COMMON_WORDS = frozenset("""
    user users group groups queue queues job jobs name names data root admin administrator test
    tests guest nobody none null nan true false unknown default daemon system operator
    node nodes gpu gpus time wait start finish submit status version note license readme
    localhost login
""".split())


@dataclass(frozen=True)
class Term:
    """Something that must not appear in a published archive.

    ``kind`` is ``user``, ``group``, ``name`` (from a names file), ``host``, ``job`` or ``key``;
    ``label`` is how a hit is described (for the key, never the key itself).
    """

    text: str | bytes
    kind: str
    label: str = ""

    def describe(self) -> str:
        if self.label:
            return self.label
        kind = "name" if self.kind == "name" else f"{self.kind} name"
        if self.kind == "job":
            kind = "job name"
        return f"{kind} {self.text!r}"


@dataclass(frozen=True)
class Hit:
    """One occurrence: offset in the scanned bytes, what was found, ``token`` or ``substring``."""

    offset: int
    term: Term
    match: str


@lru_cache(maxsize=1)
def archive_words() -> frozenset[str]:
    """Lower-case words (4+ characters) of the text every archive is made from: the schemas, the
    site presets, the README and landing-page templates. A name found only inside one of these
    words (``chem`` in ``schemas``) is part of that word, not a leak."""
    import swftools
    from swftools.resources import schemas_dir

    package = Path(swftools.__file__).resolve().parent
    files = [*sorted(schemas_dir().rglob("*.json")),
             package / "report" / "templates" / "index.html.j2",
             package.parent / "archive" / "templates" / "README.md.tmpl",
             *sorted((package / "release" / "_templates").glob("*"))]
    words = set(vocabulary()) | _WRITER_WORDS
    for path in files:
        if path.is_file():
            words.update(re.findall(r"[a-z][a-z0-9_]{3,}",
                                    path.read_text(encoding="utf-8", errors="replace").lower()))
    return frozenset(words)


@lru_cache(maxsize=1)
def vocabulary() -> frozenset[str]:
    """Lower-case words that every archive contains: schema columns and titles, queue names."""
    words = set(COMMON_WORDS)
    for f in load_json("jobs.schema.json")["fields"]:
        words.update(re.findall(r"[a-z]+", (f["name"] + " " + f.get("title", "")).lower()))
    for q in load_json("sites/aaic.json").get("queues", []):
        words.add(q["name"].lower())
    return frozenset(words)


def unsearchable_reason(term: Term) -> str | None:
    """Why a name cannot be searched for without flagging ordinary data (None: searchable)."""
    if term.kind == "key":
        return None
    text = str(term.text)
    if text.isdigit():
        return "numeric-only: numbers occur in every job column"
    if text.lower() in vocabulary():
        return "a word every archive contains"
    if term.kind == "job":
        if len(text) < MIN_JOB_NAME_CHARS:
            return f"a job name shorter than {MIN_JOB_NAME_CHARS} characters: ordinary text"
        if text.isalpha():
            return "a job name of letters only: ordinary text"
        if text.lower() in COMMON_JOB_NAMES:
            return "a common command name"
    return None


def key_terms(key: bytes) -> list[Term]:
    """The forms in which a key could leak: raw, hex, base64 (standard / URL-safe, +/- padding)."""
    forms = {"raw bytes": key, "hex": key.hex().encode()}
    for label, encoder in (("base64", base64.b64encode), ("URL-safe base64",
                                                          base64.urlsafe_b64encode)):
        encoded = encoder(key)
        forms[label] = encoded
        forms[f"{label} without padding"] = encoded.rstrip(b"=")
    seen: set[bytes] = set()
    terms = []
    for label, form in forms.items():
        if form.lower() not in seen:
            seen.add(form.lower())
            terms.append(Term(form, "key", f"the anonymization key ({label})"))
    return terms


def _variants(term: Term) -> list[bytes]:
    if isinstance(term.text, bytes):
        return [term.text.lower()]
    plain = term.text.encode("utf-8", "surrogatepass").lower()
    escaped = json.dumps(term.text)[1:-1].encode().lower()
    return [plain] if escaped == plain else [plain, escaped]


def _trie_pattern(words: Iterable[bytes]) -> bytes:
    """A regex alternation factored as a trie: the engine skips positions by first byte."""
    trie: dict = {}
    for word in words:
        node = trie
        for byte in word:
            node = node.setdefault(byte, {})
        node[None] = {}

    def render(node: dict) -> bytes:
        branches = [re.escape(bytes([b])) + render(child)
                    for b, child in sorted((k, v) for k, v in node.items() if k is not None)]
        if not branches:
            return b""
        body = branches[0] if len(branches) == 1 else b"(?:" + b"|".join(branches) + b")"
        if None in node:
            return (b"(?:" + body + b")?") if len(branches) == 1 else body + b"?"
        return body

    return render(trie)


class Matcher:
    """All searchable terms compiled into two patterns (substring terms, whole-token terms)."""

    def __init__(self, terms: Iterable[Term]) -> None:
        self.terms: list[Term] = []
        self.unsearchable: list[tuple[Term, str]] = []
        self._by_bytes: dict[bytes, list[Term]] = {}  # substring terms
        self._by_token: dict[bytes, list[Term]] = {}  # whole-token terms
        substring: set[bytes] = set()
        token: set[bytes] = set()
        for term in dict.fromkeys(terms):
            if isinstance(term.text, str) and not term.text.strip():
                continue
            reason = unsearchable_reason(term)
            if reason:
                self.unsearchable.append((term, reason))
                continue
            self.terms.append(term)
            long_enough = term.kind == "key" or (len(term.text) >= MIN_SUBSTRING_CHARS
                                                 and term.kind not in TOKEN_KINDS)
            for variant in _variants(term):
                (self._by_bytes if long_enough else self._by_token).setdefault(
                    variant, []).append(term)
                (substring if long_enough else token).add(variant)
        self._substring = re.compile(_trie_pattern(sorted(substring))) if substring else None
        self._token = (re.compile(rb"(?<![" + _TOKEN_CLASS + rb"])" + _trie_pattern(sorted(token))
                                  + rb"(?![" + _TOKEN_CLASS + rb"])") if token else None)
        self._has_key = {v: any(t.kind == "key" for t in ts) for v, ts in self._by_bytes.items()}
        self.max_term_bytes = max((len(v) for v in (*self._by_bytes, *self._by_token)), default=0)

    def __bool__(self) -> bool:
        return bool(self.terms)

    def scan(self, data: bytes, *, tokens_only: bool = False) -> list[Hit]:
        """Every hit in ``data`` (any bytes), sorted by offset.

        ``tokens_only`` keeps whole-token hits only (used for binary files, where random bytes
        would otherwise spell short names).
        """
        lowered = data.lower()
        hits: list[Hit] = []
        if self._substring is not None:
            for m in self._substring.finditer(lowered):
                start, end = m.span()
                terms = self._by_bytes[m.group()]
                whole = self._is_token(lowered, start, end)
                if tokens_only and not whole:
                    continue
                if not self._has_key[m.group()] and (
                        self._inside_hex_run(lowered, start, end)
                        or (not whole and self._inside_archive_word(lowered, start, end))):
                    continue
                for term in terms:
                    hits.append(Hit(start, term, "token" if whole else "substring"))
        if self._token is not None:
            for m in self._token.finditer(lowered):
                for term in self._by_token[m.group()]:
                    hits.append(Hit(m.start(), term, "token"))
        hits.sort(key=lambda h: h.offset)
        return hits

    def scan_lines(self, data: bytes, first_line: int = 1, *,
                   tokens_only: bool = False) -> Iterator[tuple[int, Hit]]:
        """Hits with their line numbers (``data`` starts at line ``first_line``)."""
        line, position = first_line, 0
        for hit in self.scan(data, tokens_only=tokens_only):
            line += data.count(b"\n", position, hit.offset)
            position = hit.offset
            yield line, hit

    def found_in(self, text: str) -> bool:
        """Whether ``text`` contains any searchable term."""
        return bool(self.scan(text.encode("utf-8", "surrogatepass")))

    @staticmethod
    def _is_token(data: bytes, start: int, end: int) -> bool:
        return ((start == 0 or data[start - 1] not in _TOKEN_BYTES)
                and (end == len(data) or data[end] not in _TOKEN_BYTES))

    @staticmethod
    def _inside_archive_word(data: bytes, start: int, end: int) -> bool:
        """Whether data[start:end] lies inside a longer word of the archive's own text."""
        left, right = start, end
        while left > 0 and data[left - 1] in _TOKEN_BYTES and end - left < 64:
            left -= 1
        while right < len(data) and data[right] in _TOKEN_BYTES and right - start < 64:
            right += 1
        word = data[left:right]
        return word.isascii() and word.decode() in archive_words()

    @staticmethod
    def _inside_hex_run(data: bytes, start: int, end: int) -> bool:
        """Whether data[start:end] lies in a digest-like run of >= 16 hex digits, optionally
        right after a pseudonym prefix letter (``u``, ``g``, ``h``)."""
        first = start
        if data[start] in _PREFIXES and end - start > 1:
            first = start + 1  # a match may begin with the prefix of ``u3fa9...``
        if not all(b in _HEX for b in data[first:end]):
            return False
        left, right = first, end
        if first == start:
            while left > 0 and data[left - 1] in _HEX and end - left < 4 * MIN_HEX_RUN:
                left -= 1
        while right < len(data) and data[right] in _HEX and right - first < 4 * MIN_HEX_RUN:
            right += 1
        return right - left >= MIN_HEX_RUN
