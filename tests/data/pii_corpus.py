"""A deterministic corpus for PII-safe previews: planted personal data in context, and look-alikes.

Each planted text holds one piece of personal data (a phone number, an IP address, a date of
birth, a street address, an e-mail address, a card number, a US social security number) that a
preview must not show. Values are drawn from a seeded RNG in the shapes people write them; the
contexts are the notes an agent keeps. The look-alikes are texts a preview must show unchanged:
versions, dates that are not birthdays, times, ports, durations, ids, hashes, numbered steps.
"""

from __future__ import annotations

import hashlib
import random
import uuid

from tests.data.secrets_corpus import Planted, _card, _ssn

SEED = 20261202
_STREETS = ["Baker", "Market", "Pennsylvania", "Elm", "Mission", "Harbour View", "Old Mill"]
_TYPES = ["Street", "St", "Avenue", "Ave", "Road", "Rd", "Lane", "Blvd", "Drive", "Way"]
_MONTHS = ["January", "March", "May", "July", "September", "November", "Feb", "Oct"]


def _phone(rng: random.Random) -> str:
    area, exchange, line = rng.randint(201, 989), rng.randint(200, 999), rng.randint(0, 9999)
    return rng.choice(
        [
            f"+1 ({area}) {exchange}-{line:04}",
            f"({area}) {exchange}-{line:04}",
            f"{area}-{exchange}-{line:04}",
            f"{area}.{exchange}.{line:04}",
            f"+44 20 {rng.randint(7000, 8999)} {line:04}",
            f"+49 30 {rng.randint(100000, 9999999)}",
            f"+33 6 {rng.randint(10, 99)} {rng.randint(10, 99)} {rng.randint(10, 99)} {rng.randint(10, 99)}",
            f"+1{area}{exchange}{line:04}",
        ]
    )


def _ip(rng: random.Random) -> str:
    if rng.random() < 0.7:
        return ".".join(str(rng.randint(1, 254)) for _ in range(4))
    groups = [f"{rng.randint(0, 0xFFFF):x}" for _ in range(4)]
    return rng.choice([f"2001:db8:{groups[0]}::{groups[1]}", f"fe80::{':'.join(groups)}"])


def _birth_date(rng: random.Random) -> str:
    y, m, d = rng.randint(1940, 2008), rng.randint(1, 12), rng.randint(1, 28)
    return rng.choice(
        [f"{y}-{m:02}-{d:02}", f"{m:02}/{d:02}/{y}", f"{d}.{m}.{y}", f"{d} {rng.choice(_MONTHS)} {y}"]
    )


def _address(rng: random.Random) -> str:
    number = rng.choice([str(rng.randint(1, 9999)), f"{rng.randint(1, 300)}B"])
    return f"{number} {rng.choice(_STREETS)} {rng.choice(_TYPES)}"


def _email(rng: random.Random) -> str:
    name = rng.choice(["dana.reyes", "bo", "chen.li", "ops-oncall", "j.smith+billing"])
    return f"{name}@{rng.choice(['example.com', 'acme.dev', 'mail.example.org'])}"


GENERATORS = {
    "phone_number": _phone,
    "ip_address": _ip,
    "date_of_birth": _birth_date,
    "street_address": _address,
    "email": _email,
    "card_number": _card,
    "us_ssn": _ssn,
}
CONTEXTS: dict[str, list[str]] = {
    "phone_number": [
        "On-call this week: Dana, {s} (call, don't text)",
        "Escalation: page the DBA at {s} if replication lag > 30 s",
        "customer asked to be called back on {s} after 5pm",
        "Vendor support line {s}, contract 88-1204",
        "phone: {s}",
        "tel. {s} / reception",
    ],
    "ip_address": [
        "The staging database runs at {s}, port 5432",
        "ssh deploy@{s} -i ~/.ssh/deploy",
        "Blocked {s} after 400 failed logins",
        "nginx: upstream timed out while connecting to {s}",
        "The user's laptop had address {s} when the VPN dropped",
    ],
    "date_of_birth": [
        "Test user: Dana Reyes, DOB: {s}, plan premium",
        "date of birth {s}; the age check rejects under-18s",
        "Applicant born on {s}, verified by passport",
        "birthday: {s}",
    ],
    "street_address": [
        "Ship the replacement keys to {s}, Springfield",
        "The office moved to {s}; update the invoice template",
        "Customer address: {s}, Apt 4, Boston MA 02118",
        "Lost laptop returned to {s} by the courier",
    ],
    "email": [
        "Escalations go to {s} on weekends.",
        "git config user.email {s}",
        "Invite {s} to the incident channel",
    ],
    "card_number": [
        "Refund failed for card {s}",
        "The test order used {s} and was charged twice",
    ],
    "us_ssn": [
        "Payroll row rejected: SSN {s} already exists",
        "SSN: {s}",
    ],
}
ISSUE_EXAMPLES = [  # the shapes issue #30 names, written out
    Planted("Call the landlord on (415) 555-0132 about the lease", "(415) 555-0132", "phone_number"),
    Planted("Employee SSN 078-05-1120 on the old form", "078-05-1120", "us_ssn"),
    Planted("Paid with 4111 1111 1111 1111 in the sandbox", "4111 1111 1111 1111", "card_number"),
    Planted("Client IP 203.0.113.42 hit the rate limit", "203.0.113.42", "ip_address"),
    Planted("DOB 1985-03-14 (from the signup form)", "1985-03-14", "date_of_birth"),
    Planted("Deliver to 1600 Pennsylvania Ave NW, Washington", "1600 Pennsylvania Ave NW", "street_address"),
    Planted(
        "AWS pair in the old runbook: wJ8k2Lm4Np6Qr8St0Uv2Wx4Yz6Ab8Cd0Ef2Gh4Ij",
        "wJ8k2Lm4Np6Qr8St0Uv2Wx4Yz6Ab8Cd0Ef2Gh4Ij",
        "aws_secret_key",
    ),
]


def _build_planted() -> list[Planted]:
    rng = random.Random(SEED)
    planted = []
    for kind, contexts in CONTEXTS.items():
        for context in contexts:
            value = GENERATORS[kind](rng)
            planted.append(Planted(context.format(s=value), value, kind))
    return planted + ISSUE_EXAMPLES


def _build_lookalikes() -> list[str]:
    rng = random.Random(SEED + 1)
    sha1 = hashlib.sha1(rng.randbytes(16)).hexdigest()
    ident = uuid.UUID(int=rng.getrandbits(128), version=4)
    return [
        "Released 2.31.0 on 2026-11-23; 2.30.4 is the last of the old line",
        "Upgraded numpy 1.26.4 -> 2.1.3 and pydantic 2.10.1",
        "The .NET build 4.8.1.4515 needs a reboot",
        "Deploy window: 2026-12-01 22:00-23:30 UTC",
        "2026-11-21T09:15:02Z WARN retry 3/5 after 250 ms",
        "Meeting moved to 03/14/2026 at 10:30",
        "Listening on 0.0.0.0 is refused; use 127.0.0.1 or localhost",
        "p95 went from 12.5 ms to 21.0 ms at 1,000 QPS",
        "Ports 8080, 9090 and 6379 must be free",
        f"commit {sha1} fixed it; request {ident} was the first to fail",
        "The invoice total was $1,234.56 for 3 seats",
        "Step 2 Open Settings and pick Advanced",
        "See section 4 Main Street Style Guide for the naming rules",
        "std::vector<int> and std::map::find are in the hot loop",
        "Version tuple (1, 2, 3, 4) and build 1736951112345",
        "Issue #1234567 and PR 4521 were merged on 11/23",
        "The VM has 16 GB of RAM and 4 vCPU, 100 GB disk",
        "regex [0-9]{3}-[0-9]{3}-[0-9]{4} validates the field",
        "Ticket ACME-10422 blocks ACME-10423",
        "Born-again shell (bash) 5.2.21 is the default",
        "Run at 10:02:11 and again at 14:03:59",
        "Coordinates 52.5200, 13.4050 are Berlin",
        "ISBN 978-0-306-40615-7 is the reference",
        "Use the 3 Way merge tool for conflicts",
        "The birthday paradox says 23 people suffice",
    ]


PLANTED: list[Planted] = _build_planted()
LOOKALIKES: list[str] = _build_lookalikes()
