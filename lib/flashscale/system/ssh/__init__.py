"""The SSH room: real hosts reached over OpenSSH, every option pinned, nothing of ours run there unchecked.

    host_names  a host's name as an inventory or ``REMOTE_HOSTS`` gives it, checked by one strict rule
    client      OpenSSH's client through the ``Runner``: one connection per host, reused for a campaign
    shipped     flashscale zipped, shipped to a host and run there only with its SHA-256; how reap reaches a host
    forwarded   a host's fio server on a unix socket only root reaches, forwarded, ended with its ssh session
    lab_hosts   real hosts to test on, made here: network namespaces, each with its own OpenSSH server

The root-only runtime folder they ship into is ``system.private``'s, which the manifests use too.
"""
