from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from audiobench import registry
from audiobench.cli import app
from audiobench.encoder import Encoder
from audiobench.registry import (
    DuplicateRegistrationError,
    PluginWarning,
    Registry,
    UnknownNameError,
)

ENCODER_SOURCE = textwrap.dedent(
    """
    from audiobench.encoder import Encoder, ModelMeta, OutputKind

    class Enc(Encoder):
        meta = ModelMeta(name={name!r}, sample_rate=16000, output_kind=OutputKind.VECTOR)

        def encode_audio(self, waveforms):
            return [w[:4] for w in waveforms]
    """
)


def make_dist(root: Path, dist: str, module: str, source: str, entries: dict[str, str]) -> None:
    """A minimal installed distribution: module file + dist-info with entry points."""
    (root / f"{module}.py").write_text(source)
    info = root / f"{dist}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    lines = "\n".join(f"{k} = {v}" for k, v in entries.items())
    (info / "entry_points.txt").write_text(f"[audiobench.models]\n{lines}\n")


@pytest.fixture
def plugin_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    registry.models.refresh()
    yield root
    registry.models.refresh()


def fresh() -> Registry[Encoder]:
    return Registry("model", "audiobench.models", Encoder)


def test_builtins_and_plugin_example_are_registered() -> None:
    assert "log-mel" in registry.models.names()
    assert "SyntheticVocalisations" in registry.tasks.names()
    # tests/plugin_example is installed by the test command, as a third party would be.
    assert "example-spectral-stats" in registry.models.names()
    assert "ExampleChirps" in registry.tasks.names()
    assert registry.models.registrations()["log-mel"][0].distribution == "audiobench"


def test_duplicate_name_names_both_distributions(plugin_path: Path) -> None:
    make_dist(
        plugin_path,
        "evil-dist",
        "evil_mod",
        ENCODER_SOURCE.format(name="log-mel"),
        {"log-mel": "evil_mod:Enc"},
    )
    reg = fresh()
    with pytest.raises(DuplicateRegistrationError, match="audiobench and evil-dist"):
        reg.get("log-mel")
    assert reg.duplicates() == {"log-mel": ["audiobench", "evil-dist"]}
    # Other names keep working.
    assert reg.get("example-spectral-stats").meta.name == "example-spectral-stats"


def test_broken_plugin_warns_and_the_rest_works(plugin_path: Path) -> None:
    make_dist(
        plugin_path,
        "broken-dist",
        "broken_mod",
        "raise ImportError('no torchfoo')\n",
        {"broken-model": "broken_mod:Enc"},
    )
    reg = fresh()
    with pytest.warns(PluginWarning, match=r"'broken-model'.*'broken-dist'.*no torchfoo"):
        loaded = reg.load_all()
    assert "broken-model" not in loaded and "log-mel" in loaded


def test_plugin_must_subclass_and_match_its_name(plugin_path: Path) -> None:
    make_dist(
        plugin_path,
        "odd-dist",
        "odd_mod",
        "class NotAnEncoder:\n    pass\n" + ENCODER_SOURCE.format(name="other-name"),
        {"odd-a": "odd_mod:NotAnEncoder", "odd-b": "odd_mod:Enc"},
    )
    reg = fresh()
    with pytest.warns(PluginWarning) as caught:
        loaded = reg.load_all()
    messages = " ".join(str(w.message) for w in caught)
    assert "not a subclass of Encoder" in messages
    assert "declares the name 'other-name'" in messages
    assert "odd-a" not in loaded and "odd-b" not in loaded


def test_unknown_name_suggests_close_matches() -> None:
    with pytest.raises(UnknownNameError, match="did you mean log-mel"):
        fresh().get("log-mell")


def test_cli_list_survives_broken_plugin_and_reports_duplicate(plugin_path: Path) -> None:
    make_dist(plugin_path, "broken-dist", "broken_mod", "1/0\n", {"broken-model": "broken_mod:X"})
    runner = CliRunner()
    result = runner.invoke(app, ["list", "models", "--json"])
    assert result.exit_code == 0, result.output
    names = [row["name"] for row in json.loads(result.stdout)]
    assert "log-mel" in names and "broken-model" not in names
    assert "broken-model" in result.stderr and "ZeroDivisionError" in result.stderr

    make_dist(
        plugin_path,
        "evil-dist",
        "evil_mod",
        ENCODER_SOURCE.format(name="log-mel"),
        {"log-mel": "evil_mod:Enc"},
    )
    registry.models.refresh()
    result = runner.invoke(app, ["list", "models"])
    assert result.exit_code == 1
    stderr = " ".join(result.stderr.split())  # undo the console's line wrapping
    assert "'log-mel' is registered by more than one distribution" in stderr
    assert "audiobench and evil-dist" in stderr


def test_list_tasks_json_marks_offline_and_filters_by_family() -> None:
    result = CliRunner().invoke(app, ["list", "tasks", "--json", "--type", "zero_shot_similarity"])
    assert result.exit_code == 0, result.output
    rows = {r["name"]: r for r in json.loads(result.stdout)}
    assert rows["SyntheticVocalisations"]["offline"] is True
    assert rows["SyntheticVocalisations"]["family"] == "zero_shot_similarity"
    assert set(rows["SyntheticVocalisations"]) >= {"name", "family", "description", "offline"}
    none = CliRunner().invoke(app, ["list", "tasks", "--json", "--type", "retrieval"])
    assert "SyntheticVocalisations" not in none.stdout
