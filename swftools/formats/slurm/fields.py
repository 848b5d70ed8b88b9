"""The grammars of sacct's field forms, one parse/format pair each (scalar, on one text).

The reader applies them to the *distinct* values of a column (states, time limits, TRES strings
repeat a lot), so each is plain Python and is property-tested as ``parse(format(x)) == x``.
Every parser raises ``ValueError`` with what it expected.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

UNKNOWN_TIMES = ("Unknown", "None")
UNLIMITED = "UNLIMITED"
PARTITION_LIMIT = "Partition_Limit"
TIME_EXPECTED = "YYYY-MM-DDTHH:MM:SS (local time), or Unknown/None"
DURATION_EXPECTED = "[D-]HH:MM:SS"
TIMELIMIT_EXPECTED = ("UNLIMITED, Partition_Limit, empty, D-HH:MM:SS, D-HH:MM, D-HH, HH:MM:SS, MM:SS "
                      "or MM (minutes)")
TRES_EXPECTED = "KEY=VALUE[,KEY=VALUE...] such as billing=4,cpu=4,gres/gpu=4,mem=16G,node=1"
HOSTLIST_EXPECTED = "a host list such as node01,node[02-04,07] or gpu[1-2]-[a,b], or None assigned"
EXITCODE_EXPECTED = "EXIT:SIGNAL such as 0:0"

_EPOCH = datetime(1970, 1, 1)
_TIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}")
_DURATION = re.compile(r"(?:([0-9]+)-)?([0-9]{1,2}):([0-5][0-9]):([0-5][0-9])")
_TRES_ITEM = re.compile(r"([a-z_]+(?:/[A-Za-z0-9_.\-]+(?::[A-Za-z0-9_.\-]+)?)?)="
                        r"([0-9]+(?:\.[0-9]+)?)([KMGTP]?)")
_MEMORY_KB = {"K": 1, "": 1024, "M": 1024, "G": 1024 ** 2, "T": 1024 ** 3, "P": 1024 ** 4}
_EXITCODE = re.compile(r"([0-9]+):([0-9]+)")
_STATE = re.compile(r"([A-Z_]+)(?: by ([0-9]+))?")


# ------------------------------------------------------------------------------------- times

def parse_time(text: str) -> int | None:
    """``YYYY-MM-DDTHH:MM:SS`` -> naive local seconds since 1970; None for Unknown/None/empty."""
    if text in UNKNOWN_TIMES or text == "":
        return None
    if not _TIME.fullmatch(text):
        raise ValueError(TIME_EXPECTED)
    try:
        moment = datetime.strptime(text, "%Y-%m-%dT%H:%M:%S")
    except ValueError:
        raise ValueError(TIME_EXPECTED) from None
    return int((moment - _EPOCH).total_seconds())


def format_time(naive_s: int | None) -> str:
    """Naive local seconds -> ``YYYY-MM-DDTHH:MM:SS``; None -> ``Unknown``."""
    if naive_s is None:
        return "Unknown"
    return (_EPOCH + timedelta(seconds=naive_s)).strftime("%Y-%m-%dT%H:%M:%S")


# --------------------------------------------------------------------------------- durations

def parse_duration(text: str) -> int:
    """Elapsed ``[D-]HH:MM:SS`` -> seconds."""
    m = _DURATION.fullmatch(text)
    if not m:
        raise ValueError(DURATION_EXPECTED)
    days, hours, minutes, seconds = (int(g) if g else 0 for g in m.groups())
    if hours > 23:
        raise ValueError(DURATION_EXPECTED)
    return ((days * 24 + hours) * 60 + minutes) * 60 + seconds


def format_duration(seconds: int) -> str:
    """Seconds -> sacct's ``[D-]HH:MM:SS`` (the day part only from one day on)."""
    days, rest = divmod(int(seconds), 86_400)
    text = f"{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"
    return f"{days}-{text}" if days else text


def parse_timelimit(text: str) -> int | None:
    """A Slurm time limit -> seconds; None for UNLIMITED, Partition_Limit (no own limit) and an
    empty cell (not recorded).

    Slurm's forms: ``MM``, ``MM:SS``, ``HH:MM:SS``, ``D-HH``, ``D-HH:MM``, ``D-HH:MM:SS``.
    """
    if text in (UNLIMITED, PARTITION_LIMIT, ""):
        return None
    day, dash, rest = text.partition("-")
    parts = (rest if dash else text).split(":")
    if not all(p.isascii() and p.isdigit() for p in parts) or \
            (dash and not (day.isascii() and day.isdigit())):
        raise ValueError(TIMELIMIT_EXPECTED)
    numbers = [int(p) for p in parts]
    if dash:
        if len(parts) > 3:
            raise ValueError(TIMELIMIT_EXPECTED)
        hours, minutes, seconds = (numbers + [0, 0])[:3]
        if hours > 23 or minutes > 59 or seconds > 59:
            raise ValueError(TIMELIMIT_EXPECTED)
        return ((int(day) * 24 + hours) * 60 + minutes) * 60 + seconds
    if len(numbers) == 1:
        return numbers[0] * 60
    if len(numbers) == 2:
        if numbers[1] > 59:
            raise ValueError(TIMELIMIT_EXPECTED)
        return numbers[0] * 60 + numbers[1]
    if len(numbers) == 3:
        if numbers[1] > 59 or numbers[2] > 59:
            raise ValueError(TIMELIMIT_EXPECTED)
        return numbers[0] * 3600 + numbers[1] * 60 + numbers[2]
    raise ValueError(TIMELIMIT_EXPECTED)


def format_timelimit(seconds: int | None) -> str:
    """Seconds -> sacct's time limit form (``[D-]HH:MM:SS``); None -> ``UNLIMITED``."""
    return UNLIMITED if seconds is None else format_duration(seconds)


# -------------------------------------------------------------------------------------- TRES

def parse_tres(text: str) -> dict[str, str]:
    """``billing=4,cpu=4,gres/gpu=4,mem=16G,node=1`` -> ``{"billing": "4", ..., "mem": "16G"}``
    (values as written; empty text -> empty dict; a repeated key is an error)."""
    out: dict[str, str] = {}
    if text == "":
        return out
    for item in text.split(","):
        m = _TRES_ITEM.fullmatch(item)
        if not m or m.group(1) in out:
            raise ValueError(TRES_EXPECTED)
        if m.group(3) and m.group(1) not in ("mem", "vmem") and not m.group(1).startswith("fs/"):
            raise ValueError(TRES_EXPECTED)  # unit suffixes belong to sizes only
        out[m.group(1)] = m.group(2) + m.group(3)
    return out


def format_tres(tres: dict[str, str]) -> str:
    """The inverse of :func:`parse_tres`."""
    return ",".join(f"{k}={v}" for k, v in tres.items())


def tres_count(tres: dict[str, str], key: str) -> int | None:
    """An integer TRES (``cpu``, ``node``); ``gres/gpu`` also sums typed ``gres/gpu:TYPE``
    entries when there is no plain one. None when absent."""
    if key in tres:
        return _integer(tres[key])
    typed = [v for k, v in tres.items() if k.startswith(key + ":")]
    return sum(_integer(v) for v in typed) if typed else None


def _integer(value: str) -> int:
    if not value.isdigit():
        raise ValueError(TRES_EXPECTED + " (a whole count)")
    return int(value)


def memory_kb(value: str) -> int:
    """A TRES memory size (``16G``, ``1500M``, ``2.5G``; no suffix is MiB) -> KiB."""
    m = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)([KMGTP]?)", value)
    if not m:
        raise ValueError(TRES_EXPECTED)
    number, unit = m.groups()
    if "." in number:
        return round(float(number) * _MEMORY_KB[unit])
    return int(number) * _MEMORY_KB[unit]


def format_memory(kb: int) -> str:
    """KiB -> the largest exact unit sacct writes (``16G``, ``1500M``, ``7K``)."""
    for unit in ("T", "G", "M"):
        if kb and kb % _MEMORY_KB[unit] == 0:
            return f"{kb // _MEMORY_KB[unit]}{unit}"
    return f"{kb}K"


GRES_EXPECTED = ("NAME[:TYPE]:COUNT[(IDX:...)][,...] such as gpu:2, gpu:v100:2 or "
                 "gpu:2(IDX:0-1)")
_GRES_ITEM = re.compile(r"(?:gres/)?([A-Za-z0-9_.\-]+)(?::([A-Za-z0-9_.\-]+))??(?:[:=]([0-9]+))?"
                        r"(?:\(IDX:[^)]*\))?")


def _split_gres(text: str) -> list[str]:
    """Split at commas outside parentheses (``gpu:2(IDX:0,1),mps:100``)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def gres_gpus(text: str) -> int | None:
    """GPUs of an older sacct GRES cell (``gpu:2``, ``gpu:v100:2``, ``gpu:2(IDX:0-1)``, a list);
    0 when it names other resources only, None when empty. A count-less ``gpu`` is one GPU."""
    if text == "":
        return None
    total = 0
    for item in _split_gres(text):
        m = _GRES_ITEM.fullmatch(item)
        if not m:
            raise ValueError(GRES_EXPECTED)
        name, _, count = m.groups()  # gpu:2 is a count: the type group is tried last
        if name == "gpu":
            total += int(count) if count is not None else 1
    return total


# --------------------------------------------------------------------------------- host lists

def _split_top(text: str) -> list[str]:
    """Split at commas outside brackets."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "[":
            depth += 1
            if depth > 1:
                raise ValueError(HOSTLIST_EXPECTED)
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise ValueError(HOSTLIST_EXPECTED)
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if depth:
        raise ValueError(HOSTLIST_EXPECTED)
    parts.append(text[start:])
    return parts


def _expand_range(body: str) -> list[str]:
    out = []
    for item in body.split(","):
        low, dash, high = item.partition("-")
        if not low.isdigit() and not (low.isalnum() and not dash):
            raise ValueError(HOSTLIST_EXPECTED)
        if not dash:
            out.append(low)
            continue
        if not (low.isdigit() and high.isdigit()) or int(high) < int(low):
            raise ValueError(HOSTLIST_EXPECTED)
        width = len(low)
        out.extend(f"{n:0{width}d}" for n in range(int(low), int(high) + 1))
    return out


def expand_hostlist(text: str) -> list[str]:
    """``node[01-04,07],gpu[1-2]-[a,b]`` -> host names in order (``None assigned`` -> [])."""
    if text in ("None assigned", ""):
        return []
    hosts: list[str] = []
    for part in _split_top(text):
        pieces = re.split(r"(\[[^\]]*\])", part)
        if part == "" or not all(re.fullmatch(r"[A-Za-z0-9_.\-]*", p) for p in pieces[0::2]):
            raise ValueError(HOSTLIST_EXPECTED)
        names = [""]
        for i, piece in enumerate(pieces):
            options = _expand_range(piece[1:-1]) if i % 2 else [piece]
            names = [n + o for n in names for o in options]
        hosts.extend(names)
    return hosts


def count_hosts(text: str) -> int:
    """How many hosts a compressed host list names."""
    return len(expand_hostlist(text))


def compress_hostlist(hosts: list[str]) -> str:
    """Host names -> a compressed host list (consecutive ``PREFIX<digits>`` runs of one width
    and prefix become ``PREFIX[a-b,c]``); expands back to ``hosts`` in the same order."""
    groups: list[tuple[str, int, list[int]] | str] = []
    for host in hosts:
        m = re.fullmatch(r"(.*?)([0-9]+)", host)
        if not m or "[" in host:
            groups.append(host)
            continue
        prefix, digits = m.group(1), m.group(2)
        last = groups[-1] if groups else None
        if (isinstance(last, tuple) and last[0] == prefix and last[1] == len(digits)
                and int(digits) > last[2][-1]):
            last[2].append(int(digits))
        else:
            groups.append((prefix, len(digits), [int(digits)]))
    out = []
    for g in groups:
        if isinstance(g, str):
            out.append(g)
            continue
        prefix, width, numbers = g
        if len(numbers) == 1:
            out.append(f"{prefix}{numbers[0]:0{width}d}")
            continue
        runs, start = [], 0
        for i in range(1, len(numbers) + 1):
            if i == len(numbers) or numbers[i] != numbers[i - 1] + 1:
                a, b = numbers[start], numbers[i - 1]
                runs.append(f"{a:0{width}d}" + (f"-{b:0{width}d}" if b != a else ""))
                start = i
        out.append(f"{prefix}[{','.join(runs)}]")
    return ",".join(out) if out else "None assigned"


# ---------------------------------------------------------------------- states and exit codes

def parse_state(text: str) -> tuple[str, int | None]:
    """``CANCELLED by 1234`` -> ("CANCELLED", 1234); ``COMPLETED`` -> ("COMPLETED", None).
    Whether the name is a known state is the schema's state table's business."""
    m = _STATE.fullmatch(text)
    if not m or (m.group(2) is not None and m.group(1) != "CANCELLED"):
        raise ValueError("a sacct state such as COMPLETED or CANCELLED by 1234")
    return m.group(1), (int(m.group(2)) if m.group(2) is not None else None)


def format_state(name: str, by_uid: int | None = None) -> str:
    """The inverse of :func:`parse_state`."""
    return name if by_uid is None else f"{name} by {by_uid}"


def parse_exitcode(text: str) -> tuple[int, int]:
    """``EXIT:SIGNAL`` -> (exit status, signal)."""
    m = _EXITCODE.fullmatch(text)
    if not m:
        raise ValueError(EXITCODE_EXPECTED)
    return int(m.group(1)), int(m.group(2))


def format_exitcode(code: tuple[int, int]) -> str:
    """The inverse of :func:`parse_exitcode`."""
    return f"{code[0]}:{code[1]}"
