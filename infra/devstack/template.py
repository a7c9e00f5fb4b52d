"""Derive the local AWS resources (tables, buckets, queues) from `template.yaml`.

`template.yaml` is the single source of truth for the infrastructure. The moto server of the
local stack and the `moto.mock_aws` unit tests both build their DynamoDB tables, S3 buckets
and SQS queues through `local_resources` + `create_resources`, so neither can drift from what
is deployed: change a key schema or a TTL attribute in the template and the local stack and the
tests follow.

Only what these resources need is resolved: `Ref` (parameters with their defaults or given
values, pseudo parameters, resources), `Fn::Sub`, `Fn::GetAtt` (`Arn`, `QueueName`),
`Fn::FindInMap`, `Fn::Join`, `Fn::Select`, `Fn::If` and the condition functions.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml
from botocore.exceptions import ClientError

DEFAULT_STACK_NAME = "csagent-local"
LOCAL_ACCOUNT_ID = "123456789012"
LOCAL_REGION = "us-east-1"

TABLE_TYPE = "AWS::DynamoDB::Table"
BUCKET_TYPE = "AWS::S3::Bucket"
QUEUE_TYPE = "AWS::SQS::Queue"


# ----------------------------------------------------------------------------------------------
# YAML loading with CloudFormation short tags
# ----------------------------------------------------------------------------------------------
class CfnLoader(yaml.SafeLoader):
    """A safe YAML loader that turns CloudFormation short tags into their long (dict) form.

    `!Ref X` becomes `{"Ref": "X"}`, `!Condition C` becomes `{"Condition": "C"}`,
    `!GetAtt A.B` becomes `{"Fn::GetAtt": ["A", "B"]}` and every other `!Name v` becomes
    `{"Fn::Name": v}` - the JSON form CloudFormation itself works on.
    """


def _construct_cfn_tag(loader: CfnLoader, tag_suffix: str, node: yaml.Node) -> dict[str, Any]:
    value: Any
    if isinstance(node, yaml.ScalarNode):
        value = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    elif isinstance(node, yaml.MappingNode):
        value = loader.construct_mapping(node, deep=True)
    else:  # pragma: no cover - yaml has no other node kinds
        raise yaml.constructor.ConstructorError(None, None, f"unexpected node {node!r}", node.start_mark)
    if tag_suffix in ("Ref", "Condition"):
        return {tag_suffix: value}
    if tag_suffix == "GetAtt" and isinstance(value, str):
        resource, _, attribute = value.partition(".")
        return {"Fn::GetAtt": [resource, attribute]}
    return {f"Fn::{tag_suffix}": value}


CfnLoader.add_multi_constructor("!", _construct_cfn_tag)


def default_template_path() -> Path:
    """`template.yaml` at the repository root (this package lives in `<root>/infra/devstack`)."""
    return Path(__file__).resolve().parents[2] / "template.yaml"


def load_template(template_path: Path | str | None = None) -> dict[str, Any]:
    """Parse a CloudFormation/SAM template (YAML or JSON) into plain dicts and lists."""
    path = Path(template_path) if template_path is not None else default_template_path()
    with path.open(encoding="utf-8") as handle:
        document = yaml.load(handle, Loader=CfnLoader)  # noqa: S506 - CfnLoader is a SafeLoader
    if not isinstance(document, dict) or "Resources" not in document:
        raise ValueError(f"{path} is not a CloudFormation template (no Resources section)")
    return document


# ----------------------------------------------------------------------------------------------
# Resource specifications
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TableSpec:
    """A DynamoDB table as the template declares it, with its name resolved."""

    logical_id: str
    table_name: str
    key_schema: tuple[Mapping[str, str], ...]
    attribute_definitions: tuple[Mapping[str, str], ...]
    billing_mode: str
    global_secondary_indexes: tuple[Mapping[str, Any], ...] = ()
    local_secondary_indexes: tuple[Mapping[str, Any], ...] = ()
    ttl_attribute: str | None = None
    provisioned_throughput: Mapping[str, int] | None = None
    stream_view_type: str | None = None

    @property
    def hash_key(self) -> str:
        """Name of the partition key attribute."""
        return next(k["AttributeName"] for k in self.key_schema if k["KeyType"] == "HASH")

    def create_table_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for `dynamodb.create_table` (boto3 client API)."""
        kwargs: dict[str, Any] = {
            "TableName": self.table_name,
            "KeySchema": [dict(k) for k in self.key_schema],
            "AttributeDefinitions": [dict(a) for a in self.attribute_definitions],
            "BillingMode": self.billing_mode,
        }
        if self.global_secondary_indexes:
            kwargs["GlobalSecondaryIndexes"] = [dict(i) for i in self.global_secondary_indexes]
        if self.local_secondary_indexes:
            kwargs["LocalSecondaryIndexes"] = [dict(i) for i in self.local_secondary_indexes]
        if self.provisioned_throughput is not None:
            kwargs["ProvisionedThroughput"] = dict(self.provisioned_throughput)
        if self.stream_view_type is not None:
            kwargs["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": self.stream_view_type}
        return kwargs


@dataclass(frozen=True)
class BucketSpec:
    """An S3 bucket with the settings that matter to code running against it."""

    logical_id: str
    bucket_name: str
    lifecycle_rules: tuple[Mapping[str, Any], ...] = ()
    encryption_rules: tuple[Mapping[str, Any], ...] = ()
    public_access_block: Mapping[str, bool] | None = None
    ownership_controls: tuple[Mapping[str, str], ...] = ()
    versioning: bool = False


@dataclass(frozen=True)
class QueueSpec:
    """An SQS queue: its name, its attributes in SQS API form, and its dead-letter queue."""

    logical_id: str
    queue_name: str
    attributes: Mapping[str, str] = field(default_factory=dict)
    dead_letter_queue: str | None = None  # logical id of the DLQ this queue redrives to


@dataclass(frozen=True)
class LocalResources:
    """Everything `create_resources` builds for one stack name, resolved from the template."""

    stack_name: str
    account_id: str
    region: str
    tables: tuple[TableSpec, ...]
    buckets: tuple[BucketSpec, ...]
    queues: tuple[QueueSpec, ...]

    def table(self, logical_id: str) -> TableSpec:
        """The table declared under `logical_id` (KeyError if the template has none)."""
        return _by_logical_id(self.tables, logical_id)

    def bucket(self, logical_id: str) -> BucketSpec:
        """The bucket declared under `logical_id` (KeyError if the template has none)."""
        return _by_logical_id(self.buckets, logical_id)

    def queue(self, logical_id: str) -> QueueSpec:
        """The queue declared under `logical_id` (KeyError if the template has none)."""
        return _by_logical_id(self.queues, logical_id)

    def names(self) -> dict[str, str]:
        """Logical id -> physical name of every table, bucket and queue (for logs and scripts)."""
        named: list[TableSpec | BucketSpec | QueueSpec] = [*self.tables, *self.buckets, *self.queues]
        return {spec.logical_id: _physical_name(spec) for spec in named}

    def queue_url(self, logical_id: str, endpoint_url: str | None = None) -> str:
        """The queue URL: on `endpoint_url` (moto server) if given, else the AWS form."""
        name = self.queue(logical_id).queue_name
        if endpoint_url:
            return f"{endpoint_url.rstrip('/')}/{self.account_id}/{name}"
        return f"https://sqs.{self.region}.amazonaws.com/{self.account_id}/{name}"


def _by_logical_id(specs: tuple[Any, ...], logical_id: str) -> Any:
    for spec in specs:
        if spec.logical_id == logical_id:
            return spec
    raise KeyError(f"no resource {logical_id!r} of that kind in the template")


def _physical_name(spec: TableSpec | BucketSpec | QueueSpec) -> str:
    if isinstance(spec, TableSpec):
        return spec.table_name
    if isinstance(spec, BucketSpec):
        return spec.bucket_name
    return spec.queue_name


# ----------------------------------------------------------------------------------------------
# Intrinsic function resolution (the subset resource names and settings use)
# ----------------------------------------------------------------------------------------------
class UnresolvableError(ValueError):
    """A value in the template cannot be resolved locally (unknown function, missing parameter)."""


class _Resolver:
    """Resolves intrinsic functions against parameters, pseudo parameters and resources."""

    def __init__(
        self,
        template: Mapping[str, Any],
        stack_name: str,
        account_id: str,
        region: str,
        parameters: Mapping[str, Any],
    ) -> None:
        self.template = template
        self.resources: Mapping[str, Any] = template.get("Resources", {})
        self.mappings: Mapping[str, Any] = template.get("Mappings", {})
        self.conditions: Mapping[str, Any] = template.get("Conditions", {})
        self.account_id = account_id
        self.region = region
        self.pseudo: dict[str, Any] = {
            "AWS::StackName": stack_name,
            "AWS::AccountId": account_id,
            "AWS::Region": region,
            "AWS::Partition": "aws",
            "AWS::URLSuffix": "amazonaws.com",
            "AWS::StackId": f"arn:aws:cloudformation:{region}:{account_id}:stack/{stack_name}/local",
            "AWS::NoValue": None,
        }
        self.parameters = self._parameter_values(template.get("Parameters", {}), parameters)
        self._functions: dict[str, Callable[[Any], Any]] = {
            "Ref": self._ref,
            "Fn::Sub": self._sub,
            "Fn::GetAtt": self._get_att,
            "Fn::FindInMap": self._find_in_map,
            "Fn::Join": self._join,
            "Fn::Select": self._select,
            "Fn::If": self._if,
            "Fn::Equals": self._equals,
            "Fn::And": lambda args: all(self.resolve(a) for a in args),
            "Fn::Or": lambda args: any(self.resolve(a) for a in args),
            "Fn::Not": lambda args: not self.resolve(args[0]),
            "Condition": self.condition,
        }

    @staticmethod
    def _parameter_values(declared: Mapping[str, Any], given: Mapping[str, Any]) -> dict[str, Any]:
        unknown = set(given) - set(declared)
        if unknown:
            raise UnresolvableError(f"unknown template parameters: {sorted(unknown)}")
        values: dict[str, Any] = {}
        for name, spec in declared.items():
            if name in given:
                value = given[name]
            elif "Default" in spec:
                value = spec["Default"]
            else:
                continue  # resolved lazily: only an error if something actually needs it
            if spec.get("Type") == "CommaDelimitedList" and isinstance(value, str):
                value = [part.strip() for part in value.split(",")]
            elif not isinstance(value, list):
                value = str(value)
            values[name] = value
        return values

    # -- entry point ----------------------------------------------------------------------------
    def resolve(self, value: Any) -> Any:
        """Return `value` with every intrinsic function replaced by its local result."""
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        if isinstance(value, dict):
            if len(value) == 1:
                ((key, argument),) = value.items()
                if key in self._functions:
                    return self._functions[key](argument)
                if key.startswith("Fn::"):
                    raise UnresolvableError(f"{key} is not supported by the local resolver")
            return {k: self.resolve(v) for k, v in value.items()}
        return value

    def condition(self, name: str) -> bool:
        """Evaluate the named condition of the template."""
        if name not in self.conditions:
            raise UnresolvableError(f"unknown condition {name!r}")
        return bool(self.resolve(self.conditions[name]))

    # -- functions ------------------------------------------------------------------------------
    def _ref(self, name: str) -> Any:
        if name in self.pseudo:
            return self.pseudo[name]
        if name in self.parameters:
            return self.parameters[name]
        if name in self.template.get("Parameters", {}):
            raise UnresolvableError(f"parameter {name!r} has no Default; pass parameters={{{name!r}: ...}}")
        resource = self._resource(name)
        kind = resource.get("Type")
        if kind == TABLE_TYPE:
            return self._physical_name(name, "TableName")
        if kind == BUCKET_TYPE:
            return self._physical_name(name, "BucketName")
        if kind == QUEUE_TYPE:
            queue = self._physical_name(name, "QueueName")
            return f"https://sqs.{self.region}.amazonaws.com/{self.account_id}/{queue}"
        raise UnresolvableError(f"Ref to {kind} {name!r} is not supported locally")

    def _get_att(self, argument: Any) -> Any:
        resource_name, attribute = argument if isinstance(argument, list) else argument.split(".", 1)
        resource = self._resource(resource_name)
        kind = resource.get("Type")
        if kind == TABLE_TYPE and attribute == "Arn":
            table = self._physical_name(resource_name, "TableName")
            return f"arn:aws:dynamodb:{self.region}:{self.account_id}:table/{table}"
        if kind == BUCKET_TYPE and attribute == "Arn":
            return f"arn:aws:s3:::{self._physical_name(resource_name, 'BucketName')}"
        if kind == QUEUE_TYPE and attribute in ("Arn", "QueueName"):
            queue = self._physical_name(resource_name, "QueueName")
            return (
                queue if attribute == "QueueName" else f"arn:aws:sqs:{self.region}:{self.account_id}:{queue}"
            )
        raise UnresolvableError(f"Fn::GetAtt {resource_name}.{attribute} ({kind}) is not supported locally")

    def _sub(self, argument: Any) -> str:
        if isinstance(argument, list):
            text, extra = argument[0], {k: self.resolve(v) for k, v in argument[1].items()}
        else:
            text, extra = argument, {}
        out: list[str] = []
        position = 0
        while True:
            start = text.find("${", position)
            if start < 0:
                out.append(text[position:])
                break
            end = text.find("}", start)
            if end < 0:
                raise UnresolvableError(f"unterminated ${{ in Fn::Sub {text!r}")
            out.append(text[position:start])
            name = text[start + 2 : end]
            if name.startswith("!"):  # ${!Literal} is an escaped ${Literal}
                out.append("${" + name[1:] + "}")
            elif name in extra:
                out.append(str(extra[name]))
            elif "." in name and name.split(".", 1)[0] in self.resources:
                out.append(str(self._get_att(name)))
            else:
                out.append(str(self._ref(name)))
            position = end + 1
        return "".join(out)

    def _find_in_map(self, argument: list[Any]) -> Any:
        map_name, top, second = (self.resolve(a) for a in argument[:3])
        try:
            return self.mappings[map_name][top][second]
        except KeyError as exc:
            raise UnresolvableError(f"Fn::FindInMap {map_name}/{top}/{second} not in Mappings") from exc

    def _join(self, argument: list[Any]) -> str:
        delimiter, values = argument
        return str(delimiter).join(str(v) for v in self.resolve(values))

    def _select(self, argument: list[Any]) -> Any:
        index, values = argument
        return self.resolve(values)[int(self.resolve(index))]

    def _if(self, argument: list[Any]) -> Any:
        name, when_true, when_false = argument
        return self.resolve(when_true if self.condition(name) else when_false)

    def _equals(self, argument: list[Any]) -> bool:
        left, right = (self.resolve(a) for a in argument)
        return str(left) == str(right)

    # -- helpers --------------------------------------------------------------------------------
    def _resource(self, name: str) -> Mapping[str, Any]:
        if name not in self.resources:
            raise UnresolvableError(f"Ref/GetAtt to unknown resource or parameter {name!r}")
        return self.resources[name]

    def _physical_name(self, logical_id: str, name_property: str) -> str:
        properties = self.resources[logical_id].get("Properties", {})
        if name_property not in properties:
            # CloudFormation would generate a name; the local stack needs a stable one.
            raise UnresolvableError(f"{logical_id} has no {name_property}; give it one in the template")
        return str(self.resolve(properties[name_property]))


# ----------------------------------------------------------------------------------------------
# Template -> resource specs
# ----------------------------------------------------------------------------------------------
def local_resources(
    template_path: Path | str | None = None,
    stack_name: str = DEFAULT_STACK_NAME,
    *,
    account_id: str = LOCAL_ACCOUNT_ID,
    region: str = LOCAL_REGION,
    parameters: Mapping[str, Any] | None = None,
) -> LocalResources:
    """Resolve every DynamoDB table, S3 bucket and SQS queue of the template for `stack_name`.

    `${AWS::StackName}` becomes `stack_name`, `${AWS::AccountId}` the moto default account and
    `${AWS::Region}` `us-east-1` unless given; parameters take their template defaults unless
    overridden in `parameters`.
    """
    template = load_template(template_path)
    resolver = _Resolver(template, stack_name, account_id, region, parameters or {})
    tables: list[TableSpec] = []
    buckets: list[BucketSpec] = []
    queues: list[QueueSpec] = []
    for logical_id, resource in template["Resources"].items():
        kind = resource.get("Type")
        if kind not in (TABLE_TYPE, BUCKET_TYPE, QUEUE_TYPE):
            continue  # functions, APIs, policies...: not part of the local AWS stack
        if "Condition" in resource and not resolver.condition(resource["Condition"]):
            continue
        properties = resolver.resolve(resource.get("Properties", {}))
        if kind == TABLE_TYPE:
            tables.append(_table_spec(logical_id, properties))
        elif kind == BUCKET_TYPE:
            buckets.append(_bucket_spec(logical_id, properties))
        elif kind == QUEUE_TYPE:
            queues.append(_queue_spec(logical_id, properties))
    return LocalResources(
        stack_name=stack_name,
        account_id=account_id,
        region=region,
        tables=tuple(tables),
        buckets=tuple(buckets),
        queues=tuple(_link_dead_letter_queues(queues)),
    )


def _table_spec(logical_id: str, props: Mapping[str, Any]) -> TableSpec:
    if "TableName" not in props:
        raise UnresolvableError(f"{logical_id} has no TableName; give it one in the template")
    billing_mode = props.get("BillingMode", "PROVISIONED")
    ttl = props.get("TimeToLiveSpecification") or {}
    stream = props.get("StreamSpecification") or {}
    throughput = props.get("ProvisionedThroughput")
    return TableSpec(
        logical_id=logical_id,
        table_name=props["TableName"],
        key_schema=tuple(props["KeySchema"]),
        attribute_definitions=tuple(props["AttributeDefinitions"]),
        billing_mode=billing_mode,
        global_secondary_indexes=tuple(_index(i) for i in props.get("GlobalSecondaryIndexes", [])),
        local_secondary_indexes=tuple(_index(i) for i in props.get("LocalSecondaryIndexes", [])),
        ttl_attribute=ttl.get("AttributeName") if _truthy(ttl.get("Enabled", False)) else None,
        provisioned_throughput=(
            {k: int(v) for k, v in throughput.items()}
            if billing_mode == "PROVISIONED" and throughput
            else None
        ),
        stream_view_type=stream.get("StreamViewType"),
    )


def _index(index: Mapping[str, Any]) -> dict[str, Any]:
    # CloudFormation-only index properties (contributor insights, warm throughput) have no
    # create_table counterpart; everything else maps one to one.
    allowed = ("IndexName", "KeySchema", "Projection", "ProvisionedThroughput", "OnDemandThroughput")
    out = {k: v for k, v in index.items() if k in allowed}
    if "ProvisionedThroughput" in out:
        out["ProvisionedThroughput"] = {k: int(v) for k, v in out["ProvisionedThroughput"].items()}
    return out


def _bucket_spec(logical_id: str, props: Mapping[str, Any]) -> BucketSpec:
    if "BucketName" not in props:
        raise UnresolvableError(f"{logical_id} has no BucketName; give it one in the template")
    encryption = (props.get("BucketEncryption") or {}).get("ServerSideEncryptionConfiguration", [])
    lifecycle = (props.get("LifecycleConfiguration") or {}).get("Rules", [])
    block = props.get("PublicAccessBlockConfiguration")
    return BucketSpec(
        logical_id=logical_id,
        bucket_name=props["BucketName"],
        lifecycle_rules=tuple(_lifecycle_rule(logical_id, rule) for rule in lifecycle),
        encryption_rules=tuple(_encryption_rule(rule) for rule in encryption),
        public_access_block={k: _truthy(v) for k, v in block.items()} if block else None,
        ownership_controls=tuple((props.get("OwnershipControls") or {}).get("Rules", [])),
        versioning=(props.get("VersioningConfiguration") or {}).get("Status") == "Enabled",
    )


def _encryption_rule(rule: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"ApplyServerSideEncryptionByDefault": dict(rule["ServerSideEncryptionByDefault"])}
    if "BucketKeyEnabled" in rule:
        out["BucketKeyEnabled"] = _truthy(rule["BucketKeyEnabled"])
    return out


_LIFECYCLE_IGNORED = frozenset({"Transitions", "NoncurrentVersionTransitions", "Transition"})  # storage tiers


def _lifecycle_rule(logical_id: str, rule: Mapping[str, Any]) -> dict[str, Any]:
    """Translate a CloudFormation lifecycle rule into the S3 API shape.

    Unknown keys raise instead of being dropped, so the local bucket never silently differs
    from the deployed one; storage-class transitions are ignored (meaningless locally).
    """
    out: dict[str, Any] = {"Status": rule.get("Status", "Enabled")}
    if "Id" in rule:
        out["ID"] = rule["Id"]
    tags = [{"Key": t["Key"], "Value": str(t["Value"])} for t in rule.get("TagFilters", [])]
    prefix = rule.get("Prefix")
    if (prefix is not None and tags) or len(tags) > 1:
        out["Filter"] = {"And": {**({"Prefix": prefix} if prefix is not None else {}), "Tags": tags}}
    elif tags:
        out["Filter"] = {"Tag": tags[0]}
    else:
        out["Filter"] = {"Prefix": prefix or ""}
    expiration: dict[str, Any] = {}
    if "ExpirationInDays" in rule:
        expiration["Days"] = int(rule["ExpirationInDays"])
    if "ExpiredObjectDeleteMarker" in rule:
        expiration["ExpiredObjectDeleteMarker"] = _truthy(rule["ExpiredObjectDeleteMarker"])
    if expiration:
        out["Expiration"] = expiration
    if "AbortIncompleteMultipartUpload" in rule:
        days = int(rule["AbortIncompleteMultipartUpload"]["DaysAfterInitiation"])
        out["AbortIncompleteMultipartUpload"] = {"DaysAfterInitiation": days}
    noncurrent = dict(rule.get("NoncurrentVersionExpiration") or {})
    if "NoncurrentVersionExpirationInDays" in rule:
        noncurrent["NoncurrentDays"] = rule["NoncurrentVersionExpirationInDays"]
    if noncurrent:
        out["NoncurrentVersionExpiration"] = {k: int(v) for k, v in noncurrent.items()}
    known = {
        "Id",
        "Status",
        "Prefix",
        "TagFilters",
        "ExpirationInDays",
        "ExpiredObjectDeleteMarker",
        "AbortIncompleteMultipartUpload",
        "NoncurrentVersionExpiration",
        "NoncurrentVersionExpirationInDays",
    }
    unknown = set(rule) - known - _LIFECYCLE_IGNORED
    if unknown:
        raise UnresolvableError(f"{logical_id}: lifecycle keys {sorted(unknown)} are not supported locally")
    return out


# CloudFormation property -> SQS attribute name (values become strings, as the API wants).
_QUEUE_ATTRIBUTES = {
    "DelaySeconds": "DelaySeconds",
    "MaximumMessageSize": "MaximumMessageSize",
    "MessageRetentionPeriod": "MessageRetentionPeriod",
    "ReceiveMessageWaitTimeSeconds": "ReceiveMessageWaitTimeSeconds",
    "VisibilityTimeout": "VisibilityTimeout",
    "SqsManagedSseEnabled": "SqsManagedSseEnabled",
    "KmsMasterKeyId": "KmsMasterKeyId",
    "KmsDataKeyReusePeriodSeconds": "KmsDataKeyReusePeriodSeconds",
    "FifoQueue": "FifoQueue",
    "ContentBasedDeduplication": "ContentBasedDeduplication",
    "DeduplicationScope": "DeduplicationScope",
    "FifoThroughputLimit": "FifoThroughputLimit",
    "RedrivePolicy": "RedrivePolicy",
    "RedriveAllowPolicy": "RedriveAllowPolicy",
}


def _queue_spec(logical_id: str, props: Mapping[str, Any]) -> QueueSpec:
    if "QueueName" not in props:
        raise UnresolvableError(f"{logical_id} has no QueueName; give it one in the template")
    unknown = set(props) - set(_QUEUE_ATTRIBUTES) - {"QueueName", "Tags"}
    if unknown:
        raise UnresolvableError(f"{logical_id}: queue properties {sorted(unknown)} are not supported locally")
    attributes: dict[str, str] = {}
    for prop, attribute in _QUEUE_ATTRIBUTES.items():
        if prop not in props:
            continue
        value = props[prop]
        if isinstance(value, dict):
            value = json.dumps(value, separators=(",", ":"))
        elif isinstance(value, bool):
            value = "true" if value else "false"
        attributes[attribute] = str(value)
    return QueueSpec(logical_id=logical_id, queue_name=props["QueueName"], attributes=attributes)


def _link_dead_letter_queues(queues: list[QueueSpec]) -> list[QueueSpec]:
    """Record which queue each redrive policy points at, and order dead-letter queues first.

    A queue's redrive policy must name an existing queue, so DLQs are created before the
    queues that redrive to them.
    """
    by_name = {q.queue_name: q.logical_id for q in queues}
    linked: list[QueueSpec] = []
    for queue in queues:
        redrive = json.loads(queue.attributes.get("RedrivePolicy", "{}"))
        target = str(redrive.get("deadLetterTargetArn", "")).rsplit(":", 1)[-1]
        if target and target not in by_name:
            raise UnresolvableError(
                f"{queue.logical_id} redrives to {target!r}, which the template does not declare"
            )
        linked.append(replace(queue, dead_letter_queue=by_name.get(target)) if target else queue)
    return sorted(linked, key=lambda q: q.dead_letter_queue is not None)


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() == "true"
    return bool(value)


# ----------------------------------------------------------------------------------------------
# Creating the resources (moto server or moto.mock_aws)
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AwsClients:
    """The three boto3 clients `create_resources` needs."""

    dynamodb: Any
    s3: Any
    sqs: Any

    @classmethod
    def from_session(
        cls, session: Any, endpoint_url: str | None = None, region: str | None = None
    ) -> AwsClients:
        """Build the clients from a `boto3.Session`, optionally against a local endpoint."""
        region_name = region or session.region_name or LOCAL_REGION
        return cls(
            dynamodb=session.client("dynamodb", endpoint_url=endpoint_url, region_name=region_name),
            s3=session.client("s3", endpoint_url=endpoint_url, region_name=region_name),
            sqs=session.client("sqs", endpoint_url=endpoint_url, region_name=region_name),
        )


def create_resources(
    session_or_clients: Any,
    resources: LocalResources,
    *,
    endpoint_url: str | None = None,
) -> None:
    """Create every table, bucket and queue of `resources`; safe to run again.

    `session_or_clients` is a `boto3.Session` (clients are built for `resources.region`, on
    `endpoint_url` if given) or an `AwsClients`. Resources that already exist are left in
    place and brought up to date where the API allows it (TTL, bucket settings, queue
    attributes); key schemas of existing tables are not changed - drop the table for that.
    """
    clients = (
        session_or_clients
        if isinstance(session_or_clients, AwsClients)
        else AwsClients.from_session(session_or_clients, endpoint_url=endpoint_url, region=resources.region)
    )
    for table in resources.tables:
        _create_table(clients.dynamodb, table)
    for bucket in resources.buckets:
        _create_bucket(clients.s3, bucket, resources.region)
    for queue in resources.queues:
        _create_queue(clients.sqs, queue)


def _error_code(exc: Exception) -> str:
    return str(getattr(exc, "response", {}).get("Error", {}).get("Code", ""))


def _create_table(dynamodb: Any, table: TableSpec) -> None:
    with contextlib.suppress(dynamodb.exceptions.ResourceInUseException):  # already there
        dynamodb.create_table(**table.create_table_kwargs())
    dynamodb.get_waiter("table_exists").wait(
        TableName=table.table_name, WaiterConfig={"Delay": 1, "MaxAttempts": 60}
    )
    if table.ttl_attribute is None:
        return
    described = dynamodb.describe_time_to_live(TableName=table.table_name)["TimeToLiveDescription"]
    if described.get("TimeToLiveStatus") in ("ENABLED", "ENABLING"):
        return
    dynamodb.update_time_to_live(
        TableName=table.table_name,
        TimeToLiveSpecification={"Enabled": True, "AttributeName": table.ttl_attribute},
    )


def _create_bucket(s3: Any, bucket: BucketSpec, region: str) -> None:
    kwargs: dict[str, Any] = {"Bucket": bucket.bucket_name}
    if region != "us-east-1":
        kwargs["CreateBucketConfiguration"] = {"LocationConstraint": region}
    try:
        s3.create_bucket(**kwargs)
    except ClientError as exc:  # the code tells "mine already" from failure
        if _error_code(exc) not in ("BucketAlreadyOwnedByYou", "BucketAlreadyExists"):
            raise
    name = bucket.bucket_name
    if bucket.encryption_rules:
        s3.put_bucket_encryption(
            Bucket=name,
            ServerSideEncryptionConfiguration={"Rules": [dict(r) for r in bucket.encryption_rules]},
        )
    if bucket.public_access_block is not None:
        s3.put_public_access_block(
            Bucket=name, PublicAccessBlockConfiguration=dict(bucket.public_access_block)
        )
    if bucket.ownership_controls:
        s3.put_bucket_ownership_controls(
            Bucket=name, OwnershipControls={"Rules": [dict(r) for r in bucket.ownership_controls]}
        )
    if bucket.versioning:
        s3.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
    if bucket.lifecycle_rules:
        s3.put_bucket_lifecycle_configuration(
            Bucket=name, LifecycleConfiguration={"Rules": [dict(r) for r in bucket.lifecycle_rules]}
        )


def _create_queue(sqs: Any, queue: QueueSpec) -> None:
    try:
        sqs.create_queue(QueueName=queue.queue_name, Attributes=dict(queue.attributes))
    except ClientError as exc:  # QueueAlreadyExists: same name, different attributes -> update them
        if "QueueAlreadyExists" not in _error_code(exc):
            raise
        url = sqs.get_queue_url(QueueName=queue.queue_name)["QueueUrl"]
        sqs.set_queue_attributes(QueueUrl=url, Attributes=dict(queue.attributes))
