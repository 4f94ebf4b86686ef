"""io: unreadable and unwritable paths give DataErrors, CSVs are read without silent losses."""

from __future__ import annotations

import os

import pandas as pd
import pytest

from sdckit.errors import DataError
from sdckit.io import check_output_path, read_table, write_table


def _leftovers(directory) -> list[str]:
    return [p for p in os.listdir(directory) if p.endswith(".tmp")]


def test_writing_onto_a_directory_is_a_data_error(tmp_path):
    target = tmp_path / "out.csv"
    target.mkdir()
    with pytest.raises(DataError, match="is a directory"):
        write_table(pd.DataFrame({"a": [1]}), target)
    with pytest.raises(DataError, match="is a directory"):
        check_output_path(target)
    assert _leftovers(tmp_path) == []


def test_writing_into_a_missing_directory_is_a_data_error(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        write_table(pd.DataFrame({"a": [1]}), tmp_path / "nope" / "out.csv")
    with pytest.raises(DataError, match="does not exist"):
        check_output_path(tmp_path / "nope" / "out.parquet")


def test_parquet_conversion_failure_leaves_nothing(tmp_path):
    bad = pd.DataFrame({"a": [object(), object()]})
    target = tmp_path / "out.parquet"
    with pytest.raises(DataError, match="Parquet"):
        write_table(bad, target)
    assert not target.exists()
    assert _leftovers(tmp_path) == []


def test_existing_file_survives_a_failed_write(tmp_path):
    target = tmp_path / "out.parquet"
    write_table(pd.DataFrame({"a": [1, 2]}), target)
    with pytest.raises(DataError):
        write_table(pd.DataFrame({"a": [object()]}), target)
    assert read_table(target)["a"].tolist() == [1, 2]


def test_reading_a_directory_is_a_data_error(tmp_path):
    folder = tmp_path / "in.csv"
    folder.mkdir()
    with pytest.raises(DataError, match="directory"):
        read_table(folder)


def test_leading_zero_codes_survive_a_round_trip(tmp_path):
    src = tmp_path / "zip.csv"
    src.write_text('zip,code,x\n02134,"007",1.5\n10001,12,2.5\n00501,3,\n')
    data = read_table(src)
    assert data["zip"].tolist() == ["02134", "10001", "00501"]
    assert data["code"].tolist() == ["007", "12", "3"]
    assert pd.api.types.is_float_dtype(data["x"].dtype)
    out = tmp_path / "back.csv"
    write_table(data, out)
    assert out.read_text().splitlines()[1].startswith("02134,007,")


def test_plain_numbers_stay_numbers(tmp_path):
    src = tmp_path / "n.csv"
    src.write_text("a,b\n0,0.5\n10,-0.25\n0,1e3\n")
    data = read_table(src)
    assert pd.api.types.is_integer_dtype(data["a"].dtype)
    assert pd.api.types.is_float_dtype(data["b"].dtype)


def test_row_longer_than_header_is_refused_not_shifted(tmp_path):
    src = tmp_path / "ragged.csv"
    src.write_text("a,b\n1,2\n3,4,5\n")
    with pytest.raises(DataError, match="line 3"):
        read_table(src)
    first = tmp_path / "ragged1.csv"
    first.write_text("a,b\n1,2,3\n4,5,6\n")
    with pytest.raises(DataError, match="more fields than the header"):
        read_table(first)


@pytest.mark.parametrize("sep", [";", "\t", "|"])
def test_other_separators_are_recognised(tmp_path, sep):
    src = tmp_path / "semi.csv"
    src.write_text(f"a{sep}b\n1{sep}x\n2{sep}y\n")
    data = read_table(src)
    assert list(data.columns) == ["a", "b"]
    assert data["a"].tolist() == [1, 2]
