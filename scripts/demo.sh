#!/usr/bin/env bash
# make demo: Sparrow finds, verifies and drives its plugins, then runs an
# agent on a real repository: a recorded model conversation (the replay
# provider) with the real tools, the real sandbox and the real gate. No API
# key needed. Sparrow's config and state live in a throwaway directory.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export XDG_CONFIG_HOME="$scratch/config" XDG_STATE_HOME="$scratch/state" XDG_DATA_HOME="$scratch/data"
sparrow() { "$root/bin/sparrow" "$@"; }
step() { printf '\n\033[1m$ sparrow %s\033[0m\n' "$*"; }

step --version;                 sparrow --version
step plugin list --check;       sparrow plugin list --check
step sandbox list;              sparrow sandbox list
step doctor;                    sparrow doctor || true

# A tiny Go package whose test fails, in a fresh git repository.
work="$scratch/greet"
cp -R examples/demo/project "$work"
git -C "$work" init -q
git -C "$work" add -A
git -C "$work" -c user.email=demo@sparrow.invalid -c user.name=demo commit -qm "greet: initial"
mkdir -p "$XDG_CONFIG_HOME/sparrow"
cat > "$XDG_CONFIG_HOME/sparrow/sparrow.hcl" <<HCL
model = "replay"
provider "replay" {
  file  = "$root/examples/demo/conversation.json"
  delay = "40ms"
}
autonomy {
  level = "trusted"
}
verify_command = ["go", "test", "./..."]
HCL

step "-C $work run \"make the failing test pass\""
sparrow -C "$work" run "make the failing test pass"
printf '\n\033[1mWhat changed:\033[0m\n'
git -C "$work" --no-pager diff --stat
git -C "$work" --no-pager diff
run=$(ls -t "$XDG_STATE_HOME/sparrow/runs" | head -1)
printf '\nRecorded: %s events in %s\n' "$(wc -l < "$XDG_STATE_HOME/sparrow/runs/$run/events.jsonl")" "runs/$run/events.jsonl"
