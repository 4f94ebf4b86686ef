"""Constants shared by the tables tests (importable as ``tables_constants``)."""

REGIONS = {"district": {"north": ["d1", "d2"], "south": ["d3", "d4", "d5"]}}
