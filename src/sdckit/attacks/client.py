"""A running analysis service as an attack target, through its public HTTP API and a token.

The intruder goes through the same door as an analyst: ``GET /api/metadata``
for the public metadata, ``POST /api/regression`` for each query, with
``Authorization: Bearer <token>``. Nothing here reads the server's data.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import httpx

from sdckit.attacks.targets import (
    Answer,
    PublicMetadata,
    Refused,
    RegressionQuery,
    fit_doc,
    translate_query,
)
from sdckit.errors import ParameterError, SDCError

__all__ = ["ServiceError", "ServiceTarget"]


class ServiceError(SDCError):
    """The service did not answer, refused the token, or answered something unexpected."""


class ServiceTarget:
    """The analysis service at ``url``, attacked with an analyst's token.

    Parameters
    ----------
    url : str
        The service's address, e.g. ``"http://127.0.0.1:8000"``.
    token : str
        An analyst's API token (``sdck_...``).
    timeout : float, default 60
        Seconds to wait for one answer.
    max_wait : float, default 120
        Longest total wait on rate-limit answers (429 with Retry-After) for
        one query before giving up.
    name : str, optional
        How results name the target (default the URL).
    """

    def __init__(
        self,
        url: str,
        token: str,
        *,
        timeout: float = 60.0,
        max_wait: float = 120.0,
        name: str | None = None,
    ) -> None:
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ParameterError(f"url must start with http:// or https://, got {url!r}")
        if not isinstance(token, str) or not token:
            raise ParameterError("token must be a non-empty string")
        self.url = url.rstrip("/")
        self.name = name or f"service at {self.url}"
        self._max_wait = float(max_wait)
        self._client = httpx.Client(
            base_url=self.url,
            headers={"Authorization": f"Bearer {token}"},
            timeout=timeout,
        )
        self.metadata = PublicMetadata(self._request("GET", "/api/metadata"))

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()

    def __enter__(self) -> ServiceTarget:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _request(self, method: str, path: str, body: Any = None) -> Any:
        waited = 0.0
        while True:
            try:
                response = self._client.request(method, path, json=body)
            except httpx.HTTPError as exc:
                raise ServiceError(
                    f"url: the service at {self.url} does not answer ({type(exc).__name__}: {exc})"
                ) from None
            if response.status_code == 401:
                raise ServiceError(f"token: the service at {self.url} refused the token (401)")
            if response.status_code == 429:
                wait = float(response.headers.get("Retry-After", "1"))
                if waited + wait > self._max_wait:
                    raise ServiceError(
                        f"the service at {self.url} kept rate-limiting the attack for "
                        f"{waited:.0f} s; raise the account's rate limit or max_wait"
                    )
                time.sleep(wait)
                waited += wait
                continue
            try:
                payload = response.json()
            except ValueError:
                raise ServiceError(
                    f"the service at {self.url} answered {path} with HTTP "
                    f"{response.status_code} and no JSON; is it an sdckit service?"
                ) from None
            if response.status_code >= 400 and payload.get("status") != "refused":
                message = payload.get("message") or payload.get("detail") or payload
                raise ServiceError(
                    f"the service at {self.url} answered {path} with HTTP "
                    f"{response.status_code}: {message}"
                )
            return payload

    def ask(self, analysis: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """Any analysis through its route (``POST /api/<analysis>``), as an analyst sends it.

        Parameters
        ----------
        analysis : {"crosstab", "regression", "correlation", "universe_check"}
            The analysis.
        body : mapping
            The request body.

        Returns
        -------
        dict
            The service's JSON answer: ``status`` "ok" or "refused".
        """
        routes = {
            "crosstab": "/api/crosstab",
            "regression": "/api/regression",
            "correlation": "/api/correlation",
            "universe_check": "/api/universe/check",
        }
        if analysis not in routes:
            raise ParameterError(f"analysis must be one of {sorted(routes)}, got {analysis!r}")
        return dict(self._request("POST", routes[analysis], dict(body)))

    @fit_doc
    def fit(self, query: RegressionQuery) -> Answer | Refused:
        """Send the translated query (see :mod:`sdckit.attacks.targets`) to ``POST /api/regression``.

        {{fit}}
            The released coefficients, or the service's refusal reasons.
        """
        formula, universe, _ = translate_query(query, self.metadata)
        if formula is None:
            return Refused(("the query has no regressor the formula language can express",))
        payload = self._request(
            "POST", "/api/regression", {"universe": universe, "formula": formula}
        )
        if payload.get("status") != "ok":
            return Refused(
                tuple(f"{r.get('rule')}: {r.get('reason')}" for r in payload.get("refusals", []))
                or ("refused",)
            )
        coefficients = payload["coefficients"]
        return Answer(
            tuple(str(c["term"]) for c in coefficients),
            tuple(float(c["estimate"]) for c in coefficients),
            int(payload["n_obs"]),
        )
