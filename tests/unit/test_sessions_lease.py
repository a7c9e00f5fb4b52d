"""The sessions table's ownership check and turn lease, on tables built from template.yaml."""

from __future__ import annotations

import time
from collections.abc import Iterator

import boto3
import pytest
from moto import mock_aws

from csagent.adapters.sessions_dynamodb import DynamoDBSessions
from csagent.domain.errors import Conflict, Forbidden
from devstack.template import create_resources, local_resources


@pytest.fixture
def sessions() -> Iterator[DynamoDBSessions]:
    with mock_aws():
        session = boto3.Session(region_name="us-east-1", aws_access_key_id="t", aws_secret_access_key="t")
        create_resources(session, local_resources())
        yield DynamoDBSessions(session.client("dynamodb"), "csagent-local-sessions", lease_seconds=60)


def test_the_first_turn_creates_the_session_for_its_owner(sessions):
    sessions.begin_turn("s1", "alice", None)
    record = sessions.get("s1")
    assert (record.owner, record.status, record.turn_count) == ("alice", "active", 1)


def test_another_customer_is_forbidden(sessions):
    sessions.begin_turn("s1", "alice", None)
    with pytest.raises(Forbidden):
        sessions.begin_turn("s1", "bob", None)


def test_a_second_request_during_a_turn_gets_a_conflict(sessions):
    # Given a turn in progress from checkpoint head "c1"
    sessions.begin_turn("s1", "alice", "c1")
    # When another request arrives before that turn wrote its checkpoint
    # Then it is refused with a conflict
    with pytest.raises(Conflict):
        sessions.begin_turn("s1", "alice", "c1")


def test_a_finished_turn_frees_the_lease_by_moving_the_checkpoint_head(sessions):
    # Given a turn that started at head c1 and ended by writing checkpoint c2
    sessions.begin_turn("s1", "alice", "c1")
    # When the next message sees head c2
    sessions.begin_turn("s1", "alice", "c2")
    # Then it got the lease, with no release write in between
    assert sessions.get("s1").turn_count == 2


def test_a_crashed_turn_frees_the_lease_when_it_expires(sessions):
    short = DynamoDBSessions(sessions._ddb, "csagent-local-sessions", lease_seconds=0)
    short.begin_turn("s1", "alice", "c1")
    time.sleep(0.01)
    short.begin_turn("s1", "alice", "c1")
    assert short.get("s1").turn_count == 2


def test_a_failed_turn_releases_its_lease(sessions):
    lease = sessions.begin_turn("s1", "alice", "c1")
    sessions.release(lease)
    sessions.begin_turn("s1", "alice", "c1")
    assert sessions.get("s1").turn_count == 2


def test_of_two_racing_requests_only_one_gets_the_turn(sessions, monkeypatch):
    # Given two requests that both read the session while it was free (a race moto cannot
    # reproduce with threads, since it does not serialise conditional writes: we replay it)
    sessions.begin_turn("s1", "alice", "c1")
    seen_by_both = sessions._item("s1")
    sessions.begin_turn("s1", "alice", "c2")  # the first request wins
    monkeypatch.setattr(sessions, "_item", lambda session_id: seen_by_both)
    # When the second writes with its stale view
    # Then DynamoDB's condition on the lease token refuses it
    with pytest.raises(Conflict):
        sessions.begin_turn("s1", "alice", "c2")
    monkeypatch.undo()
    assert sessions.get("s1").turn_count == 2
