"""Checkpoints that ship their own modelling code load only with trust_remote_code."""

from __future__ import annotations

import importlib.util
import json
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from audiobench import registry
from audiobench.cli import app
from audiobench.models.loading import ModelLoadError
from tests.tiny_models import loaded

CONFIG = textwrap.dedent(
    """
    from transformers import PretrainedConfig


    class FrameNetConfig(PretrainedConfig):
        model_type = "framenet-test"

        def __init__(self, hidden_size=8, hop=160, **kwargs):
            self.hidden_size = hidden_size
            self.hop = hop
            super().__init__(**kwargs)
    """
)

MODEL = textwrap.dedent(
    """
    import torch
    from transformers import PreTrainedModel
    from transformers.modeling_outputs import BaseModelOutput

    from .configuration_framenet import FrameNetConfig


    class FrameNetModel(PreTrainedModel):
        config_class = FrameNetConfig
        main_input_name = "input_values"

        def __init__(self, config):
            super().__init__(config)
            self.proj = torch.nn.Linear(config.hop, config.hidden_size)
            self.post_init()

        def forward(self, input_values, attention_mask=None, output_hidden_states=False, **kw):
            frames = input_values.unfold(1, self.config.hop, self.config.hop)
            hidden = self.proj(frames)
            return BaseModelOutput(last_hidden_state=hidden, hidden_states=(frames, hidden))
    """
)


@pytest.fixture(scope="module")
def remote_code_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from transformers import Wav2Vec2FeatureExtractor

    root = tmp_path_factory.mktemp("remote-code")
    (root / "configuration_framenet.py").write_text(CONFIG)
    (root / "modeling_framenet.py").write_text(MODEL)
    (root / "__init__.py").write_text("")
    # Build the weights with the checkpoint's own code, imported as a package.
    spec = importlib.util.spec_from_file_location(
        "framenet_pkg", root / "__init__.py", submodule_search_locations=[str(root)]
    )
    assert spec and spec.loader
    package = importlib.util.module_from_spec(spec)
    sys.modules["framenet_pkg"] = package
    spec.loader.exec_module(package)
    from framenet_pkg.modeling_framenet import FrameNetConfig, FrameNetModel  # type: ignore

    model = FrameNetModel(FrameNetConfig())
    model.save_pretrained(root)
    config = json.loads((root / "config.json").read_text())
    config["auto_map"] = {
        "AutoConfig": "configuration_framenet.FrameNetConfig",
        "AutoModel": "modeling_framenet.FrameNetModel",
    }
    (root / "config.json").write_text(json.dumps(config))
    Wav2Vec2FeatureExtractor(feature_size=1, do_normalize=False).save_pretrained(root)
    (root / "__init__.py").unlink()
    return root


def test_remote_code_is_refused_unless_trusted(remote_code_dir: Path) -> None:
    with pytest.raises(ModelLoadError, match="pass --trust-remote-code if you trust it"):
        registry.models.create(f"hf:{remote_code_dir}")

    encoder = loaded(f"hf:{remote_code_dir}", trust_remote_code=True)
    z = encoder.encode_audio([np.ones(1600, dtype=np.float32)])[0]
    assert z.shape == (10, 8)


def test_cli_flag_enables_remote_code(
    remote_code_dir: Path, labelled_folder: Path, tmp_path: Path
) -> None:
    args = ["evaluate", "--task", f"folder:{labelled_folder}", "--model", f"hf:{remote_code_dir}"]
    args += ["--permutations", "20", "--bootstrap", "10", "--no-progress", "--no-flops"]
    refused = CliRunner().invoke(app, args)
    assert refused.exit_code == 1 and "--trust-remote-code" in refused.stderr
    trusted = CliRunner().invoke(app, [*args, "--trust-remote-code", "--output-dir", str(tmp_path)])
    assert trusted.exit_code == 0, trusted.stderr
