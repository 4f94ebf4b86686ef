"""sdckit on Dask: the work that outgrows one machine.

The only package of sdckit that imports Dask. Its functions read a
directory of Parquet files (one Dask partition per file, the schema
enforced per partition) and call the single-machine library underneath:
tables and key risk as map-reduce (per-partition counts and record-key
sums, combined, then :func:`sdckit.tables.tabulate`'s margins and
hierarchies and :func:`sdckit.tables.cell_key_perturb`'s noise), and RWN by
partitions (Perry, Matloff & Tendick (2022), §11.3, Method 3), each
partition masked by :func:`sdckit.microdata.rwn`.
"""

from sdckit.distributed._io import ParquetSource, read_parquet, write_parquet
from sdckit.distributed.cluster import SCHEDULER_ENV, dask_client, scheduler_address

__all__ = [
    "SCHEDULER_ENV",
    "ParquetSource",
    "dask_client",
    "read_parquet",
    "scheduler_address",
    "write_parquet",
]
