"""The Arrow schema of a VAP frame row (one row per frame; list columns hold one entry per agent).

Kept explicit (rather than inferred from the first rows) so every world's Parquet file has identical types and
``datasets.load_dataset("parquet", ...)`` can concatenate them; pyarrow is imported only when it is asked for.
"""
from __future__ import annotations

# pyarrow is imported on first use.

#: column → meaning, for docs/vap.md and the dataset card
COLUMNS: dict[str, str] = {
    "stage": "train / val / test", "world": "world index in the stage", "step": "simulation state k shown",
    "seed": "the world's seed", "image": "PNG path relative to the dataset folder",
    "height": "image height (px)", "width": "image width (px)",
    "agent_index": "agent index in the world (row order of every list column)", "agent_id": "Car_3, Pedestrian_1…",
    "type": "Car / Pedestrian", "detailed_type": "ambulance, bus, tiro, old, young, police, reckless, normal_car, "
    "normal_pedestrian", "priority": "smaller = higher; pedestrians 0",
    "box": "[x1, y1, x2, y2] in image pixels, x2/y2 exclusive", "direction": "left/right/up/down/none",
    "h": "9 reasoning inputs: box / side (4), one-hot direction (4), priority / max priority",
    "unary": "[N][U] ground-truth unary groundings (ontology order)",
    "binary": "[N][N][B] ground-truth binary groundings (pairs inside some agent's view; else false)",
    "sees": "[N][N] b is in a's field of view (a sees itself)",
    "action": "decided action code (0 Slow, 1 Normal, 2 Fast, 3 Stop)", "action_name": "the same as a name",
    "label_ref": "the reference's label code (a moving pedestrian is 0)",
}


def arrow_schema():
    import pyarrow as pa

    lst = pa.list_
    return pa.schema([
        ("stage", pa.string()), ("world", pa.int32()), ("step", pa.int32()), ("seed", pa.int64()),
        ("image", pa.string()), ("height", pa.int32()), ("width", pa.int32()),
        ("agent_index", lst(pa.int32())), ("agent_id", lst(pa.string())), ("type", lst(pa.string())),
        ("detailed_type", lst(pa.string())), ("priority", lst(pa.int32())),
        ("box", lst(lst(pa.int32()))), ("direction", lst(pa.string())), ("h", lst(lst(pa.float32()))),
        ("unary", lst(lst(pa.bool_()))), ("binary", lst(lst(lst(pa.bool_())))), ("sees", lst(lst(pa.bool_()))),
        ("action", lst(pa.int8())), ("action_name", lst(pa.string())), ("label_ref", lst(pa.int8())),
    ])
