#!/usr/bin/env bash
# `make run` (after the build): starts `allot server` in the background with its defaults (data in
# ./allot-data, listening on 127.0.0.1:8742; its log appended to allot-data/server.log), applies
# examples/cluster.yaml and plays the preemption demo on the first start only, and says how to
# submit a job, watch it and stop the server. A server that already answers on 8742 is reused.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bin="$root/build/dev/bin/allot"
data=allot-data
endpoint=http://127.0.0.1:8742

healthy() { curl -fsS -m 2 "$endpoint/healthz" >/dev/null 2>&1; }

if [ ! -x "$bin" ]; then
  echo "run.sh: $bin is missing; build first (make build)" >&2
  exit 1
fi

# A data directory without a database is a first start: only then are the example cluster and
# the demo applied. A later `make run` finds the cluster as it was left (edited, perhaps, with
# the API or `allot apply`) and must not put the example back over it nor replay the demo.
fresh=""
[ -f "$data/allot.db" ] || fresh=yes

if healthy; then
  echo "A server already answers on $endpoint; reusing it."
  started=""
  fresh=""
else
  mkdir -p "$data"
  # Sandboxed jobs see only system directories: the examples' training script and the Python
  # training helper are shown to them read-only (docs/security.md).
  nohup "$bin" server --job-readonly-path "$root/examples" --job-readonly-path "$root/python" \
    >>"$data/server.log" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$data/server.pid"
  started=yes
  for _ in $(seq 1 100); do
    healthy && break
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "run.sh: allot server exited; its log ($data/server.log):" >&2
      tail -n 20 "$data/server.log" >&2
      exit 1
    fi
    sleep 0.1
  done
  if ! healthy; then
    echo "run.sh: allot server (pid $pid) did not answer $endpoint/healthz within 10 s" >&2
    tail -n 20 "$data/server.log" >&2
    exit 1
  fi
  echo "Started allot server (pid $pid, log $data/server.log, data in $data)."
fi

creds="$root/$data/credentials"
if [ ! -f "$creds" ]; then
  echo "run.sh: $creds does not exist: the server on $endpoint was not started from $root;" >&2
  echo "        point AWS_SHARED_CREDENTIALS_FILE at the credentials file in its data directory." >&2
  exit 1
fi
export AWS_SHARED_CREDENTIALS_FILE="$creds"
export AWS_ENDPOINT_URL_BATCH="$endpoint"
export AWS_DEFAULT_REGION=local

echo
if [ -n "$fresh" ]; then
  echo "Applying examples/cluster.yaml:"
  "$bin" apply -f examples/cluster.yaml | sed 's/^/  /'
else
  echo "The server keeps the cluster it had; examples/cluster.yaml is not applied again"
  echo "(allot apply -f examples/cluster.yaml --dry-run shows what applying it would change)."
fi

# Two example team members (docs/policies/team-member.json for the queue `training`): alice
# may submit to and manage team-a's jobs, bob team-b's. Their keys become profiles [alice] and
# [bob] of the same credentials file. Made once; a later run finds them.
echo
echo "Example users (docs/security.md):"
for pair in alice:team-a bob:team-b; do
  user=${pair%%:*}
  share=${pair##*:}
  if "$bin" users list 2>/dev/null | grep -qw "^$user"; then
    echo "  $user exists (profile [$user] of $creds)"
    continue
  fi
  sed -e 's|job-queue/q"|job-queue/training"|g' -e 's|job-queue/q/|job-queue/training/|g' \
    -e "s|team-a|$share|g" docs/policies/team-member.json >"$data/$user-policy.json"
  "$bin" users create "$user" --policy "$data/$user-policy.json" --credentials-file "$creds" \
    >/dev/null
  echo "  $user: member of $share (policy $data/$user-policy.json, profile [$user] of $creds)"
done

if [ -n "$started" ] || { [ -f "$data/server.pid" ] && kill -0 "$(cat "$data/server.pid")" 2>/dev/null; }; then
  stop="kill \$(cat $data/server.pid)"
else
  stop="kill <pid of the allot server that was already running>"
fi

cat <<TEXT

Allot is running on $endpoint. The dashboard: $endpoint/ui/
(sign in with aws_access_key_id and aws_secret_access_key of [default], or [alice], in $creds)

In your shell:

  export AWS_SHARED_CREDENTIALS_FILE=$creds
  export AWS_ENDPOINT_URL_BATCH=$endpoint
  export AWS_DEFAULT_REGION=local
  export PATH=$root/build/dev/bin:\$PATH

Submit a job to team-a's share of the queue "training" and watch it:

  JOB=\$(allot submit --queue training --share team-a --name hello -- /bin/sh -c 'echo hi; sleep 20')
  allot jobs                      # every job, newest first
  allot jobs --status RUNNING     # or RUNNABLE, SUCCEEDED, FAILED, ...
  allot describe \$JOB             # attempts, preemptions, why it waits
  allot shares training           # per share: limit, used, borrowed, lent, waiting
  allot priority \$JOB 10          # change its scheduling priority
  allot cancel \$JOB               # terminate it

The same with the AWS CLI and boto3 (they read the same three variables):

  aws batch submit-service-job --job-queue training --quota-share-name team-a --job-name hello \\
    --service-job-type SAGEMAKER_TRAINING --service-request-payload \\
    '{"AlgorithmSpecification": {"ContainerEntrypoint": ["/bin/sh"], "ContainerArguments": ["-c", "echo hi"]},
      "ResourceConfig": {"InstanceType": "ml.g5.xlarge", "InstanceCount": 1}}'
  aws batch list-service-jobs --job-queue training --job-status SUCCEEDED
  aws batch describe-service-job --job-id \$JOB
  python3 -c 'import boto3, json; b = boto3.client("batch"); print(b.submit_service_job(
      jobQueue="training", quotaShareName="team-a", jobName="hello", serviceJobType="SAGEMAKER_TRAINING",
      serviceRequestPayload=json.dumps({"AlgorithmSpecification": {"ContainerEntrypoint": ["/bin/sh"],
          "ContainerArguments": ["-c", "echo hi"]}, "ResourceConfig": {"InstanceType": "ml.g5.xlarge"}}))["jobId"])'
  python3 -c 'import boto3; print(boto3.client("batch").list_service_jobs(jobQueue="training", jobStatus="SUCCEEDED")["jobSummaryList"])'

Act as a team member: the admin key (profile default) may do anything; alice only team-a's work.

  AWS_PROFILE=alice allot submit --queue training --share team-a --name mine -- /bin/sh -c 'echo hi'
  AWS_PROFILE=alice allot submit --queue training --share team-b --name theirs -- /bin/true
                                  # 403 AccessDeniedException: alice's policy allows team-a only
  allot audit --user alice        # every change and every denied attempt, newest first
  allot users list                # users, their keys and policies (admins only)

Edit examples/cluster.yaml and run "allot apply -f examples/cluster.yaml" to change the cluster;
"allot bench submit --clients 16 --jobs 20000" measures submission throughput.
Job output is under $data/jobs/<job id>/.

Stop the server:  $stop
TEXT

# The preemption story, once, on the freshly applied cluster (ALLOT_DEMO=0 skips it): team-a
# borrows, team-b's job arrives, team-a's job is preempted, resumes from its checkpoint and ends.
if [ "${ALLOT_DEMO:-1}" != 0 ] && [ -n "$fresh" ]; then
  echo
  echo "Demo (about 30 s; ALLOT_DEMO=0 make run skips it):"
  AWS_SHARED_CREDENTIALS_FILE="$(cd "$data" && pwd)/credentials" AWS_ENDPOINT_URL_BATCH="$endpoint" \
    AWS_DEFAULT_REGION=local scripts/demo-preemption.sh
fi
