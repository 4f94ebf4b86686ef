"""P-tables in the ONS layout (pcv, ckey, pvalue) and the tidy (R ptable) layout, in and out.

The ONS convention is checked against an independent, literal implementation
of its documented lookup: cell key = sum of record keys modulo K; the row
used is the count up to 750, else ((count - 1) mod 250) + 501; the noise is
the row's pvalue for that key.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdckit.errors import DataError, ParameterError
from sdckit.tables import (
    add_record_keys,
    cell_key_perturb,
    design_ptable,
    read_ptable,
    tabulate,
    write_ptable,
)

K = 256


def rounding_rule(pcv: int) -> int:
    """The 10-5 rule: counts below 10 become 0, others are rounded to a multiple of 5."""
    if pcv < 10:
        return -pcv
    return {0: 0, 1: -1, 2: -2, 3: 2, 4: 1}[pcv % 5]


def ons_frame(rule) -> pd.DataFrame:
    pcv = np.repeat(np.arange(1, 751), K)
    ckey = np.tile(np.arange(K), 750)
    return pd.DataFrame(
        {"pcv": pcv, "ckey": ckey, "pvalue": [rule(p, c) for p, c in zip(pcv, ckey, strict=True)]}
    )


def ons_lookup(frame: pd.DataFrame, counts: np.ndarray, ckeys: np.ndarray) -> np.ndarray:
    table = {(int(p), int(c)): int(v) for p, c, v in frame[["pcv", "ckey", "pvalue"]].to_numpy()}
    out = []
    for count, key in zip(counts, ckeys, strict=True):
        count = int(count)
        pcv = count if count <= 750 else (count - 1) % 250 + 501
        out.append(table.get((pcv, int(key)), 0))
    return np.array(out)


@pytest.fixture(scope="module")
def people() -> pd.DataFrame:
    rng = np.random.default_rng(5)
    n = 60_000
    data = pd.DataFrame(
        {
            "area": rng.choice([f"a{i}" for i in range(12)], n, p=np.r_[[0.45], np.full(11, 0.05)]),
            "age": rng.choice(["young", "middle", "old"], n),
            "sex": rng.choice(["f", "m"], n),
        }
    )
    return add_record_keys(data, seed=1, key_range=K)


def test_rounding_table_uses_the_ons_cycle_for_large_counts(people, tmp_path) -> None:
    frame = ons_frame(lambda p, c: rounding_rule(p))
    frame.to_csv(tmp_path / "ptable_10_5.csv", index=False)
    ptable = read_ptable(tmp_path / "ptable_10_5.csv")
    assert ptable.key_range == K and ptable.large_counts == "cycle" and ptable.cycle_start == 501
    result = cell_key_perturb(people, ptable, dims=["area", "age", "sex"])
    internal = result.internal
    assert (internal["count"] > 1000).any()  # the cycle matters on this table
    perturbed = internal["perturbed"].to_numpy()
    assert ((perturbed % 5 == 0) & ((perturbed == 0) | (perturbed >= 10))).all()
    expected = ons_lookup(frame, internal["count"].to_numpy(), internal["cell_key"].to_numpy())
    assert (internal["noise"].to_numpy() == expected).all()
    # the cell keys are the record keys summed modulo 256
    table = tabulate(people, ["area"], margins=False, record_key="record_key", key_modulus=K)
    sums = people.groupby("area")["record_key"].sum() % K
    assert (table.set_index("area")["cell_key"] == sums.reindex(table["area"]).to_numpy()).all()


def test_key_by_key_lookup_is_exact_whatever_the_key_order(people) -> None:
    rng = np.random.default_rng(3)
    noise = rng.choice([-1, 0, 0, 1], size=(751, K))
    noise[1:3] = np.abs(
        noise[1:3]
    )  # counts 1 and 2 never fall below 0 ... and 1 -> 2 is allowed here
    frame = ons_frame(lambda p, c: int(noise[p, c]))
    ptable = read_ptable(frame)
    internal = cell_key_perturb(people, ptable, dims=["area", "age"]).internal
    expected = ons_lookup(frame, internal["count"].to_numpy(), internal["cell_key"].to_numpy())
    assert (internal["noise"].to_numpy() == expected).all()
    assert read_ptable(frame).transition(5).sum() == pytest.approx(1.0)


def test_designed_table_written_in_ons_layout_perturbs_the_same(people, tmp_path) -> None:
    designed = design_ptable(D=3, V=2.01)
    write_ptable(designed, tmp_path / "ons.csv", format="ons")
    written = pd.read_csv(tmp_path / "ons.csv")
    assert list(written.columns) == ["pcv", "ckey", "pvalue"] and len(written) == 750 * K
    again = read_ptable(tmp_path / "ons.csv")
    ours = cell_key_perturb(people, designed, dims=["area", "age", "sex"])
    via_ons = cell_key_perturb(people, again, dims=["area", "age", "sex"])
    # record keys 0..255 read with the default modulus (2^31 - 1) give other cell keys, so
    # compare the key-by-key table with the designed one on the same keys modulo 256:
    table = tabulate(people, ["area", "age", "sex"], record_key="record_key", key_modulus=K)
    same_keys = table.assign(cell_key=table["cell_key"] / K)
    designed_noise = cell_key_perturb(same_keys, designed).internal["noise"].to_numpy()
    assert (via_ons.internal["noise"].to_numpy() == designed_noise).all()
    assert (via_ons.internal["perturbed"] != 1).all() and (via_ons.internal["perturbed"] != 2).all()
    assert len(ours.table) == len(via_ons.table)


def test_tidy_round_trip(tmp_path) -> None:
    designed = design_ptable(D=4, V=2.5)
    write_ptable(designed, tmp_path / "p.csv")
    again = read_ptable(tmp_path / "p.csv")
    assert np.allclose(again.matrix, designed.matrix)
    assert again.large_counts == "last_row" and again.key_range is None


def test_bad_ptables_give_one_clear_error(tmp_path) -> None:
    frame = ons_frame(lambda p, c: 0).iloc[:-1]
    with pytest.raises(DataError, match=r"no row for pcv=750, ckey=255"):
        read_ptable(frame)
    with pytest.raises(DataError, match="neither the columns i, j, p"):
        read_ptable(pd.DataFrame({"a": [1]}))
    with pytest.raises(DataError, match="does not exist"):
        read_ptable(tmp_path / "nope.csv")
    bad = ons_frame(lambda p, c: 0).astype({"pvalue": object})
    bad.loc[5, "pvalue"] = "x"
    with pytest.raises(DataError, match=r"'pvalue' must hold whole numbers; row 7"):
        read_ptable(bad)
    with pytest.raises(ParameterError, match="format must be one of"):
        read_ptable(bad, format="tau")


def test_integer_cell_keys_beyond_the_key_range_are_refused(people) -> None:
    ptable = read_ptable(ons_frame(lambda p, c: 0))
    table = tabulate(people, ["area"], record_key="record_key")  # default modulus 2^31 - 1
    if (table["cell_key"] < K).all():
        pytest.skip("all cell keys happen to be below 256")
    with pytest.raises(DataError, match="tabulate with key_modulus=256"):
        cell_key_perturb(table, ptable)


# tau-ARGUS's text layout for count tables: header i;j;p;v;p_ij_ub, one line per transition.
TAUARGUS_SMALL = """"i";"j";"p";"v";"p_ij_ub"
0;0;1;0;1
1;0;0.5;-1;0.5
1;2;0.5;1;1
2;1;0.25;-1;0.25
2;2;0.5;0;0.75
2;3;0.25;1;1
"""


def test_tauargus_round_trip(tmp_path) -> None:
    designed = design_ptable(D=3, V=2.01)
    write_ptable(designed, tmp_path / "p.txt", format="tauargus")
    lines = (tmp_path / "p.txt").read_text().splitlines()
    assert lines[0] == '"i";"j";"p";"v";"p_ij_ub"' and lines[1] == "0;0;1;0;1"
    again = read_ptable(tmp_path / "p.txt")  # recognised by its header
    assert np.abs(again.matrix - designed.matrix).max() < 1e-15
    assert (again.D, again.js, again.large_counts) == (3, 2, "last_row")
    assert again.V == pytest.approx(designed.V)


def test_hand_written_tauargus_file(tmp_path) -> None:
    from sdckit.tables.cellkey import lookup_noise

    path = tmp_path / "small.txt"
    path.write_text(TAUARGUS_SMALL)
    ptable = read_ptable(path, format="tauargus")
    assert ptable.D == 1 and ptable.js == 0 and ptable.n_rows == 3
    assert ptable.V == pytest.approx(0.5)  # the last row: 0.25 * 1 + 0.25 * 1
    assert ptable.transition(9).to_dict() == {8: 0.25, 9: 0.5, 10: 0.25}  # last row, shifted
    # a cell key selects the first j whose p_ij_ub exceeds it
    noise = lookup_noise(
        np.array([1, 1, 2, 2, 2, 40]), np.array([0.4, 0.6, 0.2, 0.7, 0.8, 0.1]), ptable
    )
    assert noise.tolist() == [-1, 1, -1, 0, 1, -1]


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            '"p_ij_ub"',
            '"p_int_ub"',
            r"small.txt, line 1: a tau-ARGUS p-table starts with the header",
        ),
        ("1;2;0.5;1;1", "1;2;0.5;1", r"line 4: 4 fields, expected 5"),
        ("2;2;0.5;0;0.75", "2;2;x;0;0.75", r"line 6, field 'p': 'x' is not a number"),
        ("2;2;0.5;0;0.75", "2;2;0.5;1;0.75", r"line 6, field 'v': 1 is not j - i = 0"),
        (
            "2;1;0.25;-1;0.25",
            "2;1;0.25;-1;0.3",
            r"line 5, field 'p_ij_ub': 0.3 is not the cumulative",
        ),
        (
            "2;3;0.25;1;1",
            "2;3;0.2;1;0.95",
            r"line 7: row i=2 ends with cumulative probability 0.95",
        ),
        (
            "2;3;0.25;1;1\n",
            "2;3;0.25;1;1\n1;3;0.25;2;0.25\n",
            r"line 8, field 'i': row i=1 resumes",
        ),
        (
            "2;1;0.25;-1;0.25\n2;2;0.5;0;0.75",
            "2;2;0.5;0;0.5\n2;1;0.25;-1;0.75",
            r"line 6, field 'j'",
        ),
        ("1;0;0.5;-1;0.5", "1.5;0;0.5;-1;0.5", r"line 3, field 'i': 1.5 is not a whole number"),
    ],
)
def test_malformed_tauargus_file_names_line_and_field(tmp_path, old, new, message) -> None:
    assert old in TAUARGUS_SMALL
    path = tmp_path / "small.txt"
    path.write_text(TAUARGUS_SMALL.replace(old, new))
    with pytest.raises(DataError, match=message):
        read_ptable(path, format="tauargus")


def test_tauargus_refuses_what_it_cannot_hold(tmp_path) -> None:
    ons = read_ptable(ons_frame(lambda p, c: rounding_rule(p)))
    with pytest.raises(ParameterError, match="cannot hold rows 501..750 reused in turn"):
        write_ptable(ons, tmp_path / "p.txt", format="tauargus")
    with pytest.raises(ParameterError, match="reads a file"):
        read_ptable(pd.DataFrame({"i": [0], "j": [0], "p": [1.0]}), format="tauargus")
    assert not (tmp_path / "p.txt").exists()


def sorted_noise(p: int, c: int) -> int:
    """Noise non-decreasing in the cell key, the same for every count from 3 up."""
    if p < 3:
        return 0
    return -1 if c < 64 else (0 if c < 192 else 1)


@pytest.mark.parametrize(
    ("rule", "lost"),
    [
        (lambda p, c: rounding_rule(p), r"rows 501\.\.750 reused in turn for counts above 750"),
        (lambda p, c: [1, -1, 0, 0][c % 4] if p >= 3 else 0, "noise given key by key for 256"),
    ],
    ids=["cycle", "key-order"],
)
def test_tidy_writer_refuses_what_it_would_lose(rule, lost, tmp_path) -> None:
    ptable = read_ptable(ons_frame(rule))
    with pytest.raises(ParameterError, match=lost):
        write_ptable(ptable, tmp_path / "p.csv")
    with pytest.raises(ParameterError, match=lost):
        write_ptable(ptable, tmp_path / "p.txt", format="tauargus")
    with pytest.raises(ParameterError, match="probabilities_only=True"):
        ptable.to_frame()
    assert not (tmp_path / "p.csv").exists() and not (tmp_path / "p.txt").exists()
    frame = ptable.to_frame(probabilities_only=True)  # asked for: the probabilities alone
    assert np.allclose(frame.groupby("i")["p"].sum(), 1.0)


def test_tidy_writer_writes_an_ons_table_it_can_hold(tmp_path) -> None:
    from sdckit.tables.cellkey import lookup_noise

    ons = read_ptable(ons_frame(sorted_noise))
    assert ons.large_counts == "cycle" and ons.lost_in_tidy_layout() == []
    write_ptable(ons, tmp_path / "p.csv")
    again = read_ptable(tmp_path / "p.csv")
    counts = np.repeat(np.arange(2000), K)
    keys = np.tile(np.arange(K) / K, 2000)
    assert (lookup_noise(counts, keys, again) == lookup_noise(counts, keys, ons)).all()
    assert set(np.unique(lookup_noise(counts, keys, again))) == {-1, 0, 1}
