"""The studio's HTTP API (FastAPI) over :class:`~sdckit.studio.project.Project`.

Local by design: the command binds it to 127.0.0.1 and prints a URL with a
one-time token; every ``/api`` request carries that token (header
``X-Studio-Token`` or ``Authorization: Bearer``), and a request without it
gets 401 with a fixed body. The API reads only the files the user opened
(given on the command line or uploaded; the page names them, never a path)
and writes only into the output folder; the preview is paged. The contract
is documented in docs/studio.md, "HTTP API".
"""

from __future__ import annotations

import functools
import re
import secrets
import shutil
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import pandas as pd
from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field

from sdckit.errors import SDCError
from sdckit.studio.export import check_basename, export_release, project_recipe
from sdckit.studio.forms import method_forms
from sdckit.studio.jobs import Job, JobRunner
from sdckit.studio.project import Project
from sdckit.studio.recipe import check_params, parse_recipe, recipe_commands, recipe_script
from sdckit.studio.sweeps import run_sweep

__all__ = ["Studio", "create_app"]

STATIC = Path(__file__).with_name("static")
#: The body of every 401: the same whatever was wrong with the token.
UNAUTHORIZED = {"error": "unauthorized"}
MAX_PREVIEW_ROWS = 500
#: The longest a ``GET /api/jobs/{id}?wait=`` long poll holds a request, in seconds.
MAX_JOB_WAIT = 30.0
_QUOTED = re.compile(r"'([^']+)'")


class ApiError(Exception):
    """An error the API answers with ``{"error", "parameter" | "column"}``.

    Parameters
    ----------
    status : int
        The HTTP status.
    message : str
        For a person.
    **where : str
        ``parameter=...`` or ``column=...``.
    """

    def __init__(self, status: int, message: str, **where: str) -> None:
        super().__init__(message)
        self.status = status
        self.body: dict[str, Any] = {"error": message, **where}


@dataclass
class Studio:
    """What one studio session holds: the project, its files and its jobs.

    Parameters
    ----------
    output_dir : Path
        Where exports are written.
    token : str
        The session's token (generated when not given).
    """

    output_dir: Path
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    project: Project | None = None
    files: dict[str, Path] = field(default_factory=dict)
    exported: dict[str, Path] = field(default_factory=dict)
    upload_dir: Path = field(
        default_factory=lambda: Path(tempfile.mkdtemp(prefix="sdckit-studio-"))
    )
    lock: threading.RLock = field(default_factory=threading.RLock)

    def __post_init__(self) -> None:
        self.jobs = JobRunner(self.describe_error)

    def allow(self, path: Path) -> str:
        """Let the API open ``path`` under its file name; return that name.

        Parameters
        ----------
        path : Path
            A file the user gave.

        Returns
        -------
        str
        """
        path = Path(path).resolve()
        name = path.name
        if name in self.files and self.files[name] != path:
            name = f"{path.stem}-{len(self.files) + 1}{path.suffix}"
        self.files[name] = path
        return name

    def open(self, name: str) -> Project:
        """Open one of the allowed files as the project (the old project is closed).

        Parameters
        ----------
        name : str
            A name from :attr:`files`.

        Returns
        -------
        Project
        """
        path = self.files.get(name)
        if path is None:
            raise ApiError(404, "no such file: open a file given on the command line or uploaded")
        try:
            project = Project(path)
        except SDCError as error:
            # The page names files, never a path: an upload's temporary folder, or where on
            # disk a file given on the command line lives, is none of the page's business.
            message = str(error).replace(str(path), name).replace(str(path.parent), ".")
            raise ApiError(422, message) from None
        with self.lock:
            self.project = project
        return project

    def need_project(self) -> Project:
        """The open project, or a 409 error.

        Returns
        -------
        Project
        """
        if self.project is None:
            raise ApiError(409, "no file is open: open or upload one first")
        return self.project

    def describe_error(self, exc: BaseException) -> dict[str, Any]:
        """``{"error", "parameter" | "column"}`` for an exception of a method or a request.

        Parameters
        ----------
        exc : BaseException
            What was raised.

        Returns
        -------
        dict
        """
        if isinstance(exc, ApiError):
            return exc.body
        if not isinstance(exc, SDCError):
            return {"error": f"internal error ({type(exc).__name__}); the state is unchanged"}
        message = str(exc)
        body: dict[str, Any] = {"error": message}
        columns = set(self.project.kinds) if self.project is not None else set()
        lead = re.match(r"^\s*(?:--)?([A-Za-z_][A-Za-z0-9_]*)\b", message)
        quoted = [q for q in _QUOTED.findall(message) if q in columns]
        if re.match(r"^\s*(?:role|kind) of column ", message) or (
            quoted and message.lower().startswith("column")
        ):
            body["column"] = quoted[0] if quoted else None
        elif message.startswith("unknown masking method"):
            body["parameter"] = "method"
        elif lead and (
            lead.group(1) in _parameter_names()
            or re.match(rf"^{lead.group(1)}: \S+ has no parameter '{lead.group(1)}'", message)
        ):
            body["parameter"] = lead.group(1)
        elif quoted:
            body["column"] = quoted[0]
        return body


@functools.cache
def _parameter_names() -> frozenset[str]:
    """Every name an error may start with to blame a parameter: the methods' and the API's."""
    names = {
        "method",
        "seed",
        "parent",
        "step",
        "name",
        "grid",
        "override",
        "format",
        "file",
        "confirm_unmasked",
    }
    for form in method_forms():
        names.update(p["name"] for p in form["parameters"])
    return frozenset(names)


class RolesRequest(BaseModel):
    """Kinds and roles to change (any of the three)."""

    roles: dict[str, str] = Field(default_factory=dict)
    kinds: dict[str, str] = Field(default_factory=dict)
    by_role: dict[str, list[str]] = Field(default_factory=dict)


class ApplyRequest(BaseModel):
    """A method to apply to the current state."""

    method: str
    params: dict[str, Any] = Field(default_factory=dict)
    seed: int | None = None
    parent: int | None = None


class SweepRequest(BaseModel):
    """A method swept over a grid of parameter values on the current state."""

    method: str
    grid: dict[str, list[Any]]
    params: dict[str, Any] = Field(default_factory=dict)
    seed: int = 0


class GotoRequest(BaseModel):
    """A step to make current."""

    step: int


class SnapshotRequest(BaseModel):
    """A name for a step (default the current one)."""

    name: str
    step: int | None = None


class ExportRequest(BaseModel):
    """What to export."""

    name: str = "release"
    override: list[str] = Field(default_factory=list)
    format: str = "csv"
    report: bool = True
    confirm_unmasked: bool = False


class OpenRequest(BaseModel):
    """A file to open, by the name the API lists."""

    file: str


def _cell(value: Any) -> Any:
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    if isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def create_app(studio: Studio) -> FastAPI:
    """The studio's FastAPI application.

    Parameters
    ----------
    studio : Studio
        The session (project, allowed files, output folder, token).

    Returns
    -------
    FastAPI
    """
    app = FastAPI(title="sdckit studio", docs_url=None, redoc_url=None, openapi_url=None)

    @app.middleware("http")
    async def require_token(request: Request, call_next: Any) -> Response:
        if request.url.path.startswith("/api"):
            given = request.headers.get("x-studio-token") or ""
            scheme, _, bearer = (request.headers.get("authorization") or "").partition(" ")
            if not given and scheme.lower() == "bearer":
                given = bearer.strip()
            if not secrets.compare_digest(given.encode(), studio.token.encode()):
                return JSONResponse(UNAUTHORIZED, status_code=401)
        response: Response = await call_next(request)
        response.headers["Cache-Control"] = "no-store"
        response.headers["X-Content-Type-Options"] = "nosniff"
        return response

    @app.exception_handler(ApiError)
    async def api_error(request: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse(exc.body, status_code=exc.status)

    @app.exception_handler(SDCError)
    async def sdc_error(request: Request, exc: SDCError) -> JSONResponse:
        return JSONResponse(studio.describe_error(exc), status_code=422)

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        where = [str(p) for p in first.get("loc", ()) if p not in ("body", "query")]
        body = {"error": f"bad request: {first.get('msg', 'invalid')}"}
        if where:
            body["parameter"] = where[0]
        return JSONResponse(body, status_code=422)

    @app.get("/", include_in_schema=False)
    def index() -> Response:
        page = STATIC / "index.html"
        if page.is_file():
            return FileResponse(page, media_type="text/html")
        return HTMLResponse(
            "<!doctype html><title>sdckit studio</title><p>The page is not installed."
        )

    if STATIC.is_dir():
        app.mount("/static", StaticFiles(directory=STATIC), name="static")

    def state() -> dict[str, Any]:
        if studio.project is None:
            return {"open": False, "files": sorted(studio.files)}
        return {"open": True, "files": sorted(studio.files), **studio.project.describe()}

    @app.get("/api/state")
    def get_state() -> dict[str, Any]:
        return state()

    @app.get("/api/files")
    def get_files() -> dict[str, Any]:
        return {"files": sorted(studio.files)}

    @app.post("/api/open")
    def post_open(request: OpenRequest) -> dict[str, Any]:
        studio.open(request.file)
        return state()

    @app.post("/api/upload")
    async def post_upload(request: Request, name: Annotated[str, Query()]) -> dict[str, Any]:
        stem = check_basename(name)
        if Path(stem).suffix.lower() not in (".csv", ".parquet", ".pq", ".txt"):
            raise ApiError(422, "name: upload a .csv or .parquet file", parameter="name")
        target = studio.upload_dir / stem
        with target.open("wb") as fh:
            async for chunk in request.stream():
                fh.write(chunk)
        studio.open(studio.allow(target))
        return state()

    @app.get("/api/preview")
    def get_preview(
        offset: Annotated[int, Query(ge=0)] = 0,
        limit: Annotated[int, Query(ge=1, le=MAX_PREVIEW_ROWS)] = 50,
        step: int | None = None,
    ) -> dict[str, Any]:
        project = studio.need_project()
        data = project.state(step)
        page = data.iloc[offset : offset + limit]
        return {
            "offset": offset,
            "limit": limit,
            "n_records": len(data),
            "step": project.current if step is None else step,
            "columns": [str(c) for c in data.columns],
            "rows": [[_cell(v) for v in row] for row in page.itertuples(index=False, name=None)],
        }

    @app.post("/api/roles")
    def post_roles(request: RolesRequest) -> dict[str, Any]:
        studio.need_project().set_columns(
            roles=request.roles, kinds=request.kinds, by_role=request.by_role
        )
        return state()

    @app.get("/api/methods")
    def get_methods() -> dict[str, Any]:
        return {"methods": method_forms()}

    @app.post("/api/apply", status_code=202)
    def post_apply(request: ApplyRequest) -> dict[str, Any]:
        project = studio.need_project()
        # Checked now, so a bad parameter is answered at once and no job is made.
        check_params(request.method, request.params)
        seed = request.seed if request.seed is not None else secrets.randbelow(2**31)
        parent = project.current if request.parent is None else request.parent
        version = project.columns_version
        if parent not in project.steps:
            raise ApiError(422, f"parent: no step {parent} in the history", parameter="parent")

        def work(job: Job) -> Any:
            return project.compute_step(
                request.method, request.params, seed=seed, parent=parent, progress=job.progress
            )

        def commit(job: Job, value: Any) -> dict[str, Any]:
            result, metrics = value
            step = project.add_step(
                request.method,
                request.params,
                seed=seed,
                parent=parent,
                result=result,
                metrics=metrics,
                columns_version=version,
            )
            return {"step": step.id, "seed": seed, "summary": step.summary}

        job = studio.jobs.submit("apply", work, commit)
        return {"job": job.id, "seed": seed}

    @app.post("/api/sweep", status_code=202)
    def post_sweep(request: SweepRequest) -> dict[str, Any]:
        project = studio.need_project()
        check_params(request.method, request.params)

        def work(job: Job) -> dict[str, Any]:
            return run_sweep(
                project,
                request.method,
                request.grid,
                params=request.params,
                seed=request.seed,
                progress=job.progress,
            )

        return {"job": studio.jobs.submit("sweep", work).id}

    @app.post("/api/risk/suda", status_code=202)
    def post_suda() -> dict[str, Any]:
        project = studio.need_project()
        step = project.current

        def work(job: Job) -> dict[str, Any]:
            return {"step": step, "figures": project.suda(step, progress=job.progress)}

        return {"job": studio.jobs.submit("suda", work).id, "step": step}

    def known(job: Job | None) -> dict[str, Any]:
        if job is None:
            raise ApiError(404, "no such job")
        return job.as_dict()

    @app.get("/api/jobs/{job_id}")
    def get_job(
        job_id: str, wait: Annotated[float, Query(ge=0, le=MAX_JOB_WAIT)] = 0
    ) -> dict[str, Any]:
        return known(studio.jobs.wait(job_id, wait))

    @app.post("/api/jobs/{job_id}/cancel")
    def post_cancel(job_id: str) -> dict[str, Any]:
        return known(studio.jobs.cancel(job_id))

    @app.post("/api/undo")
    def post_undo() -> dict[str, Any]:
        studio.need_project().undo()
        return state()

    @app.post("/api/redo")
    def post_redo() -> dict[str, Any]:
        studio.need_project().redo()
        return state()

    @app.post("/api/goto")
    def post_goto(request: GotoRequest) -> dict[str, Any]:
        studio.need_project().goto(request.step)
        return state()

    @app.post("/api/snapshot")
    def post_snapshot(request: SnapshotRequest) -> dict[str, Any]:
        studio.need_project().snapshot(request.name, request.step)
        return state()

    @app.get("/api/recipe")
    def get_recipe() -> dict[str, Any]:
        recipe = project_recipe(studio.need_project())
        return {
            "toml": recipe.to_toml(),
            "script": recipe_script(recipe),
            "commands": recipe_commands(recipe),
        }

    @app.post("/api/recipe", status_code=202)
    async def post_recipe(request: Request) -> dict[str, Any]:
        project = studio.need_project()
        text = (await request.body()).decode("utf-8", errors="replace")
        recipe = parse_recipe(text, "the uploaded recipe")
        if recipe.fingerprint != project.fingerprint:
            project.load_recipe(recipe)  # raises, naming both fingerprints; nothing changes

        def work(job: Job) -> dict[str, Any]:
            step = project.load_recipe(recipe, progress=job.progress)
            return {"step": step.id, "steps": len(recipe.steps)}

        return {"job": studio.jobs.submit("recipe", work).id}

    @app.get("/api/recipe.toml")
    def get_recipe_toml() -> PlainTextResponse:
        return PlainTextResponse(project_recipe(studio.need_project()).to_toml())

    @app.get("/api/recipe/script")
    def get_recipe_script() -> PlainTextResponse:
        return PlainTextResponse(recipe_script(project_recipe(studio.need_project())))

    @app.get("/api/recipe/commands")
    def get_recipe_commands() -> PlainTextResponse:
        return PlainTextResponse("\n".join(recipe_commands(project_recipe(studio.need_project()))))

    @app.post("/api/export")
    def post_export(request: ExportRequest) -> dict[str, Any]:
        project = studio.need_project()
        done = export_release(
            project,
            studio.output_dir,
            name=request.name,
            override=request.override,
            file_format=request.format,
            with_report=request.report,
            confirm_unmasked=request.confirm_unmasked,
        )
        for path in done.files.values():
            studio.exported[path.name] = path
        return {
            "files": {kind: path.name for kind, path in done.files.items()},
            "directory": str(studio.output_dir),
            "columns": done.columns,
            "warnings": done.warnings,
        }

    @app.get("/api/download/{name}")
    def get_download(name: str) -> FileResponse:
        path = studio.exported.get(name)
        if path is None or not path.is_file():
            raise ApiError(404, "no such export")
        return FileResponse(path, filename=name)

    return app


def remove_uploads(studio: Studio) -> None:
    """Delete the session's upload folder (called when the studio stops).

    Parameters
    ----------
    studio : Studio
        The session.
    """
    studio.jobs.shutdown()
    shutil.rmtree(studio.upload_dir, ignore_errors=True)
