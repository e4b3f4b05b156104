"""The VM lab: a virtual machine with a real kernel (md, device-mapper, NVMe, null_blk) that this machine's may lack.

    vm       the VM booted (virtme-ng, KVM or TCG), its NVMe devices, a command or a campaign run in its guest
    mounts   what the guest sees of the host's folders, and the virtme-ng options that let it see the rest
"""
