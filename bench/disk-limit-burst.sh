#!/usr/bin/env bash
# How far past its disk limit a job gets before the supervisor stops it: a job writes 20 files of
# 150 MB one after another (each under the per-file limit) under --job-disk-limit 200M, and its
# tree is measured with du every 50 ms. Usage: bench/disk-limit-burst.sh [ALLOT_BIN] [RUNS]
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-build/release/bin/allot}; RUNS=${2:-3}; PORT=$((20000 + RANDOM % 20000)); D=$(mktemp -d /var/tmp/burst.XXXX)
$B server --data-dir $D --listen 127.0.0.1:$PORT --job-disk-limit 200M > $D/server.log 2>&1 &
SP=$!
export AWS_SHARED_CREDENTIALS_FILE=$D/credentials AWS_DEFAULT_REGION=local
for i in $(seq 100); do curl -sf http://127.0.0.1:$PORT/healthz >/dev/null && break; sleep 0.1; done
$B apply --endpoint http://127.0.0.1:$PORT -f $ROOT/examples/cluster.yaml >/dev/null
cat > $D/sub.py <<PY
import boto3, json, time, subprocess, sys
c = boto3.client("batch", endpoint_url="http://127.0.0.1:$PORT")
q = c.describe_job_queues()["jobQueues"][0]["jobQueueName"]
shares = c.list_quota_shares(jobQueue=q)["quotaShares"]
burst = "for i in \$(seq 1 20); do head -c 150000000 /dev/zero > /opt/ml/model/f\$i || echo fail \$i; done; sleep 30"
p = {"AlgorithmSpecification": {"ContainerEntrypoint": ["/bin/sh", "-c"], "ContainerArguments": [burst]},
     "ResourceConfig": {"InstanceType": "ml.g5.xlarge", "InstanceCount": 1}}
kw = {"quotaShareName": shares[0]["quotaShareName"]} if shares else {}
j = c.submit_service_job(jobName="burst", jobQueue=q, serviceJobType="SAGEMAKER_TRAINING", serviceRequestPayload=json.dumps(p), **kw)["jobId"]
peak = 0; t0 = time.time()
while time.time() - t0 < 90:
    d = c.describe_service_job(jobId=j)
    out = subprocess.run(["du", "-sb", "$D/jobs/" + j], capture_output=True, text=True).stdout.split()
    if out: peak = max(peak, int(out[0]))
    if d["status"] in ("SUCCEEDED", "FAILED"): break
    time.sleep(0.05)
print(d["status"], d.get("statusReason", "")[:100], "peak MB %.0f" % (peak / 1e6))
PY
for _ in $(seq "$RUNS"); do "$ROOT/scripts/python-with-boto3" "$D/sub.py"; done
kill $SP; wait $SP 2>/dev/null; rm -rf $D
