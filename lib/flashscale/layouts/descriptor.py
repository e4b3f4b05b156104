"""What a layout is, as data: the one descriptor every layer reads (fio's ``ioengine_ops``, for a layout).

    Descriptor(name, description, ...)   one layout: its devices, its stripe unit, how requests reach its
                                         members, its write share and known truth, its file system, what the
                                         kernel must offer, and the build plan ``arrays.layouts`` runs
    OWN_JOBS, STRIPE                     how a request reaches the members (``routing``)

A descriptor is checked when it is made (``__post_init__``), so a layout that does not hold together fails when
the package loads, naming the layout and the field, before any campaign runs.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import ConfigError

OWN_JOBS = "own jobs"  # each device its own file system and its own share of the jobs (fio spreads them)
STRIPE = "stripe"      # one address space over the members, cut into stripe units laid over them in turn
ROUTINGS = (OWN_JOBS, STRIPE)
BUILDS = ("each", "btrfs", "md", "md-imsm", "lvm")  # the build plans of ``arrays.layouts`` (``PLANS``)
FEATURES = ("md", "dm")  # what a build may need of the kernel (``features.FEATURES``)
PAGE_BYTES = 4096  # the smallest stripe unit md (a chunk of at least a page) and dm-stripe (lvcreate) make


def _power_of_two(value: int | None) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 512
                             and not value & (value - 1))


@dataclass(frozen=True)
class Descriptor:
    """One layout.

    ``build``: the build plan of ``arrays.layouts`` that makes it, given ``profile`` (the btrfs profile, the md
    level); None: flashscale does not build it (a layout it knows only to analyse, or ``existing``: a mount point
    the user made). ``needs``: the kernel feature the build needs (``features.FEATURES``), ``modules`` the kernel
    modules besides the feature's own. ``min_devices``, with ``min_devices_why`` (the tool that refuses fewer);
    ``first_device_only``: it uses the campaign's first device and no other (``single``). ``routing``: how a
    request reaches the members (``OWN_JOBS``, ``STRIPE``: ``analysis.prediction.routing``); ``fixed_stripe_bytes``: its own
    stripe unit, whatever the chunk asked (btrfs's 64 KiB), else the chunk flashscale builds it with
    (``arrays.layouts.Options.chunk_bytes``, always given to the tool); ``tool_default_chunk_bytes``: what its tool
    takes where none is given (an array someone else built), ``default_chunk_words`` whose default it is, in words;
    ``least_chunk_bytes``: the smallest stripe unit it can have (a page, 4 KiB, for md and dm-stripe; taken so for
    a stripe flashscale does not know), so a request no larger reaches one member whatever the chunk.
    ``even_share``: every byte in equal shares over the
    members, so its known truth is its slowest member x members (else the sum of its members' caps).
    ``write_share``: the share of devices x baseline it can write by its design (a mirror: 1/2). ``file_system``:
    its own (btrfs), None: the campaign's ``FS``. ``on_directories``: plain directories can stand in for it (no
    devices, no caps); ``existing``: measured inside a mount point that exists, never built or erased."""

    name: str
    description: str
    source: str = ""
    build: str | None = None
    profile: str = ""
    needs: str | None = None
    modules: tuple[str, ...] = ()
    min_devices: int = 1
    min_devices_why: str = ""
    first_device_only: bool = False
    routing: str = STRIPE
    fixed_stripe_bytes: int | None = None
    tool_default_chunk_bytes: int | None = None
    default_chunk_words: str = ""
    least_chunk_bytes: int = PAGE_BYTES
    even_share: bool = False
    write_share: float = 1.0
    file_system: str | None = None
    on_directories: bool = False
    existing: bool = False
    not_built_why: str = ""

    def __post_init__(self) -> None:
        def wrong(field: str, why: str) -> ConfigError:
            return ConfigError(f"layout {self.name!r}: {field}={getattr(self, field)!r} {why}")
        if not isinstance(self.name, str) or not self.name.strip():
            raise wrong("name", "must be a layout's name")
        if self.build is not None and self.build not in BUILDS:
            raise wrong("build", f"is not one of {', '.join(BUILDS)}")
        if self.build is None and not (self.existing or self.not_built_why):
            raise wrong("build", "is None: say why flashscale does not build it (not_built_why), or existing=True")
        if self.needs is not None and self.needs not in FEATURES:
            raise wrong("needs", f"is not one of {', '.join(FEATURES)}")
        if self.routing not in ROUTINGS:
            raise wrong("routing", f"is not one of {', '.join(ROUTINGS)}")
        if isinstance(self.min_devices, bool) or not isinstance(self.min_devices, int) or self.min_devices < 1:
            raise wrong("min_devices", "must be a whole number of at least 1")
        if self.min_devices > 1 and not self.min_devices_why:
            raise wrong("min_devices_why", "must say what refuses fewer devices")
        if self.tool_default_chunk_bytes is not None and not self.default_chunk_words:
            raise wrong("default_chunk_words", "must say whose default tool_default_chunk_bytes is")
        for field in ("fixed_stripe_bytes", "tool_default_chunk_bytes", "least_chunk_bytes"):
            if not _power_of_two(getattr(self, field)):
                raise wrong(field, "must be a power of two of at least 512 bytes, or None")
        if not 0 < self.write_share <= 1:
            raise wrong("write_share", "must be in (0, 1]")

    @property
    def buildable(self) -> bool:
        """flashscale builds it on devices (``arrays.layouts.build``)."""
        return self.build is not None

    @property
    def per_device(self) -> bool:
        """Each device runs its own jobs on its own file system: no layer between the jobs and a device."""
        return self.routing == OWN_JOBS

    def devices_used(self, count: int) -> int:
        """How many of ``count`` devices it uses."""
        return min(count, 1) if self.first_device_only else count

    def devices_problem(self, count: int) -> str | None:
        """What is wrong with building it on ``count`` devices, in words, or None."""
        if count >= self.min_devices:
            return None
        return f"{self.name} needs at least {self.min_devices} ({self.min_devices_why})"

    def stripe_unit(self, chunk_bytes: int | float | None) -> int | None:
        """The stripe unit its requests are routed by: its own (``fixed_stripe_bytes``), else ``chunk_bytes``
        (None, or NaN from a table: unknown). ConfigError naming a chunk that is no whole number of at least 512."""
        if self.fixed_stripe_bytes is not None:
            return self.fixed_stripe_bytes
        if chunk_bytes is None or (isinstance(chunk_bytes, float) and not math.isfinite(chunk_bytes)):
            return None
        if isinstance(chunk_bytes, bool) or int(chunk_bytes) != chunk_bytes or chunk_bytes < 512:
            raise ConfigError(f"chunk_bytes {chunk_bytes!r} must be a whole number of bytes, at least 512")
        return int(chunk_bytes)

    def assumed_chunk(self, chunk_bytes: int | float | None) -> tuple[int | None, str]:
        """The stripe unit to route by where the table may not give one, and what was assumed in words: its own
        or ``chunk_bytes`` (``stripe_unit``: nothing assumed, ""), else its tool's default, said ("md's default chunk
        512 KiB (mdadm 3.1 and later) taken: no chunk given"), else None (unknown)."""
        given = self.stripe_unit(chunk_bytes)
        if given is not None or self.tool_default_chunk_bytes is None:
            return given, ""
        return self.tool_default_chunk_bytes, (f"{self.default_chunk_words} "
                                               f"{self.tool_default_chunk_bytes // 1024} KiB taken: no chunk given")

    def file_system_of(self, fs: str) -> str:
        """The file system its data lives on: its own, else the campaign's ``fs``."""
        return self.file_system or fs
