"""Where MTEB's audio tasks outside MAEB(v1) read their data: hub repository and pinned revision.

One row per task of MTEB 2.26's audio collection that ``tasks/maeb.py`` does not declare,
supported or not (``tasks/mteb_audio.py`` and ``tasks/mteb_retrieval.py`` declare the
supported ones from it; ``tasks/mteb_unsupported.py`` says why the others are not).
"""

from __future__ import annotations

__all__ = ["PINS"]

#: MTEB task name -> (hub dataset, revision), in MTEB's type order.
PINS: dict[str, tuple[str, str]] = {
    "XModBenchAT2IReranking": (
        "jupyterjazz/XModBench-MTEB",
        "ab71d2be1ba618cb0f0138231f70b82b3c9a02b3",
    ),
    "XModBenchAT2TReranking": (
        "jupyterjazz/XModBench-MTEB",
        "ab71d2be1ba618cb0f0138231f70b82b3c9a02b3",
    ),
    "XModBenchAT2VReranking": (
        "jupyterjazz/XModBench-MTEB",
        "ab71d2be1ba618cb0f0138231f70b82b3c9a02b3",
    ),
    "XModBenchIT2AReranking": (
        "jupyterjazz/XModBench-MTEB",
        "ab71d2be1ba618cb0f0138231f70b82b3c9a02b3",
    ),
    "XModBenchT2AReranking": (
        "jupyterjazz/XModBench-MTEB",
        "ab71d2be1ba618cb0f0138231f70b82b3c9a02b3",
    ),
    "XModBenchVT2AReranking": (
        "jupyterjazz/XModBench-MTEB",
        "ab71d2be1ba618cb0f0138231f70b82b3c9a02b3",
    ),
    "AVMemeExamAT2VRetrieval": ("mteb/AVMeme-Exam", "7070d1979d9a4943dd49b2e72858eb1e54f6bd5b"),
    "AudioCapsA2TRetrieval": ("mteb/audiocaps_a2t", "acfbf827c27f81787800129443780c072dc8ae62"),
    "AudioCapsAVVA2TRetrieval": ("mteb/AudioCaps_AV", "5fd062d13a1ea8cdf36923faaacc32c43e6de14e"),
    "AudioCapsAVVT2ARetrieval": ("mteb/AudioCaps_AV", "5fd062d13a1ea8cdf36923faaacc32c43e6de14e"),
    "AudioCapsT2ARetrieval": ("mteb/audiocaps_t2a", "cb63d82bd4b2868f5e6410bf771d1c91bfc50203"),
    "AudioSetStrongA2TRetrieval.v2": (
        "mteb/audioset_strong_a2t",
        "b78cc292aeba26bbc044b9e9d2c7ef8ef8b992c0",
    ),
    "AudioSetStrongT2ARetrieval.v2": (
        "mteb/audioset_strong_t2a",
        "30d09d62bdeefb416e7e85fb3568ccf0b46c6f3c",
    ),
    "CASTELLAAMRRetrieval.v2": ("mteb/CASTELLA-AMR", "9b3e12baa8b72cb9276f2ea1fbcb06c117fc8f1b"),
    "CLDA2TRetrieval": ("dukesun99/CLD-A2T", "cb33bcc92952eeba8c9458be77e97fbe2423677c"),
    "CLDAT2ARetrieval": ("dukesun99/CLD-AT2A", "4db74f3a92fb2e5efad0d35ca5373807b9628c47"),
    "CMUArcticA2TRetrieval.v2": ("mteb/CMU_Arctic_a2t", "e089493e9284a5b38d3b75bb79ef87acbbd0d2b6"),
    "CMUArcticT2ARetrieval.v2": ("mteb/CMU_Arctic_t2a", "f19bf203d965eed5b38fd157548e8cf0b9020a99"),
    "ClothoA2TRetrieval.v2": ("lxercode/clotho_a2t_v2", "fb4fbd5c1e612be4894a478bd45500eb0bcd689f"),
    "ClothoMomentRetrieval": ("deep9539/clotho-moment", "12472536c0a2a26f9824204673ffe36eefb3e24b"),
    "ClothoT2ARetrieval.v2": ("lxercode/clotho_t2a_v2", "13cf5105f96e1844ee3b0b84cfba9103a7ebe6a2"),
    "CommonVoiceMini17A2TRetrieval": (
        "mteb/common_voice_17_0_mini",
        "62c6f7bb73d8cdb684868c14620ce241448e471b",
    ),
    "CommonVoiceMini17T2ARetrieval": (
        "mteb/common_voice_17_0_mini",
        "62c6f7bb73d8cdb684868c14620ce241448e471b",
    ),
    "CommonVoiceMini21A2TRetrieval": (
        "mteb/common_voice_21_0_mini",
        "8aef059b329d70e590bb81454a8a85ecdae54b45",
    ),
    "EmoVDBA2TRetrieval.v2": ("mteb/EmoV_DB_a2t", "07d619e811bdd532faf042c2ad40dba774a16140"),
    "EmoVDBT2ARetrieval.v2": ("mteb/EmoV_DB_t2a", "f909ec50f6e532853ae374ef58e881a3fc1344cc"),
    "FGMCapsA2TRetrieval": (
        "nishitanand/FGMCaps-benchmark",
        "a2f3b8bccc85b7e63563a0976b155e48e7be5278",
    ),
    "FGMCapsT2ARetrieval": (
        "nishitanand/FGMCaps-benchmark",
        "a2f3b8bccc85b7e63563a0976b155e48e7be5278",
    ),
    "FleursA2TRetrieval.v2": ("mteb/fleurs", "cadac46d4cd7d721f5cf8844a5b9f0f20e6fcde8"),
    "FleursT2ARetrieval.v2": ("mteb/fleurs", "cadac46d4cd7d721f5cf8844a5b9f0f20e6fcde8"),
    "GigaSpeechA2TRetrieval.v2": (
        "mteb/gigaspeech_a2t",
        "21830264114e8083a80178993158b20f0cd21026",
    ),
    "GigaSpeechT2ARetrieval.v2": (
        "mteb/gigaspeech_t2a",
        "3b0c235907f6d6cf454826880192c47c91cbda41",
    ),
    "GoogleSVQA2TRetrieval": ("mteb/svq", "dd5a15e925767554c71b867f811b7eab53c770a4"),
    "GoogleSVQT2ARetrieval": ("mteb/svq", "dd5a15e925767554c71b867f811b7eab53c770a4"),
    "GreatestHitsA2VRetrieval": (
        "dukesun99/GreatestHits-A2V",
        "bfb8cbecc345ea78cd92d669a09e8f410f56c8c9",
    ),
    "GreatestHitsV2ARetrieval": (
        "dukesun99/GreatestHits-V2A",
        "2b1cd359f987fc1db90c745269d10426c86205c7",
    ),
    "HiFiTTSA2TRetrieval.v2": ("mteb/hifi-tts_a2t", "143bec4e5a842800a5531fccdde8f13dbc2ac6d9"),
    "HiFiTTST2ARetrieval.v2": ("mteb/hifi-tts_t2a", "ffef62ca97170c1a61cb53486c0d441fe07daa40"),
    "IncompeBenchLenientRetrieval": (
        "mixedbread-ai/incompebench-lenient",
        "2b96667d0163b3d86a4f9ba36da3869ff41e0f88",
    ),
    "IncompeBenchStrictRetrieval": (
        "mixedbread-ai/incompebench-strict",
        "ad7297f765dcff7e398dccefa0f9caf4b5c81715",
    ),
    "JLCorpusA2TRetrieval": ("mteb/jl_corpus_a2t", "c4a08f2e641b33697745837d6e814da8b17b533c"),
    "JLCorpusT2ARetrieval": ("mteb/jl_corpus_t2a", "432380bbc1272245bcad607f536821cba8c13944"),
    "JamAltLyricT2ARetrieval": ("mteb/jam-alt-lines", "e2d97afa7333eb489f1d451f76079d921be7a68f"),
    "LASSA2TRetrieval.v2": ("mteb/lass-synth-a2t.v2", "24927afbc03f7786bec3236c9a5911c62d4bab0d"),
    "LASST2ARetrieval.v2": ("mteb/lass-synth-t2a.v2", "e9a450d5f1a41069a23172f2475a1d461a50272e"),
    "LPMusicCapsMTTA2TRetrieval": (
        "hubxrt/LPMusicCapsMTT_a2t",
        "062eff5c2454c5765ee3f499cde8de78626fe06f",
    ),
    "LPMusicCapsMTTT2ARetrieval": (
        "hubxrt/LPMusicCapsMTT_t2a",
        "33c5efd45927bcf67cda707d33365387571c7054",
    ),
    "LibriTTSA2TRetrieval.v2": ("mteb/LibriTTS_a2t", "4c5387cc32913b5b480522d23422a332b652ee2a"),
    "LibriTTST2ARetrieval.v2": ("mteb/LibriTTS_t2a", "70a5685ab4eeacf47c56763ae20300987e2dc6a1"),
    "MACSA2TRetrieval.v2": ("mteb/MACS_a2t", "42039fff73458aac1e8e3919484485aa23d5be34"),
    "MACST2ARetrieval.v2": ("mteb/MACS_t2a", "8fc9588704d45687b0f36fd5baf772ce03ec93ac"),
    "MusicCapsA2TRetrieval": ("mteb/MusicCaps_a2t", "fb2fffc9a93f729d1844dfac3f8c16386fbe226b"),
    "MusicCapsT2ARetrieval": ("mteb/MusicCaps_t2a", "995f536066b2bb7044f6b454f24a76a1c95caa33"),
    "SongDescriberA2TRetrieval": (
        "dukesun99/SongDescriber-A2T",
        "205f679a640b5fecf9ca9ee74bb715b339d228a5",
    ),
    "SongDescriberT2ARetrieval": (
        "dukesun99/SongDescriber-T2A",
        "c58ad9b08343e56ce412d4da41accd15bffdbd6d",
    ),
    "SoundDescsA2TRetrieval": (
        "mteb/SoundDescsA2TRetrieval",
        "27f6d092e00721205296ebbb44f28ff2498d6b7e",
    ),
    "SoundDescsT2ARetrieval": (
        "mteb/SoundDescsT2ARetrieval",
        "cfb2f05e4b75512e650468b1bf4d15891eec5be7",
    ),
    "SoundingEarthA2IRetrieval.v2": (
        "mteb/SoundingEarth-A2I",
        "ddb411cf51e80dc66bd9e40c936ec0965dd87427",
    ),
    "SoundingEarthI2ARetrieval.v2": (
        "mteb/SoundingEarth-I2A",
        "33d657c0c307ceeeb2ec47f143970f7456981988",
    ),
    "SpeechCocoA2IRetrieval": (
        "dukesun99/SpeechCoco-A2I",
        "217c6660258de6e60002f748abdf11be623c8e0e",
    ),
    "SpeechCocoI2ARetrieval": (
        "dukesun99/SpeechCoco-I2A",
        "afb9e08254be4e9c2e5af432912291dde7528b68",
    ),
    "SpeechEditAcousticRetrieval": (
        "deep9539/speech_edit_acoustic",
        "27955b1e1dfc1b433602a26f697a9d19de710d36",
    ),
    "SpokenCOCOA2IRetrieval": (
        "whybe-choi/SpokenCOCOA2IRetrieval",
        "72731c49562b73ea7e1cbd296c40f3924a4e5fad",
    ),
    "SpokenCOCOI2ARetrieval": (
        "whybe-choi/SpokenCOCOI2ARetrieval",
        "d9bb53ec91142fbc8a1bcefea200d835bd916a8b",
    ),
    "VALOR32KT2VARetrieval": ("mteb/VALOR-32K", "003f74e0b5031c81bc0f3416f5d3de1153e21e16"),
    "VATEXV2ARetrieval.v2": ("mteb/VATEX_test_1k", "b7ec075d006c825f6ec497318d93ce225880a07e"),
    "VATEXVA2TRetrieval.v2": ("mteb/VATEX_test_1k", "b7ec075d006c825f6ec497318d93ce225880a07e"),
    "VCDBCoreAudioVideoRetrieval": (
        "pranitchawla/VCDB-Core-AudioVideo",
        "bbe7611e17dab01c7f937b858ae15c5cb979e94f",
    ),
    "VGGSoundAVA2VRetrieval": (
        "mteb/VGGSound_AV_RETRIEVAL",
        "5bfb8eb997282004d1c3b322fd081b03e2011344",
    ),
    "VimSketchA2ARetrieval": ("dukesun99/VimSketch", "466e0ea0ed8f50bad9c240f3bfc8426c08430aa2"),
    "YouCook2T2VARetrieval": ("mteb/YouCook2_val", "be654b591daef1382364d563f6d3d66f61f79b35"),
    "AESDD": ("mteb/AESDD-fixed", "2bfe310368859dadb0dbbcc8874135f817f469df"),
    "AmbientAcousticContext": (
        "mteb/ambient-acoustic-context-small",
        "8f4de158d4162de768ebb4dc0594429d785077da",
    ),
    "CSTRVCTKAccentID": ("mteb/cstr-vctk-accent-mini", "ceb854ae5018298bd1b5edb5983b78515ef8ded6"),
    "CSTRVCTKGender": ("mteb/cstr-vctk-gender-mini", "8c7429cbb5c01d9327cff77dad5cbf813ecddc13"),
    "CommonLanguageGenderDetection": (
        "mteb/commonlanguage-gender-mini",
        "65cdf4a4565f09b1747cd8fb37d18cd9aa1f6dd9",
    ),
    "CommonLanguageLanguageDetection": (
        "mteb/commonlanguage-lang-mini",
        "445bd662ffd3883ac662e2f1df18724c10688304",
    ),
    "ESC50": ("mteb/esc50", "31ea534771aaf92c116698355e5cdc2ffda4bb6d"),
    "ExpressoConv": ("mteb/expresso-conv-mini", "fcb3c426f790493d4df74a9cf4d3109641e4de26"),
    "ExpressoRead": ("mteb/expresso-read-mini", "cf3bf160c3b18b5e0aa6607d8a724f5e397c2801"),
    "FSDD": ("mteb/free-spoken-digit-dataset", "c34455c99604d35cb8d27328c267be1478efc903"),
    "GLOBEV2Age": ("mteb/globe-v2-age-mini", "b36e803c88037b09688f7c915d93b4cd654ba67e"),
    "GLOBEV2Gender": ("mteb/globe-v2-gender-mini", "0907be05c04d6d811cc780e76b15eedd707601b2"),
    "GLOBEV3Age": ("mteb/globe-v3-age-mini", "f7399f4b836508a178c0913868e82462b4a8919b"),
    "GLOBEV3Gender": ("mteb/globe-v3-gender-mini", "7020a6c14ec8a8e967013e04f2a695ead308bee1"),
    "GunshotTriangulation": (
        "mteb/GunshotTriangulationHear",
        "d5caa98a10a41dd8890a343a631fdbaacc747108",
    ),
    "IEMOCAPEmotion": ("mteb/iemocap", "6d4225271da423e791e16770d335cfa351cdf88e"),
    "INatSounds": ("mteb/inat_sounds", "6db625bf80d71ded64690022f0df56ceae972b6e"),
    "LibriCount": ("mteb/libricount", "cc851c56e30dc5dde80c1823de96d52ca3cb2607"),
    "MridinghamStroke": ("mteb/mridingham-stroke", "2b6d06ff3da6da9609f078b6bc92c248016a5112"),
    "NSynth": ("mteb/nsynth-mini", "e32dfe9b65e121e64229a821fe1ff177e8962635"),
    "SpeechCommands": ("mteb/speech-commands-mini", "3ac713aa0829eeadda73182f38bbbd788d21254b"),
    "SpokeNEnglish": ("mteb/SpokeN-100-English", "afbff14d927de14412d8124502313ea6d9d140e0"),
    "SpokenQAForIC": ("mteb/SpokenQA_SLUE", "97eb2287a0c881538cee9f5db415e80111d96a31"),
    "TAUAcousticScenes2022Mobile": (
        "mteb/tau-acoustic-scenes-2022-mobile-mini",
        "d0da0ed80d22944c7a5690c4b570683d45c4dfaf",
    ),
    "TUTAcousticScenes": (
        "mteb/tut-acoustic-scenes-mini",
        "fe74de34b726995a39971faeb83491480ca1886e",
    ),
    "UrbanSound8k": ("mteb/urbansound8K", "5b3867ddd7583a24871acdf6eb5494696ddd4cbc"),
    "VocalSound": ("mteb/vocalsound", "426c4f4779901e731f0ba7157de727750325a68b"),
    "VoxLingua107_Top10": ("mteb/voxlingua107-top10", "d934546d059e16c9a4669adbd518e0fa86a69ff0"),
    "VoxPopuliAccentID": ("mteb/voxpopuli-accent-mini", "5ea6ce48d0de6db179cb7debf0d6813faa495a33"),
    "VoxPopuliGenderID": ("mteb/voxpopuli-mini", "d5fb9661054ba250e2c03adeb9a702ad55e73f27"),
    "AmbientAcousticContextClustering": (
        "mteb/ambient-acoustic-context-small",
        "8f4de158d4162de768ebb4dc0594429d785077da",
    ),
    "BirdCLEFSpeciesClustering": (
        "mteb/birdclef25-mini",
        "582215665b247604b555da7ff4e071f82d3617db",
    ),
    "ESC50Clustering": ("mteb/esc50", "31ea534771aaf92c116698355e5cdc2ffda4bb6d"),
    "GTZANGenreClustering": ("mteb/gtzan-genre", "53efa094d18619a4e2bf36123192ec7a01a7d1bf"),
    "MusicGenreClustering": ("mteb/music-genre", "eb78950d473b87812357c207bae9c36779383e09"),
    "NSynthInstrumentFamilyClustering": (
        "mteb/nsynth-mini",
        "e32dfe9b65e121e64229a821fe1ff177e8962635",
    ),
    "TAUAcousticScenes2022MobileClustering": (
        "mteb/tau-acoustic-scenes-2022-mobile-mini",
        "d0da0ed80d22944c7a5690c4b570683d45c4dfaf",
    ),
    "UrbanSound8kClustering": ("mteb/urbansound8K", "5b3867ddd7583a24871acdf6eb5494696ddd4cbc"),
    "VimSketchImitationClustering": (
        "dukesun99/VimSketch",
        "466e0ea0ed8f50bad9c240f3bfc8426c08430aa2",
    ),
    "VoiceGenderClustering": (
        "mteb/VoiceGenderClustering",
        "def21cdda438562bf8515d1daa9b47ab6ea6dec6",
    ),
    "VoxCelebClustering": (
        "mteb/Sentiment_Analysis_SLUE-VoxCeleb",
        "3155df63aedc31a112c284097fdd7c0316a24ee8",
    ),
    "VoxPopuliAccentClustering": (
        "mteb/voxpopuli-accent-clustering",
        "f7558b7e2e984ab1680f405174798512cb8d4854",
    ),
    "AudioSetMini": ("mteb/audioset", "168a7e681ee40609129535d49855c7e3e77e5efa"),
    "BirdSet": ("mteb/BirdSet", "bdaa5020a8dc594a9a1d3b344e6ca9dbfaa33c74"),
    "FSD2019Kaggle.v2": ("mteb/fsdkaggle2019-parquet", "ff7e6d9e57951b90024fcb6d4aef95d97f4fc64e"),
    "FSD50K": ("mteb/fsd50k_mini", "a574eeb10bb11d28eff83dd522151028d529551d"),
    "ESC50PairClassification": (
        "mteb/ESC50PairClassification",
        "0e610f3edcc1eb8f21e3806066e8462765c7a30a",
    ),
    "VocalSoundPairClassification": (
        "mteb/VocalSoundPairClassification",
        "f166121e5e0a71f308f63ec0d610ea0e753de996",
    ),
    "ESC50AudioReranking": ("mteb/ESC50AudioReranking", "eff5c3112d71c4038377656f4d3ccb755fb7265f"),
    "FSDnoisy18kAudioReranking": (
        "mteb/FSDnoisy18kAudioReranking",
        "4ce2173166a65092eb745127fcc75c489ea3b859",
    ),
    "UrbanSound8KAudioReranking": (
        "mteb/UrbanSound8KAudioReranking",
        "39896c7e1c66f809915490a1277198fe5ac3639d",
    ),
    "VocalSoundAudioReranking": (
        "mteb/VocalSoundAudioReranking",
        "d44884963d55578a13d6da80dfaca0f7f0971fe7",
    ),
    "ESC50_Zeroshot": ("mteb/esc50", "31ea534771aaf92c116698355e5cdc2ffda4bb6d"),
    "SpeechCommandsZeroshotv0.01": (
        "mteb/SpeechCommandsZeroshotv0.01",
        "200a38f4d145460758244d6613cb08dffe70fa8a",
    ),
    "UrbanSound8kZeroshot": ("mteb/urbansound8K", "5b3867ddd7583a24871acdf6eb5494696ddd4cbc"),
}
