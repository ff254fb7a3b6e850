"""The shape of a table on the report page (built by the sections, analysis/sections/)."""

from dataclasses import dataclass, field


@dataclass
class Column:
    label: str
    numeric: bool = False


@dataclass
class DisplayTable:
    name: str
    title: str
    download: str  # what the per-table download link names: "Download <download> (CSV)"
    columns: list
    rows: list
    note: str = ""
    empty: str = ""  # why there are no rows, when there are none
    full: "DisplayTable | None" = None  # a longer table behind a toggle (Williams)
    total_rows: int = field(default=0)

    def __post_init__(self):
        self.total_rows = self.total_rows or len(self.rows)

    @property
    def truncated(self):
        return self.total_rows > len(self.rows)
