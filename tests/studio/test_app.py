"""The HTTP API: token, files the user opened only, paged preview, jobs, errors that name their cause."""

from __future__ import annotations

import threading
import time

import pytest
from fastapi.testclient import TestClient
from studio_cases import ROLES, STEPS

from sdckit.studio.app import UNAUTHORIZED, create_app
from sdckit.studio.recipe import replay_step


def _wait(client, job_id: str) -> dict:
    for _ in range(60):  # a long poll answers as soon as the job ends
        job = client.get(f"/api/jobs/{job_id}", params={"wait": 5}).json()
        if job["status"] in ("done", "failed", "cancelled"):
            return job
    raise AssertionError(f"job {job_id} did not finish")


@pytest.mark.parametrize(
    "headers",
    [{}, {"X-Studio-Token": "wrong"}, {"Authorization": "Bearer wrong"}, {"X-Studio-Token": ""}],
)
@pytest.mark.parametrize(
    "path", ["/api/state", "/api/preview", "/api/nosuch", "/api/download/x.csv"]
)
def test_every_api_request_needs_the_token_and_a_refusal_reveals_nothing(studio, headers, path):
    with TestClient(create_app(studio), headers=headers) as anonymous:
        answer = anonymous.get(path)
    assert answer.status_code == 401
    assert answer.json() == UNAUTHORIZED


def test_the_bearer_header_is_accepted_too(studio):
    with TestClient(create_app(studio), headers={"Authorization": f"Bearer {studio.token}"}) as c:
        assert c.get("/api/state").json()["file"] == "testdata.csv"


def test_state_lists_columns_roles_and_no_data_values(client):
    state = client.get("/api/state").json()
    assert state["open"] and state["n_records"] == 4580
    roles = {c["name"]: c["role"] for c in state["columns"]}
    assert roles["ori_hid"] == "id"
    assert "46" not in str(state["columns"])  # the first record's age is not sent


def test_preview_is_paged(client):
    page = client.get("/api/preview", params={"offset": 10, "limit": 5}).json()
    assert len(page["rows"]) == 5 and page["n_records"] == 4580
    assert len(page["rows"][0]) == len(page["columns"])
    assert client.get("/api/preview", params={"limit": 100000}).status_code == 422


@pytest.mark.parametrize("name", ["../../etc/passwd", "/etc/passwd", "testdata.csv/../x", ""])
def test_only_files_the_user_opened_can_be_read(client, name):
    assert client.post("/api/open", json={"file": name}).status_code == 404
    assert client.get(f"/api/download/{name}").status_code in (404, 405)


def test_uploads_take_a_plain_name(client):
    bad = client.post("/api/upload", params={"name": "../evil.csv"}, content=b"a,b\n1,2\n")
    assert bad.status_code == 422 and bad.json()["parameter"] == "name"
    good = client.post("/api/upload", params={"name": "small.csv"}, content=b"a,b\n1,2\n3,4\n")
    assert good.status_code == 200 and good.json()["file"] == "small.csv"
    empty = client.post("/api/upload", params={"name": "empty.csv"}, content=b"")
    assert empty.status_code == 422 and "empty.csv" in empty.json()["error"]
    junk = client.post("/api/upload", params={"name": "junk.csv"}, content=b"\x00\x01 not a table")
    for refused in (empty, junk):  # the file is named, its folder never shown
        assert refused.status_code == 422 and "/" not in refused.json()["error"]
    assert "junk.csv" in junk.json()["error"]
    assert (
        client.get("/api/state").json()["file"] == "small.csv"
    )  # the failed upload changed nothing


def test_a_role_conflict_names_the_column_and_changes_nothing(client):
    before = client.get("/api/state").json()["columns"]
    answer = client.post("/api/roles", json={"by_role": {"id": ["sex"], "key": ["sex"]}})
    assert answer.status_code == 422
    assert answer.json()["column"] == "sex"
    assert client.get("/api/state").json()["columns"] == before


def test_a_whole_session_apply_undo_branch_export(client, studio):
    assert client.post("/api/roles", json={"by_role": ROLES}).status_code == 200
    methods = {m["name"] for m in client.get("/api/methods").json()["methods"]}
    assert {"recode", "pram", "microaggregation", "local_suppression", "record_swap"} <= methods
    steps = []
    for method, params, seed in STEPS[:2]:
        job = client.post("/api/apply", json={"method": method, "params": params, "seed": seed})
        assert job.status_code == 202
        done = _wait(client, job.json()["job"])
        assert done["status"] == "done", done
        steps.append(done["result"]["step"])
    state = client.post("/api/undo").json()
    assert state["current"] == steps[0] and state["can_redo"]
    method, params, seed = STEPS[2]
    job = client.post("/api/apply", json={"method": method, "params": params, "seed": seed}).json()
    assert _wait(client, job["job"])["status"] == "done"
    state = client.post("/api/snapshot", json={"name": "final"}).json()
    assert len(state["steps"]) == 4 and state["snapshots"]["final"] == state["current"]
    assert state["metrics"]["risk"]["sample_uniques"] >= 0 and "change" in state
    commands = client.get("/api/recipe/commands").text
    assert "recipe step recode" in commands and "recipe step pram" not in commands
    exported = client.post("/api/export", json={"name": "rel", "report": False}).json()
    assert set(exported["files"]) == {"release", "recipe", "script", "commands"}
    assert "income" not in exported["columns"]
    release = client.get(f"/api/download/{exported['files']['release']}")
    assert release.status_code == 200
    assert release.content == (studio.output_dir / "rel.csv").read_bytes()


def test_a_bad_parameter_is_answered_at_once_naming_it(client):
    before = client.get("/api/state").json()
    answer = client.post(
        "/api/apply", json={"method": "microaggregation", "params": {"group_size": 1}}
    )
    assert answer.status_code == 422 and answer.json()["parameter"] == "group_size"
    answer = client.post("/api/apply", json={"method": "pram", "params": {"nosuch": 1}})
    assert answer.status_code == 422 and answer.json()["parameter"] == "nosuch"
    assert client.get("/api/state").json() == before


def test_a_method_failing_in_its_job_names_the_cause_and_keeps_the_state(client):
    before = client.get("/api/state").json()
    job = client.post(
        "/api/apply", json={"method": "pram", "params": {"columns": ["nosuch"]}, "seed": 1}
    ).json()
    done = _wait(client, job["job"])
    assert done["status"] == "failed"
    assert "nosuch" in done["error"]["error"]
    assert client.get("/api/state").json() == before


def test_cancel_leaves_the_history_as_it_was(client, studio, monkeypatch):
    started = threading.Event()

    def slow(method, params, *, seed=None, parent=None, progress=None):
        started.set()
        for i in range(2000):  # a long method reporting progress
            progress(i, 2000)
            time.sleep(0.005)
        raise AssertionError("the job was not cancelled")

    monkeypatch.setattr(studio.project, "compute_step", slow)
    before = client.get("/api/state").json()
    job = client.post("/api/apply", json={"method": "pram", "params": {}, "seed": 1}).json()
    assert started.wait(10)
    client.post(f"/api/jobs/{job['job']}/cancel")
    assert _wait(client, job["job"])["status"] == "cancelled"
    assert client.get("/api/state").json() == before


def test_a_request_without_an_open_file_says_so(studio):
    studio.project = None
    with TestClient(create_app(studio), headers={"X-Studio-Token": studio.token}) as c:
        answer = c.get("/api/preview")
    assert answer.status_code == 409 and "open" in answer.json()["error"]


def test_a_sweep_point_becomes_the_step_it_assessed(client, studio):
    assert client.post("/api/roles", json={"by_role": ROLES}).status_code == 200
    job = client.post(
        "/api/sweep",
        json={
            "method": "pram",
            "grid": {"min_diagonal": [0.6, 0.9]},
            "params": {"columns": ["roof"]},
            "seed": 5,
        },
    )
    assert job.status_code == 202
    done = _wait(client, job.json()["job"])
    assert done["status"] == "done", done
    sweep = done["result"]
    assert [p["params"]["min_diagonal"] for p in sweep["points"]] == [0.6, 0.9]
    assert sweep["parent"] == 0
    point = sweep["points"][0]
    assert point["figures"] and set(sweep["utility_figures"]) <= set(point["figures"])
    applied = client.post(
        "/api/apply",
        json={"method": "pram", "params": point["params"], "seed": point["seed"], "parent": 0},
    ).json()
    step = _wait(client, applied["job"])["result"]["step"]
    # The step reproduces the release the sweep assessed: the same seed and parameters.
    kinds, roles = studio.project.schema_overrides()
    expected = replay_step(
        studio.project.original,
        "pram",
        point["params"],
        seed=point["seed"],
        kinds=kinds,
        roles=roles,
    ).data
    assert studio.project.state(step).equals(expected)
    bad = client.post("/api/sweep", json={"method": "pram", "grid": {"nosuch": [1]}})
    assert bad.status_code == 202
    failed = _wait(client, bad.json()["job"])
    assert failed["status"] == "failed" and failed["error"]["parameter"] == "nosuch"


def test_an_unknown_method_is_blamed_on_the_method_parameter(client):
    answer = client.post("/api/apply", json={"method": "nosuch", "params": {}})
    assert answer.status_code == 422 and answer.json()["parameter"] == "method"
    answer = client.post("/api/goto", json={"step": 99})
    assert answer.status_code == 422 and answer.json()["parameter"] == "step"


def test_a_recipe_posted_to_the_studio_is_replayed(client, studio):
    from sdckit.studio import project_recipe

    assert client.post("/api/roles", json={"by_role": ROLES}).status_code == 200
    for method, params, seed in STEPS[:2]:
        studio.project.apply(method, params, seed=seed)
    text = project_recipe(studio.project).to_toml()
    state = studio.project.state()
    client.post("/api/goto", json={"step": 0})
    job = client.post("/api/recipe", content=text.encode())
    assert job.status_code == 202
    assert _wait(client, job.json()["job"])["status"] == "done"
    after = client.get("/api/state").json()
    assert len(after["path"]) == 2 and len(after["steps"]) == 5  # a second branch, the first kept
    assert studio.project.state().equals(state)
    bad = client.post("/api/recipe", content=text.replace("sha256:", "sha256:0").encode())
    assert bad.status_code == 422 and "another file" in bad.json()["error"]


def test_a_long_poll_answers_when_the_job_ends_and_is_bounded(client, studio, monkeypatch):
    release = threading.Event()

    def held(method, params, *, seed=None, parent=None, progress=None):
        release.wait(10)
        raise AssertionError("stop here")

    monkeypatch.setattr(studio.project, "compute_step", held)
    job = client.post("/api/apply", json={"method": "pram", "params": {}, "seed": 1}).json()
    # The job is held: a short poll comes back with it still running.
    assert client.get(f"/api/jobs/{job['job']}", params={"wait": 0.2}).json()["status"] in (
        "queued",
        "running",
    )
    threading.Timer(0.3, release.set).start()
    ended = client.get(f"/api/jobs/{job['job']}", params={"wait": 20}).json()
    assert ended["status"] == "failed"  # woken by the end, not by the 20 s bound
    assert client.get(f"/api/jobs/{job['job']}", params={"wait": 31}).status_code == 422


def test_exporting_the_untouched_original_needs_a_confirmation(client, studio):
    assert client.post("/api/roles", json={"by_role": ROLES}).status_code == 200
    refused = client.post("/api/export", json={"name": "plain", "report": False})
    assert refused.status_code == 422
    assert refused.json()["parameter"] == "confirm_unmasked"
    assert "no method was applied" in refused.json()["error"]
    assert list(studio.output_dir.iterdir()) == []  # nothing written
    confirmed = client.post(
        "/api/export", json={"name": "plain", "report": False, "confirm_unmasked": True}
    )
    assert confirmed.status_code == 200
    assert confirmed.json()["warnings"][0].startswith("nothing was masked: no method was applied")


def test_a_direct_identifier_is_never_released(client, studio):
    assert client.post("/api/roles", json={"by_role": ROLES}).status_code == 200
    assert client.post("/api/roles", json={"roles": {"ori_hid": "id"}}).status_code == 200
    method, params, seed = STEPS[1]
    studio.project.apply(method, params, seed=seed)
    state = {c["name"]: c for c in client.get("/api/state").json()["columns"]}
    assert state["ori_hid"]["release"] == "never" and state["income"]["release"] == "confidential"
    answer = client.post("/api/export", json={"name": "x", "override": ["ori_hid"]})
    assert answer.status_code == 422 and answer.json()["column"] == "ori_hid"
    assert list(studio.output_dir.iterdir()) == []


def test_suda_runs_as_a_job_and_lands_in_the_panel(client):
    assert client.post("/api/roles", json={"by_role": ROLES}).status_code == 200
    job = client.post("/api/risk/suda")
    assert job.status_code == 202
    done = _wait(client, job.json()["job"])
    assert done["status"] == "done", done
    risk = client.get("/api/state").json()["metrics"]["risk"]
    assert risk["suda_special_uniques"] == done["result"]["figures"]["suda_special_uniques"]
