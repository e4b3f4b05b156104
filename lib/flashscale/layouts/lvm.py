"""LVM: one logical volume striped over every device (device-mapper's striped target), one file system on top.

    lvm-striped   pvcreate, vgcreate, lvcreate --type striped with the chunk as stripe size

lvcreate's own default stripe size is 64 KiB; flashscale always gives one (``Options.chunk_bytes``).
"""
from __future__ import annotations

from .descriptor import Descriptor

LVCREATE_STRIPE_BYTES = 64 * 2**10  # lvcreate --stripesize's default

STRIPED = Descriptor(
    "lvm-striped", "one LVM volume striped over all devices, one file system", build="lvm", profile="striped",
    needs="dm", tool_default_chunk_bytes=LVCREATE_STRIPE_BYTES,
    default_chunk_words="lvcreate's default stripe size", even_share=True)

DESCRIPTORS = (STRIPED,)
