"""The ``hf:<repo id or directory>`` loader: any transformers audio model by its config.

The checkpoint's config names its architecture (``model_type``); known ones
get their dedicated class (Whisper's 30 s window, CLAP's 48 kHz and text
tower, EnCodec's codes, AST's spectrogram input), every other audio model is
a frame-sequence encoder with mean pooling (one whose config lists a ``…ForCTC``
architecture also transcribes, :mod:`audiobench.models.ctc`; Whisper checkpoints
transcribe too). The result is an instance of that
class carrying the checkpoint's own metadata (no class is made at run time).
"""

from __future__ import annotations

from typing import Any

from audiobench.encoder import ModelMeta, OutputKind
from audiobench.errors import OptionError
from audiobench.models.ast import ASTEncoder
from audiobench.models.clap import ClapEncoder
from audiobench.models.ctc import CTCEncoder, is_ctc
from audiobench.models.encodec import EncodecEncoder
from audiobench.models.hf import FrameEncoder, HFEncoder, config_dim
from audiobench.models.loading import ModelLoadError, from_pretrained, local_directory
from audiobench.models.whisper import WhisperEncoder

__all__ = ["ARCHITECTURES", "hf_encoder"]

#: ``config.model_type`` → encoder class for ``hf:`` models (others: FrameEncoder).
ARCHITECTURES: dict[str, type[HFEncoder]] = {
    "whisper": WhisperEncoder,
    "clap": ClapEncoder,
    "encodec": EncodecEncoder,
    "audio-spectrogram-transformer": ASTEncoder,
}


def hf_encoder(argument: str, **kwargs: Any) -> HFEncoder:
    """Build an encoder for any transformers audio model (``--model hf:<id or dir>``)."""
    import transformers

    if not argument:
        raise OptionError("hf: needs a hub id or a local directory, e.g. hf:facebook/wav2vec2-base")
    name = f"hf:{argument}"
    # A path that is not there is reported as such, never looked up on the hub.
    local_directory(argument, f"model {name!r}")
    revision = kwargs.get("revision")
    # The options every architecture takes, checked before anything is read.
    common = HFEncoder.parse_options(
        {k: kwargs[k] for k in HFEncoder.Options.model_fields if k in kwargs}, name=name
    )
    assert isinstance(common, HFEncoder.Options)
    trust = common.trust_remote_code
    config = from_pretrained(
        transformers.AutoConfig,
        argument,
        revision=revision,
        trust_remote_code=trust,
        what="configuration",
    )
    model_type = getattr(config, "model_type", "")
    cls = ARCHITECTURES.get(model_type, FrameEncoder)
    if cls is FrameEncoder and is_ctc(config):
        cls = CTCEncoder  # a speech recogniser: frames, and transcripts
    if cls in (FrameEncoder, CTCEncoder):
        try:
            fe = from_pretrained(
                transformers.AutoFeatureExtractor,
                argument,
                revision=revision,
                trust_remote_code=trust,
                what="feature extractor",
            )
            sample_rate = int(fe.sampling_rate)
        except ModelLoadError:
            sample_rate = 16000
        meta = ModelMeta(
            name=name,
            source=argument,
            revision=revision or "main",
            sample_rate=sample_rate,
            output_kind=OutputKind.SEQUENCE,
            embedding_dim=config_dim(config),
            default_pooling="mean_time",
            description=f"{model_type or 'transformers'} model loaded with AutoModel; "
            "frame sequence, mean over time by default"
            + ("; transcribes with its CTC head." if cls is CTCEncoder else "."),
        )
    else:
        meta = cls.meta_for(name, argument, revision or "main", config)
    return cls(meta=meta, config=config, **kwargs)
