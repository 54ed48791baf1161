"""A Parquet file or folder a chunk of rows at a time, typed as stored. A file it cannot read
raises one :class:`~toolkit.errors.ConfigError` naming it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq

from toolkit._ingress import chunking
from toolkit.errors import ConfigError


def read_parquet_table(path: Path) -> Iterator[pd.DataFrame]:
    """A Parquet file or folder (hive partitions as ``pandas.read_parquet`` reads them) a chunk
    of rows at a time, each typed as ``pandas.read_parquet`` types it; the index: row numbers."""
    n = 0

    def frame(batch: pa.RecordBatch | pa.Table) -> pd.DataFrame:
        df = batch.to_pandas()
        df.index = pd.RangeIndex(n, n + len(df))
        df.attrs["source"] = str(path)
        return df

    try:
        if path.is_dir():  # as pyarrow.parquet.read_table reads a folder
            partitioning = pads.HivePartitioning.discover(infer_dictionary=True)
            data = pads.dataset(path, format="parquet", partitioning=partitioning)
            schema, batches = data.schema, data.to_batches(batch_size=chunking._CHUNK)
        else:
            file = pq.ParquetFile(path)
            schema, batches = file.schema_arrow, file.iter_batches(batch_size=chunking._CHUNK)
        for batch in batches:
            if batch.num_rows:
                df = frame(batch)
                n += len(df)
                yield df
                del df  # not held while the next chunk is read
        if not n:
            yield frame(schema.empty_table())
    except (OSError, ValueError, ImportError) as exc:  # pyarrow's errors derive from these
        raise ConfigError(
            f"{path}: not a readable Parquet file ({type(exc).__name__}: {exc})"
        ) from None
