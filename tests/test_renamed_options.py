"""Options renamed in a later version: the old name still reads (result files), still runs
(a command line, with a deprecation warning), and cannot be mixed with the new one.

Classification's ``token_recipe`` (the probing paper's training recipe) was ``token_protocol``
until "protocol" came to name the scoring protocol only.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from typer.testing import CliRunner

from audiobench import registry
from audiobench.cli import app
from audiobench.errors import OptionError
from audiobench.leaderboard.validate import validate_file
from audiobench.options import DeprecatedOptionWarning, StrictOptions, read_recorded_options
from audiobench.task import Task


def test_the_old_name_on_input_is_read_as_the_new_one_with_a_warning() -> None:
    with pytest.warns(DeprecatedOptionWarning, match=r"token_protocol .*token_recipe") as caught:
        task = registry.tasks.create("MockClassification", token_protocol="paper")
    assert len(caught) == 1
    assert "task MockClassification" in str(caught[0].message)
    assert task.options.token_recipe == "paper" and task.token_seeds == 5
    assert "token_protocol" not in task.options.model_dump()


def test_the_new_name_gives_no_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecatedOptionWarning)
        task = registry.tasks.create("MockClassification", token_recipe="paper")
    assert task.options.token_recipe == "paper"


def test_both_names_of_one_option_are_refused() -> None:
    with pytest.raises(OptionError, match="token_protocol is the old name of token_recipe"):
        registry.tasks.create("MockClassification", token_protocol="paper", token_recipe="paper")


def test_the_old_name_in_an_options_model_reads_silently() -> None:
    """A result file is not the user's input: no warning, the same options."""
    options_cls = type(registry.tasks.create("MockClassification").options)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecatedOptionWarning)
        old = options_cls.model_validate({"token_protocol": "paper", "token_search": "paper"})
        values = read_recorded_options(options_cls, {"token_protocol": "paper", "gone": 1})
    assert old == options_cls(token_recipe="paper", token_search="paper")
    assert values == {"token_recipe": "paper"}  # an option since dropped is left out


def test_an_options_model_without_renames_is_unchanged() -> None:
    class Plain(StrictOptions):
        size: int = 1

    assert read_recorded_options(Plain, {"size": 2, "gone": 3}) == {"size": 2}
    with pytest.raises(ValueError, match="token_protocol"):
        Plain.model_validate({"token_protocol": "paper"})


def test_the_old_name_on_the_command_line_still_runs(tmp_path: Path) -> None:
    with pytest.warns(DeprecatedOptionWarning, match="write -O token_recipe=... instead"):
        result = CliRunner().invoke(
            app,
            [
                "evaluate",
                "--task",
                "MockClassification",
                "--model",
                "log-mel",
                "--output-dir",
                str(tmp_path / "r"),
                "--no-progress",
                "-O",
                "token_protocol=paper",
                "-O",
                "probes=linear",
            ],
        )
    assert result.exit_code == 0, result.output
    (path,) = (tmp_path / "r").rglob("MockClassification.json")
    data = json.loads(path.read_text())
    assert data["run"]["task_options"]["token_recipe"] == "paper"
    assert "token_protocol" not in data["run"]["task_options"]
    assert data["details"]["protocol"]["token_recipe"] == "paper"


def test_a_result_that_recorded_the_old_name_still_validates(tmp_path: Path) -> None:
    """A file written before the rename (token_protocol in run.task_options and details)."""
    import audiobench

    [run] = audiobench.evaluate(
        "MockClassification",
        "log-mel",
        output_dir=tmp_path / "r",
        cache_dir=tmp_path / "c",
        # The search option is only valid with the paper recipe: a cross-field check the
        # validator's rebuilt options must pass under the old name too.
        task_options={"token_recipe": "paper", "token_search": "paper", "probes": ["linear"]},
        progress=False,
        count_flops=False,
    )
    assert run.main_score is not None
    (path,) = (tmp_path / "r").rglob("MockClassification.json")
    data = json.loads(path.read_text())
    for facts in (data["run"]["task_options"], data["details"]["protocol"]):
        facts["token_protocol"] = facts.pop("token_recipe")
    path.write_text(json.dumps(data))
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecatedOptionWarning)
        checked, problems = validate_file(path, allow_unpinned=True)
    assert problems == [] and checked is not None


def test_a_family_defining_the_old_facts_method_is_refused() -> None:
    """``protocol()`` became ``run_facts()``: a family still defining it would lose its facts."""
    family = type(registry.tasks.create("MockClassification"))
    with pytest.raises(TypeError, match=r"defines protocol\(\).*run_facts\(\)"):
        type("OldFacts", (family,), {"protocol": lambda self: {"seed": 1}})
    assert issubclass(type("NewFacts", (family,), {"run_facts": lambda self: {}}), Task)
