"""`sdckit rwn --categorical`: numeric codes declared as categories; outputs checked before the work."""

from __future__ import annotations

import numpy as np
import pandas as pd

from sdckit.cli.main import main
from sdckit.microdata.rwn import rwn
from sdckit.schema import Schema


def _codes_file(tmp_path):
    rng = np.random.default_rng(2)
    n = 120
    data = pd.DataFrame(
        {
            "id": np.arange(n),
            "region": rng.choice([1, 2, 9], n),
            "income": rng.normal(50, 10, n).round(1),
            "age": rng.integers(18, 80, n),
        }
    )
    path = tmp_path / "codes.csv"
    data.to_csv(path, index=False)
    return data, path


def test_categorical_codes_give_the_categorical_design(tmp_path):
    data, src = _codes_file(tmp_path)
    out = tmp_path / "out.csv"
    args = ["rwn", str(src), "-o", str(out), "--seed", "5", "--exclude", "id", "--quiet"]
    assert main([*args, "--categorical", "region"]) == 0
    masked = pd.read_csv(out)
    schema = Schema.infer(data[["region", "income", "age"]], kinds={"region": "categorical"})
    expected = rwn(data, columns=["region", "income", "age"], schema=schema, random_state=5)
    pd.testing.assert_frame_equal(masked, expected.data)
    assert masked["region"].dtype == data["region"].dtype
    assert set(masked["region"]) <= {1, 2, 9}
    # Without the declaration the codes would be masked as numbers: refused, naming them.
    assert main([*args]) == 2
    # Named with --columns, they are numbers (9 far from 1): another design.
    assert main([*args, "--columns", "region,income,age"]) == 0
    assert not pd.read_csv(out).equals(masked)


def test_categorical_option_errors(tmp_path, capsys):
    _, src = _codes_file(tmp_path)
    out = str(tmp_path / "out.csv")
    assert main(["rwn", str(src), "-o", out, "--categorical", "nope", "--quiet"]) == 2
    assert "--categorical: unknown column(s) ['nope']" in capsys.readouterr().err
    code = main(["rwn", str(src), "-o", out, "--exclude", "id", "--categorical", "id"])
    assert code == 2
    assert "are not masked" in capsys.readouterr().err


def test_unwritable_output_is_refused_before_masking(tmp_path, capsys):
    _, src = _codes_file(tmp_path)
    code = main(["rwn", str(src), "-o", str(tmp_path / "none" / "o.csv"), "--quiet"])
    assert code == 2
    err = capsys.readouterr().err
    assert "does not exist" in err and "RWN" not in err
    code = main(["rwn", str(src), "-o", str(tmp_path / "o.csv"), "--diagnostics", "d.xlsx"])
    assert code == 2
    assert not (tmp_path / "o.csv").exists()
