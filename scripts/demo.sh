#!/usr/bin/env bash
# make demo: Sparrow finds its plugins, verifies and starts them, and runs a
# command through a sandbox plugin — all in a throwaway home, nothing global.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
export HOME="$home" XDG_CONFIG_HOME="$home/.config" XDG_STATE_HOME="$home/.state" XDG_DATA_HOME="$home/.data"
sparrow() { "$root/bin/sparrow" "$@"; }
step() { printf '\n\033[1m$ sparrow %s\033[0m\n' "$*"; }

step --version;                      sparrow --version
step plugin list --check;            sparrow plugin list --check
step sandbox list;                   sparrow sandbox list
step "sandbox exec -- sh -c 'echo \"ahoy from \$(uname -s), pid \$\$\"'"
sparrow sandbox exec -- sh -c 'echo "ahoy from $(uname -s), pid $$"'
step config show;                    sparrow config show
step doctor;                         sparrow doctor || true
printf '\nLog of this demo: %s\n' "$XDG_STATE_HOME/sparrow/sparrow.log"
tail -n 5 "$XDG_STATE_HOME/sparrow/sparrow.log" || true
