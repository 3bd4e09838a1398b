"""The recent parses a re-trace reads again (engine/tracing.py `parsed`): a slider drag traces one
program many times, and reading a 24,000-character program is half its trace."""

from chainrule import engine
from chainrule.engine.tracing import (
    PARSE_CACHE_MAX_CHARS,
    PARSE_CACHE_MAX_LARGE_CHARS,
    clear_parse_cache,
    parsed,
)


def products(length: int) -> str:
    """A sum of products at least `length` characters long."""
    terms = []
    while sum(len(t) + 3 for t in terms) < length:
        terms.append(f"a{len(terms)}*b{len(terms)}")
    return " + ".join(terms)


def test_short_and_long_programs_are_read_once_until_the_cache_is_cleared() -> None:
    for length in (100, PARSE_CACHE_MAX_CHARS + 1, PARSE_CACHE_MAX_LARGE_CHARS - 100):
        source = products(length)
        assert len(source) <= PARSE_CACHE_MAX_LARGE_CHARS
        first = parsed(source, None)
        assert parsed(source, None) is first
        clear_parse_cache()
        again = parsed(source, None)
        assert again is not first  # read again (the next test: it traces the same)


def test_a_program_over_the_large_limit_is_read_each_time() -> None:
    source = products(PARSE_CACHE_MAX_LARGE_CHARS + 10)
    assert parsed(source, None) is not parsed(source, None)


def test_a_kept_parse_traces_as_a_fresh_one() -> None:
    source = products(PARSE_CACHE_MAX_CHARS + 1)
    values = {"a3": -2.5, "b7": 0.25}
    kept = engine.trace(source, values).to_dict()
    clear_parse_cache()
    assert engine.trace(source, values).to_dict() == kept
