"""A small stand-in back end for the page's own tests: the static files and a scripted API.

It answers in the shapes of the studio's HTTP API (docs/studio.md, "HTTP API")
with a fixed three-column file, so the page's rendering, keyboard use and
error display are tested without the library's methods; the whole session on
real data runs against the real app (test_page_session.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles

import sdckit

STATIC = Path(sdckit.__file__).resolve().parent / "studio" / "static"
TOKEN = "fake-token"

METHODS = [
    {
        "name": "noise",
        "description": "Additive noise",
        "parameters": [
            {"name": "columns", "type": "columns", "default": None, "help": "Columns to mask."},
            {
                "name": "level",
                "type": "number",
                "default": 0.1,
                "minimum": 0,
                "maximum": 1,
                "help": "Noise level.",
            },
            {
                "name": "correlated",
                "type": "boolean",
                "default": False,
                "help": "Keep correlations.",
            },
        ],
    }
]


def fake_app() -> FastAPI:
    app = FastAPI()
    steps: list[dict[str, Any]] = [
        {"id": 0, "parent": None, "method": "", "params": {}, "seed": None}
    ]
    where = {"current": 0}
    roles = {"age": "other", "sex": "other", "income": "other"}

    def state() -> dict[str, Any]:
        risk = {"sample_uniques": 10 - where["current"]} if "key" in roles.values() else {}
        return {
            "open": True,
            "files": ["people.csv"],
            "file": "people.csv",
            "n_records": 3,
            "columns": [
                {"name": "age", "kind": "numeric", "role": roles["age"], "suggestion": None},
                {
                    "name": "sex",
                    "kind": "categorical",
                    "role": roles["sex"],
                    "suggestion": "code: only 2 distinct values (1, 2)",
                },
                {"name": "income", "kind": "numeric", "role": roles["income"], "suggestion": None},
            ],
            "current": where["current"],
            "steps": steps,
            "path": [s["id"] for s in steps if 0 < s["id"] <= where["current"]],
            "snapshots": {},
            "can_undo": where["current"] > 0,
            "can_redo": False,
            "metrics": {"risk": risk, "utility": {"cells_changed_share": 0.1 * where["current"]}},
            "change": {"risk": {"sample_uniques": -1}} if where["current"] else {},
        }

    @app.middleware("http")
    async def token(request: Request, call_next: Any) -> Any:
        if request.url.path.startswith("/api/") and (
            request.headers.get("authorization") != f"Bearer {TOKEN}"
        ):
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        return await call_next(request)

    @app.get("/")
    def index() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/api/state")
    def get_state() -> dict[str, Any]:
        return state()

    @app.get("/api/methods")
    def methods() -> dict[str, Any]:
        return {"methods": METHODS}

    @app.get("/api/preview")
    def preview(offset: int = 0, limit: int = 20) -> dict[str, Any]:
        rows = [[34, "1", 1200.5], [51, "2", 800.0], [29, "1", None]]
        return {
            "offset": offset,
            "n_records": 3,
            "columns": list(roles),
            "rows": rows[offset:][:limit],
        }

    @app.post("/api/roles")
    async def set_roles(request: Request) -> Any:
        body = await request.json()
        if body["roles"].get("age") == "weight" and body["roles"].get("income") == "weight":
            message = "column 'income': only one weight column, and 'age' is one already"
            return JSONResponse({"error": message, "column": "income"}, 422)
        roles.update(body["roles"])
        return state()

    @app.post("/api/apply")
    async def apply(request: Request) -> Any:
        body = await request.json()
        level = body["params"].get("level", 0.1)
        if not 0 <= level <= 1:
            message = f"level must be between 0 and 1, got {level}"
            return JSONResponse({"error": message, "parameter": "level"}, 422)
        step = {
            "id": len(steps),
            "parent": where["current"],
            "method": body["method"],
            "params": body["params"],
            "seed": body["seed"],
        }
        steps.append(step)
        where["current"] = step["id"]
        return {"job": "j1"}

    @app.get("/api/jobs/{job}")
    def job(job: str) -> dict[str, Any]:
        return {"id": job, "status": "done", "done": 1, "total": 1}

    @app.post("/api/undo")
    def undo() -> dict[str, Any]:
        where["current"] = steps[where["current"]]["parent"] or 0
        return state()

    @app.get("/api/recipe")
    def recipe() -> Any:
        return {"toml": "[input]\nfile = 'people.csv'\n", "script": "", "commands": []}

    return app
