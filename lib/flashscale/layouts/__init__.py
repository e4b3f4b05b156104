"""What each layout is: one descriptor per layout, one module per kind (fio's ``engines/``, one ``ioengine_ops``
table each), read by every layer instead of restated.

    describe(name)        the descriptor of a layout (an unknown name, an imported run's: a plain stripe)
    known(name)           the descriptor of a layout flashscale knows; ConfigError naming the choices otherwise
    DESCRIPTORS           every known layout, by name, in the order below
    BUILT                 the layouts flashscale builds on devices (``arrays.layouts``), in that order
    MEASURABLE            what a campaign's ``LAYOUTS`` may name: those, and ``mounted``
    kernel_modules()      the kernel modules the built layouts need (the VM lab loads them)
    tools()               the programs they need, each with its Debian package

    plain    single, jbod, mounted           (``layouts.plain``)
    btrfs    btrfs-raid0, btrfs-raid10       (``layouts.btrfs``)
    md       md RAID-0 native and IMSM; RAID-10 and RAID-1 known, not built (``layouts.md``)
    lvm      lvm-striped                     (``layouts.lvm``)

``arrays.layouts`` builds a descriptor with its build plan (``Descriptor.build``), ``arrays.emulated`` reads its
known truth (``even_share``), ``analysis`` its routing, stripe unit, write share and file system, ``campaigns``
checks the parameters against it (``min_devices``, ``on_directories``). A new layout is one descriptor in its
kind's module (and a build plan in ``arrays`` when its kind has none yet); tests/test_layout_descriptors.py walks
every descriptor through the dry run, a build and a prediction.
"""
from __future__ import annotations

from . import btrfs, lvm, md, plain
from .descriptor import OWN_JOBS, STRIPE, Descriptor
from .features import FEATURES, Feature
from ..errors import ConfigError

__all__ = ["BUILT", "DESCRIPTORS", "FEATURES", "MEASURABLE", "MOUNTED", "OWN_JOBS", "STRIPE", "Descriptor", "Feature",
           "describe", "kernel_modules", "known", "tools"]



def _collect(kinds) -> dict[str, Descriptor]:
    """Every kind's descriptors by name, checked as they load: a name described twice is refused."""
    found: dict[str, Descriptor] = {}
    for kind in kinds:
        for descriptor in kind.DESCRIPTORS:
            if descriptor.name in found:
                raise ConfigError(f"layout {descriptor.name!r} is described twice")
            found[descriptor.name] = descriptor
    return found


DESCRIPTORS: dict[str, Descriptor] = _collect((plain, btrfs, md, lvm))

MOUNTED = plain.MOUNTED.name
BUILT: tuple[str, ...] = tuple(name for name, d in DESCRIPTORS.items() if d.buildable)
MEASURABLE: tuple[str, ...] = (*BUILT, *(name for name, d in DESCRIPTORS.items() if d.existing))


def known(name: str) -> Descriptor:
    """The descriptor of ``name``; ConfigError naming it and the layouts flashscale knows when it is none."""
    if name not in DESCRIPTORS:
        raise ConfigError(f"layout={name!r} is not one of {', '.join(DESCRIPTORS)}")
    return DESCRIPTORS[name]


def describe(name: str) -> Descriptor:
    """The descriptor of ``name``; a layout flashscale does not know (an imported run's, a cluster's ``nbd``) is
    read as a plain stripe of the devices its rows name: routed by the chunk given, writing its full share."""
    found = DESCRIPTORS.get(str(name))
    return found if found is not None else Descriptor(
        str(name) or "unknown", "a layout flashscale does not know: read as a stripe of its devices",
        not_built_why="not known")


def kernel_modules() -> tuple[str, ...]:
    """The kernel modules the layouts flashscale builds need: each feature's, then each layout's own."""
    found = [module for d in DESCRIPTORS.values() if d.buildable
             for module in (*(FEATURES[d.needs].modules if d.needs else ()), *d.modules)]
    return tuple(dict.fromkeys(found))


def tools() -> tuple[tuple[str, str], ...]:
    """(program, its Debian package) of each kernel feature the layouts flashscale builds need."""
    needed = dict.fromkeys(d.needs for d in DESCRIPTORS.values() if d.buildable and d.needs)
    return tuple((FEATURES[need].program, FEATURES[need].package) for need in needed)
