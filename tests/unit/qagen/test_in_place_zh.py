"""Chinese questions asked in place by rule: the span's clause with its question word, the
clauses back to one that names something, the sentence's time phrase, and the reasons no
question is built. The segmenter is the real jieba."""

from __future__ import annotations

from ragcourt.qagen.in_place_zh import MAX_QUESTION_CHARS, in_place_question


def _ask(text: str, span: str, answer_type: str) -> tuple[str | None, str | None]:
    start = text.index(span)
    built = in_place_question(text, start, start + len(span), answer_type)
    return built.question, built.why_not


def test_a_span_is_asked_in_place_in_its_clause() -> None:
    text = (
        "万德莱公司于１９９３年成立，作为立志发展民族高科技企业的徐杰，大胆地把企业定位到通讯工业。"
    )
    assert _ask(text, "１９９３年", "date") == ("万德莱公司于哪一年成立？", None)


def test_a_clause_naming_nothing_takes_the_clauses_back_to_its_topic() -> None:
    text = "钱其琛说，中意两国同是文明古国，都为世界文明的发展作出过杰出贡献。"
    question, _ = _ask(text, "世界文明", "noun_phrase")
    assert question == "中意两国同是文明古国，都为什么的发展作出过杰出贡献？"
    text = "日本银行从１９８６年起，数次降低官方利率。"  # the span's clause only frames the next
    assert _ask(text, "１９８６年", "date")[0] == "日本银行从哪一年起，数次降低官方利率？"


def test_the_sentences_time_phrase_is_kept_for_a_figure() -> None:
    text = "１９９８年１月，上海证券交易所的成交额达到５０００亿元，比上月增长１２％。"
    question, _ = _ask(text, "１２％", "number")
    assert question is not None
    assert question.startswith("１９９８年１月，上海证券交易所")
    assert question.endswith("比上月增长百分之多少？")


def test_no_question_when_the_sentence_names_nothing() -> None:
    question, why = _ask("全市改制企业９０％以上职工自愿认股。", "９０％", "number")
    assert question is None and why is not None and why.startswith("names no")


def test_no_question_for_a_name_after_its_title() -> None:
    text = "印度尼西亚总统苏哈托在雅加达会见美国国防部长科恩。"
    question, why = _ask(text, "苏哈托", "person")
    assert question is None and why is not None and "title" in why
    text = "１９９７年，邓小平同志关注着中国的发展。"  # asked in place: 谁同志
    question, why = _ask(text, "邓小平", "person")
    assert question is None and why is not None and "noun" in why


def test_a_place_qualifying_a_noun_is_asked_as_whose() -> None:
    text = "据新华社报道，广东外贸出口以年均增长３６％的幅度迅猛发展。"
    question, _ = _ask(text, "广东", "place")
    assert question == "据新华社报道，哪里的外贸出口以年均增长３６％的幅度迅猛发展？"


def test_a_dateline_is_dropped_and_never_asked() -> None:
    text = "新华社马尼拉１月４日电（记者宁述勇）菲律宾总统拉莫斯３日发表讲话说，经济将恢复增长。"
    question, _ = _ask(text, "拉莫斯", "person")
    assert question is None  # after its title
    question, _ = _ask(text, "菲律宾", "place")
    assert question is not None and question.startswith("哪里的总统拉莫斯")
    assert _ask(text, "马尼拉", "place")[0] is None


def test_no_question_past_the_length_limit_or_across_a_quotation() -> None:
    long = "国家统计局说，" + "，".join(["各地的工业生产继续保持平稳增长"] * 4) + "，全年增长８％。"
    question, why = _ask(long, "８％", "number")
    assert question is None and why is not None and "no year" in why  # which year's figure?
    long = (
        "国家统计局公布的１９９７年全国各地区国有工业企业、集体工业企业和外商投资工业企业"
        "的全年产品销售收入总额的平均增长速度达到了８％。"
    )
    question, why = _ask(long, "８％", "number")
    assert question is None and why is not None and str(MAX_QUESTION_CHARS) in why
    quoted = "江泽民指出：“要加快国有企业改革，建立现代企业制度。”"
    question, why = _ask(quoted, "现代企业制度", "noun_phrase")
    assert question is None and why is not None and "quotation" in why


def test_no_question_where_a_word_qualifies_the_question_word() -> None:
    text = "１９９７年，该省的贫困人口大多生活在偏远山区，交通十分不便。"
    question, why = _ask(text, "山区", "noun_phrase")  # would read 偏远哪里
    assert question is None and why is not None and "qualifies" in why
    text = "１９９７年，上海纺织集团的利润总额５亿元，比上年增长２０％。"
    question, _ = _ask(text, "５亿元", "number")  # 利润总额多少亿元 is Chinese
    assert question is not None and "多少" in question


def test_no_question_for_part_of_a_joined_name_or_inside_a_quotation() -> None:
    text = "１９９６年，英国经济学家亚历克·诺夫出版了《可行的社会主义经济》一书。"
    question, why = _ask(text, "亚历克", "person")
    assert question is None and why is not None and "joined" in why
    text = "１９９７年，江苏省提出“以上海为龙头发展长江三角洲”的口号。"
    question, why = _ask(text, "上海", "place")
    assert question is None and why is not None and "quotation" in why


def test_a_built_question_needs_its_subject_and_a_statement() -> None:
    text = "张明，１９９５年调任北京市副市长。"
    question, why = _ask(text, "张明", "person")  # 谁，……: asks for the subject described
    assert question is None and why is not None
    text = "于１９９７年１２月下旬在中国美术馆展出。"
    question, why = _ask(text, "中国美术馆", "organization")
    assert question is None and why is not None and "opens with" in why
    text = "据新华社报道，广东外贸出口以年均增长３６％的幅度迅猛发展。"  # a frame, then a subject
    assert _ask(text, "广东", "place")[0] is not None
    text = "截至１９９７年底，上海证券交易所的上市公司达到３８３家。"  # a time phrase
    assert _ask(text, "上海证券交易所", "organization")[0] == (
        "截至１９９７年底，哪个机构的上市公司达到３８３家？"
    )


def test_no_question_for_a_title_before_a_name_or_half_of_a_pair() -> None:
    text = "１９９８年１月，叶利钦也与英国首相布莱尔进行了电话联系。"
    question, why = _ask(text, "英国首相", "entity")  # would read 什么布莱尔
    assert question is None and why is not None and "title" in why
    text = "１９９８年，改革开放的浪潮不仅打破了计划经济体制下的封闭状态。"
    question, why = _ask(text, "计划经济体制", "noun_phrase")
    assert question is None and why is not None


def test_a_place_before_a_verb_is_asked_bare_and_a_dateline_word_is_never_asked() -> None:
    text = "１９９８年１月，中国政府坚持不与台湾发展官方关系的原则立场。"
    question, _ = _ask(text, "台湾", "place")
    assert question is not None and "不与哪里发展官方关系" in question
    text = "本报讯中国工商银行广东省分行全力支持全省工商企业改革。"
    question, why = _ask(text, "本报讯中国工商银行", "organization")
    assert question is None and why is not None and "dateline" in why
