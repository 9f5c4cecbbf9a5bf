"""MTEB's audio–text and audio–audio retrieval tasks outside MAEB(v1).

Two layouts, as MTEB reads them:

- **corpus / queries / qrels** (MTEB's standard retrieval layout; :class:`HubData`
  ``layout="retrieval"``): text→audio tasks have text queries and an audio corpus,
  audio→text tasks audio queries and a text corpus, audio→audio both audio. The ``.v2`` tasks
  read new revisions of their predecessors' datasets, which are in this layout.
- **one table, each row a pair** (Common Voice, Google SVQ, FGMCaps, Jam-ALT): each row's audio
  and text are a query and its relevant document (``layout="paired"``), languages as subsets
  (hub configurations, or a column's values).

Audio–text tasks refuse models without a text tower. Instruction prompts MTEB attaches to some
queries are not passed to encoders (see docs/MTEB.md). See ``tasks/mteb_audio.py`` for the
conventions shared with the other families.
"""

from __future__ import annotations

from audiobench.families import RetrievalTask
from audiobench.hub_layouts import HubData
from audiobench.task import Columns
from audiobench.tasks.maeb import JamAltLyricA2TRetrieval
from audiobench.tasks.maeb_languages import COMMON_VOICE_21, JAM_ALT
from audiobench.tasks.mteb_audio import declare, mteb_metadata
from audiobench.tasks.mteb_audio_languages import COMMON_VOICE_17, SVQ_LOCALES

__all__: list[str] = []

_CORPUS = Columns(audio="audio", label=None, required=("audio",))

#: The three directions of the corpus / queries / qrels layout: task options and data.
_DIRECTIONS: dict[str, tuple[RetrievalTask.Options, HubData]] = {
    "t2a": (
        RetrievalTask.Options(query_modality="text", protocol="mteb"),
        HubData(layout="retrieval"),
    ),
    "a2t": (
        RetrievalTask.Options(document_modality="text", protocol="mteb"),
        HubData(layout="retrieval", query_modality="audio", corpus_modality="text"),
    ),
    "a2a": (
        RetrievalTask.Options(protocol="mteb"),
        HubData(layout="retrieval", query_modality="audio"),
    ),
}

#: name, direction, main score, description.
_CORPUS_TASKS: tuple[tuple[str, str, str, str], ...] = (
    ("AudioCapsA2TRetrieval", "a2t", "hit_rate_at_5", "AudioCaps: a clip retrieves its captions."),
    ("AudioCapsT2ARetrieval", "t2a", "hit_rate_at_5", "AudioCaps: a caption retrieves its clip."),
    ("AudioSetStrongA2TRetrieval.v2", "a2t", "hit_rate_at_5",
     "AudioSet strong labels: a sound event segment retrieves its description."),
    ("AudioSetStrongT2ARetrieval.v2", "t2a", "hit_rate_at_5",
     "AudioSet strong labels: a description retrieves its sound event segment."),
    ("CASTELLAAMRRetrieval.v2", "t2a", "ndcg_at_10",
     "CASTELLA: a caption retrieves the audio moments it describes."),
    ("CLDA2TRetrieval", "a2t", "ndcg_at_10",
     "Clotho-Difference: a clip retrieves the descriptions of how it differs from another."),
    ("CMUArcticA2TRetrieval.v2", "a2t", "hit_rate_at_5",
     "CMU Arctic: an utterance retrieves its transcription."),
    ("CMUArcticT2ARetrieval.v2", "t2a", "hit_rate_at_5",
     "CMU Arctic: a transcription retrieves its utterance."),
    ("ClothoA2TRetrieval.v2", "a2t", "hit_rate_at_5", "Clotho: a clip retrieves its captions."),
    ("ClothoT2ARetrieval.v2", "t2a", "hit_rate_at_5", "Clotho: a caption retrieves its clip."),
    ("EmoVDBA2TRetrieval.v2", "a2t", "hit_rate_at_5",
     "EmoV-DB emotional speech: an utterance retrieves its description."),
    ("EmoVDBT2ARetrieval.v2", "t2a", "hit_rate_at_5",
     "EmoV-DB emotional speech: a description retrieves its utterance."),
    ("GigaSpeechA2TRetrieval.v2", "a2t", "hit_rate_at_5",
     "GigaSpeech: an English segment retrieves its transcription."),
    ("GigaSpeechT2ARetrieval.v2", "t2a", "hit_rate_at_5",
     "GigaSpeech: a transcription retrieves its segment."),
    ("HiFiTTSA2TRetrieval.v2", "a2t", "hit_rate_at_5",
     "Hi-Fi TTS: an audiobook segment retrieves its text."),
    ("HiFiTTST2ARetrieval.v2", "t2a", "hit_rate_at_5",
     "Hi-Fi TTS: a text retrieves its audiobook segment."),
    ("JLCorpusA2TRetrieval", "a2t", "hit_rate_at_5",
     "JL-Corpus emotional speech: an utterance retrieves its caption."),
    ("JLCorpusT2ARetrieval", "t2a", "hit_rate_at_5",
     "JL-Corpus emotional speech: a caption retrieves its utterance."),
    ("LASSA2TRetrieval.v2", "a2t", "hit_rate_at_5",
     "LASS (synthetic mixtures): a clip retrieves its description."),
    ("LASST2ARetrieval.v2", "t2a", "hit_rate_at_5",
     "LASS (synthetic mixtures): a description retrieves its clip."),
    ("LPMusicCapsMTTA2TRetrieval", "a2t", "hit_rate_at_5",
     "LP-MusicCaps (MagnaTagATune): a music clip retrieves its caption."),
    ("LPMusicCapsMTTT2ARetrieval", "t2a", "hit_rate_at_5",
     "LP-MusicCaps (MagnaTagATune): a caption retrieves its music clip."),
    ("LibriTTSA2TRetrieval.v2", "a2t", "hit_rate_at_5",
     "LibriTTS: an audiobook utterance retrieves its text."),
    ("LibriTTST2ARetrieval.v2", "t2a", "hit_rate_at_5",
     "LibriTTS: a text retrieves its audiobook utterance."),
    ("MACSA2TRetrieval.v2", "a2t", "hit_rate_at_5",
     "MACS: an acoustic scene recording retrieves its captions."),
    ("MACST2ARetrieval.v2", "t2a", "hit_rate_at_5",
     "MACS: a caption retrieves its acoustic scene recording."),
    ("MusicCapsA2TRetrieval", "a2t", "hit_rate_at_5",
     "MusicCaps: a music clip retrieves its caption."),
    ("MusicCapsT2ARetrieval", "t2a", "hit_rate_at_5",
     "MusicCaps: a caption retrieves its music clip."),
    ("SongDescriberA2TRetrieval", "a2t", "recall_at_5",
     "Song Describer: a recording retrieves its captions."),
    ("SongDescriberT2ARetrieval", "t2a", "recall_at_5",
     "Song Describer: a caption retrieves its recording."),
    ("SoundDescsA2TRetrieval", "a2t", "hit_rate_at_5",
     "SoundDescs: a sound effect retrieves its description."),
    ("SoundDescsT2ARetrieval", "t2a", "hit_rate_at_5",
     "SoundDescs: a description retrieves its sound effect."),
    ("VimSketchA2ARetrieval", "a2a", "ndcg_at_10",
     "VimSketch: a vocal imitation retrieves the reference sound it imitates."),
)  # fmt: skip

for _name, _direction, _main, _what in _CORPUS_TASKS:
    _options, _hub = _DIRECTIONS[_direction]
    declare(
        RetrievalTask,
        mteb_metadata(_name, _what, columns=_CORPUS, splits=("test",), main_score=_main),
        _options,
        _hub,
        module=__name__,
    )

# ---------------------------------------------------------------------------- one table of pairs

_T2A = RetrievalTask.Options(query_modality="text", layout="paired", protocol="mteb")
_A2T = RetrievalTask.Options(document_modality="text", layout="paired", protocol="mteb")


def _speech(audio: str, id_column: str, text: str, **kw: str) -> Columns:
    return Columns(
        audio=audio, id=id_column, text=text, label=None, required=("audio", "text"), **kw
    )


_CV = _speech("audio", "path", "sentence")
_SVQ = _speech("waveform", "utt_id", "text", subset="locale")
_FGM = _speech("audio", "id", "caption")

#: name, options, columns, configuration, subsets (hub configurations unless the columns name
#: a subset column), main score, description.
_PAIRED: tuple[tuple[str, RetrievalTask.Options, Columns, str | None, tuple[str, ...], str], ...]
_PAIRED = (
    ("CommonVoiceMini17A2TRetrieval", _A2T, _CV, None, COMMON_VOICE_17,
     "Common Voice 17 (mini), 50 languages: each recording retrieves its sentence."),
    ("CommonVoiceMini17T2ARetrieval", _T2A, _CV, None, COMMON_VOICE_17,
     "Common Voice 17 (mini), 50 languages: each sentence retrieves its recording."),
    ("CommonVoiceMini21A2TRetrieval", _A2T, _CV, None, COMMON_VOICE_21,
     "Common Voice 21 (mini), 117 languages: each recording retrieves its sentence."),
    ("GoogleSVQA2TRetrieval", _A2T, _SVQ, "audio", SVQ_LOCALES,
     "Simple Voice Questions, 26 locales: each spoken query retrieves its text."),
    ("GoogleSVQT2ARetrieval", _T2A, _SVQ, "audio", SVQ_LOCALES,
     "Simple Voice Questions, 26 locales: each text retrieves its spoken query."),
    ("FGMCapsA2TRetrieval", _A2T, _FGM, None, (),
     "FGMCaps: a music clip retrieves its fine-grained caption."),
    ("FGMCapsT2ARetrieval", _T2A, _FGM, None, (),
     "FGMCaps: a fine-grained caption retrieves its music clip."),
)  # fmt: skip

for _name, _options, _columns, _config, _subsets, _what in _PAIRED:
    by_config = bool(_subsets) and _columns.subset is None
    declare(
        RetrievalTask,
        mteb_metadata(
            _name,
            _what,
            columns=_columns,
            config=_config,
            splits=("test",),
            subsets=_subsets,
            main_score="recall_at_10" if _name.startswith("FGMCaps") else "hit_rate_at_5",
        ),
        _options,
        HubData(configs=_subsets if by_config else ()),
        module=__name__,
    )

# Jam-ALT lines, the reverse of MAEB's JamAltLyricA2TRetrieval (its columns and ids): a lyric
# line retrieves its sung line (every sung line with the same text is relevant).
declare(
    RetrievalTask,
    mteb_metadata(
        "JamAltLyricT2ARetrieval",
        "Jam-ALT lines, 4 languages: a lyric text retrieves the sung lines with that text.",
        columns=JamAltLyricA2TRetrieval.metadata.columns,
        config="pure",
        splits=("test",),
        subsets=JAM_ALT,
        main_score="ndcg_at_10",
        domains=("Music",),
    ),
    _T2A,
    JamAltLyricA2TRetrieval.hub,
    module=__name__,
)
