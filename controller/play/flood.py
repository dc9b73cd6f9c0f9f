"""Rejected keypad input, rate-limited: a keypad sending junk must not fill the
ledger (it once wrote 15,153 ``keypad.rejected`` records, 11.6 MB in 8 s) nor the
keypad's display, and a sustained flood is a fault of the keypad.

* In each interval of ``summary_s`` seconds the first ``detail`` rejected entries are
  recorded in full (``keypad.rejected``) and answered on the keypad with what was wrong,
  so a dealer's ordinary mistakes (up to 20 in 10 s by default) are all seen and recorded; past that, rejected entries
  are only counted, and one ``keypad.rejected.summary`` record per interval gives the count
  and the last one.
* ``tilt_rejects`` rejected entries within ``tilt_window_s`` seconds is a flood: a latched
  keypad tilt through the single ``raise_tilt`` path.

The limits are the table profile's optional ``[keypad]`` section, range-checked with the
profile (``FloodLimits`` in controller/settings/config.py: the settings own their types).  Runs on
the reactor thread only; times are the reactor's clock.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from controller.core.records import Kind

if TYPE_CHECKING:
    from controller.play.context import Books, RaiseTilt
    from controller.settings.config import FloodLimits


CallLater = Callable[..., Any]


class RejectLimiter:
    def __init__(self, books: Books, raise_tilt: RaiseTilt, limits: FloodLimits, call_later: CallLater | None = None):
        self.books = books
        self.raise_tilt = raise_tilt
        self.limits = limits
        self._call_later = call_later
        self._start: float | None = None  # the current interval's start
        self._in_interval = 0
        self._counted = 0  # rejected entries counted but not recorded in this interval
        self._last: dict[str, str] = {}
        self._times: deque[float] = deque()
        self._flooded = False
        self.suppressed_total = 0

    def rejected(self, now: float, text: str, error: str, state: str) -> bool:
        """Record a rejected entry (or count it); True when it should be answered on the keypad."""
        lim = self.limits
        if self._start is not None and now - self._start >= lim.summary_s:
            self.flush()
        if self._start is None:
            self._start, self._in_interval = now, 0
            if self._call_later is not None:
                self._call_later(lim.summary_s, self._timed_flush, now)
        self._in_interval += 1
        self._check_flood(now)
        if self._in_interval <= lim.detail:
            self.books.commit([self.books.rec(Kind.KEYPAD_REJECTED, text=text[:80], error=error[:160], state=state)])
            return True
        self._counted += 1
        self.suppressed_total += 1
        self._last = {"text": text[:80], "error": error[:160], "state": state}
        return False

    def _timed_flush(self, start: float) -> None:
        if self._start == start:
            self.flush()

    def flush(self) -> None:
        """Close the interval: one summary record for what was only counted."""
        if self._counted:
            self.books.commit(
                [
                    self.books.rec(
                        Kind.KEYPAD_REJECTED_SUMMARY,
                        count=self._counted,
                        interval_s=self.limits.summary_s,
                        last=dict(self._last),
                    )
                ]
            )
        self._start, self._in_interval, self._counted, self._last = None, 0, 0, {}

    def _check_flood(self, now: float) -> None:
        lim = self.limits
        times = self._times
        times.append(now)
        while times and now - times[0] > lim.tilt_window_s:
            times.popleft()
        while len(times) > lim.tilt_rejects:
            times.popleft()
        if len(times) >= lim.tilt_rejects and not self._flooded:
            self._flooded = True
            self.raise_tilt(
                "keypad",
                f"keypad flood: {len(times)} rejected entries within {lim.tilt_window_s} s (junk on the line?)",
            )
        elif len(times) < lim.tilt_rejects // 2:
            self._flooded = False
