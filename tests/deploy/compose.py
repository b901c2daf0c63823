"""docker-compose.yml as compose would read it: the file, variable interpolation, bind mounts.

No Docker engine is needed: the tests check the file the way ``docker compose config`` would
resolve it (``${VAR:-default}`` with the variables unset, relative paths from the file's folder).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import REPO

COMPOSE = REPO / "docker-compose.yml"
VARIABLE = re.compile(r"\$\$|\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:?[-?])(?P<arg>[^}]*))?\}")


def interpolate(text: str, env: dict[str, str]) -> str:
    """Compose's interpolation: ``${X}``, ``${X:-default}``, ``${X-default}``, ``${X:?error}``, ``$$``."""

    def value(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        name, op, arg = match.group("name"), match.group("op"), match.group("arg") or ""
        current = env.get(name)
        if op == ":-":
            return current if current else arg
        if op == "-":
            return arg if current is None else current
        if op in (":?", "?") and not current:
            raise KeyError(f"${{{name}}} is required: {arg}")
        return current or ""

    return VARIABLE.sub(value, text)


def load(env: dict[str, str] | None = None) -> dict[str, Any]:
    """The compose file with its variables resolved from ``env`` (default: none set)."""
    data = yaml.safe_load(interpolate(COMPOSE.read_text(), env or {}))
    assert isinstance(data, dict)
    return data


def raw() -> dict[str, Any]:
    """The compose file as written (variables not resolved)."""
    data = yaml.safe_load(COMPOSE.read_text())
    assert isinstance(data, dict)
    return data


def mounts(service: dict[str, Any]) -> list[tuple[str, str, bool]]:
    """(source, target, read_only) of each volume entry, short or long syntax."""
    out = []
    for entry in service.get("volumes", []):
        if isinstance(entry, dict):
            out.append((str(entry.get("source", "")), str(entry["target"]), bool(entry.get("read_only"))))
            continue
        parts = str(entry).split(":")
        source, target = (parts[0], parts[1]) if len(parts) > 1 else ("", parts[0])
        out.append((source, target, len(parts) > 2 and "ro" in parts[2].split(",")))
    return out


def is_bind(source: str) -> bool:
    return source.startswith((".", "/", "~"))


def host_path(source: str) -> Path:
    """A bind mount's source on the host: relative paths start at the compose file's folder."""
    return (COMPOSE.parent / source).resolve()


def container_path(service: dict[str, Any], target: str) -> Path | None:
    """Where a path inside the container comes from on the host, through a bind mount."""
    best: tuple[str, str] | None = None
    for source, mount_target, _ in mounts(service):
        if not is_bind(source):
            continue
        if (target == mount_target or target.startswith(mount_target.rstrip("/") + "/")) and (
            best is None or len(mount_target) > len(best[1])
        ):
            best = (source, mount_target)
    if best is None:
        return None
    rest = target[len(best[1]) :].lstrip("/")
    return host_path(best[0]) / rest if rest else host_path(best[0])


def environment(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment", {})
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {str(k): str(v) for k, v in env.items()}


def port_specs(service: dict[str, Any]) -> list[str]:
    """Each published port as ``host_ip:published:target`` (long syntax rewritten to short)."""
    specs = []
    for p in service.get("ports", []):
        if isinstance(p, dict):
            p = f"{p.get('host_ip', '')}:{p.get('published')}:{p['target']}"
        specs.append(str(p))
    return specs
