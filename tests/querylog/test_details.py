"""Times and clicks in a microaggregated release, kept only where they single no member out."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cli_words import sdckit
from sdckit.cli.main import main
from sdckit.errors import ParameterError
from sdckit.querylog import TableTaxonomy, protect, read_log, zealous
from sdckit.querylog.details import click_hosts, released_clicks, released_times
from sdckit.querylog.reading import MISSING_TIME

MEMBERS = ["a", "b", "c", "d", "e"]


def group_log() -> pd.DataFrame:
    """Five users who all searched at 09:xx on 1 March; user a also alone on 10 April."""
    rows = []
    for i, user in enumerate(MEMBERS):
        rows.append((user, "weather", f"2006-03-01 09:{10 + i}:00", "http://www.weather.com/x"))
    rows.append(("a", "my name", "2006-03-01 14:00:00", "http://smith-family.org/~jo/cv.html"))
    rows.append(("a", "divorce lawyer", "2006-04-10 23:00:00", ""))
    rows.append(("b", "no time", "", ""))
    return pd.DataFrame(rows, columns=["AnonID", "Query", "QueryTime", "ClickURL"])


def line_of(log, user: str, query: str) -> int:
    user_code = list(log.user_ids).index(user)
    query_code = list(log.queries).index(query)
    return int(np.flatnonzero((log.line_users == user_code) & (log.line_queries == query_code))[0])


def test_read_times_and_clicks(tmp_path: Path) -> None:
    path = tmp_path / "user-ct-test-collection-01.txt"
    path.write_text(
        "AnonID\tQuery\tQueryTime\tItemRank\tClickURL\n"
        "142\trentdirect.com\t2006-03-01 07:17:12\n"
        "142\tbad time\tyesterday\n"
        "142\twolf\t2006-03-02 00:00:30\t1\thttp://www.wolf.org\n"
        "217\tno time\t\n",
        encoding="utf-8",
    )
    log = read_log(path, time_column="QueryTime", click_column="ClickURL")
    assert log.bad_lines == (3,)  # "yesterday" is not a date
    start = np.datetime64("2006-03-01T07:17", "m").astype(np.int64)
    assert log.line_times.tolist() == [start, start + 24 * 60 - 7 * 60 - 17, MISSING_TIME]
    assert log.line_clicks.tolist() == [-1, 0, -1] and log.clicks.tolist() == [
        "http://www.wolf.org"
    ]
    assert read_log(path).line_times is None  # not read unless asked


def test_a_time_is_released_only_where_k_members_searched() -> None:
    log = read_log(group_log(), time_column="QueryTime", click_column="ClickURL")
    labels = np.zeros(log.n_users, dtype=np.int64)  # one group of five
    lines = np.array(
        [
            line_of(log, "a", "weather"),  # all five searched in that hour
            line_of(log, "a", "my name"),  # only a at 14:00; all five that day
            line_of(log, "a", "divorce lawyer"),  # only a that day and that month
            line_of(log, "b", "no time"),
        ]
    )
    times, counts = released_times(log, labels, lines, k=5, granularity="hour")
    assert times.tolist() == ["2006-03-01 09:00", "2006-03-01", "", ""]
    assert counts == {"hour": 1, "day": 1, "month": 0, "withheld": 1, "missing": 1}
    # With k = 6 no period has six members: nothing is released.
    times, _ = released_times(log, labels, lines, k=6, granularity="day")
    assert times.tolist() == ["", "", "", ""]
    with pytest.raises(ParameterError, match="times must be one of hour, day, month"):
        released_times(log, labels, lines, k=5, granularity="minute")


def test_only_hosts_many_users_clicked_are_released() -> None:
    hosts, codes = click_hosts(np.array(["http://www.X.org/a?id=7", "www.x.org", "y.com/p"]))
    assert hosts[codes].tolist() == ["www.x.org", "www.x.org", "y.com"]
    log = read_log(group_log(), time_column="QueryTime", click_column="ClickURL")
    lines = np.array([line_of(log, "c", "weather"), line_of(log, "a", "my name")])
    clicks, counts = released_clicks(log, lines, min_users=5)
    # The path of a common host is dropped; a host one person clicked is withheld.
    assert clicks.tolist() == ["www.weather.com", ""]
    assert counts == {"released": 1, "withheld": 1}
    assert released_clicks(log, lines, min_users=1)[0].tolist()[1] == "smith-family.org"


def test_protect_keeps_the_same_queries_with_times_and_clicks(tmp_path: Path) -> None:
    path = tmp_path / "taxonomy.csv"
    path.write_text("term,category_path\nweather,News/Weather\n", encoding="utf-8")
    frame = group_log()
    before = frame.copy()
    plain = protect(frame, k=5, taxonomy=TableTaxonomy(path), random_state=4)
    kept = protect(
        frame, k=5, taxonomy=TableTaxonomy(path), random_state=4, times="day", clicks=True
    )
    pd.testing.assert_frame_equal(frame, before)
    pd.testing.assert_frame_equal(kept.data[["AnonID", "Query"]], plain.data)
    assert list(kept.data.columns) == ["AnonID", "Query", "QueryTime", "ClickURL"]
    assert "smith-family" not in " ".join(kept.data["ClickURL"])
    assert "2006-04-10" not in set(kept.data["QueryTime"])
    assert set(kept.data["QueryTime"]) <= {"2006-03-01", ""}
    assert "times kept where at least k members" in kept.summary()
    assert "times dropped" in plain.summary()


def test_cli_keeps_times_and_clicks_and_refuses_them_with_zealous(tmp_path: Path, capsys) -> None:
    log, out = tmp_path / "log.csv", tmp_path / "protected.csv"
    group_log().to_csv(log, index=False)
    taxonomy = tmp_path / "taxonomy.csv"
    taxonomy.write_text("term,category_path\nweather,News/Weather\n", encoding="utf-8")
    code = sdckit(
        "querylog protect {} -o {} --k 5 --taxonomy {} --keep-times month --keep-clicks "
        "--seed 1 --quiet",
        log,
        out,
        taxonomy,
    )
    assert code == 0
    release = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert set(release["QueryTime"]) <= {"2006-03", ""}
    args = ["querylog", "protect", str(log), "-o", str(tmp_path / "z.csv"), "--quiet"]
    assert main([*args, "--method", "zealous", "--keep-times", "day"]) == 2
    assert "--keep-times and --keep-clicks go with --method microaggregation" in (
        capsys.readouterr().err
    )
    assert main([*args, "--keep-times", "week"]) == 2
    assert "times must be one of hour, day, month" in capsys.readouterr().err


def test_zealous_releases_query_click_pairs() -> None:
    rows = [(f"u{i}", "weather", "http://weather.com") for i in range(200)]
    rows += [(f"u{i}", "weather", "http://rare.org") for i in range(3)]
    rows += [(f"u{i}", "news", "") for i in range(200)]
    frame = pd.DataFrame(rows, columns=["AnonID", "Query", "ClickURL"])
    release = zealous(frame, items="query-clicks", epsilon=1.0, delta=1e-5, random_state=0)
    assert list(release.data.columns) == ["Query", "ClickURL", "count"]
    # "news" has no click (no item); the rare pair falls under tau'.
    assert release.data[["Query", "ClickURL"]].values.tolist() == [
        ["weather", "http://weather.com"]
    ]
    assert abs(int(release.data["count"].iloc[0]) - 200) < 40
    assert "query-click pairs" in release.summary().splitlines()[0]
    with pytest.raises(ParameterError, match="items must be 'queries' or 'query-clicks'"):
        zealous(frame, items="clicks")
    with pytest.raises(ParameterError, match="need the log read with its click column"):
        zealous(read_log(frame), items="query-clicks")
