#!/usr/bin/env bash
# The preemption story on a running server with examples/cluster.yaml applied: team-a borrows
# team-b's idle instance, team-b's job arrives, team-a's borrowing job is preempted, checkpoints
# on SIGTERM, resumes from that checkpoint and finishes with the same model as without the break.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
allot="$root/build/dev/bin/allot"
train=("python3" "$root/examples/train_regression.py")
hps=(--hp steps=2000 --hp checkpoint_every=100 --hp sleep_per_step=0.01)

say() { printf '\n== %s\n' "$*"; }
status() { "$allot" describe "$1" --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["status"], d.get("statusReason", ""))'; }
wait_status() {  # job, status
  for _ in $(seq 600); do
    [[ "$(status "$1")" == "$2"* ]] && return 0
    sleep 0.2
  done
  echo "timed out waiting for $1 to be $2" >&2
  return 1
}

say "team-a submits two training jobs: one runs on its own instance, one borrows team-b's"
a1=$("$allot" submit --queue training --share team-a --name a-own --priority 5 "${hps[@]}" -- "${train[@]}")
a2=$("$allot" submit --queue training --share team-a --name a-borrowing "${hps[@]}" -- "${train[@]}")
wait_status "$a1" RUNNING
wait_status "$a2" RUNNING
sleep 3
"$allot" shares training

say "team-b's job arrives: its own instance is lent out, so the borrowing job is preempted"
b1=$("$allot" submit --queue training --share team-b --name b-short -- /bin/sh -c 'echo team-b working; sleep 5')
for _ in $(seq 100); do
  s=$(status "$a2"); [[ "$s" == *PREEMPTION_IN_PROGRESS* || "$s" == RUNNABLE* ]] && break; sleep 0.1
done
echo "a-borrowing: $(status "$a2")"
wait_status "$b1" RUNNING
echo "b-short:     $(status "$b1")"

say "team-b's job finishes; team-a's job borrows again and resumes from its checkpoint"
wait_status "$b1" SUCCEEDED
wait_status "$a2" SUCCEEDED
wait_status "$a1" SUCCEEDED
"$allot" logs "$a2" --attempt 2 | grep -E "resumed from step|final loss"
"$allot" logs "$a1" | grep -E "final loss"

say "what the record says"
"$allot" describe "$a2" | sed -n '/Preempt/,$p' | head -20
