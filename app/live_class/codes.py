"""Join codes, teacher tokens and nicknames.

A join code is 6 symbols of Crockford's base 32 (digits and capitals without I, L, O, U), shown
as `K7Q-4MX`: 32**6 = 2**30, about 1.07 billion codes. Read back forgivingly: case, spaces and
dashes do not matter, and O/I/L are read as 0/1/1, so a code copied off a projector still works.
Guesses are limited per address (settings.class_join_guesses_per_minute), so a guesser from one
address needs on the order of decades to find one given class (docs/live-class.md).

The teacher's token is 192 random bits, handed to the teacher's page only; the store keeps its
SHA-256, never the token.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import unicodedata

ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
CODE_LENGTH = 6
CODE_SPACE = len(ALPHABET) ** CODE_LENGTH
_READ_AS = str.maketrans({"O": "0", "I": "1", "L": "1"})
_CODE = re.compile(f"[{ALPHABET}]{{{CODE_LENGTH}}}")

NICKNAME_MAX = 24
STUDENT_ID = re.compile(r"[A-Za-z0-9_-]{16,64}")


def new_code() -> str:
    """A random join code, e.g. `K7Q4MX` (shown as `K7Q-4MX`)."""
    return "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))


def read_code(text: str) -> str | None:
    """The code a person typed (`k7q-4mx`, `K7Q 4MX`, `K7Q-4MO`), or None if it cannot be one."""
    cleaned = re.sub(r"[\s-]", "", text[:32]).upper().translate(_READ_AS)
    return cleaned if _CODE.fullmatch(cleaned) else None


def shown_code(code: str) -> str:
    """`K7Q4MX` as people read it: `K7Q-4MX`."""
    half = CODE_LENGTH // 2
    return f"{code[:half]}-{code[half:]}"


def new_token() -> str:
    return secrets.token_urlsafe(24)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


def is_teacher(token: str | None, stored_hash: str) -> bool:
    """Whether `token` is the one whose hash was stored (compared in constant time)."""
    return bool(token) and hmac.compare_digest(token_hash(token or ""), stored_hash)


def clean_nickname(text: str) -> str:
    """A nickname as shown: NFC, no control or format characters, spaces collapsed, at most
    NICKNAME_MAX characters. It is only ever shown as text (textContent), never as markup."""
    text = unicodedata.normalize("NFC", text[: NICKNAME_MAX * 8])
    kept = "".join(
        " " if ch.isspace() else ch
        for ch in text
        if ch.isspace() or not unicodedata.category(ch).startswith("C")
    )
    return " ".join(kept.split())[:NICKNAME_MAX]


def roster_id(code: str, student: str) -> str:
    """How the teacher's roster names `student` of class `code`: 12 hex digits of a hash, never
    the id itself (which lets a page back in as that student)."""
    return hashlib.sha256(f"{code}/{student}".encode()).hexdigest()[:12]
