"""Exceptions that carry the location of bad input."""

from __future__ import annotations

import errno
import json
import re
from dataclasses import dataclass


# Every reader refuses a trace without jobs in these words (``allow_empty=True`` accepts one).
NO_JOB_ROWS = "no job rows: the file holds only a header"
NO_JOB_ROWS_EXPECTED = "one job per line after the header, or --allow-empty for an empty trace"
# An input file that is not there, in the CLI's words and an input error's.
NO_SUCH_FILE = "no such file"


class UsageError(Exception):
    """The caller asked for something impossible (bad option, existing output without force)."""


# How much of an offending value a message shows: the start, an ellipsis and the full length.
VALUE_CHARS = 80
_LONG_RUN = 2 * VALUE_CHARS  # a run of non-space characters this long in a message is a value


def shorten(value: str, limit: int = VALUE_CHARS) -> str:
    """``value`` if it has at most ``limit`` characters, else its start, an ellipsis and its
    full length: ``'aaaa...' (1,048,576 characters)`` fits one line of an error message."""
    if len(value) <= limit:
        return value
    return f"{value[:max(limit - 20, 8)]}... ({len(value):,} characters)"


def _shorten_runs(text: str) -> str:
    if len(text) <= _LONG_RUN:
        return text
    return re.sub(r"\S{%d,}" % (_LONG_RUN + 1), lambda m: shorten(m.group(0)), text)


@dataclass
class InputError(Exception):
    """Bad input, located: file, line, field, offending value and what was expected.

    Renders as ``trace.swf:1042: field 5 (allocated processors): 'x7' is not a number``;
    a long value (or any run of more than 160 characters without a space) is shown cut to about
    80 characters with its full length.
    """

    path: str
    message: str
    line: int | None = None
    field: str | None = None
    value: str | None = None
    expected: str | None = None

    def __post_init__(self) -> None:
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        what = f"{self.field}: " if self.field else ""
        message = self.message
        if isinstance(self.value, str) and len(self.value) > VALUE_CHARS and self.value in message:
            short = shorten(self.value)
            message = message.replace(repr(self.value), repr(short)).replace(self.value, short)
        text = f"{where}: {what}{_shorten_runs(message)}"
        if self.expected and "(expected" not in self.message:
            text += f" (expected {_shorten_runs(self.expected)})"
        return text


# errno -> what swftools was doing, for an OSError that does not say
_OPERATIONS = {errno.ENOSPC: "write (disk full)", errno.EDQUOT: "write (disk quota exceeded)",
               errno.EFBIG: "write (file too large)", errno.EROFS: "write (read-only file system)",
               errno.EACCES: "access", errno.EPERM: "access", errno.ENOENT: "open",
               errno.ENOTDIR: "open", errno.EISDIR: "open as a file", errno.EEXIST: "create",
               errno.ENOTEMPTY: "replace", errno.EIO: "read or write", errno.ELOOP: "open",
               errno.ENAMETOOLONG: "open", errno.EMFILE: "open", errno.ENFILE: "open",
               errno.EXDEV: "rename"}


def os_error_message(exc: OSError, path: str | None = None, operation: str | None = None) -> str:
    """One line for an operating-system error: which file, what operation, why.

    ``path``/``operation`` when the caller knows them better than the exception (a bare
    ``os.write`` failure names no file). Renders as
    ``out/jobs.swf.gz: cannot write (disk full): No space left on device [ENOSPC]``."""
    name = exc.filename if exc.filename is not None else path
    if isinstance(name, bytes):
        name = name.decode("utf-8", "replace")
    if exc.filename2 is not None:
        name = f"{name} -> {exc.filename2}"
    op = operation or _OPERATIONS.get(exc.errno or -1, "read or write")
    reason = exc.strerror or str(exc) or type(exc).__name__
    code = errno.errorcode.get(exc.errno or -1)
    tail = f" [{code}]" if code else ""
    where = f"{shorten(str(name), 4 * VALUE_CHARS)}: " if name is not None else ""
    return f"{where}cannot {op}: {reason}{tail}"


def open_error_reason(exc: OSError) -> str:
    """Why an input file could not be opened, without its name: :data:`NO_SUCH_FILE`, else
    :func:`os_error_message`'s words (``cannot open as a file: Is a directory [EISDIR]``)."""
    if isinstance(exc, FileNotFoundError):
        return NO_SUCH_FILE
    return os_error_message(OSError(exc.errno, exc.strerror or str(exc)))


def memory_error_message(exc: MemoryError, where: str | None = None) -> str:
    """One line for running out of memory (``where``: the input or step, when known)."""
    place = f"{where}: " if where else ""
    detail = f" ({exc})" if str(exc) else ""
    return (f"{place}out of memory{detail}: the input needs more memory than this process may "
            "use; free memory, raise the limit, or split the input")


def plural(n: int, noun: str, many: str | None = None) -> str:
    """``noun`` agreeing with ``n``: ``noun`` for 1, else ``many`` (default ``noun + 's'``); the
    one rule of every count in a message (never ``job(s)``)."""
    return noun if n == 1 else (many or noun + "s")


def count(n: int, noun: str, plural_form: str | None = None, *, thousands: bool = False) -> str:
    """``n`` and ``noun`` in correct English for messages: ``1 job``, ``2 jobs``, ``0 jobs``
    (:func:`plural`); ``thousands``: ``1,234`` rather than ``1234``."""
    number = f"{n:,}" if thousands else str(n)
    return f"{number} {plural(n, noun, plural_form)}"


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def json_position(text: str, path: list[str | int]) -> int:
    """Character offset of the value at ``path`` (object keys, array indices) in a JSON
    document, or where the walk stopped when the path is not there.

    Only used to put a line number on an error, so simplicity beats speed here.
    """
    decoder = json.JSONDecoder()
    pos = _skip_ws(text, 0)
    for step in path:
        opener = "{" if isinstance(step, str) else "["
        if pos >= len(text) or text[pos] != opener:
            return pos
        pos = _skip_ws(text, pos + 1)
        index = 0
        while pos < len(text) and text[pos] not in "}]":
            if isinstance(step, str):
                key, pos = decoder.raw_decode(text, pos)
                pos = _skip_ws(text, _skip_ws(text, pos) + 1)  # past ':'
                if key == step:
                    break
            elif index == step:
                break
            _, pos = decoder.raw_decode(text, pos)
            pos = _skip_ws(text, pos)
            if pos < len(text) and text[pos] == ",":
                pos = _skip_ws(text, pos + 1)
            index += 1
    return pos


def json_line(text: str, path: list[str | int]) -> int:
    """The line of ``json_position`` (1-based): where an error at ``path`` is shown."""
    return text.count("\n", 0, json_position(text, path)) + 1
