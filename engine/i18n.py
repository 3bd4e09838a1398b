"""The words of chainrule in English, Russian and Estonian: one JSON catalogue per language
(`locales/<lang>.json`), flat keys, values that are templates with named `{placeholders}`.

English is the source; every other catalogue has exactly its keys and, per key, the same
placeholders (tests/engine/test_i18n.py). A catalogue value holds no other braces, and a
placeholder is a bare name (no format spec): numbers are written before they are filled in,
by the narration's one formatter (`fmt`, a `.` for decimals in every language) or as a `Count`.

What the engine says is a `Message`: the English text itself (a `str`, so `str(error)`, the
warnings of a trace and everything else that reads English keeps working), carrying its key and
parameters, so that `render(message, "ru")` says it in Russian wherever a reply is written.
"""

from __future__ import annotations

import json
import string
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

LANGS = ("en", "ru", "et")
DEFAULT_LANG = "en"
LOCALES_DIR = Path(__file__).resolve().parent.parent / "locales"  # package data, beside engine/

# How a count is grouped by thousands: `20,000` in English, `20 000` (a no-break space) in
# Russian and Estonian, where a comma is the decimal separator.
_THOUSANDS = {"en": ",", "ru": "\u00a0", "et": "\u00a0"}


@cache
def catalogue(lang: str) -> dict[str, str]:
    """The catalogue of `lang` (read once): key → template."""
    with open(LOCALES_DIR / f"{check_lang(lang)}.json", encoding="utf-8") as file:
        entries = json.load(file)
    if not isinstance(entries, dict) or not all(
        isinstance(key, str) and isinstance(value, str) for key, value in entries.items()
    ):
        raise ValueError(f"locales/{lang}.json must be one object of strings")
    return entries


def check_lang(lang: str) -> str:
    """`lang` if it is one of LANGS; ValueError otherwise."""
    if lang not in LANGS:
        raise ValueError(f"lang must be one of {LANGS}, got {lang!r}")
    return lang


def placeholders(template: str) -> set[str]:
    """The placeholder names of a catalogue template."""
    return {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}


class Count(int):
    """A count or size written grouped by thousands in the reader's language (`20,000`,
    `20 000`); a plain int parameter is written as digits alone (a line number)."""

    __slots__ = ()


class Message(str):
    """A sentence of a catalogue: its English text, with the `key` and `params` that say it in
    any language (`render`). Parameters are text, ints, Counts or Messages (said in the same
    language). Made by `msg`; pickles (a ProgramError crosses from a worker process)."""

    key: str
    params: dict[str, Any]

    def render(self, lang: str) -> str:
        return text(lang, self.key, **self.params)


def msg(key: str, **params: Any) -> Message:
    """The Message `key` with `params`, its text the English one."""
    message = Message(text(DEFAULT_LANG, key, **params))
    message.key = key
    message.params = params
    return message


def _written(value: Any, lang: str) -> Any:
    if isinstance(value, Message):  # its own text is the English one, already written
        return str(value) if lang == DEFAULT_LANG else value.render(lang)
    if isinstance(value, Count):
        return f"{int(value):,}".replace(",", _THOUSANDS[lang])
    return value


def text(lang: str, key: str, **params: Any) -> str:
    """The template `key` of `lang`'s catalogue filled with `params` (KeyError for an unknown
    key or a missing parameter)."""
    template = catalogue(lang)[key]
    if not params:
        return template
    return template.format_map({name: _written(value, lang) for name, value in params.items()})


def render(value: str, lang: str) -> str:
    """A Message in `lang`; any other text as it is (it was not written to be translated)."""
    if lang == DEFAULT_LANG or not isinstance(value, Message):
        return str(value)  # a Message's own text is the English one
    return value.render(lang)


def warnings_in(warnings: Iterable[dict[str, Any]], lang: str) -> list[dict[str, Any]]:
    """Warnings (`{"type", "message", …}`: a trace's, or the Value reader's) with each message
    said in `lang` (`render`): where a reply is written, in the server, the notebook and the
    sandbox alike."""
    return [{**warning, "message": render(warning["message"], lang)} for warning in warnings]


@cache
def templates(lang: str, prefix: str) -> dict[str, str]:
    """The templates of `lang` whose keys start with `prefix`, keyed by the rest of the key: a
    module that fills many sentences looks each up once (`narration.topo.`, `ui.`). Shared:
    never to be changed."""
    return {
        key[len(prefix) :]: value
        for key, value in catalogue(lang).items()
        if key.startswith(prefix)
    }


# The engine's sentences that the page writes too, by the prefix of their keys: the Train lab's
# descent runs in the page (static/js/train/descend.js) and says why it stopped as
# engine/descend.py does.
PAGE_SENTENCES = "descent."


def ui_catalogue(lang: str) -> dict[str, Any]:
    """The words of the page (and of the embedded player) in `lang`, as static/js/core/i18n.js reads
    them: `{"lang": lang, "text": {key after "ui." → template}, "sentences": {key → template}}`
    from locales/<lang>.json (`sentences`: the keys starting with PAGE_SENTENCES, whole)."""
    sentences = {
        PAGE_SENTENCES + key: value for key, value in templates(lang, PAGE_SENTENCES).items()
    }
    return {"lang": lang, "text": templates(lang, "ui."), "sentences": sentences}
