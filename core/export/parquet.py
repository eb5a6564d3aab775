"""Exporter ``parquet``: simulated episodes as Parquet shards, one row per (episode, step, agent).

Why long format: it streams (``datasets.load_dataset("parquet", data_files=".../data/*.parquet",
streaming=True)``), filters and groups in any dataframe library, and its schema does not depend on the mode
(concepts are one boolean column each for every known concept). Episode ``e`` is the simulation of seed ``seed + e``
(the same worlds as the ``episodes`` exporter). Files: ``data/steps-NNNNN.parquet`` (one per shard, zstd
compressed, row groups of one episode). The schema (:data:`SCHEMA`) is documented in docs/export.md and written
into the manifest.
"""
from __future__ import annotations

import io
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from core.base.codes import Kind
from core.base.world import KNOWN_CONCEPTS
from core.export.common import episode_plan, load_config, mode_files, sim_options, simulate
from core.export.registry import ExporterSpec, Finalized, Shard, ShardResult, register
from core.io.fileio import atomic_write_bytes

# pyarrow is imported by the functions that write tables: `python main.py --help` imports every exporter module to list
# its options (core/cli/export.py).

#: column, Arrow type, meaning (docs/export.md "Parquet schema")
SCHEMA: tuple[tuple[str, str, str], ...] = (
    ("episode", "int32", "episode index in the export"),
    ("seed", "int64", "simulation seed of the episode (seed option + episode)"),
    ("step", "int32", "step k (the row describes the state at the start of step k and what happened in it)"),
    ("agent", "int32", "agent index (position in the agent set)"),
    ("agent_name", "string", "agent name, e.g. Car_3"),
    ("kind", "string", "Pedestrian or Car"),
    ("priority", "int32", "priority at state k (smaller = higher)"),
    ("row", "int16", "row of the agent at state k"),
    ("col", "int16", "column of the agent at state k"),
    ("heading", "int8", "last move heading: -1 none, 0 Left, 1 Right, 2 Up, 3 Down"),
    ("goal_row", "int16", "row of the current goal"),
    ("goal_col", "int16", "column of the current goal"),
    ("next_row", "int16", "row at state k+1 (after the step's moves)"),
    ("next_col", "int16", "column at state k+1"),
    ("holds_slow", "bool", "the rules derived Slow"),
    ("holds_normal", "bool", "the rules derived Normal"),
    ("holds_fast", "bool", "the rules derived Fast"),
    ("holds_stop", "bool", "the rules derived Stop"),
    ("decided", "int8", "decision: 0 Slow, 1 Normal, 2 Fast, 3 Stop (Normal when nothing is derived)"),
    ("realised", "int8", "what the agent did (by cells moved; Stop if it did not move)"),
    ("fired", "int32", "id of the clause that fired (-1 default, -2 forced)"),
    ("fired_label", "string", "label of that clause (empty for -1/-2)"),
    ("witness", "list<int32>", "agent index bound to each variable of the fired clause (-1 unbound)"),
    ("reached", "bool", "the agent was on its goal at step k"),
)


def _concept_columns() -> list[str]:
    return [f"concept_{c}" for c in KNOWN_CONCEPTS]


def arrow_schema():
    import pyarrow as pa

    types = {"int8": pa.int8(), "int16": pa.int16(), "int32": pa.int32(), "int64": pa.int64(), "bool": pa.bool_(),
             "string": pa.string(), "list<int32>": pa.list_(pa.int32())}
    fields = [pa.field(name, types[t], nullable=False) for name, t, _ in SCHEMA]
    fields += [pa.field(c, pa.bool_(), nullable=False) for c in _concept_columns()]
    return pa.schema(fields, metadata={b"logicity": b"steps table, docs/export.md"})


def episode_table(buf, episode: int, seed: int):
    """The rows of one recorded episode (a :class:`~core.sim.episode.EpisodeView`)."""
    import pyarrow as pa

    t, n = buf.num_steps, len(buf.agents)
    a = {name: np.asarray(buf.array(name)) for name in ("positions", "headings", "goals", "priorities", "concepts",
                                                        "holds", "decided", "realised", "fired", "witness",
                                                        "reached")}
    labels = {int(c["id"]): str(c.get("label", "")) for c in buf.meta.get("clauses") or []}
    names = list(buf.agents.names)
    kinds = ["Car" if int(k) == int(Kind.CAR) else "Pedestrian" for k in buf.agents.kinds]
    pos = a["positions"]
    cols: dict[str, Any] = {
        "episode": np.full(t * n, episode, np.int32), "seed": np.full(t * n, seed, np.int64),
        "step": np.repeat(np.arange(t, dtype=np.int32), n), "agent": np.tile(np.arange(n, dtype=np.int32), t),
        "agent_name": names * t, "kind": kinds * t,
        "priority": a["priorities"][:t].reshape(-1).astype(np.int32),
        "row": pos[:t, :, 0].reshape(-1).astype(np.int16), "col": pos[:t, :, 1].reshape(-1).astype(np.int16),
        "heading": a["headings"][:t].reshape(-1).astype(np.int8),
        "goal_row": a["goals"][:t, :, 0].reshape(-1).astype(np.int16),
        "goal_col": a["goals"][:t, :, 1].reshape(-1).astype(np.int16),
        "next_row": pos[1:t + 1, :, 0].reshape(-1).astype(np.int16),
        "next_col": pos[1:t + 1, :, 1].reshape(-1).astype(np.int16),
    }
    holds = a["holds"].reshape(-1, 4)
    for j, name in enumerate(("slow", "normal", "fast", "stop")):
        cols[f"holds_{name}"] = holds[:, j].astype(bool)
    fired = a["fired"].reshape(-1).astype(np.int32)
    cols.update(decided=a["decided"].reshape(-1).astype(np.int8), realised=a["realised"].reshape(-1).astype(np.int8),
                fired=fired, fired_label=[labels.get(int(f), "") for f in fired])
    w = a["witness"].reshape(t * n, -1).astype(np.int32)
    cols["witness"] = pa.ListArray.from_arrays(np.arange(0, w.size + 1, w.shape[1], dtype=np.int32),
                                               pa.array(w.reshape(-1), pa.int32())) if t * n else []
    cols["reached"] = a["reached"].reshape(-1).astype(bool)
    concepts = buf.concept_names
    for c in KNOWN_CONCEPTS:
        cols[f"concept_{c}"] = (a["concepts"][:t, :, concepts.index(c)].reshape(-1).astype(bool) if c in concepts
                                else np.zeros(t * n, bool))
    schema = arrow_schema()
    return pa.table({f.name: pa.array(cols[f.name], f.type) if not isinstance(cols[f.name], pa.Array)
                     else cols[f.name] for f in schema}, schema=schema)


def run_shard(options: Mapping[str, Any], shard: Shard, out: Path) -> ShardResult:
    import pyarrow as pa
    import pyarrow.parquet as pq

    cfg = load_config(options)
    tables, steps = [], 0
    for e, seed in zip(shard.params["episodes"], shard.params["seeds"]):
        sim = simulate(cfg, seed, int(options["steps"]), options.get("engine"))
        tables.append(episode_table(sim.buffer, e, seed))
        steps += sim.buffer.num_steps
    table = pa.concat_tables(tables)
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd", row_group_size=max(1, max(len(t) for t in tables)))
    rel = f"data/steps-{shard.index:05d}.parquet"
    atomic_write_bytes(out / rel, sink.getvalue())
    return ShardResult(shard.name, [rel], {"episodes": len(tables), "steps": steps, "rows": table.num_rows})


def finalize(options: Mapping[str, Any], results: list[ShardResult], out: Path) -> Finalized:
    schema = [{"name": n, "type": t, "meaning": m} for n, t, m in SCHEMA]
    schema += [{"name": c, "type": "bool", "meaning": f"the agent has the concept {c[8:]}"}
               for c in _concept_columns()]
    return Finalized(extra={"parquet": {"data_files": "data/*.parquet", "schema": schema,
                                        "load": "datasets.load_dataset('parquet', data_files='<out>/data/*.parquet')"}})


SPEC = register(ExporterSpec(
    name="parquet", title="Episodes as Parquet (one row per step and agent)",
    description="Simulated episodes as Parquet shards loadable with datasets.load_dataset('parquet', ...) and any "
                "dataframe library; schema in docs/export.md.",
    options=sim_options(per_shard=2), plan=episode_plan, run_shard=run_shard, finalize=finalize,
    config_files=mode_files, packages=("pyarrow",)))
