"""Layouts without a layer between the jobs and the devices: one device, one file system per device, and an
existing mount point measured inside.

    single    one device with its own file system: the baseline every efficiency is against
    jbod      one file system per device, fio's jobs spread evenly over the mount points (seed 000, Test 2)
    mounted   an existing mount point (GPFS, BeeGFS, Lustre, NFS): flashscale only makes and removes its own
              directory inside it; how many devices sit under it is the user's to say (``MOUNT_DEVICES``)
"""
from __future__ import annotations

from .descriptor import OWN_JOBS, Descriptor

SINGLE = Descriptor(
    "single", "one device with its own file system (the baseline)", source="the baseline",
    build="each", first_device_only=True, routing=OWN_JOBS, on_directories=True)
JBOD = Descriptor(
    "jbod", "one file system per device, jobs spread evenly over the mount points", source="seed 000, Test 2",
    build="each", routing=OWN_JOBS, on_directories=True)
MOUNTED = Descriptor(
    "mounted", "directories of ours inside an existing mount point (GPFS, BeeGFS, Lustre, NFS...)",
    existing=True, on_directories=True)

DESCRIPTORS = (SINGLE, JBOD, MOUNTED)
