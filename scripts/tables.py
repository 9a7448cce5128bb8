"""Reading spade's tables from Python as the stages read them, shared by report.py, compare.py and
loggers.py (which runs after every stage, so this module imports nothing heavy)."""
import glob
import json
import os


def table(path, columns=None):
    """Rows of a table, or [] when it is missing or unreadable: a Parquet file, a JSONL file, or a
    folder of shard files (make round SHARDS=N, the Slurm arrays) read as one table
    (`*.partial.parquet` files are not part of it). `columns`: read only these (Parquet)."""
    try:
        if path.endswith(".jsonl"):
            with open(path) as f:
                return [json.loads(x) for x in f if x.strip()]
        import pyarrow.parquet as pq

        if os.path.isdir(path):
            files = sorted(f for f in glob.glob(os.path.join(path, "*.parquet")) if not f.endswith(".partial.parquet"))
            return [r for f in files for r in pq.read_table(f, columns=columns).to_pylist()]
        return pq.read_table(path, columns=columns).to_pylist()
    except Exception:
        return []
