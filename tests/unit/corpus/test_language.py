"""Language detection at ingest on the hand-written multilingual test corpus."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ragcourt.corpus.ingest import ingest
from ragcourt.corpus.language import cjk_script_language, detect_language, script_consistent
from ragcourt.corpus.params import CorpusParams

DATA = Path(__file__).resolve().parents[2] / "data" / "multilingual"
DEMO = Path(__file__).resolve().parents[3] / "data" / "corpus"


def test_ingest_records_language_per_document_in_a_mixed_corpus(tmp_path: Path) -> None:
    for sub in ("zh", "de"):
        shutil.copytree(DATA / sub, tmp_path / sub)
    (tmp_path / "en.txt").write_text(
        "The harbour office weighed every crate of iron twice before the ships left.", "utf-8"
    )
    (tmp_path / "numbers.txt").write_text("1 2 3 4 5", "utf-8")
    docs, _ = ingest(CorpusParams(dir=str(tmp_path), extensions=[".txt"]))
    by_path = dict(zip(docs["path"].to_list(), docs["language"].to_list(), strict=True))
    assert {v for k, v in by_path.items() if "/zh/" in k} == {"zh"}
    assert {v for k, v in by_path.items() if "/de/" in k} == {"de"}
    assert by_path[f"{tmp_path.as_posix()}/en.txt"] == "en"
    assert by_path[f"{tmp_path.as_posix()}/numbers.txt"] == "und"
    conf = docs.filter(docs["language"] != "und")["language_confidence"].to_list()
    assert all(0.5 < c <= 1.0 for c in conf)


def test_demo_corpus_is_detected_as_english() -> None:
    docs, _ = ingest(CorpusParams(dir=str(DEMO), extensions=[".txt"]))
    assert set(docs["language"].to_list()) == {"en"}


def test_detection_is_deterministic_and_can_be_restricted() -> None:
    text = "Die Bahn führt im Dezember einen neuen Fahrplan ein."
    assert detect_language(text) == detect_language(text)
    assert detect_language(text, among=["zh", "de"]).language == "de"
    # no probability for any candidate: the CJK script decides, else the first code
    assert detect_language("1234", among=["en", "zh"]).language == "en"


# Chinese questions the 1.5B wrote about the Chinese test corpus; langdetect alone called
# every one of them Korean (benchmarks/question_language.py).
SHORT_ZH_QUESTIONS = (
    "该团队研制出多少个超导量子比特的计算原型机？",
    "上个月四个一线城市新建商品住宅价格环比下降了多少百分比？",
    "新能源汽车销量今年前三季达到多少万辆？",
    "央行下调存款准备金率对债券市场有何影响？",
    "马拉松比赛吸引了多少名跑者参赛？",
    "新高铁线路的全程距离是多少公里？",
    "修复的宋代古籍有多少册？",
    "合肥建设十二英寸晶圆厂的月产能可达多少片晶圆？",
)


@pytest.mark.parametrize("question", SHORT_ZH_QUESTIONS)
def test_short_chinese_question_is_chinese_not_korean(question: str) -> None:
    assert detect_language(question).language == "zh"


def test_the_script_decides_among_cjk_languages() -> None:
    assert cjk_script_language("東京は日本の首都です。") == "ja"
    assert cjk_script_language("서울은 한국의 수도입니다.") == "ko"
    assert cjk_script_language("韩国歌手김민수在北京举办了演唱会，吸引了数千名观众。") == "zh"
    assert cjk_script_language("plain English") is None
    assert script_consistent({"ko": 0.7, "zh": 0.3}, "修复的宋代古籍") == {"zh": 1.0}
    assert script_consistent({"en": 0.9, "ko": 0.1}, "no CJK here") == {"en": 0.9, "ko": 0.1}
