"""A test bed: the devices of a real machine, named by stable identity in a file, never by path.

    # testbed.yaml: identities as `flashscale devices` prints them; quote them (YAML reads 0123 as a number)
    name: uv300-p3700
    devices:
      - "nguid:0025385b71b01234e4d25c4a00000001"
      - "nguid:0025385b71b01234e4d25c4a00000002"

Paths are resolved when the campaign starts (``resolve``) and the guard reads each identity again right before
every destructive step. An identity that no device carries, or that two devices carry, stops the campaign.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from ..system.devices import Device, System
from ..errors import ConfigError
from .guard import confirmation


@dataclass(frozen=True)
class TestBed:
    name: str
    ids: tuple[str, ...]

    __test__ = False  # not a pytest test class, despite its name

    @classmethod
    def load(cls, path: str | Path) -> "TestBed":
        data = yaml.safe_load(Path(path).read_text()) or {}
        if not isinstance(data, dict) or not isinstance(data.get("devices"), list) or not data["devices"]:
            raise ConfigError(f"test bed {path}: needs a non-empty list 'devices' of identities")
        try:
            ids = confirmation(data["devices"])
        except ConfigError as exc:
            raise ConfigError(f"test bed {path}: {exc}") from None
        if len(ids) != len(data["devices"]):
            raise ConfigError(f"test bed {path}: an identity is listed twice or is empty")
        return cls(str(data.get("name") or Path(path).stem), ids)

    def resolve(self, system: System | None = None) -> list[Device]:
        """The devices that carry these identities now, in the file's order; RefusedError if one is missing."""
        system = system or System()
        return [system.find(ident) for ident in self.ids]
