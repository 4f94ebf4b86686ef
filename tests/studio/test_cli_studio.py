"""`sdckit studio` refuses what it cannot open before it starts anything."""

from __future__ import annotations

from sdckit.cli.main import main


def test_a_missing_file_is_exit_2_and_makes_no_folder(tmp_path, capsys):
    out = tmp_path / "release"
    code = main(["studio", str(tmp_path / "nope.csv"), "--output-dir", str(out), "--no-browser"])
    text = capsys.readouterr()
    assert code == 2
    assert "nope.csv" in text.out + text.err
    assert not out.exists()


def test_an_output_dir_that_is_a_file_is_exit_2(tmp_path, capsys):
    data = tmp_path / "in.csv"
    data.write_text("a\n1\n")
    code = main(["studio", str(data), "--output-dir", str(data), "--no-browser"])
    text = capsys.readouterr()
    assert code == 2
    assert "is not a folder" in text.out + text.err
