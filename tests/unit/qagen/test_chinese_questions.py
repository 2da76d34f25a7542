"""Chinese question checks: a question that leans on its context (a demonstrative, the text,
a table, the document's or the reader's voice) is not standalone, and a question word must
fit the span's type; English questions get exactly the English rules' verdicts. The writer's
draft asks in place: the span's clause with the span replaced by the question word of its
type."""

from __future__ import annotations

import pytest

from ragcourt.orchestration.params import parse_params
from ragcourt.qagen.answer_first import QUESTION_TYPE, AnswerFirstGenerator
from ragcourt.qagen.answer_spans_zh import anchors
from ragcourt.qagen.filters import not_standalone_reason
from ragcourt.qagen.generator import NOT_STANDALONE, Candidate
from ragcourt.qagen.questions_zh import (
    chinese_not_standalone_reason,
    chinese_question_word_mismatch,
    question_word,
    wh_draft,
)


@pytest.mark.parametrize(
    ("question", "word"),
    [
        ("这些现代的网络配置工具主要针对于哪个用户群体？", "这"),
        ("对于这个更新，哪个邮件列表是好的信息来源？", "这"),
        ("该命令用于做什么？", "该"),
        ("此命令有什么用？", "此"),
        ("那些工具由谁维护？", "那"),
    ],
)
def test_a_demonstrative_makes_a_chinese_question_lean_on_its_context(
    question: str, word: str
) -> None:
    why = not_standalone_reason(question)
    assert why is not None and f"'{word}'" in why and "points with" in why


@pytest.mark.parametrize(
    ("question", "word"),
    [
        ("表格中“语言环境值的 3 个部分”叫什么名字？", "表格中"),
        ("上述命令的作用是什么？", "上述"),
        ("文中提到的工具是什么？", "文中"),
        ("以下哪个选项是推荐的？", "以下"),
        ("阅读前面的多少行就够了？", "前面"),
    ],
)
def test_a_chinese_question_pointing_at_the_text_is_not_standalone(
    question: str, word: str
) -> None:
    why = not_standalone_reason(question)
    assert why is not None and f"refers to '{word}'" in why


def test_the_documents_and_the_readers_voice_and_what_is_discussed() -> None:
    assert "document's voice ('我们')" in (not_standalone_reason("我们应该使用哪个命令？") or "")
    assert "reader ('你')" in (not_standalone_reason("你最好用哪个编辑器？") or "")
    assert "reader ('您')" in (not_standalone_reason("您可以在哪个目录找到配置？") or "")
    assert "talked about" in (not_standalone_reason("Debian 手册提到了哪些工具？") or "")
    assert "'今天'" in (not_standalone_reason("今天收盘时日元对美元的汇率是多少？") or "")
    assert "'去年'" in (not_standalone_reason("吉林省去年粮食总产是多少？") or "")
    assert not_standalone_reason("1997年吉林省粮食总产是多少？") is None
    assert "'本报'" in (not_standalone_reason("本报讯魏德义创办的哪家集团依靠科技进步？") or "")
    assert "'上年'" in (not_standalone_reason("全市出口比上年同期增长多少？") or "")


@pytest.mark.parametrize(
    ("question", "why"),
    [
        ("它白手起家，仅仅用了多少年时间？", "stands '它'"),
        ("他们在哪一年创办了公司？", "stands '他们'"),
        ("比1996年实际增长多少个百分点？", "opens with '比'"),
        ("尽管亚洲部分地区自哪个月以来发生了金融动荡？", "opens with '尽管'"),
        ("并低于政府制定的百分之多少的目标？", "opens with '并'"),
        ("除了泰国，还有哪个国家得到救援？", "opens with '除了'"),
    ],
)
def test_a_pronoun_or_a_clauses_tail_leans_on_the_context(question: str, why: str) -> None:
    assert why in (not_standalone_reason(question) or "")


@pytest.mark.parametrize(
    "question",
    [
        "比利时的首都是哪里？",  # 比利时 is one word: Belgium, not 比 (than)
        "也门和阿曼位于哪个半岛？",  # 也门: Yemen, not 也 (also)
        "其他国家对日本的出口增长了多少？",  # 其他: other, not 其 (its)
        "吉林省委书记张德江来到哪家公司？",
    ],
)
def test_words_that_hold_those_characters_stand_alone(question: str) -> None:
    assert not_standalone_reason(question) is None


@pytest.mark.parametrize(
    "question",
    [
        "应该如何配置 sudo 才能让普通用户执行管理命令？",  # 应该: should, not 该 (that)
        "因此 Debian 默认使用哪个初始化系统？",  # 因此: therefore
        "Debian 安装时彼此独立的两个分区各用什么文件系统？",  # 彼此: each other
        "迷你 Debian 系统在内存中运行什么？",  # 迷你: mini, not 你
        "我国2024年国内生产总值增长了多少？",  # 我国: China, not the document's 我
        "那么 testing 版的代码名叫什么？",  # 那么: then
        "Debian 的稳定版多久发布一次？",
    ],
)
def test_function_words_holding_those_characters_do_not_count(question: str) -> None:
    assert not_standalone_reason(question) is None


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What does this passage say about Paris?", "refers to 'this passage'"),
        ("What did the speaker promise?", "speaks in the document's voice ('the speaker')"),
        ("What do we know about the war?", "speaks in the document's voice ('we')"),
        ("What is being discussed in Geneva?", "asks what is talked about ('being discussed')"),
        ("Which tools does this release ship?", None),  # "this" alone is no English rule
        ("How do you install Debian?", None),  # nor is "you"
        ("Who wrote 这个 poem?", None),  # a Chinese word quoted in English: English rules
        ("When was the Royal College of Chemistry established?", None),
    ],
)
def test_english_questions_get_the_english_verdicts_only(
    question: str, expected: str | None
) -> None:
    why = not_standalone_reason(question)
    assert (why is None) == (expected is None)
    if expected is not None:
        assert why is not None and why.startswith(expected)
    assert chinese_not_standalone_reason(question) is None
    for kind in ("number", "date", "person", "noun_phrase"):
        assert chinese_question_word_mismatch(question, kind) is None


@pytest.mark.parametrize(
    ("question", "answer_type", "fits"),
    [
        ("$LANG 变量的完整语言环境值由多少部分组成？", "number", True),
        ("Debian 的 testing 版每几天更新一次？", "number", True),
        ("一个文件名最长可以有多长？", "number", True),
        ("何时更改 /etc/apt/preferences 文件的 Pin-Priority？", "number", False),
        ("电子邮件客户端使用何种认证方式？", "number", False),
        ("什么是软件包的数量？", "number", False),
        ("中国人民银行什么时候下调存款准备金率？", "date", True),
        ("欧佩克+在几月份增加石油供应？", "date", True),
        ("中国人民银行下调了什么？", "date", False),
        ("谁宣布下调存款准备金率？", "organization", True),
        ("现代网络配置工具主要针对哪个用户群体？", "noun_phrase", True),
        ("哪几个国家表示支持增产？", "place", True),  # 哪几: which, not how many
        ("中国人民银行什么时候宣布降准？", "organization", False),
        ("欧佩克+将石油供应增加了多少？", "place", False),
    ],
)
def test_the_chinese_question_word_fits_the_span_type(
    question: str, answer_type: str, fits: bool
) -> None:
    why = chinese_question_word_mismatch(question, answer_type)
    assert (why is None) == fits, why


@pytest.mark.parametrize(
    ("question", "answer_type", "span", "fits"),
    [
        ("日本金融体系为何长期存在拉关系的现象？", "noun_phrase", "黑社会", False),
        ("如何保证生产和市场的稳定？", "noun_phrase", "经济手段", False),
        ("为什么日本银行降低官方利率？", "date", "１９８６年", False),
        ("有多少家企业的职工自愿认股？", "number", "９０％", False),  # a share, not a count
        ("改制企业中自愿认股的职工比例是多少？", "number", "９０％", True),
        ("消费增长了多少个百分点？", "number", "１０个百分点", True),
        ("泰国将削减多少种产品的关税？", "number", "３４１９种", True),
    ],
)
def test_why_and_how_fit_no_span_and_a_share_is_no_count(
    question: str, answer_type: str, span: str, fits: bool
) -> None:
    why = chinese_question_word_mismatch(question, answer_type, span)
    assert (why is None) == fits, why


def _candidate(question: str, answer: str, answer_type: str, context: str) -> Candidate:
    c = Candidate(0, "c0", "d0", 0, len(context), context, question, answer)
    c.answer_type = answer_type
    return c


def test_check_question_rejects_a_mismatched_chinese_question_word_only() -> None:
    gen = AnswerFirstGenerator.__new__(AnswerFirstGenerator)
    gen.q = parse_params({}).qagen
    ctx = "软件包的 Pin-Priority 设为 1010 时，apt 会降级软件包。"
    when = _candidate("何时把软件包的 Pin-Priority 设为一个大值？", "1010", "number", ctx)
    gen.check_question(when)
    assert when.failed_filter == QUESTION_TYPE
    how_many = _candidate("apt 降级软件包需要 Pin-Priority 至少是多少？", "1010", "number", ctx)
    gen.check_question(how_many)
    assert how_many.alive
    leaning = _candidate("这个值是多少？", "1010", "number", ctx)
    gen.check_question(leaning)
    assert leaning.failed_filter == NOT_STANDALONE
    # English: no question-word rule, whatever the span's type
    en_ctx = "The Royal College of Chemistry was established in 1845 by private subscription."
    en = _candidate("When was the Royal College of Chemistry founded?", "1845", "number", en_ctx)
    gen.check_question(en)
    assert en.alive


DRAFT_TEXT = (
    "三峡大坝于1994年正式动工，2006年全线建成。消费者前11个月消费了２３９６２亿元，"
    "增长了１０个百分点；改制企业中９０％的职工自愿认股。吉林市电力器材有限公司"
    "的２００多名职工来到现场。张德江在纪念册上题字。"
)


@pytest.mark.parametrize(
    ("span", "answer_type", "draft"),
    [
        ("1994年", "date", "三峡大坝于哪一年正式动工？"),
        ("２３９６２亿元", "number", "消费者前11个月消费了多少亿元？"),
        ("１０个百分点", "number", "增长了多少个百分点？"),
        ("９０％", "number", "改制企业中百分之多少的职工自愿认股？"),
        ("吉林市电力器材有限公司", "organization", "哪家公司的２００多名职工来到现场？"),
        ("２００多名", "number", "吉林市电力器材有限公司的多少名职工来到现场？"),
        ("张德江", "person", "谁在纪念册上题字？"),
        ("纪念册", "noun_phrase", "张德江在什么上题字？"),
    ],
)
def test_the_draft_asks_for_the_span_in_its_clause(span: str, answer_type: str, draft: str) -> None:
    start = DRAFT_TEXT.index(span)
    got = wh_draft(DRAFT_TEXT, start, start + len(span), answer_type)
    assert got == draft
    assert chinese_question_word_mismatch(got, answer_type, span) is None
    assert span not in got


@pytest.mark.parametrize(
    ("span", "answer_type", "word"),
    [
        ("约800万册", "number", "多少万册"),  # a hedge and the digits go, the unit stays
        ("五六十", "number", "多少"),
        ("１３０·８７日元", "number", "多少日元"),  # a middle dot between digits: a decimal point
        ("６％", "number", "百分之多少"),
        ("１月４日", "date", "哪一天"),
        ("７月", "date", "哪个月"),
        ("八十年代初", "date", "什么时候"),
        ("河北太行集团", "organization", "哪家集团"),
        ("国家税务总局", "organization", "哪个机构"),
        ("菲律宾", "place", "哪里"),
    ],
)
def test_the_question_word_keeps_the_unit_and_grain(span: str, answer_type: str, word: str) -> None:
    assert question_word(span, answer_type) == word


@pytest.mark.parametrize(
    "question",
    [
        "全市改制企业百分之多少以上职工自愿认股？",  # which city?
        "结合什么的发展？",  # a clause's fragment: whose development?
        "一位多少岁的退伍兵？",
        "产品市场占有率达百分之多少以上？",  # whose products?
    ],
)
def test_a_chinese_question_that_names_nothing_leans_on_its_context(question: str) -> None:
    why = chinese_not_standalone_reason(question)
    assert why is not None and why.startswith("names no person, place")


@pytest.mark.parametrize(
    ("question", "anchor"),
    [
        ("日本银行从哪一年起降低官方利率？", "日本银行"),  # an organisation
        ("全国优秀退伍军人魏德义创办的哪家集团依靠科技进步？", "魏德义"),  # a person
        ("１９９６年哪个地区遭受特大洪灾？", "１９９６年"),  # a full year, full width
        ("《红楼梦》的作者是谁？", "《红楼梦》"),  # a title
        ("Debian 的启动过程有多少个运行级？", "Debian"),  # a Latin-letter name
    ],
)
def test_a_question_that_names_one_thing_is_anchored(question: str, anchor: str) -> None:
    assert anchor in anchors(question)
    assert chinese_not_standalone_reason(question) is None


def test_the_answer_is_no_anchor_of_its_own_clause() -> None:
    clause = "听了董事长徐柏玉介绍"
    start = clause.index("徐柏玉")
    assert anchors(clause) == ["徐柏玉"]
    assert anchors(clause, (start, start + 3)) == []
    assert anchors("其他国家的出口增长了多少") == []
