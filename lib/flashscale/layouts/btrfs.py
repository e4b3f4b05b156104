"""btrfs over several devices: one file system whose own profiles stripe (raid0) or mirror and stripe (raid10)
its data and metadata, an array without md. Mounted with every member named (``device=``), so no ``btrfs device
scan`` (udev's) is needed.

btrfs stripes in its own stripe length, 64 KiB (``BTRFS_STRIPE_LEN``), whatever chunk was asked for; its data lives
on btrfs whatever ``FS`` the campaign's other layouts have. raid10 keeps two copies of every block whatever the
number of devices: it writes at most half of devices x the baseline, and a read fetches one copy, so its known truth
is the sum of its members' caps, not a stripe's slowest member x members.
"""
from __future__ import annotations

from .descriptor import Descriptor

STRIPE_BYTES = 64 * 2**10  # BTRFS_STRIPE_LEN
WORDS = "btrfs's fixed stripe length (BTRFS_STRIPE_LEN)"

RAID0 = Descriptor(
    "btrfs-raid0", "one btrfs with data and metadata striped (raid0) over all devices",
    build="btrfs", profile="raid0", fixed_stripe_bytes=STRIPE_BYTES, tool_default_chunk_bytes=STRIPE_BYTES,
    default_chunk_words=WORDS,    even_share=True, file_system="btrfs")
RAID10 = Descriptor(
    "btrfs-raid10", "one btrfs with data and metadata mirrored and striped (raid10)",
    build="btrfs", profile="raid10", min_devices=2,
    min_devices_why="mkfs.btrfs refuses a raid10 of one device",  # "2 devices are required", btrfs-progs 6.2
    fixed_stripe_bytes=STRIPE_BYTES, tool_default_chunk_bytes=STRIPE_BYTES, default_chunk_words=WORDS,
    write_share=0.5, file_system="btrfs")

DESCRIPTORS = (RAID0, RAID10)
