"""``sdckit server add-user|revoke|list-users|audit`` and ``sdckit serve`` argument checks."""

from __future__ import annotations

import json

from sdckit.cli.main import main
from sdckit.server.store import Store


def test_account_commands(tmp_path, capsys):
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    assert main(["server", "add-user", "carol", "--db", db, "--daily-budget", "7"]) == 0
    token = capsys.readouterr().out.strip()
    assert token.startswith("sdck_")
    with Store(db) as store:
        assert store.authenticate(token).daily_budget == 7
    assert main(["server", "add-user", "carol", "--db", db]) == 2
    assert "already exists" in capsys.readouterr().err
    assert main(["server", "list-users", "--db", db, "--json"]) == 0
    [listed] = json.loads(capsys.readouterr().out)
    assert listed["name"] == "carol" and listed["active"] and token not in json.dumps(listed)
    assert main(["server", "revoke", "carol", "--db", db]) == 0
    assert "revoked carol" in capsys.readouterr().out
    with Store(db) as store:
        assert store.authenticate(token) is None
    assert main(["server", "list-users", "--db", db]) == 0
    assert "revoked" in capsys.readouterr().out
    assert main(["server", "audit", "--db", db, "--json"]) == 0
    assert capsys.readouterr().out == ""


def test_serve_checks_its_arguments(tmp_path, capsys):
    assert main(["serve", "--db", str(tmp_path / "s.db")]) == 2
    assert "--data and --metadata" in capsys.readouterr().err
    assert main(["serve", "--demo", "--data", "x.csv"]) == 2
    assert "--demo" in capsys.readouterr().err
    assert main(["serve", "--demo", "--port", "0"]) == 2
    assert "--port" in capsys.readouterr().err
