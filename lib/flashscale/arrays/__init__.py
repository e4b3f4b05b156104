"""Devices and arrays: what flashscale measures on, made and destroyed through the guard.

    guard      refuses a destructive step on any device not named by identity and confirmed, or in use
    erase      blkdiscard, zeroing, wipefs, nvme format / sanitize, through the guard
    plan       a destructive step as data (argv, devices written, what it creates): printed, recorded, run
    volumes    md, IMSM and LVM command plans
    layouts    single, jbod, btrfs raid0/raid10, md, LVM, directories: built from a plan, torn down
    emulated   the emulated array: N loop devices on files of our own, each capped (the known truth)
    testbed    real devices named by identity in a test bed file
"""
