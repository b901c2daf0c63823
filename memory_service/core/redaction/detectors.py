"""The secret detectors: one compiled pattern per credential shape, each naming its needles (the
literals one of which every match holds) so that a text is searched only by the detectors whose
needle it holds; secrets.py runs them, assignments.py judges the values of key/value matches.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from dataclasses import dataclass

from memory_service.core.redaction.shapes import B64 as _B64
from memory_service.core.redaction.shapes import bare_aws_secret, card_number, us_ssn

MASK = "[REDACTED:{kind}]"
MASK_HEAD = "[REDACTED:"

# A secret found, before clashes are settled: (kind, start, end).
Candidate = tuple[str, int, int]


def mixed(value: str) -> bool:
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
class Detector:
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
) -> Detector:
    folded = re.compile(pattern, re.I) if lower else None
    return Detector(kind, re.compile(pattern), group, check, folded, needles)


def _lead(prefix: str) -> str:
    """``prefix`` (fixed width), not inside a longer word. The check comes after the literal so the
    engine still finds candidates by fast substring search, and a start inside a long run of token
    characters (``eyJeyJeyJ...``) fails at once instead of rescanning the run: no quadratic input."""
    return f"{prefix}(?<![\\w-]{prefix})"


_END = r"(?![\w-])"
_TOKEN_VALUE = r"[ \t]+([a-z0-9._~+/-]{12,1000}=*)(?![\w.~+/=-])"
_PEM_LABEL = r"[ A-Z0-9]{0,30}PRIVATE KEY(?: BLOCK)?-----"
_GITLAB = "pat|dt|rt|ptt|cbt|oas|ft|imt|soat"  # token kinds: glpat-..., gldt-...
DETECTORS = (  # one secret in two detectors: the longest span wins, then the earlier detector
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
        mixed,
        needles=("hooks.slack.com/",),
    ),
    _detector(
        "slack_token",
        _lead("xox[abposre]") + r"(?:\.xox[a-z])?-(?:[0-9A-Za-z]{1,40}-){1,6}[0-9A-Za-z]{8,200}+" + _END,
        0,
        mixed,
        needles=("xox",),
    ),
    _detector("stripe_key", _lead("[sr]k_") + r"(?:live|test)_[0-9A-Za-z]{16,250}\b", needles=("sk_", "rk_")),
    _detector("stripe_key", _lead("pk_live_") + r"[0-9A-Za-z]{16,250}\b", needles=("pk_live_",)),
    _detector("google_api_key", _lead("AIza") + r"[0-9A-Za-z_-]{35}" + _END, needles=("AIza",)),
    _detector("anthropic_key", _lead("sk-ant-") + r"[A-Za-z0-9_-]{32,300}+" + _END, needles=("sk-ant-",)),
    _detector(
        "openai_key", _lead("sk-") + r"(?!ant-)[A-Za-z0-9_-]{32,300}+" + _END, 0, mixed, needles=("sk-",)
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
    _detector("bearer_token", _lead("bearer") + _TOKEN_VALUE, 1, mixed, lower=True, needles=("bearer",)),
    _detector(
        "bearer_token",
        _lead("authorization") + r"[\"']?[ \t]*[:=][ \t]*[\"']?(?:token|bot|apikey|sso-key)" + _TOKEN_VALUE,
        1,
        mixed,
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

# Assignments, flags and markup: the key name says secret (assignments.py judges the value).
KEYWORDS = ("pass", "pw", "secret", "token", "key", "auth", "cred")
_ASSIGN_TAIL = r"[\w.-]{0,60}+(\\?[\"']?\]?)[ \t]*(:=|=>|=(?!=)|:(?!:))[ \t]*"
ASSIGN = tuple(_detector("env_secret", kw + _ASSIGN_TAIL, lower=True, needles=(kw,)) for kw in KEYWORDS)
FLAG = _detector(  # --password VALUE (--password=VALUE is an assignment)
    "env_secret",
    _lead("--") + r"([\w-]{0,40}?(?:pass|pw|secret|token|key|auth)[\w-]{0,40}+)[ \t]+"
    r"(?:\"([^\"\n]{1,500})\"|'([^'\n]{1,500})'|([^\s\"'-][^\s\"']{0,500}))",
    lower=True,
    needles=("--",),
)
XML = (  # <password>v</password>, <add key="ApiKey" value="v"/>, .netrc `machine h login u password v`
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
