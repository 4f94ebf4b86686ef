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
from sdckit.distributed.risk import DistributedKeyRisk, key_risk_by_partition
from sdckit.distributed.rwn import PartitionedRWNResult, rwn_by_partition
from sdckit.distributed.tables import (
    add_record_keys_by_partition,
    cell_key_perturb_by_partition,
    tabulate_by_partition,
)

__all__ = [
    "SCHEDULER_ENV",
    "DistributedKeyRisk",
    "ParquetSource",
    "PartitionedRWNResult",
    "add_record_keys_by_partition",
    "cell_key_perturb_by_partition",
    "dask_client",
    "key_risk_by_partition",
    "read_parquet",
    "rwn_by_partition",
    "scheduler_address",
    "tabulate_by_partition",
    "write_parquet",
]
