"""How the charts write partition values: widths in character cells, cut with ``…``."""

from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")

from versioned.ui.chart_svg import partition_value, shorten, text_width


def test_a_cjk_character_takes_two_cells() -> None:
    assert text_width("東京") == 4 and text_width("서울") == 4 and text_width("Tokyo") == 5


def test_shorten_cuts_to_the_width_in_cells_with_an_ellipsis() -> None:
    assert shorten("2024-01-01", 10) == "2024-01-01"  # fits: whole
    assert shorten("abcdefghijk", 10) == "abcdefghi…"
    assert shorten("東京都千代田区", 9) == "東京都千…"  # 8 cells and the ellipsis
    assert shorten("東京都千代田区", 8) == "東京都…"  # a wide character is never split
    assert all(text_width(shorten("東京都千代田区" * 9, w)) <= w for w in range(1, 40))


def test_a_null_value_is_hives_default_partition() -> None:
    assert partition_value(None) == "__HIVE_DEFAULT_PARTITION__"
