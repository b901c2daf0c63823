"""Secret detection and masking: find credentials in text and replace only the secret part.

Memories, audit entries and log lines quote whatever an agent pastes (a ``.env`` excerpt, a curl
command, a stack trace with a DSN); a stored credential makes every backup and export a leak.
Pure functions, no I/O.

Where a secret has a key/value shape only the value is masked, so the text stays readable:
``postgres://app:[REDACTED:url_password]@db/x``, ``DB_PASSWORD=[REDACTED:env_secret]``,
``Authorization: Bearer [REDACTED:bearer_token]``. A mask is never a candidate itself, so masking
twice changes nothing. In an assignment the key name must say secret and the value must be a
literal: ``password = get_password()``, ``token: str`` and ``${DB_PASSWORD}`` are not secrets.

Speed: every pattern is compiled once and starts with a literal (``ghp_``, ``://``, ``token``...),
which the regex engine finds with a fast substring search; word boundaries are checked after a
match, and case-insensitive patterns run on the lower-cased text. Each detector also names its
needles, the literals one of which every match holds: a text is searched only by the detectors
whose needle it holds. A 100-character text with none costs one ``lower()`` and ~50 substring
tests (~5 µs, where starting every search took ~14). Three detectors have no literal: a bare AWS
secret key, a card number and a US social security number (:mod:`.secret_shapes` checks what
their patterns match); their needles are the digits, so they run on most texts (~5 µs more).
"""

from __future__ import annotations

import base64
import binascii
import bisect
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from memory_service.core.redaction.shapes import B64 as _B64
from memory_service.core.redaction.shapes import bare_aws_secret, card_number, us_ssn

MASK = "[REDACTED:{kind}]"
_MASK_HEAD = "[REDACTED:"


@dataclass(frozen=True)
class Finding:
    """One secret: its kind and the span of the secret itself (not its key, user or scheme)."""

    kind: str
    start: int
    end: int


_Candidate = tuple[str, int, int]


def _mixed(value: str) -> bool:
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _cased(value: str) -> bool:
    return any(c.isupper() for c in value) and any(c.islower() for c in value)


def _basic_credentials(value: str) -> bool:
    """``Basic`` carries base64 of ``user:password``: decode it rather than trust the word."""
    try:
        raw = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in raw and all(32 <= b < 127 for b in raw)


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: the scan looks them up in sets
class _Detector:
    kind: str
    regex: re.Pattern[str]
    group: int = 0  # the part of the match that is the secret
    check: Callable[[str], bool] | None = None
    folded: re.Pattern[str] | None = None  # case-insensitive: `regex` is lower-case, this is the fallback
    needles: tuple[str, ...] = ()  # every match holds one of these (lower-case when `folded`)


def _detector(
    kind: str,
    pattern: str,
    group: int = 0,
    check: Callable[[str], bool] | None = None,
    *,
    lower: bool = False,
    needles: tuple[str, ...] = (),
) -> _Detector:
    folded = re.compile(pattern, re.I) if lower else None
    return _Detector(kind, re.compile(pattern), group, check, folded, needles)


def _lead(prefix: str) -> str:
    """``prefix`` (fixed width), not inside a longer word. The check comes after the literal so the
    engine still finds candidates by fast substring search, and a start inside a long run of token
    characters (``eyJeyJeyJ...``) fails at once instead of rescanning the run: no quadratic input."""
    return f"{prefix}(?<![\\w-]{prefix})"


_END = r"(?![\w-])"
_TOKEN_VALUE = r"[ \t]+([a-z0-9._~+/-]{12,1000}=*)(?![\w.~+/=-])"
_PEM_LABEL = r"[ A-Z0-9]{0,30}PRIVATE KEY(?: BLOCK)?-----"
_GITLAB = "pat|dt|rt|ptt|cbt|oas|ft|imt|soat"  # token kinds: glpat-..., gldt-...
_DETECTORS = (  # one secret in two detectors: the longest span wins, then the earlier detector
    _detector(  # the whole block; cut short (no END line), the base64 lines that follow BEGIN
        "private_key",
        rf"-----BEGIN{_PEM_LABEL}(?:(?:[^-]|-(?!----)){{0,60000}}+-----END{_PEM_LABEL}"
        r"|(?:(?:\s|\\[nr])+(?:[\w-]{1,40}: [^\n\\]{0,200}|[A-Za-z0-9+/=]{16,}+))*+)",
        needles=("-----BEGIN",),
    ),
    _detector(  # glued to a name is still a key: `credentials-AKIA...json`, `key_AKIA...`
        "aws_access_key",
        r"A(?:KIA|SIA|BIA|CCA)(?<![A-Z0-9]....)[A-Z0-9]{16}(?![A-Za-z0-9])",
        needles=("AKIA", "ASIA", "ABIA", "ACCA"),
    ),
    _detector(  # a bare one, no key name around it: only shapes a random key has
        "aws_secret_key",
        rf"{_B64}(?<![\w/+.=-]{_B64}){_B64}{{39}}(?!{_B64}|[=_-])"  # then: not the last line of a block
        rf"(?<!{_B64}{{60}}\n{_B64}{{40}})(?<!{_B64}{{60}}\\n{_B64}{{40}})",
        check=bare_aws_secret,
        needles=tuple("0123456789"),
    ),
    _detector(  # 13-19 digits, maybe grouped by spaces or dashes; issuer prefix and Luhn checked
        "card_number",
        r"\d(?<![\w.,+/-]\d)(?:[ -]?\d){12,18}(?![\w-]|[.,]\d)",
        check=card_number,
        needles=tuple("0123456789"),
    ),
    _detector(
        "us_ssn",
        r"\d(?<![\w.,+/-]\d)\d\d-\d\d-\d{4}(?![\w-]|[.,]\d)",
        check=us_ssn,
        needles=tuple("0123456789"),
    ),
    _detector(  # `SSN: 078051120`: undashed only after the word
        "us_ssn",
        r"(?:ssn|social security)(?<![\w-]ssn)(?<![\w-]social security)(?: number| no\.?)?"
        r"[\"']?[ \t]*[:#=]?[ \t]*[\"']?(\d{9}|\d{3} \d\d \d{4})(?![\w-])",
        1,
        us_ssn,
        lower=True,
        needles=("ssn", "social security"),
    ),
    _detector(
        "github_token",
        _lead("gh[pousr]_") + r"[A-Za-z0-9]{36,251}\b",
        needles=("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    ),
    _detector("github_token", _lead("github_pat_") + r"[A-Za-z0-9_]{22,251}\b", needles=("github_pat_",)),
    _detector(
        "gitlab_token",
        _lead("gl") + f"(?:{_GITLAB})-" + r"[A-Za-z0-9_-]{20,300}+" + _END,
        needles=tuple(f"gl{kind}-" for kind in _GITLAB.split("|")),
    ),
    _detector(
        "slack_webhook",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9_/-]{16,300})",
        1,
        _mixed,
        needles=("hooks.slack.com/",),
    ),
    _detector(
        "slack_token",
        _lead("xox[abposre]") + r"(?:\.xox[a-z])?-(?:[0-9A-Za-z]{1,40}-){1,6}[0-9A-Za-z]{8,200}+" + _END,
        0,
        _mixed,
        needles=("xox",),
    ),
    _detector("stripe_key", _lead("[sr]k_") + r"(?:live|test)_[0-9A-Za-z]{16,250}\b", needles=("sk_", "rk_")),
    _detector("stripe_key", _lead("pk_live_") + r"[0-9A-Za-z]{16,250}\b", needles=("pk_live_",)),
    _detector("google_api_key", _lead("AIza") + r"[0-9A-Za-z_-]{35}" + _END, needles=("AIza",)),
    _detector("anthropic_key", _lead("sk-ant-") + r"[A-Za-z0-9_-]{32,300}+" + _END, needles=("sk-ant-",)),
    _detector(
        "openai_key", _lead("sk-") + r"(?!ant-)[A-Za-z0-9_-]{32,300}+" + _END, 0, _mixed, needles=("sk-",)
    ),
    _detector("npm_token", _lead("npm_") + r"[A-Za-z0-9]{36}\b", needles=("npm_",)),
    _detector(
        "sendgrid_key",
        _lead("SG\\.") + r"[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{20,64}" + _END,
        needles=("SG.",),
    ),
    _detector("twilio_key", _lead("SK") + r"[0-9a-fA-F]{32}\b", needles=("SK",)),
    _detector("huggingface_token", _lead("hf_") + r"[A-Za-z0-9]{34,200}\b", 0, _cased, needles=("hf_",)),
    _detector(
        "jwt",
        _lead("eyJ") + r"[A-Za-z0-9_-]{10,4000}+\.[A-Za-z0-9_-]{10,8000}+\.[A-Za-z0-9_-]{16,2000}+" + _END,
        needles=("eyJ",),
    ),
    _detector(
        "basic_auth",
        _lead("basic") + r"[ \t]+([a-z0-9+/]{8,1000}+={0,2})(?![\w+/=])",
        1,
        _basic_credentials,
        lower=True,
        needles=("basic",),
    ),
    _detector(
        "basic_auth",
        _lead("curl") + r"[^\n]{0,400}?[ \t]-(?:u|-user)[ \t=]+[\"']?[^\s:\"'@$]{1,100}:([^\s\"'@]{1,200})",
        1,
        needles=("curl",),
    ),
    _detector("bearer_token", _lead("bearer") + _TOKEN_VALUE, 1, _mixed, lower=True, needles=("bearer",)),
    _detector(
        "bearer_token",
        _lead("authorization") + r"[\"']?[ \t]*[:=][ \t]*[\"']?(?:token|bot|apikey|sso-key)" + _TOKEN_VALUE,
        1,
        _mixed,
        lower=True,
        needles=("authorization",),
    ),
    _detector(
        "url_password",  # scheme://user:PASSWORD@host; the password runs to the last @ of the authority
        r"://(?<=[A-Za-z0-9]://)[^\s:/?#@\"'<>\[\]]{0,200}:([^\s/\"'<>]{1,200})@(?=[\w\[.-])",
        1,
        needles=("://",),
    ),
)

_PLACEHOLDER = re.compile(
    r"""^(?:none|null|nil|undefined|true|false|yes|no|on|off|n/?a|tbd|todo|fixme|unset|empty|default
    |required|optional|string|str|text|bytes|int|hidden|masked|placeholder|redacted|dummy|sample
    |secret|password|passwd|pass|pwd|token|api_?key|(.)\1+|x+(?:[-_ ]x+)*|\*+\w{0,4}|\.\.\.|…)$
    |example|\[redacted|\$\{|\{\{|\{%|^\$\(?\w|^%\w+%$|%(?:\(\w+\))?[sdr]\b|^<.*>$|^\[.*\]$|\{\w*\}
    |^your[_ -]|_here$|^![A-Za-z]+$|^[|>][-+]?$|^[&*]\w""",
    re.I | re.X,
)


def _is_placeholder(value: str) -> bool:
    """Empty, a template or variable reference, a mask, a documentation example (``EXAMPLE``)."""
    return not value.strip() or _PLACEHOLDER.search(value.strip()) is not None


# ---------------------------------------------------------------- assignments: the key name says secret

_KEYWORDS = ("pass", "pw", "secret", "token", "key", "auth", "cred")
_KEYWORD = re.compile("|".join(_KEYWORDS))
_ASSIGN_TAIL = r"[\w.-]{0,60}+(\\?[\"']?\]?)[ \t]*(:=|=>|=(?!=)|:(?!:))[ \t]*"
_ASSIGN = tuple(_detector("env_secret", kw + _ASSIGN_TAIL, lower=True, needles=(kw,)) for kw in _KEYWORDS)
_FLAG = _detector(  # --password VALUE (--password=VALUE is an assignment)
    "env_secret",
    _lead("--") + r"([\w-]{0,40}?(?:pass|pw|secret|token|key|auth)[\w-]{0,40}+)[ \t]+"
    r"(?:\"([^\"\n]{1,500})\"|'([^'\n]{1,500})'|([^\s\"'-][^\s\"']{0,500}))",
    lower=True,
    needles=("--",),
)
_XML = (  # <password>v</password>, <add key="ApiKey" value="v"/>, .netrc `machine h login u password v`
    _detector("env_secret", r"<([A-Za-z_][\w.:-]{0,60})>([^<>\n]{1,500})</\1>", needles=("</",)),
    _detector(
        "env_secret",
        r"key=[\"']([\w.:-]{1,60})[\"'][ \t]+value=[\"']([^\"'\n]{1,500})[\"']",
        needles=("key=",),
    ),
    _detector(
        "env_secret",
        r"machine[ \t]+\S{1,200}\s+login\s+\S{1,200}\s+(password)\s+(\S{1,500})",
        needles=("machine",),
    ),
)
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
    if _mixed(value):
        return True
    letters = value.replace("-", "").replace("_", "")
    return len(value) >= 16 and not letters.islower() and not letters.isupper() and not letters.istitle()


def _is_variable(value: str) -> bool:
    """An unquoted name in code (``pw``, ``self.token``, ``API_KEY``): a reference, not a literal."""
    if not _IDENT.fullmatch(value) or (_mixed(value) and not value.islower() and not value.isupper()):
        return False  # letters of both cases with digits: random, not a name
    low = value.lower()
    if _KEYWORD.search(low) or low in _STOP or low in _TYPES:
        return True
    if any(c.isdigit() for c in value):
        return False
    return "." in value or "_" in value or len(value) < 5 or value[0].isupper()


def _secret_key(key: str) -> tuple[str, bool] | None:
    """The normalised key and whether any value counts (a password) or only token-like ones."""
    norm = _NON_ALNUM.sub("_", _CAMEL.sub("_", key).lower()).strip("_")
    found = _KEY.search(norm)
    if found is None or norm in ("pwd", "oldpwd"):  # the shell's working directory
        return None
    return norm, found.group("strong") is not None


def _accept(norm: str, strong: bool, value: str) -> str | None:
    """The kind of a literal value under a secret-ish key, or None when it is not a secret."""
    if _is_placeholder(value) or _MASK_HEAD in value:
        return None
    if "secret" in norm and ("aws" in norm or "access" in norm) and _AWS_SECRET.fullmatch(value):
        return "aws_secret_key"
    if _URL_OR_PATH.search(value) or (strong and len(value) < 3):
        return None
    if not strong and (not _looks_random(value) or _FILE.search(value)):
        return None
    return "env_secret"


def _assignment(text: str, match: re.Match[str]) -> _Candidate | None:
    """Judge ``key <sep> value`` found by an ``_ASSIGN`` pattern (which matched from a keyword on)."""
    start = match.start()
    while start > max(0, match.start() - 80) and (text[start - 1].isalnum() or text[start - 1] in "_.-"):
        start -= 1
    line_start = text.rfind("\n", max(0, start - 200), start) + 1  # a prefix over 200 is no line start
    before = text[line_start or max(0, start - 200) : start]
    if before.endswith((_MASK_HEAD, "://")):  # a mask's kind, or the user in scheme://user:password@
        return None
    keyed = _secret_key(text[start : match.start(1)])
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
        kind = _accept(*keyed, quoted.group(group))
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
    kind = _accept(*keyed, value)
    return (kind, pos, pos + len(value)) if kind else None


_NONE: Iterator[re.Match[str]] = iter(())


def _matches(detector: _Detector, text: str, lowered: str | None) -> Iterator[re.Match[str]]:
    """The detector's matches in ``text``, on the lower-cased copy when it is case-insensitive.

    A text without any of the detector's needles is not searched: a substring test costs a
    tenth of starting a search, and most texts hold the literal of no detector at all."""
    if detector.folded is None:
        regex, haystack = detector.regex, text
    elif lowered is not None:
        regex, haystack = detector.regex, lowered
    else:  # the needles are lower-case: the case-insensitive regex decides alone
        return detector.folded.finditer(text)
    if detector.needles and not any(needle in haystack for needle in detector.needles):
        return _NONE
    return regex.finditer(haystack)


_ALL = (*_DETECTORS, *_ASSIGN, _FLAG, *_XML)
_NEEDLES = tuple(sorted({n.lower() for d in _ALL for n in d.needles}))
_BY_NEEDLE = {n: frozenset(d for d in _ALL if n in (x.lower() for x in d.needles)) for n in _NEEDLES}
_ALWAYS = frozenset(d for d in _ALL if not d.needles)  # a detector without needles runs on every text


def _active(lowered: str | None) -> frozenset[_Detector] | None:
    """The detectors that may match: those with a needle in the lower-cased text (None: all).

    One substring test per needle (~50) costs a few microseconds; starting ~30 searches and the
    Python around them cost ~14 µs a text, and most texts hold no needle at all."""
    if lowered is None:
        return None
    found = [needle for needle in _NEEDLES if needle in lowered]
    return _ALWAYS.union(*(_BY_NEEDLE[needle] for needle in found)) if found else _ALWAYS


def _candidates(text: str) -> Iterator[_Candidate]:
    lowered: str | None = text.lower()
    if lowered is not None and len(lowered) != len(text):  # a few characters lower to two
        lowered = None
    active = _active(lowered)
    if active is not None and not active:
        return

    def run(group: Sequence[_Detector]) -> list[_Detector]:
        return list(group) if active is None else [d for d in group if d in active]

    for detector in run(_DETECTORS):
        for match in _matches(detector, text, lowered):
            start, end = match.span(detector.group)
            value = text[start:end]
            if not value or _is_placeholder(value) or _MASK_HEAD in text[match.start() : match.end()]:
                continue
            if detector.check is None or detector.check(value):
                yield detector.kind, start, end
    seen: set[int] = set()
    for detector in run(_ASSIGN):
        for match in _matches(detector, text, lowered):
            if match.start(2) in seen:
                continue  # `client_secret_key`: one separator, found from several keywords
            seen.add(match.start(2))
            if found := _assignment(text, match):
                yield found
    for match in _matches(_FLAG, text, lowered) if run((_FLAG,)) else ():
        group = next(g for g in (2, 3, 4) if match.group(g) is not None)
        keyed = _secret_key(match.group(1))
        if keyed and (kind := _accept(*keyed, text[match.start(group) : match.end(group)])):
            yield kind, match.start(group), match.end(group)
    for detector in run(_XML):
        for match in _matches(detector, text, lowered):
            keyed = _secret_key(match.group(1))
            if keyed and (kind := _accept(*keyed, match.group(2))):
                yield kind, match.start(2), match.end(2)


MEMO_CHARS = 2048  # texts up to this long are remembered (a write scans its strings 2-3 times)
# Whole strings of the shapes the service makes by the hundred in a write (record ids, content
# hashes): no detector matches in them (tests/unit/core/redaction/test_secrets.py checks on random ones),
# and a scan takes ~13 µs each, fresh every time (a new id is never remembered).
_OWN_SHAPES = re.compile(
    r"(?:sha256:)?[0-9a-f]{64}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
)


def find_secrets(text: str) -> list[Finding]:
    """Every secret in ``text``: non-overlapping, sorted by start; the longest span wins a clash."""
    if not text or _OWN_SHAPES.fullmatch(text):
        return []
    if len(text) <= MEMO_CHARS:
        return list(_remembered(text))
    return _scan(text)


@lru_cache(maxsize=4096)
def _remembered(text: str) -> tuple[Finding, ...]:
    """:func:`_scan` of a short text, remembered: the same metadata keys and values, and the
    record's own strings again in its audit event, are scanned once (the scan is pure)."""
    return tuple(_scan(text))


def _scan(text: str) -> list[Finding]:
    starts: list[int] = []
    taken: list[Finding] = []
    for kind, start, end in sorted(_candidates(text), key=lambda c: c[1] - c[2]):  # longest first, stable
        i = bisect.bisect_right(starts, start)
        if start >= end or (i and taken[i - 1].end > start) or (i < len(taken) and taken[i].start < end):
            continue
        starts.insert(i, start)
        taken.insert(i, Finding(kind, start, end))
    return taken


def redact_text(text: str) -> tuple[str, list[str]]:
    """``text`` with each secret replaced by :data:`MASK`, and the kinds found, in order."""
    findings = find_secrets(text)
    if not findings:
        return text, []
    parts: list[str] = []
    last = 0
    for finding in findings:
        parts += [text[last : finding.start], MASK.format(kind=finding.kind)]
        last = finding.end
    parts.append(text[last:])
    return "".join(parts), [f.kind for f in findings]


def contains_secret(text: str) -> bool:
    return bool(find_secrets(text))


def redact_value(value: Any, prepare: Callable[[str], str] | None = None) -> tuple[Any, list[str]]:
    """A copy of ``value`` with secrets masked in every string, dict keys included; with
    ``prepare``, each string is passed through it first (in the same walk).

    Dicts, lists, tuples and sets are rebuilt (the input is never mutated); other types are
    returned as they are. Two keys that mask (or clean) to the same text are both kept, the later
    one with a ``" (2)"`` suffix.
    """
    kinds: list[str] = []
    return _redact(value, kinds, prepare), kinds


def _redact(value: Any, kinds: list[str], prepare: Callable[[str], str] | None) -> Any:
    if isinstance(value, str):
        masked, found = redact_text(value if prepare is None else prepare(value))
        kinds += found
        return masked
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for key, item in value.items():
            new_key = _redact(key, kinds, prepare)
            if new_key in out:  # a key before or this one was rewritten to the other: keep both
                new_key = next(
                    f"{new_key} ({n})" for n in range(2, len(out) + 3) if f"{new_key} ({n})" not in out
                )
            out[new_key] = _redact(item, kinds, prepare)
        return out
    if isinstance(value, list):
        return [_redact(item, kinds, prepare) for item in value]
    if isinstance(value, tuple):
        items = [_redact(item, kinds, prepare) for item in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, set | frozenset):
        return type(value)(_redact(item, kinds, prepare) for item in value)
    return value
