#!/usr/bin/env bash
# apt-install.sh WHO PACKAGE...: install the Debian packages named (the ones found missing) when we are root and
# have apt-get; otherwise say exactly what WHO needs and fail. Nothing to do when no package is named.
set -euo pipefail
who=$1; shift
[ $# -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "Installing $* with apt-get"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
else
  echo "$who need(s): $*. Install them, e.g.: sudo apt-get install $*" >&2
  exit 1
fi
