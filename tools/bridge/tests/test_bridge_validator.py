"""The validator's API for other tools (issue 34.1: ``analytics-acp ui`` shows the same verdicts as ``--check``):
``sources.check.check(paths, data=...)`` checks a sources.json object that is not saved yet, as if it were the
file, and returns typed verdicts as data. In process; these entries fail before any ACP server would start."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import anyio
from analytics_acp_bridge.paths import Paths
from analytics_acp_bridge.sources.check import check

SECRET = "validator-SECRET-0a1b"
FIXTURE_ACP = Path(__file__).resolve().parent / "fixture_acp"


def test_check_of_unsaved_data_gives_typed_verdicts_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv("VALIDATOR_UNSET", raising=False)
    paths = Paths(project=tmp_path / "project", sources=tmp_path / "conf" / "sources.json", root=tmp_path / "conf")
    data = {"defaults": {"row_limt": 10}, "ui": {"kept": True}, "sources": [
        {"id": "a", "acp": "no_such_acp"},
        {"id": "b", "acp": "databases", "labl": "B", "credentials": {"password": SECRET}},
        {"id": "c", "acp": "databases", "field_limit": 0},
        {"id": "d", "acp": "databases", "credentials": {"type": "sqlite", "path": {"env": "VALIDATOR_UNSET"}}},
        {"id": "e", "acp": "databases", "config": {"x": {"file": "missing.txt"}}},
    ]}
    report = anyio.run(lambda: check(paths, data=data))
    assert not report.ok and not paths.sources.exists() and not paths.project.exists()
    assert report.file_error == {"code": -32017, "name": "ACP_INVALID_ARGUMENTS",
                                 "message": "defaults: unknown field 'row_limt' (did you mean 'row_limit'?)."}
    by_id = {v.source: v for v in report.verdicts}
    assert [v.source for v in report.verdicts] == ["a", "b", "c", "d", "e"]
    assert {sid: v.error["name"] for sid, v in by_id.items() if v.error} == {
        "a": "ACP_INVALID_ARGUMENTS", "b": "ACP_INVALID_ARGUMENTS", "c": "ACP_INVALID_LIMIT",
        "d": "ACP_CREDENTIALS_MISSING", "e": "ACP_INVALID_ARGUMENTS"}
    assert all(v.status == "error" and str(paths.sources) in (v.fix or "") for v in report.verdicts)
    assert "unknown field 'labl' (did you mean 'label'?)" in by_id["b"].error["message"]
    assert str(tmp_path / "conf" / "missing.txt") in by_id["e"].error["message"]  # the full path tried
    as_json = json.dumps(report.as_dict())
    assert SECRET not in as_json and "\n".join(report.lines()).count("\n") == 5  # the file's line and one per source
    assert report.as_dict()["sources"][2] == {"id": "c", "acp": "databases", "status": "error",
                                              "error": by_id["c"].error, "fix": by_id["c"].fix}



def test_a_check_through_a_lent_server_starts_none_and_gives_the_same_verdicts(tmp_path, monkeypatch):
    """The set-up page lends its running servers (``running``): the same validate-only calls, no process started
    per check, the same verdicts as a check with its own servers; ``only`` checks and reports some sources."""
    import pytest
    from analytics_acp.host import AcpClient
    from analytics_acp_bridge.fleet.discovery import discover
    from analytics_acp_bridge.fleet.process import AcpProcess

    paths = Paths(project=tmp_path / "project", sources=tmp_path / "conf" / "sources.json", root=tmp_path / "conf")
    shutil.copytree(FIXTURE_ACP, paths.root / "acps" / "fixture")  # a light ACP whose schema requires a token
    data = {"sources": [
        {"id": "good", "acp": "fixture", "credentials": {"account": "ana", "token": SECRET}},
        {"id": "gone", "acp": "fixture", "credentials": {"account": "ana"}},  # the ACP's own check refuses it
        {"id": "typo", "acp": "fixture", "limit": 3},
    ]}
    opened: list[list[str]] = []
    stdio = AcpClient.stdio.__func__  # type: ignore[attr-defined]

    def counting(cls, command, *args, **kwargs):
        opened.append(list(command))
        return stdio(cls, command, *args, **kwargs)

    monkeypatch.setattr(AcpClient, "stdio", classmethod(counting))

    async def run():
        own = await check(paths, data=data)
        assert len(opened) == 1  # one server for the one ACP
        launch = discover(paths.root)["fixture"]
        async with anyio.create_task_group() as tg:
            proc = AcpProcess(launch, None, tmp_path / "lender", None)  # type: ignore[arg-type]
            proc.bind(tg)
            await proc.ensure()
            started = len(opened)
            lent = await check(paths, data=data, running=lambda wanted: proc if wanted == launch else None)
            assert len(opened) == started  # the check started no server of its own
            assert proc.client is not None and await proc.client.list_tools()  # and left the lent one running
            some = await check(paths, data=data, only={"gone"}, running=lambda wanted: proc)
            await proc.aclose()
            tg.cancel_scope.cancel()
        return own, lent, some

    own, lent, some = anyio.run(run)
    assert lent.as_dict() == own.as_dict()
    assert [(v.source, v.status) for v in own.verdicts] == [("good", "ok"), ("gone", "error"), ("typo", "error")]
    assert [v.as_dict() for v in some.verdicts] == [own.as_dict()["sources"][1]]
    with pytest.raises(ValueError):
        anyio.run(lambda: check(paths, data=data, online=True, running=lambda wanted: None))
