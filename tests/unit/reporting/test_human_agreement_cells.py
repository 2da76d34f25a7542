from typing import Any

from ragcourt.reporting.sections.human_agreement import _agreement_cells, _ppi_cells


def test_a_ppi_row_shows_three_estimates_as_percentages_with_their_intervals() -> None:
    row: dict[str, Any] = {
        "system": "s",
        "predictor": "j",
        "n_labeled": 1234,
        **{"judge_mean": 0.5, "judge_lo": 0.4, "judge_hi": 0.6},
        **{"human_mean": None, "human_lo": None, "human_hi": None},
        **{"ppi_mean": 0.55, "ppi_lo": 0.41, "ppi_hi": 0.7},
        "width_ratio": 0.8,
    }
    assert _ppi_cells(row) == [
        "s",
        "j",
        "1,234",
        "50.0% [40.0%, 60.0%]",
        "–",
        "55.0% [41.0%, 70.0%]",
        "0.800",
    ]


def test_an_agreement_row_shows_accuracy_in_percent_and_kappa_and_spearman_as_numbers() -> None:
    row: dict[str, Any] = {
        "judge": "b",
        "role": "final",
        "target": "passages",
        "n": 3,
        **{"accuracy": 0.9, "accuracy_lo": 0.8, "accuracy_hi": 0.95},
        **{"kappa": -0.1234, "kappa_lo": -0.5, "kappa_hi": 0.25},
        **{"spearman": None, "spearman_lo": None, "spearman_hi": None},
        "low_agreement": True,
    }
    assert _agreement_cells(row) == [
        "b",
        "final",
        "passages",
        "3",
        "90.0% [80.0%, 95.0%]",
        "-0.123 [-0.500, 0.250]",
        "–",
        "LOW",
    ]
