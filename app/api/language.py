"""The language of a reply (en, ru, et): `?lang=`, else the body's `lang`, else the first language
of `Accept-Language` the catalogues have, else English.

An explicit `lang` that is not one of them is a 422; `Accept-Language` is a preference and falls
back to English in silence. The chosen language is kept in the request's state, so an error
raised later in the request (a bad program, a stale structure) is said in it too.
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import parse_qsl

from fastapi import Depends, Query, Request
from starlette.datastructures import Headers
from starlette.types import Scope

from chainrule.app.api.schemas import Lang
from chainrule.engine.i18n import DEFAULT_LANG, LANGS

LANG_DOC = (
    "The language of the reply's words (narration, warnings, messages, titles): `en`, `ru` or "
    "`et`. Wins over the body's `lang`; without either, `Accept-Language` decides, else English."
)


def accept_language(header: str | None) -> str:
    """The language of LANGS that an `Accept-Language` header prefers most (`ru-RU` is ru;
    q-values weigh; ties keep the header's order); English when it names none of them."""
    best, best_q = DEFAULT_LANG, 0.0
    for part in (header or "").split(",")[:32]:  # a browser sends a handful
        tag, _, params = part.partition(";")
        primary = tag.strip().split("-")[0].lower()
        if primary not in LANGS:
            continue
        q = 1.0
        for param in params.split(";"):
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        if 0 < q <= 1 and q > best_q:
            best, best_q = primary, q
    return best


def lang_of(scope: Scope) -> str:
    """The language of the request in `scope` as far as it is known without its body: the one a
    route chose, else a valid `?lang=`, else `Accept-Language`. For errors, whoever raises them."""
    chosen = scope.get("state", {}).get("lang")
    if chosen is not None:
        return chosen
    for name, value in parse_qsl(scope.get("query_string", b"").decode("latin-1")):
        if name == "lang" and value in LANGS:
            return value
    return accept_language(Headers(scope=scope).get("accept-language"))


class Language:
    """A route's language: `choose(body_lang)` decides it (query, body, header, English) and
    keeps it for the error handlers."""

    def __init__(self, request: Request, query: str | None) -> None:
        self.request = request
        self.query = query

    def choose(self, body: str | None = None) -> str:
        lang = self.query or body or accept_language(self.request.headers.get("accept-language"))
        self.request.state.lang = lang
        return lang


async def language(
    request: Request, lang: Annotated[Lang | None, Query(description=LANG_DOC)] = None
) -> Language:
    """The `lang` query parameter of a route whose reply has words (async: no thread)."""
    return Language(request, lang)


RequestLanguage = Annotated[Language, Depends(language)]
