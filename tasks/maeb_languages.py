"""The language subsets of MAEB's multilingual tasks, in the reference's order.

Each name is a hub configuration (or, for Jam-ALT, a value of the ``song_language`` column);
each is evaluated as its own subset and the main score is the mean over them.
"""

from __future__ import annotations

__all__ = ["COMMON_VOICE_21", "FLEURS", "JAM_ALT", "MINDS14", "SIB_FLEURS"]

#: Common Voice 21 (mini) languages: the hub configurations of ``mteb/common_voice_21_0_mini``.
COMMON_VOICE_21: tuple[str, ...] = (
    "ab", "af", "am", "ar", "as", "ast", "az", "ba", "bas", "be", "bg", "bn", "br", "ca", "ckb",
    "cnh", "cs", "cv", "cy", "da", "dav", "de", "dv", "dyu", "el", "en", "eo", "es", "et", "eu",
    "fa", "fi", "fr", "fy-NL", "ga-IE", "gl", "gn", "ha", "he", "hi", "hsb", "hu", "hy-AM",
    "ia", "id", "it", "ja", "ka", "kab", "kk", "kln", "kmr", "ko", "ky", "lg", "lij", "lt",
    "ltg", "luo", "lv", "mdf", "mhr", "mk", "ml", "mn", "mr", "mrj", "mt", "myv", "nan-tw",
    "ne-NP", "nl", "nn-NO", "oc", "or", "os", "pa-IN", "pl", "ps", "pt", "rm-sursilv",
    "rm-vallader", "ro", "ru", "rw", "sah", "sat", "sc", "sk", "skr", "sl", "sq", "sr", "sv-SE",
    "sw", "ta", "te", "th", "tig", "tk", "tn", "tok", "tr", "tt", "ug", "uk", "ur", "uz", "vi",
    "yi", "yo", "yue", "zgh", "zh-CN", "zh-HK", "zh-TW", "zza",
)  # fmt: skip

#: FLEURS languages: the hub configurations of ``mteb/fleurs``.
FLEURS: tuple[str, ...] = (
    "af_za", "am_et", "ar_eg", "as_in", "ast_es", "az_az", "be_by", "bn_in", "bs_ba", "ca_es",
    "ceb_ph", "cmn_hans_cn", "yue_hant_hk", "cs_cz", "cy_gb", "da_dk", "de_de", "el_gr",
    "en_us", "es_419", "et_ee", "fa_ir", "ff_sn", "fi_fi", "fil_ph", "fr_fr", "ga_ie", "gl_es",
    "gu_in", "ha_ng", "he_il", "hi_in", "hr_hr", "hu_hu", "hy_am", "id_id", "ig_ng", "is_is",
    "it_it", "ja_jp", "jv_id", "ka_ge", "kam_ke", "kea_cv", "kk_kz", "km_kh", "kn_in", "ko_kr",
    "ckb_iq", "ky_kg", "lb_lu", "lg_ug", "ln_cd", "lo_la", "lt_lt", "luo_ke", "lv_lv", "mi_nz",
    "mk_mk", "ml_in", "mn_mn", "mr_in", "ms_my", "mt_mt", "my_mm", "nb_no", "ne_np", "nl_nl",
    "nso_za", "ny_mw", "oc_fr", "om_et", "or_in", "pa_in", "pl_pl", "ps_af", "pt_br", "ro_ro",
    "ru_ru", "bg_bg", "sd_in", "sk_sk", "sl_si", "sn_zw", "so_so", "sr_rs", "sv_se", "sw_ke",
    "ta_in", "te_in", "tg_tj", "th_th", "tr_tr", "uk_ua", "umb_ao", "ur_pk", "uz_uz", "vi_vn",
    "wo_sn", "xh_za", "yo_ng", "zu_za",
)  # fmt: skip

#: SIB-FLEURS languages: the hub configurations of ``mteb/sib-fleurs-multilingual-mini``.
SIB_FLEURS: tuple[str, ...] = (
    "afr_Latn", "amh_Ethi", "arb_Arab", "asm_Beng", "ast_Latn", "azj_Latn", "bel_Cyrl",
    "bul_Cyrl", "ben_Beng", "bos_Latn", "cat_Latn", "ceb_Latn", "ckb_Arab", "zho_Hans",
    "ces_Latn", "cym_Latn", "dan_Latn", "deu_Latn", "ell_Grek", "eng_Latn", "spa_Latn",
    "est_Latn", "pes_Arab", "fin_Latn", "tgl_Latn", "fra_Latn", "gle_Latn", "glg_Latn",
    "guj_Gujr", "hau_Latn", "heb_Hebr", "hin_Deva", "hrv_Latn", "hun_Latn", "hye_Armn",
    "ind_Latn", "ibo_Latn", "isl_Latn", "ita_Latn", "jpn_Jpan", "jav_Latn", "kat_Geor",
    "kam_Latn", "kea_Latn", "kaz_Cyrl", "khm_Khmr", "kan_Knda", "kor_Hang", "kir_Cyrl",
    "ltz_Latn", "lug_Latn", "lin_Latn", "lao_Laoo", "lit_Latn", "luo_Latn", "lvs_Latn",
    "mri_Latn", "mkd_Cyrl", "mal_Mlym", "khk_Cyrl", "mar_Deva", "zsm_Latn", "mlt_Latn",
    "mya_Mymr", "nob_Latn", "npi_Deva", "nld_Latn", "nso_Latn", "nya_Latn", "oci_Latn",
    "ory_Orya", "pan_Guru", "pol_Latn", "pbt_Arab", "por_Latn", "ron_Latn", "rus_Cyrl",
    "snd_Arab", "slk_Latn", "slv_Latn", "sna_Latn", "som_Latn", "srp_Cyrl", "swe_Latn",
    "swh_Latn", "tam_Taml", "tel_Telu", "tgk_Cyrl", "tha_Thai", "tur_Latn", "ukr_Cyrl",
    "umb_Latn", "urd_Arab", "uzn_Latn", "vie_Latn", "wol_Latn", "xho_Latn", "yor_Latn",
    "zho_Hant", "zul_Latn", "fuv_Latn", "gaz_Latn",
)  # fmt: skip

#: MInDS-14 locales: the hub configurations of ``mteb/minds14-multilingual``.
MINDS14: tuple[str, ...] = (
    "en-GB", "fr-FR", "it-IT", "es-ES", "pt-PT", "de-DE", "nl-NL", "ru-RU", "pl-PL", "cs-CZ",
    "ko-KR", "zh-CN",
)  # fmt: skip

#: Jam-ALT song languages (the ``song_language`` values scored, each a subset).
JAM_ALT: tuple[str, ...] = (
    "en", "fr", "de", "es",
)  # fmt: skip
