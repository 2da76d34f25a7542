"""Answer-first generation on Chinese text: jieba spans inside one sentence, a round trip over
characters after number and date normalisation (one text holding the other, the threshold
fitted on labelled pairs), a copied run counted in words, and a
language written without spaces that no extractor reads named in one line. The segmenter is
the real jieba; the writer and reader are a scripted model (exact control of their replies)."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest
from _llm_testing import Messages, scripted_model

from ragcourt.core.prompts import prompt
from ragcourt.corpus.answer_match import fold_width
from ragcourt.llm import Gateway
from ragcourt.orchestration.params import Params, parse_params
from ragcourt.qagen.answer_first import AnswerFirstGenerator, DocumentInfo, span_contexts
from ragcourt.qagen.answer_spans_zh import UNANCHORED_SHIFT, chinese_spans
from ragcourt.qagen.roundtrip import (
    canonical_numbers,
    clean_phrase,
    longest_shared_run,
    numbers_agree,
    roundtrip_threshold,
    span_f1,
)
from ragcourt.qagen.span_languages import NoSpanExtractor, span_language, spans_of
from ragcourt.qagen.stage import QAGenResult, generate_qa

ROOT = Path(__file__).resolve().parents[3]
PROMPTS = ROOT / "configs" / "prompts"
WRITER = prompt("qagen", "answer_first_question_system", "v2-lang", PROMPTS)
READER = prompt("qagen", "answer_first_reader_system", "v2-lang", PROMPTS)

CHUNK = (
    "中国人民银行周五宣布，将于2025年5月15日起下调存款准备金率0.5个百分点。"
    "欧佩克+成员国同意将7月份的石油供应增加41.1万桶/日，沙特阿拉伯、俄罗斯和伊拉克表示支持。"
)


def test_chinese_spans_are_short_typed_and_inside_one_sentence() -> None:
    spans = chinese_spans(CHUNK)
    found = {s.text: s.answer_type for s in spans}
    assert found["2025年5月15日"] == "date"
    assert found["0.5个百分点"] == "number"
    assert found["41.1万桶"] == "number"
    assert found["7月份"] == "date"
    assert found["中国人民银行"] == "organization"
    for s in spans:
        assert CHUNK[s.start : s.end] == s.text
        sentence = CHUNK[s.sentence_start : s.sentence_end]
        assert s.text in sentence
        assert not re.search(r"[。！？]", s.text)  # never across a sentence end
        assert len(s.text) <= 16
    listed = {s.text for s in spans if s.in_list}
    assert {"沙特阿拉伯", "俄罗斯"} <= listed  # members of an enumeration drop a tier


NEWS = (
    "位于河南的中国一拖集团有限责任公司面向市场。日本银行从１９８６年起，数次降低官方利率。"
    "泡沫经济主要由８０年代以来的政策所致。国家计委和财政部联合发文，各级干部要带头执行。"
)


def test_a_span_whose_clause_names_nothing_else_drops_below_every_anchored_one() -> None:
    text = (
        "全市改制企业90%以上职工自愿认股。"
        "吉林省委书记张德江来到只有200多名职工的吉林市电力器材有限公司。"
    )
    tiers = {s.text: s.tier for s in chinese_spans(text)}
    assert tiers["90%"] >= UNANCHORED_SHIFT  # which city? its clause names nothing
    assert tiers["200多名"] == 0  # 张德江 and 吉林 name who and where
    assert max(t for t in tiers.values() if t < UNANCHORED_SHIFT) < UNANCHORED_SHIFT


def test_chinese_news_spans_name_organisations_and_skip_decades() -> None:
    found = {s.text: s.answer_type for s in chinese_spans(NEWS)}
    assert found["中国一拖集团有限责任公司"] == "organization"  # the whole name, not 中国一拖集团
    assert found["日本银行"] == "organization"
    assert found["１９８６年"] == "date"
    assert "８０年" not in found  # 80年代: a decade
    assert not any(t.endswith("干部") for t in found if found[t] == "organization")
    tiers = {s.text: s.tier for s in chinese_spans(NEWS)}
    assert tiers["中国一拖集团有限责任公司"] == 0  # a name of several words


def test_a_noun_phrase_in_a_list_is_no_candidate() -> None:
    text = "逐步实现依靠经济手段、法律手段，保证生产和市场的稳定。"
    assert not [s.text for s in chinese_spans(text) if s.answer_type == "noun_phrase"]


def test_a_number_keeps_its_decimals_and_drops_a_hedge() -> None:
    text = "日经平均指数以１５１２１·９８点收盘，３０％左右的产品。"
    found = [s.text for s in chinese_spans(text)]
    assert found == ["１５１２１·９８点", "３０％"]


def test_full_width_digits_are_read_and_offsets_kept() -> None:
    text = "公司第三季度营收为２３６５亿元人民币，同比增长５％。"
    assert len(fold_width(text)) == len(text)
    found = {s.text: s.answer_type for s in chinese_spans(text)}
    assert found["２３６５亿元"] == "number"
    assert found["５％"] == "number"
    assert found["第三季度"] == "date"


def test_numbers_and_dates_are_normalised_before_comparison() -> None:
    assert canonical_numbers("二〇二五年五月十五号") == "2025年5月15日"
    assert canonical_numbers("２０２５年０５月１５日") == "2025年5月15日"
    assert canonical_numbers("2025-05-15") == "2025年5月15日"
    assert canonical_numbers("十二月") == "12月"
    assert canonical_numbers("五千") == "5000" and canonical_numbers("三万五千") == "35000"
    assert canonical_numbers("一千二百万元") == "12000000元"
    assert canonical_numbers("一九九八年") == "1998年"
    assert canonical_numbers("42万亿日元") == "42万亿日元"  # digits keep their magnitude
    assert canonical_numbers("十分重要的一些企业") == "十分重要的一些企业"  # no amount
    assert span_f1("2025-05-15", "2025年5月15日") == 1.0
    assert numbers_agree("五月", "5月")
    assert not numbers_agree("6月", "5月")


def _reads_back(reading: str, span: str) -> bool:
    need = roundtrip_threshold(reading, span, 0.6)
    return span_f1(reading, span) >= need and numbers_agree(reading, span)


def test_round_trip_accepts_a_short_correct_answer_and_rejects_a_wrong_one() -> None:
    assert span_f1(clean_phrase("答案：41.1万桶。") or "", "41.1万桶") == 1.0
    assert roundtrip_threshold("41.1万桶/日", "41.1万桶", 0.6) == 0.46  # fitted for Chinese
    assert _reads_back("41.1万桶/日", "41.1万桶")
    assert _reads_back("馆驿中", "馆驿中歇")  # a short reading of the span
    assert _reads_back("约４２万亿日元", "42万亿日元")
    assert _reads_back("5000", "五千") and _reads_back("58", "五十八岁")
    assert _reads_back("130.87", "１３０·８７日元")  # the unit dropped
    assert not _reads_back("3000", "三万")  # another number
    assert _reads_back("90%", "９０％")  # full width, no Han character
    assert _reads_back("15121.98", "１５１２１·９８点")  # a middle dot as decimal point
    assert not _reads_back("添加内核模块或以加密形式挂载根文件系统", "加密")  # a clause around it
    assert not _reads_back("系统内核和根文件系统", "和根")
    # another name sharing characters: a character F1 alone would give 0.67 and 0.8
    assert span_f1("南京市", "北京市") == 0.0
    assert span_f1("中国银行", "中国人民银行") == 0.0
    assert span_f1("俄罗斯", "沙特阿拉伯") == 0.0
    # English text keeps SQuAD token F1 and the configured threshold
    assert span_f1("the Manuel Ortega", "Manuel Ortega") == 1.0
    assert roundtrip_threshold("the Manuel Ortega", "Manuel Ortega", 0.6) == 0.6


def test_a_copied_run_is_counted_in_jieba_words() -> None:
    copied = "欧佩克+成员国同意将7月份的石油供应增加多少？"
    asked = "哪个组织同意增加石油供应？"
    assert longest_shared_run(copied, CHUNK) >= 8
    assert longest_shared_run(asked, CHUNK) <= 3


def test_languages_written_without_spaces_are_routed_or_named() -> None:
    assert span_language(CHUNK) == "zh"
    assert span_language("The harbour office opened in 1832.") is None
    assert span_language("서울은 한국의 수도이다.") is None  # Korean is written with spaces
    with pytest.raises(NoSpanExtractor, match=r"^no answer-span extractor for Japanese \(ja\)$"):
        spans_of("東京は日本の首都であり、人口は約千四百万人である。", "rules", 5)
    with pytest.raises(NoSpanExtractor, match=r"Thai \(th\)"):
        spans_of("กรุงเทพมหานครเป็นเมืองหลวงของประเทศไทย", "rules", 5)


def test_unread_language_is_one_warning_line_and_no_candidate(
    caplog: pytest.LogCaptureFixture,
) -> None:
    contexts = _contexts("東京は日本の首都であり、人口は約千四百万人である。")
    with caplog.at_level(logging.WARNING, logger="ragcourt.qagen"):
        spans = span_contexts(contexts, _params(Path("/nonexistent"), "unused").qagen)
    assert spans.frame.height == 0 and spans.chunks_without_spans == 1
    lines = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert lines == ["qagen answer_first: no answer-span extractor for Japanese (ja): 1 chunks "
                     "give no candidate"]  # fmt: skip


# --- generation with a scripted writer and reader ---------------------------------------------

QUESTIONS = {
    "2025年5月15日": "中国人民银行宣布从哪一天起下调存款准备金率？",
    "0.5个百分点": "中国人民银行宣布将存款准备金率下调多少？",
    "41.1万桶": "欧佩克+成员国同意将7月份的石油供应增加多少？",  # copies the chunk
}
READINGS = {  # question -> the reader's reply
    QUESTIONS["2025年5月15日"]: "答案：2025年5月15日",
    QUESTIONS["0.5个百分点"]: "1个百分点。",  # a wrong reading
}


def scripted_roles(
    writer: str,
    reader: str,
    answer_line: str = "Answer: ",
    label: str = "",
    seen: list[str] | None = None,
) -> Callable[[Messages], str]:
    """A model playing the writer (system ``writer``: the question for the span on its
    ``answer_line``, after ``label``) and the reader (system ``reader``: :data:`READINGS`)."""

    def reply(msgs: Messages) -> str:
        system, user = msgs[0]["content"], msgs[-1]["content"]
        if system == reader:
            m = re.search(r"^Question: (.+)$", user, re.M)
            assert m is not None
            return READINGS.get(m.group(1), "不知道")
        assert system == writer, system[:80]
        m = re.search(f"^{re.escape(answer_line)}(.+)$", user, re.M)
        assert m is not None
        if seen is not None:
            seen.append(m.group(1))
        return label + QUESTIONS.get(m.group(1), "这是什么？")

    return reply


_script = scripted_roles(WRITER, READER)


def _params(tmp: Path, model: str, prompt_version: str = "v2-lang") -> Params:
    """Params of a run whose Chinese questions the writer model writes (``ask_in_place: []``)."""
    data = {
        "llm": {"model": model, "cache_dir": str(tmp / "cache"), "max_retries": 0,
                "metrics_dir": str(tmp / "metrics")},
        "qagen": {"reference_chunking": "c256", "method": "answer_first", "n_items": 10,
                  "max_attempts": 10, "question_model": None, "answer_model": None,
                  "prompt_version": prompt_version, "filter_kinds": {},
                  "answer_first": {"extractor": "rules", "spans_per_chunk": 8,
                                   "fill_lower_tiers": True, "round_trip": "llm",
                                   "gate": False, "ask_in_place": [],
                                   "standalone_probe": False}},
    }  # fmt: skip
    return parse_params(data)


def _contexts(text: str) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "source_chunk_id": ["c256-doc0-0"],
            "doc_id": ["doc0"],
            "char_start": [0],
            "char_end": [len(text)],
            "context": [text],
        }
    )


def _generate(params: Params, docs: DocumentInfo | None = None) -> QAGenResult:
    import numpy as np

    spans = span_contexts(_contexts(CHUNK), params.qagen, docs)
    gen = AnswerFirstGenerator(Gateway(params.llm, stage="qagen"), params, prompts_dir=PROMPTS)
    return generate_qa(spans.frame, gen, lambda t: np.eye(max(len(t), 1), 64)[: len(t)])


def test_scripted_chinese_round_trip_keeps_the_right_pair_only(tmp_path: Path) -> None:
    with scripted_model("af-zh", _script) as m:
        res = _generate(_params(tmp_path, m.model))
    kept = dict(zip(res.qa["question"].to_list(), res.qa["reference_answers"].to_list(),
                    strict=True))  # fmt: skip
    assert kept == {QUESTIONS["2025年5月15日"]: ["2025年5月15日"]}
    reasons = dict(zip(res.rejected["question"].to_list(), res.rejected["failed_filter"].to_list(),
                       strict=True))  # fmt: skip
    assert reasons[QUESTIONS["0.5个百分点"]] == "roundtrip_mismatch"  # "1个百分点" is wrong
    assert reasons[QUESTIONS["41.1万桶"]] == "question_copies_context"  # the copied clause


def test_numbers_of_technical_text_that_name_no_quantity_are_not_spans() -> None:
    text = (
        "在多用户工作站中使用 sudo(8) 命令。Vim 可以处理 UTF-8 编码，见 1.1.12 节。共有3部分组成。"
    )
    found = [s.text for s in chinese_spans(text)]
    assert "8" not in found  # the manual section of sudo(8), and the 8 of UTF-8
    assert not any(s.startswith("1.1") for s in found)  # a section number
    assert "3部" not in found  # 部 of 部分 is no unit
    named = "\n\n".join(["基于 System V Release 4 的流程。", "3.1. 启动过程概述", "见表 1.18。"])
    named += "使用 OAuth 2.0 认证。"
    assert not [s.text for s in chinese_spans(named) if s.answer_type == "number"]


def test_mixed_latin_and_chinese_text_counts_each_character() -> None:
    from ragcourt.corpus.language import mostly_cjk_language
    from ragcourt.qagen.quality import question_quality_reason, units

    assert units("Debian系统启动") == ["debian", "系", "统", "启", "动"]
    assert question_quality_reason("Debian系统启动过程的启动级有多少级？") is None
    assert mostly_cjk_language("使用 dpkg 命令进行救援，sudo apt-get install foo") == "zh"
    assert mostly_cjk_language("The harbour office opened in 1832.") is None


def test_a_chinese_chunk_gets_the_versions_chinese_writer_prompt(tmp_path: Path) -> None:
    """v4-titled-zh has Chinese writer templates: a Chinese chunk's writer reads them (its
    examples and 答案 line), the reader keeps the version's one template; a '问题：' label is
    cut from the reply. (v2-lang, used above, has none: the English templates.)"""
    writer_zh = prompt("qagen", "answer_first_question_system_zh", "v4-titled-zh", PROMPTS)
    reader = prompt("qagen", "answer_first_reader_system", "v4-titled-zh", PROMPTS)
    seen: list[str] = []
    script = scripted_roles(writer_zh, reader, "答案：", "问题：", seen)

    with scripted_model("af-zh-prompt", script) as m:
        res = _generate(_params(tmp_path, m.model, "v4-titled-zh"))
    assert "2025年5月15日" in seen
    assert res.qa["question"].to_list() == [QUESTIONS["2025年5月15日"]]


def test_the_draft_versions_writer_gets_each_spans_in_place_question(tmp_path: Path) -> None:
    """v5-draft-zh's Chinese writer reads a draft line: the span's clause asked in place."""
    from ragcourt.qagen.questions_zh import wh_draft

    writer_zh = prompt("qagen", "answer_first_question_system_zh", "v5-draft-zh", PROMPTS)
    reader = prompt("qagen", "answer_first_reader_system", "v5-draft-zh", PROMPTS)
    drafts: list[str] = []
    script = scripted_roles(writer_zh, reader, "初稿：", "", drafts)
    with scripted_model("af-zh-draft", script) as m:
        _generate(_params(tmp_path, m.model, "v5-draft-zh"))
    start = CHUNK.index("2025年5月15日")
    assert wh_draft(CHUNK, start, start + len("2025年5月15日"), "date") in drafts
    assert "将于哪一天起下调存款准备金率0.5个百分点？" in drafts


def test_asked_in_place_a_chinese_span_needs_no_writer_call(tmp_path: Path) -> None:
    """``ask_in_place: [zh]``: the question is the span's sentence asked in place (no writer
    call: the script fails on one), it is not rejected for copying the chunk, and the round
    trip still reads it back (the standalone probe off: its own tests read it)."""

    def reply(msgs: Messages) -> str:
        system, user = msgs[0]["content"], msgs[-1]["content"]
        assert system == READER, "the writer was called"
        m = re.search(r"^Question: (.+)$", user, re.M)
        assert m is not None
        return "2025年5月15日" if "哪一天" in m.group(1) else "不知道"

    params = _params(tmp_path, "unused")
    with scripted_model("af-zh-in-place", reply) as m:
        data = params.model_dump()
        data["llm"]["model"] = m.model
        data["qagen"]["answer_first"]["ask_in_place"] = ["zh"]
        res = _generate(parse_params(data))
    assert res.qa["question"].to_list() == [
        "中国人民银行周五宣布，将于哪一天起下调存款准备金率0.5个百分点？"
    ]
    assert "question_copies_context" not in res.rejected["failed_filter"].to_list()
    assert res.qa["question_model"].to_list() == ["rule:in_place_zh"]  # no model wrote it


def test_asked_in_place_a_question_cites_its_documents_title(tmp_path: Path) -> None:
    """With the document's title known (``in_place_frame``, the default), the question asked
    in place opens by citing it; the reader reads the framed question, and the gate's length
    rule reads the question's own words, not a long title."""

    def reply(msgs: Messages) -> str:
        m = re.search(r"^Question: (.+)$", msgs[-1]["content"], re.M)
        assert m is not None and m.group(1).startswith(f"据《{title}》，")
        return "2025年5月15日" if "哪一天" in m.group(1) else "不知道"

    title = "中国人民银行周五宣布下调金融机构存款准备金率零点五个百分点释放长期资金"
    docs = DocumentInfo({"doc0": [CHUNK]}, {"doc0": title})
    params = _params(tmp_path, "unused")
    with scripted_model("af-zh-framed", reply) as m:
        data = params.model_dump()
        data["llm"]["model"] = m.model
        data["qagen"]["answer_first"]["ask_in_place"] = ["zh"]
        data["qagen"]["answer_first"]["document_titles"] = True
        data["qagen"]["answer_first"]["gate"] = True
        res = _generate(parse_params(data), docs)
    question = f"据《{title}》，中国人民银行周五宣布，将于哪一天起下调存款准备金率0.5个百分点？"
    assert len(question) > 60 and res.qa["question"].to_list() == [question]


def test_a_bare_number_reads_back_with_the_unit_its_question_asked_in() -> None:
    from ragcourt.qagen.questions_zh import with_asked_unit

    question = "１９９７年英国并购金额只有多少亿美元？"
    assert with_asked_unit("1190", question, "１１９０亿美元") == "1190亿美元"
    assert roundtrip_threshold("1190亿美元", "１１９０亿美元", 0.6) <= span_f1(
        "1190亿美元", "１１９０亿美元"
    )
    assert with_asked_unit("11", "１９９６年占百分之多少？", "１１％") == "11%"
    assert with_asked_unit("1190", "英国并购多少件？", "１１９０亿美元") == "1190"  # another unit
    assert with_asked_unit("约1190", question, "１１９０亿美元") == "约1190"  # not bare


def test_chinese_decimals_and_days_and_unnamed_places() -> None:
    found = {s.text: s.answer_type for s in chinese_spans("阿根廷将发行约合四点三九亿美元的债券。")}
    assert found.get("四点三九亿美元") == "number"
    assert canonical_numbers("四点三九亿美元") == canonical_numbers("4.39亿美元") == "4.39亿美元"
    assert canonical_numbers("三点〇五") == "3.05"
    text = "阿根廷经济部二十三日宣布，两国将在２０年来最大的项目中合作，引进９０年代的设备。"
    spans = {s.text for s in chinese_spans(text)}
    assert not spans & {"二十三", "两国", "２０年", "９０"}  # a day, no place, a span, a decade


def test_a_relative_time_or_a_day_without_its_month_is_not_standalone() -> None:
    from ragcourt.qagen.questions_zh import chinese_not_standalone_reason

    assert chinese_not_standalone_reason("如今的上海市有多少家外资银行？") is not None
    assert chinese_not_standalone_reason("匈牙利下届国会选举将于哪一天举行？") is not None
    why = chinese_not_standalone_reason("德国自１日起取消了哪个部门？")
    assert why is not None and "month" in why
    assert chinese_not_standalone_reason("德国自１９９８年１月１日起取消了哪个部门？") is None


def test_a_span_of_years_is_no_date() -> None:
    text = "德国联邦邮电部已有１２５年历史，１９９８年１月撤销。"
    dates = [sp.text for sp in chinese_spans(text) if sp.answer_type == "date"]
    assert dates == ["１９９８年１月"]
