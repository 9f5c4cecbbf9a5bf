"""Rich progress bars for long encoding runs (clips done, clips/s, ETA)."""

from __future__ import annotations

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from audiobench.runner import ProgressBar, ProgressHook

__all__ = ["RichProgress"]


class _RichBar(ProgressBar):
    def __init__(self, progress: Progress, task_id: TaskID, total: int, unit: str) -> None:
        super().__init__(total)
        self._progress = progress
        self._id = task_id
        self._unit = unit

    def advance(self, n: int) -> None:
        super().advance(n)
        self._progress.update(self._id, advance=n)
        speed = self._progress.tasks[self._id].speed
        if speed:
            self._progress.update(self._id, rate=f"{speed:.1f} {self._unit}/s")

    def close(self) -> None:
        self._progress.update(self._id, completed=self.completed)


class RichProgress(ProgressHook):
    """One live display for a whole run; one bar per embedding pass."""

    def __init__(self, console: Console | None = None) -> None:
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
        )

    def __enter__(self) -> RichProgress:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def start(self, description: str, total: int, unit: str = "clips") -> ProgressBar:
        task_id = self.progress.add_task(description, total=total, rate="")
        return _RichBar(self.progress, task_id, total, unit)
