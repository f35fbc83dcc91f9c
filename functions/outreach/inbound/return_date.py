"""The date an out-of-office reply says its person is back: ``return_date(text, received=...)``.

A date counts only where the wording says it is the return (or the end of the absence), in English,
German, French or Spanish:

- after a return phrase, with at most a few words between (``back on``, ``return(ing) on``, ``until``,
  ``till``, ``through``; ``bis (zum)``, ``zurück am``, ``wieder im Büro am``; ``de retour le``,
  ``jusqu'au``, ``retour le``; ``hasta el``, ``regreso el``, ``vuelvo el``, ``de vuelta el``);
- as the end of a range whose both ends are dates (``20.12. - 5.1.``, ``20 December to 5 January``,
  ``du 20 décembre au 5 janvier``; ``du 20 au 27 décembre`` is not read, its first end being a bare day);
- German and Spanish that name the date first: ``ab dem 12.01. wieder im Büro``, ``a partir del 12 de
  enero estaré de vuelta``.

The dates read (RFC 3339 / ISO 8601 calendar dates are the only unambiguous numeric form):

- ``2026-12-31``; ``31.12.2026``, ``31.12.26`` and ``31.12.`` (day first, the German form);
- ``31/12/2026`` and ``12/31/2026``: a slash date after a German, French or Spanish phrase is always day
  first; after an English one it is read the one way that is a date (``31/12``: day first; ``12/31``:
  month first, the US form) and dropped when both ways are dates and differ (``05/01/2027`` is 5 January
  in London and 1 May in New York: no date is better than a wrong one);
- month names and their abbreviations in the four languages, with or without a weekday and a year:
  ``January 5``, ``Jan 5th, 2027``, ``5th of January``, ``5. Januar``, ``1er janvier``, ``5 de enero
  de 2027``.

A date without a year is its next occurrence on or after the day ``received`` (in ``received``'s own
zone). The first date that the wording makes a return and that falls from that day to
:data:`MAX_AHEAD_DAYS` after it is returned; a date before it (an old template) or further ahead (a
year of parental leave, a typo) is not. An "until" date is returned as named: whether the person is back
that day or the next varies, so a follow-up planned for it comes at worst a day early.

``None`` when no date is found; the caller then assumes :data:`DEFAULT_AWAY_DAYS`: the person is taken
to be back a week after the reply arrived, the length of most absences that name no date (a business
trip, a week off), so one follow-up waits a week rather than being dropped or sent into the absence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

DEFAULT_AWAY_DAYS = 7
MAX_AHEAD_DAYS = 90
_SCAN_CHARS = 8 * 1024
# How far before a date its return phrase may start, and how many characters may stand between.
_PHRASE_WINDOW = 80
_AFTER_WINDOW = 50

_MONTHS: dict[str, int] = {}
for _number, _names in enumerate(
    (
        "january jan januar jänner jän janvier janv enero ene",
        "february feb februar feber février fevrier févr fevr fév fev febrero",
        "march mar märz maerz mär mrz mars marzo",
        "april apr avril avr abril abr",
        "may mai mayo",
        "june jun juni juin junio",
        "july jul juli juillet juil julio",
        "august aug août aout agosto ago",
        "september sep sept septembre septiembre setiembre",
        "october oct oktober okt octobre octubre",
        "november nov novembre noviembre",
        "december dec dezember dez décembre decembre déc diciembre dic",
    ),
    start=1,
):
    _MONTHS.update(dict.fromkeys(_names.split(), _number))

_WEEKDAYS = [
    name
    for names in (
        "monday tuesday wednesday thursday friday saturday sunday",
        "mon tue tues wed thu thur thurs fri sat sun",
        "montag dienstag mittwoch donnerstag freitag samstag sonnabend sonntag mo di mi do fr sa so",
        "lundi mardi mercredi jeudi vendredi samedi dimanche lun mar mer jeu ven sam dim",
        "lunes martes miércoles miercoles jueves viernes sábado sabado domingo mié mie jue vie sáb sab dom",
    )
    for name in names.split()
]


def _words(names: list[str] | tuple[str, ...]) -> str:
    return "|".join(re.escape(name) for name in sorted(set(names), key=len, reverse=True))


_MONTH = rf"(?:{_words(list(_MONTHS))})\b\.?"
_DATE = re.compile(
    rf"(?:\b(?:{_words(_WEEKDAYS)})\b\.?,?\s+(?:(?:the|den|le|el)\s+)?)?"
    r"(?:"
    r"(?<![\d.:/])(?P<iso_y>\d{4})-(?P<iso_m>\d{1,2})-(?P<iso_d>\d{1,2})(?!\d)"
    r"|(?<![\d.:/])(?P<dot_d>\d{1,2})\.\s?(?P<dot_m>\d{1,2})\.(?:\s?(?P<dot_y>\d{4}|\d{2}))?(?!\d)"
    r"|(?<![\d.:/])(?P<sl_a>\d{1,2})/(?P<sl_b>\d{1,2})(?:/(?P<sl_y>\d{4}|\d{2}))?(?![\d/])"
    rf"|(?<![\d.:/])(?P<dm_d>\d{{1,2}})(?:st|nd|rd|th|er|º|°|\.)?\s*(?:(?:of|de)\s+)?(?P<dm_m>{_MONTH})"
    r"(?:,?\s+(?:(?:de|of)\s+)?(?P<dm_y>\d{4})(?!\d))?"
    rf"|\b(?P<md_m>{_MONTH})\s+(?:the\s+)?(?P<md_d>\d{{1,2}})(?:st|nd|rd|th)?(?![\d:])"
    r"(?:,?\s+(?P<md_y>\d{4})(?!\d))?"
    r")",
    re.IGNORECASE,
)

# Return phrases by language; a date may follow each after a few words (no digit, no line break).
_PHRASES = {
    "en": r"\b(?:back|return(?:s|ing)?|until|till|til|through|thru)\b",
    "de": r"\b(?:bis|zurück|wieder)\b",
    "fr": r"\b(?:de retour|retour|jusqu'(?:au|à|a)|jusqu'|reviens|reviendrai|reprendrai)\b",
    "es": r"\b(?:hasta|regreso|regresar[ée]|vuelvo|volver[ée]|de vuelta|me reincorporo)\b",
}
_PHRASE_BEFORE = {
    language: re.compile(rf"(?:{phrase})[^\d\n]{{0,40}}\Z", re.IGNORECASE)
    for language, phrase in _PHRASES.items()
}
# German and Spanish name the day first: "ab dem 12.01. ... wieder", "a partir del ... de vuelta".
_START_BEFORE = {
    "de": re.compile(r"\b(?:ab|am)(?:[ \t]+(?:dem|den))?[ \t]+\Z", re.IGNORECASE),
    "es": re.compile(r"\b(?:a partir del?|desde el)[ \t]+\Z", re.IGNORECASE),
}
_BACK_AFTER = {
    "de": re.compile(r"[^\n]{0,40}?\b(?:wieder|zurück)\b", re.I),
    "es": re.compile(r"[^\n]{0,40}?\b(?:de vuelta|de regreso|disponible|regresar[ée]|volver[ée])\b", re.I),
}
# Between the two ends of a range; the word tells the language (a dash tells none).
_RANGE_GAP = re.compile(
    r"\s*(?:(?P<dash>[-\u2013\u2014])|(?P<en>to)|(?P<de>bis)|(?P<fr>au)|(?P<es>al|a|hasta))\s*"
    r"(?:(?:the|le|el|zum|den)\s+)?",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class _Found:
    match: re.Match[str]
    language: str | None


def _phrase_language(text: str, date_match: re.Match[str]) -> str | None:
    """The language of the return phrase just before the date, the nearest one if several match."""
    start = date_match.start()
    window = text[max(0, start - _PHRASE_WINDOW) : start]
    best: tuple[int, str] | None = None
    for language, pattern in _PHRASE_BEFORE.items():
        found = pattern.search(window)
        if found and (best is None or found.start() > best[0]):
            best = (found.start(), language)
    if best is not None:
        return best[1]
    window = text[max(0, start - 20) : start]
    for language, before in _START_BEFORE.items():
        after = date_match.end()
        if before.search(window) and _BACK_AFTER[language].match(text, after, after + _AFTER_WINDOW):
            return language
    return None


def _return_dates(text: str) -> list[_Found]:
    """The dates of ``text`` the wording makes a return date, in order, with the phrase's language."""
    found: list[_Found] = []
    previous_end: int | None = None
    for match in _DATE.finditer(text):
        language = _phrase_language(text, match)
        gap = _RANGE_GAP.fullmatch(text, previous_end, match.start()) if previous_end is not None else None
        if language is not None:
            found.append(_Found(match, language))
        elif gap is not None:
            found.append(_Found(match, gap.lastgroup if gap.lastgroup != "dash" else None))
        previous_end = match.end()
    return found


def _year(text: str | None) -> int | None:
    if not text:
        return None
    value = int(text)
    return value + 2000 if value < 100 else value


def _slash_day_month(first: int, second: int, language: str | None) -> tuple[int, int] | None:
    """(day, month) of ``first/second``: day first, except after an English phrase (module docstring)."""
    if language != "en":
        return first, second
    readings = {(day, month) for day, month in ((first, second), (second, first)) if 1 <= month <= 12}
    return readings.pop() if len(readings) == 1 else None


def _day_month_year(found: _Found) -> tuple[int, int, int | None] | None:
    groups = found.match.groupdict()
    if groups["iso_y"]:
        return int(groups["iso_d"]), int(groups["iso_m"]), int(groups["iso_y"])
    if groups["dot_d"]:
        return int(groups["dot_d"]), int(groups["dot_m"]), _year(groups["dot_y"])
    if groups["sl_a"]:
        day_month = _slash_day_month(int(groups["sl_a"]), int(groups["sl_b"]), found.language)
        return None if day_month is None else (*day_month, _year(groups["sl_y"]))
    if groups["dm_d"]:
        return int(groups["dm_d"]), _month(groups["dm_m"]), _year(groups["dm_y"])
    return int(groups["md_d"]), _month(groups["md_m"]), _year(groups["md_y"])


def _month(name: str) -> int:
    return _MONTHS[name.rstrip(".").lower()]


def _calendar_date(day: int, month: int, year: int | None, today: date) -> date | None:
    """The date, or for ``year`` ``None`` its next occurrence on or after ``today`` (29 February may
    be four years away, then out of the window)."""
    years = [year] if year is not None else list(range(today.year, today.year + 5))
    for candidate_year in years:
        try:
            candidate = date(candidate_year, month, day)
        except ValueError:  # outcome: no such day in that year (31 April, 29 February), next year tried
            continue
        if year is not None or candidate >= today:
            return candidate
    return None


def return_date(text: str, *, received: datetime) -> date | None:
    """The return date ``text`` names (see the module's rules), or ``None``."""
    today = received.date()
    last = today + timedelta(days=MAX_AHEAD_DAYS)
    for found in _return_dates(text[:_SCAN_CHARS]):
        parts = _day_month_year(found)
        if parts is None:
            continue
        named = _calendar_date(*parts, today)
        if named is not None and today <= named <= last:
            return named
    return None
