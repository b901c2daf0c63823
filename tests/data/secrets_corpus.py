"""A deterministic corpus for secret redaction: planted secrets in context, and look-alikes.

Every secret value is generated from a seeded RNG in the shape of its kind (prefix, alphabet,
length); none is a real credential. Each planted text holds exactly one secret, embedded in the
kind of text an agent pastes into memory: a commit message, a log line, a ``.env`` excerpt, YAML,
Python, a curl command, a chat note. The look-alikes are texts that must come back unchanged:
hashes, UUIDs, documentation example keys, placeholders, code that handles secrets without
holding one.

Kinds added later (:data:`ADDED`: an AWS access key glued to a name, a bare AWS secret key, card
numbers, US social security numbers) are drawn from an RNG of their own, so the first corpus stays
as it was. :data:`RANDOM_LOOKALIKES` are generated, not written: hundreds of random git SHAs,
hashes, base64 of text, UUIDs, paths, identifiers and numbers, none tuned on.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import re
import string
import uuid
from collections import Counter
from dataclasses import dataclass

SEED = 20261123
ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "-_"
HEX = "0123456789abcdef"
UPPER_DIGITS = string.ascii_uppercase + string.digits
PASSWORD_CHARS = ALNUM + "-_.~+=!^*"


@dataclass(frozen=True)
class Planted:
    text: str
    secret: str  # the exact substring that must not survive redaction
    kind: str


def _pick(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _token(rng: random.Random, alphabet: str, n: int) -> str:
    """Random, with at least one digit and one letter (as real tokens practically always have)."""
    while True:
        value = _pick(rng, alphabet, n)
        if any(c.isdigit() for c in value) and any(c.isalpha() for c in value):
            return value


def _password(rng: random.Random) -> str:
    return rng.choice(string.ascii_letters) + _token(rng, PASSWORD_CHARS, rng.randint(11, 19))


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _jwt(rng: random.Random) -> str:
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    claims = {
        "sub": str(rng.randint(10**5, 10**6)),
        "name": rng.choice(["ana", "bo", "chen"]),
        "iat": 1700000000,
    }
    return f"{header}.{_b64url(json.dumps(claims).encode())}.{_pick(rng, URLSAFE, 43)}"


def _pem(rng: random.Random, label: str) -> str:
    body = base64.b64encode(rng.randbytes(rng.choice([120, 240, 400]))).decode()
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    if label == "PGP PRIVATE KEY BLOCK":
        lines = ["Version: GnuPG v2", "", *lines, "=" + _pick(rng, ALNUM, 4)]
    return "\n".join([f"-----BEGIN {label}-----", *lines, f"-----END {label}-----"])


# Each kind: a value generator, and the contexts it is pasted in ({s} is the secret).
GENERATORS = {
    "aws_access_key": lambda r: r.choice(["AKIA", "ASIA"]) + _pick(r, string.ascii_uppercase + "234567", 16),
    "aws_secret_key": lambda r: _token(r, ALNUM + "/+", 40),
    "github_token": lambda r: (
        r.choice(["ghp_", "gho_", "ghs_", "ghu_"]) + _token(r, ALNUM, 36)
        if r.random() < 0.7
        else f"github_pat_{_token(r, ALNUM, 22)}_{_token(r, ALNUM, 59)}"
    ),
    "gitlab_token": lambda r: "glpat-" + _token(r, URLSAFE, 20),
    "slack_token": lambda r: (
        f"{r.choice(['xoxb', 'xoxp'])}-{_pick(r, string.digits, 12)}-{_pick(r, string.digits, 13)}"
        f"-{_token(r, ALNUM, 24)}"
    ),
    "slack_webhook": lambda r: (
        f"T{_token(r, UPPER_DIGITS, 8)}/B{_token(r, UPPER_DIGITS, 10)}/{_token(r, ALNUM, 24)}"
    ),
    "stripe_key": lambda r: r.choice(["sk_live_", "rk_live_", "sk_test_"]) + _token(r, ALNUM, 24),
    "google_api_key": lambda r: "AIza" + _token(r, URLSAFE, 35),
    "openai_key": lambda r: r.choice(["sk-", "sk-proj-"]) + _token(r, ALNUM, 48),
    "anthropic_key": lambda r: "sk-ant-api03-" + _token(r, URLSAFE, 93) + "AA",
    "npm_token": lambda r: "npm_" + _token(r, ALNUM, 36),
    "sendgrid_key": lambda r: f"SG.{_token(r, URLSAFE, 22)}.{_token(r, URLSAFE, 43)}",
    "twilio_key": lambda r: "SK" + _token(r, HEX, 32),
    "huggingface_token": lambda r: (
        "hf_" + _pick(r, string.ascii_uppercase, 2) + _pick(r, string.ascii_letters, 32)
    ),
    "jwt": _jwt,
    "private_key": lambda r: _pem(
        r,
        r.choice(
            [
                "RSA PRIVATE KEY",
                "EC PRIVATE KEY",
                "OPENSSH PRIVATE KEY",
                "PRIVATE KEY",
                "PGP PRIVATE KEY BLOCK",
            ]
        ),
    ),
    "url_password": _password,
    "env_secret": _password,
    "bearer_token": lambda r: _token(r, ALNUM + "-._~", r.randint(32, 48)),
    "basic_auth": lambda r: base64.b64encode(
        f"svc-{_pick(r, string.ascii_lowercase, 5)}:{_password(r)}".encode()
    ).decode(),
}

CONTEXTS: dict[str, list[str]] = {
    "aws_access_key": [
        "aws configure list shows access_key ****************; profile ci uses {s} since Tuesday",
        "[default]\naws_access_key_id = {s}\nregion = eu-west-1",
        'boto3.client("s3", aws_access_key_id="{s}", region_name="us-east-1")',
        "Rotated the deploy user's key; old id was {s}, deactivated in IAM.",
        '{{"AccessKeyId": "{s}", "Expiration": "2026-11-23T18:00:00Z"}}',
    ],
    "aws_secret_key": [
        "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\nAWS_SECRET_ACCESS_KEY={s}\nAWS_REGION=eu-central-1",
        "[prod]\naws_secret_access_key = {s}\noutput = json",
        '{{"SecretAccessKey": "{s}", "SessionToken": null}}',
        "export AWS_SECRET_ACCESS_KEY='{s}'",
    ],
    "github_token": [
        "CI failed: remote: Invalid username or token. Using {s} from the runner env",
        "git clone https://x-access-token:{s}@github.com/acme/infra.git",
        "GITHUB_TOKEN={s}\nGITHUB_REPOSITORY=acme/api",
        "note to self: the release bot token is {s} (scopes: repo, workflow)",
        'headers = {{"Authorization": "token {s}", "Accept": "application/vnd.github+json"}}',
        "Authorization: token {s}",
    ],
    "gitlab_token": [
        "curl --header 'PRIVATE-TOKEN: {s}' https://gitlab.acme.dev/api/v4/projects",
        "GITLAB_TOKEN={s} make release",
        "Renovate config uses {s} for the self-hosted GitLab; expires in 30 days.",
    ],
    "slack_token": [
        "SLACK_BOT_TOKEN={s}\nSLACK_CHANNEL=#deploys",
        "slack_sdk.WebClient(token='{s}').chat_postMessage(channel='#ops', text='done')",
        "2026-11-20 10:02:11 WARN notifier: posting with {s} failed: channel_not_found",
        "The alerts bot token ({s}) lives in the old Jenkins credentials store.",
    ],
    "slack_webhook": [
        'curl -X POST -d \'{{"text":"deploy ok"}}\' https://hooks.slack.com/services/{s}',
        "alerting:\n  slack_url: https://hooks.slack.com/services/{s}\n  channel: '#incidents'",
        "Webhook for #builds: https://hooks.slack.com/services/{s} (owned by platform team)",
    ],
    "stripe_key": [
        "STRIPE_SECRET_KEY={s}\nSTRIPE_CURRENCY=eur",
        'stripe.api_key = "{s}"\ncharge = stripe.Charge.create(amount=1200, currency="eur")',
        "Payments returned 401 after the rotation; billing still sends {s} in the worker.",
        "curl https://api.stripe.com/v1/charges -u {s}: -d amount=2000",
    ],
    "google_api_key": [
        "GOOGLE_MAPS_API_KEY={s}",
        '<script src="https://maps.googleapis.com/maps/api/js?key={s}&callback=initMap"></script>',
        "geocoder:\n  provider: google\n  api_key: {s}\n  timeout_s: 5",
        "The translate quota error came from project web-frontend using {s}.",
    ],
    "openai_key": [
        "OPENAI_API_KEY={s}",
        'client = OpenAI(api_key="{s}")\nresp = client.responses.create(model="gpt-4.1", input="hi")',
        "evals run 42 used {s} and hit the rate limit at 14:03",
        "llm:\n  provider: openai\n  key: {s}",
    ],
    "anthropic_key": [
        "ANTHROPIC_API_KEY={s}\nMODEL=claude-sonnet",
        'anthropic.Anthropic(api_key="{s}")',
        "The summariser job still reads {s} from the old secrets file; move it to the vault.",
    ],
    "npm_token": [
        "//npm.internal.acme.dev/:_authToken={s}",
        "NPM_TOKEN={s} npm publish --access public",
        "publish step failed (E401); the automation token {s} was revoked on Friday",
    ],
    "sendgrid_key": [
        "SENDGRID_API_KEY={s}",
        'sg = SendGridAPIClient("{s}")\nsg.send(message)',
        "mailer:\n  backend: sendgrid\n  api_key: '{s}'",
    ],
    "twilio_key": [
        "TWILIO_API_KEY={s}\nTWILIO_ACCOUNT_SID=AC_test_account",
        'client = Client("{s}", api_secret, account_sid)',
        "SMS provider switched to the new API key {s} after the audit.",
    ],
    "huggingface_token": [
        "HF_TOKEN={s}",
        "huggingface-cli login --token {s}",
        'snapshot_download("acme/reranker", token="{s}")',
    ],
    "jwt": [
        "curl -H 'Authorization: Bearer {s}' https://api.acme.dev/v2/me",
        "2026-11-21T09:15:02Z DEBUG auth: decoded session cookie session={s} for user 1042",
        "Repro: paste {s} into jwt.io, the exp claim is missing.",
        "ACCESS_TOKEN={s}",
    ],
    "private_key": [
        "Here is the deploy key for the staging box:\n{s}\nRemove it from the chat after use.",
        "ssh_key: |\n{s}",
        "commit 3f2a: add certs (oops)\n\n+++ b/certs/server.key\n{s}",
    ],
    "url_password": [
        "DATABASE_URL=postgres://app:{s}@db.internal:5432/orders",
        "sqlalchemy.create_engine('mysql+pymysql://reporter:{s}@10.0.4.12/analytics')",
        "celery broker: amqp://worker:{s}@rabbit:5672/vhost",
        "redis_url: redis://:{s}@cache.internal:6379/0",
        "Connection refused to mongodb+srv://ops:{s}@cluster0.abcde.mongodb.net/admin (timeout 30s)",
        "pip install --index-url https://builder:{s}@artifacts.acme.dev/simple internal-lib",
    ],
    "env_secret": [
        "DB_HOST=db\nDB_USER=app\nDB_PASSWORD={s}\nDB_NAME=orders",
        "export API_TOKEN={s}",
        'database:\n  host: db.internal\n  user: app\n  password: "{s}"\n  pool: 10',
        '{{"service": "billing", "api_key": "{s}", "timeout": 30}}',
        'SECRET_KEY = "{s}"\nDEBUG = False',
        "[client]\nuser = backup\npassword = {s}\nhost = 127.0.0.1",
        "docker run -e POSTGRES_PASSWORD={s} -p 5432:5432 postgres:16",
        "spring.datasource.password={s}\nspring.datasource.username=app",
        "<settings><server><id>nexus</id><username>deploy</username><password>{s}</password></server></settings>",
        "mytool login --user deploy --password '{s}' --region eu",
        "the staging admin password: {s} (rotate after the demo)",
        "client_secret: {s}\nclient_id: web-portal",
        "GET /callback?state=xyz&access_token={s}&expires_in=3600 HTTP/1.1",
        'oauth = OAuth2Session(client_id="portal", client_secret="{s}")',
        '2026-11-22 12:00:01 INFO request body={{\\"user\\": \\"bob\\", \\"password\\": \\"{s}\\"}}',
        'const config = {{ apiKey: "{s}", region: "eu" }};',
    ],
    "bearer_token": [
        "curl -H 'Authorization: Bearer {s}' https://api.acme.dev/v1/orders",
        "> GET /v1/orders HTTP/1.1\n> Host: api.acme.dev\n> Authorization: Bearer {s}\n> Accept: */*",
        'requests.get(url, headers={{"Authorization": "Bearer {s}"}})',
        "The proxy logged 'authorization: bearer {s}' for every request; fixed in 2.3.1.",
    ],
    "basic_auth": [
        "Authorization: Basic {s}",
        "curl -H 'Authorization: Basic {s}' https://jenkins.acme.dev/job/deploy/build",
    ],
}


def _luhn_complete(digits: str) -> str:
    """``digits`` with the check digit that makes it pass the Luhn test."""
    total = 0
    for i, c in enumerate(reversed(digits)):
        d = int(c) * (1 if i % 2 else 2)
        total += d - 9 if d > 9 else d
    return digits + str(-total % 10)


def _card(rng: random.Random) -> str:
    issuer = rng.choice(["4", "51", "55", "2221", "37", "6011", "65", "35"])
    length = 15 if issuer == "37" else 16
    number = _luhn_complete(issuer + _pick(rng, string.digits, length - len(issuer) - 1))
    if length == 15:
        return rng.choice([number, f"{number[:4]} {number[4:10]} {number[10:]}"])
    sep = rng.choice(["", " ", "-"])
    return sep.join(number[i : i + 4] for i in range(0, 16, 4))


def _ssn(rng: random.Random) -> str:
    area = rng.choice([n for n in range(1, 900) if n != 666])
    return f"{area:03}-{rng.randint(1, 99):02}-{rng.randint(1, 9999):04}"


def _aws_secret(rng: random.Random) -> str:
    while True:  # a real key has letters of both cases and a digit practically always
        value = _token(rng, ALNUM + "/+", 40)
        if any(c.isupper() for c in value) and any(c.islower() for c in value):
            return value


ADDED_GENERATORS = {
    "aws_access_key": GENERATORS["aws_access_key"],
    "aws_secret_key": _aws_secret,
    "card_number": _card,
    "us_ssn": _ssn,
}
ADDED_CONTEXTS: dict[str, list[str]] = {  # {s}: the secret, with no key name that says what it is
    "aws_access_key": [
        "open /home/ci/.aws/credentials-{s}.json: no such file or directory",
        "backup written to s3://acme-audit/keys/key_{s}_2026-11.csv",
        "ERROR loader: cannot parse ./secrets/deploy-{s}.env (line 3)",
        "export_{s}.txt is the old IAM dump, delete it",
    ],
    "aws_secret_key": [
        "Rotated the CI user today, the new one is {s}",
        "pasted from the console:\n{s}\n(the id is in 1Password)",
        "{s}",
        'creds = ("AKIA" + suffix, "{s}")',
        "the second value in the CSV ({s}) goes in the vault, not in git",
    ],
    "card_number": [
        "Test purchase failed for card {s}, expiry 04/29, CVC 123",
        "customer called: charge twice on {s}; refunded",
        '{{"pan": "{s}", "exp": "0429"}}',
        "card number: {s}",
        "Refund ticket 8812: card {s} was charged 49.00 EUR twice.",
    ],
    "us_ssn": [
        "Employee record: Dana Reyes, SSN {s}, start date 2024-02-01",
        "payroll import rejected row 17 ({s}): duplicate",
        "ssn={s}&dob=1985-03-14",
        "The W-2 form lists {s} as the employee's number.",
    ],
}


def _build_added() -> list[Planted]:
    rng = random.Random(SEED + 2)
    planted = []
    for kind, contexts in ADDED_CONTEXTS.items():
        for context in contexts:
            secret = ADDED_GENERATORS[kind](rng)
            planted.append(Planted(context.format(s=secret), secret, kind))
    return planted


def _curl_user(rng: random.Random) -> Planted:
    secret = _password(rng)
    return Planted(f"curl -u admin:{secret} https://artifacts.acme.dev/v2/_catalog", secret, "basic_auth")


def _build_secrets() -> list[Planted]:
    rng = random.Random(SEED)
    planted = []
    for kind, contexts in CONTEXTS.items():
        for context in contexts:
            secret = GENERATORS[kind](rng)
            planted.append(Planted(context.format(s=secret), secret, kind))
    planted.append(_curl_user(rng))
    return planted + _build_added()


def _build_lookalikes() -> list[str]:
    rng = random.Random(SEED + 1)
    sha1 = hashlib.sha1(rng.randbytes(16)).hexdigest()
    sha256 = hashlib.sha256(rng.randbytes(16)).hexdigest()
    md5 = hashlib.md5(rng.randbytes(16)).hexdigest()
    ident = uuid.UUID(int=rng.getrandbits(128), version=4)
    blob = base64.b64encode(rng.randbytes(48)).decode()
    image = base64.b64encode(rng.randbytes(180)).decode()
    ssh_public = "AAAAB3NzaC1yc2E" + base64.b64encode(rng.randbytes(200)).decode()
    public_pem = "\n".join(["-----BEGIN PUBLIC KEY-----", blob, blob[::-1], "-----END PUBLIC KEY-----"])
    return [
        # identifiers and hashes
        f"2026-11-22 10:01:02 INFO request_id={ident} status=200 duration_ms=12",
        f"commit {sha1}\nAuthor: Dana <dana@acme.dev>\n\n    fix token refresh race",
        f"git checkout {sha1[:12]} && git cherry-pick {sha1}",
        f"sha256: {sha256}",
        f"{md5}  dist/app.tar.gz",
        f'"integrity": "sha512-{blob}"',
        f"image: ghcr.io/acme/api@sha256:{sha256}",
        f"trace_id={uuid.UUID(int=rng.getrandbits(128))} span_id={md5[:16]}",
        f'etag: W/"{md5}"',
        # base64 data in code, without a secret-ish key name
        f'PAYLOAD = "{blob}"\nassert decode(PAYLOAD)',
        f'<img src="data:image/png;base64,{image}">',
        f"ssh-rsa {ssh_public} dana@laptop",
        public_pem,
        "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ\n-----END CERTIFICATE-----",
        # documentation example keys
        "aws configure set aws_access_key_id AKIAIOSFODNN7EXAMPLE",
        "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "api_key: sk-EXAMPLEEXAMPLEEXAMPLEEXAMPLE1234567890",
        # placeholders
        "password=<your-password>",
        "DB_PASSWORD=${DB_PASSWORD}",
        "export TOKEN=$TOKEN",
        'password: "***"',
        "api_key: xxx",
        "token: '{{ vault_token }}'",
        'password = "%s" % get_secret()',
        "password=",
        "password: None",
        '"token": null',
        'password = ""',
        "API_KEY=your_api_key_here",
        "NPM_TOKEN: ${{ secrets.NPM_TOKEN }}",
        "password: {{ .Values.db.password }}",
        "password: !vault |",
        '"password": "********"',
        "Authorization: Bearer <token>",
        'curl -H "Authorization: Bearer ${API_TOKEN}" https://api.acme.dev/v1/me',
        "postgres://app:${PGPASSWORD}@db:5432/orders",
        # code that handles secrets without holding one
        "password = get_password()",
        'token = request.headers["x-auth-token"]',
        "def verify_token(token: str) -> bool:\n    return hmac.compare_digest(token, expected)",
        "password_hash = bcrypt.hashpw(password.encode(), bcrypt.gensalt())",
        "TOKEN_EXPIRY_SECONDS = 3600",
        "self.password = password",
        "conn = connect(host=host, user=user, password=password)",
        "api_key: str | None = None",
        "password: SecretStr = Field(..., min_length=12)",
        'api_key = os.environ["API_KEY"]',
        'api_key = os.getenv("OPENAI_API_KEY")',
        'password = input("Password: ")',
        "if token is None or token.expired():",
        "assert token == expected_token",
        "tokens = tokenizer.encode(text)\nmax_tokens: 4096",
        "key = cache_key(user_id, scope)",
        "primary_key: id",
        "CREATE TABLE users (id INT PRIMARY KEY, password_hash TEXT NOT NULL);",
        'api_key_header = APIKeyHeader(name="X-API-Key")',
        "password = var.db_password",
        "client_secret: ENV['CLIENT_SECRET']",
        "echo $PASSWORD | docker login --username ci --password-stdin ghcr.io",
        "mysql -u root -p orders",
        "PWD=/home/dana/projects/api",
        "class TokenBucket:\n    pass",
        "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n"
        "        name: db-credentials\n        key: password",
        # config that is not secret
        "auth_method: oauth2\nAUTH_ENABLED=true\nauth: true",
        "author: Jane Doe\ntoken_type: bearer",
        "secret_name: prod/billing/db",
        "password_min_length: 12",
        'TOKEN_HEADER = "X-Auth-Token"',
        "token: refresh_token",
        "credentials_file: /etc/acme/service-account.json",
        # URLs without a password, prose that names a token format
        "https://dana@git.acme.dev/platform/api.git",
        "git@github.com:acme/api.git",
        "redis://localhost:6379/0 and mongodb://mongo:27017/app",
        "http://[::1]:8080/health",
        "Personal access tokens start with ghp_ and are 40 characters long.",
        "Slack bot tokens look like xoxb-<team>-<bot>-<secret>.",
        "Use the bearer token from the login response; basic auth is disabled.",
        "We use scikit-learn and the sk-learn alias in notebooks.",
        "A JWT is three base64url parts: header.payload.signature (the header starts with eyJ).",
        "The password must be at least 12 characters; the secret: rotate it every 90 days.",
        # numbers that are not cards or social security numbers, names that hold no key
        "build 1736951112345 finished; snowflake id 1181934563254296576",
        "ISBN 978-0-306-40615-7, order 2026-11-000417, ZIP 94105-1234",
        "call 555-0100, room 101-12-3 and part 123-4567-890",
        "tests/unit/core/redaction/test_holdout.py::test_holdout_secrets_are_masked",
        "see https://github.com/acme/api/commit/3f2a9c1e8b7d6f5a4e3c2b1a0f9e8d7c6b5a4e3c",
        "AKIA is the prefix of long-term AWS access key ids; ASIA marks temporary ones.",
        "/Users/DanaReyes/Projects/Api2/src/main/Java1/App.java",
        "getUserAccountBalanceForCustomerId2Async is slow",
        "server at 10.0.0.5:8080, DNS 192.168.1.1, and fe80::1",
    ]


_WORDS = [
    *("alpha", "beta", "cache", "client", "config", "data", "deploy", "error", "fetch", "graph"),
    *("index", "job", "key", "ledger", "memory", "node", "order", "parse", "queue", "retry"),
    *("scope", "search", "server", "store", "token", "user", "value", "worker"),
]


def _build_random_lookalikes(n: int = 80) -> list[str]:
    """``n`` of each shape a secret detector could mistake for a key, drawn at random."""
    rng = random.Random(SEED + 3)
    out: list[str] = []

    def words(k: int) -> list[str]:
        return [rng.choice(_WORDS) for _ in range(k)]

    for _ in range(n):
        raw = rng.randbytes(32)
        out += [
            f"commit {hashlib.sha1(raw).hexdigest()}",
            f"sha256: {hashlib.sha256(raw).hexdigest()}",
            f"digest {base64.b64encode(hashlib.sha1(raw).digest()).decode()}",
            f"digest {base64.b64encode(hashlib.sha256(raw).digest()).decode()}",
            f"digest {base64.b64encode(hashlib.sha224(raw).digest()).decode()}",
            f"payload {base64.b64encode(' '.join(words(8)).encode()[:30]).decode()}",
            "cursor="
            + base64.urlsafe_b64encode(json.dumps({"after": rng.randint(1, 10**6)}).encode()).decode(),
            f"request {uuid.UUID(int=rng.getrandbits(128), version=4)} done",
            "/"
            + "/".join(w.capitalize() if rng.random() < 0.5 else w for w in words(5))
            + str(rng.randint(1, 99)),
            "".join(w.capitalize() for w in words(6)) + str(rng.randint(1, 99)),
            f"at {rng.randint(16 * 10**11, 18 * 10**11)} ms, id {rng.randint(10**17, 2 * 10**18)}",
            f"v{rng.randint(0, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 99)} on "
            f"{rng.randint(2000, 2030)}-{rng.randint(1, 12):02}-{rng.randint(1, 28):02}",
        ]
    return out


SECRETS: list[Planted] = _build_secrets()
RANDOM_LOOKALIKES: list[str] = _build_random_lookalikes()
LOOKALIKES: list[str] = _build_lookalikes()
_WORD = re.compile(r"[A-Za-z0-9]{3,}")


def keeps_context(planted: Planted, redacted: str) -> bool:
    """True when every word of the text around the secret survives redaction (nothing else masked)."""
    around = Counter(_WORD.findall(planted.text.replace(planted.secret, " ")))
    kept = Counter(_WORD.findall(redacted))
    return all(kept[word] >= count for word, count in around.items())
