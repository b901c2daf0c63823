"""Tool profiles: which contract the server speaks (docs/profiles.md).

``default`` is seed 001's 27 tools; ``cortex-find-store`` (seed 004), ``cortex-os`` (seed 003) and
``memory-interface-v1`` (seed 002) are thin mappings onto the same services, with their own
names, schemas and envelopes. A comma-separated list serves a union, unless two profiles name
different tools alike (seed 001 and seed 003 both have ``memory_update``).

Seed 002 and seed 004 name their tools with a dot (``memory.find``). MCP allows it, and the
Python and TypeScript SDK clients accept it, but Claude Code and Claude Desktop refuse any tool
name outside ``[a-zA-Z0-9_-]`` (and then show none of the server's tools). So the names served by
default are the closest legal ones (``memory-find``: the dot becomes a hyphen, which no other
profile uses); ``MEMORY_SERVER__TOOL_NAMES=seed`` serves the seeds' own names. A call by the
other spelling is answered all the same (:attr:`Surface.aliases`).
"""

from __future__ import annotations

import dataclasses

from memory_service.core.errors import ValidationError
from memory_service.profiles.cortex_os.tools import CORTEX_OS_TOOLS
from memory_service.profiles.find_store.tools import FIND_STORE_TOOLS
from memory_service.profiles.interface_v1.tools import INTERFACE_V1_TOOLS
from memory_service.settings import split_profiles
from memory_service.tools import ALL_TOOLS
from memory_service.tools.registry import ToolSpec

PROFILES: dict[str, list[ToolSpec]] = {
    "default": ALL_TOOLS,
    "cortex-find-store": FIND_STORE_TOOLS,
    "cortex-os": CORTEX_OS_TOOLS,
    "memory-interface-v1": INTERFACE_V1_TOOLS,
}
DEFAULT_PROFILE = "default"


def profile_names(profile: str) -> list[str]:
    """The profiles a setting names, in order, without repeats; CFG_PROFILE for an unknown one
    (settings check them too: this is for a profile that came another way, e.g. a forwarder)."""
    names = split_profiles(profile)
    unknown = [n for n in names if n not in PROFILES]
    if not names or unknown:
        raise ValidationError(
            f"Unknown tool profile {', '.join(map(repr, unknown)) or repr(profile)}",
            code="CFG_PROFILE",
            details={"field": "server.profile", "provided": profile, "allowed": list(PROFILES)},
            suggestion=f"Use one of {', '.join(PROFILES)}, or several separated by commas.",
        )
    return names


@dataclasses.dataclass(frozen=True)
class Surface:
    """The tools a server lists, and the other spellings of their names it answers to."""

    tools: list[ToolSpec]
    aliases: dict[str, str]  # a seed's dotted name or its legal spelling -> the name served


def tools_for(profile: str = DEFAULT_PROFILE, tool_names: str = "legal") -> Surface:
    """The tools a profile serves, named as ``tool_names`` says (``legal`` or ``seed``).

    Raises:
        ValidationError: two of the profiles serve different tools under one name (CFG_PROFILE).
    """
    chosen: dict[str, tuple[str, ToolSpec]] = {}
    aliases: dict[str, str] = {}
    clashes: list[str] = []
    for name in profile_names(profile):
        for spec in PROFILES[name]:
            served = spec
            if spec.seed_name:
                if tool_names == "seed":
                    served = dataclasses.replace(spec, name=spec.seed_name)
                other = spec.name if tool_names == "seed" else spec.seed_name
                aliases[other] = served.name
            if served.name in chosen and chosen[served.name][1].handler is not spec.handler:
                clashes.append(f"{served.name} ({chosen[served.name][0]} and {name})")
                continue
            chosen.setdefault(served.name, (name, served))
    if clashes:
        raise ValidationError(
            f"The tool profiles {profile!r} cannot be served together: they define {', '.join(clashes)} "
            "differently",
            code="CFG_PROFILE",
            details={"field": "server.profile", "provided": profile, "clashes": clashes},
            suggestion="Serve one of the clashing profiles per server (MEMORY_SERVER__PROFILE or "
            "--profile), e.g. 'default' for Claude Code and 'cortex-os' in a second server entry.",
        )
    return Surface([spec for _, spec in chosen.values()], aliases)
