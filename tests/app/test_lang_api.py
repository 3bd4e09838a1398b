"""The API in English, Russian and Estonian (app/api/language.py): `?lang=` wins over the body's
`lang`, then `Accept-Language`, then English; every reply's words and every error's message in
that language, `type` unchanged; caches keep the languages apart."""

from __future__ import annotations

from typing import get_args

import pytest

from chainrule.app.api.language import accept_language
from chainrule.app.api.lesson_files import load_lessons
from chainrule.app.api.schemas import Lang
from chainrule.engine.i18n import LANGS, text
from chainrule.engine.narration import narrations
from chainrule.engine.presets import presets

PROGRAM = {"source": "a = 2\nb = -3\nc = a * b\nL = c + a"}
NARRATION_START = {
    lang: text(lang, "narration.topo.start", name="L").split("(")[0] for lang in LANGS
}


def first_words(reply: dict) -> str:
    return narrations(reply)[0].split("(")[0]


def test_the_schema_s_languages_are_the_catalogues():
    assert get_args(Lang) == LANGS


@pytest.mark.parametrize(
    ("header", "lang"),
    [
        (None, "en"),
        ("", "en"),
        ("ru", "ru"),
        ("ru-RU", "ru"),
        ("et-EE,et;q=0.9", "et"),
        ("de-DE,de;q=0.9,et;q=0.8,ru;q=0.7", "et"),
        ("fr, ru;q=0.5, et;q=0.6", "et"),
        ("ru;q=0.5, et;q=0.5", "ru"),  # a tie keeps the header's order
        ("ET-ee", "et"),
        ("ru;q=0, en;q=0.1", "en"),  # q=0 means "not this one"
        ("de, fr", "en"),
        ("*", "en"),
        ("ru;q=abc, et", "et"),
        ("ru;q=2", "en"),
        (";;,,;q=", "en"),
    ],
)
def test_accept_language_picks_the_preferred_language_we_have(header, lang):
    assert accept_language(header) == lang


def test_the_language_comes_from_the_query_the_body_the_header_or_english(client):
    def start(params=None, body=None, headers=None) -> str:
        response = client.post(
            "/api/graph", params=params, json={**PROGRAM, **(body or {})}, headers=headers
        )
        assert response.status_code == 200
        return first_words(response.json())

    assert start() == NARRATION_START["en"]
    assert start(params={"lang": "ru"}) == NARRATION_START["ru"]
    assert start(body={"lang": "et"}) == NARRATION_START["et"]
    assert start(params={"lang": "ru"}, body={"lang": "et"}) == NARRATION_START["ru"]
    assert start(headers={"Accept-Language": "et-EE,et;q=0.9"}) == NARRATION_START["et"]
    assert start(body={"lang": "ru"}, headers={"Accept-Language": "et"}) == NARRATION_START["ru"]
    assert start(headers={"Accept-Language": "de-CH, fr;q=0.5"}) == NARRATION_START["en"]


def test_an_unknown_explicit_language_is_a_422_that_names_the_choices(client):
    response = client.post("/api/graph", params={"lang": "xx"}, json=PROGRAM)
    assert response.status_code == 422
    assert response.json()["error"] == {
        "type": "InvalidRequest",
        "message": "query.lang: Input should be 'en', 'ru' or 'et'",
        "line": None,
        "column": None,
        "end_line": None,
        "end_column": None,
        "snippet": "",
        "caret": "",
    }
    response = client.post("/api/graph", json={**PROGRAM, "lang": "de"})
    assert response.status_code == 422
    assert response.json()["error"]["message"] == "lang: Input should be 'en', 'ru' or 'et'"
    # Said in the header's language, the only one left.
    response = client.get("/api/presets", params={"lang": "xx"}, headers={"Accept-Language": "ru"})
    assert response.status_code == 422
    assert (
        response.json()["error"]["message"] == "query.lang: допустимые значения: 'en', 'ru', 'et'"
    )


def test_a_program_error_is_said_in_the_language_with_its_type_and_place_unchanged(client):
    errors = {}
    for lang in LANGS:
        response = client.post("/api/graph", params={"lang": lang}, json={"source": "a +"})
        assert response.status_code == 400
        errors[lang] = response.json()["error"]
    assert errors["en"]["message"] == "unexpected end of input: '+' needs a right-hand side"
    assert errors["ru"]["message"] == "программа неожиданно закончилась: у '+' нет правой части"
    assert errors["et"]["message"] == "programm lõppes ootamatult: '+' vajab paremat poolt"
    for lang in ("ru", "et"):
        assert {**errors[lang], "message": ""} == {**errors["en"], "message": ""}


BIG = (
    "\n".join(f"x{k} = {k}" for k in range(300))
    + "\ny = "
    + " + ".join(f"x{k}" for k in range(300))
)


def test_an_error_from_the_worker_process_is_said_in_the_language(client):
    # Programs this long are traced in a worker process: the error crosses back, still able to
    # say itself in any language.
    response = client.post("/api/graph", json={"source": BIG + " +", "lang": "et"})
    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith("programm lõppes ootamatult")
    response = client.post("/api/graph", params={"lang": "ru"}, json={"source": BIG})
    assert response.status_code == 200
    assert first_words(response.json()).startswith("Старт")


def test_the_app_s_own_errors_are_said_in_the_language(make_client):
    client = make_client(max_body_bytes=2000, export_max_nodes=3)
    ru = {"lang": "ru"}

    def error(response, status, type_):
        assert response.status_code == status
        body = response.json()["error"]
        assert body["type"] == type_
        return body["message"]

    assert error(client.get("/api/nope", params=ru), 404, "NotFound") == (
        "нет такой страницы или адреса API: GET /api/nope"
    )
    assert error(client.get("/api/graph", params={"lang": "et"}), 405, "MethodNotAllowed") == (
        "meetod GET pole aadressil /api/graph lubatud"
    )
    assert (
        error(client.post("/api/graph", params=ru, content="x" * 3000), 413, "BodyTooLarge")
        == "тело запроса слишком большое (3\u00a0000 Б); ограничение — 2\u00a0000 Б"
    )
    assert error(
        client.post("/api/graph", params=ru, json={"source": 1}), 422, "InvalidRequest"
    ) == ("source: ожидается строка")
    assert (
        error(
            client.post(
                "/api/graph", json={"source": "a", "mode": "x"}, headers={"Accept-Language": "et"}
            ),
            422,
            "InvalidRequest",
        )
        == "mode: lubatud väärtused: 'correct', 'overwrite'"
    )
    assert (
        error(
            client.post(
                "/api/graph",
                params=ru,
                content=b'{"source": ',
                headers={"content-type": "application/json"},
            ),
            422,
            "InvalidRequest",
        )
        == "тело запроса — не корректный JSON: ожидалось значение (строка 1, столбец 12)"
    )
    assert error(
        client.post("/api/graph", params={"lang": "et"}, content=b'{"source": "a"}'),
        422,
        "InvalidRequest",
    ) == (
        "päringu sisu peab olema JSON, mis on saadetud päisega Content-Type: application/json "
        "(saadi: Content-Type puudub)"
    )
    assert (
        error(
            client.post(
                "/api/graph",
                params=ru,
                content=b'{"values": {"a": NaN}}',
                headers={"content-type": "application/json"},
            ),
            422,
            "InvalidRequest",
        )
        == "values.a: NaN — это не корректный JSON (числа в JSON конечны): отправьте конечное число"
    )
    stale = client.post("/api/values", params=ru, json={**PROGRAM, "structure": "0" * 24})
    assert error(stale, 409, "StaleStructure").startswith("id структуры не соответствует")
    export = client.post("/api/export", params={"format": "dot", "lang": "et"}, json=PROGRAM)
    assert error(export, 400, "ExportTooLarge") == (
        "graaf on eksportimiseks liiga suur (sõlmi: 4; piirang on 3)"
    )
    descent = client.post(
        "/api/descend", json={**PROGRAM, "parameters": ["z"], "lr": 0.1, "steps": 1, "lang": "ru"}
    )
    assert error(descent, 400, "BadTraining") == (
        "'z' — не лист этой программы, поэтому его нельзя обучать; листья программы: a, b"
    )


def test_too_many_requests_is_said_in_the_language(make_client):
    client = make_client(rate_limit_per_minute=1)
    assert client.get("/api/presets").status_code == 200
    response = client.get("/api/presets", headers={"Accept-Language": "ru-RU"})
    assert response.status_code == 429
    assert response.json()["error"]["message"].startswith(
        "Слишком много запросов: не больше 1 в минуту от одного клиента."
    )


def test_warnings_and_the_numbers_reply_are_in_the_language_the_structure_is_not(client):
    body = {"source": "a = 2\nu = 3\nb = a * 2", "values": {"zz": 1}}
    replies = {
        lang: client.post("/api/graph", params={"lang": lang}, json=body).json() for lang in LANGS
    }
    assert len({reply["structure"] for reply in replies.values()}) == 1
    for lang in ("ru", "et"):
        assert replies[lang]["warnings"] != replies["en"]["warnings"]
        assert [w["type"] for w in replies[lang]["warnings"]] == ["unused", "unknown_value"]
    # A trace fetched in Russian takes numbers asked in Estonian: the arrays line up.
    numbers = client.post(
        "/api/values",
        params={"lang": "et"},
        json={**body, "values": {"a": 5, "zz": 1}, "structure": replies["ru"]["structure"]},
    )
    assert numbers.status_code == 200
    assert numbers.json()["data"][0] == 5
    assert numbers.json()["warnings"] == replies["et"]["warnings"]


def test_the_response_cache_keeps_languages_apart(client):
    english = client.post("/api/graph", json=PROGRAM).json()
    russian = client.post("/api/graph", params={"lang": "ru"}, json=PROGRAM).json()
    again = client.post("/api/graph", json=PROGRAM).json()
    assert first_words(english) == first_words(again) == NARRATION_START["en"]
    assert first_words(russian) == NARRATION_START["ru"]
    assert russian["layout"]["cached"]  # the layout is shared: it depends on no word
    assert [n["x"] for n in russian["nodes"]] == [n["x"] for n in english["nodes"]]
    assert {**russian, "steps": 0, "layout": 0} == {**english, "steps": 0, "layout": 0}


def test_the_train_lab_s_stop_is_said_in_the_language(client):
    body = {"source": "w = 0\nloss = (w*2 - 5)**2", "parameters": ["w"], "lr": 1.0, "steps": 3}
    english = client.post("/api/descend", json=body).json()["stopped"]["message"]
    estonian = client.post("/api/descend", json={**body, "lang": "et"}).json()["stopped"]
    assert english.startswith("Stopped at step")
    assert estonian["message"].startswith("Peatusime sammul")


@pytest.mark.parametrize("lang", LANGS)
def test_presets_and_lessons_in_each_language(client, lang):
    assert client.get("/api/presets", params={"lang": lang}).json() == presets(lang)
    assert client.get("/api/lessons", params={"lang": lang}).json() == load_lessons(lang=lang)
    by_header = client.get("/api/lessons", headers={"Accept-Language": lang}).json()
    assert by_header == load_lessons(lang=lang)


def test_every_lesson_is_written_in_every_language():
    english = load_lessons()
    for lang in ("ru", "et"):
        said = load_lessons(lang=lang)
        for ours, theirs in zip(said, english, strict=True):
            assert ours["title"] != theirs["title"] and ours["summary"] != theirs["summary"]
            assert [s["step"] for s in ours["stops"]] == [s["step"] for s in theirs["stops"]]
            assert sum(
                a["text"] != b["text"] for a, b in zip(ours["stops"], theirs["stops"], strict=True)
            ) == len(theirs["stops"])


def test_the_language_s_replies_vary_on_accept_language_and_drawings_do_not(client):
    assert "Accept-Language" in client.get("/api/presets").headers["vary"]
    assert "Accept-Language" in client.post("/api/graph", json={"source": "a +"}).headers["vary"]
    assert "Accept-Language" in client.get("/api/nope").headers["vary"]
    drawing = client.post("/api/export", params={"format": "dot"}, json=PROGRAM)
    assert drawing.status_code == 200 and "vary" not in drawing.headers
    assert "vary" not in client.get("/healthz").headers


def test_an_unexpected_error_is_said_in_the_language(make_client, monkeypatch):
    client = make_client()
    from chainrule.app.api import graph as graph_route

    def explode(*_args, **_kwargs):
        raise RuntimeError("secret internals")

    monkeypatch.setattr(graph_route, "build_body", explode)
    response = client.post("/api/graph", json={**PROGRAM, "lang": "et"})
    assert response.status_code == 500
    assert response.json()["error"]["message"] == "serveri sisemine viga"
