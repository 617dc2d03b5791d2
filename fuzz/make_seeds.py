#!/usr/bin/env python3
"""Writes the seed corpora under fuzz/corpus/ (checked in; rerun only to change them).

sigv4/: real boto3 'batch' requests, signed by botocore with the AWS test-suite key at the time
the sigv4 target's clock stands at, captured just before they would be sent, in the HTTP/1.1-like
form sigv4_fuzz.cc reads. wire_json/: the bodies of those requests and a few JSON edge cases.
payload/: SageMaker CreateTrainingJob payloads as tests/integration/allot_harness.py builds them.
decode/: request bodies for the decoders of src/api/decode.h, a few per action and per what-if
kind: the first byte picks the decoder (its index in DECODE_ROUTES, 24 for what-if), the rest is
the body (decode_fuzz.cc).
Files named regress_* are inputs the fuzzer found (kept by hand, not written here).
"""
import datetime
import hashlib
import json
import os
from unittest import mock
from urllib.parse import urlsplit

import botocore.auth
import botocore.awsrequest
import botocore.session

HERE = os.path.dirname(os.path.abspath(__file__))
KEY, SECRET = "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
WHEN = datetime.datetime(2015, 8, 30, 12, 36, 0)
INSTANCE = "ml.m5.large"
QUEUE_ARN = "arn:aws:batch:us-west-2:000000000000:job-queue/training"


def payload(script="exit 0", count=1, **extra):
    p = {
        "AlgorithmSpecification": {"TrainingInputMode": "File",
                                   "ContainerEntrypoint": ["/bin/sh", "-c"],
                                   "ContainerArguments": [script]},
        "RoleArn": "arn:aws:iam::000000000000:role/allot-test",
        "OutputDataConfig": {"S3OutputPath": "file:///tmp/allot-test-output"},
        "ResourceConfig": {"InstanceType": INSTANCE, "InstanceCount": count, "VolumeSizeInGB": 1},
        "StoppingCondition": {"MaxRuntimeInSeconds": 3600},
    }
    p.update(extra)
    return json.dumps(p)


PAYLOADS = {
    "minimal": payload(),
    "two_hosts_env": payload("python train.py", 2, TrainingJobName="resnet-1",
                             Environment={"EPOCHS": "3", "LR": "0.1"}),
    "channels_checkpoints": payload(
        "exit 0", HyperParameters={"epochs": "10", "batch-size": "64"},
        InputDataConfig=[{"ChannelName": "train", "DataSource": {"S3DataSource": {
            "S3DataType": "S3Prefix", "S3Uri": "file:///data/train"}}}],
        CheckpointConfig={"S3Uri": "file:///tmp/ckpt", "LocalPath": "/opt/ml/checkpoints"}),
    "instance_groups": json.dumps({
        "AlgorithmSpecification": {"ContainerEntrypoint": ["/bin/true"]},
        "ResourceConfig": {"InstanceGroups": [
            {"InstanceGroupName": "a", "InstanceType": INSTANCE, "InstanceCount": 2},
            {"InstanceGroupName": "b", "InstanceType": "ml.g5.xlarge", "InstanceCount": 1}]}}),
    "refused_no_entrypoint": json.dumps({"ResourceConfig": {"InstanceType": INSTANCE}}),
    # Near the 10240-byte cap: a deep list where an object belongs (quoted in the refusal).
    "refused_deep_resource_config": '{"AlgorithmSpecification": {"ContainerEntrypoint": ["x"]}, '
                                    '"ResourceConfig": ' + "[" * 5000 + "]" * 5000 + "}",
}

# (operation, parameters, signing service) for the sigv4 corpus; the last signs for another
# service, which Verify refuses.
CALLS = [
    ("submit_service_job", dict(jobName="job-1", jobQueue="training",
                                serviceJobType="SAGEMAKER_TRAINING", schedulingPriority=5,
                                shareIdentifier="team-a",
                                serviceRequestPayload=PAYLOADS["two_hosts_env"],
                                tags={"team": "vision"},
                                clientToken="0b3e1f3c-8f4e-4bd5-9a55-1b2d3c4d5e6f"), "batch"),
    ("describe_job_queues", dict(jobQueues=["training"]), "batch"),
    ("create_service_environment", dict(
        serviceEnvironmentName="env", serviceEnvironmentType="SAGEMAKER_TRAINING",
        capacityLimits=[{"capacityUnit": INSTANCE, "maxCapacity": 4}]), "batch"),
    ("list_tags_for_resource", dict(resourceArn=QUEUE_ARN), "batch"),
    ("untag_resource", dict(resourceArn=QUEUE_ARN, tagKeys=["b", "a b", "a-b"]), "batch"),
    ("list_service_jobs", dict(jobQueue="training", jobStatus="RUNNABLE", maxResults=2), "batch"),
    ("describe_job_queues", dict(), "execute-api"),
]
# botocore's own unsigned headers vary by machine and call; the seeds carry fixed ones.
STABLE_HEADERS = {"User-Agent": "Boto3/1.43.11 md/Botocore#1.43.11 ua/2.1 os/linux lang/python#3.11",
                  "amz-sdk-invocation-id": "7d0b2c2e-3c49-4a2b-8d7e-2f1e4f7f9a10"}

JSON_EDGES = {
    "numbers": b'[0, -0, 1.5e300, -9223372036854775808, 18446744073709551615, 1e-320, 12345678901234567890123]',
    "unicode": '{"caf\u00e9": "\\u00e9\\ud83d\\ude00\\n\\t\\"", "k": "\u4e2d\u6587"}'.encode(),
    "deep_64": b"[" * 64 + b"]" * 64,
    "deep_65": b"[" * 65 + b"]" * 65,
    "duplicate_keys": b'{"a": 1, "a": {"b": [null, true, false]}}',
    "invalid_utf8": b'{"a": "\xff\xfe"}',
}


# decode_fuzz.cc's kRoutes, in api::Request's order; byte 24 is the what-if decoder.
DECODE_ROUTES = [
    "createserviceenvironment", "updateserviceenvironment", "describeserviceenvironments",
    "deleteserviceenvironment", "createschedulingpolicy", "updateschedulingpolicy",
    "describeschedulingpolicies", "listschedulingpolicies", "deleteschedulingpolicy",
    "createjobqueue", "updatejobqueue", "describejobqueues", "deletejobqueue", "createquotashare",
    "updatequotashare", "describequotashare", "listquotashares", "deletequotashare",
    "submitservicejob", "updateservicejob", "describeservicejob", "listservicejobs",
    "terminateservicejob", "getjobqueuesnapshot",
]
WHATIF = len(DECODE_ROUTES)
ENV_ARN = "arn:aws:batch:us-west-2:000000000000:service-environment/env"
POLICY_ARN = "arn:aws:batch:us-west-2:000000000000:scheduling-policy/quota"
SHARE_ARN = QUEUE_ARN + "/quota-share/team-a"
SUBMIT = dict(jobName="job-1", jobQueue="training", serviceJobType="SAGEMAKER_TRAINING",
              serviceRequestPayload=PAYLOADS["minimal"])
SHARE_UPDATE = dict(quotaShareArn=SHARE_ARN,
                    capacityLimits=[{"capacityUnit": INSTANCE, "maxCapacity": 8}],
                    resourceSharingConfiguration={"strategy": "LEND_AND_BORROW",
                                                  "borrowLimit": 50},
                    preemptionConfiguration={"inSharePreemption": "ENABLED"}, state="ENABLED")
TIME_LIMIT = [{"reason": "stuck", "state": "RUNNABLE", "maxTimeSeconds": 600,
               "action": "TERMINATE"}]
# route (or "whatif") -> (seed name, body); the refused_* ones are refused, on purpose.
DECODE = {
    "createserviceenvironment": [
        ("minimal", dict(serviceEnvironmentName="env", serviceEnvironmentType="SAGEMAKER_TRAINING",
                         capacityLimits=[{"capacityUnit": INSTANCE, "maxCapacity": 4}])),
        ("num_instances_tags", dict(serviceEnvironmentName="env-2", state="DISABLED",
                                    serviceEnvironmentType="SAGEMAKER_TRAINING",
                                    capacityLimits=[{"capacityUnit": "NUM_INSTANCES",
                                                     "maxCapacity": 0}],
                                    tags={"b": "2", "a": "1"})),
        ("refused_two_units_with_num_instances", dict(
            serviceEnvironmentName="env", serviceEnvironmentType="SAGEMAKER_TRAINING",
            capacityLimits=[{"capacityUnit": "NUM_INSTANCES", "maxCapacity": 1},
                            {"capacityUnit": INSTANCE, "maxCapacity": 1}])),
    ],
    "updateserviceenvironment": [
        ("state", dict(serviceEnvironment="env", state="DISABLED")),
        ("arn_limits", dict(serviceEnvironment=ENV_ARN,
                            capacityLimits=[{"capacityUnit": INSTANCE, "maxCapacity": 2},
                                            {"capacityUnit": "ml.g5.xlarge", "maxCapacity": 1}])),
    ],
    "describeserviceenvironments": [
        ("all", {}),
        ("named_page", dict(serviceEnvironments=["env", ENV_ARN], maxResults=1, nextToken="env")),
    ],
    "deleteserviceenvironment": [("arn", dict(serviceEnvironment=ENV_ARN)),
                                 ("refused_slash", dict(serviceEnvironment="env/x"))],
    "createschedulingpolicy": [
        ("minimal", dict(name="quota")),
        ("quota_share_policy", dict(name="quota", tags={"team": "ml"},
                                    quotaSharePolicy={"idleResourceAssignmentStrategy": "FIFO"})),
        ("refused_fairshare", dict(name="fs", fairsharePolicy={"shareDecaySeconds": 60})),
    ],
    "updateschedulingpolicy": [
        ("arn", dict(arn=POLICY_ARN,
                     quotaSharePolicy={"idleResourceAssignmentStrategy": "FIFO"})),
    ],
    "describeschedulingpolicies": [("arns", dict(arns=[POLICY_ARN, "quota"]))],
    "listschedulingpolicies": [("all", {}), ("page", dict(maxResults=100, nextToken="quota"))],
    "deleteschedulingpolicy": [("name", dict(arn="quota"))],
    "createjobqueue": [
        ("sdk", dict(jobQueueName="training", priority=1, jobQueueType="SAGEMAKER_TRAINING",
                     computeEnvironmentOrder=[],
                     serviceEnvironmentOrder=[{"order": 1, "serviceEnvironment": "env"}])),
        ("full", dict(jobQueueName="training", priority=1000, state="ENABLED",
                      schedulingPolicyArn=POLICY_ARN, tags={"team": "ml"},
                      serviceEnvironmentOrder=[{"order": 0, "serviceEnvironment": ENV_ARN}],
                      jobStateTimeLimitActions=TIME_LIMIT)),
        ("refused_cancel", dict(jobQueueName="q", priority=0,
                                serviceEnvironmentOrder=[{"serviceEnvironment": "env"}],
                                jobStateTimeLimitActions=[dict(TIME_LIMIT[0], action="CANCEL")])),
    ],
    "updatejobqueue": [
        ("priority_state", dict(jobQueue="training", priority=7, state="DISABLED")),
        ("policy_limits", dict(jobQueue=QUEUE_ARN, schedulingPolicyArn="quota",
                               jobStateTimeLimitActions=TIME_LIMIT)),
    ],
    "describejobqueues": [("all", {}), ("named", dict(jobQueues=["training", QUEUE_ARN]))],
    "deletejobqueue": [("name", dict(jobQueue="training"))],
    "createquotashare": [
        ("reserve", dict(quotaShareName="team-a", jobQueue="training",
                         capacityLimits=[{"capacityUnit": INSTANCE, "maxCapacity": 2}],
                         resourceSharingConfiguration={"strategy": "RESERVE"},
                         preemptionConfiguration={"inSharePreemption": "DISABLED"})),
        ("lend_and_borrow", dict(quotaShareName="team-b", jobQueue=QUEUE_ARN, state="DISABLED",
                                 capacityLimits=[{"capacityUnit": INSTANCE, "maxCapacity": 4},
                                                 {"capacityUnit": "ml.g5.xlarge",
                                                  "maxCapacity": 1}],
                                 resourceSharingConfiguration={"strategy": "LEND_AND_BORROW",
                                                               "borrowLimit": -1},
                                 preemptionConfiguration={"inSharePreemption": "ENABLED"},
                                 tags={"cost-center": "42"})),
        ("refused_borrow_with_reserve", dict(
            quotaShareName="team-c", jobQueue="training",
            capacityLimits=[{"capacityUnit": INSTANCE, "maxCapacity": 2}],
            resourceSharingConfiguration={"strategy": "RESERVE", "borrowLimit": 10},
            preemptionConfiguration={"inSharePreemption": "DISABLED"})),
    ],
    "updatequotashare": [("all_fields", SHARE_UPDATE),
                         ("state", dict(quotaShareArn=SHARE_ARN, state="DISABLED"))],
    "describequotashare": [("arn", dict(quotaShareArn=SHARE_ARN)),
                           ("refused_no_share", dict(quotaShareArn=QUEUE_ARN))],
    "listquotashares": [("page", dict(jobQueue="training", maxResults=20, nextToken="team-a"))],
    "deletequotashare": [("arn", dict(quotaShareArn=SHARE_ARN))],
    "submitservicejob": [
        ("minimal", SUBMIT),
        ("everything", dict(SUBMIT, jobQueue=QUEUE_ARN, quotaShareName="team-a",
                            schedulingPriority=9999, clientToken="tok-1",
                            serviceRequestPayload=PAYLOADS["channels_checkpoints"],
                            retryStrategy={"attempts": 3, "evaluateOnExit": [
                                {"action": "EXIT", "onStatusReason": "OOM*"},
                                {"action": "retry"}]},
                            timeoutConfig={"attemptDurationSeconds": 3600},
                            preemptionConfiguration={"preemptionRetriesBeforeTermination": 2},
                            tags={"b": "2", "a": "1"})),
        ("instance_groups", dict(SUBMIT, serviceRequestPayload=PAYLOADS["instance_groups"])),
        ("refused_share_identifier", dict(SUBMIT, shareIdentifier="team-a")),
        ("refused_float_priority", dict(SUBMIT, schedulingPriority=1.5)),
    ],
    "updateservicejob": [("priority", dict(jobId="1", schedulingPriority=5))],
    "describeservicejob": [("id", dict(jobId="1"))],
    "listservicejobs": [
        ("default", dict(jobQueue="training")),
        ("job_name_prefix", dict(jobQueue="training", maxResults=2, nextToken="123.45",
                                 filters=[{"name": "JOB_NAME", "values": ["train*"]}])),
        ("share_status", dict(jobQueue=QUEUE_ARN, jobStatus="RUNNABLE",
                              filters=[{"name": "QUOTA_SHARE_NAME", "values": ["team-a"]}])),
        ("created_after", dict(jobQueue="training",
                               filters=[{"name": "AFTER_CREATED_AT",
                                         "values": ["1700000000000"]}])),
        ("refused_two_filters", dict(jobQueue="training", filters=[
            {"name": "BEFORE_CREATED_AT", "values": ["1"]},
            {"name": "AFTER_CREATED_AT", "values": ["0"]}])),
    ],
    "terminateservicejob": [("reason", dict(jobId="1", reason="no longer needed"))],
    "getjobqueuesnapshot": [("name", dict(jobQueue="training"))],
    "whatif": [
        ("submit", dict(submit=dict(SUBMIT, quotaShareName="team-a",
                                    timeoutConfig={"attemptDurationSeconds": 60}))),
        ("update_priority", dict(updatePriority=dict(jobId="1", schedulingPriority=100))),
        ("update_quota_share", dict(updateQuotaShare=SHARE_UPDATE)),
        ("refused_two_kinds", dict(submit=SUBMIT, updatePriority=dict(jobId="1",
                                                                      schedulingPriority=1))),
    ],
}


def write_decode_seeds():
    assert len(DECODE_ROUTES) == 24 and set(DECODE) == set(DECODE_ROUTES) | {"whatif"}
    for route, seeds in DECODE.items():
        which = WHATIF if route == "whatif" else DECODE_ROUTES.index(route)
        for name, body in seeds:
            write("decode", f"{route}_{name}", bytes([which]) + json.dumps(body).encode())


def capture(client, operation, params):
    """The request botocore would send for one call, as (method, target, headers, body)."""
    seen = {}

    def before_send(request, **_):
        seen["request"] = request
        return botocore.awsrequest.AWSResponse(request.url, 200, {}, None)

    client.meta.events.register("before-send", before_send)
    try:
        with mock.patch("botocore.auth.get_current_datetime", return_value=WHEN):
            getattr(client, operation)(**params)
    except Exception:  # the fake empty response does not parse; the request is what we want
        pass
    client.meta.events.unregister("before-send", before_send)
    r = seen["request"]
    parts = urlsplit(r.url)
    target = parts.path + ("?" + parts.query if parts.query else "")
    headers = [("Host", parts.netloc)]
    for k, v in r.headers.items():
        headers.append((k, STABLE_HEADERS.get(k, v.decode() if isinstance(v, bytes) else v)))
    body = r.body or b""
    if isinstance(body, str):
        body = body.encode()
    return r.method, target, headers, body


def add_content_sha256(request, **_):
    request.headers["X-Amz-Content-Sha256"] = hashlib.sha256(request.body or b"").hexdigest()


def client(service, content_sha256=False):
    session = botocore.session.get_session()
    c = session.create_client("batch", region_name="us-west-2",
                              endpoint_url="http://127.0.0.1:8742",
                              aws_access_key_id=KEY, aws_secret_access_key=SECRET)
    if service != "batch":
        c._request_signer._signing_name = service  # noqa: SLF001 (seed generation only)
    if content_sha256:
        c.meta.events.register("before-sign", add_content_sha256)
    return c


def write(folder, name, data):
    os.makedirs(os.path.join(HERE, "corpus", folder), exist_ok=True)
    with open(os.path.join(HERE, "corpus", folder, name), "wb") as f:
        f.write(data)


def write_request(name, request):
    method, target, headers, body = request
    text = f"{method} {target}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers) + "\r\n"
    write("sigv4", name, text.encode() + body)


def main():
    for i, (operation, params, service) in enumerate(CALLS):
        request = capture(client(service), operation, params)
        suffix = "" if service == "batch" else f"_{service}"
        write_request(f"{i:02d}_{operation}{suffix}", request)
        if request[3]:
            write("wire_json", operation, request[3])
    # A signed X-Amz-Content-Sha256 header, as `allot` can send.
    write_request(f"{len(CALLS):02d}_describe_job_queues_content_sha256",
                  capture(client("batch", content_sha256=True), "describe_job_queues",
                          dict(jobQueues=["training"])))
    for name, data in JSON_EDGES.items():
        write("wire_json", name, data)
    for name, data in PAYLOADS.items():
        write("payload", name, data.encode())
        if "deep" not in name:
            write("wire_json", "payload_" + name, data.encode())
    write_decode_seeds()


if __name__ == "__main__":
    main()
