"""The floor measurement of theme names (benchmarks/bench_theme_name_parts.py, issue 62): how many
parts a theme's name needs so that a quarter of each member topic's papers write one of them. A
member counts the papers that write any of the parts (their union), not the parts that hold alone;
one and two parts are found exactly, more by greedy set cover. No corpus needed."""

from __future__ import annotations

import numpy as np

from benchmarks.bench_theme_name_parts import fewest_parts, weakest_with


def block(*papers: str) -> np.ndarray:
    """A member topic's papers x parts: each paper a string of 0/1, one character a part."""
    return np.array([[c == "1" for c in paper] for paper in papers], dtype=bool)


# Three member topics of four papers and five candidate parts. Part 0 is written by half of the
# first topic, part 1 by half of the second, part 2 by half of the third; part 3 by one paper of
# each (a quarter of every member alone); part 4 by one paper of the first.
MEMBERS = [
    block("10000", "10010", "00001", "00000"),
    block("01000", "01000", "00010", "00000"),
    block("00100", "00100", "00010", "00000"),
]


def test_one_part_holds_when_a_quarter_of_every_member_writes_it():
    assert fewest_parts(MEMBERS) == [3]  # part 3: a quarter of each, the only single part that holds
    assert weakest_with(MEMBERS, 1)[0] == 0.25


def test_a_name_that_must_reach_half_of_each_member_needs_three_parts_and_two_cannot_hold():
    assert weakest_with(MEMBERS, 2)[0] < 0.5  # every pair leaves a member under half
    assert sorted(fewest_parts(MEMBERS, holds=0.5)) == [0, 1, 2]
    assert weakest_with(MEMBERS, 3) == (0.5, [0, 1, 2])


def test_parts_count_together_for_a_member_none_of_them_holds_for_alone():
    # Each part is written by one paper in four of the one member: a fifth alone, together two fifths.
    member = [block("10", "01", "00", "00", "00")]
    assert weakest_with(member, 1)[0] == 0.2
    assert fewest_parts(member, holds=0.4) == [0, 1]


def test_no_name_holds_when_all_the_candidates_together_leave_a_member_under_the_share():
    assert fewest_parts(MEMBERS, holds=0.8) is None  # the first member: three in four at most
    assert fewest_parts([*MEMBERS, block("00000", "00000")]) is None  # a member that writes none of them


def test_two_parts_that_share_a_word_never_make_one_name():
    # "Optimization" (part 0) and "convex optimization" (part 1) would hold together; they share a
    # word, so the name takes part 2 instead, as the naming refuses such a pair.
    members = [block("100", "000", "000", "000"), block("010", "000", "000", "001")]
    shared = np.array([[1, 0, 1], [0, 1, 1], [1, 1, 1]], dtype=bool)
    assert fewest_parts(members) == [0, 1]
    assert fewest_parts(members, joins=shared) == [0, 2]
    assert weakest_with(members, 2, shared) == (0.25, [0, 2])
