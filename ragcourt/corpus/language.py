"""Language of a text: an ISO 639-1 code and a confidence in [0, 1].

Detection is langdetect (profiles ship in the package, no download) with a fixed seed, so the
same text always gets the same answer: ``language`` is langdetect's most probable language
(``zh-cn``/``zh-tw`` -> ``zh``) and ``confidence`` its probability, made consistent with the
script (:func:`script_consistent`: Korean needs Hangul, Japanese kana; langdetect calls many
short Chinese questions Korean). A text with no letters is
``und`` (undetermined) with confidence 0. With ``among`` the answer is the most probable of those
codes (a query is matched to the languages its corpus holds); when langdetect gives none of them
any probability, a CJK script in the text picks the CJK code among them, else the first code.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

UNDETERMINED = "und"
SEED = 0
# Character ranges: CJK unified ideographs (+ ext. A, compatibility), kana, hangul syllables
# and jamo; CJK_CHAR is any of them.
_HAN_RANGES = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_KANA_RANGES = "\u3040-\u30ff\u31f0-\u31ff"
_HANGUL_RANGES = "\uac00-\ud7af\u1100-\u11ff"
CJK_CHAR = re.compile(f"[{_HAN_RANGES}{_KANA_RANGES}{_HANGUL_RANGES}]")
HAN_CHAR = re.compile(f"[{_HAN_RANGES}]")  # a Chinese character (kanji, hanja)
CJK_LANGUAGES = frozenset({"zh", "ja", "ko"})
_KANA = re.compile(f"[{_KANA_RANGES}]")
_HANGUL = re.compile(f"[{_HANGUL_RANGES}]")
# English names of ISO 639-1 codes: the languages langdetect reads, those PyStemmer stems
# (:data:`STEMMED`) and the unspaced scripts no span extractor reads yet (th, lo, km, my)
LANGUAGE_NAMES = {
    "ar": "Arabic", "ca": "Catalan", "cs": "Czech", "da": "Danish", "de": "German",
    "el": "Greek", "en": "English", "eo": "Esperanto", "es": "Spanish", "et": "Estonian",
    "eu": "Basque", "fa": "Persian", "fi": "Finnish", "fr": "French", "ga": "Irish",
    "hi": "Hindi", "hu": "Hungarian", "hy": "Armenian", "id": "Indonesian", "it": "Italian",
    "ja": "Japanese", "km": "Khmer", "ko": "Korean", "lo": "Lao", "lt": "Lithuanian",
    "my": "Burmese", "ne": "Nepali", "nl": "Dutch", "no": "Norwegian", "pl": "Polish",
    "pt": "Portuguese", "ro": "Romanian", "ru": "Russian", "sr": "Serbian", "sv": "Swedish",
    "ta": "Tamil", "th": "Thai", "tr": "Turkish", "uk": "Ukrainian", "vi": "Vietnamese",
    "yi": "Yiddish", "zh": "Chinese",
}  # fmt: skip
# the languages of LANGUAGE_NAMES whose Snowball stemmer PyStemmer ships, by code; PyStemmer
# names each algorithm by its language's English name in lower case
STEMMED = frozenset(
    {"ar", "ca", "cs", "da", "de", "el", "en", "eo", "es", "et", "eu", "fa", "fi", "fr", "ga",
     "hi", "hu", "hy", "id", "it", "lt", "ne", "nl", "no", "pl", "pt", "ro", "ru", "sr", "sv",
     "ta", "tr", "yi"}
)  # fmt: skip


@dataclass(frozen=True)
class LanguageGuess:
    """``language``: ISO 639-1 code (or ``und``); ``confidence``: its probability in [0, 1]."""

    language: str
    confidence: float


def language_name(code: str) -> str:
    """English name of an ISO 639-1 code (the code itself when unknown)."""
    return LANGUAGE_NAMES.get(code, code)


def stemmer_name(code: str) -> str | None:
    """PyStemmer's algorithm for an ISO 639-1 code (``de`` -> ``german``), or None when it
    ships none."""
    return LANGUAGE_NAMES[code].lower() if code in STEMMED else None


def has_cjk(text: str) -> bool:
    return CJK_CHAR.search(text) is not None


def _iso(code: str) -> str:
    return code.split("-", 1)[0]


@cache
def _factory() -> Any:
    from langdetect.detector_factory import PROFILES_DIRECTORY, DetectorFactory

    f = DetectorFactory()
    f.load_profile(PROFILES_DIRECTORY)
    f.set_seed(SEED)
    return f


def probabilities(text: str) -> dict[str, float]:
    """ISO 639-1 code -> probability (langdetect, seeded); ``{}`` for a text with no letters."""
    from langdetect.lang_detect_exception import LangDetectException

    if not any(ch.isalpha() for ch in text):
        return {}
    detector = _factory().create()
    detector.append(text)
    try:
        found = detector.get_probabilities()
    except LangDetectException:  # no usable features
        return {}
    out: dict[str, float] = {}
    for lang in found:
        code = _iso(str(lang.lang))
        out[code] = out.get(code, 0.0) + float(lang.prob)
    return script_consistent(out, text)


def cjk_script_language(text: str) -> str | None:
    """The CJK language the script implies, over its Han, kana and Hangul characters: ``ko``
    when Hangul is at least half of them, else ``ja`` when kana is at least a tenth (Japanese
    prose mixes kana into Han), else ``zh``; None without CJK characters."""
    han, kana, hangul = (len(r.findall(text)) for r in (HAN_CHAR, _KANA, _HANGUL))
    total = han + kana + hangul
    if total == 0:
        return None
    if hangul >= total / 2:
        return "ko"
    return "ja" if kana >= total / 10 else "zh"


# a unit of text: one CJK character, or a run of other letters and digits
UNIT = re.compile(f"{CJK_CHAR.pattern}|[^\\W_{CJK_CHAR.pattern[1:-1]}]+")


def mostly_cjk_language(text: str) -> str | None:
    """The CJK language the script implies (:func:`cjk_script_language`) when CJK characters
    are at least half of the text's units (:data:`UNIT`), else None: a Chinese chunk full of
    commands and names is Chinese, whatever the word-based detector says."""
    units = UNIT.findall(text)
    cjk = sum(1 for u in units if CJK_CHAR.fullmatch(u))
    return cjk_script_language(text) if units and cjk * 2 >= len(units) else None


def script_consistent(probs: dict[str, float], text: str) -> dict[str, float]:
    """``probs`` with the mass of a CJK language the script rules out (Korean without Hangul,
    Japanese without kana, Chinese beside Hangul or kana) moved to the language the script
    implies (:func:`cjk_script_language`); unchanged for text without CJK characters."""
    implied = cjk_script_language(text)
    if implied is None:
        return probs
    out = dict(probs)
    for code in CJK_LANGUAGES - {implied}:
        if code in out:
            out[implied] = out.get(implied, 0.0) + out.pop(code)
    return out


def detect_language(text: str, among: Sequence[str] | None = None) -> LanguageGuess:
    """The language of ``text`` (module docstring); restricted to ``among`` when given."""
    probs = probabilities(text)
    if among is not None:
        if not among:
            raise ValueError("detect_language: 'among' is empty")
        scored = [(probs.get(code, 0.0), -i, code) for i, code in enumerate(among)]
        best_p, _, best = max(scored)
        if best_p > 0:
            return LanguageGuess(best, round(best_p, 4))
        cjk = [c for c in among if c in CJK_LANGUAGES]
        return LanguageGuess(cjk[0] if cjk and has_cjk(text) else among[0], 0.0)
    if not probs:
        return LanguageGuess(UNDETERMINED, 0.0)
    code, p = max(probs.items(), key=lambda kv: (kv[1], kv[0]))
    return LanguageGuess(code, round(p, 4))
