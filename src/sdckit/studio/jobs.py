"""Background work of the studio: one worker thread, progress, and cancelling that loses nothing.

A job computes without touching the project (``Project.compute_step``) and
records its result only when it finished and was not cancelled, under the
project's lock; a cancelled or failed job leaves the history as it was. A
method that reports progress is stopped at its next report (the callback
raises); one that does not is left to finish and its result is dropped.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from sdckit.studio.project import Cancelled

__all__ = ["Job", "JobRunner"]


@dataclass
class Job:
    """One piece of background work and what the page may know of it.

    Attributes
    ----------
    id : str
        Its identifier in the API.
    kind : str
        ``"apply"`` or ``"sweep"``.
    status : str
        ``"queued"``, ``"running"``, ``"done"``, ``"failed"`` or ``"cancelled"``.
    done, total : int
        Progress as the method reports it (0 of 0 when it does not).
    result : dict or None
        What the job produced (JSON-ready), when done.
    error : dict or None
        ``{"error", "parameter" | "column"}`` when failed.
    """

    id: str
    kind: str
    status: str = "queued"
    done: int = 0
    total: int = 0
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    cancel_event: threading.Event = field(default_factory=threading.Event, repr=False)
    #: Set when the job has ended (done, failed or cancelled): what a long poll waits on.
    ended: threading.Event = field(default_factory=threading.Event, repr=False)

    def finish(self, status: str) -> None:
        """Record the job's final status and wake whoever waits on it.

        Parameters
        ----------
        status : str
            ``"done"``, ``"failed"`` or ``"cancelled"``.
        """
        self.status = status
        self.ended.set()

    def as_dict(self) -> dict[str, Any]:
        """The job as JSON-ready values.

        Returns
        -------
        dict
        """
        return {
            "id": self.id,
            "kind": self.kind,
            "status": self.status,
            "done": self.done,
            "total": self.total,
            "result": self.result,
            "error": self.error,
        }

    def progress(self, done: int, total: int) -> None:
        """The progress callback given to the method; raises when the job was cancelled.

        Parameters
        ----------
        done, total : int
            As the method reports them.
        """
        if self.cancel_event.is_set():
            raise Cancelled
        self.done, self.total = int(done), int(total)


class JobRunner:
    """Runs jobs one at a time on a worker thread.

    Parameters
    ----------
    describe_error : callable
        ``describe_error(exc) -> dict`` for a failed job's ``error``.
    keep : int, default 100
        Finished jobs remembered.
    """

    def __init__(self, describe_error: Callable[[BaseException], dict[str, Any]], keep: int = 100):
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sdckit-studio")
        self._jobs: dict[str, Job] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._describe_error = describe_error
        self._keep = keep

    def submit(
        self,
        kind: str,
        work: Callable[[Job], dict[str, Any] | None],
        commit: Callable[[Job, Any], dict[str, Any]] | None = None,
    ) -> Job:
        """Queue ``work(job)``; ``commit(job, value)`` records its value unless cancelled.

        Parameters
        ----------
        kind : str
            ``"apply"`` or ``"sweep"``.
        work : callable
            Computes; must not change shared state.
        commit : callable, optional
            Records the computed value (called only for a job not cancelled).

        Returns
        -------
        Job
        """
        with self._lock:
            job = Job(id=str(next(self._ids)), kind=kind)
            self._jobs[job.id] = job
            finished = [
                j for j in self._jobs.values() if j.status in ("done", "failed", "cancelled")
            ]
            for old in finished[: max(0, len(finished) - self._keep)]:
                del self._jobs[old.id]

        def run() -> None:
            if job.cancel_event.is_set():
                job.finish("cancelled")
                return
            job.status = "running"
            try:
                value = work(job)
                if job.cancel_event.is_set():
                    job.finish("cancelled")
                    return
                job.result = commit(job, value) if commit is not None else value
                job.finish("done")
            except Cancelled:
                job.finish("cancelled")
            except Exception as exc:  # reported to the page as the job's error, never lost
                job.error = self._describe_error(exc)
                job.finish("failed")

        self._executor.submit(run)
        return job

    def get(self, job_id: str) -> Job | None:
        """The job of that id, if known.

        Parameters
        ----------
        job_id : str
            From :meth:`submit`.

        Returns
        -------
        Job or None
        """
        with self._lock:
            return self._jobs.get(job_id)

    def cancel(self, job_id: str) -> Job | None:
        """Ask a job to stop; a finished job is left as it is.

        Parameters
        ----------
        job_id : str
            The job to stop. A queued job is cancelled at once, a running one
            at its next progress report.

        Returns
        -------
        Job or None
            The job as it is now (None when the id is unknown).
        """
        job = self.get(job_id)
        if job is not None and job.status in ("queued", "running"):
            job.cancel_event.set()
            if job.status == "queued":
                job.finish("cancelled")
        return job

    def wait(self, job_id: str, timeout: float) -> Job | None:
        """The job once it has ended, or as it is after ``timeout`` seconds (a long poll).

        A client waiting here is woken when the job ends rather than asking
        again and again, so it takes no time from the worker.

        Parameters
        ----------
        job_id : str
            From :meth:`submit`.
        timeout : float
            Seconds to wait at most (0: answer at once).

        Returns
        -------
        Job or None
            None when the id is unknown.
        """
        job = self.get(job_id)
        if job is not None and timeout > 0:
            job.ended.wait(timeout)
        return job

    def shutdown(self) -> None:
        """Cancel every job and stop the worker."""
        with self._lock:
            jobs = list(self._jobs.values())
        for job in jobs:
            job.cancel_event.set()
        self._executor.shutdown(wait=False, cancel_futures=True)
