"""A holdout set written apart from the corpus the detectors were tuned on (tests/data/
secrets_corpus.py): other contexts and shapes, to check that the rules generalise."""

# ruff: noqa: E501  (real-looking one-line texts)
from __future__ import annotations

import pytest

from memory_service.core.redaction.secrets import redact_text

HOLDOUT_SECRETS = [
    (
        "Set OPENAI_API_KEY=sk-proj-4fJk29dLq0PzXcVb8NmQw3ErTy6UiOp1AsDf7GhJk9Lz in the runner",
        "sk-proj-4fJk29dLq0PzXcVb8NmQw3ErTy6UiOp1AsDf7GhJk9Lz",
    ),
    (
        "the webhook is https://hooks.slack.com/services/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",
        "q8W9e0R1t2Y3u4I5o6P7a8S9",
    ),
    ("mysql://root:Tr0ub4dor&3@10.0.0.5:3306/shop", "Tr0ub4dor&3"),
    ("redis_password: 'Zq8!mK2#pL9vX4'", "Zq8!mK2#pL9vX4"),
    (
        "headers = {'Authorization': 'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI0MiJ9.c2lnbmF0dXJlX2hlcmVfMTIzNDU2'}",
        "c2lnbmF0dXJlX2hlcmVfMTIzNDU2",
    ),
    (
        "git clone https://oauth2:glpat-Ab3dE6gH9jK2mN5pQ8sT@gitlab.example.com/x/y.git",
        "glpat-Ab3dE6gH9jK2mN5pQ8sT",
    ),
    (
        "export GITHUB_TOKEN=github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV012345",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV012345",
    ),
    (
        "client = Stripe('sk_live_51HbQ2kLm3Np4Qr5St6Uv7Wx8Yz9Ab0Cd1Ef2Gh3')",
        "sk_live_51HbQ2kLm3Np4Qr5St6Uv7Wx8Yz9Ab0Cd1Ef2Gh3",
    ),
    (
        "AWS creds: AKIAZ7Q2W4E6R8T0Y2U4 / wJ8k2Lm4Np6Qr8St0Uv2Wx4Yz6Ab8Cd0Ef2Gh4Ij (aws_secret_access_key)",
        "AKIAZ7Q2W4E6R8T0Y2U4",
    ),
    (
        "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5ZqPK3bHfR6WmoAoGCCqGSM49\n-----END EC PRIVATE KEY-----",
        "MHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5ZqPK3bHfR6WmoAoGCCqGSM49",
    ),
    ("db:\n  user: app\n  password: s3cr3t-P4ss-2026\n", "s3cr3t-P4ss-2026"),
    ('{"apiKey": "AIzaSyD3x4mPl3K3yF0rT3st1ngPurp0s3sOnly12"}', "AIzaSyD3x4mPl3K3yF0rT3st1ngPurp0s3sOnly12"),
    (
        "npm config set //registry/:_authToken npm_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
        "npm_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    ),
    (
        "SENDGRID_API_KEY=SG.abcdefghijklmnopqrstuv.ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopq",
        "SG.abcdefghijklmnopqrstuv.ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopq",
    ),
    (
        "token: xoxp-123456789012-123456789012-123456789012-abcdef0123456789abcdef0123456789",
        "xoxp-123456789012-123456789012-123456789012-abcdef0123456789abcdef0123456789",
    ),
    ("psql 'host=db user=app password=Vx9#qLr2!t sslmode=require'", "Vx9#qLr2!t"),
    (
        "ANTHROPIC_API_KEY=sk-ant-api03-Zx8Yw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf9Ed8Cb7Aa6Zz5Yy4Xx3Ww2Vv1Uu0TtSsRr-AbCdEf",
        "sk-ant-api03-Zx8Yw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf9Ed8Cb7Aa6Zz5Yy4Xx3Ww2Vv1Uu0TtSsRr-AbCdEf",
    ),
    (
        "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 is the HF token we used",
        "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    ),
    (
        "curl -H 'X-Api-Key: 9f8e7d6c5b4a39281706f5e4d3c2b1a0' https://api.example.com",
        "9f8e7d6c5b4a39281706f5e4d3c2b1a0",
    ),
    (
        "SECRET_KEY = 'django-insecure-q8#w!e2r$t5y^u7i*o9p(a1s)d3f'",
        "django-insecure-q8#w!e2r$t5y^u7i*o9p(a1s)d3f",
    ),
]
HOLDOUT_SECRETS += [  # issue #30's kinds, written after the rules and not tuned on
    ("rm ~/Downloads/accessKeys-AKIAQ3EGVP4LX7M2KD9W.csv after import", "AKIAQ3EGVP4LX7M2KD9W"),
    ("aws sts said: ASIAY34FZKBOKMUTVV7A_session expired", "ASIAY34FZKBOKMUTVV7A"),
    (
        "second column: 9drTJvcXLB89EslSbB8nwkZrPkxIr0aD1v4k8Yc2 (do not commit)",
        "9drTJvcXLB89EslSbB8nwkZrPkxIr0aD1v4k8Yc2",
    ),
    ("'x7Fq+Lm2/Zp9Kd4Rt8Ww1Yb3Nc6Vh0Jg5Ts2Ae7Q'", "x7Fq+Lm2/Zp9Kd4Rt8Ww1Yb3Nc6Vh0Jg5Ts2Ae7Q"),
    ("Customer Visa 4539 1488 0343 6467 exp 12/27", "4539 1488 0343 6467"),
    ("MC 5425233430109903 was declined", "5425233430109903"),
    ("Amex 371449635398431 on file", "371449635398431"),
    ("ssn:123-45-6789", "123-45-6789"),
    ("applicant 536-22-8726 approved", "536-22-8726"),
]
HOLDOUT_LOOKALIKES = [
    "commit 3f2a9c1e8b7d6f5a4e3c2b1a0f9e8d7c6b5a4e3c fixed the retry loop",
    "request id 550e8400-e29b-41d4-a716-446655440000 timed out",
    "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "password = os.environ['DB_PASSWORD']",
    "def rotate_token(token: str) -> str: ...",
    "Use AKIAIOSFODNN7EXAMPLE as in the AWS docs",
    "token_ttl_seconds = 3600",
    "Set password to <your password> in .env",
    "data = base64.b64encode(b'hello world test data')  # aGVsbG8gd29ybGQgdGVzdCBkYXRh",
    "https://user@example.com/repo.git",
    "the api_key parameter is optional",
    "md5 of the file is 9e107d9d372bb6826bd81d3542a419d6",
    "PASSWORD_MIN_LENGTH = 12",
    "Authorization header is checked by verify_bearer()",
    "jwt.decode(token, key, algorithms=['HS256'])",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHn9u0QpL3V5xV2b6sQj8m public key for deploy",
    "The secret to fast builds is caching.",
    "password: ${DB_PASSWORD}",
    "docker run -e POSTGRES_PASSWORD=$PGPASS postgres",
    "version 2.31.0 build 20261123 arm64",
    "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904",
    "Merge pull request #4521 from acme/feature/AddUserAccountsPage2",
    "base64: SGVsbG8sIHRoaXMgaXMgYSB0ZXN0IHN0cmluZyE=",
    "phone 555-123-4567 and tracking 1Z999AA10123456784",
    "node_modules/@babel/plugin-transform-runtime/lib/index.js",
    "created 1701388800000 updated 1701475200000",
    "IBAN DE89 3704 0044 0532 0130 00",
    "/var/lib/docker/overlay2/l/ABCDEFGHIJKLMNOPQRSTUVWXYZ",
]


@pytest.mark.parametrize(("text", "secret"), HOLDOUT_SECRETS)
def test_holdout_secrets_are_masked(text: str, secret: str) -> None:
    assert secret not in redact_text(text)[0]


@pytest.mark.parametrize("text", HOLDOUT_LOOKALIKES)
def test_holdout_lookalikes_are_left_alone(text: str) -> None:
    assert redact_text(text) == (text, [])
