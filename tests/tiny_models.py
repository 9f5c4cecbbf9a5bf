"""Tiny random-weight transformers checkpoints, saved the way the hub serves them.

Each builder writes a directory that ``from_pretrained`` loads exactly as it
would load a hub id (config, safetensors weights, preprocessor config,
tokenizer files), so the tests exercise the real loading code with no network.
:func:`loaded` creates a model by name and loads it, as the runner does before
the first batch (encoders never load themselves).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch

from audiobench.encoder import Encoder

__all__ = ["BUILDERS", "build", "loaded", "rewrite_weights"]


def _seed() -> None:
    torch.manual_seed(0)


def whisper(path: Path) -> Path:
    from transformers import (
        WhisperConfig,
        WhisperFeatureExtractor,
        WhisperForConditionalGeneration,
    )

    _seed()
    # 50 encoder positions = 100 mel frames = a 1 s window at hop 160.
    config = WhisperConfig(
        vocab_size=64,
        num_mel_bins=80,
        d_model=32,
        encoder_layers=2,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_source_positions=50,
        max_target_positions=16,
        pad_token_id=1,
        bos_token_id=2,
        eos_token_id=3,
        decoder_start_token_id=2,
        suppress_tokens=[],
        begin_suppress_tokens=[],
    )
    WhisperForConditionalGeneration(config).save_pretrained(path)
    WhisperFeatureExtractor(feature_size=80, chunk_length=1).save_pretrained(path)
    _whisper_tokenizer(path, config.vocab_size)
    return path


def whisper_aligned(path: Path) -> Path:
    """The tiny Whisper with ``alignment_heads`` in its generation config: it can time words."""
    from transformers import GenerationConfig

    whisper(path)
    config = GenerationConfig.from_pretrained(path)
    config.alignment_heads = [[0, 0], [0, 1]]
    config._from_model_config = False  # else transformers rebuilds it from the model config
    config.save_pretrained(path)
    return path


def _whisper_tokenizer(path: Path, size: int) -> None:
    """A byte-level BPE vocabulary of exactly ``size`` tokens, so every id decodes."""
    from transformers import WhisperTokenizer

    vocab = {"<|pad|>": 0, "<|endoftext|>": 1, "<|startoftranscript|>": 2, "<|eot|>": 3}
    for piece in [*"abcdefghijklmnopqrstuvwxyz", "Ġ", ".", "Ġa", "Ġthe", "th", "he", "in"]:
        vocab.setdefault(piece, len(vocab))
    for a in "etaoinshr":
        for b in "etaoinshr":
            if len(vocab) < size:
                vocab.setdefault(a + b, len(vocab))
    (path / "vocab.json").write_text(json.dumps(vocab))
    (path / "merges.txt").write_text("#version: 0.2\n")
    WhisperTokenizer(
        str(path / "vocab.json"),
        str(path / "merges.txt"),
        unk_token="<|endoftext|>",
        bos_token="<|startoftranscript|>",
        eos_token="<|endoftext|>",
        pad_token="<|endoftext|>",
    ).save_pretrained(path)


def _speech(path: Path, config_cls: str, model_cls: str, *, layer_norm: bool) -> Path:
    import transformers

    _seed()
    config = getattr(transformers, config_cls)(
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        conv_dim=(16, 16, 16, 16, 16, 16, 16),
        num_conv_pos_embeddings=16,
        num_conv_pos_embedding_groups=2,
        feat_extract_norm="layer" if layer_norm else "group",
        do_stable_layer_norm=layer_norm,
        vocab_size=16,
    )
    getattr(transformers, model_cls)(config).save_pretrained(path)
    transformers.Wav2Vec2FeatureExtractor(
        feature_size=1,
        sampling_rate=16000,
        padding_value=0.0,
        do_normalize=True,
        return_attention_mask=layer_norm,
    ).save_pretrained(path)
    return path


def wav2vec2_ctc(path: Path) -> Path:
    """A tiny wav2vec 2.0 with a CTC head and a character tokenizer of its 16 tokens."""
    from transformers import Wav2Vec2CTCTokenizer

    _speech(path, "Wav2Vec2Config", "Wav2Vec2ForCTC", layer_norm=True)
    vocab = {"<pad>": 0, "<s>": 1, "</s>": 2, "<unk>": 3, "|": 4}
    for letter in "abcdefghijk":
        vocab[letter] = len(vocab)
    (path / "vocab.json").write_text(json.dumps(vocab))
    Wav2Vec2CTCTokenizer(str(path / "vocab.json")).save_pretrained(path)
    return path


def wavlm(path: Path) -> Path:
    return _speech(path, "WavLMConfig", "WavLMModel", layer_norm=True)


def wav2vec2(path: Path) -> Path:
    # Group-norm feature encoder and no attention mask, like wav2vec2-base.
    return _speech(path, "Wav2Vec2Config", "Wav2Vec2Model", layer_norm=False)


def hubert(path: Path) -> Path:
    return _speech(path, "HubertConfig", "HubertModel", layer_norm=True)


def _roberta_tokenizer(path: Path) -> None:
    from transformers import RobertaTokenizer

    words = ["a", "dog", "bird", "tone", "chirp", "sound", "of", "the", "call", "noise"]
    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3, "<mask>": 4}
    for ch in "abcdefghijklmnopqrstuvwxyz":
        vocab.setdefault(ch, len(vocab))
        vocab.setdefault("Ġ" + ch, len(vocab))
    merges = ["#version: 0.2"]
    for word in words:
        for token in (word, "Ġ" + word):
            pieces = list(token) if not token.startswith("Ġ") else ["Ġ" + token[1], *token[2:]]
            while len(pieces) > 1:
                merges.append(f"{pieces[0]} {pieces[1]}")
                pieces = [pieces[0] + pieces[1], *pieces[2:]]
                vocab.setdefault(pieces[0], len(vocab))
    (path / "vocab.json").write_text(json.dumps(vocab))
    (path / "merges.txt").write_text("\n".join(dict.fromkeys(merges)) + "\n")
    RobertaTokenizer(str(path / "vocab.json"), str(path / "merges.txt")).save_pretrained(path)


def clap(path: Path) -> Path:
    from transformers import (
        ClapAudioConfig,
        ClapConfig,
        ClapFeatureExtractor,
        ClapModel,
        ClapTextConfig,
    )

    _seed()
    path.mkdir(parents=True, exist_ok=True)
    _roberta_tokenizer(path)
    text = ClapTextConfig(
        vocab_size=128,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        projection_dim=16,
    )
    audio = ClapAudioConfig(
        spec_size=256,
        num_mel_bins=64,
        patch_size=4,
        patch_stride=(4, 4),
        window_size=4,
        depths=[1, 1],
        num_attention_heads=[2, 2],
        patch_embeds_hidden_size=16,
        hidden_size=32,
        projection_dim=16,
        enable_fusion=False,
    )
    config = ClapConfig(text_config=text.to_dict(), audio_config=audio.to_dict(), projection_dim=16)
    ClapModel(config).save_pretrained(path)
    # A 1 s window at 48 kHz keeps the spectrogram tiny.
    ClapFeatureExtractor(feature_size=64, max_length_s=1, sampling_rate=48000).save_pretrained(path)
    return path


def encodec(path: Path, *, bandwidths: tuple[float, ...] = (1.5, 3.0, 6.0)) -> Path:
    from transformers import EncodecConfig, EncodecFeatureExtractor, EncodecModel

    _seed()
    config = EncodecConfig(
        sampling_rate=24000,
        hidden_size=16,
        num_filters=4,
        upsampling_ratios=[8, 5, 4, 2],
        codebook_size=64,
        codebook_dim=16,
        num_lstm_layers=1,
        target_bandwidths=list(bandwidths),
        use_causal_conv=True,
        normalize=False,
    )
    EncodecModel(config).save_pretrained(path)
    EncodecFeatureExtractor(sampling_rate=24000).save_pretrained(path)
    return path


def ast(path: Path, **overrides: Any) -> Path:
    """A random-weight AST; ``overrides`` replace config fields (the feature extractor follows
    the config's mel bands and window)."""
    from transformers import ASTConfig, ASTFeatureExtractor, ASTModel

    _seed()
    settings: dict[str, Any] = {
        "hidden_size": 32,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "intermediate_size": 64,
        "max_length": 128,
        "num_mel_bins": 128,
        "frequency_stride": 32,
        "time_stride": 32,
    }
    config = ASTConfig(**(settings | overrides))
    ASTModel(config).save_pretrained(path)
    ASTFeatureExtractor(
        num_mel_bins=config.num_mel_bins, max_length=config.max_length
    ).save_pretrained(path)
    return path


BUILDERS = {
    "whisper": whisper,
    "whisper-aligned": whisper_aligned,
    "wav2vec2-ctc": wav2vec2_ctc,
    "wavlm": wavlm,
    "wav2vec2": wav2vec2,
    "hubert": hubert,
    "clap": clap,
    "encodec": encodec,
    "ast": ast,
}


def rewrite_weights(path: Path, seed: int) -> None:
    """Save new random weights (same architecture and size) over the checkpoint at ``path``."""
    import transformers

    config = transformers.AutoConfig.from_pretrained(path)
    model_cls = getattr(transformers, config.architectures[0])
    torch.manual_seed(seed)
    model_cls(config).save_pretrained(path)


def build(kind: str, root: Path) -> Path:
    path = root / kind
    if not (path / "config.json").exists():
        BUILDERS[kind](path)
    return path


def loaded(name: str, **kwargs: Any) -> Encoder:
    """``registry.models.create(name, **kwargs)``, loaded as the runner loads it before use."""
    from audiobench import registry

    encoder = registry.models.create(name, **kwargs)
    encoder.load()
    return encoder
