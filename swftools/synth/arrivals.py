"""Who submits and when: users and groups, and arrivals peaking in weekday business hours.

Submission events (a single job, a small batch, or a hyper-parameter sweep of tens to hundreds of
similar jobs within minutes) arrive as a Poisson process whose rate follows a weekly profile in
the site's local time: high on weekday working hours, low at night and on weekends. The profile is
applied by time change: unit-rate event times in "busy hours" are mapped to clock time through the
cumulative weekly intensity, so every event time depends only on the events before it.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

from swftools.synth.rng import Stream, cumulative

# Relative submission rate by local hour of a weekday (0h..23h) and the weekend factor.
WEEKDAY_HOURLY = (0.30, 0.22, 0.18, 0.15, 0.14, 0.15, 0.22, 0.40, 0.75, 1.30, 1.75, 1.85,
                  1.45, 1.80, 1.95, 1.95, 1.90, 1.75, 1.45, 1.15, 0.95, 0.80, 0.60, 0.42)
WEEKEND_FACTOR = 0.35
WEEK_S = 7 * 86400


@dataclass(frozen=True)
class User:
    """A synthetic user: name, group, relative activity and taste for sweeps."""

    name: str
    group: str
    activity: float
    sweep_probability: float


def make_users(seed: int, users: int, groups: int) -> list[User]:
    """``users`` users with heavy-tailed activity (log-normal-like), each in one of ``groups``."""
    stream = Stream(seed, 1)
    group_weights = cumulative([1.0 / (g + 1) ** 0.8 for g in range(groups)])
    out = []
    for i in range(users):
        group = stream.pick(group_weights)
        activity = math.exp(1.5 * stream.logistic())
        sweep_probability = min(0.5, 0.005 + 0.12 * stream.u() ** 3)
        out.append(User(f"user{i + 1:04d}", f"grp{group + 1:02d}", activity, sweep_probability))
    return out


def weekly_profile() -> list[float]:
    """168 hourly rates, Monday 0h first, normalised to mean 1."""
    hours = [w * (1.0 if day < 5 else WEEKEND_FACTOR) for day in range(7) for w in WEEKDAY_HOURLY]
    mean = sum(hours) / len(hours)
    return [h / mean for h in hours]


class ArrivalClock:
    """Maps unit-rate "busy time" to clock time following the weekly profile."""

    def __init__(self, start_epoch_s: int, time_zone: str) -> None:
        local = datetime.fromtimestamp(start_epoch_s, ZoneInfo(time_zone))
        week_start_local = local.replace(hour=0, minute=0, second=0, microsecond=0)
        offset_s = (local - week_start_local).total_seconds() + local.weekday() * 86400
        self.week_origin_s = start_epoch_s - int(offset_s)  # local Monday 00:00 of start's week
        self.rates = weekly_profile()
        self.busy = [0.0] + cumulative([r * 3600.0 for r in self.rates])  # busy seconds per week
        self.start_busy_s = self._busy_at(start_epoch_s - self.week_origin_s)

    def _busy_at(self, clock_s: float) -> float:
        weeks, rest = divmod(clock_s, WEEK_S)
        hour = int(rest // 3600)
        return weeks * self.busy[-1] + self.busy[hour] + (rest - hour * 3600) * self.rates[hour]

    def clock(self, busy_s: float) -> float:
        """Epoch seconds at which ``busy_s`` busy seconds after the start have elapsed."""
        total = self.start_busy_s + busy_s
        weeks, rest = divmod(total, self.busy[-1])
        hour = min(bisect.bisect_right(self.busy, rest) - 1, 167)
        within = (rest - self.busy[hour]) / self.rates[hour]
        return self.week_origin_s + weeks * WEEK_S + hour * 3600 + within
