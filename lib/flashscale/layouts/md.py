"""md RAID: arrays the kernel's md driver makes of the devices, built with mdadm, one file system on top with
its stripe geometry (xfs su/sw, ext4 stride) from the chunk.

    md-raid0        native metadata (1.2), RAID-0 with the chunk size                     (seed 000, Test 5a)
    md-imsm-raid0   an IMSM (Intel RST) container over the devices, a RAID-0 volume in it  (seed 000, Test 5b)
    md-raid10       known, not built: read in imported runs (a mirror writes every block twice)
    md-raid1        known, not built: the same, two devices

mdadm's own default chunk is 512 KiB (since mdadm 3.1); flashscale always gives one (``Options.chunk_bytes``).
IMSM's default depends on the platform's option ROM, so it is not stated. mdadm refuses a RAID-0 of one device
without ``--force``.
"""
from __future__ import annotations

from .descriptor import Descriptor

MDADM_CHUNK_BYTES = 512 * 2**10  # mdadm --create's default chunk since mdadm 3.1
MDADM_WORDS = "md's default chunk (mdadm 3.1 and later)"
MIRROR_NOT_BUILT = ("flashscale builds no md mirror: mdadm would resync it while it is measured (no --assume-clean "
                    "plan yet); its runs are read and analysed")

RAID0 = Descriptor(
    "md-raid0", "md RAID-0 (native metadata) with one file system", source="seed 000, Test 5a",
    build="md", profile="0", needs="md", modules=("raid0",), min_devices=2,
    min_devices_why="mdadm refuses a RAID-0 of one device", tool_default_chunk_bytes=MDADM_CHUNK_BYTES,
    default_chunk_words=MDADM_WORDS, even_share=True)
IMSM_RAID0 = Descriptor(
    "md-imsm-raid0", "md RAID-0 in an IMSM container, one file system", source="seed 000, Test 5b",
    build="md-imsm", profile="0", needs="md", modules=("raid0",), min_devices=2,
    min_devices_why="mdadm refuses an IMSM RAID-0 of one device", even_share=True)
# A mirror writes every block twice, to two devices: N mirrored devices write at most N / 2 x the baseline however
# well they are built (md RAID-10 near=2, mdadm's default; md RAID-1 of two devices: an N-way RAID-1 writes every
# block N times, 1 / N). Reads fetch each block once, from either copy, and reach the full N x baseline.
RAID10 = Descriptor(
    "md-raid10", "md RAID-10 (near=2): every block on two devices, striped", needs="md", modules=("raid10",),
    min_devices=2, min_devices_why="mdadm refuses a RAID-10 of one device", write_share=0.5,
    tool_default_chunk_bytes=MDADM_CHUNK_BYTES, default_chunk_words=MDADM_WORDS, not_built_why=MIRROR_NOT_BUILT)
RAID1 = Descriptor(
    "md-raid1", "md RAID-1 of two devices: every block on both", needs="md", modules=("raid1",), min_devices=2,
    min_devices_why="a mirror of one device mirrors nothing", write_share=0.5, not_built_why=MIRROR_NOT_BUILT)

DESCRIPTORS = (RAID0, IMSM_RAID0, RAID10, RAID1)
