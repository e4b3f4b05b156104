"""The names a host is given in an inventory or ``REMOTE_HOSTS``, checked by one strict rule before anything uses one.

    host_name(value, what)   a DNS name or an IP address, else ConfigError naming the value and the rule
    login(value, what)       a login name for ssh's ``-l``

A host's name and address end up as a file name (rows, manifests), an ssh destination, a word of a remote command
line; an inventory is someone else's file. So a name is letters, digits and hyphens in dot-separated labels (RFC
1123: 1 to 63 characters each, no hyphen first or last, 253 in all), or an IPv4 or IPv6 address (no zone: ``%``
is refused everywhere); nothing else, in particular nothing a shell or ssh's ``%`` tokens would read.
"""
from __future__ import annotations

import ipaddress
import re

from ...errors import ConfigError

LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")
LABEL_MAX, NAME_MAX = 63, 253
LOGIN = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,31}")
RULE = ("a DNS name (letters, digits and hyphens in dot-separated labels of 1 to 63 characters, no hyphen first or "
        "last, 253 characters in all) or an IP address")


def _address(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return "%" not in value  # no IPv6 zone: %eth0 is read by ssh as a token


def _label_problem(value: str) -> str | None:
    """Why ``value`` is not a DNS name, or None when it is one."""
    if len(value) > NAME_MAX:
        return f"it is {len(value)} characters long, more than {NAME_MAX}"
    for label in value.split("."):
        if len(label) > LABEL_MAX:
            return f"its label {label[:20]!r}... is {len(label)} characters long, more than {LABEL_MAX}"
        if not LABEL.fullmatch(label):
            return f"{label!r} is not a DNS label" if label else "it has an empty label"
    return None


def host_name(value: object, what: str = "host name") -> str:
    """``value`` when it is a DNS name or an IP address (``RULE``); ConfigError naming it and the rule otherwise."""
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{what} {value!r} must be {RULE}")
    if _address(value):
        return value
    problem = _label_problem(value)
    if problem is not None:
        raise ConfigError(f"{what} {value!r}: {problem}; a host is named by {RULE}")
    return value


def login(value: object, what: str = "user") -> str:
    """``value`` when it is a login name (a letter or ``_`` first, then letters, digits, ``_``, ``.``, ``-``; 32 at
    most); ConfigError naming it otherwise."""
    if not isinstance(value, str) or not LOGIN.fullmatch(value):
        raise ConfigError(f"{what} {value!r} is not a login name (a letter or _ first, then letters, digits, _, . "
                          "or -, 32 characters at most)")
    return value
