"""A Chinese question asked in place cites its source: the document's title and dateline."""

from __future__ import annotations

from ragcourt.qagen.source_frame_zh import dateline_date, frame_title, framed, source_frame


def test_a_title_frames_only_when_it_is_one() -> None:
    assert frame_title("中英外长会谈在伦敦举行（附图片１张）") == "中英外长会谈在伦敦举行"
    assert frame_title("本报记者卢新宁") is None  # a byline
    assert frame_title("（新华社北京１９９７年１２月３０日电）") is None  # a dateline in brackets
    assert frame_title("李霞") is None  # a name, not a title
    assert frame_title("四、探宝成就扬国威") is None  # a list heading
    assert frame_title("邹家华为该公司成立４５周年题词") is None  # leans on its article
    assert frame_title(None) is None


def test_the_dateline_dates_a_news_question() -> None:
    text = "新华社北京１月１９日电（记者王刚）外交部长钱其琛今天在这里同英国外交大臣会谈。"
    assert dateline_date(text) == "１月１９日"
    assert (
        dateline_date("本报伦敦１９９７年１２月３０日电 英国政府宣布……") == "１９９７年１２月３０日"
    )
    assert dateline_date("英国政府宣布了新的预算。") is None
    frame = source_frame("中英外长会谈", text)
    assert frame == "据《中英外长会谈》（１月１９日）报道，"
    assert (
        source_frame("二〇二三年年度报告摘要", "公司营业收入增长。")
        == "据《二〇二三年年度报告摘要》，"
    )


def test_framed_keeps_a_question_that_cites_its_source() -> None:
    frame = "据《中英外长会谈》，"
    assert framed("英国支持中国成为哪个机构正式成员？", frame) == (
        "据《中英外长会谈》，英国支持中国成为哪个机构正式成员？"
    )
    assert framed("据新华社报道，哪里的外贸出口增长最快？", frame).startswith("据新华社")
    assert framed("英国支持中国成为哪个机构正式成员？", None).startswith("英国")
