"""Analysis 5, arrivals: submissions per hour of day and per day of week, in site local time.

Population: jobs of at least 60 s with a known submit time. Every calendar day from the first to
the last submission counts, days without submissions included. Per hour of day: mean and standard
deviation over days of that hour's submissions. Per day of week: mean and standard deviation over
the weeks (the dates in the span falling on that weekday) of the day's submissions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from swftools.report.frame import MIN_WALLTIME_S, JobFrame, long_enough, skipped

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_EPOCH_WEEKDAY = 3  # 1970-01-01 was a Thursday (Monday = 0)


def local_day_and_hour(epoch_s: np.ndarray, time_zone: str) -> tuple[np.ndarray, np.ndarray]:
    """Local calendar day (days since 1970-01-01) and local hour of each epoch second."""
    import pandas as pd

    utc = pd.to_datetime(epoch_s.astype("int64"), unit="s", utc=True)
    local = utc.tz_convert(time_zone).tz_localize(None).to_numpy()
    days = local.astype("datetime64[D]")
    hours = (local - days).astype("timedelta64[h]").astype(np.int64)
    return days.astype(np.int64), hours


def _mean_std(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean = matrix.mean(axis=0)
    std = matrix.std(axis=0, ddof=1) if matrix.shape[0] > 1 else np.full(matrix.shape[1], np.nan)
    return mean, std


def analyze(frame: JobFrame) -> dict[str, Any]:
    """The arrivals analysis (see the module docstring)."""
    if not frame.absolute_times:
        return skipped(frame.absolute_times_reason or "local times are unknown")
    jobs = long_enough(frame.jobs)
    submit = jobs["submit_time"].dropna().to_numpy()
    if submit.size == 0:
        return skipped(f"no jobs of at least {MIN_WALLTIME_S} s with a known submit time")
    day, hour = local_day_and_hour(submit, frame.time_zone)
    first = int(day.min())
    n_days = int(day.max()) - first + 1
    per_day_hour = np.bincount((day - first) * 24 + hour, minlength=n_days * 24).reshape(n_days, 24)
    hour_mean, hour_std = _mean_std(per_day_hour)
    per_day = per_day_hour.sum(axis=1)
    weekday = (np.arange(first, first + n_days) + _EPOCH_WEEKDAY) % 7
    by_hour = [{"hour": h, "jobs": int(per_day_hour[:, h].sum()), "mean": float(hour_mean[h]),
                "std": _float(hour_std[h])} for h in range(24)]
    by_weekday = []
    for d, name in enumerate(WEEKDAYS):
        counts = per_day[weekday == d]
        by_weekday.append({
            "weekday": name, "weeks": int(counts.size), "jobs": int(counts.sum()),
            "mean": float(counts.mean()) if counts.size else None,
            "std": _float(counts.std(ddof=1)) if counts.size > 1 else None})
    weekday_jobs = int(per_day[weekday < 5].sum())
    peak = int(np.argmax(hour_mean))
    return {
        "status": "ok",
        "population": f"jobs of at least {MIN_WALLTIME_S} s with a known submit time",
        "jobs": int(submit.size),
        "time_zone": frame.time_zone,
        "time_zone_source": frame.time_zone_source,
        "days": n_days,
        "jobs_per_day": {"mean": float(per_day.mean()),
                         "std": _float(per_day.std(ddof=1)) if n_days > 1 else None},
        "weekday_share": weekday_jobs / int(submit.size),
        "peak_hour": peak,
        "by_hour": by_hour,
        "by_weekday": by_weekday,
    }


def _float(value: float) -> float | None:
    return None if np.isnan(value) else float(value)
