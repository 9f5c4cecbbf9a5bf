"""The language subsets of MTEB's multilingual audio tasks outside MAEB, in the reference's order.

Each name is a hub configuration (Common Voice 17) or a value of the ``locale`` column (Google
SVQ); each is evaluated as its own subset and the main score is the mean over them.
"""

from __future__ import annotations

__all__ = ["COMMON_VOICE_17", "SVQ_LOCALES"]

#: Common Voice 17 (mini) languages: hub configurations of ``mteb/common_voice_17_0_mini``.
COMMON_VOICE_17: tuple[str, ...] = (
    "ar", "ast", "be", "bg", "bn", "br", "cs", "cy", "da", "de", "el", "en", "es", "et", "fa",
    "fi", "fr", "frold", "gl", "ha", "hi", "hu", "it", "ja", "ka", "ko", "lt", "lv", "mk", "ml",
    "mn", "mr", "nl", "oc", "pl", "pt", "ro", "ru", "sk", "sl", "sr", "sv-SE", "sw", "ta", "te",
    "th", "tr", "uk", "ur", "vi",
)  # fmt: skip

#: Google SVQ locales: values of the ``locale`` column of ``mteb/svq`` (configuration audio).
SVQ_LOCALES: tuple[str, ...] = (
    "ar_eg", "ar_x_gulf", "ar_x_levant", "ar_x_maghrebi", "bn_bd", "bn_in", "en_au", "en_gb",
    "en_in", "en_ph", "en_us", "fi_fi", "gu_in", "hi_in", "id_id", "ja_jp", "kn_in", "ko_kr",
    "ml_in", "mr_in", "ru_ru", "sw", "ta_in", "te_in", "ur_in", "ur_pk",
)  # fmt: skip
