"""Key/value secrets: a literal value under a key whose name says secret (``DB_PASSWORD=...``,
``"api_key": "..."``, ``--token VALUE``). ``password = get_password()``, ``token: str`` and
``${DB_PASSWORD}`` are references, types or templates, not secrets; placeholders and masks neither.
"""

from __future__ import annotations

import re

from memory_service.core.redaction.detectors import KEYWORDS, MASK_HEAD, Candidate, mixed

_PLACEHOLDER = re.compile(
    r"""^(?:none|null|nil|undefined|true|false|yes|no|on|off|n/?a|tbd|todo|fixme|unset|empty|default
    |required|optional|string|str|text|bytes|int|hidden|masked|placeholder|redacted|dummy|sample
    |secret|password|passwd|pass|pwd|token|api_?key|(.)\1+|x+(?:[-_ ]x+)*|\*+\w{0,4}|\.\.\.|…)$
    |example|\[redacted|\$\{|\{\{|\{%|^\$\(?\w|^%\w+%$|%(?:\(\w+\))?[sdr]\b|^<.*>$|^\[.*\]$|\{\w*\}
    |^your[_ -]|_here$|^![A-Za-z]+$|^[|>][-+]?$|^[&*]\w""",
    re.I | re.X,
)


def is_placeholder(value: str) -> bool:
    """Empty, a template or variable reference, a mask, a documentation example (``EXAMPLE``)."""
    return not value.strip() or _PLACEHOLDER.search(value.strip()) is not None


_KEYWORD = re.compile("|".join(KEYWORDS))
_KEY = re.compile(  # the key name ends with a secret word (`pgpassword`, `db_pass`; not `bypass`)
    r"(?:(?P<strong>password|passwd|passphrase|secret|(?:^|_)(?:pass|pwd|pw|secret_?key))|token|(?:^|_)(?:auth"
    r"|creds|credentials?|apikey|(?:api|access|private|signing|encryption|master|app|auth|client|consumer"
    r"|license|service|account|admin)_?key))(?:_(?:base|value|b64|base64|hex|raw|plain|plaintext))?$"
)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NON_ALNUM = re.compile(r"[^a-z0-9]+")
_QUOTED = re.compile(
    r"(?P<p>[rRbBuUfF]{0,2})(?:\\\"(?P<e>(?:[^\"\\\n]|\\[^\"\n]){0,1000})\\\""
    r"|\"(?P<d>(?:[^\"\\\n]|\\.){0,1000})\"|'(?P<s>(?:[^'\\\n]|\\.){0,1000})'|`(?P<b>[^`\n]{0,1000})`)"
)
_BARE = re.compile(r"[^\s\"'`<>]{1,256}")
_NEXT_PAIR = re.compile(r"[;&](?=[\w .-]+=)")
_ANNOTATION = re.compile(  # `api_key: str | None = ...`: the value is after the `=`
    r"(?:[A-Z]\w{0,40}|str|int|bytes|bool|float|list|dict|tuple|object)[\w.\[\], |]{0,80}?[ \t]+=(?!=)[ \t]*"
)
_EXPRESSION = re.compile(r"(?:[A-Za-z_$][\w.$]*)?[(\[{]")
_IDENT = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_LINE_START = re.compile(  # indentation, then maybe `export `, a YAML `- `, a comment marker
    r"[ \t]*(?:(?:export|set|setx|declare(?: -x)?|readonly|local|const|let|var|ENV)[ \t]+"
    r"|[-#][ \t]*|//[ \t]*)?"
)
_URL_OR_PATH = re.compile(r"^[A-Za-z][\w+.-]*://|^(?:~|\.{1,2}|[A-Za-z]:)?[/\\][\w.\\/-]*$")
_FILE = re.compile(r"\.(?:json|pem|key|txt|ya?ml|env|crt|p12|pfx|jks|der|cfg|ini)$", re.I)
_AWS_SECRET = re.compile(r"[A-Za-z0-9/+]{40}")
_STOP_WORDS = "value values data result default self cls new old raw text input user env config settings"
_STOP = frozenset(f"{_STOP_WORDS} args kwargs options opts params".split())  # names a value is read from
_TYPE_WORDS = "str string int integer bytes bool boolean float number any object optional secretstr"
_TYPES = frozenset(f"{_TYPE_WORDS} secretbytes uuid text list dict".split())  # `password: str` annotates
_CODE_TAIL = ("#", "//", ",", ";", ")", "}", "]")


def _looks_random(value: str) -> bool:
    """A token is not a word: 8+ characters, letters with digits, or long and mixed case."""
    if len(value) < 8 or " " in value:
        return False
    if mixed(value):
        return True
    letters = value.replace("-", "").replace("_", "")
    return len(value) >= 16 and not letters.islower() and not letters.isupper() and not letters.istitle()


def _is_variable(value: str) -> bool:
    """An unquoted name in code (``pw``, ``self.token``, ``API_KEY``): a reference, not a literal."""
    if not _IDENT.fullmatch(value) or (mixed(value) and not value.islower() and not value.isupper()):
        return False  # letters of both cases with digits: random, not a name
    low = value.lower()
    if _KEYWORD.search(low) or low in _STOP or low in _TYPES:
        return True
    if any(c.isdigit() for c in value):
        return False
    return "." in value or "_" in value or len(value) < 5 or value[0].isupper()


def secret_key(key: str) -> tuple[str, bool] | None:
    """The normalised key and whether any value counts (a password) or only token-like ones."""
    norm = _NON_ALNUM.sub("_", _CAMEL.sub("_", key).lower()).strip("_")
    found = _KEY.search(norm)
    if found is None or norm in ("pwd", "oldpwd"):  # the shell's working directory
        return None
    return norm, found.group("strong") is not None


def accept(norm: str, strong: bool, value: str) -> str | None:
    """The kind of a literal value under a secret-ish key, or None when it is not a secret."""
    if is_placeholder(value) or MASK_HEAD in value:
        return None
    if "secret" in norm and ("aws" in norm or "access" in norm) and _AWS_SECRET.fullmatch(value):
        return "aws_secret_key"
    if _URL_OR_PATH.search(value) or (strong and len(value) < 3):
        return None
    if not strong and (not _looks_random(value) or _FILE.search(value)):
        return None
    return "env_secret"


def assignment(text: str, match: re.Match[str]) -> Candidate | None:
    """Judge ``key <sep> value`` found by an ``ASSIGN`` pattern (which matched from a keyword on)."""
    start = match.start()
    while start > max(0, match.start() - 80) and (text[start - 1].isalnum() or text[start - 1] in "_.-"):
        start -= 1
    line_start = text.rfind("\n", max(0, start - 200), start) + 1  # a prefix over 200 is no line start
    before = text[line_start or max(0, start - 200) : start]
    if before.endswith((MASK_HEAD, "://")):  # a mask's kind, or the user in scheme://user:password@
        return None
    keyed = secret_key(text[start : match.start(1)])
    if keyed is None:
        return None
    before = before.rstrip("\"'\\")
    prev = before.rstrip()[-1:]
    sep, pos = match.group(2), match.end()
    spaced = match.end(1) < match.start(2) or match.end(2) < pos
    if sep == ":" and (annotation := _ANNOTATION.match(text, pos)):
        sep, spaced, pos = "=", True, annotation.end()
    quoted = _QUOTED.match(text, pos)
    if quoted:
        group = next(g for g in "edsb" if quoted.group(g) is not None)
        if "f" in quoted.group("p").lower() and "{" in quoted.group(group):
            return None  # an f-string builds the value from variables
        kind = accept(*keyed, quoted.group(group))
        return (kind, quoted.start(group), quoted.end(group)) if kind else None
    bare = _BARE.match(text, pos)
    value = bare.group() if bare else ""
    value = _NEXT_PAIR.split(value, 1)[0]  # `?token=v&page=2`, `Password=v;Encrypt=true`
    if prev in ("?", "&"):
        value = value.split("#", 1)[0]
    value = value.rstrip(",;)]}")
    if not value or _EXPRESSION.match(value):
        return None
    if spaced or sep in (":", "=>") or prev in ("(", ","):  # code, YAML or prose: one token, then nothing
        tail = text[pos + len(value) : pos + len(value) + 200].split("\n", 1)[0].strip()
        if tail and not tail.startswith(_CODE_TAIL) and not _looks_random(value):
            return None  # an expression or a sentence goes on after the first word
        if sep != ":" and _is_variable(value):
            return None
    if sep == ":" and (
        value.lower() in _TYPES
        or (not _LINE_START.fullmatch(before) and prev not in "{,\"'" and not _looks_random(value))
    ):
        return None  # a type annotation, or a colon in a sentence
    kind = accept(*keyed, value)
    return (kind, pos, pos + len(value)) if kind else None
